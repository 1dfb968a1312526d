"""A headless OpenGL 4.5 core context through EGL (no window system): the one place picaemu talks to EGL.

``GLContext.create()`` opens an EGL display — Mesa's surfaceless platform first (``EGL_MESA_platform_surfaceless``:
no X, no GPU device needed; llvmpipe renders on the CPU), then the default display with a 1x1 pbuffer — binds
the desktop OpenGL API, creates a 4.5 core context and makes it current on the calling thread. PyOpenGL must
load its EGL platform, so ``PYOPENGL_PLATFORM=egl`` is set before ``OpenGL`` is first imported (when the
variable is unset). Anything missing (PyOpenGL, libEGL, a display, a 4.5 context) raises ``BackendUnavailable``
with one line that names it; nothing here renders.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from dataclasses import dataclass
from typing import Any

from picaemu.errors import BackendUnavailable

GL_VERSION = (4, 5)  # core profile: clip control, integer textures, float depth, float64 in shaders
EGL_PLATFORM_SURFACELESS_MESA = 0x31DD
EGL_CONTEXT_OPENGL_PROFILE_MASK = 0x30FD
EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT = 0x1
_per_thread = threading.local()  # .context: the calling thread's GLContext


def _modules() -> tuple[Any, Any]:
    """(OpenGL.EGL, OpenGL.GL), imported with the EGL platform selected."""
    os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
    if os.environ["PYOPENGL_PLATFORM"] != "egl":
        raise BackendUnavailable(
            f"the OpenGL backend needs PYOPENGL_PLATFORM=egl, not {os.environ['PYOPENGL_PLATFORM']!r}"
        )
    try:
        from OpenGL import EGL, GL
    except ImportError as err:
        raise BackendUnavailable(f"the OpenGL backend needs PyOpenGL and libEGL ({err})") from None
    except Exception as err:  # PyOpenGL raises assorted errors when libEGL / libGL cannot be loaded
        raise BackendUnavailable(f"the OpenGL backend cannot load EGL/GL: {type(err).__name__}: {err}") from None
    return EGL, GL


@dataclass
class GLContext:
    """A current EGL context: its display, config, context and (pbuffer platforms) surface handles."""

    display: Any
    context: Any
    surface: Any
    renderer: str
    version: str
    _thread: int = 0  # the thread it is current on

    @classmethod
    def create(cls) -> GLContext:
        """A new context, current on this thread (``BackendUnavailable`` when none can be made)."""
        EGL, GL = _modules()
        try:
            display, surfaceless = _display(EGL)
            config = _config(EGL, display, surfaceless)
            if not EGL.eglBindAPI(EGL.EGL_OPENGL_API):
                raise BackendUnavailable("EGL cannot bind the desktop OpenGL API")
            attribs = (EGL.EGLint * 7)(
                EGL.EGL_CONTEXT_MAJOR_VERSION,
                GL_VERSION[0],
                EGL.EGL_CONTEXT_MINOR_VERSION,
                GL_VERSION[1],
                EGL_CONTEXT_OPENGL_PROFILE_MASK,
                EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                EGL.EGL_NONE,
            )
            context = EGL.eglCreateContext(display, config, EGL.EGL_NO_CONTEXT, attribs)
            if not context:
                raise BackendUnavailable(f"EGL cannot create an OpenGL {GL_VERSION[0]}.{GL_VERSION[1]} core context")
            surface = EGL.EGL_NO_SURFACE
            if not surfaceless:
                pb = (EGL.EGLint * 5)(EGL.EGL_WIDTH, 1, EGL.EGL_HEIGHT, 1, EGL.EGL_NONE)
                surface = EGL.eglCreatePbufferSurface(display, config, pb)
            if not EGL.eglMakeCurrent(display, surface, surface, context):
                raise BackendUnavailable("EGL cannot make the OpenGL context current")
            return cls(
                display,
                context,
                surface,
                GL.glGetString(GL.GL_RENDERER).decode(),
                GL.glGetString(GL.GL_VERSION).decode(),
                threading.get_ident(),
            )
        except BackendUnavailable:
            raise
        except Exception as err:  # EGL errors surface as PyOpenGL exceptions of several kinds (multi-line text)
            name = getattr(err, "err", None)
            raise BackendUnavailable(f"EGL failed: {type(err).__name__} {name or str(err).splitlines()[0]}") from None

    def make_current(self) -> None:
        """Make this context current on the calling thread (a replay moved to a worker thread); a no-op on the
        thread that made it current last."""
        thread = threading.get_ident()
        if thread != self._thread:
            EGL, _ = _modules()
            EGL.eglMakeCurrent(self.display, self.surface, self.surface, self.context)
            self._thread = thread


def _display(EGL: Any) -> tuple[Any, bool]:
    """(initialized display, True when it is the surfaceless platform)."""
    candidates: list[tuple[Any, bool]] = []
    with contextlib.suppress(Exception):  # no platform extension: the default display below
        from OpenGL.EGL.EXT.platform_base import eglGetPlatformDisplayEXT

        candidates.append(
            (eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL.EGL_DEFAULT_DISPLAY, None), True)
        )
    with contextlib.suppress(Exception):  # EGL_BAD_PARAMETER and the like: no vendor library, no display
        candidates.append((EGL.eglGetDisplay(EGL.EGL_DEFAULT_DISPLAY), False))
    for display, surfaceless in candidates:
        if not display:
            continue
        major, minor = EGL.EGLint(), EGL.EGLint()
        try:
            if EGL.eglInitialize(display, ctypes.pointer(major), ctypes.pointer(minor)):
                return display, surfaceless
        except Exception:  # EGL_NOT_INITIALIZED and friends: try the next display
            continue
    raise BackendUnavailable("EGL has no usable display (install libegl1 and libegl-mesa0)")


def _config(EGL: Any, display: Any, surfaceless: bool) -> Any:
    surface_type = 0 if surfaceless else EGL.EGL_PBUFFER_BIT
    attribs = (EGL.EGLint * 5)(
        EGL.EGL_RENDERABLE_TYPE, EGL.EGL_OPENGL_BIT, EGL.EGL_SURFACE_TYPE, surface_type, EGL.EGL_NONE
    )
    config, count = EGL.EGLConfig(), EGL.EGLint()
    if not EGL.eglChooseConfig(display, attribs, ctypes.pointer(config), 1, ctypes.pointer(count)) or not count.value:
        raise BackendUnavailable("EGL offers no OpenGL config")
    return config


def shared_context() -> GLContext:
    """The calling thread's context (created on its first use there), current on it. One per thread: an EGL
    context is current on at most one thread, so a GL pipeline made on a worker (the debugger GUI's replay
    thread) cannot share the context another thread holds current."""
    context = getattr(_per_thread, "context", None)
    if context is None:
        context = _per_thread.context = GLContext.create()
    else:
        context.make_current()
    return context
