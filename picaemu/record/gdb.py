"""A client of the GDB remote serial protocol over TCP: the few packets a recorder needs, and nothing it trusts.

Speaks to any stub that implements the protocol (Luma3DS's Rosalina, Azahar/Citra's gdbstub, ``qemu-arm -g``):

- framing ``$payload#cc`` with the modulo-256 checksum verified on every reply; run-length encoded replies
  (``*``) expanded; ``%`` notifications skipped; in acknowledgement mode a bad reply is NAKed (``-``) and asked
  for again (``MAX_RETRIES``), in no-ack mode (``QStartNoAckMode``, used whenever ``qSupported`` offers it: it
  halves the round trips) a bad checksum is an error at once;
- every wait has a deadline (``timeout`` for replies, the caller's for a running target);
- a reply longer than ``MAX_PACKET`` bytes, a byte outside a packet, a malformed reply, an ``Exx`` error reply
  raise ``LinkProtocolError``; a closed socket ``LinkClosed``; silence ``LinkTimeout``; an exited target
  ``TargetExited`` — each a one-line message naming host:port and the request;
- memory reads are split into requests the stub's ``PacketSize`` can answer (hex doubles the bytes).

Socket: TCP_NODELAY, since every exchange is one small packet each way and Nagle's algorithm would add tens of
milliseconds to each. In acknowledgement mode (stubs without no-ack mode: qemu 7) the ``+`` for a reply travels
in front of the next request, in the same segment: the stub, which waits for it before reading on, then wakes
once per request instead of twice (a 4-byte read's round trip under qemu-arm fell from 93-190 us to 32-101 us
on the busy 2-core VM); ``close`` sends one still due. Likewise the stub's ``+`` for a request arrives alone, before
the reply (for ``c`` and ``s`` long before it): ``SO_RCVLOWAT`` of 2 bytes keeps the client asleep until more
follows (a bare stop under qemu 110 -> 101 us, median). Nothing is lost by it: a lone ``+`` needs no answer, and a
lone ``-`` is not answered either (a stub NAKing a request is met by the reply timeout, as before).

Registers: ``registers()`` returns the first 16 32-bit words of ``g`` (r0-r15 on ARM, little-endian target assumed:
the 3DS's ARM11 is). ``exchange`` sends several requests at once in no-ack mode (one round trip);
``registers_and_memory`` is ``g`` with reads in one exchange (``picaemu.record.callsites``).
"""

from __future__ import annotations

import contextlib
import socket
import time
from dataclasses import dataclass

from picaemu.errors import FormatError, LinkClosed, LinkProtocolError, LinkTimeout, TargetExited

MAX_PACKET = 1 << 20  # longest reply body accepted (bytes between '$' and '#')
DEFAULT_PACKET_SIZE = 4096  # what a stub that names no PacketSize is assumed to take
MAX_READ_CHUNK = 0x8000  # bytes per memory-read request, whatever the stub offers
MIN_READ_CHUNK = 16
MAX_RETRIES = 3
RECV_BYTES = 1 << 16
RECV_LOW_WATER = 2  # wake for no lone byte: a stub's "+" for a request is followed by the reply (see below)
ACK, NAK, START, END, NOTIFY, RLE, INTERRUPT = b"+", b"-", b"$", b"#", b"%", ord("*"), b"\x03"
RLE_BIAS = 29  # '*' followed by chr(n + 29) repeats the previous character n more times
HEX_DIGITS = frozenset(b"0123456789abcdefABCDEF")
REGISTER_WORDS = 16
STOP_SIGNAL, EXIT_CODE, KILL_SIGNAL, CONSOLE = "ST", "W", "X", "O"


@dataclass(frozen=True)
class StopReply:
    """Why the target stopped: ``signal`` (5 = SIGTRAP for a breakpoint) and the reply as sent."""

    signal: int
    text: str


def checksum(body: bytes) -> int:
    return sum(body) & 0xFF


def frame(payload: str) -> bytes:
    """``$payload#cc`` (the payload must not hold ``$ # } *``: none of our requests do)."""
    body = payload.encode("ascii")
    return b"$" + body + b"#" + f"{checksum(body):02x}".encode("ascii")


