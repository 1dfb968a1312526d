"""Where numba keeps picaemu's compiled kernels on disk, so that a stale one is never run.

numba's on-disk cache keys a compiled function on its own source file only: when a kernel that another one calls
is edited (a ``git pull`` into an editable install, a developer's change), the caller's cached machine code still
holds the old callee and is reused, silently. So, unless the user chose a place (``NUMBA_CACHE_DIR``), picaemu
points numba at ``<cache home>/picaemu/numba/<digest>``, the digest taken over the content of every picaemu
source file that compiles kernels: any change to one of them starts an empty cache (one compile, ~15 s). The
caches of other digests (other checkouts, other versions) are removed after ``STALE_DAYS`` unused.

``configure()`` runs when ``picaemu`` is imported, before any kernel module; it never raises (an unusable cache
home leaves numba's default, ``__pycache__`` beside the sources).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sys
import time
from pathlib import Path

STALE_DAYS = 14  # a cache of another source digest unused this long is removed
MARKER = b"numba"  # a source file that mentions numba compiles (or calls) kernels


def source_digest(root: Path) -> str:
    """16 hex digits over the path and content of every ``.py`` file under ``root`` that mentions numba."""
    digest = hashlib.blake2b(digest_size=8)
    for path in sorted(root.rglob("*.py")):
        data = path.read_bytes()
        if MARKER in data:
            digest.update(str(path.relative_to(root)).encode() + b"\0" + data + b"\0")
    return digest.hexdigest()


def cache_home() -> Path:
    """``$XDG_CACHE_HOME``, or ``~/.cache``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def configure() -> None:
    """Point numba's cache at the directory of this source digest (module docstring)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    with contextlib.suppress(OSError, RuntimeError):
        base = cache_home() / "picaemu" / "numba"
        here = base / source_digest(Path(__file__).resolve().parent)
        here.mkdir(parents=True, exist_ok=True)
        os.utime(here)  # most recently used
        cutoff = time.time() - STALE_DAYS * 86400
        for old in base.iterdir():
            if old != here and old.is_dir() and old.stat().st_mtime < cutoff:
                shutil.rmtree(old, ignore_errors=True)
        os.environ["NUMBA_CACHE_DIR"] = str(here)
        config = getattr(sys.modules.get("numba"), "config", None)
        if config is not None:  # numba imported first: its config has read the environment already
            config.CACHE_DIR = str(here)
