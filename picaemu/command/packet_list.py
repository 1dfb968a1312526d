"""Every packet of a command buffer (``list_packets``), by a compiled walk over a numpy uint32 view (``_walk``,
also the linter's); the packet layout is ``picaemu.command.packets``'s."""

from __future__ import annotations

import numpy as np

from picaemu import numba_link
from picaemu.command.packets import (
    EXTRA_BITS,
    EXTRA_SHIFT,
    Packet,
    as_words,
    truncation_message,
    unpack_header,
)
from picaemu.errors import CommandBufferError, MisalignedBuffer, TruncatedPacket

# Status codes of the compiled walker.
OK, TRUNCATED, ODD_TAIL = 0, 1, 2


@numba_link.kernel(nogil=True)
def _walk(words: np.ndarray, starts: np.ndarray) -> tuple[int, int]:  # pragma: no cover - compiled
    """Fill ``starts`` with the word index of every packet; return (count, status)."""
    pos = 0
    n = 0
    end = words.shape[0]
    while pos < end:
        if pos + 1 >= end:
            return n, ODD_TAIL
        extra = (words[pos + 1] >> EXTRA_SHIFT) & EXTRA_BITS
        if pos + 2 + extra + (extra & 1) > end:  # the padding word belongs to the packet (PACKET)
            starts[n] = pos
            return n, TRUNCATED
        starts[n] = pos
        n += 1
        pos += 2 + extra + (extra & 1)
    return n, OK


def list_packets(data: bytes | np.ndarray, *, base_offset: int = 0) -> tuple[list[Packet], CommandBufferError | None]:
    """Every complete packet of a buffer, in order, and the error that ended the walk early (or None).

    The error names the byte offset (``base_offset`` added) and the packet number; the packets before it are
    still returned, so a listing can show everything that decoded.
    """
    words, tail = as_words(data)
    starts = np.empty(words.size // 2 + 1, dtype=np.int64)
    count, status = _walk(words, starts)
    packets = []
    for pos in starts[:count].tolist():
        reg_id, mask, extra, consecutive = unpack_header(int(words[pos + 1]))
        params = (int(words[pos]), *words[pos + 2 : pos + 2 + extra].tolist())
        packets.append(Packet(base_offset + 4 * pos, reg_id, mask, consecutive, params))
    error: CommandBufferError | None = None
    if status == TRUNCATED:
        pos = int(starts[count])
        error = TruncatedPacket(truncation_message(words, pos), offset=base_offset + 4 * pos, packet=count)
    elif status == ODD_TAIL:
        error = TruncatedPacket(
            "buffer ends inside a packet (a parameter word without its header)",
            offset=base_offset + 4 * (words.size - 1),
            packet=count,
        )
    elif tail:
        error = MisalignedBuffer(
            f"buffer length is not a multiple of 4 ({tail} stray bytes)", offset=base_offset + 4 * words.size
        )
    return packets, error
