"""c3dcap-1 scene directories (the project's shared citro3d captures): files -> ``Scene`` (typed, no emulation).

A scene directory holds ``manifest.json`` (``{"format": "c3dcap-1", "scene", "memory_map", "events"}``),
``cmdlists/NNN.bin`` (raw little-endian u32 command words) and ``blobs/<hash>_<size>.bin`` (memory contents).
Events, in execution order (see /work/shared/captures/README.md):

- ``present``: a screen ("top"/"bottom") scans out ``fb_a_paddr`` (left eye) / ``fb_b_paddr`` (right eye),
  ``stride`` bytes per row, ``mode`` (FB_FORMAT word: low 3 bits = pixel format), ``swap`` (which address slot)
- ``gx`` with ``gx_cmd`` MemoryFill (``fill[]``), ProcessCommandList (``cmdlist_paddr``, ``cmdlist_size_bytes``,
  ``cmdlist_file``), DisplayTransfer (``in/out_paddr``, ``in/out_width/height``, ``flags``) or TextureCopy
  (``in/out_paddr``, ``size``, ``in_line``, ``out_line``, ``flags``); each carries ``memory``: the live
  allocations, a linear block with the CPU-written bytes in ``file``.

``read(path)`` validates types and ranges of every field it uses, checks each referenced file exists, lies inside
the scene directory and has the declared size before reading it, and raises ``FormatError`` naming the file and
the event (``event #seq``) at fault. Blob contents are read once and shared between events.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from picaemu.formats import json_stream
from picaemu.formats.memory_runs import merge_blocks
from picaemu.formats.pica_events import CACHE_REGIONS

from picaemu.errors import FormatError

FORMAT = "c3dcap-1"
MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 1 << 30  # read one event at a time (``json_stream``): a real game's manifest is ~423 MB
MAX_BLOB_BYTES = 256 << 20
SCREENS = {"top": 0, "bottom": 1}


@dataclass(frozen=True)
class Allocation:
    """A live allocation at a GX command; ``data`` holds the CPU-written bytes (linear blocks with a file)."""

    region: str
    address: int
    size: int
    tag: str
    data: bytes | None


@dataclass(frozen=True)
class Present:
    seq: int
    screen: int  # 0 top, 1 bottom
    left: int
    right: int
    stride: int
    mode: int
    swap: int


@dataclass(frozen=True)
class Fill:
    start: int
    end: int  # exclusive
    value: int
    control: int


@dataclass(frozen=True)
class GxCommand:
    """One GX command: ``kind`` is the manifest's gx_cmd; ``args`` its typed parameters; ``memory`` at that time."""

    seq: int
    kind: str
    args: dict[str, Any]
    memory: tuple[Allocation, ...]


SceneEvent = Present | GxCommand


@dataclass
class Scene:
    name: str
    memory_map: dict[str, int]
    events: list[SceneEvent] = field(default_factory=list)


def _int(obj: dict[str, Any], key: str, where: str, path: Path, bits: int = 32) -> int:
    value = obj.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << bits:
        raise FormatError(
            f"{where}: field {key!r} must be an unsigned {bits}-bit integer, got {value!r}", path=str(path)
        )
    return value


def _file(root: Path, name: object, where: str, size: int | None = None) -> bytes:
    if not isinstance(name, str):
        raise FormatError(f"{where}: file name must be a string, got {name!r}", path=str(root))
    target = (root / name).resolve()
    if root.resolve() not in target.parents:
        raise FormatError(f"{where}: file {name!r} lies outside the scene directory", path=str(root))
    if not target.is_file():
        raise FormatError(f"{where}: file {name!r} is missing", path=str(root))
    actual = target.stat().st_size
    if actual > MAX_BLOB_BYTES or (size is not None and actual != size):
        raise FormatError(f"{where}: file {name!r} has {actual} bytes, expected {size}", path=str(target))
    return target.read_bytes()


