"""Checkpoints of a replay (``Checkpointing``, which ``picaemu.replay.Replay`` mixes in): copies of a position
(``checkpoint``; GPU state and external registers shared with the previous copy where unchanged, memory as shared
4 KiB pages: ``picaemu.replay.checkpoint``), ``restore``, and the mid-list checkpoints a replay takes after draws
(every ``checkpoint_draws``-th draw, or when the work since the last one reaches ``checkpoint_work``; within
``checkpoint_budget`` bytes)."""

from __future__ import annotations

import dataclasses

import numpy as np

from picaemu.command.processor import CommandProcessor
from picaemu.draw import PipelineEventKind, PipelineSink
from picaemu.errors import PicaError
from picaemu.gx import Gx
from picaemu.memory import PhysicalMemory
from picaemu.replay.checkpoint import Checkpoint, PageStore, distinct_page_bytes, restore_pages
from picaemu.state import GpuState, frozen_copy, share_unchanged


class Checkpointing:
    """``Replay``'s checkpoints (its ``__init__`` sets these attributes)."""

    position: int
    packet: int
    processor: CommandProcessor
    pipeline: PipelineSink
    memory: PhysicalMemory
    gx: Gx
    checkpoints: bool
    checkpoint_draws: int
    checkpoint_work: int
    checkpoint_budget: int
    _checkpoints: dict[tuple[int, int], Checkpoint]
    _checkpoint_bytes: int
    _current: int
    _partial: bool
    _resume: tuple[int, int] | None
    _work: int
    _pages: PageStore
    _last_state: GpuState | None
    _last_checkpoint_regs: tuple[np.ndarray, np.ndarray] | None

    @property
    def state(self) -> GpuState:
        return self.processor.state

    def sync_memory(self) -> None:
        """Make emulated memory hold everything the pipeline rendered (``PipelineEventKind.MEMORY_SYNC``:
        ``picaemu.gl`` writes its render targets back; the software pipeline writes memory as it draws); called
        before every event that is not a command list, checkpoint, restore and view, and when ``run_to``
        returns."""
        self.pipeline.event(PipelineEventKind.MEMORY_SYNC, self.state)

    def checkpoint(self, *, packets: int | None = None, resume: tuple[int, int] | None = None) -> Checkpoint:
        """A copy of the current position (not kept by the replay; see ``restore``). An observer called while
        ``step`` runs the list of event ``position`` names where it is: ``packets`` run so far and ``resume`` =
        (address, bytes left) of the next one."""
        if self._partial and packets is None:
            raise PicaError(
                "the position run_to_draw left (inside a command list) cannot be checkpointed; "
                "use run_to(event, packets=k)"
            )
        if packets is not None and (packets < 1) != (resume is None):
            raise PicaError("a checkpoint inside a command list needs both its packet count and where it resumes")
        self.sync_memory()
        return Checkpoint(
            self.position,
            self.packet if packets is None else packets,
            self._state_copy(),
            self._pages.snapshot(),
            *self._registers_copy(),
            self.processor.draw_count,
            self.processor.pending_input(),
            self._resume if packets is None else resume,
        )

    def checkpoint_within(self, base: Checkpoint, *, packets: int, resume: tuple[int, int]) -> Checkpoint:
        """A light copy of the current position inside the command list of event ``position`` (``packets`` run so
        far, the next one at ``resume``), whose memory is ``base``'s: a checkpoint taken earlier inside the same
        list. It costs the GPU state and registers (shared with the last copy where unchanged), not a page scan;
        restoring it is exact only once the caller writes back every byte that changed since ``base``: inside one
        list only draws write memory, into their render targets (``picaemu.debug.capture_diff`` keeps them)."""
        if base.position != self.position or not 0 < base.packets <= packets:
            raise PicaError(
                f"checkpoint_within needs a base inside the same list before the position: base at event "
                f"{base.position} + {base.packets} packets, now event {self.position} + {packets} packets"
            )
        self.sync_memory()
        gpu, lcd = self._registers_copy()
        return dataclasses.replace(
            base,
            packets=packets,
            state=self._state_copy(),
            gpu=gpu,
            lcd=lcd,
            draw_count=self.processor.draw_count,
            pending=self.processor.pending_input(),
            resume=resume,
        )

    def _registers_copy(self) -> tuple[np.ndarray, np.ndarray]:
        """Read-only copies of the external GPU and LCD registers, the last checkpoint's where equal."""
        last = self._last_checkpoint_regs
        gpu = frozen_copy(self.gx.gpu, last[0] if last else None)
        self._last_checkpoint_regs = gpu, frozen_copy(self.gx.lcd, last[1] if last else None)
        return self._last_checkpoint_regs

    def _state_copy(self) -> GpuState:
        """A read-only copy of the GPU state sharing the arrays that equal the last copy's (``share_unchanged``:
        a checkpoint costs the register file plus what changed)."""
        self._last_state = share_unchanged(self.state, self._last_state)
        return self._last_state

    def restore(self, cp: Checkpoint) -> None:
        """Put the replay back at ``cp`` (memory, GPU state, external registers, draw count, list position)."""
        self.sync_memory()  # what the pipeline holds elsewhere goes to memory first, then is overwritten
        restore_pages(self.memory, cp.pages)
        self.processor.load_state(cp.state.copy())
        self.processor.load_pending_input(cp.pending)
        self.processor.draw_count = cp.draw_count
        del self.processor.draws[cp.draw_count :]
        self.gx.gpu[:], self.gx.lcd[:] = cp.gpu, cp.lcd
        self.pipeline.event(PipelineEventKind.RESTART_PRIMITIVE, self.state)
        self.position, self.packet, self._resume = cp.position, cp.packets, cp.resume
        self._partial, self._work = False, 0

    @property
    def checkpoint_bytes(self) -> int:
        """Bytes of the distinct memory pages the replay's checkpoints hold (a page they share counts once)."""
        return distinct_page_bytes(list(self._checkpoints.values()))

    def checkpoint_list(self) -> list[Checkpoint]:
        """The checkpoints the replay keeps, in position order."""
        return [self._checkpoints[at] for at in sorted(self._checkpoints)]

    def _next_checkpoint_draw(self, index: int) -> int:
        """The first draw from ``index`` on that ``_checkpoint_after_draw`` may checkpoint after (none: a huge
        number)."""
        if not self.checkpoints:
            return 1 << 62
        return (index + self.checkpoint_draws) // self.checkpoint_draws * self.checkpoint_draws - 1

    def _work_left(self) -> int:
        """The draw work (``draw_work``) that brings the work since the last checkpoint to ``checkpoint_work``."""
        return self.checkpoint_work - self._work

    def _checkpoint_after_draw(self, index: int, packet: int, resume: tuple[int, int] | None, work: int) -> None:
        """After draw ``index`` (its ``DrawCall.packet`` and ``resume``; ``work``: ``draw_work`` of the draws run
        since the last call) when it ends its packet inside a command list and is a ``checkpoint_draws``-th draw or
        brings the work since the last checkpoint to ``checkpoint_work``: a checkpoint right after it, so that a
        jump to any draw of a long list replays at most that many draws or that much work. Over
        ``checkpoint_budget`` bytes, every other such checkpoint is dropped and both spacings double."""
        self._work += work
        if (
            not self.checkpoints
            or resume is None
            or resume[1] <= 0
            or packet < 0
            or ((index + 1) % self.checkpoint_draws and self._work < self.checkpoint_work)
        ):
            return
        at = (self._current, self.packet + packet + 1)
        self._work = 0
        if at in self._checkpoints:
            return
        cp = self._checkpoints[at] = self.checkpoint(packets=at[1], resume=resume)
        self._checkpoint_bytes += cp.fresh_bytes
        if self._checkpoint_bytes > self.checkpoint_budget:
            mids = sorted(k for k in self._checkpoints if k[1])
            for key in mids[::2]:
                self._checkpoint_bytes -= self._checkpoints.pop(key).fresh_bytes
            self.checkpoint_draws *= 2
            self.checkpoint_work *= 2
