"""The construct grammar (packets.HEADER / PACKET) and the compiled decoders agree: the walker's header layout is
derived from the grammar, and on every real list and on random buffers the compiled list walker and the compiled
command loop see exactly the packets and register values construct parses."""

from __future__ import annotations

from pathlib import Path

import construct as cs
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from picaemu import regs
from picaemu.command import kernel as K
from picaemu.command import packets
from picaemu.command.listing import ListingObserver
from picaemu.command.packet_list import list_packets
from picaemu.command.packets import COMMAND_BUFFER, HEADER, PACKET, expand_mask, unpack_header
from picaemu.command.processor import CommandProcessor
from picaemu.command.tables import ACTION_TABLE

UNUSED_BITS = 0xFFFFFFFF & ~sum(bits << shift for shift, bits in packets.header_fields().values())
PLAIN_IDS = [i for i in range(K.NUM_REGS) if ACTION_TABLE[i] == K.A_PLAIN]  # no side effect: a store only


def _size(n_params: int) -> int:
    """Bytes of a packet of ``n_params`` parameters, padding word included (packets module docstring)."""
    return 4 * (1 + n_params + (n_params - 1) % 2)


def _parsed(data: bytes) -> list[tuple[int, int, int, bool, list[int]]]:
    """(byte offset, id, mask, consecutive, params) of every packet, by construct."""
    out, offset = [], 0
    for p in COMMAND_BUFFER.parse(data):
        out.append((offset, p.header.id, p.header.mask, p.header.consecutive, [p.first, *p.params]))
        offset += _size(1 + len(p.params))
    return out


def _plain_run(reg: int) -> int:
    """How many consecutive ids from ``reg`` on are plain registers (or ignored ids >= 0x300), at least 1."""
    n = 1
    while reg + n < K.NUM_REGS and ACTION_TABLE[reg + n] == K.A_PLAIN:
        n += 1
    return n if reg + n < K.NUM_REGS else 256


def _walked(data: bytes) -> list[tuple[int, int, int, bool, list[int]]]:
    found, error = list_packets(data)
    assert error is None
    return [(p.offset, p.id, p.mask, p.consecutive, list(p.params)) for p in found]


def _reference_regs(data: bytes) -> np.ndarray:
    """The register file after applying construct's packets by the rules of the packets module docstring."""
    regs = CommandProcessor().state.regs.copy()
    for _offset, reg0, mask, consecutive, params in _parsed(data):
        m = expand_mask(mask)
        for k, value in enumerate(params):
            reg = reg0 + k if consecutive else reg0
            if reg < K.NUM_REGS:
                regs[reg] = (int(regs[reg]) & ~m) | (value & m)
    return regs


def test_walker_layout_comes_from_the_grammar() -> None:
    fields = packets.header_fields()
    assert fields == {"consecutive": (31, 1), "extra": (20, 0xFF), "mask": (16, 0xF), "id": (0, 0xFFFF)}  # docstring
    assert fields["id"] == (packets.ID_SHIFT, packets.ID_MASK)
    assert fields["mask"] == (packets.MASK_SHIFT, packets.MASK_BITS)
    assert fields["extra"] == (packets.EXTRA_SHIFT, packets.EXTRA_BITS)
    assert fields["consecutive"] == (packets.CONSECUTIVE_SHIFT, 1)
    # a grammar with the fields in another order gives another layout: nothing is restated by hand
    swapped = cs.ByteSwapped(
        cs.BitStruct(
            "id" / cs.BitsInteger(16),
            "mask" / cs.BitsInteger(4),
            "extra" / cs.BitsInteger(8),
            "unused" / cs.Const(0, cs.BitsInteger(3)),
            "consecutive" / cs.Flag,
        )
    )
    assert packets.header_fields(swapped) == {
        "id": (16, 0xFFFF),
        "mask": (12, 0xF),
        "extra": (4, 0xFF),
        "consecutive": (0, 1),
    }


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 0xFFFF), st.integers(0, 0xF), st.integers(1, 256), st.booleans())
def test_header_word_is_what_construct_builds(reg_id: int, mask: int, n: int, consecutive: bool) -> None:
    word = packets.header_word(reg_id, n, mask, consecutive)
    built = HEADER.build({"consecutive": consecutive, "extra": n - 1, "mask": mask, "id": reg_id})
    assert word == int.from_bytes(built, "little")
    assert unpack_header(word) == (reg_id, mask, n - 1, consecutive)


def test_real_lists_walk_and_apply_as_construct_parses(captures_dir: Path) -> None:
    paths = sorted(captures_dir.glob("scene*/cmdlists/*.bin"))
    assert len(paths) == 3
    for path in paths:
        data = path.read_bytes()
        assert _walked(data) == _parsed(data), path.name
        expected = [
            (off, r0 + k if cons else r0, v, mask)
            for off, r0, mask, cons, ps in _parsed(data)
            for k, v in enumerate(ps)
        ]
        listing = ListingObserver()
        cp = CommandProcessor()
        cp.attach(listing)
        assert cp.run(data).finalized  # the first finalize stops the list: compare up to it
        got = [(w.offset, w.id, w.value, w.mask) for w in listing.writes]
        assert got == expected[: len(got)] and got[-1][1] == regs.id_of("FINALIZE"), path.name


packet = st.tuples(
    st.one_of(st.sampled_from(PLAIN_IDS), st.integers(K.NUM_REGS, 0xFFFF)),
    st.integers(0, 0xF),
    st.booleans(),
    st.lists(st.integers(0, 0xFFFFFFFF), min_size=1, max_size=12),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(packet, max_size=24))
def test_random_valid_buffers(spec: list[tuple[int, int, bool, list[int]]]) -> None:
    """Buffers built by construct from random packets: the walker lists them, the compiled loop applies them."""
    spec = [(reg, mask, cons, params[: _plain_run(reg)] if cons else params) for reg, mask, cons, params in spec]
    data = b"".join(
        PACKET.build(
            {
                "first": params[0],
                "params": params[1:],
                "padding": 0 if len(params) % 2 == 0 else None,
                "header": {"consecutive": cons, "extra": len(params) - 1, "mask": mask, "id": reg},
            }
        )
        for reg, mask, cons, params in spec
    )
    assert _walked(data) == _parsed(data)
    cp = CommandProcessor()
    cp.run(data)
    np.testing.assert_array_equal(cp.state.regs, _reference_regs(data))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 0xFFFFFFFF), max_size=64))
def test_random_words(words: list[int]) -> None:
    """Arbitrary words: the walker and construct agree on every packet construct accepts; where construct stops
    early, the walker ran out of buffer there too, or the header's unused bits were set (construct's Const)."""
    data = np.array(words, "<u4").tobytes()
    parsed = _parsed(data)
    found, error = list_packets(data)
    walked = [(p.offset, p.id, p.mask, p.consecutive, list(p.params)) for p in found]
    assert walked[: len(parsed)] == parsed
    if len(walked) > len(parsed):  # construct stopped at a packet the walker took: its unused bits are set
        pos = walked[len(parsed)][0] // 4
        assert words[pos + 1] & UNUSED_BITS
    elif error is None:
        assert sum(_size(len(p[4])) for p in parsed) == len(data)
