"""The address of a numpy array's first element, read where numpy keeps it (``data_address``).

``ndarray.ctypes.data`` builds a ctypes helper object and numpy's ``__array_interface__`` dictionary to answer
(~1.3 us); ``numba_link.Stored`` asks it of each of a plan's ~80 arrays whenever a replay meets a new draw state
(~0.1 ms of a ~0.5 ms plan). numpy's array object is its public C struct ``PyArrayObject_fields`` (numpy's
``ndarraytypes.h``, fixed by its binary interface): the object header, then ``char *data``; and CPython's ``id`` is
the object's address. So the pointer is one ctypes read at ``id(array) + object.__basicsize__`` (~0.25 us). The
offset is checked at import against ``ctypes.data`` on a view that starts inside its base; where it does not hold
(another interpreter or layout), ``data_address`` is ``ctypes.data``'s answer.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import numpy as np

_OFFSET = object.__basicsize__  # PyObject_HEAD: the fields before ``data``
_POINTER = ctypes.c_void_p.from_address


def _read(array: np.ndarray) -> int:
    """The ``data`` field of ``array`` (a ``numpy.ndarray``, not a subclass: ``_leaf_values``' test)."""
    return _POINTER(id(array) + _OFFSET).value or 0


def _asked(array: np.ndarray) -> int:
    return int(array.ctypes.data)


def _checked() -> Callable[[np.ndarray], int]:
    """``_read`` when it answers as ``ctypes.data`` does on views of a probe (offset, strided, empty), else
    ``_asked``."""
    probe = np.arange(64, dtype=np.int64)
    views = (probe, probe[3:], probe[5::2].reshape(-1, 3)[1:], probe[7:7], probe.view(np.uint8)[1:])
    same = all(_read(view) == view.ctypes.data for view in views)
    return _read if same else _asked


data_address = _checked()
