"""The shader panel's line map (pytest-qt, offscreen): scene 1's vertex shader disassembled and assembled again
(the same words) with a line map; loaded in the panel, the listing and the trace's steps name the source line of
each instruction; a map written for other code is said in the panel and shows no source. Screenshots go to
``PICAEMU_SHOTS`` (default: the test's tmp_path)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from picaemu.formats import shbin

from picaemu.shader import linemap
from picaemu.shader.asm import assemble_with_map
from picaemu.shader.disasm_shbin import disassemble_files
from tests import test_gui_window
from tests.test_gui_find import shots
from tests.test_gui_window import WAIT_MS, open_scene, settle

pytestmark = pytest.mark.gui
window = test_gui_window.window


def _assembled_with_map(captures_dir: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    original = shbin.parse((captures_dir / "shaders" / "vs_color.shbin").read_bytes())
    text = disassemble_files(original)[0][1]
    source = tmp_path / "vs_color.vsh"
    source.write_text(text)
    _, line_map = assemble_with_map([(str(source), text)])
    out = tmp_path / "vs_color.shbin"  # only its sidecar is read
    linemap.write(out, line_map)
    return out, text.splitlines()


def test_line_map_shows_source_lines_in_listing_and_trace(qtbot, window, captures_dir: Path, tmp_path: Path) -> None:
    shbin_path, text = _assembled_with_map(captures_dir, tmp_path)
    open_scene(qtbot, window, captures_dir / "scene1_triangle")
    window.run_to_draw(0)
    settle(qtbot, window)
    panel = window.shader
    qtbot.waitUntil(lambda: panel.view is not None and panel.listing.count() > 0, timeout=WAIT_MS)
    panel.load_line_map(str(shbin_path))
    assert panel.map_label.text().startswith("source lines from")
    listed = [panel.listing.item(k).text() for k in range(panel.listing.count())]
    sourced = [row for row in listed if "  ; " in row]
    assert sourced  # every instruction the map covers names its line, and that line holds the same mnemonic
    for row in sourced:
        instruction, where = row.rsplit("  ; ", 1)
        line = int(where.rsplit(":", 1)[1])
        assert text[line - 1].split()[0] in instruction.replace(",", " ").split()
    panel.vertex.setValue(0)
    panel.trace_button.click()
    qtbot.waitUntil(lambda: len(panel.records) > 0, timeout=WAIT_MS)
    panel.forward.click()  # a step names its instruction's source line
    assert panel.slider.value() == 1 and "vs_color.vsh:" in panel.watch_label.text()
    panel.grab().save(str(shots(tmp_path) / "shader_line_map.png"))
    other = tmp_path / "other.shbin"
    linemap.write(other, assemble_with_map(".proc main\n    end\n.end\n")[1])
    panel.load_line_map(str(other))
    assert "line-map-mismatch" in panel.map_label.text()
    assert not any("  ; " in panel.listing.item(k).text() for k in range(panel.listing.count()))
