"""The command stream tree: frame -> [capture marker group ->] capture event (GX command) -> draw call -> packet ->
register write -> field, and a "bookmarks" row on top listing the user's bookmarks when there are any.

Built lazily over an immutable ``Timeline``: a node's children are made the first time the view asks for them.
Command-list events group their packets by draw (the packets up to and including each draw's trigger, then the
packets after the last draw); a packet has one child per register it writes (consecutive mode: ids ascending),
a write one child per decoded field (names and enums from the register table).

Markers (``set_timeline``'s ``picaemu.debug.bookmarks.MarkerGroup``s): a frame's events after a ``Marker`` event
sit under that marker's row up to the next marker or the frame's end (unfiltered tree; a filter shows matching
events flat). Bookmarks come from ``set_bookmarks`` (``picaemu.debug.bookmarks.Bookmark``s).

Columns: item, byte offset in its command buffer, value(s), detail. ``set_filter(text)``: "draw N" keeps draw N's
group; other text keeps packets writing a register whose name contains it (or whose id it is: "0x0E0"), or whose
value it is ("=0x1234"); filtered events show their matching packets flat. ``cursor_of(index)`` is the replay
position a "run to" on that row means (a marker group: its end; a bookmark: its position).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from picaemu.gui.models.headers import NodeTree
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt

from picaemu import regs as regtable
from picaemu.command.listing import UniformUploads, packet_targets
from picaemu.debug.bookmarks import Bookmark, MarkerGroup
from picaemu.debug.timeline import Cursor, Timeline
from picaemu.regs import RegKind

Index = QModelIndex | QPersistentModelIndex
HEADERS = ("Item", "Offset", "Value", "Detail")


@dataclass(eq=False)
class Node:
    kind: str  # bookmarks, bookmark, frame, marker, event, draw, group, packet, write, field
    parent: Node | None
    row: int
    key: tuple = ()
    children: list[Node] | None = field(default=None, repr=False)


def _match_packet(p, text: str) -> bool:
    if text.startswith("="):
        try:
            value = int(text[1:], 0)
        except ValueError:
            return False
        return value in p.params
    targets = set(packet_targets(p))
    if text.lower().startswith("0x"):
        try:
            return int(text, 16) in targets
        except ValueError:
            return False
    up = text.upper()
    return any(up in regtable.get(t).name for t in targets)


class CommandTreeModel(NodeTree, QAbstractItemModel):
    HEADERS = HEADERS

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.timeline: Timeline | None = None
        self.filter = ""
        self.markers: dict[int, MarkerGroup] = {}  # by marker event
        self.bookmarks: list[Bookmark] = []
        self._uploads: dict[int, list[list[str]]] = {}  # event -> per packet, the uniform vectors it completes
        self._root = Node("root", None, 0, children=[])

    def set_timeline(
        self, timeline: Timeline | None, bookmarks: Sequence[Bookmark] = (), markers: Sequence[MarkerGroup] = ()
    ) -> None:
        self.beginResetModel()
        self.timeline = timeline
        self._uploads = {}
        self.markers = {g.event: g for g in markers}
        self.bookmarks = list(bookmarks)
        self._root = Node("root", None, 0)
        self.endResetModel()

    def set_bookmarks(self, bookmarks: list[Bookmark]) -> None:
        self.beginResetModel()
        self.bookmarks = list(bookmarks)
        self._root = Node("root", None, 0)
        self.endResetModel()

    def set_filter(self, text: str) -> None:
        self.beginResetModel()
        self.filter = text.strip()
        self._root = Node("root", None, 0)
        self.endResetModel()

    # -- lazy structure ----------------------------------------------------------------------------------
    def _children(self, node: Node) -> list[Node]:
        if node.children is None:
            keys = self._child_keys(node) if self.timeline is not None else []
            node.children = [Node(kind, node, i, key) for i, (kind, key) in enumerate(keys)]
        return node.children

    def _draw_filter(self) -> int | None:
        parts = self.filter.lower().split()
        if len(parts) == 2 and parts[0] == "draw" and parts[1].isdigit():
            return int(parts[1])
        return None

    def _event_visible(self, e) -> bool:
        if not self.filter:
            return True
        draw = self._draw_filter()
        if draw is not None:
            return draw in e.draws
        return any(_match_packet(p, self.filter) for p in e.packets)

    def _child_keys(self, node: Node) -> list[tuple[str, tuple]]:
        tl = self.timeline
        if node.kind == "root":
            nframes = len(tl.frame_ends) + (1 if not tl.frame_ends or tl.frame_ends[-1] < len(tl.events) - 1 else 0)
            frames = [("frame", (f,)) for f in range(nframes)]
            marks = [("bookmarks", ())] if self.bookmarks else []
            return marks + [k for k in frames if any(self._event_visible(e) for e in tl.events if e.frame == k[1][0])]
        if node.kind == "bookmarks":
            return [("bookmark", (i,)) for i in range(len(self.bookmarks))]
        if node.kind == "frame":
            return self._frame_children(node.key[0])
        if node.kind == "marker":
            return [("event", (e,)) for e in self.markers[node.key[0]].events]
        if node.kind == "event":
            return self._event_children(node.key[0])
        if node.kind in ("draw", "group"):
            e, lo, hi = node.key[1:] if node.kind == "draw" else node.key
            return [("packet", (e, k)) for k in range(lo, hi)]
        if node.kind == "packet":
            p = tl.events[node.key[0]].packets[node.key[1]]
            return [("write", (*node.key, j)) for j in range(len(p.params))]
        if node.kind == "write":
            reg, _ = self._write(node.key)
            if regtable.get(reg).kind is RegKind.DATA_PORT:
                return []
            return [("field", (*node.key, f)) for f in range(len(regtable.get(reg).fields))]
        return []

    def _frame_children(self, frame: int) -> list[tuple[str, tuple]]:
        """The frame's events; unfiltered, those after a marker go under its row."""
        events = [e for e in self.timeline.events if e.frame == frame and self._event_visible(e)]
        if self.filter:
            return [("event", (e.index,)) for e in events]
        out: list[tuple[str, tuple]] = []
        grouped: set[int] = set()
        for e in events:
            if e.index in self.markers:
                out.append(("marker", (e.index,)))
                grouped.update(self.markers[e.index].events)
            elif e.index not in grouped:
                out.append(("event", (e.index,)))
        return out

    def _event_children(self, e: int) -> list[tuple[str, tuple]]:
        ev = self.timeline.events[e]
        if self.filter:
            draw = self._draw_filter()
            if draw is not None:
                draws = self.timeline.draws
                lo = draws[draw - 1].list_packet + 1 if draw and draws[draw - 1].event == e else 0
                return [("draw", (draw, e, lo, draws[draw].list_packet + 1))]
            return [("packet", (e, k)) for k, p in enumerate(ev.packets) if _match_packet(p, self.filter)]
        out: list[tuple[str, tuple]] = []
        lo = 0
        for d in ev.draws:
            hi = self.timeline.draws[d].list_packet + 1
            out.append(("draw", (d, e, lo, hi)))
            lo = hi
        if ev.draws and lo < len(ev.packets):
            out.append(("group", (e, lo, len(ev.packets))))
        elif not ev.draws:
            out += [("packet", (e, k)) for k in range(len(ev.packets))]
        return out

    def _write(self, key: tuple) -> tuple[int, int]:
        e, k, j = key[:3]
        p = self.timeline.events[e].packets[k]
        return packet_targets(p)[j], p.params[j]

    # -- Qt interface ------------------------------------------------------------------------------------
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        node = index.internalPointer()
        return getattr(self, f"_text_{node.kind}")(node.key, index.column())

    def _text_frame(self, key: tuple, col: int) -> str | None:
        n = sum(1 for e in self.timeline.events if e.frame == key[0])
        return (f"frame {key[0]}", None, None, f"{n} events")[col]

    def _text_bookmarks(self, key: tuple, col: int) -> str | None:
        return ("bookmarks", None, None, f"{len(self.bookmarks)} saved beside the capture")[col]

    def _text_bookmark(self, key: tuple, col: int) -> str | None:
        b = self.bookmarks[key[0]]
        draw = self.timeline.last_draw(b.cursor)
        return (f"★ {b.name}", None, None, b.cursor.text() + (f", after draw {draw}" if draw is not None else ""))[col]

    def _text_marker(self, key: tuple, col: int) -> str | None:
        g = self.markers[key[0]]
        draws = f"draws {g.draws.start}..{g.draws.stop - 1}" if g.draws else "no draws"
        return (f"▸ {g.text}", None, None, f"marker: {len(g.events)} events, {draws}")[col]

    def _text_event(self, key: tuple, col: int) -> str | None:
        ev = self.timeline.events[key[0]]
        detail = f"{len(ev.packets)} packets, {len(ev.draws)} draws" if ev.is_list else None
        return (f"#{ev.index} {ev.text}", None, None, detail)[col]

    def _text_draw(self, key: tuple, col: int) -> str | None:
        d = self.timeline.draws[key[0]]
        p = self.timeline.events[d.event].packets[d.packet]
        frags = d.stats.get("fragments_written", "?")
        return (f"draw {d.index} ({d.kind})", f"0x{p.offset:06X}", None, f"{frags} fragments written")[col]

    def _text_group(self, key: tuple, col: int) -> str | None:
        return ("after the last draw", None, None, f"{key[2] - key[1]} packets")[col]

    def _text_packet(self, key: tuple, col: int) -> str | None:
        p = self.timeline.events[key[0]].packets[key[1]]
        name = regtable.get(p.id).name if p.id < regtable.NUM_REGS else f"0x{p.id:03X}"
        if col == 0:
            return f"{name}" + (f" +{len(p.params) - 1}" if len(p.params) > 1 and p.consecutive else "")
        if col == 1:
            return f"0x{p.offset:06X}"
        if col == 2:
            shown = " ".join(f"{v:08X}" for v in p.params[:4])
            return shown + (" ..." if len(p.params) > 4 else "")
        vectors = self._uniform_vectors(key[0])[key[1]]
        if vectors:  # a uniform upload reads as the vectors it uploads, not as FIFO words
            return "; ".join(vectors)
        return f"mask={p.mask:X} {'incr' if p.consecutive else 'same'} n={len(p.params)}"

    def _uniform_vectors(self, event: int) -> list[list[str]]:
        """Per packet of ``event``, the ``vs c5 = (x, y, z, w)`` lines of the float uniforms it completes (decoded
        once per event, in packet order, as the command processor applies them)."""
        if event not in self._uploads:
            uploads = UniformUploads()
            self._uploads[event] = [uploads.lines(p) for p in self.timeline.events[event].packets]
        return self._uploads[event]

    def _text_write(self, key: tuple, col: int) -> str | None:
        reg, value = self._write(key)
        r = regtable.get(reg)
        fields = regtable.decode_fields(reg, value) if r.fields and r.kind is not RegKind.DATA_PORT else None
        detail = " ".join(f"{f.name}={f.text}" for f in fields.fields) if fields else r.doc
        return (r.name, f"0x{reg:03X}", f"0x{value:08X}", detail)[col]

    def _text_field(self, key: tuple, col: int) -> str | None:
        reg, value = self._write(key)
        f = regtable.decode_fields(reg, value).fields[key[3]]
        bits = f"bits {f.lo}-{f.hi}" if f.hi != f.lo else f"bit {f.lo}"
        return (f.name, bits, str(f.raw), f.text)[col]

    # -- navigation --------------------------------------------------------------------------------------
    def cursor_of(self, index: Index) -> Cursor | None:
        """The replay position "run to this row" means (after the row's packet / draw / event / frame)."""
        if not index.isValid() or self.timeline is None:
            return None
        node: Node = index.internalPointer()
        tl = self.timeline
        if node.kind == "frame":
            f = node.key[0]
            return Cursor(tl.frame_ends[f] + 1, 0) if f < len(tl.frame_ends) else tl.end
        if node.kind == "bookmarks":
            return None
        if node.kind == "bookmark":
            return self.bookmarks[node.key[0]].cursor
        if node.kind == "marker":
            return tl.normalize(self.markers[node.key[0]].events.stop, 0)
        if node.kind == "event":
            return Cursor(node.key[0] + 1, 0)
        if node.kind == "draw":
            return tl.after_draw(node.key[0])
        if node.kind == "group":
            return Cursor(node.key[0] + 1, 0)
        return tl.normalize(node.key[0], node.key[1] + 1)

    def event_index(self, event: int) -> QModelIndex:
        """Index of capture event ``event``'s row (invalid when the filter hides it)."""
        for frame in self._children(self._root):
            if frame.kind != "frame":
                continue
            for child in self._children(frame):
                for ev in self._children(child) if child.kind == "marker" else (child,):
                    if ev.key[0] == event:
                        return self.createIndex(ev.row, 0, ev)
        return QModelIndex()

    def bookmark_at(self, index: Index) -> Bookmark | None:
        """The bookmark of a bookmark row (None for any other row)."""
        node = index.internalPointer() if index.isValid() else None
        return self.bookmarks[node.key[0]] if node is not None and node.kind == "bookmark" else None

    def locate(self, cursor: Cursor) -> QModelIndex:
        """The row of the last thing executed at ``cursor``: its packet inside a list, else the last event."""
        tl = self.timeline
        if tl is None:
            return QModelIndex()
        if cursor.packet:
            found = self.packet_index(cursor.event, cursor.packet - 1)
            return found if found.isValid() else self.event_index(cursor.event)
        return self.event_index(cursor.event - 1) if cursor.event else QModelIndex()

    def find_offset(self, event: int, offset: int) -> QModelIndex:
        """Index of the packet of command-list event ``event`` that holds byte ``offset`` (its header, one of its
        parameter words or its padding; unfiltered tree)."""
        tl = self.timeline
        if tl is None or not 0 <= event < len(tl.events):
            return QModelIndex()
        packets = tl.events[event].packets
        k = next(
            (i for i, p in enumerate(packets) if p.offset <= offset < p.offset + 8 * (1 + len(p.params) // 2)), None
        )  # 8-byte aligned packets
        return QModelIndex() if k is None else self.packet_index(event, k)

    def packet_index(self, event: int, k: int) -> QModelIndex:
        """Index of packet ``k`` of event ``event`` (invalid when the filter hides it)."""
        ev_index = self.event_index(event)
        if ev_index.isValid():
            ev = ev_index.internalPointer()
            for child in self._children(ev):
                if child.kind == "packet" and child.key[1] == k:
                    return self.createIndex(child.row, 0, child)
                for pk in self._children(child) if child.kind in ("draw", "group") else ():
                    if pk.key[1] == k:
                        return self.createIndex(pk.row, 0, pk)
        return QModelIndex()
