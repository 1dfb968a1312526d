"""Game-scale samples: frames of hundreds to thousands of draws with the state changes real games make between
them, each with a *merged* twin that submits the very same triangles in one draw (``bench/bench_frame.py``
compares the two; ``tests/test_draw_state.py`` checks that both give the same picture).

- ``cubes(n)``: n textured cubes, each drawn by its own indexed draw after a model-matrix upload (4 float
  uniforms); the texture unit is rebound every 4 draws (8 textures with the same texels at 8 addresses), the TEV
  switches every 10 draws between two equivalent combiners (texture x primary, primary x texture), blending is
  toggled every 7 draws between (src alpha, one minus src alpha) and (one, zero) — equivalent for opaque texels;
  depth test on. Matrices are dyadic (powers of two and multiples of 1/64) so that the merged twin, whose vertices
  are transformed on the CPU, computes bit-identical positions.
- ``cubes(n, objects=True)``: the same cubes drawn as a citro3d game draws objects: each from its own vertex
  buffer (the attribute layout written again, ``ATTRIBBUFFER0_OFFSET`` pointing at the object's buffer) with
  texture unit 0 written whole before each draw (``C3D_TexBind``: size, filters, address, format, cache clear)
  and a material color per object (TEV stage 1 modulates by its constant color, white with an alpha of its own
  that no combiner reads, so the picture stays the merged twin's).
- ``cubes(n, objects=True, texture=128)``: those objects with 128 x 128 RGBA8 textures (64 KiB each) that every
  draw minifies (a face of 15 pixels or so): the level cache's first decodes and its checks of large levels.
- ``lit(n)``: n small spheres lit by 4 directional lights, in fog; one modelview upload per draw (dyadic
  translations of dyadic positions, so the merged twin's CPU translation rounds as the shader's does).
- ``rich(n)``: a voxel game's ground: n triangle strips (4 quads each) receding in perspective, sampling one
  mipmapped ETC1 atlas (128x128, 5 levels, linear min / mip filters: every fragment takes its own LOD) bound at two
  addresses (rebound every 8 draws), a draw per strip from its own first vertex; ``fog=True`` adds fog. The
  merged twin draws the same triangles as one triangle list in the order and vertex order the strips assemble.
- ``sprites(n)``: citro2d-style 2D sprites: n alpha-blended quads from one vertex buffer, a draw per sprite from
  its own first vertex that rebinds the sprite's texture (4 addresses, same texels).

``python -m samples.game_scene`` generates the captures listed in ``SCENES`` and their pictures like
``python -m samples.generate`` (into the untracked ``samples/out/``; ``--update`` for the tracked copies).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from picaemu.formats import pica

from picaemu.builder import TEXUNIT_ADDR, CaptureBuilder, tilt_perspective
from picaemu.color.lighting_luts import encode_entries
from samples._common import SCREEN, VS_TEX
from samples.cube import cube
from samples.lit_sphere import VS_LIT, sphere

TEXTURES = 8
# landscape pixels, origin bottom-left, z in [-1, 1] (larger in front); modelview in c4-c7
VS_MODEL = """
.fvec projection[4]
.fvec model[4]
.out outpos position
.out outtc texcoord0
.out outclr color
.alias inpos v0
.alias intc v1
.alias inclr v2
.proc main
    dp4 r0.x, model[0], inpos
    dp4 r0.y, model[1], inpos
    dp4 r0.z, model[2], inpos
    dp4 r0.w, model[3], inpos
    dp4 outpos.x, projection[0], r0
    dp4 outpos.y, projection[1], r0
    dp4 outpos.z, projection[2], r0
    dp4 outpos.w, projection[3], r0
    mov outtc, intc
    mov outclr, inclr
    end
