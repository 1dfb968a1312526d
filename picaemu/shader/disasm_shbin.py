"""Disassembly of a SHBIN's DVLEs as picasso source files: the declarations of one DVLE (uniforms with their
register positions, constants, outputs, the geometry-shader mode) over the program text of
``picaemu.shader.disasm.disassemble``.

- ``disassemble_dvle(shbin, i)``: DVLE ``i``'s view of the whole program; it assembles on its own to the same code
  words and descriptors (one DVLE). Code of other DVLEs keeps plain register numbers.
- ``disassemble_files(shbin)``: one file per DVLE in code order (``file_ranges``), which assembled together in
  that order give the same SHBIN (byte for byte for picasso's and picaemu's layouts).
"""

from __future__ import annotations

import numpy as np

from picaemu.errors import ShaderError
from picaemu.formats.shbin import OUTPUT_TYPES, Shbin
from picaemu.numeric import f24
from picaemu.shader.disasm import disassemble, mask_text
from picaemu.shader.isa import decode
from picaemu.shader.setup import dvle_names

OUTPUT_PROPS = {
    0: "position",
    1: "normalquat",
    2: "color",
    3: "texcoord0",
    4: "texcoord0w",
    5: "texcoord1",
    6: "texcoord2",
    7: "7",
    8: "view",
    9: "dummy",
}
DUMMY_OUTPUT = 9


def _uniform_decls(names: dict[str, str], letter: str, count: int, keyword: str, first_free: int = 0) -> list[str]:
    """Sequential declarations reproducing the register positions of named uniforms (gaps as private), counting
    from ``first_free`` (a geometry shader's own pool)."""
    lines, reg = [], first_free
    groups: list[tuple[int, str, int]] = []
    for r in range(count):
        label = names.get(f"{letter}{r}")
        if label is None:
            continue
        base = label.split("[")[0]
        if groups and groups[-1][1] == base and groups[-1][0] + groups[-1][2] == r and "[" in label:
            groups[-1] = (groups[-1][0], base, groups[-1][2] + 1)
        else:
            groups.append((r, base, 1))
    for first, base, size in groups:
        if first > reg:
            lines.append(f"{keyword} _gap{letter}{reg}[{first - reg}]")
        lines.append(f"{keyword} {base}" + (f"[{size}]" if "[" in names[f"{letter}{first}"] else ""))
        reg = first + size
    return lines


def _gsh_header(dvle, names: dict[str, str]) -> tuple[list[str], int]:
    """The ``.gsh`` line of a geometry DVLE and the first float register of its pool. A geometry DVLE with dummy
    outputs but no merge flag came from a bare (compatibility) ``.gsh``."""
    if any(o.type == DUMMY_OUTPUT for o in dvle.outputs) and not dvle.merge_outmaps:
        return [".gsh"], 0
    floats = [int(k[1:]) for k in names if k.startswith("c")]
    first = min(floats, default=0)
    if dvle.gs_mode == 2 and dvle.gs_fixed_start >= first:
        first = 0
    regs = f"c{first}"
    mode = {
        0: f"point {regs}",
        1: f"variable {regs} {dvle.gs_variable_num}",
        2: f"fixed c{dvle.gs_fixed_start} {regs} {dvle.gs_fixed_num}",
    }.get(dvle.gs_mode, f"point {regs}")
    return [f".gsh {mode}"], first


def _float_text(v: float) -> str:
    return repr(float(np.float32(v)))


