"""The detail texts of ``picaemu.debug.why``: for the stage that decided a draw's verdict, the register that decided
it with its value and meaning (``reg_text``: names and field meanings from the register table, ``picaemu.regs``)
and the figures behind it ("FACECULLING_CONFIG = cull counter-clockwise (keep clockwise); all 2 triangles are
counter-clockwise"). ``DETAILS``: stage name (or "visible") -> function of (``Facts``, stages) -> text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from picaemu import regs as regtable
from picaemu.debug.probe import scissor_rect
from picaemu.formats import pica
from picaemu.fragment import framebuffer as fbm
from picaemu.fragment.ops import Fate
from picaemu.geometry import clipping

if TYPE_CHECKING:
    from picaemu.debug.session import Session
    from picaemu.debug.why import DrawWatcher, Stage

VISIBLE = "visible"
SHOWING_EVENTS = (pica.DisplayTransfer, pica.TextureCopy, pica.Present)
CHANNELS = ("red", "green", "blue", "alpha")
# the fixed clip planes of ``clipping.FIXED_PLANES``, named in the same order
PLANE_NAMES = ("right (x > w)", "left (x < -w)", "top (y > w)", "bottom (y < -w)", "near (z > 0)", "far (z < -w)")
W_PLANE_NAME = "w > 0 (w too small)"


def reg_text(regs: np.ndarray, name: str, fields: tuple[str, ...] = ()) -> str:
    """``NAME = 0xWORD (field meaning, ...)`` from the register table (all fields, or those named)."""
    reg = regtable.by_name(name)
    decoded = regtable.decode_fields(reg, int(regs[reg.id]))
    parts = [
        f"{f.name} {'on' if f.value is True else 'off' if f.value is False else f.text}"
        for f in decoded.fields
        if not fields or f.name in fields
    ]
    short = reg.name.removeprefix("GPUREG_")
    if (len(decoded.fields) == 1 and not fields) or len(fields) == 1:
        return f"{short} = {parts[0].split(' ', 1)[1]}"
    return f"{short} = 0x{decoded.value:08X} ({', '.join(parts)})"


def count_text(n: int, unit: str) -> str:
    return f"{n} {unit[:-1] if n == 1 else unit}"


def all_of(n: int, unit: str) -> str:
    """ "all 2 triangles" / "the 1 triangle"."""
    return f"the 1 {unit[:-1]}" if n == 1 else f"all {n} {unit}"


def verb(n: int, plural: str, singular: str) -> str:
    return singular if n == 1 else plural


@dataclass(frozen=True)
class Facts:
    """What the detail texts read."""

    session: Session
    draw: int
    regs: np.ndarray
    stats: dict
    watcher: DrawWatcher
    winding: dict[str, int]
    hiders: list[int]
    shown: str | None
    fb: fbm.FramebufferState | None


def _stage(stages: list[Stage], name: str) -> Stage:
    return next(s for s in stages if s.stage == name)


def _no_vertices(f: Facts, stages: list[Stage]) -> str:
    asked = f.stats["vertices"]
    if asked == 0:
        return f"the draw asks for no vertex ({reg_text(f.regs, 'NUMVERTICES')})"
    if regtable.access.raw(f.regs, "GEOSTAGE_CONFIG", "gs_use"):
        config = reg_text(f.regs, "GEOSTAGE_CONFIG", ("gs_use",))
        return f"the geometry shader emitted no triangle from {count_text(asked, 'vertices')} ({config})"
    topology = reg_text(f.regs, "PRIMITIVE_CONFIG", ("topology",))
    return f"{count_text(asked, 'vertices')} form no whole triangle ({topology})"


def _clipped(f: Facts, stages: list[Stage]) -> str:
    assembled = f.stats["primitives_assembled"]
    tris = f.watcher.clip_inputs
    clip = clipping.ClipState.from_regs(f.regs)
    names = [*PLANE_NAMES, W_PLANE_NAME, "user plane (FRAGOP_CLIP_DATA0-3)"][: len(clip.planes)]
    by_plane: dict[str, int] = {}
    if tris is not None and len(tris):
        side = tris.astype(np.float64) @ clip.planes.T + clip.offsets  # (T, 3, P)
        outside = (side < -clipping.INSIDE_EPS).all(axis=1)  # (T, P): every vertex outside plane p
        for t in np.flatnonzero(outside.any(axis=1)):
            name = names[int(np.argmax(outside[t]))]
            by_plane[name] = by_plane.get(name, 0) + 1
    parts = [f"{n} beyond the {name} plane" for name, n in by_plane.items()]
    if f.stats["primitives_invalid"]:
        parts.append(f"{f.stats['primitives_invalid']} with a non-finite position")
    if f.stats["primitives_clipped"]:
        parts.append(f"{f.stats['primitives_clipped']} cut to nothing")
    return (
        f"{all_of(assembled, 'triangles')} {verb(assembled, 'lie', 'lies')} outside the clip volume "
        "(-w <= x, y <= w, -w <= z <= 0): "
        f"{', '.join(parts)}; {reg_text(f.regs, 'FRAGOP_CLIP')}"
    )


def _culled(f: Facts, stages: list[Stage]) -> str:
    drop = clipping.CULL_DROPS[regtable.access.raw(f.regs, "FACECULLING_CONFIG", "mode")]
    n = _stage(stages, "face culling").into
    winding = "counter-clockwise" if drop > 0 else "clockwise"
    return f"{reg_text(f.regs, 'FACECULLING_CONFIG')}; {all_of(n, 'triangles')} {verb(n, 'are', 'is')} {winding}"


def _degenerate(f: Facts, stages: list[Stage]) -> str:
    zero = _stage(stages, "zero area")
    if zero.into and not zero.out:
        text = (
            f"{all_of(zero.into, 'triangles')} {verb(zero.into, 'have', 'has')} zero area in window coordinates "
            f"(12.4 fixed point): {verb(zero.into, 'their', 'its')} vertices are collinear or coincide"
        )
        culled = _stage(stages, "face culling")
        if culled.into != culled.out:
            text += f" (the other {culled.into - culled.out} were culled: {reg_text(f.regs, 'FACECULLING_CONFIG')})"
        return text
    raster = _stage(stages, "rasterization")
    size = f" of the {f.fb.width}x{f.fb.height} render target" if f.fb is not None else ""
    covers = verb(raster.into, "cover", "covers")
    return f"the {count_text(raster.into, 'triangles')} that reached the rasterizer {covers} no pixel centre{size}"


def _killed(what: str, text: Callable[[Facts], str]) -> Any:
    def detail(f: Facts, stages: list[Stage]) -> str:
        return f"{text(f)}; {all_of(_stage(stages, what).into, 'fragments')} that reached the {what} failed it"

    return detail


def _scissor_text(f: Facts) -> str:
    height = regtable.access.raw(f.regs, "FRAMEBUFFER_DIM", "height_minus_1") + 1
    _, box = scissor_rect(f.regs, height)
    where = f" (box at column {box[0]}, row {box[1]}, {box[2]}x{box[3]})" if box else ""
    return reg_text(f.regs, "SCISSORTEST_MODE") + where


def _alpha_text(f: Facts) -> str:
    text = reg_text(f.regs, "FRAGOP_ALPHA_TEST")
    fates = f.watcher.fates
    if fates is not None and fates.tev is not None:
        alpha = fates.tev[fates.fate == Fate.ALPHA, 3]
        if len(alpha):
            text += f"; their alpha was {int(alpha.min())}..{int(alpha.max())}"
    return text


def _depth_text(f: Facts) -> str:
    text = reg_text(f.regs, "DEPTH_COLOR_MASK", ("depth_test", "depth_func"))
    fates = f.watcher.fates
    if fates is not None and fates.fragments is not None:
        depth = fates.fragments.depth[fates.fate == Fate.DEPTH]
        if len(depth):
            text += f"; their depth was {float(depth.min()):.6g}..{float(depth.max()):.6g}"
    return text


def _color_mask(f: Facts, stages: list[Stage]) -> str:
    n = count_text(_stage(stages, "color write mask").into, "fragments")
    if not regtable.access.raw(f.regs, "COLORBUFFER_WRITE", "enable"):
        return f"{reg_text(f.regs, 'COLORBUFFER_WRITE')}: color writes are off; {n} passed every test"
    return f"{reg_text(f.regs, 'DEPTH_COLOR_MASK', CHANNELS)}: no channel is written; {n} passed every test"


def _overdrawn(f: Facts, stages: list[Stage]) -> str:
    n = _stage(stages, "overdraw").into
    draws = ", ".join(str(d) for d in f.hiders[:8]) + (", ..." if len(f.hiders) > 8 else "")
    frame = f.session.timeline.draws[f.draw].frame
    return f"all {count_text(n, 'pixels')} it wrote were replaced later in frame {frame} by draw(s) {draws}"


def _target(f: Facts) -> str:
    fb, where = f.fb, reg_text(f.regs, "COLORBUFFER_LOC")
    return where if fb is None else f"{where} ({fb.width}x{fb.height} {fb.color_format.name})"


def _not_displayed(f: Facts, stages: list[Stage]) -> str:
    n = count_text(_stage(stages, "display").into, "pixels")
    text = (
        f"its {n} went into the color buffer {_target(f)}, which no later display transfer, texture copy, "
        "present, LCD framebuffer or texture reads"
    )
    later = f.session.replay.events[f.session.timeline.draws[f.draw].event + 1 :]
    if not any(isinstance(ev, SHOWING_EVENTS) for ev in later):
        text += " (the capture ends before any display transfer, texture copy or present)"
    return text


def _visible(f: Facts, stages: list[Stage]) -> str:
    n = count_text(_stage(stages, "display").out, "pixels")
    return f"{n} of the color buffer {_target(f)} keep its color through its frame; {f.shown} reads it"


DETAILS = {
    "vertices loaded": _no_vertices,
    "vertices shaded": _no_vertices,
    "primitives assembled": _no_vertices,
    "clipping": _clipped,
    "face culling": _culled,
    "zero area": _degenerate,
    "rasterization": _degenerate,
    "scissor test": _killed("scissor test", _scissor_text),
    "alpha test": _killed("alpha test", _alpha_text),
    "stencil test": _killed("stencil test", lambda f: reg_text(f.regs, "STENCIL_TEST")),
    "depth test": _killed("depth test", _depth_text),
    "color write mask": _color_mask,
    "overdraw": _overdrawn,
    "display": _not_displayed,
    VISIBLE: _visible,
}
