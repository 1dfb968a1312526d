"""Where a stopped ARM program was called from: a short backtrace named by the ELF's symbols and DWARF (pyelftools).

``ProgramInfo`` loads, once per recording, what the ELF says about code addresses:

- function names: the ``STT_FUNC`` symbols with their sizes (an address inside ``[value, value + size)``);
- source lines: every row of every compile unit's DWARF line program (address -> file, line; a row holds up to
  the next row's address, a sequence ends at its ``end_sequence`` row);
- call-frame information: the FDEs of ``.debug_frame`` and ``.eh_frame``. The row for a code address gives the
  canonical frame address (CFA = register + offset) and where each saved register lies (CFA + offset); rules of
  other kinds (expressions, registers held in registers) end the unwind there.

``backtrace(regs, read, depth)`` starts at a function's entry (the stop of a breakpoint), where r0-r15 are still the
caller's except the program counter: the link register holds the return address. Each frame is the call
instruction before a return address (ARM: 4 bytes before it; Thumb, bit 0 set: 2 bytes, inside the call either
way), named by function, file and line. To go one frame further the caller's own FDE row gives its CFA and the
slots its prologue saved registers in (one memory read per frame through ``read``); a caller without CFI, a return
address of 0, or a CFA that does not grow (a corrupt stack) ends the backtrace.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable
from dataclasses import dataclass

from elftools.dwarf.callframe import FDE
from elftools.elf.elffile import ELFFile

from picaemu.formats.pica_calls import CallFrame
from picaemu.record.symbols import elf_symbols

SP, LR = 13, 14
WORD = 4
ARM_CALL_BYTES, THUMB_CALL_BYTES = 4, 2  # back from a return address into its call instruction
ReadMemory = Callable[[int, int], bytes]


def _file_names(header) -> dict[int, str]:
    """File number -> path of a DWARF line program (DWARF 5 numbers files and directories from 0 and names the
    compile directory 0; earlier versions number from 1, directory 0 being the compile directory)."""
    v5 = header["version"] >= 5
    dirs = header["include_directory"]
    out = {}
    for number, entry in enumerate(header["file_entry"], start=0 if v5 else 1):
        text = entry.name.decode(errors="replace")
        d = entry.dir_index - (0 if v5 else 1)
        if not text.startswith("/") and 0 <= d < len(dirs) and (not v5 or d > 0):
            text = f"{dirs[d].decode(errors='replace')}/{text}"
        out[number] = text
    return out


@dataclass(frozen=True)
class FrameRule:
    """A CFI row: CFA = ``regs[cfa_register] + cfa_offset``; ``saved[reg]``: that register's slot at CFA + it;
    ``return_register``: the register holding the return address (ARM: LR)."""

    cfa_register: int
    cfa_offset: int
    saved: dict[int, int]
    return_register: int


class ProgramInfo:
    """Symbols, line table and call-frame information of the ELF at ``path`` (see the module docstring)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        functions = sorted((s.value & ~1, s.size, name) for name, s in elf_symbols(path).items())
        self._fn_lo = [lo for lo, _, _ in functions]
        self._functions = functions
        with open(path, "rb") as fh:
            elf = ELFFile(fh)
            dwarf = elf.get_dwarf_info() if elf.has_dwarf_info() else None
            rows = self._line_rows(dwarf) if dwarf is not None else []
            self._fdes = self._frame_entries(dwarf) if dwarf is not None else []
        rows.sort(key=lambda r: r[0])
        self._line_lo = [r[0] for r in rows]
        self._lines = rows
        self._fde_lo = [lo for lo, _, _ in self._fdes]
        self._frames: dict[int, CallFrame] = {}  # lookups by code address, kept: a program calls from few places
        self._rules: dict[int, FrameRule | None] = {}

    @property
    def has_lines(self) -> bool:
        return bool(self._lines)

    @property
    def has_cfi(self) -> bool:
        return bool(self._fdes)

    # -- loading -----------------------------------------------------------------------------------------
    @staticmethod
    def _line_rows(dwarf) -> list[tuple[int, str, int]]:
        """(address, file, line) per line-table row; an end-of-sequence row has file "" (no line there)."""
        rows = []
        for cu in dwarf.iter_CUs():
            program = dwarf.line_program_for_CU(cu)
            if program is None:
                continue
            names = _file_names(program.header)
            for entry in program.get_entries():
                state = entry.state
                if state is not None:
                    rows.append((state.address, "" if state.end_sequence else names.get(state.file, "?"), state.line))
        return rows

    @staticmethod
    def _frame_entries(dwarf) -> list[tuple[int, int, FDE]]:
        entries = []
        for has, entries_of in ((dwarf.has_CFI, dwarf.CFI_entries), (dwarf.has_EH_CFI, dwarf.EH_CFI_entries)):
            if has():
                for entry in entries_of():
                    if isinstance(entry, FDE):
                        lo = entry.header["initial_location"]
                        entries.append((lo, lo + entry.header["address_range"], entry))
        entries.sort(key=lambda e: e[0])
        return entries

    # -- lookups -----------------------------------------------------------------------------------------
    def function_at(self, address: int) -> str:
        i = bisect.bisect_right(self._fn_lo, address) - 1
        if i >= 0:
            lo, size, name = self._functions[i]
            if address < lo + max(size, 1):
                return name
        return ""

    def line_at(self, address: int) -> tuple[str, int]:
        """(file, line) of the line-table row holding ``address``; ("", 0) when none does."""
        i = bisect.bisect_right(self._line_lo, address) - 1
        if i < 0 or not self._lines[i][1]:
            return "", 0
        return self._lines[i][1], self._lines[i][2]

    def frame_at(self, address: int) -> CallFrame:
        frame = self._frames.get(address)
        if frame is None:
            file, line = self.line_at(address)
            frame = self._frames[address] = CallFrame(address, self.function_at(address), file, line)
        return frame

    def rule_at(self, address: int) -> FrameRule | None:
        """The CFI row in force at ``address``; None without an FDE or with a rule this unwinder does not follow."""
        if address not in self._rules:
            self._rules[address] = self._rule_at(address)
        return self._rules[address]

    def _rule_at(self, address: int) -> FrameRule | None:
        i = bisect.bisect_right(self._fde_lo, address) - 1
        if i < 0 or address >= self._fdes[i][1]:
            return None
        fde = self._fdes[i][2]
        decoded = fde.get_decoded()
        row = None
        for candidate in decoded.table:
            if candidate["pc"] > address:
                break
            row = candidate
        if row is None or row["cfa"].expr is not None or row["cfa"].reg is None:
            return None
        saved = {}
        for reg in decoded.reg_order:
            rule = row.get(reg)
            if rule is None or rule.type == "SAME_VALUE":
                continue
            if rule.type != "OFFSET":
                return None
            saved[reg] = rule.arg
        if fde.cie is None:  # an FDE without its CIE: no return-address register to unwind by
            return None
        return FrameRule(row["cfa"].reg, row["cfa"].offset, saved, fde.cie.header["return_address_register"])

    # -- unwinding ---------------------------------------------------------------------------------------
    def backtrace(self, regs: list[int], read: ReadMemory, depth: int) -> tuple[CallFrame, ...]:
        """Up to ``depth`` frames above a function entry where the program stopped with registers ``regs``."""
        regs = list(regs)
        ret = regs[LR]
        frames: list[CallFrame] = []
        while ret and len(frames) < depth:
            call = (ret & ~1) - (THUMB_CALL_BYTES if ret & 1 else ARM_CALL_BYTES)
            frames.append(self.frame_at(call))
            rule = self.rule_at(call)
            if len(frames) == depth or rule is None or rule.return_register not in rule.saved:
                break
            cfa = (regs[rule.cfa_register] + rule.cfa_offset) & 0xFFFFFFFF
            if cfa <= regs[SP] or cfa % WORD:
                break  # the stack must grow towards the caller
            lo, hi = min(rule.saved.values()), max(rule.saved.values()) + WORD
            slots = read(cfa + lo, hi - lo)
            for reg, offset in rule.saved.items():
                at = offset - lo
                regs[reg] = int.from_bytes(slots[at : at + WORD], "little")
            regs[SP] = cfa
            ret = regs[rule.return_register]
        return tuple(frames)
