"""Procedural texture unit (texture 3): texels computed from (u, v) instead of read from memory.

Owns the decoding of PROCTEX0-5 (0x0A8-0x0AD, through ``picaemu.regs.access``) and of the proctex LUTs
(``GpuState.proctex_luts`` (6, 256) uint32: 0 noise, 2 RGB map, 3 alpha map — 128 entries of
``regs.blocks.proctex.MAP_ENTRY``; 4 color RGBA8, 5 color difference (signed bytes, half the step to the next color)
— 256 entries of ``COLOR_ENTRY``) into a frozen per-draw ``ProctexState``, and the evaluation (pica-pipeline.md §11).

``sample_proctex(pstate, uv, lod=None) -> (F,4) uint8 RGBA``: ``uv`` (F,2) float32 texture coordinates; ``lod``
(F,) float32 level of detail (``proctex_lod`` computes it from screen-space derivatives); without it every texel
comes from level 0 (min LOD when that is larger).

Evaluation per texel: ``u, v = |u|, |v|``; shift offsets from the pre-noise coordinates; optional noise (``noise``)
displaces u and v by ``amplitude * noise`` (amplitude: the signed 16-bit field / 4095); the shifts are added; each
coordinate goes through its clamp mode; the RGB mapping function F(u, v) in [0, 1] indexes the RGB map (``_lut``),
whose result g selects ``offset_L + g (width_L - 1)`` in the color table of mip level L (nearest: entry rounded half
up; linear: entry + frac · 2 · difference). Alpha is the color table's, or with ``separate_alpha`` the alpha map at
the alpha function. Map tables read ``clamp(value / 4095 + f · diff / 4095, 0, 1)`` at ``p = 128 x``,
``i = min(floor p, 127)``, ``f = p - i`` (``_lut``; x NaN reads entry 0); colors are bytes; linear results are
truncated. The evaluation is one compiled rule, ``texels`` (float32 throughout, as the reference computes;
the mix of two mip levels float64), reading ``ProctexState.kernel_args``: the staged ``sample_proctex`` (which picks
the levels) and the fused fragment kernel (``picaemu.fused.fragment_kernel``) both call it.

Raise ``UnsupportedFeature`` naming the register: codes the reference leaves undefined (clamp 5-7, mapping 10-15,
shift 3, filter 6-7), and a color table that runs past entry 255 (offset + width - 1 > 255) at a level the filter
can reach.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType

import numpy as np

from picaemu import numba_link, numeric
from picaemu.errors import UnsupportedFeature
from picaemu.regs import access, id_of
from picaemu.regs.blocks.proctex import (
    COLOR_ENTRY,
    LEVEL_OFFSETS_4_TO_7,
    MAP_ENTRY,
    PROCTEX_TABLES,
    TABLE_ENTRIES,
)
from picaemu.state import GpuState

MAP_ONE = 4095.0  # map-table value (and difference) that reads as 1.0
AMPLITUDE_ONE = 4095.0  # noise amplitude field (16-bit signed) that reads as 1.0, as the tested reference scales it
MAP_ENTRIES = TABLE_ENTRIES["noise"]
NOISE_CELLS = 9.0  # noise lattice cells per unit of (frequency * coordinate)
# Noise hash tables (Azahar's functions, "verified against real hardware"; pica-pipeline.md §11.2)
NOISE_T1 = np.array([0, 4, 10, 8, 4, 9, 7, 12, 5, 15, 13, 14, 11, 15, 2, 11], np.int64)
NOISE_T2 = np.array([10, 2, 15, 8, 0, 7, 4, 5, 5, 13, 2, 6, 13, 9, 3, 14], np.int64)
MAX_LEVEL = 7
U8_MAX = 255

_TABLE = {name: idx for idx, name in PROCTEX_TABLES.items()}
_MAP = {fld.name: fld for fld in MAP_ENTRY}

# mapping functions and clamp modes by name; a name's index is its code in the compiled rule (``texel``)
MAPPINGS = ("U", "U2", "V", "V2", "(U+V)/2", "(U2+V2)/2", "sqrt(U2+V2)", "min", "max", "rmax")
CLAMPS = ("clamp to zero", "clamp to edge", "symmetrical repeat", "mirrored repeat", "pulse")
SHIFT_PARITY = MappingProxyType({"none": None, "odd": 0, "even": 1})  # added to int(c) before (.. // 2) % 2
SHIFT_STEP = MappingProxyType({"mirrored repeat": 1.0})  # shift amount per clamp mode; others 0.5
DEFAULT_SHIFT_STEP = 0.5
# filter name -> (linear within a level, mip mode: None / "nearest" / "linear")
FILTERS = MappingProxyType(
    {
        "nearest": (False, None),
        "linear": (True, None),
        "nearest mip nearest": (False, "nearest"),
        "linear mip nearest": (True, "nearest"),
        "nearest mip linear": (False, "linear"),
        "linear mip linear": (True, "linear"),
    }
)


@dataclass(frozen=True)
class ProctexState:
    """Decoded proctex registers and LUTs (maps as float32 (128,) value/diff; colors (256,4) int16)."""

    u_clamp: str
    v_clamp: str
    rgb_func: str
    alpha_func: str
    separate_alpha: bool
    noise_enable: bool
    u_shift: str
    v_shift: str
    amplitude: tuple[float, float]  # (u, v)
    phase: tuple[float, float]
    frequency: tuple[float, float]
    linear: bool
    mip: str | None
    min_lod: int
    max_lod: int
    width: int
    lod_bias: float
    offsets: tuple[int, ...]  # color-table offset of levels 0-7
    maps: Mapping[str, tuple[np.ndarray, np.ndarray]]  # "noise", "RGB map", "alpha map" -> (value, diff)
    color: np.ndarray  # (256, 4) int16 r g b a
    color_diff: np.ndarray  # (256, 4) int16, signed, half the step to the next entry

    @classmethod
    def from_state(cls, state: GpuState) -> ProctexState:
        return cls.from_regs(state.regs, state.proctex_luts)

    @classmethod
    def from_regs(cls, regs: np.ndarray, luts: np.ndarray) -> ProctexState:
        def val(reg: str, fld: str) -> int | float | bool | str:
            return access.value(regs, reg, fld)

        fields0 = {
            k: str(val("TEXUNIT3_PROCTEX0", k))
            for k in ("u_clamp", "v_clamp", "rgb_func", "alpha_func", "u_shift", "v_shift")
        }
        known = {
            "u_clamp": CLAMPS,
            "v_clamp": CLAMPS,
            "rgb_func": MAPPINGS,
            "alpha_func": MAPPINGS,
            "u_shift": SHIFT_PARITY,
            "v_shift": SHIFT_PARITY,
        }
        separate = bool(val("TEXUNIT3_PROCTEX0", "separate_alpha"))
        for k, text in fields0.items():
            if text not in known[k] and (k != "alpha_func" or separate):
                _unsupported(regs, "TEXUNIT3_PROCTEX0", f"proctex {k} {text}")
        filt = str(val("TEXUNIT3_PROCTEX4", "filter"))
        if filt not in FILTERS:
            _unsupported(regs, "TEXUNIT3_PROCTEX4", f"proctex filter {filt}")
        bias_raw = (int(access.raw(regs, "TEXUNIT3_PROCTEX4", "lod_bias_high")) << 8) | int(
            access.raw(regs, "TEXUNIT3_PROCTEX0", "lod_bias_low")
        )
        offsets = tuple(int(access.raw(regs, "TEXUNIT3_PROCTEX5", f"offset{k}")) for k in range(4))
        offsets += LEVEL_OFFSETS_4_TO_7
        width = int(val("TEXUNIT3_PROCTEX4", "width"))
        min_lod, max_lod = int(val("TEXUNIT3_PROCTEX4", "min_lod")), int(val("TEXUNIT3_PROCTEX4", "max_lod"))
        levels = range(min_lod, min(max_lod, MAX_LEVEL) + 1) if FILTERS[filt][1] else range(1)
        for level in levels:
            if offsets[level] + max(width >> level, 1) - 1 >= TABLE_ENTRIES["color"]:
                _unsupported(regs, "TEXUNIT3_PROCTEX5", f"proctex color table of level {level} runs past its end")
        return cls(
            **fields0,
            separate_alpha=separate,
            noise_enable=bool(val("TEXUNIT3_PROCTEX0", "noise_enable")),
            amplitude=(_amplitude(regs, "TEXUNIT3_PROCTEX1", "u"), _amplitude(regs, "TEXUNIT3_PROCTEX2", "v")),
            phase=(float(val("TEXUNIT3_PROCTEX1", "u_phase")), float(val("TEXUNIT3_PROCTEX2", "v_phase"))),
            frequency=(float(val("TEXUNIT3_PROCTEX3", "u_frequency")), float(val("TEXUNIT3_PROCTEX3", "v_frequency"))),
            linear=FILTERS[filt][0],
            mip=FILTERS[filt][1],
            min_lod=min_lod,
            max_lod=max_lod,
            width=width,
            lod_bias=float(numeric.f16(bias_raw)),
            offsets=offsets,
            maps=MappingProxyType({name: decode_map(luts[_TABLE[name]]) for name in ("noise", "RGB map", "alpha map")}),
            color=decode_colors(luts[_TABLE["color"]], signed=False),
            color_diff=decode_colors(luts[_TABLE["color difference"]], signed=True),
        )

    @cached_property
    def kernel_args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(codes, reals, maps, colors, levels): this state as the compiled rule reads it (``texel``)."""
        parity = {name: -1 if p is None else p for name, p in SHIFT_PARITY.items()}
        codes = np.zeros(P_INTS, np.int64)
        codes[P_U_CLAMP], codes[P_V_CLAMP] = CLAMPS.index(self.u_clamp), CLAMPS.index(self.v_clamp)
        codes[P_RGB_FUNC] = MAPPINGS.index(self.rgb_func)
        codes[P_ALPHA_FUNC] = MAPPINGS.index(self.alpha_func) if self.separate_alpha else -1
        codes[P_NOISE], codes[P_LINEAR] = self.noise_enable, self.linear
        codes[P_U_PARITY], codes[P_V_PARITY] = parity[self.u_shift], parity[self.v_shift]
        reals = np.zeros(P_REALS, np.float32)
        reals[R_U_STEP] = SHIFT_STEP.get(self.u_clamp, DEFAULT_SHIFT_STEP)
        reals[R_V_STEP] = SHIFT_STEP.get(self.v_clamp, DEFAULT_SHIFT_STEP)
        reals[R_U_AMP], reals[R_V_AMP] = self.amplitude
        reals[R_U_PHASE], reals[R_V_PHASE] = self.phase
        reals[R_U_FREQ], reals[R_V_FREQ] = (NOISE_CELLS * f for f in self.frequency)
        maps = np.stack([np.stack(self.maps[name]) for name in MAP_TABLES]).astype(np.float32)
        colors = np.stack([self.color, np.float32(2.0) * self.color_diff.astype(np.float32)]).astype(np.float32)
        level = np.arange(MAX_LEVEL + 1)
        width = np.maximum(np.right_shift(self.width, level), 1).astype(np.float32)
        levels = np.stack([np.asarray(self.offsets, np.float32), width - np.float32(1)], axis=1)
        return codes, reals, maps, colors, np.ascontiguousarray(levels)


