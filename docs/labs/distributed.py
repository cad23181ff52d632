# ---
# jupyter:
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
# # Annex lab · Many chips: torch.distributed
#
# ## Goal <a id="goal"></a>
#
# `torch.distributed` runs one process per chip, a *rank*, and the ranks meet in *collectives*:
# calls that every rank makes and that move tensors between them. The `gloo` backend runs them on
# the CPU, so a few processes on your own machine can show how they work. In this lab you start
# ranks yourself, predict what an `all_reduce` leaves on each of them, how its time grows with the
# message, how many bytes of a model each rank keeps under `fully_shard` (FSDP2), and how many bytes
# a ring `all_reduce` sends.
#
# Every exercise runs on a CPU-only machine with `torch` alone. Each asks you to **predict** first,
# in the cell marked `YOUR ANSWER`, then to **run** the measurement, **change** something and
# measure again. The `SELF-CHECK` cell compares your answer with what the ranks measured: it fails,
# saying what to fill in, until you have answered, and it fails, saying why, when the answer and
# the measurement disagree. Solutions are folded away under each exercise.

# %% [markdown]
# ## Setup <a id="setup"></a>
#
# Run this first. The ranks' code is written to a file, `RANKS_FILE`, in a folder of its own:
# each rank is a process that runs it (`python lab_ranks.py TASK`), told its rank, the world size
# and where to meet (`MASTER_ADDR`, `MASTER_PORT`, on a free port) through its environment, as
# `torchrun` would tell it. `run_ranks(task, world_size)` starts them, waits at most `timeout`
# seconds, and returns what each rank printed; a rank that fails stops the others and is named,
# and so is a rank still running at the limit, which is stopped: a collective waits for every rank,
# so one missing rank would make the others wait forever. A port that another program takes before
# rank 0 listens on it is no failure: the ranks start again on another. Each rank times itself and
# reads how much of a core it got when it wanted one (a short busy loop's time on a core against its
# time on a core or waiting for one, just before and just after the timings, on Linux); `CoreShare`
# and `unclear` use that to say when a busy machine stretched a timing too much to grade a ratio.

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
RANKS_DIR = tempfile.TemporaryDirectory(prefix="floors-ranks-")  # removed when the notebook's Python exits
RANKS_FILE = Path(RANKS_DIR.name) / "lab_ranks.py"
RANKS_FILE.write_text(RANKS_CODE, encoding="utf-8")


def free_port():
    with socket.socket() as s:  # port 0: the operating system picks one no program is using
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(process):
    if process.poll() is None:
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)  # the rank and any process it started
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
# The self-check helpers (require, expect, CoreShare, unclear, ...) go in this cell: the build puts them here.

# %% [markdown]
# ## Exercise 1 · What all_reduce leaves on every rank <a id="all-reduce"></a>
#
# Each rank starts with a tensor of four equal values, its rank plus one: rank 0 holds ones, rank 1
# twos, and so on. `dist.all_reduce(x)` (its default operation is a sum) replaces `x` on every rank.
# **Write** `reduced_value(world_size)`, the value each element holds on every rank afterwards,
# then **run** the ranks: each prints its tensor before and after.
#
# **Change** `WORLD_SIZE` to `3` and run again: your formula should still hold.

# %% tags=["answer"]
# YOUR ANSWER
def reduced_value(world_size):
    """The value of every element on every rank after all_reduce, when rank r started with r + 1."""
    return None  # your formula


# %% tags=["solution"]
def reduced_value(world_size):
    """The value of every element on every rank after all_reduce, when rank r started with r + 1."""
    return world_size * (world_size + 1) // 2  # 1 + 2 + ... + world_size, on every rank


# %%
WORLD_SIZE = 2

reduced = run_ranks("all_reduce_value", WORLD_SIZE)
for result in reduced:
    print(f"rank {result['rank']}: before {result['before']}, after {result['after']}")

# %%
# SELF-CHECK: your value against every element on every rank (exact: small whole numbers add exactly).
require(reduced_value=reduced_value(WORLD_SIZE))
expect_type(f"reduced_value({WORLD_SIZE})", reduced_value(WORLD_SIZE), numbers.Real, "a number")
for result in reduced:
    expect(
        all(value == reduced_value(WORLD_SIZE) for value in result["after"]),
        f"rank {result['rank']} holds {result['after']} after all_reduce; your formula gives {reduced_value(WORLD_SIZE)}",
    )
