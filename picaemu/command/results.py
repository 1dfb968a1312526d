"""What one run of the command processor did (``RunResult``), and the input it holds between runs
(``PendingInput``: partial data-port vectors and immediate-mode vertices not drawn yet)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class RunResult:
    """What one ``run`` did."""

    packets: int = 0
    writes: int = 0
    draws: int = 0
    jumps: int = 0
    bytes_run: int = 0  # command bytes executed, over every buffer of the chain
    finalized: bool = False
    dropped_port_words: int = 0
    ignored_writes: int = 0
    stopped_at_limit: bool = False
    buffers: list[tuple[int, int]] = field(default_factory=list)  # (address, size) of every buffer run
    # after a stop at the packet limit: (address, bytes left) of the rest of the buffer, where a later
    # ``run_at(*resume)`` continues the same chain
    resume: tuple[int, int] | None = None


@dataclass(frozen=True)
class PendingInput:
    """Input a command list has sent but the processor has not consumed yet: words of partial data-port vectors
    and immediate-mode vertices not yet drawn (copies; see ``CommandProcessor.pending_input``)."""

    ports: np.ndarray  # (NUM_PORTS, 4) uint32 words received of each port's current vector
    counters: np.ndarray  # (COUNTERS_LEN,) int64 kernel counters (pending word counts, immediate count, ...)
    immediate: np.ndarray  # (n, 16, 4) float32 immediate-mode vertices submitted since the last draw
