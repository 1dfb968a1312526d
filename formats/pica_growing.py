"""A ``.pica`` file that grows frame by frame (``picaemu record --live``), each version complete and valid.

The file on disk is only ever replaced whole (``write_atomic``: temporary file + rename), so a reader, a lost link
or a killed recorder finds the previous complete version, never half a frame; every ``.pica`` reader's guarantee
holds unchanged (no new layout, no partial sections). What makes rewriting per frame cheap is that nothing done
for an earlier frame is redone: each frame's events are merged (``memory_runs.merge_writes``: a run of memory
writes never spans a FrameEnd, so merging frame by frame equals merging the whole capture), encoded and their new
blobs compressed once; a new version is the concatenation of what is kept plus one compression of the event
section. The bytes equal ``pica.build`` of the same capture (tests/test_record_live.py).
"""

from __future__ import annotations

import os

from picaemu.formats import pica
from picaemu.formats.memory_runs import merge_writes
from picaemu.formats.pica_io import Codec


class GrowingFile:
    """The bytes of a capture under construction: ``add_frame`` per complete frame, ``data`` for the file now,
    ``write`` to replace ``path`` with it. ``source`` is the blob store the added events name (the recorder's)."""

    def __init__(self, state: pica.InitialState, source: pica.BlobStore, codec: Codec = Codec.ZSTD) -> None:
        self.source, self.codec = source, codec
        self.store = pica.BlobStore()
        self._kept: dict[int, int] = {}
        self._packed: list[tuple[Codec, int, bytes]] = []  # per blob of ``store``: pica.pack_blob
        self._encoded: list[bytes] = []  # per event: pica.event_bytes
        self.events: list[pica.Event] = []
        self.minor_1 = False
        memory = [(address, self._keep(blob)) for address, blob in state.memory]
        self._state_section = pica.section(
            b"STAT", pica.build_state(pica.InitialState(**{**vars(state), "memory": memory})), codec
        )

    def _keep(self, index: int) -> int:
        if index not in self._kept:
            self._kept[index] = self._add(self.source[index])
        return self._kept[index]

    def _add(self, data: bytes) -> int:
        index = self.store.add(data)
        if index == len(self._packed):  # a new blob: compressed now, once
            self._packed.append(pica.pack_blob(data, self.codec))
        return index

    def add_frame(self, events: list[pica.Event]) -> None:
        """Append one frame's events (ending with its FrameEnd), merged as ``pica.merged`` would merge them."""
        for event in merge_writes(events, self.source, self._keep, self._add):
            self._encoded.append(pica.event_bytes(len(self.events), event))
            self.events.append(event)
            self.minor_1 = self.minor_1 or isinstance(event, pica.MINOR_1_EVENTS)

    def data(self, meta: dict[str, str], call_sites: dict[int, pica.CallSite]) -> bytes:
        """The whole file as it stands."""
        events = len(self._encoded).to_bytes(4, "little") + b"".join(self._encoded)
        blobs = pica.blob_payload(self._packed)
        return pica.assemble(meta, self._state_section, blobs, events, call_sites, self.minor_1, self.codec)

    def write(self, path: str | os.PathLike[str], meta: dict[str, str], call_sites: dict[int, pica.CallSite]) -> int:
        """Replace ``path`` with the file as it stands (atomically); returns its size in bytes."""
        data = self.data(meta, call_sites)
        pica.write_atomic(path, data)
        return len(data)
