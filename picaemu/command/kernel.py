"""The compiled inner loop of the command processor: walk packets, apply register writes, feed the data ports.

It runs until the buffer ends or a write needs Python (a trigger, a jump, a finalize, a completed immediate-mode
vertex batch, a full record buffer, the packet limit), and reports where it stopped through ``cursor`` so the
driver (``picaemu.command.processor``) can act and resume mid-packet.

Everything hardware-specific comes in as data built from the register table (``PortLayout``): which ids are data
ports, index registers or stops, and where the index fields of each port sit. The packet layout constants come
from ``picaemu.command.packets``.

Arrays (owned by the caller's GpuState and the processor):
  words (W,) uint32; regs (0x300,) uint32; action (0x300,) int32 codes (below); layout (PORTS, 8) int64;
  float_uniforms (2, 96, 4) float32 [unit 0 = VS, 1 = GS]; code (2, 4096) uint32; opdescs (2, 128) uint32;
  lighting (24, 256) uint32; fog (128,) uint32; proctex (6, 256) uint32; gas (16,) uint32;
  fixed (16, 4) float32; pending (PORTS, 4) uint32 partial words; counters (PORTS + extra) int64;
  immediate (cap, 16, 4) float32; cursor (CURSOR_LEN,) int64; records (cap, 4) int64; packet_records (cap, 2);
  groups (0x300 + PORTS,) int64 write-group bits of every register id, then of every port (``picaemu.draw_state``),
  OR-ed into counters[C_DIRTY] as registers and ports are written.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from picaemu.command.packets import CONSECUTIVE_SHIFT, EXTRA_BITS, EXTRA_SHIFT, ID_MASK, MASK_BITS, MASK_SHIFT

NUM_REGS = 0x300

# action codes
A_PLAIN = 0
A_PORT = 1  # + port number (1..11)
A_INDEX = 20  # + port number: index register of that port
A_MIRROR = 40  # VS config register mirrored into the GS unit when the GS shares the VS configuration
A_STOP = 60  # Python handles it now (draw, jump, finalize)
A_EVENT = 70  # queued for Python (restart, cache clear, flush ...): handled at the next stop, in order

# port numbers (rows of ``layout`` / ``pending``)
P_VS_FLOAT, P_VS_CODE, P_VS_OPDESC, P_GS_FLOAT, P_GS_CODE, P_GS_OPDESC = 1, 2, 3, 4, 5, 6
P_FIXED, P_LIGHTING, P_FOG, P_PROCTEX, P_GAS = 7, 8, 9, 10, 11
NUM_PORTS = 12  # row 0 of ``pending`` / ``layout`` belongs to no port (port numbers start at 1)

# layout columns: index register id, index field lo/width, second field (mode / table) lo/width
L_INDEX_REG, L_INDEX_LO, L_INDEX_WIDTH, L_SEL_LO, L_SEL_WIDTH = 0, 1, 2, 3, 4
# globals row 0 of layout: mirror control
G_COM_MODE_REG, G_COM_MODE_LO, G_GS_USE_REG, G_GS_USE_LO, G_GS_USE_WIDTH, G_MIRROR_DELTA = 0, 1, 2, 3, 4, 5
G_NUM_ATTR_REG = 6
# counters
C_DROPPED = 0  # port words that fell outside their memory (index out of range)
C_IGNORED = 1  # writes to ids >= 0x300
C_PENDING = 2  # + port: words received of the current partial vector
C_IMM_ATTR = 16  # attributes received of the current immediate vertex
C_IMM_COUNT = 17  # complete immediate vertices buffered
C_WRITES = 18  # register writes applied (ids >= 0x300 included)
C_DIRTY = 19  # OR of the write-group bits of every register and port written (``groups``; cleared by the driver)
COUNTERS_LEN = 20

# cursor slots
K_POS, K_PARAM, K_PACKETS, K_STOP_ID, K_STOP_VALUE, K_STOP_PACKET, K_NREC, K_NPK = range(8)
K_LIMIT = 8  # stop after this many packets (-1 = no limit)
K_NEV = 9  # queued events
CURSOR_LEN = 10

# statuses
S_END, S_STOP, S_TRUNCATED, S_ODD_TAIL, S_RECORDS_FULL, S_LIMIT, S_IMMEDIATE_FLUSH, S_IMMEDIATE_FULL = range(8)
S_EVENTS_FULL = 8

CODE_CAPACITY = np.array([0, 0, 512, 128, 0, 4096, 128], dtype=np.int64)  # by port: VS code, VS opdesc, GS ...
LUT_SIZES_PROCTEX = np.array([128, 128, 128, 128, 256, 256], dtype=np.int64)
LUT_SIZES_LIGHTING = np.full(24, 256, dtype=np.int64)


@numba.njit(cache=True, nogil=True)
def _field(value, lo, width):  # pragma: no cover - compiled
    return (value >> lo) & ((1 << width) - 1)


@numba.njit(cache=True, nogil=True)
def _set_field(regs, reg, lo, width, v):  # pragma: no cover - compiled
    m = ((1 << width) - 1) << lo
    regs[reg] = np.uint32((np.int64(regs[reg]) & ~m) | ((v << lo) & m))


@intrinsic
def _as_f32(typingctx, bits):  # pragma: no cover - compiled
    """The float32 whose bit pattern is the uint32 ``bits`` (a register move).

    Scalar, because reinterpreting through an array ``view`` and storing it with a broadcast slice assignment
    compiles numba's shape-check error formatting (about 3 s of a cold start)."""
    if bits != types.uint32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.uint32), codegen


