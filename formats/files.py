"""Every file picaemu writes goes through this module.

``write_atomic(path, data)`` writes a temporary file in the destination's folder, flushes it to disk and renames it
over the destination, so a full disk, a crash or a kill leaves the old file (or none) intact, never half a file.
A symlinked destination keeps its link: the file it points to is replaced. An ``OSError`` always names the
destination (a full disk reports ``ENOSPC`` without a file name otherwise).

``save_image(path, array)`` encodes a picture by the destination's suffix (``.png``, ``.bmp``, ``.tif``, ...; an
unknown suffix is a ``FormatError`` before anything is written) and writes it atomically; ``write_text`` likewise
for text. ``refuse_overwrite(output, *inputs)`` raises ``OutputIsInput`` when the output is one of the inputs
(the same path, a symlink to it or a hard link of it, or an existing file inside an input directory).

The destination ``-`` is stdout (``picaemu render CAPTURE -o - | display``): the bytes are written there in one
go; a picture without a suffix to go by is a PNG; binary data is refused when stdout is a terminal.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

from picaemu.errors import FormatError, OutputIsInput

PathLike = str | os.PathLike[str]
STDOUT = "-"


def is_stdout(path: PathLike) -> bool:
    """The destination ``-``: stdout."""
    return os.fspath(path) == STDOUT


def write_stdout(data: bytes, binary: bool = True) -> None:
    """``data`` on stdout (``-o -``); binary data is refused on a terminal."""
    if binary and sys.stdout.isatty():
        raise FormatError("refusing to write binary data to a terminal: redirect stdout or name a file", path="-")
    sys.stdout.flush()
    out = getattr(sys.stdout, "buffer", None)
    if out is None:
        sys.stdout.write(data.decode("utf-8", "replace"))
    else:
        out.write(data)
        out.flush()


def write_atomic(path: PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder, fsync and a rename (``-``: to
    stdout)."""
    if is_stdout(path):
        write_stdout(data)
        return
    target = Path(os.path.realpath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as err:
        raise _named(err, target) from None
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(err, OSError):
            raise _named(err, target) from None
        raise


def _named(err: OSError, target: Path) -> OSError:
    """The same error, naming the destination (not the temporary file, nor nothing)."""
    return type(err)(err.errno, err.strerror or str(err), str(target)) if err.errno else OSError(f"{target}: {err}")


def write_text(path: PathLike, text: str) -> None:
    if is_stdout(path):
        write_stdout(text.encode("utf-8"), binary=False)
        return
    write_atomic(path, text.encode("utf-8"))


def image_format(path: PathLike) -> str:
    """Pillow's format name for the suffix of ``path``; ``FormatError`` for a suffix no writer knows."""
    suffix = ".png" if is_stdout(path) else Path(path).suffix.lower()
    Image.preinit()  # PNG, BMP, JPEG, GIF, PPM; every other plugin only for another suffix (~40 ms of imports)
    fmt = Image.EXTENSION.get(suffix) or Image.registered_extensions().get(suffix)
    if fmt is None or fmt not in Image.SAVE:
        raise FormatError(f"cannot write an image with the suffix {suffix or '(none)'!r}; use .png", path=str(path))
    return fmt


def encode_image(array: np.ndarray, fmt: str = "PNG", mode: str | None = None, path: PathLike | None = None) -> bytes:
    """(H, W), (H, W, 3) or (H, W, 4) uint8 encoded as Pillow's format ``fmt`` (errors name ``path``)."""
    buffer = io.BytesIO()
    try:
        Image.fromarray(np.ascontiguousarray(array, np.uint8), mode).save(buffer, format=fmt)
    except (OSError, ValueError) as err:  # e.g. RGBA into a format without alpha
        raise FormatError(
            f"cannot encode the picture as {fmt}: {err}", path=None if path is None else os.fspath(path)
        ) from None
    return buffer.getvalue()


def save_image(path: PathLike, array: np.ndarray, mode: str | None = None) -> None:
    """Encode (H, W), (H, W, 3) or (H, W, 4) uint8 by the suffix of ``path`` and write it atomically."""
    write_atomic(path, encode_image(array, image_format(path), mode, path))


def refuse_overwrite(output: PathLike, *inputs: PathLike) -> None:
    """``OutputIsInput`` when writing ``output`` would overwrite one of ``inputs`` (see the module docstring)."""
    out = Path(output)
    if is_stdout(output) or not out.exists():
        return
    for source in inputs:
        src = Path(source)
        if not src.exists():
            continue
        if src.is_dir() and not out.is_dir() and Path(os.path.realpath(out)).is_relative_to(os.path.realpath(src)):
            raise OutputIsInput(str(out), str(src))
        if os.path.samefile(out, src):
            raise OutputIsInput(str(out), str(src))
