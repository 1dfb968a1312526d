"""Fragment debugging: one fragment of one draw, stage by stage. Qt-free.

``debug_fragment(session, draw, window, index) -> FragmentDebug`` re-runs ``draw`` twice from its nearest
checkpoint through ``probe.pixel_probe`` (only the pixel's 3x3 neighbourhood shaded):

- on the draw's own route (the compiled route for a covered draw, ``route`` names it): the fragment's fate,
  interpolated inputs, TEV output, and the color and depth buffers before and after it, as the compiled pass
  recorded them — what the frame shows;
- with a ``FragmentWatcher`` attached as the pipeline's stage observer, which sends the draw's color stages to the
  readable reference (the compiled shading keeps no intermediate values, as a GPU keeps none): the texture units,
  lighting, TEV stages and fog report their per-fragment values through ``picaemu.observer.StageObserver``'s
  fragment hooks, the depth/stencil tests their stored values (``fragment_tests``).

The two runs are compared fragment by fragment (``differences``: fate, TEV output, color written and after, depth
after); ``reference_differences`` lists any disagreement, so a per-stage value is never shown for a fragment the
frame did not draw that way. Nothing is recomputed here: the watcher keeps the rows of the asked pixel, and this
module joins them in rasterization order (the k-th fragment of the pixel that passed the scissor is the k-th
shaded row there; the k-th that reached the depth/stencil tests is the k-th tested one) and adds the draw's test
configuration from its decoded ``DrawState``.

``window`` is the pixel in window coordinates (x right, y up); ``index`` picks one of the draw's fragments at that
pixel (0 = the first rasterized; overlapping triangles of one draw give several). Values: colors RGBA 0..255,
texture coordinates s, t normalized (after the projective divide), LOD in levels (log2 of texels per pixel, bias
included), depths 0..1 beside the buffer's integer (16 or 24 bits), fog factor 0..1 (1 = no fog).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from picaemu import draw_state as ds_mod
from picaemu.debug import probe
from picaemu.debug.pixel import PixelObserver
from picaemu.debug.screen_map import RenderTarget
from picaemu.debug.session import Session
from picaemu.errors import PicaError
from picaemu.fragment import framebuffer as fbm
from picaemu.fragment.ops import Fate
from picaemu.raster.fragments import Fragments
from picaemu.regs import access
from picaemu.regs.blocks.tev import TEV_SOURCES

RGBA = tuple[int, ...]


@dataclass(frozen=True)
class TextureLookup:
    """One texture unit's lookup: coordinates as the sampler used them, LOD (None: the unit's filter needs none)
    and the filtered texel."""

    unit: int
    s: float
    t: float
    lod: float | None
    texel: RGBA


@dataclass(frozen=True)
class TevStageValues:
    """One TEV stage for the fragment: the sources and operand values its combine function received (only the slots
    it reads), its output and the combiner buffer it reads as "previous buffer"."""

    stage: int
    equation: str
    passthrough: bool
    rgb_sources: tuple[str, ...]
    rgb_operands: tuple[tuple[int, int, int], ...]
    alpha_sources: tuple[str, ...]
    alpha_operands: tuple[int, ...]
    output: RGBA
    buffer: RGBA


@dataclass(frozen=True)
class FragmentTest:
    """A per-fragment test: ``passed`` None when the fragment never reached it (or it does not apply), ``values``
    what it compared."""

    test: str
    enabled: bool
    passed: bool | None
    values: dict[str, Any]


@dataclass(frozen=True)
class FragmentDebug:
    """Everything about one fragment (module docstring); ``as_dict()`` is JSON-ready."""

    draw: int
    window: tuple[int, int]
    index: int
    fragments_at_pixel: int
    fate: str
    primitive: int | None
    depth: float | None
    w: float | None
    primary_color: tuple[float, ...] | None
    texcoords: tuple[tuple[float, ...], ...] | None
    textures: tuple[TextureLookup, ...]
    lighting: dict[str, RGBA] | None
    tev: tuple[TevStageValues, ...]
    tev_output: RGBA | None
    fog: dict[str, Any] | None
    tests: tuple[FragmentTest, ...]
    color_before: RGBA | None
    color_written: RGBA | None
    color_after: RGBA | None
    depth_before: float | None
    depth_after: float | None
    target: dict[str, Any] | None = None  # the render target: address (hex text), format, width, height
    route: str = ""  # the draw's route in the run that gave the fate and buffers ("compiled", or "reference: ...")
    reference_differences: tuple[str, ...] = ()  # where the per-stage run disagrees with it (module docstring)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class FragmentWatcher(PixelObserver):
    """Keeps the shading hooks' rows at one window pixel, one dict per shaded chunk (``chunks``)."""

    fragment_values = True

    def __init__(self, window: tuple[int, int]) -> None:
        super().__init__()
        self.window = window
        self.rows = np.zeros(0, np.intp)
        self.chunks: list[dict[str, Any]] = []

    def on_shade_begin(self, frags: Fragments) -> None:
        self.rows = np.flatnonzero((frags.x == self.window[0]) & (frags.y == self.window[1]))
        self.chunks.append({"count": len(self.rows), "textures": [], "tev": []})

    def on_texture(self, unit: int, st: np.ndarray, lod: np.ndarray | None, texels: np.ndarray) -> None:
        self.chunks[-1]["textures"].append(
            (unit, st[self.rows], None if lod is None else lod[self.rows], texels[self.rows])
        )

    def on_lighting(self, primary: np.ndarray, secondary: np.ndarray) -> None:
        self.chunks[-1]["lighting"] = (primary[self.rows], secondary[self.rows])

    def on_tev_stage(
        self, stage: int, rgb: np.ndarray, alpha: np.ndarray, output: np.ndarray, buffer: np.ndarray
    ) -> None:
        r = self.rows
        self.chunks[-1]["tev"].append((stage, rgb[:, r], alpha[:, r], output[r], buffer[r]))

    def on_fog(self, factor: np.ndarray | None, color: np.ndarray) -> None:
        self.chunks[-1]["fog"] = (None if factor is None else factor[self.rows], color[self.rows])

    def shaded(self, k: int) -> tuple[dict[str, Any], int]:
        """(chunk, row in it) of the k-th shaded fragment at the pixel."""
        for chunk in self.chunks:
            if k < chunk["count"]:
                return chunk, k
            k -= chunk["count"]
        raise probe.ProbeMismatch(f"pixel {self.window}: fewer shaded fragments than the fates say")


