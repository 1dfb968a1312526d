"""Fused draws: the common draw from its trigger to the framebuffer in compiled code, with no Python per draw.

A game frame is hundreds to thousands of small draws, each after a few state changes; paid stage by stage in
Python, the fixed cost of a draw is ~100 times its work. This package holds the compiled path for the draws
that the common state covers, built from the same stage kernels as the staged pipeline (no second rule):

- ``vertices``: the vertex loader and the fused vertex front end (``picaemu.geometry.front_end``) as one
  compiled call, from a ``VertexPlan`` (arrays packed once per loader / program / output-map state);
- ``fragments``: rasterization, texture units, TEV, alpha test and the per-fragment operations as one compiled
  call (``fragment_kernel``), from a ``FragmentPlan`` (arrays packed once per fragment state, ``layout`` names
  their slots); ``features``: the texture units, fragment lighting, the procedural texture and fog, each a
  kernel of its own that the fragment side calls by address (``picaemu.numba_link``) when its plan uses it;
- ``loop``: the command processor's compiled loop, extended to run a draw whose state did not change since the
  plans were made (only live fields moved: uniforms, the draw range, texture addresses) or whose state is one of
  the last few it has plans for, without leaving compiled code;
- ``driver``: the command processor's side of it (the plans a sink offered, the plan table, the draw handed
  over next).

A draw outside the common state (or any observed draw) takes the staged pipeline; both give the same pixels and
counters (``tests/test_fused_*.py``, ``tests/test_route.py``).
"""
