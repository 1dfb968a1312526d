"""Register words and projection helpers of the capture builder (``picaemu.builder``).

- ``compose(reg, **fields)`` / ``encode_field``: a register word from named field values, table-driven (enum
  values by their register-table name, floats in the field's float format, fixed point, addresses divided by the
  field's scale); ``BuilderError`` names the register and field of a bad value.
- ``outmap(outputs)``: SH_OUTMAP words, output mask, OUTATTR_CLOCK fields and texcoord use from DVLE outputs.
- ``fog_lut(factors)``: 128 fog LUT words from 129 factors over depth 0..1.
- ``tilt_ortho`` / ``tilt_perspective``: (4, 4) float32 projections for landscape coordinates on the portrait
  render target (citro3d's "tilt" matrices; rows are the four float uniforms a dp4 shader reads).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from picaemu import numeric
from picaemu import regs as regtable
from picaemu.errors import PicaError
from picaemu.formats import shbin as shbin_format
from picaemu.regs.schema import Field, FieldType

FLOAT_FORMATS = {
    FieldType.FLOAT24: numeric.FLOAT24,
    FieldType.FLOAT20: numeric.FLOAT20,
    FieldType.FLOAT16: numeric.FLOAT16,
    FieldType.FLOAT31: numeric.FLOAT31,
}
# SHBIN output type -> (first semantic, component count, SH_OUTATTR_CLOCK field) — pica-formats.md §4.4
OUTPUT_SEMANTICS = {
    0: (0x00, 4, "position_z"),
    1: (0x04, 4, "quaternion_or_view"),
    2: (0x08, 4, "color"),
    3: (0x0C, 2, "texcoord0"),
    4: (0x10, 1, "texcoord0_w"),
    5: (0x0E, 2, "texcoord1"),
    6: (0x16, 2, "texcoord2"),
    8: (0x12, 3, "quaternion_or_view"),
}
TEXCOORD_OUTPUTS = frozenset({3, 4, 5, 6})
UNUSED_SLOT = 0x1F


class BuilderError(PicaError):
    """A builder call that cannot be turned into valid registers (unknown name, value out of range, no memory)."""


def encode_field(reg: regtable.Register, fld: Field, value: int | float | bool | str) -> int:
    """The raw bits of ``value`` for ``fld`` (enum names, floats, addresses and fixed point as the table says)."""
    if isinstance(value, str):
        found = fld.enum_raw(value)
        if found is None:
            raise BuilderError(f"{reg.name}.{fld.name}: {value!r} is not one of {', '.join(fld.enum_names())}")
        raw = found
    elif fld.type in FLOAT_FORMATS:
        raw = int(numeric.encode_float(float(value), FLOAT_FORMATS[fld.type]))
    elif fld.type is FieldType.FIXED and fld.fixed is not None:
        raw = round(float(value) * (1 << fld.fixed[2])) & ((1 << fld.width) - 1)
    elif fld.type is FieldType.ADDRESS:
        if int(value) % fld.scale:
            raise BuilderError(f"{reg.name}.{fld.name}: address 0x{int(value):X} is not {fld.scale}-byte aligned")
        raw = int(value) // fld.scale
    elif fld.type is FieldType.INT:
        raw = int(value) & ((1 << fld.width) - 1)
    else:
        raw = int(value)
    if not 0 <= raw < 1 << fld.width:
        raise BuilderError(f"{reg.name}.{fld.name}: {value!r} does not fit in {fld.width} bits")
    return raw << fld.lo


def compose(reg_name: str | int, **values: int | float | bool | str) -> int:
    """A register word from named field values."""
    reg = regtable.get(reg_name) if isinstance(reg_name, int) else regtable.get(regtable.id_of(reg_name))
    word = 0
    for name, value in values.items():
        try:
            fld = reg.field(name)
        except KeyError:
            raise BuilderError(f"{reg.name} has no field {name!r}") from None
        word |= encode_field(reg, fld, value)
    return word


def outmap(outputs: Sequence[shbin_format.Output]) -> tuple[list[int], int, dict[str, bool], bool]:
    """(SH_OUTMAP_O0.. words, output-register mask, OUTATTR_CLOCK fields, texcoords used) from DVLE outputs.

    Slot k is the k-th enabled output register (hardware rule); each output fills the components of its mask,
    x to w, with consecutive semantics from its type's first semantic.
    """
    mask = 0
    for out in outputs:
        if out.type in OUTPUT_SEMANTICS:
            mask |= 1 << out.register
    registers = [r for r in range(16) if mask >> r & 1]
    slots = [[UNUSED_SLOT] * 4 for _ in registers]
    clock: dict[str, bool] = {}
    for out in outputs:
        if out.type not in OUTPUT_SEMANTICS:
            continue
        first, count, clock_field = OUTPUT_SEMANTICS[out.type]
        lanes = [c for c in range(4) if out.mask >> c & 1][:count]
        for k, lane in enumerate(lanes):
            slots[registers.index(out.register)][lane] = first + k
        if out.type != 0 or len(lanes) >= 3:
            clock[clock_field] = True
    words = [s[0] | s[1] << 8 | s[2] << 16 | s[3] << 24 for s in slots]
    return words, mask, clock, any(o.type in TEXCOORD_OUTPUTS for o in outputs)


def tilt_ortho(left: float, right: float, bottom: float, top: float, near: float, far: float) -> np.ndarray:
    """(4, 4) float32 projection for landscape coordinates on the portrait render target (citro3d's "tilt").

    Landscape point (X, Y) lands at window x = Y, y = W - X; Z in [near, far] maps to clip z in [0, -1], so with
    the default depth map (depth = -z) and test GREATER a larger Z is in front.
    """
    m = np.zeros((4, 4), np.float32)
    m[0, 1], m[0, 3] = 2 / (top - bottom), -(top + bottom) / (top - bottom)
    m[1, 0], m[1, 3] = -2 / (right - left), (right + left) / (right - left)
    m[2, 2], m[2, 3] = -1 / (far - near), near / (far - near)
    m[3, 3] = 1
    return m


def tilt_perspective(fovy: float, aspect: float, near: float, far: float) -> np.ndarray:
    """(4, 4) float32 perspective for a landscape view (``fovy`` radians, ``aspect`` = width / height) on the
    portrait render target. Eye space looks down -Z; eye depth ``near`` maps to depth 1 and ``far`` to depth 0
    (clip z in [-w, 0]), so the default test GREATER keeps the nearest surface."""
    t = float(np.tan(fovy / 2))
    m = np.zeros((4, 4), np.float32)
    m[0, 1] = 1 / t
    m[1, 0] = -1 / (t * aspect)
    m[2, 2], m[2, 3] = -near / (far - near), -near * far / (far - near)
    m[3, 2] = -1
    return m


CITRO3D_FOG_SCALE = 2048.0  # citro3d's fog-table encoder multiplies by 2048 (values clamped to 0x7FF)


def fog_lut(factors: np.ndarray) -> list[int]:
    """128 fog LUT entries from 129 fog factors (1 = no fog) at depths 0, 1/128, ... 1 (layout of picaemu.color.fog),
    encoded with citro3d's scale (x 2048, the value clamped to 0x7FF), not the GPU's decoding scale (/ 2047)."""
    from picaemu.color.fog import LUT_DELTA_BITS, LUT_VALUE_BITS, LUT_VALUE_SHIFT

    scale = CITRO3D_FOG_SCALE

    f = np.clip(np.asarray(factors, np.float64), 0.0, 1.0)
    if f.shape != (129,):
        raise BuilderError("fog_lut wants 129 factors")
    values = np.minimum(np.round(f[:128] * scale), (1 << LUT_VALUE_BITS) - 1).astype(np.int64)
    deltas = np.round((f[1:] - values / scale) * scale).astype(np.int64) & ((1 << LUT_DELTA_BITS) - 1)
    return (values << LUT_VALUE_SHIFT | deltas).tolist()
