"""The short, seeded fuzz run of the test suite (the long campaign is ``bench/fuzz.py``; docs/fuzzing.md).

Every input must end in "ok" or a named PicaError: any other exception fails the test, naming the kind and seed
(``python bench/fuzz.py --replay KIND SEED`` runs it again). Hypothesis runs are derandomized (same inputs every
run); the mutation-engine runs use fixed seed ranges."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings

from tests.fuzz import targets
from tests.fuzz.runner import packet_target, quiet, run_one
from tests.fuzz.strategies import command_buffer, seeds, texture_params

SEEDED = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


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


@pytest.mark.parametrize(
    "kind, count", [("packets", 400), ("capture", 60), ("shbin", 150), ("texture", 150), ("draw", 25), ("info", 60)]
)
def test_mutation_engine_fixed_seeds(kind: str, count: int) -> None:
    """A fixed slice of the campaign's inputs (seeds 0..count-1 of each kind)."""
    outcomes: dict[str, int] = {}
    for seed in range(count):  # hangs are the suite timeout's to catch; timing lives in bench/fuzz.py
        try:
            outcome, _ = run_one(kind, seed)
        except Exception as err:
            raise AssertionError(f"crash on {kind} seed {seed}: {type(err).__name__}: {err}") from err
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert sum(outcomes.values()) == count
    if kind in ("capture", "draw", "packets", "info"):  # the mutations reach past the parsers: some inputs run through
        assert outcomes.get("ok", 0) > 0, outcomes


@pytest.mark.parametrize("option", ["draws=2", "capture", "capture=x", "capture=\u00b2"])
def test_the_campaign_refuses_an_unknown_kind(option: str) -> None:
    """``bench/fuzz.py --count`` with a kind ``mutate`` does not make (or no count) is a usage error, not 2 crashes."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "bench" / "fuzz.py"
    proc = subprocess.run([sys.executable, script, "--count", option], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "expected KIND=N with KIND one of packets, capture" in proc.stderr
