"""Build every sample scene, save it as ``samples/captures/<name>.pica`` and render what the top screen shows.

``python -m samples.generate`` writes the captures (bundled in the repository: the README's first line renders
one) and the pictures to ``samples/out/``, and prints where each picture went; ``--update-references``
also (re)writes ``samples/reference/<name>.png`` (``<name>_NNNN.png`` per frame for multi-frame samples) — do this
only on purpose, after looking at the pictures. The golden tests (tests/test_samples.py) use ``SAMPLES`` and
``render_frames``.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

import numpy as np
from picaemu.formats import pica
from picaemu.formats.files import save_image

from picaemu.replay import Replay

SAMPLES = ("triangle", "texture_formats", "cube", "blending", "stencil", "fog", "animation", "ssaa_transfer",
           "texture_filtering", "alpha_test", "lit_sphere", "proctex", "gs_sprites")
ROOT = Path(__file__).resolve().parent
REFERENCE = ROOT / "reference"
CAPTURES = ROOT / "captures"
OUT = ROOT / "out"


def build(name: str) -> pica.Capture:
    return importlib.import_module(f"samples.{name}").build()


def render_frames(capture: pica.Capture) -> list[np.ndarray]:
    """The top screen after every frame: (240, 400, 3) uint8 each."""
    replay = Replay(capture)
    frames = []
    for i in range(len(replay.frames)):
        replay.run_to_frame(i)
        frames.append(replay.screen())
    return frames


def reference_paths(name: str, frames: int) -> list[Path]:
    if frames == 1:
        return [REFERENCE / f"{name}.png"]
    return [REFERENCE / f"{name}_{i:04d}.png" for i in range(frames)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update-references", action="store_true")
    parser.add_argument("names", nargs="*", default=list(SAMPLES))
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    CAPTURES.mkdir(exist_ok=True)
    for name in args.names:
        capture = build(name)
        pica.write(CAPTURES / f"{name}.pica", capture)
        frames = render_frames(capture)
        targets = reference_paths(name, len(frames)) if args.update_references else [
            OUT / p.name for p in reference_paths(name, len(frames))]
        for image, path in zip(frames, targets, strict=True):
            save_image(path, image)
            print(path)


if __name__ == "__main__":
    main()