def disassemble_dvle(shbin: Shbin, index: int = 0, region: tuple[int, int] | None = None) -> str:
    """Source text of DVLE ``index`` with its declarations (uniform names, constants, outputs, GS mode). Without
    ``region``: the whole program, which assembles on its own to the same code words and descriptors (one DVLE);
    the code of other DVLEs keeps plain register numbers. With ``region``: only the code of [lo, hi), one of the
    files of ``disassemble_files``."""
    try:
        ranges = file_ranges(shbin) if len(shbin.dvles) > 1 else None
    except ShaderError:  # entry procs overlap: one program, every register named after this DVLE
        ranges = None
    own = next(((lo, hi) for k, lo, hi in ranges if k == index), None) if ranges else None
    files = [(lo, hi) for _k, lo, hi in ranges] if ranges and region is not None else None
    dvle = shbin.dvles[index]
    names = {k: v for k, v in dvle_names(dvle).items() if not k.startswith("o")}
    header = [f"; disassembled by picaemu from DVLE {index} ({'geometry' if dvle.is_geometry else 'vertex'})"]
    first_free = 0
    if dvle.is_geometry:
        gsh, first_free = _gsh_header(dvle, names)
        header += gsh
    header += _uniform_decls(names, "c", 96, ".fvec", first_free) + _uniform_decls(names, "i", 4, ".ivec")
    header += _uniform_decls(names, "b", 16, ".bool")
    header += [f".in {names[f'v{r}']} v{r}" for r in range(16) if f"v{r}" in names]
    for c in dvle.constants:
        if c.type == 2:
            vals = ", ".join(_float_text(f24(int(v))) for v in c.data)
            header.append(f".setf c{c.register}({vals})")
        elif c.type == 1:
            header.append(f".seti i{c.register}({', '.join(str(v) for v in c.ivec)})")
        else:
            header.append(f".setb b{c.register} {'true' if c.data[0] & 1 else 'false'}")
    for o in dvle.outputs:  # NAME aliases the whole register (first entry of it); the mask is the register's
        prop = OUTPUT_PROPS.get(o.type, str(o.type))
        alias = "-" if f"o{o.register}" in names else f"out_{OUTPUT_TYPES.get(o.type, 'x')}_{o.register}"
        header.append(f".out {alias} {prop} o{o.register}{mask_text(_table_mask_to_desc(o.mask))}")
        names.setdefault(f"o{o.register}", alias)
    entry_name = "main" if region is None or index == 0 else f"main{index}"
    if entry_name != "main":
        header.append(f".entry {entry_name}")
    ops = [d for d, _e in shbin.opdescs]
    return disassemble(
        shbin.code,
        ops,
        entry=dvle.main_offset,
        main_end=dvle.main_end,
        names=names,
        header=header,
        region=region,
        entry_name=entry_name,
        files=files,
        own=own,
    )


def _calls_from(shbin: Shbin, start: int, end: int) -> list[int]:
    """Targets of the CALL/CALLC/CALLU words in [start, end)."""
    out = []
    for w in shbin.code[start:end]:
        try:
            i = decode(int(w), [0] * 128)
        except ShaderError:
            continue
        if i.name in ("call", "callc", "callu"):
            out.append(i.target)
    return out


def disassemble_files(shbin: Shbin) -> list[tuple[int, str]]:
    """One source file per DVLE, in code order (``file_ranges``): [(dvle index, text)]. Assembling the texts in
    this order gives the same code words and descriptors. ``ShaderError`` when the DVLEs cannot be split."""
    return [(k, disassemble_dvle(shbin, k, (lo, hi))) for k, lo, hi in file_ranges(shbin)]


def file_ranges(shbin: Shbin) -> list[tuple[int, int, int]]:
    """[(dvle index, lo, hi)] in code order, as picasso lays files out (each file's code after the previous
    file's): file k holds the code from its first proc (its entry, or a proc it calls that lies after the previous
    file's entry proc) up to the next file's. DVLEs whose entry procs overlap cannot be split: ``ShaderError``."""
    order = sorted(range(len(shbin.dvles)), key=lambda k: shbin.dvles[k].main_offset)
    starts = []
    for j, k in enumerate(order):
        d = shbin.dvles[k]
        prev_end = shbin.dvles[order[j - 1]].main_end if j else 0
        if j and d.main_offset < prev_end:
            raise ShaderError(
                f"DVLE {k}'s entry 0x{d.main_offset:03X} lies inside DVLE {order[j - 1]}'s: the "
                "programs share code and cannot be split into files"
            )
        starts.append(
            0
            if not j
            else min([d.main_offset] + [t for t in _calls_from(shbin, d.main_offset, d.main_end) if t >= prev_end])
        )
    bounds = [*starts[1:], len(shbin.code)]
    return list(zip(order, starts, bounds, strict=True))


def _table_mask_to_desc(mask: int) -> int:
    """Output-table mask (bit 0 = x) -> descriptor-style mask (bit 3 = x)."""
    return sum(8 >> i for i in range(4) if mask & (1 << i))