.end
"""


def _checker(size: int = 16, alpha: int = 255) -> np.ndarray:
    """(size, size, 4) uint8 checkerboard."""
    y, x = np.mgrid[0:size, 0:size]
    on = ((x // 4 + y // 4) % 2).astype(bool)
    img = np.empty((size, size, 4), np.uint8)
    img[on] = (240, 200, 80, alpha)
    img[~on] = (60, 90, 200, 255)
    return img


def _grid(n: int) -> tuple[int, int]:
    """(cell size in pixels, a power of two; columns) of a grid that holds n cells on the 400x240 screen."""
    cell = 2 ** int(np.floor(np.log2(np.sqrt(400 * 240 / n))))
    while (400 // cell) * (240 // cell) < n:
        cell //= 2
    return cell, 400 // cell


def _cube_model(i: int, n: int) -> np.ndarray:
    """4x4 dyadic model matrix of cube i of n: a cube of 3/4 cell on the grid, sheared so three faces show."""
    cell, cols = _grid(n)
    s = cell * 5 / 16  # half size of the cube's front face
    m = np.zeros((4, 4), np.float32)
    m[0, 0] = m[1, 1] = s
    m[0, 2], m[1, 2] = s / 2, s / 2  # oblique: +Z faces up and to the right
    m[2, 2] = 1 / 64
    m[0, 3] = cell * (i % cols) + cell / 2 - s / 4
    m[1, 3] = cell * (i // cols) + cell / 2 - s / 4 + (240 - cell * -(-n // cols)) // 2
    m[2, 3] = (i % 32) / 64 - 0.25
    m[3, 3] = 1
    return m


def _cube_mesh() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cube's 36 triangle-list vertices: positions, texture coordinates, colors (lightened face colors)."""
    pos, col, idx = cube()
    uv = np.tile(np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32), (6, 1))
    col = (0.5 + col / 2).astype(np.float32)
    return pos[idx], uv[idx], col[idx]


def cubes(
    n: int = 1000, *, merged: bool = False, frames: int = 1, objects: bool = False, texture: int = 16
) -> pica.Capture:
    """``n`` textured cubes, a draw each, or the same triangles in one draw (module docstring); ``frames``
    repeats the frame (a long capture for streaming renders); ``objects``: as citro3d draws objects (module
    docstring); ``texture``: the textures' side in texels."""
    b = CaptureBuilder(name=f"{n} {'objects' if objects else 'cubes'}{' merged' if merged else ''}")
    for _ in range(frames):
        _cubes_frame(b, n, merged, objects, texture)
    return b.capture()


def _bind_whole(b: CaptureBuilder, address: int, size: int) -> None:
    """Texture unit 0 written whole (a ``size`` x ``size`` RGBA8 texture), as citro3d's ``C3D_TexBind`` leaves it to
    the next draw."""
    b.set("TEXUNIT0_DIM", width=size, height=size)
    clamp = "clamp to edge"
    b.set("TEXUNIT0_PARAM", mag_filter="nearest", min_filter="nearest", wrap_s=clamp, wrap_t=clamp, type="2D")
    b.set(TEXUNIT_ADDR[0], address=address)
    b.set("TEXUNIT0_TYPE", format="RGBA8")
    b.set("TEXUNIT_CONFIG", unit0_enable=1, always1=1, clear_cache=1)