def expand_rle(body: bytes) -> bytes:
    """Undo the protocol's run-length encoding: ``X*n`` stands for X repeated 1 + (ord(n) - 29) times."""
    if RLE not in body:
        return body
    out = bytearray()
    i = 0
    while i < len(body):
        if body[i] == RLE:
            if not out or i + 1 >= len(body) or body[i + 1] < RLE_BIAS + 3:
                raise LinkProtocolError(f"bad run-length encoding at byte {i} of a reply")
            out += out[-1:] * (body[i + 1] - RLE_BIAS)
            i += 2
        else:
            out.append(body[i])
            i += 1
    return bytes(out)


def parse_endpoint(text: str) -> tuple[str, int]:
    """(host, port) of ``HOST:PORT`` (``[::1]:PORT`` too); ``FormatError`` otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise FormatError(f"--gdb wants HOST:PORT, got {text!r}")
    return host.strip("[]"), int(port)


def parse_hex(text: str, what: str) -> bytes:
    if len(text) % 2 or not set(text.encode("latin-1")) <= HEX_DIGITS:
        raise LinkProtocolError(f"{what}: reply {text[:40]!r} is not hex bytes")
    return bytes.fromhex(text)


class GdbClient:
    """One connection to a GDB stub; see the module docstring. Use as a context manager or call ``close``."""

    def __init__(self, host: str, port: int, *, timeout: float = 5.0) -> None:
        self.endpoint = f"{host}:{port}"
        self.timeout = timeout
        self.ack_mode = True
        self.packet_size = DEFAULT_PACKET_SIZE
        self.features: dict[str, str] = {}
        self.bytes_read = 0  # target memory bytes received
        self.requests = 0
        self._ack_due = False  # the last reply's "+" goes out with the next write
        self._buf = bytearray()
        try:
            self._sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as err:
            raise LinkClosed(f"cannot connect: {err.strerror or err}", endpoint=self.endpoint) from None
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with contextlib.suppress(OSError, AttributeError):  # not on every platform: an optimisation only
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, RECV_LOW_WATER)

    def __enter__(self) -> GdbClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self._ack_due:
                self._sock.sendall(ACK)
            self._sock.close()

    # -- bytes -------------------------------------------------------------------------------------------
    def _fill(self, deadline: float, what: str) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise LinkTimeout(f"no answer within {self.timeout:g} s", endpoint=self.endpoint, packet=what)
        self._sock.settimeout(left)
        try:
            chunk = self._sock.recv(RECV_BYTES)
        except TimeoutError:
            raise LinkTimeout("no answer in time", endpoint=self.endpoint, packet=what) from None
        except OSError as err:
            raise LinkClosed(f"connection failed: {err.strerror or err}", endpoint=self.endpoint, packet=what) from None
        if not chunk:
            raise LinkClosed("the stub closed the connection", endpoint=self.endpoint, packet=what)
        self._buf += chunk

    def _write(self, data: bytes, what: str) -> None:
        if self._ack_due:
            data, self._ack_due = ACK + data, False
        try:
            self._sock.sendall(data)
        except OSError as err:
            raise LinkClosed(f"cannot send: {err.strerror or err}", endpoint=self.endpoint, packet=what) from None

    def _error(self, message: str, what: str) -> LinkProtocolError:
        return LinkProtocolError(message, endpoint=self.endpoint, packet=what)

    def _read_frame(self, deadline: float, what: str) -> tuple[bytes, bool]:
        """The next packet body (RLE not yet expanded) and whether its checksum holds; skips acks and
        notifications."""
        while True:
            while not self._buf:
                self._fill(deadline, what)
            lead = self._buf[:1]
            if lead in (ACK, NAK):
                del self._buf[:1]
                if lead == NAK and not self.ack_mode:
                    raise self._error("the stub asked for a retransmission in no-ack mode", what)
                continue
            if lead not in (START, NOTIFY):
                raise self._error(f"byte 0x{lead[0]:02X} outside a packet", what)
            end = self._buf.find(END)
            while end < 0 or len(self._buf) < end + 3:
                if len(self._buf) > MAX_PACKET + 3:
                    raise self._error(f"reply longer than {MAX_PACKET} bytes", what)
                self._fill(deadline, what)
                end = self._buf.find(END)
            body, tail = bytes(self._buf[1:end]), bytes(self._buf[end + 1 : end + 3])
            del self._buf[: end + 3]
            if lead == NOTIFY:
                continue
            try:
                good = int(tail, 16) == checksum(body)
            except ValueError:
                raise self._error(f"checksum {tail!r} is not two hex digits", what) from None
            return body, good

    def _read_packet(self, what: str, timeout: float | None = None) -> str:
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        for _ in range(MAX_RETRIES + 1):
            body, good = self._read_frame(deadline, what)
            if good:
                self._ack_due = self.ack_mode
                return expand_rle(body).decode("latin-1")
            if not self.ack_mode:
                break
            self._write(NAK, what)
        raise self._error("reply fails its checksum", what)

    def request(self, payload: str, *, timeout: float | None = None) -> str:
        """Send one packet and return the reply's text."""
        what = payload[:24]
        self.requests += 1
        self._write(frame(payload), what)
        return self._read_packet(what, timeout)

    def expect_ok(self, payload: str) -> None:
        reply = self.request(payload)
        if reply != "OK":
            raise self._error(f"the stub answered {reply[:40]!r} instead of OK", payload[:24])

    # -- session -----------------------------------------------------------------------------------------
    def handshake(self) -> None:
        """Learn the stub's features (``qSupported``) and switch to no-ack mode when it offers it."""
        reply = self.request("qSupported:swbreak+;hwbreak+")
        for item in filter(None, reply.split(";")):
            name, _, value = item.partition("=")
            self.features[name.rstrip("+-?")] = value or item[-1]
        size = self.features.get("PacketSize")
        if size:
            try:
                self.packet_size = max(int(size, 16), 2 * MIN_READ_CHUNK + 16)
            except ValueError:
                raise self._error(f"PacketSize {size!r} is not hex", "qSupported") from None
        if self.features.get("QStartNoAckMode") == "+":
            self.expect_ok("QStartNoAckMode")
            self.ack_mode = False

    def stop_reason(self) -> StopReply:
        return self._stop_reply(self.request("?"), "?")

    def registers(self) -> list[int]:
        """r0-r15 as unsigned ints (the first 16 little-endian words of the ``g`` reply)."""
        return self._registers(self.request("g"))

    def _registers(self, reply: str) -> list[int]:
        data = parse_hex(reply, "g")
        if len(data) < 4 * REGISTER_WORDS:
            raise self._error(f"register reply holds {len(data)} bytes, fewer than {4 * REGISTER_WORDS}", "g")
        return [int.from_bytes(data[4 * i : 4 * i + 4], "little") for i in range(REGISTER_WORDS)]

    def exchange(self, payloads: list[str]) -> list[str]:
        """The replies to ``payloads``, in order. In no-ack mode they all go out in one write before the first
        reply is read: one round trip for all. In acknowledgement mode one by one: a stub sends each reply and then
        waits for its ``+``, qemu-user with a one-byte read of the socket, where a request sent ahead would be read,
        taken for a bad acknowledgement (the reply is sent again) and lost."""
        if self.ack_mode or len(payloads) < 2:
            return [self.request(p) for p in payloads]
        self.requests += len(payloads)
        self._write(b"".join(frame(p) for p in payloads), payloads[0][:24])
        return [self._read_packet(p[:24]) for p in payloads]

    def registers_and_memory(self, ranges: list[tuple[int, int]]) -> tuple[list[int], list[bytes | None]]:
        """r0-r15 and the memory ``ranges`` ((virtual address, bytes), each at most ``read_chunk``) in one
        ``exchange``; a range the stub refuses, answers short or wrongly is None (the caller reads what it needs
        again, and meets any error there)."""
        requests = [f"m{at:x},{size:x}" for at, size in ranges]
        replies = self.exchange(["g", *requests])
        memory: list[bytes | None] = []
        for (at, size), what, reply in zip(ranges, requests, replies[1:], strict=True):
            try:
                data: bytes | None = self._memory_reply(reply, at, size, what)
            except LinkProtocolError:
                data = None
            if data is not None and len(data) == size:
                self.bytes_read += size
                memory.append(data)
            else:
                memory.append(None)
        return self._registers(replies[0]), memory

    @property
    def read_chunk(self) -> int:
        return max(MIN_READ_CHUNK, min(MAX_READ_CHUNK, (self.packet_size - 16) // 2))

    def read_memory(self, address: int, size: int) -> bytes:
        """``size`` bytes of target memory at virtual ``address`` (several ``m`` requests when large)."""
        out = bytearray()
        while len(out) < size:
            at = address + len(out)
            want = min(self.read_chunk, size - len(out))
            what = f"m{at:x},{want:x}"
            out += self._memory_reply(self.request(what), at, want, what)
        self.bytes_read += size
        return bytes(out)

    def _memory_reply(self, reply: str, at: int, want: int, what: str) -> bytes:
        """The bytes of an ``m`` reply for ``want`` bytes at ``at`` (fewer when the stub stops short)."""
        if reply.startswith("E") and len(reply) == 3:
            raise self._error(f"the stub refused to read {want} bytes at 0x{at:08X} ({reply})", what)
        data = parse_hex(reply, what)
        if not data or len(data) > want:
            raise self._error(f"asked for {want} bytes at 0x{at:08X}, got {len(data)}", what)
        return data

    def set_breakpoint(self, address: int, kind: int = 4) -> None:
        """A software breakpoint (``Z0``); ``kind`` 4 for ARM code, 2 for Thumb."""
        self.expect_ok(f"Z0,{address:x},{kind:x}")

    def clear_breakpoint(self, address: int, kind: int = 4) -> None:
        self.expect_ok(f"z0,{address:x},{kind:x}")

    def step(self) -> StopReply:
        """Execute one instruction (``s``)."""
        return self.resume(self.timeout, "s")

    def resume(self, timeout: float, how: str = "c") -> StopReply:
        """Continue (``c``; ``s``: one step) and wait at most ``timeout`` s until the target stops; console
        output is skipped. Ctrl-C while waiting stops the target first (``\\x03``), then raises
        KeyboardInterrupt."""
        self.requests += 1
        self._write(frame(how), how)
        deadline = time.monotonic() + timeout
        try:
            while True:
                reply = self._read_packet(how, max(0.0, deadline - time.monotonic()))
                if not reply.startswith(CONSOLE) or reply == "OK":
                    return self._stop_reply(reply, how)
        except KeyboardInterrupt:
            self.interrupt()
            raise

    def interrupt(self) -> StopReply | None:
        """Stop a running target (the out-of-band ``\\x03`` byte); None if it does not say it stopped."""
        try:
            self._write(INTERRUPT, "interrupt")
            while True:
                reply = self._read_packet("interrupt")
                if not reply.startswith(CONSOLE):
                    return self._stop_reply(reply, "interrupt")
        except (LinkTimeout, LinkClosed, LinkProtocolError, TargetExited):
            return None

    def detach(self) -> None:
        """Let the target run on without us (``D``); the reply is not waited for long."""
        self.requests += 1
        self._write(frame("D"), "D")
        with contextlib.suppress(LinkTimeout, LinkClosed):
            self._read_packet("D", min(self.timeout, 1.0))

    def _stop_reply(self, reply: str, what: str) -> StopReply:
        kind = reply[:1]
        if kind in (EXIT_CODE, KILL_SIGNAL):
            how = "exited with status" if kind == EXIT_CODE else "was killed by signal"
            raise TargetExited(f"the program {how} {reply[1:3]}", endpoint=self.endpoint, packet=what)
        if not kind or kind not in STOP_SIGNAL:
            raise self._error(f"expected a stop reply, got {reply[:40]!r}", what)
        try:
            signal = int(reply[1:3], 16)
        except ValueError:
            raise self._error(f"stop reply {reply[:40]!r} names no signal", what) from None
        return StopReply(signal, reply)

    def drain(self, wait: float = 0.2) -> None:
        """Throw away whatever the stub still sends within ``wait`` s (a reply left over after Ctrl-C)."""
        self._buf.clear()
        deadline = time.monotonic() + wait
        try:
            while time.monotonic() < deadline:
                self._fill(deadline, "drain")
                self._buf.clear()
        except (LinkTimeout, LinkClosed):
            pass
