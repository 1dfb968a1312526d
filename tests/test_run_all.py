"""bench/run_all.py: its table of headline figures, built from canned benchmark outputs (no benchmark runs here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def run_all():
    spec = importlib.util.spec_from_file_location("run_all", ROOT / "bench" / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_all"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    yield module
    del sys.modules["run_all"]


SHADER = """\
one call of run_vertex_shader on 100000 vertices: load 4 of 16 attributes, ...
uniform flow  : 20 instructions x 100000 vertices in 9.7 ms -> 10.33 M vertices/s (median 9.89), 206.7 M ...
divergent IFC : 100000 vertices in 13.4 ms -> 7.44 M vertices/s (1.39x the uniform-flow time)
4-vertex draw : 14 us per batch (median 16 us)
"""
FRAME = """\
| scene | draws | frame ms | merged ms | ratio | per draw | same | fresh: frame ms | merged ms | ratio |
|---|---|---|---|---|---|---|---|---|---|
| game_cubes_1000 | 1000 | 101.2 | 59.5 | x1.7 | 42 us | yes | 120.5 | 62.0 | x1.94 |
| game_sprites_1000 | 1000 | 105.4 | 86.3 | x1.2 | 19 us | yes | 110.0 | 88.1 | x1.25 |
"""
REPLAY = """\
| scene | frames | draws | median wall ms / frame | median CPU ms / frame | CPU <= 33 ms |
|---|---:|---:|---:|---:|:---:|
| triangle | 1 | 1 | 12.8 | 4.8 | yes |
| stencil | 1 | 3 | 104.6 | 22.6 | yes |
| fog | 1 | 1 | 10.3 | 6.3 | yes |

`picaemu render` sample texture_formats.pica: 5.88 s wall, process start to PNG (<= 1.5 s: NO)
"""


def bench(run_all, script: str):
    return next(b for b in run_all.BENCHES if b.script == script)


def test_figures_are_read_from_each_output(run_all):
    shader = run_all.figures(bench(run_all, "bench_shader.py"), run_all.Outcome(SHADER))
    assert [value for _, value, _ in shader] == ["10.33", "1.39", "14"]
    frame = run_all.figures(bench(run_all, "bench_frame.py"), run_all.Outcome(FRAME))
    # frame ms and the ratios; a scene the short run's output lacks is named, not guessed
    assert [value for _, value, _ in frame] == ["101.2", "1.7", "1.2", "not in output", "1.94"]


def test_pick_max_takes_the_largest_cell_of_a_column(run_all):
    replay = run_all.figures(bench(run_all, "bench_replay.py"), run_all.Outcome(REPLAY))
    assert replay[0][1:] == ("22.6", "ms")  # stencil's CPU ms, not the first row's 4.8 nor a wall-time cell
    assert replay[1][1] == "5.88"


def test_table_rows_name_the_bench_once_and_say_why_a_bench_gave_nothing(run_all):
    shader = bench(run_all, "bench_shader.py")
    failed = run_all.Outcome("", returncode=1, wall_s=2.0, cpu_s=1.0, problem="failed (exit 1): ImportError: x|y")
    lines = run_all.table(
        [(shader, run_all.Outcome(SHADER, wall_s=3.4, cpu_s=1.2)), (bench(run_all, "fuzz.py"), failed)]
    )
    assert lines[:2] == [
        "| benchmark (short settings) | figure | value | unit | timed in | run wall / CPU s |",
        "|---|---|---|---|---|---|",
    ]
    assert (
        lines[2] == "| `bench_shader.py` | 20-instruction shader, 100 k vertices | 10.33 | M vertices/s | CPU | 3 / 1 |"
    )
    assert lines[3].startswith("|  | divergent IFC vs uniform flow | 1.39 |")
    assert lines[5].startswith("| `fuzz.py --count packets=2000")
    assert "failed (exit 1): ImportError: x/y" in lines[5]  # a '|' in the message would break the table
    assert len(lines) == 6


def test_unmet_requirement_is_named_and_nothing_runs(run_all):
    needy = run_all.Bench("no_such_bench.py", (), (), ("program:picaemu-no-such-program",))
    outcome = run_all.run(needy, timeout_s=1.0)
    assert outcome.problem == "not run: needs the program picaemu-no-such-program"
    assert run_all.missing("module:picaemu_no_such_module") == "needs the Python module picaemu_no_such_module"
    assert run_all.missing("module:numpy") == ""


def test_every_benchmark_in_bench_is_in_the_table(run_all):
    listed = {b.script for b in run_all.BENCHES}
    on_disk = {p.name for p in (ROOT / "bench").glob("*.py")} - {"run_all.py"}
    assert listed == on_disk


def test_read_mode_rebuilds_the_table_from_saved_outputs(run_all, tmp_path, capsys):
    (tmp_path / "bench_shader.py.out").write_text(SHADER)
    run_all.main(["--only", "bench_shader", "--read", str(tmp_path)])
    out = capsys.readouterr().out
    assert "| `bench_shader.py` | 20-instruction shader, 100 k vertices | 10.33 | M vertices/s | CPU | — |" in out
    assert f"outputs read from {tmp_path}" in out
    assert "- machine: " in out and "- kernel cache: " in out
