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
coordinate goes through its clamp mode; the RGB mapping function F(u, v) in [0, 1] indexes the RGB map (``lut128``),
whose result g selects ``offset_L + g (width_L - 1)`` in the color table of mip level L (nearest: entry rounded half
up; linear: entry + frac · 2 · difference). Alpha is the color table's, or with ``separate_alpha`` the alpha map at
the alpha function. Map tables read ``clamp(value / 4095 + f · diff / 4095, 0, 1)`` (``lut128``); colors are bytes;
linear results are truncated.

Raise ``UnsupportedFeature`` naming the register: codes the reference leaves undefined (clamp 5-7, mapping 10-15,
shift 3, filter 6-7), and a color table that runs past entry 255 (offset + width - 1 > 255) at a level the filter
can reach.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from picaemu import numeric
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

Mapping2 = Callable[[np.ndarray, np.ndarray], np.ndarray]
MAPPINGS: Mapping[str, Mapping2] = MappingProxyType(
    {
        "U": lambda u, v: u,
        "U2": lambda u, v: u * u,
        "V": lambda u, v: v,
        "V2": lambda u, v: v * v,
        "(U+V)/2": lambda u, v: (u + v) * np.float32(0.5),
        "(U2+V2)/2": lambda u, v: (u * u + v * v) * np.float32(0.5),
        "sqrt(U2+V2)": lambda u, v: np.minimum(np.sqrt(u * u + v * v), 1),
        "min": np.minimum,
        "max": np.maximum,
        "rmax": lambda u, v: np.minimum(((u + v) * np.float32(0.5) + np.sqrt(u * u + v * v)) * np.float32(0.5), 1),
    }
)


def _mirror(c: np.ndarray) -> np.ndarray:
    """Mirrored repeat: frac(c) when int(c) is even, 1 - frac(c) when odd."""
    whole = np.trunc(c)
    frac = c - whole
    return np.where(whole.astype(np.int64) & 1, 1 - frac, frac)


CLAMPS: Mapping[str, Callable[[np.ndarray], np.ndarray]] = MappingProxyType(
    {
        "clamp to zero": lambda c: np.where(c > 1, np.float32(0), c),
        "clamp to edge": lambda c: np.minimum(c, 1),
        "symmetrical repeat": lambda c: c - np.floor(c),
        "mirrored repeat": _mirror,
        "pulse": lambda c: np.where(c > 0.5, np.float32(1), np.float32(0)),
    }
)
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


def lut128(table: tuple[np.ndarray, np.ndarray], x: np.ndarray) -> np.ndarray:
    """``clamp(value[i] + f · diff[i], 0, 1)`` with ``p = 128 x``, ``i = min(floor p, 127)`` (x >= 0), ``f = p - i``."""
    value, diff = table
    p = np.maximum(numeric.finite(x), 0) * np.float32(MAP_ENTRIES)  # NaN -> entry 0
    i = np.minimum(np.floor(p), MAP_ENTRIES - 1)
    idx = i.astype(np.int64)
    return np.clip(value[idx] + diff[idx] * (p - i).astype(np.float32), 0, 1)


