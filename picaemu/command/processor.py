"""The command processor: a register state machine driven by command buffers.

Receives command buffers (bytes or uint32 words, or an address and size in emulated memory), applies every
register write to a ``GpuState`` (masked writes, data ports filling uniforms / code / LUTs / fixed attributes),
and on triggers calls the pipeline through ``picaemu.draw.PipelineSink``: draws, immediate-mode vertex batches,
restart/cache/flush events. Follows CMDBUF_JUMP0/1 into emulated memory and stops at a finalize that raises the
P3D interrupt (the Azahar model: a byte of the value equal to IRQ_CMP's, with IRQ_AUTOSTOP set).

The walk is the compiled loop of ``picaemu.command.kernel`` over the tables of ``picaemu.command.tables``; this
module acts on the stops it reports and feeds observers. When nothing needs Python at a draw (the NullPipeline
itself, no observer: ``picaemu decode``-style runs) the decode-only action table keeps draws in the loop, which
records them for ``draws``. Every write ORs its ``write_groups`` bits into a dirty mask that each draw takes
(``take_dirty``). Bad buffers raise ``CommandBufferError`` subclasses
naming the byte offset and packet; everything before the fault has been applied.

Work is bounded by bytes executed, not by the number of jumps: one ``run``/``run_at`` (the buffer and every
buffer its jumps chain to) executes at most ``byte_budget`` bytes of command words (``DEFAULT_BYTE_BUDGET``
unless the constructor is given another), else ``WorkBudgetExceeded`` names where the budget ran out. Jumps back
to a buffer already run raise ``JumpCycle``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from picaemu import regs as regtable
from picaemu.command import kernel as K
from picaemu.command.delivery import deliver
from picaemu.command.draw_log import DrawLog, TriggerRegisters
from picaemu.command.packets import as_words, truncation_message
from picaemu.command.results import PendingInput, RunResult
from picaemu.command.tables import (
    ACTION_TABLE,
    DECODE_ONLY_ACTIONS,
    DEFAULT_BYTE_BUDGET,
    EVENT_CAPACITY,
    EVENT_OF_REG,
    IMMEDIATE_CAPACITY,
    MAX_JUMPS,
    PORT_LAYOUT,
    RECORD_CAPACITY,
    RESET_VALUES,
    STOP_ACTIONS,
    collapse_idempotent,
    raises_interrupt,
)
from picaemu.draw import DrawCall, DrawKind, NullPipeline, PipelineSink, is_compiled_sink
from picaemu.draw_state import ALL, PLAN_DATA_UPLOADS, WRITE_GROUPS, DrawStateCache
from picaemu.errors import CommandBufferError, JumpCycle, MisalignedBuffer, TruncatedPacket, WorkBudgetExceeded
from picaemu.memory import PhysicalMemory
from picaemu.observer import Observer, TriggerEvent
from picaemu.regs import Action, access
from picaemu.state import GpuState

if TYPE_CHECKING:
    from picaemu.fused.driver import CompiledDriver

log = logging.getLogger("picaemu.command")


class CommandProcessor:
    """Applies command buffers to ``state`` and drives ``pipeline``; see the module docstring."""

    def __init__(
        self,
        memory: PhysicalMemory | None = None,
        pipeline: PipelineSink | None = None,
        state: GpuState | None = None,
        *,
        record_draws: bool = True,
        byte_budget: int = DEFAULT_BYTE_BUDGET,
    ) -> None:
        self.memory = memory if memory is not None else PhysicalMemory()
        self.pipeline: PipelineSink = pipeline if pipeline is not None else NullPipeline()
        self.state = state if state is not None else GpuState()
        self.draw_states = DrawStateCache()  # per-draw stage state, rebuilt only where writes touched it
        self._groups = np.empty(K.NUM_REGS + K.NUM_PORTS, np.int64)
        # write-group bits per register id and data port (picaemu.draw_state): the compiled loop ORs them into
        # the dirty mask that ``take_dirty`` hands the draw-state cache at each draw
        self.write_groups = WRITE_GROUPS
        self._counters = np.zeros(K.COUNTERS_LEN, np.int64)
        if state is None:
            self.reset()
        self.observers: list[Observer] = []
        self.draw_count = 0
        self.record_draws = record_draws
        # False: go on past a finalize that raises the interrupt (a listing shows the whole buffer; the GPU stops)
        self.stop_at_finalize = True
        self.byte_budget = byte_budget
        self._draw_log = DrawLog()
        self._list_start: int | None = None  # result.packets when the running chain entered emulated memory
        self._buffer = 0
        self._pending = np.zeros((K.NUM_PORTS, 4), np.uint32)
        self._immediate = np.zeros((IMMEDIATE_CAPACITY, 16, 4), np.float32)
        self._records = np.zeros((RECORD_CAPACITY, 4), np.int64)
        self._packet_records = np.zeros((RECORD_CAPACITY, 2), np.int64)
        self._events = np.zeros((EVENT_CAPACITY, 3), np.int64)
        self._fu = np.zeros((2, 96, 4), np.float32)
        self._compiled: CompiledDriver | None = None  # compiled draws (picaemu.fused.driver), made at first use
        self._code = np.zeros((2, 4096), np.uint32)
        self._opdescs = np.zeros((2, 128), np.uint32)
        self._fixed = np.zeros_like(self.state.fixed_attribs)
        self._bind_state()

    # -- state -------------------------------------------------------------------------------------------
    def reset(self) -> None:
        """Registers to their power-on values (zero, plus GSP's interrupt setup); every write group dirty."""
        self._counters[K.C_DIRTY] = ALL
        self.state.regs[:] = 0
        for name, value in RESET_VALUES.items():
            self.state.regs[regtable.id_of(name)] = value

    # -- write groups (which parts of the state changed since the last draw) -----------------------------------
    @property
    def write_groups(self) -> np.ndarray:
        """(NUM_REGS + NUM_PORTS,) int64: the group bits each write marks dirty; entry ``id`` for a write to
        register ``id``, entry ``NUM_REGS + port`` (port numbers of ``picaemu.command.kernel``, P_VS_FLOAT ...)
        for a word fed to that data port. ``picaemu.draw_state.WRITE_GROUPS`` by default (a copy: fill it in place
        or assign a whole table)."""
        return self._groups

    @write_groups.setter
    def write_groups(self, table: np.ndarray) -> None:
        table = np.asarray(table)
        if table.shape != self._groups.shape:
            raise ValueError(f"write_groups must have shape {self._groups.shape}, not {table.shape}")
        self._groups[:] = table

    # -- draw records --------------------------------------------------------------------------------------
    @property
    def draws(self) -> list[TriggerRegisters]:
        """Every draw with its register snapshot (when ``record_draws``), in order. Draws the compiled loop
        recorded become DrawRecords here, on first access; the list may be trimmed (``del draws[n:]``)."""
        return self._draw_log.build()

    @draws.setter
    def draws(self, records: list[TriggerRegisters]) -> None:
        self._draw_log.build()
        self._draw_log.records = records

    def _decode_only(self) -> bool:
        """Draws need no Python: nothing renders them (the NullPipeline itself, not a subclass) and nobody
        observes the run."""
        return type(self.pipeline) is NullPipeline and not self.observers

    def _bind_state(self) -> None:
        """Point the kernel's stacked unit arrays at the state's memories (views, so both stay in sync)."""
        st = self.state
        # the kernel wants (2, ...) stacks; keep the state's arrays as views into them
        self._fu[0], self._fu[1] = st.vs.float_uniforms, st.gs.float_uniforms
        self._code[0], self._code[1] = st.vs.code, st.gs.code
        self._opdescs[0], self._opdescs[1] = st.vs.opdescs, st.gs.opdescs
        st.vs.float_uniforms, st.gs.float_uniforms = self._fu[0], self._fu[1]
        st.vs.code, st.gs.code = self._code[0], self._code[1]
        st.vs.opdescs, st.gs.opdescs = self._opdescs[0], self._opdescs[1]
        # one fixed-attribute store for every state loaded: compiled plans read it live (picaemu.fused.vertices)
        self._fixed[:] = st.fixed_attribs
        st.fixed_attribs = self._fixed

    def load_state(self, state: GpuState) -> None:
        """Replace the whole GPU state (checkpoint restore); partial port words are dropped."""
        self.state = state
        self._pending[:] = 0
        self._counters[:] = 0
        self._counters[K.C_DIRTY] = ALL
        if self._compiled is not None:
            self._compiled.forget()
        self._bind_state()

    def pending_input(self) -> PendingInput:
        """A copy of the partially received input (for checkpoints taken in the middle of a command list)."""
        n = int(self._counters[K.C_IMM_COUNT])
        return PendingInput(self._pending.copy(), self._counters.copy(), self._immediate[:n].copy())

    def take_dirty(self) -> int:
        """The write groups (``picaemu.draw_state.Group`` bits: the OR of ``write_groups`` over every write) since
        the last call, the last draw (every draw takes them) or ``reset`` / ``load_state`` (every bit); clears
        them."""
        dirty = int(self._counters[K.C_DIRTY])
        self._counters[K.C_DIRTY] = 0
        if dirty & PLAN_DATA_UPLOADS and self._compiled is not None:
            self._compiled.programs_changed()
        return dirty

    def mark_dirty(self, groups: int = ALL) -> None:
        """Declare write groups changed behind the processor's back (a caller that edited ``state`` directly)."""
        self._counters[K.C_DIRTY] |= groups

    def load_pending_input(self, pending: PendingInput) -> None:
        """Restore what ``pending_input`` copied (call after ``load_state``)."""
        self._pending[:] = pending.ports
        self._counters[:] = pending.counters
        self._counters[K.C_DIRTY] = ALL
        self._immediate[: len(pending.immediate)] = pending.immediate

    def attach(self, observer: Observer) -> None:
        self.observers.append(observer)

    def detach(self, observer: Observer) -> None:
        self.observers.remove(observer)

    # -- running -----------------------------------------------------------------------------------------
    def run(self, data: bytes | bytearray | np.ndarray, *, address: int = 0, packet_limit: int = -1) -> RunResult:
        """Run one command buffer given as bytes/words. ``address`` is its physical address (0 if none)."""
        if address % 8:
            raise MisalignedBuffer("command buffer address is not 8-byte aligned", offset=0, address=address)
        words, tail = as_words(data)
        result = RunResult()
        self._run_chain(words, address, result, packet_limit)
        if tail and not result.finalized and not result.stopped_at_limit and result.jumps == 0:
            raise MisalignedBuffer(f"buffer length is not a multiple of 4 ({tail} stray bytes)", offset=4 * words.size)
        return result

    def run_at(self, address: int, size: int, *, packet_limit: int = -1) -> RunResult:
        """Run ``size`` bytes of command buffer from emulated memory at ``address`` (GX ProcessCommandList)."""
        if address % 8 or size % 8:
            raise MisalignedBuffer(f"command buffer of {size} bytes is not 8-byte aligned", offset=0, address=address)
        words = self.memory.view(address, size // 4, np.uint32, "command processor")
        result = RunResult()
        self._run_chain(words, address, result, packet_limit)
        return result

    def _run_chain(self, words: np.ndarray, address: int, result: RunResult, packet_limit: int) -> None:
        visited: set[tuple[int, int]] = set()
        self._list_start = None
        while True:
            result.buffers.append((address, 4 * words.size))
            self._buffer = address
            if address:
                visited.add((address, 4 * words.size))
                if self._list_start is None:  # packets of a kick buffer outside memory are not the list's
                    self._list_start = result.packets
            jump = self._run_within_budget(words, address, result, packet_limit)
            if jump is None:
                return
            target, size, offset = jump
            result.jumps += 1
            if (target, size) in visited or result.jumps > MAX_JUMPS:
                raise JumpCycle(
                    f"command-buffer jump to 0x{target:08X} ({size} bytes) repeats an earlier buffer",
                    offset=offset,
                    address=address,
                )
            if target % 8 or size % 8:
                raise MisalignedBuffer("jump target is not 8-byte aligned", offset=offset, address=target)
            words = self.memory.view(target, size // 4, np.uint32, f"CMDBUF jump at byte offset 0x{offset:X}")
            address = target

    def _run_within_budget(
        self, words: np.ndarray, address: int, result: RunResult, packet_limit: int
    ) -> tuple[int, int, int] | None:
        """``_run_buffer`` on at most the bytes left of the run's budget (whole 8-byte units); reaching the cut
        raises ``WorkBudgetExceeded``."""
        left = max(self.byte_budget - result.bytes_run, 0)
        cut = 4 * words.size > left
        if not cut:
            return self._run_buffer(words, address, result, packet_limit)
        try:
            jump = self._run_buffer(words[: left // 8 * 2], address, result, packet_limit)
        except TruncatedPacket:
            jump = None
        if jump is not None or result.finalized or result.stopped_at_limit:
            return jump
        raise WorkBudgetExceeded(
            f"the run executed its budget of {self.byte_budget} command bytes",
            offset=left // 8 * 8,
            packet=result.packets,
            address=address or None,
        )

    def _run_buffer(
        self, words: np.ndarray, address: int, result: RunResult, packet_limit: int
    ) -> tuple[int, int, int] | None:
        """Run one buffer; returns (target, size, jump packet offset) when it jumps, else None."""
        cursor = np.zeros(K.CURSOR_LEN, np.int64)
        cursor[K.K_LIMIT] = packet_limit - result.packets if packet_limit >= 0 else -1
        cursor[K.K_BUFFER] = address
        cursor[K.K_RECORD_DRAWS] = self.record_draws
        record = bool(self.observers)
        action = DECODE_ONLY_ACTIONS if self._decode_only() else ACTION_TABLE
        st = self.state
        before = self._counters.copy()
        try:
            while True:
                log = self._draw_log
                cursor[K.K_DRAWS], cursor[K.K_NDRAW], cursor[K.K_NCHANGE] = self.draw_count, log.end, log.nchanges
                args = (
                    words, words.size, st.regs, action, PORT_LAYOUT, self._fu, self._code, self._opdescs,
                    st.lighting_luts, st.fog_lut, st.proctex_luts, st.gas_lut, st.fixed_attribs, self._pending,
                    self._counters, self._immediate, cursor, self._records, self._packet_records, self._events,
                    record, self._groups, log.info, log.shadow, log.changes,
                )  # fmt: skip
                driver = None if record else self._compiled
                plans = None if driver is None else driver.active(self)
                status = (
                    K.run(*args) if driver is None or plans is None else driver.run(self, args, plans, address, result)
                )
                if cursor[K.K_DRAWS] != self.draw_count:  # draws handled in the loop took the dirty groups
                    self.draw_states.invalidate(ALL)
                    result.draws += int(cursor[K.K_DRAWS]) - self.draw_count
                    self.draw_count = int(cursor[K.K_DRAWS])
                log.end, log.nchanges = int(cursor[K.K_NDRAW]), int(cursor[K.K_NCHANGE])
                if record:
                    deliver(
                        self.observers,
                        words,
                        address,
                        self._packet_records[: cursor[K.K_NPK]],
                        self._records[: cursor[K.K_NREC]],
                    )
                    cursor[K.K_NREC] = cursor[K.K_NPK] = 0
                if cursor[K.K_NEV]:
                    self._dispatch_events(cursor, address)
                if status in (K.S_STOP, K.S_DECLINED):
                    outcome = self._act(cursor, address, result, words.size)
                    if outcome == "finalized":
                        return None
                    if outcome is not None:
                        return outcome  # type: ignore[return-value]
                elif status in (K.S_IMMEDIATE_FLUSH, K.S_IMMEDIATE_FULL):
                    # a flush stops before the flushing write (its packet is the draw's); a full buffer stops
                    # after the write that filled it, which may have been its packet's last
                    packet = result.packets - (self._list_start or 0) + int(cursor[K.K_PACKETS])
                    if status == K.S_IMMEDIATE_FULL and cursor[K.K_PARAM] == 0:
                        packet -= 1
                    self._flush_immediate(4 * int(cursor[K.K_POS]), packet)
                elif status == K.S_END:
                    return None
                elif status == K.S_LIMIT:
                    result.stopped_at_limit = True
                    result.resume = (address + 4 * int(cursor[K.K_POS]), 4 * (words.size - int(cursor[K.K_POS])))
                    return None
                elif status in (K.S_TRUNCATED, K.S_ODD_TAIL):
                    self._raise_truncated(words, cursor, status, address)
                elif status == K.S_DRAWS_FULL:
                    self._draw_log.grow()
                # S_RECORDS_FULL / S_EVENTS_FULL: handled above; continue
        finally:
            result.packets += int(cursor[K.K_PACKETS])
            result.bytes_run += 4 * int(cursor[K.K_POS])
            self._account(result, before)

    # -- compiled draws (picaemu.fused.driver calls these) ---------------------------------------------------
    @property
    def buffer(self) -> int:
        """Physical address of the command buffer running now (0: one outside emulated memory)."""
        return self._buffer

    @property
    def list_start(self) -> int:
        """Packets run when the running chain entered emulated memory (0 outside a chain)."""
        return self._list_start or 0

    def plan_words(self) -> bytes:
        """The data-port memories compiled plans read besides registers, as bytes (what a plan key's digest
        covers): the code and operand descriptors of both shader units, the fog, procedural-texture and lighting
        LUTs."""
        st = self.state
        luts = (st.fog_lut, st.proctex_luts, st.lighting_luts)
        return self._code.tobytes() + self._opdescs.tobytes() + b"".join(a.tobytes() for a in luts)

    def draws_ran(self, n: int, dirty: int, result: RunResult) -> None:
        """The compiled loop ran ``n`` draws, taking the write groups ``dirty``."""
        self.draw_states.invalidate(dirty)
        result.draws += n
        self.draw_count += n

    def sync_cursor(self, cursor: np.ndarray, address: int) -> None:
        """Bring the draw log's ends up to the kernel's and hand over the queued events (as at a stop)."""
        log = self._draw_log
        log.end, log.nchanges = int(cursor[K.K_NDRAW]), int(cursor[K.K_NCHANGE])
        if cursor[K.K_NEV]:
            self._dispatch_events(cursor, address)

    def _dispatch_events(self, cursor: np.ndarray, address: int) -> None:
        """Hand queued pipeline events (restart, cache clear, flush, ...) to the pipeline, in stream order."""
        n = int(cursor[K.K_NEV])
        cursor[K.K_NEV] = 0
        queued = self._events[:n]
        # idempotent events (a restart per compiled draw) act once a run
        events = collapse_idempotent(queued) if not self.observers and n > 1 else queued.tolist()
        for reg_id, value, pos in events:
            kind, gate, action = EVENT_OF_REG[reg_id]
            for obs in self.observers:
                obs.on_trigger(TriggerEvent(address, 4 * pos, reg_id, action.value, value))
            if gate & value or not gate:
                self.pipeline.event(kind, self.state)

    def _account(self, result: RunResult, before: np.ndarray) -> None:
        delta = self._counters - before
        result.writes += int(delta[K.C_WRITES])
        if delta[K.C_DROPPED]:
            result.dropped_port_words += int(delta[K.C_DROPPED])
            log.warning("%d data-port words fell outside their memory and were dropped", int(delta[K.C_DROPPED]))
        if delta[K.C_IGNORED]:
            result.ignored_writes += int(delta[K.C_IGNORED])
            log.warning("%d writes to register ids >= 0x300 were ignored", int(delta[K.C_IGNORED]))

    def _raise_truncated(self, words: np.ndarray, cursor: np.ndarray, status: int, address: int) -> None:
        pos = int(cursor[K.K_POS])
        if status == K.S_ODD_TAIL:
            raise TruncatedPacket(
                "buffer ends inside a packet (a parameter word without its header)",
                offset=4 * pos, packet=int(cursor[K.K_PACKETS]), address=address or None,
            )  # fmt: skip
        raise TruncatedPacket(
            truncation_message(words, pos), offset=4 * pos, packet=int(cursor[K.K_PACKETS]), address=address or None
        )

    # -- actions -----------------------------------------------------------------------------------------
    def _act(self, cursor: np.ndarray, address: int, result: RunResult, size: int) -> tuple[int, int, int] | str | None:
        """Carry out the trigger the compiled loop stopped at (it has already stored the masked write); ``size``:
        words in the buffer at ``address``."""
        slots = cursor.tolist()
        reg_id = slots[K.K_STOP_ID]
        value = slots[K.K_STOP_VALUE] & 0xFFFFFFFF
        offset = 4 * slots[K.K_STOP_PACKET]
        regs = self.state.regs
        action = STOP_ACTIONS[reg_id]
        for obs in self.observers:
            obs.on_trigger(TriggerEvent(address, offset, reg_id, action.value, value))
        if action in (Action.DRAW_ARRAYS, Action.DRAW_ELEMENTS):
            kind = DrawKind.ARRAYS if action is Action.DRAW_ARRAYS else DrawKind.ELEMENTS
            done = slots[K.K_PARAM] == 0  # the trigger was its packet's last write: the loop moved past it
            packet = result.packets - (self._list_start or 0) + slots[K.K_PACKETS] - done
            resume = (address + 4 * slots[K.K_POS], 4 * (size - slots[K.K_POS])) if done and address else None
            call = DrawCall(self.draw_count, kind, self.state, self.memory, offset, packet=packet, resume=resume)
            driver = self._compiled
            declined = None if driver is None else driver.pending
            if driver is None or declined is None:
                dirty = self._take_for(call)
                if self._leave_to_loop(call, dirty):
                    return None
            else:  # the loop handed it back: ``_take_for`` ran when it was first left to it
                driver.pending = None
                dirty, call.states = declined, self.draw_states
            self._draw(call, dirty)
            result.draws += 1
        elif action in (Action.JUMP0, Action.JUMP1):
            ch = 0 if action is Action.JUMP0 else 1
            target = int(access.value(regs, f"CMDBUF_ADDR{ch}", "address"))
            size = int(access.value(regs, f"CMDBUF_SIZE{ch}", "size"))
            return target, size, offset
        elif action is Action.FINALIZE and self._interrupt(value):
            result.finalized = True
            if self.stop_at_finalize:
                return "finalized"
        return None

    def _interrupt(self, value: int) -> bool:
        """True when a finalize write raises P3D with auto-stop on (``tables.raises_interrupt``)."""
        return raises_interrupt(self.state.regs, value)

    def _take_for(self, call: DrawCall) -> int:
        """The write groups since the previous draw, which ``call``'s draw state no longer reuses; returns them."""
        dirty = self.take_dirty()
        self.draw_states.invalidate(dirty)
        call.states = self.draw_states
        return dirty

    def _leave_to_loop(self, call: DrawCall, dirty: int) -> bool:
        """Whether the compiled draw loop runs ``call`` next (``picaemu.fused.driver``)."""
        if self._compiled is None:
            if self.observers or not is_compiled_sink(self.pipeline):
                return False
            from picaemu.fused.driver import CompiledDriver

            self._compiled = CompiledDriver()
        return self._compiled.leave(self, call, dirty)

    def _draw(self, call: DrawCall, dirty: int) -> None:
        """Hand ``call`` to the pipeline (``dirty``: ``_take_for``'s groups)."""
        self.draw_count += 1
        if self.record_draws:
            self._draw_log.add(call.index, call.kind, self._buffer, call.offset, call.state.regs, dirty)
        call.observed = bool(self.observers)
        for obs in self.observers:
            obs.on_draw_begin(call)
        self.pipeline.draw(call)
        for obs in self.observers:
            obs.on_draw_end(call)

    def _flush_immediate(self, offset: int, packet: int) -> None:
        n = int(self._counters[K.C_IMM_COUNT])
        self._counters[K.C_IMM_COUNT] = 0
        inputs = self._immediate[:n].copy()
        call = DrawCall(self.draw_count, DrawKind.IMMEDIATE, self.state, self.memory, offset, inputs, packet=packet)
        self._draw(call, self._take_for(call))


__all__ = ["CommandBufferError", "CommandProcessor", "PendingInput", "RunResult", "TriggerRegisters"]
