"""Generated fragment shaders: one GLSL program per *program key*, the structural part of a draw's state.

``program_key(ds) -> ProgramKey`` keeps what changes the code (the rows of the TEV program, ``tev.TevProgram``:
sources/operands/ops/scales and where "previous" and the combiner buffer come from; each used texture unit's type,
filters, wrap modes and coordinate set, fog on/z-flip, alpha test function, scissor mode, depth output and W-buffer,
the color format's quantization); ``uniform_block(ds)`` packs the values (TEV constants and buffer color, border
colors, LOD bias and levels, alpha reference, scissor box, depth map, fog color and LUT) into the std140 block of
``glsl_lib.UNIFORM_BLOCK``, so draws that differ only in values share a program. ``fragment_source(key)`` writes the
shader.

The shader mirrors the software path fragment by fragment: perspective-correct varyings divided by the interpolated
1/w, depth = z/w * scale + offset (times w in W-buffer mode) clamped and truncated to the buffer's integer q
(written as q / 2^24, ``picaemu.gl.targets``), texture units (``picaemu.texture.sampler``: type transforms, wrap,
nearest/bilinear with its float32 weights, LOD from the neighbours' coordinates as the software takes them
(``glsl_lib.derivative_function``), mip selection), primary color rounding, the TEV program's stages in integers
(``picaemu.color.tev_program``, one ``out{i}`` per stage that computes), fog (``picaemu.color.fog``), alpha test,
scissor; shadow textures (depth compare of the nearest texel, ``picaemu.fragment.shadow.shadow_compare``); fragment
lighting (``picaemu.gl.lightgen``) and the procedural texture (``picaemu.gl.proctexgen``) when the TEV reads them.
Shadow-map rendering and gas modes are not generated: those draws go to the software pipeline
(``picaemu.gl.rules``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from picaemu.color import tev
from picaemu.draw_state import DrawState
from picaemu.fragment import framebuffer as fbm
from picaemu.geometry import output_map as om
from picaemu.gl import glsl_lib, lightgen, proctexgen
from picaemu.raster.rasterizer import SCISSOR_EXCLUDE, SCISSOR_INCLUDE
from picaemu.texture.state import CUBE_TYPES, SHADOW_TYPES, TextureUnitState

COORD_COLUMNS = {"texcoord0": om.TC0.start - 4, "texcoord1": om.TC1.start - 4, "texcoord2": om.TC2.start - 4}
TC0W_COLUMN, COLOR_COLUMN = om.TC0W - 4, om.COLOR.start - 4
RGBA = "rgba"
NO_CONSTANT = (0, 0, 0, 0)


@dataclass(frozen=True)
class UnitKey:
    unit: int
    cube: bool
    projection: bool
    column: int  # first varying column of its coordinates
    mag_linear: bool
    min_linear: bool
    mip_linear: bool
    needs_lod: bool
    wrap_s: int
    wrap_t: int
    shadow: bool  # a shadow texture: depth compare of the nearest texel of the first level (shadow_lookup)


@dataclass(frozen=True)
class ProgramKey:
    stages: tuple[tev.StageRow | None, ...]  # the TEV program's rows, constants ``NO_CONSTANT``; None: pass-through
    tev_result: int  # the stage whose output is the combiner's (``TevProgram.result``)
    units: tuple[UnitKey | None, ...]  # None: the unit is not read (or disabled: reads 0)
    fog: bool
    fog_z_flip: bool
    alpha_func: int | None
    scissor_mode: int
    depth_out: bool
    w_buffer: bool
    quantize: tuple[tuple[int, int], ...] | None  # (channel, bits) of a < 8-bit color format written unblended
    lighting: lightgen.LightingKey | None  # None: the TEV reads no lighting, or lighting is off (reads 0)
    proctex: proctexgen.ProctexKey | None  # None: the TEV reads no unit 3, or unit 3 is off (reads 0)


def unit_key(ustate: TextureUnitState) -> UnitKey:
    shadow = ustate.type in SHADOW_TYPES
    divide = ustate.type == "projection" or (ustate.type == "shadow 2D" and not ustate.shadow_ortho)
    return UnitKey(
        ustate.unit,
        ustate.type in CUBE_TYPES,
        divide,
        COORD_COLUMNS[ustate.coords],
        ustate.mag_linear,
        ustate.min_linear,
        ustate.mip_linear,
        ustate.needs_lod and not shadow,
        ustate.wrap_s,
        ustate.wrap_t,
        shadow,
    )


def _stage_key(row: tev.StageRow) -> tev.StageRow | None:
    """The program row without its stage's constant color (a uniform), None for a pass-through stage."""
    return dataclasses.replace(row, stage=dataclasses.replace(row.stage, constant=NO_CONSTANT)) if row.active else None


