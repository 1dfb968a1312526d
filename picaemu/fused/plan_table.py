"""The compiled loop's plan table: the states' plans the loop switches between without Python.

Receives the plans Python gets for a draw (``install``: a ``loop.CompiledPlans`` and the registers it was made
under); produces the loop's arguments after the kernel's (``args``: the ``PLAN_KEY_IDS`` values of each slot, the
slot count, the watched values, where each slot's plans are kept in native form) and each slot's entries of the
kernels its draws call by address (``links``: ``_draw``, ``vertex_side``, ``fragment_side``, compiled for that slot's
plan types, and the command kernel's).

Plans of different numba types share the table: each slot carries the entries compiled for its own types, so a game
whose draws alternate between two kinds of plan (citro2d's sprites and its untextured quads) switches between them
in the loop. (A table of one type, cleared when another came, sent 394 of minicraft's 507 draws back to Python,
each making a stored plan pair and asking for the entries again: bench/RESULTS.md, "Start-up, install and a draw's
references, fourteenth session".) The entries are made once per kind of plan (``numba_link.arguments_kind``).
"""

from __future__ import annotations

import numba
import numpy as np

from picaemu import numba_link
from picaemu.command import kernel as K
from picaemu.fused import loop
from picaemu.fused.loop import (
    A_FU,
    A_REGS,
    DRAW,
    FRAGMENT_SIDE,
    LINK_COMMAND,
    LINK_DRAW,
    LINK_FRAGMENT_SIDE,
    LINK_VERTEX_SIDE,
    NUM_LINKS,
    PLAN_KEY_IDS,
    TABLE_SLOTS,
    VERTEX_SIDE,
    CompiledPlans,
)

Entries = tuple[tuple[int, int], tuple[int, int], tuple[int, int]]  # vertex_side, fragment_side, _draw


class PlanTable:
    """Up to ``TABLE_SLOTS`` states' plans, each with the values of the ``PLAN_KEY_IDS`` registers it was made under
    (``keys``) and its own kernel entries (module docstring). Python installs the plans it gets for a draw
    (``install``); the program digest changing clears the table (``clear``)."""

    def __init__(self) -> None:
        self.keys = np.zeros((TABLE_SLOTS, PLAN_KEY_IDS.shape[0]), np.uint32)
        self.plans: list[CompiledPlans] = []
        self.current = 0
        self._next = 0  # the slot replaced when the table is full
        self._args: tuple | None = None
        self._slots = np.zeros((TABLE_SLOTS, 2), np.int64)  # where each slot's vertex and fragment arguments are
        self._watched = np.zeros((TABLE_SLOTS, len(loop.WATCHED)), np.uint32)  # each slot's ``watched`` values
        self._stored: list[numba_link.Stored] = []  # the fragment arguments kept there
        self._kinds: list[object] = []  # each slot's ``arguments_kind`` pair (None: one it cannot name)
        self._links = np.zeros((TABLE_SLOTS, NUM_LINKS, 2), np.int64)  # each slot's entries (0: not yet asked)
        self._entries: dict[object, Entries] = {}  # by kind

    def clear(self) -> None:
        self.plans.clear()
        self._stored.clear()
        self._kinds.clear()
        self._next, self._args, self.current = 0, None, 0
        self._links[:] = 0

    def install(self, plans: CompiledPlans, regs: np.ndarray) -> None:
        """Make ``plans`` (made under the registers ``regs``) current, adding it to the table if new."""
        for j, known in enumerate(self.plans):
            if known.vertices is plans.vertices and known.fragments is plans.fragments:
                self.current = j
                return
        kind = (plans.vertices.kind, plans.fragments.kind)  # each plan's, taken once (~50 us a fragment plan)
        named = None not in kind  # None: a kind ``arguments_kind`` cannot name
        # the vertex plan's stored form is its own (``VertexPlan.stored``, which the pipeline's vertex side reads too)
        stored = numba_link.Stored(plans.fragments.args, kind[1])
        if len(self.plans) < TABLE_SLOTS:
            j = len(self.plans)
            self.plans.append(plans)
            self._stored.append(stored)
            self._kinds.append(kind if named else None)
        else:
            j, self._next = self._next, (self._next + 1) % TABLE_SLOTS
            self.plans[j], self._stored[j], self._kinds[j] = plans, stored, kind if named else None
        self.keys[j] = regs[PLAN_KEY_IDS]
        self._watched[j] = plans.watched
        self._watched[len(self.plans) :] = self.plans[0].watched  # the slots not in use as the first
        self._slots[j] = plans.vertices.stored.address, stored.address
        self._links[j] = 0
        self.current, self._args = j, None

    def args(self) -> tuple:
        """The loop's arguments after the kernel's, in ``loop.run``'s order (``slots``: where
        ``numba_link.Stored`` keeps each slot's vertex and fragment arguments, a row a slot)."""
        if self._args is None:
            self._args = (self.keys, len(self.plans), self._watched, self._slots)
        return self._args

    def links(
        self, kernel: tuple, command: tuple[int, int], rows: np.ndarray, held: np.ndarray, fstate: np.ndarray
    ) -> np.ndarray:
        """Each slot's entries (``LINK_*``), those of a new slot compiled or found first: ``command`` (the command
        kernel's, for ``kernel``, ``loop.run``'s kernel arguments), ``_draw``'s for the slot's plan types and the
        loop's ``rows``, ``held`` and ``fstate``."""
        for j in np.flatnonzero(self._links[: len(self.plans), LINK_DRAW, 0] == 0).tolist():
            kind = self._kinds[j]
            entries = self._entries.get(kind) if kind is not None else None
            if entries is None:
                entries = self._entries_of(j, kernel, rows, held, fstate)
                if kind is not None:
                    self._entries[kind] = entries
            self._links[j, [LINK_VERTEX_SIDE, LINK_FRAGMENT_SIDE, LINK_DRAW]] = entries
        self._links[:, LINK_COMMAND] = command
        return self._links

    def _entries_of(self, j: int, kernel: tuple, rows: np.ndarray, held: np.ndarray, fstate: np.ndarray) -> Entries:
        """The entries of slot ``j``'s plan types (compiled or loaded on first use)."""
        plans = self.plans[j]
        regs, fu = kernel[A_REGS], kernel[A_FU]
        vertex_type = plans.vertices.stored_type
        vertex = VERTEX_SIDE.entry(*loop.LIVE_SAMPLE, fu[0], 0, loop.VERTEX_COUNTS_SAMPLE, vertex_type)
        fragment = FRAGMENT_SIDE.entry(*loop.TRIANGLES_SAMPLE, *plans.fragments.args, loop.COUNTS_SAMPLE)
        fragment_type = numba.types.TypeRef(self._stored[j].type)
        slot = self._slots[j]
        sample = (regs, fu, K.D_ARRAYS, False, False, plans.watched, slot, self._links[j], rows[0], held, fstate)
        return vertex, fragment, DRAW.entry(*sample, vertex_type, fragment_type)
