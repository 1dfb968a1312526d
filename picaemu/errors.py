"""Every error picaemu raises on purpose.

Each type carries the location that a user needs to find the fault: a byte offset in a buffer or file, a packet,
a register id, an emulated physical address, a shader program counter. ``str(err)`` is one line, fit for a CLI.
Callers catch ``PicaError`` to stop on any of them; nothing else escapes the core on bad input.
"""

from __future__ import annotations

import os


class PicaError(Exception):
    """Base of every picaemu error; the message is one line that names where the fault is."""


def _located(message: str, *places: str | None) -> str:
    """``message (place, place)`` with the places that are known."""
    known = [p for p in places if p is not None]
    return f"{message} ({', '.join(known)})" if known else message


class UnsupportedFeature(PicaError):
    """The capture uses hardware behaviour picaemu does not (or cannot, for lack of facts) emulate."""

    def __init__(self, feature: str, *, register: int | None = None, value: int | None = None) -> None:
        where = ""
        if register is not None:
            where = f" (register 0x{register:03X}" + (f" = 0x{value:08X}" if value is not None else "") + ")"
        super().__init__(f"unsupported: {feature}{where}")
        self.feature = feature
        self.register = register
        self.value = value


class CommandBufferError(PicaError):
    """A command buffer cannot be decoded past ``offset`` (a byte offset into the buffer)."""

    def __init__(self, message: str, *, offset: int, packet: int | None = None, address: int | None = None):
        super().__init__(
            _located(
                message,
                f"byte offset 0x{offset:X}",
                None if packet is None else f"packet #{packet}",
                None if address is None else f"address 0x{address:08X}",
            )
        )
        self.offset = offset
        self.packet = packet
        self.address = address


class TruncatedPacket(CommandBufferError):
    """A packet header promises more parameter words than the buffer holds."""


class MisalignedBuffer(CommandBufferError):
    """A buffer whose length or address is not a whole number of 8-byte units."""


class JumpCycle(CommandBufferError):
    """Command-buffer jumps (CMDBUF_JUMP0/1) that loop, or exceed the jump budget."""


class WorkBudgetExceeded(CommandBufferError):
    """One run (a buffer and the buffers its jumps chain to) would execute more command bytes than its budget."""


class MemoryFault(PicaError):
    """An access to emulated physical memory outside any mapped region."""

    def __init__(self, address: int, size: int, who: str) -> None:
        super().__init__(f"{who}: access of {size} bytes at 0x{address:08X} is outside emulated memory")
        self.address = address
        self.size = size
        self.who = who


class RegisterTableError(PicaError):
    """The declarative register table is inconsistent (raised when it is loaded)."""


class ShaderError(PicaError):
    """A shader program misbehaves at run time (runaway loop, stack overflow, bad opcode)."""

    def __init__(self, message: str, *, pc: int | None = None) -> None:
        super().__init__(message if pc is None else f"{message} (pc 0x{pc:03X})")
        self.pc = pc


class FormatError(PicaError):
    """A file (capture, SHBIN, image, trace) is corrupt or not of the expected kind."""

    def __init__(self, message: str, *, offset: int | None = None, path: str | None = None) -> None:
        super().__init__(_located(message, path, None if offset is None else f"byte offset 0x{offset:X}"))
        self.offset = offset
        self.path = path


class OutputIsInput(PicaError):
    """An output path that is one of the command's inputs (same file, symlink or hard link): writing it would
    destroy the input."""

    def __init__(self, output: str, source: str) -> None:
        what = "is" if os.path.abspath(output) == os.path.abspath(source) else "is the same file as"
        super().__init__(f"refusing to overwrite the input: output {output} {what} input {source}")
        self.output = output
        self.source = source


class PipelineError(PicaError):
    """A draw cannot run with the state it was given (bad vertex count, attribute outside memory, ...)."""

    def __init__(self, message: str, *, draw: int | None = None, register: int | None = None) -> None:
        super().__init__(
            _located(
                message,
                None if draw is None else f"draw #{draw}",
                None if register is None else f"register 0x{register:03X}",
            )
        )
        self.draw = draw
        self.register = register


class LinkError(PicaError):
    """The GDB remote link to a console or emulator failed: names the host:port and, where known, the packet."""

    def __init__(self, message: str, *, endpoint: str | None = None, packet: str | None = None) -> None:
        super().__init__(_located(message, endpoint, None if packet is None else f"packet {packet!r}"))
        self.endpoint = endpoint
        self.packet = packet


class LinkTimeout(LinkError):
    """The stub did not answer (or the target did not stop) within the timeout."""


class LinkClosed(LinkError):
    """The stub closed the connection (or the connection could not be made)."""


class LinkProtocolError(LinkError):
    """The stub sent bytes that are not the GDB remote serial protocol: garbage, bad checksums, oversized
    packets, malformed or error replies."""


class TargetExited(LinkError):
    """The debugged program exited or was killed while it was being recorded."""


class RecordError(PicaError):
    """A recording cannot go on: a missing symbol in the ELF, an address outside the 3DS memory map."""


class BackendUnavailable(PicaError):
    """A rendering backend cannot start on this machine (the OpenGL backend without EGL, PyOpenGL or a GL 4.5
    driver); the message says what is missing."""


class EditError(PicaError):
    """An edit-and-replay edit that cannot be made: an unknown or non-editable register, field or value, a shader
    source that does not assemble, a draw outside the capture (``picaemu.debug.edits``)."""
