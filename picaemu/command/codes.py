"""The command loop's codes (``picaemu.command.kernel`` and the plain-Python ``picaemu.command.walk`` read them
from here, so the walk loads no compiled code): action codes of register ids, data-port numbers, the columns of the
port layout, draw kinds. ``picaemu.command.tables`` builds the tables that hold them from the register table.
"""

# picaemu: kernel constants (compiled code freezes these: a change must recompile, ``picaemu.kernel_cache``)

from __future__ import annotations

import numpy as np

NUM_REGS = 0x300

# action codes
A_PLAIN = 0
A_PORT = 1  # + port number (1..11)
A_INDEX = 20  # + port number: index register of that port
A_MIRROR = 40  # VS config register mirrored into the GS unit when the GS shares the VS configuration
A_STOP = 60  # Python handles it now (draw, jump, finalize)
A_DRAW = 61  # + draw kind (D_ARRAYS / D_ELEMENTS): a draw counted and recorded in the loop (decode-only)
A_EVENT = 70  # queued for Python (restart, cache clear, flush ...): handled at the next stop, in order

# port numbers (rows of ``layout`` / ``pending``)
P_VS_FLOAT, P_VS_CODE, P_VS_OPDESC, P_GS_FLOAT, P_GS_CODE, P_GS_OPDESC = 1, 2, 3, 4, 5, 6
P_FIXED, P_LIGHTING, P_FOG, P_PROCTEX, P_GAS = 7, 8, 9, 10, 11
NUM_PORTS = 12  # row 0 of ``pending`` / ``layout`` belongs to no port (port numbers start at 1)
GS_PORT_DELTA = P_GS_FLOAT - P_VS_FLOAT  # the GS ports follow the VS ports in the same order

# layout columns: index register id, index field lo/width, second field (mode / table) lo/width
L_INDEX_REG, L_INDEX_LO, L_INDEX_WIDTH, L_SEL_LO, L_SEL_WIDTH = 0, 1, 2, 3, 4
# globals row 0 of layout: mirror control
G_COM_MODE_REG, G_COM_MODE_LO, G_GS_USE_REG, G_GS_USE_LO, G_GS_USE_WIDTH, G_MIRROR_DELTA = 0, 1, 2, 3, 4, 5
G_NUM_ATTR_REG = 6
# draw kinds (the decode-only table's A_DRAW + kind)
D_ARRAYS, D_ELEMENTS = 0, 1

CODE_CAPACITY = np.array([0, 0, 512, 128, 0, 4096, 128], dtype=np.int64)  # by port: VS code, VS opdesc, GS ...
