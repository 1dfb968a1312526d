"""Registers a draw reads before the capture ever wrote them, for captures whose initial state is not known.

A capture recorded from the middle of a running program (``picaemu record`` without ``--from-start``) starts
from the power-on register values, which are a guess: the program set its state before recording began. Such
captures say so with ``meta["initial_state"] = "unknown"``; the replay then wraps its pipeline in an
``UnknownStateWatch``:

- as an ``Observer`` it notes every register id a command list writes (``on_write``);
- as a ``PipelineSink`` wrapper, for the duration of each draw it swaps the register file for a view that notes
  every id the pipeline's Python code reads (``regs[i]``, slices, index arrays: the per-draw decoders);
- after the draw, each register read but never written is reported once (``logging`` warning on
  ``picaemu.replay``, and the (register id, draw index) list ``unknown``).

Reads made inside compiled kernels are not seen (the kernels take decoded state, not the register file). Only
registers are tracked: shader code, uniforms and LUTs loaded before recording are equally unknown, and
docs/capturing.md says so.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from picaemu import regs as regtable
from picaemu.draw import DrawCall, PipelineEventKind, PipelineSink
from picaemu.observer import Observer, WriteEvent
from picaemu.state import GpuState

META_KEY = "initial_state"
UNKNOWN = "unknown"
log = logging.getLogger("picaemu.replay")


class ReadLog(np.ndarray):
    """A view of the register file that adds every id read through Python indexing to ``reads``."""

    reads: set[int]

    def __getitem__(self, key: Any) -> Any:
        plain = self.view(np.ndarray)
        if isinstance(key, (int, np.integer)):
            self.reads.add(int(key) % plain.shape[0])
        elif isinstance(key, slice):
            self.reads.update(range(*key.indices(plain.shape[0])))
        else:
            picked = np.arange(plain.shape[0])[key]
            self.reads.update(np.atleast_1d(picked).tolist())
        return plain[key]


def is_unknown(meta: dict[str, str]) -> bool:
    return meta.get(META_KEY) == UNKNOWN


class UnknownStateWatch(Observer):
    """Wraps ``inner`` (the pipeline); attach it to the command processor as well. See the module docstring."""

    def __init__(self, inner: PipelineSink) -> None:
        self.inner = inner
        self.written = np.zeros(regtable.NUM_REGS, bool)
        self.warned = np.zeros(regtable.NUM_REGS, bool)
        self.unknown: list[tuple[int, int]] = []  # (register id, draw index) of each first unwritten read

    def on_write(self, event: WriteEvent) -> None:
        if event.id < regtable.NUM_REGS:
            self.written[event.id] = True

    def draw(self, call: DrawCall) -> None:
        regs = call.state.regs
        probe = regs.view(ReadLog)
        probe.reads = set()
        call.state.regs = probe
        try:
            self.inner.draw(call)
        finally:
            call.state.regs = regs
            self._report(sorted(probe.reads), call.index, regs)

    def event(self, kind: PipelineEventKind, state: GpuState) -> None:
        self.inner.event(kind, state)

    def _report(self, reads: list[int], draw: int, regs: np.ndarray) -> None:
        for reg_id in reads:
            if self.written[reg_id] or self.warned[reg_id]:
                continue
            self.warned[reg_id] = True
            self.unknown.append((reg_id, draw))
            name = regtable.get(reg_id).name
            log.warning(
                "draw #%d reads register 0x%03X (%s) that the capture never wrote: its value 0x%08X is "
                "the power-on guess, not what the program set before recording",
                draw,
                reg_id,
                name,
                int(regs[reg_id]),
            )
