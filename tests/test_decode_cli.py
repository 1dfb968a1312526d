"""``picaemu decode``: text, --writes, --json, jumps through --mem, one-line errors with exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from picaemu.cli import main
from picaemu.command.builder import CommandBuilder
from picaemu.command.packets import header_word


def _file(tmp_path: Path, data: bytes, name: str = "list.bin") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_packet_rows_with_decoded_fields(tmp_path: Path) -> None:
    b = CommandBuilder()
    b.write_fields("PRIMITIVE_CONFIG", topology=1)
    b.finalize()
    out = CliRunner().invoke(main, ["decode", _file(tmp_path, b.tobytes())])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].startswith("000000  GPUREG_PRIMITIVE_CONFIG (0x25E) mask=F same n=1  00000100")
    assert "topology=triangle strip" in lines[1]


def test_json_packets_and_writes(tmp_path: Path) -> None:
    words = np.array([0xAAAAAAAA, 0x802F011C, 0xBBBBBBBB, 0xCCCCCCCC], "<u4").tobytes()
    path = _file(tmp_path, words)
    out = CliRunner().invoke(main, ["decode", "--json", path])
    rec = json.loads(out.output.splitlines()[0])
    assert rec["offset"] == 0 and rec["id"] == 0x11C and rec["name"] == "GPUREG_DEPTHBUFFER_LOC"
    assert rec["mask"] == 15 and rec["consecutive"] is True
    assert rec["params"] == [0xAAAAAAAA, 0xBBBBBBBB, 0xCCCCCCCC]
    out = CliRunner().invoke(main, ["decode", "--json", "--writes", path])
    recs = [json.loads(line) for line in out.output.splitlines()]
    assert [(r["id"], r["value"], r["offset"]) for r in recs] == [
        (0x11C, 0xAAAAAAAA, 0),
        (0x11D, 0xBBBBBBBB, 0),
        (0x11E, 0xCCCCCCCC, 0),
    ]


def test_masked_write_reports_the_word_as_carried(tmp_path: Path) -> None:
    words = np.array([0xFFFFFFFF, header_word(0x229, 1, mask=0x2)], "<u4").tobytes()
    out = CliRunner().invoke(main, ["decode", "--json", "--writes", _file(tmp_path, words)])
    rec = json.loads(out.output)
    assert rec["value"] == 0xFFFFFFFF and rec["mask"] == 2


def test_jump_followed_through_loaded_memory(tmp_path: Path) -> None:
    target = CommandBuilder()
    target.write(0x041, 0x1234)
    target.finalize()
    b = CommandBuilder()
    b.write_fields("CMDBUF_SIZE0", size=len(target.tobytes()) // 8)
    b.write_fields("CMDBUF_ADDR0", address=0x20000000 // 8)
    b.write("CMDBUF_JUMP0", 1)
    mem = _file(tmp_path, target.tobytes(), "target.bin")
    out = CliRunner().invoke(main, ["decode", "--writes", _file(tmp_path, b.tobytes()), "--mem", f"0x20000000={mem}"])
    assert out.exit_code == 0, out.output
    assert "GPUREG_VIEWPORT_WIDTH (0x041) mask=F 00001234" in out.output


def test_bad_input_lists_what_decoded_then_one_error_line(tmp_path: Path) -> None:
    words = np.array([7, header_word(0x040, 1), 1, header_word(0x041, 3)], "<u4").tobytes()
    out = CliRunner().invoke(main, ["decode", _file(tmp_path, words)])
    assert out.exit_code == 2
    lines = out.output.splitlines()
    assert lines[0].startswith("000000  GPUREG_FACECULLING_CONFIG")
    assert lines[-1] == (
        "error: packet promises 2 extra parameters but the buffer ends after 0 (byte offset 0x8, packet #1)"
    )
    assert "Traceback" not in out.output


def test_odd_byte_count_and_jump_cycle(tmp_path: Path) -> None:
    words = np.array([7, header_word(0x040, 1)], "<u4").tobytes() + b"\x00"
    out = CliRunner().invoke(main, ["decode", _file(tmp_path, words)])
    assert out.exit_code == 2 and "stray bytes" in out.output and "byte offset 0x8" in out.output
    loop = CommandBuilder()
    loop.write_fields("CMDBUF_SIZE0", size=4)
    loop.write_fields("CMDBUF_ADDR0", address=0x20000000 // 8)
    loop.write("CMDBUF_JUMP0", 1)
    loop.write(0x040, 0)
    path = _file(tmp_path, loop.tobytes())
    out = CliRunner().invoke(main, ["decode", path, "--base", "0x20000000", "--mem", f"0x20000000={path}"])
    assert out.exit_code == 2 and "repeats an earlier buffer" in out.output


def test_every_finalize_write_is_listed(tmp_path: Path) -> None:
    """citro3d ends a list with GPUREG_FINALIZE and pads it with a second one (as in the shared captures: offsets
    0x4C0 and 0x4C8); the GPU stops at the first, the listing shows every write of the buffer."""
    b = CommandBuilder()
    b.write_fields("PRIMITIVE_CONFIG", topology=1)
    b.write("FINALIZE", 0x12345678)
    b.write("FINALIZE", 0x12345678)
    b.write_fields("PRIMITIVE_CONFIG", topology=0)
    path = _file(tmp_path, b.tobytes())
    out = CliRunner().invoke(main, ["decode", "--writes", path])
    assert out.exit_code == 0, out.output
    rows = [line.split()[:2] for line in out.output.splitlines()]
    assert rows == [
        ["000000", "GPUREG_PRIMITIVE_CONFIG"],
        ["000008", "GPUREG_FINALIZE"],
        ["000010", "GPUREG_FINALIZE"],
        ["000018", "GPUREG_PRIMITIVE_CONFIG"],
    ]
    out = CliRunner().invoke(main, ["decode", "--json", path])
    assert [json.loads(line)["id"] for line in out.output.splitlines()] == [0x25E, 0x010, 0x010, 0x25E]


def _jump_chain(tmp_path: Path, buffers: int, size: int) -> tuple[str, str]:
    """A 24-byte list jumping into ``buffers`` chained buffers of ``size`` bytes of filler packets each, every one
    ending in a jump to the next (distinct buffers: no cycle). Returns (list file, --mem spec)."""

    def jump_to(b: CommandBuilder, address: int) -> None:
        b.write_fields("CMDBUF_SIZE0", size=size // 8)
        b.write_fields("CMDBUF_ADDR0", address=address // 8)
        b.write("CMDBUF_JUMP0", 1)

    base = 0x20000000
    memory = np.zeros((buffers, size // 4), "<u4")
    memory[:, 1::2] = header_word(0x040, 1, mask=0)  # masked-off writes: one 8-byte packet each
    for i in range(buffers - 1):
        tail = CommandBuilder()
        jump_to(tail, base + (i + 1) * size)
        words = tail.words()
        memory[i, -words.size :] = words
    head = CommandBuilder()
    jump_to(head, base)
    return _file(tmp_path, head.tobytes()), f"{base:#x}={_file(tmp_path, memory.tobytes(), 'mem.bin')}"


def test_work_is_bounded_by_bytes_executed_and_the_listing_streams(tmp_path: Path) -> None:
    path, mem = _jump_chain(tmp_path, buffers=8, size=64 << 10)
    out = CliRunner().invoke(main, ["decode", path, "--mem", mem])
    assert out.exit_code == 0, out.output[-300:]  # 512 KiB: under the default budget
    rows = [line for line in out.output.splitlines() if not line.startswith(" ")]  # one row per packet
    assert len(rows) == 8 * (64 << 10) // 8 - 7 * 3 + 3 + 7 * 3
    out = CliRunner().invoke(main, ["decode", path, "--mem", mem, "--max-bytes", str(200 << 10)])
    assert out.exit_code == 2
    lines = out.output.splitlines()
    assert lines[-1].startswith("error: the run executed its budget of 204800 command bytes (byte offset 0x")
    assert "address 0x20030000" in lines[-1]  # the cut falls in the fourth buffer
    rows = [line for line in lines[:-1] if not line.startswith(" ")]
    assert len(rows) == (200 << 10) // 8  # 8-byte packets streamed up to the cut (the head counts), not past it


def test_bad_mem_blocks_are_named(tmp_path: Path) -> None:
    path = _file(tmp_path, np.array([0, header_word(0x040, 1)], "<u4").tobytes())
    for spec, message in (
        (f"0x20000000={tmp_path / 'missing.bin'}", "no such file"),
        (f"0x20000000={tmp_path}", "a directory"),
        (f"0x10={path}", "do not fit emulated memory"),
    ):
        out = CliRunner().invoke(main, ["decode", path, "--mem", spec])
        assert out.exit_code == 2 and message in out.output, out.output
        assert out.output.count("\n") == 1 and out.output.startswith("error: --mem ")
