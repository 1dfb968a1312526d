"""The OpenGL rendering backend: the software pipeline's vertex processing, then rasterization, texturing, TEV,
fog, the tests, blending and logic op in generated GLSL and GL's fixed-function stages, headless through EGL.

``GLPipeline`` (``picaemu.gl.backend``) is a ``PipelineSink``; ``picaemu.open(path, backend="gl")`` and the CLI's
``--backend gl`` use it. Importing this package imports PyOpenGL with ``PYOPENGL_PLATFORM=egl``; creating a
pipeline raises ``picaemu.errors.BackendUnavailable`` (one line) when EGL cannot give a GL 4.5 context. The
software pipeline stays the default and the reference: ``picaemu.gl.compare`` measures how far GL's pictures are
from it, ``picaemu.gl.rules`` lists the draws GL hands back to it. Documentation: docs/render.md.
"""

from __future__ import annotations

import os
from typing import Any

# before any module of this package imports PyOpenGL: its platform is chosen once, at its first import
os.environ.setdefault("PYOPENGL_PLATFORM", "egl")


def __getattr__(name: str) -> Any:  # PyOpenGL is imported only when the backend is asked for
    if name == "GLPipeline":
        from picaemu.gl.context import _modules

        _modules()  # BackendUnavailable before any module imports OpenGL.GL at top level
        from picaemu.gl.backend import GLPipeline

        return GLPipeline
    raise AttributeError(f"module 'picaemu.gl' has no attribute {name!r}")
