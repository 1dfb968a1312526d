"""The compiled inner loop of the command processor: walk packets, apply register writes, feed the data ports.

It runs until the buffer ends or a write needs Python (a trigger, a jump, a finalize, a completed immediate-mode
vertex batch, a full record buffer, the packet limit), and reports where it stopped through ``cursor`` so the
driver (``picaemu.command.processor``) can act and resume mid-packet. Draw triggers stop it only when the
action table says so (a pipeline is attached); with the decode-only table (``A_DRAW``) draws are counted and
recorded here, and the loop runs on.

Everything hardware-specific comes in as data built from the register table (``PortLayout``): which ids are data
ports, index registers or stops, and where the index fields of each port sit. The packet layout constants come
from ``picaemu.command.packets`` (derived from its construct grammar).

Every write ORs ``groups[id]`` into the dirty accumulator ``counters[C_DIRTY]``; a data-port word also ORs
``groups[NUM_REGS + port]`` (and the GS port's entry when the word is mirrored into the GS unit). A draw handled
here records the accumulator and clears it. (Write groups: ``picaemu.draw_state``.)

No helper receives a view or an array chosen by a branch: numba reference-counts those with atomic
operations that cost more than the rest of a port word (measured: 150 of 160 ns).

Arrays (owned by the caller's GpuState and the processor):
  words (W,) uint32; regs (0x300,) uint32; action (0x300,) int32 codes (below); layout (PORTS, 8) int64;
  float_uniforms (2, 96, 4) float32 [unit 0 = VS, 1 = GS]; code (2, 4096) uint32; opdescs (2, 128) uint32;
  lighting (24, 256) uint32; fog (128,) uint32; proctex (6, 256) uint32; gas (16,) uint32;
  fixed (16, 4) float32; pending (PORTS, 4) uint32 partial words; counters (COUNTERS_LEN,) int64;
  immediate (cap, 16, 4) float32; cursor (CURSOR_LEN,) int64; records (cap, 4) int64; packet_records (cap, 2);
  events (cap, 3) int64; groups (0x300 + PORTS,) int64; draw_info (cap, DRAW_INFO_LEN) int64; shadow (0x300,)
  uint32 the register file at the previous recorded draw; changes (cap,) int64 registers that differ from it at
  each recorded draw, packed ``id << 32 | value`` (a draw's snapshot = the previous one + its changes).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from picaemu import numba_link
from picaemu.command.codes import (  # the loop's codes (``K.A_PLAIN`` ... as the other modules read them)
    A_DRAW,
    A_EVENT,
    A_INDEX,
    A_MIRROR,
    A_PLAIN,
    A_PORT,
    A_STOP,
    CODE_CAPACITY,
    G_COM_MODE_LO,
    G_COM_MODE_REG,
    G_GS_USE_LO,
    G_GS_USE_REG,
    G_GS_USE_WIDTH,
    G_MIRROR_DELTA,
    G_NUM_ATTR_REG,
    GS_PORT_DELTA,
    L_INDEX_LO,
    L_INDEX_REG,
    L_INDEX_WIDTH,
    L_SEL_LO,
    L_SEL_WIDTH,
    NUM_REGS,
    P_FIXED,
    P_FOG,
    P_GAS,
    P_GS_CODE,
    P_GS_FLOAT,
    P_LIGHTING,
    P_PROCTEX,
    P_VS_CODE,
    P_VS_FLOAT,
)
from picaemu.command.codes import D_ARRAYS as D_ARRAYS
from picaemu.command.codes import D_ELEMENTS as D_ELEMENTS
from picaemu.command.codes import NUM_PORTS as NUM_PORTS
from picaemu.command.codes import P_GS_OPDESC as P_GS_OPDESC
from picaemu.command.codes import P_VS_OPDESC as P_VS_OPDESC
from picaemu.command.packets import (
    CONSECUTIVE_SHIFT,
    EXTRA_BITS,
    EXTRA_SHIFT,
    ID_MASK,
    ID_SHIFT,
    LANE_MASKS,
    MASK_BITS,
    MASK_SHIFT,
)

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
K_DRAWS = 10  # draws so far (the index of the next one); the loop counts the draws it handles
K_NDRAW = 11  # rows of draw_info filled
K_BUFFER = 12  # physical address of the buffer (recorded with each draw)
K_RECORD_DRAWS = 13  # 1: the loop's draws fill draw_info / changes; 0: they are only counted
K_NCHANGE = 14  # entries of changes filled
CURSOR_LEN = 15

# draw_info columns
DI_INDEX, DI_KIND, DI_BUFFER, DI_OFFSET, DI_DIRTY, DI_CHANGES = range(6)  # DI_OFFSET in bytes; DI_CHANGES:
DRAW_INFO_LEN = 6  # where the draw's entries of ``changes`` end (they start where the previous row's end)
SNAPSHOT_BLOCK = 16  # registers compared at once against the shadow (NUM_REGS is a multiple)

# statuses
S_END, S_STOP, S_TRUNCATED, S_ODD_TAIL, S_RECORDS_FULL, S_LIMIT, S_IMMEDIATE_FLUSH, S_IMMEDIATE_FULL = range(8)
S_EVENTS_FULL, S_DRAWS_FULL = 8, 9
# statuses of the compiled draw loop around this one (``picaemu.fused.loop``): its rows are full; the draw it was
# handed (the trigger last stopped at) is left to Python
S_ROWS_FULL, S_DECLINED = 10, 11

LUT_SIZES_PROCTEX = np.array([128, 128, 128, 128, 256, 256], dtype=np.int64)


@numba_link.kernel(nogil=True)
def _field(value, lo, width):  # pragma: no cover - compiled
    return (value >> lo) & ((1 << width) - 1)


@numba_link.compiled_only(_nrt=False)
def _set_field(regs, reg, lo, width, v):  # pragma: no cover - compiled
    m = ((1 << width) - 1) << lo
    regs[reg] = np.uint32((np.int64(regs[reg]) & ~m) | ((v << lo) & m))


@numba_link.compiled_only(_nrt=False)
def _masked_store(regs, reg, val, m):  # pragma: no cover - compiled
    """regs[reg] takes the bits of ``val`` that the 32-bit mask ``m`` selects (a write through a lane mask)."""
    regs[reg] = np.uint32((np.int64(regs[reg]) & ~m) | (val & m))


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


@numba_link.compiled_only()
def _f24_component(w1, w2, w3, c):  # pragma: no cover - compiled
    """Component ``c`` (0 = x) of a packed float24 vec4 (three words, W:Z:Y:X most significant first) as float32.

    float24 1.7.16 -> float32: all bits but the sign zero is a signed zero, exponent 0x7F is Inf/NaN, else the
    exponent is rebiased (63 -> 127) and the mantissa widened."""
    lo = (w2 << 32) | w3  # bits 0-63 of the 96-bit vector (x, y, the low byte of z)
    hi = (w1 << 32) | w2  # bits 32-95
    raw = ((lo >> (24 * c)) if c < 2 else (hi >> (24 * c - 32))) & 0xFFFFFF
    sign = (raw >> 23) & 1
    exp = (raw >> 16) & 0x7F
    mant = raw & 0xFFFF
    if (raw & 0x7FFFFF) == 0:
        bits = sign << 31
    elif exp == 0x7F:
        bits = (sign << 31) | (255 << 23) | (mant << 7)
    else:
        bits = (sign << 31) | ((exp + 64) << 23) | (mant << 7)
    return _as_f32(np.uint32(bits))


@numba_link.kernel(nogil=True, _nrt=False, inline="always")
def _uniform_words(port, words, pos, k0, k1, regs, layout, fu, pending, counters):  # pragma: no cover - compiled
    """Feed parameters k0..k1 of the packet at ``pos`` to a float-uniform port (the words of one non-consecutive
    packet at once: index and mode are read once). Four words W, Z, Y, X (float32 mode) or three packed float24
    words make a uniform row; the index moves on (wrapping in its field) per row, rows past the 96 are dropped.
    Returns True when a row also went to the GS unit (VS uniforms mirrored, see ``_vs_mirrored_to_gs``)."""
    unit = np.int64(port != P_VS_FLOAT)
    mirror = port == P_VS_FLOAT and _vs_mirrored_to_gs(regs, layout)
    ireg = layout[port, L_INDEX_REG]
    lo = layout[port, L_INDEX_LO]
    width = layout[port, L_INDEX_WIDTH]
    idx = _field(np.int64(regs[ireg]), lo, width)
    f32_mode = _field(np.int64(regs[ireg]), layout[port, L_SEL_LO], layout[port, L_SEL_WIDTH])
    need = 4 if f32_mode else 3
    n = counters[C_PENDING + port]
    mirrored = False
    for k in range(k0, k1 + 1):
        pending[port, n] = words[pos] if k == 0 else words[pos + 1 + k]
        n += 1
        if n < need:
            continue
        n = 0
        row = idx
        idx = (idx + 1) & ((1 << width) - 1)
        if row >= fu.shape[1]:
            counters[C_DROPPED] += 1
            continue
        w1, w2, w3 = np.int64(pending[port, 0]), np.int64(pending[port, 1]), np.int64(pending[port, 2])
        for c in range(4):
            if f32_mode:  # words arrive W, Z, Y, X
                fu[unit, row, c] = _as_f32(pending[port, 3 - c])
            else:
                fu[unit, row, c] = _f24_component(w1, w2, w3, c)
            if mirror:
                fu[1, row, c] = fu[0, row, c]
        mirrored |= mirror
    counters[C_PENDING + port] = n
    _set_field(regs, ireg, lo, width, idx)
    return mirrored


@numba_link.compiled_only(_nrt=False)
def _advance_index(port, regs, layout):  # pragma: no cover - compiled
    """(index, select field) of a port's index register, which moves on by one."""
    ireg = layout[port, L_INDEX_REG]
    lo = layout[port, L_INDEX_LO]
    width = layout[port, L_INDEX_WIDTH]
    idx = _field(np.int64(regs[ireg]), lo, width)
    sel = _field(np.int64(regs[ireg]), layout[port, L_SEL_LO], layout[port, L_SEL_WIDTH])
    _set_field(regs, ireg, lo, width, idx + 1)
    return idx, sel


