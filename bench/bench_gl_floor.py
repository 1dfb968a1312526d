"""The floor of any OpenGL backend driven from Python on this machine: a bare PyOpenGL program, no picaemu
work at all, that issues a game frame's draws the way a PICA translation must — per draw a texture bind and a
4x4 uniform upload, then ``glDrawArrays`` of one 36-vertex cube — into a 400x240 RGBA8 framebuffer object, and
reads the frame back once (``glReadPixels``).

It bounds issue #19's speed target from below: a picaemu GL frame also pays the draw's vertex work and state
translation, so a GL frame can never be faster than this floor. Beside it, the software path's whole frame of the
same scene (``bench_frame.frame_s``: the compiled draw loop), measured in the same run.

Time = best of ``--runs`` frames after one warm-up frame. Run from the repository root:
``python bench/bench_gl_floor.py [--draws 1000] [--runs 5]``.
"""

from __future__ import annotations

import argparse
import ctypes
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_frame import frame_s  # noqa: E402  (bench/ is the script's directory)

from samples.game_scene import SCENES  # noqa: E402

VERTEX = """#version 450 core
layout(location = 0) in vec4 position;
layout(location = 1) in vec2 uv;
uniform mat4 model;
out vec2 tc;
void main() { gl_Position = model * position; tc = uv; }
"""
FRAGMENT = """#version 450 core
in vec2 tc;
uniform sampler2D tex;
out vec4 color;
void main() { color = texture(tex, tc); }
"""


def _program(gl) -> int:  # type: ignore[no-untyped-def]
    from OpenGL.GL import shaders

    return shaders.compileProgram(
        shaders.compileShader(VERTEX, gl.GL_VERTEX_SHADER), shaders.compileShader(FRAGMENT, gl.GL_FRAGMENT_SHADER)
    )


def gl_floor_s(draws: int, runs: int) -> float:
    """Best wall seconds of one frame of ``draws`` textured cube draws through bare PyOpenGL calls."""
    from picaemu.gl.context import shared_context  # first: it selects PyOpenGL's EGL platform

    shared_context()
    from OpenGL import GL as gl

    fbo, color, depth = gl.glGenFramebuffers(1), gl.glGenTextures(1), gl.glGenRenderbuffers(1)
    gl.glBindTexture(gl.GL_TEXTURE_2D, color)
    gl.glTexImage2D(gl.GL_TEXTURE_2D, 0, gl.GL_RGBA8, 400, 240, 0, gl.GL_RGBA, gl.GL_UNSIGNED_BYTE, None)
    gl.glBindRenderbuffer(gl.GL_RENDERBUFFER, depth)
    gl.glRenderbufferStorage(gl.GL_RENDERBUFFER, gl.GL_DEPTH24_STENCIL8, 400, 240)
    gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, fbo)
    gl.glFramebufferTexture2D(gl.GL_FRAMEBUFFER, gl.GL_COLOR_ATTACHMENT0, gl.GL_TEXTURE_2D, color, 0)
    gl.glFramebufferRenderbuffer(gl.GL_FRAMEBUFFER, gl.GL_DEPTH_STENCIL_ATTACHMENT, gl.GL_RENDERBUFFER, depth)
    gl.glViewport(0, 0, 400, 240)
    gl.glEnable(gl.GL_DEPTH_TEST)
    program = _program(gl)
    gl.glUseProgram(program)
    model = gl.glGetUniformLocation(program, "model")
    rng = np.random.default_rng(1)
    verts = np.concatenate([rng.uniform(-1, 1, (36, 4)), rng.uniform(0, 1, (36, 2))], axis=1).astype(np.float32)
    verts[:, 3] = 1
    vao, vbo = gl.glGenVertexArrays(1), gl.glGenBuffers(1)
    gl.glBindVertexArray(vao)
    gl.glBindBuffer(gl.GL_ARRAY_BUFFER, vbo)
    gl.glBufferData(gl.GL_ARRAY_BUFFER, verts.nbytes, verts, gl.GL_STATIC_DRAW)
    gl.glVertexAttribPointer(0, 4, gl.GL_FLOAT, False, 24, ctypes.c_void_p(0))
    gl.glVertexAttribPointer(1, 2, gl.GL_FLOAT, False, 24, ctypes.c_void_p(16))
    gl.glEnableVertexAttribArray(0)
    gl.glEnableVertexAttribArray(1)
    textures = gl.glGenTextures(8)
    for t in textures:
        gl.glBindTexture(gl.GL_TEXTURE_2D, t)
        gl.glTexImage2D(
            gl.GL_TEXTURE_2D,
            0,
            gl.GL_RGBA8,
            16,
            16,
            0,
            gl.GL_RGBA,
            gl.GL_UNSIGNED_BYTE,
            rng.integers(0, 256, (16, 16, 4), np.uint8),
        )
        gl.glTexParameteri(gl.GL_TEXTURE_2D, gl.GL_TEXTURE_MIN_FILTER, gl.GL_NEAREST)
    matrices = [(np.eye(4, dtype=np.float32) * 0.1 + np.diag([0, 0, 0, 0.9])).astype(np.float32) for _ in range(draws)]
    best = float("inf")
    for _ in range(runs + 1):
        start = time.perf_counter()
        gl.glClear(gl.GL_COLOR_BUFFER_BIT | gl.GL_DEPTH_BUFFER_BIT)
        for i in range(draws):
            gl.glBindTexture(gl.GL_TEXTURE_2D, textures[i // 4 % 8])
            gl.glUniformMatrix4fv(model, 1, False, matrices[i])
            gl.glDrawArrays(gl.GL_TRIANGLES, 0, 36)
        gl.glReadPixels(0, 0, 400, 240, gl.GL_RGBA, gl.GL_UNSIGNED_BYTE)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    floor = gl_floor_s(args.draws, args.runs)
    software, draws, _ = frame_s(SCENES["game_cubes_1000"](), args.runs)
    print("| what | frame ms | per draw |")
    print("|---|---|---|")
    print(
        f"| bare PyOpenGL on llvmpipe, {args.draws} textured draws | {floor * 1e3:.1f} | "
        f"{floor / args.draws * 1e6:.1f} us |"
    )
    print(
        f"| picaemu software path, game_cubes_1000 ({draws} draws) | {software * 1e3:.1f} | "
        f"{software / draws * 1e6:.1f} us |"
    )
    print(f"| software / floor | x{software / floor:.2f} | (issue #19 asks GL to be x5 faster) |")


if __name__ == "__main__":
    main()
