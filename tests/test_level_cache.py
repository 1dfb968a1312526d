"""The fused fragment path's decoded-level cache (``picaemu.texture.level_cache``): when a level is decoded (the
blocks decoded of it add up to its texels), what it decodes (``fetch.decode_level``, the staged decoder's texels), and
that a decoded level is never used once its bytes changed — directly, and in whole replays against the staged path:
draws rendering into the texture they sample (one compiled loop call), a CPU upload between the loop's calls; and
that a level left in memory filters from its tapped blocks (``tapped_level``) as from the whole level."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from picaemu.memory import PhysicalMemory
from picaemu.pipeline import Pipeline
from picaemu.regs.blocks.texturing import WRAP_MODES
from picaemu.replay import Replay
from picaemu.texture import level_cache
from picaemu.texture.decode import decode_level as staged_decode
from picaemu.texture.fetch import KIND_ETC1, KIND_ETC1A4, KIND_OF_ETC, KIND_PACKED, channel_fields, decode_level
from picaemu.texture.filtering import BORDER, filter_2d, nearest_u8, round_u8, tapped_blocks
from picaemu.texture.filtering import wrap as wrap_texel
from picaemu.texture.formats import PACKED, TextureFormat, level_bytes
from picaemu.texture.level_cache import (
    BLOCK_TEXELS,
    E_SPENT,
    NOT_DECODED,
    T_ENTRIES,
    T_TEXELS,
    level_at,
    tapped_level,
)
from tests.test_fused_fragments import assert_same, scene
from tests.test_fused_loop import _facts
from tests.test_fused_textures import random_texture
from tests.test_pipeline import reference

REPEAT = next(code for code, name in WRAP_MODES.items() if name == "repeat")
WIDTH_LOG2, HEIGHT, START = 5, 16, 256  # an ETC1 level of 32 x 16 texels at byte 256
TEXELS, SIZE = (1 << WIDTH_LOG2) * HEIGHT, level_bytes(1 << WIDTH_LOG2, HEIGHT, TextureFormat.ETC1)
LAYOUT = (START, WIDTH_LOG2, 4, 0, 0, 0, 0, 0, 0, 0, 0, KIND_ETC1)


def _memory(seed: int = 0) -> np.ndarray:
    data = np.zeros(4096, np.uint8)
    data[START : START + SIZE] = np.random.default_rng(seed).integers(0, 256, SIZE, dtype=np.uint8)
    return data


def _decoded(data: np.ndarray, layout: tuple = LAYOUT) -> np.ndarray:
    """The level as the staged decoder gives it, in memory-row order (W * H, 4)."""
    image = staged_decode(data[layout[0] : layout[0] + SIZE], TextureFormat.ETC1, 1 << WIDTH_LOG2, HEIGHT)
    return image.reshape(-1, 4)


def _lookup(cache: tuple, data: np.ndarray, taps: int, region: int = 0, layout: tuple = LAYOUT) -> np.ndarray | None:
    """The level's decoded texels from the cache, or None (read from memory)."""
    at = level_at(cache, region, data, layout, HEIGHT, SIZE, taps)
    return None if at < 0 else cache[2][at : at + TEXELS].copy()


def _book(cache: tuple, data: np.ndarray, at: int, st_: np.ndarray, layout: tuple = LAYOUT) -> int:
    """``tapped_level`` of ``level_at``'s answer ``at`` at the coordinates ``st_``; the texels it booked."""
    row = -2 - at
    before = int(cache[0][row, E_SPENT])
    tapped_level(cache, at, data, layout, HEIGHT, st_, REPEAT, REPEAT)
    return int(cache[0][row, E_SPENT]) - before


