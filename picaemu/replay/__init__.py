"""Replaying captures: ``picaemu.open(path) -> Replay``, the object the CLI, statistics and the GUI build on
(``picaemu.replay.core``, whose docstring describes the replay), and loading captures (``picaemu.replay.capture``).

The capture-loading names are imported with the package (they are light); ``Replay`` and the rest of
``picaemu.replay.core``'s ``__all__`` at first use (``picaemu.lazy``): ``picaemu.replay.capture``,
``picaemu.replay.scan`` and ``picaemu.replay.info`` work without the command processor, the engines and the
pipeline behind ``Replay``, so ``picaemu info`` loads no compiled code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from picaemu.lazy import lazy_exports
from picaemu.replay.capture import *  # noqa: F403 - every capture-loading name, as before the split

if TYPE_CHECKING:
    from picaemu.replay.core import *  # noqa: F403 - imported at first use below

__getattr__, __dir__ = lazy_exports(__name__, {}, rest="core")
