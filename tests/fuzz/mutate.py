"""A fast, seeded mutation engine (numpy RNG; no hypothesis) for the long fuzz campaign and the suite's short run.

Every input is a pure function of ``(kind, seed)`` (``make_input``), so any finding replays exactly:
``python bench/fuzz.py --replay KIND SEED``. Kinds:

- ``packets``: a command buffer of random packets (register ids drawn from the register table's triggers, data
  ports, jumps and config registers, and from the whole 10-bit id range; masks, consecutive flags, parameter
  counts biased small; parameter words from a pool of edge values) or a mutated real command list.
- ``capture``: .pica / .ctf file bytes. Either a seed file (the sample scenes as raw and zstd .pica and as CiTrace
  .ctf) with byte mutations (random bytes, bit flips, edge-value u32 words, truncation, duplicated and deleted
  chunks: mostly caught by the container checks and CRCs), or a sample capture mutated inside (its command lists,
  vertex data and other memory blocks, event fields, initial registers; events dropped, repeated, swapped) and
  written as a valid raw .pica, so the mutations reach the command processor, the engines and the pipeline.
- ``shbin``: a seed SHBIN (the samples' vertex and geometry shaders) with the same byte mutations, or mutated
  inside (code words, operand descriptors, DVLE entry / end, constants, outputs) and built again.
- ``texture``: random texture bytes with arbitrary format, size, level and offset.
- ``info``: captures mutated as for ``capture`` (the same mutations, its own random stream: other files) for
  ``picaemu info``.
- ``draw``: a sample capture whose draws get register fields (float fields mostly) overwritten with NaN, Inf,
  huge and random raw values, and sometimes NaN/Inf/huge VS float uniforms.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from pathlib import Path

import numpy as np
from picaemu.formats import citrace, pica
from picaemu.formats import shbin as shbin_format

from picaemu import regs as regtable
from picaemu.command.packets import header_word
from picaemu.errors import FormatError
from picaemu.gx import convert as gxconvert
from picaemu.regs import RegKind
from picaemu.regs.schema import _FLOATS, Field
from tests.fuzz.targets import Edit, TextureParams

KINDS = ("packets", "capture", "shbin", "texture", "draw", "info")  # new kinds last: the rng streams stay
REPO = Path(__file__).resolve().parents[2]
SAMPLE_CAPTURES = REPO / "samples" / "captures"
SHARED = REPO.parent / "shared" / "captures"
EDGE_WORDS = np.array(
    [
        0,
        1,
        2,
        3,
        4,
        7,
        8,
        0xFF,
        0x100,
        0xFFFF,
        0x10000,
        0x7FFFFF,
        0x7FFFFFFF,
        0x80000000,
        0xFFFFFFFF,
        0xFFFFFFFE,
        0x18000000,
        0x20000000,
        0x3F0000,
        0x7F0000,
        0x7F0001,
        0x12345678,
    ],
    np.uint64,
)
TEXTURE_FORMATS = [*range(-1, 16), "RGBA8", "ETC1", "ETC1A4", "bogus"]


def _register_ids() -> np.ndarray:
    """Ids to draw packet targets from: every trigger, port and jump twice over, plus every named register."""
    special = [r.id for r in regtable.all_registers() if r.kind is not RegKind.CONFIG or r.action is not None]
    return np.array(special * 2 + [r.id for r in regtable.all_registers()], np.int64)


REGISTER_IDS = _register_ids()


def _word(rng: np.random.Generator) -> int:
    if rng.random() < 0.5:
        return int(EDGE_WORDS[rng.integers(EDGE_WORDS.size)])
    return int(rng.integers(0, 1 << 32))


def random_packets(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` random packets as little-endian u32 words (see the module docstring)."""
    words: list[int] = []
    for _ in range(count):
        reg = int(REGISTER_IDS[rng.integers(REGISTER_IDS.size)]) if rng.random() < 0.9 else int(rng.integers(0x400))
        extra = int(min(rng.geometric(0.4) - 1, 255)) if rng.random() < 0.97 else int(rng.integers(256))
        mask = 0xF if rng.random() < 0.7 else int(rng.integers(16))
        words.append(_word(rng))
        words.append(header_word(reg, extra + 1, mask=mask, consecutive=bool(rng.random() < 0.4)))
        words += [_word(rng) for _ in range(extra)]
        if extra % 2:
            words.append(0)
    return np.array(words, np.uint64).astype("<u4")