@numba.njit(cache=True, nogil=True)
def _store_f24_vec(dst, row, w1, w2, w3):  # pragma: no cover - compiled
    """Packed float24 vec4 (three words, W:Z:Y:X most significant first) -> dst[row] as float32.

    float24 1.7.16 -> float32: all bits but the sign zero is a signed zero, exponent 0x7F is Inf/NaN, else the
    exponent is rebiased (63 -> 127) and the mantissa widened."""
    raws = (w3 & 0xFFFFFF, ((w2 & 0xFFFF) << 8) | (w3 >> 24), ((w1 & 0xFF) << 16) | (w2 >> 16), w1 >> 8)
    for c in range(4):  # one loop rather than a float24 helper called 4 times: a compiled function costs ~0.1 s
        raw = raws[c] & 0xFFFFFF
        sign = (raw >> 23) & 1
        exp = (raw >> 16) & 0x7F
        mant = raw & 0xFFFF
        if (raw & 0x7FFFFF) == 0:
            bits = sign << 31
        elif exp == 0x7F:
            bits = (sign << 31) | (255 << 23) | (mant << 7)
        else:
            bits = (sign << 31) | ((exp + 64) << 23) | (mant << 7)
        dst[row, c] = _as_f32(np.uint32(bits))


@numba.njit(cache=True, nogil=True)
def _uniform_word(port, unit, val, regs, layout, fu, pending, counters):  # pragma: no cover - compiled
    ireg = layout[port, L_INDEX_REG]
    idx = _field(np.int64(regs[ireg]), layout[port, L_INDEX_LO], layout[port, L_INDEX_WIDTH])
    f32_mode = _field(np.int64(regs[ireg]), layout[port, L_SEL_LO], layout[port, L_SEL_WIDTH])
    n = counters[C_PENDING + port]
    pending[port, n] = val
    n += 1
    need = 4 if f32_mode else 3
    if n < need:
        counters[C_PENDING + port] = n
        return -1
    counters[C_PENDING + port] = 0
    _set_field(regs, ireg, layout[port, L_INDEX_LO], layout[port, L_INDEX_WIDTH], idx + 1)
    if idx >= fu.shape[1]:
        counters[C_DROPPED] += 1
        return -1
    if f32_mode:
        for c in range(4):  # words arrive W, Z, Y, X
            fu[unit, idx, 3 - c] = _as_f32(pending[port, c])
    else:
        w1, w2, w3 = np.int64(pending[port, 0]), np.int64(pending[port, 1]), np.int64(pending[port, 2])
        _store_f24_vec(fu[unit], idx, w1, w2, w3)
    return idx


