"""Convenience: assemble source text and run it at once (tests, notebooks, the GUI's shader editor).

``setup_from_source(text, floats={4: (x, y, z, w)}, ints={0: (x, y, z, w)}, bools={2: True})`` -> ShaderSetup of
DVLE 0 with those uniforms set over the DVLE constants; ``run_source(text, inputs, ...)`` runs the vertex shader
on ``inputs`` (N, 16, 4) (v registers, identity permutation) and returns (N, 16, 4) outputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from picaemu.shader.asm import assemble
from picaemu.shader.interpreter import run_vertex_shader
from picaemu.shader.setup import ShaderSetup


def setup_from_source(
    text: str,
    *,
    floats: Mapping[int, Sequence[float]] | np.ndarray | None = None,
    ints: Mapping[int, Sequence[int]] | None = None,
    bools: Mapping[int, bool] | None = None,
    dvle: int = 0,
) -> ShaderSetup:
    setup = ShaderSetup.from_dvle(assemble(text), dvle)
    f, i, b = np.array(setup.float_uniforms), np.array(setup.int_uniforms), np.array(setup.bool_uniforms)
    if isinstance(floats, np.ndarray):
        f[: len(floats)] = floats
    else:
        for k, vec in (floats or {}).items():
            f[k] = vec
    for k, vec in (ints or {}).items():
        i[k] = vec
    for k, flag in (bools or {}).items():
        b[k] = flag
    return setup.with_uniforms(floats=f, ints=i, bools=b)


def run_source(text: str, inputs: np.ndarray, **uniforms) -> np.ndarray:
    """Assemble ``text`` and run it over ``inputs`` (N, 16, 4) float32 -> (N, 16, 4) outputs."""
    return run_vertex_shader(setup_from_source(text, **uniforms), np.asarray(inputs, np.float32))
