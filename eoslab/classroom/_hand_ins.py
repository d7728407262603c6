"""What a class handed in, gathered from ``eoslab grade --class DIR``: archives and folders, side by side.

``DIR`` holds the archives ``eoslab submit`` wrote (``*.zip``) and, as before, plain folders (one per
learner, assembled by hand, or a clone of the learner's repository: its ``labs/`` is taken). Archives
are unpacked into ``DIR/.unpacked/`` (beside the gradebook; a dot-folder, so it is never taken for a
learner), their manifests verified; a folder's notebooks are copied there too, so every rerun starts
from a folder that holds nothing but the notebooks: no ``conftest.py`` or ``eoslab.py`` of the
learner's for the instructor's pytest or kernel to import. A learner who handed in twice is graded on
the newest archive (an archive beats a folder).
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eoslab.classroom._submission import read_manifest, slug, unpack_submission
from eoslab.errors import EoslabError, GradingError

WORK = ".unpacked"
"""The work folder inside the class folder: archives unpacked, folders' notebooks copied."""

FOLDER_CHECK = "folder (no manifest)"
"""The ``manifest`` column of a learner who handed in a folder: nothing to verify against."""


@dataclass
class HandIn:
    """One learner's hand-in, ready to grade.

    ``notebooks`` are the copies to rerun; ``handed`` is the folder as the learner handed it in (their
    notebooks beside their reports, for the self-reported column); ``runs`` their module-06 runs (or
    None); ``check`` the manifest's verdict ("ok", :data:`FOLDER_CHECK`, or what did not verify);
    ``error`` set when the hand-in cannot be graded at all (an unreadable archive); ``environment`` the
    manifest's machine facts (empty for a folder: it has no manifest).
    """

    learner: str
    source: str
    handed: Path
    notebooks: list[Path] = field(default_factory=list)
    runs: Path | None = None
    check: str = "ok"
    error: str = ""
    environment: dict[str, Any] = field(default_factory=dict)


def _work_folder(work: Path, learner: str) -> Path:
    """A folder per learner name: the slug for a human, a hash so that "Ana M" and "Ana_M" never share one."""
    return work / f"{slug(learner)}-{hashlib.sha256(learner.encode()).hexdigest()[:6]}"


def _from_archive(archive: Path, learner: str, work: Path) -> HandIn:
    sub = unpack_submission(archive, _work_folder(work, learner))
    has_runs = sub.runs.is_dir() and any(sub.runs.iterdir())
    return HandIn(
        sub.learner,
        f"archive {archive.name}",
        sub.labs,
        sorted(sub.labs.glob("lab*.ipynb")),
        sub.runs if has_runs else None,
        "; ".join(sub.problems) or "ok",
        environment=dict(sub.manifest.get("environment") or {}),
    )


def _from_folder(folder: Path, work: Path) -> HandIn:
    labs = _work_folder(work, folder.name) / "labs"
    if labs.exists():
        shutil.rmtree(labs)
    labs.mkdir(parents=True)
    copies = []
    handed = folder / "labs" if (folder / "labs").is_dir() else folder  # a clone of the learner's repository
    for nb in sorted(handed.glob("lab*.ipynb")):
        shutil.copyfile(nb, labs / nb.name)
        copies.append(labs / nb.name)
    runs = folder / "runs"
    return HandIn(folder.name, f"folder {folder.name}/", folder, copies, runs if runs.is_dir() else None, FOLDER_CHECK)


def _archives(root: Path, work: Path) -> tuple[dict[str, HandIn], list[str]]:
    """The newest archive of each learner, unpacked; an unreadable archive is a hand-in that says why."""
    found: dict[str, HandIn] = {}
    readable: list[tuple[str, str, Path]] = []
    for archive in sorted(p for p in root.glob("*.zip") if p.is_file()):
        try:
            m = read_manifest(archive)
        except EoslabError as exc:
            found[archive.name] = HandIn(archive.name, f"archive {archive.name}", work, check="", error=str(exc))
            continue
        readable.append((str(m.get("created_at", "")), archive.name, archive))
    notes: list[str] = []
    for _, _, archive in sorted(readable, reverse=True):
        learner = str(read_manifest(archive)["learner"]).strip()
        if learner in found:
            notes.append(f"{learner}: {archive.name} is older than their other submission: set aside")
            continue
        found[learner] = _from_archive(archive, learner, work)
    return found, notes


def gather(root: Path) -> tuple[list[HandIn], list[str]]:
    """Every learner's hand-in under ``root`` (sorted by name), and notes on what was set aside."""
    if not root.is_dir():
        raise GradingError(f"{root} is not a folder: give the folder that holds the class's submissions.")
    archives = sorted(p for p in root.glob("*.zip") if p.is_file())
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not archives and not folders:
        raise GradingError(
            f"{root} has no submissions: put each learner's submission-*.zip (from `eoslab submit`) in it, "
            f"or a folder per learner ({root}/<learner>/)."
        )
    by_learner, notes = _archives(root, root / WORK)
    for folder in folders:
        if folder.name in by_learner:
            notes.append(f"{folder.name}: the folder {folder.name}/ is set aside for their archive")
            continue
        by_learner[folder.name] = _from_folder(folder, root / WORK)
    return [by_learner[k] for k in sorted(by_learner)], notes
