"""``eoslab submit``: a learner's hand-in as ONE archive, and the instructor's side of it (unpack, verify).

Hand-in by folders meant 30 folders assembled by hand on the instructor's laptop. An archive
carries everything the class run needs: the lab notebooks (the instructor reruns them), the
reports ``eoslab grade`` wrote (shown beside the rerun as self-reported), the module-06 runs
(lab 06 is graded on the learner's own measurements) and ``manifest.json``: who, which kit,
on what machine, and the sha256 of every file. The hashes tell an archive that was altered
after ``eoslab submit`` wrote it (or damaged on a USB stick) from one that was not; they cannot
tell whether the learner edited a notebook and its report together, which is why the class
grade comes from a rerun.

An archive is unpacked name by name: only the shapes ``submit`` writes (``labs/*.ipynb``,
``labs/*.report.json``, ``runs/...``) are extracted, never an absolute path or ``..``, so a
learner cannot slip a ``conftest.py`` or an ``eoslab/`` package beside the notebooks that the
instructor's pytest or kernel would pick up.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from eoslab._version import __version__
from eoslab.errors import EoslabError, GradingError

MANIFEST = "manifest.json"
FORMAT = 1
"""The manifest's format; a newer one than this kit reads is refused with one sentence."""

JAVA_TIMEOUT = 20.0
"""`java -version` starts a JVM: ~0.3 s, seconds on a busy laptop; the manifest says "unknown" past this."""

_ALLOWED = re.compile(r"^(labs/[^/]+\.(ipynb|report\.json)|runs/.+)$")


@dataclass
class Archive:
    """What ``eoslab submit`` wrote: the file, and its manifest."""

    path: Path
    manifest: dict[str, Any]

    def summary(self) -> str:
        files = list(self.manifest["files"])
        labs = sum(1 for f in files if f.endswith(".ipynb"))
        reports = sum(1 for f in files if f.endswith(".report.json"))
        runs = len({PurePosixPath(f).parent for f in files if f.startswith("runs/")})
        return (
            f"{self.path}: {labs} lab notebooks, {reports} reports, {runs} run folders for "
            f"{self.manifest['learner']}; hand in this one file."
        )


@dataclass
class Submission:
    """An archive unpacked into ``folder``: the learner it names, its manifest, and what did not verify."""

    learner: str
    folder: Path
    manifest: dict[str, Any]
    problems: list[str] = field(default_factory=list)

    @property
    def labs(self) -> Path:
        return self.folder / "labs"

    @property
    def runs(self) -> Path:
        return self.folder / "runs"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _java_version() -> str:
    from eoslab._java import java_executable

    try:
        out = subprocess.run([java_executable(), "-version"], capture_output=True, text=True, timeout=JAVA_TIMEOUT)
        lines = (out.stderr or out.stdout).splitlines()
        return lines[0].strip() if lines else "unknown"
    except (EoslabError, OSError, subprocess.SubprocessError) as exc:
        return f"none ({str(exc)[:80]})"


def environment(backend: str) -> dict[str, Any]:
    """The learner's machine, as the instructor needs it to tell a slow laptop's runs from a wrong answer."""
    import psutil

    return {
        "os": f"{platform.system()} {platform.release()}",
        "machine": platform.machine(),
        "python": platform.python_version(),
        "java": _java_version(),
        "backend": backend,
        "cpus": os.cpu_count() or 0,
        "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
    }


def submission_files(course: Path, runs: Path | None) -> dict[str, Path]:
    """The archive's contents, by name in the archive: the labs and their reports, every complete run."""
    from eoslab.runs import run_folders

    labs = course / "labs"
    notebooks = sorted(labs.glob("*.ipynb")) if labs.is_dir() else []
    if not notebooks:
        raise GradingError(
            f"No lab notebooks in {labs}: run `eoslab submit` in your course folder (the one holding labs/), "
            "or give it with --course."
        )
    files = {f"labs/{p.name}": p for p in [*notebooks, *sorted(labs.glob("*.report.json"))]}
    if runs is not None and runs.is_dir():
        for folder in run_folders(runs):
            for f in sorted(folder.rglob("*")):
                if f.is_file():
                    files[(PurePosixPath("runs") / f.relative_to(runs).as_posix()).as_posix()] = f
    return files