def _rgba(values: np.ndarray) -> RGBA:
    return tuple(int(v) for v in values)


def _rgb(values: np.ndarray) -> tuple[int, int, int]:
    """An RGB operand ((3,) uint8) as ints."""
    r, g, b = (int(v) for v in values)
    return r, g, b


def _textures(chunk: dict[str, Any], row: int) -> tuple[TextureLookup, ...]:
    return tuple(
        TextureLookup(
            unit, float(st[row, 0]), float(st[row, 1]), None if lod is None else float(lod[row]), _rgba(texels[row])
        )
        for unit, st, lod, texels in chunk["textures"]
    )


def _tev(chunk: dict[str, Any], row: int, tstate: Any, equations: list[str]) -> tuple[TevStageValues, ...]:
    out = []
    for stage, rgb, alpha, output, buffer in chunk["tev"]:
        st = tstate.stages[stage]
        rgb_slots, alpha_slots = st.slots_read("RGB"), st.slots_read("alpha")
        out.append(
            TevStageValues(
                stage,
                equations[stage],
                st.passthrough,
                tuple(TEV_SOURCES.get(st.rgb_sources[s], str(st.rgb_sources[s])) for s in rgb_slots),
                tuple(_rgb(rgb[s, row]) for s in rgb_slots),
                tuple(TEV_SOURCES.get(st.alpha_sources[s], str(st.alpha_sources[s])) for s in alpha_slots),
                tuple(int(alpha[s, row]) for s in alpha_slots if s < alpha.shape[0]),
                _rgba(output[row]),
                _rgba(buffer[row]),
            )
        )
    return tuple(out)


