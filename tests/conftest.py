"""Shared test fixtures and settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CAPTURES = SHARED / "captures"


@pytest.fixture(scope="session")
def captures_dir() -> Path:
    if not CAPTURES.is_dir():
        pytest.skip("shared/captures is not next to the repository")
    return CAPTURES
