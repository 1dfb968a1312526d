"""The byte-level pieces every ``.pica`` section shares: section codecs (``Codec``, ``compress``, ``decompress``)
and ``Reader``, a cursor that names the absolute file offset of whatever it fails to read (``FormatError``).
Split from ``picaemu.formats.pica`` so that optional sections (``pica_calls``) parse with the same rules."""

from __future__ import annotations

import io
import zlib
from enum import IntEnum
from typing import Any

import construct as cs
import zstandard

from picaemu.errors import FormatError

MAX_SECTION_BYTES = 1 << 31  # a decompressed section (or blob) larger than 2 GiB is refused as corrupt


class Codec(IntEnum):
    RAW = 0
    ZSTD = 1
    ZLIB = 2


def compress(codec: Codec, data: bytes) -> bytes:
    if codec is Codec.ZSTD:
        return zstandard.ZstdCompressor(level=3, write_content_size=True).compress(data)
    if codec is Codec.ZLIB:
        return zlib.compress(data, 6)
    return data


def decompress(codec: Codec | int, stored: bytes, raw_size: int, offset: int) -> bytes:
    if raw_size > MAX_SECTION_BYTES:
        raise FormatError(f"declared size {raw_size} is implausibly large", offset=offset)
    try:
        if codec == Codec.RAW:
            out = stored
        elif codec == Codec.ZSTD:
            out = zstandard.ZstdDecompressor().decompress(stored, max_output_size=max(raw_size, 1))
        elif codec == Codec.ZLIB:
            inflater = zlib.decompressobj()
            out = inflater.decompress(stored, raw_size)
            if inflater.unconsumed_tail:
                raise FormatError("zlib data longer than declared", offset=offset)
        else:
            raise FormatError(f"unknown codec {codec}", offset=offset)
    except (zstandard.ZstdError, zlib.error) as err:
        raise FormatError(f"corrupt compressed data: {err}", offset=offset) from None
    if len(out) != raw_size:
        raise FormatError(f"data decompresses to {len(out)} bytes, header says {raw_size}", offset=offset)
    return bytes(out)


class Reader:
    """A cursor over bytes that names the absolute offset of whatever it fails to read."""

    def __init__(self, data: bytes, base: int = 0) -> None:
        self.data, self.pos, self.base = data, 0, base
        self._stream = io.BytesIO(data)

    @property
    def offset(self) -> int:
        return self.base + self.pos

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def need(self, size: int, what: str) -> None:
        if size < 0 or size > self.remaining():
            raise FormatError(f"{what} needs {size} bytes, only {self.remaining()} remain", offset=self.offset)

    def take(self, size: int, what: str) -> bytes:
        self.need(size, what)
        chunk = self.data[self.pos : self.pos + size]
        self.pos += size
        return chunk

    def parse(self, con: cs.Construct, what: str) -> Any:
        start = self.offset
        self._stream.seek(self.pos)
        try:
            value = con.parse_stream(self._stream)
        except (cs.ConstructError, UnicodeDecodeError) as err:
            raise FormatError(f"bad {what}: {type(err).__name__}", offset=start) from None
        self.pos = self._stream.tell()
        return value

    def u32(self, what: str) -> int:
        return int.from_bytes(self.take(4, what), "little")
