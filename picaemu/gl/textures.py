"""Texture units' images as GL textures, decoded once and reused while their bytes in memory are unchanged.

Every format (all 14, ETC1/ETC1A4 included; shadow textures as RGBA8, ``as_sampled``) is decoded by
``picaemu.texture.decode`` to RGBA8 and uploaded as an unsigned-integer ``GL_RGBA8UI`` 2D array texture: layer =
cube face (one layer for 2D), mip level = the unit's level, texel row t = texel row t of the PICA convention (t = 0
the bottom row, memory row H - 1 - t), so the generated shader fetches exact texels with ``texelFetch`` and filters
them itself with the software sampler's arithmetic (``picaemu.gl.shadergen``). A texture is keyed by its face
addresses, level-0 size, format and level count, and compared byte for byte with a copy of what was uploaded at
every draw that binds it (a write by the CPU, a DMA or a render into it is seen); ``TEXTURE_CACHE_ENTRIES`` most
recently used are kept.

``TableTexture`` holds tables the generated code reads with ``texelFetch``: the fragment-lighting LUTs
(``picaemu.gl.lightgen``: ``GL_RG32F``, 24 layers of 256 texels, ``lighting_table``) and the procedural texture's
noise, map and color tables (``picaemu.gl.proctexgen``: ``GL_RGBA32F``, 5 layers of 256); each is re-uploaded
when the draw's decoded tables change.
"""

from __future__ import annotations

import ctypes
import dataclasses
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from OpenGL import GL as gl
from OpenGL.raw.GL.VERSION import GL_1_2 as raw

from picaemu.color.lighting_luts import DecodedLuts
from picaemu.memory import PhysicalMemory
from picaemu.texture.decode import decode_level, read_source
from picaemu.texture.formats import TextureFormat, level_bytes, level_offset, level_size
from picaemu.texture.state import SHADOW_TYPES, TextureUnitState

TEXTURE_CACHE_ENTRIES = 64
TexKey = tuple[tuple[int, ...], int, int, TextureFormat, int]  # (face addresses, width, height, format, levels)


def texture_key(ustate: TextureUnitState) -> TexKey:
    return ustate.addresses, ustate.width, ustate.height, ustate.format, ustate.max_level + 1


def as_sampled(ustate: TextureUnitState) -> TextureUnitState:
    """The unit as GL uploads it: a shadow texture is read as RGBA8 whatever its format register says
    (``picaemu.texture.sampler.sample`` decodes it so), any other unit as it is."""
    if ustate.type in SHADOW_TYPES and ustate.format is not TextureFormat.RGBA8:
        return dataclasses.replace(ustate, format=TextureFormat.RGBA8)
    return ustate


def byte_ranges(ustate: TextureUnitState) -> list[tuple[int, int]]:
    """(address, size) of every face's levels 0..max (what the unit may read)."""
    size = level_offset(ustate.width, ustate.height, ustate.format, ustate.max_level) + level_bytes(
        *level_size(ustate.width, ustate.height, ustate.max_level), ustate.format
    )
    return [(address, size) for address in ustate.addresses]


@dataclass(eq=False)
class GLTexture:
    texture: int
    source: np.ndarray  # every face's bytes, concatenated, as last uploaded
    epoch: int  # the memory epoch (``targets.TargetCache.epoch``) in which ``source`` was last compared


