"""The real citro3d command lists decode to exactly the packets and writes their .txt listings show."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from picaemu.command.listing import ListingObserver
from picaemu.command.packet_list import list_packets
from picaemu.command.processor import CommandProcessor

ROW = re.compile(r"^([0-9a-f]{4}): \S+ \(0x([0-9A-F]{3})\)\s+mask=([0-9A-F]) (same|incr) n=(\d+)\s*(.*)$")


def parse_listing(path: Path) -> list[tuple[int, int, int, bool, list[int]]]:
    """(offset, id, mask, consecutive, params) per packet, read from the shared .txt listing."""
    packets: list[tuple[int, int, int, bool, list[int]]] = []
    for line in path.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        m = ROW.match(line)
        if m:
            params = [int(v, 16) for v in m.group(6).split()]
            offset, reg_id, mask = (int(m.group(i), 16) for i in (1, 2, 3))
            packets.append((offset, reg_id, mask, m.group(4) == "incr", params))
        else:  # continuation line with more parameters
            packets[-1][4].extend(int(v, 16) for v in line.split())
    return packets


def lists(captures_dir: Path) -> list[Path]:
    return sorted(captures_dir.glob("scene*/cmdlists/*.bin"))


def test_listings_exist(captures_dir: Path) -> None:
    assert len(lists(captures_dir)) == 3


@pytest.mark.parametrize("index", [0, 1, 2])
def test_packets_match_listing(captures_dir: Path, index: int) -> None:
    path = lists(captures_dir)[index]
    expected = parse_listing(path.with_suffix(".txt"))
    packets, error = list_packets(path.read_bytes())
    assert error is None
    got = [(p.offset, p.id, p.mask, p.consecutive, list(p.params)) for p in packets]
    assert got == expected


@pytest.mark.parametrize("index", [0, 1, 2])
def test_processor_writes_match_listing(captures_dir: Path, index: int) -> None:
    path = lists(captures_dir)[index]
    expected = [
        (off, rid + k if cons else rid, v)
        for off, rid, _mask, cons, params in parse_listing(path.with_suffix(".txt"))
        for k, v in enumerate(params)
    ]
    first_finalize = next(i for i, (_, rid, _) in enumerate(expected) if rid == 0x010)
    expected = expected[: first_finalize + 1]  # the first finalize raises the interrupt and stops the list
    listing = ListingObserver()
    cp = CommandProcessor()
    cp.attach(listing)
    result = cp.run(np.frombuffer(path.read_bytes(), "<u4"))
    assert result.finalized
    assert [(w.offset, w.id, w.value) for w in listing.writes] == expected