def slug(name: str) -> str:
    """A file- and folder-safe form of a learner's name (the name itself stays in the manifest)."""
    return re.sub(r"[^\w.-]+", "_", name.strip()).strip("._") or "learner"


def write_submission(
    course: Path, *, learner: str, dest: Path, runs: Path | None = None, backend: str = "local"
) -> Archive:
    """Write ``dest/submission-<learner>-<UTC stamp>.zip`` (see the module docstring); written under a
    temporary name and renamed, so a half-written archive is never mistaken for a hand-in."""
    learner = learner.strip()
    if not learner:
        raise GradingError("Give your name with --name (as your instructor knows you): the submission carries it.")
    files = submission_files(course, runs)
    if not dest.is_dir():
        raise GradingError(f"{dest} is not a folder: give --out an existing folder to write the submission into.")
    data = {name: path.read_bytes() for name, path in files.items()}  # hashed and archived: the same bytes
    manifest = {
        "format": FORMAT,
        "learner": learner,
        "kit_version": __version__,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "environment": environment(backend),
        "files": {name: _sha256(b) for name, b in data.items()},
    }
    out = dest / f"submission-{slug(learner)}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.zip"
    part = out.with_name(out.name + ".part")
    with zipfile.ZipFile(part, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(MANIFEST, json.dumps(manifest, indent=2) + "\n")
        for name, b in data.items():
            zf.writestr(name, b)
    os.replace(part, out)
    return Archive(out, manifest)


def read_manifest(archive: Path) -> dict[str, Any]:
    """The manifest of ``archive`` without unpacking it (a sentence if it is no submission)."""
    try:
        with zipfile.ZipFile(archive) as zf:
            manifest = json.loads(zf.read(MANIFEST))
    except KeyError:
        raise GradingError(
            f"{archive.name} has no {MANIFEST}: it was not written by `eoslab submit`; ask the learner to submit again."
        ) from None
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise GradingError(
            f"{archive.name} is not a readable submission ({exc}): ask the learner to submit again."
        ) from None
    if not isinstance(manifest, dict) or not str(manifest.get("learner", "")).strip():
        raise GradingError(f"{archive.name}'s {MANIFEST} names no learner: ask the learner to submit again.")
    if not isinstance(manifest.get("files"), dict):
        raise GradingError(f"{archive.name}'s {MANIFEST} lists no files: ask the learner to submit again.")
    if int(manifest.get("format", 0)) > FORMAT:
        raise GradingError(f"{archive.name} was written by a newer kit (format {manifest['format']}): update eoslab.")
    return manifest


def _safe(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return bool(_ALLOWED.match(name)) and not name.startswith("/") and ".." not in parts and "\\" not in name


def unpack_submission(archive: Path, folder: Path) -> Submission:
    """Unpack ``archive`` into ``folder`` (emptied first) and check every file against the manifest.

    What does not verify is listed in :attr:`Submission.problems`, one sentence each: a file whose
    sha256 differs, one the manifest lists but the archive lacks, one it does not list, one that
    is not of a shape ``eoslab submit`` writes (never extracted).
    """
    manifest = read_manifest(archive)
    listed: dict[str, str] = {str(k): str(v) for k, v in manifest["files"].items()}
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    problems: list[str] = []
    seen: set[str] = set()
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            name = info.filename
            if info.is_dir() or name == MANIFEST:
                continue
            if not _safe(name):
                problems.append(f"{name} is not a file `eoslab submit` writes: not unpacked")
                continue
            data = zf.read(info)
            seen.add(name)
            if name not in listed:
                problems.append(f"{name} is not in the manifest")
            elif _sha256(data) != listed[name]:
                problems.append(f"{name} differs from its manifest sha256 (changed after `eoslab submit`)")
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    problems += [f"{name} is in the manifest but not in the archive" for name in sorted(set(listed) - seen)]
    return Submission(str(manifest["learner"]).strip(), folder, manifest, problems)
