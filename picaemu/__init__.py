"""picaemu: an emulator and debugger of the Nintendo 3DS PICA200 GPU."""

from __future__ import annotations

from typing import Any

from picaemu import kernel_cache

kernel_cache.configure()  # before any kernel module: numba's cache must not hand out stale machine code


def __getattr__(name: str) -> Any:  # ``picaemu.open`` without importing the emulator on ``import picaemu``
    if name in LAZY:
        from picaemu.debug.replay import open  # a replay with the debugger's answers as methods

        return open
    raise AttributeError(f"module 'picaemu' has no attribute {name!r}")


LAZY = ("open",)  # attributes ``__getattr__`` provides on first use


def __dir__() -> list[str]:  # ``dir(picaemu)`` lists the lazy attributes too (tab completion, help())
    return sorted({*globals(), *LAZY})
