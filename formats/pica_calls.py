"""The optional ``CALL`` section of a ``.pica`` file: where in the program each draw was made (``picaemu record
--call-sites``). Readers that do not know the tag skip it; a capture without call sites has no such section.

Layout (little-endian, inside the section's codec)::

    u32 count, then count entries sorted by draw index:
      u32 draw      the draw's index in the capture (``DrawRecord.index``: draws counted from the first event)
      u32 offset    byte offset of the draw's trigger packet in its command buffer (``DrawRecord.offset``); a
                    reader that finds another offset at that draw index ignores the entry
      u8  frames    backtrace depth, innermost first (the frame that called the draw function), then per frame:
        u32 address   the call instruction's address in the program (virtual)
        u32 line      source line (0: unknown)
        u16 + utf-8   function name ("" unknown)
        u16 + utf-8   source file as the DWARF line table names it ("" unknown)
"""

from __future__ import annotations

from dataclasses import dataclass

import construct as cs
from picaemu.formats.pica_io import Reader

from picaemu.errors import FormatError

TAG = b"CALL"
MAX_FRAMES = 255  # the u8 depth field

_TEXT = cs.PascalString(cs.Int16ul, "utf8")
_FRAME = cs.Struct("address" / cs.Int32ul, "line" / cs.Int32ul, "function" / _TEXT, "file" / _TEXT)
_ENTRY = cs.Struct("draw" / cs.Int32ul, "offset" / cs.Int32ul, "count" / cs.Int8ul)
_FRAME_MIN_BYTES = 12  # address, line and two empty strings


@dataclass(frozen=True)
class CallFrame:
    """One frame of a draw's backtrace: ``address`` of the call instruction, ``function``, ``file``, ``line``
    ("" / 0 when the ELF does not say)."""

    address: int
    function: str = ""
    file: str = ""
    line: int = 0

    def text(self) -> str:
        """``function (file:line)``, or the address where names are unknown."""
        where = f"{self.file}:{self.line}" if self.file else f"0x{self.address:08X}"
        return f"{self.function or '??'} ({where})"


@dataclass(frozen=True)
class CallSite:
    """Where a draw was made: the byte ``offset`` of its trigger packet (the key checked against the replay's
    draw) and its backtrace, innermost frame first."""

    offset: int
    frames: tuple[CallFrame, ...]

    def text(self) -> str:
        """The backtrace on one line, innermost first: ``f (a.c:12) <- main (a.c:40)``."""
        return " <- ".join(f.text() for f in self.frames)


def build(sites: dict[int, CallSite]) -> bytes:
    out = [cs.Int32ul.build(len(sites))]
    for draw in sorted(sites):
        site = sites[draw]
        frames = site.frames[:MAX_FRAMES]
        try:
            out.append(_ENTRY.build({"draw": draw, "offset": site.offset, "count": len(frames)}))
            out += [_FRAME.build(vars(f)) for f in frames]
        except cs.ConstructError as err:
            raise FormatError(f"call site of draw {draw} cannot be written: {err}") from None
    return b"".join(out)


def parse(payload: bytes, base: int) -> dict[int, CallSite]:
    """draw index -> ``CallSite`` from the section's bytes (``base``: their offset in the file)."""
    r = Reader(payload, base)
    count = r.u32("call-site count")
    if count * _ENTRY.sizeof() > r.remaining():
        raise FormatError(f"{count} call sites cannot fit in {r.remaining()} bytes", offset=base)
    sites: dict[int, CallSite] = {}
    for _ in range(count):
        r.need(_ENTRY.sizeof(), "call-site entry")
        entry = r.parse(_ENTRY, "call-site entry")
        r.need(entry.count * _FRAME_MIN_BYTES, f"frames of the call site of draw {entry.draw}")
        frames = tuple(
            CallFrame(f.address, f.function, f.file, f.line)
            for f in (r.parse(_FRAME, "call-site frame") for _ in range(entry.count))
        )
        sites[entry.draw] = CallSite(entry.offset, frames)
    if r.remaining():
        raise FormatError(f"{r.remaining()} stray bytes after the last call site", offset=r.offset)
    return sites
