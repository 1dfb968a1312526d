"""The command processor's log of draw triggers: ``TriggerRegisters`` per draw (the register file at its
trigger: what a decode-only run knows of a draw; a replay's ``picaemu.replay.DrawRecord`` is the draw as the
debugger, API and CLI know it), and ``DrawLog``, which keeps them in order.

Draws handled by the compiled loop (``picaemu.command.kernel``, decode-only runs) arrive as rows of chunk arrays
the loop fills: ``info`` (rows, DRAW_INFO_LEN) int64 [index, kind, buffer address, byte offset, dirty write
groups, end of its changes] and ``changes`` (cap,) int64, the registers (``id << 32 | value``) that differ from
the previous recorded draw, kept in ``shadow`` (0x300,) uint32. A full chunk is kept and a larger one started
(``grow``); rows become ``TriggerRegisters``s, with the whole register file rebuilt from the changes, only when someone
asks (``build``). Draw-arrays / draw-elements calls handled in Python are logged as rows the same way (``add``);
immediate-mode draws are appended as records directly, after the rows before them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from picaemu.command import kernel as K
from picaemu.draw import DrawKind
from picaemu.draw_state import ALL

# draws of the first chunk, and of the largest. A full chunk returns the compiled loop to Python (the log grown, the
# loop called again: ~0.2 ms); a first chunk of 64 did that at a fresh replay's draws 64, 192, 448 and 960. The
# chunks are ``np.empty`` (~0.4 MiB at 1024 rows): their pages cost memory only as the loop fills them.
FIRST_ROWS, LARGEST_ROWS = 1024, 4096
CHANGES_PER_ROW = 48  # room for changed registers per draw in a chunk (plus one whole register file)
KINDS = {K.D_ARRAYS: DrawKind.ARRAYS, K.D_ELEMENTS: DrawKind.ELEMENTS}  # the kernel's draw kind codes
_CODES = {kind: code for code, kind in KINDS.items()}


@dataclass(slots=True)
class TriggerRegisters:
    """A draw trigger as the processor saw it: its number, kind, trigger location and the register file then.

    ``dirty`` is the write-group mask (``picaemu.draw_state.Group`` bits) written since the previous draw: what
    ``CommandProcessor.take_dirty`` returned at this draw."""

    index: int
    kind: DrawKind
    buffer: int
    offset: int
    regs: np.ndarray  # (0x300,) uint32, a copy of the register file at the trigger
    dirty: int = ALL


class DrawLog:
    """Every draw in order: the records built so far, then the loop's rows not yet built (see the module doc)."""

    def __init__(self) -> None:
        self.records: list[TriggerRegisters] = []
        self.shadow = np.zeros(K.NUM_REGS, np.uint32)  # registers at the loop's last recorded draw
        self._running = np.zeros(K.NUM_REGS, np.uint32)  # the same, as far as ``build`` has gone
        self._full: list[tuple[np.ndarray, np.ndarray, int, int]] = []  # (info, changes, rows built, rows filled)
        self._cursor = np.zeros(K.CURSOR_LEN, np.int64)  # ``add``'s cursor for the compiled ``_record_draw``
        self._cursor[K.K_RECORD_DRAWS] = 1
        self._start(FIRST_ROWS)

    def _start(self, rows: int) -> None:
        self.info = np.empty((rows, K.DRAW_INFO_LEN), np.int64)
        self.changes = np.empty(rows * CHANGES_PER_ROW + K.NUM_REGS, np.int64)
        self.end = 0  # rows the loop filled (it reads and advances this through its cursor) ...
        self.nchanges = 0  # ... and entries of ``changes``
        self._built = 0

    def grow(self) -> None:
        """The chunk is full: keep it, start one twice as large (up to LARGEST_ROWS)."""
        self._full.append((self.info, self.changes, self._built, self.end))
        self._start(min(2 * len(self.info), LARGEST_ROWS))

    def add(self, index: int, kind: DrawKind, buffer: int, offset: int, regs: np.ndarray, dirty: int) -> None:
        """Log a draw Python handles, after the loop's rows: a row like theirs (the compiled ``_record_draw``) for
        draw-arrays / draw-elements, a record (after building the rows) for an immediate-mode draw."""
        code = _CODES.get(kind)
        if code is None:
            self.build().append(TriggerRegisters(index, kind, buffer, offset, regs.copy(), dirty))
            return
        if self.end >= len(self.info) or self.nchanges + K.NUM_REGS > len(self.changes):
            self.grow()
        cursor = self._cursor
        cursor[K.K_NDRAW], cursor[K.K_NCHANGE], cursor[K.K_DRAWS], cursor[K.K_BUFFER] = (
            self.end,
            self.nchanges,
            index,
            buffer,
        )
        K._record_draw(cursor, code, offset // 4, regs, dirty, self.info, self.shadow, self.changes)
        self.end, self.nchanges = int(cursor[K.K_NDRAW]), int(cursor[K.K_NCHANGE])

    def build(self) -> list[TriggerRegisters]:
        """The records, after turning every row the loop filled into one."""
        for info, changes, first, end in [*self._full, (self.info, self.changes, self._built, self.end)]:
            start = int(info[first - 1, K.DI_CHANGES]) if first else 0
            for index, kind, buffer, offset, dirty, stop in info[first:end].tolist():
                applied = changes[start:stop]
                self._running[applied >> 32] = applied & 0xFFFFFFFF
                start = stop
                self.records.append(TriggerRegisters(index, KINDS[kind], buffer, offset, self._running.copy(), dirty))
        self._full.clear()
        self._built = self.end
        return self.records
