"""A plain-Python walk of command buffers for scans that need the register file, the shader programs and the draw
triggers but render nothing (``picaemu info``): no compiled code runs, so a scan of a short capture does not pay
numba's start-up (loading its implementation registries costs about a third of a second at the first compiled
call).

``RegisterWalk`` applies packets as ``picaemu.command.kernel.run`` does, from the same tables
(``picaemu.command.tables``: the action code of every register id, the data-port layout, the reset values; the
packet layout and lane masks of ``picaemu.command.packets``): masked writes; the shader code and operand-descriptor
ports store their words (and mirror VS words into the GS unit when it shares the VS configuration); every other
data port only moves its index register on (float-uniform rows, LUT entries, default attributes) — their contents
are not kept; VS configuration registers are mirrored into the GS unit when ``picaemu.command.kernel`` mirrors
them; CMDBUF jumps are followed into memory and a finalize that raises the interrupt ends the run
(``picaemu.command.tables.raises_interrupt``). At each draw trigger ``on_draw`` receives the state (``state``: regs,
``vs``/``gs`` code and operand descriptors current; other memories stay as loaded).

Anything the walk does not model raises ``Unmodelled`` (the caller replays with the command processor instead,
which reports it as a replay does): immediate-mode vertices, dropped port words, writes to ids >= 0x300, a
truncated or misaligned buffer, a jump cycle, the byte budget (per run, and ``total_bytes`` over all runs), memory
the reader cannot give. tests/test_walk.py
checks the walk against the command processor draw by draw.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from picaemu.command import codes as K
from picaemu.command.packets import LANE_MASKS, header_word, unpack_header
from picaemu.command.tables import (
    ACTION_TABLE,
    DEFAULT_BYTE_BUDGET,
    MAX_JUMPS,
    PORT_LAYOUT,
    STOP_ACTIONS,
    raises_interrupt,
)
from picaemu.regs import Action, access
from picaemu.state import NUM_FLOAT_UNIFORMS, GpuState

_LANES = LANE_MASKS.tolist()
_ACTIONS = ACTION_TABLE.tolist()
_LAYOUT = PORT_LAYOUT.tolist()
_CAPACITY = K.CODE_CAPACITY.tolist()
_DRAWS = (Action.DRAW_ARRAYS, Action.DRAW_ELEMENTS)
_JUMPS = {Action.JUMP0: 0, Action.JUMP1: 1}
_FINALIZED = (-1, -1)  # ``_write``'s answer for a finalize that ends the run (no jump has a negative target)


class Unmodelled(Exception):
    """The walk met something it does not model (the message says what): replay with the processor instead."""


def _field(value: int, lo: int, width: int) -> int:
    return (value >> lo) & ((1 << width) - 1)


class RegisterWalk:
    """Applies command buffers to ``state`` (see the module docstring). ``read(address, size)`` gives ``size``
    bytes of emulated memory (raising ``Unmodelled`` when it cannot); ``on_draw()`` is called at each draw;
    ``total_bytes`` bounds the command bytes of all runs together (each run also has the processor's budget)."""

    def __init__(
        self,
        state: GpuState,
        read: Callable[[int, int], bytes],
        on_draw: Callable[[], None],
        total_bytes: int | None = None,
    ) -> None:
        self.state = state
        self._left = total_bytes  # command bytes the walk may still run (None: no bound beyond each run's)
        self.regs: list[int] = state.regs.tolist()
        self._read = read
        self._on_draw = on_draw
        self._pending = [0] * K.NUM_PORTS  # words received of the current partial vector, by port

    # -- one register write through the P3D window (``picaemu.gx.mmio``: a one-packet buffer) -----------------
    def write(self, reg_id: int, value: int, byte_enable: int = 0xF) -> None:
        self.run([value & 0xFFFFFFFF, header_word(reg_id, 1, byte_enable)])

    def run(self, words: list[int]) -> None:
        """Run a buffer outside emulated memory and every buffer its jumps chain to; ``state.regs`` is current
        after it."""
        visited: set[tuple[int, int]] = set()
        budget = DEFAULT_BYTE_BUDGET - 4 * len(words)
        self._spend(4 * len(words))
        jump = self._buffer(words)
        jumps = 0
        while jump is not None:
            target, size = jump
            jumps += 1
            if (target, size) in visited or jumps > MAX_JUMPS or target % 8 or size % 8 or size > budget:
                raise Unmodelled(f"jump to 0x{target:08X} ({size} bytes): a cycle, misaligned or over the budget")
            visited.add((target, size))
            budget -= size
            self._spend(size)
            data = self._read(target, size)
            jump = self._buffer(np.frombuffer(data, "<u4").tolist())
        self.state.regs[:] = self.regs

    def _spend(self, size: int) -> None:
        if self._left is not None:
            self._left -= size
            if self._left < 0:
                raise Unmodelled("more command bytes than the walk's total budget (the compiled loop is faster)")

    def _buffer(self, words: list[int]) -> tuple[int, int] | None:
        """Run one buffer; (target, size) of the jump that ends it, or None (its end, or a finalize)."""
        pos, end = 0, len(words)
        while pos < end:
            if pos + 1 >= end:
                raise Unmodelled("buffer ends inside a packet")
            reg0, lanes, extra, consecutive = unpack_header(words[pos + 1])
            if pos + 2 + extra + (extra & 1) > end:
                raise Unmodelled("truncated packet")
            mask = _LANES[lanes]
            for k in range(extra + 1):
                reg = reg0 + k if consecutive else reg0
                stop = self._write(reg, words[pos] if k == 0 else words[pos + 1 + k], mask)
                if stop is not None:
                    return None if stop is _FINALIZED else stop
            pos += 2 + extra + (extra & 1)
        return None

    def _store(self, reg: int, value: int, mask: int) -> None:
        self.regs[reg] = (self.regs[reg] & ~mask | value & mask) & 0xFFFFFFFF

    def _write(self, reg: int, value: int, mask: int) -> tuple[int, int] | None:
        """Apply one write; a jump's (target, size), ``_FINALIZED`` for a finalize that stops the run, else None."""
        if reg >= K.NUM_REGS:
            raise Unmodelled(f"write to register id 0x{reg:X} (>= 0x300)")
        self._store(reg, value, mask)
        act = _ACTIONS[reg]
        if act == K.A_PLAIN or act == K.A_EVENT:
            return None
        if act == K.A_STOP:
            return self._stop(reg, value)
        if K.A_PORT <= act < K.A_INDEX:
            self._port_word(act - K.A_PORT, value)
        elif K.A_INDEX <= act < K.A_MIRROR:
            self._pending[act - K.A_INDEX] = 0
        elif act == K.A_MIRROR and self._vs_mirrored_to_gs():
            self._store(reg - _LAYOUT[0][K.G_MIRROR_DELTA], value, mask)
        return None

    def _stop(self, reg: int, value: int) -> tuple[int, int] | None:
        action = STOP_ACTIONS[reg]
        if action in _DRAWS:
            self.state.regs[:] = self.regs
            self._on_draw()
        elif action in _JUMPS:
            ch = _JUMPS[action]
            regs = self.state.regs
            regs[:] = self.regs
            return int(access.value(regs, f"CMDBUF_ADDR{ch}", "address")), int(
                access.value(regs, f"CMDBUF_SIZE{ch}", "size")
            )
        elif action is Action.FINALIZE:
            self.state.regs[:] = self.regs
            if raises_interrupt(self.state.regs, value):
                return _FINALIZED
        return None

    # -- data ports ---------------------------------------------------------------------------------------
    def _shares_config(self) -> bool:
        g = _LAYOUT[0]
        return (self.regs[g[K.G_COM_MODE_REG]] >> g[K.G_COM_MODE_LO]) & 1 == 0

    def _vs_mirrored_to_gs(self) -> bool:
        g = _LAYOUT[0]
        return (
            _field(self.regs[g[K.G_GS_USE_REG]], g[K.G_GS_USE_LO], g[K.G_GS_USE_WIDTH]) == 0 and self._shares_config()
        )

    def _advance(self, port: int, by: int = 1) -> tuple[int, int]:
        """(index, select field) of the port's index register, which moves on by ``by`` (wrapping in its field)."""
        row = _LAYOUT[port]
        ireg, lo, width = row[K.L_INDEX_REG], row[K.L_INDEX_LO], row[K.L_INDEX_WIDTH]
        word = self.regs[ireg]
        idx = _field(word, lo, width)
        m = ((1 << width) - 1) << lo
        self.regs[ireg] = (word & ~m) | (((idx + by) << lo) & m)
        return idx, _field(word, row[K.L_SEL_LO], row[K.L_SEL_WIDTH])

    def _port_word(self, port: int, value: int) -> None:
        if port in (K.P_VS_FLOAT, K.P_GS_FLOAT):
            self._uniform_word(port)
        elif port == K.P_FIXED:
            self._fixed_word()
        elif port in (K.P_LIGHTING, K.P_PROCTEX):
            _, table = self._advance(port)
            tables = self.state.lighting_luts if port == K.P_LIGHTING else self.state.proctex_luts
            if table >= tables.shape[0]:
                raise Unmodelled(f"a LUT word for table {table}, which port {port} does not have (dropped)")
        elif port in (K.P_FOG, K.P_GAS):
            self._table_index(port, (self.state.fog_lut if port == K.P_FOG else self.state.gas_lut).shape[0])
        else:  # shader code / operand descriptors of either unit
            unit = int(port >= K.P_GS_FLOAT)
            at = self._table_index(port, _CAPACITY[port])
            mem = self.state.gs if unit else self.state.vs
            is_code = port in (K.P_VS_CODE, K.P_GS_CODE)
            (mem.code if is_code else mem.opdescs)[at] = value
            if unit == 0 and self._shares_config():
                (self.state.gs.code if is_code else self.state.gs.opdescs)[at] = value

    def _table_index(self, port: int, capacity: int) -> int:
        idx, _ = self._advance(port)
        if idx >= capacity:
            raise Unmodelled(f"a data-port word past the end of port {port}'s memory (dropped)")
        return idx

    def _uniform_word(self, port: int) -> None:
        """One word of a float-uniform row (four in float32 mode, three packed float24): a complete row moves the
        index on; a row past the 96 would be dropped."""
        row = _LAYOUT[port]
        f32 = _field(self.regs[row[K.L_INDEX_REG]], row[K.L_SEL_LO], row[K.L_SEL_WIDTH])
        self._pending[port] += 1
        if self._pending[port] < (4 if f32 else 3):
            return
        self._pending[port] = 0
        idx, _ = self._advance(port)
        if idx >= NUM_FLOAT_UNIFORMS:
            raise Unmodelled("a float-uniform row past c95 (dropped)")

    def _fixed_word(self) -> None:
        """Three words make a default attribute; the immediate-mode index (all ones) is not modelled."""
        self._pending[K.P_FIXED] += 1
        if self._pending[K.P_FIXED] < 3:
            return
        self._pending[K.P_FIXED] = 0
        row = _LAYOUT[K.P_FIXED]
        idx = _field(self.regs[row[K.L_INDEX_REG]], row[K.L_INDEX_LO], row[K.L_INDEX_WIDTH])
        if idx == (1 << row[K.L_INDEX_WIDTH]) - 1:
            raise Unmodelled("immediate-mode vertices")
        self._advance(K.P_FIXED)


__all__ = ["RegisterWalk", "Unmodelled"]
