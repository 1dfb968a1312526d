"""The PICA200 programmable shader unit: binding (setup), vectorized interpreter, geometry shader, tools.

Public interface used by the render pipeline (imported at first use: ``picaemu.lazy``, so that
``picaemu.shader.setup`` alone loads no compiled interpreter)::

    from picaemu.shader import ShaderSetup, run_vertex_shader, run_geometry_shader
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from picaemu.lazy import lazy_exports

if TYPE_CHECKING:
    from picaemu.shader.geometry import GeometryOutput, run_geometry_shader
    from picaemu.shader.interpreter import run_vertex_shader
    from picaemu.shader.setup import GeometryConfig, ShaderSetup

__all__ = ["GeometryConfig", "GeometryOutput", "ShaderSetup", "run_geometry_shader", "run_vertex_shader"]
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "GeometryOutput": "geometry",
        "run_geometry_shader": "geometry",
        "run_vertex_shader": "interpreter",
        "GeometryConfig": "setup",
        "ShaderSetup": "setup",
    },
)
