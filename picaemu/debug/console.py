"""The debugger's Python console (RenderDoc's shell): statements run with the session's replay in scope.

``run(session, source, namespace)`` executes ``source`` (one statement or several; an expression's value is
printed as the interactive interpreter would) on the thread that owns the session — the GUI's worker — with
``replay`` (the ``picaemu.replay.Replay``, whose ``pixel_history``, ``pipeline_state``, ``diff``, ``mesh`` ... are
the engine's answers), ``session``, ``timeline``, ``np`` and ``picaemu`` in ``namespace``, which persists between
calls. Returns what it printed (stdout and stderr; an exception as its traceback's last line). The code is what
the user typed into the console: like any Python shell it can do anything the user can.
"""

from __future__ import annotations

import contextlib
import io
import traceback
from typing import Any

import numpy as np

import picaemu
from picaemu.debug.session import Session

MAX_OUTPUT = 64 * 1024  # characters of output kept per call


def namespace(session: Session) -> dict[str, Any]:
    """The names a new console starts with."""
    return {"replay": session.replay, "session": session, "timeline": session.timeline, "np": np, "picaemu": picaemu}


def run(session: Session, source: str, scope: dict[str, Any]) -> str:
    """Run ``source`` in ``scope`` (see the module docstring); returns its output."""
    scope.update(session=session, timeline=session.timeline)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            try:
                code = compile(source, "<console>", "eval")
            except SyntaxError:
                exec(compile(source, "<console>", "exec"), scope)
            else:
                value = eval(code, scope)
                if value is not None:
                    print(repr(value))
        except Exception as err:  # the console reports, the debugger goes on
            frame = traceback.extract_tb(err.__traceback__)[-1]
            print(f"{type(err).__name__}: {err} (line {frame.lineno})")
    session.mark_dirty()  # the user may have moved the replay: the next move restores from a checkpoint
    text = out.getvalue()
    return text if len(text) <= MAX_OUTPUT else text[:MAX_OUTPUT] + f"\n… ({len(text) - MAX_OUTPUT} more characters)"
