"""The checks of one draw, over its decoded draw state (``picaemu.draw_state``) and emulated memory: vertex input
(attribute and index reads against the memory the capture defined), textures and render targets (with the sizes
``picaemu.record.reads`` computes for the recorder), shader programs and their uniforms.

``DrawChecks(defined, report)`` is called once per draw (``check(call)``) by the linter's pipeline sink;
``report(code, message, key)`` receives each problem (``key``: what makes two reports the same problem, so that
the linter lists a problem once with the count of draws that repeat it). A part of the draw state that failed
to decode is not checked (the draw fails in the pipeline for its own reason).

Each group of checks depends on a few parts of the draw state (and for memory reads on ``defined``, whose
``version`` the linter bumps when it grows): when those are the same objects as at an earlier check of the group,
its reports are repeated instead of computed again (parts are immutable and shared while no write touches them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from picaemu.draw import DrawCall, DrawKind
from picaemu.draw_state import DrawState, Failed
from picaemu.errors import PicaError
from picaemu.geometry.vertex_loader import AttributeRead, VertexLoaderState, read_indices, split_variable_primitives
from picaemu.lint.shader_flow import program_facts
from picaemu.memory import PhysicalMemory
from picaemu.record.reads import Intervals, target_spans, texture_bytes
from picaemu.shader.setup import ShaderSetup
from picaemu.texture.state import TextureUnitState

Report = Callable[[str, str, Hashable], None]
Reports = list[tuple[str, str, Hashable]]


def _same(a: object, b: object) -> bool:
    """The same object (a version number: the same value)."""
    return a is b or (type(a) is int and a == b)


def _get(ds: DrawState, name: str) -> Any:
    """Part ``name`` of the draw state, None when it failed to decode."""
    value = getattr(ds, name)
    return None if isinstance(value, Failed) else value


class DrawChecks:
    """See the module docstring."""

    def __init__(self, defined: Intervals, report: Report) -> None:
        self.defined = defined
        self.version = 0  # bumped by the linter whenever ``defined`` grows
        self._report = report
        self._out: Reports = []
        self._memo: dict[str, tuple[tuple, Reports]] = {}  # group -> (the objects it depended on, its reports)

    def report(self, code: str, message: str, key: Hashable) -> None:
        self._out.append((code, message, key))

    def _group(self, name: str, token: tuple, run: Callable[..., None], *args: Any) -> None:
        """Run check group ``name`` (``run(*args)``) unless ``token`` (objects compared by identity) is what it last
        ran on."""
        last = self._memo.get(name)
        if last is None or len(last[0]) != len(token) or not all(map(_same, last[0], token)):
            self._out = []
            run(*args)
            last = self._memo[name] = (token, self._out)
        for code, message, key in last[1]:
            self._report(code, message, key)

    def check(self, call: DrawCall) -> None:
        ds = call.draw_state
        parts = ds.__dict__  # the parts by name (a failed one is a ``Failed``)
        version = self.version
        if call.kind is not DrawKind.IMMEDIATE:
            self._group("vertices", (parts["vertex_range"], call.kind, version), self._vertex_input, call, ds)
        token = (parts["texture0"], parts["texture1"], parts["texture2"], version)
        self._group("textures", token, self._textures, call.memory, ds)
        self._group("targets", (parts["framebuffer"],), self._targets, ds)
        for name in ("vs", "gs"):
            setup = parts[name]
            if setup is not None and not isinstance(setup, Failed):
                self._group(name, (setup,), self._shader, setup)

    # -- vertex input --------------------------------------------------------------------------------------
    def _vertex_input(self, call: DrawCall, ds: DrawState) -> None:
        vl: VertexLoaderState | None = _get(ds, "vertex_range")
        if vl is None or vl.count == 0:
            return
        if call.kind is DrawKind.ELEMENTS and not self._index_buffer(call.memory, vl):
            return
        if call.kind is DrawKind.ARRAYS:
            lo, hi = vl.first, vl.first + vl.count - 1
        else:
            try:
                indices = read_indices(vl, call.kind, call.memory)
                primitives = _get(ds, "primitives")
                if primitives is not None and primitives.variable_primitives:
                    indices = split_variable_primitives(indices)[0]
            except PicaError:
                return  # the pipeline names these itself (too many vertices, a variable primitive past the stream)
            if indices.size == 0:
                return
            lo, hi = int(indices.min()), int(indices.max())
        reported: set[int] = set()  # loaders already named: their other attributes read the same buffer
        for read in vl.reads:
            if read.loader not in reported and self._attribute(call, read, lo, hi):
                reported.add(read.loader)

    def _index_buffer(self, memory: PhysicalMemory, vl: VertexLoaderState) -> bool:
        """Check the index buffer; True when its indices can be read."""
        item = vl.index_dtype.itemsize
        size = vl.count * item
        key = ("index", vl.index_address)
        where = f"index buffer at 0x{vl.index_address:08X} ({vl.count} x {item} bytes)"  # once per vertex range
        if vl.index_address % item:
            self.report("misaligned-address", f"{where} is not aligned to its index size", key)
        if not memory.contains(vl.index_address, size):
            self.report("attribute-out-of-memory", f"{where} is outside physical memory", key)
            return False
        if not self.defined.covers(vl.index_address, vl.index_address + size):
            self.report("attribute-out-of-memory", f"{where} reads memory the capture never wrote", key)
        return True

    def _attribute(self, call: DrawCall, read: AttributeRead, lo: int, hi: int) -> bool:
        """Check one attribute's reads of vertices ``lo``..``hi``; True when it reported a problem."""
        item = read.dtype.itemsize
        vertex = item * read.components
        misaligned = bool(read.address % item or read.stride % item)
        start, size = read.address + read.stride * lo, read.stride * (hi - lo) + vertex
        if not misaligned and self.defined.covers(start, start + size) and call.memory.contains(start, size):
            return False  # the common case: no text to build
        what = f"attribute {read.attribute} (loader {read.loader}, buffer 0x{read.address:08X}, stride {read.stride})"
        key = ("attribute", read.address, read.stride)
        if misaligned:
            self.report("misaligned-address", f"{what} is not aligned to its {item}-byte elements", key)
        if not call.memory.contains(start, size):
            self.report("attribute-out-of-memory", f"{what}: vertices {lo}..{hi} are outside physical memory", key)
            return True
        if self.defined.covers(start, start + size):
            return misaligned
        end = self.defined.end_of(start)
        if call.kind is DrawKind.ELEMENTS and end is not None and start + vertex <= end and read.stride:
            held = (end - read.address - vertex) // read.stride + 1
            self.report("index-out-of-range", f"index {hi} of {what}: its buffer holds {held} vertices", key)
            return True
        self.report("attribute-out-of-memory", f"{what}: vertices {lo}..{hi} read memory the capture never wrote", key)
        return True

    # -- textures, render targets ------------------------------------------------------------------------------
    def _textures(self, memory: PhysicalMemory, ds: DrawState) -> None:
        for unit in range(3):
            texture = _get(ds, f"texture{unit}")
            if texture is not None and texture.enabled:
                self._texture(memory, texture)

    def _texture(self, memory: PhysicalMemory, t: TextureUnitState) -> None:
        try:
            size = texture_bytes(t)
        except PicaError:
            return  # an invalid size: the texture unit's own error
        for face, address in enumerate(t.addresses):
            if self.defined.covers(address, address + size) and memory.contains(address, size):
                continue  # the common case: no text to build
            what = f"texture unit {t.unit} ({t.width}x{t.height} {t.format.name}, {t.max_level + 1} level(s))"
            where = f"{what}{f' face {face}' if len(t.addresses) > 1 else ''} at 0x{address:08X} ({size} bytes)"
            if not memory.contains(address, size):
                text = f"{where} is outside physical memory"
            else:
                text = f"{where} reads memory the capture never wrote"
            self.report("texture-out-of-memory", text, ("texture", address, size))

    def _targets(self, ds: DrawState) -> None:
        if _get(ds, "framebuffer") is None:
            return
        spans = target_spans(ds)
        if len(spans) < 2:
            return
        (c0, color), (d0, depth) = spans
        if c0 < d0 + depth and d0 < c0 + color:
            self.report(
                "target-overlap",
                f"color buffer 0x{c0:08X}..0x{c0 + color:08X} and depth buffer 0x{d0:08X}..0x{d0 + depth:08X} overlap",
                ("targets", c0, d0),
            )

    # -- shaders -----------------------------------------------------------------------------------------
    def _shader(self, setup: ShaderSetup) -> None:
        facts = program_facts(setup)
        unit = setup.unit
        if facts.no_end is not None:
            key = ("shader", unit, setup.program_key, setup.entry)
            self.report("shader-no-end", f"{unit} program (entry 0x{setup.entry:03X}): {facts.no_end}", key)
            return
        rows = facts.uniforms
        if rows.size == 0:
            return
        values = setup.float_uniforms.take(rows, axis=0)
        if math.isfinite(values.sum()):  # every value finite (a float32 sum that overflows: the exact test below)
            return
        bad = rows[~np.isfinite(values).all(axis=1)]
        if bad.size:
            named = ", ".join(f"c{r} = {tuple(setup.float_uniforms[r].tolist())}" for r in bad[:3])
            self.report("nonfinite-uniform", f"{unit} program reads {named}", ("uniform", unit, *bad.tolist()))
