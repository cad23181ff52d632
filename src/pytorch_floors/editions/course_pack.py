"""A course pack per floor: one zip with the floor's lab, its proofs and, when printed, its PDF.

A classroom without the network still has everything a floor needs: the lab as the student's
notebook and the full one (`lab_launch.notebook_names`) and as text, every proof the floor's page
runs as the standalone script the page offers for download (`standalone.bundle`, helpers included),
and the floor's handout PDF when this build printed it. The packs are made from the files the build
itself wrote into the site: every build writes them without the PDF (the hook calls `write_packs`
after the notebooks are written), and `make pdf` and `make publish` (`handouts.print_and_pack`) write
them again once the PDFs exist. Each floor page links its pack (`handouts.handout_context`).

The zip is reproducible: members in a fixed order, with a fixed timestamp, so the same build gives
the same bytes.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from pytorch_floors.floors import FLOORS, Floor
from pytorch_floors.i18n.messages import t
from pytorch_floors.labs.launch import notebook_names

__all__ = ["PACK_DIR", "pack_filename", "pack_members", "write_packs"]

PACK_DIR = "packs"
"""Folder of the course packs, relative to the site's root."""

_TIMESTAMP = (2000, 1, 1, 0, 0, 0)


def pack_filename(floor: Floor) -> str:
    """The pack's file name in `packs/` (`floor-3-boundary.zip`)."""
    return f"floor-{floor.key}.zip"


def _readme(floor: Floor, members: list[str], language: str) -> str:
    listed = "\n".join(f"  {name}" for name in members)
    heading = floor.heading_in(language)
    return (
        t("{heading}: course pack", language, heading=heading)
        + f"\n\n{listed}\n\n"
        + t(
            "Run the lab: open the student notebook in Jupyter (its first cell installs the pinned versions);\n"
            "the full notebook and the text version keep the solutions. Run a proof: python proofs/<name>.py\n",
            language,
        )
    )


def pack_members(
    site_dir: Path, floor: Floor, pdf: Path | None, proofs_root: Path | None = None
) -> list[tuple[str, Path]]:
    """The files of one floor's pack, as (name in the zip, file in the built site).

    Args:
        site_dir: The built site (or a language's folder of it: `site/zh`).
        floor: The floor.
        pdf: The floor's handout PDF, or `None` when this build did not print it.
        proofs_root: Where the proofs are published, when not in `site_dir` (every language shares them).

    Raises:
        FileNotFoundError: A lab notebook or the floor's proofs missing from the site.
    """
    lab_dir = site_dir / floor.lab.removesuffix(".py")
    members = [(f"lab/{name}", lab_dir / name) for name in (*notebook_names(floor), Path(floor.lab).name)]
    proofs_dir = (proofs_root or site_dir) / floor.snippets_dir
    proofs = sorted(proofs_dir.rglob("*.py")) if proofs_dir.is_dir() else []
    if not proofs:
        raise FileNotFoundError(f"{floor.heading}: no proofs under {proofs_dir} for its course pack")
    members += [(f"proofs/{p.relative_to(proofs_dir).as_posix()}", p) for p in proofs]
    if pdf is not None:
        members.insert(0, (pdf.name, pdf))
    missing = [str(path) for _, path in members if not path.is_file()]
    if missing:
        raise FileNotFoundError(f"{floor.heading}: the course pack misses {', '.join(missing)}")
    return members


def write_packs(
    site_dir: Path, pdfs: dict[str, Path] | None = None, proofs_root: Path | None = None, *, language: str
) -> list[Path]:
    """Write the pack of every floor whose lab the site has into `packs/` of the built site.

    A floor without a lab (a fixture site, a floor being written) has no pack, as it has no lab
    page or notebooks (`publish_notebooks` and the navigation follow the same rule).

    Args:
        site_dir: The built site.
        pdfs: Each floor's handout PDF by floor key, when this build printed them.
        proofs_root: Where the proofs are published, when not in `site_dir` (a language's folder shares the site's).
        language: The language of the packs' READMEs (`en`, `zh`), the folder's.

    Returns:
        The packs written.
    """
    out_dir = site_dir / PACK_DIR
    written = []
    for floor in FLOORS:
        if not (site_dir / floor.lab.removesuffix(".py") / Path(floor.lab).name).is_file():
            continue  # the site has no lab for this floor
        out_dir.mkdir(parents=True, exist_ok=True)
        members = pack_members(site_dir, floor, (pdfs or {}).get(floor.key), proofs_root)
        folder = f"floor-{floor.key}"
        target = out_dir / pack_filename(floor)
        with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as pack:
            entries = [("README.txt", _readme(floor, [name for name, _ in members], language).encode())]
            entries += [(name, path.read_bytes()) for name, path in members]
            for name, data in entries:
                info = zipfile.ZipInfo(f"{folder}/{name}", date_time=_TIMESTAMP)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                pack.writestr(info, data)
        written.append(target)
    return written
