"""Fuzz targets: each runs one input through a part of picaemu and returns the outcome, ``"ok"`` or the name of
the ``PicaError`` it ended with. Any other exception escapes: that is a crash, the thing fuzzing looks for.

- ``PacketTarget.run(words)``: a command buffer through one reused ``CommandProcessor`` (register state machine,
  data ports, jumps into emulated memory full of random words) and through ``list_packets``. Returns the packets
  the processor ran too.
- ``run_capture(data)``: .pica or CiTrace .ctf bytes parsed and replayed to the end through the real pipeline.
- ``run_shbin(data)``: SHBIN bytes parsed, each DVLE disassembled and run (vertex or geometry) on one vertex.
- ``run_texture(params)``: ``decode_texture`` of random bytes with arbitrary format / size / level / offset.
- ``run_hostile_draws(capture, edits, uniforms)``: a capture replayed with register fields and float uniforms
  overwritten at every draw (NaN, Inf, huge values) through the real pipeline.
- ``run_info(data)``: ``picaemu info`` on .pica or CiTrace .ctf bytes (``capture_info`` on a file, then the CLI's
  text and JSON forms, or the CLI's one-line error); where the quick scan models the capture and a replay runs to
  the end, ``draws_differ`` checks both walks of the commands found the same draws.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from picaemu.formats import citrace, pica, shbin

from picaemu.command.packet_list import list_packets
from picaemu.command.processor import CommandProcessor
from picaemu.draw import DrawCall, NullPipeline, PipelineEventKind, PipelineSink
from picaemu.errors import PicaError
from picaemu.gx import convert as gxconvert
from picaemu.memory import PhysicalMemory
from picaemu.regs.schema import Field
from picaemu.replay import Replay
from picaemu.state import GpuState

MEMORY_SEED = 1234
RANDOM_MEMORY = (0x18000000, 1 << 20)  # 1 MiB of random words in VRAM for jumps and vertex data to land in
FUZZ_BYTE_BUDGET = 1 << 20  # command bytes one run may execute (jump chains through random memory)
Outcome = str


def outcome_of(err: PicaError | None) -> Outcome:
    return "ok" if err is None else type(err).__name__


class PacketTarget:
    """One reusable processor over memory with random words (building one costs ~5 MB of arrays)."""

    def __init__(self) -> None:
        self.memory = PhysicalMemory()
        rng = np.random.default_rng(MEMORY_SEED)
        address, size = RANDOM_MEMORY
        self.memory.write(address, rng.integers(0, 1 << 32, size // 4, dtype=np.uint64).astype("<u4").tobytes())
        self.processor = CommandProcessor(self.memory, NullPipeline(), record_draws=False, byte_budget=FUZZ_BYTE_BUDGET)

    def run(self, words: np.ndarray, address: int = 0) -> tuple[Outcome, int]:
        """(outcome, packets run) of one buffer; the processor's state is reset first."""
        p = self.processor
        p.load_state(GpuState())
        p.reset()
        p.draw_count = 0
        error: PicaError | None = None
        packets = 0
        try:
            packets = p.run(words, address=address).packets
        except PicaError as err:
            error = err
        _, listing_error = list_packets(words.tobytes())
        return outcome_of(error or listing_error), packets


def _replay(capture: pica.Capture, pipeline: PipelineSink | None = None) -> Outcome:
    try:
        Replay(capture, pipeline=pipeline, checkpoints=False).run()
    except PicaError as err:
        return outcome_of(err)
    return "ok"


def run_capture(data: bytes) -> Outcome:
    """Parse .pica or .ctf bytes and replay them (see the module docstring)."""
    try:
        is_ctf = data.startswith(citrace.MAGIC)
        capture = gxconvert.from_citrace(citrace.parse(data)) if is_ctf else pica.parse(data)
    except PicaError as err:
        return outcome_of(err)
    return _replay(capture)


def run_shbin(data: bytes) -> Outcome:
    """Parse, disassemble and run every DVLE of a SHBIN on one vertex (see the module docstring)."""
    from picaemu.shader import ShaderSetup, run_vertex_shader
    from picaemu.shader.disasm_shbin import disassemble_dvle
    from picaemu.shader.geometry import run_geometry_shader

    try:
        program = shbin.parse(data)
        for k in range(len(program.dvles)):
            disassemble_dvle(program, k)
            setup = ShaderSetup.from_dvle(program, k)
            vertex = np.full((1, 16, 4), 0.5, np.float32)
            if setup.unit == "gs":
                run_geometry_shader(setup, vertex[:, :16].reshape(1, 16, 4))
            else:
                run_vertex_shader(setup, vertex)
    except PicaError as err:
        return outcome_of(err)
    return "ok"


