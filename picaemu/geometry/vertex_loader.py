"""Vertex loader: shader input attributes of one draw, from vertex arrays, fixed attributes or immediate data.

Receives a ``VertexLoaderState`` (registers 0x200-0x22A, 0x242, decoded once per draw by ``picaemu.draw_state``),
the fixed-attribute store, emulated memory and the draw kind; returns a ``VertexBatch``:

- ``attributes``: (U, 16, 4) float32 — input attribute k of unique vertex u at [u, k]; attributes past the
  configured count are 0. With ``configured_only`` (the pipeline's choice): (U, K, 4), K the configured count
  (the shader unit reads input registers past the array as 0: the same values, without writing 16 per vertex).
- ``inverse``: (N,) int64 — row of ``attributes`` for each of the N vertices of the draw, in submission order.
  Draw-elements loads (and so shades) each distinct index once: the post-transform cache's visible effect for
  pure shaders (pica-pipeline.md §1.6).
- ``indices``: (U,) int64 — the vertex index of each row (for inspection).
- ``identity``: True when ``inverse`` is ``arange(N)`` (draw-arrays and immediate draws: callers may skip the
  gather ``rows[inverse]``).

Loader layout (pica-pipeline.md §1.2): each of the 12 loaders walks its component slots with a running byte
offset; an attribute slot aligns the offset to its element size, a padding slot (12-15) aligns to 4 and skips
4-16 bytes. Attribute a of vertex v is read at ``base + loader_offset + slot_offset + stride * v``; elements
(``ELEMENT_FORMATS``) convert to float without normalisation; missing components come from
``DEFAULT_COMPONENTS``. A loader naming an attribute overrides the fixed-attribute bit (3dbrew); a later loader
naming the same attribute wins. An attribute that is neither fixed nor loaded would keep a value from an earlier
vertex ("vertex retention") on hardware; that is not emulated and raises ``UnsupportedFeature``.

Limits: a draw of more than ``MAX_DRAW_VERTICES`` raises ``PipelineError``; a read outside memory raises
``MemoryFault`` naming the loader or the index buffer.

The element rules here (``ELEMENT_FORMATS`` and the tables made from it, ``DEFAULT_COMPONENTS``, the layout in
``AttributeRead``) are also the compiled loader's (``picaemu.fused.loading`` freezes them: this file is part of
the kernel cache's digest).
"""

# picaemu: kernel constants (element tables ``picaemu.fused.loading`` freezes, ``picaemu.kernel_cache``)

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

import numpy as np

from picaemu.errors import MemoryFault, PipelineError, UnsupportedFeature
from picaemu.memory import PhysicalMemory
from picaemu.regs import access, id_of
from picaemu.regs.blocks.geometry import ATTRIB_TYPES, NUM_LOADERS
from picaemu.state import GpuState


class DrawKind(Enum):
    """How a draw fetches its vertices: the trigger register it wrote (arrays: consecutive; elements: through
    an index buffer) or immediate-mode vertices fed through the fixed-attribute port (``picaemu.draw``'s
    ``DrawCall.kind``)."""

    ARRAYS = "draw arrays"
    ELEMENTS = "draw elements"
    IMMEDIATE = "immediate"


NUM_INPUTS = 16
NUM_ATTRIBS = 12
MAX_SLOTS = 12
PAD_FIRST = 12  # slot codes 12-15: padding of 4 * (code - 11) bytes
MAX_DRAW_VERTICES = 1 << 20
DEFAULT_COMPONENTS = np.array([0.0, 0.0, 0.0, 1.0], np.float32)  # x, y, z, w of a component no element gives
# THE element formats, by the attrN_type code (``ATTRIB_TYPES``: 0 s8, 1 u8, 2 s16, 3 f32): little-endian, two's
# complement when signed, converted to float without normalisation. The staged loader reads elements as these
# dtypes; the compiled one (``picaemu.fused.loading``) by the tables below, made from them.
ELEMENT_FORMATS: tuple[np.dtype, ...] = (np.dtype("<i1"), np.dtype("<u1"), np.dtype("<i2"), np.dtype("<f4"))
ELEMENT_DTYPES: dict[str, np.dtype] = {ATTRIB_TYPES[code]: dtype for code, dtype in enumerate(ELEMENT_FORMATS)}
ELEMENT_SIZES = np.array([d.itemsize for d in ELEMENT_FORMATS], np.int64)  # bytes per element, by code
ELEMENT_SIGNED = np.array([d.kind == "i" for d in ELEMENT_FORMATS], np.bool_)  # two's complement, by code
F32 = ELEMENT_DTYPES["f32"]
F32_FORMAT = ELEMENT_FORMATS.index(F32)  # its elements are moved as bytes (NaN payloads kept)
INDEX_DTYPES: dict[str, np.dtype] = {"u8": np.dtype("<u1"), "u16": np.dtype("<u2")}


