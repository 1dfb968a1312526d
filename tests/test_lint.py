"""``picaemu lint``: one hand-built hostile capture per rule code (code, severity, event, packet offset, exit
status), the rule table's shape, and the SARIF log's required structure."""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from picaemu.formats import citrace, pica

from picaemu import regs as regtable
from picaemu.builder import CaptureBuilder
from picaemu.cli import main
from picaemu.command.packet_list import list_packets
from picaemu.command.packets import header_word
from picaemu.errors import PicaError
from picaemu.gx import convert as gxconvert
from picaemu.gx.engines import TRANSFER_FORMATS
from picaemu.lint import RULE_OF, RULES, Finding, Severity, lint
from picaemu.lint.rules import rules_markdown, with_rules_table
from picaemu.lint.sarif import sarif_log
from picaemu.regs import access
from picaemu.shader import asm
from picaemu.shader.isa import decode, encode
from samples._common import VS_COLOR, color_frame
from tests.fuzz.mutate import make_input

POS = np.array([[200, 210, 0.5, 1], [80, 30, 0.5, 1], [320, 30, 0.5, 1]], np.float32)
COL = np.array([[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1]], np.float32)
NOP = encode("nop")
Edit = Callable[[CaptureBuilder], None]


def frame(before_draw: Edit | None = None, draw: Edit | None = None) -> CaptureBuilder:
    """The triangle sample's frame, with ``before_draw`` applied after the vertices are bound and ``draw`` instead
    of its draw call; the frame is left open."""
    b = CaptureBuilder(name="hostile")
    color_frame(b, (0x30, 0x30, 0x30, 0xFF))
    b.vertices([POS, COL])
    if before_draw is not None:
        before_draw(b)
    (draw or (lambda b: b.draw(3)))(b)
    return b


def finished(b: CaptureBuilder) -> pica.Capture:
    b.end_frame()
    return b.capture()


def the(findings: list[Finding], code: str) -> Finding:
    hits = [f for f in findings if f.code == code]
    assert len(hits) == 1, (code, [f.as_dict() for f in findings])
    return hits[0]


def list_event(cap: pica.Capture, nth: int = 0) -> int:
    return [i for i, e in enumerate(cap.events) if isinstance(e, pica.CommandList)][nth]


def packets_of(cap: pica.Capture, event: int) -> list:
    ev = cap.events[event]
    blob = next(cap.blobs[e.blob] for e in cap.events if isinstance(e, pica.MemoryWrite) and e.address == ev.address)
    return list_packets(blob[: ev.size])[0]


def offset_of(cap: pica.Capture, reg: str, nth: int = 0) -> int:
    """Byte offset of the ``nth`` packet writing ``reg`` in the first command list."""
    reg_id = regtable.id_of(reg)
    return [p.offset for p in packets_of(cap, list_event(cap)) if p.id == reg_id][nth]


def exit_status(cap: pica.Capture, tmp_path: Path) -> int:
    path = tmp_path / "hostile.pica"
    pica.write(path, cap)
    return CliRunner().invoke(main, ["lint", str(path), "--json"]).exit_code


def check(cap: pica.Capture, code: str, tmp_path: Path, *, offset: int | None, draw: int = -1) -> Finding:
    """The one finding ``code`` of ``cap``: its severity (from the table), packet offset, draw and exit status."""
    f = the(lint(cap), code)
    assert f.severity is RULE_OF[code].severity and f.draw == draw
    if offset is not None:
        assert f.offset == offset
    assert exit_status(cap, tmp_path) == (1 if f.severity is Severity.ERROR else 0)
    assert RULE_OF[code].fix in f.text
    return f


def test_clean_triangle_has_no_error(tmp_path: Path) -> None:
    cap = finished(frame())
    assert not [f for f in lint(cap) if f.severity is Severity.ERROR]
    assert exit_status(cap, tmp_path) == 0


def test_list_no_finalize(tmp_path: Path) -> None:
    b = frame()
    data = b.list.tobytes()  # never finalized
    data += bytes(-len(data) % 16)
    b.cap.events.append(pica.CommandList(b.upload(data), len(data)))
    b.cmd = None
    cap = b.capture()
    f = check(cap, "list-no-finalize", tmp_path, offset=-1)
    assert f.event == list_event(cap)


def test_list_size_not_16(tmp_path: Path) -> None:
    b = frame()
    b.list.finalize()
    b.list.write("FINALIZE", 0x12345678)  # 8 bytes after the finalize (never run): the size is 8 mod 16
    data = b.list.tobytes()
    b.cap.events.append(pica.CommandList(b.upload(data), len(data)))
    b.cmd = None
    f = check(b.capture(), "list-size", tmp_path, offset=-1)
    assert "multiple of 16" in f.message


