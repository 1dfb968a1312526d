"""A JSON document's top-level object read member by member, one array of it element by element.

A c3dcap manifest of a real game is hundreds of megabytes, nearly all in its ``events`` array; ``json.loads``
would hold every event's objects at once (several times the text's size). ``members(text, lazy)`` decodes the
top-level members except ``lazy`` (an array: stepped over, one element at a time, and its position returned);
``items(text, position)`` then yields that array's elements one at a time, so a reader holds one event's
objects at a time. Malformed text raises ``json.JSONDecodeError``, as ``json.loads`` would.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator
from typing import Any

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip(text: str, pos: int) -> int:
    return _SPACE.match(text, pos).end()  # type: ignore[union-attr]  # the pattern matches the empty string


def _expect(text: str, pos: int, char: str) -> int:
    pos = _skip(text, pos)
    if not text.startswith(char, pos):
        raise json.JSONDecodeError(f"Expecting {char!r}", text, pos)
    return pos + 1


def items(text: str, pos: int) -> Generator[Any, None, int]:
    """The elements of the JSON array at ``pos``, decoded one at a time; returns the position after it."""
    pos = _skip(text, _expect(text, pos, "["))
    if text.startswith("]", pos):
        return pos + 1
    while True:
        value, pos = _DECODER.raw_decode(text, _skip(text, pos))
        yield value
        pos = _skip(text, pos)
        if text.startswith("]", pos):
            return pos + 1
        pos = _expect(text, pos, ",")


def _past_array(text: str, pos: int) -> int:
    elements = items(text, pos)
    while True:
        try:
            next(elements)
        except StopIteration as stop:
            return stop.value


def members(text: str, lazy: str) -> tuple[dict[str, Any], int | None]:
    """The members of the top-level object in ``text`` except an array-valued ``lazy`` one, and the position of
    that array (None when there is none)."""
    out: dict[str, Any] = {}
    lazy_at = None
    pos = _skip(text, _expect(text, 0, "{"))
    if not text.startswith("}", pos):
        while True:
            key, pos = _DECODER.raw_decode(text, _skip(text, pos))
            if not isinstance(key, str):
                raise json.JSONDecodeError("Expecting a property name", text, pos)
            pos = _skip(text, _expect(text, pos, ":"))
            if key == lazy and text.startswith("[", pos):
                lazy_at, pos = pos, _past_array(text, pos)
            else:
                out[key], pos = _DECODER.raw_decode(text, pos)
            pos = _skip(text, pos)
            if text.startswith("}", pos):
                break
            pos = _expect(text, pos, ",")
    if _skip(text, pos + 1) != len(text):
        raise json.JSONDecodeError("Extra data", text, _skip(text, pos + 1))
    return out, lazy_at
