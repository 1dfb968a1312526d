"""Geometry, from vertex arrays to window-space triangles, in data-flow order.

- ``vertex_loader``: vertex arrays / fixed attributes / immediate data -> shader inputs ``(N, 16, 4) float32``
  (the shader unit, ``picaemu.shader``, runs next);
- ``output_map``: shader output registers -> fixed-function vertex columns (position, color, texcoords, view,
quaternion);
- ``primitive_assembly``: a vertex stream -> triangles ``(T, 3, C) float32``, with the assembler's between-draw state;
- ``clipping``: clip against the frustum and the user plane, perspective divide, viewport, depth map, culling ->
  ``WindowTriangles`` for ``picaemu.raster``.
"""