class TextureCache:
    """GL textures by ``texture_key`` (module docstring)."""

    def __init__(self) -> None:
        self._entries: OrderedDict[TexKey, GLTexture] = OrderedDict()
        self._bound: dict[int, int] = {}  # texture image unit -> texture bound there
        self.uploads = 0

    def bind(self, ustate: TextureUnitState, memory: PhysicalMemory, slot: int, epoch: int) -> None:
        """Bind the unit's texture to texture image unit ``slot``, uploaded when new or changed. Memory changes
        only between epochs (a sync), so its bytes are compared once per epoch."""
        key = texture_key(ustate)
        entry = self._entries.get(key)
        if entry is None or entry.epoch != epoch:
            source = np.concatenate(
                [
                    read_source(memory, address, size, f"texture unit {ustate.unit}")
                    for address, size in byte_ranges(ustate)
                ]
            )
            if entry is None:
                entry = self._entries[key] = GLTexture(self._create(ustate), source.copy(), epoch)
                self._upload(ustate, entry.texture, memory)
            elif not np.array_equal(entry.source, source):
                entry.source = source.copy()
                self._upload(ustate, entry.texture, memory)
            entry.epoch = epoch
        self._entries.move_to_end(key)
        while len(self._entries) > TEXTURE_CACHE_ENTRIES:
            _, old = self._entries.popitem(last=False)
            gl.glDeleteTextures(1, [old.texture])
        if self._bound.get(slot) != entry.texture:
            gl.glActiveTexture(gl.GL_TEXTURE0 + slot)
            gl.glBindTexture(gl.GL_TEXTURE_2D_ARRAY, entry.texture)
            self._bound[slot] = entry.texture

    @staticmethod
    def _create(ustate: TextureUnitState) -> int:
        texture = gl.glGenTextures(1)
        gl.glActiveTexture(gl.GL_TEXTURE0 + ustate.unit)  # its unit: the binding ``bind`` remembers stays true
        gl.glBindTexture(gl.GL_TEXTURE_2D_ARRAY, texture)
        gl.glTexStorage3D(
            gl.GL_TEXTURE_2D_ARRAY,
            ustate.max_level + 1,
            gl.GL_RGBA8UI,
            ustate.width,
            ustate.height,
            len(ustate.addresses),
        )
        for name in (gl.GL_TEXTURE_MIN_FILTER, gl.GL_TEXTURE_MAG_FILTER):
            gl.glTexParameteri(gl.GL_TEXTURE_2D_ARRAY, name, gl.GL_NEAREST)
        return texture

    def _upload(self, ustate: TextureUnitState, texture: int, memory: PhysicalMemory) -> None:
        gl.glActiveTexture(gl.GL_TEXTURE0 + ustate.unit)
        gl.glBindTexture(gl.GL_TEXTURE_2D_ARRAY, texture)
        self._bound[ustate.unit] = texture
        gl.glPixelStorei(gl.GL_UNPACK_ALIGNMENT, 4)
        for level in range(ustate.max_level + 1):
            w, h = level_size(ustate.width, ustate.height, level)
            offset = level_offset(ustate.width, ustate.height, ustate.format, level)
            for face, address in enumerate(ustate.addresses):
                data = read_source(memory, address + offset, level_bytes(w, h, ustate.format))
                image = np.ascontiguousarray(decode_level(data, ustate.format, w, h)[::-1])  # row 0 = t 0 (bottom)
                raw.glTexSubImage3D(
                    gl.GL_TEXTURE_2D_ARRAY,
                    level,
                    0,
                    0,
                    face,
                    w,
                    h,
                    1,
                    gl.GL_RGBA_INTEGER,
                    gl.GL_UNSIGNED_BYTE,
                    image.ctypes.data_as(ctypes.c_void_p),
                )
        self.uploads += 1


TABLE_FORMATS = MappingProxyType({2: (gl.GL_RG32F, gl.GL_RG), 4: (gl.GL_RGBA32F, gl.GL_RGBA)})  # by channels


class TableTexture:
    """A float 1D array texture of ``layers`` x ``width`` texels at texture image unit ``slot``, holding the tables
    of the current draw (a texture target no render target binds, so uploads of targets on the active unit never
    displace it). ``bind(owner, make)`` re-uploads when ``owner`` (the decoded tables' object, kept alive: its
    identity is the cache key) changes and ``make()`` — (layers, width, channels) float32 — differs from what the
    texture holds."""

    def __init__(self, slot: int, layers: int, width: int, channels: int) -> None:
        self.slot, self.channels = slot, channels
        self.texture = gl.glGenTextures(1)
        self._owner: object = None
        self._data: np.ndarray | None = None
        self.uploads = 0
        gl.glActiveTexture(gl.GL_TEXTURE0 + slot)
        gl.glBindTexture(gl.GL_TEXTURE_1D_ARRAY, self.texture)
        gl.glTexStorage2D(gl.GL_TEXTURE_1D_ARRAY, 1, TABLE_FORMATS[channels][0], width, layers)
        for name in (gl.GL_TEXTURE_MIN_FILTER, gl.GL_TEXTURE_MAG_FILTER):
            gl.glTexParameteri(gl.GL_TEXTURE_1D_ARRAY, name, gl.GL_NEAREST)

    def bind(self, owner: object, make: Callable[[], np.ndarray]) -> None:
        """Make ``make()`` the tables the generated code reads (uploaded when they change)."""
        if owner is self._owner:
            return
        self._owner = owner
        data = np.ascontiguousarray(make(), np.float32)
        if self._data is not None and np.array_equal(data, self._data):
            return
        gl.glActiveTexture(gl.GL_TEXTURE0 + self.slot)
        gl.glBindTexture(gl.GL_TEXTURE_1D_ARRAY, self.texture)
        gl.glPixelStorei(gl.GL_UNPACK_ALIGNMENT, 4)
        gl.glTexSubImage2D(
            gl.GL_TEXTURE_1D_ARRAY,
            0,
            0,
            0,
            data.shape[1],
            data.shape[0],
            TABLE_FORMATS[self.channels][1],
            gl.GL_FLOAT,
            data.ctypes.data_as(ctypes.c_void_p),
        )
        self._data = data
        self.uploads += 1


def lighting_table(luts: DecodedLuts) -> np.ndarray:
    """(24, 256, 2) float32: the lighting LUTs as ``picaemu.gl.lightgen`` reads them (value, difference)."""
    return np.stack([luts.value, luts.diff], axis=-1)
