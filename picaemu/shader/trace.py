"""Debug traces: every instruction one chosen vertex (or GS invocation) executes, with its values.

Traces come from re-running that single invocation on the scalar reference machine (which the differential test
keeps equal to the vectorized interpreter), so normal batched runs record nothing and pay nothing.

``trace_vertex(setup, attributes (16, 4) or (K, 4)) -> list[TraceRecord]`` and
``trace_geometry(setup, vertices (N, K, 4), primitive_sizes, invocation) -> list[TraceRecord]``;
``TraceRecord.as_dict()`` is JSON-ready; ``format_trace(records)`` gives one text line per step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from picaemu.shader.disasm import format_instruction, mask_text
from picaemu.shader.geometry import run_geometry_reference
from picaemu.shader.linemap import LineMap
from picaemu.shader.reference import ScalarMachine, Step
from picaemu.shader.setup import ShaderSetup


@dataclass(frozen=True)
class TraceRecord:
    step: Step
    text: str

    def as_dict(self) -> dict:
        """JSON-ready step; ``result`` holds only the components the destination mask writes (None elsewhere)."""
        s = self.step
        result = None if s.result is None else masked_result(s.result, s.mask)
        return {
            "pc": s.pc,
            "word": f"0x{s.instruction.word:08X}",
            "text": self.text,
            "sources": s.sources,
            "result": result,
            "mask": mask_text(s.mask).lstrip(".") or "xyzw",
            "cmp": list(s.cmp),
            "a0": list(s.a0),
            "aL": s.aL,
            "loop_depth": s.loop_depth,
            "loop_remaining": s.loop_remaining,
            "call_depth": s.call_depth,
            "if_depth": s.if_depth,
        }


def masked_result(result, mask: int) -> list:
    """The components of a step's ``result`` its destination write mask writes (x = bit 3 ... w = bit 0), None
    for the lanes the instruction leaves alone."""
    return [x if mask & (8 >> i) else None for i, x in enumerate(result)]


def _collector(setup: ShaderSetup, out: list[TraceRecord]):
    def on_step(step: Step) -> None:
        out.append(TraceRecord(step, format_instruction(step.instruction, setup.names)))

    return on_step


def trace_vertex(setup: ShaderSetup, attributes: np.ndarray) -> list[TraceRecord]:
    """Trace one vertex; ``attributes`` (K, 4) are input attributes 0..K-1 (mapped by the permutation)."""
    attributes = np.asarray(attributes, np.float32).reshape(-1, 4)
    regs = np.zeros((16, 4), np.float32)
    for k in range(min(setup.num_inputs, len(attributes))):
        regs[setup.input_permutation[k]] = attributes[k]
    records: list[TraceRecord] = []
    ScalarMachine(setup).run(regs, _collector(setup, records))
    return records


def trace_geometry(
    setup: ShaderSetup, vertices: np.ndarray, primitive_sizes: Sequence[int] | None = None, invocation: int = 0
) -> list[TraceRecord]:
    """Trace GS invocation ``invocation`` of a draw (earlier invocations run untraced for their carried state)."""
    records: list[TraceRecord] = []
    run_geometry_reference(setup, vertices, primitive_sizes, _collector(setup, records), invocation)
    return records


def _vec(values: list[float]) -> str:
    return "(" + ", ".join(f"{v:.6g}" for v in values) + ")"


def format_trace(records: list[TraceRecord], line_map: LineMap | None = None) -> list[str]:
    """One line per step; with ``line_map``, each ends with the ``file:line`` of its instruction."""
    lines = []
    for r in records:
        s = r.step
        srcs = " ".join(_vec(v) for v in s.sources)
        res = f" -> {_vec(s.result)}" if s.result is not None else ""
        state = f"cmp={int(s.cmp[0])}{int(s.cmp[1])} a0=({s.a0[0]},{s.a0[1]}) aL={s.aL}"
        if s.loop_depth:
            state += f" loop={s.loop_depth}:{s.loop_remaining}"
        if s.call_depth:
            state += f" call={s.call_depth}"
        where = line_map.at(s.pc) if line_map is not None else None
        lines.append(f"0x{s.pc:03X}  {r.text:<40} {srcs}{res}  [{state}]" + (f"  ; {where}" if where else ""))
    return lines
