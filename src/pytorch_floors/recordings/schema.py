"""The recording format: one machine's run of every proof, kept in `recordings/<tier>/recording.json`.

A recording is plain JSON, versioned by `format`, small enough to review in a pull request:

```json
{
  "format": 1,
  "tier": "ci-2core",
  "stands_for": "a two-vCPU CI runner",
  "recorded": "2026-12-01",
  "cpu_share": 0.99,
  "machine": {"torch_version": "2.11.0", "python_version": "3.11.7", "platform": "Linux x86_64",
              "cpu": "...", "cpu_capability": "AVX512", "threads": 2, "cores": 2,
              "accelerator": "none", "built": "2026-12-01"},
  "blocks": [
    {"page": "floors/6-kernels.md", "block": "add-bandwidth", "digest": "sha256:...",
     "html": true, "output": "<figure ...>", "seconds": 3.1,
     "claims": [{"statement": "...", "held": true, "detail": "...", "line": 41,
                 "file": "snippets/6-kernels/add_bandwidth.py", "applies": true, "why_not": ""}],
     "provenance": {... the run that produced this output, as "machine" ...}}
  ]
}
```

- `digest` is the block's inputs (`pytorch_floors.execution.digest`): code with includes expanded,
  the earlier blocks of its session, its options as written and the project files they import. The
  machine is not part of it: a build compares the digest with its own block's to tell a current
  recording from a stale one.
- `output` is what the page shows (paths scrubbed), `claims` every claim with its verdict, "not
  applicable" included, and `provenance` the full provenance of the run that produced it.
- `recorded` is the day of the run (or its day and time), nothing else; `stands_for`, the machines and
  each block's page and id are shown too (a tab's label, the report), so they are checked as an output is.
- `cpu_share` is the share of its cores a busy process got before and after the run, the lower
  (`recordings.contention`): under 0.9, other work held them, and the tier's tabs say "contended".
  A recording without it (made before it was measured) claims nothing either way.
- Labs are not recorded: a lab is an exercise graded on the reader's own run, and it takes minutes.

A reader of another `format` refuses the file by name: a build never shows a recording it cannot read.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from pytorch_floors.claims import Claim, ClaimFormatError, parse_claims
from pytorch_floors.errors import FloorsError
from pytorch_floors.execution.output import MAX_OUTPUT, clean_text, readings
from pytorch_floors.execution.provenance import Provenance
from pytorch_floors.execution.secrets import SecretFinder, personal_path
from pytorch_floors.recordings.html import UntrustedHTML, allowed_html

__all__ = [
    "FILE_NAME",
    "FORMAT",
    "RecordedBlock",
    "Recording",
    "RecordingError",
    "read_recording",
    "read_recordings",
    "tier_name_problem",
    "write_recording",
]

FORMAT = 1
"""The version of the format this package reads and writes."""

FILE_NAME = "recording.json"
"""The file a tier's folder holds."""

MAX_FILE = 64 << 20
"""Bytes a recording file may hold: the site's blocks at well under their limit each."""

MAX_SHARE = 1.5
"""The most `cpu_share` may say: a little over 1 is a clock's rounding, more is not a measurement."""

_TIER_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")
# A tab's label and the report show `recorded` as it is: only a date, or a date and a time, ever passes.
_RECORDED = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:\d{2})?)?")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


class RecordingError(FloorsError):
    """A recording cannot be read or written as this format requires; the message names the file."""


def tier_name_problem(name: str) -> str | None:
    """Why a tier name cannot name a folder and a `data-tier` value, or `None` when it can.

    Args:
        name: The proposed name (`ci-2core`, `h200`, `macos-14`).

    Returns:
        The problem, or `None`.
    """
    if _TIER_NAME.match(name):
        return None
    return f"tier name {name!r} must be lowercase letters, digits, '.', '_' or '-' (at most 63), starting with one"


@dataclass(frozen=True)
class RecordedBlock:
    """One block as a tier ran it.

    Attributes:
        page: Source path of the page, relative to `docs/`.
        block_id: The block's id.
        digest: The digest of the block's inputs when it was recorded.
        html: The output is HTML (a figure) rather than console text.
        output: What the block printed, as a page shows it.
        seconds: How long it ran.
        claims: Every claim it stated, with its verdict.
        provenance: The run that produced the output.
    """

    page: str
    block_id: str
    digest: str
    html: bool
    output: str
    seconds: float
    claims: tuple[Claim, ...]
    provenance: Provenance

    @property
    def key(self) -> tuple[str, str]:
        """`(page, block id)`: what the block is known by across builds and machines."""
        return (self.page, self.block_id)


