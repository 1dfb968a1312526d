"""Sample: procedural texture (texture unit 3) — a quad with texture coordinates -1..1 shows concentric rings:
RGB function sqrt(U2+V2) (distance from the centre) through an RGB map that rises and falls three times, selecting
colors of a 64-entry table that runs from deep blue to orange (nearest filtering, no noise)."""

from __future__ import annotations

import numpy as np
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from samples._common import SCREEN, VS_TEX, rect, solid

MAP_BITS, MAP_ONE = 12, 4095
WIDTH = 64
RINGS = 3


def map_entries(values: np.ndarray) -> list[int]:
    """128 map-table words: value (bits 0-11, /4095) and the signed 12-bit difference to the next (bits 12-23)."""
    raw = np.round(np.clip(values, 0, 1) * MAP_ONE).astype(np.int64)
    diff = (np.append(raw[1:], raw[-1]) - raw) & ((1 << MAP_BITS) - 1)
    return (raw | diff << MAP_BITS).tolist()


def color_table() -> tuple[list[int], list[int]]:
    """64 RGBA8 colors (r in bits 0-7) from deep blue to orange, and their halved signed differences."""
    t = np.linspace(0, 1, WIDTH)[:, None]
    rgb = np.round((1 - t) * np.array([20, 30, 110]) + t * np.array([255, 160, 30])).astype(np.int64)
    rgba = np.hstack([rgb, np.full((WIDTH, 1), 255)])
    words = rgba[:, 0] | rgba[:, 1] << 8 | rgba[:, 2] << 16 | rgba[:, 3] << 24
    step = (np.vstack([rgba[1:], rgba[-1:]]) - rgba) // 2 & 0xFF
    diffs = step[:, 0] | step[:, 1] << 8 | step[:, 2] << 16 | step[:, 3] << 24
    return words.tolist(), diffs.tolist()


def build() -> pica.Capture:
    b = CaptureBuilder(name="proctex")
    b.begin_frame(clear=(0, 0, 0, 0xFF))
    b.shader(VS_TEX)
    b.uniforms(0, SCREEN)
    b.set("TEXUNIT_CONFIG", unit3_enable=1, unit3_coords="texcoord0", always1=1, clear_cache=1)
    b.set(
        "TEXUNIT3_PROCTEX0",
        u_clamp="clamp to edge",
        v_clamp="clamp to edge",
        rgb_func="sqrt(U2+V2)",
        alpha_func="sqrt(U2+V2)",
        separate_alpha=0,
        noise_enable=0,
    )
    b.set("TEXUNIT3_PROCTEX4", filter="nearest", min_lod=0, max_lod=0, width=WIDTH)
    b.set("TEXUNIT3_PROCTEX5", offset0=0)
    x = np.linspace(0, 1, 128)
    b.lut("proctex", map_entries(0.5 - 0.5 * np.cos(2 * np.pi * RINGS * x)), table=2)
    colors, diffs = color_table()
    b.lut("proctex", colors, table=4)
    b.lut("proctex", diffs, table=5)
    b.tev(0, rgb=("texture 3",), alpha=("constant",), alpha_combine="replace", color=(0, 0, 0, 255))
    b.passthrough_tev()
    uv = np.array([[-1, -1], [1, -1], [1, 1], [-1, -1], [1, 1], [-1, 1]], np.float32)
    b.vertices([rect(80, 0, 320, 240), uv, solid(6, (1, 1, 1, 1))])
    b.draw(6)
    b.end_frame()
    return b.capture()
