"""A no-ack front for a stub that has no no-ack mode (qemu 7's gdbstub), for the recorder's tests and bench.

``NoAckProxy`` listens on 127.0.0.1 and relays one client to the stub at ``upstream``. Towards the client it offers
``QStartNoAckMode`` (appended to the stub's ``qSupported`` reply, answered by the proxy itself) and, once that is
on, takes any number of requests at once, as a stub in no-ack mode does. Towards the stub it stays in
acknowledgement mode and sends one request at a time, the next only after the reply to the previous one arrived
and was acknowledged (qemu-user reads requests ahead in blocks and waits for each ``+`` with a one-byte read: a
request sent early would be taken for a bad acknowledgement). The interrupt byte goes through at once.

``segments`` counts the client's writes that carried at least one request, ``requests`` the requests: a client
that sends its requests together writes fewer segments than requests. ``delay`` (seconds) holds each such write
back before it is relayed: a slower link (a console over Wi-Fi) with that much more latency per round trip.
``offer_noack=False`` passes the stub's features through unchanged (the client stays in acknowledgement mode).
"""

from __future__ import annotations

import collections
import select
import socket
import threading
import time

NOACK_FEATURE = b";QStartNoAckMode+"
OK_REPLY = b"$OK#9a"


def _packets(buf: bytearray) -> list[bytes]:
    """Whole ``$...#cc`` packets (bodies) taken from the front of ``buf``; acknowledgements are dropped."""
    out = []
    while buf:
        if buf[:1] in (b"+", b"-"):
            del buf[:1]
            continue
        end = buf.find(b"#")
        if buf[:1] != b"$" or end < 0 or len(buf) < end + 3:
            break
        out.append(bytes(buf[1:end]))
        del buf[: end + 3]
    return out


def _frame(body: bytes) -> bytes:
    return b"$" + body + b"#" + f"{sum(body) & 0xFF:02x}".encode()


class NoAckProxy(threading.Thread):
    """See the module docstring; ``port`` is where the client connects."""

    def __init__(self, upstream: tuple[str, int], *, offer_noack: bool = True, delay: float = 0.0) -> None:
        super().__init__(daemon=True)
        self.upstream, self.offer_noack, self.delay = upstream, offer_noack, delay
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.segments = 0
        self.requests = 0

    def run(self) -> None:
        client, _ = self.server.accept()
        stub = socket.create_connection(self.upstream)
        for s in (client, stub):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with client, stub:
            self._relay(client, stub)

    def _relay(self, client: socket.socket, stub: socket.socket) -> None:
        queue: collections.deque[bytes] = collections.deque()
        from_client, from_stub = bytearray(), bytearray()
        pending: bytes | None = None  # the request the stub is answering
        while True:
            ready, _, _ = select.select([client, stub], [], [])
            for sock in ready:
                data = sock.recv(65536)
                if not data:
                    return
                if sock is client:
                    if b"\x03" in data:  # the interrupt byte is out of band: straight through
                        stub.sendall(b"\x03")
                        data = data.replace(b"\x03", b"")
                    from_client += data
                    got = _packets(from_client)
                    if got and self.delay:
                        time.sleep(self.delay)
                    self.segments += bool(got)
                    self.requests += len(got)
                    queue.extend(got)
                else:
                    from_stub += data
                    for body in _packets(from_stub):
                        stub.sendall(b"+")
                        if self.offer_noack and pending is not None and pending.startswith(b"qSupported"):
                            body += NOACK_FEATURE
                        client.sendall(_frame(body))
                        if not (body.startswith(b"O") and body != b"OK" and pending in (b"c", b"s")):
                            pending = None  # console output before a stop reply: the stop is still to come
            while pending is None and queue:
                body = queue.popleft()
                if body == b"QStartNoAckMode":
                    client.sendall(OK_REPLY)
                    continue
                pending = body
                stub.sendall(_frame(body))
