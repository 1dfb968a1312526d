"""Why a draw left nothing on screen: where its work went, stage by stage, and the first stage that removed all of
it (``picaemu why``, the debugger's "Why?" action). Qt-free; no pipeline rule is re-implemented here.

``explain(session, draw) -> Why`` re-runs the draw from its nearest checkpoint with a ``DrawWatcher`` attached (a
stage observer asking for the triangles before and after clipping and for every fragment's fate) and reads:

- the pipeline's own counters of the re-run (``picaemu.pipeline.STAT_KEYS``): vertices asked, loaded and shaded,
  triangles assembled, kept by clipping, rasterized; fragments rasterized, killed by scissor / alpha / stencil /
  depth, written;
- the split the counters do not make, from the observer: the culling pass drops back-facing and zero-area
  triangles under one counter (``primitives_culled``); the clipped triangles' window positions
  (``clipping.to_window``) and signed areas (``clipping.signed_area``) under the draw's FACECULLING_CONFIG
  (``clipping.CULL_DROPS``) tell them apart; the split must add up to the counter (``WhyMismatch`` otherwise);
- the color write mask: WRITTEN fragments change the color buffer only when COLORBUFFER_WRITE is on and
  DEPTH_COLOR_MASK writes a channel (a shadow-map draw always writes);
- overdraw: the pixels the draw left its color in, re-checked against the later draws of its frame that render
  into the same color buffer and whose recorded window bounds reach them (each re-run with fates, the draws in
  between run unobserved): a pixel is overdrawn when a later fragment was written there and left the pixel
  holding that fragment's own shaded color (quantized to the buffer's format), so a later translucent draw that
  lets this one show through does not count;
- display: the color buffer must be read by something after the draw: a display transfer's or texture copy's
  source, a present, the LCD framebuffers as the replay holds them after the draw's frame, or a later draw's
  texture.

Stages are ``Stage(stage, unit, into, out)`` (JSON "in" / "out") in pipeline order (``STAGES``: name -> verdict
when it removes all that reached it); the verdict is the first stage with ``in > 0`` and ``out == 0``
(``no-vertices`` when the draw asks for none), else ``visible``; ``Why.decided_by`` names that stage (``VISIBLE``
when none). ``detail`` names the register that decided it with its value and meaning, from the register table
(``picaemu.regs``). Units: vertices, triangles, fragments, then pixels (overdraw and display count the distinct
pixels the draw left its color in). JSON: docs/why.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from picaemu import regs as regtable
from picaemu.debug import state_views
from picaemu.debug.probe import rerun, rerun_observed
from picaemu.debug.session import Session
from picaemu.debug.why_detail import CHANNELS, DETAILS, VISIBLE, Facts
from picaemu.draw import DrawCall
from picaemu.errors import PicaError
from picaemu.formats import pica
from picaemu.fragment import framebuffer as fbm
from picaemu.fragment.ops import Fate
from picaemu.geometry import clipping
from picaemu.gx import lcd
from picaemu.gx.engines import BYTES_PER_PIXEL, TransferFlags, copy_line
from picaemu.observer import StageObserver
from picaemu.pipeline import FragmentFates

# stage -> (unit of its counts, verdict when it removes everything that reached it), in pipeline order
STAGES: dict[str, tuple[str, str]] = {
    "vertices loaded": ("vertices", "no-vertices"),
    "vertices shaded": ("vertices", "no-vertices"),
    "primitives assembled": ("triangles", "no-vertices"),
    "clipping": ("triangles", "clipped"),
    "face culling": ("triangles", "culled"),
    "zero area": ("triangles", "degenerate"),
    "rasterization": ("fragments", "degenerate"),
    "scissor test": ("fragments", "scissor"),
    "alpha test": ("fragments", "alpha-test"),
    "stencil test": ("fragments", "stencil"),
    "depth test": ("fragments", "depth"),
    "color write mask": ("fragments", "color-mask"),
    "overdraw": ("pixels", "overdrawn"),
    "display": ("pixels", "not-displayed"),
}
# stages whose in and out count the same things, so that in - out is what the stage removed
REMOVING = frozenset(STAGES) - {"vertices loaded", "vertices shaded", "primitives assembled", "rasterization"}
VERDICTS = (VISIBLE, *dict.fromkeys(v for _, v in STAGES.values()))
# what a present can scan: the panel's memory rows (scanlines, the top screen's wide mode included) times the stride
PRESENT_ROWS = {s: lcd.RESET_ROWS[s] * lcd.SCANLINES_PER_ROW[s] for s in lcd.RESET_ROWS}


class WhyMismatch(PicaError):
    """The observer's split of the culled triangles does not add up to the pipeline's counter (a pipeline change
    broke this module's assumptions)."""


@dataclass(frozen=True)
class Stage:
    stage: str
    unit: str
    into: int
    out: int

    def as_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "unit": self.unit, "in": self.into, "out": self.out}