def test_list_size_past_allocation(tmp_path: Path) -> None:
    cap = finished(frame())
    i = list_event(cap)
    ev = cap.events[i]
    cap.events[i] = pica.CommandList(ev.address, ev.size + 0x400)
    f = check(cap, "list-size", tmp_path, offset=-1)
    assert f.event == i and "past the memory" in f.message


def test_command_fault(tmp_path: Path) -> None:
    b = frame()
    data = b.list.tobytes() + struct.pack("<2I", 0, header_word(0x10, 16, 0xF, False))  # 15 more words promised
    data += bytes(8)
    b.cap.events.append(pica.CommandList(b.upload(data), len(data)))
    b.cmd = None
    cap = b.capture()
    check(cap, "command-fault", tmp_path, offset=len(data) - 16)


def _no_end(b: CaptureBuilder) -> None:
    shbin = asm.assemble([("vs.vsh", VS_COLOR)])
    descs = [d for d, _ in shbin.opdescs]
    words = [w if decode(w, descs).name != "end" else NOP for w in shbin.code]
    b.list.upload_code("VSH", words)


def test_shader_no_end(tmp_path: Path) -> None:
    cap = finished(frame(_no_end))
    f = check(cap, "shader-no-end", tmp_path, offset=offset_of(cap, "DRAWARRAYS"), draw=0)
    assert "runs past the program" in f.message


def test_attribute_out_of_memory(tmp_path: Path) -> None:
    cap = finished(frame(draw=lambda b: b.draw(6)))  # 3 vertices uploaded
    f = check(cap, "attribute-out-of-memory", tmp_path, offset=offset_of(cap, "DRAWARRAYS"), draw=0)
    assert "vertices 0..5" in f.message


def test_index_out_of_range(tmp_path: Path) -> None:
    cap = finished(frame(draw=lambda b: b.draw_indexed([0, 1, 7])))
    f = check(cap, "index-out-of-range", tmp_path, offset=offset_of(cap, "DRAWELEMENTS"), draw=0)
    assert "index 7" in f.message and "holds 3 vertices" in f.message


def _texture_elsewhere(b: CaptureBuilder) -> None:
    b.texture(0, np.zeros((8, 8, 4), np.uint8))
    b.set("TEXUNIT0_ADDR1", address=0x18400000)  # VRAM no event wrote


def test_texture_out_of_memory(tmp_path: Path) -> None:
    cap = finished(frame(_texture_elsewhere))
    f = check(cap, "texture-out-of-memory", tmp_path, offset=offset_of(cap, "DRAWARRAYS"), draw=0)
    assert "0x18400000" in f.message


def test_misaligned_attribute(tmp_path: Path) -> None:
    def shift(b: CaptureBuilder) -> None:
        offset = [p for p in list_packets(b.list.tobytes())[0] if p.id == regtable.id_of("ATTRIBBUFFER0_OFFSET")]
        config = offset[-1].params
        b.list.write_many("ATTRIBBUFFER0_OFFSET", [config[0] + 2, *config[1:]])  # f32 elements at +2 bytes

    cap = finished(frame(shift))
    f = check(cap, "misaligned-address", tmp_path, offset=offset_of(cap, "DRAWARRAYS"), draw=0)
    assert "4-byte elements" in f.message


def test_misaligned_transfer(tmp_path: Path) -> None:
    cap = finished(frame())
    i = next(i for i, e in enumerate(cap.events) if isinstance(e, pica.DisplayTransfer))
    ev = cap.events[i]
    cap.events[i] = pica.DisplayTransfer(ev.src, ev.dst + 4, ev.in_dim, ev.out_dim, ev.flags)
    f = check(cap, "misaligned-address", tmp_path, offset=-1)
    assert f.event == i


def test_target_overlap(tmp_path: Path) -> None:
    cap = finished(frame(lambda b: b.set("DEPTHBUFFER_LOC", address=b.color + 0x100)))
    check(cap, "target-overlap", tmp_path, offset=offset_of(cap, "DRAWARRAYS"), draw=0)


def test_nonfinite_uniform(tmp_path: Path) -> None:
    nan_row = lambda b: b.list.upload_float_uniforms("VSH", 1, [(0.0, np.nan, 0.0, 0.0)], float32=True)  # noqa: E731
    cap = finished(frame(nan_row))
    f = check(cap, "nonfinite-uniform", tmp_path, offset=offset_of(cap, "DRAWARRAYS"), draw=0)
    assert "c1 = " in f.message and "nan" in f.message


def test_unread_nonfinite_uniform_is_fine() -> None:
    cap = finished(frame(lambda b: b.list.upload_float_uniforms("VSH", 40, [(np.inf,) * 4], float32=True)))
    assert not [f for f in lint(cap) if f.code == "nonfinite-uniform"]