@dataclass(frozen=True)
class AttributeRead:
    """One attribute fed by a loader: where its first element sits within the loader's vertex."""

    attribute: int
    loader: int
    address: int  # of vertex index 0: ATTRIBBUFFERS_LOC + the loader's OFFSET + ``offset``
    stride: int
    format: int  # the element format's code (``ELEMENT_FORMATS``)
    components: int
    offset: int = 0  # bytes from the start of the loader's vertex

    @property
    def dtype(self) -> np.dtype:
        """The element's dtype (``ELEMENT_FORMATS``)."""
        return ELEMENT_FORMATS[self.format]


@dataclass(frozen=True)
class VertexLoaderState:
    """Registers of the vertex loader, decoded once per draw."""

    num_attributes: int
    reads: tuple[AttributeRead, ...]
    fixed: tuple[int, ...]  # attributes taken from the fixed-attribute store
    base: int  # ATTRIBBUFFERS_LOC: byte address the loader and index offsets count from
    index_address: int
    index_dtype: np.dtype
    count: int
    first: int
    immediate_attributes: int

    @classmethod
    def from_regs(cls, regs: np.ndarray) -> VertexLoaderState:
        """The layout and the vertex range of the draw the registers describe."""
        return cls.layout_from_regs(regs).with_range(regs)

    @classmethod
    def layout_from_regs(cls, regs: np.ndarray) -> VertexLoaderState:
        """The attribute layout only (registers 0x200-0x226, 0x232, 0x242); the vertex range fields are 0 until
        ``with_range`` reads them (the range changes every draw, the layout seldom)."""
        base = int(access.value(regs, "ATTRIBBUFFERS_LOC", "base"))
        num = access.raw(regs, "ATTRIBBUFFERS_FORMAT_HIGH", "num_attrs_minus_1") + 1
        if num > NUM_ATTRIBS:  # the field holds 4 bits, the loader has 12 attributes
            raise PipelineError(
                f"{num} vertex attributes configured; the loader has {NUM_ATTRIBS}",
                register=id_of("ATTRIBBUFFERS_FORMAT_HIGH"),
            )
        formats = {}  # attribute -> (element format code, components)
        for a in range(NUM_ATTRIBS):
            reg = "ATTRIBBUFFERS_FORMAT_LOW" if a < 8 else "ATTRIBBUFFERS_FORMAT_HIGH"
            formats[a] = (
                access.raw(regs, reg, f"attr{a}_type"),
                access.raw(regs, reg, f"attr{a}_components_minus_1") + 1,
            )
        reads: dict[int, AttributeRead] = {}
        for j in range(NUM_LOADERS):
            reads.update(_loader_reads(regs, j, base, formats))
        loaded = {a for a in reads if a < num}
        fixed = tuple(
            a for a in range(num) if a not in loaded and access.raw(regs, "ATTRIBBUFFERS_FORMAT_HIGH", f"fixed{a}")
        )
        missing = sorted(set(range(num)) - loaded - set(fixed))
        if missing:
            raise UnsupportedFeature(
                f"attribute {missing[0]} has neither a loader nor the fixed bit (vertex retention)",
                register=id_of("ATTRIBBUFFERS_FORMAT_HIGH"),
                value=access.word(regs, "ATTRIBBUFFERS_FORMAT_HIGH"),
            )
        return cls(
            num_attributes=num,
            reads=tuple(reads[a] for a in sorted(loaded)),
            fixed=fixed,
            base=base,
            index_address=0,
            index_dtype=INDEX_DTYPES["u8"],
            count=0,
            first=0,
            immediate_attributes=access.raw(regs, "VSH_NUM_ATTR", "num_attrs_minus_1") + 1,
        )

    def with_range(self, regs: np.ndarray) -> VertexLoaderState:
        """This layout with the index buffer, vertex count and first vertex of the registers (0x227-0x22A)."""
        return dataclasses.replace(
            self,
            index_address=self.base + access.raw(regs, "INDEXBUFFER_CONFIG", "offset"),
            index_dtype=INDEX_DTYPES[str(access.value(regs, "INDEXBUFFER_CONFIG", "format"))],
            count=access.raw(regs, "NUMVERTICES", "count"),
            first=access.raw(regs, "VERTEX_OFFSET", "offset"),
        )


