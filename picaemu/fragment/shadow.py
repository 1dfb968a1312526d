"""Shadow maps: the shadow-rendering fragment operation (COLOR_OPERATION mode "shadow") that writes depth and
penumbra intensity into a 32-bit color buffer, and the depth compare a texture unit applies to shadow textures.

Shadow texel (pica-pipeline.md §10.6, §15.8): 4 bytes in memory order ``d[23:16], d[15:8], d[7:0], intensity`` —
a 24-bit depth stored big-endian and an 8-bit intensity. Read as an RGBA8 texture color (R = byte 3, G = byte 2,
B = byte 1, A = byte 0) that is ``depth = A << 16 | B << 8 | G``, ``intensity = R``. A map must start at every
byte 0xFF (far, unshadowed).

Owns: ``ShadowState`` (0x130 FRAGOP_SHADOW: K = penumbra scale + bias, L = -scale, float16 each), and

- ``shadow_write(sstate, pixel, depth, intensity, texels)``: in place, in fragment order (later fragments see
  earlier ones' writes; numba). ``pixel`` (F,) int64 index into ``texels`` (P,4) uint8 memory-order bytes
  (the pipeline maps window x, y through the buffer's tiling); ``depth`` (F,) float32 after the depth map;
  ``intensity`` (F,) uint8 = the TEV output's green. With ``d = trunc(clamp(depth, 0, 1) · 0xFFFFFF)`` and the
  stored (D, S): nothing when d >= D; else if intensity == 0 then D = d; else S = min(S, clamp(trunc(s'), 0,
  255)) with ``s' = intensity / (K + L · d / D)``.
- ``shadow_compare(texels, ref, bias)``: texels (F,4) uint8 RGBA (one per fragment) or (F,K,4) with ``weights``
  (F,K) float32 (percentage-closer filtering); ``ref`` (F,) float32 reference depth in [0, 1]; ``bias`` the raw
  24-bit bias of TEXUNIT0_SHADOW (bit 0 ignored). ``z = max(trunc(ref · 0xFFFFFF) - bias, 0)``; a texel is lit
  (its intensity) when ``depth >= z`` and 0 otherwise (Azahar's software rule; its GLSL path uses ``>``; the
  hardware's is unknown). Returns (F,4) uint8, the result replicated to RGBA.
- ``shadow_coords_2d(uv, w, perspective)`` and ``shadow_ref_cube(m)``: the reference depth of shadow 2D
  (``min(|w|, 1)``, coordinates divided by w when ``perspective``) and shadow cube (``min(m, 1)``) textures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from picaemu.errors import PipelineError
from picaemu.regs import access, id_of
from picaemu.state import GpuState

DEPTH_MAX = 0xFFFFFF  # 24-bit depth of 1.0
DEPTH_BYTES = 3  # bytes 0..2: depth, most significant first
INTENSITY_BYTE = 3
BYTE_BITS = 8
U8_MAX = 255
BIAS_IGNORED_BITS = 1  # bit 0 of the 0x08B bias field is the orthographic flag
# RGBA channel order of a texture color -> which memory byte it came from (R = byte 3 ... A = byte 0)
RGBA_FROM_BYTE = (3, 2, 1, 0)


@dataclass(frozen=True)
class ShadowState:
    """Penumbra constants of FRAGOP_SHADOW: ``s' = s / (constant + linear · d / D)``."""

    constant: float
    linear: float

    @classmethod
    def from_state(cls, state: GpuState) -> ShadowState:
        return cls.from_regs(state.regs)

    @classmethod
    def from_regs(cls, regs: np.ndarray) -> ShadowState:
        return cls(
            float(access.value(regs, "FRAGOP_SHADOW", "constant")), float(access.value(regs, "FRAGOP_SHADOW", "linear"))
        )


