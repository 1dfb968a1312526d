"""What the framebuffer view's overlays mean, as one line of rich text under the picture (issue 26: "a legend on
every overlay"). The colours come from where the overlays are drawn (``picaemu.debug.probe``,
``picaemu.analysis.stats.HEAT_COLORS``, ``picaemu.gl.compare``, ``gui.image_view.RECT_RGB``), never restated here.

``legend_html(names)``: the legend of the overlays ``names`` (keys of ``OVERLAYS``), in that order; "" for none.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Sequence

from picaemu.gui.image_view import MARK_RGB, RECT_RGB

from picaemu.analysis.stats import HEAT_COLORS, HEAT_MAX
from picaemu.debug.probe import FATE_RGBA, WIRE_RGBA
from picaemu.fragment.ops import Fate
from picaemu.gl.compare import GAIN, LEVELS

Swatch = tuple[Sequence[int], str]  # (R, G, B[, A]) and what that colour means


def swatch_html(rgb: Sequence[int], text: str) -> str:
    """A square of colour ``rgb`` followed by ``text``."""
    r, g, b = (int(c) for c in rgb[:3])
    return f'<span style="color:#{r:02x}{g:02x}{b:02x}">&#9632;</span>&nbsp;{html.escape(text)}'


def heat_swatches() -> list[Swatch]:
    """The count colours of ``count_overlay``: 1, 2, … and "N+" for ``HEAT_MAX`` and more (0 is transparent)."""
    return [(HEAT_COLORS[n], f"{n}{'+' if n == HEAT_MAX else ''}") for n in range(1, HEAT_MAX + 1)]


# overlay name -> (title, swatches): a title introduces a colour ramp
OVERLAYS: dict[str, Callable[[], tuple[str, list[Swatch]]]] = {
    "wireframe": lambda: ("", [(WIRE_RGBA, "primitive edges of the draw")]),
    "overdraw": lambda: ("fragments of the draw per pixel:", heat_swatches()),
    "depth fail": lambda: ("", [(FATE_RGBA[Fate.DEPTH], "fragments the depth test killed")]),
    "stencil fail": lambda: ("", [(FATE_RGBA[Fate.STENCIL], "fragments the stencil test killed")]),
    "scissor": lambda: ("", [(RECT_RGB, "scissor box")]),
    "frame complexity": lambda: ("fragments per pixel in the frame so far:", heat_swatches()),
    "GL difference": lambda: (
        "GL picture:",
        [((128, 128, 128), f"{GAIN}x the difference from software"), ((255, 0, 0), f"over {LEVELS} levels")],
    ),
    "picked pixel": lambda: ("", [(MARK_RGB, "picked pixel")]),
}


def legend_html(names: Iterable[str]) -> str:
    """The legend of the overlays ``names`` (keys of ``OVERLAYS``); "" when there are none."""
    parts = []
    for name in names:
        title, swatches = OVERLAYS[name]()
        colours = " ".join(swatch_html(c, t) for c, t in swatches)
        parts.append(f"{html.escape(title)} {colours}" if title else colours)
    return " &nbsp;|&nbsp; ".join(parts)
