"""The batch HTML report in a real headless browser (Debian's chromium + chromium-driver, driven by selenium): the
page loads without console errors, every image resolves, sorting by a column and filtering by name and status
work. ``.ci/run`` installs the browser and sets ``PICAEMU_REQUIRE_BROWSER=1``, so there a missing browser fails;
elsewhere these tests skip with the reason."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from picaemu.cli import main
from samples.generate import CAPTURES

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (the [dev] extra)"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            return f"{path} is missing (apt-get install chromium chromium-driver; .ci/run does)"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _missing()
    if reason is not None:
        if os.environ.get("PICAEMU_REQUIRE_BROWSER"):
            pytest.fail(f"PICAEMU_REQUIRE_BROWSER is set but {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="picaemu-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """A batch with a passing capture, a regressed frame, a missing reference and a failed capture."""
    tmp = tmp_path_factory.mktemp("report")
    refs = tmp / "refs"
    runner = CliRunner()
    inputs = [str(CAPTURES / n) for n in ("animation.pica", "cube.pica", "triangle.pica")]
    assert (
        runner.invoke(
            main, ["batch", *inputs[:2], "-o", str(tmp / "first"), "--compare", str(refs), "--update-references"]
        ).exit_code
        == 0
    )
    frame = refs / "animation" / "0001.png"
    bad = np.asarray(Image.open(frame)).copy()
    bad[100:110, 200:220] = 255 - bad[100:110, 200:220]
    Image.fromarray(bad).save(frame)
    broken = tmp / "broken.pica"
    broken.write_bytes(b"PICAcap\x1a" + bytes(4))
    res = runner.invoke(main, ["batch", *inputs, str(broken), "-o", str(tmp / "out"), "--compare", str(refs)])
    assert res.exit_code == 4, res.output
    return tmp / "out" / "report.html"


def rows(driver) -> list[tuple[str, str, str]]:
    """(capture, frame, status) of the visible rows, in page order."""
    return [
        tuple(c.text for c in r.find_elements("tag name", "td")[:3])
        for r in driver.find_elements("css selector", "#results tbody tr")
        if r.is_displayed()
    ]


def test_report_loads_with_every_image_and_no_console_error(browser, report: Path) -> None:
    browser.get(report.as_uri())
    assert browser.title == "picaemu batch"
    problems = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert problems == []
    images = browser.find_elements("tag name", "img")
    assert len(images) == 4 * 2 + 1 + 1 + 1 * 2  # animation: 4 x (ref, out) + its diff; cube: ref, out; triangle: out
    broken = browser.execute_script(
        "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
    )
    assert broken == []
    assert len(rows(browser)) == 4 + 1 + 1 + 1
    statuses = {(c, f): s for c, f, s in rows(browser)}
    assert statuses[("animation", "1")] == "regression" and statuses[("triangle", "0")] == "missing reference"
    assert statuses[("broken", "")] == "failed" and statuses[("cube", "0")] == "ok"


def test_report_sorts_and_filters(browser, report: Path) -> None:
    browser.get(report.as_uri())
    header = {th.text.rstrip(" ▲▼"): th for th in browser.find_elements("css selector", "#results thead th")}
    header["bad pixels"].click()
    order = [r for r in rows(browser)]
    assert order[-1][:2] == ("animation", "1")  # the only frame with bad pixels sorts last ascending...
    header["bad pixels"].click()
    assert rows(browser)[0][:2] == ("animation", "1")  # ...and first descending
    header["capture"].click()
    names = [r[0] for r in rows(browser)]
    assert names == sorted(names)
    box = browser.find_element("id", "filter")
    box.send_keys("anim")
    assert {r[0] for r in rows(browser)} == {"animation"} and len(rows(browser)) == 4
    box.clear()
    box.send_keys(" ")  # 'input' events fire on typing; a space matches nothing
    assert rows(browser) == []
    box.send_keys("\b")
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("id", "status")).select_by_value("regression")
    assert [r[:3] for r in rows(browser)] == [("animation", "1", "regression")]
    assert browser.find_element("id", "shown").text == "1 of 7 rows"
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
