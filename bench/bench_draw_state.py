"""Per-draw state cost (picaemu/draw_state.py): what assembling a draw's ``DrawState`` costs after the writes a
game makes between two draws, beside the baseline of decoding every stage from the registers (the pipeline's way
before the cache, ``build_draw_state``), in the same run.

Cases, on the state of the bundled ``game_cubes_300`` capture at its last draw: nothing written; a draw call's
own writes (vertex range, topology) plus a matrix upload (VS uniforms); the same plus a texture rebind (the
texture part rebuilt from its registers, then remembered: a rebind to a texture seen before); the same plus a
TEV switch (likewise). Median of ``--repeat`` timings of each, in microseconds.

Run from the repository root: ``python bench/bench_draw_state.py [--repeat 2000]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from picaemu import draw_state as D  # noqa: E402
from picaemu.regs import id_of  # noqa: E402
from picaemu.replay import open as open_capture  # noqa: E402

G = D.Group
PER_DRAW = G.DRAW_RANGE | G.PRIMITIVE | G.VS_UNIFORMS | G.GS_UNIFORMS


def median_us(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    replay = open_capture(ROOT / "samples" / "captures" / "game_cubes_300.pica")
    replay.run()
    state = replay.state
    cache = D.DrawStateCache()
    cache.build(state)
    tex_reg, tev_reg = id_of("TEXUNIT0_ADDR1"), id_of("TEXENV0_COLOR")  # any word is a valid constant color
    tex0, tev0 = int(state.regs[tex_reg]), int(state.regs[tev_reg])
    flip = [0]

    def change(groups: int, fresh: bool) -> None:
        """Invalidate ``groups``; ``fresh``: new register contents (a memo miss), else alternate two contents."""
        flip[0] += 1
        if groups & G.TEXTURE0:
            state.regs[tex_reg] = tex0 + (flip[0] * 32 if fresh else (flip[0] & 1) * 32)
        if groups & G.TEV:
            state.regs[tev_reg] = (tev0 + (flip[0] if fresh else flip[0] & 1)) & 0xFFFFFFFF
        cache.invalidate(groups)
        cache.build(state)

    cases = [
        ("nothing written", lambda: (cache.invalidate(0), cache.build(state))),
        ("draw call + matrix upload", lambda: change(int(PER_DRAW), False)),
        ("+ texture rebind, seen before", lambda: change(int(PER_DRAW | G.TEXTURE0), False)),
        ("+ texture rebind, new address", lambda: change(int(PER_DRAW | G.TEXTURE0), True)),
        ("+ TEV switch, seen before", lambda: change(int(PER_DRAW | G.TEV), False)),
        ("+ TEV switch, new setup", lambda: change(int(PER_DRAW | G.TEV), True)),
        ("baseline: every stage decoded (no cache)", lambda: D.build_draw_state(state)),
    ]
    print("| per-draw state after | median µs |")
    print("|---|---|")
    for name, fn in cases:
        print(f"| {name} | {median_us(fn, args.repeat):.1f} |", flush=True)
    state.regs[tex_reg], state.regs[tev_reg] = tex0, tev0


if __name__ == "__main__":
    main()