@dataclass(frozen=True)
class Why:
    """The answer for one draw: its global index and frame, the verdict, the stage table, the detail text and the
    stage that decided the verdict (``decided_by``: a ``STAGES`` name, or ``VISIBLE``; not in the JSON)."""

    draw: int
    frame: int
    verdict: str
    stages: tuple[Stage, ...]
    detail: str
    decided_by: str = VISIBLE

    def as_dict(self) -> dict[str, Any]:
        return {
            "draw": self.draw,
            "frame": self.frame,
            "verdict": self.verdict,
            "stages": [s.as_dict() for s in self.stages],
            "detail": self.detail,
        }


@dataclass
class DrawWatcher(StageObserver):
    """Watches one draw: its clipped triangles' window areas (``on_triangles``) and fragment fates."""

    draw: int
    fragment_fates = True
    call: DrawCall | None = None
    clip_inputs: np.ndarray | None = None  # (T, 3, 4) float32 clip-space positions of the assembled triangles
    areas: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # (T',) of the clipped triangles
    fates: FragmentFates | None = None

    def on_triangles(self, call: DrawCall, assembled: np.ndarray, clipped: np.ndarray) -> None:
        if call.index != self.draw:
            return
        self.clip_inputs = np.array(assembled[:, :, :4])
        wt = clipping.to_window(clipped, np.arange(clipped.shape[0]), call.draw_state.viewport)
        self.areas = clipping.signed_area(wt)

    def on_fragments(self, call: DrawCall, fates: FragmentFates) -> None:
        if call.index == self.draw:
            self.call, self.fates = call, fates


# -- the stage table ---------------------------------------------------------------------------------------
def _geometry_stages(stats: dict, watcher: DrawWatcher, cull_mode: int) -> tuple[list[Stage], dict[str, int]]:
    """Vertex to rasterizer stages, and the culling split (``counts``: ccw, cw, zero, face_culled)."""
    areas = watcher.areas
    drop = clipping.CULL_DROPS[cull_mode]
    zero = int(np.count_nonzero(areas == 0))
    face = int(np.count_nonzero((areas != 0) & (np.sign(areas) == drop))) if drop else 0
    if face + zero != stats["primitives_culled"]:
        raise WhyMismatch(
            f"draw {watcher.draw}: {face} back-facing + {zero} zero-area triangles, but the pipeline culled "
            f"{stats['primitives_culled']}"
        )
    kept_clip = len(areas)
    stages = [
        Stage("vertices loaded", "vertices", stats["vertices"], stats["vertices_loaded"]),
        Stage("vertices shaded", "vertices", stats["vertices_loaded"], stats["vertices_shaded"]),
        Stage("primitives assembled", "triangles", stats["vertices"], stats["primitives_assembled"]),
        Stage("clipping", "triangles", stats["primitives_assembled"], kept_clip),
        Stage("face culling", "triangles", kept_clip, kept_clip - face),
        Stage("zero area", "triangles", kept_clip - face, stats["primitives_rasterized"]),
    ]
    counts = {"ccw": int(np.count_nonzero(areas > 0)), "cw": int(np.count_nonzero(areas < 0)), "zero": zero}
    return stages, counts


def _fragment_stages(stats: dict) -> list[Stage]:
    rasterized = stats["fragments_rasterized"]
    stages = [Stage("rasterization", "fragments", stats["primitives_rasterized"], rasterized)]
    left = rasterized
    for name, key in (
        ("scissor test", "killed_scissor"),
        ("alpha test", "killed_alpha"),
        ("stencil test", "killed_stencil"),
        ("depth test", "killed_depth"),
    ):
        stages.append(Stage(name, "fragments", left, left - stats[key]))
        left -= stats[key]
    return stages


def colors_written(regs: np.ndarray, fates: FragmentFates | None) -> bool:
    """Whether a WRITTEN fragment of the draw changes the color buffer: a shadow-map draw always writes; else
    COLORBUFFER_WRITE and at least one channel of DEPTH_COLOR_MASK."""
    if fates is not None and fates.shadow:
        return True
    mask = any(regtable.access.raw(regs, "DEPTH_COLOR_MASK", c) for c in CHANNELS)
    return bool(fates.color_written if fates is not None else True) and mask


