"""A ninth floor, added to a copy of the project exactly as CONTRIBUTING's "Add a floor" says.

`test_add_a_floor.py` copies the project (`copy_project`), adds this floor with its Chinese twins and
its lab (`add_ninth_floor`, one step per item of the list, numbered as there), and builds the copy.
The floor's number is one more than the registry's last (`read_floor_count`), so the same steps add a
tenth floor once there are nine. Its content is small but follows the house rules a real floor keeps:
the registry gives its title, every heading has its id, its proof states a claim, its lab has three
exercises that ask to run and to change, each graded by a self-check.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["NewFloor", "add_ninth_floor", "copy_project", "read_floor_count"]

SLUG = "bits"
TITLE = "Bits"
SUMMARY = "What a number is at the very bottom: the bits of a float32, its sign, exponent and mantissa."
TITLE_ZH = "比特"
SUMMARY_ZH = "一个数字在这栋楼的最下面是什么：float32 的比特，以及它的符号、指数和尾数。"
CLAIM = "a float32 is four bytes: one sign bit, eight exponent bits, twenty-three mantissa bits"
CLAIM_ZH = "一个 float32 占四个字节：一个符号位、八个指数位、二十三个尾数位"


@dataclass(frozen=True)
class NewFloor:
    """The floor the copy gained: what the assertions look for in the built site."""

    number: int
    slug: str = SLUG
    title: str = TITLE
    title_zh: str = TITLE_ZH

    @property
    def key(self) -> str:
        return f"{self.number}-{self.slug}"

    def title_in(self, language: str) -> str:
        return self.title_zh if language == "zh" else self.title

    def lab_title_in(self, language: str) -> str:
        return f"实验 {self.number} · {self.title_zh}" if language == "zh" else f"Lab {self.number} · {self.title}"


def copy_project(root: Path, dest: Path, cache: Path | None) -> Path:
    """Copy what git would commit of `root` (tracked files and new ones it does not ignore) into `dest`.

    Args:
        root: The project.
        dest: The copy's folder (made).
        cache: A proof cache to copy as the copy's own (`floors-exec/` only: what a render-only build
            reads), or `None` for none.

    Returns:
        `dest`.
    """
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in sorted(set(listed.split("\0")) - {""}):
        source = root / name
        if source.is_file() and not source.is_symlink():  # a file deleted but not yet committed is not copied
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    # Entry by entry: another build may write (whole files, by rename) or prune it meanwhile, and its locks stay.
    entries = sorted(cache.glob("floors-exec/*/*.json")) if cache is not None else []
    for entry in entries:
        target = dest / ".cache" / "floors-exec" / entry.parent.name / entry.name
        target.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            shutil.copy2(entry, target)
    return dest


def read_floor_count(project: Path) -> int:
    """How many floors the copy's registry holds (read from its text: the copy's package is not imported here)."""
    text = (project / "src" / "pytorch_floors" / "floors.py").read_text(encoding="utf-8")
    return len(re.findall(r"^    Floor\($", text, flags=re.MULTILINE))


def _write(project: Path, relative: str, text: str) -> None:
    path = project / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _insert(project: Path, relative: str, before: str, text: str) -> None:
    """Put `text` just before the first `before` in a file of the copy (which must hold it)."""
    path = project / relative
    content = path.read_text(encoding="utf-8")
    assert before in content, f"{relative} no longer holds {before!r}: the step that edits it needs updating"
    path.write_text(content.replace(before, text + before, 1), encoding="utf-8")


PROOF = '''\
"""Floor {n}: a float32's bits, read by viewing its bytes as an integer (nothing is converted)."""

from __future__ import annotations

import torch

from pytorch_floors.claims import claim


