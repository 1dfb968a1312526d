"""Build every sample scene as a capture and render what the top screen shows after each frame.

``python -m samples.generate [NAME ...]`` writes, for each sample (all of ``ALL`` by default), the capture to
``samples/out/captures/<name>.pica`` and the pictures to ``samples/out/reference/<name>/<NNNN>.png`` (frame
number, 4 digits) — an untracked folder — and prints where each went. ``--update`` writes the tracked copies
instead: ``samples/captures/<name>.pica`` and ``samples/reference/<name>/<NNNN>.png`` (stale frames removed); do
this only on purpose, after looking at the pictures. The layout is the one of ``picaemu batch``, so
``picaemu batch samples/captures -o out --compare samples/reference`` checks them all.

``tests/test_samples.py`` checks that the tracked captures equal a fresh generation byte for byte and that every
frame matches its reference; it uses ``SAMPLES`` (the feature scenes, with spot checks by hand), ``GAME`` (the
game-scale scenes of ``samples/game_scene.py``), ``build``, ``render_frames`` and ``reference_paths``.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
from pathlib import Path

import numpy as np
from picaemu.formats import pica
from picaemu.formats.files import save_image

from picaemu.replay import Replay

SAMPLES = (
    "triangle",
    "texture_formats",
    "cube",
    "blending",
    "stencil",
    "fog",
    "animation",
    "ssaa_transfer",
    "texture_filtering",
    "alpha_test",
    "lit_sphere",
    "proctex",
    "gs_sprites",
)
GAME = (
    "game_cubes_300",
    "game_cubes_1000",
    "game_cubes_3000",
    "game_objects_300",
    "game_textured_300",
    "game_lit_300",
    "game_sprites_1000",
    "game_rich_1000",
)
ALL = SAMPLES + GAME
ROOT = Path(__file__).resolve().parent
REFERENCE = ROOT / "reference"
CAPTURES = ROOT / "captures"
OUT = ROOT / "out"


def build(name: str) -> pica.Capture:
    if name in GAME:
        from samples.game_scene import SCENES

        return SCENES[name]()
    return importlib.import_module(f"samples.{name}").build()


def render_frames(capture: pica.Capture) -> list[np.ndarray]:
    """The top screen after every frame: (240, 400, 3) uint8 each."""
    replay = Replay(capture, checkpoints=False, record_draws=False)
    frames = []
    for i in range(len(replay.frames)):
        replay.run_to_frame(i)
        frames.append(replay.screen())
    return frames


def reference_paths(name: str, frames: int, root: Path = REFERENCE) -> list[Path]:
    return [root / name / f"{i:04d}.png" for i in range(frames)]


def generate(name: str, root: Path) -> list[Path]:
    """Write ``root/captures/<name>.pica`` and ``root/reference/<name>/<NNNN>.png``; returns the files."""
    capture = build(name)
    (root / "captures").mkdir(parents=True, exist_ok=True)
    dest = root / "captures" / f"{name}.pica"
    pica.write(dest, capture)
    frames = render_frames(capture)
    folder = root / "reference" / name
    if folder.is_dir():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    paths = reference_paths(name, len(frames), root / "reference")
    for image, path in zip(frames, paths, strict=True):
        save_image(path, image)
    return [dest, *paths]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--update",
        action="store_true",
        help="write the tracked samples/captures and samples/reference instead of samples/out",
    )
    parser.add_argument("names", nargs="*", default=list(ALL), metavar="NAME", help=f"of: {' '.join(ALL)}")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(ALL))
    if unknown:
        parser.error(f"no sample named {', '.join(unknown)}")
    for name in args.names:
        for path in generate(name, ROOT if args.update else OUT):
            print(path)


if __name__ == "__main__":
    main()
