"""Test helpers for ``picaemu record``: turn a bundled sample capture into a script for the ARM stand-in program
(tests/gx_player.c), build that program, and serve it with ``qemu-arm -g PORT``.

The script replays what the sample's CPU did: every MemoryWrite becomes a copy to the virtual address (linear heap
0x30000000, VRAM 0x1F000000), every GX event the 8 command words an application hands to gspSubmitGxCommand
(layout: picaemu.record.gxcmd), every Present a gspPresentBuffer call, and (``draws=True``) every draw a call of the
player's draw function. FrameEnd needs no record (the top screen's
present ends a frame). Register writes cannot be expressed: samples holding them are not used.
"""

from __future__ import annotations

import shutil
import socket
import struct
import subprocess
from pathlib import Path

import numpy as np
from picaemu.formats import pica
from PIL import Image

from picaemu.record.memmap import to_virtual

HERE = Path(__file__).resolve().parent
REFERENCE = HERE.parent / "samples" / "reference"
SOURCE = HERE / "gx_player.c"
CROSS_GCC = "arm-linux-gnueabihf-gcc"
QEMU = "qemu-arm"
MAGIC, END, MEMORY, GX, PRESENT, DRAW, WAIT = 0x4C505847, 0, 1, 2, 3, 4, 5
DRAW_FUNCTION = "playerDraw"  # gx_player's stand-in for C3D_DrawArrays (record --call-sites --draw-symbol)


def _words(*values: int) -> bytes:
    return struct.pack(f"<{len(values)}I", *(v & 0xFFFFFFFF for v in values))


def _gx(event: pica.Event) -> bytes:
    if isinstance(event, pica.CommandList):
        words = [1, to_virtual(event.address), event.size, event.flags & 1, 0, 0, 0, event.flags >> 1 & 1]
    elif isinstance(event, pica.MemoryFill):
        words = [2]
        for unit in event.units:
            start = to_virtual(unit.start) if unit.start else 0
            end = start + unit.end - unit.start if unit.start else 0
            words += [start, unit.value, end]
        words.append(event.units[0].control & 0xFFFF | (event.units[1].control & 0xFFFF) << 16)
    elif isinstance(event, pica.DisplayTransfer):
        words = [3, to_virtual(event.src), to_virtual(event.dst), event.in_dim, event.out_dim, event.flags, 0, 0]
    elif isinstance(event, pica.TextureCopy):
        words = [
            4,
            to_virtual(event.src),
            to_virtual(event.dst),
            event.size,
            event.in_line,
            event.out_line,
            event.flags,
            0,
        ]
    elif isinstance(event, pica.RequestDma):
        words = [0, to_virtual(event.src), to_virtual(event.dst), event.size, 0, 0, 0, 0]
    elif isinstance(event, pica.FlushCacheRegions):
        words = [5] + [w for a, n in event.regions for w in ((to_virtual(a), n) if n else (0, 0))] + [0]
    else:
        raise ValueError(f"{type(event).__name__} cannot be played by gx_player")
    return _words(GX, *words)


def draw_triggers(capture: pica.Capture) -> dict[int, list[int]]:
    """event index -> byte offsets of the draw trigger packets in that command list (the replay's draws)."""
    from picaemu.replay import Replay

    replay = Replay(capture, checkpoints=False)
    replay.run()
    out: dict[int, list[int]] = {}
    for draw in replay.draws:
        out.setdefault(draw.event, []).append(draw.offset)
    return out


def script(capture: pica.Capture, *, draws: bool = False, waits: dict[int, int] | None = None) -> bytes:
    """The gx_player script of ``capture`` (see the module docstring); ``draws``: a DRAW record before each
    command list's submission per draw in it, made by draw_mesh for even draws and draw_sprite for odd ones;
    ``waits``: event index -> milliseconds the program sleeps before playing that event."""
    out = [_words(MAGIC)]
    triggers = draw_triggers(capture) if draws else {}
    count = 0
    writes = [(a, capture.blobs[b]) for a, b in capture.state.memory]
    for address, data in writes:
        out.append(_words(MEMORY, to_virtual(address, len(data)), len(data)) + data + bytes(-len(data) % 4))
    for at, event in enumerate(capture.events):
        if waits and at in waits:
            out.append(_words(WAIT, waits[at]))
        entry = 0  # like citro3d, a draw is entered before its state packets: just past the previous trigger
        for offset in triggers.get(at, []):
            assert isinstance(event, pica.CommandList)
            out.append(_words(DRAW, to_virtual(event.address), entry // 4, count % 2))
            entry, count = offset + 8, count + 1
        if isinstance(event, pica.MemoryWrite):
            data = capture.blobs[event.blob]
            out.append(_words(MEMORY, to_virtual(event.address, len(data)), len(data)) + data + bytes(-len(data) % 4))
        elif isinstance(event, pica.Present):
            out.append(
                _words(
                    PRESENT,
                    event.screen,
                    event.select,
                    to_virtual(event.left),
                    to_virtual(event.right),
                    event.stride,
                    event.format,
                )
            )
        elif not isinstance(event, (pica.FrameEnd, pica.Marker)):
            out.append(_gx(event))
    out.append(_words(END))
    return b"".join(out)


def tools_missing() -> str | None:
    """Why the qemu test cannot run here (None when it can)."""
    missing = [tool for tool in (CROSS_GCC, QEMU) if shutil.which(tool) is None]
    if missing:
        return (
            f"{' and '.join(missing)} not installed (Debian packages gcc-arm-linux-gnueabihf, qemu-user; "
            ".ci/run installs them)"
        )
    return None


def build(out_dir: Path) -> Path:
    """Compile gx_player statically for 32-bit ARM (ARM instruction set, symbols and DWARF kept: line table and
    call-frame information for ``record --call-sites``)."""
    binary = out_dir / "gx_player.elf"
    subprocess.run(
        [CROSS_GCC, "-static", "-O1", "-marm", "-g", "-o", str(binary), str(SOURCE)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return binary


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(binary: Path, script_path: Path, port: int) -> subprocess.Popen:
    """Start ``qemu-arm -g port binary script``: halted at the entry point until a debugger connects."""
    return subprocess.Popen(
        [QEMU, "-g", str(port), str(binary), str(script_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def wait_listening(port: int, proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """Wait until qemu listens on ``port`` (probing would consume its one connection: watch the port table)."""
    import time

    deadline = time.monotonic() + timeout
    needle = f":{port:04X} "
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"qemu-arm exited early: {proc.stderr.read().decode(errors='replace')}")
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            try:
                lines = Path(table).read_text().splitlines()[1:]
            except OSError:
                continue
            if any(needle in line.split()[1] + " " and line.split()[3] == "0A" for line in lines):
                return
        time.sleep(0.05)
    raise RuntimeError(f"qemu-arm did not listen on port {port} within {timeout} s")


def top_screens(capture: pica.Capture) -> list[np.ndarray]:
    """What the top screen shows after each frame of ``capture``: (240, 400, 3) uint8 each."""
    from picaemu.replay import Replay

    replay = Replay(capture, checkpoints=False)
    shots = []
    for f in range(len(replay.frames)):
        replay.run_to_frame(f)
        shots.append(replay.screen("top"))
    return shots


def reference(name: str, frame: int = 0) -> np.ndarray:
    """A sample's reference picture of ``frame`` (samples/reference/NAME/NNNN.png) as (240, 400, 3) uint8."""
    return np.asarray(Image.open(REFERENCE / name / f"{frame:04d}.png").convert("RGB"))
