"""The framebuffer panel's "GL beside software" toggle (pytest-qt, offscreen): the lit sphere's draw rendered by
the OpenGL backend beside the software picture with the difference overlay and figures (a screenshot is saved),
and the one line the panel shows when the backend is unavailable. The first test needs EGL (skips like
tests/test_gl.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from picaemu.errors import BackendUnavailable
from tests.test_gl import REPO, needs_egl
from tests.test_gui_window import open_scene, settle, window  # noqa: F401 - the window fixture

pytestmark = pytest.mark.gui
CAPTURES = REPO / "samples" / "captures"


@needs_egl
def test_toggle_shows_gl_beside_software(qtbot, window, tmp_path: Path) -> None:  # noqa: F811
    open_scene(qtbot, window, CAPTURES / "lit_sphere.pica")
    fb = window.framebuffer
    assert not fb.gl_image.isVisible()
    fb.gl_box.setChecked(True)
    qtbot.waitUntil(lambda: fb.gl_diff is not None or "Error" in fb.gl_info.text(), timeout=60000)
    assert fb.gl_diff is not None, fb.gl_info.text()
    settle(qtbot, window)
    assert fb.gl_image.isVisible() and fb.gl_diff.draw == window.snapshot.last_draw == 0
    assert fb.gl_image.image.shape == fb.image.image.shape == (400, 240, 3)
    assert np.array_equal(fb.gl_image.image, fb.image.image)  # the lit sphere: GL equals the software picture
    assert fb.gl_info.text().startswith("OpenGL: draw 0: rendered by GL; max error 0")
    assert len(fb.gl_image._overlays) == 1 and fb.gl_diff.figures.max_error == 0
    window.grab().save(str(tmp_path / "gl_beside_software.png"))
    fb.gl_box.setChecked(False)
    assert not fb.gl_image.isVisible()


def test_unavailable_backend_is_one_line(qtbot, window) -> None:  # noqa: F811
    open_scene(qtbot, window, CAPTURES / "triangle.pica")

    def no_egl(session: object) -> None:
        raise BackendUnavailable("EGL has no usable display (install libegl1 and libegl-mesa0)")

    fb = window.framebuffer
    fb.gl_box.setChecked(True)
    settle(qtbot, window)
    window.worker.submit("backend_diff", no_egl)
    settle(qtbot, window)
    text = fb.gl_info.text()
    assert "EGL has no usable display" in text and "\n" not in text and fb.gl_diff is None
    assert fb.gl_image.image is None
