"""Allocator tuning: once per process, and freed large blocks are reused instead of faulted in again."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from picaemu import allocator

GLIBC = (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc") if hasattr(os, "confstr") else False

# a draw-like pattern: several multi-MB arrays allocated, touched and freed, again and again
SCRIPT = """
import resource, numpy as np
from picaemu import allocator

def faults():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(8):
        arrays = [np.ones(n, np.uint8) for n in (3 << 20, 7 << 20, 9 << 20, 5 << 20)]
        del arrays
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

faults()
default = faults()
tuned = allocator.keep_freed_memory()
faults()
print(default, faults(), tuned)
"""


def test_applied_once_and_stable():
    first = allocator.keep_freed_memory()
    assert isinstance(first, bool) and allocator.keep_freed_memory() is first


@pytest.mark.skipif(not GLIBC, reason="the tuning only exists for glibc's malloc")
def test_freed_blocks_are_reused():
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True, timeout=60
    )
    default, tuned, applied = out.stdout.split()
    assert applied == "True"
    pages = 8 * (24 << 20) // 4096  # every array faulted in on every round
    assert int(tuned) < pages // 50  # (here: ~0; glibc's default policy faulted ~10 000 pages in)
    assert int(tuned) * 10 < int(default)


def test_user_malloc_settings_win():
    env = dict(os.environ, MALLOC_ARENA_MAX="2")
    code = "from picaemu import allocator; print(allocator.keep_freed_memory())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "False"
