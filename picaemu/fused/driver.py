"""The command processor's side of compiled draws: what it keeps between draws to run them in the compiled loop
(``picaemu.fused.loop``), and the two moments it acts.

Owns the plans the sink last offered (``picaemu.draw.CompiledSink``), the loop's ``PlanTable``, the draw trigger
handed to the loop next (with the write groups taken for it), the digest of the programs and LUTs (the data-port
memories plans read: ``CommandProcessor.plan_words``) that plan keys carry, and the loop's row and state arrays.
Receives, from ``picaemu.command.processor.CommandProcessor``:

- ``leave(processor, call, dirty)`` at a draw trigger Python met (the loop declined it or had no plans): keys the
  call (``DrawCall.plan_key``: that digest + the ``loop.PLAN_KEY_IDS`` registers), asks the sink for plans,
  installs them in the table, and answers whether the loop runs this very draw (True: the processor only keeps
  going);
- ``run(processor, args, address, result)`` in place of ``K.run`` while plans are active (``active``): runs the
  loop (its machine code loaded or compiled for the arguments' types before its time is taken: a draw's
  ``time_s`` holds no kernel loading), hands the draws it ran to the sink (``compiled_draws``) after bringing
  the processor's draw count, draw log and queued events up to date, and returns the loop's status.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, cast

import numba
import numpy as np

from picaemu import draw as draw_mod
from picaemu import numba_arena, numba_link
from picaemu.command import kernel as K
from picaemu.draw import CompiledSink, DrawCall, is_compiled_sink
from picaemu.fused import loop
from picaemu.fused.plan_table import PlanTable
from picaemu.texture import level_cache

if TYPE_CHECKING:
    from picaemu.command.processor import CommandProcessor, RunResult


_LOOP_READY: set[object] = set()  # the command arguments' kinds ``loop.run`` has machine code for (any plans)


class CompiledDriver:
    """One processor's compiled-draw state (module docstring)."""

    def __init__(self) -> None:
        self.plans: loop.CompiledPlans | None = None  # the sink's last offer: the loop runs while they are set
        self.table = PlanTable()
        self.pending: int | None = None  # a trigger handed to the loop: the write groups taken for it
        self._digest: bytes | None = None  # of the programs now (None: take it again)
        self._digest_of_table: bytes | None = None  # of the programs the table's plans ran
        self._rows = np.zeros((loop.ROWS, loop.ROW_LEN), np.int64)
        self._fstate = np.zeros(loop.FSTATE_LEN, np.int64)
        self._held = np.zeros(loop.HELD_SHAPE, np.float32)
        self._arena = np.empty(numba_arena.ARENA_BYTES, np.uint8)  # the loop's draws allocate here (pages on use)
        self._command: tuple[object, tuple[int, int]] = (None, (0, 0))  # the kernel arguments' kind, ``K.run``'s entry
        self._command_args: tuple = ()  # the arguments that kind was taken of (held: their objects stay these)
        self._work_left = 0  # of the plans' ``work_left``, what the loop has not run yet

    def forget(self) -> None:
        """Another state was loaded: no plans, no pending draw, the program digest taken again (the table stays;
        it is cleared if the programs differ)."""
        self.plans, self.pending, self._digest = None, None, None

    def programs_changed(self) -> None:
        """Code, operand descriptors or a fog / procedural-texture LUT may have been uploaded
        (``draw_state.PLAN_DATA_UPLOADS``): take the digest again at the next key."""
        self._digest = None

    def active(self, processor: CommandProcessor) -> loop.CompiledPlans | None:
        """The plans the loop may run with now: offered, no command observer, and the sink still allows it."""
        plans = self.plans
        if plans is None or processor.observers or not processor.pipeline.compiled_allowed():  # type: ignore[attr-defined]
            return None
        return plans

    def leave(self, processor: CommandProcessor, call: DrawCall, dirty: int) -> bool:
        """Whether the loop runs ``call`` next: the sink offered plans of its state (kept for the draws after it);
        ``dirty`` (the groups taken for it) goes with it."""
        if processor.observers or not is_compiled_sink(processor.pipeline):
            self.plans = None
            return False
        if self._digest is None:
            self._digest = hashlib.blake2b(processor.plan_words(), digest_size=loop.DIGEST_BYTES).digest()
            if self._digest != self._digest_of_table:
                self.table.clear()  # its plans ran other programs
                self._digest_of_table = self._digest
        regs = processor.state.regs
        call.plan_key = loop.plan_key(self._digest, regs)
        self.plans = processor.pipeline.compiled_plans(call)
        if self.plans is None:
            return False
        self._work_left = self.plans.work_left  # what the loop's calls with these plans may run, in all
        self.table.install(self.plans, regs)  # current: the loop runs the draws after this one with them
        if self.plans.draw_limit < call.index:
            return False
        self.pending = dirty
        return True

    def run(
        self, processor: CommandProcessor, args: tuple, plans: loop.CompiledPlans, address: int, result: RunResult
    ) -> int:
        """``K.run`` through the compiled loop with ``args`` (the kernel's arguments); returns the loop's status."""
        fstate = self._fstate
        fstate[:] = 0
        fstate[loop.FS_LIMIT] = plans.draw_limit
        fstate[loop.FS_WORK_LEFT], fstate[loop.FS_VERTEX_WORK] = self._work_left, plans.vertex_work
        fstate[loop.FS_DRAW_WORK] = plans.draw_work
        if self.pending is not None:  # the trigger ``leave`` handed over runs first
            fstate[loop.FS_PENDING], fstate[loop.FS_PENDING_DIRTY] = 1, self.pending
        table = self.table
        fstate[loop.FS_CURRENT] = table.current
        if not _same_objects(args, self._command_args):  # a new buffer, or the first call (~10 us: once a buffer)
            kind = numba_link.arguments_kind(args)
            if kind is None or kind != self._command[0]:
                self._command = (kind, loop.COMMAND.entry(*args))
            self._command_args = args
        links = table.links(args, self._command[1], self._rows, self._held, fstate)
        arguments = (args, *table.args(), links, self._rows, self._held, fstate)
        kind = self._command[0]
        if kind not in _LOOP_READY:  # load (or compile) it before the clock starts, once a process
            loop.run.compile(tuple(numba.typeof(value) for value in arguments))
            _LOOP_READY.add(kind)
        start = draw_mod.clock()
        with numba_arena.opened(self._arena), level_cache.trusted(processor.memory):  # its draws alone write memory
            status = loop.run(*arguments)
        table.current = int(fstate[loop.FS_CURRENT])
        self._work_left = int(fstate[loop.FS_WORK_LEFT])
        if not fstate[loop.FS_PENDING] and status != K.S_DECLINED:
            self.pending = None  # the loop ran it (a declined one is the processor's again, with its groups)
        n = int(fstate[loop.FS_ROWS])
        if n:
            processor.draws_ran(n, int(fstate[loop.FS_DIRTY]), result)
            # the sink may raise (the replay's stop after a draw): the log and the events first, as after a stop
            cursor, events = args[loop.A_CURSOR], args[loop.A_EVENTS]
            restart_after = loop._restarted(events, fstate[loop.FS_EVENTS], cursor[K.K_NEV])
            processor.sync_cursor(cursor, address)
            cast(CompiledSink, processor.pipeline).compiled_draws(  # it offered the plans: a CompiledSink
                loop.CompiledDraws(
                    self._rows[:n],
                    result.packets - processor.list_start,
                    address,
                    args[0].size,
                    draw_mod.clock() - start,
                    self._held[: fstate[loop.FS_HELD]],
                    bool(restart_after),
                )
            )
        return status


def _same_objects(args: tuple, known: tuple) -> bool:
    """Whether ``args`` holds the very arrays of ``known`` and other values of the same classes: then their numba
    types, and so ``numba_link.arguments_kind`` and the kernel entry, are the same (an array object keeps its dtype,
    dimensions, layout and flags; the numbers among the kernel's arguments are counts and flags)."""
    if len(args) != len(known):
        return False
    for value, old in zip(args, known, strict=True):
        if value is not old and (type(value) is np.ndarray or type(value) is not type(old)):
            return False
    return True
