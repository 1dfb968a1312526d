"""Draws handled inside the compiled loop (decode-only runs) and the write-group dirty mask of the processor.

A decode-only run (NullPipeline, no observer) counts and records draws in the compiled loop; a run with a
pipeline stops for every draw. Both must give the same draws, state and counts. The dirty mask is checked against
hand-made write-group tables: a write marks exactly its register's bits, a port word its port's bits.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from picaemu import regs
from picaemu.command import kernel as K
from picaemu.command.builder import CommandBuilder
from picaemu.command.draw_log import CHANGES_PER_ROW, FIRST_ROWS
from picaemu.command.listing import ListingObserver
from picaemu.command.processor import CommandProcessor, RunResult
from picaemu.command.tables import ACTION_TABLE
from picaemu.draw import DrawKind, NullPipeline
from picaemu.memory import PhysicalMemory
from picaemu.state import GpuState

TARGET = 0x20000000  # where the jumped-to list lives


class Discard(NullPipeline):
    """A pipeline that renders nothing but is not the NullPipeline: every draw stops the compiled loop."""


def _draw_list(n: int) -> CommandBuilder:
    """``n`` draws of both kinds, each after a uniform upload and a register change, one immediate-mode draw."""
    b = CommandBuilder()
    b.upload_code("VSH", list(range(40)))
    for i in range(n):
        b.upload_float_uniforms("VSH", i % 90, [(float(i), 1.0, 2.0, 3.0)])
        b.write("NUMVERTICES", i + 1)
        b.write("RESTART_PRIMITIVE", 1)
        b.write("DRAWARRAYS" if i % 3 else "DRAWELEMENTS", 1)
        if i == n // 2:
            b.write_fields("VSH_NUM_ATTR", num_attrs_minus_1=0)
            b.immediate_vertices([[(1.0, 2.0, 3.0, 1.0)]] * 3)
            b.write("START_DRAW_FUNC0", 1, mask=1)
    return b


def _jumping_list(n: int) -> tuple[PhysicalMemory, bytes]:
    """A list that draws, then jumps to a second list in memory that draws ``n`` times and finalizes."""
    target = _draw_list(n)
    target.finalize()
    memory = PhysicalMemory()
    memory.write(TARGET, target.tobytes())
    b = _draw_list(3)
    b.write_fields("CMDBUF_SIZE0", size=len(target.tobytes()) // 8)
    b.write_fields("CMDBUF_ADDR0", address=TARGET // 8)
    b.write("CMDBUF_JUMP0", 1)
    return memory, b.tobytes()


def _run(data: bytes, memory: PhysicalMemory | None = None, **kw) -> tuple[CommandProcessor, RunResult]:
    cp = CommandProcessor(memory, **kw)
    return cp, cp.run(data)


def _same_state(a: GpuState, b: GpuState) -> None:
    for name in ("regs", "lighting_luts", "fog_lut", "proctex_luts", "gas_lut", "fixed_attribs"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for unit in ("vs", "gs"):
        for name in ("code", "opdescs", "float_uniforms"):
            np.testing.assert_array_equal(getattr(getattr(a, unit), name), getattr(getattr(b, unit), name))


def _same_draws(a: CommandProcessor, b: CommandProcessor) -> None:
    assert len(a.draws) == len(b.draws) == a.draw_count == b.draw_count
    for x, y in zip(a.draws, b.draws, strict=True):
        assert (x.index, x.kind, x.buffer, x.offset, x.dirty) == (y.index, y.kind, y.buffer, y.offset, y.dirty)
        np.testing.assert_array_equal(x.regs, y.regs)


@pytest.mark.parametrize("draws", [5, 3 * FIRST_ROWS + 7])  # the second fills several record chunks
def test_decode_only_draws_equal_the_pipeline_path(draws: int) -> None:
    memory, data = _jumping_list(draws)
    fast, r_fast = _run(data, memory)
    slow, r_slow = _run(data, _jumping_list(draws)[0], pipeline=Discard())
    assert fast._decode_only() and not slow._decode_only()
    assert (r_fast.packets, r_fast.writes, r_fast.draws, r_fast.jumps, r_fast.finalized) == (
        r_slow.packets,
        r_slow.writes,
        r_slow.draws,
        r_slow.jumps,
        r_slow.finalized,
    )
    assert r_fast.draws == 3 + draws and r_fast.finalized  # immediate draws are not counted in RunResult.draws
    _same_draws(fast, slow)
    _same_state(fast.state, slow.state)
    assert fast.take_dirty() == slow.take_dirty()
    kinds = [d.kind for d in fast.draws]
    assert kinds.count(DrawKind.IMMEDIATE) == 2  # the first list's draw 1 is followed by an immediate-mode one
    assert kinds[:4] == [DrawKind.ELEMENTS, DrawKind.ARRAYS, DrawKind.IMMEDIATE, DrawKind.ARRAYS]
    assert {d.buffer for d in fast.draws} == {0, TARGET}
    assert [d.index for d in fast.draws] == list(range(len(fast.draws)))
    assert int(fast.draws[-1].regs[regs.id_of("NUMVERTICES")]) == draws  # the snapshot is of its own draw


def test_real_lists_decode_only_equal_the_pipeline_path(captures_dir: Path) -> None:
    for path in sorted(captures_dir.glob("scene*/cmdlists/*.bin")):
        fast, _ = _run(path.read_bytes())
        slow, _ = _run(path.read_bytes(), pipeline=Discard())
        _same_draws(fast, slow)
        _same_state(fast.state, slow.state)
        assert fast.draw_count >= 1, path.name


def test_draw_records_build_lazily_and_can_be_trimmed() -> None:
    data = _draw_list(2 * FIRST_ROWS).tobytes()
    cp = CommandProcessor()
    cp.run(data)
    first = len(cp.draws)
    cp.run(data)  # more draws recorded in the loop after the list was built once
    assert len(cp.draws) == 2 * first == cp.draw_count
    assert [d.index for d in cp.draws] == list(range(cp.draw_count))
    del cp.draws[first:]
    assert len(cp.draws) == first
    counted, _ = _run(data, record_draws=False)
    assert counted.draws == [] and counted.draw_count == first


def _groups(**bits: int) -> np.ndarray:
    """A write-group table with nothing set but the given register names (or ``port_<number>``) -> bit."""
    table = np.zeros(K.NUM_REGS + K.NUM_PORTS, np.int64)
    for name, bit in bits.items():
        index = K.NUM_REGS + int(name[5:]) if name.startswith("port_") else regs.id_of(name)
        table[index] = 1 << bit
    return table


def _dirty_after(b: CommandBuilder, table: np.ndarray, setup: CommandBuilder | None = None) -> int:
    cp = CommandProcessor()
    cp.write_groups = table
    if setup is not None:
        cp.run(setup.words())
    cp.take_dirty()
    cp.run(b.words())
    return cp.take_dirty()


def test_a_write_marks_exactly_its_registers_bits() -> None:
    b = CommandBuilder()
    b.write("VIEWPORT_WIDTH", 7, mask=0x1)
    assert _dirty_after(b, _groups(VIEWPORT_WIDTH=5, VIEWPORT_INVW=6)) == 1 << 5
    b.write_many("VIEWPORT_WIDTH", [1, 2, 3])  # consecutive: WIDTH, INVW, HEIGHT
    assert _dirty_after(b, _groups(VIEWPORT_WIDTH=5, VIEWPORT_INVW=6, VIEWPORT_HEIGHT=62)) == (
        1 << 5 | 1 << 6 | 1 << 62
    )
    unrelated = CommandBuilder()
    unrelated.write("FACECULLING_CONFIG", 1)
    assert _dirty_after(unrelated, _groups(VIEWPORT_WIDTH=5)) == 0


def test_port_words_mark_their_ports_bits_and_the_mirrored_gs_ports() -> None:
    table = _groups(
        VSH_FLOATUNIFORM_INDEX=1,
        port_1=2,
        port_4=3,
        VSH_COM_MODE=4,
        VSH_CODETRANSFER_INDEX=7,
        port_2=5,
        port_5=6,
        port_3=8,
        port_6=9,
    )
    uniforms = CommandBuilder()
    uniforms.upload_float_uniforms("VSH", 4, [(1.0, 2.0, 3.0, 4.0)])
    # after reset the GS shares the VS configuration and is not in use: VS uniforms are mirrored into it
    assert _dirty_after(uniforms, table) == 1 << 1 | 1 << 2 | 1 << 3
    separate = CommandBuilder()
    separate.write("VSH_COM_MODE", 1)
    assert _dirty_after(uniforms, table, setup=separate) == 1 << 1 | 1 << 2
    code = CommandBuilder()
    code.upload_code("VSH", [1, 2, 3])
    assert _dirty_after(code, table) == 1 << 7 | 1 << 5 | 1 << 6
    assert _dirty_after(code, table, setup=separate) == 1 << 7 | 1 << 5
    opdescs = CommandBuilder()
    opdescs.upload_opdescs("VSH", [1, 2])
    assert _dirty_after(opdescs, table) == 1 << 8 | 1 << 9


@pytest.mark.parametrize(
    "port, upload",
    [
        (K.P_LIGHTING, lambda b: b.upload_lut("lighting", [1, 2, 3], table=2)),
        (K.P_FOG, lambda b: b.upload_lut("fog", [1, 2, 3])),
        (K.P_PROCTEX, lambda b: b.upload_lut("proctex", [1, 2, 3], table=1)),
        (K.P_GAS, lambda b: b.upload_lut("gas", [1, 2, 3])),
        (K.P_FIXED, lambda b: b.fixed_attrib(2, (1.0, 2.0, 3.0, 4.0))),
        (K.P_GS_FLOAT, lambda b: b.upload_float_uniforms("GSH", 0, [(1.0, 2.0, 3.0, 4.0)])),
    ],
)
def test_each_port_marks_its_bit(port: int, upload) -> None:
    b = CommandBuilder()
    upload(b)
    table = np.zeros(K.NUM_REGS + K.NUM_PORTS, np.int64)
    table[K.NUM_REGS + port] = 1 << 40
    assert _dirty_after(b, table) == 1 << 40


def test_mirrored_config_writes_mark_the_gs_register_too() -> None:
    b = CommandBuilder()
    b.write("VSH_BOOLUNIFORM", 0x5)
    table = _groups(VSH_BOOLUNIFORM=10, GSH_BOOLUNIFORM=11)
    assert _dirty_after(b, table) == 1 << 10 | 1 << 11
    uses_gs = CommandBuilder()
    uses_gs.write_fields("GEOSTAGE_CONFIG", gs_use=2)
    assert _dirty_after(b, table, setup=uses_gs) == 1 << 10


def test_take_dirty_clears_and_reset_and_load_state_set_every_bit() -> None:
    cp = CommandProcessor()
    assert cp.take_dirty() == -1  # a new processor: everything may have changed
    assert cp.take_dirty() == 0
    cp.run(CommandBuilder().words())
    assert cp.take_dirty() == 0
    cp.load_state(GpuState())
    assert cp.take_dirty() == -1
    cp.reset()
    assert cp.take_dirty() == -1
    with pytest.raises(ValueError, match="shape"):
        cp.write_groups = np.zeros(3, np.int64)


def test_each_draw_takes_the_groups_written_before_it() -> None:
    b = CommandBuilder()
    for name in ("VIEWPORT_WIDTH", "DRAWARRAYS", "VIEWPORT_INVW", "DRAWELEMENTS", "VIEWPORT_HEIGHT"):
        b.write(name, 1)
    table = _groups(VIEWPORT_WIDTH=1, VIEWPORT_INVW=2, VIEWPORT_HEIGHT=3, DRAWARRAYS=4)
    for pipeline in (None, Discard()):
        cp = CommandProcessor(pipeline=pipeline)
        cp.write_groups = table
        cp.take_dirty()
        cp.run(b.words())
        assert [d.dirty for d in cp.draws] == [1 << 1 | 1 << 4, 1 << 2]
        assert cp.take_dirty() == 1 << 3


uniform_step = st.one_of(
    st.tuples(st.just("index"), st.sampled_from(["VSH", "GSH"]), st.integers(0, 255), st.integers(0, 1)),
    st.tuples(
        st.just("data"),
        st.sampled_from(["VSH", "GSH"]),
        st.lists(st.integers(0, 0xFFFFFFFF), min_size=1, max_size=40),
        st.booleans(),
    ),
    st.tuples(st.just("config"), st.sampled_from(["VSH_COM_MODE", "GEOSTAGE_CONFIG"]), st.integers(0, 3), st.none()),
)


@settings(max_examples=120, deadline=None)
@given(st.lists(uniform_step, max_size=16))
def test_batched_uniform_words_equal_word_by_word(steps: list[tuple]) -> None:
    """A decode-only run feeds a non-consecutive packet's uniform words in one go; with an observer attached the
    loop takes them one at a time. Both leave the same registers, uniforms, partial words and counts (random index,
    mode, wrap past 255, rows past 95 dropped, vectors split across packets, mirroring switched on and off)."""
    b = CommandBuilder()
    for kind, a, x, y in steps:
        if kind == "index":
            b.write_fields(f"{a}_FLOATUNIFORM_INDEX", index=x, mode=y)
        elif kind == "data":
            b.write_many(f"{a}_FLOATUNIFORM_DATA0", x, consecutive=y)
        else:
            b.write(a, x)
    batched, r_batched = _run(b.tobytes())
    single = CommandProcessor()
    single.attach(ListingObserver())
    r_single = single.run(b.tobytes())
    _same_state(batched.state, single.state)
    np.testing.assert_array_equal(batched._counters, single._counters)
    np.testing.assert_array_equal(batched._pending, single._pending)
    assert (r_batched.writes, r_batched.dropped_port_words) == (r_single.writes, r_single.dropped_port_words)


@pytest.mark.parametrize("observed", [False, True])  # one packet fed at once / word by word
def test_uniform_index_wraps_in_its_8_bit_field_and_rows_past_95_drop(observed: bool) -> None:
    b = CommandBuilder()
    b.upload_float_uniforms(
        "VSH", 254, [(1.0, 0.0, 0.0, 0.0), (2.0, 0.0, 0.0, 0.0), (3.0, 0.5, 0.0, 1.0), (4.0, 0.0, -2.0, 0.0)]
    )
    cp = CommandProcessor()
    if observed:
        cp.attach(ListingObserver())
    result = cp.run(b.words())
    assert result.dropped_port_words == 2  # rows 254 and 255 do not exist (c0-c95)
    assert cp.state.vs.float_uniforms[0].tolist() == [3.0, 0.5, 0.0, 1.0]
    assert cp.state.vs.float_uniforms[1].tolist() == [4.0, 0.0, -2.0, 0.0]
    reg_id = regs.id_of("VSH_FLOATUNIFORM_INDEX")
    index = regs.decode_fields(reg_id, int(cp.state.regs[reg_id])).as_dict()["index"]
    assert index == 2  # 254 + 4 in bits 0-7 (pica-registers.md: FLOATUNIFORM_INDEX 0-7)


def test_snapshots_survive_many_changes_and_state_loaded_between_runs() -> None:
    """Each draw changes 200 registers (more than a chunk holds per draw on average, so the change arrays fill
    before the rows do), and a different register file is loaded between two runs: every record still holds the
    exact register file of its draw."""
    plain = [i for i in range(K.NUM_REGS) if ACTION_TABLE[i] == K.A_PLAIN][:200]
    draws = (FIRST_ROWS * CHANGES_PER_ROW + K.NUM_REGS) // len(plain) + 1  # their changes overflow the first chunk
    assert draws < FIRST_ROWS
    b = CommandBuilder()
    for i in range(draws):
        for j, reg in enumerate(plain):
            b.write(reg, (i * 7919 + j * 104729) & 0xFFFFFFFF)
        b.write("DRAWARRAYS", 1)
    other = GpuState()
    other.regs[:] = np.random.default_rng(3).integers(0, 2**32, K.NUM_REGS, dtype=np.uint32)
    runs = []
    for pipeline in (None, Discard()):
        cp = CommandProcessor(pipeline=pipeline)
        cp.run(b.words())
        cp.load_state(other.copy())
        cp.run(b.words())
        runs.append(cp)
    assert runs[0]._draw_log._full  # the change arrays filled and grew (checked before ``draws`` builds them)
    _same_draws(*runs)
    assert len(runs[0].draws) == 2 * draws
