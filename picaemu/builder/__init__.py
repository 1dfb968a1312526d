"""Authoring captures in Python at register level, the way citro3d drives the GPU.

``CaptureBuilder`` keeps an emulated memory layout (linear heap from 0x20100000, VRAM from 0x18000000), the
command list being built (``picaemu.command.builder.CommandBuilder``) and the ``.pica`` event stream. Every
register is named as in the register table and every field value is given by name: ``set("DEPTH_COLOR_MASK",
depth_test=True, depth_func="greater", red=1, ...)`` composes the word from the table (enum values by their table
name, floats encoded in the field's float format, addresses divided by the field's scale).

A frame: ``begin_frame(clear=(r, g, b, a))`` emits a GX memory fill of the color and depth buffers and opens a
command list with citro3d's framebuffer, viewport and depth-map setup; state calls (``shader``, ``uniforms``,
``vertices``, ``texture``, ``tev``, ``depth_test``, ``blend``, ``stencil``, ``alpha_test``, ``cull``, ``lut``,
``set``, ``geometry_shader``) and draws (``draw``, ``draw_indexed``) append packets; ``end_frame()`` finalizes
the list, uploads it, submits it (ProcessCommandList), copies the color buffer to the top LCD framebuffer
(display transfer RGBA8 -> RGB8, tiled -> linear), presents it and ends the frame. ``capture()`` returns the
``pica.Capture``; ``save(path)`` writes it. The render target is 240 x 400 (the top screen's portrait buffer)
unless told otherwise. Word composition and projections live in ``picaemu.builder.fields``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from picaemu import numeric
from picaemu.builder.fields import BuilderError, compose, encode_field, fog_lut, outmap, tilt_ortho, tilt_perspective
from picaemu.command.builder import CommandBuilder
from picaemu.formats import pica
from picaemu.formats import shbin as shbin_format
from picaemu.geometry.vertex_loader import ELEMENT_FORMATS
from picaemu.gx import convert as gxconvert
from picaemu.regs import access, by_name
from picaemu.regs.blocks import geometry as geometry_regs
from picaemu.texture import encode_texture, texture_format

if TYPE_CHECKING:
    from picaemu.shader.setup import Unit

LINEAR_BASE, LINEAR_SIZE = 0x20100000, 0x02000000
VRAM_BASE, VRAM_SIZE = 0x18000000, 0x00600000
ATTRIB_BASE = VRAM_BASE  # citro3d's GPUREG_ATTRIBBUFFERS_LOC
ALIGN = 0x80
LCD_BPP = 3  # top LCD framebuffers are RGB8 (bytes B, G, R)
RGBA8, RGB8 = 0, 1  # transfer / LCD pixel format codes (PPF_FLAGS, PDC0_FORMAT)
# FB_FORMAT word citro3d/libctru write for the top screen: RGB8, rows doubled (2D), burst 1 (0x141)
LCD_MODE_RGB8 = access.compose("PDC0_FORMAT", pixel_format=RGB8, double=1, burst=1)
FILL_32BIT = access.compose("PSC0_CONTROL", busy=1, width=2)  # memory fill control: start, 32-bit pattern
# element name -> (attrN_type code, dtype): the vertex loader's table (``vertex_loader.ELEMENT_FORMATS``)
ATTRIB_TYPES = {name: (code, ELEMENT_FORMATS[code]) for code, name in geometry_regs.ATTRIB_TYPES.items()}
TEV_STAGE_REGS = (0xC0, 0xC8, 0xD0, 0xD8, 0xF0, 0xF8)  # TEXENVi_SOURCE ids
TEXUNIT_REGS = ("TEXUNIT0", "TEXUNIT1", "TEXUNIT2")
TEXUNIT_ADDR = ("TEXUNIT0_ADDR1", "TEXUNIT1_ADDR", "TEXUNIT2_ADDR")
UNIT_PREFIX = {"vs": "VSH", "gs": "GSH"}
GS_INPUT_MODE = 0x08000000  # GSH_INPUTBUFFER_CONFIG: inputs come from the vertex shader
IDENTITY_PERMUTATION = (0x76543210, 0xFEDCBA98)  # input attribute k -> v<k>
GS_IN_USE = 2  # GEOSTAGE_CONFIG.gs_use
__all__ = [
    "BuilderError",
    "CaptureBuilder",
    "compose",
    "encode_field",
    "fog_lut",
    "outmap",
    "tilt_ortho",
    "tilt_perspective",
]


class CaptureBuilder:
    """See the module docstring."""

    def __init__(self, *, width: int = 240, height: int = 400, name: str = "builder scene", downscale: int = 0) -> None:
        """``downscale``: 0 none, 1 = 2x1, 2 = 2x2 — the display transfer shrinks the render target onto the LCD."""
        self.width, self.height, self.downscale = width, height, downscale
        self.cap = pica.Capture(
            meta={"source": "picaemu.builder", "scene": name},
            state=pica.InitialState(regs=gxconvert.reset_regs(), gpu_regs=gxconvert.reset_gpu_regs()),
        )
        self._next = {"linear": LINEAR_BASE, "vram": VRAM_BASE}
        self.color = self.alloc(width * height * 4, vram=True)
        self.depth = self.alloc(width * height * 4, vram=True)
        self.lcd_size = (width >> (downscale > 0), height >> (downscale == 2))
        self.lcd = [self.alloc(self.lcd_size[0] * self.lcd_size[1] * LCD_BPP) for _ in range(2)]
        self.frames = 0
        self.cmd: CommandBuilder | None = None

    # -- memory ------------------------------------------------------------------------------------------
    def alloc(self, size: int, *, vram: bool = False, align: int = ALIGN) -> int:
        """Reserve ``size`` bytes in the linear heap (or VRAM); returns the physical address."""
        region = "vram" if vram else "linear"
        base, limit = (VRAM_BASE, VRAM_SIZE) if vram else (LINEAR_BASE, LINEAR_SIZE)
        addr = -(-self._next[region] // align) * align
        if addr + size > base + limit:
            raise BuilderError(f"out of {region} memory allocating {size} bytes")
        self._next[region] = addr + size
        return addr

    def upload(self, data: bytes | np.ndarray, *, vram: bool = False, address: int | None = None) -> int:
        """Copy ``data`` into emulated memory (a MemoryWrite event); returns its address."""
        raw = data.tobytes() if isinstance(data, np.ndarray) else bytes(data)
        addr = self.alloc(len(raw), vram=vram) if address is None else address
        self.cap.events.append(pica.MemoryWrite(addr, self.cap.blobs.add(raw)))
        return addr

    # -- registers ---------------------------------------------------------------------------------------
    @property
    def list(self) -> CommandBuilder:
        if self.cmd is None:
            raise BuilderError("no command list is open: call begin_frame() first")
        return self.cmd

    def set(self, reg: str | int, mask: int = 0xF, /, **values: int | float | bool | str) -> None:
        """Write ``reg`` composed from named field values (``reg`` and ``mask`` positional: no field shadows them)."""
        self.list.write(reg, compose(reg, **values), mask)

    def marker(self, text: str) -> None:
        """A debug marker: inside a frame it ends the command list built so far (submitted as its own
        CommandList event), so the marker sits between the draws before and after it (the debugger groups the
        events after a marker under it); the next writes open a new list."""
        if self.cmd is not None:
            self._submit_list()
            self.cmd = CommandBuilder()
        self.cap.events.append(pica.Marker(text))

    def _submit_list(self) -> None:
        """Finalize the open command list, upload it and append its CommandList event."""
        self.list.finalize()
        data = self.list.tobytes()
        self.cap.events.append(pica.CommandList(self.upload(data), len(data)))

    # -- frames ------------------------------------------------------------------------------------------
    def begin_frame(self, clear: tuple[int, int, int, int] = (0, 0, 0, 255), depth: int = 0, stencil: int = 0) -> None:
        """Clear the color/depth buffers (GX memory fill) and open a command list with the framebuffer setup."""
        r, g, b, a = clear
        fills = (
            pica.FillUnit(
                self.color, self.color + self.width * self.height * 4, r << 24 | g << 16 | b << 8 | a, FILL_32BIT
            ),
            pica.FillUnit(self.depth, self.depth + self.width * self.height * 4, stencil << 24 | depth, FILL_32BIT),
        )
        self.cap.events.append(pica.MemoryFill(fills))
        self.cmd = CommandBuilder()
        w, h = self.width, self.height
        self.set("FRAMEBUFFER_INVALIDATE", trigger=1)
        self.set("DEPTHBUFFER_LOC", address=self.depth)
        self.set("COLORBUFFER_LOC", address=self.color)
        self.set("FRAMEBUFFER_DIM", width=w, height_minus_1=h - 1, orientation=1)
        self.set("RENDERBUF_DIM", width=w, height_minus_1=h - 1, orientation=1)
        self.set("DEPTHBUFFER_FORMAT", format=3)
        self.set("COLORBUFFER_FORMAT", pixel_size=2, format=0)
        self.set("FRAMEBUFFER_BLOCK32", mode=0)
        for reg in ("COLORBUFFER_READ", "COLORBUFFER_WRITE"):
            self.set(reg, enable=0xF)
        for reg in ("DEPTHBUFFER_READ", "DEPTHBUFFER_WRITE"):
            self.set(reg, stencil=1, depth=1)
        self.viewport(0, 0, w, h)
        self.set("SCISSORTEST_MODE", mode=0)
        self.set("DEPTHMAP_ENABLE", mode=1)
        self.set("DEPTHMAP_SCALE", scale=-1.0)
        self.set("DEPTHMAP_OFFSET", offset=0.0)
        self.depth_test(True, "greater", write=True)
        self.cull("none")
        self.set("COLOR_OPERATION", fragment_mode="default", blend_mode="blending", constant=0xE4)
        self.blend()

    def viewport(self, x: int, y: int, w: int, h: int) -> None:
        self.set("VIEWPORT_WIDTH", half_width=w / 2)
        self.set("VIEWPORT_INVW", inv_half_width=2 / w)
        self.set("VIEWPORT_HEIGHT", half_height=h / 2)
        self.set("VIEWPORT_INVH", inv_half_height=2 / h)
        self.set("VIEWPORT_XY", x=x, y=y)

    def end_frame(self) -> None:
        """Finalize and submit the list, copy the render target to the top LCD, present it, end the frame."""
        self.set("FRAMEBUFFER_FLUSH", trigger=1)
        self.set("FRAMEBUFFER_INVALIDATE", trigger=1)
        self._submit_list()
        lcd = self.lcd[self.frames % 2]
        # with downscaling the registers hold the input size; tiled RGBA8 -> linear RGB8
        dim = access.compose("PPF_IN_DIM", width=self.width, height=self.height)
        flags = access.compose("PPF_FLAGS", in_format=RGBA8, out_format=RGB8, scale=self.downscale)
        self.cap.events.append(pica.DisplayTransfer(self.color, lcd, dim, dim, flags))
        lcd_w, lcd_h = self.lcd_size
        self.cap.events.append(pica.Present(0, lcd, lcd, LCD_MODE_RGB8, lcd_w * LCD_BPP, self.frames % 2))
        if (lcd_w, lcd_h) != (self.width, self.height):
            self.cap.events.append(
                pica.RegWrite(by_name("PDC0_FB_SIZE").id, access.compose("PDC0_FB_SIZE", width=lcd_w, height=lcd_h))
            )
        self.cap.events.append(pica.FrameEnd())
        self.frames += 1
        self.cmd = None

    def capture(self) -> pica.Capture:
        if self.cmd is not None:
            raise BuilderError("a frame is still open: call end_frame() first")
        return self.cap

    def save(self, path: str | os.PathLike[str]) -> None:
        pica.write(path, self.capture())

    # -- shader ------------------------------------------------------------------------------------------
    @staticmethod
    def _program(program: shbin_format.Shbin | bytes | str) -> shbin_format.Shbin:
        if isinstance(program, bytes):
            return shbin_format.parse(program)
        if isinstance(program, str):
            from picaemu.shader.asm import assemble

            return assemble(program)
        return program

    def _outputs(self, entry: shbin_format.Dvle) -> None:
        """SH_OUTMAP_* / OUTATTR_* from the outputs of the last stage before rasterization."""
        words, _mask, clock, texcoords = outmap(entry.outputs)
        self.set("SH_OUTMAP_TOTAL", count=len(words))
        self.list.write_many("SH_OUTMAP_O0", words + [0x1F1F1F1F] * (7 - len(words)))
        self.set("SH_OUTATTR_MODE", texcoords_used=int(texcoords))
        self.set("SH_OUTATTR_CLOCK", **clock)

    def shader(self, program: shbin_format.Shbin | bytes | str, dvle: int = 0) -> shbin_format.Dvle:
        """Bind a vertex shader (no geometry shader): SHBIN bytes, a parsed ``Shbin`` or picasso assembly source."""
        program = self._program(program)
        entry = program.dvles[dvle]
        cmd = self.list
        self.set("GEOSTAGE_CONFIG", 0x3, gs_use=0)
        self.set("GEOSTAGE_CONFIG2", 0x3, arrays_or_immediate=0)
        self.set("VSH_COM_MODE", 0x1, gs_config=0)
        cmd.upload_code("VSH", list(program.code)[:512])
        cmd.upload_opdescs("VSH", [d for d, _ in program.opdescs])
        cmd.write("VSH_ENTRYPOINT", 0x7FFF0000 | entry.main_offset)
        words, mask, _clock, _texcoords = outmap(entry.outputs)
        self.vs_outputs = len(words)
        cmd.write("VSH_OUTMAP_MASK", mask)
        for reg in ("VSH_OUTMAP_TOTAL1", "VSH_OUTMAP_TOTAL2"):
            self.set(reg, count_minus_1=len(words) - 1)
        self.set("PRIMITIVE_CONFIG", 0x1, outmap_total_minus_1=len(words) - 1)
        self._outputs(entry)
        self._constants(entry, "vs")
        self._names(program, dvle, "vs")
        return entry

    def geometry_shader(self, program: shbin_format.Shbin | bytes | str, dvle: int = 0) -> shbin_format.Dvle:
        """Bind a geometry shader after ``shader()``: its inputs are the vertex shader's outputs, in order; draw
        with topology "geometry primitive"."""
        program = self._program(program)
        entry = program.dvles[dvle]
        if not entry.is_geometry or not getattr(self, "vs_outputs", 0):
            raise BuilderError("geometry_shader wants a geometry DVLE, bound after a vertex shader()")
        cmd = self.list
        self.set("GEOSTAGE_CONFIG", 0x3, gs_use=GS_IN_USE)
        self.set("VSH_COM_MODE", 0x1, gs_config=1)
        cmd.upload_code("GSH", list(program.code))
        cmd.upload_opdescs("GSH", [d for d, _ in program.opdescs])
        cmd.write("GSH_ENTRYPOINT", 0x7FFF0000 | entry.main_offset)
        cmd.write("GSH_OUTMAP_MASK", outmap(entry.outputs)[1])
        cmd.write("GSH_INPUTBUFFER_CONFIG", GS_INPUT_MODE | (self.vs_outputs - 1))
        cmd.write_many("GSH_ATTRIBUTES_PERMUTATION_LOW", IDENTITY_PERMUTATION)
        self.set(
            "GSH_MISC0",
            mode=entry.gs_mode,
            fixed_vertices_minus_1=max(entry.gs_fixed_num, 1) - 1,
            fixed_uniform_start=entry.gs_fixed_start,
            fixed_mode=int(entry.gs_mode == 2),
        )
        self.set("GSH_MISC1", main_vertices_minus_1=max(entry.gs_variable_num, 1) - 1)
        self._outputs(entry)
        self._constants(entry, "gs")
        self._names(program, dvle, "gs")
        return entry

    def _names(self, program: shbin_format.Shbin, dvle: int, unit: Unit) -> None:
        """Record the DVLE's uniform names in the capture metadata (``picaemu.shader.names``)."""
        from picaemu.shader import names

        entry = names.program_entry(program, dvle, unit)
        if entry["names"]:
            names.add_entry(self.cap.meta, entry)

    def _constants(self, entry: shbin_format.Dvle, unit: str) -> None:
        prefix, bools = UNIT_PREFIX[unit], 0
        for c in entry.constants:
            if c.type == 0:
                bools |= (c.data[0] & 1) << c.register
            elif c.type == 1:
                self.list.write(f"{prefix}_INTUNIFORM_I{c.register}", c.data[0])
            else:
                vec = [float(numeric.f24(w & 0xFFFFFF)) for w in c.data]
                self.list.upload_float_uniforms(prefix, c.register, [vec])
        self.list.write(f"{prefix}_BOOLUNIFORM", 0x7FFF0000 | bools)

    def uniforms(self, index: int, vectors: Sequence[Sequence[float]] | np.ndarray, unit: str = "vs") -> None:
        """Float uniforms c[index...] of the vertex (or geometry) shader; a 4x4 matrix is four row vectors."""
        rows = [tuple(map(float, v)) for v in np.asarray(vectors, np.float64).reshape(-1, 4)]
        self.list.upload_float_uniforms(UNIT_PREFIX[unit], index, rows)

    # -- vertex data -------------------------------------------------------------------------------------
    def vertices(self, attributes: Sequence[np.ndarray], types: Sequence[str] | None = None) -> int:
        """Upload one interleaved vertex buffer; attribute i ((N, c) array) feeds shader input v<i>. Returns N."""
        types = list(types or ["f32"] * len(attributes))
        n = len(attributes[0])
        if not 1 <= len(attributes) <= 12 or any(len(a) != n for a in attributes):
            raise BuilderError("vertices: 1-12 attributes with the same number of vertices")
        columns, low, high = [], 0, compose("ATTRIBBUFFERS_FORMAT_HIGH", num_attrs_minus_1=len(attributes) - 1)
        for i, (attr, kind) in enumerate(zip(attributes, types, strict=True)):
            code, dtype = ATTRIB_TYPES[kind]
            arr = np.asarray(attr).reshape(n, -1)
            columns.append(arr.astype(dtype).view(np.uint8).reshape(n, -1))
            fields = {f"attr{i}_type": code, f"attr{i}_components_minus_1": arr.shape[1] - 1}
            if i < 8:
                low |= compose("ATTRIBBUFFERS_FORMAT_LOW", **fields)
            else:
                high |= compose("ATTRIBBUFFERS_FORMAT_HIGH", **fields)
        for i in range(len(attributes), 12):
            high |= compose("ATTRIBBUFFERS_FORMAT_HIGH", **{f"fixed{i}": 1})
        rows = np.concatenate(columns, axis=1)
        stride = -(-rows.shape[1] // 4) * 4  # keep every vertex 4-byte aligned
        rows = np.pad(rows, ((0, 0), (0, stride - rows.shape[1])))
        address = self.upload(rows.tobytes())
        cmd = self.list
        cmd.write_many("ATTRIBBUFFERS_FORMAT_LOW", [low, high])
        cmd.write("VSH_INPUTBUFFER_CONFIG", 0xA0000000 | (len(attributes) - 1), 0xB)
        cmd.write("VSH_NUM_ATTR", len(attributes) - 1)
        perm = sum(i << 4 * i for i in range(len(attributes)))
        cmd.write_many("VSH_ATTRIBUTES_PERMUTATION_LOW", [perm & 0xFFFFFFFF, perm >> 32])
        self.set("ATTRIBBUFFERS_LOC", base=ATTRIB_BASE)
        config1 = sum(i << 4 * i for i in range(min(8, len(attributes))))
        config2 = sum(i << 4 * (i - 8) for i in range(8, len(attributes))) | stride << 16 | len(attributes) << 28
        cmd.write_many("ATTRIBBUFFER0_OFFSET", [address - ATTRIB_BASE, config1, config2])
        return n

    def draw(self, count: int, topology: str = "triangle list", first: int = 0, *, restart: bool = True) -> None:
        """Draw arrays: ``count`` vertices from vertex ``first`` (``restart`` False: no RESTART_PRIMITIVE before
        it, so that a strip or fan continues the previous draw's)."""
        cmd = self.list
        self.set("PRIMITIVE_CONFIG", 0x2, topology=topology)
        if restart:
            cmd.write("RESTART_PRIMITIVE", 1)
        cmd.write("INDEXBUFFER_CONFIG", 0x80000000)
        cmd.write("NUMVERTICES", count)
        cmd.write("VERTEX_OFFSET", first)
        self._kick("DRAWARRAYS", indexed=False, triangles=False)

    def draw_indexed(
        self,
        indices: Sequence[int] | np.ndarray,
        topology: str = "triangle list",
        *,
        index_type: str = "u16",
        restart: bool = True,
    ) -> None:
        """Draw elements with a u16 (or, ``index_type="u8"``, u8) index buffer (``restart`` as in ``draw``)."""
        idx = np.asarray(indices, {"u8": "<u1", "u16": "<u2"}[index_type])
        address = self.upload(idx.tobytes())
        cmd = self.list
        self.set("PRIMITIVE_CONFIG", 0x2, topology=topology)
        if restart:
            cmd.write("RESTART_PRIMITIVE", 1)
        self.set("INDEXBUFFER_CONFIG", offset=address - ATTRIB_BASE, format=int(index_type == "u16"))
        cmd.write("NUMVERTICES", idx.size)
        cmd.write("VERTEX_OFFSET", 0)
        self._kick("DRAWELEMENTS", indexed=True, triangles=topology == "triangle list")

    def _kick(self, trigger: str, *, indexed: bool, triangles: bool) -> None:
        cmd = self.list
        if indexed:
            self.set("GEOSTAGE_CONFIG", 0x2, indexed_triangles=int(triangles))
            self.set("GEOSTAGE_CONFIG2", 0x2, indexed_triangles=int(triangles))
        else:
            self.set("GEOSTAGE_CONFIG2", 0x1, arrays_or_immediate=1)
        self.set("START_DRAW_FUNC0", 0x1, mode=0)
        cmd.write(trigger, 1)
        self.set("START_DRAW_FUNC0", 0x1, mode=1)
        if indexed:
            self.set("GEOSTAGE_CONFIG", 0x2, indexed_triangles=0)
            self.set("GEOSTAGE_CONFIG2", 0x2, indexed_triangles=0)
        else:
            self.set("GEOSTAGE_CONFIG2", 0x1, arrays_or_immediate=0)
        cmd.write("VTX_FUNC", 1)

    # -- textures and TEV --------------------------------------------------------------------------------
    def texture(
        self, unit: int, rgba: np.ndarray, fmt: str = "RGBA8", *, filter: str = "nearest", wrap: str = "clamp to edge"
    ) -> int:
        """Encode (H, W, 4) uint8 RGBA (row 0 = top), upload it to VRAM and bind it to ``unit``; returns its address."""
        data = encode_texture(np.asarray(rgba, np.uint8), fmt)
        address = self.upload(data, vram=True)
        h, w = rgba.shape[:2]
        prefix = TEXUNIT_REGS[unit]
        self.set(f"{prefix}_DIM", width=w, height=h)
        self.set(
            f"{prefix}_PARAM",
            mag_filter=filter,
            min_filter=filter,
            wrap_s=wrap,
            wrap_t=wrap,
            **({"type": "2D"} if unit == 0 else {}),
        )
        self.set(TEXUNIT_ADDR[unit], address=address)
        self.set(f"{prefix}_TYPE", format=texture_format(fmt).value)
        self.set("TEXUNIT_CONFIG", **{f"unit{unit}_enable": 1}, always1=1, clear_cache=1)
        return address

    def tev(
        self,
        stage: int,
        *,
        rgb: Sequence[str] = ("primary color",),
        alpha: Sequence[str] | None = None,
        rgb_ops: Sequence[str] = (),
        alpha_ops: Sequence[str] = (),
        combine: str = "replace",
        alpha_combine: str | None = None,
        color: tuple[int, int, int, int] = (0, 0, 0, 0),
    ) -> None:
        """One TEV stage: sources, operands (default src.rgb / src.a), combiners and constant color."""
        alpha = rgb if alpha is None else alpha
        base = TEV_STAGE_REGS[stage]
        src = {f"rgb_src{i}": s for i, s in enumerate(rgb)} | {f"alpha_src{i}": s for i, s in enumerate(alpha)}
        ops = {f"rgb_op{i}": s for i, s in enumerate(rgb_ops)} | {f"alpha_op{i}": s for i, s in enumerate(alpha_ops)}
        words = [
            compose(base, **src),
            compose(base + 1, **ops),
            compose(base + 2, rgb_combine=combine, alpha_combine=alpha_combine or combine),
            compose(base + 3, r=color[0], g=color[1], b=color[2], a=color[3]),
            0,
        ]
        self.list.write_many(base, words)

    def passthrough_tev(self, first: int = 1) -> None:
        """Stages ``first``..5 pass the previous result through."""
        for stage in range(first, 6):
            self.tev(stage, rgb=("previous",), combine="replace")

    # -- fragment operations ----------------------------------------------------------------------------
    def depth_test(self, enable: bool, func: str = "greater", *, write: bool = True, color: bool = True) -> None:
        """Depth test and write, and the color write mask (all four channels on or off)."""
        c = int(color)
        self.set(
            "DEPTH_COLOR_MASK",
            depth_test=int(enable),
            depth_func=func,
            red=c,
            green=c,
            blue=c,
            alpha=c,
            depth_write=int(write),
        )

    def fog(self, color: tuple[int, int, int], factors: np.ndarray | None, *, z_flip: bool = False) -> None:
        """Fog toward ``color`` with 129 factors over depth 0..1 (``None`` turns fog off)."""
        if factors is None:
            self.set("TEXENV_UPDATE_BUFFER", 0x1, fog_mode="disabled")
            return
        self.set("TEXENV_UPDATE_BUFFER", 0x5, fog_mode="fog", fog_z_flip=int(z_flip))
        self.set("FOG_COLOR", r=color[0], g=color[1], b=color[2])
        self.lut("fog", fog_lut(factors))

    def cull(self, mode: str = "none") -> None:
        self.set("FACECULLING_CONFIG", mode=mode)

    def blend(self, src: str = "src alpha", dst: str = "one minus src alpha", equation: str = "add") -> None:
        self.set(
            "BLEND_FUNC",
            rgb_equation=equation,
            alpha_equation=equation,
            rgb_src=src,
            rgb_dst=dst,
            alpha_src=src,
            alpha_dst=dst,
        )

    def alpha_test(self, enable: bool, func: str = "always", ref: int = 0) -> None:
        self.set("FRAGOP_ALPHA_TEST", enable=int(enable), func=func, ref=ref)

    def stencil(
        self,
        enable: bool,
        func: str = "always",
        ref: int = 0,
        *,
        mask: int = 0xFF,
        write_mask: int = 0xFF,
        fail: str = "keep",
        depth_fail: str = "keep",
        depth_pass: str = "keep",
    ) -> None:
        self.set("STENCIL_TEST", enable=int(enable), func=func, ref=ref, input_mask=mask, write_mask=write_mask)
        self.set("STENCIL_OP", fail=fail, depth_fail=depth_fail, depth_pass=depth_pass)

    def lut(self, kind: str, entries: Sequence[int], *, table: int = 0) -> None:
        """Raw LUT entries (``kind``: lighting, fog, proctex, gas) through the LUT ports."""
        self.list.upload_lut(kind, list(entries), table=table)
