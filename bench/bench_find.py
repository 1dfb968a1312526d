"""Finding the draw that matters, at game scale (issue #16 item 1): on the bundled 1000-draw captures, the open
(read + index), each search of ``picaemu.debug.find`` (texture address, register writes, written value, shader
program, the program table), one draw's footprint thumbnail (median / max over 50 random draws) and the batch of
24 the Draws panel asks for when it shows a screenful.

Run from the repository root: ``python bench/bench_find.py [--captures samples/captures/game_cubes_1000.pica]``
(a first run compiles the kernels; the figures are of a second, warm process). Prints a Markdown table (ms).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from picaemu.debug import find, footprint, jobs  # noqa: E402
from picaemu.debug.session import Session  # noqa: E402
from picaemu.debug.state_views import bound_textures  # noqa: E402

DEFAULT = [ROOT / "samples" / "captures" / f"{name}.pica" for name in ("game_cubes_1000", "game_sprites_1000")]


def ms(fn) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn()
    return 1000 * (time.perf_counter() - start), value


def measure(path: Path) -> dict[str, str]:
    open_ms, session = ms(lambda: jobs.open_session(path))
    s: Session = session
    address = bound_textures(s.draw_states[len(s.draw_states) // 2])[0].addresses[0]
    program = find.draw_programs(s.draw_states)[0].split()[1]
    row = {"capture": path.stem, "draws": str(len(s.timeline.draws)), "open": f"{open_ms:.0f}"}
    for label, query in (
        ("texture", {"texture": address}),
        ("register", {"register": "TEXUNIT0_ADDR1"}),
        ("value", {"value": address >> 3}),
        ("shader", {"shader": program}),
    ):
        t, hits = ms(lambda query=query: find.find(s, **query))
        row[label] = f"{t:.1f} ({len(hits)} hits)"
    row["programs"] = f"{ms(lambda: find.program_table(s.draw_states))[0]:.1f}"
    rng = np.random.default_rng(16)
    times = [ms(lambda d=d: footprint.footprint(s, int(d)))[0] for d in rng.integers(0, len(s.timeline.draws), 50)]
    row["footprint median / max"] = f"{statistics.median(times):.1f} / {max(times):.1f}"
    row["24 footprints"] = f"{ms(lambda: jobs.footprints(s, list(range(500, 524))))[0]:.0f}"
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--captures", nargs="*", type=Path, default=DEFAULT)
    rows = [measure(p) for p in parser.parse_args().captures]
    print("| " + " | ".join(rows[0]) + " |")
    print("|" + "---|" * len(rows[0]))
    for r in rows:
        print("| " + " | ".join(r.values()) + " |")


if __name__ == "__main__":
    main()
