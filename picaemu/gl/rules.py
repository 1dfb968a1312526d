"""Which draws the OpenGL backend hands to the software pipeline, and why (docs/gl.md).

``fallback_reason(ds) -> str | None`` names the first rule of ``RULES`` a draw's state uses that the generated
GLSL and GL's fixed-function stages do not reproduce, or None when the GL path renders the draw. Two kinds:

- rules GL cannot express exactly: PICA's min/max blend equations apply the blend factors (GL's ignore them);
  blending or a logic op into a color buffer of fewer than 8 bits per channel (GL keeps the 8-bit result between
  draws, the PICA quantizes it after every fragment); buffer reads disabled (COLORBUFFER_READ /
  DEPTHBUFFER_READ = 0: the destination reads 0 while the buffer keeps its bytes); color and depth buffers
  that share bytes (interleaved per fragment);
- shadow-map rendering: each fragment reads and conditionally rewrites the map's 32-bit word (depth minimum, or the
  intensity minimum of a quotient by the stored depth), in fragment order — blending cannot compute it, and image
  load/store on llvmpipe's GL 4.5 has no fragment ordering (no ARB_fragment_shader_interlock);
- stages not generated as GLSL (yet): gas modes (gas accumulation, fog mode gas); fragment lighting whose bump
  map or shadow term reads a disabled unit, and a draw state with a part that failed to decode (the software
  pipeline raises its error where it always does).
"""

from __future__ import annotations

from collections.abc import Callable

from picaemu.draw_state import DrawState
from picaemu.fragment import framebuffer as fbm
from picaemu.fragment import rules
from picaemu.fragment.rules import Equation, Source
from picaemu.gl.lightgen import units_read

MIN_MAX = frozenset(code for code, eq in rules.EQUATIONS.items() if eq in (Equation.MIN, Equation.MAX))
ONE = next(code for code, f in rules.FACTORS.items() if f.source is Source.ONE and not f.inverted)
# logic ops whose result does not depend on the destination: the truth table's d = 0 and d = 1 columns agree
SOURCE_ONLY_LOGIC = frozenset(code for code, t in rules.LOGIC_OPS.items() if t[0] == t[1] and t[2] == t[3])


def _failed(ds: DrawState) -> bool:
    return bool(ds.failed)


def _lighting_units(ds: DrawState) -> bool:
    """The lighting's bump map or shadow term reads a disabled unit (the software pipeline raises its error)."""
    if ds.lighting is None:
        return False
    return any(not ds.textures[u].enabled for u in units_read(ds.lighting))


def _shadow_rendering(ds: DrawState) -> bool:
    return ds.shadow is not None


def _gas(ds: DrawState) -> bool:
    """Gas accumulation (COLOR_OPERATION) or fog mode gas (the software pipeline raises its error)."""
    return (ds.blend.fragment_mode != "default" and ds.shadow is None) or ds.fog.mode == "gas"


def _min_max(ds: DrawState) -> bool:
    b = ds.blend
    if not b.blending:
        return False
    rgb = b.rgb_equation in MIN_MAX and (b.rgb_src, b.rgb_dst) != (ONE, ONE)
    alpha = b.alpha_equation in MIN_MAX and (b.alpha_src, b.alpha_dst) != (ONE, ONE)
    return rgb or alpha


def reads_destination(ds: DrawState) -> bool:
    """Blending, a logic op other than copy, or a partial color write mask."""
    b = ds.blend
    return b.blending or b.logic_op != rules.LOGIC_COPY or not all(ds.depth_stencil.color_mask)


def _low_precision_blend(ds: DrawState) -> bool:
    layout = fbm.COLOR_LAYOUTS[ds.framebuffer.color_format]
    return (
        ds.framebuffer.color_write
        and any(bits < 8 for _, _, bits in layout)
        and (ds.blend.blending or ds.blend.logic_op not in SOURCE_ONLY_LOGIC)
    )


def _reads_disabled(ds: DrawState) -> bool:
    fb, d = ds.framebuffer, ds.depth_stencil
    color = fb.color_write and not fb.color_read and reads_destination(ds)
    depth = d.uses_depth_buffer(fb.depth_format) and not fb.depth_read
    return color or depth


def _shared_bytes(ds: DrawState) -> bool:
    fb = ds.framebuffer
    color_size = fb.width * fb.height * fb.color_bpp
    depth_size = fb.width * fb.height * fb.depth_bpp
    return fb.color_address < fb.depth_address + depth_size and fb.depth_address < fb.color_address + color_size


RULES: tuple[tuple[str, Callable[[DrawState], bool]], ...] = (
    ("a draw state part failed to decode", _failed),
    ("shadow-map rendering (an ordered read-modify-write of the map per fragment: docs/gl.md)", _shadow_rendering),
    ("gas mode (not generated as GLSL)", _gas),
    ("fragment lighting reading a disabled texture unit", _lighting_units),
    ("min/max blend equation with factors other than one (GL ignores the factors)", _min_max),
    (
        "blend or logic op into a color buffer under 8 bits per channel (GL keeps 8 bits between draws)",
        _low_precision_blend,
    ),
    ("buffer reads disabled (the destination reads 0, GL reads the buffer)", _reads_disabled),
    ("color and depth buffers share bytes", _shared_bytes),
)


def fallback_reason(ds: DrawState) -> str | None:
    """The first rule of ``RULES`` the draw uses, or None (module docstring)."""
    for name, uses in RULES:
        if uses(ds):
            return name
    return None
