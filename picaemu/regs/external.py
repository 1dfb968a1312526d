"""External GPU registers (memory-mapped, second address space of the register table): data only.

Sources: pica-formats.md §2.3 and §3.3-3.4 (3dbrew "GPU/External Registers", Citra), citrace.md. A register's
``id`` is its physical address (``Space.EXTERNAL``). Two register files hold them: the GPU file (``GPU_BASE``,
``GPU_WORDS`` words: memory fill units PSC0/1, LCD framebuffer setup PDC0/1, transfer engine PPF, and the P3D window
onto the internal registers at ``P3D_BASE`` + 4 * id) and the LCD file (``LCD_BASE``, ``LCD_WORDS`` words: stored,
no register of it is named here). Engines, the LCD scan-out and the recorders read these fields through
``picaemu.regs.access`` (``get``/``put``/``ext_word``); no bit position of them is written anywhere else.
"""

from __future__ import annotations

from picaemu.regs.blocks._build import f
from picaemu.regs.schema import Field, FieldType, Register, RegKind, Space

GPU_BASE = 0x10400000
GPU_WORDS = 0x1000
LCD_BASE = 0x10202000
LCD_WORDS = 0x400
P3D_BASE = 0x10401000  # internal register id i is memory-mapped at P3D_BASE + 4 * i
P3D_IDS = 0x300

FILL_UNITS = ("PSC0", "PSC1")  # memory fill units, at 0x10400010 / 0x10400020
SCREENS = ("PDC0", "PDC1")  # LCD framebuffer setup of the top / bottom screen, at 0x10400400 / 0x10400500
_FILL_BASES = (0x10400010, 0x10400020)
_PDC_BASES = (0x10400400, 0x10400500)
PPF_BASE = 0x10400C00

# the transfer / LCD pixel format enum (differs from the color-buffer enum: 2 and 3 swap)
TRANSFER_FORMATS = {0: "RGBA8", 1: "RGB8", 2: "RGB565", 3: "RGB5A1", 4: "RGBA4"}
FILL_WIDTHS = {0: "16-bit", 1: "24-bit", 2: "32-bit", 3: "24-bit (3)"}
DOWNSCALES = {0: "none", 1: "2x1", 2: "2x2", 3: "invalid"}
INTERLACE_MODES = {0: "A", 1: "AA", 2: "AB", 3: "BA"}
_ADDR8 = FieldType.ADDRESS


def _ext(address: int, name: str, block: str, doc: str, *fields: Field, kind: RegKind = RegKind.CONFIG) -> Register:
    return Register(address, name, block, doc, kind, tuple(fields), space=Space.EXTERNAL)


def _address(name: str, doc: str) -> Field:
    return f(name, 0, 31, _ADDR8, scale=8, doc=doc)


def _dims(what: str) -> tuple[Field, Field]:
    return f("width", 0, 15, doc=f"{what} width"), f("height", 16, 31, doc=f"{what} height")


def _fill_unit(unit: str, base: int) -> list[Register]:
    block = "memory fill"
    return [
        _ext(base + 0x0, f"{unit}_START", block, "first byte to fill", _address("address", "physical address >> 3")),
        _ext(
            base + 0x4,
            f"{unit}_END",
            block,
            "end of the fill (exclusive)",
            _address("address", "physical address >> 3"),
        ),
        _ext(
            base + 0x8,
            f"{unit}_VALUE",
            block,
            "fill pattern: the raw pixel (2, 3 or 4 bytes, little-endian)",
            f("value", 0, 31, FieldType.RAW),
        ),
        _ext(
            base + 0xC,
            f"{unit}_CONTROL",
            block,
            "bit 0 starts the fill (the trigger); hardware sets bit 1 when done",
            f("busy", 0, doc="write 1 to start; cleared when done"),
            f("finished", 1),
            f("width", 8, 9, enum=FILL_WIDTHS, doc="pattern size"),
            kind=RegKind.TRIGGER,
        ),
    ]


