"""Decode + apply throughput of the command processor on a synthetic citro3d-like buffer (>= 1 M words).

Mix per draw, modelled on what citro3d emits between two draws of a typical scene: projection and model-view
matrices (8 float24 vec4 = 24 words through the float-uniform FIFO), a consecutive viewport packet, masked
single config writes, two TEV stage packets, a texture unit setup, attribute-buffer setup, and the draw-arrays
sequence with its triggers (76 words per draw). Prints, in one run, the time of a plain compiled loop that only
reads the same words (the baseline), then packets/s, register writes/s and the fraction of the baseline's speed
for: decode + apply with draws recorded (the default ``CommandProcessor()``: draws counted and their registers
copied inside the compiled loop), with draws only counted (``record_draws=False``), with a pipeline attached
(every draw stops the loop for Python, as before issue 13), and with a minimal counting observer; then the time
of ``picaemu decode`` listing 100 k words of the same mix in each output mode.
Run: ``.venv/bin/python bench/bench_decode.py [--listing WORDS]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import tempfile
import time
from collections.abc import Callable

import numba
import numpy as np

from picaemu.cli import main as cli_main
from picaemu.command import listing
from picaemu.command.builder import CommandBuilder
from picaemu.command.packets import EXTRA_BITS, EXTRA_SHIFT, ID_MASK, ID_SHIFT
from picaemu.command.processor import CommandProcessor
from picaemu.draw import NullPipeline
from picaemu.observer import Observer, WriteEvent


def synthetic_buffer(min_words: int = 1_000_000) -> np.ndarray:
    unit = CommandBuilder()
    unit.upload_float_uniforms("VSH", 0, [(1.0, 0.5, 0.25, 2.0)] * 8)
    unit.write_many("VIEWPORT_WIDTH", [0x0045E000, 0x38111112, 0x00469000, 0x3747AE14])
    unit.write("GEOSTAGE_CONFIG", 0, mask=0x3)
    unit.write("PRIMITIVE_CONFIG", 0x100, mask=0x2)
    unit.write_many(0x0C0, [0x00F000F0, 0x00000000, 0x00000000, 0xFFFFFFFF, 0x00000000])
    unit.write_many(0x0C8, [0x00E000E0, 0x00000000, 0x00010001, 0xFF8040FF, 0x00000000])
    unit.write_many("TEXUNIT0_BORDER_COLOR", [0, 0x00400040, 0x2206, 0, 0x03004000])
    unit.write("TEXUNIT0_TYPE", 0)
    unit.write("TEXUNIT_CONFIG", 0x1001, mask=0xB)
    unit.write_many("ATTRIBBUFFER0_OFFSET", [0x100, 0x10, 0x2C0000])
    unit.write("RESTART_PRIMITIVE", 1)
    unit.write("NUMVERTICES", 3)
    unit.write("START_DRAW_FUNC0", 0, mask=1)
    unit.write("DRAWARRAYS", 1)
    unit.write("START_DRAW_FUNC0", 1, mask=1)
    unit.write("VTX_FUNC", 1)
    one = unit.words()
    reps = -(-min_words // one.size)
    return np.tile(one, reps)


@numba.njit(cache=True, nogil=True)
def plain_loop(words: np.ndarray) -> int:  # pragma: no cover - compiled
    """The baseline: walk the same packets and only read every word (header fields and parameters), folding each
    into an order-dependent hash so nothing can be skipped or vectorised away."""
    pos, acc, end = 0, np.uint64(0), words.size
    while pos + 1 < end:
        hdr = np.int64(words[pos + 1])
        extra = (hdr >> EXTRA_SHIFT) & EXTRA_BITS
        reg = (hdr >> ID_SHIFT) & ID_MASK
        for k in range(min(extra + 1, end - pos - 1)):
            v = np.int64(words[pos]) if k == 0 else np.int64(words[pos + 1 + k])
            acc = acc * np.uint64(31) + np.uint64(v ^ (reg + k))
        pos += 2 + extra + (extra & 1)
    return acc


class Counting(Observer):
    def __init__(self) -> None:
        self.writes = 0

    def on_write(self, event: WriteEvent) -> None:
        self.writes += 1


class Discard(NullPipeline):
    """Renders nothing, but is a pipeline: every draw stops the compiled loop and runs in Python (the path of a
    real pipeline, and of every draw before the loop handled them)."""


def measure(words: np.ndarray, repeats: int = 7, observer: Observer | None = None, **kw) -> tuple[float, int, int]:
    best = float("inf")
    for _ in range(repeats):
        cp = CommandProcessor(**kw)
        if observer is not None:
            cp.attach(observer)
        t0 = time.perf_counter()
        result = cp.run(words)
        best = min(best, time.perf_counter() - t0)
    return best, result.packets, result.writes


def listing_times(words: np.ndarray, repeats: int = 3) -> None:
    """``picaemu decode`` of ``words`` (in-process, output captured) per mode, field-decode cache cleared first."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "list.bin")
        with open(path, "wb") as f:
            f.write(words.tobytes())
        for mode in ([], ["--writes"], ["--json"]):
            best, lines = float("inf"), 0
            for _ in range(repeats):
                listing._decoded.cache_clear()
                out = io.StringIO()
                t0 = time.perf_counter()
                with contextlib.redirect_stdout(out):
                    cli_main(["decode", path, *mode], standalone_mode=False)
                best = min(best, time.perf_counter() - t0)
                lines = out.getvalue().count("\n")
            print(f"picaemu decode {' '.join(mode) or '(packets)':10s}: {best:6.2f} s  {lines:,} lines")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--listing",
        type=int,
        default=100_000,
        metavar="WORDS",
        help="also time `picaemu decode` on a list of this many words (0: skip)",
    )
    args = ap.parse_args()
    words = synthetic_buffer()
    plain_loop(words[:16])
    measure(synthetic_buffer(1), 1)  # compile / load the cached kernel
    t_loop = min(_timed(lambda: plain_loop(words)) for _ in range(9))
    print(f"buffer: {words.size:,} words ({words.nbytes / 1e6:.1f} MB), {synthetic_buffer(1).size} words per draw")
    print(
        f"plain compiled loop reading the same words: {t_loop * 1e3:8.2f} ms ({words.size / t_loop / 1e6:5.0f} M "
        "words/s)"
    )
    cases = (
        ("decode + apply, draws recorded", {}, 15),
        ("decode + apply, draws counted", {"record_draws": False}, 15),
        ("draws stop in Python (pipeline)", {"pipeline": Discard()}, 3),
        ("counting observer", {"observer": Counting()}, 2),
    )
    for label, kw, repeats in cases:
        t, packets, writes = measure(words, repeats, **kw)
        print(
            f"{label:32s}: {t * 1e3:8.2f} ms  {packets / t / 1e6:6.2f} M packets/s  {writes / t / 1e6:6.1f} M "
            f"writes/s  1/{t / t_loop:.1f} of the plain loop"
        )
    if args.listing:
        listing_times(synthetic_buffer(args.listing))


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
