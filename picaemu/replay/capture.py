"""Captures as the replay reads them: ``load_capture(path)`` turns any supported capture (a ``.pica`` file, a Citra
CiTrace ``.ctf``, a c3dcap scene directory) into a ``picaemu.formats.pica.Capture``; ``load_capture_kind`` also
names the format it read (``CaptureKind``: kind and version); ``is_capture`` tells them apart from other files by
their first bytes, ``claims_capture`` adds files named like a capture (``CAPTURE_SUFFIXES``), whose loading then
fails with ``NotACapture`` when the bytes are not one; ``initial_gpu_state`` is the GPU state a capture starts from."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from picaemu.errors import FormatError
from picaemu.formats import c3dcap, citrace, pica
from picaemu.state import GpuState, ShaderUnitMemory

CAPTURE_SUFFIXES = (".pica", ".ctf")  # file names that claim to be a capture (c3dcap scenes are directories)


class NotACapture(FormatError):
    """A file that is none of the capture formats (its first bytes are no .pica or CiTrace magic)."""


@dataclass(frozen=True)
class CaptureKind:
    """The format a capture was read from: ``kind`` "pica", "citrace" or "c3dcap" and its ``version`` as the file
    states it ("1.1"; CiTrace: "1, legacy layout" / "1, new layout"; c3dcap: the manifest's "c3dcap-1")."""

    kind: str
    version: str

    def __str__(self) -> str:
        return f"{self.kind} {self.version}"


def load_capture_kind(path: str | os.PathLike[str], *, strict: bool = True) -> tuple[pica.Capture, CaptureKind]:
    """``load_capture`` and the ``CaptureKind`` it read."""
    p = Path(path)
    if c3dcap.is_scene(p):
        from picaemu.gx import convert as gxconvert  # the c3dcap / CiTrace mapping runs a command processor

        return gxconvert.from_scene(c3dcap.read(p)), CaptureKind("c3dcap", c3dcap.FORMAT)
    if p.is_dir():
        raise FormatError("directory is not a c3dcap scene (no manifest.json)", path=str(p))
    with p.open("rb") as fh:
        head = fh.read(12)
    if head.startswith(citrace.MAGIC):
        from picaemu.gx import convert as gxconvert

        trace = citrace.read(p, strict=strict)
        return gxconvert.from_citrace(trace), CaptureKind("citrace", f"{citrace.VERSION}, {trace.layout.value} layout")
    if head[:8] == pica.MAGIC:
        major, minor = int.from_bytes(head[8:10], "little"), int.from_bytes(head[10:12], "little")
        return pica.read(p, strict=strict), CaptureKind("pica", f"{major}.{minor}")
    raise NotACapture(
        f"not a picaemu capture: starts with {head[:8]!r}, neither the .pica nor the CiTrace magic "
        "(nor a c3dcap scene directory)",
        offset=0,
        path=str(p),
    )


def load_capture(path: str | os.PathLike[str], *, strict: bool = True) -> pica.Capture:
    """Any supported capture as a ``.pica`` Capture: a .pica file, a CiTrace .ctf, or a c3dcap scene directory;
    ``NotACapture`` for a file that is none of them."""
    return load_capture_kind(path, strict=strict)[0]


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


def claims_capture(path: str | os.PathLike[str]) -> bool:
    """``is_capture``, or a file named like one (``CAPTURE_SUFFIXES``): what commands taking either a capture or a
    raw command list treat as a capture, so that a damaged or foreign ``.pica`` is refused as ``NotACapture``
    instead of being decoded as command words."""
    return is_capture(path) or (Path(path).is_file() and Path(path).suffix.lower() in CAPTURE_SUFFIXES)


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


__all__ = [
    "CAPTURE_SUFFIXES",
    "CaptureKind",
    "NotACapture",
    "claims_capture",
    "initial_gpu_state",
    "is_capture",
    "load_capture",
    "load_capture_kind",
]
