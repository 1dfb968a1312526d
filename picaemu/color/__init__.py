"""The fragment color path after texturing: fragment lighting, TEV, fog and gas.

- ``lighting`` (with ``lighting_luts`` and the compiled ``lighting_kernel``): primary/secondary colors from the
  interpolated normal quaternion and view vector;
- ``tev``: the six-stage combiner in 8-bit fixed point;
- ``fog`` and ``gas``: depth-indexed fog and the gas (volumetric) passes;
- ``shading``: the one function the pipeline calls, in that order, handing its colors to ``picaemu.fragment``.
"""