def units_used(ds: DrawState) -> tuple[TextureUnitState, ...]:
    """The enabled texture units the TEV or the fragment lighting (bump map, shadow term) reads."""
    used = ds.tev.sources_used()
    lit = lightgen.units_read(ds.lighting) if ds.lighting is not None else frozenset()
    return tuple(u for u in ds.textures if u.enabled and (tev.SRC_TEXTURES[u.unit] in used or u.unit in lit))


def program_key(ds: DrawState, depth_out: bool, quantize: bool) -> ProgramKey:
    """The structural state of a draw (``depth_out``: it uses the depth buffer; ``quantize``: its color is written
    unblended into a buffer of fewer than 8 bits per channel)."""
    ts = ds.tev
    read = {u.unit for u in units_used(ds)}
    units = tuple(unit_key(u) if u.unit in read else None for u in ds.textures)
    layout = fbm.COLOR_LAYOUTS[ds.framebuffer.color_format]
    return ProgramKey(
        stages=tuple(_stage_key(row) for row in ts.program.rows),
        tev_result=ts.program.result,
        units=units,
        fog=ds.fog.mode == "fog",
        fog_z_flip=ds.fog.z_flip,
        alpha_func=ds.blend.alpha_func if ds.blend.alpha_test else None,
        scissor_mode=ds.raster.scissor_mode,
        depth_out=depth_out,
        w_buffer=ds.raster.w_buffer,
        quantize=tuple((ch, bits) for ch, _, bits in layout) if quantize else None,
        lighting=lightgen.lighting_key(ds.lighting) if ds.lighting is not None else None,
        proctex=proctexgen.proctex_key(ds.proctex, COORD_COLUMNS[ds.shading.proctex_coords])
        if ds.proctex is not None
        else None,
    )


def takes_derivatives(key: ProgramKey) -> bool:
    """The program evaluates neighbour fragments for a LOD (a unit that needs one, or the procedural texture's)."""
    units = any(u is not None and u.needs_lod for u in key.units)
    return units or (key.proctex is not None and key.proctex.lod_from_derivatives)


# ---------------------------------------------------------------------------------------------- uniform values
FOG_ROWS = 6 + 1 + 3 + 3 + 1 + 1 + 1 + 1 + 64  # 16-byte rows of the std140 block up to the fog LUT
PROCTEX_ROW = FOG_ROWS + lightgen.LIGHT_ROWS  # then the lighting values
SHADOW_ROW = PROCTEX_ROW + proctexgen.PROCTEX_ROWS  # then the procedural texture's
BLOCK_ROWS = SHADOW_ROW + 1  # then unit 0's shadow depth bias


def uniform_block(ds: DrawState, depth_max: int) -> bytes:
    """The draw's values in the layout of ``glsl_lib.UNIFORM_BLOCK``."""
    rows = np.zeros((BLOCK_ROWS, 4), np.int32)
    floats = rows.view(np.float32)
    rows[0:6] = [s.constant for s in ds.tev.stages]
    rows[6] = ds.tev.buffer_color
    rows[7:10] = [u.border for u in ds.textures]
    floats[10:13] = [(u.lod_bias, u.min_level, u.max_level, 0.0) for u in ds.textures]
    rows[13, 0] = ds.blend.alpha_ref
    rows[14] = ds.raster.scissor
    floats[15] = (ds.raster.depth_scale, ds.raster.depth_offset, float(depth_max), 0.0)
    floats[16, :3] = ds.fog.color
    floats[17:49] = np.asarray(ds.fog.values, np.float32).reshape(32, 4)
    floats[49:81] = np.asarray(ds.fog.deltas, np.float32).reshape(32, 4)
    floats[FOG_ROWS:PROCTEX_ROW] = lightgen.lighting_rows(ds.lighting)
    rows[PROCTEX_ROW:SHADOW_ROW] = proctexgen.proctex_rows(ds.proctex)
    rows[SHADOW_ROW, 0] = ds.textures[0].shadow_bias & ~1  # bit 0 is the orthographic flag (shadow.shadow_compare)
    return rows.tobytes()