def _loader_reads(regs: np.ndarray, j: int, base: int, formats: dict) -> dict[int, AttributeRead]:
    """The attribute reads of loader j, walking its component slots (later slots win)."""
    cfg1, cfg2 = f"ATTRIBBUFFER{j}_CONFIG1", f"ATTRIBBUFFER{j}_CONFIG2"
    n = min(access.raw(regs, cfg2, "num_components"), MAX_SLOTS)
    if n == 0:  # most loaders of a draw are unused: skip decoding the rest (register reads are per draw costs)
        return {}
    stride = access.raw(regs, cfg2, "stride")
    start = base + access.raw(regs, f"ATTRIBBUFFER{j}_OFFSET", "offset")
    out: dict[int, AttributeRead] = {}
    off = 0
    for k in range(n):
        code = access.raw(regs, cfg1 if k < 8 else cfg2, f"comp{k}")
        if code >= PAD_FIRST:
            off = _align(off, 4) + 4 * (code - PAD_FIRST + 1)
            continue
        element, comps = formats[code]
        size = ELEMENT_FORMATS[element].itemsize
        off = _align(off, size)
        out[code] = AttributeRead(code, j, start + off, stride, element, comps, off)
        off += size * comps
    return out


def _align(value: int, unit: int) -> int:
    return (value + unit - 1) // unit * unit


@dataclass(frozen=True)
class VertexBatch:
    attributes: np.ndarray  # (U, 16, 4) float32
    inverse: np.ndarray  # (N,) int64
    indices: np.ndarray  # (U,) int64
    primitive_sizes: tuple[int, ...] | None = None  # GS variable-size mode: vertex count of each primitive
    identity: bool = False  # inverse == arange(N)

    @property
    def count(self) -> int:
        return int(self.inverse.shape[0])


def read_indices(vl: VertexLoaderState, kind: DrawKind, memory: PhysicalMemory) -> np.ndarray:
    """The (N,) int64 vertex indices of a draw-arrays or draw-elements call."""
    if vl.count > MAX_DRAW_VERTICES:
        raise PipelineError(
            f"draw of {vl.count} vertices exceeds the limit of {MAX_DRAW_VERTICES}", register=id_of("NUMVERTICES")
        )
    if kind is DrawKind.ARRAYS:
        return np.arange(vl.first, vl.first + vl.count, dtype=np.int64)
    return memory.view(vl.index_address, vl.count, vl.index_dtype, "index buffer").astype(np.int64)