def _written_pixels(fates: FragmentFates | None, fb: fbm.FramebufferState, colored: bool) -> np.ndarray:
    """(H * W,) bool over tiled pixel indices: the pixels a WRITTEN fragment of the draw reached (none when its
    writes do not change the color buffer)."""
    alive = np.zeros(fb.width * fb.height, bool)
    if fates is None or not colored:
        return alive
    keep = fates.fate == Fate.WRITTEN
    keep &= (fates.x >= 0) & (fates.x < fb.width) & (fates.y >= 0) & (fates.y < fb.height)
    alive[fbm.pixel_index(fates.x[keep], fates.y[keep], fb.width, fb.height, fb.flipped)] = True
    return alive


def replaced_pixels(fates: FragmentFates, fb: fbm.FramebufferState) -> np.ndarray:
    """Tiled pixel indices where a WRITTEN fragment left the pixel holding its own shaded color (RGB, quantized to
    the color buffer's format): whatever was there before no longer shows."""
    if fates.shadow or not fates.color_written or fates.tev is None or fates.color_after is None:
        return np.zeros(0, np.int64)
    keep = fates.fate == Fate.WRITTEN
    keep &= (fates.x >= 0) & (fates.x < fb.width) & (fates.y >= 0) & (fates.y < fb.height)
    idx = np.flatnonzero(keep)
    own = fbm.decode_color(fbm.encode_color(fates.tev[idx], fb.color_format), fb.color_format)
    idx = idx[(own[:, :3] == fates.color_after[idx, :3]).all(axis=1)]
    return fbm.pixel_index(fates.x[idx], fates.y[idx], fb.width, fb.height, fb.flipped)


