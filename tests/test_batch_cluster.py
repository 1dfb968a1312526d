"""``picaemu batch --scheduler``: the same batch on a Dask LocalCluster of 2 worker processes gives the same
pictures, statuses and reports as the local worker processes; captures travel to the workers as bytes (the workers
read no capture from disk); an unreachable scheduler is one error line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from picaemu.cli import main
from samples.generate import CAPTURES, REFERENCE

distributed = pytest.importorskip("distributed", reason="the [cluster] extra (Dask distributed) is not installed")


def summary(out: Path) -> list[tuple[str, str, int, int]]:
    captures = json.loads((out / "report.json").read_text())["captures"]
    return [(c["name"], c["status"], c["frames"], c["draws"]) for c in captures]


def pictures(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*.png"))}


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
    ) as local:
        yield local


def test_cluster_results_equal_the_local_run(cluster, captures_dir: Path, tmp_path: Path) -> None:
    inputs = [
        str(CAPTURES / "animation.pica"),
        str(CAPTURES / "lit_sphere.pica"),
        str(captures_dir / "scene2_textured_quad"),
        str(captures_dir / "citrace" / "scene1_triangle.ctf"),
    ]
    broken = tmp_path / "broken.pica"
    broken.write_bytes(b"PICAcap\x1a" + bytes(4))
    runner = CliRunner()
    local = runner.invoke(
        main, ["batch", *inputs, str(broken), "-o", str(tmp_path / "local"), "-j", "2", "--compare", str(REFERENCE)]
    )
    remote = runner.invoke(
        main,
        [
            "batch",
            *inputs,
            str(broken),
            "-o",
            str(tmp_path / "remote"),
            "--scheduler",
            cluster.scheduler_address,
            "--compare",
            str(REFERENCE),
        ],
    )
    assert local.exit_code == remote.exit_code == 4, remote.output  # the broken capture could not run
    assert summary(tmp_path / "remote") == summary(tmp_path / "local")
    assert summary(tmp_path / "local")[0] == ("animation", "ok", 4, 4)
    assert pictures(tmp_path / "remote") == pictures(tmp_path / "local")
    names = {key.split("/")[0] for key in pictures(tmp_path / "local")}
    assert names == {"animation", "lit_sphere", "scene2_textured_quad", "scene1_triangle"}


def test_captures_travel_as_bytes(cluster, captures_dir: Path, tmp_path: Path) -> None:
    """What a worker gets is the capture's bytes (a scene folder's files below its name): the task's path is only
    a name there, so a path the worker cannot open still renders."""
    from picaemu.batch.cluster import run_cluster
    from picaemu.batch.task import decode_result, make_task, pack, render_task

    scene = captures_dir / "scene2_textured_quad"
    files = pack(scene)
    assert set(files) == {
        f"scene2_textured_quad/{p.relative_to(scene).as_posix()}" for p in scene.rglob("*") if p.is_file()
    }
    outcome, frames = decode_result(render_task(make_task("quad", str(tmp_path / "gone"), 60.0), files))
    assert outcome["status"] == "ok" and len(frames) == 1
    [result] = run_cluster([make_task("cube", str(CAPTURES / "cube.pica"), 60.0)], cluster.scheduler_address)
    outcome, frames = decode_result(result)
    assert outcome["status"] == "ok" and frames == [(REFERENCE / "cube" / "0000.png").read_bytes()]


def test_unreachable_scheduler_is_one_error_line(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        main, ["batch", str(CAPTURES / "cube.pica"), "-o", str(tmp_path), "--scheduler", "tcp://127.0.0.1:9"]
    )
    assert res.exit_code == 2 and res.stderr.count("\n") == 1
    assert res.stderr.startswith("error: cannot reach the Dask scheduler at tcp://127.0.0.1:9")