def test_a_level_is_decoded_once_the_blocks_decoded_of_it_reach_its_texels() -> None:
    """Rent or buy: draws that leave the level in memory book the blocks they decode (16 texels each); a draw
    decodes the level once those plus what it would decode itself reach the level's texels."""
    cache, data = level_cache.new(), _memory()
    corner = np.full((1, 2), 0.01, np.float32)  # one fragment: the 4 blocks around texel (0, 0), repeated
    at = level_at(cache, 0, data, LAYOUT, HEIGHT, SIZE, 1)
    assert at < NOT_DECODED  # a row to book on
    assert _book(cache, data, at, corner) == 4 * BLOCK_TEXELS
    at = level_at(cache, 0, data, LAYOUT, HEIGHT, SIZE, TEXELS - 4 * BLOCK_TEXELS - 1)  # one texel short
    assert at < NOT_DECODED
    assert _book(cache, data, at, corner) == 4 * BLOCK_TEXELS
    got = _lookup(cache, data, TEXELS - 8 * BLOCK_TEXELS)  # booked + wanted reach the level's texels
    assert got is not None
    assert np.array_equal(got, _decoded(data))
    one = np.empty((TEXELS, 4), np.uint8)
    decode_level(data, LAYOUT, one)
    assert np.array_equal(got, one)
    assert cache[1][T_TEXELS] == TEXELS  # decoded once: later lookups use it
    assert np.array_equal(_lookup(cache, data, 1), got)
    assert cache[1][T_TEXELS] == TEXELS
    assert _lookup(cache, data, 1, region=1) is None  # another region's level at the same offset: its own row
    assert _lookup(cache, data, TEXELS, region=2) is not None  # a draw alone that would decode as much: at once


def test_a_minified_draw_books_every_block_it_decodes() -> None:
    """A draw whose fragments each fall in other blocks (a texture minified) books all of them: the next such draw
    decodes the level, instead of every draw decoding most of its blocks."""
    cache, data = level_cache.new(), _memory()
    spread = np.stack(np.meshgrid(np.arange(8) / 8 + 1 / 16, np.arange(4) / 4 + 1 / 8), -1).reshape(-1, 2)
    spread = spread.astype(np.float32)  # 32 fragments, one per 4 x 4 block of the 32 x 16 level
    at = level_at(cache, 0, data, LAYOUT, HEIGHT, SIZE, 1)  # a draw of 1 tap, to leave the level in memory
    assert _book(cache, data, at, spread) == TEXELS  # all 32 blocks
    assert _lookup(cache, data, 1) is not None


