"""Headless batch: per-frame outputs named like the references, comparison of every frame, --update-references,
JUnit XML, exit statuses (1 regressed, 4 could not run), timeouts (cooperative and the hard kill of a stuck local
worker), and the samples passing against their references."""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from picaemu.batch.local import run_local
from picaemu.batch.task import decode_result, make_task
from picaemu.cli import main
from picaemu.cli.batch import EXIT_NOT_RUN, EXIT_REGRESSED
from samples.generate import CAPTURES, REFERENCE
from tests.test_replay import check_scene2


def run(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.stdout, res.stderr


def statuses(out: Path) -> dict[str, str]:
    return {c["name"]: c["status"] for c in json.loads((out / "report.json").read_text())["captures"]}


def test_every_frame_is_written_compared_and_reported(captures_dir: Path, tmp_path: Path) -> None:
    scene = captures_dir / "scene2_textured_quad"
    animation = CAPTURES / "animation.pica"
    out = tmp_path / "out"
    code, stdout, stderr = run("batch", str(scene), str(animation), "-o", str(out))
    assert code == 0, stderr
    check_scene2(np.asarray(Image.open(out / "scene2_textured_quad" / "0000.png")))
    for f in range(4):  # the rendered frames are the sample's references, pixel for pixel
        got = np.asarray(Image.open(out / "animation" / f"{f:04d}.png"))
        assert np.array_equal(got, np.asarray(Image.open(REFERENCE / "animation" / f"{f:04d}.png"))), f
    assert stdout.splitlines()[0].split("\t")[:3] == ["capture", "status", "frames"]  # TSV off a terminal
    assert [line.split("]")[0] for line in stderr.splitlines() if line.startswith("[")] == ["[1/2", "[2/2"]

    refs = tmp_path / "refs"
    shutil.copytree(out / "animation", refs / "animation")
    shutil.copytree(out / "scene2_textured_quad", refs / "scene2_textured_quad")
    bad = np.asarray(Image.open(refs / "animation" / "0002.png")).copy()
    bad[10:20, 30:40] += 3  # beyond the threshold of 2
    Image.fromarray(bad).save(refs / "animation" / "0002.png")
    shutil.copy(refs / "animation" / "0000.png", refs / "animation" / "0004.png")  # a frame the run lacks
    junit = tmp_path / "junit.xml"
    code, _, _ = run(
        "batch",
        str(scene),
        str(animation),
        "-o",
        str(tmp_path / "o2"),
        "--compare",
        str(refs),
        "--threshold",
        "2",
        "--junit",
        str(junit),
    )
    assert code == EXIT_REGRESSED
    report = {c["name"]: c for c in json.loads((tmp_path / "o2" / "report.json").read_text())["captures"]}
    assert report["scene2_textured_quad"]["status"] == "ok"
    frames = report["animation"]["checks"]
    assert [c["status"] for c in frames] == ["ok", "ok", "regression", "ok", "missing output"]
    assert frames[2]["bad_pixels"] == 100 and frames[2]["max_diff"] == 3 and frames[0]["psnr"] is None
    # PSNR by hand: 100 pixels x 3 channels off by 3 out of 240 x 400 x 3 values
    assert frames[2]["psnr"] == pytest.approx(10 * np.log10(255**2 / (100 * 3 * 9 / (240 * 400 * 3))), abs=0.01)
    diff = np.asarray(Image.open(tmp_path / "o2" / "animation" / "0002.diff.png"))
    assert (diff[10:20, 30:40] == (255, 0, 0)).all() and (diff == (255, 0, 0)).all(axis=2).sum() == 100
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert set(cases) == {"scene2_textured_quad", "animation"}
    assert cases["animation"].find("failure") is not None and cases["scene2_textured_quad"].find("failure") is None
    assert "frame 2: regression, 100 pixels differ by up to 3" in cases["animation"].find("failure").text


def test_update_references_then_compare_passes(tmp_path: Path) -> None:
    refs = tmp_path / "refs"
    (refs / "animation").mkdir(parents=True)
    (refs / "animation" / "0007.png").write_bytes(b"stale")  # a frame the capture no longer has
    code, _, _ = run(
        "batch",
        str(CAPTURES / "animation.pica"),
        "-o",
        str(tmp_path / "o"),
        "--compare",
        str(refs),
        "--update-references",
    )
    assert code == 0 and statuses(tmp_path / "o") == {"animation": "updated"}
    assert sorted(p.name for p in (refs / "animation").iterdir()) == [f"{f:04d}.png" for f in range(4)]
    code, _, _ = run("batch", str(CAPTURES / "animation.pica"), "-o", str(tmp_path / "o2"), "--compare", str(refs))
    assert code == 0 and statuses(tmp_path / "o2") == {"animation": "ok"}
    code, _, _ = run("batch", str(CAPTURES / "cube.pica"), "-o", str(tmp_path / "o3"), "--compare", str(refs))
    assert code == EXIT_REGRESSED and statuses(tmp_path / "o3") == {"cube": "missing reference"}


def test_a_capture_that_cannot_run_is_exit_4_and_a_junit_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.pica"
    broken.write_bytes(b"PICAcap\x1a" + bytes(4))
    junit = tmp_path / "j.xml"
    code, _, _ = run(
        "batch",
        str(broken),
        str(CAPTURES / "cube.pica"),
        "-o",
        str(tmp_path / "out"),
        "--jobs",
        "2",
        "--junit",
        str(junit),
        "--compare",
        str(REFERENCE),
    )
    assert code == EXIT_NOT_RUN
    report = json.loads((tmp_path / "out" / "report.json").read_text())["captures"]
    assert [c["status"] for c in report] == ["failed", "ok"] and "byte offset" in report[0]["error"]
    root = ET.parse(junit).getroot().find("testsuite")
    assert (root.get("tests"), root.get("errors"), root.get("failures")) == ("2", "1", "0")


def test_cooperative_timeout(tmp_path: Path) -> None:
    code, _, stderr = run(
        "batch", str(CAPTURES / "game_cubes_300.pica"), "-o", str(tmp_path / "o"), "--timeout", "0.001"
    )
    assert code == EXIT_NOT_RUN and statuses(tmp_path / "o") == {"game_cubes_300": "timeout"}
    assert "took longer than 0.001 s" in stderr


def test_a_stuck_worker_is_killed_and_replaced(tmp_path: Path) -> None:
    """A worker blocked where the cooperative check cannot reach (opening a FIFO nobody writes) is killed once its
    task's timeout and grace have passed; a fresh worker runs the next task."""
    fifo = tmp_path / "stuck.pica"
    os.mkfifo(fifo)
    stuck = {**make_task("stuck", str(fifo), 0.2), "grace": 0.3}
    fine = make_task("cube", str(CAPTURES / "cube.pica"), 60.0)
    results = [decode_result(data) for data in run_local([stuck, fine], jobs=1)]
    by_name = {outcome["name"]: (outcome, pictures) for outcome, pictures in results}
    assert by_name["stuck"][0]["status"] == "timeout" and "was killed" in by_name["stuck"][0]["error"]
    assert by_name["cube"][0]["status"] == "ok" and len(by_name["cube"][1]) == 1


def test_contradictory_batch_options(tmp_path: Path) -> None:
    cube = str(CAPTURES / "cube.pica")
    assert run("batch", cube, "-o", str(tmp_path), "--update-references")[0] == 2
    assert run("batch", cube, "-o", str(tmp_path), "-j", "2", "--scheduler", "tcp://127.0.0.1:1")[0] == 2
    code, _, stderr = run("batch", cube, "-o", str(tmp_path), "--compare", str(tmp_path))
    assert code == 2 and stderr.startswith("error: --compare names the output folder")


@pytest.mark.slow
def test_samples_pass_against_their_references(tmp_path: Path) -> None:
    """The README's CI line: every sample capture, every frame, against samples/reference."""
    code, stdout, stderr = run(
        "batch", str(CAPTURES), "-o", str(tmp_path / "out"), "--compare", str(REFERENCE), "-j", "2"
    )
    assert code == 0, stdout + stderr
    assert set(statuses(tmp_path / "out").values()) == {"ok"}
    assert len(statuses(tmp_path / "out")) == len(list(CAPTURES.glob("*.pica")))


def test_one_reference_picture_per_capture_and_named_size_mismatch(tmp_path: Path) -> None:
    """``REFDIR/<capture>.png`` is compared with the capture's last frame; a size mismatch is named in the
    summary table's error column."""
    animation = CAPTURES / "animation.pica"
    refs = tmp_path / "refs"
    refs.mkdir()
    shutil.copy(REFERENCE / "animation" / "0003.png", refs / "animation.png")  # the last of its 4 frames
    code, stdout, stderr = run("batch", str(animation), "-o", str(tmp_path / "out"), "--compare", str(refs))
    assert code == 0, stderr
    assert statuses(tmp_path / "out") == {"animation": "ok"}
    Image.fromarray(np.zeros((10, 20, 3), np.uint8)).save(refs / "animation.png")
    code, stdout, _ = run("batch", str(animation), "-o", str(tmp_path / "out"), "--compare", str(refs))
    assert code == EXIT_REGRESSED
    row = dict(zip(stdout.splitlines()[0].split("\t"), stdout.splitlines()[1].split("\t"), strict=True))
    assert row["status"] == "regression"
    assert row["error"] == "animation/0003.png: size 400x240 differs from the reference's 20x10"