@dataclass(frozen=True)
class Recording:
    """One tier's recording of the site's proofs.

    Attributes:
        tier: The tier's name (`ci-2core`).
        stands_for: What kind of machine it is, in words.
        recorded: The date of the recording (ISO format).
        machine: The provenance of the recording run.
        blocks: The blocks, in page order.
        cpu_share: The share of its cores a busy process got around the run (`None`: not measured).
    """

    tier: str
    stands_for: str
    recorded: str
    machine: Provenance
    blocks: tuple[RecordedBlock, ...] = field(default=())
    cpu_share: float | None = None

    def block(self, page: str, block_id: str) -> RecordedBlock | None:
        """The recorded block, if the tier has one.

        Args:
            page: Source path relative to `docs/`.
            block_id: The block's id.

        Returns:
            The block, or `None`.
        """
        return next((b for b in self.blocks if b.key == (page, block_id)), None)


def _claim_dict(claim: Claim) -> dict[str, object]:
    return {
        "statement": claim.statement,
        "held": claim.held,
        "detail": claim.detail,
        "line": claim.line,
        "file": claim.file,
        "applies": claim.applies,
        "why_not": claim.why_not,
    }


def _block_dict(block: RecordedBlock) -> dict[str, object]:
    return {
        "page": block.page,
        "block": block.block_id,
        "digest": block.digest,
        "html": block.html,
        "output": block.output,
        "seconds": block.seconds,
        "claims": [_claim_dict(c) for c in block.claims],
        "provenance": block.provenance.as_dict(),
    }


def write_recording(recording: Recording, root: Path) -> Path:
    """Write a recording to `root/<tier>/recording.json` (atomically), its blocks in reading order.

    Args:
        recording: The recording.
        root: The recordings folder (`recordings/`).

    Returns:
        The file written.
    """
    path = root / recording.tier / FILE_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "format": FORMAT,
        "tier": recording.tier,
        "stands_for": recording.stands_for,
        "recorded": recording.recorded,
        **({} if recording.cpu_share is None else {"cpu_share": recording.cpu_share}),
        "machine": recording.machine.as_dict(),
        "blocks": [_block_dict(b) for b in recording.blocks],
    }
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    temporary.replace(path)
    return path


def _share(data: dict[str, object], where: str) -> float | None:
    """The recording's `cpu_share`: absent, or a number a spinning process can get (0 to a little over 1)."""
    value = data.get("cpu_share")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_SHARE:
        raise RecordingError(f"{where}: 'cpu_share' must be a share of the cores from 0 to {MAX_SHARE}, not {value!r}")
    return float(value)


def _text(data: dict[str, object], name: str, where: str) -> str:
    value = data.get(name)
    if not isinstance(value, str):
        raise RecordingError(f"{where}: {name!r} must be text, not {value!r}"[:300])
    return value


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number a recording may hold")


def _untrusted(text: str, where: str, secrets: SecretFinder) -> None:
    """Refuse text from another machine that a page must not show: a secret, or a path into a home folder."""
    if (secret := secrets.find(text)) is not None:
        raise RecordingError(f"{where}: holds {secret}; record it again on a machine without it")
    if (home := personal_path(text)) is not None:
        raise RecordingError(f"{where}: names a path in a home folder ({home}/…), which a build never shows")


def _checked_provenance(provenance: Provenance, where: str, secrets: SecretFinder) -> None:
    # Each field as the page shows it: JSON text would hide a secret's non-ASCII letters behind escapes.
    _untrusted("\n".join(str(value) for value in provenance.as_dict().values()), where, secrets)


def _recorded(data: dict[str, object], where: str) -> str:
    """The recording's date: a date (`2026-12-01`), or a date and a time; never repeated in the refusal."""
    value = _text(data, "recorded", where)
    if _RECORDED.fullmatch(value):
        try:
            datetime.fromisoformat(value)  # a day and a time that exist (not 2026-02-30)
        except ValueError:
            pass
        else:
            return value
    raise RecordingError(
        f"{where}: 'recorded' must be the date it was recorded (2026-12-01, or with a time: 2026-12-01T09:30)"
    )


def _checked_output(data: dict[str, object], html: bool, where: str, secrets: SecretFinder) -> str:
    output = _text(data, "output", where)
    if len(output.encode("utf-8", errors="replace")) > MAX_OUTPUT:
        raise RecordingError(f"{where}: its output is over {MAX_OUTPUT:,} bytes, more than a page shows of a block")
    # Each way a reader reads it is checked: a token split by a colour escape is whole once the escape is gone.
    for reading in readings(output, html=html):
        _untrusted(reading, f"{where}: output", secrets)
    if not html:
        return clean_text(output)  # shown as a build shows its own output: escapes and control bytes cleaned
    try:
        return allowed_html(output)
    except UntrustedHTML as error:
        raise RecordingError(f"{where}: its HTML output is not what the project's figures write: {error}") from None


