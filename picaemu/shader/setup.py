"""Binding a shader program: everything one shader unit needs for a draw, decoded once into a frozen ShaderSetup.

Sources:
- ``ShaderSetup.from_state(state, "vs" | "gs")``: the register file (bool/int uniforms, entry point, input count
  and permutation, output mask, GS mode fields) plus ``state.vs``/``state.gs`` memories (code (4096,) uint32,
  opdescs (128,) uint32, float uniforms (96, 4) float32), exactly as the command processor left them.
- ``ShaderSetup.from_dvle(shbin, index)``: a SHBIN program with the DVLE's constants applied the way a driver
  uploads them (bool -> b_n, ivec -> i_n bytes x,y,z,w, fvec -> c_n decoded from float24), other uniforms zero,
  identity input permutation over 16 inputs.

Arrays in a setup are read-only copies. Register names are read through ``picaemu.regs.access``; no bit position
of a register appears here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Literal

import numpy as np

from picaemu.errors import FormatError, PicaError
from picaemu.formats.shbin import Shbin
from picaemu.numeric import f24
from picaemu.regs import access, id_of
from picaemu.state import GS_CODE_WORDS, NUM_FLOAT_UNIFORMS, NUM_OPDESCS, VS_CODE_WORDS, GpuState

Unit = Literal["vs", "gs"]
UNITS: tuple[Unit, ...] = ("vs", "gs")
REG_PREFIX: dict[Unit, str] = {"vs": "GPUREG_VSH_", "gs": "GPUREG_GSH_"}
CODE_WORDS = {"vs": VS_CODE_WORDS, "gs": GS_CODE_WORDS}


def shader_unit(name: str) -> Unit:
    """``name`` as a shader unit ("vs" or "gs"); PicaError for any other name."""
    for unit in UNITS:
        if name == unit:
            return unit
    raise PicaError(f"unknown shader unit {name!r}: vs or gs")


NUM_INPUTS = 16
_ATTRS = tuple(f"attr{k}" for k in range(NUM_INPUTS))  # the input permutation registers' fields (8 a register)
_OUTPUTS = tuple(f"o{i}" for i in range(16))  # the output mask register's fields
NUM_BOOLS = 16
NUM_INTS = 4
GS_MODE_NAMES = ("point", "variable", "fixed")
CONSTANT_KIND = {0: "bool", 1: "ivec", 2: "fvec"}


@dataclass(frozen=True)
class GeometryConfig:
    """The geometry-stage fields a GS run needs (from GSH_MISC0/1 and GSH_INPUTBUFFER_CONFIG)."""

    mode: int = 0  # 0 point, 1 variable-size primitive, 2 fixed-size primitive
    fixed_vertices: int = 1  # fixed mode: vertices per primitive
    fixed_stride: int = 1  # fixed mode: uniform registers per vertex
    fixed_start: int = 0  # fixed mode: first c register receiving vertex data
    variable_main: int = 1  # variable mode: number of fully defined ("main") vertices


@dataclass(frozen=True)
class ShaderSetup:
    code: np.ndarray  # (4096,) uint32
    opdescs: np.ndarray  # (128,) uint32
    float_uniforms: np.ndarray  # (96, 4) float32
    int_uniforms: np.ndarray  # (4, 4) uint8 x, y, z, w
    bool_uniforms: np.ndarray  # (16,) bool
    entry: int = 0
    output_mask: int = 0
    input_permutation: tuple[int, ...] = tuple(range(NUM_INPUTS))  # input attribute k -> v register
    num_inputs: int = NUM_INPUTS
    unit: Unit = "vs"
    num_outputs: int = 0  # VS: VSH_OUTMAP_TOTAL count; GS / DVLE: set bits of output_mask
    geometry: GeometryConfig = field(default_factory=GeometryConfig)
    names: dict[str, str] = field(default_factory=dict, compare=False)  # register -> uniform name (disasm)

    def __post_init__(self) -> None:
        for name, dtype, shape in (
            ("code", np.uint32, (GS_CODE_WORDS,)),
            ("opdescs", np.uint32, (NUM_OPDESCS,)),
            ("float_uniforms", np.float32, (NUM_FLOAT_UNIFORMS, 4)),
            ("int_uniforms", np.uint8, (NUM_INTS, 4)),
            ("bool_uniforms", np.bool_, (NUM_BOOLS,)),
        ):
            arr = getattr(self, name)
            if _frozen(arr, dtype, shape):  # an immutable snapshot already (a setup derived from another)
                continue
            arr = np.array(arr, dtype=dtype)
            if arr.shape != shape:
                raise ValueError(f"ShaderSetup.{name} must have shape {shape}, got {arr.shape}")
            arr.flags.writeable = False
            object.__setattr__(self, name, arr)

    @property
    def code_words(self) -> int:
        """Addressable code memory of this unit (VS 512 words, GS 4096)."""
        return CODE_WORDS[self.unit]

    @cached_property
    def program_key(self) -> bytes:
        """Content key of the program (code + descriptors) for decode caches."""
        return self.code[: self.code_words].tobytes() + self.opdescs.tobytes()

    def with_uniforms(
        self, *, floats: np.ndarray | None = None, ints: np.ndarray | None = None, bools: np.ndarray | None = None
    ) -> ShaderSetup:
        """A copy with some uniform files replaced (used by the GS for fixed/variable modes and b15)."""
        setup = replace(
            self,
            float_uniforms=self.float_uniforms if floats is None else floats,
            int_uniforms=self.int_uniforms if ints is None else ints,
            bool_uniforms=self.bool_uniforms if bools is None else bools,
        )
        if "program_key" in self.__dict__:  # same code and descriptors: the key carries over
            setup.__dict__["program_key"] = self.__dict__["program_key"]
        return setup

    def with_uniforms_of(self, state: GpuState) -> ShaderSetup:
        """This program with the float, int and bool uniforms ``state`` holds for its unit (a draw that only
        uploaded uniforms reuses the decoded program)."""
        floats = np.array((state.vs if self.unit == "vs" else state.gs).float_uniforms, np.float32)
        floats.flags.writeable = False
        setup = object.__new__(ShaderSetup)  # every draw with a uniform upload comes here: skip replace()'s
        setup.__dict__.update(self.__dict__)  # re-validation of the program arrays, which are this one's
        setup.__dict__["float_uniforms"] = floats
        words = tuple(state.regs[_UNIFORM_REG_IDS[self.unit]].tolist())
        setup.__dict__["bool_uniforms"], setup.__dict__["int_uniforms"] = _small_uniforms(self.unit, words)
        return setup

    @classmethod
    def from_state(cls, state: GpuState, unit: Unit) -> ShaderSetup:
        """The unit's program, configuration and uniforms as ``state`` holds them."""
        return cls.program_from_state(state, unit).with_uniforms_of(state)

    @classmethod
    def program_from_state(cls, state: GpuState, unit: Unit) -> ShaderSetup:
        """The unit's program (code, descriptors) and configuration registers; the uniform files are zero (see
        ``with_uniforms_of``): uniforms change every draw, the program seldom."""
        p = REG_PREFIX[unit]
        regs = state.regs
        mem = state.vs if unit == "vs" else state.gs
        # one register read per register (a replay builds this at every draw state that rewrote a VS input map)
        perm = access.raws(regs, p + "ATTRIBUTES_PERMUTATION_LOW", _ATTRS[:8]) + access.raws(
            regs, p + "ATTRIBUTES_PERMUTATION_HIGH", _ATTRS[8:]
        )
        out_mask = sum(bit << i for i, bit in enumerate(access.raws(regs, p + "OUTMAP_MASK", _OUTPUTS)))
        geometry = GeometryConfig()
        if unit == "gs":
            geometry = GeometryConfig(
                mode=access.raw(regs, "GSH_MISC0", "mode"),
                fixed_vertices=access.raw(regs, "GSH_MISC0", "fixed_vertices_minus_1") + 1,
                fixed_stride=access.raw(regs, "GSH_MISC0", "fixed_stride_minus_1") + 1,
                fixed_start=access.raw(regs, "GSH_MISC0", "fixed_uniform_start"),
                variable_main=access.raw(regs, "GSH_MISC1", "main_vertices_minus_1") + 1,
            )
        return cls(
            code=mem.code,
            opdescs=mem.opdescs,
            float_uniforms=_ZERO_FLOATS,
            int_uniforms=_ZERO_INTS,
            bool_uniforms=_ZERO_BOOLS,
            entry=access.raw(regs, p + "ENTRYPOINT", "entry"),
            output_mask=out_mask,
            input_permutation=perm,
            num_inputs=access.raw(regs, p + "INPUTBUFFER_CONFIG", "num_input_minus_1") + 1,
            unit=unit,
            geometry=geometry,
            num_outputs=(
                access.raw(regs, "VSH_OUTMAP_TOTAL1", "count_minus_1") + 1 if unit == "vs" else bin(out_mask).count("1")
            ),
        )

    @classmethod
    def from_dvle(cls, shbin: Shbin, dvle_index: int = 0) -> ShaderSetup:
        if not 0 <= dvle_index < len(shbin.dvles):
            raise FormatError(f"DVLE index {dvle_index} out of range (file has {len(shbin.dvles)})")
        dvle = shbin.dvles[dvle_index]
        unit: Unit = "gs" if dvle.is_geometry else "vs"
        if len(shbin.code) > CODE_WORDS[unit] or len(shbin.opdescs) > NUM_OPDESCS:
            raise FormatError(
                f"program of {len(shbin.code)} words / {len(shbin.opdescs)} descriptors does not "
                f"fit the {unit.upper()} unit"
            )
        code = np.zeros(GS_CODE_WORDS, np.uint32)
        code[: len(shbin.code)] = shbin.code
        opdescs = np.zeros(NUM_OPDESCS, np.uint32)
        opdescs[: len(shbin.opdescs)] = [d for d, _e in shbin.opdescs]
        floats = np.zeros((NUM_FLOAT_UNIFORMS, 4), np.float32)
        ints = np.zeros((NUM_INTS, 4), np.uint8)
        bools = np.zeros(NUM_BOOLS, bool)
        limits = {0: NUM_BOOLS, 1: NUM_INTS, 2: NUM_FLOAT_UNIFORMS}
        for c in dvle.constants:
            if c.register >= limits[c.type]:
                raise FormatError(f"DVLE constant for {CONSTANT_KIND[c.type]} register {c.register} out of range")
            if c.type == 0:
                bools[c.register] = bool(c.data[0] & 1)
            elif c.type == 1:
                ints[c.register] = c.ivec
            else:
                floats[c.register] = f24(np.array(c.data, np.uint32))
        geometry = GeometryConfig(
            mode=dvle.gs_mode,
            fixed_vertices=max(dvle.gs_fixed_num, 1),
            fixed_start=dvle.gs_fixed_start,
            variable_main=max(dvle.gs_variable_num, 1),
        )
        return cls(
            code=code,
            opdescs=opdescs,
            float_uniforms=floats,
            int_uniforms=ints,
            bool_uniforms=bools,
            entry=dvle.main_offset,
            output_mask=dvle.output_mask,
            unit=unit,
            geometry=geometry,
            num_outputs=bin(dvle.output_mask).count("1"),
            names=dvle_names(dvle),
        )


