"""Hypothesis strategies over the fuzz inputs, for property tests that want shrinking: each draws the seed of a
``mutate.make_input`` input (so a failure reports a seed that ``bench/fuzz.py --replay`` runs again) or, for
packets and texture parameters, builds the input from hypothesis' own choices."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from picaemu.command.packets import header_word
from tests.fuzz.mutate import EDGE_WORDS, REGISTER_IDS, TEXTURE_FORMATS
from tests.fuzz.targets import TextureParams

words = st.one_of(st.sampled_from([int(w) for w in EDGE_WORDS]), st.integers(0, 0xFFFFFFFF))


@st.composite
def packet(draw: st.DrawFn) -> list[int]:
    """One packet: first parameter, header, extra parameters, padding to 8 bytes."""
    reg = draw(st.one_of(st.sampled_from(sorted({int(r) for r in REGISTER_IDS})), st.integers(0, 0x3FF)))
    extra = draw(st.integers(0, 12) | st.integers(0, 255))
    out = [draw(words), header_word(reg, extra + 1, mask=draw(st.integers(0, 15)), consecutive=draw(st.booleans()))]
    out += [draw(words) for _ in range(extra)]
    return out + [0] * (extra % 2)


@st.composite
def command_buffer(draw: st.DrawFn) -> np.ndarray:
    """A command buffer of 1-24 packets, sometimes cut short (u32 words)."""
    out = [w for p in draw(st.lists(packet(), min_size=1, max_size=24)) for w in p]
    cut = draw(st.integers(0, len(out)))
    return np.array(out[:cut] if draw(st.booleans()) else out, np.uint64).astype("<u4")


@st.composite
def texture_params(draw: st.DrawFn) -> TextureParams:
    side = st.sampled_from([8, 16, 32, 64, 0, 1, 7, 24, 2048])
    width, height = draw(side), draw(side)
    data = draw(st.binary(max_size=4 * 64 * 64))
    fmt = draw(st.sampled_from(TEXTURE_FORMATS) | st.integers(0, 13))
    return TextureParams(data, draw(st.integers(-8, 64)), width, height, fmt, draw(st.integers(-1, 8)))


def seeds() -> st.SearchStrategy[int]:
    """Seeds of ``mutate.make_input`` inputs (captures, SHBINs, hostile draws)."""
    return st.integers(0, 2**31 - 1)
