"""Per-fragment operations and the buffers they write, in emulated memory.

- ``ops`` (with the compiled passes of ``kernels``): stencil, depth, blend / logic op and write masks of one draw,
  in primitive order, recording each fragment's fate;
- ``depth_stencil`` and ``blend``: the decoded register state and the rules those passes apply;
- ``shadow``: the shadow-map color operation;
- ``batch``: which consecutive draws may run their fragment side as one (same fragment state, no hazard) and
  how each draw's counters come back out of the batch;
- ``framebuffer``: color and depth/stencil formats, 8x8 tiling, the per-draw render-target state.
"""
