# ---
# jupyter:
#   floors:
#     language: zh
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 附楼实验 · 多芯片：torch.distributed
#
# ## 目标 <a id="goal"></a>
#
# `torch.distributed` 为每块芯片运行一个进程，即一个 *rank*；各个 rank 在*集合通信*（collective）中相遇：每个 rank 都要发起、并在 rank 之间搬运张量的调用。`gloo` 后端在 CPU 上运行它们，所以在你自己的机器上开几个进程，就能看清它们如何工作。在这个实验里，你将亲手启动 rank，并预测：一次 `all_reduce` 在每个 rank 上留下什么，它的耗时如何随消息大小增长，`fully_shard`（FSDP2）之后每个 rank 保留模型的多少字节，以及一次环形 `all_reduce` 发送多少字节。
#
# 每道练习都能在只装了 `torch` 的纯 CPU 机器上运行。每道练习都要求你先**预测**，把答案写进标有 `YOUR ANSWER`（你的答案）的单元格，再**运行**测量，然后**修改**某处并重新测量。`SELF-CHECK`（自检）单元格把你的答案与各个 rank 实测的结果相比较：在你作答之前，它会失败并提示你该填什么；答案与测量不一致时，它也会失败并说明原因。参考答案折叠在每道练习的下方。

# %% [markdown]
# ## 准备 <a id="setup"></a>
#
# 请先运行这一格。各个 rank 的代码被写进一个单独文件夹里的文件 `RANKS_FILE`：每个 rank 都是一个运行它的进程（`python lab_ranks.py TASK`），它的 rank、world size（进程总数）以及会合（rendezvous）的地点（`MASTER_ADDR`、`MASTER_PORT`，取一个空闲端口）都通过环境变量告诉它，与 `torchrun` 的做法相同。`run_ranks(task, world_size)` 启动这些进程，最多等待 `timeout` 秒，并返回每个 rank 打印的结果；某个 rank 失败时，其余 rank 会被停止，失败的 rank 会被点名；到时限仍在运行的 rank 同样会被点名并停止：集合通信要等齐所有 rank，少一个 rank，其余的就会永远等下去。如果在 rank 0 开始监听之前，这个端口被别的程序占用了，这不算失败：各个 rank 会换一个端口重新启动。每个 rank 自己计时，并读出它在需要核心时分到了多少核心算力（在 Linux 上，是计时前后各跑一小段忙循环时，这段循环在核心上运行的时间，占运行时间与等待核心时间之和的比例）；`CoreShare` 和 `unclear` 据此在繁忙的机器把计时拉长到无法评判某个比值时给出说明。

# %%
import json
import math
import numbers
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