# -- who reads the color buffer after the draw -----------------------------------------------------------------
def _event_reads(ev: pica.Event) -> list[tuple[int, int, str]]:
    """(start, end, what) byte ranges an event reads and shows or copies on."""
    if isinstance(ev, pica.DisplayTransfer):
        flags = TransferFlags.from_word(ev.flags)
        width, height = ev.in_dim & 0xFFFF, ev.in_dim >> 16
        size = width * height * BYTES_PER_PIXEL.get(flags.in_format, 4)
        return [(ev.src, ev.src + size, f"the display transfer from 0x{ev.src:08X}")]
    if isinstance(ev, pica.TextureCopy):
        width, gap = copy_line(ev.in_line)
        span = ev.size + (ev.size // width) * gap if width else ev.size
        return [(ev.src, ev.src + span, f"the texture copy from 0x{ev.src:08X}")]
    if isinstance(ev, pica.Present):
        span = ev.stride * PRESENT_ROWS.get(ev.screen, max(PRESENT_ROWS.values()))
        return [(a, a + span, f"the present of screen {ev.screen} at 0x{a:08X}") for a in {ev.left, ev.right}]
    return []


def _lcd_reads(gpu: np.ndarray) -> list[tuple[int, int, str]]:
    """The framebuffers the LCD registers scan out (both screens, both eyes)."""
    out = []
    for name, screen in lcd.SCREENS.items():
        for eye in lcd.EYES:
            try:
                cfg = lcd.ScreenConfig.from_regs(gpu, screen, eye)
            except PicaError:
                continue
            end = cfg.address + cfg.stride * max(cfg.rows, 1)
            out.append((cfg.address, end, f"the {name} LCD framebuffer at 0x{cfg.address:08X}"))
    return out


def shown_by(session: Session, draw: int, fb: fbm.FramebufferState) -> str | None:
    """What shows or reads draw ``draw``'s color buffer after it (a text), or None: a later display transfer,
    texture copy or present, the LCD framebuffers as the replay holds them, or a later draw's texture."""
    start, end = fb.color_address, fb.color_address + fb.width * fb.height * fb.color_bpp
    tl = session.timeline
    events = session.replay.events
    reads = [r for ev in events[tl.draws[draw].event + 1 :] for r in _event_reads(ev)]
    reads += _lcd_reads(session.replay.gx.gpu)
    for lo, hi, what in reads:
        if lo < end and start < hi:
            return what
    seen: set[bytes] = set()
    tex_ids = _texture_ids()
    for later in range(draw + 1, len(tl.draws)):
        regs = session.state_at_draw(later).regs
        key = regs[tex_ids].tobytes()
        if key in seen:
            continue
        seen.add(key)
        for tex in state_views.bound_textures(session.state_at_draw(later)):
            if tex.enabled and any(start <= a < end for a in tex.addresses):
                return f"draw {later}'s texture unit {tex.unit}"
    return None


def _texture_ids() -> np.ndarray:
    """Register ids of the texture units' configuration (what ``bound_textures`` reads)."""
    return np.array([r.id for r in regtable.all_registers() if r.block == "texturing"], np.int64)


# -- overdraw ------------------------------------------------------------------------------------------------
def _box(fates: FragmentFates) -> tuple[int, int, int, int]:
    """Window box (x0, y0, x1, y1) of the draw's WRITTEN fragments."""
    keep = fates.fate == Fate.WRITTEN
    x, y = fates.x[keep], fates.y[keep]
    return int(x.min()), int(y.min()), int(x.max()), int(y.max())


def _same_target(a: fbm.FramebufferState, b: fbm.FramebufferState) -> bool:
    return (a.color_address, a.width, a.height, a.color_format) == (b.color_address, b.width, b.height, b.color_format)


def _collect(into: list[FragmentFates], draw: int) -> Any:
    """A fates callback keeping draw ``draw``'s fates in ``into``."""

    def keep(call: DrawCall, fates: FragmentFates) -> None:
        if call.index == draw:
            into.append(fates)

    return keep


def overdraw(session: Session, draw: int, fb: fbm.FramebufferState, alive: np.ndarray, box: tuple) -> list[int]:
    """Clear in ``alive`` the pixels later draws of the draw's frame replaced (``replaced_pixels``); returns those
    draws. Only draws into the same color buffer whose recorded bounds reach ``box`` are re-run with fates, from
    the position right after ``draw`` (the draws in between run unobserved)."""
    tl = session.timeline
    frame = tl.draws[draw].frame
    x0, y0, x1, y1 = box
    hiders = []
    for later in tl.draws[draw + 1 :]:
        if later.frame != frame or not alive.any():
            break
        b = later.bounds
        if b is None or b[0] > x1 or b[2] < x0 or b[1] > y1 or b[3] < y0:
            continue
        try:
            other = fbm.FramebufferState.from_regs(session.state_at_draw(later.index).regs)
        except PicaError:
            continue
        if not _same_target(fb, other):
            continue
        seen: list[FragmentFates] = []
        rerun(session, tl.before_draw(later.index), tl.after_draw(later.index), _collect(seen, later.index))
        hit = np.concatenate([replaced_pixels(f, fb) for f in seen]) if seen else np.zeros(0, np.int64)
        if alive[hit].any():
            hiders.append(later.index)
            alive[hit] = False
    return hiders


# -- the answer --------------------------------------------------------------------------------------------
def explain(session: Session, draw: int) -> Why:
    """Where draw ``draw``'s work went (module docstring). Moves the session; leaves it valid (no dirty state)."""
    tl = session.timeline
    if tl is None or not 0 <= draw < len(tl.draws):
        raise PicaError(f"draw {draw} outside 0..{len(tl.draws) - 1 if tl else -1}")
    state = session.state_at_draw(draw)
    regs = state.regs
    watcher = DrawWatcher(draw)
    rerun_observed(session, tl.before_draw(draw), tl.after_draw(draw), watcher)
    stats = dict(watcher.call.stats) if watcher.call is not None else dict(tl.draws[draw].stats)
    cull_mode = regtable.access.raw(regs, "FACECULLING_CONFIG", "mode")
    stages, winding = _geometry_stages(stats, watcher, cull_mode)
    stages += _fragment_stages(stats)
    fates = watcher.fates
    colored = colors_written(regs, fates)
    written = int(stats["fragments_written"])  # counted only when COLORBUFFER_WRITE is on
    stages.append(Stage("color write mask", "fragments", stages[-1].out, written if colored else 0))
    fb = _framebuffer(regs)
    alive = _written_pixels(fates, fb, colored) if fb is not None and written else np.zeros(0, bool)
    pixels = int(alive.sum())
    hiders = []
    if pixels and fb is not None and fates is not None:  # pixels: the draw had a target and wrote fragments
        hiders = overdraw(session, draw, fb, alive, _box(fates))
    left = int(alive.sum())
    shown = shown_by(session, draw, fb) if left and fb is not None else None
    stages += [Stage("overdraw", "pixels", pixels, left), Stage("display", "pixels", left, left if shown else 0)]
    verdict, decisive = _verdict(stages)
    facts = Facts(session, draw, regs, stats, watcher, winding, hiders, shown, fb)
    return Why(draw, tl.draws[draw].frame, verdict, tuple(stages), DETAILS[decisive](facts, stages), decisive)


def _framebuffer(regs: np.ndarray) -> fbm.FramebufferState | None:
    """The draw's render targets, or None when its registers name none usable (then it wrote no pixel either)."""
    try:
        return fbm.FramebufferState.from_regs(regs)
    except PicaError:
        return None


def _verdict(stages: list[Stage]) -> tuple[str, str]:
    """(verdict, stage that decided it): the first stage that removed everything that reached it."""
    if stages[0].into == 0:
        return STAGES[stages[0].stage][1], stages[0].stage
    for s in stages:
        if s.into > 0 and s.out == 0:
            return STAGES[s.stage][1], s.stage
    return VISIBLE, VISIBLE
