"""What a draw makes the GPU read and write in memory, found with picaemu's own per-draw decoders.

``DrawReads`` is a ``PipelineSink``: the recorder runs every command list through a ``CommandProcessor`` over its
mirror of memory, and at each draw this sink names

- CPU data the draw reads (``fetch(address, size)``): the index buffer (draw elements; read first, since the
  vertex range follows from the indices), every loaded attribute's span from the lowest to the highest vertex
  index (base + loader offset + stride * index, element size x components), and every face of every enabled
  texture unit with all its mip levels (``level_offset`` of the level past the last one);
- render targets (``target(address, size)``): the color buffer when the draw reads or writes it, the depth/stencil
  buffer when it reads or writes depth or stencil (width x height x bytes per pixel).

Shader code, uniforms and LUTs travel inside the command list itself. A draw whose registers do not decode (the
same error the replay would raise) is reported through ``warn`` and records nothing more.
``Intervals`` is the small set of disjoint half-open byte ranges the recorder keeps its bookkeeping in (and
``picaemu lint`` the memory a capture defines).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

from picaemu.draw import DrawCall, DrawKind, PipelineEventKind
from picaemu.draw_state import DrawState
from picaemu.errors import LinkError, PicaError, PipelineError
from picaemu.geometry.vertex_loader import MAX_DRAW_VERTICES
from picaemu.regs import id_of
from picaemu.state import GpuState
from picaemu.texture.formats import level_bytes, level_offset
from picaemu.texture.state import NUM_UNITS, TextureUnitState

RangeSink = Callable[[int, int], None]


class Intervals:
    """Disjoint half-open ranges [lo, hi) of addresses, kept sorted and merged."""

    def __init__(self) -> None:
        self._lo: list[int] = []
        self._hi: list[int] = []

    def __len__(self) -> int:
        return len(self._lo)

    def clear(self) -> None:
        self._lo.clear()
        self._hi.clear()

    def add(self, lo: int, hi: int) -> None:
        if hi <= lo:
            return
        i = bisect.bisect_left(self._hi, lo)  # first range that ends at or after lo
        j = bisect.bisect_right(self._lo, hi)  # ranges [i, j) touch [lo, hi)
        if i < j:
            lo, hi = min(lo, self._lo[i]), max(hi, self._hi[j - 1])
        self._lo[i:j], self._hi[i:j] = [lo], [hi]

    def missing(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """The parts of [lo, hi) that no range covers, in order."""
        out = []
        i = bisect.bisect_right(self._hi, lo)
        while lo < hi:
            if i >= len(self._lo) or self._lo[i] >= hi:
                out.append((lo, hi))
                break
            if self._lo[i] > lo:
                out.append((lo, self._lo[i]))
            lo = max(lo, self._hi[i])
            i += 1
        return out

    def covers(self, lo: int, hi: int) -> bool:
        """Whether [lo, hi) is covered: touching ranges merge, so one range holds it all (an empty one is)."""
        end = self.end_of(lo)
        return hi <= lo or (end is not None and hi <= end)

    def end_of(self, address: int) -> int | None:
        """The end of the range that holds ``address``; None when no range does."""
        i = bisect.bisect_right(self._lo, address) - 1
        return self._hi[i] if i >= 0 and address < self._hi[i] else None


def vertex_spans(call: DrawCall) -> list[tuple[int, int]]:
    """(address, bytes) of the index buffer and every loaded attribute span of a draw (none for immediate
    draws). Reading the indices goes through ``call.memory`` (the recorder's mirror fetches them on demand)."""
    if call.kind is DrawKind.IMMEDIATE:
        return []
    vl = call.draw_state.need("vertex_range")
    if vl.count == 0:
        return []
    if vl.count > MAX_DRAW_VERTICES:
        raise PipelineError(
            f"draw of {vl.count} vertices exceeds the limit of {MAX_DRAW_VERTICES}", register=id_of("NUMVERTICES")
        )
    spans = []
    if call.kind is DrawKind.ELEMENTS:
        spans.append((vl.index_address, vl.count * vl.index_dtype.itemsize))
        indices = call.memory.view(vl.index_address, vl.count, vl.index_dtype, "index buffer")
        lo, hi = int(indices.min()), int(indices.max())
    else:
        lo, hi = vl.first, vl.first + vl.count - 1
    for read in vl.reads:
        spans.append((read.address + read.stride * lo, read.stride * (hi - lo) + read.dtype.itemsize * read.components))
    return spans


def texture_bytes(tex: TextureUnitState) -> int:
    """Bytes of one face of a texture unit's texture, every mip level up to ``max_level`` included."""
    last = tex.max_level
    return level_offset(tex.width, tex.height, tex.format, last) + level_bytes(
        tex.width >> last, tex.height >> last, tex.format
    )


def texture_spans(ds: DrawState) -> list[tuple[int, int]]:
    """(address, bytes) of every face of every enabled texture unit of a draw, all mip levels included."""
    spans = []
    for unit in range(NUM_UNITS):
        tex = ds.need(f"texture{unit}")
        if tex.enabled:
            spans += [(address, texture_bytes(tex)) for address in tex.addresses]
    return spans


def target_spans(ds: DrawState) -> list[tuple[int, int]]:
    """(address, bytes) of the color and depth/stencil buffers the draw reads or writes."""
    fb = ds.need("framebuffer")
    pixels = fb.width * fb.height
    spans = []
    if fb.color_read or fb.color_write:
        spans.append((fb.color_address, pixels * fb.color_bpp))
    if fb.depth_read or fb.depth_write or fb.stencil_read or fb.stencil_write:
        spans.append((fb.depth_address, pixels * fb.depth_bpp))
    return spans


class DrawReads:
    """The recorder's pipeline: hands each draw's reads to ``fetch`` and its render targets to ``target``."""

    def __init__(
        self,
        fetch: RangeSink,
        target: RangeSink,
        warn: Callable[[str], None],
        on_draw: Callable[[DrawCall], None] | None = None,
    ) -> None:
        self.fetch, self.target, self.warn, self.on_draw = fetch, target, warn, on_draw
        self.draws = 0

    def draw(self, call: DrawCall) -> None:
        self.draws += 1
        if self.on_draw is not None:  # the recorder matches the draw to the call that made it
            self.on_draw(call)
        try:
            for span in vertex_spans(call) + texture_spans(call.draw_state):
                self.fetch(*span)
            for span in target_spans(call.draw_state):
                self.target(*span)
        except LinkError:
            raise
        except PicaError as err:
            self.warn(f"draw #{call.index}: {err}; the memory it reads is not (all) recorded")

    def event(self, kind: PipelineEventKind, state: GpuState) -> None:
        return None
