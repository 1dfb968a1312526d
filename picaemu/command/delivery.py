"""Delivery of what the compiled command loop recorded (``picaemu.command.kernel``'s packet and write records) to
the attached ``picaemu.observer.Observer`` objects, in stream order."""

from __future__ import annotations

import numpy as np

from picaemu.command.packets import unpack_header
from picaemu.observer import Observer, PacketEvent, WriteEvent


def deliver(
    observers: list[Observer], words: np.ndarray, address: int, packets: np.ndarray, writes: np.ndarray
) -> None:
    """Hand the packets and writes the compiled loop recorded in a buffer (``words`` at ``address``) to
    ``observers`` in stream order, each packet before its writes: ``packets`` (P, 2) int64 word positions of the
    packets' parameter words; ``writes`` (W, 4) int64 (position, register id, value, lanes)."""
    pk = 0
    for pos, reg_id, value, lanes in writes.tolist():
        while pk < len(packets) and packets[pk, 0] <= pos:
            _emit_packet(observers, words, address, int(packets[pk, 0]))
            pk += 1
        event = WriteEvent(address, 4 * pos, reg_id, value & 0xFFFFFFFF, lanes)
        for obs in observers:
            obs.on_write(event)
    while pk < len(packets):
        _emit_packet(observers, words, address, int(packets[pk, 0]))
        pk += 1


def _emit_packet(observers: list[Observer], words: np.ndarray, address: int, pos: int) -> None:
    reg_id, mask, extra, consecutive = unpack_header(int(words[pos + 1]))
    params = (int(words[pos]), *words[pos + 2 : pos + 2 + extra].tolist())
    event = PacketEvent(address, 4 * pos, reg_id, mask, consecutive, params)
    for obs in observers:
        obs.on_packet(event)