RANKS_CODE = '''
"""One rank of the lab: `python lab_ranks.py TASK ARGS_JSON`, told its place by RANK, WORLD_SIZE, MASTER_*."""
import json, os, sys, time
import torch
import torch.distributed as dist


def free_core():
    """(seconds on a core, seconds waiting for one) of a 20 ms busy loop in this thread (Linux); None elsewhere.

    Not the collective's own threads: a small message's call is mostly wake-ups, each waiting a moment
    for a core however idle the machine is, so their share is low on any machine. A busy loop's share
    changes only with the other work beside it.
    """
    def turn():
        try:
            with open("/proc/thread-self/schedstat") as stat:
                on, wait = stat.read().split()[:2]
            return int(on) / 1e9, int(wait) / 1e9
        except (OSError, ValueError):
            return None

    before, end = turn(), time.thread_time() + 0.02
    while time.thread_time() < end:
        pass
    after = turn()
    if before is None or after is None or after[0] <= before[0]:
        return None
    return after[0] - before[0], after[1] - before[1]


def all_reduce_value(args):
    x = torch.full((4,), float(dist.get_rank() + 1))
    before = x.tolist()
    dist.all_reduce(x)  # the sum over the ranks, left on every rank
    return {"before": before, "after": x.tolist()}


def all_reduce_times(args):
    times = {}
    dist.barrier()  # every rank probes at once, none of them inside a collective beside it
    around, start = [free_core()], (time.process_time(), time.perf_counter())
    for numel in args["sizes"]:
        x = torch.ones(numel)
        best = float("inf")
        for _ in range(args["repeats"]):
            dist.barrier()  # start together: the time is the collective's, not a late rank's
            t0 = time.perf_counter()
            dist.all_reduce(x)
            best = min(best, time.perf_counter() - t0)
        times[str(numel)] = best
    dist.barrier()
    around.append(free_core())  # just before and just after the timings: the smaller share counts
    measured = [turns for turns in around if turns]
    if measured:
        on, wait = min(measured, key=lambda turns: turns[0] / (turns[0] + turns[1]))
        cpu, wall = on, on + wait  # the share of a core a thread got when it wanted one
    else:
        cpu, wall = time.process_time() - start[0], time.perf_counter() - start[1]
    return {"seconds": times, "cpu": cpu, "wall": wall}


def shard_bytes(args):
    from torch.distributed.fsdp import fully_shard

    torch.manual_seed(0)
    model = torch.nn.Sequential(*(torch.nn.Linear(n_in, n_out) for n_in, n_out in args["layers"]))
    full = sum(p.nbytes for p in model.parameters())
    fully_shard(model)  # each parameter becomes a DTensor sharded on its first dimension
    local = sum(p.to_local().nbytes for p in model.parameters())
    return {"model_bytes": full, "rank_bytes": local}


def ring_all_reduce(args):
    p, r = dist.get_world_size(), dist.get_rank()
    x = torch.arange(args["numel"], dtype=torch.float32) * (r + 1)
    expected = x.clone()
    dist.all_reduce(expected)
    chunks = list(x.clone().chunk(p))
    right, left, sent = (r + 1) % p, (r - 1) % p, 0
    for step in range(p - 1):  # reduce-scatter: rank r ends with the sum of chunk r + 1
        out, into = (r - step) % p, (r - step - 1) % p
        incoming = torch.empty_like(chunks[into])
        request = dist.isend(chunks[out], right)
        dist.recv(incoming, left)
        request.wait()
        chunks[into] += incoming
        sent += chunks[out].nbytes
    for step in range(p - 1):  # all-gather: pass the summed chunks round the ring
        out, into = (r - step + 1) % p, (r - step) % p
        request = dist.isend(chunks[out], right)
        dist.recv(chunks[into], left)
        request.wait()
        sent += chunks[out].nbytes
    return {"bytes": x.nbytes, "sent": sent, "same": bool(torch.equal(torch.cat(chunks), expected))}


if __name__ == "__main__":
    torch.set_num_threads(1)
    task, args = sys.argv[1], json.loads(sys.argv[2])
    dist.init_process_group("gloo")
    try:
        result = globals()[task](args)
    finally:
        dist.destroy_process_group()
    print(json.dumps({"rank": int(os.environ["RANK"]), **result}))
'''
RANKS_DIR = tempfile.TemporaryDirectory(prefix="floors-ranks-")  # 在 notebook 的 Python 退出时删除
RANKS_FILE = Path(RANKS_DIR.name) / "lab_ranks.py"
RANKS_FILE.write_text(RANKS_CODE, encoding="utf-8")


def free_port():
    with socket.socket() as s:  # 端口 0：由操作系统挑一个没有程序在用的端口
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(process):
    if process.poll() is None:
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)  # 该 rank 以及它启动的所有进程
        else:
            process.kill()
    process.wait()


class PortTaken(RuntimeError):
    """Another program took the free port before rank 0 listened on it."""


