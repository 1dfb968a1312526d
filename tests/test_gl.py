"""The OpenGL backend (picaemu.gl) against the software pipeline: every bundled sample capture rendered by both,
frame by frame, within 2 levels on >= 99.5 % of the pixels (the figures are printed: run with -s); the fallback
rules named for the draws GL hands back; the coherence of GL render targets with emulated memory; the CLI.

The tests need an EGL display (Mesa's surfaceless platform, llvmpipe): without one they skip with the reason
printed, except when PICAEMU_REQUIRE_EGL is set (.ci/run sets it after installing the libraries), where the
missing EGL is an error.
"""

from __future__ import annotations

import dataclasses
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import picaemu
import picaemu.errors
import picaemu.replay
from picaemu.errors import BackendUnavailable
from picaemu.gl.compare import LEVELS, compare, difference_image
from picaemu.regs import id_of
from picaemu.regs.blocks.fragops import BLEND_EQUATIONS, LOGIC_OPS

REPO = Path(__file__).resolve().parent.parent
CAPTURES = sorted((REPO / "samples" / "captures").glob("*.pica"))
TARGET_WITHIN = 0.995  # the target: share of pixels within 2 levels on every scene


def _egl_missing() -> str | None:
    try:
        from picaemu.gl.context import shared_context

        shared_context()
    except BackendUnavailable as err:
        return str(err)
    return None


WHY = _egl_missing()
if WHY is not None and os.environ.get("PICAEMU_REQUIRE_EGL"):
    raise RuntimeError(f"PICAEMU_REQUIRE_EGL is set (.ci/run installed EGL) but {WHY}")
if WHY is not None:
    print(f"test_gl: skipped: {WHY}")
needs_egl = pytest.mark.skipif(WHY is not None, reason=WHY or "")


def frames(path: Path, backend: str) -> tuple[list[np.ndarray], picaemu.replay.Replay]:
    replay = picaemu.open(path, checkpoints=False, record_draws=False, backend=backend)
    shots = []
    for frame in range(len(replay.frames)):
        replay.run_to_frame(frame)
        shots.append(replay.screen())
    replay.run()
    shots.append(replay.screen())
    return shots, replay


# ---------------------------------------------------------------------------------------------- figures (no GL)
def test_compare_figures_by_hand() -> None:
    ref = np.zeros((2, 2, 3), np.uint8)
    other = ref.copy()
    other[0, 0] = (3, 0, 0)  # one pixel 3 levels off on one channel: over 2 levels
    other[1, 1] = (0, 2, 2)  # 2 levels: within
    d = compare(ref, other)
    assert d.max_error == 3 and d.share_over == 0.25 and d.pixels == 4
    mse = (9 + 4 + 4) / 12
    assert math.isclose(d.psnr, 10 * math.log10(255**2 / mse))
    assert math.isinf(compare(ref, ref).psnr)
    img = difference_image(ref, other)
    assert tuple(img[0, 0]) == (255, 0, 0) and tuple(img[1, 1]) == (32, 32, 32) and tuple(img[0, 1]) == (0, 0, 0)


# ---------------------------------------------------------------------------------------------- every sample
@needs_egl
@pytest.mark.parametrize("path", CAPTURES, ids=[p.stem for p in CAPTURES])
def test_sample_matches_software(path: Path) -> None:
    software, _ = frames(path, "software")
    gl, replay = frames(path, "gl")
    pipe = replay.pipeline
    for i, (a, b) in enumerate(zip(software, gl, strict=True)):
        d = compare(a, b)
        print(f"{path.stem} frame {i}: {d.line()}; GL draws {pipe.gl_draws}, fallbacks {dict(pipe.fallbacks)}")
        assert d.within >= TARGET_WITHIN, f"{path.stem} frame {i}: {d.line()}"
        assert d.max_error <= LEVELS or pipe.gl_draws, "a difference without a GL draw"


@needs_egl
def test_gl_renders_textured_scene_exactly() -> None:
    """Nearest sampling, TEV and the depth test of 300 draws: the same bytes as the software pipeline (texel
    boundaries and depth quantization come from the same float64 interpolation)."""
    path = REPO / "samples" / "captures" / "game_cubes_300.pica"
    software, _ = frames(path, "software")
    gl, replay = frames(path, "gl")
    assert replay.pipeline.gl_draws == 300 and not replay.pipeline.fallbacks
    assert all(np.array_equal(a, b) for a, b in zip(software, gl, strict=True))


@needs_egl
def test_proctex_renders_in_gl() -> None:
    """The procedural-texture sample: GL renders its draw (picaemu.gl.proctexgen), no fallback."""
    replay = picaemu.open(REPO / "samples" / "captures" / "proctex.pica", checkpoints=False, backend="gl")
    replay.run()
    assert replay.pipeline.gl_draws == 1 and not replay.pipeline.fallbacks