@numba.njit(cache=True, nogil=True)
def _indexed_word(port, val, regs, layout, table, capacity, counters):  # pragma: no cover - compiled
    """Store ``val`` at table[index] and advance the index field (code, opdescs, fog, gas); return the index
    written, or -1 when it was out of range."""
    ireg = layout[port, L_INDEX_REG]
    lo = layout[port, L_INDEX_LO]
    width = layout[port, L_INDEX_WIDTH]
    idx = _field(np.int64(regs[ireg]), lo, width)
    _set_field(regs, ireg, lo, width, idx + 1)
    if idx < capacity:
        table[idx] = val
        return idx
    counters[C_DROPPED] += 1
    return -1


@numba.njit(cache=True, nogil=True)
def _lut_word(port, val, regs, layout, luts, sizes, counters):  # pragma: no cover - compiled
    """Store ``val`` in luts[table, index] (table from the select field) and advance the index (wrapping)."""
    ireg = layout[port, L_INDEX_REG]
    lo = layout[port, L_INDEX_LO]
    width = layout[port, L_INDEX_WIDTH]
    idx = _field(np.int64(regs[ireg]), lo, width)
    table = _field(np.int64(regs[ireg]), layout[port, L_SEL_LO], layout[port, L_SEL_WIDTH])
    if table < luts.shape[0]:
        luts[table, idx % sizes[table]] = val
    else:
        counters[C_DROPPED] += 1
    _set_field(regs, ireg, lo, width, idx + 1)


@numba.njit(cache=True, nogil=True)
def _fixed_word(val, regs, layout, fixed, pending, counters, immediate):  # pragma: no cover - compiled
    """Three words make a float24 vec4: a default attribute, or the next attribute of an immediate vertex.

    Returns True when an immediate vertex completed."""
    n = counters[C_PENDING + P_FIXED]
    pending[P_FIXED, n] = val
    n += 1
    if n < 3:
        counters[C_PENDING + P_FIXED] = n
        return False
    counters[C_PENDING + P_FIXED] = 0
    ireg = layout[P_FIXED, L_INDEX_REG]
    lo = layout[P_FIXED, L_INDEX_LO]
    width = layout[P_FIXED, L_INDEX_WIDTH]
    idx = _field(np.int64(regs[ireg]), lo, width)
    w1, w2, w3 = np.int64(pending[P_FIXED, 0]), np.int64(pending[P_FIXED, 1]), np.int64(pending[P_FIXED, 2])
    if idx != (1 << width) - 1:
        if idx < fixed.shape[0]:
            _store_f24_vec(fixed, idx, w1, w2, w3)
        _set_field(regs, ireg, lo, width, idx + 1)
        return False
    v = counters[C_IMM_COUNT]
    a = counters[C_IMM_ATTR]
    _store_f24_vec(immediate[v], a, w1, w2, w3)
    a += 1
    num_attr_reg = np.int64(regs[layout[0, G_NUM_ATTR_REG]])
    num_attrs = _field(num_attr_reg, layout[P_FIXED, L_SEL_LO], layout[P_FIXED, L_SEL_WIDTH]) + 1
    if a >= num_attrs:
        counters[C_IMM_ATTR] = 0
        counters[C_IMM_COUNT] = v + 1
        return True
    counters[C_IMM_ATTR] = a
    return False


@numba.njit(cache=True, nogil=True)
def _shares_config(regs, layout):  # pragma: no cover - compiled
    """The GS unit mirrors the VS configuration (VSH_COM_MODE = 0)."""
    # a one-bit field, read here rather than through _field(..., 1): a constant argument is a second compile
    return (np.int64(regs[layout[0, G_COM_MODE_REG]]) >> layout[0, G_COM_MODE_LO]) & 1 == 0


