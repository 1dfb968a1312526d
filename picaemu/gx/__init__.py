"""The GPU's external engines and memory-mapped registers: memory fill (PSC0/1), the transfer engine (display
transfer and texture copy, PPF), command-list kicks (P3D, the MMIO view of the internal registers) and the LCD
framebuffer registers (PDC0/1). ``Gx`` (picaemu.gx.mmio) applies register writes and capture events;
``picaemu.gx.engines`` holds the engines as functions over emulated memory; ``picaemu.gx.convert`` maps CiTrace
traces and c3dcap scenes to and from ``.pica`` captures; ``picaemu.gx.lcd`` turns the PDC registers into
what each screen shows. The registers themselves (addresses, bit fields) are the register table's second address
space, ``picaemu.regs.external``, read through ``picaemu.regs.access``. The names here are imported at first use
(``picaemu.lazy``): ``picaemu.gx.convert`` alone loads no engine."""

from __future__ import annotations

from typing import TYPE_CHECKING

from picaemu.lazy import lazy_exports

if TYPE_CHECKING:
    from picaemu.gx.engines import GxError, display_transfer, memory_fill, texture_copy
    from picaemu.gx.mmio import Gx, lower

__all__ = ["Gx", "GxError", "display_transfer", "lower", "memory_fill", "texture_copy"]
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        **dict.fromkeys(("GxError", "display_transfer", "memory_fill", "texture_copy"), "engines"),
        **dict.fromkeys(("Gx", "lower"), "mmio"),
    },
)
