"""Primitive assembly: list, strip (winding alternation), fan, buffering across draws, restart."""

from __future__ import annotations

import numpy as np

from picaemu.geometry.primitive_assembly import Assembler, Topology


def ids(tris: np.ndarray) -> list[list[int]]:
    """Triangles as lists of vertex ids (column 0 carries the id)."""
    return tris[:, :, 0].astype(int).tolist()


def verts(*ids_: int) -> np.ndarray:
    return np.array([[i, 0.0] for i in ids_], np.float32).reshape(-1, 2)


def test_list():
    assert ids(Assembler().assemble(Topology.LIST, verts(0, 1, 2, 3, 4, 5))) == [[0, 1, 2], [3, 4, 5]]


def test_strip_swaps_odd_triangles():
    tris = Assembler().assemble(Topology.STRIP, verts(0, 1, 2, 3, 4, 5))
    assert ids(tris) == [[0, 1, 2], [2, 1, 3], [2, 3, 4], [4, 3, 5]]


def test_fan():
    assert ids(Assembler().assemble(Topology.FAN, verts(0, 1, 2, 3, 4))) == [[0, 1, 2], [0, 2, 3], [0, 3, 4]]


def test_geometry_topology_assembles_like_a_list():
    assert ids(Assembler().assemble(Topology.GEOMETRY, verts(0, 1, 2))) == [[0, 1, 2]]


def test_incomplete_primitives_continue_into_the_next_draw():
    a = Assembler()
    assert ids(a.assemble(Topology.LIST, verts(0, 1, 2, 3))) == [[0, 1, 2]]
    assert ids(a.assemble(Topology.LIST, verts(4, 5))) == [[3, 4, 5]]
    s = Assembler()
    assert ids(s.assemble(Topology.STRIP, verts(0, 1, 2))) == [[0, 1, 2]]
    assert ids(s.assemble(Topology.STRIP, verts(3, 4))) == [[2, 1, 3], [2, 3, 4]]
    f = Assembler()
    assert ids(f.assemble(Topology.FAN, verts(0, 1, 2, 3))) == [[0, 1, 2], [0, 2, 3]]
    assert ids(f.assemble(Topology.FAN, verts(4))) == [[0, 3, 4]]


def test_restart_and_topology_change_reset():
    a = Assembler()
    a.assemble(Topology.STRIP, verts(0, 1, 2, 3))
    a.reset()
    assert ids(a.assemble(Topology.STRIP, verts(10, 11, 12))) == [[10, 11, 12]]
    a.assemble(Topology.LIST, verts(0, 1))
    assert ids(a.assemble(Topology.FAN, verts(5, 6, 7))) == [[5, 6, 7]]


def test_too_few_vertices_give_no_triangles():
    for topo in Topology:
        assert Assembler().assemble(topo, verts(0, 1)).shape == (0, 3, 2)
        assert Assembler().assemble(topo, verts()).shape == (0, 3, 2)
