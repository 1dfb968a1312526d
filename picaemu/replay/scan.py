"""A quick scan of a capture for ``picaemu info``: the GPU state at every draw, without the engines, the compiled
command loop or a pipeline (``scan_draws(capture) -> (states, events)``).

Command lists run through ``picaemu.command.walk.RegisterWalk`` (plain Python: no compiled kernel is called, so
numba's registries are never loaded). Emulated memory is not built: a command list's bytes are assembled from the
memory writes before it (initial blocks, then MemoryWrite events in order), the only writers of memory the scan
models. Every event is lowered to its register writes as a replay lowers it (``picaemu.gx.lowering.lower``, which
checks a Present's screen ...). The engines do not run: memory fills and display transfers only mark the bytes
they write, and their parameters are checked where a replay's engine would refuse them (a display transfer's by
the engine's own ``check_transfer``: formats, downscale mode, empty or oversized images, partial tiles; a fill
ending before its start; memory outside the mapped regions).

Whatever the scan does not model raises ``Unmodelled`` — an engine writing bytes a later command list reads, DMA
and texture copies (and display transfers in texture-copy mode), register-write events, a capture whose initial
state is unknown (its replay warns about registers read before they were written), more than
``SCAN_BYTE_BUDGET`` command bytes in all, and everything ``RegisterWalk`` refuses — and the caller replays the
capture instead, which gives the same answer (or the error or warnings a replay gives). tests/test_walk.py checks
both routes agree, and the fuzz campaign's ``info`` kind (bench/fuzz.py) on mutated captures.
"""

from __future__ import annotations

import numpy as np

from picaemu.command.walk import RegisterWalk, Unmodelled
from picaemu.errors import MemoryFault, PicaError
from picaemu.formats import pica
from picaemu.gx.lowering import Write, lower, started_fill_units
from picaemu.gx.transfer_layout import BYTES_PER_PIXEL, GxError, TransferFlags, check_transfer, output_start
from picaemu.memory import PhysicalMemory
from picaemu.regs import access
from picaemu.regs.external import P3D_BASE, P3D_IDS
from picaemu.replay.capture import initial_gpu_state
from picaemu.state import GpuState, share_unchanged

_REGIONS = PhysicalMemory()  # for its mapping rule only (the OS backs untouched regions with no pages)
# command bytes the scan walks in all before it gives way to the compiled replay: the largest sample walks 0.47 MB
# (game_cubes_3000, minicraft 0.12 MB); plain Python walks ~13 MB/s, the compiled loop ~10 times faster, so a
# small hostile file naming many 8 MB command lists is replayed instead of taking minutes here
SCAN_BYTE_BUDGET = 8 << 20
_PASSIVE = (pica.Present, pica.FrameEnd, pica.Marker, pica.FlushCacheRegions)  # no GPU or memory effect


def _check_mapped(address: int, size: int, who: str) -> None:
    """``PhysicalMemory.find``'s rule (an access lies wholly inside one region); its regions are never touched."""
    try:
        _REGIONS.find(address, size, who)
    except MemoryFault as err:
        raise Unmodelled(str(err)) from err


class _MemoryLog:
    """Emulated memory as the ordered list of its writes: (event index, start, end, blob), the initial blocks at
    event -1; plus the extents the engines write (event index, start, end)."""

    def __init__(self, capture: pica.Capture) -> None:
        self.blobs = capture.blobs
        rows = [(-1, address, blob) for address, blob in capture.state.memory]
        rows += [(i, e.address, e.blob) for i, e in enumerate(capture.events) if isinstance(e, pica.MemoryWrite)]
        for _, address, blob in rows:
            _check_mapped(address, self.blobs.size(blob), "memory write")
        self.when = np.array([r[0] for r in rows], np.int64)
        self.start = np.array([r[1] for r in rows], np.int64)
        self.end = self.start + np.array([self.blobs.size(r[2]) for r in rows], np.int64)
        self.blob = [r[2] for r in rows]
        self.engines: list[tuple[int, int, int]] = []

    def engine(self, event: int, start: int, end: int) -> None:
        self.engines.append((event, start, end))

    def read(self, event: int, address: int, size: int) -> bytes:
        """The ``size`` bytes at ``address`` as event ``event`` finds them."""
        _check_mapped(address, size, "command list")
        end = address + size
        if any(s < end and address < e for _, s, e in self.engines):
            raise Unmodelled(f"an engine wrote memory of the command list at 0x{address:08X}")
        out = bytearray(size)
        hits = (self.when < event) & (self.start < end) & (self.end > address)
        for w in np.flatnonzero(hits).tolist():
            lo, hi = max(int(self.start[w]), address), min(int(self.end[w]), end)
            data = self.blobs[self.blob[w]]
            out[lo - address : hi - address] = data[lo - int(self.start[w]) : hi - int(self.start[w])]
        return bytes(out)