def _screen(unit: str, base: int) -> list[Register]:
    block = "lcd framebuffer"
    return [
        _ext(
            base + 0x5C,
            f"{unit}_FB_SIZE",
            block,
            "framebuffer size in memory rows",
            f("width", 0, 15, doc="pixels per memory row (240)"),
            f("height", 16, 31, doc="memory rows (400 top, 320 bottom)"),
        ),
        _ext(
            base + 0x68,
            f"{unit}_LEFT_A",
            block,
            "left-eye framebuffer, first address",
            f("address", 0, 31, _ADDR8, doc="raw physical address (not shifted)"),
        ),
        _ext(
            base + 0x6C,
            f"{unit}_LEFT_B",
            block,
            "left-eye framebuffer, second address",
            f("address", 0, 31, _ADDR8, doc="raw physical address"),
        ),
        _ext(
            base + 0x70,
            f"{unit}_FORMAT",
            block,
            "framebuffer pixel format and scan-out mode",
            f("pixel_format", 0, 2, enum=TRANSFER_FORMATS),
            f("interlace", 4, 5, enum=INTERLACE_MODES, doc="scanline source: A only, A twice, left/right alternate"),
            f("double", 6, doc="each framebuffer row feeds two scanlines (the top screen's 2D mode)"),
            f("burst", 8, 9, doc="DMA burst size"),
        ),
        _ext(
            base + 0x78,
            f"{unit}_SELECT",
            block,
            "which address pair is shown",
            f("second", 0, doc="0 first address (A), 1 second (B)"),
        ),
        _ext(base + 0x90, f"{unit}_STRIDE", block, "bytes per framebuffer row", f("stride", 0, 31)),
        _ext(
            base + 0x94,
            f"{unit}_RIGHT_A",
            block,
            "right-eye framebuffer, first address",
            f("address", 0, 31, _ADDR8, doc="raw physical address"),
        ),
        _ext(
            base + 0x98,
            f"{unit}_RIGHT_B",
            block,
            "right-eye framebuffer, second address",
            f("address", 0, 31, _ADDR8, doc="raw physical address"),
        ),
    ]


def _line(what: str) -> tuple[Field, Field]:
    return (
        f("width", 0, 15, doc=f"{what} line width, 16-byte units (0: contiguous)"),
        f("gap", 16, 31, doc=f"{what} bytes skipped after each line, 16-byte units"),
    )


_PPF = "transfer engine"
REGISTERS: list[Register] = [
    *(r for unit, base in zip(FILL_UNITS, _FILL_BASES, strict=True) for r in _fill_unit(unit, base)),
    *(r for unit, base in zip(SCREENS, _PDC_BASES, strict=True) for r in _screen(unit, base)),
    _ext(PPF_BASE + 0x00, "PPF_IN_ADDR", _PPF, "input image", _address("address", "physical address >> 3")),
    _ext(PPF_BASE + 0x04, "PPF_OUT_ADDR", _PPF, "output image", _address("address", "physical address >> 3")),
    _ext(
        PPF_BASE + 0x08,
        "PPF_OUT_DIM",
        _PPF,
        "display transfer output size (input-sized with downscale)",
        *_dims("output"),
    ),
    _ext(PPF_BASE + 0x0C, "PPF_IN_DIM", _PPF, "display transfer input size", *_dims("input")),
    _ext(
        PPF_BASE + 0x10,
        "PPF_FLAGS",
        _PPF,
        "display transfer / texture copy mode (default: tiled -> linear)",
        f("flip", 0, doc="output rows in reverse order"),
        f("linear_to_tiled", 1, doc="input linear, output tiled; with no_tiling: linear -> linear"),
        f("crop", 2, doc="output narrower than the input"),
        f("texture_copy", 3, doc="raw copy (overrides everything else)"),
        f("no_tiling", 5, doc="with linear_to_tiled clear: tiled -> tiled"),
        f("in_format", 8, 10, enum=TRANSFER_FORMATS),
        f("out_format", 12, 14, enum=TRANSFER_FORMATS),
        f("block32", 16, doc="32x32 blocks: the console draws the same picture (no effect)"),
        f("scale", 24, 25, enum=DOWNSCALES, doc="box-filter downscale"),
    ),
    _ext(
        PPF_BASE + 0x18,
        "PPF_TRIGGER",
        _PPF,
        "bit 0 starts the transfer (the trigger); hardware sets bit 8 when done",
        f("start", 0),
        f("done", 8),
        kind=RegKind.TRIGGER,
    ),
    _ext(PPF_BASE + 0x20, "PPF_COPY_SIZE", _PPF, "texture copy: bytes to copy (low 4 bits ignored)", f("size", 0, 31)),
    _ext(PPF_BASE + 0x24, "PPF_COPY_IN", _PPF, "texture copy input lines", *_line("input")),
    _ext(PPF_BASE + 0x28, "PPF_COPY_OUT", _PPF, "texture copy output lines", *_line("output")),
]
