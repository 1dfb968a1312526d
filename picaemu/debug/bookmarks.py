"""Debug markers from the capture and the user's bookmarks, the groups of the debugger's command tree.

Markers: a ``.pica`` capture's ``Marker`` events (the only format of the three that carries annotations; CiTrace
has frame markers only, c3dcap none). A marker opens a group that holds the events after it up to the next marker
or the end of its frame (``CaptureBuilder.marker`` ends the command list it is building, so a marker placed
between draws groups them). ``marker_groups(timeline, capture_events)`` -> ``MarkerGroup`` per marker.

Bookmarks: named replay positions the user keeps, saved next to the capture as ``CAPTURE.bookmarks.json``
(``bookmarks_path``), written atomically (``formats.files.write_atomic``)::

    {"format": "picaemu-bookmarks", "version": 1, "bookmarks": [{"name": "...", "event": E, "packet": P}, ...]}

``load(capture)`` (no file: []), ``add(capture, name, cursor)``, ``rename(capture, old, new)``,
``remove(capture, name)`` each load, change, save and return the list sorted by position. Names are unique and
non-empty; a malformed file raises ``FormatError`` naming it, a missing name ``PicaError``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from picaemu.debug.timeline import Cursor, Timeline
from picaemu.errors import FormatError, PicaError
from picaemu.formats import pica
from picaemu.formats.files import write_atomic

FORMAT = "picaemu-bookmarks"
VERSION = 1
SUFFIX = ".bookmarks.json"
MAX_BYTES = 4 * 1024 * 1024  # a bookmark file is a few hundred bytes; refuse to parse anything huge


@dataclass(frozen=True)
class MarkerGroup:
    """A capture marker and the events it groups: ``events`` = range(first, end) of event indices after the
    marker event ``event``; ``draws`` = range of the draws those events ran."""

    text: str
    frame: int
    event: int
    events: range
    draws: range


@dataclass(frozen=True, order=True)
class Bookmark:
    event: int
    packet: int
    name: str

    @property
    def cursor(self) -> Cursor:
        return Cursor(self.event, self.packet)

    def as_dict(self) -> dict:
        return {"name": self.name, "event": self.event, "packet": self.packet}


def marker_groups(tl: Timeline, events: Sequence[pica.Event]) -> list[MarkerGroup]:
    """One group per ``Marker`` event of the timeline (module docstring); ``events`` are the capture's (the
    timeline's events mirror them one to one; the marker's text is taken from the capture, not a display line)."""
    out: list[MarkerGroup] = []
    markers = [(e.index, marker) for e in tl.events if isinstance(marker := events[e.index], pica.Marker)]
    for k, (m, marker) in enumerate(markers):
        frame = tl.events[m].frame
        end = m + 1
        stop = markers[k + 1][0] if k + 1 < len(markers) else len(tl.events)
        while end < stop and tl.events[end].frame == frame:
            end += 1
        draws = [d for e in range(m + 1, end) for d in tl.events[e].draws]
        out.append(
            MarkerGroup(marker.text, frame, m, range(m + 1, end), range(draws[0], draws[-1] + 1) if draws else range(0))
        )
    return out


def bookmarks_path(capture: str | os.PathLike[str]) -> Path:
    """Where the bookmarks of ``capture`` (a file or a c3dcap folder) live: beside it, named after it."""
    path = Path(os.path.abspath(os.fspath(capture)))
    return path.with_name(path.name + SUFFIX)


def load(capture: str | os.PathLike[str]) -> list[Bookmark]:
    """The bookmarks saved for ``capture``, sorted by position ([] when there is no file)."""
    path = bookmarks_path(capture)
    if not path.exists():
        return []
    if path.stat().st_size > MAX_BYTES:
        raise FormatError(f"bookmark file is larger than {MAX_BYTES} bytes", path=str(path))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT or data.get("version") != VERSION:
            raise ValueError(f"not a {FORMAT} version {VERSION} file")
        marks = [Bookmark(int(b["event"]), int(b["packet"]), str(b["name"])) for b in data["bookmarks"]]
        bad = next((b for b in marks if b.event < 0 or b.packet < 0 or not b.name.strip()), None)
        if bad is not None:
            raise ValueError(f"bookmark {bad.name!r} at event {bad.event} packet {bad.packet} is not a position")
    except (ValueError, TypeError, KeyError, AttributeError, UnicodeDecodeError) as err:
        raise FormatError(f"bookmark file: {err}", path=str(path)) from None
    return sorted(marks)


def save(capture: str | os.PathLike[str], marks: list[Bookmark]) -> None:
    """Write ``marks`` for ``capture`` atomically (an empty list removes nothing: it writes an empty file)."""
    data = {"format": FORMAT, "version": VERSION, "bookmarks": [b.as_dict() for b in sorted(marks)]}
    write_atomic(bookmarks_path(capture), (json.dumps(data, indent=1) + "\n").encode())


def _checked_name(name: str, marks: list[Bookmark]) -> str:
    name = name.strip()
    if not name:
        raise PicaError("a bookmark needs a name")
    if any(b.name == name for b in marks):
        raise PicaError(f"there is already a bookmark named {name!r}")
    return name


def _named(name: str, marks: list[Bookmark]) -> Bookmark:
    for b in marks:
        if b.name == name:
            return b
    raise PicaError(f"no bookmark named {name!r}")


def add(capture: str | os.PathLike[str], name: str, cursor: Cursor) -> list[Bookmark]:
    marks = load(capture)
    marks.append(Bookmark(cursor.event, cursor.packet, _checked_name(name, marks)))
    save(capture, marks)
    return sorted(marks)


def rename(capture: str | os.PathLike[str], old: str, new: str) -> list[Bookmark]:
    marks = load(capture)
    mark = _named(old, marks)
    others = [b for b in marks if b is not mark]
    others.append(Bookmark(mark.event, mark.packet, _checked_name(new, others)))
    save(capture, others)
    return sorted(others)


def remove(capture: str | os.PathLike[str], name: str) -> list[Bookmark]:
    marks = load(capture)
    mark = _named(name, marks)
    marks = [b for b in marks if b is not mark]
    save(capture, marks)
    return marks
