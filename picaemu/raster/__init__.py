"""Rasterization: window-space triangles -> fragments.

- ``rasterizer``: fill rule, scissor, attribute interpolation over ``WindowTriangles``;
- ``fragments``: the struct-of-arrays ``Fragments`` every later stage (``picaemu.texture``, ``picaemu.color``,
  ``picaemu.fragment``) receives.
"""
