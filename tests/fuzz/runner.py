"""Run one fuzz input of a kind (``run_one``): the glue between ``mutate.make_input`` and ``targets``."""

from __future__ import annotations

import functools
import logging
import warnings

from tests.fuzz import targets
from tests.fuzz.mutate import make_input


@functools.cache
def packet_target() -> targets.PacketTarget:
    return targets.PacketTarget()


def quiet() -> None:
    """No per-input warnings (dropped port words, numpy casts of hostile floats): fuzzing counts outcomes."""
    logging.getLogger("picaemu").setLevel(logging.ERROR)
    warnings.simplefilter("ignore", RuntimeWarning)


def run_one(kind: str, seed: int) -> tuple[str, int]:
    """(outcome, packets) of input ``seed`` of ``kind``; packets counts packets in a ``packets`` input."""
    value = make_input(kind, seed)
    if kind == "packets":
        return packet_target().run(value)  # type: ignore[arg-type]
    if kind == "capture":
        return targets.run_capture(value), 0  # type: ignore[arg-type]
    if kind == "info":
        return targets.run_info(value), 0  # type: ignore[arg-type]
    if kind == "shbin":
        return targets.run_shbin(value), 0  # type: ignore[arg-type]
    if kind == "texture":
        return targets.run_texture(value), 0  # type: ignore[arg-type]
    capture, edits, uniforms = value  # type: ignore[misc]
    return targets.run_hostile_draws(capture, edits, uniforms), 0