def gather_attribute(
    read: AttributeRead,
    indices: np.ndarray,
    memory: PhysicalMemory,
    out: np.ndarray | None = None,
    increasing: bool = False,
) -> np.ndarray:
    """(U, 4) float32 values of one loaded attribute for vertex ``indices`` (missing components from 0,0,0,1),
    written into ``out`` (a (U, 4) float32 array or view) when given. A read of more than 4 components (a run of
    f32 vec4 attributes, from ``load_vertices``) fills an ``out`` of (U, components).

    ``increasing``: the caller guarantees strictly increasing indices (the rows of ``load_vertices``), so the span
    is ``indices[0] .. indices[-1]`` and it is consecutive when it holds U indices, with no scan of the indices.
    """
    comps = read.components
    size = read.dtype.itemsize * comps
    if out is None:
        out = np.empty((indices.shape[0], 4), np.float32)
    if comps < 4:  # only the components no element overwrites
        out[:, comps:] = DEFAULT_COMPONENTS[comps:]
    if indices.shape[0] == 0:
        return out
    if increasing:
        lo, hi = int(indices[0]), int(indices[-1])
        consecutive = hi - lo == indices.shape[0] - 1
    else:
        lo, hi = int(indices.min()), int(indices.max())
        consecutive = hi - lo == indices.shape[0] - 1 and bool((np.diff(indices) == 1).all())
    span_start = read.address + read.stride * lo
    who = f"attribute {read.attribute} (loader {read.loader})"
    span = memory.bytes(span_start, read.stride * (hi - lo) + size, who)
    # vertices lo..hi as a view straight over memory (any alignment): consecutive indices copy it in one strided
    # assignment, others gather its rows (the ndarray constructor: as_strided costs ~5x more)
    rows = np.ndarray((hi - lo + 1, size), np.uint8, span, 0, (read.stride, 1))
    dst = out[:, :comps]
    if read.format == F32_FORMAT and dst.strides[1] == F32.itemsize:
        # no conversion: move each vertex's bytes as one element (numpy copies (U, 4) floats row by row, ~2x slower)
        vertex = _vertex_dtype(size)
        src, dst = rows.view(vertex)[:, 0], dst.view(vertex)[:, 0]
    else:
        src = rows.view(read.dtype)
    dst[...] = src if consecutive else src[indices - lo]
    return out


@lru_cache(maxsize=16)
def _vertex_dtype(size: int) -> np.dtype:
    """One vertex's ``size`` bytes as one element."""
    return np.dtype((np.void, size))


CopyPlan = tuple[tuple[AttributeRead | None, tuple[AttributeRead, ...]], ...]
_last_plan: tuple[tuple[AttributeRead, ...], CopyPlan] | None = None  # the last layout's (reads, plan)


def _copy_plan(reads: tuple[AttributeRead, ...]) -> CopyPlan:
    """``_vec4_runs`` of a loader layout, each run with the merged read that copies it at once (None for a run of
    one): a layout's plan, remembered across draws (the draws of one layout share its ``reads`` tuple: checked by
    identity first, then by content)."""
    global _last_plan
    last = _last_plan
    if last is not None and last[0] is reads:
        return last[1]
    plan = _layout_plan(reads)
    _last_plan = (reads, plan)
    return plan


@lru_cache(maxsize=64)
def _layout_plan(reads: tuple[AttributeRead, ...]) -> CopyPlan:
    """``_copy_plan`` by content."""
    plan = []
    for run in _vec4_runs(reads):
        first = run[0]
        merged = AttributeRead(
            first.attribute, first.loader, first.address, first.stride, F32_FORMAT, 4 * len(run), first.offset
        )
        plan.append((merged if len(run) > 1 else None, tuple(run)))
    return tuple(plan)


def _vec4_runs(reads: tuple[AttributeRead, ...]) -> list[list[AttributeRead]]:
    """``reads`` (sorted by attribute) in runs that one copy serves: f32 vec4 attributes a, a + 1, ... that one
    loader stores back to back (an interleaved position + colour vertex); every other read is a run of one."""
    runs: list[list[AttributeRead]] = []
    for read in reads:
        prev = runs[-1][-1] if runs else None
        if (
            prev is not None
            and read.loader == prev.loader
            and read.attribute == prev.attribute + 1
            and read.address == prev.address + 4 * F32.itemsize
            and all(r.format == F32_FORMAT and r.components == 4 for r in (prev, read))
        ):
            runs[-1].append(read)
        else:
            runs.append([read])
    return runs


