"""The compiled command loop's tables, built once from the declarative register table (``picaemu.regs``): the
action code of every register id (``ACTION_TABLE``; ``DECODE_ONLY_ACTIONS`` for runs nobody renders or observes),
the data ports' layout (``PORT_LAYOUT``), and which register writes are pipeline events (``EVENT_OF_REG``). The
codes are ``picaemu.command.codes``' ``A_*`` / ``P_*`` / ``L_*`` / ``G_*``; ``picaemu.command.processor`` acts on
the stops they cause.
"""

from __future__ import annotations

import numpy as np

from picaemu import regs as regtable
from picaemu.command import codes as K
from picaemu.draw import PipelineEventKind
from picaemu.regs import Action, Port, RegKind, access

# the processor's buffers and budgets (``picaemu.command.processor``)
IMMEDIATE_CAPACITY = 65536
RECORD_CAPACITY = 65536
EVENT_CAPACITY = 16384  # rows; the compiled loop queues two a draw (restart, cache clear) and stops when full
MAX_JUMPS = 4096
DEFAULT_BYTE_BUDGET = 64 << 20  # command bytes one run may execute: far above any real list (hundreds of KiB)
# GSP's initialisation of the interrupt registers (reference §1.1)
RESET_VALUES = {"IRQ_CMP": 0x12345678, "IRQ_MASK": 0xFFFFFFF0, "IRQ_AUTOSTOP": 1}


def raises_interrupt(regs: np.ndarray, value: int) -> bool:
    """Whether a finalize write of ``value`` raises P3D with auto-stop on (the Azahar model): a byte of the value
    equals the same byte of IRQ_CMP, and IRQ_AUTOSTOP is enabled. ``regs``: the (0x300,) uint32 register file."""
    cmp_value = access.word(regs, "IRQ_CMP")
    hit = any((value >> s & 0xFF) == (cmp_value >> s & 0xFF) for s in (0, 8, 16, 24))
    return hit and bool(access.raw(regs, "IRQ_AUTOSTOP", "enable"))


_PORT_NUMBERS = {
    Port.VSH_FLOAT_UNIFORM: K.P_VS_FLOAT,
    Port.VSH_CODE: K.P_VS_CODE,
    Port.VSH_OPDESC: K.P_VS_OPDESC,
    Port.GSH_FLOAT_UNIFORM: K.P_GS_FLOAT,
    Port.GSH_CODE: K.P_GS_CODE,
    Port.GSH_OPDESC: K.P_GS_OPDESC,
    Port.FIXED_ATTRIB: K.P_FIXED,
    Port.LIGHTING_LUT: K.P_LIGHTING,
    Port.FOG_LUT: K.P_FOG,
    Port.PROCTEX_LUT: K.P_PROCTEX,
    Port.GAS_LUT: K.P_GAS,
}
_INDEX_FIELDS = ("index", "offset")
_SELECT_FIELDS = ("mode", "table", "lut")
MIRRORED = (  # VS config registers the GS unit mirrors when it shares the VS configuration
    "BOOLUNIFORM",
    "INTUNIFORM_I0",
    "INTUNIFORM_I1",
    "INTUNIFORM_I2",
    "INTUNIFORM_I3",
    "OUTMAP_MASK",
)
_SILENT_ACTIONS = {Action.CODE_TRANSFER_END, Action.PORT_INDEX}
_EVENTS = {
    Action.VERTEX_CACHE_CLEAR: PipelineEventKind.VERTEX_CACHE_CLEAR,
    Action.RESTART_PRIMITIVE: PipelineEventKind.RESTART_PRIMITIVE,
    Action.EARLYDEPTH_CLEAR: PipelineEventKind.EARLYDEPTH_CLEAR,
    Action.FRAMEBUFFER_FLUSH: PipelineEventKind.FRAMEBUFFER_FLUSH,
    Action.FRAMEBUFFER_INVALIDATE: PipelineEventKind.FRAMEBUFFER_INVALIDATE,
}


def _field_of(reg: regtable.Register, names: tuple[str, ...]) -> regtable.Field | None:
    return next((f for f in reg.fields if f.name in names), None)


def _port_number(reg: regtable.Register) -> int:
    """The compiled loop's number of the data port ``reg`` feeds or indexes."""
    if reg.port is None:
        raise ValueError(f"register table: {reg.name} names no data port")
    return _PORT_NUMBERS[reg.port]


