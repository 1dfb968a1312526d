"""``picaemu record --gdb HOST:PORT --elf APP.elf -o CAPTURE.pica``: record a running program through a GDB stub.

Finds the hooks in the ELF (``picaemu.record.symbols``), connects (``GdbClient``: handshake, no-ack mode when
offered), records (``Recorder``) until ``--frames`` frames are complete, the program exits, Ctrl-C, or the link
fails, and writes the complete frames atomically. ``--call-sites`` also stops in the draw functions and stores
each draw's caller backtrace (``picaemu.record.callsites``). ``--live`` (``picaemu.record.live``) replaces the
file with the capture of the complete frames at every frame end and prints one line per frame on stdout.
Progress and warnings go to stderr. Exit status 0 when the recording ended by design (frames reached, program
exited, Ctrl-C), 2 after a link or recording error (the capture of the frames before it is still written).
Guide: docs/capturing.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from picaemu.cli.common import EXIT_BAD_INPUT, examples, reports_errors
from picaemu.errors import TargetExited
from picaemu.formats import pica
from picaemu.formats.pica_calls import MAX_FRAMES
from picaemu.record.callsites import DEFAULT_DEPTH, CallSites, find_draw_hooks
from picaemu.record.gdb import GdbClient, parse_endpoint
from picaemu.record.live import LiveCapture, recording_meta
from picaemu.record.recorder import Progress, Recorder
from picaemu.record.symbols import find_hooks

EVERY_HELP = "With --call-sites: stop in the draw functions in every N-th frame only (default 1: in every frame)."


class _Reporter:
    """Progress on stderr: one rewritten line on a terminal, a line per update otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.open_line = False

    def progress(self, p: Progress) -> None:
        if self.tty:
            click.echo(f"\r{p.line()}\x1b[K", err=True, nl=False)
            self.open_line = True
        else:
            click.echo(p.line(), err=True)

    def say(self, text: str) -> None:
        if self.open_line:
            click.echo("", err=True)
            self.open_line = False
        click.echo(text, err=True)


@click.command(
    "record",
    epilog=examples(
        "picaemu record --gdb 192.168.1.20:4003 --elf app.elf --from-start --frames 10 -o app.pica",
        "picaemu record --gdb 127.0.0.1:24689 --elf app.elf -o app.pica",
        "picaemu record --gdb 127.0.0.1:24689 --elf app.elf --call-sites --frames 2 -o app.pica",
        "picaemu record --gdb 127.0.0.1:24689 --elf app.elf --call-sites --call-sites-every 10 -o app.pica",
        "picaemu record --gdb 127.0.0.1:24689 --elf app.elf --live -o app.pica",
    ),
)
@click.option(
    "--gdb",
    "endpoint",
    required=True,
    metavar="HOST:PORT",
    help="The GDB stub: Luma3DS 4000-4003, Azahar 24689, qemu-arm -g PORT.",
)
@click.option(
    "--elf",
    "elf",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The running program's ELF, with symbols.",
)
@click.option("--frames", type=click.IntRange(min=1), default=None, help="Stop after N complete frames.")
@click.option(
    "--from-start",
    is_flag=True,
    help="The program is halted before its first GPU command: record from there (state fully known).",
)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=5.0,
    show_default=True,
    help="Seconds to wait for each reply of the stub.",
)
@click.option(
    "--stop-timeout",
    type=click.FloatRange(min=0.1),
    default=60.0,
    show_default=True,
    help="Seconds the program may run between two stops in recorded functions.",
)
@click.option(
    "--call-sites",
    is_flag=True,
    help="Also stop in the draw functions and store each draw's caller backtrace (function, file, line).",
)
@click.option(
    "--draw-symbol",
    "draw_symbols",
    multiple=True,
    metavar="NAME",
    help="A further draw function for --call-sites (repeatable); citro3d's and citro2d's are found by name.",
)
@click.option(
    "--call-site-depth",
    type=click.IntRange(1, MAX_FRAMES),
    default=DEFAULT_DEPTH,
    show_default=True,
    help="Backtrace frames kept per draw (--call-sites).",
)
@click.option("--call-sites-every", type=click.IntRange(min=1), default=1, metavar="N", help=EVERY_HELP)
@click.option(
    "--live",
    is_flag=True,
    help="Rewrite the file (atomically) with every complete frame as it ends; one line per frame on stdout.",
)
@reports_errors
def record(
    endpoint: str,
    elf: Path,
    frames: int | None,
    from_start: bool,
    output: Path,
    timeout: float,
    stop_timeout: float,
    call_sites: bool,
    draw_symbols: tuple[str, ...],
    call_site_depth: int,
    call_sites_every: int,
    live: bool,
) -> None:
    """Record the GPU commands of a running 3DS program into a .pica capture."""
    host, port = parse_endpoint(endpoint)
    hooks = find_hooks(elf)
    if (draw_symbols or call_sites_every > 1) and not call_sites:
        raise click.UsageError("--draw-symbol and --call-sites-every need --call-sites")
    globals_at = None
    if call_sites:
        draw_hooks, globals_at = find_draw_hooks(elf, draw_symbols)
        hooks += draw_hooks
    out = _Reporter()
    out.say(f"record: {', '.join(h.name for h in hooks)} in {elf.name}; connecting to {host}:{port}")
    with GdbClient(host, port, timeout=timeout) as link:
        link.handshake()
        link.stop_reason()
        sites = None if globals_at is None else CallSites.attach(link, elf, globals_at, call_site_depth)
        recorder = Recorder(
            link,
            hooks,
            from_start=from_start,
            frames=frames,
            stop_timeout=stop_timeout,
            progress=out.progress,
            warn=lambda m: out.say(f"warning: {m}"),
            meta={
                **recording_meta(str(elf), endpoint, from_start),
                **({"record.call_sites_every": str(call_sites_every)} if call_sites and call_sites_every > 1 else {}),
            },
            call_sites=sites,
            call_sites_every=call_sites_every,
        )
        stream = LiveCapture(output, recorder, lambda line: click.echo(line.text())) if live else None
        capture = recorder.run()
    if stream is None:
        pica.write(output, capture)
    else:  # the file already holds every complete frame; written once more in case none completed
        stream.write()
    ended = recorder.ended_by
    frames_done = sum(isinstance(e, pica.FrameEnd) for e in capture.events)
    out.say(
        f"wrote {output}: {frames_done} complete frame(s), {len(capture.events)} events, "
        f"{recorder.bytes_recorded / 1024:.0f} KiB of memory"
        + (f", call sites of {len(capture.call_sites)} draw(s)" if sites is not None else "")
    )
    if isinstance(ended, KeyboardInterrupt):
        out.say("record: stopped by Ctrl-C")
    elif isinstance(ended, TargetExited):
        out.say(f"record: {ended}")
    elif ended is not None:
        out.say(f"error: {ended}")
        sys.exit(EXIT_BAD_INPUT)
