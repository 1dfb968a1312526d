"""The numba side of picaemu's kernel cache (``picaemu.kernel_cache`` chooses the folder without importing numba):
the locator that files picaemu's kernels by their path inside the package, and the note a long compile prints.

``SourceTreeLocator`` (named in ``NUMBA_CACHE_LOCATOR_CLASSES`` by ``kernel_cache.configure``): a kernel defined in
a file of the ``picaemu`` package is cached in ``kernel_cache.kernel_dir()/<the file's folder inside the
package>`` and stamped by the file's content (numba's own locators use the absolute folder of the file, so every
clone compiled afresh). Files outside the package, or a run where no kernel folder could be made, fall through to
numba's own locators.

Loading a kernel from the cache (``FunctionCache.load_overload``, replaced here for picaemu's kernels only): numba
refreshes its whole target context first, importing and installing every lowering registry (~0.1 s of a warm
render's ~1 s), although running machine code needs only the runtime's symbols (``rtsys.initialize``) and the hash
secret's (added when ``numba.cpython.hashing`` is imported). A compile still refreshes the context itself (numba's
``CompilerBase``), so a kernel compiled later in the same process sees every registry. Any load of a kernel
whose machine code was not generated yet (``picaemu.numba_lazy``: a callee's) tells it whom to save it again with.

Saving a kernel (``CompileResultCacheImpl.reduce``, for picaemu's kernels): numba writes the type annotation, the
kernel's source annotated line by line with its variables' types, as text; building it took ~0.3 s of README
line 1's first render, for ``inspect_types`` of a kernel later loaded from the cache. Here a note stands in its
place (``ANNOTATION_NOTE``); the compile's own result keeps its annotation.

Compiling one kernel in two processes at once (``picaemu.fused.prewarm``'s second compiler beside a first run,
two commands started together): a compile of a picaemu kernel holds an exclusive lock on
``<its cache folder>/<module>.<function>.lock`` (``kernel_lock``, ``fcntl.flock``: the system releases it when a
process ends, however it ends), so the second process waits and then loads the first one's machine code from the
cache instead of compiling it again; a wait longer than ``LOCK_WAIT_S`` compiles anyway. The wait is a compile to
the waiting process's listeners (``SlowCompileNote`` says so when it lasts): no run waits silently.

``SlowCompileNote``: while installed, a compile still running after ``kernel_cache.SLOW_COMPILE_S`` seconds says
so in one line (the kernel, the cache folder), and its end in another (seconds taken). numba's "numba:compile"
event fires only for a compile, never for a load from the cache; nested compiles (callees) belong to their
outermost one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numba.cpython.hashing  # noqa: F401  (the hash secret's symbols, which loaded machine code may name)
from numba.core import caching, dispatcher, event, sigutils
from numba.core.compiler_lock import global_compiler_lock
from numba.core.runtime import rtsys

from picaemu import kernel_cache, numba_lazy

try:
    import fcntl

    _FLOCK: Any = fcntl.flock
except ImportError:  # not a POSIX system: kernels compile without the cross-process lock
    _FLOCK = None


class SourceTreeLocator(caching._CacheLocator):
    """numba cache locator for kernels in picaemu's own source files (module docstring)."""

    def __init__(self, py_func: Any, py_file: str, folder: Path) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = str(folder)

    def get_cache_path(self) -> str:
        return self._cache_path

    def get_source_stamp(self) -> str:
        """The content of the source file (not its time stamp: a fresh clone has new ones)."""
        st = os.stat(self._py_file)
        return _content_hash(self._py_file, st.st_mtime_ns, st.st_size)

    def get_disambiguator(self) -> str:
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> SourceTreeLocator | None:
        home = kernel_cache.kernel_dir()
        if home is None:
            return None
        key = (str(home), py_file)
        if key not in _folders:  # once a file: resolving and the writable check cost ~0.3 ms (191 kernels at import)
            _folders[key] = _folder(cls, home, py_func, py_file)
        folder = _folders[key]
        return None if folder is None else cls(py_func, py_file, folder)


