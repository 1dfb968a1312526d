"""The ``picaemu`` command: one click group, one module per subcommand.

``Main`` runs every subcommand under one error policy (``picaemu.cli.common``): an error is one line
``error: ...`` on stderr with exit status 2 (click's usage errors included); a failure that is a bug of picaemu's
is one line ``error: internal error ...`` with status 3 (``PICAEMU_TRACEBACK=1`` shows the traceback instead);
warnings are printed after a command that succeeds, never before an error. A reader of stdout that goes away
(``picaemu regs | head -1``) ends the command quietly with status 141 (128 + SIGPIPE, what a shell reports for a
program killed by the broken pipe). ``picaemu --quiet CMD`` (or ``CMD --quiet``) silences informational lines.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import sys
import threading
from typing import Any, NoReturn

from picaemu import kernel_cache

kernel_cache.keep_bytecode()  # before the modules a command imports (click, numpy, numba, picaemu's own)

import click  # noqa: E402

from picaemu.cli.common import (  # noqa: E402
    EXIT_BAD_INPUT,
    deferred_warnings,
    error_line,
    error_text,
    examples,
    one_line,
    quiet_option,
)
from picaemu.errors import PicaError  # noqa: E402

EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141
TRACEBACK_ENV = "PICAEMU_TRACEBACK"


def _usage_text(err: click.UsageError) -> str:
    hint = f" (see '{err.ctx.command_path} --help')" if err.ctx is not None else ""
    return one_line(err.format_message()) + hint


def _pipe_closed() -> int:
    """stdout's reader went away: point stdout at /dev/null so that the interpreter's final flush is quiet."""
    with contextlib.suppress(OSError, ValueError, AttributeError):  # io.UnsupportedOperation is both
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_BROKEN_PIPE


class _PipeClosed(Exception):
    """stdout's reader went away (raised past click, which would turn the broken pipe into status 1)."""


