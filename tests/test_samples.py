"""Golden tests of the sample scenes (samples/): every frame matches its reference PNG within +-2 per channel (a
diff image is written to samples/out/ on failure), plus spot checks computed by hand from each scene's setup. The
tracked samples are what a fresh generation writes: the same capture bytes, the same names (one
``samples/captures/<name>.pica`` and one ``samples/reference/<name>/<NNNN>.png`` per frame for each sample, nothing
else), and ``picaemu batch samples/captures --compare samples/reference`` passes."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from picaemu.formats import pica
from PIL import Image

from samples.generate import ALL, CAPTURES, GAME, OUT, REFERENCE, SAMPLES, build, reference_paths, render_frames
from tests.test_replay import check_scene1

TOLERANCE = 2
_FRAMES: dict[str, list[np.ndarray]] = {}


def frames(name: str) -> list[np.ndarray]:
    if name not in _FRAMES:
        _FRAMES[name] = render_frames(build(name))
    return _FRAMES[name]


def at(img: np.ndarray, x: int, y: int) -> np.ndarray:
    """Landscape pixel, origin bottom-left."""
    return img[239 - y, x].astype(int)


def near(pixel: np.ndarray, expect: tuple[float, float, float], tol: int = TOLERANCE) -> bool:
    return bool(np.all(np.abs(pixel - np.array(expect)) <= tol))


@pytest.mark.parametrize("name", [*SAMPLES, *(pytest.param(n, marks=pytest.mark.slow) for n in GAME)])
def test_sample_matches_reference(name: str) -> None:
    images = frames(name)
    refs = reference_paths(name, len(images))
    assert all(p.is_file() for p in refs), f"missing references for {name}: see python -m samples.generate"
    for image, ref_path in zip(images, refs, strict=True):
        ref = np.asarray(Image.open(ref_path).convert("RGB")).astype(int)
        diff = np.abs(image.astype(int) - ref).max(axis=2)
        if diff.max() > TOLERANCE:
            OUT.mkdir(exist_ok=True)
            picture = (image // 3).astype(np.uint8)
            picture[diff > TOLERANCE] = (255, 0, 0)
            diff_path = OUT / f"{name}_{Path(ref_path).stem}.diff.png"
            Image.fromarray(picture).save(diff_path)
            pytest.fail(
                f"{ref_path.name}: {int((diff > TOLERANCE).sum())} pixels differ by up to {diff.max()} "
                f"(diff image: {diff_path})"
            )


def test_triangle_is_scene1() -> None:
    check_scene1(frames("triangle")[0])


def test_blending_by_hand() -> None:
    img = frames("blending")[0]
    assert near(at(img, 100, 60), (127.5, 0, 0), 1)  # red at alpha 0.5 over black
    assert near(at(img, 210, 60), (255, 127.5, 127.5), 2)  # over white
    assert near(at(img, 160, 120), (63.75, 127.5, 0), 2)  # green 0.5 over (red 0.5 over black)


def test_fog_by_hand() -> None:
    img = frames("fog")[0]
    orange, fog = np.array([255, 140.25, 25.5]), np.array([0x70, 0x80, 0x98])
    for i, z in enumerate((0.9, 0.5, 0.1, -0.3, -0.7)):
        f = (z + 1) / 2  # linear LUT: factor = depth
        assert near(at(img, 60 + 72 * i, 120), tuple(f * orange + (1 - f) * fog), 3), i


def test_stencil_by_hand() -> None:
    img = frames("stencil")[0]
    assert near(at(img, 200, 120), (127.5, 127.5, 127.5), 2)  # ramp (x / 400, 1 - x / 400, 0.5) at x = 200
    assert near(at(img, 10, 10), (63.75, 76.5, 114.75), 2)  # outside the hexagon
    assert near(at(img, 120, 120), (76.5, 178.5, 127.5), 3)  # inside, near the left corner (x = 120)


def test_ssaa_transfer_smooths_edges() -> None:
    img = frames("ssaa_transfer")[0].astype(int)
    star, background = np.array([255, 216.75, 51]), np.array([8, 16, 48])
    assert near(at(img, 200, 120), tuple(star), 2) and near(at(img, 5, 5), tuple(background), 0)
    is_star = np.all(np.abs(img - star) <= 2, axis=2)
    is_bg = np.all(img == background, axis=2)
    blended = ~is_star & ~is_bg
    assert 200 < blended.sum() < 4000  # a one-pixel band of averaged colors along the edges


def test_alpha_test_by_hand() -> None:
    img = frames("alpha_test")[0]
    assert near(at(img, 105, 25), (25.5, 76.5, 178.5), 2)  # quad corner: alpha 0 fails, stripe 0 shows
    centre = at(img, 200, 120)
    assert centre[0] == 255 and centre[1] < 20 and centre[2] == 64


def test_texture_filtering_by_hand() -> None:
    img = frames("texture_filtering")[0]
    left = {tuple(p) for p in img[30:200, 20:180].reshape(-1, 3)}
    assert left <= {(255, 255, 255), (255, 0, 0)}  # nearest: only texel colors
    right = img[30:200, 215:380].reshape(-1, 3)
    assert np.any((right[:, 1] > 30) & (right[:, 1] < 225))  # bilinear: blends between texels


def test_cube_and_animation_by_hand() -> None:
    cube = frames("cube")[0]
    faces = {(255, 0, 0), (0, 255, 255), (0, 255, 0), (255, 0, 255), (0, 0, 255), (255, 255, 0)}
    assert tuple(at(cube, 200, 120)) in faces and near(at(cube, 2, 2), (0x10, 0x18, 0x28), 0)
    anim = frames("animation")
    assert len(anim) == 4 and all(not np.array_equal(a, b) for a, b in itertools.pairwise(anim))


def test_lit_sphere_by_hand() -> None:
    """Screen centre: N = V = (0, 0, 1); L = normalize(-0.55, 0.5, 0.67); diffuse N.L * (210, 50, 40) + ambient
    (24, 24, 36); specular (N.H)^24 * 255 with H = normalize(V + L)."""
    img = frames("lit_sphere")[0]
    light = np.array([-0.55, 0.5, 0.67]) / np.linalg.norm([-0.55, 0.5, 0.67])
    view = np.array([0.0, 0.0, 1.0])
    half = (light + view) / np.linalg.norm(light + view)
    expect = light[2] * np.array([210, 50, 40]) + [24, 24, 36] + half[2] ** 24 * 255
    assert near(at(img, 200, 120), tuple(expect), 4), (at(img, 200, 120), expect)
    assert near(at(img, 3, 3), (0x10, 0x10, 0x18), 0)


def test_proctex_by_hand() -> None:
    """Distance 0 -> map 0 -> color entry 0 (20, 30, 110); distance 1/6 -> map 1 -> entry 63 (255, 160, 30)."""
    img = frames("proctex")[0]
    assert near(at(img, 200, 120), (20, 30, 110), 2)
    assert near(at(img, 220, 120), (255, 160, 30), 5)
    assert near(at(img, 40, 120), (0, 0, 0), 0)  # outside the quad


def test_gs_sprites_by_hand() -> None:
    """24 points, each a 12 x 12 pixel square emitted by the geometry shader: 24 * 144 fragments; the sprite at
    point k has the vertex color (t, 1 - t, 0.8) with t = k / 24."""
    from picaemu.replay import Replay
    from samples import gs_sprites

    replay = Replay(build("gs_sprites"))
    replay.run()
    stats = replay.draws[0].stats
    assert stats["primitives_assembled"] == 48 and stats["fragments_written"] == 24 * 12 * 12
    img = replay.screen()
    pos, col = gs_sprites.spiral()
    for k in (0, 7, 23):
        x, y = int(pos[k, 0]), int(pos[k, 1])
        assert near(at(img, x, y), tuple(col[k, :3] * 255), 2), k


@pytest.mark.parametrize("name", ALL)
def test_tracked_capture_is_a_fresh_generation(name: str, tmp_path: Path) -> None:
    """samples/captures/<name>.pica is byte for byte what the sample's script builds now (regenerate with
    python -m samples.generate --update, after looking at samples/out/)."""
    fresh = tmp_path / f"{name}.pica"
    pica.write(fresh, build(name))
    assert fresh.read_bytes() == (CAPTURES / f"{name}.pica").read_bytes(), (
        f"samples/captures/{name}.pica is stale: python -m samples.generate {name} writes the fresh one to "
        "samples/out/captures/"
    )


def test_tracked_samples_have_uniform_names() -> None:
    """Exactly one capture per sample and one reference folder of frames 0000..N-1 per sample; nothing else."""
    assert sorted(p.name for p in CAPTURES.iterdir()) == sorted(f"{n}.pica" for n in ALL)
    assert sorted(p.name for p in REFERENCE.iterdir()) == sorted(ALL)
    for name in ALL:
        names = sorted(p.name for p in (REFERENCE / name).iterdir())
        assert names == [f"{i:04d}.png" for i in range(len(names))] and names, name
        frames_in_capture = (
            len(pica.read(CAPTURES / f"{name}.pica").frame_ends()) if hasattr(pica.Capture, "frame_ends") else None
        )
        if frames_in_capture is not None:
            assert len(names) == frames_in_capture, name


def test_generate_writes_to_the_untracked_folder(tmp_path: Path, monkeypatch) -> None:
    """python -m samples.generate writes below samples/out/ (ignored by git), never the tracked copies."""
    import subprocess

    from samples import generate

    monkeypatch.setattr(generate, "OUT", tmp_path / "out")
    before = {p: p.stat().st_mtime_ns for p in [*CAPTURES.iterdir(), *REFERENCE.rglob("*.png")]}
    generate.main(["triangle", "animation"])
    assert (tmp_path / "out" / "captures" / "triangle.pica").read_bytes() == (CAPTURES / "triangle.pica").read_bytes()
    assert sorted(p.name for p in (tmp_path / "out" / "reference" / "animation").iterdir()) == [
        "0000.png",
        "0001.png",
        "0002.png",
        "0003.png",
    ]
    assert before == {p: p.stat().st_mtime_ns for p in before}
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", str(OUT / "captures" / "x.pica")], cwd=CAPTURES.parent, check=False
    )
    assert ignored.returncode == 0, "samples/out/ must be ignored by git"


@pytest.mark.parametrize("name", ["triangle", "cube", "lit_sphere"])
def test_bundled_capture_renders_its_reference(name: str) -> None:
    """The .pica files shipped in samples/captures/ (the README renders one) match their references."""
    images = render_frames(pica.read(CAPTURES / f"{name}.pica"))
    for image, ref_path in zip(images, reference_paths(name, len(images)), strict=True):
        ref = np.asarray(Image.open(ref_path).convert("RGB")).astype(int)
        assert np.abs(image.astype(int) - ref).max() <= TOLERANCE
