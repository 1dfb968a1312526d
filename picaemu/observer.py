"""The one narrow interface through which debuggers, statistics and listings watch the command processor.

Subclass ``Observer`` and override what you need; attach with ``CommandProcessor.attach``. With no observer
attached the compiled loop records nothing and no Python runs per packet, so headless replays pay nothing.
Events arrive in stream order: a packet, then its register writes; a trigger after the write that fired it;
draw begin/end around the pipeline's work. ``buffer`` is the physical address of the command buffer that holds
the packet (0 for a buffer that does not live in emulated memory), ``offset`` the packet's byte offset in it.
"""

from __future__ import annotations

from dataclasses import dataclass

from picaemu.draw import DrawCall


@dataclass(frozen=True)
class PacketEvent:
    buffer: int
    offset: int
    id: int
    mask: int
    consecutive: bool
    params: tuple[int, ...]


@dataclass(frozen=True)
class WriteEvent:
    """One register write: ``value`` is the parameter word as the packet carries it, before the mask."""

    buffer: int
    offset: int
    id: int
    value: int
    mask: int


@dataclass(frozen=True)
class TriggerEvent:
    buffer: int
    offset: int
    id: int
    action: str  # picaemu.regs.Action value (e.g. "draw arrays", "jump channel 0")
    value: int


class Observer:
    """Base class: every hook does nothing."""

    def on_packet(self, event: PacketEvent) -> None:
        return None

    def on_write(self, event: WriteEvent) -> None:
        return None

    def on_trigger(self, event: TriggerEvent) -> None:
        return None

    def on_draw_begin(self, call: DrawCall) -> None:
        return None

    def on_draw_end(self, call: DrawCall) -> None:
        return None
