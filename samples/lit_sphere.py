"""Sample: a fragment-lit sphere — an indexed UV sphere whose vertex shader outputs the normal quaternion and the
view vector; one directional light (diffuse red, white specular through a D0 = (N.H)^24 lookup table) plus
global ambient, combined by TEV stage 0 as fragment primary + fragment secondary color."""

from __future__ import annotations

import numpy as np
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder, tilt_perspective
from picaemu.color.lighting_luts import encode_entries

VS_LIT = """
.fvec projection[4]
.fvec modelview[4]
.out outpos position
.out outq normalquat
.out outview view
.alias inpos v0
.alias inq v1
.proc main
    dp4 r0.x, modelview[0], inpos
    dp4 r0.y, modelview[1], inpos
    dp4 r0.z, modelview[2], inpos
    dp4 r0.w, modelview[3], inpos
    dp4 outpos.x, projection[0], r0
    dp4 outpos.y, projection[1], r0
    dp4 outpos.z, projection[2], r0
    dp4 outpos.w, projection[3], r0
    mov outq, inq
    mov outview, -r0
    end
.end
"""
SHININESS = 24
LIGHT_DIRECTION = np.array([-0.55, 0.5, 0.67])  # toward the light, eye space


def sphere(stacks: int = 24, slices: int = 32) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions (N, 4), normal quaternions (N, 4) x y z w rotating +Z onto the normal, u16 indices."""
    theta = np.linspace(0, np.pi, stacks + 1)[:, None]
    phi = np.linspace(0, 2 * np.pi, slices + 1)[None, :]
    n = np.stack([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta) * np.ones_like(phi)], -1)
    n = n.reshape(-1, 3)
    pos = np.hstack([n, np.ones((len(n), 1))]).astype(np.float32)
    quat = np.stack([-n[:, 1], n[:, 0], np.zeros(len(n)), 1 + n[:, 2]], 1)
    degenerate = quat[:, 3] < 1e-6  # normal = -Z: a half turn about X
    quat[degenerate] = (1, 0, 0, 0)
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    idx = []
    for i in range(stacks):
        for j in range(slices):
            a, b = i * (slices + 1) + j, (i + 1) * (slices + 1) + j
            idx += [a, b, a + 1, a + 1, b, b + 1]
    return pos, quat.astype(np.float32), np.array(idx, np.uint16)


def setup_lighting(b: CaptureBuilder) -> None:
    light = LIGHT_DIRECTION / np.linalg.norm(LIGHT_DIRECTION)
    b.set("LIGHTING_ENABLE0", enable=1)
    b.set("LIGHTING_ENABLE1", disable=0)
    b.set("LIGHTING_NUM_LIGHTS", count_minus_1=0)
    b.set("LIGHTING_LIGHT_PERMUTATION", slot0=0)
    b.set("LIGHTING_AMBIENT", r=24, g=24, b=36)
    b.set("LIGHT0_DIFFUSE", r=210, g=50, b=40)
    b.set("LIGHT0_AMBIENT", r=0, g=0, b=0)
    b.set("LIGHT0_SPECULAR0", r=255, g=255, b=255)
    b.set("LIGHT0_SPECULAR1", r=0, g=0, b=0)
    b.set("LIGHT0_XY", x=float(light[0]), y=float(light[1]))
    b.set("LIGHT0_Z", z=float(light[2]))
    b.set("LIGHT0_CONFIG", type="directional")
    b.set("LIGHTING_CONFIG0", config="config0 (D0 RR SP DA)", fresnel="none")
    disabled = {f"spot_disable{i}": 1 for i in range(8)} | {f"dist_atten_disable{i}": 1 for i in range(8)}
    b.set("LIGHTING_CONFIG1", d1_disable=1, fr_disable=1, rb_disable=1, rg_disable=1, rr_disable=1, **disabled)
    b.set("LIGHTING_LUTINPUT_SELECT", d0_input="N.H")
    b.set("LIGHTING_LUTINPUT_SCALE", d0_scale="x1")
    b.lut("lighting", encode_entries((np.arange(256) / 256) ** SHININESS).tolist(), table=0)


def build() -> pica.Capture:
    b = CaptureBuilder(name="lit sphere")
    b.begin_frame(clear=(0x10, 0x10, 0x18, 0xFF))
    b.shader(VS_LIT)
    view = np.eye(4, dtype=np.float32)
    view[2, 3] = -3.2
    b.uniforms(0, tilt_perspective(np.radians(45), 400 / 240, 1.0, 10.0))
    b.uniforms(4, view)
    b.cull("cull clockwise (keep counter-clockwise)")
    setup_lighting(b)
    b.tev(
        0,
        rgb=("fragment primary color", "fragment secondary color"),
        alpha=("constant",),
        combine="add",
        alpha_combine="replace",
        color=(0, 0, 0, 255),
    )
    b.passthrough_tev()
    pos, quat, idx = sphere()
    b.vertices([pos, quat])
    b.draw_indexed(idx)
    b.end_frame()
    return b.capture()