# ---------------------------------------------------------------------------------------------- code
def _unit_functions(key: UnitKey) -> str:
    """GLSL ``vec3 coords{u}(dvec3 e, int b)``: the unit's (s, t, face) at a fragment's edge values e in the
    triangle at ``tri[b]`` (``picaemu.texture.sampler.unit_coords``), and, when the unit needs a LOD,
    ``vec2 texel_derivative{u}`` of (s W, t H) at level 0 (``glsl_lib.derivative_function``)."""
    u, c = key.unit, key.column
    uv = f"vec2(varying_with(e, b, {c}), varying_with(e, b, {c + 1}))"
    if key.cube:
        body = f"return cube_coords(vec3({uv}, varying_with(e, b, {TC0W_COLUMN})));"
    elif key.projection:
        body = (
            f"vec2 uv = {uv}; float pw = varying_with(e, b, {TC0W_COLUMN});\n"
            "    return vec3(nan_to_num(uv.x / pw), nan_to_num(uv.y / pw), 0.0);"
        )
    else:
        body = f"return vec3({uv}, 0.0);"
    text = f"\nvec3 coords{u}(dvec3 e, int b) {{\n    {body}\n}}\n"
    if key.needs_lod:
        text += glsl_lib.derivative_function(
            f"texel_derivative{u}", f"coords{u}(e, b).xy * vec2(textureSize(tex{u}, 0).xy)"
        )
    return text


def _sample(key: UnitKey, scissor_mode: int) -> list[str]:
    """GLSL lines that set ``ivec4 s_tex{u}`` (picaemu.texture.sampler.sample / _mip_sample)."""
    u = key.unit
    args = f"face{u}, st{u}, %s, {key.wrap_s}, {key.wrap_t}, u_border[{u}]"
    lines = [f"vec3 cf{u} = coords{u}(g_e, g_base);", f"vec2 st{u} = cf{u}.xy; int face{u} = int(cf{u}.z);"]
    if key.shadow:
        return lines + _shadow_lookup(key)
    if not key.needs_lod:
        lines.append(
            f"ivec4 s_tex{u} = round_u8(filter_2d(tex{u}, int(u_lod[{u}].y), "
            + args % ("true" if key.mag_linear else "false")
            + "));"
        )
        return lines
    lines += [
        f"vec2 dx{u} = abs(texel_derivative{u}(ivec2(1, 0), {scissor_mode}));",
        f"vec2 dy{u} = abs(texel_derivative{u}(ivec2(0, 1), {scissor_mode}));",
        f"float rho{u} = max(max(dx{u}.x, dy{u}.x), max(dx{u}.y, dy{u}.y));",
        f"float lod{u} = rho{u} > 0.0 ? log2(rho{u}) + u_lod[{u}].x : -1.0 / 0.0;",
        f"bool mag{u} = !(lod{u} > 0.0);",
        f"float lodc{u} = clamp(lod{u}, u_lod[{u}].y, u_lod[{u}].z);",
        f"bool lin{u} = mag{u} ? {str(key.mag_linear).lower()} : {str(key.min_linear).lower()};",
    ]
    if not key.mip_linear:
        lines += [
            f"int lv{u} = mag{u} ? int(u_lod[{u}].y) : int(floor(lodc{u} + 0.5));",
            f"ivec4 s_tex{u} = round_u8(filter_2d(tex{u}, min(lv{u}, int(u_lod[{u}].z)), " + args % f"lin{u}" + "));",
        ]
        return lines
    lines += [
        f"int lo{u} = mag{u} ? int(u_lod[{u}].y) : int(floor(lodc{u}));",
        f"int hi{u} = min(lo{u} + 1, int(u_lod[{u}].z));",
        f"precise float fr{u} = mag{u} ? 0.0 : lodc{u} - float(lo{u});",
        f"precise vec4 mix{u} = (1.0 - fr{u}) * filter_2d(tex{u}, lo{u}, " + args % f"lin{u}" + f") + fr{u} * "
        f"filter_2d(tex{u}, hi{u}, " + args % f"lin{u}" + ");",
        f"ivec4 s_tex{u} = round_u8(mix{u});",
    ]
    return lines


