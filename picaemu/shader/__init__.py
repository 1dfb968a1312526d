"""The PICA200 programmable shader unit: binding (setup), vectorized interpreter, geometry shader, tools.

Public interface used by the render pipeline::

    from picaemu.shader import ShaderSetup, run_vertex_shader, run_geometry_shader
"""

from __future__ import annotations

from picaemu.shader.geometry import GeometryOutput, run_geometry_shader
from picaemu.shader.interpreter import run_vertex_shader
from picaemu.shader.setup import GeometryConfig, ShaderSetup

__all__ = ["GeometryConfig", "GeometryOutput", "ShaderSetup", "run_geometry_shader", "run_vertex_shader"]
