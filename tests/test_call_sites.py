"""Per-draw call sites (``record --call-sites``) without qemu: the optional CALL section of a ``.pica`` file, the
recorder's matching of draw calls to trigger packets, and where call sites show (``DrawRecord.call_site``,
``dump``, ``state``). The recording itself under ``qemu-arm -g``: tests/test_record_qemu.py."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from picaemu.formats import pica, pica_calls

from picaemu.cli import main
from picaemu.errors import FormatError
from picaemu.record.callsites import STACK_WINDOW, CallSites, StackWindow
from picaemu.replay import Replay
from tests.conftest import REPO

SAMPLE = REPO / "samples" / "captures" / "animation.pica"
FRAMES = (pica.CallFrame(0x10510, "draw_mesh", "src/scene.c", 41), pica.CallFrame(0x10900, "main", "src/main.c", 7))


def _with_sites() -> tuple[pica.Capture, list]:
    capture = pica.read(SAMPLE)
    replay = Replay(capture, checkpoints=False)
    replay.run()
    capture.call_sites = {d.index: pica.CallSite(d.offset, FRAMES[d.index % 2 :]) for d in replay.draws}
    return capture, replay.draws


def test_the_section_round_trips_and_leaves_the_rest_of_the_file_alone() -> None:
    capture, _ = _with_sites()
    data = pica.build(capture)
    plain = pica.build(pica.read(SAMPLE))
    assert data[:8] == plain[:8] and data[8:10] == plain[8:10]  # same magic, same major.minor
    again = pica.parse(data)
    assert again.call_sites == capture.call_sites and len(again.events) == len(capture.events)
    assert pica_calls.TAG not in plain  # no call sites, no section: byte for byte the file it was
    assert again.call_sites[1].text() == "main (src/main.c:7)"


def test_a_damaged_section_is_a_format_error_with_an_offset() -> None:
    payload = pica_calls.build({0: pica.CallSite(8, FRAMES)})
    with pytest.raises(FormatError, match="stray"):
        pica_calls.parse(payload + b"\0", 100)
    with pytest.raises(FormatError, match="cannot fit") as info:
        pica_calls.parse(b"\xff\xff\xff\x00", 100)
    assert info.value.offset == 100


def test_draw_records_carry_the_call_site_when_the_trigger_offset_agrees() -> None:
    capture, draws = _with_sites()
    capture.call_sites[1] = pica.CallSite(draws[1].offset + 8, FRAMES)  # another trigger: not this draw's
    replay = Replay(pica.parse(pica.build(capture)), checkpoints=False)
    replay.run()
    assert replay.draws[0].call_site is not None and replay.draws[0].call_site.frames == FRAMES
    assert replay.draws[1].call_site is None


def test_dump_and_state_show_the_call_site(tmp_path) -> None:
    capture, _ = _with_sites()
    path = tmp_path / "sites.pica"
    pica.write(path, capture)
    dump = CliRunner().invoke(main, ["dump", str(path)])
    assert dump.exit_code == 0, dump.output
    assert "draw 0 called from draw_mesh (src/scene.c:41) <- main (src/main.c:7)" in dump.output
    lines = CliRunner().invoke(main, ["dump", str(path), "--json"]).output.splitlines()
    with_sites = [json.loads(line) for line in lines if '"call_sites"' in line]
    assert with_sites[0]["call_sites"]["0"][0]["function"] == "draw_mesh"
    state = CliRunner().invoke(main, ["state", str(path), "--draw", "1", "--json"])
    assert state.exit_code == 0, state.output
    assert [f["function"] for f in json.loads(state.output)["call_site"]] == ["main"]


class _Info:
    """A stand-in for ``ProgramInfo``: each backtrace names the call it came from."""

    def __init__(self) -> None:
        self.n = 0

    def backtrace(self, regs, read, depth):
        self.n += 1
        return (pica.CallFrame(self.n, f"call{self.n}"),)


def test_each_trigger_takes_the_last_call_before_it_in_its_buffer() -> None:
    """Physical list at 0x20001000 (virtual 0x30001000): calls entered at words 0, 4, 6 (the one at 4 made no
    trigger: the one at 6 supersedes it), triggers at bytes 0x08 and 0x30; a call into another list stays
    pending until that list runs."""
    memory = {}
    sites = CallSites(_Info(), lambda a, n: memory[a][:n], (0x100, 0x104))
    for words in (0, 4, 6):
        memory[0x100] = (0x30001000).to_bytes(4, "little") + words.to_bytes(4, "little")
        sites.on_call([0] * 16)
    memory[0x100] = (0x30002000).to_bytes(4, "little") + bytes(4)
    sites.on_call([0] * 16)
    sites.on_draw(0, 0x20001000, 0x08)
    sites.on_draw(1, 0x20001000, 0x30)
    sites.after_list(0x20001000, 0x40)
    assert sites.sites[0].frames[0].function == "call1" and sites.sites[1].frames[0].function == "call3"
    sites.on_draw(2, 0x20002000, 0x10)
    assert sites.sites[2].frames[0].function == "call4" and sites.before(2).keys() == {0, 1}


def test_reads_that_came_with_the_registers_are_not_asked_again() -> None:
    """``prefetch`` names the globals (one read: they are adjacent) and, once a draw stop was seen, a stack window
    at its stack pointer; ``on_call`` and ``StackWindow`` take what was read with the registers first."""
    memory = {0x100: (0x30001000).to_bytes(4, "little") + (4).to_bytes(4, "little")}
    asked: list[tuple[int, int]] = []

    def read(address: int, size: int) -> bytes:
        asked.append((address, size))
        return memory.get(address, bytes(size))[:size]

    sites = CallSites(_Info(), read, (0x100, 0x104))
    assert sites.prefetch() == [(0x100, 8)]
    regs = [0] * 13 + [0x800, 0, 0]
    sites.on_call(regs)
    assert asked == [(0x100, 8)] and sites.prefetch() == [(0x100, 8), (0x800, STACK_WINDOW)]
    sites.on_call(regs, [(0x100, memory[0x100])])
    assert asked == [(0x100, 8)] and sites._positions == [0x20001010, 0x20001010]
    window = StackWindow(read, chunks=[(0x800, bytes(range(STACK_WINDOW)))])
    assert window(0x810, 8) == bytes(range(16, 24)) and asked == [(0x100, 8)]
    assert window(0x800 + STACK_WINDOW, 4) == bytes(4) and asked[-1] == (0x800 + STACK_WINDOW, STACK_WINDOW)