def _amplitude(regs: np.ndarray, reg: str, axis: str) -> float:
    """Noise amplitude: the 16-bit two's-complement field / ``AMPLITUDE_ONE``."""
    name = f"{axis}_amplitude"
    return numeric.signed(access.raw(regs, reg, name), access.locate(reg, name)[1].width) / AMPLITUDE_ONE


def _unsupported(regs: np.ndarray, reg: str, what: str) -> None:
    raise UnsupportedFeature(what, register=id_of(reg), value=access.word(regs, reg))


def decode_map(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First 128 raw words of a noise / RGB-map / alpha-map table -> (value, diff) (128,) float32."""
    raw = np.asarray(raw[:MAP_ENTRIES], np.uint32)
    value = _MAP["value"].extract(raw).astype(np.float32) / np.float32(MAP_ONE)
    diff = numeric.signed(_MAP["diff"].extract(raw).astype(np.int64), _MAP["diff"].width)
    return value, (diff / MAP_ONE).astype(np.float32)


def decode_colors(raw: np.ndarray, *, signed: bool) -> np.ndarray:
    """256 raw color words -> (256, 4) int16 r g b a (bytes, two's complement when ``signed``)."""
    raw = np.asarray(raw, np.uint32)
    chans = [fld.extract(raw).astype(np.int64) for fld in COLOR_ENTRY]
    if signed:
        chans = [numeric.signed(c, fld.width) for c, fld in zip(chans, COLOR_ENTRY, strict=True)]
    return np.stack(chans, axis=1).astype(np.int16)


# ---------------------------------------------------------------------------------- the compiled per-texel rule
# ``ProctexState.kernel_args``: the state as the arrays the compiled rule reads (``texel``), in this order:
# ``codes`` (P_INTS,) int64, ``reals`` (P_REALS,) float32, ``maps`` (3, 2, 128) float32 (``MAP_TABLES`` x
# value / difference), ``colors`` (2, 256, 4) float32 (color, 2 x color difference), ``levels`` (8, 2) float32
# (color-table offset, width - 1 of each mip level). The helpers the rule calls at several places are compiled once
# each and called (LLVM inlines them where it pays); only those with one call site are inlined by numba: inlining
# all of them copied their IR into ``texels_level0`` once per call site (4.6 s of a first run's compile).
# codes: clamp mode of u and v (index in CLAMPS), RGB and alpha mapping (index in MAPPINGS; alpha -1: the color
# table's alpha), noise on, shift parity added to int(c) of u and v (-1: no shift), linear within a level
P_U_CLAMP, P_V_CLAMP, P_RGB_FUNC, P_ALPHA_FUNC, P_NOISE, P_U_PARITY, P_V_PARITY, P_LINEAR = range(8)
P_INTS = 8
# reals: shift step of u and v, noise amplitude of u and v, phase of u and v, 9 x frequency of u and v
R_U_STEP, R_V_STEP, R_U_AMP, R_V_AMP, R_U_PHASE, R_V_PHASE, R_U_FREQ, R_V_FREQ = range(8)
P_REALS = 8
MAP_TABLES = ("noise", "RGB map", "alpha map")
M_NOISE, M_RGB, M_ALPHA = range(3)
CLAMP_ZERO, CLAMP_EDGE, CLAMP_REPEAT, CLAMP_MIRROR, CLAMP_PULSE = range(len(CLAMPS))
F_U, F_U2, F_V, F_V2, F_MEAN, F_MEAN2, F_LENGTH, F_MIN, F_MAX, F_RMAX = range(len(MAPPINGS))
F32_HALF, F32_ONE = np.float32(0.5), np.float32(1.0)


@numba_link.kernel()
def _int(x, bits):  # pragma: no cover - compiled
    """A float32 truncated to a ``bits``-bit signed integer as numpy's cast gives it (x86): the lowest value for NaN
    and out-of-range values (a cast numba leaves undefined)."""
    limit = np.float32(2.0 ** (bits - 1))
    if not (-limit <= x < limit):
        return -(np.int64(1) << (bits - 1))
    return np.int64(x)


@numba_link.kernel()
def _finite(x):  # pragma: no cover - compiled
    """``numeric.finite`` of one float32."""
    if x != x:
        return np.float32(0.0)
    if x == np.inf:
        return numeric.FINITE_LIMIT
    return -numeric.FINITE_LIMIT if x == -np.inf else x


@numba_link.kernel()
def _lut(maps, table, x):  # pragma: no cover - compiled
    """One value of map table ``table`` (module docstring)."""
    p = np.maximum(_finite(x), np.float32(0.0)) * np.float32(MAP_ENTRIES)
    i = np.minimum(np.floor(p), np.float32(MAP_ENTRIES - 1))
    k = np.int64(i)
    y = maps[table, 0, k] + maps[table, 1, k] * (p - i)
    return np.minimum(np.maximum(y, np.float32(0.0)), F32_ONE)


@numba_link.kernel()
def _rand1(k):  # pragma: no cover - compiled
    return ((((k % 9) + 2) * 3) & 0xF) ^ NOISE_T1[(k // 9) & 0xF]


@numba_link.kernel()
def _rand2(a, b):  # pragma: no cover - compiled
    """The lattice gradient from a = rand1(x) and b = rand1(y), in [-1, 1]."""
    b = b + (4 if (a & 3) == 1 else 0)
    b = b ^ ((a & 1) * 6)
    b = ((b + 10 + a) & 0xF) ^ NOISE_T2[a]
    return np.float32(-1.0 + b * (2.0 / 15.0))


@numba_link.kernel(inline="always")
def _noise(reals, maps, u, v):  # pragma: no cover - compiled
    """The noise value at (u, v), about [-1, 1]: gradient lattice smoothed by the noise LUT."""
    x = reals[R_U_FREQ] * np.abs(u + reals[R_U_PHASE])
    y = reals[R_V_FREQ] * np.abs(v + reals[R_V_PHASE])
    xi, yi = _int(np.trunc(x), 32), _int(np.trunc(y), 32)
    fx, fy = np.float32(np.float64(x) - xi), np.float32(np.float64(y) - yi)
    s = fx + fy
    ax0, ax1, by0, by1 = _rand1(xi), _rand1(xi + 1), _rand1(yi), _rand1(yi + 1)
    g0 = _rand2(ax0, by0) * s
    g1 = _rand2(ax1, by0) * (s - F32_ONE)
    g2 = _rand2(ax0, by1) * (s - F32_ONE)
    g3 = _rand2(ax1, by1) * (s - np.float32(2.0))
    sx, sy = _lut(maps, M_NOISE, fx), _lut(maps, M_NOISE, fy)
    lo, hi = g0 + (g1 - g0) * sx, g2 + (g3 - g2) * sx
    return lo + (hi - lo) * sy


@numba_link.kernel()
def _shift(c, parity, step):  # pragma: no cover - compiled
    """Shift offset from a pre-noise coordinate: ``step`` when (int(c) + parity) // 2 is odd."""
    if parity < 0:
        return np.float32(0.0)
    return step * np.float32(((_int(np.trunc(c), 64) + parity) // 2) % 2)


@numba_link.kernel()
def _clamp(c, mode):  # pragma: no cover - compiled
    """Clamp mode ``mode`` (index in ``CLAMPS``) of a coordinate."""
    if mode == CLAMP_ZERO:
        return np.float32(0.0) if c > 1 else c
    if mode == CLAMP_EDGE:
        return np.minimum(c, F32_ONE)
    if mode == CLAMP_REPEAT:
        return c - np.floor(c)
    if mode == CLAMP_MIRROR:  # frac(c) when int(c) is even, 1 - frac(c) when odd
        whole = np.trunc(c)
        frac = c - whole
        return F32_ONE - frac if _int(whole, 64) & 1 else frac
    return F32_ONE if c > F32_HALF else np.float32(0.0)  # pulse


@numba_link.kernel()
def _mapping(u, v, func):  # pragma: no cover - compiled
    """Mapping function ``func`` (index in ``MAPPINGS``) of (u, v)."""
    if func == F_U:
        return u
    if func == F_U2:
        return u * u
    if func == F_V:
        return v
    if func == F_V2:
        return v * v
    if func == F_MEAN:
        return (u + v) * F32_HALF
    if func == F_MEAN2:
        return (u * u + v * v) * F32_HALF
    if func == F_LENGTH:
        return np.minimum(np.sqrt(u * u + v * v), F32_ONE)
    if func == F_MIN:
        return np.minimum(u, v)
    if func == F_MAX:
        return np.maximum(u, v)
    return np.minimum(((u + v) * F32_HALF + np.sqrt(u * u + v * v)) * F32_HALF, F32_ONE)  # rmax


@numba_link.kernel(inline="always")
def _coordinates(codes, reals, maps, u, v):  # pragma: no cover - compiled
    """(u, v) after abs, noise, shift and clamp."""
    u, v = np.abs(_finite(u)), np.abs(_finite(v))
    u_shift = _shift(v, codes[P_U_PARITY], reals[R_U_STEP])
    v_shift = _shift(u, codes[P_V_PARITY], reals[R_V_STEP])
    if codes[P_NOISE]:
        n = _noise(reals, maps, u, v)
        u, v = np.abs(u + n * reals[R_U_AMP]), np.abs(v + n * reals[R_V_AMP])
    return _clamp(u + u_shift, codes[P_U_CLAMP]), _clamp(v + v_shift, codes[P_V_CLAMP])


@numba_link.kernel()
def _entry(levels, last, linear, g, level):  # pragma: no cover - compiled
    """The color-table entry at position g in [0, 1] of mip ``level`` and the fraction toward the next one: nearest
    rounds half up (C ``round`` on positive indices), fraction 0; linear truncates."""
    index = levels[level, 0] + g * levels[level, 1]
    zero = np.float32(0.0)
    if not linear:
        return np.int64(np.minimum(np.maximum(np.floor(index + F32_HALF), zero), last)), zero
    i = np.minimum(np.maximum(np.floor(index), zero), last)
    return np.int64(i), index - i


@numba_link.kernel()
def _color(colors, linear, k, f, ch):  # pragma: no cover - compiled
    """Channel ``ch`` (float32 0..255) of color-table entry ``k``, plus f x 2 x its difference when linear."""
    c = colors[0, k, ch]
    return c + f * colors[1, k, ch] if linear else c


@numba_link.kernel(inline="always")
def _texel(codes, reals, maps, colors, levels, u, v, lo, hi, t, out, i):  # pragma: no cover - compiled
    """The procedural texel at texture coordinates (u, v) into ``out[i]`` RGBA, from mip level ``lo``, or with
    ``hi`` >= 0 from levels ``lo`` and ``hi`` mixed by ``t`` (float64) (the arrays: ``kernel_args``)."""
    cu, cv = _coordinates(codes, reals, maps, u, v)
    g = _lut(maps, M_RGB, _mapping(cu, cv, codes[P_RGB_FUNC]))
    linear = codes[P_LINEAR] != 0
    last = np.float32(colors.shape[1] - 1)
    k, f = _entry(levels, last, linear, g, lo)
    k2, f2 = _entry(levels, last, linear, g, hi) if hi >= 0 else (k, f)
    separate = codes[P_ALPHA_FUNC] >= 0
    for ch in range(3 if separate else 4):
        a = _color(colors, linear, k, f, ch)
        c = np.float64(a)
        if hi >= 0:  # a + (b - a) t: the difference in float32, the step in float64
            c += np.float64(_color(colors, linear, k2, f2, ch) - a) * t
        out[i, ch] = np.uint8(np.minimum(np.maximum(np.trunc(c), 0.0), float(U8_MAX)))
    if separate:
        out[i, 3] = np.uint8(_lut(maps, M_ALPHA, _mapping(cu, cv, codes[P_ALPHA_FUNC])) * np.float32(U8_MAX))


@numba_link.kernel(inline="always")
def _codes(codes):  # pragma: no cover - compiled
    """``codes`` as a tuple of scalars (and ``_reals`` likewise): the per-texel rule indexes them by constants, so
    the loops keep them in registers instead of reloading them after each store to ``out`` (a third of the time)."""
    return codes[0], codes[1], codes[2], codes[3], codes[4], codes[5], codes[6], codes[7]


@numba_link.kernel(inline="always")
def _reals(reals):  # pragma: no cover - compiled
    return reals[0], reals[1], reals[2], reals[3], reals[4], reals[5], reals[6], reals[7]


assert P_INTS == P_REALS == 8  # the tuples' sizes


@numba_link.kernel()
def texels(codes, reals, maps, colors, levels, uv, lo, hi, t, out):  # pragma: no cover - compiled
    """The procedural texel of every fragment (the one rule: module docstring): ``uv`` (F, 2) float32 texture
    coordinates, mip levels ``lo`` / ``hi`` (F,) int64 (``hi`` -1: ``lo`` alone), ``t`` (F,) float64 their mix
    -> ``out`` (F, 4) uint8 RGBA; the state's arrays are ``ProctexState.kernel_args``."""
    c, r = _codes(codes), _reals(reals)
    for i in range(uv.shape[0]):
        _texel(c, r, maps, colors, levels, uv[i, 0], uv[i, 1], lo[i], hi[i], t[i], out, i)


@numba_link.kernel()
def texels_level0(codes, reals, maps, colors, levels, vary, cu, cv, out):  # pragma: no cover - compiled
    """``texels`` of the F = ``out.shape[0]`` fragments on level 0 alone (no mip filter: the fused fragment side's
    case), their u and v read from columns ``cu`` and ``cv`` of the varyings ``vary`` (at least F rows, float32; -1
    reads 1.0: the fused plan's column rule, as ``fused.features._columns`` applies it for the other units); ``out``
    (F, 4) uint8 C-contiguous. A texel is a function of (u, v) alone, so a fragment whose coordinates equal the
    previous one's copies the texel last computed, as one 32-bit word: citro2d enables the unit on every draw, its
    sprites reading one constant coordinate pair (a ~35 ns texel per fragment down to a compare and a copy). Equal
    floats give equal texels: the rule takes |u|, |v| first (-0.0 = 0.0), and NaN equals nothing."""
    c, r = _codes(codes), _reals(reals)
    words = out.view(np.uint32)
    one = np.float32(1.0)
    last_u = last_v = np.float32(np.nan)
    last = 0
    for i in range(out.shape[0]):
        u, v = vary[i, cu] if cu >= 0 else one, vary[i, cv] if cv >= 0 else one
        if u == last_u and v == last_v:
            words[i, 0] = words[last, 0]
        else:
            _texel(c, r, maps, colors, levels, u, v, 0, -1, 0.0, out, i)
            last_u, last_v, last = u, v, i


@numba_link.kernel()
def _coordinates_all(codes, reals, maps, uv, out):  # pragma: no cover - compiled
    c, r = _codes(codes), _reals(reals)
    for i in range(uv.shape[0]):
        out[i, 0], out[i, 1] = _coordinates(c, r, maps, uv[i, 0], uv[i, 1])


@numba_link.kernel()
def _noise_all(reals, maps, u, v, out):  # pragma: no cover - compiled
    r = _reals(reals)
    for i in range(u.shape[0]):
        out[i] = _noise(r, maps, u[i], v[i])


def coordinates(ps: ProctexState, uv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(u, v) after abs, noise, shift and clamp, each (F,) float32."""
    codes, reals, maps, _, _ = ps.kernel_args
    out = np.empty((len(uv), 2), np.float32)
    _coordinates_all(codes, reals, maps, np.ascontiguousarray(uv, np.float32), out)
    return out[:, 0], out[:, 1]


def noise(ps: ProctexState, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The noise value at (u, v) (F,) float32 (coordinates after abs), about [-1, 1]: gradient lattice smoothed by
    the noise LUT."""
    _, reals, maps, _, _ = ps.kernel_args
    out = np.empty(len(u), np.float32)
    _noise_all(reals, maps, np.ascontiguousarray(u, np.float32), np.ascontiguousarray(v, np.float32), out)
    return out


def proctex_lod(ps: ProctexState, duv_dx: np.ndarray, duv_dy: np.ndarray) -> np.ndarray:
    """Level of detail (F,) float32 from screen-space derivatives ``duv_dx`` = (du/dx, dv/dx) and ``duv_dy`` =
    (du/dy, dv/dy), each (F,2) (the layout of ``picaemu.texture.lod.derivatives``):
    ``log2(|width · bias| · (max(|du/dx|, |du/dy|) + max(|dv/dx|, |dv/dy|)))``, min LOD when the bias is 0,
    clamped to [min LOD, max LOD]."""
    if ps.lod_bias == 0:
        return np.full(len(duv_dx), float(ps.min_lod), np.float32)
    rho = np.maximum(np.abs(duv_dx), np.abs(duv_dy)).sum(axis=1)
    with np.errstate(divide="ignore"):
        lod = np.log2(abs(ps.width * ps.lod_bias) * rho)
    return np.clip(lod, ps.min_lod, min(ps.max_lod, MAX_LEVEL)).astype(np.float32)


def sample_proctex(ps: ProctexState, uv: np.ndarray, lod: np.ndarray | None = None) -> np.ndarray:
    """Procedural texels (F,4) uint8 RGBA at ``uv`` (F,2) (see the module docstring): the mip levels are picked
    here, the texels are ``texels``'s."""
    n = len(uv)
    lod = None if lod is None else numeric.finite(lod)
    hi, t = np.full(n, -1, np.int64), np.zeros(n, np.float64)
    if ps.mip is None or lod is None:
        lo = np.full(n, ps.min_lod if ps.mip is not None else 0, np.int64)
    elif ps.mip == "nearest":
        lo = np.clip(np.round(lod), 0, MAX_LEVEL).astype(np.int64)
    else:  # the mix of two levels is float64 (the float32 LOD minus an integer level)
        lo = np.clip(np.floor(lod), 0, MAX_LEVEL).astype(np.int64)
        t = np.asarray(lod, np.float32) - lo
        hi = np.minimum(lo + 1, MAX_LEVEL)
    if n and int(lo.max()) > MAX_LEVEL:
        raise IndexError(f"proctex level {int(lo.max())} past level {MAX_LEVEL}")
    out = np.empty((n, 4), np.uint8)
    texels(*ps.kernel_args, np.ascontiguousarray(uv, np.float32), lo, hi, t, out)
    return out


__all__ = ["ProctexState", "coordinates", "noise", "proctex_lod", "sample_proctex", "texels", "texels_level0"]