@dataclass(frozen=True)
class TextureParams:
    data: bytes
    offset: int
    width: int
    height: int
    format: int | str
    level: int


def run_texture(params: TextureParams) -> Outcome:
    from picaemu.texture import decode_texture

    try:
        image = decode_texture(params.data, params.offset, params.width, params.height, params.format, params.level)
    except PicaError as err:
        return outcome_of(err)
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 4
    return "ok"


Edit = tuple[int, Field, int]  # (register id, field, raw field value)


class HostileDraws:
    """A PipelineSink that overwrites register fields (and optionally the VS float uniforms) in a copy of every
    draw's state before the real pipeline runs it."""

    def __init__(self, edits: Sequence[Edit], uniforms: np.ndarray | None = None) -> None:
        from picaemu.pipeline import Pipeline

        self.inner, self.edits, self.uniforms = Pipeline(), list(edits), uniforms

    def draw(self, call: DrawCall) -> None:
        state = call.state.copy()
        for reg_id, fld, raw in self.edits:
            word = (int(state.regs[reg_id]) & ~fld.mask) | ((raw << fld.lo) & fld.mask)
            state.regs[reg_id] = word & 0xFFFFFFFF
        if self.uniforms is not None:
            state.vs.float_uniforms[:] = self.uniforms
        self.inner.draw(
            DrawCall(call.index, call.kind, state, call.memory, call.offset, call.immediate_inputs, call.stats)
        )

    def event(self, kind: PipelineEventKind, state: GpuState) -> None:
        self.inner.event(kind, state)


def run_hostile_draws(capture: pica.Capture, edits: Sequence[Edit], uniforms: np.ndarray | None = None) -> Outcome:
    return _replay(capture, HostileDraws(edits, uniforms))


def draws_differ(got: list[GpuState], want: list[GpuState]) -> str | None:
    """Where two walks' states at each draw disagree (None when they agree): the number of draws, then draw by
    draw the register file and both units' code and operand descriptors."""
    if len(got) != len(want):
        return f"{len(got)} draws != {len(want)}"
    for d, (a, b) in enumerate(zip(got, want, strict=True)):
        if not np.array_equal(a.regs, b.regs):
            return f"draw {d}: registers {np.flatnonzero(a.regs != b.regs).tolist()[:20]} differ"
        for unit in ("vs", "gs"):
            ua, ub = getattr(a, unit), getattr(b, unit)
            if not (np.array_equal(ua.code, ub.code) and np.array_equal(ua.opdescs, ub.opdescs)):
                return f"draw {d}: {unit} code or operand descriptors differ"
    return None


class Disagreement(AssertionError):
    """``picaemu info``'s scan and a replay found different draws in the same capture: a bug (a crash)."""


def _info_cli(path: str) -> Outcome:
    """What ``picaemu info PATH`` (and ``--json``) does, in process: the summary's text and JSON forms, or the
    error's one-line form (``picaemu.cli.common.reports_errors``)."""
    from picaemu.cli.common import error_text
    from picaemu.cli.info import _text
    from picaemu.replay.info import capture_info

    try:
        answer = capture_info(path).as_dict()
    except PicaError as err:
        if not error_text(err).strip():
            raise AssertionError(f"{type(err).__name__} without a message") from err
        return outcome_of(err)
    json.dumps(answer)
    _text(answer)
    return "ok"


def run_info(data: bytes) -> Outcome:
    """``picaemu info`` on capture bytes, and the scan against a replay (see the module docstring). A replay that
    fails where the scan did not is counted apart (``ok, replay ERROR``): the scan does not check every engine
    parameter (``picaemu.replay.scan``)."""
    from picaemu.replay.capture import load_capture
    from picaemu.replay.info import _replay_draws
    from picaemu.replay.scan import Unmodelled, scan_draws

    fd, path = tempfile.mkstemp(suffix=".capture", prefix="picaemu-fuzz-info-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        outcome = _info_cli(path)
        if outcome != "ok":
            return outcome
        capture = load_capture(path)
    finally:
        os.unlink(path)
    try:
        scanned = scan_draws(capture)
    except Unmodelled:
        return "ok (replayed)"
    try:
        replayed = _replay_draws(capture)
    except PicaError as err:
        return f"ok, replay {outcome_of(err)}"
    if scanned[1] != replayed[1]:  # the event of each draw: the draws per frame
        raise Disagreement(f"scan and replay draw in events {scanned[1][:20]}... != {replayed[1][:20]}...")
    difference = draws_differ(scanned[0], replayed[0])
    if difference is not None:
        raise Disagreement(f"scan and replay disagree: {difference}")
    return "ok"
