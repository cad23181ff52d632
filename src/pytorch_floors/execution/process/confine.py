"""Keep the build's secrets out of reach of the code it runs: proofs' processes and labs' kernels.

A block starts with a narrow environment (`sandbox`), but it can look at other processes: on Linux,
`/proc/<pid>/environ` and `/proc/<pid>/mem` of any process of the same user, its parents included,
hold their whole environment. Two locks close that for the process that runs blocks (the build):

- `hide_this_process`: the process that starts blocks or kernels marks itself non-dumpable
  (`prctl(PR_SET_DUMPABLE, 0)`). The kernel then refuses its `environ`, `mem` and file descriptors to
  every other process that lacks `CAP_SYS_PTRACE`, whatever its user.
- `confine_this_process`: a block's process or a lab's kernel, before it runs any code it was given,
  gives up every capability (effective, permitted, inheritable and bounding sets) and sets
  `no_new_privs`, so that neither it nor a program it executes gets one back. This matters only where
  blocks run as root (CI, containers): root's `CAP_SYS_PTRACE`, `CAP_SYS_ADMIN` and `CAP_PERFMON`
  each override non-dumpable. Root without capabilities still owns root's files, so a proof reads and
  writes the checkout as before.

What neither lock reaches is the processes above the build (`make`, a shell, a CI runner's step),
which hold the same environment and are the build's to start, not to change. The engine therefore
also refuses any output that holds a secret of the build's environment (`execution.secrets`).
Elsewhere than Linux both functions do nothing: there is no `/proc`, and the output check remains.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

from pytorch_floors.errors import FloorsError

__all__ = ["ConfinementError", "confine_this_process", "hide_this_process", "run_confined"]

_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_CAPABILITY_VERSION_3 = 0x20080522


class ConfinementError(FloorsError, OSError):
    """This process could not give up what lets it read other processes' environments."""


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32))


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def _linux() -> bool:
    return sys.platform.startswith("linux")


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise ConfinementError(error, f"{what} failed: {os.strerror(error)}")


def hide_this_process() -> None:
    """Make this process non-dumpable: its `/proc` environment and memory are refused to other processes.

    Called by whatever starts blocks or kernels, before the first one starts. It also turns off core
    dumps of this process. Idempotent.

    Raises:
        ConfinementError: If the kernel refused.
    """
    if _linux():
        _check(_libc().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl(PR_SET_DUMPABLE, 0)")


def confine_this_process() -> None:
    """Give up, for good, every capability (as root), and any gain by `exec`.

    `CAP_SYS_PTRACE` is not the only capability that overrides non-dumpable: on Linux 6.18 `CAP_SYS_ADMIN`
    and `CAP_PERFMON` each let root read a non-dumpable process's environment too (tested by
    `tests/test_hardening.py`). A proof needs none of them, so all are dropped, bounding set included.

    Raises:
        ConfinementError: If the kernel refused (the caller must then run nothing it was given).
    """
    if not _linux():
        return
    libc = _libc()
    # no_new_privs first: from here on, no exec (a setuid program, root's own exec) can grant a capability back.
    _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    if os.geteuid() != 0:
        return  # an ordinary user holds no capability; non-dumpable already stops it
    # The bounding set needs CAP_SETPCAP (dropped last, with the rest); no_new_privs bars regaining it anyway.
    for capability in range(_last_capability() + 1):
        libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)
    header = _CapHeader(_CAPABILITY_VERSION_3, 0)
    _check(libc.capset(ctypes.byref(header), (_CapData * 2)()), "capset (none)")


def _last_capability() -> int:
    try:
        return int(open("/proc/sys/kernel/cap_last_cap").read())
    except (OSError, ValueError):
        return 63


def run_confined(argv: list[str]) -> None:
    """Confine this process, then run a module as `python -m` would (how labs' kernels start).

    Args:
        argv: `["-m", module, *arguments]`.

    Raises:
        SystemExit: If `argv` does not start with `-m MODULE`.
    """
    import runpy  # noqa: PLC0415  (only the kernel's start needs it)

    if len(argv) < 2 or argv[0] != "-m":
        raise SystemExit("usage: python -m pytorch_floors.execution.process.confine -m MODULE [ARGUMENTS...]")
    confine_this_process()
    sys.argv = [argv[1], *argv[2:]]
    runpy.run_module(argv[1], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    run_confined(sys.argv[1:])
