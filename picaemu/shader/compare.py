"""Equivalence of two SHBIN files the way a user checks an assembler against picasso: same program, not
necessarily the same bytes.

``differences(ours, theirs) -> list[str]`` (empty: equivalent). Equivalent means: the same number of DVLEs, and per
DVLE the same type, entry range, input/output masks, geometry-shader mode fields and merge flag, output map
(type, register, mask per entry), constants (type, register, value) and uniform names with their registers; the
same number of instruction words, each word equal outside its descriptor index, and the two descriptors it points
at equal in every bit the opcode reads: the write mask (instructions that write a register), and per source
operand the instruction has, its negation and the selector lanes it consumes (``disasm.consumed_lanes``).
Descriptor tables may differ in order, size and unread lanes.
"""

from __future__ import annotations

from picaemu.errors import ShaderError
from picaemu.formats.shbin import Dvle, Shbin
from picaemu.shader import isa
from picaemu.shader.disasm import consumed_lanes

NO_DEST = frozenset({"cmp"})
DVLE_FIELDS = (
    "shader_type",
    "main_offset",
    "main_end",
    "input_mask",
    "output_mask",
    "merge_outmaps",
    "gs_mode",
    "gs_fixed_start",
    "gs_variable_num",
    "gs_fixed_num",
)


def _uniform_map(d: Dvle) -> dict[str, tuple[int, int]]:
    return {d.symbol(u.symbol): (u.first, u.last) for u in d.uniforms}


def _dvle_differences(k: int, a: Dvle, b: Dvle) -> list[str]:
    out = [f"DVLE {k}: {f} {getattr(a, f)} != {getattr(b, f)}" for f in DVLE_FIELDS if getattr(a, f) != getattr(b, f)]
    outputs = [[(o.type, o.register, o.mask) for o in d.outputs] for d in (a, b)]
    if outputs[0] != outputs[1]:
        out.append(f"DVLE {k}: output map {outputs[0]} != {outputs[1]}")
    consts = [sorted((c.type, c.register, c.data) for c in d.constants) for d in (a, b)]
    if consts[0] != consts[1]:
        out.append(f"DVLE {k}: constants differ ({len(consts[0])} vs {len(consts[1])} entries)")
    if _uniform_map(a) != _uniform_map(b):
        out.append(f"DVLE {k}: uniform table {_uniform_map(a)} != {_uniform_map(b)}")
    return out


def _read_view(ins: isa.Instruction) -> tuple:
    """What the hardware takes from the descriptor for ``ins``: write mask and each source's negation/lanes."""
    srcs = tuple(
        (op.negate, tuple(op.swizzle[lane] for lane in consumed_lanes(ins, k + 1))) for k, op in enumerate(ins.srcs)
    )
    return (None if ins.name in NO_DEST else ins.mask, srcs)


def _word_difference(pc: int, a: int, b: int, descs_a: list[int], descs_b: list[int]) -> str | None:
    if a == b and descs_a == descs_b:
        return None
    try:
        ia, ib = isa.decode(a, descs_a), isa.decode(b, descs_b)
    except ShaderError:
        return None if a == b else f"0x{pc:03X}: word 0x{a:08X} != 0x{b:08X}"
    if "desc" not in isa.FIELDS[ia.fmt]:
        return None if a == b else f"0x{pc:03X}: {ia.name} 0x{a:08X} != {ib.name} 0x{b:08X}"
    field = isa.FIELDS[ia.fmt]["desc"]
    strip = ~(((1 << field[1]) - 1) << field[0])
    if ia.name != ib.name or a & strip != b & strip:
        return f"0x{pc:03X}: {ia.name} 0x{a:08X} != {ib.name} 0x{b:08X} (outside the descriptor index)"
    if _read_view(ia) != _read_view(ib):
        return f"0x{pc:03X}: {ia.name}: descriptors differ in bits the instruction reads"
    return None


def differences(ours: Shbin, theirs: Shbin) -> list[str]:
    """Every way ``ours`` is not equivalent to ``theirs`` (see the module docstring); [] when equivalent."""
    out: list[str] = []
    if len(ours.dvles) != len(theirs.dvles):
        out.append(f"{len(ours.dvles)} DVLE(s) != {len(theirs.dvles)}")
    for k, (a, b) in enumerate(zip(ours.dvles, theirs.dvles, strict=False)):
        out += _dvle_differences(k, a, b)
    if len(ours.code) != len(theirs.code):
        out.append(f"{len(ours.code)} instruction words != {len(theirs.code)}")
    descs = [[d for d, _e in s.opdescs] + [0] * (128 - len(s.opdescs)) for s in (ours, theirs)]
    for pc, (word_a, word_b) in enumerate(zip(ours.code, theirs.code, strict=False)):
        diff = _word_difference(pc, word_a, word_b, *descs)
        if diff is not None:
            out.append(diff)
    return out


__all__ = ["differences"]