def _cubes_frame(b: CaptureBuilder, n: int, merged: bool, objects: bool, texture: int) -> None:
    b.begin_frame(clear=(20, 20, 28, 255), depth=0)
    b.shader(VS_MODEL)
    b.uniforms(0, SCREEN)
    b.depth_test(True, "greater")
    addresses = [b.texture(0, _checker(texture), "RGBA8") for _ in range(TEXTURES)]
    b.tev(0, rgb=("texture 0", "primary color"), combine="modulate")
    b.passthrough_tev()
    if objects and not merged:  # a material color per object: white, so that the picture is the merged twin's
        b.tev(1, rgb=("previous", "constant"), alpha=("previous",), combine="modulate", alpha_combine="replace")
    pos, uv, col = _cube_mesh()
    if merged:
        world = np.concatenate([pos @ _cube_model(i, n).T for i in range(n)]).astype(np.float32)
        b.uniforms(4, np.eye(4, dtype=np.float32))
        b.vertices([world, np.tile(uv, (n, 1)), np.tile(col, (n, 1))])
        b.draw(len(world))
        b.end_frame()
        return
    if not objects:
        b.vertices([pos, uv, col])
    for i in range(n):
        if objects:  # a vertex buffer and a texture per object, the layout and the whole unit written again
            b.vertices([pos, uv, col])
            _bind_whole(b, addresses[i % TEXTURES], texture)
            b.set("TEXENV1_COLOR", r=255, g=255, b=255, a=i % 256)  # its alpha is not read: only the value moves
        elif i % 4 == 0:
            b.set(TEXUNIT_ADDR[0], address=addresses[(i // 4) % TEXTURES])
        if i % 10 == 0:
            b.tev(
                0, rgb=("primary color", "texture 0") if i % 20 else ("texture 0", "primary color"), combine="modulate"
            )
        if i % 7 == 0:
            if i % 14:
                b.blend("one", "zero")
            else:
                b.blend()
        b.uniforms(4, _cube_model(i, n))
        b.draw(len(pos))
    b.end_frame()


def _lights(b: CaptureBuilder) -> None:
    """Four directional lights (red, green, blue, white specular through D0) and a dim ambient."""
    b.set("LIGHTING_ENABLE0", enable=1)
    b.set("LIGHTING_ENABLE1", disable=0)
    b.set("LIGHTING_NUM_LIGHTS", count_minus_1=3)
    b.set("LIGHTING_LIGHT_PERMUTATION", slot0=0, slot1=1, slot2=2, slot3=3)
    b.set("LIGHTING_AMBIENT", r=16, g=16, b=24)
    colors = ((200, 40, 40), (40, 200, 40), (40, 40, 200), (90, 90, 90))
    directions = ((-0.6, 0.5, 0.62), (0.6, 0.5, 0.62), (0.0, -0.7, 0.71), (0.0, 0.0, 1.0))
    for k, (rgb, d) in enumerate(zip(colors, directions, strict=True)):
        d = np.array(d) / np.linalg.norm(d)
        b.set(f"LIGHT{k}_DIFFUSE", r=rgb[0], g=rgb[1], b=rgb[2])
        b.set(f"LIGHT{k}_AMBIENT", r=0, g=0, b=0)
        b.set(f"LIGHT{k}_SPECULAR0", r=255 if k == 3 else 0, g=255 if k == 3 else 0, b=255 if k == 3 else 0)
        b.set(f"LIGHT{k}_SPECULAR1", r=0, g=0, b=0)
        b.set(f"LIGHT{k}_XY", x=float(d[0]), y=float(d[1]))
        b.set(f"LIGHT{k}_Z", z=float(d[2]))
        b.set(f"LIGHT{k}_CONFIG", type="directional")
    b.set("LIGHTING_CONFIG0", config="config0 (D0 RR SP DA)", fresnel="none")
    disabled = {f"spot_disable{i}": 1 for i in range(8)} | {f"dist_atten_disable{i}": 1 for i in range(8)}
    b.set("LIGHTING_CONFIG1", d1_disable=1, fr_disable=1, rb_disable=1, rg_disable=1, rr_disable=1, **disabled)
    b.set("LIGHTING_LUTINPUT_SELECT", d0_input="N.H")
    b.set("LIGHTING_LUTINPUT_SCALE", d0_scale="x1")
    b.lut("lighting", encode_entries((np.arange(256) / 256) ** 16).tolist(), table=0)


def lit(n: int = 300, *, merged: bool = False) -> pica.Capture:
    """``n`` small spheres lit by 4 lights, in fog; a modelview upload per draw (module docstring)."""
    b = CaptureBuilder(name=f"{n} lit spheres{' merged' if merged else ''}")
    b.begin_frame(clear=(40, 40, 56, 255), depth=0)
    b.shader(VS_LIT)
    b.uniforms(0, tilt_perspective(np.radians(50), 400 / 240, 1.0, 16.0))
    b.depth_test(True, "greater")
    _lights(b)
    b.tev(
        0,
        rgb=("fragment primary color", "fragment secondary color"),
        alpha=("constant",),
        combine="add",
        alpha_combine="replace",
        color=(0, 0, 0, 255),
    )
    b.passthrough_tev()
    b.fog((40, 40, 56), np.clip(np.linspace(0.0, 1.0, 129) * 8 - 0.2, 0, 1))  # far spheres fade into the fog
    pos, quat, idx = sphere(stacks=6, slices=8)
    pos = np.round(pos * 256) / 256 * (5 / 32)  # dyadic: translations on the shader and on the CPU round alike
    pos[:, 3] = 1
    pos, quat = pos[idx].astype(np.float32), quat[idx]
    cols = int(np.ceil(np.sqrt(n * 5 / 3)))
    rows = -(-n // cols)
    offsets = [
        np.array([(i % cols - cols // 2) * 0.375, (i // cols - rows // 2) * 0.375, -6 - (i % 16) / 4, 0], np.float32)
        for i in range(n)
    ]
    if merged:
        b.uniforms(4, np.eye(4, dtype=np.float32))
        b.vertices([np.concatenate([pos + o for o in offsets]), np.tile(quat, (n, 1))])
        b.draw(len(pos) * n)
    else:
        b.vertices([pos, quat])
        for o in offsets:
            mv = np.eye(4, dtype=np.float32)
            mv[:3, 3] = o[:3]
            b.uniforms(4, mv)
            b.draw(len(pos))
    b.end_frame()
    return b.capture()


def sprites(n: int = 1000, *, merged: bool = False) -> pica.Capture:
    """``n`` alpha-blended 2D sprites as citro2d submits them: one vertex buffer of quads, a draw per sprite from
    its own first vertex, the texture rebound for every sprite (4 addresses, same texels)."""
    b = CaptureBuilder(name=f"{n} sprites{' merged' if merged else ''}")
    b.begin_frame(clear=(10, 30, 20, 255))
    b.shader(VS_TEX)
    b.uniforms(0, SCREEN)
    b.blend()
    addresses = [b.texture(0, _checker(alpha=160), "RGBA8") for _ in range(4)]
    b.tev(
        0,
        rgb=("texture 0", "primary color"),
        alpha=("texture 0", "primary color"),
        combine="modulate",
        alpha_combine="modulate",
    )
    b.passthrough_tev()
    rng = np.random.default_rng(7)
    corners = np.array([[0, 0], [1, 0], [1, 1], [0, 0], [1, 1], [0, 1]], np.float32)
    xy = rng.integers(0, 384, n), rng.integers(0, 224, n)
    size = rng.integers(8, 24, n)
    pos = np.zeros((6 * n, 4), np.float32)
    pos[:, 0] = np.repeat(xy[0], 6) + np.tile(corners[:, 0], n) * np.repeat(size, 6)
    pos[:, 1] = np.repeat(xy[1], 6) + np.tile(corners[:, 1], n) * np.repeat(size, 6)
    pos[:, 3] = 1
    tint = np.repeat(rng.uniform(0.5, 1.0, (n, 4)).astype(np.float32), 6, axis=0)
    b.vertices([pos, np.tile(corners, (n, 1)), tint])
    if merged:
        b.draw(6 * n)
    else:
        for i in range(n):
            b.set(TEXUNIT_ADDR[0], address=addresses[i % 4])
            b.draw(6, first=6 * i)
    b.end_frame()
    return b.capture()


ATLAS_SIZE, ATLAS_LEVELS, ATLAS_TILES = 128, 5, 4  # 128..8 texels, 4x4 tiles
STRIP_QUADS = 4


def etc1_atlas(seed: int = 3) -> bytes:
    """Every level of a 128x128 ETC1 atlas of 4x4 tiles (grass, dirt, stone, ... colors, noisy pixels): blocks in
    individual mode, both sub-blocks the tile's color, random modifier tables and pixel indices. A coarser level
    keeps each tile's color, so the mips look like the base level."""
    rng = np.random.default_rng(seed)
    palette = rng.integers(2, 14, (ATLAS_TILES, ATLAS_TILES, 3))  # 4-bit colors of each tile
    out = []
    for level in range(ATLAS_LEVELS):
        size = ATLAS_SIZE >> level
        blocks = (size // 4) ** 2
        b = np.arange(blocks)
        tile, sub = b >> 2, b & 3  # the decode's block order: 8x8 tiles row-major, four 4x4 blocks in Z order
        by = (tile // (size // 8)) * 2 + (sub >> 1)
        bx = (tile % (size // 8)) * 2 + (sub & 1)
        across = size // 4  # blocks per row
        color = palette[by * ATLAS_TILES // across, bx * ATLAS_TILES // across].astype(np.uint64)
        word = np.zeros(blocks, np.uint64)
        for c, shift in enumerate((60, 52, 44)):  # R1 G1 B1, and the same for sub-block 2 (shift - 4)
            word |= color[:, c] << np.uint64(shift) | color[:, c] << np.uint64(shift - 4)
        word |= rng.integers(0, 4, blocks).astype(np.uint64) << np.uint64(37)  # table of sub-block 1
        word |= rng.integers(0, 4, blocks).astype(np.uint64) << np.uint64(34)
        word |= rng.integers(0, 1 << 32, blocks, dtype=np.uint64)  # pixel index bits
        out.append(word.astype("<u8").tobytes())
    return b"".join(out)


def _strip_ground(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(positions (n * V, 4), texcoords (n * V, 2)) of n strips of ``STRIP_QUADS`` quads on a ground plane in eye
    space (y = -1, z from -1 into the distance), V = 2 * (quads + 1) vertices each; dyadic values."""
    cols = 20
    pos, uv = [], []
    for i in range(n):
        r, c = divmod(i, cols)
        z0, z1 = -1 - r * 0.75, -1 - (r + 1) * 0.75
        x = (c - cols / 2) * STRIP_QUADS * 0.5 + np.arange(STRIP_QUADS + 1) * 0.5
        v0 = (r % ATLAS_TILES) / ATLAS_TILES
        strip = np.zeros((2 * (STRIP_QUADS + 1), 4), np.float32)
        strip[0::2, 0], strip[1::2, 0] = x, x
        strip[:, 1] = -1
        strip[0::2, 2], strip[1::2, 2] = z0, z1
        strip[:, 3] = 1
        tc = np.zeros((len(strip), 2), np.float32)
        tc[0::2, 0] = tc[1::2, 0] = np.arange(STRIP_QUADS + 1) / STRIP_QUADS
        tc[0::2, 1], tc[1::2, 1] = v0, v0 + 1 / ATLAS_TILES
        pos.append(strip)
        uv.append(tc)
    return np.concatenate(pos), np.concatenate(uv)


def _strip_as_list(count: int) -> np.ndarray:
    """Vertex indices of one strip's triangles as the assembler emits them (odd triangles swap their first two)."""
    tris = [(i + 1, i, i + 2) if i % 2 else (i, i + 1, i + 2) for i in range(count - 2)]
    return np.array(tris, np.int64).ravel()


def rich(n: int = 1000, *, merged: bool = False, fog: bool = False, strips: bool = True) -> pica.Capture:
    """``n`` strips of ground sampling a mipmapped ETC1 atlas in perspective (module docstring); ``strips=False``
    draws each strip's triangles as a triangle list instead (the same triangles, draw for draw)."""
    b = CaptureBuilder(name=f"{n} rich strips{' fog' if fog else ''}{' merged' if merged else ''}")
    b.begin_frame(clear=(120, 160, 220, 255), depth=0)
    b.shader(VS_MODEL)
    b.uniforms(0, tilt_perspective(np.radians(60), 400 / 240, 1.0, 64.0))
    b.uniforms(4, np.eye(4, dtype=np.float32))
    b.depth_test(True, "greater")
    atlas = etc1_atlas()
    addresses = [b.upload(atlas, vram=True) for _ in range(2)]
    b.set("TEXUNIT0_DIM", width=ATLAS_SIZE, height=ATLAS_SIZE)
    b.set("TEXUNIT0_TYPE", format="ETC1")
    b.set(
        "TEXUNIT0_PARAM",
        mag_filter="nearest",
        min_filter="linear",
        mip_filter="linear",
        wrap_s="repeat",
        wrap_t="repeat",
        type="2D",
    )
    b.set("TEXUNIT0_LOD", bias=0.0, min_level=0, max_level=ATLAS_LEVELS - 1)
    b.set("TEXUNIT_CONFIG", unit0_enable=1, always1=1, clear_cache=1)
    b.tev(0, rgb=("texture 0", "primary color"), combine="modulate")
    b.passthrough_tev()
    if fog:
        b.fog((120, 160, 220), np.clip(np.linspace(0.0, 1.0, 129) * 1.5 - 0.2, 0, 1))
    pos, uv = _strip_ground(n)
    per = 2 * (STRIP_QUADS + 1)
    shade = np.tile(np.linspace(0.75, 1.0, per, dtype=np.float32)[:, None], (n, 4))
    as_list = np.concatenate([_strip_as_list(per) + per * i for i in range(n)])
    if merged:
        b.set("TEXUNIT0_ADDR1", address=addresses[0])
        b.vertices([pos[as_list], uv[as_list], shade[as_list]])
        b.draw(len(as_list))
    else:
        if not strips:
            pos, uv, shade, per = pos[as_list], uv[as_list], shade[as_list], 3 * (per - 2)
        b.vertices([pos, uv, shade])
        for i in range(n):
            if i % 8 == 0:
                b.set("TEXUNIT0_ADDR1", address=addresses[(i // 8) % 2])
            b.draw(per, "triangle strip" if strips else "triangle list", first=per * i)
    b.end_frame()
    return b.capture()


SCENES: dict[str, Callable[..., pica.Capture]] = {
    "game_cubes_300": lambda merged=False: cubes(300, merged=merged),
    "game_cubes_1000": lambda merged=False: cubes(1000, merged=merged),
    "game_cubes_3000": lambda merged=False: cubes(3000, merged=merged),
    "game_objects_300": lambda merged=False: cubes(300, merged=merged, objects=True),
    "game_textured_300": lambda merged=False: cubes(300, merged=merged, objects=True, texture=128),
    "game_lit_300": lambda merged=False: lit(300, merged=merged),
    "game_sprites_1000": lambda merged=False: sprites(1000, merged=merged),
    "game_rich_1000": lambda merged=False: rich(1000, merged=merged),
}


def main() -> None:
    import sys

    from samples.generate import main as generate

    generate([*sys.argv[1:], *SCENES])


if __name__ == "__main__":
    main()