def test_uniform_index_overflow(tmp_path: Path) -> None:
    cap = finished(frame(lambda b: b.uniforms(94, np.ones((4, 4)))))  # c94..c97: two rows dropped
    data = offset_of(cap, "VSH_FLOATUNIFORM_DATA0", nth=1)  # the first upload is the projection's
    f = check(cap, "uniform-index-overflow", tmp_path, offset=data)
    assert "c96" in f.message and "2 vector(s)" in f.message


def test_register_out_of_range(tmp_path: Path) -> None:
    b = frame()
    start = 4 * len(b.list)
    b.list.packet(0x2FF, [1, 2], consecutive=True)  # 0x2FF, then 0x300
    check(finished(b), "register-out-of-range", tmp_path, offset=start)


def test_uninitialized_state(tmp_path: Path) -> None:
    cap = finished(frame())
    f = check(cap, "uninitialized-state", tmp_path, offset=offset_of(cap, "DRAWARRAYS"), draw=0)
    assert "GPUREG_SCISSORTEST_POS" in f.message
    assert "INTUNIFORM" not in f.message  # a program without LOOP does not read the integer uniforms
    set_first = finished(frame(lambda b: b.list.write("SCISSORTEST_POS", 0)))
    assert "SCISSORTEST_POS" not in the(lint(set_first), "uninitialized-state").message


def test_a_loop_reads_its_integer_uniform() -> None:
    src = VS_COLOR.replace(".proc main\n", ".ivec loops\n.proc main\n    for loops\n        mov r0, inpos\n    .end\n")
    cap = finished(frame(lambda b: b.shader(src)))
    message = the(lint(cap), "uninitialized-state").message
    assert "GPUREG_VSH_INTUNIFORM_I0" in message and "INTUNIFORM_I1" not in message


def test_transfer_format_mismatch(tmp_path: Path) -> None:
    cap = finished(frame())
    i = next(i for i, e in enumerate(cap.events) if isinstance(e, pica.DisplayTransfer))
    ev = cap.events[i]
    rgb565 = next(code for code, fmt in TRANSFER_FORMATS.items() if fmt.name == "RGB565")
    mask = regtable.by_name("PPF_FLAGS").field("in_format").mask
    flags = ev.flags & ~mask | access.put("PPF_FLAGS", "in_format", rgb565)
    cap.events[i] = pica.DisplayTransfer(ev.src, ev.dst, ev.in_dim, ev.out_dim, flags)
    f = check(cap, "transfer-format-mismatch", tmp_path, offset=-1)
    assert f.event == i and "RGB565" in f.message and "RGBA8" in f.message


def test_rule_table() -> None:
    codes = [r.code for r in RULES]
    assert len(codes) == len(set(codes))
    assert all(r.summary and r.fix and isinstance(r.severity, Severity) for r in RULES)
    with pytest.raises(KeyError):
        Finding("no-such-code", 0, "")


def test_sarif_structure(tmp_path: Path) -> None:
    cap = finished(frame(draw=lambda b: b.draw_indexed([0, 1, 7])))
    path, out = tmp_path / "c.pica", tmp_path / "lint.sarif"
    pica.write(path, cap)
    res = CliRunner().invoke(main, ["lint", str(path), "--sarif", str(out)])
    assert res.exit_code == 1
    log = json.loads(out.read_text())
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert run["tool"]["driver"]["name"] and [r["id"] for r in rules] == [r.code for r in RULES]
    assert all(
        r["shortDescription"]["text"] and r["defaultConfiguration"]["level"] in ("error", "warning") for r in rules
    )
    assert run["results"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning") and result["message"]["text"]
        (loc,) = result["locations"]
        assert loc["physicalLocation"]["artifactLocation"]["uri"] == run["artifacts"][0]["location"]["uri"]
        assert loc["logicalLocations"][0]["fullyQualifiedName"].startswith("event[")
    assert sarif_log([], "x.pica")["runs"][0]["results"] == []
    assert not list(tmp_path.glob(".lint.sarif.*"))  # written through a temporary file, renamed


def test_docs_table_is_the_rule_table() -> None:
    """docs/lint.md shows the rule table as ``rules_markdown`` generates it (regenerate: ``with_rules_table``)."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "lint.md").read_text()
    assert with_rules_table(text) == text and rules_markdown() in text


@pytest.mark.parametrize("seed", range(0, 60, 3))
def test_mutated_captures_lint_without_crashing(seed: int) -> None:
    """The fuzz campaign's mutated captures (tests/fuzz): lint answers with findings, never an internal error."""
    data = make_input("capture", seed)
    try:
        cap = gxconvert.from_citrace(citrace.parse(data)) if data.startswith(citrace.MAGIC) else pica.parse(data)
    except PicaError:
        return
    for f in lint(cap):
        assert f.code in RULE_OF and f.event >= 0
