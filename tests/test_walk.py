"""The plain-Python command walk (``picaemu.command.walk``) and ``picaemu info``'s quick scan
(``picaemu.replay.scan``) against the command processor (the compiled loop) and a full replay: the same draws, and
at each draw the same register file, shader code and operand descriptors; what the walk does not model it refuses
(``Unmodelled``) exactly where the processor drops, ignores or batches something, or fails."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from picaemu.formats import pica

from picaemu.command import codes as K
from picaemu.command.kernel import C_DROPPED, C_IGNORED
from picaemu.command.packets import header_word
from picaemu.command.processor import CommandProcessor
from picaemu.command.tables import ACTION_TABLE, MIRRORED
from picaemu.command.walk import RegisterWalk, Unmodelled
from picaemu.errors import MemoryFault, PicaError
from picaemu.regs import access, id_of
from picaemu.replay import load_capture
from picaemu.replay.info import _DrawLog, _replay_draws, capture_info
from picaemu.replay.scan import scan_draws
from picaemu.state import GpuState
from tests.fuzz.targets import draws_differ

ROOT = Path(__file__).resolve().parent.parent
GAME = ROOT / "tests/data/games/minicraft.pica"
SAMPLES = ROOT / "samples/captures"


def assert_same_draws(got: list[GpuState], want: list[GpuState]) -> None:
    """Draw by draw: the register file, and both units' code and operand descriptors."""
    difference = draws_differ(got, want)
    assert difference is None, difference


@pytest.mark.parametrize(
    "path",
    [GAME, *(SAMPLES / n for n in ("game_cubes_300.pica", "gs_sprites.pica", "texture_formats.pica", "fog.pica"))],
    ids=lambda p: p.name,
)
def test_scan_matches_a_replay_on_real_captures(path: Path) -> None:
    capture = load_capture(path)
    states, events = scan_draws(capture)
    want_states, want_events = _replay_draws(capture)
    assert events == want_events
    assert_same_draws(states, want_states)


# ------------------------------------------------------------------------------------------- random buffers
# every register the loop does more than store (ports, index registers, triggers, events, mirrors), the registers
# those read (shader configuration, jump channels, interrupts), texture registers, and any id at all
_ACTIVE = [int(i) for i in np.flatnonzero(ACTION_TABLE != K.A_PLAIN)]
_READ = [
    id_of(n)
    for n in (
        "VSH_COM_MODE",
        "GEOSTAGE_CONFIG",
        "VSH_NUM_ATTR",
        "CMDBUF_ADDR0",
        "CMDBUF_SIZE0",
        "CMDBUF_ADDR1",
        "CMDBUF_SIZE1",
        "IRQ_CMP",
        "IRQ_AUTOSTOP",
        "TEXUNIT_CONFIG",
        "TEXUNIT0_ADDR1",
        "VSH_ENTRYPOINT",
        *(f"VSH_{m}" for m in MIRRORED),
    )
]
_DRAWS = [id_of("DRAWARRAYS")] * 12 + [id_of("DRAWELEMENTS")] * 6  # weighted: most buffers have draws
_ids = st.sampled_from(_ACTIVE + _READ + _DRAWS + [0x300]) | st.integers(0, 0x2FF)
_words = st.integers(0, 127) | st.integers(0, 0xFFFFFFFF) | st.sampled_from([0x12345678, 0x18000000 >> 3, 16])


@st.composite
def _buffer(draw: st.DrawFn) -> list[int]:
    out: list[int] = []
    for _ in range(draw(st.integers(1, 40))):
        extra = draw(st.integers(0, 6))
        mask = draw(st.sampled_from([0xF, 0xF, 0x1, 0x3, 0x8]))
        out += [draw(_words), header_word(draw(_ids), extra + 1, mask, draw(st.booleans()))]
        out += [draw(_words) for _ in range(extra)] + [0] * (extra % 2)
    return out


def _processor_run(words: list[int]) -> tuple[CommandProcessor, _DrawLog, PicaError | None, GpuState]:
    sink = _DrawLog()
    proc = CommandProcessor(pipeline=sink)
    start = proc.state.copy()
    error = None
    try:
        proc.run(np.array(words, np.uint32))
    except PicaError as err:
        error = err
    return proc, sink, error, start


