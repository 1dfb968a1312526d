"""The short, seeded fuzz run of the test suite (the long campaign is ``bench/fuzz.py``; docs/fuzzing.md).

Every input must end in "ok" or a named PicaError: any other exception fails the test, naming the kind and seed
(``python bench/fuzz.py --replay KIND SEED`` runs it again). Hypothesis runs are derandomized (same inputs every
run); the mutation-engine runs use fixed seed ranges."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings

from tests.fuzz import targets
from tests.fuzz.runner import packet_target, quiet, run_one
from tests.fuzz.strategies import command_buffer, seeds, texture_params

SEEDED = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SLOW_INPUT_S = 20.0  # the campaign's hang threshold; generous for a loaded CI machine


@pytest.fixture(autouse=True, scope="module")
def _quiet() -> Iterator[None]:
    logger = logging.getLogger("picaemu")
    level = logger.level
    quiet()
    yield
    logger.setLevel(level)


@SEEDED
@given(command_buffer())
def test_packets_hypothesis(words) -> None:
    outcome, _ = packet_target().run(words)
    assert outcome == "ok" or outcome.endswith(("Error", "Fault", "Packet", "Buffer", "Cycle", "Exceeded"))


@SEEDED
@given(texture_params())
def test_texture_params_hypothesis(params) -> None:
    targets.run_texture(params)


@settings(SEEDED, max_examples=25)
@given(seeds())
def test_mutated_shbin_hypothesis(seed: int) -> None:
    run_one("shbin", seed)


@pytest.mark.parametrize("kind, count", [("packets", 400), ("capture", 60), ("shbin", 150), ("texture", 150),
                                         ("draw", 25)])
def test_mutation_engine_fixed_seeds(kind: str, count: int) -> None:
    """A fixed slice of the campaign's inputs (seeds 0..count-1 of each kind)."""
    outcomes: dict[str, int] = {}
    for seed in range(count):
        start = time.perf_counter()
        try:
            outcome, _ = run_one(kind, seed)
        except Exception as err:
            raise AssertionError(f"crash on {kind} seed {seed}: {type(err).__name__}: {err}") from err
        assert time.perf_counter() - start < SLOW_INPUT_S, f"{kind} seed {seed} ran over {SLOW_INPUT_S} s"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert sum(outcomes.values()) == count
    if kind in ("capture", "draw", "packets"):  # the mutations reach past the parsers: some inputs run through
        assert outcomes.get("ok", 0) > 0, outcomes