print(f"self-check passed: every rank holds {reduced_value(WORLD_SIZE)}, the sum over {WORLD_SIZE} ranks")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# `all_reduce` is a reduction whose result every rank keeps: after it, no rank can tell whose
# contribution was whose, and every rank holds the same tensor. That is how data-parallel training
# keeps its copies of a model identical: each rank computes gradients on its own batch, an
# `all_reduce` sums them (DDP divides by the world size to average), and every rank takes the same
# optimizer step. The call is made by every rank; a rank that never makes it leaves the others
# waiting, which is why `run_ranks` has a time limit. The collectives are in
# `torch/distributed/distributed_c10d.py`; gloo's CPU implementation is in
# `torch/csrc/distributed/c10d/ProcessGroupGloo.cpp`.
#
# </details>

# %% [markdown]
# ## Exercise 2 · What an all_reduce costs <a id="all-reduce-cost"></a>
#
# A collective pays a fixed cost per call (the ranks exchange messages and wait for each other)
# and a cost per byte. The ranks time `all_reduce` on a message of `SMALLER` floats and on one
# sixteen times larger, the fastest of several tries each. **Predict** whether sixteen times the
# bytes takes more than four times the time at these sizes (1 MB against 16 MB), then **run** it.
#
# **Change** `SMALLER` to `256` (1 KB against 16 KB) and predict again.

# %% tags=["answer"]
# YOUR ANSWER
GROWS_PAST_4X = None  # True if 16 times the bytes takes more than 4 times the time, else False

# %% tags=["solution"]
GROWS_PAST_4X = True  # at megabytes the bytes dominate the fixed cost: the time grows almost 16 times

# %%
SMALLER = 2**18  # floats: 1 MB

timed = run_ranks("all_reduce_times", 2, sizes=[SMALLER, 16 * SMALLER], repeats=7)
seconds = {size: max(r["seconds"][str(size)] for r in timed) for size in (SMALLER, 16 * SMALLER)}
growth = seconds[16 * SMALLER] / seconds[SMALLER]
ranks_core = min((CoreShare(cpu=r["cpu"], wall=r["wall"]) for r in timed), key=lambda core: core.share)
for size, s in seconds.items():
    print(f"{size * 4:>10,} bytes: {s * 1e3:8.3f} ms, {size * 4 / s / 1e9:6.2f} GB/s")
print(f"16 times the bytes took {growth:.1f} times the time ({ranks_core.share:.0%} of a core for the slower rank)")

# %%
# SELF-CHECK: your answer on the same side of 4 as the measured growth. A growth within 2 times
# of 4 is too close to call, and more so when a rank got less than a core when it wanted one.
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
# <details class="success"><summary>What to notice</summary>
#
# The time of a collective is close to a fixed latency plus the bytes over a bandwidth. At a
# kilobyte the latency is nearly all of it and sixteen times the bytes costs little more; at
# megabytes the bytes dominate and the time grows nearly in proportion. That is why DDP does not
# send each gradient as it is ready but packs them into buckets of about 25 MB (`bucket_cap_mb`):
# one large message pays the latency once. Here the "network" is your machine's memory and loopback,
# and gloo's reduction runs on the CPU; between machines the bandwidth is the link's.
#
# </details>

# %% [markdown]
# ## Exercise 3 · What fully_shard keeps on each rank <a id="fully-shard"></a>
#
# `fully_shard` (FSDP2, `torch/distributed/fsdp/_fully_shard/`) splits every parameter of a model
# along its first dimension across the ranks: each rank keeps its slice and gathers the rest only
# while a layer runs. **Write** `bytes_per_rank(model_bytes, world_size)`, about how many bytes of
# parameters each rank keeps, then **run** it: each rank shards the same model of `LAYERS` and
# counts the bytes of its slices.
#
# **Change** `SHARDS` to `3` and run again.

# %% tags=["answer"]
# YOUR ANSWER
def bytes_per_rank(model_bytes, world_size):
    """About how many bytes of parameters each rank keeps after fully_shard."""
    return None  # your formula


