"""Packet-level lint checks over the command buffers a list ran, without an observer on the command processor
(an observer makes the processor hand every packet and write to Python: several times a plain render's cost).

After a command-list event the linter hands ``PacketScan.run_buffers`` the run's result (``RunResult.buffers``:
every buffer of the chain in order, the kick buffer outside memory first; ``bytes_run``). Each buffer is walked
by the command processor's own packet walker (``picaemu.command.packet_list._walk``, compiled) up to what ran: a
jump trigger ends a buffer, the byte count the run executed ends the last. Headers are decoded over arrays
(field positions from ``picaemu.command.packets``); per packet it finds

- ``register-out-of-range``: a target id past 0x2FF;
- ``uniform-index-overflow``: float-uniform vectors past c95 (the writes of the packets that touch a float-uniform
  port go through ``picaemu.command.listing.UniformUploads.rows``, which follows the index as the processor does,
  over arrays: no Python work per packet);
- ``written``: every register id a packet sets (a VS register the GS mirrors sets its twin too).

Packets are numbered along the chain, kick buffer excluded, as ``DrawRecord.packet`` numbers them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from picaemu import regs as regtable
from picaemu.command.listing import UniformUploads
from picaemu.command.packet_list import _walk
from picaemu.command.packets import (
    CONSECUTIVE_SHIFT,
    EXTRA_BITS,
    EXTRA_SHIFT,
    ID_MASK,
    ID_SHIFT,
)
from picaemu.command.results import RunResult
from picaemu.command.tables import MIRRORED
from picaemu.memory import PhysicalMemory
from picaemu.regs import Action
from picaemu.shader.isa import NUM_C

Report = Callable[..., None]  # (code, message, *, offset, buffer, packet)
ID_SPACE = ID_MASK + 1  # header ids are 16 bits; the register file has NUM_REGS of them
JUMPS = np.zeros(ID_SPACE, bool)  # ids whose write may end a buffer (a jump trigger)
JUMPS[[r.id for r in regtable.all_registers() if r.action in (Action.JUMP0, Action.JUMP1)]] = True
UNIFORM_PORTS = np.zeros(ID_SPACE, bool)  # ids of the float-uniform index and data registers of both units
UNIFORM_PORTS[
    [r.id for r in regtable.all_registers() if "_FLOATUNIFORM_" in r.name and r.name.split("_")[1] in ("VSH", "GSH")]
] = True
# a write to one of these VS registers also sets its GS twin when the GS shares the VS configuration; counted as
# setting both (whether the GS shares it is state at the draw: a warning must not hang on it)
MIRROR = np.arange(regtable.NUM_REGS)
MIRROR[[regtable.id_of(f"VSH_{n}") for n in MIRRORED]] = [regtable.id_of(f"GSH_{n}") for n in MIRRORED]


class PacketScan:
    """See the module docstring. ``written``: (NUM_REGS,) bool, updated in place."""

    def __init__(self, written: np.ndarray, report: Report) -> None:
        self.written = written
        self.report = report
        self.uploads = UniformUploads()

    def run_buffers(self, memory: PhysicalMemory, run: RunResult) -> None:
        """Scan what ``run`` executed (see the module docstring)."""
        left, packet = run.bytes_run, 0
        for address, size in run.buffers:
            size = min(size, left)
            left -= size
            if address and size >= 8:
                words = memory.view(address, size // 4, np.uint32, "command list scan")
                packet = self.scan(words, address, packet)

    def scan(self, words: np.ndarray, address: int, first: int) -> int:
        """Check the packets of ``words`` (a buffer at ``address`` whose first packet is number ``first``) up to
        the first jump trigger; returns the number of the packet after the last one scanned."""
        starts = np.empty(words.size // 2 + 1, np.int64)
        count, _status = _walk(words, starts)  # a truncated tail: the processor raised (a command-fault)
        starts = starts[:count]
        headers = words[starts + 1].astype(np.int64)
        ids = headers >> ID_SHIFT & ID_MASK
        counts = (headers >> EXTRA_SHIFT & EXTRA_BITS) + 1
        step = headers >> CONSECUTIVE_SHIFT & 1
        lasts = ids + (counts - 1) * step
        jumps = np.flatnonzero(JUMPS[ids] | (step.astype(bool) & (JUMPS[np.minimum(lasts, ID_MASK)])))
        if jumps.size:  # the rest of the buffer does not run
            cut = int(jumps[0]) + 1
            starts, headers, ids, counts, step, lasts = (a[:cut] for a in (starts, headers, ids, counts, step, lasts))
        within = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        targets = np.repeat(ids, counts) + within * np.repeat(step, counts)
        inside = targets[targets < regtable.NUM_REGS]
        self.written[inside] = True
        self.written[MIRROR[inside]] = True
        for k in np.flatnonzero(lasts >= regtable.NUM_REGS).tolist():
            bad = int(ids[k]) if ids[k] >= regtable.NUM_REGS else regtable.NUM_REGS
            self.report(
                "register-out-of-range",
                f"packet writes register id 0x{bad:X} ({int(counts[k])} word(s) from 0x{int(ids[k]):X}); ids stop at "
                f"0x{regtable.NUM_REGS - 1:X}",
                offset=4 * int(starts[k]),
                buffer=address,
                packet=first + k,
            )
        ports = np.flatnonzero(UNIFORM_PORTS[ids] | UNIFORM_PORTS[np.minimum(lasts, ID_MASK)])
        if ports.size:
            self._uniforms(words, starts[ports], ids[ports], counts[ports], step[ports], address, first + ports)
        return first + starts.size

    def _uniforms(
        self,
        words: np.ndarray,
        starts: np.ndarray,
        ids: np.ndarray,
        counts: np.ndarray,
        step: np.ndarray,
        address: int,
        numbers: np.ndarray,
    ) -> None:
        """Follow the float-uniform uploads of the packets at ``starts`` (their header fields; ``numbers``: their
        packet numbers) write by write; report each packet that sends vectors past c95."""
        within = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        targets = np.repeat(ids, counts) + within * np.repeat(step, counts)
        values = words[np.repeat(starts, counts) + within + (within > 0)]  # parameter 0 sits before the header
        packet = np.repeat(np.arange(starts.size), counts)
        dropped = [
            (int(w), unit, int(r))
            for done, unit, rows in self.uploads.rows(targets, values)
            for w, r in zip(done[rows >= NUM_C].tolist(), rows[rows >= NUM_C].tolist(), strict=True)
        ]
        by_packet: dict[int, list[tuple[str, int]]] = {}
        for w, unit, row in sorted(dropped):
            by_packet.setdefault(int(packet[w]), []).append((unit, row))
        for k, vectors in sorted(by_packet.items()):
            unit, row = vectors[0]
            self.report(
                "uniform-index-overflow",
                f"{unit} float-uniform upload reaches c{row} ({len(vectors)} vector(s) past c{NUM_C - 1} dropped)",
                offset=4 * int(starts[k]),
                buffer=address,
                packet=int(numbers[k]),
            )
