"""numba's on-disk cache location (picaemu.kernel_cache): a digest of the kernel sources names it, so an edit to
any kernel file (one another kernel calls included) starts an empty cache instead of reusing stale machine code;
a user's NUMBA_CACHE_DIR wins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from picaemu import kernel_cache


def test_the_digest_covers_the_kernel_files_only(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    kernel = tmp_path / "pkg" / "k.py"
    kernel.write_text("import numba\n@numba.njit\ndef f(x):\n    return x\n")
    plain = tmp_path / "pkg" / "plain.py"
    plain.write_text("X = 1\n")
    first = kernel_cache.source_digest(tmp_path)
    plain.write_text("X = 2\n")
    assert kernel_cache.source_digest(tmp_path) == first  # no kernel in it
    kernel.write_text("import numba\n@numba.njit\ndef f(x):\n    return x + 1\n")
    assert kernel_cache.source_digest(tmp_path) != first


def _cache_dir(env: dict[str, str]) -> str:
    code = "import picaemu, os, numba; print(os.environ['NUMBA_CACHE_DIR']); print(numba.config.CACHE_DIR)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300, check=True
    ).stdout.split()
    assert out[0] == out[1]
    return out[0]


def test_import_points_numba_at_the_digest_directory_unless_the_user_chose(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "home")
    root = Path(kernel_cache.__file__).resolve().parent
    expected = tmp_path / "home" / "picaemu" / "numba" / kernel_cache.source_digest(root)
    assert _cache_dir(env) == str(expected) and expected.is_dir()
    stale = tmp_path / "home" / "picaemu" / "numba" / "0123456789abcdef"
    stale.mkdir()
    os.utime(stale, (0, 0))  # unused for decades: removed at the next import
    _cache_dir(env)
    assert not stale.exists()
    assert _cache_dir({**env, "NUMBA_CACHE_DIR": str(tmp_path / "mine")}) == str(tmp_path / "mine")
