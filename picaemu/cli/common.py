"""Helpers every subcommand shares: error reporting (one line, exit status 2, no traceback), number parsing and
the first-run note (numba compiling into an empty cache).

Every CLI error is exactly one line ``error: ...`` on stderr (``fail``; multi-line messages such as construct's
are joined; an ``OSError`` names its file). Warnings raised while a command runs (picaemu's logging, Python's
``warnings``) are held back by ``deferred_warnings`` and printed as ``warning: ...`` lines after a command that
succeeds; after an error only the error line is printed.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click

from picaemu.errors import FormatError, PicaError
from picaemu.memory import PhysicalMemory

F = TypeVar("F", bound=Callable[..., Any])

EXIT_BAD_INPUT = 2
FIRST_RUN_NOTE = ("picaemu: first run since the install: compiling the emulator's kernels into numba's cache "
                  "(about 15 s on a 2-core machine, once)")


def one_line(text: str) -> str:
    """``text`` with every line break (and the blanks around it) turned into one space."""
    return re.sub(r"\s*\n\s*", " ", text.strip())


def error_text(err: BaseException) -> str:
    """What the user reads about ``err``: picaemu's own message, or ``FILE: reason`` for an OSError."""
    if isinstance(err, OSError) and not isinstance(err, PicaError):
        reason = err.strerror or str(err)
        return f"{err.filename}: {reason}" if err.filename else reason
    return str(err)


def error_line(message: str) -> None:
    """Print ``error: message`` (one line) on stderr."""
    click.echo(f"error: {one_line(message)}", err=True)


def fail(message: str) -> None:
    """Print ``error: message`` on stderr and exit with status 2."""
    error_line(message)
    sys.exit(EXIT_BAD_INPUT)


def reports_errors(func: F) -> F:
    """Turn picaemu's own errors (and unreadable files) into a one-line message and exit status 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (PicaError, OSError) as err:
            fail(error_text(err))

    return wrapper  # type: ignore[return-value]


class _Collect(logging.Handler):
    def __init__(self, notes: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.notes = notes

    def emit(self, record: logging.LogRecord) -> None:
        self.notes.append(record.getMessage())


@contextlib.contextmanager
def deferred_warnings() -> Iterator[list[str]]:
    """Collect the warnings of a command (picaemu's logging and Python's ``warnings``) instead of printing them
    as they happen; the list is complete when the block ends."""
    notes: list[str] = []
    logger = logging.getLogger("picaemu")
    handler, propagate = _Collect(notes), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        with warnings.catch_warnings(record=True) as caught:  # the filters in force decide what is recorded
            try:
                yield notes
            finally:
                notes.extend(str(w.message) for w in caught)
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def note_first_compile() -> None:
    """Say on stderr, when it is a terminal, that this run compiles numba's kernels (their on-disk cache is empty:
    a fresh install), so that the first run's seconds are not silent. The rasterizer kernel's cache index stands
    for all; nothing is said when numba's cache layout is not the one known here."""
    from picaemu import rasterizer

    try:
        index = rasterizer._scan._cache._cache_file._index_path
    except AttributeError:
        return
    if sys.stderr.isatty() and not os.path.exists(index):
        click.echo(FIRST_RUN_NOTE, err=True)


class IntParam(click.ParamType):
    """An integer in decimal or 0x hex (addresses, register ids)."""

    name = "int"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return int(str(value), 0)
        except ValueError:
            self.fail(f"{value!r} is not a number (decimal or 0x hex)", param, ctx)


INT = IntParam()


def load_memory_blocks(memory: PhysicalMemory, specs: tuple[str, ...]) -> None:
    """Load ``ADDR=FILE`` blocks into emulated memory (errors name the block)."""
    for spec in specs:
        addr_text, sep, path = spec.partition("=")
        if not sep:
            raise FormatError(f"--mem wants ADDR=FILE, got {spec!r}")
        try:
            address = int(addr_text, 0)
        except ValueError:
            raise FormatError(f"--mem address {addr_text!r} is not a number") from None
        file = Path(path)
        if not file.is_file():
            raise FormatError(f"--mem {spec}: {'a directory' if file.is_dir() else 'no such file'}", path=path)
        size = file.stat().st_size
        if not memory.contains(address, max(size, 1)):
            raise FormatError(f"--mem {spec}: {size} bytes at 0x{address:08X} do not fit emulated memory",
                              path=path)
        memory.write(address, file.read_bytes(), who=f"--mem {spec}")
