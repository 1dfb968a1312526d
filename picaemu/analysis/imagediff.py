"""Picture comparison for CI: ``picaemu batch --compare`` and ``picaemu diff-images`` (apitrace's diff-images).

Two pictures are compared on their RGB channels (alpha is ignored: the screens show none). For each pair:
``max_diff`` the largest per-channel difference (0-255), ``bad_pixels`` the pixels with some channel differing by
more than ``threshold``, ``psnr`` the peak signal-to-noise ratio in dB over the RGB channels, ``10 log10(255^2 /
MSE)`` (``None`` when the pictures are equal: infinite). A pair is a regression when any pixel is bad or the sizes
differ. The diff picture shows the output at 1/``DIFF_DIM`` brightness with the bad pixels in ``DIFF_COLOR``.

Directories are compared by relative path (``pair_directories``): every ``.png`` below either folder, except the
diff pictures (``*.diff.png``) this module writes, is one pair; a file on one side only is a regression too
(``missing output`` / ``missing reference``).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from picaemu.formats.files import save_image
from picaemu.formats.image import read_rgba

DIFF_DIM = 3
DIFF_COLOR = (255, 0, 0)
DIFF_SUFFIX = ".diff.png"
OK, REGRESSION = "ok", "regression"
MISSING_REFERENCE, MISSING_OUTPUT = "missing reference", "missing output"
UPDATED, RENDERED = "updated", "rendered"  # batch: reference written / nothing compared
PASSING = frozenset({OK, UPDATED, RENDERED})


@dataclass
class FrameCheck:
    """One compared picture. Paths are as given (strings, for JSON); ``diff`` is set when a diff picture was
    written."""

    key: str  # relative path, e.g. "cube/0000.png"
    status: str
    reference: str | None = None
    output: str | None = None
    max_diff: int | None = None
    bad_pixels: int | None = None
    psnr: float | None = None
    diff: str | None = None
    error: str = ""

    @property
    def passed(self) -> bool:
        return self.status in PASSING


def compare_arrays(ref: np.ndarray, got: np.ndarray, threshold: int) -> tuple[int, int, float | None, np.ndarray]:
    """(max_diff, bad_pixels, psnr, bad) for two (H, W, 3|4) uint8 pictures of the same size; ``bad`` is the
    (H, W) bool mask of pixels differing by more than ``threshold`` in some channel."""
    a = ref[:, :, :3].astype(np.int16)
    b = got[:, :, :3].astype(np.int16)
    delta = np.abs(a - b)
    per_pixel = delta.max(axis=2)
    bad = per_pixel > threshold
    mse = float(np.mean(delta.astype(np.float64) ** 2))
    psnr = None if mse == 0.0 else round(10.0 * math.log10(255.0**2 / mse), 2)
    return int(per_pixel.max(initial=0)), int(bad.sum()), psnr, bad


def diff_picture(got: np.ndarray, bad: np.ndarray) -> np.ndarray:
    """(H, W, 3) uint8: ``got`` dimmed, the ``bad`` pixels in ``DIFF_COLOR``."""
    picture = (got[:, :, :3] // DIFF_DIM).astype(np.uint8)
    picture[bad] = DIFF_COLOR
    return picture


def check_pair(
    key: str, reference: Path | None, output: Path | None, threshold: int, diff_path: Path | None = None
) -> FrameCheck:
    """Compare ``output`` with ``reference`` (either may be missing: None or no such file); writes the diff
    picture to ``diff_path`` on a regression of equal sizes. An unreadable picture raises ``FormatError``."""
    check = FrameCheck(key, OK, str(reference) if reference else None, str(output) if output else None)
    if reference is None or not reference.is_file():
        check.status, check.reference = MISSING_REFERENCE, None
        return check
    if output is None or not output.is_file():
        check.status, check.output = MISSING_OUTPUT, None
        return check
    ref, got = read_rgba(reference), read_rgba(output)
    if ref.shape != got.shape:
        check.status = REGRESSION
        check.error = f"size {got.shape[1]}x{got.shape[0]} differs from the reference's {ref.shape[1]}x{ref.shape[0]}"
        return check
    check.max_diff, check.bad_pixels, check.psnr, bad = compare_arrays(ref, got, threshold)
    if check.bad_pixels:
        check.status = REGRESSION
        if diff_path is not None:
            diff_path.parent.mkdir(parents=True, exist_ok=True)
            save_image(diff_path, diff_picture(got, bad))
            check.diff = str(diff_path)
    return check


def pictures(folder: Path) -> set[str]:
    """Relative paths (with '/') of the .png files below ``folder``, diff pictures excepted."""
    found = set()
    for root, _dirs, files in os.walk(folder):
        for name in files:
            if name.lower().endswith(".png") and not name.endswith(DIFF_SUFFIX):
                found.add(Path(root, name).relative_to(folder).as_posix())
    return found


def diff_path_for(folder: Path, key: str) -> Path:
    """Where the diff picture of ``key`` goes inside ``folder``: ``cube/0000.png`` -> ``cube/0000.diff.png``."""
    return folder / (key[: -len(".png")] + DIFF_SUFFIX)


def compare_directories(ref_dir: Path, out_dir: Path, threshold: int, diff_dir: Path | None = None) -> list[FrameCheck]:
    """Every picture of either folder, matched by relative path, in sorted order (see the module docstring)."""
    checks = []
    for key in sorted(pictures(ref_dir) | pictures(out_dir)):
        diff = diff_path_for(diff_dir, key) if diff_dir is not None else None
        checks.append(check_pair(key, ref_dir / key, out_dir / key, threshold, diff))
    return checks