def main() -> None:
    x = torch.tensor([1.0, -2.0, 0.1])
    words = x.view(torch.int32)
    for value, word in zip(x.tolist(), words.tolist(), strict=True):
        bits = f"{{word & 0xFFFFFFFF:032b}}"
        print(f"{{value:>8.4f}}  sign {{bits[0]}}  exponent {{bits[1:9]}}  mantissa {{bits[9:]}}")
    claim(
        "{claim}",
        held=x.element_size() == 4 and torch.finfo(x.dtype).bits == 32,
        detail=f"{{x.element_size()}} bytes",
    )


if __name__ == "__main__":
    main()
'''

WALK_PROOF = '''\
"""Floor {n} in one number: the bits of one float32."""

from __future__ import annotations

import torch

from pytorch_floors.claims import claim

x = torch.tensor([0.1])
print(f"0.1 as a float32: {{x.view(torch.int32).item():032b}}")
claim("a float32 has 32 bits", held=torch.finfo(torch.float32).bits == 32, detail="32")
'''

PAGE = """\
## What you see {{ #what-you-see }}

A number you type, `0.1`, and what it is at the very bottom of the building: thirty-two bits.

## The idea {{ #the-idea }}

A float32 holds a sign bit, eight exponent bits and twenty-three mantissa bits. Viewing a
tensor's bytes as integers shows them without changing them.

## Proofs {{ #proofs }}

### A float's bits {{ #float-bits }}

```python exec="1" id="float-bits"
--8<-- "snippets/{key}/float_bits.py"
```

The same bytes read two ways: as a float and as the integer that shows its bits.

## Check yourself {{ #check-yourself }}

??? question "Why is `0.1` not exactly one tenth in float32?"

    One tenth has no finite binary expansion: its twenty-three mantissa bits round it.
"""

PAGE_ZH = """\
---
claims:
  "{claim}": "{claim_zh}"
---

## 你看到的 {{ #what-you-see }}

你输入的一个数字 `0.1`，以及它在这栋楼最下面的样子：三十二个比特。

## 核心思想 {{ #the-idea }}

一个 float32 由一个符号位、八个指数位和二十三个尾数位组成。把张量的字节当作整数来看，就能看到这些比特，而不改变它们。

## 证明脚本 {{ #proofs }}

### 浮点数的比特 {{ #float-bits }}

```python exec="1" id="float-bits"
--8<-- "snippets/{key}/float_bits.py"
```

同样的字节，两种读法：当作浮点数，以及当作显示其比特的整数。

## 自检 {{ #check-yourself }}

??? question "为什么在 float32 中 `0.1` 不恰好是十分之一？"

    十分之一没有有限的二进制展开：它的二十三个尾数位对它做了舍入。
"""

WALK = """\
### Floor {n} · {title} {{ #walk-{slug} }}

Under the clocks lie the bits each number is stored as:

```python exec="1" id="walk-{slug}"
--8<-- "snippets/0-map/walk_{n}_{slug}.py"
```

Full story: [Floor {n}](floors/{key}.md).

"""

WALK_ZH = """\
### 第 {n} 层 · {title_zh} {{ #walk-{slug} }}

时钟之下，是每个数字存储时所用的比特：

```python exec="1" id="walk-{slug}"
--8<-- "snippets/0-map/walk_{n}_{slug}.py"
```

详见[第 {n} 层](floors/{key}.md)。

"""

NOTEBOOK_HEADER = """\
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
"""

SETUP_CODE = """\
# %%
import torch

print(f"torch {torch.__version__}")

# %% tags=["checker"]
# The self-check helpers (require, expect, best_time, ...) go in this cell: the build puts them here.
"""

EXERCISES = (
    # anchor, English title, Chinese title, the answer's name, the value measured, the solution, what the check reads
    ("sign-of-one", "The sign bit of 1.0", "1.0 的符号位", "SIGN_OF_ONE", "1.0", "0", "{bits} >> 31"),
    ("sign-of-minus-two", "The sign bit of -2.0", "-2.0 的符号位", "SIGN_OF_MINUS_TWO", "-2.0", "1", "{bits} >> 31"),
    ("exponent-of-one", "The exponent of 1.0", "1.0 的指数", "EXPONENT_OF_ONE", "1.0", "127", "({bits} >> 23) & 0xFF"),
)
"""Each exercise has names of its own: a cell run again after the whole lab must read what its exercise measured."""


def _exercise(number: int, exercise: tuple[str, ...], language: str) -> str:
    anchor, title, title_zh, name, value, solution, read = exercise
    value_name, bits = f"VALUE_{number}", f"bits_{number}"
    read = read.format(bits=bits)
    if language == "zh":
        words = (
            f'# ## 练习 {number} · {title_zh} <a id="{anchor}"></a>\n#\n'
            f"# **预测** `{name}`，然后**运行**测量。\n#\n# **修改** `{value_name}`，再测一次。\n"
        )
        notice = (
            '# <details class="success"><summary>观察要点</summary>\n#\n'
            "# 字节没有改变，只是换了一种读法。\n#\n# </details>\n"
        )
    else:
        words = (
            f'# ## Exercise {number} · {title} <a id="{anchor}"></a>\n#\n'
            f"# **Predict** `{name}`, then **run** the measurement.\n#\n"
            f"# **Change** `{value_name}` and measure again.\n"
        )
        notice = (
            '# <details class="success"><summary>What to notice</summary>\n#\n'
            "# The bytes did not change: they were read another way.\n#\n# </details>\n"
        )
    return (
        f"\n# %% [markdown]\n{words}\n"
        f'# %% tags=["answer"]\n# YOUR ANSWER\n{name} = None\n\n'
        f'# %% tags=["solution"]\n{name} = {solution}\n\n'
        f"# %%\n{value_name} = {value}\n{bits} = torch.tensor([{value_name}]).view(torch.int32).item() & 0xFFFFFFFF\n"
        f'print(f"{{{value_name}}} -> {{{bits}:032b}}")\n\n'
        f"# %%\n# SELF-CHECK: your answer against the bits measured.\nrequire({name}={name})\n"
        f'expect_type("{name}", {name}, int, "a whole number")\n'
        f'expect({name} == {read}, f"{{{value_name}}} gives {{{read}}}, not {{{name}}}")\n'
        'print("self-check passed")\n\n'
        f"# %% [markdown]\n{notice}"
    )


def lab(floor: NewFloor, language: str) -> str:
    """The floor's lab in a language: its code cells the same byte for byte in both."""
    if language == "zh":
        head = (
            f'# # 实验 {floor.number} · {floor.title_zh}\n#\n# ## 目标 <a id="goal"></a>\n#\n'
            "# 读出 float32 的比特：先预测，再测量。\n\n"
            '# %% [markdown]\n# ## 准备 <a id="setup"></a>\n#\n# 请先运行这一格。\n\n'
        )
    else:
        head = (
            f'# # Lab {floor.number} · {floor.title}\n#\n# ## Goal <a id="goal"></a>\n#\n'
            "# Read a float32's bits: predict first, then measure.\n\n"
            '# %% [markdown]\n# ## Setup <a id="setup"></a>\n#\n# Run this first.\n\n'
        )
    exercises = "".join(_exercise(number, exercise, language) for number, exercise in enumerate(EXERCISES, 1))
    return f"{NOTEBOOK_HEADER}\n# %% [markdown]\n{head}{SETUP_CODE}{exercises}"


LAB_ANSWERS = """
PLANTED["{key}"] = {{
    "sign-of-one": Wrong("a positive number's sign bit set", "SIGN_OF_ONE = 1\\n", "gives 0, not 1"),
    "sign-of-minus-two": Wrong("a negative number's sign bit clear", "SIGN_OF_MINUS_TWO = 0\\n", "gives 1, not 0"),
    "exponent-of-one": Wrong("the exponent without its bias", "EXPONENT_OF_ONE = 0\\n", "gives 127, not 0"),
}}
MISTYPED["{key}"] = {{
    "sign-of-one": Wrong("the bit as text", 'SIGN_OF_ONE = "0"\\n', "should be"),
    "sign-of-minus-two": Wrong("the bit as text", 'SIGN_OF_MINUS_TWO = "1"\\n', "should be"),
    "exponent-of-one": Wrong("the exponent as text", 'EXPONENT_OF_ONE = "127"\\n', "should be"),
}}
CHANGES["{key}"] = {{
    "sign-of-one": [
        Change(
            "**Change** `VALUE_1`", {{"VALUE_1 = 1.0": "VALUE_1 = 3.0"}}, {{"sign-of-one": "SIGN_OF_ONE = 0\\n"}}
        )
    ],
    "sign-of-minus-two": [
        Change(
            "**Change** `VALUE_2`",
            {{"VALUE_2 = -2.0": "VALUE_2 = -0.5"}},
            {{"sign-of-minus-two": "SIGN_OF_MINUS_TWO = 1\\n"}},
        )
    ],
    "exponent-of-one": [
        Change(
            "**Change** `VALUE_3`",
            {{"VALUE_3 = 1.0": "VALUE_3 = 2.0"}},
            {{"exponent-of-one": "EXPONENT_OF_ONE = 128\\n"}},
        )
    ],
}}
"""


def add_ninth_floor(project: Path) -> NewFloor:
    """Add one floor below the last, in the copy `project`, by the steps of CONTRIBUTING's "Add a floor".

    Steps 1 to 8; the two that run a command (9, `translations stamp`; 10, `make anchors`) are left to
    the caller, as they need the copy's package, which this process has not imported, and 11 (record
    again) to a quiet machine.

    Returns:
        The floor added.
    """
    floor = NewFloor(read_floor_count(project) + 1)
    n, key, slug = floor.number, floor.key, floor.slug
    # 1. The registry.
    _insert(
        project,
        "src/pytorch_floors/floors.py",
        '\n)\n"""The floors, top (your program) to bottom."""',
        f"\n    Floor(\n        {n},\n        {slug!r},\n        {TITLE!r},\n        {SUMMARY!r},\n"
        f"        {TITLE_ZH!r},\n        {SUMMARY_ZH!r},\n    ),",
    )
    # 2. Its page; 3. its Chinese twin.
    _write(project, f"docs/floors/{key}.md", PAGE.format(key=key))
    _write(project, f"docs/zh/floors/{key}.md", PAGE_ZH.format(key=key, claim=CLAIM, claim_zh=CLAIM_ZH))
    # 4. Its proofs.
    _write(project, f"snippets/{key}/float_bits.py", PROOF.format(n=n, claim=CLAIM))
    # 5. Its section of Part 0's walk, in both languages, after the floor above it, with its walk proof.
    values = {"n": n, "slug": slug, "key": key, "title": TITLE, "title_zh": TITLE_ZH}
    _insert(project, "docs/index.md", "### The express elevator", WALK.format(**values))
    _insert(project, "docs/zh/index.md", "### 直达电梯", WALK_ZH.format(**values))
    _write(project, f"snippets/0-map/walk_{n}_{slug}.py", WALK_PROOF.format(n=n))
    # 6. Its reading on Part 0's building.
    _insert(
        project,
        "snippets/0-map/building.py",
        "\n    }\n\n\ndef capability_reading(",
        f'\n        "{slug}": Reading(f"{{torch.finfo(torch.float32).bits}}", "bits in a float32"),',
    )
    # 7. Its lab, and the lab's Chinese twin.
    _write(project, f"docs/labs/{key}.py", lab(floor, "en"))
    _write(project, f"docs/zh/labs/{key}.py", lab(floor, "zh"))
    # 8. The lab's wrong answers and changes, for the grading tests.
    with (project / "tests" / "lab_answers.py").open("a", encoding="utf-8") as answers:
        answers.write(LAB_ANSWERS.format(key=key))
    return floor
