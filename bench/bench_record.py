"""Record speed of ``picaemu record`` through a local GDB stub (``qemu-arm -g``), on bundled samples.

The ARM stand-in program of the tests (tests/gx_player.c) plays a sample's CPU side; the recorder attaches over
TCP on 127.0.0.1 and records every frame. Prints, per sample: seconds per frame (first frame apart: it also
loads the command processor's compiled kernels; wall time, and the CPU time of the recorder and of qemu in later
frames), requests and bytes read; and, measured in the same run on a
fresh qemu, the baselines that bound it: the round trip of one minimal request (``m`` of 4 bytes) and the bulk
rate of ``m`` at the stub's packet size. Needs qemu-user and gcc-arm-linux-gnueabihf.
With ``--call-sites`` each sample is also played as a program that calls a draw function per draw, recorded
without and with call sites (``record --call-sites``: a stop, the write-position read and the unwind per draw).
``--repeat N`` plays each sample's frames N times over (the later ones record nothing new: the steady state), so
that the frame rate of later frames (median, frames/s) is measured apart from the first frame's setup; with
``--every K`` call sites are also recorded every K-th frame only (``record --call-sites-every K``). With
``--link-delay MS`` call sites are also recorded through tests/noack_proxy.py adding MS a round trip (a console over
Wi-Fi), with the client in acknowledgement mode and in no-ack mode (a draw stop's reads sent with its registers).
Run: ``.venv/bin/python bench/bench_record.py [--samples cube,texture_formats,animation] [--call-sites]
[--repeat 4] [--every 3] [--link-delay 1]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import itertools
import statistics

from picaemu.formats import pica

from bench.bench_draw_state import median_us
from picaemu.record.callsites import DEFAULT_DEPTH, CallSites, find_draw_hooks
from picaemu.record.gdb import GdbClient
from picaemu.record.recorder import Progress, Recorder
from picaemu.record.symbols import find_hooks
from tests import gx_script
from tests.noack_proxy import NoAckProxy

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "captures"


def _serve(player: Path, script: Path) -> tuple[object, int]:
    port = gx_script.free_port()
    qemu = gx_script.serve(player, script, port)
    gx_script.wait_listening(port, qemu)
    return qemu, port


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (Linux /proc), 0 where that cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def record_sample(
    player: Path,
    name: str,
    work: Path,
    draws: bool = False,
    call_sites: bool = False,
    repeat: int = 1,
    every: int = 1,
    relay: tuple[bool, float] | None = None,
) -> float:
    """Record every frame of sample ``name`` (its frames played ``repeat`` times over); ``draws``: the program
    also calls its draw function per draw; ``call_sites``: the recorder stops there too (``record --call-sites``),
    in every ``every``-th frame; ``relay`` (no-ack mode offered, delay in s): through a ``NoAckProxy``, a link with
    that much more latency per round trip. Returns the median later frame in ms (0 with one frame)."""
    script = work / f"{name}.gxs"
    capture = pica.read(SAMPLES / f"{name}.pica")
    capture.events = capture.events * repeat
    script.write_bytes(gx_script.script(capture, draws=draws))
    qemu, port = _serve(player, script)
    if relay is not None:
        proxy = NoAckProxy(("127.0.0.1", port), offer_noack=relay[0], delay=relay[1])
        proxy.start()
        port = proxy.port
    frame_ends: list[float] = []  # when each frame's FrameEnd was recorded
    cpu_ends: list[tuple[float, float]] = []  # CPU seconds of the recorder and of qemu then

    def frame_done(p: Progress) -> None:
        if p.frames > len(frame_ends):
            frame_ends.append(time.perf_counter())
            cpu_ends.append((time.process_time(), _cpu_seconds(qemu.pid)))

    start = time.perf_counter()
    with GdbClient("127.0.0.1", port) as link:
        link.handshake()
        link.stop_reason()
        hooks, sites = find_hooks(player), None
        if call_sites:
            draw_hooks, globals_at = find_draw_hooks(player, (gx_script.DRAW_FUNCTION,))
            hooks, sites = hooks + draw_hooks, CallSites.attach(link, player, globals_at, DEFAULT_DEPTH)
        recorder = Recorder(
            link,
            hooks,
            from_start=True,
            progress=frame_done,
            call_sites=sites,
            call_sites_every=every,
        )
        capture = recorder.run()
        total = time.perf_counter() - start
        requests, read = link.requests, link.bytes_read
    qemu.wait(timeout=30)
    first = frame_ends[0] - start if frame_ends else total
    rest = [b - a for a, b in itertools.pairwise(frame_ends)]
    median = statistics.median(rest) if rest else 0.0
    own, qemu_cpu = (
        statistics.median(b[i] - a[i] for a, b in itertools.pairwise(cpu_ends)) if rest else 0.0 for i in (0, 1)
    )
    later = (
        f", later frames {min(rest) * 1e3:.0f}-{max(rest) * 1e3:.0f} ms (median {median * 1e3:.0f} ms, "
        f"{1 / median:.2f} frames/s; CPU a frame, median: recorder {own * 1e3:.0f} ms, qemu {qemu_cpu * 1e3:.0f} ms)"
        if rest
        else ""
    )
    mode = f" (call sites, every {every})" if call_sites and every > 1 else " (call sites)" if call_sites else ""
    mode = mode or (" (draw calls)" if draws else "")
    if relay is not None:
        mode += f" ({'no-ack' if relay[0] else 'ack'}, +{relay[1] * 1e3:g} ms a round trip)"
    print(
        f"{name + mode:16s} {recorder.frames} frame(s) in {total:.2f} s: first frame {first:.2f} s{later}; "
        f"{requests} requests, {read / 1024:.0f} KiB read, {recorder.bytes_recorded / 1024:.0f} KiB recorded, "
        f"{len(capture.events)} events, {len(capture.call_sites)} call sites"
    )
    return median * 1e3


def baselines(player: Path, work: Path, sample: str, frame_ms: float | None) -> None:
    """Round trip of a 4-byte read, the bulk read rate, and the floor of a draw stop: ``g``, a single step, and a
    bare stop (``c`` at a breakpoint, which qemu reports again at once: nothing runs, nothing is read). With
    ``frame_ms`` (a frame without call sites) also the best frame-rate ratio a stop per draw could reach. Played:
    ``sample`` with its draw calls."""
    script = work / "floor.gxs"  # the sample with its draw calls: the first one is where the stops are timed
    script.write_bytes(gx_script.script(pica.read(SAMPLES / f"{sample}.pica"), draws=True))
    qemu, port = _serve(player, script)
    with GdbClient("127.0.0.1", port) as link:
        link.handshake()
        sp = link.registers()[13]
        rtt = median_us(lambda: link.read_memory(sp, 4), 2000)
        t = time.perf_counter()
        size = 0
        while time.perf_counter() - t < 1.0:
            link.read_memory(sp - link.read_chunk, link.read_chunk)
            size += link.read_chunk
        rate = size / (time.perf_counter() - t)
        print(
            f"baseline: round trip of one 4-byte read {rtt:.0f} us (median); bulk reads of {link.read_chunk} bytes "
            f"(stub PacketSize 0x{link.packet_size:X}, no-ack mode {not link.ack_mode}) {rate / 1024:.0f} KiB/s"
        )
        draw = find_draw_hooks(player, (gx_script.DRAW_FUNCTION,))[0][0]
        link.set_breakpoint(draw.address, draw.kind)
        link.resume(30.0)
        g = median_us(link.registers, 2000)
        qemu_cpu = _cpu_seconds(qemu.pid)
        stop = median_us(lambda: link.resume(30.0), 2000)
        stop_cpu = (_cpu_seconds(qemu.pid) - qemu_cpu) / 2000 * 1e6
        link.clear_breakpoint(draw.address, draw.kind)
        step = median_us(link.step, 500)
        floor = 2 * stop + g + 2 * rtt  # breakpoint + step-off, registers, write position, stack window
        line = (
            f"floor: g {g:.0f} us, bare stop {stop:.0f} us (qemu CPU {stop_cpu:.0f} us each), step {step:.0f} us "
            f"(medians); a draw stop with its reads (2 stops, g, 2 m) >= {floor:.0f} us, one stop with nothing read "
            f">= {stop:.0f} us"
        )
        if frame_ms:
            per_draw = frame_ms * 1e3 / 1000
            line += (
                f"; a 1000-draw frame of {frame_ms:.0f} ms without call sites: best ratio "
                f"{per_draw / (per_draw + floor):.2f} (one bare stop per draw: {per_draw / (per_draw + stop):.2f})"
            )
        print(line)
        link.detach()
    qemu.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", default="cube,texture_formats,lit_sphere,animation")
    parser.add_argument(
        "--call-sites",
        action="store_true",
        help="Each sample also as a program with a draw call per draw, recorded without and with --call-sites.",
    )
    parser.add_argument("--repeat", type=int, default=1, help="Play each sample's frames this many times over.")
    parser.add_argument("--every", type=int, default=0, help="Also record call sites every K-th frame only.")
    parser.add_argument(
        "--link-delay",
        type=float,
        default=0.0,
        help="Also record call sites through a relay adding this many ms a round trip, in ack and no-ack mode.",
    )
    args = parser.parse_args()
    why = gx_script.tools_missing()
    if why:
        sys.exit(f"bench_record: {why}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        player = gx_script.build(work)
        frame_ms = None
        for name in args.samples.split(","):
            record_sample(player, name, work, repeat=args.repeat)
            if args.call_sites:
                frame_ms = record_sample(player, name, work, draws=True, repeat=args.repeat)
                with_sites = record_sample(player, name, work, draws=True, call_sites=True, repeat=args.repeat)
                if frame_ms and with_sites:
                    print(f"{name}: with call sites at {frame_ms / with_sites:.3f} of the frame rate without")
                if args.every > 1:
                    record_sample(player, name, work, draws=True, call_sites=True, repeat=args.repeat, every=args.every)
                for noack in (False, True) if args.link_delay > 0 else ():
                    relay = (noack, args.link_delay / 1e3)
                    record_sample(player, name, work, draws=True, call_sites=True, repeat=args.repeat, relay=relay)
        baselines(player, work, name, frame_ms)


if __name__ == "__main__":
    main()
