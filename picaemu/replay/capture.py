"""Captures as the replay reads them: ``load_capture(path)`` turns any supported capture (a ``.pica`` file, a Citra
CiTrace ``.ctf``, a c3dcap scene directory) into a ``picaemu.formats.pica.Capture``; ``is_capture`` tells them
apart from other files; ``initial_gpu_state`` is the GPU state a capture starts from."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from picaemu.errors import FormatError
from picaemu.formats import c3dcap, citrace, pica
from picaemu.gx import convert as gxconvert
from picaemu.state import GpuState, ShaderUnitMemory


def load_capture(path: str | os.PathLike[str], *, strict: bool = True) -> pica.Capture:
    """Any supported capture as a ``.pica`` Capture: a .pica file, a CiTrace .ctf, or a c3dcap scene directory."""
    p = Path(path)
    if c3dcap.is_scene(p):
        return gxconvert.from_scene(c3dcap.read(p))
    if p.is_dir():
        raise FormatError("directory is not a c3dcap scene (no manifest.json)", path=str(p))
    with p.open("rb") as fh:
        head = fh.read(8)
    if head.startswith(citrace.MAGIC):
        return gxconvert.from_citrace(citrace.read(p, strict=strict))
    if head == pica.MAGIC:
        return pica.read(p, strict=strict)
    raise FormatError(f"unknown capture kind (starts with {head[:8]!r})", offset=0, path=str(p))


def is_capture(path: str | os.PathLike[str]) -> bool:
    """True for a c3dcap directory or a file that starts with the .pica or CiTrace magic."""
    p = Path(path)
    if c3dcap.is_scene(p):
        return True
    if not p.is_file():
        return False
    with p.open("rb") as fh:
        head = fh.read(8)
    return head.startswith(citrace.MAGIC) or head == pica.MAGIC


def initial_gpu_state(s: pica.InitialState) -> GpuState:
    return GpuState(
        regs=s.regs.astype(np.uint32),
        vs=ShaderUnitMemory(
            s.vs_code.astype(np.uint32), s.vs_opdescs.astype(np.uint32), s.vs_uniforms.astype(np.float32)
        ),
        gs=ShaderUnitMemory(
            s.gs_code.astype(np.uint32), s.gs_opdescs.astype(np.uint32), s.gs_uniforms.astype(np.float32)
        ),
        lighting_luts=s.lighting_luts.astype(np.uint32),
        fog_lut=s.fog_lut.astype(np.uint32),
        proctex_luts=s.proctex_luts.astype(np.uint32),
        gas_lut=s.gas_lut.astype(np.uint32),
        fixed_attribs=s.fixed_attribs.astype(np.float32),
    )


__all__ = ["initial_gpu_state", "is_capture", "load_capture"]