@needs_egl
def test_fallback_is_named(caplog: pytest.LogCaptureFixture) -> None:
    """A draw using a rule GL cannot express (a logic op reading a color buffer whose reads are disabled) runs in
    the software pipeline, named once in the log and counted; its pixels are the software's."""
    from picaemu.draw import DrawCall, DrawKind
    from picaemu.fragment.framebuffer import FramebufferState, read_color_image
    from picaemu.gl.backend import GLPipeline
    from picaemu.memory import PhysicalMemory
    from picaemu.pipeline import Pipeline
    from tests.test_lighting_golden import COLOR_ADDR, VBO, base_state, identity_vs, put, quad_vertices

    def draw(pipeline: Pipeline) -> np.ndarray:
        st = base_state((8, 9, 10, 11), None)  # o1 = the quad's second attribute as the vertex color
        put(st, "TEXENV0_SOURCE", rgb_src0=0, alpha_src0=0)
        put(st, "COLORBUFFER_READ", enable=0)
        st.regs[id_of("LOGIC_OP")] = 0
        put(st, "LOGIC_OP", op=next(c for c, n in LOGIC_OPS.items() if n == "xor"))  # reads the destination
        vertices = quad_vertices()
        fb = FramebufferState.from_regs(st.regs)
        mem = PhysicalMemory()
        mem.write(COLOR_ADDR, bytes(range(256)) * (fb.width * fb.height * 4 // 256))
        mem.write(VBO, vertices.tobytes())
        put(st, "NUMVERTICES", count=len(vertices))
        put(st, "PRIMITIVE_CONFIG", topology=0)
        for index in range(2):
            pipeline.draw(DrawCall(index, DrawKind.ARRAYS, st, mem))
        if hasattr(pipeline, "sync"):
            pipeline.sync()
        return read_color_image(mem, fb)

    software = draw(Pipeline(vertex_shader=identity_vs))
    gl_pipe = GLPipeline(vertex_shader=identity_vs)
    gl = draw(gl_pipe)
    rule = "buffer reads disabled"
    assert gl_pipe.gl_draws == 0 and [n for n, c in gl_pipe.fallbacks.items() if n.startswith(rule) and c == 2]
    named = [r for r in caplog.records if rule in r.getMessage() and "software pipeline" in r.getMessage()]
    assert len(named) == 1 and "draw #0" in named[0].getMessage()
    assert np.array_equal(software, gl)


@needs_egl
def test_min_max_with_factors_falls_back() -> None:
    from picaemu.gl import rules

    captured = []
    replay = picaemu.open(REPO / "samples" / "captures" / "blending.pica", checkpoints=False)
    replay.processor.pipeline = _Spy(replay.processor.pipeline, captured)
    replay.run()
    ds = captured[-1]
    assert rules.fallback_reason(ds) is None
    minimum = next(c for c, n in BLEND_EQUATIONS.items() if n == "min")
    with_factor = dataclasses.replace(
        ds, blend=dataclasses.replace(ds.blend, blending=True, rgb_equation=minimum, rgb_src=6)
    )
    assert rules.fallback_reason(with_factor).startswith("min/max blend equation")
    plain = dataclasses.replace(
        ds, blend=dataclasses.replace(ds.blend, blending=True, rgb_equation=minimum, rgb_src=1, rgb_dst=1)
    )
    assert rules.fallback_reason(plain) is None  # min/max of the plain colors: GL's own
    gas_fog = dataclasses.replace(ds, fog=dataclasses.replace(ds.fog, mode="gas"))
    assert rules.fallback_reason(gas_fog).startswith("gas mode")  # the software pipeline raises its error
    gas_ops = dataclasses.replace(ds, blend=dataclasses.replace(ds.blend, fragment_mode="gas accumulation"))
    assert rules.fallback_reason(gas_ops).startswith("gas mode")


class _Spy:
    def __init__(self, inner: object, seen: list) -> None:
        self.inner, self.seen = inner, seen

    def draw(self, call: object) -> None:
        self.seen.append(call.draw_state)  # type: ignore[attr-defined]
        self.inner.draw(call)  # type: ignore[attr-defined]

    def event(self, kind: object, state: object) -> None:
        self.inner.event(kind, state)  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------------- memory coherence
@needs_egl
def test_memory_holds_gl_results_at_every_view() -> None:
    """The color buffer read through the replay (a sync) equals the software one, and stepping back (restore)
    then forward again renders the same (GL re-uploads what memory holds)."""
    path = REPO / "samples" / "captures" / "animation.pica"
    sw = picaemu.open(path)
    gl = picaemu.open(path, backend="gl")
    for frame in (2, 0, 3):
        sw.run_to_frame(frame)
        gl.run_to_frame(frame)
        assert np.array_equal(sw.color_buffer(), gl.color_buffer()), f"frame {frame}"
        assert np.array_equal(sw.depth_buffer()[0], gl.depth_buffer()[0]), f"frame {frame}"
    targets = gl.pipeline.targets.targets.values()
    assert sum(t.write_backs for t in targets) >= 3 and not any(t.dirty for t in targets)


# ---------------------------------------------------------------------------------------------- CLI
@needs_egl
def test_diff_backends_cli(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from picaemu.cli import main

    result = CliRunner().invoke(
        main, ["diff-backends", str(REPO / "samples" / "captures" / "blending.pica"), "-o", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert "max error 1, 0.000 % of 96000 pixels over 2 levels" in result.output
    assert "GL draws: 4; software fallbacks: none" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["difference.png", "gl.png", "software.png"]


def test_backend_unavailable_is_one_line(tmp_path: Path) -> None:
    """Without an EGL vendor (glvnd finds none) ``--backend gl`` fails with one line and status 2."""
    env = dict(os.environ, __EGL_VENDOR_LIBRARY_FILENAMES=str(tmp_path / "none.json"))
    command = [
        sys.executable,
        "-c",
        "from picaemu.cli import main; main()",
        "render",
        str(CAPTURES[0]),
        "-o",
        str(tmp_path / "x.png"),
        "--backend",
        "gl",
    ]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    if proc.returncode == 0:
        pytest.skip("this libEGL does not select vendors by __EGL_VENDOR_LIBRARY_FILENAMES (not glvnd)")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "EGL" in lines[0], proc.stderr


def test_unknown_backend_is_refused() -> None:
    with pytest.raises(picaemu.errors.PicaError, match="unknown rendering backend 'vulkan'"):
        picaemu.open(CAPTURES[0], backend="vulkan")