@pytest.mark.parametrize(
    ("coords", "taps", "texels"),
    [
        ([(0.5, 0.5)], 100, 4 * BLOCK_TEXELS),  # one texel magnified: the 2 x 2 blocks around it, however many taps
        ([(0.0, 0.0), (1.0, 1.0)], 1, 4 * BLOCK_TEXELS),  # a tap: 4 blocks at most
        ([(0.0, 0.0), (1.0, 1.0)], 100, TEXELS),  # the whole level minified: all of it
        ([(-3.0, 0.2), (5.0, 0.3)], 100, TEXELS // 2),  # repeated along s: every column; rows 2 of 4
        ([(np.nan, 0.5)], 100, TEXELS),  # may tap anything
    ],
)
def test_texels_left_bounds_what_a_draw_would_decode(coords: list, taps: int, texels: int) -> None:
    """``texels_left``: the fewest of 4 blocks a tap, the blocks the coordinates' box reaches with a texel of
    margin, and the level (32 x 16 texels: 8 x 4 blocks)."""
    box = level_cache.coordinate_box(np.array(coords, np.float32))
    assert level_cache.texels_left(box, 1 << WIDTH_LOG2, HEIGHT, taps) == texels


def test_a_packed_level_is_booked_as_an_etc_one() -> None:
    """A block decoded costs the same texels whatever the format: a packed level follows the same rule."""
    cache, data = level_cache.new(), _memory()
    rgba8 = (START, WIDTH_LOG2, 32, 24, 16, 8, 0, 8, 8, 8, 8, KIND_PACKED)
    size = level_bytes(1 << WIDTH_LOG2, HEIGHT, TextureFormat.RGBA8)
    assert level_at(cache, 0, data, rgba8, HEIGHT, size, TEXELS - 1) < NOT_DECODED
    at = level_at(cache, 0, data, rgba8, HEIGHT, size, TEXELS)
    assert at >= 0
    expected = staged_decode(data[START : START + size], TextureFormat.RGBA8, 1 << WIDTH_LOG2, HEIGHT)
    assert np.array_equal(cache[2][at : at + TEXELS], expected.reshape(-1, 4))


@pytest.mark.parametrize("fmt", list(PACKED))
@pytest.mark.parametrize(("width_log2", "height"), [(3, 8), (5, 16), (3, 64)])
def test_a_packed_level_decodes_as_the_staged_decoder_does(fmt: str, width_log2: int, height: int) -> None:
    """``decode_level`` decodes a packed level a block (16 consecutive texels of a tile) at a time through each
    channel's table: the staged decoder's texels, memory-row order, the level ending where the bytes end."""
    size = level_bytes(1 << width_log2, height, TextureFormat[fmt])
    data = np.random.default_rng(width_log2 * height).integers(0, 256, 64 + size, dtype=np.uint8)
    texels = np.empty(((1 << width_log2) * height, 4), np.uint8)
    decode_level(data, (64, width_log2, PACKED[fmt].word_bits, *channel_fields(PACKED[fmt]), KIND_PACKED), texels)
    expected = staged_decode(data[64 : 64 + size], TextureFormat[fmt], 1 << width_log2, height)
    assert np.array_equal(texels, expected.reshape(-1, 4))


@pytest.mark.parametrize("fmt", ["ETC1", "ETC1A4"])
@pytest.mark.parametrize(("width_log2", "height"), [(3, 8), (5, 16), (6, 8), (3, 64)])
def test_an_etc_level_decodes_as_the_staged_decoder_does(fmt: str, width_log2: int, height: int) -> None:
    """``decode_level`` decodes an ETC level a block at a time: the staged decoder's texels, memory-row order."""
    kind = KIND_ETC1 if fmt == "ETC1" else KIND_ETC1A4
    size = level_bytes(1 << width_log2, height, TextureFormat[fmt])
    data = np.random.default_rng(width_log2 * height).integers(0, 256, 64 + size, dtype=np.uint8)
    texels = np.empty(((1 << width_log2) * height, 4), np.uint8)
    decode_level(data, (64, width_log2, 4, 0, 0, 0, 0, 0, 0, 0, 0, kind), texels)
    expected = staged_decode(data[64 : 64 + size], TextureFormat[fmt], 1 << width_log2, height)
    assert np.array_equal(texels, expected.reshape(-1, 4))


@pytest.mark.parametrize("where", [0, SIZE // 2, SIZE - 1])
def test_a_level_whose_bytes_changed_is_decoded_again(where: int) -> None:
    cache, data = level_cache.new(), _memory()
    before = _lookup(cache, data, TEXELS + 1)
    data[START + where] ^= 0x5A
    assert _lookup(cache, data, 1) is None  # never the old texels; its demand starts over
    after = _lookup(cache, data, TEXELS)
    assert after is not None
    assert np.array_equal(after, _decoded(data))
    assert not np.array_equal(after, before)


def test_a_trusted_call_compares_a_level_once_unless_a_draw_wrote_over_it() -> None:
    """While a trusted call runs (``level_cache.trusted``: the compiled loop's draws are memory's only writers), a
    level found equal is not compared again: a change no draw reported goes unseen there (the contract), a draw's
    reported bytes over it (``wrote``) bring the comparison back, and outside the call every lookup compares."""
    memory, data = PhysicalMemory(), _memory()
    cache = level_cache.for_memory(memory)
    assert _lookup(cache, data, TEXELS) is not None  # decoded
    with level_cache.trusted(memory):
        assert _lookup(cache, data, 1) is not None  # compared: equal
        data[START] ^= 0x5A  # behind the cache's back: breaks the contract, to show the comparison is skipped
        assert _lookup(cache, data, 1) is not None
        level_cache.wrote(cache, 0, START + SIZE, START + SIZE + 64)  # a draw's bytes beside the level
        assert _lookup(cache, data, 1) is not None
        level_cache.wrote(cache, 1, START, START + 1)  # over the level's offset, in another region
        assert _lookup(cache, data, 1) is not None
        level_cache.wrote(cache, 0, START + SIZE - 1, START + SIZE)  # over its last byte: compared, changed
        assert _lookup(cache, data, 1) is None
    assert _lookup(cache, data, TEXELS) is not None  # decoded again
    data[START] ^= 0x5A
    assert _lookup(cache, data, 1) is None  # no trusted call: compared


def test_a_full_cache_starts_over_and_a_level_larger_than_the_pool_is_never_kept() -> None:
    entries, top, _, _, scratch = level_cache.new()
    cache = (entries, top, np.empty((2 * TEXELS, 4), np.uint8), np.empty(2 * SIZE, np.uint8), scratch)
    data = np.zeros(4096, np.uint8)
    data[START : START + 3 * SIZE] = np.random.default_rng(1).integers(0, 256, 3 * SIZE, dtype=np.uint8)
    layouts = [(START + k * SIZE, *LAYOUT[1:]) for k in range(3)]
    for k, layout in enumerate(layouts):
        got = _lookup(cache, data, TEXELS + 1, layout=layout)
        assert got is not None
        assert np.array_equal(got, _decoded(data, layout))
        assert top[T_ENTRIES] == (1 if k == 2 else k + 1)  # the third did not fit: the cache started over
    assert _lookup(cache, data, 1, layout=layouts[0]) is None  # gone with the rest
    small = (entries, top, np.empty((TEXELS - 8, 4), np.uint8), np.empty(SIZE, np.uint8), scratch)
    top[:] = 0
    for _ in range(2):  # larger than the whole pool: read from memory, however many taps
        assert _lookup(small, data, 4 * TEXELS) is None
    assert top[T_TEXELS] == 0


def _texture_scene(fmt: str, before: list) -> tuple[pica.Capture, list[int]]:
    """``tests.test_fused_fragments.scene`` (3 draws of the same 8 random triangles: each taps more texels than the
    texture holds; no depth test, so each draw's colors land) sampling a 16 x 32 texture of random bytes,
    ``before[k]`` run before draw k with its address."""
    address: list[int] = []

    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        address.append(random_texture(b, rng, fmt, (16, 32), (0, 0), ("nearest", "linear", "nearest"), 0.0, (2, 3)))
        b.depth_test(False)

    steps = [lambda b, rng, f=f: f(b, address[0]) for f in before]
    return scene(setup, 7, draws=3, before=steps), address


def _assert_loop_matches_staged(capture: pica.Capture) -> Replay:
    """Staged and the compiled loop agree on every region's bytes and every draw's facts; returns the loop's."""
    fast = Replay(capture, checkpoints=False, pipeline=Pipeline())
    slow = Replay(capture, checkpoints=False, pipeline=reference())
    fast.run()
    slow.run()
    for region in fast.memory.regions:
        assert np.array_equal(fast.memory.region_bytes(region.name), slow.memory.region_bytes(region.name))
    assert _facts(fast) == _facts(slow)
    return fast


COVERED = 124 * 1024  # a byte offset in the scene's color buffer from which its triangles cover 2 KiB


def _texture_bytes(replay: Replay, address: int, fmt: str) -> bytes:
    return replay.memory.bytes(address, level_bytes(16, 32, TextureFormat[fmt])).tobytes()


@pytest.mark.parametrize("fmt", ["ETC1", "RGBA8"])
def test_draws_rendering_into_the_texture_they_sample_match_the_staged_path(fmt: str) -> None:
    """The color buffer overlaps the texture (its bytes from ``COVERED`` on, which the draws' triangles cover, are
    the texture's; the depth buffer moves to the old color buffer, away from it): each draw samples the texture and
    renders into it, all three in one state, so in one call of the compiled loop."""

    def into_texture(b: CaptureBuilder, address: int) -> None:
        b.set("DEPTHBUFFER_LOC", address=b.color)
        b.set("COLORBUFFER_LOC", address=address - COVERED)

    capture, address = _texture_scene(fmt, [into_texture])
    assert_same(capture)
    fast = _assert_loop_matches_staged(capture)
    assert fast.pipeline.compiled_count == 3
    unchanged, _ = _texture_scene(fmt, [])
    untouched = Replay(unchanged, checkpoints=False)
    untouched.run()
    assert _texture_bytes(fast, address[0], fmt) != _texture_bytes(untouched, address[0], fmt)  # it was written
    assert level_cache.for_memory(fast.memory)[1][T_TEXELS] > 16 * 32  # so decoded again after the first draw


def test_a_cpu_upload_between_loop_calls_is_seen() -> None:
    """Draw 0 decodes the texture into the cache; new bytes are uploaded over it before draw 1 (the loop returns
    to Python for the upload); draws 1 and 2 sample the new bytes."""

    def upload(b: CaptureBuilder, address: int) -> None:
        b.marker("upload")
        fresh = np.random.default_rng(9).integers(0, 256, level_bytes(16, 32, TextureFormat.ETC1), dtype=np.uint8)
        b.upload(fresh, vram=True, address=address)

    capture, _ = _texture_scene("ETC1", [lambda b, address: None, upload])
    assert_same(capture)
    fast = _assert_loop_matches_staged(capture)
    assert fast.pipeline.compiled_count == 3
    assert level_cache.for_memory(fast.memory)[1][T_TEXELS] == 2 * 16 * 32  # before and after the upload


TAPPED_FORMATS = ["ETC1", "ETC1A4", "RGBA8", "RGB8", "RGB565", "IA4", "I4", "A4"]
COORD = st.one_of(
    st.floats(-3.0, 3.0, width=32),
    st.sampled_from([0.0, 1.0, -0.0, np.nan, np.inf, -np.inf, 1e30, -1e30]),
)


@settings(max_examples=40, deadline=None)
@given(
    fmt=st.sampled_from(TAPPED_FORMATS),
    log2=st.tuples(st.integers(3, 6), st.integers(3, 6)),
    wrap=st.tuples(st.integers(0, 7), st.integers(0, 7)),
    coords=st.lists(st.tuples(COORD, COORD), min_size=1, max_size=12),
    seed=st.integers(0, 2**16),
)
def test_the_blocks_a_draw_taps_filter_as_the_whole_level(fmt, log2, wrap, coords, seed) -> None:
    """A level left in memory has just the blocks its taps fall in decoded into the scratch (``tapped_level``):
    the filters read there exactly what they read from the whole level decoded, at any coordinates (NaN, infinite
    and huge ones decode every block), over a scratch holding stale bytes."""
    tf = TextureFormat[fmt]
    width, height = 1 << log2[0], 1 << log2[1]
    size = level_bytes(width, height, tf)
    data = np.random.default_rng(seed).integers(0, 256, 64 + size, dtype=np.uint8)
    if tf in KIND_OF_ETC:
        layout = (64, log2[0], 0, 0, 0, 0, 0, 0, 0, 0, 0, KIND_OF_ETC[tf])
    else:
        layout = (64, log2[0], PACKED[fmt].word_bits, *channel_fields(PACKED[fmt]), KIND_PACKED)
    whole = np.empty((width * height, 4), np.uint8)
    decode_level(data, layout, whole)
    cache = level_cache.new()
    cache[4][: width * height] = 0xA5  # stale
    st_ = np.array(coords, np.float32).reshape(-1, 2)
    tapped_level(cache, NOT_DECODED, data, layout, height, st_, *wrap)
    n, border = st_.shape[0], np.array([1, 2, 3, 4], np.uint8)
    zeros, sizes = np.zeros(n, np.int64), (np.array([width]), np.array([height]))
    for linear in (False, True):
        args = (np.zeros((1, 1), np.int64), *sizes, zeros, zeros, st_, np.full(n, linear), *wrap, border)
        assert np.array_equal(filter_2d(cache[4], *args), filter_2d(whole, *args), equal_nan=True)
    got, expected = np.empty((n, 4), np.uint8), np.empty((n, 4), np.uint8)
    nearest_u8(cache[4], 0, width, height, st_, *wrap, border, got)
    nearest_u8(whole, 0, width, height, st_, *wrap, border, expected)
    assert np.array_equal(got, expected)


@settings(max_examples=40, deadline=None)
@given(
    log2=st.tuples(st.integers(3, 6), st.integers(3, 6)),
    wrap=st.tuples(st.integers(0, 7), st.integers(0, 7)),
    coords=st.lists(st.tuples(COORD, COORD), min_size=1, max_size=40),
    seed=st.integers(0, 2**16),
)
def test_nearest_words_are_the_filtered_texels(log2, wrap, coords, seed) -> None:
    """``nearest_u8`` copies each texel (or the border color) as one word: the bytes ``filter_2d``'s nearest filter
    gives, rounded by ``round_u8``, channel by channel, with a border color of four different channels, at an image
    ``offset`` into the texels."""
    width, height, offset = 1 << log2[0], 1 << log2[1], 16
    texels = np.random.default_rng(seed).integers(0, 256, (offset + width * height, 4), dtype=np.uint8)
    st_ = np.array(coords, np.float32).reshape(-1, 2)
    n, border = st_.shape[0], np.array([10, 20, 130, 250], np.float32)
    zeros, offsets = np.zeros(n, np.int64), np.full((1, 1), offset, np.int64)
    filtered = filter_2d(texels, offsets, np.array([width]), np.array([height]), zeros, zeros, st_,
                         np.zeros(n, np.bool_), *wrap, border)  # fmt: skip
    expected, got = np.empty((n, 4), np.uint8), np.empty((n, 4), np.uint8)
    round_u8(filtered, expected)
    nearest_u8(texels, offset, width, height, st_, *wrap, border, got)
    assert np.array_equal(got, expected)


@settings(max_examples=30, deadline=None)
@given(
    log2=st.tuples(st.integers(3, 6), st.integers(3, 6)),
    wrap=st.tuples(st.integers(0, 7), st.integers(0, 7)),
    origin=st.tuples(st.floats(-2.5, 2.5, width=32), st.floats(-2.5, 2.5, width=32)),
    magnify=st.integers(1, 6),
    side=st.integers(1, 24),
)
def test_a_magnified_sprite_taps_every_block_of_its_texels(log2, wrap, origin, magnify, side) -> None:
    """``tapped_blocks`` skips a fragment whose blocks of k - 1 and k + 1 equal the previous fragment's: runs of
    fragments magnifying texels (a sprite's rows) still tap exactly the blocks of every fragment's 3 x 3 texels,
    wrapped fragment by fragment (across block edges, the level's edges and the border)."""
    width, height = 1 << log2[0], 1 << log2[1]
    j, i = np.mgrid[0:side, 0 : side * 2]  # rows of fragments, each texel magnified ``magnify`` times
    st_ = np.stack([origin[0] + i.ravel() / (width * magnify), origin[1] + j.ravel() / (height * magnify)], 1)
    st_ = st_.astype(np.float32)
    expected = set()
    for s, t in st_.astype(np.float64) * (width, height):
        for ds, dt in np.ndindex(3, 3):
            ws, wt = (
                wrap_texel(int(np.floor(s)) + ds - 1, width, wrap[0]),
                wrap_texel(int(np.floor(t)) + dt - 1, height, wrap[1]),
            )
            if ws != BORDER and wt != BORDER:
                expected.add(((height - 1 - wt) >> 2) * (width >> 2) + (ws >> 2))
    count = width * height >> 4
    seen, blocks = np.zeros(count, np.uint8), np.empty(count, np.int64)
    tapped = tapped_blocks(st_, width, height, *wrap, seen, blocks)
    assert tapped == len(expected) and set(blocks[:tapped].tolist()) == expected
