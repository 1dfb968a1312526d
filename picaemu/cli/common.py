"""Helpers every subcommand shares: error reporting (one line, exit status 2, no traceback), informational lines
(stderr, silenced by ``--quiet``), option checks, plain tables, number parsing and the note of a long kernel
compile (``compiles_kernels``).

Every CLI error is exactly one line ``error: ...`` on stderr (``fail``; multi-line messages such as construct's
are joined; an ``OSError`` names its file). A broken pipe (``picaemu regs | head``) is not an error: it ends the
command quietly (``picaemu.cli.Main``). Warnings raised while a command runs (picaemu's logging, Python's
``warnings``) are held back by ``deferred_warnings`` and printed as ``warning: ...`` lines after a command that
succeeds; after an error only the error line is printed. Results go to stdout, everything else (progress, notes)
to stderr through ``info``.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from picaemu.errors import FormatError, PicaError

if TYPE_CHECKING:  # the memory (numpy) is loaded by the commands that use it, not by ``picaemu --help``
    from picaemu.memory import PhysicalMemory

F = TypeVar("F", bound=Callable[..., Any])

EXIT_BAD_INPUT = 2
QUIET_KEY = "picaemu.quiet"


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
        except BrokenPipeError:
            raise  # the reader went away: picaemu.cli.Main ends quietly
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


def is_quiet() -> bool:
    """``--quiet`` was given (to ``picaemu`` or to the subcommand)."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(QUIET_KEY))


def info(message: str) -> None:
    """An informational line (progress, notes) on stderr, unless ``--quiet``."""
    if not is_quiet():
        click.echo(message, err=True)


def _set_quiet(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[QUIET_KEY] = True


def quiet_option(func: F) -> F:
    """``-q/--quiet``: no informational lines on stderr (errors and warnings still print)."""
    return click.option(
        "-q",
        "--quiet",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_set_quiet,
        help="No progress or notes on stderr (errors and warnings still print).",
    )(func)


def exclusive(**options: object) -> None:
    """``click.UsageError`` when more than one of ``options`` (name -> value; None/False/() = not given) is set."""
    given = [name for name, value in options.items() if value is not None and value is not False and value != ()]
    if len(given) > 1:
        names = " and ".join(f"--{name.replace('_', '-')}" for name in given)
        raise click.UsageError(f"{names} cannot be used together")


def compiles_kernels(func: F) -> F:
    """Mark a command that may compile numba kernels: while it runs, a compile longer than
    ``kernel_cache.SLOW_COMPILE_S`` says so on stderr (which kernel, the cache folder, then the seconds taken),
    whether or not stderr is a terminal; ``--quiet`` silences it (``picaemu.numba_cache.SlowCompileNote``)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with compile_notes():
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


@contextlib.contextmanager
def compile_notes() -> Iterator[None]:
    """``compiles_kernels``'s note around part of a command (one that compiles only on some inputs: ``picaemu
    info`` when it has to replay): numba is imported only when the note is installed, never under ``--quiet``."""
    if is_quiet():
        yield
        return
    from picaemu.numba_cache import SlowCompileNote

    with SlowCompileNote(lambda line: click.echo(line, err=True)):
        yield


def examples(*lines: str) -> str:
    """A ``--help`` epilog listing example command lines (kept unwrapped)."""
    return "Examples:\n\n\b\n" + "\n".join(f"  {line}" for line in lines)


def print_table(rows: list[dict[str, Any]], columns: list[str] | None = None, title: str | None = None) -> None:
    """Rows on stdout, never truncated: tab-separated values (a header line, then one line per row) when stdout is
    not a terminal; on a terminal, the same cells padded into aligned columns, as wide as they need, after
    ``title``."""
    columns = columns or list(dict.fromkeys(k for row in rows for k in row))
    cells = [[str(c) for c in columns]] + [[_cell(row.get(c, "")) for c in columns] for row in rows]
    if not sys.stdout.isatty():
        for line in cells:
            click.echo("\t".join(cell.replace("\t", " ").replace("\n", " ") for cell in line))
        return
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    if title:
        click.echo(title)
    for line in cells:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip())


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value == value else "nan"
    return str(value)


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
            raise FormatError(f"--mem {spec}: {size} bytes at 0x{address:08X} do not fit emulated memory", path=path)
        memory.write(address, file.read_bytes(), who=f"--mem {spec}")
