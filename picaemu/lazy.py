"""Packages whose public names are imported at first use (PEP 562): importing one light submodule of such a
package (``picaemu.texture.state``, ``picaemu.replay.capture``) does not import its heavy siblings, so a command
that needs only the light ones (``picaemu info``) never loads the compiled stages.

In the package's ``__init__``::

    if TYPE_CHECKING:  # the names, for type checkers and readers
        from picaemu.texture.decode import decode_texture
    __getattr__, __dir__ = lazy_exports(__name__, {"decode_texture": "decode"})

A name is looked up in its submodule at first access and kept in the package (``from package import name``,
``package.name`` and ``monkeypatch.setattr(package, name, ...)`` all see the same attribute).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, exports: dict[str, str], *, rest: str | None = None
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """(``__getattr__``, ``__dir__``) for ``package``, whose public ``name`` lives in ``package.<exports[name]>``;
    with ``rest``, any other name in the ``__all__`` of ``package.<rest>`` (imported when such a name is asked
    for, or by ``dir``)."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        dunder = name.startswith("__")  # (``__path__``, ``__wrapped__`` ... probes are no exports)
        if (
            module is None
            and rest is not None
            and not dunder
            and name in importlib.import_module(f"{package}.{rest}").__all__
        ):
            module = rest
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        names = [] if rest is None else importlib.import_module(f"{package}.{rest}").__all__
        return sorted({*vars(sys.modules[package]), *exports, *names})

    return __getattr__, __dir__


__all__ = ["lazy_exports"]
