"""Where numba keeps picaemu's compiled kernels on disk, so that a stale one is never run and every checkout of
the same sources shares one compile; and the note a long compile prints on stderr.

numba's on-disk cache keys a compiled function on its own source file only: when a kernel that another one calls
is edited (a ``git pull`` into an editable install, a developer's change), the caller's cached machine code still
holds the old callee and is reused, silently. So picaemu keeps its kernels in a folder named by a digest taken
over the content of every picaemu source file that compiles kernels, or holds constants that compiled code
freezes (marked ``# picaemu: kernel constants``: the register table's blocks, the write groups, the command
codes, the plan layout) (``kernel_dir()``): any change to one of them starts an empty folder (one compile).
numba's own locator also files a cache under the absolute path of the source folder, so each clone or checkout
compiled everything again; ``picaemu.numba_cache.SourceTreeLocator`` files picaemu's kernels under their path
*inside the package* and stamps them by content, so every checkout of the same version finds the same machine
code.

- ``kernel_dir()`` is ``<cache home>/picaemu/numba/<digest>`` (``$XDG_CACHE_HOME`` or ``~/.cache``), or, when the
  user chose a folder with ``NUMBA_CACHE_DIR``, ``$NUMBA_CACHE_DIR/picaemu-<digest>``. Folders of other digests
  under the default base are removed after ``STALE_DAYS`` unused.
- ``configure()`` runs when ``picaemu`` is imported, before any kernel module, without importing numba: it sets
  ``NUMBA_CACHE_DIR`` (when unset; a value a picaemu parent process set, ``PICAEMU_KERNEL_DIR``, counts as unset)
  and ``NUMBA_CACHE_LOCATOR_CLASSES`` (picaemu's locator first, numba's own after
  it, for code outside the package); if numba was imported first it updates numba's config as well. It never
  raises: an unusable cache home leaves numba's defaults (``__pycache__`` beside the sources).
- ``picaemu.numba_cache.SlowCompileNote`` prints one line on stderr when a compile has run ``SLOW_COMPILE_S``
  seconds (which kernel, where the cache is) and one when it ends (how long it took), so no run compiles silently.
- ``keep_bytecode()`` runs first in the ``picaemu`` command: where the environment forbids writing bytecode beside
  the sources (``PYTHONDONTWRITEBYTECODE``), each process compiled every module it imports again (numpy, numba,
  click, picaemu: ~1.3 s of a 2.3 s warm render); the command keeps that bytecode under
  ``<cache home>/picaemu/pycache`` (``sys.pycache_prefix``) instead, for itself and the processes it starts, so
  later runs read it. ``PICAEMU_PYCACHE=0`` leaves Python's settings as they are. A module whose bytecode is not
  there yet is first looked for beside its source (``_BesideSourceLoader``): the standard library ships its
  bytecode, and an install may have compiled a package's, so the first run compiles only what has none (it compiled
  the ~90 standard-library modules it imports again under the prefix).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import os
import shutil
import sys
import time
from pathlib import Path

STALE_DAYS = 14  # a cache of another source digest unused this long is removed
# a file whose code kernels run, or whose constants they hold
# what makes a file part of the digest: numba, picaemu's kernel decorators (``numba_link.kernel`` /
# ``compiled_only``), or constants that compiled code freezes
MARKERS = (b"import numba", b"from numba", b"from picaemu import numba_link", b"# picaemu: kernel constants")
PACKAGE = Path(__file__).resolve().parent
LOCATOR = "picaemu.numba_cache.SourceTreeLocator"
# numba's own locators, tried after picaemu's (names numba resolves in ``numba.core.caching``)
NUMBA_LOCATORS = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator", "IPythonCacheLocator")
SLOW_COMPILE_S = 2.0
# the kernel folder a picaemu process chose, for the processes it starts (``configure``: the NUMBA_CACHE_DIR they
# inherit is then picaemu's own choice, not the user's)
KERNEL_DIR_VARIABLE = "PICAEMU_KERNEL_DIR"
PYCACHE_VARIABLE = "PICAEMU_PYCACHE"  # "0": ``keep_bytecode`` leaves Python's bytecode settings alone
_kernel_dir: Path | None = None


def source_digest(root: Path) -> str:
    """16 hex digits over the path and content of every ``.py`` file under ``root`` that imports numba."""
    digest = hashlib.blake2b(digest_size=8)
    for path in sorted(root.rglob("*.py")):
        data = path.read_bytes()
        if any(marker in data for marker in MARKERS):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + data + b"\0")
    return digest.hexdigest()


def cache_home() -> Path:
    """``$XDG_CACHE_HOME``, or ``~/.cache``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def _bytecode_folder() -> Path:
    """Where ``keep_bytecode`` keeps bytecode: ``<cache home>/picaemu/pycache``."""
    return cache_home() / "picaemu" / "pycache"


