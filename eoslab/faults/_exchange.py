"""One request on a fresh connection the proxy owns: a replayed duplicate, or a late request delivered."""

from __future__ import annotations

import asyncio
import struct

_SIZE = struct.Struct(">i")
TIMEOUT = 10.0  # longer than the 2 s min.insync wait of an acks=all write on a healthy cluster


async def exchange(
    address: tuple[str, int], frame: bytes, expect_response: bool = True, timeout: float = TIMEOUT
) -> bytes | None:
    """One request on a fresh connection to a broker's PROXIED listener; the raw response payload."""
    r, w = await asyncio.wait_for(asyncio.open_connection(*address), timeout)
    try:
        w.write(frame)
        await w.drain()
        if not expect_response:
            return None
        size = _SIZE.unpack(await asyncio.wait_for(r.readexactly(4), timeout))[0]
        return await asyncio.wait_for(r.readexactly(size), timeout)
    finally:
        w.close()
