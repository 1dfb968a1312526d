"""The layout of the fused fragment side's plan arrays (``picaemu.fused.fragments.FragmentPlan``): the slots of
``ints``, the columns of ``units`` / ``tev_rows`` / ``color_ints``, the TEV's source slots and the kernel's return
codes. Plain data read by the compiled kernels (``fragment_kernel``, ``features``) and the plan builder.
"""

# picaemu: kernel constants (the kernel cache's digest covers this file: kernels freeze these values)

from __future__ import annotations

from picaemu.color.tev_program import NUM_STAGES
from picaemu.texture.formats import MAX_SIZE, MIN_SIZE

# return codes: 0 done; else the staged path must run the draw (nothing was written to memory)
DONE, TOO_MANY_FRAGMENTS, DIVISION_BY_ZERO, TEXTURE_FAULT = range(4)
# FRAGMENT_COUNTERS indices
RASTERIZED, SCISSORED, TEXELS, KILLED_ALPHA, KILLED_STENCIL, KILLED_DEPTH, WRITTEN = range(7)
# ints: texture addresses of units 0-2 (slots 0-2), then these; then the physical address and bytes of the depth
# buffer and of the color buffer when the draw writes them (0 bytes: it does not), the draw's render targets
VRAM_BASE, FCRAM_BASE, USES_BUFFER, ALPHA_TEST, PRIMARY, DEPTH_KIND, COLOR_KIND = range(3, 10)
TARGETS = 10  # + 2 * target (0 depth, 1 color): address, bytes
NUM_INTS = TARGETS + 4
# units rows: the unit is read (enabled and a TEV source); level 0's width, its log2 and height; texel word bits;
# wrap codes; magnification, minification and mip filters linear; the LOD changes the result
# (``TextureUnitState.needs_lod``: else level ``min_level`` with the magnification filter); min level and the last
# level a lookup may read (``TextureUnitState.last_level``: the max level, or the min level without LOD); the
# LOD bias in 1/``LOD_BIAS_SCALE`` levels; its texcoords' columns (-1 reads 1.0); faces (1, or 6 for a cube map,
# sampled at ``filtering.cube_face`` of (s, t, texcoord0.w)) and the w column; projection (s / w, t / w); the
# format's fields
# (``texture.fetch.channel_fields``: shifts and widths of R, G, B, A) and texel source kind (``fetch.KIND_*``); per
# level 0..MAX_LEVELS-1 its byte offset from the base, then its byte size (filled for min..max); faces 1-5's
# address bits inside ``state.CUBE_LOW_MASK`` (the rest are the live base address's: ``state._addresses``)
(
    U_USED,
    U_WIDTH,
    U_WIDTH_LOG2,
    U_HEIGHT,
    U_WORD_BITS,
    U_WRAP_S,
    U_WRAP_T,
    U_MAG_LINEAR,
    U_MIN_LINEAR,
    U_MIP_LINEAR,
    U_NEEDS_LOD,
    U_MIN_LEVEL,
    U_LAST_LEVEL,
    U_LOD_BIAS,
    U_COL_S,
    U_COL_T,
    U_FACES,
    U_COL_W,
    U_PROJECT,
    U_FIELDS,
) = range(20)
U_KIND = U_FIELDS + 8
U_OFFSETS = U_KIND + 1
MAX_LEVELS = (MAX_SIZE // MIN_SIZE).bit_length()  # 1024 .. 8 texels: levels 0-7
U_BYTES = U_OFFSETS + MAX_LEVELS
U_FACE_LOW = U_BYTES + MAX_LEVELS
CUBE_FACES = 6
UNIT_INTS = U_FACE_LOW + CUBE_FACES - 1
LOD_BIAS_SCALE = 256  # the bias register is signed fixed point 1.4.8: an exact float32 after the division
# source slots of the (SLOTS, F, 4) uint8 TEV inputs: the constant of the running stage, the buffer a stage reads
# when its RGB and alpha come from different places (else the sources name that place), the initial buffer color,
# then each stage's output (``STAGE_OUT + k``: the program's rows name stage outputs by index)
ZERO, PRIMARY_SLOT, TEX0, CONSTANT, BUF_READ, BUF_COLOR = 0, 1, 2, 5, 6, 7
PROCTEX_SLOT, LIGHT_PRIMARY, LIGHT_SECONDARY = 8, 9, 10
STAGE_OUT = 11
NUM_SLOTS = STAGE_OUT + NUM_STAGES
# color_ints: the procedural texture is read (unit 3 on and a TEV source), its u and v columns (-1 reads 1.0), fog
# on, fog z flip, fragment lighting computed, its bump unit, the columns of the quaternion (x4) and view (x3)
C_PROCTEX, C_PROCTEX_U, C_PROCTEX_V, C_FOG, C_FOG_FLIP, C_LIGHTING, C_BUMP_UNIT, C_QUAT = range(8)
C_VIEW = C_QUAT + 4
COLOR_INTS = C_VIEW + 3
# tev_rows (``tev_program.StageRow``s in slots): stage computes (not a pass-through), RGB source slots x3, alpha
# source slots x3, RGB op, RGB shift, alpha operand channels x3 and inversions x3, alpha op (the kernel's), alpha
# shift, dot3, dot3 RGBA, reads the constant, constant RGBA x4, output slot, BUF_READ is made for it (it reads the
# buffer, whose RGB and alpha come from different slots), the slots of the buffer's RGB and alpha
(
    T_ACTIVE,
    T_RGB_SRC,
    T_ALPHA_SRC,
    T_RGB_OP,
    T_RGB_SHIFT,
    T_ALPHA_CH,
    T_ALPHA_INV,
    T_ALPHA_OP,
    T_ALPHA_SHIFT,
    T_DOT3,
    T_DOT3_RGBA,
    T_READS_CONSTANT,
    T_CONSTANT,
    T_OUT,
    T_SPLIT_BUFFER,
    T_BUFFER_RGB,
    T_BUFFER_ALPHA,
) = (0, 1, 4, 7, 8, 9, 12, 15, 16, 17, 18, 19, 20, 24, 25, 26, 27)
TEV_INTS = 28
