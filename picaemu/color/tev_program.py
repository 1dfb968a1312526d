"""The TEV's sequencing, written once: a ``TevState`` turned into the per-draw program of six stage rows that the
reference (``picaemu.color.tev.combine``), the fused fragment kernel (``picaemu.fused.fragments`` builds its
``tev_rows`` from it) and the GLSL generator (``picaemu.gl.shadergen``) all read.

Each ``StageRow`` resolves what the hardware's sequencing rules make of a stage (pica-pipeline §13.2, §13.5):
- pass-through: a stage that outputs "previous" unchanged (``TevStage.passthrough``) computes nothing; "previous"
  of every stage is the output of the last stage before it that computes (0 for stage 0);
- the stage-0 rules: "previous" in RGB slot 0 or 1 of stage 0 reads RGB slot 2's source (0 if that is "previous"
  too); every other "previous" of stage 0 and its "previous buffer" read 0;
- the combiner buffer, with its one-stage delay: stage 0 reads 0, stage 1 the initial color (0x0FD), stage k + 1
  the buffer as stages 0..k - 1 left it, where stage j (0-3) writes its RGB / alpha output when its update bit
  (0x0E0 bits 8-11 / 12-15) is set. A row holds the result: which stage's output (or the initial color, or 0) its
  "previous buffer" reads, for RGB and for alpha apart. While no stage reads the buffer, every row's buffer reads 0.

References to a stage's output are stage indices 0-5; ``READS_ZERO`` and ``READS_BUFFER_COLOR`` are the two other
values "previous" and "previous buffer" can take.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from picaemu.regs.blocks.tev import TEV_SOURCES

if TYPE_CHECKING:
    from picaemu.color.tev import TevStage, TevState

NUM_STAGES = 6
BUFFER_STAGES = 4  # stages whose output can reach the combiner buffer (update bits 8-11 / 12-15 of 0x0E0)
_SRC = {name: code for code, name in TEV_SOURCES.items()}
SRC_PRIMARY, SRC_LIGHT_PRIMARY, SRC_LIGHT_SECONDARY = (
    _SRC["primary color"],
    _SRC["fragment primary color"],
    _SRC["fragment secondary color"],
)
SRC_TEXTURES = tuple(_SRC[f"texture {i}"] for i in range(4))
SRC_BUFFER, SRC_CONSTANT, SRC_PREVIOUS = _SRC["previous buffer"], _SRC["constant"], _SRC["previous"]
# what "previous" / "previous buffer" read when not a stage's output (stage indices are 0..NUM_STAGES - 1)
READS_ZERO, READS_BUFFER_COLOR = -2, -1

Sources = tuple[int | None, int | None, int | None]


@dataclass(frozen=True)
class StageRow:
    """One stage of a ``TevProgram``.

    ``stage``: the decoded stage (operands, ops, scales, constant); ``active``: it computes (False: it passes
    "previous" through); ``rgb_sources`` / ``alpha_sources``: the source code each operand slot reads after the
    stage-0 rules (None: 0), the slots the op does not read repeating slot 0 (or "previous" when it reads none), as
    the kernels read all three; ``previous``: the stage whose output "previous" is (``READS_ZERO`` for stage 0);
    ``buffer_rgb`` / ``buffer_alpha``: what "previous buffer" reads for RGB / alpha: a stage's output,
    ``READS_BUFFER_COLOR`` or ``READS_ZERO``."""

    stage: TevStage
    active: bool
    rgb_sources: Sources
    alpha_sources: Sources
    previous: int
    buffer_rgb: int
    buffer_alpha: int

    @property
    def index(self) -> int:
        return self.stage.index

    def reads(self, code: int) -> bool:
        """The stage computes and one of its operand slots reads source ``code``."""
        return self.active and code in (*self.rgb_sources, *self.alpha_sources)


@dataclass(frozen=True)
class TevProgram:
    """A draw's six ``StageRow``s, the initial buffer color (RGBA8), whether some stage reads the buffer (as
    ``TevState.sources_used`` says) and ``result``: the stage whose output is the combiner's (the last that
    computes)."""

    rows: tuple[StageRow, ...]
    buffer_color: tuple[int, int, int, int]
    uses_buffer: bool
    result: int


def slot_source(stage: TevStage, kind: str, slot: int) -> int | None:
    """The source code a slot of ``stage`` ("RGB" or "alpha") reads after the stage-0 rules; None: it reads 0."""
    codes = stage.rgb_sources if kind == "RGB" else stage.alpha_sources
    code: int | None = codes[slot]
    if stage.index == 0 and kind == "RGB" and slot < 2 and code == SRC_PREVIOUS:
        code = codes[2] if codes[2] != SRC_PREVIOUS else None
    if stage.index == 0 and code in (SRC_BUFFER, SRC_PREVIOUS):
        return None
    return code


def _operand_sources(stage: TevStage, kind: str, count: int) -> Sources:
    """The three slots' sources of "RGB" or "alpha" when the op reads ``count`` of them (``StageRow``)."""
    got = [slot_source(stage, kind, s) for s in range(count)]
    a, b, c = got + [got[0] if got else SRC_PREVIOUS] * (3 - len(got))
    return a, b, c


def _buffer_reads(tstate: TevState, output_of: list[int], uses_buffer: bool) -> list[tuple[int, int]]:
    """What "previous buffer" reads in each stage, (RGB, alpha) (module docstring): the buffer as it stood before
    the update of the stage before it."""
    if not uses_buffer:
        return [(READS_ZERO, READS_ZERO)] * NUM_STAGES
    reads = [(READS_ZERO, READS_ZERO)]
    rgb = alpha = READS_BUFFER_COLOR
    for k in range(NUM_STAGES - 1):
        reads.append((rgb, alpha))
        if k < BUFFER_STAGES:
            rgb = output_of[k] if tstate.rgb_update[k] else rgb
            alpha = output_of[k] if tstate.alpha_update[k] else alpha
    return reads


def program(tstate: TevState) -> TevProgram:
    """The stage program of ``tstate`` (``TevState.program`` remembers it)."""
    output_of: list[int] = []  # per stage, the stage whose output it leaves as "previous"
    for stage in tstate.stages:
        output_of.append(output_of[-1] if stage.passthrough else stage.index)
    uses_buffer = SRC_BUFFER in tstate.sources_used()
    rows = tuple(
        StageRow(
            stage,
            not stage.passthrough,
            _operand_sources(stage, "RGB", stage.plan.rgb_slots),
            _operand_sources(stage, "alpha", stage.plan.alpha_slots),
            output_of[stage.index - 1] if stage.index else READS_ZERO,
            *buffer,
        )
        for stage, buffer in zip(tstate.stages, _buffer_reads(tstate, output_of, uses_buffer), strict=True)
    )
    return TevProgram(rows, tstate.buffer_color, uses_buffer, output_of[-1])