def mutate_bytes(rng: np.random.Generator, data: bytes, *, keep_length: bool = False) -> bytes:
    """1-8 byte-level mutations of ``data`` (see the module docstring); ``keep_length``: only the in-place ones."""
    buf = bytearray(data)
    for _ in range(int(rng.integers(1, 9))):
        if not buf:
            break
        op = rng.integers(3 if keep_length else 6)
        pos = int(rng.integers(len(buf)))
        if op == 0:
            buf[pos] = int(rng.integers(256))
        elif op == 1:
            buf[pos] ^= 1 << int(rng.integers(8))
        elif op == 2:
            pos -= pos % 4
            buf[pos : pos + 4] = (_word(rng) & 0xFFFFFFFF).to_bytes(4, "little")
        elif op == 3:
            del buf[pos:]
        elif op == 4:
            end = min(len(buf), pos + int(rng.integers(1, 257)))
            buf[pos:pos] = buf[pos:end]
        else:
            del buf[pos : pos + int(rng.integers(1, 257))]
    return bytes(buf)


@functools.cache
def sample_captures() -> tuple[tuple[str, pica.Capture], ...]:
    return tuple((p.stem, pica.read(p)) for p in sorted(SAMPLE_CAPTURES.glob("*.pica")))


@functools.cache
def capture_seeds() -> tuple[bytes, ...]:
    """Seed files: each sample capture as raw and zstd .pica and as a CiTrace .ctf; the shared .ctf captures."""
    seeds: list[bytes] = []
    for _, cap in sample_captures():
        seeds.append(pica.build(cap, codec=pica.Codec.RAW))
        seeds.append(pica.build(cap, codec=pica.Codec.ZSTD))
        seeds.append(citrace.build(gxconvert.to_citrace(cap)[0]))
    seeds += [p.read_bytes() for p in sorted((SHARED / "citrace").glob("*.ctf"))]
    return tuple(seeds)


def _event_fields(rng: np.random.Generator, event: pica.Event, blobs: list[int], mutate: bool = True) -> pica.Event:
    """The event with its blob index remapped and, now and then, one integer field set to an edge value."""
    values = dict(vars(event))
    if "blob" in values:
        values["blob"] = blobs[values["blob"]]
    ints = [k for k, v in values.items() if isinstance(v, int) and k != "blob"]
    if mutate and ints and rng.random() < 0.1:
        values[ints[int(rng.integers(len(ints)))]] = _word(rng) if rng.random() < 0.5 else int(rng.integers(64))
    return type(event)(**values)


def mutate_capture(rng: np.random.Generator, cap: pica.Capture) -> bytes:
    """A sample capture mutated inside, written as raw .pica bytes (see the module docstring)."""
    new = pica.Capture(meta=dict(cap.meta), state=copy.deepcopy(cap.state))
    for _ in range(int(rng.integers(0, 3))):
        new.state.regs[int(rng.integers(new.state.regs.size))] = _word(rng)
    blobs = [
        new.blobs.add(mutate_bytes(rng, cap.blobs[i], keep_length=True) if rng.random() < 0.5 else cap.blobs[i])
        for i in range(len(cap.blobs))
    ]
    events = [_event_fields(rng, e, blobs) for e in cap.events]
    for _ in range(int(rng.integers(0, 3))):
        i, j = (int(k) for k in rng.integers(len(events), size=2))
        op = rng.integers(3)
        if op == 0:
            del events[i]
        elif op == 1:
            events.insert(i, events[j])
        else:
            events[i], events[j] = events[j], events[i]
        if not events:
            break
    new.events = events
    try:
        return pica.build(new, codec=pica.Codec.RAW)
    except FormatError:  # an edge value too wide for its field: keep the memory and register mutations
        new.events = [_event_fields(rng, e, blobs, mutate=False) for e in cap.events]
        return pica.build(new, codec=pica.Codec.RAW)


def mutate_program(rng: np.random.Generator, data: bytes) -> bytes:
    """A SHBIN mutated inside and built again (see the module docstring)."""
    program = shbin_format.parse(data)
    code = [(_word(rng) & 0xFFFFFFFF) if rng.random() < 0.15 else w for w in program.code]
    ops = tuple((_word(rng) & 0xFFFFFFFF, e) if rng.random() < 0.15 else (d, e) for d, e in program.opdescs)
    dvles = []
    for d in program.dvles:
        changes: dict[str, object] = {}
        if rng.random() < 0.3:
            changes["main_offset"] = int(rng.integers(len(code) + 2))
        if rng.random() < 0.3:
            changes["main_end"] = int(rng.integers(len(code) + 2))
        if d.constants and rng.random() < 0.3:
            changes["constants"] = tuple(dataclasses.replace(c, register=int(rng.integers(0x80))) for c in d.constants)
        if d.outputs and rng.random() < 0.3:
            changes["outputs"] = tuple(
                dataclasses.replace(o, register=int(rng.integers(16)), type=int(rng.integers(12))) for o in d.outputs
            )
        dvles.append(dataclasses.replace(d, **changes))
    mutated = dataclasses.replace(program, code=tuple(code), opdescs=ops, dvles=tuple(dvles))
    try:
        return shbin_format.build(mutated)
    except Exception:  # a value its field cannot hold: keep the code and descriptor mutations only
        return shbin_format.build(dataclasses.replace(program, code=tuple(code), opdescs=ops))


