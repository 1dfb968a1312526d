"""Edit and replay (RenderDoc's): re-render the rest of a draw's frame with edits made at that draw, beside the
original.

``Editor(session).edit(draw, edits, scope) -> EditResult``. The edited run happens in a fork — a second ``Replay``
over the same capture, without checkpoints of its own, made once and reused — so the session's replay, its
checkpoints and its per-draw records are never changed. Each edit:

1. restores into the fork the session's checkpoint nearest before the draw's trigger packet and runs forward to
   just before that packet (``Replay.run_to(..., forward_only=True)``);
2. turns the edits into command packets (``picaemu.debug.edits``) and runs them through the fork's command
   processor — the normal write path: masked register writes, data ports, write-group dirty bits, so the draw
   state is rebuilt exactly where an ordinary write would rebuild it;
3. scope ``"from"`` (the default): before each later draw of the frame the edits are applied again where the
   capture overwrote them (so they hold "from this draw on"); scope ``"draw"``: right after the draw, the values
   the edits replaced are written back (the edit holds for this draw only);
4. runs to the end of the frame (right after its FrameEnd; the capture's end for a final frame without one).

The pictures are the color buffer the draw's registers name (``(H, W, 4)`` uint8 RGBA, row 0 = top), read at the
end of the frame: ``original`` from the session (``Session.goto``: a restore from the frame-end checkpoint),
``edited`` from the fork. ``diff`` is ``picaemu.analysis.imagediff.diff_picture`` ((H, W, 3) uint8: the edited
picture dimmed, the changed pixels red); ``changed_pixels`` counts pixels whose RGBA differs. ``stats_original``
/ ``stats_edited`` are the pipeline's counters of the edited draw; ``totals_original`` / ``totals_edited`` sum
the integer counters over every draw the fork replayed (the draw to the end of the frame).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from picaemu.analysis.imagediff import diff_picture
from picaemu.command.builder import CommandBuilder
from picaemu.debug.edits import SCOPES, Edit, parse_edit
from picaemu.debug.session import Session
from picaemu.debug.timeline import Cursor
from picaemu.errors import EditError
from picaemu.fragment import framebuffer as fbm
from picaemu.replay import Checkpoint, Replay, default_pipeline
from picaemu.replay.records import DrawRecord


@dataclass(frozen=True)
class EditResult:
    """One edit-and-replay run; see the module docstring."""

    draw: int
    scope: str
    edits: tuple[Edit, ...]
    original: np.ndarray
    edited: np.ndarray
    diff: np.ndarray
    changed_pixels: int
    draws_replayed: int
    stats_original: dict
    stats_edited: dict
    totals_original: dict
    totals_edited: dict

    def as_dict(self) -> dict[str, Any]:
        """The figures as JSON-ready data (no pictures)."""
        return {
            "draw": self.draw,
            "scope": self.scope,
            "edits": [e.text() for e in self.edits],
            "size": list(self.original.shape[1::-1]),
            "changed_pixels": self.changed_pixels,
            "draws_replayed": self.draws_replayed,
            "stats_original": self.stats_original,
            "stats_edited": self.stats_edited,
            "totals_original": self.totals_original,
            "totals_edited": self.totals_edited,
        }


def _totals(stats: Sequence[dict]) -> dict[str, int]:
    """Integer counters summed over draws (``time_s`` and other floats left out)."""
    out: dict[str, int] = {}
    for s in stats:
        for key, value in s.items():
            if isinstance(value, int):
                out[key] = out.get(key, 0) + value
    return out


class Editor:
    """Edit-and-replay over one indexed session; see the module docstring."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._fork: Replay | None = None

    @property
    def fork(self) -> Replay:
        """The replay the edited runs happen in (made on first use; software pipeline, no checkpoints)."""
        if self._fork is None:
            self._fork = Replay(self.session.replay.capture, pipeline=default_pipeline(), checkpoints=False)
        return self._fork

    def edit(self, draw: int, edits: Sequence[Edit | str], scope: str = "from") -> EditResult:
        """Re-render ``draw``'s frame from ``draw`` on with ``edits`` (``Edit`` objects or ``parse_edit`` text)."""
        tl = self.session.timeline
        if tl is None:
            raise EditError("the capture has not been indexed yet")
        if not 0 <= draw < len(tl.draws):
            raise EditError(f"draw {draw} outside 0..{len(tl.draws) - 1}")
        if scope not in SCOPES:
            raise EditError(f"unknown edit scope {scope!r}: one of {', '.join(SCOPES)}")
        parsed = tuple(parse_edit(e) if isinstance(e, str) else e for e in edits)
        if not parsed:
            raise EditError("no edits given")
        info = tl.draws[draw]
        end = self._frame_end(info)
        later = [d for d in tl.draws[draw:] if tl.before_draw(d.index) < end]
        edited_stats = self._run(later, parsed, scope, end)
        fb = fbm.FramebufferState.from_regs(self.session.state_at_draw(draw).regs)
        fb.check_size()
        edited = fbm.read_color_image(self.fork.memory, fb)
        self.session.goto(end)
        original = fbm.read_color_image(self.session.replay.memory, fb)
        changed = (original != edited).any(axis=2)
        return EditResult(
            draw,
            scope,
            parsed,
            original,
            edited,
            diff_picture(edited, changed),
            int(changed.sum()),
            len(later),
            dict(info.stats),
            edited_stats.get(draw, {}),
            _totals([d.stats for d in later]),
            _totals(list(edited_stats.values())),
        )

    def _frame_end(self, info: DrawRecord) -> Cursor:
        """Right after the FrameEnd of the draw's frame (the capture's end when the frame has none)."""
        tl = self.session.timeline
        if info.frame < len(tl.frame_ends):
            return tl.normalize(tl.frame_ends[info.frame] + 1, 0)
        return tl.end

    def _start(self, at: Cursor) -> Checkpoint:
        """The session's checkpoint nearest at or before ``at``."""
        cps = [cp for cp in self.session.checkpoints if cp.at <= (at.event, at.packet)]
        return cps[-1]

    def _run(self, draws: list[DrawRecord], edits: tuple[Edit, ...], scope: str, end: Cursor) -> dict[int, dict]:
        """Run the fork from the first of ``draws`` to ``end`` with the edits; the edited draws' counters by index."""
        fork, tl = self.fork, self.session.timeline
        first = draws[0]
        fork.restore(self._start(tl.before_draw(first.index)))
        fork.draws.clear()
        for d in draws if scope == "from" else draws[:1]:
            before = tl.before_draw(d.index)
            fork.run_to(before.event, packets=before.packet, forward_only=True)
            state = fork.state.copy() if scope == "draw" else None
            self._apply(edits, lambda e, b: e.packets(fork.state, b))
            if state is not None:  # this draw only: run the draw, then write back what the edits replaced
                after = tl.after_draw(d.index)
                fork.run_to(after.event, packets=after.packet, forward_only=True)
                self._apply(edits, lambda e, b, s=state: e.undo(s, b) or True)
        fork.run_to(end.event, packets=end.packet, forward_only=True)
        return {r.index: dict(r.stats) for r in fork.draws if r.index >= first.index}  # not those on the way

    def _apply(self, edits: tuple[Edit, ...], make) -> None:
        """Run the packets ``make(edit, builder)`` appends (True: it appended some) through the fork's processor."""
        builder = CommandBuilder()
        if any([make(e, builder) for e in edits]):
            self.fork.processor.run(builder.words())
