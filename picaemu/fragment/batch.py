"""Fragment batching: consecutive draws whose fragment state is the same objects run their fragment side once.

``picaemu.pipeline.Pipeline(batch_fragments=True)`` (the replay's and the CLI's pipeline, which send
``PipelineEventKind.MEMORY_SYNC`` before anything reads memory) defers the fragment side of a draw while the next
draws share its fragment state, then rasterizes, shades and resolves the batch's window triangles as one draw
(``Pipeline.flush``). Pixels are those of one draw at a time: fragments keep rasterization order across the
batch, and every fragment stage is per fragment given the state. This module holds the rules of WHEN a draw may
join a batch and how the batch's per-fragment fates become each draw's exact counters.

A draw's fragment side may wait for the next draw (one pending draw changes nothing: it runs alone at the next
flush, before anything else touches memory) when its state repeats the previous draw's or the state before it
lasted more than one draw (``Pipeline._fragment_side``: a state that changes at every draw never waits); a
second draw joins it (``batchable``, judged once per state) when
their fragment state decoded without error, renders no shadow map, has no enabled texture unit that needs a
per-fragment LOD (so every fragment fetches as many texels and ``texels_fetched`` splits exactly) and no texture
that overlaps the color or depth buffer (a later draw of the batch would read what an earlier one wrote). A
pending batch is run (``Pipeline.flush``) before a draw with other fragment state (``fragment_key``), before a
draw whose vertex or index reads may reach the render targets (``reads_targets``), at every pipeline event but
the vertex side's (``MEMORY_SYNC`` and ``DRAWS_COMPLETE`` included), when a processor observer watches the draw
(it may read memory at draw end) and when a draw raises.

Counters of a batched draw (``split_counters``): the batch records each fragment's ``Fate`` (with the scissor on,
it is applied after rasterization, as for a fragment observer); the fragments of draw d are those of its
triangles (the batch numbers triangles across draws), so ``fragments_rasterized``, ``killed_scissor``,
``killed_alpha``, ``killed_stencil``, ``killed_depth`` and ``fragments_written`` are counts of draw d's fates,
and ``texels_fetched`` = the batch's texels per shaded fragment x draw d's shaded fragments.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from picaemu.draw_state import DrawState, Phase
from picaemu.fragment.framebuffer import FramebufferState
from picaemu.fragment.ops import Fate
from picaemu.geometry.vertex_loader import AttributeRead, DrawKind, VertexLoaderState
from picaemu.texture.formats import level_bytes
from picaemu.texture.state import TextureUnitState

MAX_ELEMENT_BYTES = 4 * 4  # one attribute of one vertex: at most 4 components of 4 bytes
INDEX_LIMIT = {1: 1 << 8, 2: 1 << 16}  # index buffer item bytes -> indices it can name
MIP_CHAIN = 2  # a mip chain holds less than twice its first level (4/3): a conservative texture extent
Range = tuple[int, int]  # [start, end) bytes


def fragment_key(ds: DrawState) -> tuple:
    """The parts the fragment side reads; two draws with the same objects (the draw-state cache hands the same
    part to draws that did not change it) run the same fragment side."""
    return (
        ds.framebuffer,
        ds.varyings,
        ds.raster,
        ds.texture0,
        ds.texture1,
        ds.texture2,
        ds.shading,
        ds.blend_program,
        ds.depth_stencil,
        ds.fragment_ops,
        ds.shadow,
    )


def key_ids(key: tuple) -> tuple[int, ...]:
    """The ids of a key's objects: two keys the caller holds are the same objects when their ids are equal (both
    keys' objects are alive, so their ids are unique)."""
    return tuple(map(id, key))


def _units(ds: DrawState) -> tuple[TextureUnitState, ...]:
    return ds.texture0, ds.texture1, ds.texture2


def _lod_free(unit: TextureUnitState) -> bool:
    """``unit`` samples every fragment alike: disabled, or no per-fragment LOD (``needs_lod``: no mip levels, the
    same magnification and minification filter). So each fragment fetches as many texels (``sampler._taps``),
    and no screen-space derivative (which groups fragments by primitive) is taken."""
    return not unit.enabled or not unit.needs_lod


_last_targets: tuple[FramebufferState, tuple[Range, Range]] | None = None


def target_ranges(fb: FramebufferState) -> tuple[Range, Range]:
    """The byte ranges of the color and depth buffers (remembered for the last framebuffer state object)."""
    global _last_targets
    last = _last_targets
    if last is not None and last[0] is fb:
        return last[1]
    pixels = fb.width * fb.height
    ranges = (
        (fb.color_address, fb.color_address + pixels * fb.color_bpp),
        (fb.depth_address, fb.depth_address + pixels * fb.depth_bpp),
    )
    _last_targets = (fb, ranges)
    return ranges