def _block(data: object, where: str, secrets: SecretFinder) -> RecordedBlock:
    if not isinstance(data, dict):
        raise RecordingError(f"{where}: a block must be an object")
    claims, seconds, html = data.get("claims"), data.get("seconds"), data.get("html")
    if not isinstance(claims, list):
        raise RecordingError(f"{where}: 'claims' must be a list")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 <= seconds < math.inf:
        raise RecordingError(f"{where}: 'seconds' must be a number of seconds, not {seconds!r}")
    if not isinstance(html, bool):
        raise RecordingError(f"{where}: 'html' must be true or false")
    try:
        parsed = tuple(parse_claims("".join(json.dumps(c) + "\n" for c in claims)))
        provenance = Provenance.from_dict(data.get("provenance"))
    except (ClaimFormatError, ValueError) as error:
        raise RecordingError(f"{where}: {error}") from None
    _checked_provenance(provenance, f"{where}: provenance", secrets)
    for claim in parsed:
        _untrusted(" ".join((claim.statement, claim.detail, claim.why_not, claim.file)), f"{where}: a claim", secrets)
    # The report and the build log name a block no page has (an orphan) by its page and id.
    page, block_id, digest = _text(data, "page", where), _text(data, "block", where), _text(data, "digest", where)
    _untrusted(page, f"{where}: page", secrets)
    _untrusted(block_id, f"{where}: block", secrets)
    if not _DIGEST.fullmatch(digest):
        raise RecordingError(f"{where}: 'digest' must be a block's digest (sha256: and 64 hex digits)")
    return RecordedBlock(
        page=page,
        block_id=block_id,
        digest=digest,
        html=html,
        output=_checked_output(data, html, where, secrets),
        seconds=float(seconds),
        claims=parsed,
        provenance=provenance,
    )


def read_recording(path: Path, *, folder_prefixes: tuple[str, ...] = ("",)) -> Recording:
    """Read one tier's recording.

    Args:
        path: Its `recording.json`.
        folder_prefixes: What may come before the tier's name in the name of the folder holding it:
            `recordings/<tier>/` by default; the merge also reads a downloaded artifact's `recording-<tier>/`.

    Returns:
        The recording.

    Raises:
        RecordingError: If it is not JSON, of another format, or a field is missing or of the wrong type.
    """
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_FILE + 1)
        if len(raw) > MAX_FILE:
            raise RecordingError(
                f"{path}: is over {MAX_FILE:,} bytes, more than a recording of the site's blocks holds"
            )
        data = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except RecursionError:
        raise RecordingError(f"{path}: cannot be read as a recording: it is nested too deeply") from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise RecordingError(f"{path}: cannot be read as a recording: {error}") from None
    if not isinstance(data, dict):
        raise RecordingError(f"{path}: a recording is a JSON object")
    if type(data.get("format")) is not int or data.get("format") != FORMAT:
        raise RecordingError(
            f"{path}: recording format {data.get('format')!r}; this version reads format {FORMAT}: record it again"
        )
    tier = _text(data, "tier", str(path))
    if problem := tier_name_problem(tier):
        raise RecordingError(f"{path}: {problem}")
    if path.parent.name not in {prefix + tier for prefix in folder_prefixes}:
        raise RecordingError(f"{path}: names tier {tier!r} but lies in the folder {path.parent.name!r}")
    blocks = data.get("blocks")
    if not isinstance(blocks, list):
        raise RecordingError(f"{path}: 'blocks' must be a list")
    try:
        machine = Provenance.from_dict(data.get("machine"))
    except ValueError as error:
        raise RecordingError(f"{path}: machine: {error}") from None
    secrets = SecretFinder()
    stands_for = _text(data, "stands_for", str(path))
    _untrusted(stands_for, f"{path}: stands_for", secrets)
    _checked_provenance(machine, f"{path}: machine", secrets)
    recorded = _recorded(data, str(path))
    read = tuple(_block(b, f"{path}: block {n + 1}", secrets) for n, b in enumerate(blocks))
    keys = [b.key for b in read]
    if len(set(keys)) != len(keys):
        raise RecordingError(f"{path}: a block is recorded twice")
    return Recording(
        tier=tier,
        stands_for=stands_for,
        recorded=recorded,
        machine=machine,
        blocks=read,
        cpu_share=_share(data, str(path)),
    )


def read_recordings(root: Path) -> tuple[Recording, ...]:
    """Read every tier's recording under `root`, by tier name.

    Args:
        root: The recordings folder (it need not exist: then there are none).

    Returns:
        The recordings, sorted by tier name.

    Raises:
        RecordingError: If a tier's folder holds no readable recording.
    """
    if not root.is_dir():
        return ()
    recordings = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        path = folder / FILE_NAME
        if not path.is_file():
            raise RecordingError(f"{folder}: a tier's folder holds {FILE_NAME}; this one has none")
        recordings.append(read_recording(path))
    return tuple(recordings)