@numba_link.kernel(nogil=True, _nrt=False)
def _table_index(port, regs, layout, capacity, counters):  # pragma: no cover - compiled
    """The index the next word of an indexed port (code, opdescs, fog, gas) goes to, advancing it; -1 (and a
    dropped word counted) when it is out of range. The caller stores: no table array is passed around."""
    idx, _ = _advance_index(port, regs, layout)
    if idx < capacity:
        return idx
    counters[C_DROPPED] += 1
    return -1


@numba_link.compiled_only(_nrt=False)
def _lut_word(port, val, regs, layout, luts, proctex_sizes, counters):  # pragma: no cover - compiled
    """Store ``val`` in luts[table, index] (table from the select field) and advance the index, wrapping at the
    table size (``luts.shape[1]``, or the proctex size of that table)."""
    idx, table = _advance_index(port, regs, layout)
    if table < luts.shape[0]:
        size = LUT_SIZES_PROCTEX[table] if proctex_sizes else luts.shape[1]
        luts[table, idx % size] = val
    else:
        counters[C_DROPPED] += 1


@numba_link.kernel(nogil=True, _nrt=False, inline="always")
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
            for c in range(4):
                fixed[idx, c] = _f24_component(w1, w2, w3, c)
        _set_field(regs, ireg, lo, width, idx + 1)
        return False
    v = counters[C_IMM_COUNT]
    a = counters[C_IMM_ATTR]
    for c in range(4):
        immediate[v, a, c] = _f24_component(w1, w2, w3, c)
    a += 1
    num_attr_reg = np.int64(regs[layout[0, G_NUM_ATTR_REG]])
    num_attrs = _field(num_attr_reg, layout[P_FIXED, L_SEL_LO], layout[P_FIXED, L_SEL_WIDTH]) + 1
    if a >= num_attrs:
        counters[C_IMM_ATTR] = 0
        counters[C_IMM_COUNT] = v + 1
        return True
    counters[C_IMM_ATTR] = a
    return False


