"""Headless batch: outputs, comparison against references, diff images, reports and exit status."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
from click.testing import CliRunner
from PIL import Image

from picaemu.cli import main
from tests.test_replay import check_scene2


def test_batch_renders_compares_and_reports(captures_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    scene = captures_dir / "scene2_textured_quad"
    legacy = captures_dir / "citrace" / "scene2_textured_quad.legacy.ctf"
    out = tmp_path / "out"
    res = runner.invoke(main, ["batch", str(scene), str(legacy), "-o", str(out)])
    assert res.exit_code == 0, res.output
    check_scene2(np.asarray(Image.open(out / "scene2_textured_quad.png")))
    check_scene2(np.asarray(Image.open(out / "scene2_textured_quad_legacy_ctf.png")))

    refs = tmp_path / "refs"
    refs.mkdir()
    shutil.copy(out / "scene2_textured_quad.png", refs)
    bad = np.asarray(Image.open(out / "scene2_textured_quad.png")).copy()
    bad[10:20, 30:40] += 3  # beyond the tolerance of 2
    Image.fromarray(bad).save(refs / "scene2_textured_quad_legacy_ctf.png")
    res = runner.invoke(main, ["batch", str(scene), str(legacy), "-o", str(tmp_path / "o2"), "--compare",
                               str(refs), "--tolerance", "2"])
    assert res.exit_code == 1
    report = json.loads((tmp_path / "o2" / "report.json").read_text())
    status = {c["name"]: c["status"] for c in report["captures"]}
    assert status == {"scene2_textured_quad": "ok", "scene2_textured_quad_legacy_ctf": "regression"}
    bad_pixels = {c["name"]: c["bad_pixels"] for c in report["captures"]}
    assert bad_pixels["scene2_textured_quad_legacy_ctf"] == 100
    diff = np.asarray(Image.open(tmp_path / "o2" / "scene2_textured_quad_legacy_ctf.diff.png"))
    assert (diff[10:20, 30:40] == (255, 0, 0)).all() and not (diff[:10] == (255, 0, 0)).all(axis=2).any()
    assert "regression" in (tmp_path / "o2" / "report.html").read_text()


def test_batch_failures_exit_nonzero(tmp_path: Path) -> None:
    broken = tmp_path / "broken.pica"
    broken.write_bytes(b"PICAcap\x1a" + bytes(4))
    res = CliRunner().invoke(main, ["batch", str(broken), "-o", str(tmp_path / "out"), "--jobs", "2"])
    assert res.exit_code == 1
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["captures"][0]["status"] == "failed" and "byte offset" in report["captures"][0]["error"]
