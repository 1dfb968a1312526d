"""Building command buffers, as citro3d/libctru do, for tests, samples and the capture builder.

``CommandBuilder`` appends packets and returns little-endian uint32 words. Registers are named as in the register
table (``"GPUREG_DRAWARRAYS"`` or ``"DRAWARRAYS"``) or given by id; field values can be composed by name. Data-port
uploads (shader code, operand descriptors, float uniforms, LUTs, fixed attributes) follow the reference's word
orders: float24 vec4 packed in three words most significant first, float32 vec4 as four words W Z Y X.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from picaemu import numeric
from picaemu import regs as regtable
from picaemu.command.packets import MAX_PARAMS, header_word
from picaemu.regs import access

FINALIZE_VALUE = 0x12345678
LUT_PORTS = {  # LUT kind -> (index register, data register, select field or None)
    "lighting": ("LIGHTING_LUT_INDEX", "LIGHTING_LUT_DATA0", "lut"),
    "fog": ("FOG_LUT_INDEX", "FOG_LUT_DATA0", None),
    "proctex": ("PROCTEX_LUT", "PROCTEX_LUT_DATA0", "table"),
    "gas": ("GAS_LUT_INDEX", "GAS_LUT_DATA", None),
}


def _reg_id(reg: str | int) -> int:
    return reg if isinstance(reg, int) else regtable.id_of(reg)


class CommandBuilder:
    """Accumulates packets; ``words()`` returns the buffer."""

    def __init__(self) -> None:
        self._words: list[int] = []

    def __len__(self) -> int:
        return len(self._words)

    # -- packets -------------------------------------------------------------------------------------------
    def packet(self, reg: str | int, values: Sequence[int], *, mask: int = 0xF, consecutive: bool = False) -> None:
        """One packet writing ``values`` (1-256 words) to ``reg`` (and following ids when consecutive)."""
        reg_id = _reg_id(reg)
        vals = [int(v) & 0xFFFFFFFF for v in values]
        self._words += [vals[0], header_word(reg_id, len(vals), mask, consecutive), *vals[1:]]
        if len(vals) % 2 == 0:  # odd extra count: pad to 8 bytes
            self._words.append(0)

    def write(self, reg: str | int, value: int, mask: int = 0xF) -> None:
        self.packet(reg, [value], mask=mask)

    def write_fields(self, reg: str | int, mask: int = 0xF, **fields: int) -> None:
        """Write a register composed from named raw field values."""
        name = reg if isinstance(reg, str) else regtable.get(reg).name
        self.write(reg, access.compose(name, **fields), mask)

    def write_many(self, reg: str | int, values: Iterable[int], *, consecutive: bool = True, mask: int = 0xF) -> None:
        """Consecutive registers (or one FIFO register) from ``values``, split into packets of at most 256."""
        vals = list(values)
        reg_id = _reg_id(reg)
        for start in range(0, len(vals), MAX_PARAMS):
            self.packet(
                reg_id + (start if consecutive else 0),
                vals[start : start + MAX_PARAMS],
                mask=mask,
                consecutive=consecutive,
            )

    def finalize(self) -> None:
        """End the list as libctru does: FINALIZE, repeated if needed to keep the size a multiple of 16 bytes."""
        self.write("FINALIZE", FINALIZE_VALUE)
        if len(self._words) % 4:
            self.write("FINALIZE", FINALIZE_VALUE)

    # -- data ports ----------------------------------------------------------------------------------------
    def upload_code(self, unit: str, words: Sequence[int], offset: int = 0) -> None:
        """Program words into the ``unit`` ("VSH"/"GSH") code memory at ``offset``."""
        self.write_fields(f"{unit}_CODETRANSFER_INDEX", offset=offset)
        self.write_many(f"{unit}_CODETRANSFER_DATA0", words, consecutive=False)
        self.write(f"{unit}_CODETRANSFER_END", 1)

    def upload_opdescs(self, unit: str, words: Sequence[int], offset: int = 0) -> None:
        self.write_fields(f"{unit}_OPDESCS_INDEX", offset=offset)
        self.write_many(f"{unit}_OPDESCS_DATA0", words, consecutive=False)

    def upload_float_uniforms(
        self, unit: str, index: int, vectors: Sequence[Sequence[float]], *, float32: bool = False
    ) -> None:
        """Float uniforms c[index...] from (x, y, z, w) vectors, in float24 (default) or float32 word mode."""
        data: list[int] = []
        for x, y, z, w in vectors:
            if float32:
                data += [numeric.f32_bits(v) for v in (w, z, y, x)]
            else:
                data += list(numeric.pack_f24_vec4(x, y, z, w))
        self.write_fields(f"{unit}_FLOATUNIFORM_INDEX", index=index, mode=int(float32))
        self.write_many(f"{unit}_FLOATUNIFORM_DATA0", data, consecutive=False)

    def upload_lut(self, kind: str, entries: Sequence[int], *, table: int = 0, index: int = 0) -> None:
        """Raw LUT entries through a LUT port (``kind``: lighting, fog, proctex, gas)."""
        index_reg, data_reg, select = LUT_PORTS[kind]
        fields = {"index": index} | ({select: table} if select else {})
        self.write_fields(index_reg, **fields)
        self.write_many(data_reg, entries, consecutive=False)

    def fixed_attrib(self, index: int, vector: Sequence[float]) -> None:
        """Default value of attribute ``index`` (float24 vec4)."""
        self.write_fields("FIXEDATTRIB_INDEX", index=index)
        self.write_many("FIXEDATTRIB_DATA0", numeric.pack_f24_vec4(*vector), consecutive=False)

    def immediate_vertices(self, vertices: Sequence[Sequence[Sequence[float]]]) -> None:
        """Immediate-mode submission: each vertex is a list of attribute vec4s (VSH_NUM_ATTR + 1 of them)."""
        self.write_fields("FIXEDATTRIB_INDEX", index=0xF)
        data = [w for vertex in vertices for attr in vertex for w in numeric.pack_f24_vec4(*attr)]
        self.write_many("FIXEDATTRIB_DATA0", data, consecutive=False)

    # -- output --------------------------------------------------------------------------------------------
    def words(self) -> np.ndarray:
        return np.array(self._words, dtype=np.uint32)

    def tobytes(self) -> bytes:
        return self.words().astype("<u4").tobytes()