@numba.njit(cache=True, nogil=True)
def _vs_mirrored_to_gs(regs, layout):  # pragma: no cover - compiled
    """VS uniforms and config go to the GS unit too: it shares the VS configuration and no geometry shader is in
    use (GEOSTAGE_CONFIG gs_use = 0)."""
    gs_use = _field(np.int64(regs[layout[0, G_GS_USE_REG]]), layout[0, G_GS_USE_LO], layout[0, G_GS_USE_WIDTH])
    return gs_use == 0 and _shares_config(regs, layout)


@numba.njit(cache=True, nogil=True)
def _port_word(port, val, regs, layout, fu, code, opdescs, lighting, fog, proctex, gas, fixed, pending, counters,
               immediate, groups):  # pragma: no cover - compiled
    """Feed one word to a data port; True when the immediate-vertex buffer is full."""
    counters[C_DIRTY] |= groups[NUM_REGS + port]
    if port in (P_VS_FLOAT, P_GS_FLOAT):
        # one call site: a constant unit argument would compile _uniform_word once per value
        unit = np.int64(port == P_GS_FLOAT)
        row = _uniform_word(port, unit, val, regs, layout, fu, pending, counters)
        if unit == 0 and row >= 0 and _vs_mirrored_to_gs(regs, layout):
            counters[C_DIRTY] |= groups[NUM_REGS + P_GS_FLOAT]
            for c in range(4):
                fu[1, row, c] = fu[0, row, c]
    elif port == P_FIXED:
        return _fixed_word(val, regs, layout, fixed, pending, counters, immediate) and (
            counters[C_IMM_COUNT] >= immediate.shape[0]
        )
    elif port in (P_LIGHTING, P_PROCTEX):
        light = port == P_LIGHTING
        _lut_word(port, val, regs, layout, lighting if light else proctex,
                  LUT_SIZES_LIGHTING if light else LUT_SIZES_PROCTEX, counters)  # fmt: skip
    elif port in (P_FOG, P_GAS) or P_VS_CODE <= port <= P_GS_OPDESC:
        # one call site for the six indexed tables: every call site is another copy to type and optimise
        if port in (P_FOG, P_GAS):
            table = fog if port == P_FOG else gas
            capacity = table.shape[0]
        else:
            unit = np.int64(port >= P_GS_FLOAT)  # the GS ports follow the VS ports
            table = code[unit] if port in (P_VS_CODE, P_GS_CODE) else opdescs[unit]
            capacity = CODE_CAPACITY[port]
        at = _indexed_word(port, val, regs, layout, table, capacity, counters)
        if at >= 0 and port in (P_VS_CODE, P_VS_OPDESC) and _shares_config(regs, layout):
            counters[C_DIRTY] |= groups[NUM_REGS + P_GS_CODE]  # P_GS_OPDESC is in the same group
            mirror = code[1] if port == P_VS_CODE else opdescs[1]
            mirror[at] = val
    return False


@numba.njit(cache=True, nogil=True)
def _record(records, cursor, pos, reg, val, lanes):  # pragma: no cover - compiled
    """Append one register write (packet word index, id, value as carried, lane mask) for the observers."""
    r = cursor[K_NREC]
    records[r, 0] = pos
    records[r, 1] = reg
    records[r, 2] = val
    records[r, 3] = lanes
    cursor[K_NREC] = r + 1


@numba.njit(cache=True, nogil=True)
def _leave_after(cursor, pos, k, extra):  # pragma: no cover - compiled
    """Point the cursor just past parameter ``k`` of the packet at ``pos`` (the next packet if it was the last)."""
    k += 1
    if k > extra:
        pos += 2 + extra + (extra & 1)
        k = 0
        cursor[K_PACKETS] += 1
    cursor[K_POS] = pos
    cursor[K_PARAM] = k