def _rand1(k: np.ndarray) -> np.ndarray:
    return ((((k % 9) + 2) * 3) & 0xF) ^ NOISE_T1[(k // 9) & 0xF]


def _rand2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The lattice gradient from a = rand1(x) and b = rand1(y), in [-1, 1]."""
    b = b + np.where((a & 3) == 1, 4, 0)
    b = b ^ ((a & 1) * 6)
    b = ((b + 10 + a) & 0xF) ^ NOISE_T2[a]
    return (-1.0 + b * (2.0 / 15.0)).astype(np.float32)


def noise(ps: ProctexState, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The noise value at (u, v) (F,) float32, about [-1, 1]: gradient lattice smoothed by the noise LUT."""
    x = np.float32(NOISE_CELLS * ps.frequency[0]) * np.abs(u + np.float32(ps.phase[0]))
    y = np.float32(NOISE_CELLS * ps.frequency[1]) * np.abs(v + np.float32(ps.phase[1]))
    xi = np.trunc(x).astype(np.int32)
    yi = np.trunc(y).astype(np.int32)
    fx = (x - xi).astype(np.float32)
    fy = (y - yi).astype(np.float32)
    s = fx + fy
    ax0, ax1, by0, by1 = _rand1(xi), _rand1(xi + 1), _rand1(yi), _rand1(yi + 1)
    g0 = _rand2(ax0, by0) * s
    g1 = _rand2(ax1, by0) * (s - 1)
    g2 = _rand2(ax0, by1) * (s - 1)
    g3 = _rand2(ax1, by1) * (s - 2)
    sx = lut128(ps.maps["noise"], fx)
    sy = lut128(ps.maps["noise"], fy)
    return _lerp(_lerp(g0, g1, sx), _lerp(g2, g3, sx), sy)


def _lerp(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    return a + (b - a) * t


def _shift(c: np.ndarray, mode: str, clamp: str) -> np.ndarray:
    parity = SHIFT_PARITY[mode]
    if parity is None:
        return np.zeros_like(c)
    step = np.float32(SHIFT_STEP.get(clamp, DEFAULT_SHIFT_STEP))
    return step * (((np.trunc(c).astype(np.int64) + parity) // 2) % 2).astype(np.float32)


def coordinates(ps: ProctexState, uv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(u, v) after abs, noise, shift and clamp, each (F,) float32."""
    uv = np.abs(numeric.finite(uv))  # NaN / Inf coordinates (a shader's 0 * Inf) -> 0 / a large finite value
    u, v = uv[:, 0], uv[:, 1]
    u_shift = _shift(v, ps.u_shift, ps.u_clamp)
    v_shift = _shift(u, ps.v_shift, ps.v_clamp)
    if ps.noise_enable:
        n = noise(ps, u, v)
        u, v = np.abs(u + n * np.float32(ps.amplitude[0])), np.abs(v + n * np.float32(ps.amplitude[1]))
    return CLAMPS[ps.u_clamp](u + u_shift), CLAMPS[ps.v_clamp](v + v_shift)


def _level_color(ps: ProctexState, g: np.ndarray, level: int | np.ndarray) -> np.ndarray:
    """Color-table lookup at position g in [0, 1] of mip ``level`` (an int, or (F,) ints) -> (F,4) float32 0..255.
    Nearest rounds half up (C ``round`` on positive indices)."""
    offset = np.asarray(ps.offsets, np.float32)[level]
    width = np.maximum(np.right_shift(ps.width, level), 1).astype(np.float32)
    index = offset + g * (width - 1)
    last = ps.color.shape[0] - 1
    color = ps.color.astype(np.float32)
    if not ps.linear:
        return color[np.clip(np.floor(index + np.float32(0.5)), 0, last).astype(np.intp)]
    i = np.clip(np.floor(index), 0, last)
    frac = (index - i).astype(np.float32)[:, None]
    idx = i.astype(np.intp)
    return color[idx] + frac * (np.float32(2.0) * ps.color_diff.astype(np.float32))[idx]


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
    """Procedural texels (F,4) uint8 RGBA at ``uv`` (F,2) (see the module docstring)."""
    u, v = coordinates(ps, uv)
    lod = None if lod is None else numeric.finite(lod)
    g = lut128(ps.maps["RGB map"], MAPPINGS[ps.rgb_func](u, v))
    if ps.mip is None or lod is None:
        rgba = _level_color(ps, g, ps.min_lod if ps.mip is not None else 0)
    elif ps.mip == "nearest":
        rgba = _level_color(ps, g, np.clip(np.round(lod), 0, MAX_LEVEL).astype(np.int64))
    else:
        lo = np.clip(np.floor(lod), 0, MAX_LEVEL).astype(np.int64)
        t = (np.asarray(lod, np.float32) - lo)[:, None]
        hi = np.minimum(lo + 1, MAX_LEVEL)
        rgba = _lerp(_level_color(ps, g, lo), _level_color(ps, g, hi), t)
    out = np.clip(np.trunc(rgba), 0, U8_MAX).astype(np.uint8)
    if ps.separate_alpha:
        alpha = lut128(ps.maps["alpha map"], MAPPINGS[ps.alpha_func](u, v))
        out[:, 3] = (alpha * np.float32(U8_MAX)).astype(np.uint8)
    return out


__all__ = ["ProctexState", "lut128", "noise", "proctex_lod", "sample_proctex"]
