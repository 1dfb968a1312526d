"""picaemu: an emulator and debugger of the Nintendo 3DS PICA200 GPU."""

from __future__ import annotations

from typing import Any

from picaemu import kernel_cache

kernel_cache.configure()  # before any kernel module: numba's cache must not hand out stale machine code


def __getattr__(name: str) -> Any:  # ``picaemu.open`` without importing the emulator on ``import picaemu``
    if name == "open":
        from picaemu.replay import open

        return open
    raise AttributeError(f"module 'picaemu' has no attribute {name!r}")
