"""Render targets of the OpenGL backend: GL copies of color and depth/stencil buffers that live in emulated memory,
and the rule that keeps the two in step.

A ``Target`` mirrors one buffer (``TargetKey``: kind, address, format, width, height, orientation) as a GL
texture whose row r is window row y = r (y up, as GL's lower-left origin): color buffers as RGBA8 (every color
format expanded by ``framebuffer.decode_color``; pixel words of RGBA8 go through unchanged as
``GL_UNSIGNED_INT_8_8_8_8``), depth/stencil buffers as ``GL_DEPTH32F_STENCIL8`` holding the integer depth q of the
buffer's format as the float q / 2^24 (exact in float32 for 16- and 24-bit q, so depth tests compare exactly what
the memory holds) and the stencil byte.

Coherence (one bit each): ``dirty`` = GL holds draws that memory lacks; ``verified`` = memory was not touched by
anything but this backend since the last upload or write-back. ``TargetCache.sync()`` writes every dirty target
back and clears every ``verified`` bit (the replay calls it, through ``PipelineEventKind.MEMORY_SYNC``, before
anything outside the pipeline reads or writes memory); at its next use an unverified target compares the
memory bytes with ``shadow`` (the bytes of its last upload or write-back) and uploads only when they differ.
Before a draw uses a buffer, every other dirty target whose bytes overlap it is written back and unverified
(``claim``), and so is every dirty target a texture unit reads (``write_back_overlapping``).
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from OpenGL import GL as gl
from OpenGL.raw.GL.VERSION import GL_1_1 as raw

from picaemu.fragment import framebuffer as fbm
from picaemu.memory import PhysicalMemory

DEPTH_SCALE = 2.0**-24  # integer depth q <-> float q * 2^-24 in the GL depth buffer
COLOR, DEPTH = "color", "depth"


@dataclass(frozen=True)
class TargetKey:
    address: int
    format: fbm.ColorFormat | fbm.DepthFormat  # its type says which buffer: ``kind``
    width: int
    height: int
    flipped: bool

    @property
    def kind(self) -> str:
        return COLOR if isinstance(self.format, fbm.ColorFormat) else DEPTH

    @property
    def bpp(self) -> int:
        fmt = self.format
        return fbm.COLOR_BPP[fmt] if isinstance(fmt, fbm.ColorFormat) else fbm.DEPTH_BPP[fmt]

    @property
    def size(self) -> int:
        return self.width * self.height * self.bpp

    def overlaps(self, address: int, size: int) -> bool:
        return self.address < address + size and address < self.address + self.size


@functools.lru_cache(maxsize=16)
def window_pixels(width: int, height: int, flipped: bool) -> np.ndarray:
    """(H * W,) int64 tiled pixel index of window pixel (x, y) at [y * W + x] (GL row order, y up)."""
    y, x = np.mgrid[0:height, 0:width]
    pixels = fbm.pixel_index(x.ravel(), y.ravel(), width, height, flipped)
    pixels.flags.writeable = False
    return pixels


@dataclass(eq=False)
class Target:
    """One buffer's GL texture and its coherence state (module docstring)."""

    key: TargetKey
    texture: int
    dirty: bool = False
    verified: bool = False
    shadow: np.ndarray | None = None
    uploads: int = 0
    write_backs: int = 0
    fbos: dict[Any, int] = field(default_factory=dict)

    def memory_bytes(self, memory: PhysicalMemory) -> np.ndarray:
        return memory.bytes(self.key.address, self.key.size, f"{self.key.kind} buffer")

    def ensure_current(self, memory: PhysicalMemory) -> None:
        """Upload memory into GL unless GL already holds it (dirty, verified, or bytes equal to ``shadow``)."""
        if self.dirty or self.verified:
            return
        buf = self.memory_bytes(memory)
        if self.shadow is None or not np.array_equal(buf, self.shadow):
            self._upload(buf)
            self.shadow = buf.copy()
        self.verified = True

    def write_back(self, memory: PhysicalMemory) -> bool:
        """Read GL back into memory when GL holds draws memory lacks; True when it did."""
        if not self.dirty:
            return False
        buf = self.memory_bytes(memory)
        self._download(buf)
        self.shadow = buf.copy()
        self.dirty = False
        self.write_backs += 1
        return True

    def _upload(self, buf: np.ndarray) -> None:
        k = self.key
        words = fbm.gather_pixels(buf, window_pixels(k.width, k.height, k.flipped), k.bpp)
        gl.glBindTexture(gl.GL_TEXTURE_2D, self.texture)
        if isinstance(k.format, fbm.ColorFormat):
            if k.format is not fbm.ColorFormat.RGBA8:
                words = fbm.decode_color(words, k.format).view(">u4").astype(np.uint32)  # r g b a -> word
            data = np.ascontiguousarray(words, np.uint32)
            raw.glTexSubImage2D(
                gl.GL_TEXTURE_2D,
                0,
                0,
                0,
                k.width,
                k.height,
                gl.GL_RGBA,
                gl.GL_UNSIGNED_INT_8_8_8_8,
                data.ctypes.data_as(ctypes.c_void_p),
            )
        else:
            depth, stencil = fbm.split_depth_word(words, k.format)
            packed = np.empty((words.shape[0], 2), np.uint32)
            packed[:, 0] = (depth.astype(np.float32) * np.float32(DEPTH_SCALE)).view(np.uint32)
            packed[:, 1] = stencil
            raw.glTexSubImage2D(
                gl.GL_TEXTURE_2D,
                0,
                0,
                0,
                k.width,
                k.height,
                gl.GL_DEPTH_STENCIL,
                gl.GL_FLOAT_32_UNSIGNED_INT_24_8_REV,
                packed.ctypes.data_as(ctypes.c_void_p),
            )
        self.uploads += 1

    def _download(self, buf: np.ndarray) -> None:
        k = self.key
        pixels = window_pixels(k.width, k.height, k.flipped)
        fbo = self.fbos.get("read")
        if fbo is None:
            fbo = self.fbos["read"] = gl.glGenFramebuffers(1)
            gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, fbo)
            point = gl.GL_COLOR_ATTACHMENT0 if k.kind == COLOR else gl.GL_DEPTH_STENCIL_ATTACHMENT
            gl.glFramebufferTexture2D(gl.GL_READ_FRAMEBUFFER, point, gl.GL_TEXTURE_2D, self.texture, 0)
        gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, fbo)
        gl.glPixelStorei(gl.GL_PACK_ALIGNMENT, 4)
        if isinstance(k.format, fbm.ColorFormat):
            words = np.empty(k.width * k.height, np.uint32)
            raw.glReadPixels(
                0, 0, k.width, k.height, gl.GL_RGBA, gl.GL_UNSIGNED_INT_8_8_8_8, words.ctypes.data_as(ctypes.c_void_p)
            )
            if k.format is not fbm.ColorFormat.RGBA8:
                words = fbm.encode_color(words.astype(">u4").view(np.uint8).reshape(-1, 4), k.format)
        else:
            packed = np.empty((k.width * k.height, 2), np.uint32)
            raw.glReadPixels(
                0,
                0,
                k.width,
                k.height,
                gl.GL_DEPTH_STENCIL,
                gl.GL_FLOAT_32_UNSIGNED_INT_24_8_REV,
                packed.ctypes.data_as(ctypes.c_void_p),
            )
            depth = (packed[:, 0].view(np.float32).astype(np.float64) / DEPTH_SCALE).astype(np.uint32)
            words = fbm.join_depth_word(depth, (packed[:, 1] & 0xFF).astype(np.uint8), k.format)
        fbm.scatter_pixels(buf, pixels, words, k.bpp)


