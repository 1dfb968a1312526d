"""Disassembler: shader code + operand descriptors -> picasso-syntax text that ``picaemu.shader.asm`` re-assembles.

Two products:
- ``format_instruction(ins, names, labels) -> str``: one instruction (``dp4 o0.x, projection[0], r0``), used by the
  listing, traces and the GUI on live state;
- ``disassemble(code, opdescs, ...)``: a whole program as source — ``.proc`` blocks (the entry proc, every CALL
  target, and each stretch of code outside them as a private ``_code_…`` proc), structured ``ifu/ifc … .else …
  .end`` and ``for … .end`` blocks, and labels for jump targets (within one source file). Flow that does not nest
  (overlapping scopes, a jump into another file) is printed as ``.word 0x…`` with the decoded form in a comment,
  which re-assembles to the same word at the same address. The declarations of a SHBIN's DVLEs come from
  ``picaemu.shader.disasm_shbin``.

Swizzles: the whole-program text (``disassemble``, ``exact=True`` in ``format_instruction``) prints every selector
lane of the descriptor, in the shortest form that re-expands to it (a short swizzle repeats its last letter), and
the assembler stores what is written, lanes no instruction reads included, as picasso does
(``asm_model.descriptor``). Each use of a shared descriptor then brings back the entry's final word, and the
sharing rule (``asm_descs``) rebuilds the same table: disassemble -> assemble reproduces every code word and
descriptor of a file laid out by picasso or by picaemu. Traces, listings and the GUI (``exact=False``) show only
the lanes picasso keeps for the instruction (``asm_descs.kept_lanes``; nothing when they are the identity), since
the other lanes of a shared descriptor hold another instruction's swizzle.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from picaemu.errors import ShaderError
from picaemu.shader.asm_descs import kept_lanes
from picaemu.shader.isa import (
    CMP_OPS,
    COMPONENTS,
    FIRST_C,
    IDX_NAMES,
    Fmt,
    Instruction,
    Operand,
    decode,
    dest_name,
    source_name,
)

PER_LANE = {"add", "mul", "sge", "sgei", "slt", "slti", "max", "min", "flr", "mov", "mad", "madi"}
SCALAR_X = {"ex2", "lg2", "rcp", "rsq"}
# fixed consumed lanes per (mnemonic, source number 1-3)
FIXED_LANES = {
    ("dp3", 1): (0, 1, 2),
    ("dp3", 2): (0, 1, 2),
    ("dp4", 1): (0, 1, 2, 3),
    ("dp4", 2): (0, 1, 2, 3),
    ("dph", 1): (0, 1, 2),
    ("dph", 2): (0, 1, 2, 3),
    ("dphi", 1): (0, 1, 2),
    ("dphi", 2): (0, 1, 2, 3),
    ("cmp", 1): (0, 1),
    ("cmp", 2): (0, 1),
    ("litp", 1): (0, 1, 3),
    ("dst", 1): (1, 2),
    ("dst", 2): (1, 3),
    ("dsti", 1): (1, 2),
    ("dsti", 2): (1, 3),
}
BASE_NAME = {"dphi": "dph", "dsti": "dst", "sgei": "sge", "slti": "slt", "madi": "mad"}
MASK_NONE = "_"


def consumed_lanes(ins: Instruction, k: int) -> tuple[int, ...]:
    """Operand lanes (0 = x) that source ``k`` (1-3) of ``ins`` actually feeds into the result."""
    return lanes_used(ins.name, ins.components, k)


def lanes_used(name: str, components: tuple[int, ...], k: int) -> tuple[int, ...]:
    """``consumed_lanes`` from a mnemonic and the written components (shared with the assembler)."""
    if name in PER_LANE:
        return components
    if name in SCALAR_X:
        return (0,)
    if name == "mova":
        return tuple(i for i in components if i < 2)
    return FIXED_LANES.get((name, k), (0, 1, 2, 3))


def canonical_swizzle(swizzle: tuple[int, ...], lanes: tuple[int, ...]) -> tuple[int, int, int, int]:
    """Keep the consumed lanes, put the identity component in every other lane (picasso's default xyzw)."""
    return tuple(swizzle[i] if i in lanes else i for i in range(4))  # type: ignore[return-value]


def swizzle_text(swizzle: tuple[int, ...], lanes: tuple[int, ...]) -> str:
    """The ``lanes`` of ``swizzle`` (x..last of them; a lane not among them shows its identity component)."""
    if not lanes or all(swizzle[i] == i for i in lanes):
        return ""
    canon = canonical_swizzle(swizzle, lanes)
    return "." + "".join(COMPONENTS[c] for c in canon[: max(lanes) + 1])


def exact_swizzle_text(swizzle: tuple[int, ...]) -> str:
    """All four lanes, shortened while the dropped lanes repeat the last letter kept (picasso's expansion)."""
    if tuple(swizzle) == (0, 1, 2, 3):
        return ""
    n = 4
    while n > 1 and swizzle[n - 2] == swizzle[n - 1] == swizzle[3]:
        n -= 1
    return "." + "".join(COMPONENTS[c] for c in swizzle[:n])


def mask_text(mask: int) -> str:
    if mask == 0xF:
        return ""
    if mask == 0:
        return "." + MASK_NONE
    return "." + "".join(COMPONENTS[i] for i in range(4) if mask & (8 >> i))


def _register_text(raw: int, idx: int, names: dict[str, str]) -> str:
    reg = source_name(raw)
    name = names.get(reg)
    if idx == 0 or raw < FIRST_C:
        return name or reg
    rel = IDX_NAMES[idx]
    if name and name.endswith("]"):
        base, _, off = name[:-1].rpartition("[")
        return f"{base}[{rel}+{off}]" if off != "0" else f"{base}[{rel}]"
    return f"{name or reg}[{rel}]"


def operand_text(ins: Instruction, k: int, names: dict[str, str], exact: bool = False) -> str:
    """Source ``k`` (1-3): every selector lane (``exact``) or only the lanes picasso keeps (module doc)."""
    op: Operand = ins.srcs[k - 1]
    text = _register_text(op.raw, op.idx, names)
    lanes = (
        exact_swizzle_text(op.swizzle) if exact else swizzle_text(op.swizzle, kept_lanes(ins.name, ins.components, k))
    )
    return ("-" if op.negate else "") + text + lanes


def condition_text(ins: Instruction) -> str:
    x = ("" if ins.refx else "!") + "cmp.x"
    y = ("" if ins.refy else "!") + "cmp.y"
    return (f"{x} || {y}", f"{x} && {y}", x, y)[ins.condop]


def format_instruction(
    ins: Instruction,
    names: dict[str, str] | None = None,
    labels: dict[int, str] | None = None,
    exact: bool = False,
    procs: dict[int, str] | None = None,
) -> str:
    """One instruction in picasso syntax; jump targets appear as ``labels``, call targets as ``procs`` (else
    labels), either else as hex addresses; ``exact``: every selector lane of the sources (module doc)."""
    names = names or {}
    labels = labels or {}
    if procs and ins.name in ("call", "callc", "callu"):
        labels = procs

    def source(k: int) -> str:
        return operand_text(ins, k, names, exact)

    def target(addr: int) -> str:
        return labels.get(addr, f"0x{addr:03X}")

    name = ins.name
    if ins.fmt in (Fmt.F1, Fmt.F1I, Fmt.F1U, Fmt.F5, Fmt.F5I):
        srcs = ", ".join(source(k) for k in range(1, len(ins.srcs) + 1))
        if name == "mova":
            return f"mova a0{mask_text(ins.mask & 0xC) if ins.mask & 0xC != 0xC else '.xy'}, {srcs}"
        dst = dest_name(ins.dst)
        return f"{BASE_NAME.get(name, name)} {names.get(dst, dst)}{mask_text(ins.mask)}, {srcs}"
    if name == "cmp":
        ox, oy = (CMP_OPS[c] for c in ins.cmp_ops)
        return f"cmp {source(1)}, {ox}, {oy}, {source(2)}"
    if name in ("breakc",):
        return f"breakc {condition_text(ins)}"
    if name in ("ifc",):
        return f"ifc {condition_text(ins)}"
    if name == "ifu":
        return f"ifu {names.get(f'b{ins.uniform}', f'b{ins.uniform}')}"
    if name == "loop":
        return f"for {names.get(f'i{ins.uniform}', f'i{ins.uniform}')}"
    if name in ("call", "callc", "callu", "jmpc", "jmpu"):
        prefix = {"call": "", "callc": condition_text(ins) + ", ", "jmpc": condition_text(ins) + ", "}.get(name)
        if prefix is None:
            b = names.get(f"b{ins.uniform}", f"b{ins.uniform}")
            prefix = ("!" if name == "jmpu" and ins.num & 1 else "") + b + ", "
        return f"{name} {prefix}{target(ins.target)}"
    if name == "setemit":
        flags = (" prim" if ins.primemit else "") + (" inv" if ins.winding else "")
        return f"setemit {ins.vtxid}" + ("," + flags if flags else "")
    return name


def listing(
    code: np.ndarray, opdescs: np.ndarray, start: int = 0, count: int | None = None, names: dict[str, str] | None = None
) -> list[str]:
    """``0x000: 4E000000  mov r0.xyz, v0`` lines for live state (invalid words are shown as such)."""
    stop = len(code) if count is None else min(len(code), start + count)
    lines = []
    for pc in range(start, stop):
        word = int(code[pc])
        try:
            text = format_instruction(decode(word, opdescs), names)
        except Exception as err:  # an invalid opcode is shown, not raised, in a listing
            text = f"; {err}"
        lines.append(f"0x{pc:03X}: {word:08X}  {text}")
    return lines


# ---------------------------------------------------------------------------------------------- whole programs


class _Structure:
    """Block boundaries of one program: procs, structured ifs/loops, labels and unstructured words."""

    def __init__(
        self,
        words: list[int],
        ins: list[Instruction | None],
        entry: int,
        main_end: int,
        files: list[tuple[int, int]] | None = None,
    ) -> None:
        n = len(ins)
        self.words = words
        self.ins = ins
        self.procs: dict[int, int] = {entry: min(max(main_end, entry + 1), n)}
        self.labels: dict[int, str] = {}
        for i in ins:
            if i is not None and i.name in ("call", "callc", "callu") and i.num > 0 and i.target + i.num <= n:
                self.procs.setdefault(i.target, i.target + i.num)
        spans = sorted(self.procs.items())
        if any(b0 < a1 for (_a0, a1), (b0, _b1) in pairwise(spans)):
            self.procs = {0: n}  # overlapping procs: one proc, calls become raw words
        # code outside every proc (dead code, another DVLE's entry) is a private proc of its own, so that its
        # blocks close and its jumps get labels like any other code
        self.gaps: set[int] = set()
        pc = 0
        for start, end in [*sorted(self.procs.items()), (n, n)]:
            if pc < start:
                self.procs[pc] = start
                self.gaps.add(pc)
            pc = max(pc, end)
        self.files = files or [(0, n)]  # source files (labels are local to their file)
        self.raw: set[int] = set()
        self.closes: dict[int, list[str]] = {}  # pc -> ".else"/".end" marks printed before pc, inner first

    def _close(self, pc: int, mark: str) -> None:
        self.closes.setdefault(pc, []).insert(0, mark)

    def build(self) -> None:
        """Find if/loop blocks that nest inside their proc; flow that does not nest becomes ``.word``."""
        for start, end in sorted(self.procs.items()):
            stack: list[int] = [end]
            for pc in range(start, end):
                while len(stack) > 1 and pc >= stack[-1]:
                    stack.pop()
                i = self.ins[pc]
                if i is None:
                    continue
                if i.name in ("ifu", "ifc"):
                    else_start, stop = i.target, i.target + i.num
                    if pc < else_start <= stop <= stack[-1] and (i.num == 0 or else_start > pc + 1):
                        self._close(stop, ".end")
                        stack.append(stop)
                        if i.num:
                            self._close(else_start, ".else")
                            stack.append(else_start)
                        continue
                    self.raw.add(pc)
                elif i.name == "loop":
                    stop = i.target + 1
                    if pc + 1 < stop <= stack[-1]:
                        self._close(stop, ".end")
                        stack.append(stop)
                        continue
                    self.raw.add(pc)
                elif i.name in ("call", "callc", "callu"):
                    if self.procs.get(i.target) != i.target + i.num:
                        self.raw.add(pc)
                elif i.name in ("jmpc", "jmpu"):
                    if self._file_of(pc) == self._file_of(i.target):
                        self.labels.setdefault(i.target, f"l_{i.target:03x}")
                    else:  # a label cannot name code of another file
                        self.raw.add(pc)

    def _file_of(self, pc: int) -> int:
        return next((k for k, (lo, hi) in enumerate(self.files) if lo <= pc < hi), -1)

    def proc_text(self, start: int, end: int, name: str, names: dict[str, str], procs: dict[int, str]) -> list[str]:
        out, depth = [f".proc {name}"], 1
        for pc in range(start, end + 1):
            for mark in self.closes.get(pc, []):
                depth -= 1
                out.append("    " * depth + mark)
                depth += mark == ".else"
            if pc == end:
                break
            if pc in self.labels:
                out.append(f"{self.labels[pc]}:")
            i = self.ins[pc]
            if i is None or pc in self.raw:
                text = (
                    format_instruction(i, names, self.labels, exact=True, procs=procs)
                    if i is not None
                    else "invalid opcode"
                )
                out.append("    " * depth + f".word 0x{self.words[pc]:08X} ; {text}")
                continue
            out.append("    " * depth + format_instruction(i, names, self.labels, exact=True, procs=procs))
            depth += i.name in ("ifu", "ifc", "loop")
        out.append(".end")
        return out


def disassemble(
    code,
    opdescs,
    *,
    entry: int = 0,
    main_end: int | None = None,
    names: dict[str, str] | None = None,
    header: list[str] | None = None,
    region: tuple[int, int] | None = None,
    entry_name: str = "main",
    files: list[tuple[int, int]] | None = None,
    own: tuple[int, int] | None = None,
) -> str:
    """A whole program as re-assemblable source. ``code`` holds exactly the program words; ``region`` limits the
    text to the procs starting in [lo, hi) (one file of a multi-DVLE program), the entry proc named ``entry_name``;
    ``files``: the code range of every source file (a jump into another file is printed as ``.word``); ``own``: the
    range whose registers ``names`` describes (code of another DVLE shows plain registers)."""
    names = dict(names or {})
    words = [int(w) for w in code]
    if not 0 <= entry < max(len(words), 1):
        raise ShaderError(f"entry point 0x{entry:X} is outside the {len(words)}-word program", pc=entry)
    ins: list[Instruction | None] = []
    for w in words:
        try:
            ins.append(decode(w, opdescs))
        except ShaderError:
            ins.append(None)
    st = _Structure(words, ins, entry, len(words) if main_end is None else main_end, files)
    st.build()
    proc_names = {
        start: entry_name if start == entry else f"{'_code' if start in st.gaps else 'proc'}_{start:03x}"
        for start in st.procs
    }
    out = list(header or [])
    if entry not in proc_names:
        out.append(f"; entry point 0x{entry:03X} is inside a larger proc")
    lo, hi = region or (0, len(words))
    own_lo, own_hi = own or (0, len(words))
    for start, end in sorted(p for p in st.procs.items() if lo <= p[0] < hi):
        mine = own_lo <= start < own_hi
        if not mine:
            out.append(f"; 0x{start:03X}-0x{end - 1:03X}: code of another DVLE, its registers unnamed")
        out += st.proc_text(start, end, proc_names[start], names if mine else {}, proc_names)
    return "\n".join(out) + "\n"
