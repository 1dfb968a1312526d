"""Conversions between capture kinds: CiTrace (.ctf) and c3dcap scenes to ``.pica`` captures, and back to CiTrace.

- ``from_citrace(trace)``: initial arrays to ``InitialState`` (float24 uniforms/default attributes decoded; Citra
  never recorded w, so w reads 0.0 and ``meta["citrace.w"]`` says so; opdescs are the first 128 of 4096 words),
  0xE1 -> FrameEnd, 0xE2 -> MemoryWrite (blobs deduplicated), 0xE3 -> RegWrite. The one unit difference between
  the layouts is normalised here: a legacy write to CMDBUF_SIZE0/1 (bytes) becomes bytes >> 3 (rounded up), the
  hardware unit every ``.pica`` uses.
- ``from_scene(scene)``: present -> Present (and FrameEnd after every top-screen present that follows a GX
  command); gx -> MemoryWrite of every linear block with CPU bytes (README rule: reload at each command; a block
  with ``file: null`` carries no CPU bytes and is not written, so it keeps what earlier transfers left; the
  reader hands adjacent blocks over merged into runs, one write each), then the command (every GX command:
  ProcessCommandList, MemoryFill, DisplayTransfer, TextureCopy, RequestDma, FlushCacheRegions); a command
  list's own bytes are written at its address before it runs.
- ``to_citrace(capture, layout)``: the reverse, with GX events lowered to register writes; returns the trace and
  a list of what the CiTrace format cannot hold (markers, GS state, LUTs, RequestDma copies; initial memory is
  emitted as loads; FlushCacheRegions does nothing and is dropped).
"""

from __future__ import annotations

import numpy as np

from picaemu import numeric
from picaemu.command.processor import CommandProcessor
from picaemu.errors import FormatError
from picaemu.formats import c3dcap, citrace, pica
from picaemu.gx.lcd import reset_values
from picaemu.gx.mmio import lower
from picaemu.regs import access, id_of
from picaemu.regs.external import GPU_WORDS, LCD_WORDS, P3D_BASE
from picaemu.state import GpuState

CMDBUF_SIZE_REGS = frozenset({P3D_BASE + 4 * id_of("CMDBUF_SIZE0"), P3D_BASE + 4 * id_of("CMDBUF_SIZE1")})
F24_MASK = 0xFFFFFF
OPDESCS = 128


def reset_regs() -> np.ndarray:
    """Internal registers at power-on (the command processor's reset values)."""
    state = GpuState()
    CommandProcessor(state=state).reset()
    return state.regs.copy()


def reset_gpu_regs() -> np.ndarray:
    """External GPU registers at power-on: zero, except Citra's LCD sizes, formats and strides."""
    gpu = np.zeros(GPU_WORDS, np.uint32)
    for screen in (0, 1):
        for name, value in reset_values(screen).items():
            gpu[access.ext_index(name)] = value
    return gpu


def _f24_vectors(words: np.ndarray | None, count: int) -> np.ndarray:
    """(count, 4) float32 from Citra's one-float24-per-word arrays (x, y, z decoded, w = 0: never recorded)."""
    out = np.zeros((count, 4), np.float32)
    if words is not None:
        vec = np.asarray(words, np.uint32).reshape(count, 4) & F24_MASK
        out[:, :3] = numeric.f24(vec[:, :3])
    return out


def _array(trace: citrace.CiTrace, name: str, size: int) -> np.ndarray:
    arr = trace.arrays.get(name)
    return np.zeros(size, np.uint32) if arr is None else np.asarray(arr, np.uint32)[:size]