def _engine_extents(event: pica.Event) -> list[tuple[int, int]]:
    """The byte ranges an engine event writes (a fill: from its start rounded down to the 8 bytes its register
    holds; a display transfer: from its first output pixel, its output dimensions in the output format's pixels).
    What the engine would refuse (a fill ending before it starts, a display transfer's parameters as
    ``check_transfer`` checks them, memory outside the mapped regions) is ``Unmodelled``: the replay reports it."""
    if isinstance(event, pica.MemoryFill):
        out = []
        for _, unit in started_fill_units(event):
            start = unit.start & ~7
            if unit.end <= start:
                raise Unmodelled("a memory fill that ends before it starts")
            _check_mapped(start, unit.end - start, "memory fill")
            out.append((start, unit.end))
        return out
    flags = TransferFlags.from_word(event.flags) if isinstance(event, pica.DisplayTransfer) else None
    if isinstance(event, pica.DisplayTransfer) and flags is not None and not flags.texture_copy:
        in_dim = access.bits(event.in_dim, "PPF_IN_DIM", "width"), access.bits(event.in_dim, "PPF_IN_DIM", "height")
        out_dim = (
            access.bits(event.out_dim, "PPF_OUT_DIM", "width"),
            access.bits(event.out_dim, "PPF_OUT_DIM", "height"),
        )
        try:
            check_transfer(in_dim, out_dim, flags)  # the engine's own checks
        except GxError as err:
            raise Unmodelled(str(err)) from err
        first = output_start(event.dst, in_dim, out_dim, flags)
        start, end = min(event.dst, first), first + out_dim[0] * out_dim[1] * BYTES_PER_PIXEL[flags.out_format]
        _check_mapped(event.src, in_dim[0] * in_dim[1] * BYTES_PER_PIXEL[flags.in_format], "display transfer input")
        _check_mapped(start, end - start, "display transfer output")
        return [(start, end)]
    raise Unmodelled(f"{type(event).__name__} events of this kind")


def _kick(walk: RegisterWalk, writes: list[Write]) -> None:
    """A CommandList's register writes (``picaemu.gx.lowering.lower``), each through the P3D window."""
    for address, value, width in writes:
        if width != 4 or not P3D_BASE <= address < P3D_BASE + 4 * P3D_IDS or address % 4:
            raise Unmodelled(f"a write of {width} bytes at 0x{address:08X}")
        walk.write((address - P3D_BASE) >> 2, value)


def scan_draws(capture: pica.Capture) -> tuple[list[GpuState], list[int]]:
    """(the state at every draw, read-only and sharing arrays equal to the previous draw's; the event index of each
    draw); ``Unmodelled`` when the capture needs more than the scan models (module docstring)."""
    from picaemu.replay.unknown_state import is_unknown

    if is_unknown(capture.meta):
        raise Unmodelled("a capture whose initial state is unknown")
    memory = _MemoryLog(capture)
    state = initial_gpu_state(capture.state)
    states: list[GpuState] = []
    events: list[int] = []
    index = 0

    def on_draw() -> None:
        states.append(share_unchanged(state, states[-1] if states else None))
        events.append(index)

    walk = RegisterWalk(state, lambda address, size: memory.read(index, address, size), on_draw, SCAN_BYTE_BUDGET)
    for index, event in enumerate(capture.events):
        try:
            writes = lower(event)  # its register writes, checked as a replay lowers them (a Present's screen ...)
        except PicaError as err:
            raise Unmodelled(str(err)) from err
        if isinstance(event, pica.CommandList):
            _kick(walk, writes)
        elif not isinstance(event, (pica.MemoryWrite, *_PASSIVE)):
            for start, end in _engine_extents(event):
                memory.engine(index, start, end)
    return states, events


__all__ = ["Unmodelled", "scan_draws"]
