"""Per-draw state of texture units 0-2, decoded once from registers 0x080-0x09E (``TexturingState.from_regs``).

Each ``TextureUnitState`` holds what sampling needs, already interpreted: enable, type (unit 0 only; units 1/2
are always "2D"), level-0 size, format, the base address of each face (one for 2D, six for cube maps: +X, -X, +Y,
-Y, +Z, -Z; faces 2-6 take their high address bits from ADDR1), border color, filters, wrap codes, LOD bias
(float, levels) and min/max level, shadow projection flag and 24-bit depth bias, and which texcoord set feeds it.
Bad configuration of an enabled unit (size not a power of two in 8..1024, undefined format code 14/15, mip levels
smaller than 8x8) raises a ``TextureError`` naming the register.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from picaemu.errors import UnsupportedFeature
from picaemu.regs import access, id_of
from picaemu.regs.access import locate
from picaemu.regs.blocks.texturing import TEXTURE_FORMATS, TEXTURE_TYPES, UNIT2_COORDS
from picaemu.texture.formats import (
    InvalidTextureFormat,
    InvalidTextureSize,
    TextureError,
    TextureFormat,
    level_size,
)

NUM_UNITS = 3
ADDR_REGS = ("TEXUNIT0_ADDR1", "TEXUNIT1_ADDR", "TEXUNIT2_ADDR")
CUBE_FACE_REGS = tuple(f"TEXUNIT0_ADDR{i}" for i in range(2, 7))
CUBE_TYPES = frozenset({"cube", "shadow cube"})
SHADOW_TYPES = frozenset({"shadow 2D", "shadow cube"})
DEFAULT_COORDS = ("texcoord0", "texcoord1", "texcoord2")
_LOW_FIELD = locate(CUBE_FACE_REGS[0], "address_low")[1]
# faces -X..-Z: their address is the +X face's (ADDR1's) bits outside this mask, and their own ADDRn bits inside it
CUBE_LOW_MASK = ((1 << _LOW_FIELD.width) - 1) * _LOW_FIELD.scale


@dataclass(frozen=True)
class TextureUnitState:
    """One texture unit, decoded."""

    unit: int
    enabled: bool
    type: str
    width: int
    height: int
    format: TextureFormat
    addresses: tuple[int, ...]
    border: tuple[int, int, int, int]
    mag_linear: bool
    min_linear: bool
    mip_linear: bool
    wrap_s: int
    wrap_t: int
    lod_bias: float
    min_level: int
    max_level: int
    shadow_ortho: bool
    shadow_bias: int
    coords: str

    @classmethod
    def from_regs(cls, regs: np.ndarray, unit: int) -> TextureUnitState:
        p = f"TEXUNIT{unit}"
        enabled = bool(access.raw(regs, "TEXUNIT_CONFIG", f"unit{unit}_enable"))
        type_code = access.raw(regs, f"{p}_PARAM", "type") if unit == 0 else 0
        ttype = TEXTURE_TYPES.get(type_code, f"undefined type {type_code}")
        coords = DEFAULT_COORDS[unit]
        if unit == 2:
            coords = UNIT2_COORDS[access.raw(regs, "TEXUNIT_CONFIG", "unit2_coords")]
        fmt_code = access.raw(regs, f"{p}_TYPE", "format")
        shadow_bias_field = locate("TEXUNIT0_SHADOW", "bias")[1]
        state = cls(
            unit=unit,
            enabled=enabled and ttype != "disabled",
            type=ttype,
            width=access.raw(regs, f"{p}_DIM", "width"),
            height=access.raw(regs, f"{p}_DIM", "height"),
            format=TextureFormat(fmt_code) if fmt_code in TEXTURE_FORMATS else TextureFormat.RGBA8,
            addresses=_addresses(regs, unit, ttype in CUBE_TYPES),
            border=access.rgba(regs, f"{p}_BORDER_COLOR"),
            mag_linear=bool(access.raw(regs, f"{p}_PARAM", "mag_filter")),
            min_linear=bool(access.raw(regs, f"{p}_PARAM", "min_filter")),
            mip_linear=bool(access.raw(regs, f"{p}_PARAM", "mip_filter")),
            wrap_s=access.raw(regs, f"{p}_PARAM", "wrap_s"),
            wrap_t=access.raw(regs, f"{p}_PARAM", "wrap_t"),
            lod_bias=float(access.value(regs, f"{p}_LOD", "bias")),
            min_level=access.raw(regs, f"{p}_LOD", "min_level"),
            max_level=access.raw(regs, f"{p}_LOD", "max_level"),
            shadow_ortho=unit == 0 and bool(access.raw(regs, "TEXUNIT0_SHADOW", "orthographic")),
            shadow_bias=access.raw(regs, "TEXUNIT0_SHADOW", "bias") << shadow_bias_field.lo if unit == 0 else 0,
            coords=coords,
        )
        if state.enabled:
            state._validate(regs, fmt_code)
        return state

    def _where(self, regs: np.ndarray, reg: str) -> str:
        reg_id = id_of(f"TEXUNIT{self.unit}_{reg}")
        return f"texture unit {self.unit} (register 0x{reg_id:03X} = 0x{int(regs[reg_id]):08X})"

    def _validate(self, regs: np.ndarray, fmt_code: int) -> None:
        if self.type not in TEXTURE_TYPES.values():
            raise UnsupportedFeature(
                f"texture unit 0: {self.type}",
                register=id_of("TEXUNIT0_PARAM"),
                value=int(regs[id_of("TEXUNIT0_PARAM")]),
            )
        if fmt_code not in TEXTURE_FORMATS:
            raise InvalidTextureFormat(f"undefined texture format code {fmt_code}: {self._where(regs, 'TYPE')}")
        try:
            level_size(self.width, self.height, 0)
        except InvalidTextureSize as err:
            raise InvalidTextureSize(f"{err}: {self._where(regs, 'DIM')}") from None
        if self.mipmapped:
            try:
                level_size(self.width, self.height, self.max_level)
            except InvalidTextureSize as err:
                raise InvalidTextureSize(f"{err}: {self._where(regs, 'LOD')}") from None
        if self.min_level > self.max_level:
            raise TextureError(f"min level {self.min_level} > max level {self.max_level}: {self._where(regs, 'LOD')}")

    @cached_property
    def border_u8(self) -> np.ndarray:
        """(4,) uint8 border color (the sampler kernels' argument)."""
        return np.array(self.border, np.uint8)

    @cached_property
    def border_f32(self) -> np.ndarray:
        """(4,) float32 border color."""
        return np.array(self.border, np.float32)

    @property
    def mipmapped(self) -> bool:
        return self.max_level > 0

    @cached_property
    def needs_lod(self) -> bool:
        """True when the per-fragment LOD changes the result (mip levels, or different mag and min filters)."""
        return self.max_level > self.min_level or self.mag_linear != self.min_linear

    @property
    def last_level(self) -> int:
        """The last level a lookup may read: ``max_level`` when the LOD changes the result, else ``min_level``
        (sampled with the magnification filter, ``sampler.sample``)."""
        return self.max_level if self.needs_lod else self.min_level


def _addresses(regs: np.ndarray, unit: int, cube: bool) -> tuple[int, ...]:
    base = int(access.value(regs, ADDR_REGS[unit], "address"))
    if not cube:
        return (base,)
    high = base & ~CUBE_LOW_MASK
    return (base, *(high | int(access.value(regs, name, "address_low")) for name in CUBE_FACE_REGS))


@dataclass(frozen=True)
class TexturingState:
    """Units 0-2."""

    units: tuple[TextureUnitState, ...]

    @classmethod
    def from_regs(cls, regs: np.ndarray) -> TexturingState:
        return cls(tuple(TextureUnitState.from_regs(regs, u) for u in range(NUM_UNITS)))
