"""Per-fragment operations and the buffers they write, in emulated memory.

- ``rules``: the one rule table (compare functions, stencil ops, blend equations and factors, logic ops) as data;
- ``ops`` (with the compiled passes of ``kernels``): stencil, depth, blend / logic op and write masks of one draw,
  in primitive order, from the rule table; with a ``FragmentLog`` (the fragment observer) each fragment's fate
  and its pixel's color before and after it;
- ``reference``: the same operations in readable scalar Python, one fragment at a time (the test oracle);
- ``depth_stencil`` and ``blend``: the decoded register state of a draw, and the blend program the passes run;
- ``shadow``: the shadow-map color operation;
- ``batch``: which consecutive draws may run their fragment side as one (same fragment state, no hazard) and
  how each draw's counters come back out of the batch;
- ``framebuffer``: color and depth/stencil formats, 8x8 tiling, the per-draw render-target state.
"""
