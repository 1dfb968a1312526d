"""``picaemu diff`` at game scale: a 1000-draw capture against itself and against a copy whose draw N uploads a
different model matrix (c4.w moved by 8: the cube moves), beside one plain render of the capture (the same
forward replay ``picaemu render`` runs, in the same warm process) — the issue-27 target is diff ≤ 3× one render.
Against itself twice: as ``picaemu diff`` runs it (side B follows side A over the events they share: here all of
them) and with ``share=False`` (side B replays everything, as under another backend).

The variant is made by rewriting the float24 words of the last vertex-shader float-uniform upload before the
draw's trigger in the captured command list (same packet, same size: only the uploaded value changes).

Run from the repository root: ``python bench/bench_capdiff.py [--capture samples/captures/game_cubes_1000.pica]
[--draw 500] [--repeat 5]`` (a first run compiles the kernels; the figures are of the warm process): medians of
the seconds and of each diff's ratio to the render run just before it. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from picaemu.formats import pica  # noqa: E402

from picaemu import numeric  # noqa: E402
from picaemu.debug.capture_diff import diff_captures  # noqa: E402
from picaemu.regs import id_of  # noqa: E402
from picaemu.replay import Replay, load_capture  # noqa: E402

DEFAULT = ROOT / "samples" / "captures" / "game_cubes_1000.pica"

CLOCK = [time.perf_counter]  # ``--cpu``: time.process_time (the kernels run on the calling thread)


def uniform_variant(capture: pica.Capture, draw: int, delta: float = 8.0) -> pica.Capture:
    """A copy of ``capture`` whose last float-uniform upload before ``draw`` sends its first vector with w moved
    by ``delta`` (a model matrix's translation)."""
    replay = Replay(capture, checkpoints=False)
    replay.run()
    record = replay.draws[draw]
    port = id_of("VSH_FLOATUNIFORM_DATA0")
    packet = next(p for p in reversed(replay.packets(record.event)[: record.list_packet]) if p.id == port)
    x, y, z, w = (float(numeric.f24(v)) for v in numeric.unpack_f24_vec4(*packet.params[:3]))
    words = numeric.pack_f24_vec4(x, y, z, w + delta)
    listed = capture.events[record.event]
    index, write = [  # the last CPU write of the list's memory before it runs
        (i, e)
        for i, e in enumerate(capture.events[: record.event])
        if isinstance(e, pica.MemoryWrite) and e.address <= listed.address < e.address + len(capture.blobs[e.blob])  # type: ignore[union-attr]
    ][-1]
    data = bytearray(capture.blobs[write.blob])
    base = listed.address - write.address + packet.offset  # type: ignore[union-attr]
    for k, word in enumerate(words):  # parameter 0 comes before the header word, the others after it
        at = base + (0 if k == 0 else 4 + 4 * k)
        data[at : at + 4] = word.to_bytes(4, "little")
    events = list(capture.events)
    events[index] = dataclasses.replace(write, blob=capture.blobs.add(bytes(data)))
    variant = dataclasses.replace(capture, events=events)
    before, at = (_uniforms_at(variant, d) == _uniforms_at(capture, d) for d in (draw - 1, draw))
    if not before.all() or at.all():
        raise SystemExit(f"no upload serves draw {draw} alone (one upload serves many draws)")
    return variant


def _uniforms_at(capture: pica.Capture, draw: int) -> np.ndarray:
    replay = Replay(capture, checkpoints=False)
    replay.run_to_draw(draw)
    return replay.state.vs.float_uniforms.copy()


def seconds(fn) -> tuple[float, object]:
    start = CLOCK[0]()
    value = fn()
    return CLOCK[0]() - start, value


def render(capture: pica.Capture) -> None:
    replay = Replay(capture, checkpoints=False, record_draws=False)
    replay.run()
    replay.screen("top")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--capture", type=Path, action="append", help="default: the 1000-draw cubes scene")
    parser.add_argument("--draw", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--cpu", action="store_true", help="time with the process's CPU clock (steadier than wall on a busy machine)"
    )
    args = parser.parse_args()
    if args.cpu:
        CLOCK[0] = time.process_time
    print(
        f"| capture | render | diff, equal | equal, both replayed | diff, draw {args.draw} differs | same, `--every 1` "
        "| changed pixels |"
    )
    print("|---|---|---|---|---|---|---|")
    for path in args.capture or [DEFAULT]:
        print(measure(path, args.draw, args.repeat))


def measure(path: Path, draw: int, repeat: int) -> str:
    """One table row: per kind of diff, the median over ``repeat`` runs of its seconds and of its ratio to the
    render run just before it (a pair sees about the same load on a busy machine); a uniform variant only where
    one can be made."""
    capture = load_capture(path)
    try:
        variant: pica.Capture | None = uniform_variant(capture, draw)
    except SystemExit as why:
        variant, note = None, str(why)
    render(capture)  # loads the kernels
    kinds = {
        "equal": lambda: diff_captures(capture, capture),
        "replayed": lambda: diff_captures(capture, capture, share=False),
    }
    if variant is not None:
        kinds["differs"] = lambda: diff_captures(capture, variant)
        kinds["exact"] = lambda: diff_captures(capture, variant, every=1)
    renders: list[float] = []
    runs: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
    pixels = 0
    for _ in range(repeat):
        for kind, fn in kinds.items():
            t_render, _ = seconds(lambda: render(capture))
            t, result = seconds(fn)
            renders.append(t_render)
            runs[kind].append((t, t / t_render))
            equal = kind in ("equal", "replayed")
            assert result.equal if equal else result.first_draw == draw, result.summary()
            pixels = pixels if equal else result.pixels["color"]["count"]
    cells = [
        f"{statistics.median(t for t, _ in runs[kind]):.3f} s (×{statistics.median(x for _, x in runs[kind]):.1f})"
        for kind in kinds
    ]
    rest = " | ".join([*cells[2:], str(pixels)]) if variant is not None else f"— ({note}) | — | —"
    return f"| {path.name} | {statistics.median(renders):.3f} s | {cells[0]} | {cells[1]} | {rest} |"


if __name__ == "__main__":
    main()
