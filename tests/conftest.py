"""Shared test fixtures and settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parent.parent
# the real citro3d captures (c3dcap scenes, CiTrace files, SHBINs) the tests need, with their README: a copy of the
# project's shared reference captures, kept in the repository so that a fresh clone tests everything
CAPTURES = REPO / "tests" / "data" / "captures"


@pytest.fixture(scope="session")
def captures_dir() -> Path:
    assert CAPTURES.is_dir(), f"{CAPTURES} is missing: the repository is incomplete"
    return CAPTURES