def _shadow_lookup(key: UnitKey) -> list[str]:
    """``s_tex{u}`` of a shadow texture (``picaemu.texture.sampler._shadow``): its reference depth, min(|w|, 1)
    for shadow 2D and min(|major axis|, 1) for shadow cube, compared with the nearest texel of the first level."""
    u, c = key.unit, key.column
    w = f"varying_at({TC0W_COLUMN})"
    ref = (
        f"min(cube_major(vec3(varying_at({c}), varying_at({c + 1}), {w})), 1.0)" if key.cube else f"min(abs({w}), 1.0)"
    )
    return [
        f"ivec4 s_tex{u} = shadow_lookup(tex{u}, int(u_lod[{u}].y), face{u}, st{u}, {ref}, {key.wrap_s}, "
        f"{key.wrap_t}, u_border[{u}], u_shadow.x);"
    ]


def _stage_value(ref: int) -> str:
    """The ivec4 a program's reference to a stage output names (``tev_program``)."""
    if ref == tev.READS_ZERO:
        return "ivec4(0)"
    return "u_tev_buffer" if ref == tev.READS_BUFFER_COLOR else f"out{ref}"


def _source(row: tev.StageRow, kind: str, slot: int) -> str:
    """The ivec4 a slot reads (the program's resolved source: stage 0's rules, "previous", the buffer)."""
    code = (row.rgb_sources if kind == "RGB" else row.alpha_sources)[slot]
    if code is None:
        return "ivec4(0)"
    if code == tev.SRC_PREVIOUS:
        return _stage_value(row.previous)
    if code == tev.SRC_BUFFER:
        rgb, alpha = _stage_value(row.buffer_rgb), _stage_value(row.buffer_alpha)
        return rgb if row.buffer_rgb == row.buffer_alpha else f"ivec4({rgb}.rgb, {alpha}.a)"
    names = {
        tev.SRC_CONSTANT: f"u_tev_const[{row.index}]",
        tev.SRC_PRIMARY: "s_prim",
        **{tev.SRC_TEXTURES[u]: f"s_tex{u}" for u in range(4)},
        tev.SRC_LIGHT_PRIMARY: "s_lp",
        tev.SRC_LIGHT_SECONDARY: "s_ls",
    }
    return names[code]


def _operand(row: tev.StageRow, kind: str, slot: int) -> str:
    """An ivec4 operand expression (RGB operands fill .rgb, alpha operands every channel)."""
    src, stage = _source(row, kind, slot), row.stage
    if kind == "RGB":
        channels, inverted = tev.RGB_OPERAND_TABLE[stage.rgb_operands[slot]]
        expr = f"ivec4({src}.{''.join(RGBA[c] for c in channels)}, 0)"
    else:
        channel, inverted = tev.ALPHA_OPERAND_TABLE[stage.alpha_operands[slot]]
        expr = f"ivec4({src}.{RGBA[channel]})"
    return f"(255 - {expr})" if inverted else expr


def _stage(row: tev.StageRow) -> list[str]:
    """GLSL lines that set ``ivec4 out{i}``, the output of the program row of stage i (``tev.run_stage``)."""
    stage, i = row.stage, row.index
    rgb = [_operand(row, "RGB", s) if s < stage.plan.rgb_slots else "ivec4(0)" for s in range(3)]
    lines = [f"// stage {i}"]
    if stage.plan.dot3:
        lines.append(f"int dot{i} = tev_dot3(({rgb[0]}).rgb, ({rgb[1]}).rgb);")
        lines.append(f"ivec3 rgb{i} = ivec3(min(dot{i} << {stage.rgb_shift}, 255));")
    else:
        lines.append(f"ivec3 rgb{i} = min(tev_op({stage.rgb_op}, {', '.join(rgb)}).rgb << {stage.rgb_shift}, 255);")
    if stage.rgb_op == tev.OP_DOT3_RGBA:
        lines.append(f"int alpha{i} = min(dot{i} << {stage.alpha_shift}, 255);")
    else:
        alpha = [_operand(row, "alpha", s) if s < stage.plan.alpha_slots else "ivec4(0)" for s in range(3)]
        lines.append(f"int alpha{i} = min(tev_op({stage.alpha_op}, {', '.join(alpha)}).a << {stage.alpha_shift}, 255);")
    lines.append(f"ivec4 out{i} = ivec4(rgb{i}, alpha{i});")
    return lines