@numba.njit(cache=True, nogil=True)
def run(words, end, regs, action, layout, fu, code, opdescs, lighting, fog, proctex, gas, fixed,
        pending, counters, immediate, cursor, records, packet_records, events, record,
        groups):  # pragma: no cover - compiled
    """Process packets from cursor[K_POS]/cursor[K_PARAM] until something needs Python; return a status."""
    pos = cursor[K_POS]
    k = cursor[K_PARAM]
    while pos < end:
        if pos + 1 >= end:
            cursor[K_POS] = pos
            return S_ODD_TAIL
        hdr = np.int64(words[pos + 1])
        extra = (hdr >> EXTRA_SHIFT) & EXTRA_BITS
        if pos + 2 + extra > end:
            cursor[K_POS] = pos
            return S_TRUNCATED
        if k == 0:
            if cursor[K_LIMIT] >= 0 and cursor[K_PACKETS] >= cursor[K_LIMIT]:
                cursor[K_POS] = pos
                return S_LIMIT
            if record:
                if cursor[K_NPK] >= packet_records.shape[0] or cursor[K_NREC] + extra + 1 > records.shape[0]:
                    cursor[K_POS] = pos
                    return S_RECORDS_FULL
                packet_records[cursor[K_NPK], 0] = pos
                packet_records[cursor[K_NPK], 1] = hdr
                cursor[K_NPK] += 1
        reg0 = hdr & ID_MASK
        lanes = (hdr >> MASK_SHIFT) & MASK_BITS
        m = np.int64(0)
        for lane in range(4):
            if (lanes >> lane) & 1:
                m |= np.int64(0xFF) << (8 * lane)
        consecutive = (hdr >> CONSECUTIVE_SHIFT) & 1
        while k <= extra:
            val = np.int64(words[pos]) if k == 0 else np.int64(words[pos + 1 + k])
            reg = reg0 + k if consecutive else reg0
            if reg >= NUM_REGS:
                counters[C_IGNORED] += 1
                counters[C_WRITES] += 1
                if record:
                    _record(records, cursor, pos, reg, val, lanes)
                k += 1
                continue
            act = action[reg]
            if counters[C_IMM_COUNT] > 0 and act != A_PORT + P_FIXED:
                cursor[K_POS] = pos
                cursor[K_PARAM] = k
                return S_IMMEDIATE_FLUSH
            counters[C_WRITES] += 1
            counters[C_DIRTY] |= groups[reg]
            if act == A_STOP:
                regs[reg] = np.uint32((np.int64(regs[reg]) & ~m) | (val & m))
                cursor[K_STOP_ID] = reg
                cursor[K_STOP_VALUE] = val
                cursor[K_STOP_PACKET] = pos
                _leave_after(cursor, pos, k, extra)
                if record:
                    _record(records, cursor, cursor[K_STOP_PACKET], reg, val, lanes)
                return S_STOP
            if record:
                _record(records, cursor, pos, reg, val, lanes)
            regs[reg] = np.uint32((np.int64(regs[reg]) & ~m) | (val & m))
            if act >= A_PORT and act < A_INDEX:
                full = _port_word(act - A_PORT, val, regs, layout, fu, code, opdescs, lighting, fog, proctex, gas,
                                  fixed, pending, counters, immediate, groups)
                if full:
                    _leave_after(cursor, pos, k, extra)
                    return S_IMMEDIATE_FULL
            elif act >= A_INDEX and act < A_MIRROR:
                port = act - A_INDEX
                counters[C_PENDING + port] = 0
                if port == P_FIXED:
                    counters[C_IMM_ATTR] = 0
            elif act == A_EVENT:
                e = cursor[K_NEV]
                events[e, 0] = reg
                events[e, 1] = regs[reg]
                events[e, 2] = pos
                cursor[K_NEV] = e + 1
                if e + 1 >= events.shape[0]:
                    _leave_after(cursor, pos, k, extra)
                    return S_EVENTS_FULL
            elif act == A_MIRROR and _vs_mirrored_to_gs(regs, layout):
                g = reg - layout[0, G_MIRROR_DELTA]
                regs[g] = np.uint32((np.int64(regs[g]) & ~m) | (val & m))
                counters[C_DIRTY] |= groups[g]
            k += 1
        pos += 2 + extra + (extra & 1)
        k = 0
        cursor[K_PACKETS] += 1
    cursor[K_POS] = pos
    cursor[K_PARAM] = 0
    return S_END
