"""Vertex loader: layouts, every element type, padding, fixed attributes, index buffers, immediate mode."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from picaemu.draw import DrawKind
from picaemu.errors import MemoryFault, PipelineError, UnsupportedFeature
from picaemu.geometry.vertex_loader import MAX_DRAW_VERTICES, load_vertices
from picaemu.memory import PhysicalMemory
from picaemu.regs import access, id_of
from picaemu.state import GpuState

BASE = 0x20000000
TYPES = {"s8": 0, "u8": 1, "s16": 2, "f32": 3}


def set_reg(state: GpuState, name: str, **fields: int) -> None:
    state.regs[id_of(name)] = access.compose(name, **fields)


def configure(state: GpuState, attrs: list[tuple[str, int]], fixed: tuple[int, ...] = ()) -> None:
    """attrs[i] = (type, components) of attribute i; ``fixed`` sets fixed-attribute bits."""
    low = {
        f"attr{i}_{k}": v
        for i, (t, n) in enumerate(attrs)
        if i < 8
        for k, v in (("type", TYPES[t]), ("components_minus_1", n - 1))
    }
    high = {
        f"attr{i}_{k}": v
        for i, (t, n) in enumerate(attrs)
        if i >= 8
        for k, v in (("type", TYPES[t]), ("components_minus_1", n - 1))
    }
    set_reg(state, "ATTRIBBUFFERS_LOC", base=BASE >> 4)
    set_reg(state, "ATTRIBBUFFERS_FORMAT_LOW", **low)
    set_reg(
        state, "ATTRIBBUFFERS_FORMAT_HIGH", **high, **{f"fixed{i}": 1 for i in fixed}, num_attrs_minus_1=len(attrs) - 1
    )


def loader(state: GpuState, j: int, offset: int, stride: int, slots: list[int]) -> None:
    set_reg(state, f"ATTRIBBUFFER{j}_OFFSET", offset=offset)
    set_reg(state, f"ATTRIBBUFFER{j}_CONFIG1", **{f"comp{k}": c for k, c in enumerate(slots) if k < 8})
    set_reg(
        state,
        f"ATTRIBBUFFER{j}_CONFIG2",
        **{f"comp{k}": c for k, c in enumerate(slots) if k >= 8},
        stride=stride,
        num_components=len(slots),
    )


def mixed_vertex(a: int, b: tuple[int, int], c: tuple[float, float, float], d: tuple[int, int, int]) -> bytes:
    """Typed by hand from the alignment rules: s8 @0, s16x2 @2, pad 4 -> @12, f32x3 @12, u8x3 @24; stride 28."""
    return (
        struct.pack("<b", a) + b"\0" + struct.pack("<hh", *b) + b"\0" * 6 + struct.pack("<fff", *c) + bytes(d) + b"\0"
    )


@pytest.fixture
def mixed():
    state, mem = GpuState(), PhysicalMemory()
    configure(state, [("s8", 1), ("s16", 2), ("f32", 3), ("u8", 3), ("f32", 4)], fixed=(4,))
    loader(state, 0, 0x100, 28, [0, 1, 12, 2, 3])
    state.fixed_attribs[4] = (9, 8, 7, 6)
    verts = [
        mixed_vertex(-5, (-300, 1000), (1.5, -2.0, 3.0), (200, 7, 9)),
        mixed_vertex(127, (32767, -32768), (0.25, 0.5, -0.75), (0, 255, 1)),
    ]
    mem.write(BASE + 0x100, b"".join(verts))
    return state, mem


def test_mixed_layout_every_type_padding_and_fixed(mixed):
    state, mem = mixed
    set_reg(state, "NUMVERTICES", count=2)
    batch = load_vertices(state, DrawKind.ARRAYS, mem)
    a = batch.attributes
    assert a.shape == (2, 16, 4)
    assert a[0, 0].tolist() == [-5, 0, 0, 1]
    assert a[0, 1].tolist() == [-300, 1000, 0, 1]
    assert a[0, 2].tolist() == [1.5, -2, 3, 1]
    assert a[0, 3].tolist() == [200, 7, 9, 1]
    assert a[0, 4].tolist() == [9, 8, 7, 6]
    assert a[1, 0].tolist() == [127, 0, 0, 1]
    assert a[1, 1].tolist() == [32767, -32768, 0, 1]
    assert a[1, 3].tolist() == [0, 255, 1, 1]
    assert not a[:, 5:].any()


def test_vertex_offset_for_draw_arrays(mixed):
    state, mem = mixed
    set_reg(state, "NUMVERTICES", count=1)
    set_reg(state, "VERTEX_OFFSET", offset=1)
    batch = load_vertices(state, DrawKind.ARRAYS, mem)
    assert batch.indices.tolist() == [1]
    assert batch.attributes[0, 0, 0] == 127


@pytest.mark.parametrize(("fmt", "dtype"), [(0, "<u1"), (1, "<u2")])
def test_index_buffer_shades_each_index_once(mixed, fmt, dtype):
    state, mem = mixed
    mem.write(BASE + 0x400, np.array([1, 0, 1, 1], dtype).tobytes())
    set_reg(state, "INDEXBUFFER_CONFIG", offset=0x400, format=fmt)
    set_reg(state, "NUMVERTICES", count=4)
    set_reg(state, "VERTEX_OFFSET", offset=5)  # not added to indices
    batch = load_vertices(state, DrawKind.ELEMENTS, mem)
    assert batch.indices.tolist() == [0, 1]
    assert batch.inverse.tolist() == [1, 0, 1, 1]
    assert batch.attributes[batch.inverse, 0, 0].tolist() == [127, -5, 127, 127]


def test_two_loaders_and_loader_overrides_fixed_bit():
    state, mem = GpuState(), PhysicalMemory()
    configure(state, [("f32", 2), ("u8", 4)], fixed=(0, 1))
    loader(state, 0, 0, 8, [0])
    loader(state, 1, 0x40, 4, [1])
    mem.write(BASE, struct.pack("<ffff", 1, 2, 3, 4))
    mem.write(BASE + 0x40, bytes([10, 20, 30, 40, 50, 60, 70, 80]))
    state.fixed_attribs[0] = (-1, -1, -1, -1)
    set_reg(state, "NUMVERTICES", count=2)
    a = load_vertices(state, DrawKind.ARRAYS, mem).attributes
    assert a[:, 0].tolist() == [[1, 2, 0, 1], [3, 4, 0, 1]]
    assert a[:, 1].tolist() == [[10, 20, 30, 40], [50, 60, 70, 80]]


@pytest.mark.parametrize("pad", [12, 13, 14, 15])
def test_padding_codes(pad):
    state, mem = GpuState(), PhysicalMemory()
    configure(state, [("u8", 1), ("u8", 1)])
    skip = 4 * (pad - 11)  # u8 @0, pad aligns 1 -> 4 then skips; next u8 at 4 + skip
    loader(state, 0, 0, 4 + skip + 1, [0, pad, 1])
    data = bytearray(4 + skip + 1)
    data[0], data[4 + skip] = 7, 9
    mem.write(BASE, bytes(data))
    set_reg(state, "NUMVERTICES", count=1)
    a = load_vertices(state, DrawKind.ARRAYS, mem).attributes
    assert (a[0, 0, 0], a[0, 1, 0]) == (7, 9)


def test_immediate_inputs_pass_through():
    state = GpuState()
    imm = np.arange(2 * 16 * 4, dtype=np.float32).reshape(2, 16, 4)
    batch = load_vertices(state, DrawKind.IMMEDIATE, PhysicalMemory(), imm)
    assert np.array_equal(batch.attributes, imm) and batch.inverse.tolist() == [0, 1]
    with pytest.raises(PipelineError):
        load_vertices(state, DrawKind.IMMEDIATE, PhysicalMemory(), None)


def test_bad_input_named_errors(mixed):
    state, mem = mixed
    set_reg(state, "NUMVERTICES", count=MAX_DRAW_VERTICES + 1)
    with pytest.raises(PipelineError, match="exceeds"):
        load_vertices(state, DrawKind.ARRAYS, mem)
    set_reg(state, "NUMVERTICES", count=2)
    set_reg(state, "ATTRIBBUFFERS_LOC", base=0x10000000 >> 4)  # unmapped
    with pytest.raises(MemoryFault, match="loader 0"):
        load_vertices(state, DrawKind.ARRAYS, mem)
    set_reg(state, "ATTRIBBUFFERS_LOC", base=BASE >> 4)
    set_reg(state, "INDEXBUFFER_CONFIG", offset=0x0FFFFFF0, format=1)
    with pytest.raises(MemoryFault, match="index buffer"):
        load_vertices(state, DrawKind.ELEMENTS, mem)


def test_interleaved_vec4_run_copied_together_faults_name_the_attribute():
    # attributes 0-2: f32 vec4 back to back in loader 0 (one copy serves them), attribute 3 is u8x2 after them
    state, mem = GpuState(), PhysicalMemory()
    configure(state, [("f32", 4), ("f32", 4), ("f32", 4), ("u8", 2)])
    loader(state, 0, 0, 52, [0, 1, 2, 3])
    verts = np.arange(3 * 13, dtype=np.float32).reshape(3, 13)
    raw = verts.view(np.uint8).copy()
    raw[:, 48:50] = [[1, 2], [3, 4], [5, 6]]
    mem.write(BASE, raw.tobytes())
    set_reg(state, "NUMVERTICES", count=3)
    for kind in (DrawKind.ARRAYS, DrawKind.ELEMENTS):  # elements: index buffer of zeros -> vertex 0 only
        a = load_vertices(state, kind, mem).attributes
        rows = verts[:, :12].reshape(3, 3, 4)[: a.shape[0]]
        assert (
            np.array_equal(a[:, :3], rows)
            and a[:, 3].tolist() == [[1, 2, 0, 1], [3, 4, 0, 1], [5, 6, 0, 1]][: a.shape[0]]
        )
        assert not a[:, 4:].any()
    # the run's last vertex crosses the end of FCRAM: the fault names attribute 1 (the first one out of memory)
    end = BASE + 128 * 1024 * 1024
    start = end - 2 * 52 - 24  # vertex 2 at end - 24: attribute 0 fits, attribute 1 straddles the end
    set_reg(state, "ATTRIBBUFFERS_LOC", base=start >> 4)
    set_reg(state, "ATTRIBBUFFER0_OFFSET", offset=start % 16)
    with pytest.raises(MemoryFault, match="attribute 1 "):
        load_vertices(state, DrawKind.ARRAYS, mem)


def test_attribute_without_loader_or_fixed_bit_is_unsupported():
    state = GpuState()
    configure(state, [("f32", 4), ("f32", 4)])
    loader(state, 0, 0, 16, [0])
    set_reg(state, "NUMVERTICES", count=1)
    with pytest.raises(UnsupportedFeature, match="attribute 1"):
        load_vertices(state, DrawKind.ARRAYS, PhysicalMemory())


def test_variable_size_primitive_stream_splits_counts_from_indices():
    from picaemu.geometry.vertex_loader import split_variable_primitives

    idx, sizes = split_variable_primitives(np.array([3, 0, 1, 2, 2, 5, 6]))
    assert idx.tolist() == [0, 1, 2, 5, 6] and sizes == (3, 2)
    with pytest.raises(PipelineError, match="runs past"):
        split_variable_primitives(np.array([4, 0, 1]))


def test_configured_only_stops_after_the_configured_attributes(mixed):
    """The pipeline's narrower batch: the configured attributes (here 5: four loaded, one fixed), same values."""
    state, mem = mixed
    set_reg(state, "NUMVERTICES", count=2)
    full = load_vertices(state, DrawKind.ARRAYS, mem).attributes
    narrow = load_vertices(state, DrawKind.ARRAYS, mem, configured_only=True).attributes
    assert narrow.shape == (2, 5, 4) and np.array_equal(narrow, full[:, :5]) and not full[:, 5:].any()


@pytest.mark.parametrize("count", [13, 16])
def test_more_attributes_than_the_loader_has_is_named(count: int) -> None:
    """num_attrs_minus_1 holds 4 bits (up to 16) but there are 12 attributes (was KeyError: no field 'fixed12')."""
    state = GpuState()
    configure(state, [("f32", 4)] * 12)
    high = id_of("ATTRIBBUFFERS_FORMAT_HIGH")
    field = access.locate("ATTRIBBUFFERS_FORMAT_HIGH", "num_attrs_minus_1")[1]
    state.regs[high] = (int(state.regs[high]) & ~field.mask) | access.compose(
        "ATTRIBBUFFERS_FORMAT_HIGH", num_attrs_minus_1=count - 1
    )
    set_reg(state, "NUMVERTICES", count=3)
    with pytest.raises(PipelineError, match=f"{count} vertex attributes configured; the loader has 12") as err:
        load_vertices(state, DrawKind.ARRAYS, PhysicalMemory())
    assert err.value.register == id_of("ATTRIBBUFFERS_FORMAT_HIGH")