class _Loader:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.manifest = root / MANIFEST
        self._blobs: dict[str, bytes] = {}
        self._files: dict[int, str] = {}  # address -> file name of each CPU-written block at the previous command
        self._runs: dict[tuple[tuple[int, str | None], ...], bytes] = {}

    def blob(self, name: object, where: str, size: int) -> bytes:
        key = str(name)
        if key not in self._blobs:
            self._blobs[key] = _file(self.root, name, where, size)
        elif len(self._blobs[key]) != size:
            raise FormatError(f"{where}: blob {key!r} is used with two different sizes", path=str(self.root))
        return self._blobs[key]

    def allocations(self, items: object, where: str) -> tuple[Allocation, ...]:
        """The live allocations of one GX command, address-contiguous blocks merged into runs (CPU-written blocks
        and the others apart; written blocks whose file changed since the previous command apart from the rest):
        see ``memory_runs``."""
        if not isinstance(items, list):
            raise FormatError(f"{where}: 'memory' must be a list", path=str(self.manifest))
        blocks: list[tuple[str, int, int, str, str | None]] = []  # region, address, size, tag, file name
        for i, a in enumerate(items):
            w = f"{where} memory[{i}]"
            if not isinstance(a, dict):
                raise FormatError(f"{w}: not an object", path=str(self.manifest))
            size, name = _int(a, "size", w, self.manifest), a.get("file")
            if name is not None:
                self.blob(name, w, size)
            blocks.append(
                (str(a.get("region", "")), _int(a, "paddr", w, self.manifest), size, str(a.get("tag", "")), name)
            )
        files = {b[1]: b[4] for b in blocks if b[4] is not None}
        group = [(b[4] is None) * 2 + (self._files.get(b[1]) != b[4]) for b in blocks]
        self._files = files
        runs = merge_blocks([(b[1], b[2]) for b in blocks], group)
        return tuple(self._run([blocks[i] for i in run]) for run in runs)

    def _run(self, blocks: list[tuple[str, int, int, str, str | None]]) -> Allocation:
        """One allocation for address-contiguous ``blocks``; a run's joined bytes are built once and shared."""
        region, address, _, tag, name = blocks[0]
        size = sum(b[2] for b in blocks)
        tag = tag if len(blocks) == 1 else f"{len(blocks)} allocations from {tag or hex(address)}"
        if name is None:
            return Allocation(region, address, size, tag, None)
        key = tuple((b[1], b[4]) for b in blocks)
        if key not in self._runs:
            self._runs[key] = b"".join(self._blobs[str(b[4])] for b in blocks)
        return Allocation(region, address, size, tag, self._runs[key])

    def gx(self, e: dict[str, Any], seq: int, where: str) -> GxCommand:
        m = self.manifest
        kind = e.get("gx_cmd")
        memory = self.allocations(e.get("memory", []), where)
        if kind == "MemoryFill":
            fills = e.get("fill")
            if not isinstance(fills, list) or len(fills) > 2:
                raise FormatError(f"{where}: 'fill' must be a list of at most 2 units", path=str(m))
            units = tuple(
                Fill(*(_int(f, k, f"{where} fill", m) for k in ("start_paddr", "end_paddr", "value", "control")))
                for f in fills
            )
            return GxCommand(seq, kind, {"fills": units}, memory)
        if kind == "ProcessCommandList":
            size = _int(e, "cmdlist_size_bytes", where, m)
            data = _file(self.root, e.get("cmdlist_file"), where, size)
            flags = e.get("flags")
            flags = flags if isinstance(flags, dict) else {}
            args = {
                "address": _int(e, "cmdlist_paddr", where, m),
                "size": size,
                "data": data,
                "update_gas": int(bool(flags.get("update_gas_acc", 0))),
                "flush": int(bool(flags.get("flush", 0))),
            }
            return GxCommand(seq, kind, args, memory)
        if kind == "DisplayTransfer":
            keys = ("in_paddr", "out_paddr", "in_width", "in_height", "out_width", "out_height", "flags")
            return GxCommand(seq, kind, {k: _int(e, k, where, m) for k in keys}, memory)
        if kind == "TextureCopy":
            copy_keys = ("in_paddr", "out_paddr", "size", "in_line", "out_line", "flags")
            return GxCommand(seq, kind, {k: _int(e, k, where, m) for k in copy_keys}, memory)
        if kind == "RequestDma":
            args = {k: _int(e, k, where, m) for k in ("src_paddr", "dst_paddr", "size")}
            args["flush"] = int(bool(e.get("flush", 0)))
            return GxCommand(seq, kind, args, memory)
        if kind == "FlushCacheRegions":
            regions = e.get("regions", [])
            if not isinstance(regions, list) or len(regions) > CACHE_REGIONS:
                raise FormatError(f"{where}: 'regions' must be a list of at most {CACHE_REGIONS}", path=str(m))
            pairs = [(_int(r, "paddr", f"{where} region", m), _int(r, "size", f"{where} region", m)) for r in regions]
            return GxCommand(seq, kind, {"regions": tuple(pairs)}, memory)
        raise FormatError(f"{where}: unknown gx_cmd {kind!r}", path=str(m))

    def event(self, e: object, i: int) -> SceneEvent:
        """Event ``i`` of the manifest, checked."""
        if not isinstance(e, dict):
            raise FormatError(f"event #{i} is not an object", path=str(self.manifest))
        where = f"event #{e.get('seq', i)}"
        if e.get("type") == "present":
            return self.present(e, i, where)
        if e.get("type") == "gx":
            return self.gx(e, i, where)
        raise FormatError(f"{where}: unknown event type {e.get('type')!r}", path=str(self.manifest))

    def present(self, e: dict[str, Any], seq: int, where: str) -> Present:
        m = self.manifest
        screen = e.get("screen")
        if screen not in SCREENS:
            raise FormatError(f"{where}: screen must be 'top' or 'bottom', got {screen!r}", path=str(m))
        return Present(
            seq,
            SCREENS[screen],
            _int(e, "fb_a_paddr", where, m),
            _int(e, "fb_b_paddr", where, m),
            _int(e, "stride", where, m),
            _int(e, "mode", where, m),
            _int(e, "swap", where, m) & 1,
        )


