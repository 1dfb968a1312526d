"""Shader line maps: which source file and line produced each code word of an assembled SHBIN.

``picaemu shader asm`` writes the map as a sidecar file beside the SHBIN, ``X.shbin`` -> ``X.shbin.map`` (JSON),
and leaves the SHBIN byte-identical to picasso's: a SHBIN is embedded whole into the game (bin2s) and read by
libctru's DVLB parser and every other tool by offsets, so an extra chunk would cost console memory and rely on
every reader skipping it; a sidecar costs nothing and can be dropped. Schema (``version`` 1)::

    {"format": "picaemu-shader-map", "version": 1, "files": ["a.vsh", "b.gsh"],
     "code_words": N, "code_sha256": "<hex of the N words, little-endian>",
     "lines": [[file_index, line], ...]}       # one per code word, line 1-based; null for none

Padding NOPs belong to the ``.else``/``.end`` line that inserted them. A map is used only when its
``code_sha256`` matches the code it is applied to (a SHBIN's words, or the first N words of shader memory in a
capture); a missing map is silent, a bad or mismatched one is a ``LineMapWarning`` (``line-map-invalid`` /
``line-map-mismatch``) and the source column is left out, never an error.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from picaemu.formats.files import write_atomic

FORMAT = "picaemu-shader-map"
VERSION = 1
SUFFIX = ".map"


class LineMapWarning(UserWarning):
    """A line map that cannot be used (unreadable, bad schema, or written for other code)."""


def code_digest(words) -> str:
    """sha256 of code words as little-endian uint32."""
    return hashlib.sha256(np.asarray(words, dtype="<u4").tobytes()).hexdigest()


@dataclass(frozen=True)
class LineMap:
    files: tuple[str, ...]
    lines: tuple[tuple[int, int] | None, ...]  # per code word: (file index, 1-based line)
    code_sha256: str

    def at(self, pc: int) -> str | None:
        """``file:line`` of the word at ``pc``, or None."""
        entry = self.lines[pc] if 0 <= pc < len(self.lines) else None
        return None if entry is None else f"{self.files[entry[0]]}:{entry[1]}"

    def matches(self, code) -> bool:
        """Whether ``code`` (a SHBIN's words, or shader memory) starts with the words this map was made for."""
        n = len(self.lines)
        return len(code) >= n and code_digest(np.asarray(code)[:n]) == self.code_sha256

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": FORMAT,
                "version": VERSION,
                "files": list(self.files),
                "code_words": len(self.lines),
                "code_sha256": self.code_sha256,
                "lines": [list(e) if e is not None else None for e in self.lines],
            }
        )


def sidecar(shbin_path: str | Path) -> Path:
    """The map path of a SHBIN: ``X.shbin`` -> ``X.shbin.map`` (a ``.map`` path is returned as is)."""
    p = Path(shbin_path)
    return p if p.suffix == SUFFIX else p.with_name(p.name + SUFFIX)


def write(shbin_path: str | Path, line_map: LineMap) -> Path:
    """Write the sidecar atomically; returns its path."""
    path = sidecar(shbin_path)
    write_atomic(path, line_map.to_json().encode("utf-8"))
    return path


def _parse(text: str) -> LineMap:
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise ValueError(f"not a {FORMAT} version {VERSION} file")
    files, lines = data["files"], data["lines"]
    if not all(isinstance(f, str) for f in files) or len(lines) != data["code_words"]:
        raise ValueError("files must be names and lines one entry per code word")
    parsed: list[tuple[int, int] | None] = []
    for e in lines:
        if e is None:
            parsed.append(None)
            continue
        k, line = (int(x) for x in e)
        if not (0 <= k < len(files) and line >= 1):
            raise ValueError(f"bad line entry {e!r}")
        parsed.append((k, line))
    return LineMap(tuple(files), tuple(parsed), str(data["code_sha256"]))


def load(shbin_path: str | Path, code) -> LineMap | None:
    """The sidecar map of ``shbin_path`` (or a ``.map`` path) when it exists and matches ``code``. A bad or
    mismatched map warns (``LineMapWarning``) and gives None; a missing one gives None quietly."""
    if not sidecar(shbin_path).is_file():
        return None
    return check(read(shbin_path), code, str(shbin_path))


def caught(call, *args):
    """``call(*args)`` with the ``LineMapWarning``s it raises returned as messages: ``(result, [message])``."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", LineMapWarning)
        result = call(*args)
    return result, [str(w.message) for w in seen if issubclass(w.category, LineMapWarning)]


def check(line_map: LineMap | None, code, origin: str) -> LineMap | None:
    """``line_map`` when it matches ``code``; a ``line-map-mismatch`` warning naming ``origin`` and None when not."""
    if line_map is None or line_map.matches(code):
        return line_map
    warnings.warn(
        f"line-map-mismatch: the map does not match the shader code of {origin}; source lines not shown",
        LineMapWarning,
        stacklevel=2,
    )
    return None


def read(path: str | Path) -> LineMap | None:
    """The map at ``path`` (a SHBIN or its ``.map``) without checking it against code; a bad file warns
    (``line-map-invalid``) and gives None."""
    mp = sidecar(path)
    try:
        return _parse(mp.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as err:
        warnings.warn(f"line-map-invalid: {mp}: {err}; source lines not shown", LineMapWarning, stacklevel=2)
        return None
