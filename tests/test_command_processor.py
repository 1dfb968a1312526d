"""The command processor: packet grammar, masked writes, data ports, triggers, jumps, finalize, bad buffers."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu.command.builder import CommandBuilder
from picaemu.command.listing import ListingObserver
from picaemu.command.packet_list import list_packets
from picaemu.command.packets import PACKET, header_word
from picaemu.command.processor import CommandProcessor
from picaemu.draw import DrawCall, DrawKind, PipelineEventKind
from picaemu.errors import JumpCycle, MemoryFault, MisalignedBuffer, TruncatedPacket
from picaemu.state import GpuState

EXAMPLE = [0xAAAAAAAA, 0x802F011C, 0xBBBBBBBB, 0xCCCCCCCC]  # 3dbrew's example


class Recorder:
    """A PipelineSink that keeps what it was given."""

    def __init__(self) -> None:
        self.draws: list[tuple[int, DrawKind, np.ndarray | None, int]] = []
        self.events: list[PipelineEventKind] = []

    def draw(self, call: DrawCall) -> None:
        inputs = None if call.immediate_inputs is None else call.immediate_inputs.copy()
        self.draws.append((call.index, call.kind, inputs, int(call.state.regs[0x228])))

    def event(self, kind: PipelineEventKind, state: GpuState) -> None:
        self.events.append(kind)


def run(words: list[int] | np.ndarray, **kw) -> CommandProcessor:
    cp = CommandProcessor(**kw)
    cp.run(np.asarray(words, np.uint32))
    return cp


def test_3dbrew_example_consecutive() -> None:
    cp = run(EXAMPLE)
    assert [hex(v) for v in cp.state.regs[0x11C:0x11F]] == ["0xaaaaaaaa", "0xbbbbbbbb", "0xcccccccc"]


def test_3dbrew_example_non_consecutive_repeats_the_id() -> None:
    listing = ListingObserver()
    cp = CommandProcessor()
    cp.attach(listing)
    cp.run(np.array([0xAAAAAAAA, 0x002F011C, 0xBBBBBBBB, 0xCCCCCCCC], np.uint32))
    assert [(w.id, w.value) for w in listing.writes] == [(0x11C, 0xAAAAAAAA), (0x11C, 0xBBBBBBBB), (0x11C, 0xCCCCCCCC)]
    assert cp.state.regs[0x11C] == 0xCCCCCCCC and cp.state.regs[0x11D] == 0


def test_construct_grammar_matches_the_reference_layout() -> None:
    p = PACKET.parse(np.array(EXAMPLE, "<u4").tobytes())
    assert (p.header.id, p.header.mask, p.header.extra, p.header.consecutive) == (0x11C, 0xF, 2, True)
    assert list(p.params) == [0xBBBBBBBB, 0xCCCCCCCC] and p.padding is None
    built = PACKET.build(
        dict(first=1, header=dict(consecutive=False, unused=0, extra=1, mask=3, id=0x40), params=[2], padding=0)
    )
    assert np.frombuffer(built, "<u4").tolist() == [1, header_word(0x40, 2, 3), 2, 0]
    assert header_word(0x11C, 3, 0xF, True) == 0x802F011C


def test_byte_lane_mask_merges_only_enabled_bytes() -> None:
    cp = run([0x12345678, header_word(0x040, 1), 0xFFFFFFFF, header_word(0x040, 1, mask=0b0101)])
    assert cp.state.regs[0x040] == 0x12FF56FF


def test_padding_word_after_odd_extra_count() -> None:
    # one extra parameter -> a padding word, then the next packet
    words = [1, header_word(0x050, 2, consecutive=True), 2, 0xDEAD, 7, header_word(0x060, 1)]
    cp = run(words)
    assert (cp.state.regs[0x050], cp.state.regs[0x051], cp.state.regs[0x060]) == (1, 2, 7)
    packets, err = list_packets(np.array(words, np.uint32))
    assert err is None and [p.offset for p in packets] == [0, 16]


def test_float_uniform_float24_words_hand_packed() -> None:
    # x = 1.0 (0x3F0000), y = 2.0 (0x400000), z = 0, w = -1.0 (0xBF0000); words W:Z:Y:X, most significant first
    words = [5, header_word(0x2C0, 1), 0xBF000000, header_word(0x2C1, 3), 0x00004000, 0x003F0000]
    cp = run(words)
    assert cp.state.vs.float_uniforms[5].tolist() == [1.0, 2.0, 0.0, -1.0]
    assert cp.state.regs[0x2C0] & 0xFF == 6  # the index advanced


def test_float_uniform_float32_mode_word_order_wzyx() -> None:
    b = CommandBuilder()
    b.write("VSH_FLOATUNIFORM_INDEX", 0x80000000 | 3)
    b.write_many("VSH_FLOATUNIFORM_DATA0", [0x40800000, 0x40400000, 0x40000000, 0x3F800000], consecutive=False)
    cp = run(b.words())
    assert cp.state.vs.float_uniforms[3].tolist() == [1.0, 2.0, 3.0, 4.0]


def test_uniform_fifo_reached_through_any_alias_id() -> None:
    # a consecutive packet at 0x2C0 writes the index and then data words into 0x2C1..0x2C3
    cp = run([7, header_word(0x2C0, 4, consecutive=True), 0xBF000000, 0x00004000, 0x003F0000, 0])
    assert cp.state.vs.float_uniforms[7].tolist() == [1.0, 2.0, 0.0, -1.0]


def test_code_upload_auto_increments_and_mirrors_into_gs_when_shared() -> None:
    b = CommandBuilder()
    b.write("VSH_COM_MODE", 0)
    b.upload_code("VSH", [0x11, 0x22, 0x33], offset=4)
    b.upload_opdescs("VSH", [0x44], offset=2)
    cp = run(b.words())
    assert cp.state.vs.code[4:7].tolist() == [0x11, 0x22, 0x33] and cp.state.regs[0x2CB] & 0xFFF == 7
    assert cp.state.gs.code[4:7].tolist() == [0x11, 0x22, 0x33]
    assert cp.state.vs.opdescs[2] == 0x44 and cp.state.gs.opdescs[2] == 0x44


def test_gs_with_own_configuration_is_not_touched() -> None:
    b = CommandBuilder()
    b.write("VSH_COM_MODE", 1)
    b.upload_code("VSH", [0x11])
    b.upload_float_uniforms("VSH", 0, [(1, 2, 3, 4)])
    b.write("VSH_BOOLUNIFORM", 0x7FFF0003)
    cp = run(b.words())
    assert cp.state.gs.code[0] == 0 and cp.state.gs.float_uniforms[0].tolist() == [0, 0, 0, 0]
    assert cp.state.regs[0x280] == 0


def test_uniforms_and_bools_mirror_only_without_a_geometry_shader() -> None:
    b = CommandBuilder()
    b.write("VSH_COM_MODE", 0)
    b.upload_float_uniforms("VSH", 1, [(1, 2, 3, 4)])
    b.write("VSH_BOOLUNIFORM", 0x7FFF0005)
    b.write_fields("GEOSTAGE_CONFIG", gs_use=2)
    b.upload_float_uniforms("VSH", 2, [(5, 6, 7, 8)])
    cp = run(b.words())
    assert cp.state.gs.float_uniforms[1].tolist() == [1, 2, 3, 4]
    assert cp.state.gs.float_uniforms[2].tolist() == [0, 0, 0, 0]
    assert cp.state.regs[0x280] == 0x7FFF0005


def test_lut_ports() -> None:
    b = CommandBuilder()
    b.upload_lut("lighting", [10, 11, 12], table=17, index=254)  # DA1, wraps after 255
    b.upload_lut("fog", [1, 2], index=126)
    b.upload_lut("proctex", [5, 6], table=2, index=127)  # RGB map has 128 entries: wraps
    b.upload_lut("gas", [9], index=15)
    cp = run(b.words())
    s = cp.state
    assert s.lighting_luts[17, 254:].tolist() == [10, 11] and s.lighting_luts[17, 0] == 12
    assert s.fog_lut[126:].tolist() == [1, 2]
    assert s.proctex_luts[2, 127] == 5 and s.proctex_luts[2, 0] == 6
    assert s.gas_lut[15] == 9


def test_fixed_attributes_and_index_increment() -> None:
    b = CommandBuilder()
    b.fixed_attrib(3, (1.0, 2.0, 3.0, 4.0))
    b.write_many("FIXEDATTRIB_DATA0", [0xBF000000, 0x00004000, 0x003F0000], consecutive=False)  # -> attribute 4
    cp = run(b.words())
    assert cp.state.fixed_attribs[3].tolist() == [1, 2, 3, 4]
    assert cp.state.fixed_attribs[4].tolist() == [1, 2, 0, -1]


def test_immediate_mode_vertices_become_one_draw() -> None:
    b = CommandBuilder()
    b.write_fields("VSH_NUM_ATTR", num_attrs_minus_1=1)
    verts = [[(i, 0, 0, 1), (0, i, 0, 1)] for i in range(3)]
    b.immediate_vertices(verts)
    b.write("START_DRAW_FUNC0", 1, mask=1)
    rec = Recorder()
    run(b.words(), pipeline=rec)
    assert len(rec.draws) == 1
    _index, kind, inputs, _ = rec.draws[0]
    assert kind is DrawKind.IMMEDIATE and inputs is not None and inputs.shape == (3, 16, 4)
    assert inputs[2, 0].tolist() == [2, 0, 0, 1] and inputs[2, 1].tolist() == [0, 2, 0, 1]


def test_triggers_reach_the_pipeline() -> None:
    b = CommandBuilder()
    b.write("NUMVERTICES", 3)
    b.write("DRAWARRAYS", 1)
    b.write("VTX_FUNC", 1)
    b.write("RESTART_PRIMITIVE", 0)  # bit 0 clear: no restart
    b.write("RESTART_PRIMITIVE", 1)
    b.write("NUMVERTICES", 6)
    b.write("DRAWELEMENTS", 1)
    b.write("FRAMEBUFFER_FLUSH", 1)
    rec = Recorder()
    cp = run(b.words(), pipeline=rec)
    assert [(d[0], d[1], d[3]) for d in rec.draws] == [(0, DrawKind.ARRAYS, 3), (1, DrawKind.ELEMENTS, 6)]
    assert rec.events == [
        PipelineEventKind.VERTEX_CACHE_CLEAR,
        PipelineEventKind.RESTART_PRIMITIVE,
        PipelineEventKind.FRAMEBUFFER_FLUSH,
    ]
    assert cp.draw_count == 2


def test_finalize_stops_on_byte_match_only() -> None:
    b = CommandBuilder()
    b.write("FINALIZE", 0x00000000)  # no byte equals IRQ_CMP's (0x12345678): processing continues
    b.write(0x040, 1)
    b.write("FINALIZE", 0xFFFFFF78)  # low byte matches: interrupt + auto-stop
    b.write(0x040, 2)
    cp = CommandProcessor()
    result = cp.run(b.words())
    assert result.finalized and cp.state.regs[0x040] == 1


def _place(cp: CommandProcessor, address: int, b: CommandBuilder) -> int:
    data = b.tobytes()
    cp.memory.write(address, data)
    return len(data)


def test_jump_follows_into_memory_and_abandons_the_rest() -> None:
    cp = CommandProcessor()
    target = CommandBuilder()
    target.write(0x041, 0x77)
    target.finalize()
    size = _place(cp, 0x20001000, target)
    b = CommandBuilder()
    b.write_fields("CMDBUF_SIZE0", size=size // 8)
    b.write_fields("CMDBUF_ADDR0", address=0x20001000 // 8)
    b.write("CMDBUF_JUMP0", 1)
    b.write(0x042, 0x99)  # never runs
    result = cp.run(b.words())
    assert cp.state.regs[0x041] == 0x77 and cp.state.regs[0x042] == 0
    assert result.jumps == 1 and result.buffers[-1] == (0x20001000, size)


def test_jump_cycle_is_reported_not_looped() -> None:
    cp = CommandProcessor()
    loop = CommandBuilder()
    loop.write_fields("CMDBUF_SIZE1", size=4)
    loop.write_fields("CMDBUF_ADDR1", address=0x20002000 // 8)
    loop.write("CMDBUF_JUMP1", 1)
    loop.write(0x040, 0)  # pad to 32 bytes
    assert _place(cp, 0x20002000, loop) == 32
    with pytest.raises(JumpCycle, match="0x20002000"):
        cp.run_at(0x20002000, 32)


def test_jump_outside_memory_is_a_memory_fault() -> None:
    b = CommandBuilder()
    b.write_fields("CMDBUF_SIZE0", size=2)
    b.write_fields("CMDBUF_ADDR0", address=0x08000000 // 8)
    b.write("CMDBUF_JUMP0", 1)
    with pytest.raises(MemoryFault, match="0x08000000"):
        run(b.words())


def test_truncated_and_misaligned_buffers_name_the_offset() -> None:
    cp = CommandProcessor()
    good = [5, header_word(0x040, 1)]
    with pytest.raises(TruncatedPacket, match="byte offset 0x8, packet #1"):
        cp.run(np.array([*good, 1, header_word(65, 4)], np.uint32))
    assert cp.state.regs[0x040] == 5  # everything before the fault was applied
    with pytest.raises(TruncatedPacket, match="byte offset 0x8"):
        cp.run(np.array([*good, 1], np.uint32))
    with pytest.raises(MisalignedBuffer, match="stray bytes"):
        cp.run(np.array(good, "<u4").tobytes() + b"\x01\x02")
    with pytest.raises(MisalignedBuffer):
        cp.run_at(0x20000004, 8)


def test_writes_above_0x2ff_are_ignored_and_counted() -> None:
    cp = CommandProcessor()
    result = cp.run(np.array([1, header_word(0x2FF, 2, consecutive=True), 2, 0], np.uint32))
    assert cp.state.regs[0x2FF] == 1 and result.ignored_writes == 1


def test_observer_sees_packets_then_writes_in_order_and_packet_limit() -> None:
    listing = ListingObserver()
    cp = CommandProcessor()
    cp.attach(listing)
    b = CommandBuilder()
    b.write_many(0x050, [1, 2, 3])
    b.write("DRAWARRAYS", 1)
    b.write(0x060, 9)
    result = cp.run(b.words(), packet_limit=2)
    assert result.stopped_at_limit and result.packets == 2 and cp.state.regs[0x060] == 0
    assert [p.id for p in listing.packets] == [0x050, 0x22E]
    assert [w.id for w in listing.writes] == [0x050, 0x051, 0x052, 0x22E]
    assert [t.action for t in listing.triggers] == ["draw arrays"]


def test_every_draw_is_recorded_with_its_register_snapshot() -> None:
    b = CommandBuilder()
    b.write("NUMVERTICES", 3)
    b.write("DRAWARRAYS", 1)
    b.write("NUMVERTICES", 9)
    b.write("DRAWELEMENTS", 1)
    cp = run(b.words())
    got = [(d.index, d.kind, int(d.regs[0x228])) for d in cp.draws]
    assert got == [(0, DrawKind.ARRAYS, 3), (1, DrawKind.ELEMENTS, 9)]
    assert cp.draws[0].offset == 8 and cp.state.regs[0x228] == 9


def _collapse_readably(events: list[list[int]]) -> list[list[int]]:
    """The rule ``tables.collapse_idempotent`` vectorizes, one event at a time from the end: an idempotent event is
    dropped when the same (register, value) comes later in its run; any other event ends the run."""
    from picaemu.command.tables import IDEMPOTENT

    out: list[list[int]] = []
    seen: set[tuple[int, int]] = set()
    for row in reversed(events):
        if IDEMPOTENT[row[0]]:
            if (row[0], row[1]) in seen:
                continue
            seen.add((row[0], row[1]))
        else:
            seen.clear()
        out.append(row)
    return out[::-1]


def test_idempotent_events_collapse_to_their_last_occurrence_in_each_run() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from picaemu.command.tables import EVENT_OF_REG, IDEMPOTENT, collapse_idempotent

    idempotent = [int(r) for r in np.flatnonzero(IDEMPOTENT)]
    other = [r for r in EVENT_OF_REG if not IDEMPOTENT[r]]
    row = st.tuples(st.sampled_from(idempotent + other[:2]), st.sampled_from([0, 1, 0xFFFF_FFFF]))

    @settings(max_examples=300, deadline=None)
    @given(st.lists(row, max_size=40))
    def check(rows: list[tuple[int, int]]) -> None:
        events = np.array([[reg, value, pos] for pos, (reg, value) in enumerate(rows)], np.int64).reshape(-1, 3)
        assert collapse_idempotent(events) == _collapse_readably(events.tolist())

    assert other, "a non-idempotent event register to end runs with"
    check()