class TargetCache:
    """Every target made so far, by key; the framebuffer objects that pair them."""

    def __init__(self) -> None:
        self.targets: dict[TargetKey, Target] = {}
        self.epoch = 0  # counts syncs and write-backs: memory may have changed since the previous value
        self._fbos: dict[tuple[TargetKey | None, TargetKey | None], int] = {}
        self._bound = 0  # the framebuffer object bound for drawing

    def get(self, key: TargetKey) -> Target:
        target = self.targets.get(key)
        if target is None:
            texture = gl.glGenTextures(1)
            gl.glBindTexture(gl.GL_TEXTURE_2D, texture)
            internal = gl.GL_RGBA8 if key.kind == COLOR else gl.GL_DEPTH32F_STENCIL8
            gl.glTexStorage2D(gl.GL_TEXTURE_2D, 1, internal, key.width, key.height)
            target = self.targets[key] = Target(key, texture)
        return target

    def claim(self, key: TargetKey, memory: PhysicalMemory) -> Target:
        """The target of ``key``, current with memory, after writing back and unverifying every other target
        that shares bytes with it."""
        for other in self.targets.values():
            if other.key != key and other.key.overlaps(key.address, key.size):
                self.epoch += other.write_back(memory)
                other.verified = False
        target = self.get(key)
        target.ensure_current(memory)
        return target

    def write_back_overlapping(self, address: int, size: int, memory: PhysicalMemory) -> None:
        """Write back every dirty target holding bytes of [address, address + size) (a texture about to be read)."""
        for target in self.targets.values():
            if target.dirty and target.key.overlaps(address, size):
                self.epoch += target.write_back(memory)

    def framebuffer(self, color: Target | None, depth: Target | None) -> int:
        """The framebuffer object with these attachments (made once per pair)."""
        pair = (color.key if color else None, depth.key if depth else None)
        fbo = self._fbos.get(pair)
        if fbo is None:
            fbo = self._fbos[pair] = gl.glGenFramebuffers(1)
            gl.glBindFramebuffer(gl.GL_DRAW_FRAMEBUFFER, fbo)
            self._bound = fbo
            if color is not None:
                gl.glFramebufferTexture2D(
                    gl.GL_DRAW_FRAMEBUFFER, gl.GL_COLOR_ATTACHMENT0, gl.GL_TEXTURE_2D, color.texture, 0
                )
            else:
                gl.glDrawBuffer(gl.GL_NONE)
            if depth is not None:
                gl.glFramebufferTexture2D(
                    gl.GL_DRAW_FRAMEBUFFER, gl.GL_DEPTH_STENCIL_ATTACHMENT, gl.GL_TEXTURE_2D, depth.texture, 0
                )
        if fbo != self._bound:
            gl.glBindFramebuffer(gl.GL_DRAW_FRAMEBUFFER, fbo)
            self._bound = fbo
        return fbo

    def sync(self, memory: PhysicalMemory | None) -> None:
        """Write every dirty target back and forget that memory was verified (module docstring)."""
        self.epoch += 1
        for target in self.targets.values():
            if memory is not None:
                target.write_back(memory)
            target.verified = False

    def mark_stale(self, keys: list[TargetKey]) -> None:
        """Memory of these targets was changed outside GL (a draw the software pipeline ran)."""
        for key in keys:
            if key in self.targets:
                self.targets[key].verified = False
