"""The assembler's operand-descriptor table, built the way picasso builds it (so tables do not grow and indices
match picasso's for the same source).

Each use brings a descriptor word (write mask and every source's negation and four swizzle lanes, as written,
including lanes the instruction does not read) and a *care* mask: the descriptor fields its format has (``FULL``),
minus the lanes the opcode never reads (``ignored_bits``: per-lane ops ignore the lanes their write mask skips,
DP3 the w lanes, DPH src1.w, EX2/LG2/RCP/RSQ src1.yzw, MOVA the lanes of a0 it does not write and z/w, CMP
src1.zw). A use joins the first entry that agrees with it on the bits both care about; the entry then takes the
use's value in every bit the use cares about and cares about them too. Otherwise a new entry is appended. MAD
can address only entries 0-31: a MAD use that lands higher swaps its entry with the first entry below 32 no MAD
uses, and every non-MAD word already emitted is relabelled (``DescTable.add``'s ``relabel`` callback).
"""

from __future__ import annotations

from collections.abc import Callable

from picaemu.shader import isa

MAX_DESC = 128
MAX_MAD_DESC = 32
MASK_LO, MASK_W = isa.DESC_FIELDS["mask"]
SOURCE_FIELDS = tuple((isa.DESC_FIELDS[f"neg{k}"][0], isa.DESC_FIELDS[f"sel{k}"][0]) for k in (1, 2, 3))
PER_LANE = frozenset({"add", "mul", "sge", "sgei", "slt", "slti", "flr", "max", "min", "mov", "mad", "madi"})
SCALAR = frozenset({"ex2", "lg2", "rcp", "rsq"})


def _source_bits(k: int) -> int:
    """All descriptor bits of source ``k`` (0-2): negation and selector."""
    neg, sel = SOURCE_FIELDS[k]
    return 1 << neg | 0xFF << sel


def _lane_bits(k: int, lane: int) -> int:
    """The two selector bits of source ``k`` (0-2) lane ``lane`` (0 = x, the selector's top bits)."""
    return 3 << (SOURCE_FIELDS[k][1] + 6 - 2 * lane)


def full_mask(has_dest: bool, sources: int) -> int:
    """Descriptor bits an instruction format carries: the write mask (when it has one) and ``sources`` sources."""
    out = ((1 << MASK_W) - 1) << MASK_LO if has_dest else 0
    for k in range(sources):
        out |= _source_bits(k)
    return out


def kept_lanes(name: str, components: tuple[int, ...], k: int) -> tuple[int, ...]:
    """Lanes (0 = x) of source ``k`` (1-3) whose selector picasso keeps as written and compares when it shares
    entries; ``components``: the lanes the write mask names. The disassembler prints exactly these lanes."""
    if name in PER_LANE:
        return components
    if (name, k) in (("dp3", 1), ("dp3", 2), ("dph", 1), ("dphi", 1)):
        return (0, 1, 2)
    if name in SCALAR and k == 1:
        return (0,)
    if name == "mova" and k == 1:
        return tuple(lane for lane in components if lane < 2)
    if name == "cmp" and k == 1:
        return (0, 1)
    return (0, 1, 2, 3)


def ignored_bits(name: str, desc: int) -> int:
    """Selector bits of the lanes ``name`` never reads, given its descriptor (picasso's rule)."""
    components = isa.mask_components(desc >> MASK_LO & ((1 << MASK_W) - 1))
    return sum(
        _lane_bits(k, lane) for k in range(3) for lane in range(4) if lane not in kept_lanes(name, components, k + 1)
    )


class DescTable:
    """Descriptor values and care masks in table order; ``mad`` holds the entries MAD words use."""

    def __init__(self) -> None:
        self.values: list[int] = []
        self.cares: list[int] = []
        self.mad: set[int] = set()

    def add(self, name: str, value: int, full: int, relabel: Callable[[int, int], None]) -> int | None:
        """Index of the entry for one use (None: no room left); ``relabel(a, b)`` swaps a and b in emitted
        non-MAD words."""
        care = full & ~ignored_bits(name, value)
        index = next(
            (i for i, (v, c) in enumerate(zip(self.values, self.cares, strict=True)) if (value ^ v) & care & c == 0),
            None,
        )
        if index is None:
            if len(self.values) == MAX_DESC:
                return None
            self.values.append(value)
            self.cares.append(care)
            index = len(self.values) - 1
        else:
            self.values[index] = self.values[index] & ~care | value & care
            self.cares[index] |= care
        if name in ("mad", "madi") and index >= MAX_MAD_DESC:
            free = next((i for i in range(MAX_MAD_DESC) if i not in self.mad), None)
            if free is None:
                return None
            self.values[free], self.values[index] = self.values[index], self.values[free]
            self.cares[free], self.cares[index] = self.cares[index], self.cares[free]
            relabel(free, index)
            index = free
        if name in ("mad", "madi"):
            self.mad.add(index)
        return index


__all__ = ["DescTable", "full_mask", "ignored_bits", "kept_lanes"]