def _tests(
    regs: np.ndarray,
    ds: Any,
    record: probe.FragmentRecord,
    final_alpha: int | None,
    tested: tuple[int, int, int, bool, bool] | None,
) -> tuple[FragmentTest, ...]:
    """The scissor, alpha, stencil and depth tests of the fragment: configuration from the draw state, outcomes
    from the observers (``tested``: ``PixelObserver.tests``' entry, None when it never reached those tests)."""
    code = record.code
    rs, blend, dss, fb = ds.raster, ds.blend, ds.depth_stencil, ds.framebuffer
    mode = str(access.value(regs, "SCISSORTEST_MODE", "mode"))
    scissor = FragmentTest(
        "scissor",
        not mode.startswith("disabled"),
        code is not Fate.SCISSOR,
        {"mode": mode, "box": list(rs.scissor), "x": record.x, "y": record.y},
    )
    shaded = code is not Fate.SCISSOR and ds.shadow is None
    alpha = FragmentTest(
        "alpha",
        blend.alpha_test,
        (code is not Fate.ALPHA) if shaded else None,
        {"func": str(access.value(regs, "FRAGOP_ALPHA_TEST", "func")), "ref": blend.alpha_ref, "alpha": final_alpha},
    )
    stencil_values: dict[str, Any] = {
        "func": str(access.value(regs, "STENCIL_TEST", "func")),
        "ref": dss.stencil_ref,
        "input_mask": dss.stencil_input_mask,
        "write_mask": dss.stencil_write_mask,
    }
    scale = fbm.depth_max(fb.depth_format)
    depth_values: dict[str, Any] = {
        "func": str(access.value(regs, "DEPTH_COLOR_MASK", "depth_func")),
        "write": bool(dss.depth_write and fb.depth_write),
    }
    stencil_passed = depth_passed = None
    if tested is not None:
        frag_depth, stored_depth, stored_stencil, stencil_passed, depth_passed = tested
        stencil_values |= {
            "stored": stored_stencil,
            "ref_masked": dss.stencil_ref & dss.stencil_input_mask,
            "stored_masked": stored_stencil & dss.stencil_input_mask,
        }
        depth_values |= {
            "fragment": frag_depth / scale,
            "fragment_raw": frag_depth,
            "stored": stored_depth / scale,
            "stored_raw": stored_depth,
        }
        depth_passed = depth_passed if stencil_passed else None  # never reached after a stencil failure
    stencil_on = dss.stencil_active(fb.depth_format)
    return (
        scissor,
        alpha,
        FragmentTest("stencil", stencil_on, stencil_passed if stencil_on else None, stencil_values),
        FragmentTest("depth", dss.depth_test, depth_passed if dss.depth_test else None, depth_values),
    )


def debug_fragment(session: Session, draw: int, window: tuple[int, int], index: int = 0) -> FragmentDebug:
    """Fragment ``index`` of ``draw`` at window pixel ``window`` (module docstring). ``PicaError`` when the draw
    rasterized no such fragment there."""
    from picaemu.debug.state_views import tev_equations

    shown = probe.pixel_probe(session, draw, window)
    records = shown.fragments
    if not 0 <= index < len(records):
        raise PicaError(
            f"draw {draw} rasterized {len(records)} fragment(s) at window pixel {window}; there is no fragment {index}"
        )
    watcher = FragmentWatcher(window)
    staged = probe.pixel_fragments(session, draw, window, watcher)
    record = records[index]
    state = session.state_at_draw(draw)
    ds = ds_mod.build_draw_state(state)
    shaded_k = sum(r.code is not Fate.SCISSOR for r in records[:index])
    tested_k = sum(r.code in probe.TESTED for r in records[:index])
    tested = watcher.tests[tested_k] if watcher.tests and record.code in probe.TESTED else None
    textures: tuple[TextureLookup, ...] = ()
    tev: tuple[TevStageValues, ...] = ()
    lighting, fog, final_alpha = None, None, None
    if record.code is not Fate.SCISSOR:
        chunk, row = watcher.shaded(shaded_k)
        textures = _textures(chunk, row)
        tev = _tev(chunk, row, ds.tev, tev_equations(ds.tev))
        if "lighting" in chunk:
            lighting = {"primary": _rgba(chunk["lighting"][0][row]), "secondary": _rgba(chunk["lighting"][1][row])}
        factor, fogged = chunk["fog"]
        if factor is not None:
            fog = {"factor": float(factor[row]), "color": list(ds.fog.color), "result": _rgba(fogged[row])}
        final_alpha = int(fogged[row][3])
    t0, t1, t2 = record.texcoord0, record.texcoord1, record.texcoord2  # set together (shaded fragments)
    coords = None if t0 is None or t1 is None or t2 is None else (t0, t1, t2)
    return FragmentDebug(
        draw,
        window,
        index,
        len(records),
        record.fate,
        record.primitive,
        record.depth,
        record.w,
        record.color,
        coords,
        textures,
        lighting,
        tev,
        tev[-1].output if tev else None,
        fog,
        _tests(state.regs, ds, record, final_alpha, tested),
        record.color_before,
        record.blended,
        record.color_after,
        record.depth_before,
        record.depth_after,
        RenderTarget.of(fbm.FramebufferState.from_regs(state.regs)).as_dict(),
        shown.route,
        differences(records, staged),
    )