def _overlaps(r: Range, targets: tuple[Range, ...]) -> bool:
    return any(r[0] < end and start < r[1] for start, end in targets)


_verdicts: OrderedDict[tuple[int, ...], tuple[tuple, bool]] = OrderedDict()  # ids of a key -> (key, verdict)
VERDICTS = 16  # fragment states remembered (a scene cycling through a few textures asks again and again)


def batchable(ds: DrawState, key: tuple, ids: tuple[int, ...]) -> bool:
    """The draw's fragment side may run in a batch with others of its state (module docstring); ``key`` its
    ``fragment_key`` and ``ids`` their ``key_ids``, by which the verdict is remembered (the entry holds the key's
    objects, so their ids stay theirs)."""
    hit = _verdicts.get(ids)
    if hit is not None:
        return hit[1]
    verdict = _batchable(ds)
    _verdicts[ids] = (key, verdict)
    if len(_verdicts) > VERDICTS:
        _verdicts.popitem(last=False)
    return verdict


def refused(ids: tuple[int, ...]) -> bool:
    """``batchable`` already said no to the state of these ``key_ids`` (a lookup only: a state seen once is not
    judged yet)."""
    hit = _verdicts.get(ids)
    return hit is not None and not hit[1]


def _batchable(ds: DrawState) -> bool:
    """``batchable`` without the memo."""
    if ds.shadow is not None or any(phase is Phase.FRAGMENTS for phase, _ in ds.failed):
        return False
    targets = target_ranges(ds.framebuffer)
    for unit in _units(ds):
        if not _lod_free(unit):
            return False
        if unit.enabled:
            size = MIP_CHAIN * level_bytes(unit.width, unit.height, unit.format)
            if any(_overlaps((a, a + size), targets) for a in unit.addresses):
                return False
    return True


_last_span: tuple[tuple[AttributeRead, ...], tuple[int, int, int, int]] | None = None


def _read_span(reads: tuple[AttributeRead, ...]) -> tuple[int, int, int, int]:
    """(lowest address, highest address, smallest stride, largest stride) of a layout's reads (remembered for the
    last layout: the draws of one layout share its ``reads`` tuple)."""
    global _last_span
    last = _last_span
    if last is not None and last[0] is reads:
        return last[1]
    addresses, strides = [r.address for r in reads], [r.stride for r in reads]
    span = (min(addresses), max(addresses), min(strides), max(strides))
    _last_span = (reads, span)
    return span


def reads_targets(vl: VertexLoaderState | None, kind: DrawKind, targets: tuple[Range, ...]) -> bool:
    """The draw's vertex and index reads may reach ``targets`` (conservatively: one range from the lowest read of
    the first vertex to the highest of the last; draw-elements may name any index its index type holds; an
    attribute read is at most 4 elements of 4 bytes). Immediate draws read no memory."""
    if vl is None or kind is DrawKind.IMMEDIATE or not vl.reads:
        return False
    if kind is DrawKind.ELEMENTS:
        item = vl.index_dtype.itemsize
        if _overlaps((vl.index_address, vl.index_address + vl.count * item), targets):
            return True
        first, last = 0, INDEX_LIMIT[item] - 1
    else:
        first, last = vl.first, vl.first + vl.count - 1
    low, high, small, large = _read_span(vl.reads)
    return last >= first and _overlaps((low + small * first, high + large * last + MAX_ELEMENT_BYTES), targets)


FATES = len(Fate)
FATE_COUNTERS = {
    "killed_scissor": Fate.SCISSOR,
    "killed_alpha": Fate.ALPHA,
    "killed_stencil": Fate.STENCIL,
    "killed_depth": Fate.DEPTH,
    "fragments_written": Fate.WRITTEN,
}


def split_counters(draw_of: np.ndarray, fate: np.ndarray, draws: int, texels: int) -> list[dict[str, int]]:
    """Each draw's fragment counters from the batch's fragments: ``draw_of`` (F,) int64 the draw of each
    fragment, ``fate`` (F,) uint8 its ``Fate``, ``texels`` the batch's ``texels_fetched`` (module docstring).
    One pass: a (draws, fates) table of counts."""
    table = np.bincount(draw_of * FATES + fate, minlength=draws * FATES).reshape(draws, FATES)
    rasterized = table.sum(axis=1)
    shaded = rasterized - table[:, Fate.SCISSOR]
    total = int(shaded.sum())
    per = texels // total if total else 0
    rows = table.tolist()
    return [
        {
            "fragments_rasterized": int(rasterized[d]),
            "texels_fetched": int(shaded[d]) * per,
            **{name: rows[d][code] for name, code in FATE_COUNTERS.items()},
        }
        for d in range(draws)
    ]