def _tev(key: ProgramKey) -> list[str]:
    """The rows of the draw's ``tev.TevProgram`` (as ``picaemu.color.tev.combine`` runs them): each stage that
    computes sets its ``out{i}``; ``prev`` is the combiner's output."""
    lines = [line for row in key.stages if row is not None for line in _stage(row)]
    return [*lines, f"ivec4 prev = {_stage_value(key.tev_result)};"]


def _depth(key: ProgramKey) -> list[str]:
    return ["setup_barycentrics();", f"float depth = fragment_depth({str(key.w_buffer).lower()});"]


def _scissor(mode: int) -> list[str]:
    if mode not in (SCISSOR_EXCLUDE, SCISSOR_INCLUDE):
        return []
    inside = "all(greaterThanEqual(pix, u_scissor.xy)) && all(lessThanEqual(pix, u_scissor.zw))"
    return [f"if ({'' if mode == SCISSOR_EXCLUDE else '!'}({inside})) discard;"]


def _output(key: ProgramKey) -> list[str]:
    lines = []
    if key.quantize is not None:  # the value the buffer will hold, expanded again (framebuffer.encode/decode)
        for ch, bits in key.quantize:
            lines.append(f"{{ int q = prev[{ch}] >> {8 - bits}; int e = 0;")
            shift = 8 - bits
            while shift > -bits:
                lines.append(f"  e |= {'q << ' + str(shift) if shift >= 0 else 'q >> ' + str(-shift)};")
                shift -= bits
            lines.append(f"  prev[{ch}] = e & 255; }}")
    lines.append("o_color = vec4(prev) / 255.0;")
    if key.depth_out:
        lines.append("gl_FragDepth = float(uint(double(depth) * double(u_depth.z))) * 5.9604644775390625e-08;")
    return lines


def fragment_source(key: ProgramKey) -> str:
    """The GLSL fragment shader of ``key``."""
    body = ["ivec2 pix = ivec2(gl_FragCoord.xy);", *_scissor(key.scissor_mode), *_depth(key)]
    for u, unit in enumerate(key.units):
        body += _sample(unit, key.scissor_mode) if unit is not None else [f"ivec4 s_tex{u} = ivec4(0);"]
    body.append(f"ivec4 s_prim = primary_u8(vec4({', '.join(f'varying_at({COLOR_COLUMN + c})' for c in range(4))}));")
    no_light = ["ivec4 s_lp = ivec4(0), s_ls = ivec4(0);"]
    body += lightgen.lighting_lines(key.lighting) if key.lighting is not None else no_light
    body += (
        proctexgen.proctex_lines(key.proctex, key.scissor_mode)
        if key.proctex is not None
        else ["ivec4 s_tex3 = ivec4(0);"]
    )
    body += _tev(key)
    if key.fog:
        body.append(f"prev = fog(prev, depth, {str(key.fog_z_flip).lower()});")
    if key.alpha_func is not None:
        body.append(f"if (!compare({key.alpha_func}, prev.a, u_alpha.x)) discard;")
    body += _output(key)
    samplers = "".join(f"layout(binding = {u}) uniform usampler2DArray tex{u};\n" for u in range(3))
    helpers = (
        glsl_lib.HELPERS
        + (lightgen.HELPERS if key.lighting is not None else "")
        + (proctexgen.HELPERS + proctexgen.functions(key.proctex) if key.proctex is not None else "")
        + "".join(_unit_functions(unit) for unit in key.units if unit is not None)
    )
    return (
        glsl_lib.VERSION
        + glsl_lib.UNIFORM_BLOCK
        + samplers
        + helpers
        + "\nvoid main() {\n    "
        + "\n    ".join(body)
        + "\n}\n"
    )
