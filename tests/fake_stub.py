"""A scripted GDB stub for the recorder's tests: a well-behaved one that plays a sample capture as a "program"
stopping at the GX submission and present hooks, and hostile ones (garbage, wrong checksums, endless packets,
disconnects, silence, error replies) that the client must turn into named errors.

``FakeProgram`` turns a capture into stops: before each stop, the bytes the program's CPU wrote; then the hook
address and r0-r3 / sp as the ARM calling convention passes the arguments (GX command words in a scratch area,
present's stride and mode on the stack). ``FakeStub`` serves it on 127.0.0.1 in a thread, one connection.
"""

from __future__ import annotations

import socket
import struct
import threading
from dataclasses import dataclass, field

from picaemu.formats import pica

from picaemu.record.memmap import to_virtual
from picaemu.record.symbols import ARM_KIND, Hook
from tests import gx_script

SUBMIT, PRESENT = 0x00010000, 0x00010100
SCRATCH, STACK = 0x00200000, 0x00300000
HOOKS = [
    Hook("submit", "gspSubmitGxCommand", SUBMIT, ARM_KIND, 0),
    Hook("present", "gspPresentBuffer", PRESENT, ARM_KIND),
]


@dataclass
class Stop:
    writes: list[tuple[int, bytes]]
    regs: list[int]


@dataclass
class FakeProgram:
    stops: list[Stop] = field(default_factory=list)
    memory: dict[int, int] = field(default_factory=dict)  # virtual address -> byte
    repeat: bool = False  # start over after the last stop (a program that runs until stopped)

    @classmethod
    def from_capture(cls, capture: pica.Capture, *, repeat: bool = False) -> FakeProgram:
        prog, pending = cls(repeat=repeat), []
        for event in capture.events:
            if isinstance(event, pica.MemoryWrite):
                pending.append((to_virtual(event.address), capture.blobs[event.blob]))
            elif isinstance(event, pica.Present):
                pending.append((STACK, struct.pack("<2I", event.stride, event.format)))
                regs = [event.screen, event.select, to_virtual(event.left), to_virtual(event.right)]
                prog.stops.append(Stop(pending, regs + [0] * 9 + [STACK, 0, PRESENT]))
                pending = []
            elif not isinstance(event, (pica.FrameEnd, pica.Marker)):
                words = gx_script._gx(event)[4:]
                pending.append((SCRATCH, words))
                prog.stops.append(Stop(pending, [SCRATCH] + [0] * 14 + [SUBMIT]))
                pending = []
        return prog

    def read(self, address: int, size: int) -> bytes:
        return bytes(self.memory.get(address + i, 0) for i in range(size))

    def write(self, address: int, data: bytes) -> None:
        for i, b in enumerate(data):
            self.memory[address + i] = b


def packet(payload: bytes, *, good: bool = True) -> bytes:
    cs = (sum(payload) + (0 if good else 1)) & 0xFF
    return b"$" + payload + b"#" + f"{cs:02x}".encode()


class FakeStub(threading.Thread):
    """Serves ``program`` with behaviour ``mode``: "good", "garbage", "checksum", "huge", "silent",
        "error", "disconnect" (after ``after`` requests), "exit" (the program exits at its end), "retrap" (a single step
    from a breakpoint stops there again without executing: the breakpoint must be taken out first, as on stubs that
    patch a breakpoint instruction into memory; otherwise a step ignores breakpoints, as qemu's does)."""

    def __init__(self, program: FakeProgram | None = None, mode: str = "good", *, after: int = 0) -> None:
        super().__init__(daemon=True)
        self.program, self.mode, self.after = program or FakeProgram(), mode, after
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.requests: list[str] = []
        self.batches: list[int] = []  # requests per received segment that held any (a client sending ahead: > 1)
        self.regs = [0] * 16
        self.next = 0
        self.noack = False
        self.last = b""
        self.breakpoints: set[int] = set()

    def run(self) -> None:
        conn, _ = self.server.accept()
        with conn:
            buf = b""
            while True:
                try:
                    chunk = conn.recv(65536)
                except OSError:
                    return
                if not chunk:
                    return
                buf += chunk
                before = len(self.requests)
                while True:
                    buf = buf.lstrip(b"+")
                    if buf[:1] == b"-":  # a NAK: send the last reply again
                        buf = buf[1:]
                        conn.sendall(self.last)
                        continue
                    if buf[:1] == b"\x03":
                        buf = buf[1:]
                        conn.sendall(packet(b"S02"))
                        continue
                    end = buf.find(b"#")
                    if not buf.startswith(b"$") or end < 0 or len(buf) < end + 3:
                        break
                    body, buf = buf[1:end].decode(), buf[end + 3 :]
                    if not self.noack:
                        conn.sendall(b"+")
                    self.requests.append(body)
                    if self.mode == "disconnect" and len(self.requests) > self.after:
                        return
                    reply = self.answer(body)
                    if reply is not None:
                        self.last = reply
                        conn.sendall(reply)
                if len(self.requests) > before:
                    self.batches.append(len(self.requests) - before)

    def answer(self, body: str) -> bytes | None:
        mode = self.mode
        if body.startswith("qSupported"):
            if mode == "garbage":
                return b"hello, this is not a packet\n"
            if mode == "checksum":
                return packet(b"PacketSize=1000;QStartNoAckMode+", good=False)
            if mode == "huge":
                return b"$" + b"A" * (2 << 20)
            return packet(b"PacketSize=1000;QStartNoAckMode+")
        if body == "QStartNoAckMode":
            self.noack = True
            return packet(b"OK")
        if body == "?":
            return packet(b"S05")
        if body[:2] in ("Z0", "z0"):
            address = int(body[3:].split(",")[0], 16)
            (self.breakpoints.add if body[0] == "Z" else self.breakpoints.discard)(address)
            return packet(b"OK")
        if body == "g":
            return packet(b"".join(struct.pack("<I", r).hex().encode() for r in self.regs))
        if body.startswith("m"):
            if mode == "error":
                return packet(b"E01")
            addr, size = (int(x, 16) for x in body[1:].split(","))
            return packet(self.program.read(addr, size).hex().encode())
        if body == "s":
            if mode != "retrap" or self.regs[15] not in self.breakpoints:
                self.regs[15] += 4
            return packet(b"T05")
        if body == "c":
            return self.cont()
        if body == "D":
            return packet(b"OK")
        return packet(b"")

    def cont(self) -> bytes | None:
        if self.mode == "silent":
            return None
        stops = self.program.stops
        if self.next >= len(stops):
            if not self.program.repeat or not stops:
                return packet(b"W00")
            self.next = 0
        stop = stops[self.next]
        self.next += 1
        for address, data in stop.writes:
            self.program.write(address, data)
        self.regs = list(stop.regs)
        return packet(b"T05thread:01;")