def build_tables() -> tuple[np.ndarray, np.ndarray]:
    """(action codes per register id, port layout) for the compiled loop, from the register table."""
    action = np.zeros(K.NUM_REGS, np.int32)
    layout = np.zeros((K.NUM_PORTS, 8), np.int64)
    for reg in regtable.all_registers():
        if reg.kind is RegKind.DATA_PORT:
            action[reg.id] = K.A_PORT + _port_number(reg)
        elif reg.action is Action.PORT_INDEX:
            pn = _port_number(reg)
            action[reg.id] = K.A_INDEX + pn
            idx = _field_of(reg, _INDEX_FIELDS)
            sel = _field_of(reg, _SELECT_FIELDS)
            if idx is None:
                raise ValueError(f"register table: port index register {reg.name} has no index field")
            layout[pn, K.L_INDEX_REG] = reg.id
            layout[pn, K.L_INDEX_LO], layout[pn, K.L_INDEX_WIDTH] = idx.lo, idx.width
            if sel is not None:
                layout[pn, K.L_SEL_LO], layout[pn, K.L_SEL_WIDTH] = sel.lo, sel.width
        elif reg.action in _EVENTS:
            action[reg.id] = K.A_EVENT
        elif reg.action is not None and reg.action not in _SILENT_ACTIONS:
            action[reg.id] = K.A_STOP
    delta = regtable.id_of("VSH_BOOLUNIFORM") - regtable.id_of("GSH_BOOLUNIFORM")
    for name in MIRRORED:
        action[regtable.id_of(f"VSH_{name}")] = K.A_MIRROR
    com_id, com = access.locate("VSH_COM_MODE", "gs_config")
    gs_id, gs_use = access.locate("GEOSTAGE_CONFIG", "gs_use")
    attr_id, num_attr = access.locate("VSH_NUM_ATTR", "num_attrs_minus_1")
    layout[0, K.G_COM_MODE_REG], layout[0, K.G_COM_MODE_LO] = com_id, com.lo
    layout[0, K.G_GS_USE_REG], layout[0, K.G_GS_USE_LO], layout[0, K.G_GS_USE_WIDTH] = gs_id, gs_use.lo, gs_use.width
    layout[0, K.G_MIRROR_DELTA] = delta
    layout[0, K.G_NUM_ATTR_REG] = attr_id
    layout[K.P_FIXED, K.L_SEL_LO], layout[K.P_FIXED, K.L_SEL_WIDTH] = num_attr.lo, num_attr.width
    return action, layout


def decode_only_actions(action: np.ndarray) -> np.ndarray:
    """The action table for runs whose pipeline renders nothing and that nobody observes: draw triggers are
    counted and recorded in the compiled loop (A_DRAW + kind) and pipeline events are plain writes."""
    out = action.copy()
    for reg in regtable.all_registers():
        if reg.action is Action.DRAW_ARRAYS:
            out[reg.id] = K.A_DRAW + K.D_ARRAYS
        elif reg.action is Action.DRAW_ELEMENTS:
            out[reg.id] = K.A_DRAW + K.D_ELEMENTS
        elif action[reg.id] == K.A_EVENT:
            out[reg.id] = K.A_PLAIN
    return out


ACTION_TABLE, PORT_LAYOUT = build_tables()
DECODE_ONLY_ACTIONS = decode_only_actions(ACTION_TABLE)
STOP_ACTIONS = {
    r.id: r.action for r in regtable.all_registers() if r.action is not None and ACTION_TABLE[r.id] == K.A_STOP
}
# events that only reset state: one in a row has the effect of several (the compiled draw loop queues one restart per
# draw it runs; they reach the pipeline when it returns)
IDEMPOTENT_EVENTS = frozenset({PipelineEventKind.RESTART_PRIMITIVE, PipelineEventKind.VERTEX_CACHE_CLEAR})
# register id -> (pipeline event, bit mask that must be set for the event to happen (0 = any write), its action)
EVENT_OF_REG = {
    r.id: (_EVENTS[r.action], r.field("restart").mask if r.action is Action.RESTART_PRIMITIVE else 0, r.action)
    for r in regtable.all_registers()
    if r.action in _EVENTS  # the registers build_tables gives A_EVENT
}
IDEMPOTENT = np.zeros(K.NUM_REGS, bool)  # by register id: its event is in IDEMPOTENT_EVENTS
IDEMPOTENT[[reg for reg, (kind, _gate, _action) in EVENT_OF_REG.items() if kind in IDEMPOTENT_EVENTS]] = True


def collapse_idempotent(events: np.ndarray) -> list[list[int]]:
    """``events`` ((n, 3) int64 [register id, value, word position] rows, stream order) as lists, with each
    idempotent event kept only at its last occurrence in every run of idempotent events: one of them has the effect
    of several, and they commute with one another (a restart empties the assembler, a vertex cache clear changes
    nothing), so the pipeline sees one restart and one cache clear where the compiled draw loop queued a pair per
    draw it ran. Vectorized (a 3000-draw list queues 6000): a run is the rows after one non-idempotent event, and of
    the rows of one run with one (register, value) the last stays."""
    idempotent = IDEMPOTENT[events[:, 0]]
    run = np.cumsum(~idempotent)  # the rows of one run share the count of non-idempotent rows up to them
    key = (run << 42) | (events[:, 0] << 32) | (events[:, 1] & 0xFFFF_FFFF)  # run < 2**21, register id < 2**10
    _, first_from_end = np.unique(key[::-1], return_index=True)
    keep = ~idempotent
    keep[events.shape[0] - 1 - first_from_end] = True
    return events[keep].tolist()
