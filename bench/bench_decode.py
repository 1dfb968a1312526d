"""Decode + apply throughput of the command processor on a synthetic citro3d-like buffer (>= 1 M words).

Mix per draw, modelled on what citro3d emits between two draws of a typical scene: projection and model-view
matrices (8 float24 vec4 = 24 words through the float-uniform FIFO), a consecutive viewport packet, masked
single config writes, two TEV stage packets, a texture unit setup, attribute-buffer setup, and the draw-arrays
sequence with its triggers (~100 words per draw). Prints packets/s and register
writes/s without an observer, with a minimal counting observer, and the ratio to a plain numpy pass over the
same memory. Run: ``.venv/bin/python bench/bench_decode.py``.
"""

from __future__ import annotations

import time

import numpy as np

from picaemu.command.builder import CommandBuilder
from picaemu.command.processor import CommandProcessor
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


class Counting(Observer):
    def __init__(self) -> None:
        self.writes = 0

    def on_write(self, event: WriteEvent) -> None:
        self.writes += 1


def measure(words: np.ndarray, observer: Observer | None, repeats: int = 7) -> tuple[float, int, int]:
    best = float("inf")
    for _ in range(repeats):
        cp = CommandProcessor()
        if observer is not None:
            cp.attach(observer)
        t0 = time.perf_counter()
        result = cp.run(words)
        best = min(best, time.perf_counter() - t0)
    return best, result.packets, result.writes


def main() -> None:
    words = synthetic_buffer()
    measure(synthetic_buffer(1), None, 1)  # compile / load the cached kernel
    t_memory = min(_timed(lambda: np.bitwise_xor.reduce(words)) for _ in range(5))
    print(f"buffer: {words.size:,} words ({words.nbytes / 1e6:.1f} MB), {synthetic_buffer(1).size} words per draw")
    print(f"numpy pass over the same memory: {t_memory * 1e3:.2f} ms ({words.size / t_memory / 1e6:.0f} M words/s)")
    for label, obs in (("no observer", None), ("counting observer", Counting())):
        t, packets, writes = measure(words, obs)
        print(
            f"{label:18s}: {t * 1e3:8.1f} ms  {packets / t / 1e6:6.2f} M packets/s  {writes / t / 1e6:6.2f} M writes/s"
            f"  (x{t / t_memory:.0f} the numpy pass)"
        )


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