def keep_bytecode() -> None:
    """Keep the bytecode of the modules this process imports under ``<cache home>/picaemu/pycache`` when the
    environment forbids writing it beside the sources, here and in the processes it starts (module docstring).
    Never raises: an unusable cache home leaves Python's settings."""
    if not sys.dont_write_bytecode or sys.pycache_prefix or os.environ.get(PYCACHE_VARIABLE) == "0":
        return
    folder = _bytecode_folder()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    if os.access(folder, os.W_OK):
        sys.pycache_prefix, sys.dont_write_bytecode = str(folder), False
        os.environ["PYTHONPYCACHEPREFIX"] = str(folder)
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        _read_bytecode_beside_sources()


class _BesideSourceLoader(importlib.machinery.SourceFileLoader):
    """Python's loader of a module's source, which reads its bytecode under ``sys.pycache_prefix`` or, where there
    is none yet, in the ``__pycache__`` folder beside the source (module docstring). Python checks what it reads
    against the source as always, and writes a fresh compile under the prefix."""

    def get_data(self, path: str) -> bytes:
        try:
            return super().get_data(path)
        except OSError:
            if path == self.path:  # the source itself
                raise
            return super().get_data(os.path.join(os.path.dirname(self.path), "__pycache__", os.path.basename(path)))


def _read_bytecode_beside_sources() -> None:
    """Import modules from source folders with ``_BesideSourceLoader`` from now on."""
    machinery = importlib.machinery
    loaders = [
        (machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES),
        (_BesideSourceLoader, machinery.SOURCE_SUFFIXES),
        (machinery.SourcelessFileLoader, machinery.BYTECODE_SUFFIXES),
    ]
    for k, hook in enumerate(sys.path_hooks):
        if getattr(hook, "__qualname__", "").startswith("FileFinder.path_hook"):
            sys.path_hooks[k] = machinery.FileFinder.path_hook(*loaders)
            sys.path_importer_cache.clear()  # the source folders' finders, made again with the new hook


def kernel_dir() -> Path | None:
    """The folder of picaemu's compiled kernels (module docstring); None before ``configure()`` or when no
    usable folder could be made."""
    return _kernel_dir


def _remove_stale(base: Path, keep: Path) -> None:
    cutoff = time.time() - STALE_DAYS * 86400
    for old in base.iterdir():
        if old != keep and old.is_dir() and old.stat().st_mtime < cutoff:
            shutil.rmtree(old, ignore_errors=True)


def configure() -> None:
    """Point numba's cache for picaemu's kernels at ``kernel_dir()`` (module docstring); in a process the
    ``picaemu`` command started with its bytecode folder (``keep_bytecode``), read bytecode beside the sources too."""
    global _kernel_dir
    if sys.pycache_prefix == str(_bytecode_folder()):
        _read_bytecode_beside_sources()
    with contextlib.suppress(OSError, RuntimeError):
        digest = source_digest(PACKAGE)
        chosen = os.environ.get("NUMBA_CACHE_DIR")
        if chosen and chosen == os.environ.get(KERNEL_DIR_VARIABLE):
            chosen = None  # set by a picaemu process this one descends from, not by the user
        if chosen:
            here = Path(chosen) / f"picaemu-{digest}"
        else:
            base = cache_home() / "picaemu" / "numba"
            here = base / digest
        here.mkdir(parents=True, exist_ok=True)
        os.utime(here)  # most recently used
        if not chosen:
            _remove_stale(here.parent, here)
            os.environ["NUMBA_CACHE_DIR"] = str(here)
        _kernel_dir = here
        os.environ[KERNEL_DIR_VARIABLE] = str(here)
        locators = ",".join((LOCATOR, *NUMBA_LOCATORS))
        os.environ.setdefault("NUMBA_CACHE_LOCATOR_CLASSES", locators)
        config = getattr(sys.modules.get("numba"), "config", None)
        if config is not None:  # numba imported first: its config has read the environment already
            config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]
            config.CACHE_LOCATOR_CLASSES = os.environ["NUMBA_CACHE_LOCATOR_CLASSES"]