numba_lazy.OWN_LOCATORS = (SourceTreeLocator,)  # its entries may be pending (``picaemu.numba_lazy``)
_folders: dict[tuple[str, str], Path | None] = {}  # (kernel folder, source file) -> its cache folder, or None


def _folder(cls: type[SourceTreeLocator], home: Path, py_func: Any, py_file: str) -> Path | None:
    """The cache folder of the kernels of ``py_file`` (made and checked writable), or None: not picaemu's, or
    not usable."""
    try:
        inside = Path(py_file).resolve().relative_to(kernel_cache.PACKAGE)
    except (ValueError, OSError):
        return None
    folder = home.joinpath(*inside.parent.parts)
    try:
        cls(py_func, py_file, folder).ensure_cache_path()
    except OSError:
        return None
    return folder


_hashes: dict[tuple[str, int, int], str] = {}


def _content_hash(path: str, mtime_ns: int, size: int) -> str:
    key = (path, mtime_ns, size)
    if key not in _hashes:
        with open(path, "rb") as fh:
            _hashes[key] = hashlib.sha256(fh.read()).hexdigest()
    return _hashes[key]


_NUMBA_LOAD = caching.FunctionCache.load_overload


def _load_overload(self: caching.FunctionCache, sig: Any, target_context: Any) -> Any:
    """numba's ``load_overload`` without refreshing the target context, for picaemu's kernels (module docstring)."""
    if not isinstance(self._impl.locator, SourceTreeLocator):
        result = _NUMBA_LOAD(self, sig, target_context)
    else:
        rtsys.initialize(target_context)  # once per process: the NRT's symbols
        with self._guard_against_spurious_io_errors():
            result = self._load_overload(sig, target_context)
    if result is not None:  # a callee's, saved before its machine code: to be saved again with it
        numba_lazy.remember_cache(self, sig, result)
    return result


caching.FunctionCache.load_overload = _load_overload

# what a kernel loaded from picaemu's cache answers to numba's ``inspect_types``
ANNOTATION_NOTE = "(picaemu's kernel cache keeps no type annotation: inspect_types a kernel compiled in this process)"
_NUMBA_REDUCE = caching.CompileResultCacheImpl.reduce


def _reduce(self: Any, cres: Any) -> Any:
    """numba's ``CompileResultCacheImpl.reduce`` (what the cache saves of a compile), for a picaemu kernel with a
    note in place of the type annotation (module docstring)."""
    if isinstance(self.locator, SourceTreeLocator):
        cres = cres._replace(type_annotation=ANNOTATION_NOTE)
    return _NUMBA_REDUCE(self, cres)


caching.CompileResultCacheImpl.reduce = _reduce

LOCK_WAIT_S = 120.0  # seconds a compile waits for another process compiling the same kernel
_HELD: dict[str, int] = {}  # lock file -> depth, the locks this process holds (a kernel's callees nest)


@contextlib.contextmanager
def kernel_lock(path: Path, dispatcher: Any = None) -> Iterator[None]:
    """Hold the exclusive lock ``path`` (module docstring): wait for another process holding it, at most
    ``LOCK_WAIT_S`` seconds; nested in this process, the outer hold stands. Unlockable (no such folder, a file
    system without locks): no lock. A wait for ``dispatcher``'s compile in another process is a compile to this
    one's listeners (numba's "numba:compile" event): ``SlowCompileNote`` says so when it lasts."""
    key = str(path)
    if _FLOCK is None:
        yield
        return
    if key in _HELD:
        _HELD[key] += 1
        try:
            yield
        finally:
            _HELD[key] -= 1
        return
    try:
        fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        _acquire(fd, dispatcher)
        _HELD[key] = 1
        try:
            yield
        finally:
            del _HELD[key]
    finally:
        os.close(fd)  # releases the lock


