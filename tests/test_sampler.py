"""Texture units 0-2: wrap modes, nearest/linear filters, mip selection, cube maps, shadow and projection types.

Test textures are built so that a texel's color names its position: R = 8 * column, G = 8 * row counted from the
bottom (t). Expected values are worked out from pica-pipeline.md §10 by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from picaemu.errors import UnsupportedFeature
from picaemu.memory import PhysicalMemory
from picaemu.regs import access, id_of
from picaemu.texture import InvalidTextureSize, encode_texture
from picaemu.texture.lod import compute_lod
from picaemu.texture.sampler import sample
from picaemu.texture.state import TextureUnitState

BASE = 0x18000000
BORDER = (200, 100, 0, 255)


def _gradient(size: int = 8) -> np.ndarray:
    img = np.zeros((size, size, 4), np.uint8)
    cols = np.arange(size)
    img[..., 0] = 8 * cols[None, :]
    img[..., 1] = 8 * (size - 1 - cols)[:, None]  # memory row y holds t = size - 1 - y
    img[..., 3] = 255
    return img


def _solid(rgba, size: int = 8) -> np.ndarray:
    return np.broadcast_to(np.array(rgba, np.uint8), (size, size, 4)).copy()


def _unit(
    mem: PhysicalMemory | None = None,
    *,
    size=8,
    wrap=(0, 0),
    mag=0,
    minf=0,
    mip=0,
    lod=(0, 0, 0),
    ttype=0,
    enable=1,
    shadow=(0, 0),
    faces=None,
    unit=0,
    image=None,
) -> tuple[TextureUnitState, PhysicalMemory]:
    mem = mem or PhysicalMemory()
    if image is not None:
        mem.write(BASE, image)
    regs = np.zeros(0x300, np.uint32)
    p = f"TEXUNIT{unit}"
    regs[id_of("TEXUNIT_CONFIG")] = access.compose("TEXUNIT_CONFIG", **{f"unit{unit}_enable": enable})
    regs[id_of(f"{p}_DIM")] = access.compose(f"{p}_DIM", width=size, height=size)
    param = {"wrap_s": wrap[0], "wrap_t": wrap[1], "mag_filter": mag, "min_filter": minf, "mip_filter": mip}
    if unit == 0:
        param["type"] = ttype
    regs[id_of(f"{p}_PARAM")] = access.compose(f"{p}_PARAM", **param)
    regs[id_of(f"{p}_LOD")] = access.compose(f"{p}_LOD", bias=int(lod[0] * 256), min_level=lod[1], max_level=lod[2])
    regs[id_of(f"{p}_BORDER_COLOR")] = access.compose(f"{p}_BORDER_COLOR", **dict(zip("rgba", BORDER, strict=True)))
    addr_reg = "TEXUNIT0_ADDR1" if unit == 0 else f"{p}_ADDR"
    regs[id_of(addr_reg)] = BASE >> 3
    if faces is not None:
        for i, addr in enumerate(faces[1:]):
            regs[id_of(f"TEXUNIT0_ADDR{i + 2}")] = (addr >> 3) & 0x3FFFFF
    regs[id_of("TEXUNIT0_SHADOW")] = access.compose("TEXUNIT0_SHADOW", orthographic=shadow[0], bias=shadow[1] >> 1)
    return TextureUnitState.from_regs(regs, unit), mem


def _at(ustate, mem, u, v, w=None, lod=None) -> list:
    uv = np.array([[u, v]], np.float32)
    w = np.ones(1, np.float32) if w is None else np.array([w], np.float32)
    return sample(ustate, uv, w, mem, None if lod is None else np.array([lod], np.float32))[0].tolist()


def test_nearest_texel_centers_and_bottom_up_rows() -> None:
    ustate, mem = _unit(image=encode_texture(_gradient(), "RGBA8"))
    for x, t in [(0, 0), (3, 5), (7, 7), (6, 1)]:
        assert _at(ustate, mem, (x + 0.5) / 8, (t + 0.5) / 8) == [8 * x, 8 * t, 0, 255]
    assert _at(ustate, mem, 0.0, 0.01)[1] == 0  # v near 0: bottom row


@pytest.mark.parametrize(
    ("mode", "k", "column"),
    [
        (0, -3, 0),
        (0, 11, 7),  # clamp to edge
        (2, 10, 2),
        (2, -1, 7),
        (2, -9, 7),  # repeat
        (3, 8, 7),
        (3, 9, 6),
        (3, -1, 0),
        (3, -2, 1),
        (3, 17, 1),  # mirrored repeat
        (4, -1, 7),
        (4, 9, 7),
        (5, -1, 7),
        (6, 9, 1),
        (7, -2, 6),
    ],
)
def test_wrap_modes_on_s(mode: int, k: int, column: int) -> None:
    ustate, mem = _unit(wrap=(mode, 0), image=encode_texture(_gradient(), "RGBA8"))
    assert _at(ustate, mem, (k + 0.5) / 8, 0.5 / 8)[0] == 8 * column


@pytest.mark.parametrize(("mode", "k"), [(1, -1), (1, 8), (5, 8), (5, 12)])
def test_border_modes(mode: int, k: int) -> None:
    ustate, mem = _unit(wrap=(0, mode), image=encode_texture(_gradient(), "RGBA8"))
    assert _at(ustate, mem, 0.5 / 8, (k + 0.5) / 8) == list(BORDER)


def test_border_inside_is_the_texture() -> None:
    ustate, mem = _unit(wrap=(1, 1), image=encode_texture(_gradient(), "RGBA8"))
    assert _at(ustate, mem, 7.5 / 8, 0.5 / 8) == [56, 0, 0, 255]


def test_bilinear_weights() -> None:
    ustate, mem = _unit(mag=1, minf=1, image=encode_texture(_gradient(), "RGBA8"))
    # s: p = 2.75 - 0.5 = 2.25 -> 0.75 * 16 + 0.25 * 24 = 18; t: p = 3 exactly -> 24
    assert _at(ustate, mem, 2.75 / 8, 3.5 / 8) == [18, 24, 0, 255]
    # both axes: p = (4.1, 1.5): R 0.9*32 + 0.1*40 = 32.8 -> 33; G 0.5*8 + 0.5*16 = 12
    assert _at(ustate, mem, 4.6 / 8, 2.0 / 8) == [33, 12, 0, 255]


def test_bilinear_with_border_texels() -> None:
    ustate, mem = _unit(mag=1, minf=1, wrap=(1, 0), image=encode_texture(_gradient(), "RGBA8"))
    # s: p = -0.25: texel -1 (border, weight 0.25) and texel 0 (0.75). R = 50, G = 0.25*100 + 0.75*24 = 43
    assert _at(ustate, mem, 0.25 / 8, 3.5 / 8) == [50, 43, 0, 255]


def _mip_unit(**kw):
    image = encode_texture(_solid((255, 0, 0, 255), 16), "RGBA8") + encode_texture(_solid((0, 255, 0, 255)), "RGBA8")
    return _unit(size=16, image=image, **kw)


@pytest.mark.parametrize(
    ("lod", "mip", "expected"),
    [
        (-1.0, 0, [255, 0, 0, 255]),  # magnification: level 0
        (1.0, 0, [0, 255, 0, 255]),  # level 1
        (0.6, 0, [0, 255, 0, 255]),  # nearest level: round(0.6) = 1
        (0.4, 0, [255, 0, 0, 255]),
        (0.25, 1, [191, 64, 0, 255]),  # linear between levels: 0.75 * 255 = 191.25, 0.25 * 255 = 63.75
        (5.0, 1, [0, 255, 0, 255]),  # clamped to max level 1
    ],
)
def test_mip_selection(lod: float, mip: int, expected: list) -> None:
    ustate, mem = _mip_unit(mip=mip, lod=(0, 0, 1))
    assert _at(ustate, mem, 0.5, 0.5, lod=lod) == expected


def test_min_level_floor() -> None:
    ustate, mem = _mip_unit(lod=(0, 1, 1))
    assert _at(ustate, mem, 0.5, 0.5, lod=-2.0) == [0, 255, 0, 255]


def test_lod_from_neighbouring_fragments() -> None:
    yy, xx = np.mgrid[0:4, 0:4]
    x, y = xx.ravel().astype(np.int32), yy.ravel().astype(np.int32)
    texel = np.stack([x * 2.0, y * 0.5], axis=1).astype(np.float32)  # 2 texels per pixel along x
    lod = compute_lod(x, y, np.zeros(16, np.int32), texel, bias=0.5)
    assert np.allclose(lod, 1.5)
    # a different primitive is not a neighbour: a lone fragment has no derivative
    alone = compute_lod(
        np.array([0, 1], np.int32),
        np.zeros(2, np.int32),
        np.array([0, 1], np.int32),
        np.array([[0, 0], [4, 0]], np.float32),
        bias=0.0,
    )
    assert np.isneginf(alone).all()


FACE_COLORS = [(10, 0, 0, 255), (20, 0, 0, 255), (30, 0, 0, 255), (40, 0, 0, 255), (50, 0, 0, 255), (60, 0, 0, 255)]


def _cube(ttype=1):
    faces = [BASE + 256 * i for i in range(6)]
    mem = PhysicalMemory()
    for addr, color in zip(faces, FACE_COLORS, strict=True):
        mem.write(addr, encode_texture(_solid(color), "RGBA8"))
    mem.write(faces[0], encode_texture(_gradient(), "RGBA8"))
    return _unit(mem, ttype=ttype, faces=faces)


@pytest.mark.parametrize(
    ("direction", "red"),
    [
        ((-1.0, 0.2, 0.1), 20),
        ((0.1, 1.0, 0.2), 30),
        ((0.1, -1.0, 0.2), 40),
        ((0.1, 0.2, 1.0), 50),
        ((0.2, 0.1, -1.0), 60),
    ],
)
def test_cube_face_selection(direction, red: int) -> None:
    ustate, mem = _cube()
    u, v, w = direction
    assert _at(ustate, mem, u, v, w)[0] == red


def test_cube_coordinates_on_positive_x() -> None:
    ustate, mem = _cube()
    # +X: s = -w/u * 0.5 + 0.5 = 0.25, t = -v/u * 0.5 + 0.5 = 0.25 -> column 2, row t 2
    assert _at(ustate, mem, 1.0, 0.5, 0.5) == [16, 16, 0, 255]


def test_shadow_2d_compare() -> None:
    texel = np.zeros((8, 8, 4), np.uint8)
    texel[...] = (0xC8, 0x00, 0x00, 0x80)  # RGBA8 bytes A B G R = 80 00 00 C8: depth 0x800000, intensity 0xC8
    ustate, mem = _unit(ttype=2, shadow=(1, 0), image=encode_texture(texel, "RGBA8"))
    assert _at(ustate, mem, 0.5, 0.5, w=0.4) == [200] * 4  # z = 0.4 * 0xFFFFFF = 6710886 <= 8388608
    assert _at(ustate, mem, 0.5, 0.5, w=0.6) == [0] * 4  # z = 10066329 > stored
    biased, mem2 = _unit(ttype=2, shadow=(1, 0x400000), image=encode_texture(texel, "RGBA8"))
    assert _at(biased, mem2, 0.5, 0.5, w=0.6) == [200] * 4  # 10066329 - 4194304 <= stored


def test_projection_divides_by_w() -> None:
    ustate, mem = _unit(ttype=3, image=encode_texture(_gradient(), "RGBA8"))
    # u / w = 2.5 / 8 -> column 2; v / w = 5.5 / 8 -> row t 5
    assert _at(ustate, mem, 2.5 / 4, 5.5 / 4, w=2.0)[:2] == [16, 40]


def test_disabled_units_read_zero() -> None:
    ustate, mem = _unit(enable=0, image=encode_texture(_gradient(), "RGBA8"))
    assert _at(ustate, mem, 0.5, 0.5) == [0, 0, 0, 0]
    ustate, mem = _unit(ttype=5, image=encode_texture(_gradient(), "RGBA8"))
    assert _at(ustate, mem, 0.5, 0.5) == [0, 0, 0, 0]


def test_units_1_and_2_are_plain_2d() -> None:
    ustate, mem = _unit(unit=1, image=encode_texture(_gradient(), "RGBA8"))
    assert ustate.type == "2D" and ustate.coords == "texcoord1"
    assert _at(ustate, mem, 3.5 / 8, 1.5 / 8) == [24, 8, 0, 255]


def test_undefined_texture_type_is_named() -> None:
    with pytest.raises(UnsupportedFeature):
        _unit(ttype=6, image=encode_texture(_gradient(), "RGBA8"))


def test_bad_sizes_in_registers_are_named() -> None:
    with pytest.raises(InvalidTextureSize, match="0x082"):
        _unit(size=12, image=encode_texture(_gradient(), "RGBA8"))