def _frozen(arr: object, dtype: type, shape: tuple[int, ...]) -> bool:
    """True for an array that owns its read-only data of the given dtype and shape (nothing can change it)."""
    return (
        isinstance(arr, np.ndarray)
        and arr.base is None
        and not arr.flags.writeable
        and arr.dtype == dtype
        and arr.shape == shape
    )


def _zeros(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    arr: np.ndarray = np.zeros(shape, dtype)
    arr.flags.writeable = False
    return arr


_ZERO_FLOATS = _zeros((NUM_FLOAT_UNIFORMS, 4), np.float32)
_ZERO_INTS = _zeros((NUM_INTS, 4), np.uint8)
_ZERO_BOOLS = _zeros((NUM_BOOLS,), np.bool_)
_BOOL_FIELDS = tuple(f"b{i}" for i in range(NUM_BOOLS))
_INT_FIELDS = ("x", "y", "z", "w")


def _uniform_reg_names(unit: Unit) -> tuple[str, ...]:
    """The unit's bool uniform register, then its int uniform registers i0-i3."""
    p = REG_PREFIX[unit]
    return (p + "BOOLUNIFORM", *(f"{p}INTUNIFORM_I{i}" for i in range(NUM_INTS)))


_UNIFORM_REG_IDS = {unit: np.array([id_of(n) for n in _uniform_reg_names(unit)]) for unit in UNITS}


def register_uniforms(regs: np.ndarray, unit: Unit) -> tuple[list[bool], list[tuple[int, ...]]]:
    """(bool uniforms b0-b15, int uniforms i0-i3 as (x, y, z, w)) of a unit, from its uniform registers."""
    return _decode_uniform_words(unit, tuple(regs[_UNIFORM_REG_IDS[unit]].tolist()))


def _decode_uniform_words(unit: Unit, words: tuple[int, ...]) -> tuple[list[bool], list[tuple[int, ...]]]:
    names = _uniform_reg_names(unit)
    bools = [bool(b) for b in access.word_raws(words[0], names[0], _BOOL_FIELDS)]
    ints = [access.word_raws(word, name, _INT_FIELDS) for word, name in zip(words[1:], names[1:], strict=True)]
    return bools, ints


@lru_cache(maxsize=256)
def _small_uniforms(unit: Unit, words: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Read-only (bools (16,) bool, ints (4, 4) uint8) of the unit's uniform register ``words`` (a draw's uniform
    upload seldom touches them: decoded once per distinct content)."""
    bools, ints = _decode_uniform_words(unit, words)
    out = np.array(bools, np.bool_), np.array(ints, np.uint8)
    for arr in out:
        arr.flags.writeable = False
    return out


def dvle_names(dvle) -> dict[str, str]:
    """Register name -> display name from a DVLE's uniform table (arrays as ``name[k]``) and output table."""
    from picaemu.formats.shbin import OUTPUT_TYPES, uniform_register_name

    names: dict[str, str] = {}
    for u in dvle.uniforms:
        label = dvle.symbol(u.symbol)
        for raw in range(u.first, u.last + 1):
            try:
                reg = uniform_register_name(raw)
            except FormatError:
                continue
            names[reg] = label if u.first == u.last else f"{label}[{raw - u.first}]"
    for o in dvle.outputs:
        names.setdefault(f"o{o.register}", f"out_{OUTPUT_TYPES.get(o.type, 'unknown')}")
    return names
