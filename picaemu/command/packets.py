"""The PICA command-buffer packet grammar, and a fast walk over a buffer.

A command buffer is little-endian 32-bit words, in packets that start on 8-byte boundaries::

    word 0          first parameter (the value for register ``id``)
    word 1          header: id bits 0-15, byte-lane mask bits 16-19, extra-parameter count N bits 20-27,
                    consecutive flag bit 31 (bits 28-30 unused)
    words 2..N+1    N extra parameters
    [padding word]  present iff N is odd, so that the next packet starts 8-byte aligned

Consecutive packets write parameter k to ``id + k``; the others write every parameter to ``id``. The mask selects
byte lanes (bit 16 = bits 0-7 of the value ... bit 19 = bits 24-31) and applies to every word of the packet.

``PACKET`` and ``HEADER`` are the declarative construct definitions (documentation, validation, building test
buffers). Walking real buffers never goes through construct: ``picaemu.command.packet_list.list_packets`` is a
compiled loop over packets on a numpy uint32 view (in its own module, so that this one loads no compiled code).
"""

from __future__ import annotations

from dataclasses import dataclass

import construct as cs
import numpy as np

HEADER = cs.ByteSwapped(
    cs.BitStruct(
        "consecutive" / cs.Flag,
        "unused" / cs.Const(0, cs.BitsInteger(3)),
        "extra" / cs.BitsInteger(8),
        "mask" / cs.BitsInteger(4),
        "id" / cs.BitsInteger(16),
    )
)
"""The header word (little-endian u32), fields from the most significant bit down."""

PACKET = cs.Struct(
    "first" / cs.Int32ul,
    "header" / HEADER,
    "params" / cs.Array(cs.this.header.extra, cs.Int32ul),
    "padding" / cs.If(cs.this.header.extra % 2 == 1, cs.Int32ul),
)
"""One packet, padding word included."""

COMMAND_BUFFER = cs.GreedyRange(PACKET)


def _struct_of(con: cs.Construct) -> cs.Struct:
    """The ``Struct`` inside ``con``'s wrappers (ByteSwapped, Bitwise ...)."""
    while not isinstance(con, cs.Struct):
        con = con.subcon
    return con


def header_fields(header: cs.Construct = HEADER) -> dict[str, tuple[int, int]]:
    """Field name -> (shift, bit mask) of each field of the header word, as construct builds it.

    The widths come from the declaration (``sizeof`` in bits inside the BitStruct); the positions from building a
    header with only that field at its maximum and reading the bytes back as the little-endian word the buffer
    holds, so byte order and bit order are construct's, not restated here. Constant fields are skipped (their
    bits are whatever the others leave free)."""
    named = [(sc.name, sc.subcon) for sc in _struct_of(header).subcons]
    sub_bits = {name: sub.sizeof() for name, sub in named}
    zero = {name: 0 for name, sub in named if not isinstance(sub, cs.Const)}
    out: dict[str, tuple[int, int]] = {}
    for name in zero:
        top = (1 << sub_bits[name]) - 1  # a Flag builds from any truthy value
        word = int.from_bytes(header.build({**zero, name: top}), "little")
        shift = (word & -word).bit_length() - 1
        out[name] = shift, word >> shift
    return out


# Header layout as numbers for the compiled walkers, derived from HEADER (tests check both agree on real lists).
_FIELDS = header_fields()
ID_SHIFT, ID_MASK = _FIELDS["id"]
MASK_SHIFT, MASK_BITS = _FIELDS["mask"]
EXTRA_SHIFT, EXTRA_BITS = _FIELDS["extra"]
CONSECUTIVE_SHIFT, _ = _FIELDS["consecutive"]
MAX_PARAMS = EXTRA_BITS + 1  # the first parameter plus up to EXTRA_BITS extra ones
ALIGNMENT = 8  # first parameter + header: packets start on 8-byte boundaries (padding word)


@dataclass(frozen=True)
class Packet:
    """A decoded packet: byte ``offset`` of its first word, header fields and all its parameter words."""

    offset: int
    id: int
    mask: int
    consecutive: bool
    params: tuple[int, ...]

    @property
    def size(self) -> int:
        """Bytes the packet occupies, padding included."""
        n = len(self.params) - 1
        return 4 * (2 + n + (n & 1))

    def writes(self) -> list[tuple[int, int]]:
        """(register id, parameter word) for every value the packet writes, in order."""
        if self.consecutive:
            return [(self.id + k, v) for k, v in enumerate(self.params)]
        return [(self.id, v) for v in self.params]


def expand_mask(mask: int) -> int:
    """4 byte-lane bits -> a 32-bit bit mask (0b0101 -> 0x00FF00FF)."""
    out = 0
    for lane in range(4):
        if mask >> lane & 1:
            out |= 0xFF << (8 * lane)
    return out


LANE_MASKS = np.array([expand_mask(m) for m in range(MASK_BITS + 1)], np.int64)
"""Byte-lane mask -> 32-bit bit mask, for the compiled loop."""


def unpack_header(hdr: int) -> tuple[int, int, int, bool]:
    """(register id, byte-lane mask, extra-parameter count, consecutive) of a header word."""
    return (
        (hdr >> ID_SHIFT) & ID_MASK,
        (hdr >> MASK_SHIFT) & MASK_BITS,
        (hdr >> EXTRA_SHIFT) & EXTRA_BITS,
        bool(hdr >> CONSECUTIVE_SHIFT & 1),
    )


def header_word(reg_id: int, n_params: int, mask: int = 0xF, consecutive: bool = False) -> int:
    """The header of a packet writing ``n_params`` (1-256) values."""
    if not 1 <= n_params <= MAX_PARAMS:
        raise ValueError(f"a packet carries 1-{MAX_PARAMS} parameters, not {n_params}")
    return (
        (reg_id & ID_MASK) << ID_SHIFT
        | (mask & MASK_BITS) << MASK_SHIFT
        | (n_params - 1) << EXTRA_SHIFT
        | int(consecutive) << CONSECUTIVE_SHIFT
    )


def truncation_message(words: np.ndarray, pos: int) -> str:
    """Why the packet at word ``pos`` does not fit in ``words``: missing parameters, or only its padding word."""
    extra = (int(words[pos + 1]) >> EXTRA_SHIFT) & EXTRA_BITS
    have = words.size - pos - 2
    if have >= extra:
        return f"packet of {extra} extra parameters ends without its padding word (the buffer ends before it)"
    return f"packet promises {extra} extra parameters but the buffer ends after {have}"


def as_words(data: bytes | bytearray | memoryview | np.ndarray) -> tuple[np.ndarray, int]:
    """A buffer as little-endian uint32 words, plus the count of trailing bytes that do not fill a word."""
    if isinstance(data, np.ndarray) and data.dtype == np.uint32:
        return data, 0
    raw = np.frombuffer(bytes(data) if isinstance(data, memoryview) else data, dtype=np.uint8)
    tail = raw.size % 4
    return raw[: raw.size - tail].view("<u4"), tail
