"""Machine tiers: the kinds of machine the site promises to hold on, as settings this machine can take.

This module is the one definition of a tier: its environment, its CPU affinity, the load beside it
and the Python it runs on. `make machines` (bench/machines.py) builds the site as each of them, and
`make record TIER=<name>` records the proofs as one of them when the name is a tier's (any other name
records this machine as it is: a GPU server, a laptop, a CI runner of the recording workflow); both
enter `as_tier`, so a tier loads the machine the same way for either.

- `as-is`: a laptop or workstation as it is; this machine, nothing changed.
- `one-core-scalar`: a single-vCPU CI runner, an old or throttled CPU; the run (and every process it
  starts) pinned to CPU 0, `OMP_NUM_THREADS=1`, `MKL_NUM_THREADS=1`, `ATEN_CPU_CAPABILITY=default`.
- `loaded`: a busy CI host; two spinning CPU hogs beside the run.
- `crowded`: a shared JupyterHub node or an oversubscribed CI host; a neighbour that builds a copy of
  the site cold, over and over (`mkdocs build` with its own empty cache: CPU, memory, disk and many
  processes), and two spinning hogs per core, beside the run.
- `spawn`: Windows Python and macOS, where the fork server is not what runs the blocks;
  `FLOORS_START_METHOD=spawn`.
- `avx2`: an AVX2-only CPU (AMD Zen 2/3, older Intel), *emulated*: `ATEN_CPU_CAPABILITY=avx2` caps
  torch's kernels at AVX2 on this CPU, which keeps its own caches, clocks and memory.
- `cuda-build-no-gpu`: the most common reader setup, PyPI's CUDA build of torch on a machine without a
  GPU; the run uses `.venv-cuda/`, made on demand with this Python and torch from PyPI only (pip's local
  wheels and mirrors ignored: the dev image's local `+cpu` wheel would otherwise satisfy the pin), and
  `CUDA_VISIBLE_DEVICES=` hides any GPU the machine has.
- `python3.12`, `python3.13`: stock Pythons; the run uses `.venv-py3.12/` or `.venv-py3.13/`, made on
  demand with that interpreter (found on PATH or under pyenv's versions). torch comes as pip finds it
  for that Python: PyTorch's CPU index when it answers, else PyPI, whose Linux wheel is the CUDA build.
- `torch-2.14.1`, `torch-2.15.0`: the releases after the build's pin, as a reader's `pip install torch`
  gets them; the run uses `.venv-torch-<version>/`, made on demand with requirements.txt's pins but
  `torch===<version>` (PyPI's wheel, on Linux the CUDA build; never a local `+cpu` one), pip's
  configuration kept but for a constraint that caps torch below the release (the dev image caps it at
  2.14.1: the environment gets constraints of its own without that line), and `CUDA_VISIBLE_DEVICES=`.

A tier's environment folder lies in the project, ignored by git (it holds a `.gitignore` of `*`, as
Python 3.13's venv writes), and is made again when requirements.txt or pyproject.toml change.
"""

from __future__ import annotations

from pytorch_floors.tiers.confine import as_tier
from pytorch_floors.tiers.copies import Neighbour, checkout, snapshot
from pytorch_floors.tiers.kinds import CPU_INDEX, HOG, TIERS, Tier, TierEnvironment, hog_count, tier_named
from pytorch_floors.tiers.python import find_python, tier_python

__all__ = [
    "CPU_INDEX",
    "HOG",
    "TIERS",
    "Neighbour",
    "Tier",
    "TierEnvironment",
    "as_tier",
    "checkout",
    "find_python",
    "hog_count",
    "snapshot",
    "tier_named",
    "tier_python",
]