def _acquire(fd: int, dispatcher: Any) -> None:
    if _try_lock(fd) is not False:
        return
    with contextlib.ExitStack() as waiting:
        if dispatcher is not None:  # another process compiles it: a compile all the same
            waiting.enter_context(event.trigger_event("numba:compile", data={"dispatcher": dispatcher}))
        deadline = time.monotonic() + LOCK_WAIT_S
        while _try_lock(fd) is False and time.monotonic() < deadline:
            time.sleep(0.02)
    # past the deadline: compile anyway, one compile twice beats waiting on a stuck process


def _try_lock(fd: int) -> bool | None:
    """True: locked; False: another process holds it; None: this file cannot be locked."""
    try:
        _FLOCK(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    except OSError:
        return None


_DISPATCHER: Any = dispatcher.Dispatcher  # (numba's stubs do not declare ``compile``'s replacement)
_NUMBA_COMPILE = _DISPATCHER.compile


def _compile(self: Any, sig: Any) -> Any:
    """numba's ``Dispatcher.compile``; a picaemu kernel not compiled in this process yet under its lock (module
    docstring), inside numba's own compiler lock so that this process's threads take it one at a time."""
    locator = getattr(getattr(self._cache, "_impl", None), "locator", None)
    if not isinstance(locator, SourceTreeLocator):
        return _NUMBA_COMPILE(self, sig)
    args, _ = sigutils.normalize_signature(sig)
    if tuple(args) in self.overloads:
        return _NUMBA_COMPILE(self, sig)
    name = f"{self.py_func.__module__.rsplit('.', 1)[-1]}.{self.py_func.__qualname__}.lock"
    with global_compiler_lock, kernel_lock(Path(locator.get_cache_path()) / name, self):
        return _NUMBA_COMPILE(self, sig)


_DISPATCHER.compile = _compile


class SlowCompileNote(event.Listener):
    """A compile that runs ``after_s`` seconds says so through ``emit`` (module docstring). A context manager;
    ``slow_compiles`` lists (kernel, seconds) of each compile it announced."""

    EVENT = "numba:compile"

    def __init__(self, emit: Callable[[str], None], after_s: float | None = None) -> None:
        self.emit = emit
        self.after_s = kernel_cache.SLOW_COMPILE_S if after_s is None else after_s
        self.slow_compiles: list[tuple[str, float]] = []
        self._depth = 0
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._name = ""
        self._started = 0.0
        self._said = False

    def __enter__(self) -> SlowCompileNote:
        event.register(self.EVENT, self)
        return self

    def __exit__(self, *exc: object) -> None:
        event.unregister(self.EVENT, self)
        self._stop_timer()

    def on_start(self, ev: event.Event) -> None:
        self._depth += 1
        if self._depth == 1:
            with self._lock:
                self._name, self._started, self._said = _kernel_name(ev.data), time.perf_counter(), False
                self._timer = threading.Timer(self.after_s, self._announce)
                self._timer.daemon = True
                self._timer.start()

    def on_end(self, ev: event.Event) -> None:
        self._depth -= 1
        if self._depth:
            return
        self._stop_timer()
        if self._said:
            seconds = time.perf_counter() - self._started
            self.slow_compiles.append((self._name, seconds))
            self.emit(f"picaemu: compiled {self._name} in {seconds:.1f} s (kept for the next runs)")

    def _announce(self) -> None:
        with self._lock:
            if self._timer is None:  # the compile ended meanwhile
                return
            self._said = True
            where = kernel_cache.kernel_dir() or os.environ.get("NUMBA_CACHE_DIR") or "numba's default folder"
            self.emit(
                f"picaemu: compiling {self._name}: not in the kernel cache yet (a first run, or a new kind of "
                f"draw); kept in {where} ..."
            )

    def _stop_timer(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None


def _kernel_name(data: Any) -> str:
    dispatcher = data.get("dispatcher") if isinstance(data, dict) else None
    func = getattr(dispatcher, "py_func", None)
    return f"{func.__module__}.{func.__qualname__}" if func is not None else "a kernel"