# %% tags=["solution"]
def bytes_per_rank(model_bytes, world_size):
    """About how many bytes of parameters each rank keeps after fully_shard."""
    return model_bytes / world_size  # each parameter split in world_size slices (the last ones a row shorter)


# %%
SHARDS = 2
LAYERS = [(256, 512), (512, 512), (512, 10)]  # (in, out) features of each Linear layer

sharded = run_ranks("shard_bytes", SHARDS, layers=LAYERS)
model_bytes = sharded[0]["model_bytes"]
for result in sharded:
    print(f"rank {result['rank']}: {result['rank_bytes']:,} of the model's {model_bytes:,} bytes of parameters")

# %%
# SELF-CHECK: every rank's bytes against your formula, within 5% (a parameter whose first dimension
# does not divide by the world size leaves the last ranks a row shorter), and the slices add up to
# the whole model: nothing is kept twice.
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
# <details class="success"><summary>What to notice</summary>
#
# Sharding divides the parameters' memory by the number of ranks, and so it divides their
# gradients and the optimizer's state, which follow the parameters' shape: floor 7's accounting of
# a training step, divided by the world size. What it costs is communication: before each layer's
# forward (and again in backward) the ranks `all_gather` the layer's full parameters, and after
# backward they `reduce_scatter` its gradients, so each rank ends with the averaged gradient of its
# own slice only. A first dimension that does not divide by the world size leaves the last ranks
# a row shorter (`torch.chunk`'s rule), and their slices are padded to one size for the `all_gather`.
#
# </details>

# %% [markdown]
# ## Exercise 4 · The ring's 2(p − 1)/p <a id="ring"></a>
#
# A ring `all_reduce` passes chunks round a ring of ranks: the tensor is cut into p chunks, and
# in p − 1 steps of *reduce-scatter* each rank sends a chunk to its right neighbour and adds the one
# from its left, until each rank holds the full sum of one chunk; p − 1 steps of *all-gather* then
# pass the summed chunks round. The ranks run that ring with `send` and `recv`, count the bytes each
# sends, and compare the result with `dist.all_reduce`'s. **Write** `ring_bytes_sent(nbytes,
# world_size)`, the bytes each rank sends to all-reduce a tensor of `nbytes` bytes, then **run** it.
#
# **Change** `RING_SIZE` to `4` and run again.

# %% tags=["answer"]
# YOUR ANSWER
def ring_bytes_sent(nbytes, world_size):
    """Bytes each rank sends in a ring all_reduce of a tensor of nbytes bytes."""
    return None  # your formula


# %% tags=["solution"]
def ring_bytes_sent(nbytes, world_size):
    """Bytes each rank sends in a ring all_reduce of a tensor of nbytes bytes."""
    return 2 * (world_size - 1) * nbytes / world_size  # 2 (p - 1) steps of one chunk, nbytes / p, each


# %%
RING_SIZE = 3
NUMEL = 12 * 1024  # divides by 2, 3 and 4: every chunk the same size

ring = run_ranks("ring_all_reduce", RING_SIZE, numel=NUMEL)
for result in ring:
    print(f"rank {result['rank']}: sent {result['sent']:,} bytes for a {result['bytes']:,}-byte tensor"
          f" ({result['sent'] / result['bytes']:.3f} of it); same as dist.all_reduce: {result['same']}")

# %%
# SELF-CHECK: the hand-made ring agrees with dist.all_reduce, and your count with every rank's (exact).
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
# <details class="success"><summary>What to notice</summary>
#
# Each rank sends 2(p − 1) chunks of nbytes / p bytes: 2(p − 1)/p times the tensor, which is
# never more than twice it however many ranks there are. That is why the ring is
# *bandwidth-optimal*: a rank that sent its whole tensor to every other rank would send (p − 1)
# times it. The price is latency: 2(p − 1) steps, each waiting for its neighbour, which is why
# libraries switch to trees or other schedules for small messages. NCCL and gloo choose their
# algorithm themselves (gloo's `allreduce`, in `gloo/allreduce.h` of the gloo repository, has a ring
# and a "bcube"); this hand-made one uses `isend` and `recv` from `torch/distributed/distributed_c10d.py`.
#
# </details>
