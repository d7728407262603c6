"""What every command module of the command line shares: the parser types and the cluster the
arguments name. Kept apart so that no command module imports another."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import TypeAlias

from eoslab.cluster import Cluster

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""``eoslab``'s subparsers, where each command module adds its own (a string: not subscriptable at run time)."""

Handler: TypeAlias = Callable[[argparse.Namespace], int]
"""One subcommand: the parsed arguments in, an exit code out."""

Registrar: TypeAlias = Callable[[Subparsers], None]
"""Adds one subcommand's parser (with its handler as ``func``) to ``eoslab``'s subparsers."""


def cluster_of(args: argparse.Namespace) -> Cluster:
    return Cluster(args.backend)


def backend_name(args: argparse.Namespace) -> str:
    """The backend a command will use, as `Cluster` chooses it, without building one (it may not run yet)."""
    return str(args.backend or os.environ.get("EOSLAB_BACKEND") or "local").lower()