def _walk_run(words: list[int], start: GpuState, proc: CommandProcessor) -> list[GpuState] | Unmodelled:
    from picaemu.state import share_unchanged

    states: list[GpuState] = []

    def read(address: int, size: int) -> bytes:
        try:
            return proc.memory.read(address, size)
        except MemoryFault as err:
            raise Unmodelled(str(err)) from err

    walk = RegisterWalk(start, read, lambda: states.append(share_unchanged(start, states[-1] if states else None)))
    try:
        walk.run(words)
    except Unmodelled as refused:
        return refused
    return states


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_buffer())
def test_walk_matches_the_processor_on_random_buffers(words: list[int]) -> None:
    proc, sink, error, start = _processor_run(words)
    walked = _walk_run(words, start, proc)  # memory stays as the processor left it: nothing here writes memory
    if isinstance(walked, Unmodelled):  # refused: the processor failed, dropped or ignored words, or went immediate
        dropped = int(proc._counters[C_DROPPED]) or int(proc._counters[C_IGNORED])
        assert error is not None or dropped or "immediate-mode" in str(walked), walked
        return
    assert error is None, error
    assert_same_draws(walked, sink.states)
    assert np.array_equal(start.regs, proc.state.regs)


# ---------------------------------------------------------------------------------------------- the scan
def test_scan_gives_up_where_an_engine_wrote_a_command_list(tmp_path: Path) -> None:
    """A fill over the bytes of a later command list: the scan refuses, ``info`` replays and agrees with it."""
    capture = load_capture(SAMPLES / "triangle.pica")
    at = next(i for i, e in enumerate(capture.events) if isinstance(e, pica.CommandList))
    cl = capture.events[at]
    unit = pica.FillUnit(cl.address + cl.size - 8, cl.address + cl.size, 0, 0x201)
    capture.events.insert(at, pica.MemoryFill((unit, pica.FillUnit(0, 0, 0, 0))))
    with pytest.raises(Unmodelled, match="engine wrote memory"):
        scan_draws(capture)
    path = tmp_path / "filled.pica"
    pica.write(path, capture)
    assert capture_info(path).draws == len(_replay_draws(capture)[0])


def test_what_an_engine_refuses_fails_info_as_it_fails_a_replay(tmp_path: Path) -> None:
    """A fill that ends before it starts: the scan leaves it to the replay, whose error ``info`` reports."""
    from picaemu.replay import ReplayError

    capture = load_capture(SAMPLES / "triangle.pica")
    bad = pica.FillUnit(0x18000100, 0x18000000, 0, 0x201)
    capture.events.insert(0, pica.MemoryFill((bad, pica.FillUnit(0, 0, 0, 0))))
    with pytest.raises(Unmodelled, match="ends before it starts"):
        scan_draws(capture)
    path = tmp_path / "bad_fill.pica"
    pica.write(path, capture)
    with pytest.raises(ReplayError, match="memory fill"):
        capture_info(path)


@pytest.mark.parametrize(
    "in_dim, out_dim, message",
    [
        (0x19000F0, 0x00000F0, "empty image"),  # output 240x0 (info fuzz seeds 500183, 503414)
        (0x00000F0, 0x19000F0, "empty image"),  # input 240x0 (info fuzz seed 500535)
        (0x18000F0, 0x19000F0, "larger than the input"),  # output 240x400 from a 240x384 input
        (0x19000F4, 0x19000F4, "whole number of 8x8 tiles"),  # a tiled input 244 pixels wide
    ],
)
def test_scan_refuses_a_display_transfer_the_engine_refuses(
    tmp_path: Path, in_dim: int, out_dim: int, message: str
) -> None:
    """The engine's checks of a display transfer (``check_transfer``) hold in the scan too: ``info`` reports the
    replay's error instead of summarising a capture that ``render`` stops at (the info fuzz kind's finding)."""
    from picaemu.replay import ReplayError

    capture = load_capture(SAMPLES / "triangle.pica")
    at = next(i for i, e in enumerate(capture.events) if isinstance(e, pica.DisplayTransfer))
    capture.events[at] = dataclasses.replace(capture.events[at], in_dim=in_dim, out_dim=out_dim)
    with pytest.raises(Unmodelled, match=message):
        scan_draws(capture)
    path = tmp_path / "bad_transfer.pica"
    pica.write(path, capture)
    with pytest.raises(ReplayError, match=message):
        capture_info(path)