@numba_link.kernel(nogil=True, _nrt=False)
def _shares_config(regs, layout):  # pragma: no cover - compiled
    """The GS unit mirrors the VS configuration (VSH_COM_MODE = 0)."""
    # a one-bit field, read here rather than through _field(..., 1): a constant argument is a second compile
    return (np.int64(regs[layout[0, G_COM_MODE_REG]]) >> layout[0, G_COM_MODE_LO]) & 1 == 0


@numba_link.kernel(nogil=True, _nrt=False)
def _vs_mirrored_to_gs(regs, layout):  # pragma: no cover - compiled
    """VS uniforms and config go to the GS unit too: it shares the VS configuration and no geometry shader is in
    use (GEOSTAGE_CONFIG gs_use = 0)."""
    gs_use = _field(np.int64(regs[layout[0, G_GS_USE_REG]]), layout[0, G_GS_USE_LO], layout[0, G_GS_USE_WIDTH])
    return gs_use == 0 and _shares_config(regs, layout)


@numba_link.kernel(nogil=True, _nrt=False, inline="always")
def _port_word(
    port, val, regs, layout, code, opdescs, lighting, fog, proctex, gas, fixed, pending, counters, immediate
):  # pragma: no cover - compiled
    """Feed one word to a data port other than the float uniforms (``_uniform_words``). Returns (the GS port it
    was mirrored to or 0, True when the immediate-vertex buffer is full)."""
    if port == P_FIXED:
        done = _fixed_word(val, regs, layout, fixed, pending, counters, immediate)
        return 0, done and counters[C_IMM_COUNT] >= immediate.shape[0]
    elif port in (P_LIGHTING, P_PROCTEX):  # a run-time bool: a literal one compiled ``_lut_word`` twice
        proctex_sizes = port == P_PROCTEX
        _lut_word(port, val, regs, layout, proctex if proctex_sizes else lighting, proctex_sizes, counters)
    elif port == P_FOG:
        at = _table_index(port, regs, layout, fog.shape[0], counters)
        if at >= 0:
            fog[at] = val
    elif port == P_GAS:
        at = _table_index(port, regs, layout, gas.shape[0], counters)
        if at >= 0:
            gas[at] = val
    else:  # shader code / operand descriptors of either unit
        unit = np.int64(port >= P_GS_FLOAT)
        is_code = port in (P_VS_CODE, P_GS_CODE)
        at = _table_index(port, regs, layout, CODE_CAPACITY[port], counters)
        mirror = unit == 0 and at >= 0 and _shares_config(regs, layout)
        if at >= 0 and is_code:
            code[unit, at] = val
            if mirror:
                code[1, at] = val
        elif at >= 0:
            opdescs[unit, at] = val
            if mirror:
                opdescs[1, at] = val
        if mirror:
            return port + GS_PORT_DELTA, False
    return 0, False