class Main(click.Group):
    """The command group, with the one-line error policy of the module docstring."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError as err:
            raise _PipeClosed() from err

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        with deferred_warnings() as notes:
            code = self._run(args, prog_name, complete_var, **extra)
        if code not in (EXIT_BAD_INPUT, EXIT_INTERNAL):
            for note in dict.fromkeys(notes):
                click.echo(f"warning: {one_line(note)}", err=True)
        sys.exit(code)

    def _run(self, args: Any, prog_name: str | None, complete_var: str | None, **extra: Any) -> int:
        """Run the command; returns the exit status after printing at most one error line."""
        no_args = getattr(click.exceptions, "NoArgsIsHelpError", ())
        try:
            value = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            sys.stdout.flush()  # a reader that went away is found here, not by the interpreter's exit
            return value if isinstance(value, int) else 0
        except SystemExit as exit_:
            try:
                sys.stdout.flush()
            except BrokenPipeError:
                return _pipe_closed()
            return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        except no_args as err:  # bare ``picaemu``: the help text, as click prints it
            err.show()
            return err.exit_code
        except click.UsageError as err:
            error_line(_usage_text(err))
        except click.ClickException as err:
            error_line(err.format_message())
        except click.Abort:
            error_line("aborted")
            return 1
        except KeyboardInterrupt:
            error_line("interrupted")
            return EXIT_INTERRUPTED
        except (BrokenPipeError, _PipeClosed):  # the reader of stdout went away (``picaemu decode ... | head``)
            return _pipe_closed()
        except (PicaError, OSError) as err:
            error_line(error_text(err))
        except Exception as err:
            if os.environ.get(TRACEBACK_ENV):
                raise
            error_line(
                f"internal error {type(err).__name__}: {err} (a bug in picaemu: please report it with "
                f"the input; {TRACEBACK_ENV}=1 shows the traceback)"
            )
            return EXIT_INTERNAL
        return EXIT_BAD_INPUT


@click.group(
    cls=Main,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=examples(
        "picaemu render samples/captures/cube.pica -o cube.png",
        "picaemu info tests/data/games/minicraft.pica",
        "picaemu gui samples/captures/cube.pica",
        "picaemu render --help",
    ),
)
@click.version_option(package_name="picaemu")
@quiet_option
def main() -> None:
    """picaemu: emulate and inspect the Nintendo 3DS PICA200 GPU.

    Results go to stdout (tab-separated when it is not a terminal), progress and notes to stderr; errors are one
    line 'error: ...' with exit status 2. 'picaemu COMMAND --help' shows each command's options and examples.
    """


# name -> (module under picaemu.cli, attribute, the start of its help): ``picaemu --help`` lists the
# commands from here without importing them (the emulator behind them takes a second to import); a command's
# module is imported when it runs or shows its own help. tests/test_cli_conventions.py checks the sentences.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "batch": ("batch", "batch", "Replay every capture in INPUTS headlessly; write every frame's top..."),
    "bookmarks": ("find", "bookmarks", "The capture's debug markers (and the draws each groups) and your..."),
    "convert": ("convert", "convert", "Convert the capture SOURCE (.pica, .ctf or c3dcap directory) to..."),
    "decode": ("decode", "decode", "Decode the command buffer FILE (little-endian u32 words) and print..."),
    "diff": ("diff", "diff", "Compare two captures draw by draw (or one capture under two backends):..."),
    "diff-backends": (
        "diff_backends",
        "diff_backends",
        "Render CAPTURE with both backends; write the two pictures and their...",
    ),
    "diff-images": (
        "diff_images",
        "diff_images",
        "Compare every picture under OUT_DIR with the one at the same path...",
    ),
    "dump": ("debug", "dump", "Every event of a capture in order (like apitrace dump): GX commands..."),
    "find": ("find", "find", "Find register writes or draws in a capture: by register, written..."),
    "footprint": ("find", "footprint", "A draw's footprint as a picture (PNG): the render target after the..."),
    "fragment": ("debug", "fragment", "One fragment stage by stage: texture lookups (s, t, LOD, texel)..."),
    "info": ("info", "info_command", "What CAPTURE holds, without rendering it: format and version, frames..."),
    "gui": ("gui", "gui", "Open the debugger, optionally on CAPTURE (.pica, .ctf or c3dcap..."),
    "history": ("debug", "history", "Pixel history: every fragment that reached pixel X,Y, in draw order..."),
    "lint": ("lint", "lint", "Validate CAPTURE's command buffers like a graphics API validation layer:..."),
    "mesh": ("debug", "mesh", "A draw's vertices at one stage of the geometry front end."),
    "record": ("record", "record", "Record the GPU commands of a running 3DS program into a .pica capture."),
    "regs": ("regs", "regs_command", "Show REGISTER (name, GPUREG_ name, alias, 0xID, an external..."),
    "render": ("render", "render", "Run the command list CMDLIST (little-endian u32 words) and write the..."),
    "shader": ("shader", "shader", "Shader binaries: disassemble, assemble, run."),
    "state": ("debug", "state", "Every stage's decoded state at a draw (vertex input, shaders..."),
    "stats": ("stats", "stats", "Replay CAPTURE and report what every draw (or frame) did."),
    "surface": ("surface", "surface", "Any memory of a capture decoded as a texture, color or depth surface."),
    "texture": ("texture", "texture", "Decode and encode PICA200 texture data."),
    "trim": ("info", "trim_command", "Cut CAPTURE down to frames A..B: a .pica whose replay of those frames..."),
    "trace": ("debug", "trace", "One vertex through its shader, instruction by instruction: source..."),
    "why": ("debug", "why", "Where a draw's work went, stage by stage (vertices, triangles..."),
}


def run() -> NoReturn:
    """The ``picaemu`` command (its console script): ``main``, then out of the process without the interpreter's
    teardown.

    A first run leaves numba's typing and lowering behind (~600 k Python objects) and LLVM's modules; the
    interpreter's exit collected the heap once more and freed it object by object: ~1.2 s of README line 1's CPU,
    for a process about to end (bench/RESULTS.md, "The twenty-third session"). Here the exit handlers run
    (``atexit``: logging's flush, multiprocessing's and Dask's shutdown, temporary folders), the standard streams
    are flushed, and the process ends by ``os._exit`` with ``main``'s status. The exit is the interpreter's own
    while another Python thread runs (it waits for the thread) and after Qt was imported (the debugger: Qt's objects
    save their settings as they are destroyed). (Tests call ``main``: its ``SystemExit`` stays catchable.)
    """
    try:
        main()
        code = 0
    except SystemExit as exit_:
        if not isinstance(exit_.code, int | None) or threading.active_count() > 1 or "PySide6" in sys.modules:
            raise
        code = exit_.code or 0
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:  # None: the stream's descriptor was closed when the process started
                stream.flush()
        except (OSError, ValueError):  # a reader gone away after the command's own flush
            code = code or _pipe_closed()
    os._exit(code)


def _shorten(text: str, limit: int) -> str:
    """``text`` cut at a word to fit ``limit`` characters, with "..." where it was cut (click's own rule)."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 3, 0)].rsplit(" ", 1)[0].rstrip(",;:") + "..."


def _lazy_commands(group: click.Group) -> None:
    """Give ``group`` the commands of ``COMMANDS``, each imported on first use."""

    def list_commands(ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute, _ = COMMANDS[name]
        return getattr(importlib.import_module(f"picaemu.cli.{module}"), attribute)

    def format_commands(ctx: click.Context, formatter: click.HelpFormatter) -> None:
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [(name, _shorten(COMMANDS[name][2], limit)) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    group.list_commands = list_commands  # type: ignore[method-assign]
    group.get_command = get_command  # type: ignore[method-assign, assignment]
    group.format_commands = format_commands  # type: ignore[method-assign]


_lazy_commands(main)