def split_variable_primitives(stream: np.ndarray) -> tuple[np.ndarray, tuple[int, ...]]:
    """GS variable-size mode: the index stream is ``N, i1 .. iN, N', ...``; returns (indices, sizes).

    One step per primitive (each consumes at least its count word); a count running past the stream raises.
    """
    keep = np.ones(stream.shape[0], bool)
    sizes: list[int] = []
    pos = 0
    while pos < stream.shape[0]:
        size = int(stream[pos])
        keep[pos] = False
        sizes.append(size)
        pos += 1 + size
    if pos > stream.shape[0]:
        raise PipelineError(
            f"variable-size primitive of {sizes[-1]} vertices runs past the index stream", register=id_of("NUMVERTICES")
        )
    return stream[keep], tuple(sizes)


def load_vertices(
    state: GpuState,
    kind: DrawKind,
    memory: PhysicalMemory,
    immediate: np.ndarray | None = None,
    variable_primitives: bool = False,
    configured_only: bool = False,
) -> VertexBatch:
    """``load_batch`` with the loader state decoded from ``state``'s registers (for callers without a
    ``DrawState``)."""
    vl = None if kind is DrawKind.IMMEDIATE else VertexLoaderState.from_regs(state.regs)
    return load_batch(vl, state.fixed_attribs, kind, memory, immediate, variable_primitives, configured_only)


def load_batch(
    vl: VertexLoaderState | None,
    fixed_attribs: np.ndarray,
    kind: DrawKind,
    memory: PhysicalMemory,
    immediate: np.ndarray | None = None,
    variable_primitives: bool = False,
    configured_only: bool = False,
) -> VertexBatch:
    """Input attributes of every vertex of one draw (see the module docstring): ``vl`` the loader state with the
    draw's vertex range (None for immediate draws), ``fixed_attribs`` (16, 4) float32 the fixed-attribute store.

    ``variable_primitives``: draw-elements in geometry-shader variable-size mode (GEOSTAGE_CONFIG bit 31): the
    index stream carries a vertex count before each primitive (consumed, not fetched). ``configured_only``: the
    attributes array stops after the configured attributes (module docstring).
    """
    if kind is DrawKind.IMMEDIATE:
        if immediate is None or immediate.ndim != 3 or immediate.shape[1:] != (NUM_INPUTS, 4):
            raise PipelineError("immediate-mode draw without (N, 16, 4) input attributes")
        n = immediate.shape[0]
        return VertexBatch(
            immediate.astype(np.float32), np.arange(n, dtype=np.int64), np.arange(n, dtype=np.int64), identity=True
        )
    if vl is None:
        raise PipelineError(f"{kind.value} draw without a vertex loader state")
    stream = read_indices(vl, kind, memory)
    sizes = None
    if variable_primitives and kind is DrawKind.ELEMENTS:
        stream, sizes = split_variable_primitives(stream)
    if kind is DrawKind.ARRAYS and sizes is None:  # first, first + 1, ...: already unique and sorted
        unique, inverse = stream, np.arange(stream.shape[0], dtype=np.int64)
    else:
        unique, inverse = np.unique(stream, return_inverse=True)
    # np.zeros rather than np.empty + zeroing the registers nothing loads: calloc's zeroed pages cost less (measured)
    attrs = np.zeros((unique.shape[0], vl.num_attributes if configured_only else NUM_INPUTS, 4), np.float32)
    for merged, run in _copy_plan(vl.reads):
        if merged is not None:  # one strided copy for the run (each vertex's bytes land together in attrs)
            first = run[0]
            dst = attrs[:, first.attribute : first.attribute + len(run)].reshape(-1, 4 * len(run))
            try:
                gather_attribute(merged, unique, memory, dst, increasing=True)
                continue
            except MemoryFault:
                pass  # one by one below: the fault names the first attribute out of memory, as always
        for read in run:
            gather_attribute(read, unique, memory, attrs[:, read.attribute], increasing=True)
    for a in vl.fixed:
        attrs[:, a] = fixed_attribs[a]
    identity = kind is DrawKind.ARRAYS and sizes is None
    return VertexBatch(attrs, inverse.astype(np.int64, copy=False).ravel(), unique, sizes, identity)
