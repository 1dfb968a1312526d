"""No false error: ``picaemu lint`` finds no error on any bundled sample, capture under tests/data/ or the game
capture (errors mean the console would hang, fault or draw garbage; these all run on hardware or Citra)."""

from __future__ import annotations

from pathlib import Path

import pytest

from picaemu.lint import Severity, lint
from picaemu.replay.capture import is_capture, load_capture

REPO = Path(__file__).resolve().parent.parent
CAPTURES = sorted(
    {
        *REPO.glob("samples/captures/*.pica"),
        *(p for p in (REPO / "tests/data").rglob("*") if p.is_file() and p.suffix != ".json" and is_capture(p)),
        *(p for p in (REPO / "tests/data/captures").iterdir() if p.is_dir() and is_capture(p)),
    }
)


def test_the_set_is_complete() -> None:
    names = {p.name for p in CAPTURES}
    assert {"minicraft.pica", "game_rich_1000.pica", "scene1_triangle", "scene2_textured_quad.ctf"} <= names


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_error(path: Path) -> None:
    findings = lint(load_capture(path))
    assert [f.as_dict() for f in findings if f.severity is Severity.ERROR] == []