@pytest.mark.parametrize("seed", [500183, 500535, 503414])
def test_info_fuzz_seeds_end_in_the_replays_error(seed: int) -> None:
    """Mutated captures of the info fuzz kind whose display transfer the engine refuses: ``info`` ends in the
    replay's named error (it summarised them before ``check_transfer`` was shared with the scan)."""
    from tests.fuzz.runner import run_one

    assert run_one("info", seed) == ("ReplayError", 0)


def test_info_cli_on_a_refused_fuzz_seed_prints_one_error_line(tmp_path: Path) -> None:
    """``picaemu info`` on info fuzz seed 500183 (a display transfer of an empty image): exit status 2 and one
    ``error:`` line naming the event, no traceback."""
    from click.testing import CliRunner

    from picaemu.cli import main
    from tests.fuzz.mutate import make_input

    path = tmp_path / "seed.pica"
    path.write_bytes(make_input("info", 500183))  # type: ignore[arg-type]
    result = CliRunner().invoke(main, ["info", str(path)])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: event #0 (DisplayTransfer"), result.stderr
    assert "empty image" in lines[0]


def test_scan_gives_way_to_a_replay_past_its_byte_budget(tmp_path: Path) -> None:
    """A 1.2 kB file naming ten 8 MB command lists (of untouched, zero memory): the plain-Python scan would walk
    80 MB (~6 s of CPU here, minutes for a few hundred lists); past ``SCAN_BYTE_BUDGET`` in all it refuses before
    reading them and ``info`` replays, with the same draws."""
    from picaemu.replay.scan import SCAN_BYTE_BUDGET

    capture = load_capture(SAMPLES / "triangle.pica")
    at = next(i for i, e in enumerate(capture.events) if isinstance(e, pica.CommandList))
    size = (8 << 20) - 8  # the largest CMDBUF_SIZE (20 bits of 8-byte units)
    capture.events[at:at] = [pica.CommandList(address=0x20800000, size=size)] * 10
    assert 10 * size > SCAN_BYTE_BUDGET
    calls: list[int] = []
    walk = RegisterWalk(GpuState(), lambda a, n: calls.append(n) or bytes(n), lambda: None, total_bytes=1 << 20)
    with pytest.raises(Unmodelled, match="total budget"):
        walk.run(
            [
                0x20800000 >> 3,
                header_word(id_of("CMDBUF_ADDR0"), 1, 0xF),
                size >> 3,
                header_word(id_of("CMDBUF_SIZE0"), 1, 0xF),
                1,
                header_word(id_of("CMDBUF_JUMP0"), 1, 0xF),
            ]
        )
    assert calls == []  # refused before the 8 MB were read
    with pytest.raises(Unmodelled, match="total budget"):
        scan_draws(capture)
    path = tmp_path / "many_lists.pica"
    pica.write(path, capture)
    assert capture_info(path).draws == len(_replay_draws(capture)[0]) == 1


def test_scan_refuses_register_write_events() -> None:
    """CiTrace register streams kick their lists through MMIO writes: a replay answers for them."""
    from picaemu.replay.capture import load_capture_kind

    capture, _ = load_capture_kind(ROOT / "tests/data/captures/citrace/scene1_triangle.ctf")
    with pytest.raises(Unmodelled, match="RegWrite"):
        scan_draws(capture)


def test_info_imports_no_numba() -> None:
    """``picaemu info`` on the game capture loads no compiled code (numba's import and its registries are most of
    the start-up of a command that renders)."""
    code = (
        "import sys\nfrom picaemu.cli import main\ntry:\n    main(['info', sys.argv[1]])\nexcept SystemExit:\n"
        "    pass\nprint('MODULES', sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'llvmlite')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(GAME)], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert "draws: 507" in out and out.splitlines()[-1] == "MODULES []", out[-400:]


def test_interrupt_rule_reads_irq_registers() -> None:
    """``raises_interrupt``: a byte of the finalize value equal to IRQ_CMP's, with auto-stop on."""
    from picaemu.command.tables import raises_interrupt

    regs = CommandProcessor().state.regs
    cmp_value = access.word(regs, "IRQ_CMP")
    assert raises_interrupt(regs, cmp_value & 0xFF) and not raises_interrupt(regs, ~cmp_value & 0xFFFFFFFF)
