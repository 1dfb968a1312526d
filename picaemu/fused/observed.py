"""The compiled route for a draw whose fragments a stage observer watches: fates and depth/stencil test values are
recorded as arrays by the compiled passes, so attaching the debugger keeps its draws on the compiled route.

A draw the fused fragment side covers (``picaemu.fused.fragments.FragmentPlan``) runs, for an observer that asks
for fates (``StageObserver.fragment_fates``), as ``pipeline_fragments.FragmentSide`` records any observed draw:
the compiled rasterizer (scissor off, then the scissor test, so that every rasterized fragment has a fate), the
colors of the shaded fragments from ``CompiledColorStages`` (the fused kernel's own shading,
``fragment_kernel.shade_fragments``: texture units, lighting, procedural texture, TEV, fog), the alpha test by the
plan's pass table, and ``fragment_ops.resolve`` with a full ``FragmentLog`` (``fragment.kernels.interleaved``:
each fragment's fate, its pixel's color before and after it, the depth and stencil it was tested against). The
staged color stages (``picaemu.color.shading``, numpy) run only for what this route refuses, named in the draw's
route (``picaemu.draw.DrawCall.route``; ``refusal``):

- an observer that watches per-fragment values (``fragment_values``: texture coordinates and LOD, lighting, every
  TEV stage's operands, fog; the fragment debugger) — the compiled shading keeps no intermediate values;
- an observer that asks for depth/stencil tests without fates;
- everything the fused plan refuses (``FragmentPlan.of``: shadow-map rendering, gas, shadow textures...) and a
  texture outside VRAM/FCRAM (``Declined``, before any pixel is written: the staged path then raises its error).

Quaternions: the fused kernel's lighting normalises the interpolated normal quaternion itself, so the chunk is
rasterized without the rasterizer's normalisation (``raw_columns``) and normalised afterwards (``normalise``),
giving the observer the same ``Fragments`` as the staged path.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from picaemu.draw import FRAGMENT_VALUES_WATCHED, TESTS_WITHOUT_FATES
from picaemu.draw_state import DrawState
from picaemu.errors import PicaError
from picaemu.fragment.blend import BlendProgram
from picaemu.fused.fragment_kernel import shade_fragments
from picaemu.fused.fragments import DECLINED, FRAGMENT_COUNTERS, FragmentPlan
from picaemu.fused.layout import ALPHA_TEST, DONE, TEXELS
from picaemu.memory import PhysicalMemory
from picaemu.observer import StageObserver
from picaemu.raster.fragments import Fragments
from picaemu.raster.rasterizer import VARYING, ColumnPlan, normalise_quaternions


class Declined(PicaError):
    """The compiled shading declined the draw before writing anything; ``reason`` names why (the route's
    reason, ``fragments.DECLINED``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def refusal(observer: StageObserver | None) -> str:
    """Why the compiled route cannot serve what ``observer`` watches of the fragments ("" when it can: no
    observer, one that watches no fragment, or one that asks for fates, with or without test values)."""
    if observer is None:
        return ""
    if observer.fragment_values:
        return FRAGMENT_VALUES_WATCHED
    if observer.fragment_tests and not observer.fragment_fates:
        return TESTS_WITHOUT_FATES
    return ""


def _field_of(column: int) -> tuple[str, int | None]:
    """The ``Fragments`` field holding varying column ``column`` and its component (None: a 1-D field)."""
    for name, cols in VARYING.items():
        if isinstance(cols, slice) and cols.start <= column < cols.stop:
            return name, column - cols.start
        if cols == column:
            return name, None
    raise PicaError(f"varying column {column} is no field of the fragments")


@dataclass(frozen=True, eq=False)
class CompiledColorStages:
    """``pipeline_seams.ColorStages`` by the fused plan's compiled shading: ``shade`` gives the same colors and
    ``texels_fetched`` as the staged stages, ``alpha_test`` reads the plan's pass table, ``blend_program`` is the
    draw state's (so ``fragment_ops.resolve`` uses the draw state's ``OpsPlan``). ``fields``: per column of the
    plan's ``active``, the ``Fragments`` field and component it is read from."""

    plan: FragmentPlan
    program: BlendProgram
    fields: tuple[tuple[str, int | None], ...]

    @classmethod
    def of(cls, plan: FragmentPlan, ds: DrawState) -> CompiledColorStages:
        return cls(plan, ds.blend_program, tuple(_field_of(int(c)) for c in plan.active))

    def varyings(self, frags: Fragments) -> np.ndarray:
        """(F, A) float32: the plan's varying columns of ``frags`` (quaternions as interpolated)."""
        out = np.empty((len(frags), len(self.fields)), np.float32)
        for k, (name, component) in enumerate(self.fields):
            values = getattr(frags, name)
            out[:, k] = values if component is None else values[:, component]
        return out

    def shade(
        self, frags: Fragments, memory: PhysicalMemory, counters: dict, observer: StageObserver | None = None
    ) -> np.ndarray:
        """(F, 4) uint8 colors after fog (``memory``: the plan holds its arrays; ``observer``: never one that asks
        for values, which ``refusal`` sends to the staged stages). ``Declined``: a texture outside VRAM/FCRAM."""
        local = np.zeros(len(FRAGMENT_COUNTERS), np.int64)
        code, color = shade_fragments(
            np.ascontiguousarray(frags.x, np.int32),
            np.ascontiguousarray(frags.y, np.int32),
            np.ascontiguousarray(frags.primitive, np.int32),
            np.ascontiguousarray(frags.depth, np.float32),
            self.varyings(frags),
            *self.plan.shading_args,
            local,
        )
        if code != DONE:
            raise Declined(DECLINED.get(code, f"fragment side declined (code {code})"))
        counters["texels_fetched"] = counters.get("texels_fetched", 0) + int(local[TEXELS])
        return color

    def alpha_test(self, color: np.ndarray) -> np.ndarray:
        if not self.plan.ints[ALPHA_TEST]:
            return np.ones(color.shape[0], bool)
        return self.plan.alpha_pass[color[:, 3]]

    def blend_program(self) -> BlendProgram:
        return self.program


def raw_columns(columns: ColumnPlan) -> ColumnPlan:
    """``columns`` without the rasterizer's quaternion normalisation (the compiled shading normalises)."""
    return dataclasses.replace(columns, quat=None) if columns.quat is not None else columns


def normalise(frags: Fragments, columns: ColumnPlan) -> None:
    """Normalise ``frags``' quaternions in place as the rasterizer does for ``columns`` (after shading)."""
    if columns.quat is not None and len(frags):
        normalise_quaternions(frags.quat)