@numba_link.kernel(nogil=True, _nrt=False)
def _record(records, cursor, pos, reg, val, lanes):  # pragma: no cover - compiled
    """Append one register write (packet word index, id, value as carried, lane mask) for the observers."""
    r = cursor[K_NREC]
    records[r, 0] = pos
    records[r, 1] = reg
    records[r, 2] = val
    records[r, 3] = lanes
    cursor[K_NREC] = r + 1


@numba_link.kernel(nogil=True, _nrt=False)
def _record_draw(cursor, kind, pos, regs, dirty, draw_info, shadow, changes):  # pragma: no cover - compiled
    """Count a draw; with K_RECORD_DRAWS, append (index, kind, buffer, byte offset, dirty, end of its changes) and
    the registers that differ from ``shadow`` (then equal to ``regs``). Comparing a block at a time with one OR of
    XORs reads 6 KiB that stay in cache, where a full copy would write 3 KiB of fresh memory per draw."""
    if cursor[K_RECORD_DRAWS]:
        d = cursor[K_NDRAW]
        n = cursor[K_NCHANGE]
        for b in range(0, NUM_REGS, SNAPSHOT_BLOCK):
            diff = np.uint32(0)
            for j in range(b, b + SNAPSHOT_BLOCK):
                diff |= regs[j] ^ shadow[j]
            if diff:
                for j in range(b, b + SNAPSHOT_BLOCK):
                    if regs[j] != shadow[j]:
                        changes[n] = (np.int64(j) << 32) | np.int64(regs[j])
                        shadow[j] = regs[j]
                        n += 1
        draw_info[d, DI_INDEX] = cursor[K_DRAWS]
        draw_info[d, DI_KIND] = kind
        draw_info[d, DI_BUFFER] = cursor[K_BUFFER]
        draw_info[d, DI_OFFSET] = 4 * pos
        draw_info[d, DI_DIRTY] = dirty
        draw_info[d, DI_CHANGES] = n
        cursor[K_NDRAW] = d + 1
        cursor[K_NCHANGE] = n
    cursor[K_DRAWS] += 1


