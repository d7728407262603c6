"""The proxy's byte path: each socket of a proxied connection is a :class:`Half`.

Why not asyncio streams: a StreamReader copies every byte three times (``recv``
into a fresh 256 KiB ``bytes`` — an mmap and page faults each time on glibc —
then into the reader's buffer, then out again in ``readexactly``), and the
copies, not the Kafka decoding, were most of what the proxy cost (py-spy).
A :class:`asyncio.BufferedProtocol` receives straight into a buffer this
module owns; whole frames are found in place, shown to a handler as a
``memoryview`` (no copy), and every run of frames to forward leaves with ONE
``write`` of a slice of that buffer.

Why the buffer is sometimes replaced instead of reused: since Python 3.12 a
transport that cannot send everything at once keeps the caller's memoryview
in its queue instead of copying it, so a region written to the peer is reused
only when the peer's write queue is empty; otherwise a fresh buffer is taken.

Ordering: a frame that a rule delays holds back every later frame of the same
direction of that connection (reading pauses), so responses stay in order, as
Kafka's one-request-at-a-time-per-connection pipelining expects.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger("eoslab.faults.proxy")

MAX_FRAME = 100 * 1024 * 1024  # Kafka's socket.request.max.bytes is 100 MiB
BUFFER = 1024 * 1024  # librdkafka's batch.size and message.max.bytes: a whole Produce usually fits
STREAM_MIN = 64 * 1024  # frames this big flow on before they are decoded (when no rule can apply)
MIN_FREE = 64 * 1024  # never hand the kernel less room than this when it can be had by moving a tail
HIGH_WATER = 1 << 20  # bytes queued towards a peer before reading from the other side pauses
_SIZE = struct.Struct(">i")
# Python 3.12+ queue the caller's memoryview when a send is partial (3.10/3.11 copy it into a bytearray).
_TRANSPORT_KEEPS_VIEWS = sys.version_info >= (3, 12)


@dataclass(frozen=True)
class Act:
    """What to do with one frame, when it is not simply forwarded (a handler returns None for that)."""

    forward: bool = True  # False: the frame is dropped
    close: bool = False  # close the whole connection after this frame (forwarded or not)
    delay_s: float = 0.0  # hold this frame and every later one of this direction for this long


FrameHandler = Callable[[memoryview, bool], "Act | None"]  # (whole frame, it was streamed) -> what to do
StreamPredicate = Callable[[memoryview], bool]
NoteHandler = Callable[[int], None]


class Half(asyncio.BufferedProtocol):
    """One socket of a proxied connection: frames received here are written to :attr:`peer`.

    ``on_frame`` sees each whole frame (size prefix included) and returns None
    to forward it, or an :class:`Act`. ``on_garbage`` is told once when a
    length prefix cannot be a Kafka frame; from then on this direction is a
    blind byte pipe.

    Cut-through: a frame that has not fully arrived is held until it has
    (store-and-forward, so a rule can still drop or delay it), unless
    ``may_stream`` says, from its first bytes, that no rule can apply to it;
    then its bytes flow on as they arrive and ``on_frame`` only observes it
    when it is whole and forwarded (``streamed=True``; what it returns is
    ignored). A 1 MB Produce then waits neither for its own tail nor for its
    decoding. Small frames are batched instead: one write for a run of them.
    """

    def __init__(
        self,
        on_frame: FrameHandler,
        on_garbage: NoteHandler,
        on_lost: Callable[[], None],
        min_size: int = 0,
        on_made: Callable[[], None] | None = None,
        may_stream: StreamPredicate | None = None,
    ) -> None:
        self.on_frame, self.on_garbage, self.on_lost, self.min_size = on_frame, on_garbage, on_lost, min_size
        self.on_made, self.may_stream = on_made, may_stream
        self.streamed = 0  # bytes of the first unparsed frame already written to the peer (cut-through)
        self.transport: asyncio.Transport | None = None
        self.peer: Half | None = None
        self.blind = False
        self._held = False  # a delayed frame holds reading
        self._backpressure = False  # the peer's write queue is over HIGH_WATER
        self._early = False  # bytes came before the peer was connected: kept until it is (see buffer_updated)
        self._fresh(BUFFER)

    # ------------------------------------------------------------------ buffer

    def _fresh(self, size: int, keep: memoryview | bytes = b"") -> None:
        self.buf = bytearray(max(size, BUFFER))  # pages are mapped as they are first written
        self.view = memoryview(self.buf)
        self.buf[: len(keep)] = keep
        self.start, self.end = 0, len(keep)

    def _peer_idle(self) -> bool:
        """True when no transport holds a view of this buffer (so it may be written over)."""
        if not _TRANSPORT_KEEPS_VIEWS:
            return True
        t = self.peer.transport if self.peer else None
        return t is None or t.get_write_buffer_size() == 0

    def get_buffer(self, sizehint: int) -> memoryview:
        if len(self.buf) - self.end < MIN_FREE:
            self._make_room()
        return self.view[self.end :]

    def _make_room(self) -> None:
        """Move the unparsed tail (part of one frame) to the front, in a buffer that can hold that frame."""
        tail = self.view[self.start : self.end]
        n = len(tail)
        need = n + MIN_FREE
        if not self.blind and n >= 4:
            need = 4 + _SIZE.unpack_from(tail, 0)[0]  # a partial frame: room for all of it is enough
        if need > len(self.buf) or not self._peer_idle():
            self._fresh(need, tail)  # bigger, or the peer's transport may still hold a view of this one
        elif self.start:
            self.buf[:n] = tail if self.start >= n else bytes(tail)  # (overlapping regions go via a copy)
            self.start, self.end = 0, n

    def _reset(self) -> None:
        """Everything received has been handled: start again at the front (of a fresh buffer if lent)."""
        self.streamed = 0
        if self._peer_idle() and len(self.buf) <= 4 * BUFFER:
            self.start = self.end = 0
        else:
            self._fresh(BUFFER)  # (also gives a buffer grown for one huge frame back)

    # ------------------------------------------------------------------ protocol callbacks

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.set_write_buffer_limits(high=HIGH_WATER)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.on_made is not None:
            self.on_made()

    def connection_lost(self, exc: Exception | None) -> None:
        self.on_lost()

    def eof_received(self) -> bool:
        return False  # Kafka has no half-close: the transport closes, connection_lost ends the link

    def pause_writing(self) -> None:  # our transport's queue is full: stop reading the other side
        if self.peer is not None:
            self.peer._backpressure = True
            self.peer._pause()

    def resume_writing(self) -> None:
        if self.peer is not None:
            self.peer._backpressure = False
            self.peer.resume()

    def _pause(self) -> None:
        if self.transport is not None and self.transport.is_reading():
            self.transport.pause_reading()

    def resume(self) -> None:
        if self._early and self.peer is not None and self.peer.transport is not None:
            self._early = False
            self.buffer_updated(0)  # what arrived before the peer was connected leaves now
        if self.transport is not None and not (self._held or self._backpressure) and not self.transport.is_closing():
            self.transport.resume_reading()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()  # what is queued is still sent, then the socket closes

    # ------------------------------------------------------------------ frames

    def _write(self, data: memoryview | bytes) -> None:
        peer = self.peer.transport if self.peer else None
        if data and peer is not None and not peer.is_closing():
            peer.write(data)

    def buffer_updated(self, nbytes: int) -> None:
        self.end += nbytes
        if self.peer is not None and self.peer.transport is None:
            # The client's bytes came before the proxy's dial to the broker connected. It pauses reading in
            # connection_made, but Python 3.11.2 (Debian 12's: the lab image's) starts reading a new transport
            # after connection_made whatever the protocol did there (3.11.7 does not): measured, the first
            # request was written to no socket and lost. Keep them; resume() sends them once connected.
            self._early = True
            self._pause()
            return
        if self.blind:
            self._write(self.view[self.start : self.end])
            self._reset()
            return
        self._parse()

    def _parse(self) -> None:
        buf, view, end = self.buf, self.view, self.end
        pos = self.start
        forward_from = pos + self.streamed  # the head of a streamed frame is already with the peer
        while end - pos >= 4:
            size = _SIZE.unpack_from(buf, pos)[0]
            if not self.min_size <= size <= MAX_FRAME:
                self._go_blind(forward_from, size)
                return
            stop = pos + 4 + size
            streams = self._streams(size, pos, min(stop, end))
            if stop > end:
                if streams:
                    self._write(view[forward_from:end])  # cut-through: the tail follows as it arrives
                    self.streamed, self.start = end - pos, pos
                    return
                break
            if streams:  # no rule can touch it: it leaves first, the trace looks at it afterwards
                self.streamed = 0
                self._write(view[forward_from:stop])
                self.on_frame(view[pos:stop], True)
                forward_from = pos = stop
                continue
            act = self.on_frame(view[pos:stop], False)
            if act is not None:
                if self._stops_reading(act, forward_from, pos, stop):
                    return
                forward_from = stop
            pos = stop
        self._write(view[forward_from:pos])
        if pos == end:
            self._reset()
        else:
            self.start = pos

    def _go_blind(self, forward_from: int, size: int) -> None:
        """Not a Kafka frame: forward what is unsent and every byte after it untouched."""
        self._write(self.view[forward_from : self.end])
        self.blind = True
        self.on_garbage(size)
        self._reset()

    def _streams(self, size: int, pos: int, stop: int) -> bool:
        """The frame at ``pos`` goes to the peer as it arrives: it already does, or it is big and no rule
        can touch it (``may_stream`` reads its head, up to ``stop``)."""
        if self.streamed:
            return True
        return size >= STREAM_MIN and self.may_stream is not None and self.may_stream(self.view[pos:stop])

    def _stops_reading(self, act: Act, forward_from: int, pos: int, stop: int) -> bool:
        """Carry out a rule's act on the frame at ``pos:stop`` after forwarding the frames before it; True
        when reading stops there (the frame is held, or the connection closed)."""
        self._write(self.view[forward_from:pos])
        if act.delay_s:
            self._hold(pos, stop, act)
            return True
        if act.forward:
            self._write(self.view[pos:stop])
        if act.close:
            self.on_lost()
            return True
        return False

    def _hold(self, pos: int, stop: int, act: Act) -> None:
        """Keep this frame and all after it aside (a copy) for ``act.delay_s``; read nothing meanwhile."""
        backlog = bytes(self.view[pos : self.end])
        self._reset()
        self._held = True
        self._pause()
        asyncio.get_running_loop().call_later(act.delay_s, self._release, backlog, stop - pos, act)

    def _release(self, backlog: bytes, first: int, act: Act) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        if act.forward:
            self._write(backlog[:first])
        if act.close:
            self.on_lost()
            return
        rest = memoryview(backlog)[first:]
        self._fresh(len(rest) + BUFFER // 4, rest)
        self._held = False
        self._parse()  # the frames that waited behind it (one may hold again)
        self.resume()
