"""Helpers every subcommand shares: error reporting (one line, exit status 2, no traceback) and number parsing."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from picaemu.errors import PicaError

F = TypeVar("F", bound=Callable[..., Any])

EXIT_BAD_INPUT = 2


def fail(message: str) -> None:
    """Print ``error: message`` on stderr and exit with status 2."""
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def reports_errors(func: F) -> F:
    """Turn picaemu's own errors (and unreadable files) into a one-line message and exit status 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except PicaError as err:
            fail(str(err))
        except OSError as err:
            fail(f"{err.filename or ''}: {err.strerror or err}")

    return wrapper  # type: ignore[return-value]


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
