"""SHBIN shader binaries (DVLB container, one DVLP program, N DVLE executables): bytes <-> typed objects.

Layout (little-endian; offsets of DVLP fields relative to the DVLP start, of DVLE fields to the DVLE start)::

    DVLB  "DVLB" u32 n_dvle, u32 dvle_offset[n]  (from the file start); the DVLP follows the table
    DVLP  0x28-byte header: magic, version, code offset/words, opdesc offset/count (8-byte entries: u32 descriptor
          + u32 extra), two unknown words, filename-symbol offset/size; code (u32 words), opdescs, symbols
    DVLE  0x40-byte header: magic, u16 version, u8 type (0 vertex, 1 geometry), u8 merge-outmaps, u32 main entry,
          u32 main end (words), u16 input mask, u16 output mask, u8 gs mode, u8 gs fixed start, u8 gs variable main
          count, u8 gs fixed vertex count, then (offset, count) of the constant (0x14 B), label (0x10 B), output
          (8 B) and uniform (8 B) tables and (offset, size) of the symbol strings

``parse(data) -> Shbin`` and ``build(shbin) -> bytes`` are exact inverses for files laid out the way picasso
writes them (DVLP header, code, opdescs, filename symbols; each DVLE: header, constants, labels, outputs,
uniforms, symbols, zero-padded to 4 bytes); ``parse(build(x)) == x`` for every ``Shbin``. Values stay raw:
float constants are four float24 bit patterns (u32 each), uniform registers use the SHBIN numbering
(v 0x00-0x0F, c 0x10-0x6F, i 0x70-0x73, b 0x78-0x87). Every offset and count is checked against the buffer
before anything is allocated, and every DVLE offset into the code (main entry and end, labels) against the code
size; corruption raises ``FormatError`` with the byte offset of the bad field.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import construct as cs

from picaemu.errors import FormatError

DVLB_MAGIC = b"DVLB"
DVLP_MAGIC = b"DVLP"
DVLE_MAGIC = b"DVLE"
MAX_DVLES = 256
CONSTANT_SIZE = 0x14
LABEL_SIZE = 0x10
OUTPUT_SIZE = 8
UNIFORM_SIZE = 8
OPDESC_SIZE = 8
SHADER_TYPES = {0: "vertex", 1: "geometry"}
CONSTANT_TYPES = {0: "bool", 1: "ivec", 2: "fvec"}
OUTPUT_TYPES = {
    0: "position",
    1: "quaternion",
    2: "color",
    3: "texcoord0",
    4: "texcoord0w",
    5: "texcoord1",
    6: "texcoord2",
    7: "unknown7",
    8: "view",
    9: "dummy",
}
GS_MODES = {0: "point", 1: "variable", 2: "fixed"}
# SHBIN unified uniform numbering: (first raw value, count, register-file letter)
UNIFORM_SPACES = ((0x00, 16, "v"), (0x10, 96, "c"), (0x70, 4, "i"), (0x78, 16, "b"))

_DVLP_HEADER = cs.Struct(
    "magic" / cs.Const(DVLP_MAGIC),
    "version" / cs.Int32ul,
    "code_offset" / cs.Int32ul,
    "code_words" / cs.Int32ul,
    "opdesc_offset" / cs.Int32ul,
    "opdesc_count" / cs.Int32ul,
    "unknown0" / cs.Int32ul,
    "unknown1" / cs.Int32ul,
    "symbol_offset" / cs.Int32ul,
    "symbol_size" / cs.Int32ul,
)
DVLP_HEADER_SIZE = _DVLP_HEADER.sizeof()
_DVLE_HEADER = cs.Struct(
    "magic" / cs.Const(DVLE_MAGIC),
    "version" / cs.Int16ul,
    "shader_type" / cs.Int8ul,
    "merge_outmaps" / cs.Int8ul,
    "main_offset" / cs.Int32ul,
    "main_end" / cs.Int32ul,
    "input_mask" / cs.Int16ul,
    "output_mask" / cs.Int16ul,
    "gs_mode" / cs.Int8ul,
    "gs_fixed_start" / cs.Int8ul,
    "gs_variable_num" / cs.Int8ul,
    "gs_fixed_num" / cs.Int8ul,
    "constant_offset" / cs.Int32ul,
    "constant_count" / cs.Int32ul,
    "label_offset" / cs.Int32ul,
    "label_count" / cs.Int32ul,
    "output_offset" / cs.Int32ul,
    "output_count" / cs.Int32ul,
    "uniform_offset" / cs.Int32ul,
    "uniform_count" / cs.Int32ul,
    "symbol_offset" / cs.Int32ul,
    "symbol_size" / cs.Int32ul,
)
_CONSTANT = cs.Struct("type" / cs.Int16ul, "register" / cs.Int16ul, "data" / cs.Array(4, cs.Int32ul))
_LABEL = cs.Struct(
    "id" / cs.Int16ul, "unknown" / cs.Int16ul, "location" / cs.Int32ul, "size" / cs.Int32ul, "symbol" / cs.Int32ul
)
_OUTPUT = cs.Struct("type" / cs.Int16ul, "register" / cs.Int16ul, "mask" / cs.Int16ul, "unknown" / cs.Int16ul)
_UNIFORM = cs.Struct("symbol" / cs.Int32ul, "first" / cs.Int16ul, "last" / cs.Int16ul)
_OPDESC = cs.Struct("descriptor" / cs.Int32ul, "extra" / cs.Int32ul)


@dataclass(frozen=True)
class Constant:
    """A DVLE constant. ``data``: bool -> (value, 0, 0, 0); ivec -> (x|y<<8|z<<16|w<<24, 0, 0, 0) as stored;
    fvec -> raw float24 x, y, z, w (one u32 each)."""

    type: int
    register: int
    data: tuple[int, int, int, int]

    @property
    def ivec(self) -> tuple[int, int, int, int]:
        """The four u8 components of an integer constant."""
        word = self.data[0]
        return tuple((word >> (8 * k)) & 0xFF for k in range(4))  # type: ignore[return-value]


@dataclass(frozen=True)
class Label:
    id: int
    unknown: int
    location: int
    size: int
    symbol: int


@dataclass(frozen=True)
class Output:
    type: int
    register: int
    mask: int
    unknown: int = 0


@dataclass(frozen=True)
class Uniform:
    """A named uniform: ``symbol`` is a byte offset into the DVLE symbol table; first/last in SHBIN numbering."""

    symbol: int
    first: int
    last: int


@dataclass(frozen=True)
class Dvle:
    shader_type: int = 0
    main_offset: int = 0
    main_end: int = 0
    input_mask: int = 0
    output_mask: int = 0
    version: int = 0x1002
    merge_outmaps: int = 0
    gs_mode: int = 0
    gs_fixed_start: int = 0
    gs_variable_num: int = 0
    gs_fixed_num: int = 0
    constants: tuple[Constant, ...] = ()
    labels: tuple[Label, ...] = ()
    outputs: tuple[Output, ...] = ()
    uniforms: tuple[Uniform, ...] = ()
    symbols: bytes = b""

    @property
    def is_geometry(self) -> bool:
        return self.shader_type == 1

    def symbol(self, offset: int) -> str:
        """The NUL-terminated name at ``offset`` in the symbol table ('' when out of range)."""
        if not 0 <= offset < len(self.symbols):
            return ""
        end = self.symbols.find(b"\0", offset)
        return self.symbols[offset : end if end >= 0 else len(self.symbols)].decode("ascii", "replace")


@dataclass(frozen=True)
class Shbin:
    code: tuple[int, ...] = ()
    opdescs: tuple[tuple[int, int], ...] = ()  # (descriptor, extra word) per entry
    dvles: tuple[Dvle, ...] = ()
    dvlp_version: int = 0
    dvlp_unknown: tuple[int, int] = (0, 0)
    filename_symbols: bytes = b""


def uniform_register_name(raw: int) -> str:
    """SHBIN uniform numbering -> register name (``c4``, ``b2``); FormatError for holes in the numbering."""
    for first, count, letter in UNIFORM_SPACES:
        if first <= raw < first + count:
            return f"{letter}{raw - first}"
    raise FormatError(f"uniform register 0x{raw:X} is not in the SHBIN numbering")


def uniform_register_raw(letter: str, index: int) -> int:
    """Inverse of ``uniform_register_name``."""
    for first, count, space in UNIFORM_SPACES:
        if space == letter and 0 <= index < count:
            return first + index
    raise FormatError(f"register {letter}{index} has no SHBIN uniform number")


# ---------------------------------------------------------------------------------------------- reading


def _parse_at(struct: cs.Construct, data: bytes, offset: int, what: str) -> cs.Container:
    size = struct.sizeof()
    if offset < 0 or offset + size > len(data):
        raise FormatError(f"{what} ({size} bytes) runs past the end of the {len(data)}-byte file", offset=offset)
    try:
        return struct.parse(data[offset : offset + size])
    except cs.ConstructError as err:
        raise FormatError(f"bad {what}: {err}", offset=offset) from None


def _table(
    data: bytes, base: int, offset: int, count: int, item: cs.Construct, what: str, field_at: int, limit: int
) -> list[cs.Container]:
    size = item.sizeof()
    start = base + offset
    if count > limit or start < base or start + count * size > len(data):
        raise FormatError(f"{what} table ({count} x {size} bytes at +0x{offset:X}) exceeds the file", offset=field_at)
    return [item.parse(data[start + k * size : start + (k + 1) * size]) for k in range(count)]


def _blob(data: bytes, start: int, size: int, what: str, field_at: int) -> bytes:
    if start < 0 or size < 0 or start + size > len(data):
        raise FormatError(f"{what} ({size} bytes at 0x{start:X}) exceeds the file", offset=field_at)
    return bytes(data[start : start + size])


def _check_disjoint(spans: list[tuple[int, int, str]], where: int) -> None:
    spans = sorted(s for s in spans if s[1] > s[0])
    for (_a0, a1, an), (b0, _b1, bn) in pairwise(spans):
        if b0 < a1:
            raise FormatError(f"{an} and {bn} overlap at 0x{b0:X}", offset=where)


def _parse_dvle(data: bytes, base: int) -> Dvle:
    h = _parse_at(_DVLE_HEADER, data, base, "DVLE header")
    limit = len(data)
    consts = _table(data, base, h.constant_offset, h.constant_count, _CONSTANT, "constant", base + 0x18, limit)
    labels = _table(data, base, h.label_offset, h.label_count, _LABEL, "label", base + 0x20, limit)
    outs = _table(data, base, h.output_offset, h.output_count, _OUTPUT, "output", base + 0x28, limit)
    unis = _table(data, base, h.uniform_offset, h.uniform_count, _UNIFORM, "uniform", base + 0x30, limit)
    symbols = _blob(data, base + h.symbol_offset, h.symbol_size, "DVLE symbol table", base + 0x38)
    _check_disjoint(
        [
            (0, _DVLE_HEADER.sizeof(), "DVLE header"),
            (h.constant_offset, h.constant_offset + CONSTANT_SIZE * h.constant_count, "constant table"),
            (h.label_offset, h.label_offset + LABEL_SIZE * h.label_count, "label table"),
            (h.output_offset, h.output_offset + OUTPUT_SIZE * h.output_count, "output table"),
            (h.uniform_offset, h.uniform_offset + UNIFORM_SIZE * h.uniform_count, "uniform table"),
            (h.symbol_offset, h.symbol_offset + h.symbol_size, "symbol table"),
        ],
        base,
    )
    for k, c in enumerate(consts):
        if c.type not in CONSTANT_TYPES:
            raise FormatError(f"constant {k} has unknown type {c.type}", offset=base + h.constant_offset + k * 0x14)
    return Dvle(
        shader_type=h.shader_type,
        main_offset=h.main_offset,
        main_end=h.main_end,
        input_mask=h.input_mask,
        output_mask=h.output_mask,
        version=h.version,
        merge_outmaps=h.merge_outmaps,
        gs_mode=h.gs_mode,
        gs_fixed_start=h.gs_fixed_start,
        gs_variable_num=h.gs_variable_num,
        gs_fixed_num=h.gs_fixed_num,
        constants=tuple(Constant(c.type, c.register, tuple(c.data)) for c in consts),
        labels=tuple(Label(x.id, x.unknown, x.location, x.size, x.symbol) for x in labels),
        outputs=tuple(Output(o.type, o.register, o.mask, o.unknown) for o in outs),
        uniforms=tuple(Uniform(u.symbol, u.first, u.last) for u in unis),
        symbols=symbols,
    )


def _check_code_offsets(dvle: Dvle, code_words: int, base: int, k: int) -> None:
    """Every DVLE offset into the code (main entry, main end, label locations) must lie inside the code blob; an
    empty program may only name offset 0."""
    if dvle.main_offset >= max(code_words, 1):
        raise FormatError(
            f"DVLE {k} main entry 0x{dvle.main_offset:X} is outside the {code_words}-word code", offset=base + 0x08
        )
    if dvle.main_end > code_words:
        raise FormatError(
            f"DVLE {k} main end 0x{dvle.main_end:X} is outside the {code_words}-word code", offset=base + 0x0C
        )
    for j, label in enumerate(dvle.labels):  # (label sizes are not checked: 0xFFFFFFFF occurs)
        if label.location > code_words:
            raise FormatError(
                f"DVLE {k} label {j} at 0x{label.location:X} is outside the {code_words}-word code", offset=base + 0x20
            )


def parse(data: bytes) -> Shbin:
    """Read a whole SHBIN file. Raises FormatError (with the byte offset) on any inconsistency."""
    data = bytes(data)
    if len(data) < 8 or data[:4] != DVLB_MAGIC:
        raise FormatError("not a SHBIN file (missing DVLB magic)", offset=0)
    n = int.from_bytes(data[4:8], "little")
    if n > MAX_DVLES or 8 + 4 * n > len(data):
        raise FormatError(f"DVLE count {n} does not fit the file", offset=4)
    dvle_offsets = [int.from_bytes(data[8 + 4 * k : 12 + 4 * k], "little") for k in range(n)]
    dvlp = 8 + 4 * n
    p = _parse_at(_DVLP_HEADER, data, dvlp, "DVLP header")
    code_raw = _blob(data, dvlp + p.code_offset, 4 * p.code_words, "code", dvlp + 0x08)
    if p.opdesc_count > len(data) // OPDESC_SIZE:
        raise FormatError(f"operand-descriptor count {p.opdesc_count} exceeds the file", offset=dvlp + 0x14)
    ops = _table(data, dvlp, p.opdesc_offset, p.opdesc_count, _OPDESC, "operand-descriptor", dvlp + 0x10, len(data))
    names = _blob(data, dvlp + p.symbol_offset, p.symbol_size, "filename symbol table", dvlp + 0x20)
    dvles = []
    for k, off in enumerate(dvle_offsets):
        if off < dvlp + _DVLP_HEADER.sizeof() or off >= len(data):
            raise FormatError(f"DVLE {k} offset 0x{off:X} is outside the file body", offset=8 + 4 * k)
        dvles.append(_parse_dvle(data, off))
    for k, dvle in enumerate(dvles):
        _check_code_offsets(dvle, p.code_words, dvle_offsets[k], k)
    shbin = Shbin(
        code=tuple(int.from_bytes(code_raw[i : i + 4], "little") for i in range(0, len(code_raw), 4)),
        opdescs=tuple((o.descriptor, o.extra) for o in ops),
        dvles=tuple(dvles),
        dvlp_version=p.version,
        dvlp_unknown=(p.unknown0, p.unknown1),
        filename_symbols=names,
    )
    return shbin


# ---------------------------------------------------------------------------------------------- writing


def _pad4(blob: bytes) -> bytes:
    return blob + b"\0" * (-len(blob) % 4)


def _build_dvle(d: Dvle) -> bytes:
    tables = [
        b"".join(_CONSTANT.build({"type": c.type, "register": c.register, "data": list(c.data)}) for c in d.constants),
        b"".join(_LABEL.build(vars(x)) for x in d.labels),
        b"".join(_OUTPUT.build(vars(o)) for o in d.outputs),
        b"".join(_UNIFORM.build(vars(u)) for u in d.uniforms),
    ]
    offsets, pos = [], _DVLE_HEADER.sizeof()
    for blob in [*tables, d.symbols]:
        offsets.append(pos)
        pos += len(blob)
    header = _DVLE_HEADER.build(
        {
            "version": d.version,
            "shader_type": d.shader_type,
            "merge_outmaps": d.merge_outmaps,
            "main_offset": d.main_offset,
            "main_end": d.main_end,
            "input_mask": d.input_mask,
            "output_mask": d.output_mask,
            "gs_mode": d.gs_mode,
            "gs_fixed_start": d.gs_fixed_start,
            "gs_variable_num": d.gs_variable_num,
            "gs_fixed_num": d.gs_fixed_num,
            "constant_offset": offsets[0],
            "constant_count": len(d.constants),
            "label_offset": offsets[1],
            "label_count": len(d.labels),
            "output_offset": offsets[2],
            "output_count": len(d.outputs),
            "uniform_offset": offsets[3],
            "uniform_count": len(d.uniforms),
            "symbol_offset": offsets[4],
            "symbol_size": len(d.symbols),
        }
    )
    return _pad4(header + b"".join(tables) + d.symbols)


def build(shbin: Shbin) -> bytes:
    """Lay out a SHBIN the way picasso does (see the module docstring)."""
    n = len(shbin.dvles)
    code = b"".join(w.to_bytes(4, "little") for w in shbin.code)
    ops = b"".join(_OPDESC.build({"descriptor": d, "extra": e}) for d, e in shbin.opdescs)
    head = _DVLP_HEADER.sizeof()
    dvlp = (
        _DVLP_HEADER.build(
            {
                "version": shbin.dvlp_version,
                "code_offset": head,
                "code_words": len(shbin.code),
                "opdesc_offset": head + len(code),
                "opdesc_count": len(shbin.opdescs),
                "unknown0": shbin.dvlp_unknown[0],
                "unknown1": shbin.dvlp_unknown[1],
                "symbol_offset": head + len(code) + len(ops) if shbin.filename_symbols else 0,
                "symbol_size": len(shbin.filename_symbols),
            }
        )
        + code
        + ops
        + shbin.filename_symbols
    )
    dvlp = _pad4(dvlp)
    bodies = [_build_dvle(d) for d in shbin.dvles]
    pos = 8 + 4 * n + len(dvlp)
    offsets = []
    for body in bodies:
        offsets.append(pos)
        pos += len(body)
    table = b"".join(o.to_bytes(4, "little") for o in offsets)
    return DVLB_MAGIC + n.to_bytes(4, "little") + table + dvlp + b"".join(bodies)