@numba_link.kernel(nogil=True, _nrt=False)
def run(
    words,
    end,
    regs,
    action,
    layout,
    fu,
    code,
    opdescs,
    lighting,
    fog,
    proctex,
    gas,
    fixed,
    pending,
    counters,
    immediate,
    cursor,
    records,
    packet_records,
    events,
    record,
    groups,
    draw_info,
    shadow,
    changes,
):  # pragma: no cover - compiled
    """Process packets from cursor[K_POS]/cursor[K_PARAM] until something needs Python; return a status.

    The hot state (position, counts, the dirty accumulator) lives in locals and is stored back once, at the
    single exit below."""
    pos = cursor[K_POS]
    k = cursor[K_PARAM]
    packets = cursor[K_PACKETS]
    acc = counters[C_DIRTY]
    writes = np.int64(0)
    imm_pending = counters[C_IMM_COUNT] > 0
    status = -1
    while pos < end:
        if pos + 1 >= end:
            status = S_ODD_TAIL
            break
        hdr = np.int64(words[pos + 1])
        extra = (hdr >> EXTRA_SHIFT) & EXTRA_BITS
        if pos + 2 + extra + (extra & 1) > end:  # parameters and padding word (packets.PACKET)
            status = S_TRUNCATED
            break
        if k == 0:
            if cursor[K_LIMIT] >= 0 and packets >= cursor[K_LIMIT]:
                status = S_LIMIT
                break
            if record:
                if cursor[K_NPK] >= packet_records.shape[0] or cursor[K_NREC] + extra + 1 > records.shape[0]:
                    status = S_RECORDS_FULL
                    break
                packet_records[cursor[K_NPK], 0] = pos
                packet_records[cursor[K_NPK], 1] = hdr
                cursor[K_NPK] += 1
        reg0 = (hdr >> ID_SHIFT) & ID_MASK
        lanes = (hdr >> MASK_SHIFT) & MASK_BITS
        m = LANE_MASKS[lanes]
        consecutive = (hdr >> CONSECUTIVE_SHIFT) & 1
        leave = False  # stop just past parameter k
        while k <= extra:
            val = np.int64(words[pos]) if k == 0 else np.int64(words[pos + 1 + k])
            reg = reg0 + k if consecutive else reg0
            if reg >= NUM_REGS:
                counters[C_IGNORED] += 1
                writes += 1
                if record:
                    _record(records, cursor, pos, reg, val, lanes)
                k += 1
                continue
            act = action[reg]
            if act == A_PLAIN and not imm_pending and not record:  # most writes: a masked store, nothing else
                writes += 1
                acc |= groups[reg]
                _masked_store(regs, reg, val, m)
                k += 1
                continue
            if imm_pending and act != A_PORT + P_FIXED:
                status = S_IMMEDIATE_FLUSH
                break
            if (
                act >= A_DRAW
                and act < A_EVENT
                and cursor[K_RECORD_DRAWS]
                and (cursor[K_NDRAW] >= draw_info.shape[0] or cursor[K_NCHANGE] + NUM_REGS > changes.shape[0])
            ):
                status = S_DRAWS_FULL
                break
            writes += 1
            acc |= groups[reg]
            if record:
                _record(records, cursor, pos, reg, val, lanes)
            _masked_store(regs, reg, val, m)
            if act == A_PLAIN:
                k += 1
                continue
            if act == A_STOP:
                cursor[K_STOP_ID] = reg
                cursor[K_STOP_VALUE] = val
                cursor[K_STOP_PACKET] = pos
                status = S_STOP
                leave = True
                break
            if act >= A_DRAW and act < A_EVENT:
                _record_draw(cursor, act - A_DRAW, pos, regs, acc, draw_info, shadow, changes)
                acc = 0
            elif act == A_PORT + P_VS_FLOAT or act == A_PORT + P_GS_FLOAT:
                port = act - A_PORT
                acc |= groups[NUM_REGS + port]
                last = k if consecutive or record else extra  # a non-consecutive packet: all its words go here
                if _uniform_words(port, words, pos, k, last, regs, layout, fu, pending, counters):
                    acc |= groups[NUM_REGS + P_GS_FLOAT]
                if last > k:
                    writes += last - k
                    _masked_store(regs, reg, np.int64(words[pos + 1 + last]), m)
                    k = last
            elif act >= A_PORT and act < A_INDEX:
                port = act - A_PORT
                acc |= groups[NUM_REGS + port]
                mirror, full = _port_word(
                    port,
                    val,
                    regs,
                    layout,
                    code,
                    opdescs,
                    lighting,
                    fog,
                    proctex,
                    gas,
                    fixed,
                    pending,
                    counters,
                    immediate,
                )
                if mirror:
                    acc |= groups[NUM_REGS + mirror]
                imm_pending = counters[C_IMM_COUNT] > 0
                if full:
                    status = S_IMMEDIATE_FULL
                    leave = True
                    break
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
                    status = S_EVENTS_FULL
                    leave = True
                    break
            elif act == A_MIRROR and _vs_mirrored_to_gs(regs, layout):
                g = reg - layout[0, G_MIRROR_DELTA]
                _masked_store(regs, g, val, m)
                acc |= groups[g]
            k += 1
        if leave:
            k += 1
        if k > extra:  # the packet is done (or the stop was at its last parameter)
            pos += 2 + extra + (extra & 1)
            k = 0
            packets += 1
        if status >= 0:
            break
    if status < 0:
        status = S_END
    cursor[K_POS] = pos
    cursor[K_PARAM] = k
    cursor[K_PACKETS] = packets
    counters[C_WRITES] += writes
    counters[C_DIRTY] = acc
    return status