@functools.cache
def shbin_seeds() -> tuple[bytes, ...]:
    from picaemu.shader.asm import assemble
    from samples import _common, gs_sprites

    programs = [assemble(_common.VS_COLOR), assemble(_common.VS_TEX), assemble(gs_sprites.GS_SPRITE)]
    seeds = [shbin_format.build(p) for p in programs]
    return tuple(seeds + [p.read_bytes() for p in sorted((SHARED / "shaders").glob("*.shbin"))])


@functools.cache
def _fields() -> tuple[tuple[tuple[int, Field], ...], tuple[tuple[int, Field], ...]]:
    every = [(r.id, f) for r in regtable.all_registers() if r.kind is RegKind.CONFIG for f in r.fields]
    floats = [(reg_id, f) for reg_id, f in every if f.type in _FLOATS]
    return tuple(floats), tuple(every)


def _float_raw(rng: np.random.Generator, fld: Field) -> int:
    fmt = _FLOATS[fld.type]
    exp_all = ((1 << fmt.exp_bits) - 1) << fmt.mant_bits
    sign = 1 << (fmt.bits - 1)
    choices = (exp_all | 1, exp_all, exp_all | sign, exp_all - 1, sign | (exp_all - 1), 0, sign)
    return choices[int(rng.integers(len(choices)))] if rng.random() < 0.8 else int(rng.integers(1 << fmt.bits))


def hostile_edits(rng: np.random.Generator) -> list[Edit]:
    floats, every = _fields()
    edits: list[Edit] = []
    for _ in range(int(rng.integers(1, 5))):
        if rng.random() < 0.7:
            reg_id, fld = floats[int(rng.integers(len(floats)))]
            edits.append((reg_id, fld, _float_raw(rng, fld)))
        else:
            reg_id, fld = every[int(rng.integers(len(every)))]
            edits.append((reg_id, fld, int(rng.integers(1 << fld.width))))
    return edits


def hostile_uniforms(rng: np.random.Generator) -> np.ndarray | None:
    if rng.random() < 0.6:
        return None
    values = np.array([np.nan, np.inf, -np.inf, 3e38, -3e38, 0.0, 1e-30], np.float32)
    u = rng.normal(0, 2, (96, 4)).astype(np.float32)
    hit = rng.random((96, 4)) < rng.random()
    u[hit] = rng.choice(values, int(hit.sum()))
    return u


def texture_params(rng: np.random.Generator) -> TextureParams:
    sizes = [8, 16, 32, 64, 128] * 4 + [0, 1, 4, 7, 24, 1024, 2048, 1 << 20]
    side = lambda: int(rng.choice(sizes))  # noqa: E731
    width, height = side(), side()
    size = int(min(rng.integers(0, 1 << 16), 1 << 20))
    data = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
    fmt = TEXTURE_FORMATS[int(rng.integers(len(TEXTURE_FORMATS)))] if rng.random() < 0.3 else int(rng.integers(14))
    offset = int(rng.integers(-16, 64)) if rng.random() < 0.2 else 0
    return TextureParams(data, offset, width, height, fmt, int(rng.integers(-1, 12)) if rng.random() < 0.3 else 0)


def make_input(kind: str, seed: int) -> object:
    """The input ``seed`` of ``kind`` (deterministic; see the module docstring)."""
    rng = np.random.default_rng([KINDS.index(kind), seed])
    if kind == "packets":
        return random_packets(rng, int(rng.integers(1, 96)))
    if kind in ("capture", "info"):  # info: more captures mutated the same way, from a stream of their own
        if rng.random() < 0.6:
            captures = sample_captures()
            return mutate_capture(rng, captures[int(rng.integers(len(captures)))][1])
        seeds = capture_seeds()
        return mutate_bytes(rng, seeds[int(rng.integers(len(seeds)))])
    if kind == "shbin":
        seed = shbin_seeds()[int(rng.integers(len(shbin_seeds())))]
        return mutate_program(rng, seed) if rng.random() < 0.6 else mutate_bytes(rng, seed)
    if kind == "texture":
        return texture_params(rng)
    if kind == "draw":
        captures = sample_captures()
        return captures[int(rng.integers(len(captures)))][1], hostile_edits(rng), hostile_uniforms(rng)
    raise ValueError(f"unknown fuzz kind {kind!r}")
