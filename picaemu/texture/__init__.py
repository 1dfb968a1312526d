"""Textures of the PICA200: decoding (all 14 formats), encoding (non-ETC formats), per-draw texture unit state
sampling, and the procedural texture unit (``proctex``, texture 3). Public API: ``decode_texture``,
``encode_texture``, ``TextureFormat``, ``texture_format`` (imported at first use: ``picaemu.lazy``, so that
``picaemu.texture.state`` alone loads no compiled decoder)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from picaemu.lazy import lazy_exports

if TYPE_CHECKING:
    from picaemu.texture.decode import decode_texture
    from picaemu.texture.encode import encode_texture
    from picaemu.texture.formats import (
        InvalidTextureFormat,
        InvalidTextureSize,
        TextureError,
        TextureFormat,
        texture_format,
    )

__all__ = [
    "InvalidTextureFormat",
    "InvalidTextureSize",
    "TextureError",
    "TextureFormat",
    "decode_texture",
    "encode_texture",
    "texture_format",
]
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "decode_texture": "decode",
        "encode_texture": "encode",
        **dict.fromkeys(
            ("InvalidTextureFormat", "InvalidTextureSize", "TextureError", "TextureFormat", "texture_format"), "formats"
        ),
    },
)
