"""Process allocator tuning for draws: keep freed large blocks in the heap instead of returning them to the OS.

Every draw allocates, fills and frees the same large arrays (the vertex loader's and the shader's (N, 16, 4)
float32 batches, the rasterizer's fragment arrays: several MB each). With glibc's default policy such blocks are
``mmap``-ed and unmapped, or trimmed off the heap top, on every draw, so each draw touches fresh pages again: for
a 10 000-triangle draw ~3 300 minor page faults (kernel zeroing included), a quarter of the draw's time
(bench/results/raster.md). ``keep_freed_memory`` raises glibc's mmap threshold to ``MMAP_THRESHOLD`` and its
trim threshold to ``TRIM_THRESHOLD``, so blocks up to 32 MiB come from the heap and up to 64 MiB of freed heap top
stay mapped for the next draw (about 10 faults per draw). It changes no value anywhere, only where memory
comes from; the cost is that the process may keep up to ``TRIM_THRESHOLD`` of freed memory.

Applied at most once per process (``Pipeline.__init__`` calls it), only on glibc (elsewhere, or when the user set
any ``MALLOC_*`` environment variable, it does nothing and returns False).
"""

from __future__ import annotations

import ctypes
import os

M_TRIM_THRESHOLD = -1  # glibc mallopt parameter numbers (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's own ceiling for its dynamic threshold
TRIM_THRESHOLD = 64 * 1024 * 1024
_applied: bool | None = None


def keep_freed_memory() -> bool:
    """Tune glibc's malloc once per process (see the module docstring); True when the tuning is in effect."""
    global _applied
    if _applied is None:
        _applied = _tune()
    return _applied


def _tune() -> bool:
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError, AttributeError):  # not a glibc system
        return False
    if not libc.startswith("glibc"):
        return False
    if any(name.startswith("MALLOC_") for name in os.environ):
        return False  # the user chose the allocator policy
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the running process's symbols, glibc's among them
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
