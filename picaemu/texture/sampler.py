"""Sampling texture units 0-2 for a batch of fragments: coordinates -> (F, 4) uint8 RGBA.

Receives a ``TextureUnitState``, the unit's coordinates ``uv`` (F, 2) float32 (v = 0 is the bottom row),
``w`` (F,) float32 (texcoord0.w: cube maps, shadow and projection types), optional per-fragment LOD (F,) float32
(``lod`` module; None means level ``min_level``, magnification) and the emulated memory.

Model (pica-pipeline.md §10, pica-formats.md §1.3/§1.9):
- type transforms (unit 0): projection and perspective shadow divide u, v by w; cube maps pick a face and its 2D
  coordinates from the direction (u, v, w); shadow compare depth = min(|w| or |major axis|, 1).
- the levels min..max of every face are decoded (``decode_cached``: reused across draws while their bytes are
  unchanged) and packed into one flat texel array, so one gather serves any mix of levels and faces. Level L
  is (W >> L) x (H >> L); texel row t (0 = bottom) is memory row H_L - 1 - t.
- nearest: k = floor(s * N_L); linear: p = s * N_L - 0.5, blend texels floor(p) and floor(p) + 1 with weights
  from the fraction (float32, rounded half up; hardware weight precision is unknown). Each texel index is
  wrapped on its own (``filtering.wrap``); clamp-to-border texels read the border color.
- LOD: lod <= 0 -> magnification filter on level ``min_level``; otherwise lod clamped to [min, max], minification
  filter on level round(lod) (mip filter nearest) or a blend of floor/ceil levels (mip filter linear): the
  compiled per-fragment rule ``lod.mip_choice``, which the fused fragment kernel calls too.
- shadow types: nearest texel, read as RGBA8 whatever the format register says, depth-compared by
  ``picaemu.fragment.shadow.shadow_compare`` (stored depth = bytes 0-2 big-endian, intensity = byte 3; lit when stored
  >=
  trunc(ref * 0xFFFFFF) - bias, clamped at 0), replicated to RGBA.
- texel fetch count (``counters["texels_fetched"]`` when ``sample`` gets a ``counters`` dict): per fragment, 1 tap
  for a nearest and 4 for a bilinear filter, per level sampled (2 levels for a minified fragment with a linear mip
  filter, else 1); a shadow lookup is 1 tap; a disabled unit fetches nothing.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from picaemu.fragment.shadow import shadow_compare
from picaemu.memory import PhysicalMemory
from picaemu.texture import filtering
from picaemu.texture.decode import decode_level, read_source
from picaemu.texture.formats import TextureFormat, level_bytes, level_offset, level_size, texture_format
from picaemu.texture.lod import TAPS_LINEAR, TAPS_NEAREST, mip_choices
from picaemu.texture.state import CUBE_TYPES, SHADOW_TYPES, TextureUnitState

Arr = np.ndarray
DECODE_CACHE_ENTRIES = 8
# (address, width, height, format, level) -> (the level's bytes when decoded, the read-only decoded image)
_decoded: OrderedDict[tuple, tuple[bytes, np.ndarray]] = OrderedDict()
_decoded_lock = threading.Lock()
# (addresses, width, height, format, levels) -> (the decoded images it packs, the Pyramid)
_pyramids: OrderedDict[tuple, tuple[tuple[np.ndarray, ...], Pyramid]] = OrderedDict()


@lru_cache(maxsize=256)
def _level_span(width: int, height: int, fmt: TextureFormat, level: int) -> tuple[int, int, int, int]:
    """(byte offset from the base address, byte size, width, height) of mip ``level`` (``InvalidTextureSize`` as
    ``level_size``)."""
    w, h = level_size(width, height, level)
    return level_offset(width, height, fmt, level), level_bytes(w, h, fmt), w, h


def decode_cached(
    memory: PhysicalMemory, address: int, width: int, height: int, fmt: TextureFormat | int | str, level: int
) -> np.ndarray:
    """``texture.decode_texture`` of one level, reused across draws while that level's bytes in memory are
    unchanged (compared byte for byte with a copy, so any write is seen); the image is read-only. Keeps the
    ``DECODE_CACHE_ENTRIES`` most recently used levels."""
    if not isinstance(fmt, TextureFormat):
        fmt = texture_format(fmt)
    offset, size, w, h = _level_span(width, height, fmt, level)
    data = read_source(memory, address + offset, size)
    content = data.tobytes()  # compared as bytes: ~10x faster than np.array_equal on a small level
    key = (address, width, height, fmt, level)
    with _decoded_lock:  # replays may run in several threads (GUI worker)
        hit = _decoded.get(key)
        if hit is not None and hit[0] == content:
            _decoded.move_to_end(key)
            return hit[1]
    image = decode_level(data, fmt, w, h)
    image.setflags(write=False)
    _remember(_decoded, key, (content, image))
    return image


def _remember(cache: OrderedDict, key: tuple, value: tuple) -> None:
    """Store ``value`` as the most recent entry of one of this module's caches, keeping the newest
    ``DECODE_CACHE_ENTRIES``."""
    with _decoded_lock:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > DECODE_CACHE_ENTRIES:
            cache.popitem(last=False)


@dataclass(frozen=True)
class Pyramid:
    """Every needed level of every face in one flat (N, 4) uint8 array; ``offsets[level, face]`` index it."""

    texels: np.ndarray
    offsets: np.ndarray  # (levels, faces) int64, indexed by level - first_level
    widths: np.ndarray  # (levels,) int64
    heights: np.ndarray
    first_level: int

    @classmethod
    def load(
        cls, ustate: TextureUnitState, memory: PhysicalMemory, levels: range, fmt: TextureFormat | None = None
    ) -> Pyramid:
        fmt = ustate.format if fmt is None else fmt
        images = [
            [decode_cached(memory, addr, ustate.width, ustate.height, fmt, lv) for addr in ustate.addresses]
            for lv in levels
        ]
        # the same decoded images (read-only, unchanged while cached) make the same pyramid: reuse it
        flat = tuple(img for row in images for img in row)
        key = (ustate.addresses, ustate.width, ustate.height, fmt, levels.start, levels.stop)
        with _decoded_lock:
            hit = _pyramids.get(key)
            if hit is not None and len(hit[0]) == len(flat) and all(a is b for a, b in zip(hit[0], flat, strict=True)):
                _pyramids.move_to_end(key)
                return hit[1]
        pyramid = cls.pack(images, levels.start)
        _remember(_pyramids, key, (flat, pyramid))
        return pyramid

    @classmethod
    def pack(cls, images: list[list[np.ndarray]], first_level: int) -> Pyramid:
        """The pyramid of decoded images (``images[level - first_level][face]``, (H, W, 4) uint8)."""
        sizes = np.array([[img.shape[0] * img.shape[1] for img in row] for row in images], np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes.ravel())[:-1]]).reshape(sizes.shape)
        texels = np.concatenate([img.reshape(-1, 4) for row in images for img in row])
        return cls(
            texels,
            offsets,
            np.array([row[0].shape[1] for row in images], np.int64),
            np.array([row[0].shape[0] for row in images], np.int64),
            first_level,
        )

    def fetch(self, ustate: TextureUnitState, level: Arr, face: Arr, ks: Arr, kt: Arr) -> Arr:
        """(F, 4) uint8 texels at integer coordinates (t = 0 bottom), wrapped; border color where it applies."""
        return filtering.fetch(
            self.texels,
            self.offsets,
            self.widths,
            self.heights,
            _i64(level - self.first_level),
            _i64(face),
            _i64(ks),
            _i64(kt),
            ustate.wrap_s,
            ustate.wrap_t,
            ustate.border_u8,
        )


def _i64(a: Arr) -> Arr:
    return np.ascontiguousarray(a, np.int64)


def _filter(pyr: Pyramid, ustate: TextureUnitState, level: Arr, face: Arr, st: Arr, linear: Arr | bool) -> Arr:
    """Nearest or bilinear sample of one level per fragment: (F, 4) float32."""
    if isinstance(linear, bool):
        lin = np.full(st.shape[0], linear, np.bool_)
    else:
        lin = np.ascontiguousarray(np.broadcast_to(np.asarray(linear, bool), (st.shape[0],)))
    return filtering.filter_2d(
        pyr.texels,
        pyr.offsets,
        pyr.widths,
        pyr.heights,
        _i64(level - pyr.first_level),
        _i64(face),
        np.ascontiguousarray(st, np.float32),
        lin,
        ustate.wrap_s,
        ustate.wrap_t,
        ustate.border_f32,
    )


def cube_coords(uvw: Arr) -> tuple[Arr, Arr, Arr]:
    """Direction (F, 3) -> (face (F,) int 0-5 = +X -X +Y -Y +Z -Z, (F, 2) face coordinates, |major axis|):
    ``filtering.cube_face`` per fragment."""
    n = uvw.shape[0]
    face, st, major = np.empty(n, np.int64), np.empty((n, 2), np.float32), np.empty(n, np.float32)
    filtering.cube_faces(np.ascontiguousarray(uvw, np.float32), face, st, major)
    return face.astype(np.intp), st, major


def unit_coords(ustate: TextureUnitState, uv: Arr, w: Arr) -> tuple[Arr, Arr, Arr | None]:
    """Per type: (face (F,), 2D coords (F, 2) float32, shadow reference depth (F,) or None)."""
    n = uv.shape[0]
    face = np.zeros(n, np.intp)
    if ustate.type in CUBE_TYPES:
        face, st, major = cube_coords(np.column_stack([uv, w]).astype(np.float32))
        return face, st, np.minimum(major, 1.0) if ustate.type == "shadow cube" else None
    divide = ustate.type == "projection" or (ustate.type == "shadow 2D" and not ustate.shadow_ortho)
    if divide:
        with np.errstate(divide="ignore", invalid="ignore"):
            uv = np.nan_to_num(uv / w[:, None]).astype(np.float32)
    ref = np.minimum(np.abs(w), 1.0) if ustate.type in SHADOW_TYPES else None
    return face, uv.astype(np.float32), ref


def _shadow(pyr: Pyramid, ustate: TextureUnitState, face: Arr, st: Arr, ref: Arr) -> Arr:
    level = np.full(st.shape[0], pyr.first_level, np.intp)
    size = np.stack([pyr.widths[level - pyr.first_level], pyr.heights[level - pyr.first_level]], axis=1)
    k = np.floor(st * size).astype(np.int64)
    texel = pyr.fetch(ustate, level, face, k[:, 0], k[:, 1])
    return shadow_compare(texel, ref, ustate.shadow_bias)


def _add(counters: dict | None, taps: int) -> None:
    if counters is not None:
        counters["texels_fetched"] = counters.get("texels_fetched", 0) + int(taps)


def _taps(ustate: TextureUnitState, n: int) -> int:
    """Texels fetched for ``n`` fragments sampled on one level with the magnification filter."""
    return n * (TAPS_LINEAR if ustate.mag_linear else TAPS_NEAREST)


def sample(
    ustate: TextureUnitState,
    uv: Arr,
    w: Arr,
    memory: PhysicalMemory,
    lod: Arr | None = None,
    counters: dict | None = None,
) -> Arr:
    """The unit's color for every fragment: (F, 4) uint8; (0, 0, 0, 0) when the unit is disabled. ``counters``:
    see the module docstring."""
    n = uv.shape[0]
    if not ustate.enabled:
        return np.zeros((n, 4), np.uint8)
    if ustate.type == "2D" and (lod is None or not ustate.needs_lod):  # the common case, in fewer steps
        _add(counters, _taps(ustate, n))
        return _round(_sample_2d(ustate, uv, memory))
    face, st, ref = unit_coords(ustate, uv, w)
    if ref is not None:
        pyr = Pyramid.load(ustate, memory, range(ustate.min_level, ustate.min_level + 1), TextureFormat.RGBA8)
        _add(counters, n * TAPS_NEAREST)
        return _shadow(pyr, ustate, face, st, ref)
    if lod is None or not ustate.needs_lod:
        _add(counters, _taps(ustate, n))
        levels = range(ustate.min_level, ustate.min_level + 1)
        pyr = Pyramid.load(ustate, memory, levels)
        level = np.full(n, ustate.min_level, np.intp)
        return _round(_filter(pyr, ustate, level, face, st, ustate.mag_linear))
    pyr = Pyramid.load(ustate, memory, range(ustate.min_level, ustate.max_level + 1))
    return _round(_mip_sample(pyr, ustate, face, st, lod, counters))


def _sample_2d(ustate: TextureUnitState, uv: Arr, memory: PhysicalMemory) -> Arr:
    """``sample`` of a 2D unit on its first level with its magnification filter, before rounding: what
    ``unit_coords`` + ``_filter`` compute there (face 0, level ``min_level``), (F, 4) float32."""
    n = uv.shape[0]
    pyr = Pyramid.load(ustate, memory, range(ustate.min_level, ustate.min_level + 1))
    zeros = np.zeros(n, np.int64)  # every fragment's level (relative to the first) and face
    return filtering.filter_2d(
        pyr.texels,
        pyr.offsets,
        pyr.widths,
        pyr.heights,
        zeros,
        zeros,
        np.ascontiguousarray(uv, np.float32),
        np.full(n, ustate.mag_linear, np.bool_),
        ustate.wrap_s,
        ustate.wrap_t,
        ustate.border_f32,
    )


def _mip_sample(pyr: Pyramid, ustate: TextureUnitState, face: Arr, st: Arr, lod: Arr, counters: dict | None) -> Arr:
    """The levels and filters ``lod.mip_choice`` picks per fragment, sampled and blended: (F, 4) float32."""
    n = lod.shape[0]
    lo, hi = np.empty(n, np.int64), np.empty(n, np.int64)
    frac, linear = np.empty(n, np.float32), np.empty(n, np.bool_)
    lod32 = np.ascontiguousarray(lod, np.float32)
    u = ustate
    taps = mip_choices(lod32, u.min_level, u.max_level, u.mag_linear, u.min_linear, u.mip_linear, lo, hi, frac, linear)
    _add(counters, taps)
    first = _filter(pyr, ustate, lo, face, st, linear)
    if not ustate.mip_linear:
        return first
    w = frac[:, None]
    return (1 - w) * first + w * _filter(pyr, ustate, hi, face, st, linear)


def _round(color: Arr) -> Arr:
    """float32 0..255 -> uint8, rounding halves up (``min(color + 0.5, 255)`` truncated, in float32)."""
    out = np.empty(color.shape, np.uint8)
    filtering.round_u8(np.ascontiguousarray(color, np.float32), out)
    return out