def unpack_texels(texels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Memory-order shadow texels (..., 4) uint8 -> (depth (...,) int64, intensity (...,) int64)."""
    t = np.asarray(texels).astype(np.int64)
    depth = np.zeros(t.shape[:-1], np.int64)
    for k in range(DEPTH_BYTES):
        depth = (depth << BYTE_BITS) | t[..., k]
    return depth, t[..., INTENSITY_BYTE]


def pack_texels(depth: np.ndarray, intensity: np.ndarray) -> np.ndarray:
    """(depth 24-bit, intensity 8-bit) arrays -> memory-order texels (..., 4) uint8."""
    depth = np.asarray(depth, np.int64)
    out = np.empty((*depth.shape, 4), np.uint8)
    for k in range(DEPTH_BYTES):
        out[..., k] = (depth >> (BYTE_BITS * (DEPTH_BYTES - 1 - k))) & U8_MAX
    out[..., INTENSITY_BYTE] = np.asarray(intensity, np.int64)
    return out


@numba.njit(cache=True, error_model="numpy")
def _write_kernel(pixel, d, s, texels, constant, linear):  # pragma: no cover - compiled
    for i in range(pixel.shape[0]):
        t = texels[pixel[i]]
        stored = (np.int64(t[0]) << 16) | (np.int64(t[1]) << 8) | np.int64(t[2])
        if d[i] >= stored:
            continue
        if s[i] == 0:
            t[0] = (d[i] >> 16) & 0xFF
            t[1] = (d[i] >> 8) & 0xFF
            t[2] = d[i] & 0xFF
            continue
        scaled = np.float32(s[i]) / (np.float32(constant) + np.float32(linear) * np.float32(d[i]) / np.float32(stored))
        value = np.int64(255) if not scaled < 255.0 else (np.int64(0) if not scaled > 0.0 else np.int64(scaled))
        if value < t[3]:
            t[3] = value


def shadow_write(
    sstate: ShadowState, pixel: np.ndarray, depth: np.ndarray, intensity: np.ndarray, texels: np.ndarray
) -> None:
    """Apply the shadow-rendering update of every fragment to ``texels`` (P,4) uint8 in place (module doc)."""
    if texels.dtype != np.uint8 or texels.ndim != 2 or texels.shape[1] != 4:
        raise PipelineError(f"shadow map must be (P, 4) uint8 bytes, not {texels.dtype} {texels.shape}")
    pixel = np.asarray(pixel, np.int64)
    if pixel.size and (pixel.min() < 0 or pixel.max() >= texels.shape[0]):
        raise PipelineError("shadow write outside the shadow map", register=id_of("FRAGOP_SHADOW"))
    d = (np.clip(np.asarray(depth, np.float32), 0, 1).astype(np.float64) * DEPTH_MAX).astype(np.int64)
    _write_kernel(pixel, d, np.asarray(intensity, np.uint8), texels, sstate.constant, sstate.linear)


def shadow_compare(texels: np.ndarray, ref: np.ndarray, bias: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Depth-compared shadow intensity (F,4) uint8 from RGBA shadow texels (see the module docstring)."""
    rgba = np.asarray(texels)
    memory_order = rgba[..., list(RGBA_FROM_BYTE)]  # RGBA_FROM_BYTE is its own inverse
    stored, intensity = unpack_texels(memory_order)
    z_ref = (np.clip(np.asarray(ref, np.float32), 0, 1).astype(np.float64) * DEPTH_MAX).astype(np.int64)
    z = np.maximum(z_ref - ((int(bias) >> BIAS_IGNORED_BITS) << BIAS_IGNORED_BITS), 0)
    if rgba.ndim == 3:
        if weights is None:
            raise PipelineError("shadow compare of (F, K, 4) texels needs (F, K) filter weights")
        lit = np.where(stored >= z[:, None], intensity, 0).astype(np.float32)
        value = np.trunc((lit * np.asarray(weights, np.float32)).sum(axis=1) + np.float32(1.0 / 1024))
    else:
        value = np.where(stored >= z, intensity, 0)
    out = np.clip(value, 0, U8_MAX).astype(np.uint8)
    return np.repeat(out[:, None], 4, axis=1)


def shadow_coords_2d(uv: np.ndarray, w: np.ndarray, perspective: bool) -> tuple[np.ndarray, np.ndarray]:
    """Shadow 2D: (coordinates (F,2), reference depth (F,)); perspective divides u, v by w (w = 0 gives 0)."""
    uv = np.asarray(uv, np.float32)
    w = np.asarray(w, np.float32)
    if perspective:
        inv = np.divide(np.float32(1), w, out=np.zeros_like(w), where=w != 0)
        uv = uv * inv[:, None]
    return uv, np.minimum(np.abs(w), 1).astype(np.float32)


def shadow_ref_cube(m: np.ndarray) -> np.ndarray:
    """Shadow cube: the reference depth from the major-axis magnitude m (F,)."""
    return np.minimum(np.asarray(m, np.float32), 1).astype(np.float32)


__all__ = [
    "ShadowState",
    "pack_texels",
    "shadow_compare",
    "shadow_coords_2d",
    "shadow_ref_cube",
    "shadow_write",
    "unpack_texels",
]
