"""Kafka's DumpLogSegments run over the files of one question, in ONE call, each file's parse cached.

Each tool call is a JVM start (1-2 s on 2 cores), so :func:`dump` takes all
the files of a question in ONE call and caches each file's parse keyed by
(path, size, mtime): a sealed segment is read once per session, the active one
again only after it changed. :mod:`eoslab.inspect._dumplog` parses what the tool prints.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eoslab.errors import EoslabError
from eoslab.inspect._dumplog import DumpedFile, parse_dump

if TYPE_CHECKING:
    from eoslab.cluster import Cluster
    from eoslab.topology import Node

_CACHE: OrderedDict[tuple[Any, ...], DumpedFile] = OrderedDict()
_CACHE_SIZE = 512
_LOCK = threading.Lock()  # dumps of several brokers may run in threads at once (one JVM each)


def clear_cache() -> None:
    """Forget every parsed file (e.g. after a reset of the cluster's data)."""
    with _LOCK:
        _CACHE.clear()


def dump_per_node(
    cluster: Cluster, files_of: dict[int, list[tuple[str, str]]], *flags: str
) -> dict[int, list[DumpedFile]]:
    """:func:`dump_files` for several brokers (node id -> files), the JVMs running at the same time."""
    from concurrent.futures import ThreadPoolExecutor

    nodes = {b: cluster.topology.broker(b) for b in files_of}
    with ThreadPoolExecutor(max_workers=max(1, len(files_of))) as pool:
        futures = {b: pool.submit(dump_files, cluster, nodes[b], files, *flags) for b, files in files_of.items()}
        return {b: f.result() for b, f in futures.items()}


def log_files_by_leader(
    cluster: Cluster, partitions: Sequence[tuple[str, int]], leaders: Mapping[tuple[str, int], int]
) -> dict[int, list[tuple[str, str]]]:
    """Broker -> (folder, file name) of each ``.log`` segment of the ``partitions`` it leads (``leaders``:
    partition -> leader), in the partitions' order: what :func:`dump_per_node` takes."""
    files_of: dict[int, list[tuple[str, str]]] = {}
    for topic, part in partitions:
        broker = leaders[(topic, part)]
        folder = f"{topic}-{part}"
        names = list_folder(cluster, cluster.topology.broker(broker), folder) or []
        files_of.setdefault(broker, []).extend((folder, n) for n in sorted(names) if n.endswith(".log"))
    return files_of


def list_folder(cluster: Cluster, node: Node, folder: str) -> list[str] | None:
    """File names in ``<log.dirs>/<folder>`` of ``node``, or ``None`` if the folder does not exist.

    Asks the backend (a directory listing here, ``docker compose exec find`` in a container).
    """
    try:
        return [name for name, _ in cluster.backend.list_files(node, folder)]
    except EoslabError:
        return None


def dump(cluster: Cluster, node: Node, folder: str, names: Sequence[str], *flags: str) -> list[DumpedFile]:
    """DumpLogSegments over ``names`` in ``<log.dirs>/<folder>`` of ``node``, in ONE JVM call.

    ``flags`` are the tool's options (``--deep-iteration``, ``--print-data-log``,
    ``--transaction-log-decoder`` ...). Cached per file by (size, mtime).
    """
    return dump_files(cluster, node, [(folder, n) for n in names], *flags)


def dump_files(cluster: Cluster, node: Node, files: Sequence[tuple[str, str]], *flags: str) -> list[DumpedFile]:
    """Like :func:`dump` for (folder, file name) pairs of several partitions of ONE node: still one JVM call.

    Why: a lesson that shows the markers of partition A and of a ``__consumer_offsets``
    partition led by the same broker pays one JVM start, not two.
    """
    host = cluster.backend.host_data_path(node)
    base = cluster.backend.data_path(node)
    keys = [_cache_key(cluster, node, host, folder, name, flags) for folder, name in files]
    with _LOCK:
        missing = [f for f, k in zip(files, keys, strict=True) if k is None or k not in _CACHE]
    fresh = _run_dump(cluster, node, base, missing, flags) if missing else {}
    result = []
    for (folder, name), key in zip(files, keys, strict=True):
        with _LOCK:
            result.append(_cached(fresh.get((folder, name)), key, f"{base}/{folder}/{name}"))
    return result


def _cache_key(
    cluster: Cluster, node: Node, host: Path | None, folder: str, name: str, flags: tuple[str, ...]
) -> tuple[Any, ...] | None:
    """What a file's parse is cached under: where it is, its size and mtime, the flags; ``None``
    when the learner's machine cannot see the file (a container's volume, or deleted since)."""
    if host is None:
        return None
    try:
        st = (Path(host) / folder / name).stat()
    except FileNotFoundError:  # deleted by retention since the listing: dump it anyway, the tool says
        return None
    return (cluster.backend.name, node.name, str(host), folder, name, st.st_size, st.st_mtime_ns, flags)


def _run_dump(
    cluster: Cluster, node: Node, base: str, files: Sequence[tuple[str, str]], flags: tuple[str, ...]
) -> dict[tuple[str, str], DumpedFile]:
    """ONE DumpLogSegments call over ``files``: each parsed file by its (folder, file name)."""
    paths = ",".join(f"{base}/{folder}/{name}" for folder, name in files)
    out = cluster.tool("dump-log", *flags, "--files", paths, node=node.name)
    fresh: dict[tuple[str, str], DumpedFile] = {}
    for parsed in parse_dump(out):
        p = parsed.path.rstrip("/")
        fresh[(os.path.basename(os.path.dirname(p)), os.path.basename(p))] = parsed
    return fresh


def _cached(got: DumpedFile | None, key: tuple[Any, ...] | None, path: str) -> DumpedFile:
    """A file's parse (``got``: fresh from the tool) through the cache; the caller holds ``_LOCK``."""
    if got is not None:
        if key is not None:
            _CACHE[key] = got
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
        return got
    if key is not None and key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    return DumpedFile(path, notes=["the tool printed nothing for this file"])
