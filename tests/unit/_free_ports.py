"""A block of cluster ports where nothing listens: for a unit test that must see no cluster, whatever runs on this
machine (`make test` starts the suite's clusters beside the unit tier)."""

from __future__ import annotations

import pytest

from eoslab._ports import is_free
from eoslab.topology import Topology


def free_offset() -> int:
    """An ``EOSLAB_PORT_OFFSET`` whose every port is free now."""
    for offset in range(7000, 40000, 1000):
        if all(is_free(p) for p in Topology(port_offset=offset).all_ports()):
            return offset
    pytest.skip("no free block of cluster ports on this machine")