def from_citrace(trace: citrace.CiTrace) -> pica.Capture:
    """A ``.pica`` capture replaying ``trace`` (see the module docstring)."""
    state = pica.InitialState(
        regs=_array(trace, "pica_regs", 0x300).copy(),
        vs_code=_array(trace, "vs_program", 4096).copy(),
        vs_opdescs=_array(trace, "vs_swizzle", OPDESCS).copy(),
        vs_uniforms=_f24_vectors(trace.arrays.get("vs_uniforms"), 96),
        gs_code=_array(trace, "gs_program", 4096).copy(),
        gs_opdescs=_array(trace, "gs_swizzle", OPDESCS).copy(),
        gs_uniforms=_f24_vectors(trace.arrays.get("gs_uniforms"), 96),
        fixed_attribs=_f24_vectors(trace.arrays.get("default_attributes"), 16),
        gpu_regs=_array(trace, "gpu_regs", GPU_WORDS).copy(),
        lcd_regs=_array(trace, "lcd_regs", LCD_WORDS).copy(),
    )
    cap = pica.Capture(
        meta={
            "source": "citrace",
            "citrace.layout": trace.layout.value,
            "citrace.w": "uniform and default-attribute w were not recorded; read as 0.0",
        },
        state=state,
    )
    legacy = trace.layout is citrace.Layout.LEGACY
    for el in trace.elements:
        if isinstance(el, citrace.FrameMarker):
            cap.events.append(pica.FrameEnd())
        elif isinstance(el, citrace.MemoryLoad):
            cap.events.append(pica.MemoryWrite(el.address, cap.blobs.add(el.data)))
        else:
            value = -(-el.value // 8) if legacy and el.address in CMDBUF_SIZE_REGS else el.value
            cap.events.append(pica.RegWrite(el.address, value, el.width))
    for warning in trace.warnings:
        cap.meta[f"citrace.warning.{len(cap.meta)}"] = warning
    return cap


def _scene_command(cap: pica.Capture, cmd: c3dcap.GxCommand) -> None:
    for block in cmd.memory:
        if block.data is not None:
            cap.events.append(pica.MemoryWrite(block.address, cap.blobs.add(block.data)))
    a = cmd.args
    if cmd.kind == "MemoryFill":
        units = [pica.FillUnit(f.start, f.end, f.value, f.control) for f in a["fills"]]
        units += [pica.FillUnit(0, 0, 0, 0)] * (2 - len(units))
        cap.events.append(pica.MemoryFill((units[0], units[1])))
    elif cmd.kind == "ProcessCommandList":
        cap.events.append(pica.MemoryWrite(a["address"], cap.blobs.add(a["data"])))
        cap.events.append(pica.CommandList(a["address"], a["size"], a["update_gas"] | a["flush"] << 1))
    elif cmd.kind == "DisplayTransfer":
        dims = [
            access.compose(f"PPF_{s.upper()}_DIM", width=a[f"{s}_width"], height=a[f"{s}_height"])
            for s in ("in", "out")
        ]
        cap.events.append(pica.DisplayTransfer(a["in_paddr"], a["out_paddr"], dims[0], dims[1], a["flags"]))
    elif cmd.kind == "TextureCopy":
        cap.events.append(
            pica.TextureCopy(a["in_paddr"], a["out_paddr"], a["size"], a["in_line"], a["out_line"], a["flags"])
        )
    elif cmd.kind == "RequestDma":
        cap.events.append(pica.RequestDma(a["src_paddr"], a["dst_paddr"], a["size"], a["flush"]))
    else:  # FlushCacheRegions
        regions = a["regions"] + ((0, 0),) * (pica.CACHE_REGIONS - len(a["regions"]))
        cap.events.append(pica.FlushCacheRegions(regions))


def from_scene(scene: c3dcap.Scene) -> pica.Capture:
    """A ``.pica`` capture replaying a c3dcap scene (see the module docstring)."""
    state = pica.InitialState(regs=reset_regs(), gpu_regs=reset_gpu_regs())
    cap = pica.Capture(meta={"source": "c3dcap-1", "scene": scene.name}, state=state)
    commands_since_frame = 0
    for event in scene.events:
        if isinstance(event, c3dcap.Present):
            cap.events.append(pica.Present(event.screen, event.left, event.right, event.mode, event.stride, event.swap))
            if event.screen == 0 and commands_since_frame:
                cap.events.append(pica.FrameEnd())
                commands_since_frame = 0
        else:
            _scene_command(cap, event)
            commands_since_frame += 1
    return cap


def _f24_words(vectors: np.ndarray) -> np.ndarray:
    words = np.zeros(vectors.shape, np.uint32)
    words[:, :3] = np.asarray(numeric.to_f24(vectors[:, :3].astype(np.float32)), np.uint32)
    return words.ravel()


def to_citrace(cap: pica.Capture, layout: citrace.Layout = citrace.Layout.NEW) -> tuple[citrace.CiTrace, list[str]]:
    """A CiTrace of ``cap`` and the list of things the CiTrace format could not carry."""
    s = cap.state
    lost: list[str] = []
    opdesc_words = np.zeros(4096, np.uint32)
    opdesc_words[:OPDESCS] = s.vs_opdescs
    arrays: dict[str, np.ndarray | None] = {
        "gpu_regs": s.gpu_regs,
        "lcd_regs": s.lcd_regs,
        "pica_regs": s.regs,
        "default_attributes": _f24_words(s.fixed_attribs),
        "vs_program": s.vs_code,
        "vs_swizzle": opdesc_words,
        "vs_uniforms": _f24_words(s.vs_uniforms),
        "gs_program": None,
        "gs_swizzle": None,
        "gs_uniforms": None,
    }
    if s.gs_code.any() or s.gs_opdescs.any() or s.gs_uniforms.any():
        lost.append("initial geometry-shader state")
    if s.lighting_luts.any() or s.fog_lut.any() or s.proctex_luts.any() or s.gas_lut.any():
        lost.append("initial LUT contents")
    if np.any(s.vs_uniforms[:, 3]) or np.any(s.fixed_attribs[:, 3]):
        lost.append("w of initial float uniforms / default attributes")
    trace = citrace.CiTrace(arrays=arrays, layout=layout)
    els = trace.elements
    els += [citrace.MemoryLoad(addr, cap.blobs[blob]) for addr, blob in s.memory]
    markers = dmas = 0
    for event in cap.events:
        if isinstance(event, pica.FrameEnd):
            els.append(citrace.FrameMarker())
        elif isinstance(event, pica.MemoryWrite):
            els.append(citrace.MemoryLoad(event.address, cap.blobs[event.blob]))
        elif isinstance(event, pica.Marker):
            markers += 1
        elif isinstance(event, pica.RequestDma):
            dmas += 1
        else:
            for address, value, width in lower(event):
                if layout is citrace.Layout.LEGACY and address in CMDBUF_SIZE_REGS:
                    value *= 8
                if layout is citrace.Layout.NEW and width == 8:
                    els += [
                        citrace.RegisterWrite(address, value & 0xFFFFFFFF),
                        citrace.RegisterWrite(address + 4, value >> 32),
                    ]
                elif layout is citrace.Layout.NEW and width != 4:
                    raise FormatError(f"the new CiTrace layout cannot hold a {width}-byte register write")
                else:
                    els.append(citrace.RegisterWrite(address, value, width))
    if markers:
        lost.append(f"{markers} user marker(s)")
    if dmas:  # a CiTrace has memory loads and register writes only; the DMA engine is no GPU register
        lost.append(f"{dmas} RequestDma copy(ies): CiTrace cannot hold a DMA, so the copied bytes are missing")
    return trace, lost
