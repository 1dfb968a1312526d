"""The functions a recorder stops in, found by name in the program's ELF (pyelftools).

``HOOKS`` is the table: per role, the symbol names libctru has used for it and where the argument the recorder
needs lives (ARM EABI: r0-r3, then the stack). A program links one name of each role (the GX submission and at
least one frame boundary); ``find_hooks`` returns what it found, and ``RecordError`` when the submission function
or every frame boundary is missing (a stripped ELF, or not a libctru program).

- submit: ``gspSubmitGxCommand(const u32 cmd[8])`` (libctru 1.x+: command in r0);
  ``GSPGPU_SubmitGxCommand(u32 *queue, u32 cmd[8], ...)`` / ``GSPGPU_submitGxCommand`` (older: r1).
- present: ``gspPresentBuffer(screen, swap, fb_a, fb_b, stride, mode)`` — r0-r3, stride and mode on the stack.
- frame (only when ``gspPresentBuffer`` is not linked): ``gfxSwapBuffers`` / ``gfxSwapBuffersGpu``, no
  arguments used: a frame ends, the scan-out addresses are not known.

Thumb functions have bit 0 of the symbol value set; their breakpoint is at the even address with kind 2.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from picaemu.errors import RecordError

ARM_KIND, THUMB_KIND = 4, 2


@dataclass(frozen=True)
class HookSpec:
    role: str
    names: tuple[str, ...]
    command_register: int | None = None  # the register that points at the 8 GX command words


HOOKS = (
    HookSpec("submit", ("gspSubmitGxCommand",), 0),
    HookSpec("submit", ("GSPGPU_SubmitGxCommand", "GSPGPU_submitGxCommand"), 1),
    HookSpec("present", ("gspPresentBuffer",)),
    HookSpec("frame", ("gfxSwapBuffers", "gfxSwapBuffersGpu")),
)


@dataclass(frozen=True)
class Hook:
    """A function to stop in: its role, symbol name, entry address (even) and breakpoint kind."""

    role: str
    name: str
    address: int
    kind: int
    command_register: int | None = None


@dataclass(frozen=True)
class Symbol:
    """One ELF symbol: ``value`` (bit 0 set for a Thumb function), ``size`` in bytes, ``type`` (``STT_FUNC``,
    ``STT_OBJECT``)."""

    name: str
    value: int
    size: int
    type: str


def elf_symbols(path: str | os.PathLike[str], types: tuple[str, ...] = ("STT_FUNC",)) -> dict[str, Symbol]:
    """name -> the first non-zero symbol of one of ``types`` in the ARM ELF at ``path``."""
    try:
        with open(path, "rb") as fh:
            elf = ELFFile(fh)
            if elf.get_machine_arch() != "ARM":
                raise RecordError(f"{path}: an ELF for {elf.get_machine_arch()}, not ARM")
            out: dict[str, Symbol] = {}
            for section in elf.iter_sections():
                if isinstance(section, SymbolTableSection):
                    for sym in section.iter_symbols():
                        kind = sym["st_info"]["type"]
                        if kind in types and sym["st_value"] and sym.name not in out:
                            out[sym.name] = Symbol(sym.name, int(sym["st_value"]), int(sym["st_size"]), kind)
            return out
    except ELFError as err:
        raise RecordError(f"{path}: not a readable ELF ({err})") from None


def function_symbols(path: str | os.PathLike[str]) -> dict[str, int]:
    """name -> value of every function symbol of the ELF at ``path``."""
    return {name: sym.value for name, sym in elf_symbols(path).items()}


def hook_at(role: str, name: str, value: int, command_register: int | None = None) -> Hook:
    """The hook for function ``name`` whose symbol value is ``value`` (Thumb: odd, breakpoint kind 2)."""
    return Hook(role, name, value & ~1, THUMB_KIND if value & 1 else ARM_KIND, command_register)


def find_hooks(path: str | os.PathLike[str]) -> list[Hook]:
    """The hooks the program at ``path`` links (at most one per role; see the module docstring)."""
    symbols = function_symbols(path)
    hooks: dict[str, Hook] = {}
    for spec in HOOKS:
        for name in spec.names:
            if spec.role not in hooks and name in symbols:
                hooks[spec.role] = hook_at(spec.role, name, symbols[name], spec.command_register)
    if "submit" not in hooks:
        raise RecordError(
            f"{path}: no GX submission function ({', '.join(HOOKS[0].names + HOOKS[1].names)}); "
            "is the ELF stripped, or not a libctru program?"
        )
    if "present" in hooks:
        hooks.pop("frame", None)
    elif "frame" not in hooks:
        raise RecordError(f"{path}: no frame boundary (gspPresentBuffer, gfxSwapBuffers or gfxSwapBuffersGpu)")
    return list(hooks.values())