def run_ranks(task, world_size, timeout=120, script=RANKS_FILE, **args):
    """Start `world_size` ranks running `task` of `script`; what each printed last, as a dict, in rank order.

    A rank that fails or is still running after `timeout` seconds stops every rank, and the error names it.
    A port another program took in the meantime is no failure: the ranks start again on another one.
    """
    for _ in range(3):
        try:
            return _launch(task, world_size, timeout, script, args, free_port())
        except PortTaken as taken:
            last = taken
    raise last


def _launch(task, world_size, timeout, script, args, port):
    ranks, logs = [], []
    for rank in range(world_size):
        env = {**os.environ, "RANK": str(rank), "WORLD_SIZE": str(world_size), "LOCAL_RANK": str(rank),
               "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "OMP_NUM_THREADS": "1"}
        logs.append(tempfile.TemporaryFile(mode="w+"))
        ranks.append(subprocess.Popen([sys.executable, str(script), task, json.dumps(args)], env=env, text=True,
                                      stdout=logs[-1], stderr=subprocess.STDOUT, start_new_session=os.name == "posix"))
    deadline = time.monotonic() + timeout
    try:
        while any(p.poll() is None for p in ranks):
            failed = [r for r, p in enumerate(ranks) if p.poll() not in (None, 0)]
            if failed:
                logs[failed[0]].seek(0)
                tail = logs[failed[0]].read().strip().splitlines()[-1:]
                error = PortTaken if "EADDRINUSE" in " ".join(tail) else RuntimeError
                raise error(f"rank {failed[0]} of {world_size} failed ({task}): {' '.join(tail)}")
            if time.monotonic() > deadline:
                late = [r for r, p in enumerate(ranks) if p.poll() is None]
                raise RuntimeError(f"rank {', '.join(map(str, late))} of {world_size} still running ({task}) after"
                                   f" {timeout} s: stopped (a collective waits for every rank)")
            time.sleep(0.05)
        results = []
        for rank, (process, log) in enumerate(zip(ranks, logs)):
            log.seek(0)
            lines = log.read().strip().splitlines()
            if process.returncode != 0 or not lines:
                raise RuntimeError(f"rank {rank} of {world_size} failed ({task}): {' '.join(lines[-1:])}")
            results.append(json.loads(lines[-1]))
        return results
    finally:
        for process in ranks:
            _stop(process)
        for log in logs:
            log.close()


print(f"torch {torch.__version__}, gloo available: {torch.distributed.is_gloo_available()}")
print(f"the ranks' code: {RANKS_FILE.name}, in a temporary folder")

# %% tags=["checker"]
# 自检辅助函数（require、expect、CoreShare、unclear 等）放在这个单元格里：构建时会把它们填进来。

# %% [markdown]
# ## 练习 1 · all_reduce 在每个 rank 上留下什么 <a id="all-reduce"></a>
#
# 每个 rank 开始时持有一个由四个相同值组成的张量，值为它的 rank 加一：rank 0 持有 1，rank 1 持有 2，依此类推。`dist.all_reduce(x)`（默认操作是求和）会在每个 rank 上替换 `x`。**写出** `reduced_value(world_size)`：之后每个 rank 上每个元素的值；然后**运行**这些 rank：每个 rank 打印它前后的张量。
#
# **修改** `WORLD_SIZE` 为 `3` 并重新运行：你的公式应当依然成立。

# %% tags=["answer"]
# YOUR ANSWER
def reduced_value(world_size):
    """The value of every element on every rank after all_reduce, when rank r started with r + 1."""
    return None  # 你的公式


# %% tags=["solution"]
def reduced_value(world_size):
    """The value of every element on every rank after all_reduce, when rank r started with r + 1."""
    return world_size * (world_size + 1) // 2  # 1 + 2 + ... + world_size，在每个 rank 上


# %%
WORLD_SIZE = 2

reduced = run_ranks("all_reduce_value", WORLD_SIZE)
for result in reduced:
    print(f"rank {result['rank']}: before {result['before']}, after {result['after']}")

# %%
# SELF-CHECK：你的值与每个 rank 上的每个元素相比较（精确：小整数相加没有误差）。
require(reduced_value=reduced_value(WORLD_SIZE))
expect_type(f"reduced_value({WORLD_SIZE})", reduced_value(WORLD_SIZE), numbers.Real, "a number")
for result in reduced:
    expect(
        all(value == reduced_value(WORLD_SIZE) for value in result["after"]),
        f"rank {result['rank']} holds {result['after']} after all_reduce; your formula gives {reduced_value(WORLD_SIZE)}",
    )
print(f"self-check passed: every rank holds {reduced_value(WORLD_SIZE)}, the sum over {WORLD_SIZE} ranks")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# `all_reduce` 是一次结果由每个 rank 都保留的归约：之后没有哪个 rank 能分辨出哪份贡献来自谁，每个 rank 持有同一个张量。数据并行训练正是这样让模型的各个副本保持一致：每个 rank 在自己的批次上计算梯度，一次 `all_reduce` 把梯度相加（DDP 再除以 world size 取平均），每个 rank 于是执行同样的优化器步骤。这个调用由每个 rank 发起；从不发起它的 rank 会让其余 rank 一直等待，这就是 `run_ranks` 设有时限的原因。集合通信在 `torch/distributed/distributed_c10d.py` 中；gloo 的 CPU 实现在 `torch/csrc/distributed/c10d/ProcessGroupGloo.cpp` 中。
#
# </details>

# %% [markdown]
# ## 练习 2 · 一次 all_reduce 的代价 <a id="all-reduce-cost"></a>
#
# 集合通信每次调用都要付一笔固定开销（各个 rank 交换消息、彼此等待），外加按字节计的开销。各个 rank 分别对 `SMALLER` 个浮点数的消息和十六倍大的消息计时 `all_reduce`，各取多次尝试中最快的一次。**预测**在这两个大小上（1 MB 对 16 MB），十六倍的字节所用时间是否超过四倍，然后**运行**它。
#
# **修改** `SMALLER` 为 `256`（1 KB 对 16 KB），再预测一次。

# %% tags=["answer"]
# YOUR ANSWER
GROWS_PAST_4X = None  # 16 倍的字节耗时超过 4 倍则填 True，否则填 False

# %% tags=["solution"]
GROWS_PAST_4X = True  # 到了兆字节级别，字节数压过固定开销：耗时几乎增长 16 倍

# %%
SMALLER = 2**18  # 个浮点数：1 MB

timed = run_ranks("all_reduce_times", 2, sizes=[SMALLER, 16 * SMALLER], repeats=7)
seconds = {size: max(r["seconds"][str(size)] for r in timed) for size in (SMALLER, 16 * SMALLER)}
growth = seconds[16 * SMALLER] / seconds[SMALLER]
ranks_core = min((CoreShare(cpu=r["cpu"], wall=r["wall"]) for r in timed), key=lambda core: core.share)
for size, s in seconds.items():
    print(f"{size * 4:>10,} bytes: {s * 1e3:8.3f} ms, {size * 4 / s / 1e9:6.2f} GB/s")
print(f"16 times the bytes took {growth:.1f} times the time ({ranks_core.share:.0%} of a core for the slower rank)")

# %%
# SELF-CHECK：你的答案与实测增长落在 4 的同一侧。增长与 4 相差在 2 倍以内
# 就太接近而无法判定，当某个 rank 在需要核心时得到的不足一个核心时更是如此。
require(GROWS_PAST_4X=GROWS_PAST_4X)
expect_type("GROWS_PAST_4X", GROWS_PAST_4X, bool, "True or False (without quotes)")
why = unclear(growth, 4, ranks_core, what="the time's growth")
if why:
    print(why)
else:
    side = "more" if growth > 4 else "less"
    expect(GROWS_PAST_4X == (growth > 4), f"16 times the bytes took {growth:.1f} times the time: {side} than 4 times")
print(f"self-check passed: 16 times the bytes took {growth:.1f} times the time")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 一次集合通信的时间接近于固定的延迟加上字节数除以带宽。在 1 KB 时，延迟几乎就是全部，十六倍的字节也多花不了多少时间；到了以 MB 计的大小，字节占了主导，时间几乎按比例增长。这就是 DDP 不在每个梯度就绪时单独发送它，而是把梯度装进约 25 MB 的梯度桶（gradient bucket，`bucket_cap_mb`）的原因：一条大消息只付一次延迟。这里的"网络"是你机器的内存和回环接口，gloo 的归约在 CPU 上运行；在机器之间，带宽就是链路的带宽。
#
# </details>

# %% [markdown]
# ## 练习 3 · fully_shard 在每个 rank 上保留什么 <a id="fully-shard"></a>
#
# `fully_shard`（FSDP2，`torch/distributed/fsdp/_fully_shard/`）把模型的每个参数沿第一维切分到各个 rank 上：每个 rank 保留自己的一片，只在某个网络层运行时才把其余部分收集过来。**写出** `bytes_per_rank(model_bytes, world_size)`：每个 rank 大约保留多少字节的参数；然后**运行**它：每个 rank 对由 `LAYERS` 构成的同一个模型做分片，并统计自己那些分片的字节数。
#
# **修改** `SHARDS` 为 `3` 并重新运行。

# %% tags=["answer"]
# YOUR ANSWER
def bytes_per_rank(model_bytes, world_size):
    """About how many bytes of parameters each rank keeps after fully_shard."""
    return None  # 你的公式


# %% tags=["solution"]
def bytes_per_rank(model_bytes, world_size):
    """About how many bytes of parameters each rank keeps after fully_shard."""
    return model_bytes / world_size  # 每个参数切成 world_size 片（最后几片少一行）


# %%
SHARDS = 2
LAYERS = [(256, 512), (512, 512), (512, 10)]  # 每个 Linear 网络层的（输入，输出）特征数

sharded = run_ranks("shard_bytes", SHARDS, layers=LAYERS)
model_bytes = sharded[0]["model_bytes"]
for result in sharded:
    print(f"rank {result['rank']}: {result['rank_bytes']:,} of the model's {model_bytes:,} bytes of parameters")

# %%
# SELF-CHECK：每个 rank 的字节数与你的公式相差在 5% 以内（第一维不能被 world size 整除的参数
# 会让最后几个 rank 少一行），并且各片加起来正好是
# 整个模型：没有什么被保存两次。
require(bytes_per_rank=bytes_per_rank(model_bytes, SHARDS))
expect_type(f"bytes_per_rank(model_bytes, {SHARDS})", bytes_per_rank(model_bytes, SHARDS), numbers.Real, "a number of bytes")
expect(sum(r["rank_bytes"] for r in sharded) == model_bytes, "the ranks' slices do not add up to the model")
for result in sharded:
    expect(
        within(bytes_per_rank(model_bytes, SHARDS), result["rank_bytes"], 1.05),
        f"rank {result['rank']} keeps {result['rank_bytes']:,} bytes; your formula gives {bytes_per_rank(model_bytes, SHARDS):,.0f}",
    )
print(f"self-check passed: each of {SHARDS} ranks keeps about 1/{SHARDS} of {model_bytes:,} bytes")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 分片把参数的内存除以 rank 的个数，参数的梯度和优化器状态也随之被除，因为它们与参数的形状相同：这就是第 7 层对一个训练步的内存账目，再除以 world size。它的代价是通信：每个网络层前向传播之前（反向传播中还要再来一次），各个 rank 用 `all_gather` 收集这个网络层的完整参数；反向传播之后，它们用 `reduce_scatter` 处理梯度，于是每个 rank 最终只得到自己那一片的平均梯度。第一维不能被 world size 整除时，最后几个 rank 会少一行（`torch.chunk` 的规则），它们的分片在 `all_gather` 时会被填充到相同大小。
#
# </details>

# %% [markdown]
# ## 练习 4 · 环的 2(p − 1)/p <a id="ring"></a>
#
# 环形 `all_reduce` 让数据块沿着由各个 rank 组成的环传递：张量被切成 p 块，在 p − 1 步 *reduce-scatter* 中，每个 rank 把一块发给右边的邻居，并把从左边收到的那块加到自己的对应块上，直到每个 rank 都持有某一块的完整总和；随后 p − 1 步 *all-gather* 把求和后的各块沿环传一圈。各个 rank 用 `send` 和 `recv` 跑这个环，统计每个 rank 发送的字节数，并把结果与 `dist.all_reduce` 的结果相比较。**写出** `ring_bytes_sent(nbytes, world_size)`：对一个 `nbytes` 字节的张量做 all-reduce 时每个 rank 发送的字节数；然后**运行**它。
#
# **修改** `RING_SIZE` 为 `4` 并重新运行。

# %% tags=["answer"]
# YOUR ANSWER
def ring_bytes_sent(nbytes, world_size):
    """Bytes each rank sends in a ring all_reduce of a tensor of nbytes bytes."""
    return None  # 你的公式


# %% tags=["solution"]
def ring_bytes_sent(nbytes, world_size):
    """Bytes each rank sends in a ring all_reduce of a tensor of nbytes bytes."""
    return 2 * (world_size - 1) * nbytes / world_size  # 2 (p - 1) 步，每步一块，每块 nbytes / p


# %%
RING_SIZE = 3
NUMEL = 12 * 1024  # 能被 2、3 和 4 整除：每块大小相同

ring = run_ranks("ring_all_reduce", RING_SIZE, numel=NUMEL)
for result in ring:
    print(f"rank {result['rank']}: sent {result['sent']:,} bytes for a {result['bytes']:,}-byte tensor"
          f" ({result['sent'] / result['bytes']:.3f} of it); same as dist.all_reduce: {result['same']}")

# %%
# SELF-CHECK：手写的环与 dist.all_reduce 结果一致，你的计数与每个 rank 的相同（精确）。
require(ring_bytes_sent=ring_bytes_sent(ring[0]["bytes"], RING_SIZE))
expect_type(f"ring_bytes_sent(nbytes, {RING_SIZE})", ring_bytes_sent(ring[0]["bytes"], RING_SIZE), numbers.Real, "a number of bytes")
expect(all(r["same"] for r in ring), "the ring's sum differs from dist.all_reduce's: the ring is broken, not your answer")
for result in ring:
    guess = ring_bytes_sent(result["bytes"], RING_SIZE)
    expect(
        math.isclose(guess, result["sent"]),
        f"rank {result['rank']} sent {result['sent']:,} bytes for {result['bytes']:,}; your formula gives {guess:,.0f}",
    )
print(f"self-check passed: each of {RING_SIZE} ranks sent {ring[0]['sent'] / ring[0]['bytes']:.3f} times the tensor's bytes")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 每个 rank 发送 2(p − 1) 块、每块 nbytes / p 字节：共为张量的 2(p − 1)/p 倍，无论有多少个 rank，都不超过它的两倍。这就是环被称为*带宽最优*的原因：一个把整个张量发给其余每个 rank 的 rank，要发送张量的 (p − 1) 倍。代价是延迟：2(p − 1) 步，每一步都要等邻居，所以各个库对小消息会改用树形或其他方案。NCCL 和 gloo 都会自己选择算法（gloo 的 `allreduce` 在 gloo 仓库的 `gloo/allreduce.h` 中，有环形和 "bcube" 两种）；这个手写的环用的是 `torch/distributed/distributed_c10d.py` 中的 `isend` 和 `recv`。
#
# </details>
