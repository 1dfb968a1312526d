"""The statistics figure of ``picaemu stats --plot`` and of the debugger's statistics panel (matplotlib).

``figure(rows, per)`` takes the rows of ``picaemu.analysis.stats`` (per draw, or per frame from ``per_frame``) and
returns
a ``matplotlib.figure.Figure`` of three panels sharing the x axis (draw or frame index):

1. fragment fates, stacked: written, killed by scissor / alpha test / stencil test / depth test, and the rest of
   the rasterized fragments ("other": e.g. colour writes disabled), so that each stack is as tall as
   ``fragments_rasterized``;
2. geometry: vertices shaded and primitives rasterized;
3. time per draw or frame in milliseconds (replay time; loading or compiling kernels is not in it).

Up to ``LABELLED_BARS`` entries are drawn as bars with their totals written above them; more are drawn as steps
(one polygon per series, cheap to redraw with thousands of draws). ``current`` marks one entry (the debugger's
current draw; ``mark`` moves the marker). No pyplot: the figure draws through whichever canvas it is given (Agg
for files, Qt in the GUI).
``save(fig, path)`` writes it by suffix (``.png``, ``.svg``, ``.pdf``; ``-``: PNG on stdout), atomically.
"""

from __future__ import annotations

import io
import os
from typing import Any

import numpy as np

FATES = (
    ("fragments_written", "written", "#2e7d32"),
    ("killed_scissor", "scissor", "#9e9e9e"),
    ("killed_alpha", "alpha test", "#f9a825"),
    ("killed_stencil", "stencil test", "#6a1b9a"),
    ("killed_depth", "depth test", "#c62828"),
)
OTHER_COLOR = "#90caf9"
GEOMETRY = (
    ("vertices_shaded", "vertices shaded", "#1565c0"),
    ("primitives_rasterized", "primitives rasterized", "#ef6c00"),
)
LABELLED_BARS = 40
CURRENT = "current"  # gid of the marker lines
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def _values(rows: list[dict[str, Any]], key: str) -> np.ndarray:
    return np.array([float(r.get(key, 0) or 0) for r in rows], np.float64)


def fate_stack(rows: list[dict[str, Any]]) -> list[tuple[str, str, np.ndarray]]:
    """(label, colour, values) per fragment fate, the "other" remainder last (see the module docstring)."""
    stack = [(label, color, _values(rows, key)) for key, label, color in FATES]
    other = _values(rows, "fragments_rasterized") - sum(v for _, _, v in stack)
    return [*stack, ("other", OTHER_COLOR, np.maximum(other, 0.0))]


def _series(ax: Any, x: np.ndarray, series: list[tuple[str, str, np.ndarray]], stacked: bool) -> None:
    """Bars (few entries) or steps (many) for each series; stacked or side by side."""
    bars = len(x) <= LABELLED_BARS
    width = 0.8 if stacked else 0.8 / len(series)
    base = np.zeros(len(x))
    for k, (label, color, values) in enumerate(series):
        if bars:
            offset = 0.0 if stacked else (k - (len(series) - 1) / 2) * width
            ax.bar(x + offset, values, width, bottom=base if stacked else None, label=label, color=color)
        else:
            edges = np.append(x - 0.5, x[-1] + 0.5)
            ax.stairs(
                base + values if stacked else values,
                edges,
                baseline=base if stacked else 0,
                fill=stacked,
                label=label,
                color=color,
            )
        if stacked:
            base = base + values
    if bars and len(x):
        totals = base if stacked else np.max([v for _, _, v in series], axis=0)
        for xi, total in zip(x, totals, strict=True):
            ax.annotate(
                f"{total:g}",
                (xi, total),
                ha="center",
                va="bottom",
                fontsize=7,
                xytext=(0, 1),
                textcoords="offset points",
            )


def figure(
    rows: list[dict[str, Any]], per: str = "draw", title: str = "", current: int | None = None, into: Any = None
) -> Any:
    """The three-panel ``matplotlib.figure.Figure`` of the module docstring (``per``: "draw" or "frame"), drawn
    into the empty figure ``into`` when given (the GUI's canvas keeps its figure)."""
    from matplotlib.figure import Figure

    fig = into if into is not None else Figure(figsize=(10, 7.5), layout="constrained")
    axes = fig.subplots(3, 1, sharex=True)
    x = np.array([int(r.get(per, i)) for i, r in enumerate(rows)], np.float64)
    _series(axes[0], x, fate_stack(rows), stacked=True)
    axes[0].set_ylabel("fragments")
    axes[0].set_title("fragment fates")
    _series(axes[1], x, [(label, color, _values(rows, key)) for key, label, color in GEOMETRY], stacked=False)
    axes[1].set_ylabel("count")
    axes[1].set_title("geometry")
    _series(axes[2], x, [("time", "#455a64", _values(rows, "time_ms"))], stacked=False)
    axes[2].set_ylabel("ms")
    axes[2].set_title(f"replay time per {per} (kernel loading excluded)")
    axes[2].set_xlabel(per)
    for ax in axes[:2]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    for ax in axes:
        ax.grid(axis="y", alpha=0.3)
        ax.margins(y=0.15)
        ax.axvline(
            0 if current is None else current,
            color="#ff6f00",
            linewidth=1.2,
            linestyle="--",
            gid=CURRENT,
            visible=current is not None,
        )
    if len(x) <= LABELLED_BARS:
        axes[2].set_xticks(x)
    if title:
        fig.suptitle(title)
    return fig


def mark(fig: Any, current: int | None) -> None:
    """Move the marker of the current entry (hidden for None); the caller redraws the canvas."""
    for ax in fig.axes:
        for line in ax.lines:
            if line.get_gid() == CURRENT:
                line.set_xdata([current or 0, current or 0])
                line.set_visible(current is not None)


def save(fig: Any, path: str | os.PathLike[str]) -> None:
    """Write ``fig`` by the suffix of ``path`` (``FORMATS``; ``-`` is a PNG on stdout), atomically."""
    from picaemu.formats.files import write_atomic

    buffer = io.BytesIO()
    fig.savefig(buffer, format=file_format(path), dpi=100)
    write_atomic(path, buffer.getvalue())


def file_format(path: str | os.PathLike[str]) -> str:
    """matplotlib's format name for the suffix of ``path``; ``FormatError`` for another suffix."""
    from picaemu.errors import FormatError
    from picaemu.formats.files import is_stdout

    if is_stdout(path):
        return "png"
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in FORMATS:
        raise FormatError(
            f"cannot write a plot with the suffix {suffix or '(none)'!r}; use .png, .svg or .pdf", path=os.fspath(path)
        )
    return FORMATS[suffix]