COMPARED = ("fate", "tev", "blended", "color_after", "depth_after")  # what both runs of a fragment must agree on


def differences(shown: tuple[probe.FragmentRecord, ...], staged: tuple[probe.FragmentRecord, ...]) -> tuple[str, ...]:
    """Where the per-stage run's fragments (``staged``) disagree with the route's (``shown``) at one pixel: one
    line per fragment and field of ``COMPARED`` ("fragment 1: tev (1, 2, 3, 4) on the route, (1, 2, 3, 5) in the
    reference"), or the fragment counts; () when they agree."""
    if len(shown) != len(staged):
        return (f"fragments at the pixel: {len(shown)} on the route, {len(staged)} in the reference",)
    out = []
    for k, (a, b) in enumerate(zip(shown, staged, strict=True)):
        for name in COMPARED:
            ours, theirs = getattr(a, name), getattr(b, name)
            if ours != theirs:
                out.append(f"fragment {k}: {name} {ours} on the route, {theirs} in the reference")
    return tuple(out)


RESULT_TEXT = {True: "passed", False: "FAILED", None: "not reached"}


def sections(frag: FragmentDebug) -> dict[str, dict[str, Any]]:
    """``frag`` as named sections of named values, in pipeline order (what the GUI's fragment tree and the CLI's
    text show): "fragment", "reference differences" (only when there are some), "texture N", "lighting", "TEV stage
    N", "fog", "<test> test", "buffers"."""
    out: dict[str, dict[str, Any]] = {
        "fragment": {
            "draw": frag.draw,
            "window pixel": frag.window,
            "fragment": f"{frag.index + 1} of {frag.fragments_at_pixel}",
            "fate": frag.fate,
            "primitive": frag.primitive,
            "depth": frag.depth,
            "w": frag.w,
            "primary color": frag.primary_color,
            "texcoords": frag.texcoords,
            "route": frag.route,
            "per-stage values": "the readable reference, which "
            + ("agrees with the route" if not frag.reference_differences else "DISAGREES with the route"),
        }
    }
    if frag.reference_differences:
        out["reference differences"] = {str(k): line for k, line in enumerate(frag.reference_differences)}
    for t in frag.textures:
        lod = "not used (the unit's filter needs none)" if t.lod is None else t.lod
        out[f"texture {t.unit}"] = {"s": t.s, "t": t.t, "lod": lod, "texel": t.texel}
    if frag.lighting:
        out["lighting"] = dict(frag.lighting)
    for st in frag.tev:
        values: dict[str, Any] = {"equation": st.equation.split(": ", 1)[1]}
        if not st.passthrough:
            values |= {
                f"rgb {i}: {name}": v for i, (name, v) in enumerate(zip(st.rgb_sources, st.rgb_operands, strict=True))
            }
            values |= {
                f"alpha {i}: {name}": v
                for i, (name, v) in enumerate(zip(st.alpha_sources, st.alpha_operands, strict=True))
            }
            values["buffer"] = st.buffer
        out[f"TEV stage {st.stage}"] = values | {"output": st.output}
    if frag.fog:
        out["fog"] = dict(frag.fog)
    for test in frag.tests:
        out[f"{test.test} test"] = {"result": RESULT_TEXT[test.passed] if test.enabled else "off"} | test.values
    out["buffers"] = {
        "color before": frag.color_before,
        "color written": frag.color_written,
        "color after": frag.color_after,
        "depth before": frag.depth_before,
        "depth after": frag.depth_after,
    }
    return out


def report_lines(frag: FragmentDebug) -> list[str]:
    """``sections(frag)`` as text: a line per section, an indented line per value (the CLI's output)."""
    lines = []
    for title, values in sections(frag).items():
        lines.append(f"{title}:")
        lines += [f"  {key}: {value}" for key, value in values.items()]
    return lines