def read(path: str | os.PathLike[str]) -> Scene:
    """The scene in directory ``path`` (or the directory of a ``manifest.json``)."""
    root = Path(path)
    if root.name == MANIFEST:
        root = root.parent
    loader = _Loader(root)
    if not loader.manifest.is_file():
        raise FormatError("not a c3dcap scene: no manifest.json", path=str(root))
    if loader.manifest.stat().st_size > MAX_MANIFEST_BYTES:
        raise FormatError("manifest.json is implausibly large", path=str(loader.manifest))
    try:
        text = loader.manifest.read_bytes().decode()
        doc, events_at = json_stream.members(text, "events")
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise FormatError(f"manifest.json is not JSON: {err}", path=str(loader.manifest)) from None
    if doc.get("format") != FORMAT:
        raise FormatError(f"manifest format is {doc.get('format')!r}, expected {FORMAT!r}", path=str(loader.manifest))
    if events_at is None:
        raise FormatError("manifest has no 'events' list", path=str(loader.manifest))
    mmap = doc.get("memory_map")
    mmap = mmap if isinstance(mmap, dict) else {}
    scene = Scene(str(doc.get("scene", root.name)), {k: v for k, v in mmap.items() if isinstance(v, int)})
    for i, e in enumerate(json_stream.items(text, events_at)):  # one event's objects at a time
        scene.events.append(loader.event(e, i))
    return scene


def is_scene(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a c3dcap scene directory (or its manifest)."""
    p = Path(path)
    return (p / MANIFEST).is_file() or (p.name == MANIFEST and p.is_file())
