"""The report's figures (matplotlib, Agg backend), drawn from summary tables only.

Every figure is a grid of panels 3.3 in wide (one per game) with 9 pt text, so a panel stays
legible at single-column paper width. A panel's title names its game in full (the adversary, every
parameter it was given, N) and a figure's suptitle says T and the replicates, so a figure copied
out of the report still says what it shows. Each player keeps one style in every figure:
:func:`player_styles` assigns them once from the sorted player labels, using the Okabe–Ito
colour-blind-safe palette, and past six players adds line styles and markers so that no two lines
look alike. Black is kept for the adversary's reference lower bound, drawn dashed on top of the
curves it often coincides with.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

OKABE_ITO = [
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#000000",  # black
    "#F0E442",  # yellow
]
"""Okabe & Ito (2008) colour-blind-safe palette, most legible on white first."""

PLAYER_COLORS = OKABE_ITO[:6]
"""The players' colours: yellow is too faint on white, and black is the lower bound's."""

LINESTYLES = ["-", "-.", ":"]
"""Past six players, colours repeat with the next line style (dashes are the bounds')."""

MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]
"""Past six players every player also gets its own marker (distinct for up to ten players)."""

MAX_PLAIN = len(PLAYER_COLORS)
"""Up to this many players, colour alone tells the lines apart (solid, no marker)."""

LOWER_BOUND_COLOR = "#000000"
LOWER_BOUND_ZORDER = 5
"""Above the curves and bands (zorder 2 and 1): a reference bound that coincides with the
curves stays visible."""
PANEL_W, PANEL_H = 3.3, 2.6
FONT_PT = 9

RC = {
    "font.size": FONT_PT,
    "axes.titlesize": FONT_PT,
    "axes.labelsize": FONT_PT,
    "xtick.labelsize": FONT_PT,
    "ytick.labelsize": FONT_PT,
    "legend.fontsize": FONT_PT,
    "figure.titlesize": FONT_PT + 1,
    "svg.fonttype": "none",  # text stays text in the SVG (searchable, smaller)
    "svg.hashsalt": "regret-arena",  # stable ids: the same results give the same SVG
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.5,
}


@dataclass(frozen=True)
class Style:
    """How one player is drawn everywhere."""

    color: str
    marker: str | None
    linestyle: str = "-"


def player_styles(labels: Sequence[str]) -> dict[str, Style]:
    """Assign each player a colour, line style and marker from its rank among the sorted labels.

    Up to :data:`MAX_PLAIN` players: one colour each, solid, no marker. Past that, the colours
    repeat with the next line style, and every player gets its own marker, so that no two
    players share (colour, line style, marker) — for up to 18 players by colour and line style
    alone, then by the marker too.

    Examples
    --------
    >>> s = player_styles(["hedge", "ftl"])
    >>> s["ftl"].color, s["hedge"].color, s["hedge"].marker
    ('#0072B2', '#E69F00', None)
    >>> s = player_styles([f"p{i}" for i in range(8)])
    >>> (s["p0"].color == s["p6"].color, s["p0"].linestyle, s["p6"].linestyle, s["p6"].marker)
    (True, '-', '-.', 'X')
    """
    ordered = sorted(set(labels))
    many = len(ordered) > MAX_PLAIN
    n = len(PLAYER_COLORS)
    return {
        label: Style(
            PLAYER_COLORS[i % n],
            MARKERS[i % len(MARKERS)] if many else None,
            LINESTYLES[(i // n) % len(LINESTYLES)],
        )
        for i, label in enumerate(ordered)
    }


@dataclass
class FigureOut:
    """A drawn figure: file stem, caption, the matplotlib figure, and the colour each player got.

    ``colors`` is read back from the drawn artists (lines and bands whose ``gid`` is
    ``player:<label>``), so tests can check that a player has one colour across figures.
    """

    name: str
    caption: str
    fig: object
    colors: dict[str, str] = field(default_factory=dict)
    png: bytes = b""
    paths: dict[str, Path] = field(default_factory=dict)


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


# fixed margins (inches) instead of constrained layout, which costs more than the drawing itself
_LEFT, _RIGHT, _BOTTOM = 0.62, 0.12, 0.45
_TOP_PAD, _TITLE_LINE = 0.22, 0.15  # above each panel: padding plus one height per title line
_SUPTITLE = 0.32
_LEGEND_ROW = 0.22
_TITLE_CHARS = 44  # a 9 pt title line across a 3.3 in panel


def _legend_shape(labels: Sequence[str], width: float) -> tuple[int, int]:
    """(entries per row, rows) of a figure legend of ``labels`` across ``width`` inches."""
    if not labels:
        return 1, 0
    longest = max(len(x) for x in labels)
    per_row = max(1, min(len(labels), int(width / (0.45 + 0.068 * longest))))
    return per_row, math.ceil(len(labels) / per_row)


def _grid(n_panels: int, legend_labels: Sequence[str], title_lines: int, suptitle: str | None):
    """A figure of ``n_panels`` panels (3 per row), each PANEL_W wide with PANEL_H for the axes
    and their labels, plus room above each panel for ``title_lines`` lines of title, above the
    grid for ``suptitle`` and below it for a legend."""
    plt = _plt()
    ncols = min(3, max(1, n_panels))
    nrows = max(1, math.ceil(n_panels / ncols))
    width = PANEL_W * ncols
    per_row, legend_rows = _legend_shape(legend_labels, width)
    legend_h = _LEGEND_ROW * legend_rows + (0.1 if legend_rows else 0.0)
    top = _TOP_PAD + _TITLE_LINE * max(1, title_lines)
    sup_h = _SUPTITLE if suptitle else 0.0
    panel_h = PANEL_H - 0.5 + top  # PANEL_H was sized for a 0.5 in title band
    height = panel_h * nrows + legend_h + sup_h
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False)
    aw, ah = PANEL_W - _LEFT - _RIGHT, panel_h - top - _BOTTOM
    fig.subplots_adjust(
        left=_LEFT / width,
        right=1 - _RIGHT / width,
        top=1 - (top + sup_h) / height,
        bottom=(legend_h + _BOTTOM) / height,
        wspace=(_LEFT + _RIGHT) / aw,
        hspace=(top + _BOTTOM) / ah,
    )
    if suptitle:
        fig.suptitle(suptitle, y=1 - 0.08 / height, va="top")
    flat = list(axes.ravel())
    for ax in flat[n_panels:]:
        ax.set_visible(False)
    return fig, flat[:n_panels], per_row


def _title(text: str) -> str:
    return "\n".join(textwrap.wrap(text, _TITLE_CHARS)) or text


def _titles(games: Sequence[str], titles: Mapping[str, str] | None) -> dict[str, str]:
    """Each game's wrapped panel title (its full title when given, else its label)."""
    return {g: _title((titles or {}).get(g, g)) for g in games}


def _with_data(games: Sequence[str], data: pd.DataFrame) -> list[str]:
    """The games of ``games`` that have rows in ``data`` (all of them when none has): a report
    holding several tournaments gets no empty panel for the games another tournament played."""
    present = set(data["game"].astype(str))
    kept = [g for g in games if g in present]
    return kept or list(games)


def _read_colors(fig) -> dict[str, str]:
    from matplotlib.colors import to_hex

    colors: dict[str, str] = {}
    for ax in fig.axes:
        for artist in [*ax.lines, *ax.collections]:
            gid = artist.get_gid() or ""
            if not gid.startswith("player:"):
                continue
            label = gid.removeprefix("player:")
            if hasattr(artist, "get_color") and not hasattr(artist, "get_facecolor"):
                c = artist.get_color()
            else:
                fc = artist.get_facecolor()
                c = fc[0] if len(fc) else None
            if c is None:
                continue
            hexc = to_hex(c, keep_alpha=False)
            prev = colors.setdefault(label, hexc)
            if prev != hexc:  # would be a bug: one player, two colours in one figure
                colors[label] = "inconsistent"
    return colors


def line_with_band(
    ax: Any,
    x: np.ndarray,
    y: np.ndarray,
    band: tuple[np.ndarray, np.ndarray] | None,
    style: Style,
    player: str,
    alpha: float = 0.18,
) -> None:
    """Draw one player's curve in its style, over its interval band when one is given.

    Both artists carry ``gid="player:<name>"``, which the HTML report uses to toggle players.
    """
    if band is not None:
        ax.fill_between(
            x, band[0], band[1], color=style.color, alpha=alpha, lw=0, gid=f"player:{player}"
        )
    ax.plot(
        x,
        y,
        color=style.color,
        ls=style.linestyle,
        marker=style.marker,
        ms=3,
        markevery=max(1, len(x) // 8),
        lw=1.5,
        gid=f"player:{player}",
    )


def _legend(
    fig,
    styles: Mapping[str, Style],
    players: Sequence[str],
    extra: list,
    per_row: int,
    default_marker: str | None = None,
) -> None:
    from matplotlib.lines import Line2D

    handles = [
        Line2D(
            [],
            [],
            color=styles[p].color,
            ls=styles[p].linestyle,
            marker=styles[p].marker or default_marker,
            label=p,
            lw=1.6,
            ms=4,
        )
        for p in players
    ]
    handles += extra
    if handles:
        fig.legend(
            handles=handles,
            loc="lower center",
            bbox_to_anchor=(0.5, 0.0),
            ncols=per_row,
            frameon=False,
            handlelength=2.2,
            columnspacing=1.2,
        )


def _log_axes(ax, x, y) -> None:
    """Log-log axes; minor ticks at 2 and 5 unlabelled where the data span a decade or more
    (matplotlib's default labels every minor tick's text box, which triples the drawing time)."""
    from matplotlib.ticker import LogLocator, NullFormatter

    ax.set_xscale("log")
    yv = np.asarray(y, dtype=float)
    if not np.any(np.isfinite(yv) & (yv > 0)):  # nothing to draw on a log axis (e.g. N = 1)
        ax.text(0.5, 0.5, "no positive values", transform=ax.transAxes, ha="center")
        return
    ax.set_yscale("log", nonpositive="mask")
    for axis, data in ((ax.xaxis, x), (ax.yaxis, y)):
        v = np.asarray(data, dtype=float)
        v = v[np.isfinite(v) & (v > 0)]
        if v.size and v.max() >= 10 * v.min():
            axis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))
            axis.set_minor_formatter(NullFormatter())


def _param_axis(ax, params: np.ndarray) -> None:
    """x axis of a parameter sweep: log (symmetric-log if some value is ≤ 0), ticks exactly at
    the parameter values, no minor ticks."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    values = np.unique(params[np.isfinite(params)])
    if values.size and np.all(values > 0):
        ax.set_xscale("log")
    else:
        ax.set_xscale("symlog", linthresh=1.0)
    if 0 < values.size <= 12:
        ax.xaxis.set_major_locator(FixedLocator(values))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_locator(NullLocator())


def curves_figure(
    name: str,
    curves: pd.DataFrame,
    games: Sequence[str],
    styles: Mapping[str, Style],
    *,
    ylabel: str,
    caption: str,
    bounds: pd.DataFrame | None = None,
    lower: pd.DataFrame | None = None,
    titles: Mapping[str, str] | None = None,
    suptitle: str | None = None,
) -> FigureOut:
    """Mean curves with CI bands on log-log axes, one panel per game, bounds overlaid.

    Games without curves get no panel (unless no game has any).

    ``curves``: ``game, player, t, mean, ci_low, ci_high``; ``bounds``: ``game, player, t, mean``
    (each player's declared bound, thin and dashed in its colour, with its marker); ``lower``:
    ``game, t, mean`` (the adversary's reference lower bound, dashed black, drawn above every
    curve). ``titles`` maps a game label to its panel title (default: the label); ``suptitle``
    heads the figure. Non-positive values cannot be drawn on a log axis and are left out (band
    edges are clipped to the panel's smallest positive value).
    """
    from matplotlib.lines import Line2D

    plt = _plt()
    players = sorted(set(curves["player"]))
    has_bound = bounds is not None and len(bounds) > 0
    has_lower = lower is not None and len(lower) > 0
    extra = []
    if has_bound:
        extra.append(Line2D([], [], color="#333333", ls="--", lw=1.0, label="declared bound"))
    if has_lower:
        extra.append(Line2D([], [], color=LOWER_BOUND_COLOR, ls="--", lw=1.8, label="lower bound"))
    games = _with_data(games, curves)
    heads = _titles(games, titles)
    lines = max((h.count("\n") + 1 for h in heads.values()), default=1)
    with plt.rc_context(RC):
        fig, axes, per_row = _grid(
            len(games), [*players, *(h.get_label() for h in extra)], lines, suptitle
        )
        for ax, game in zip(axes, games, strict=True):
            part = curves[curves.game == game]
            positive = part["mean"][part["mean"] > 0]
            floor = float(positive.min()) / 10 if len(positive) else 1e-3
            for player, c in part.groupby("player", sort=True):
                st = styles[player]
                c = c.sort_values("t")
                t = c["t"].to_numpy(float)
                mean = c["mean"].to_numpy(float)
                lo = np.clip(c["ci_low"].to_numpy(float), floor, None)
                hi = np.clip(c["ci_high"].to_numpy(float), floor, None)
                band = (lo, hi) if np.isfinite(lo).any() else None
                line_with_band(ax, t, np.where(mean > 0, mean, np.nan), band, st, player)
            if has_bound:
                for player, b in bounds[bounds.game == game].groupby("player", sort=True):
                    b = b.sort_values("t")
                    val = b["mean"].to_numpy(float)
                    # the player's marker (hollow) tells apart two bounds of one colour
                    ax.plot(
                        b["t"].to_numpy(float),
                        np.where(val > 0, val, np.nan),
                        color=styles[player].color,
                        ls="--",
                        lw=1.0,
                        alpha=0.9,
                        marker=styles[player].marker,
                        ms=3,
                        mfc="none",
                        markevery=max(1, len(val) // 6),
                        gid=f"player:{player}",
                    )
            if has_lower:
                lb = lower[lower.game == game].sort_values("t")
                if len(lb):
                    val = lb["mean"].to_numpy(float)
                    ax.plot(
                        lb["t"].to_numpy(float),
                        np.where(val > 0, val, np.nan),
                        color=LOWER_BOUND_COLOR,
                        ls="--",
                        lw=1.8,
                        zorder=LOWER_BOUND_ZORDER,
                        gid="lower_bound",
                    )
            _log_axes(ax, part["t"], positive)
            ax.set_title(heads[game])
            ax.set_xlabel("round t")
            ax.set_ylabel(ylabel)
        _legend(fig, styles, players, extra, per_row)
    return FigureOut(name, caption, fig, _read_colors(fig))


def sweep_figure(
    name: str,
    summary: pd.DataFrame,
    games: Sequence[str],
    styles: Mapping[str, Style],
    *,
    xlabel: str,
    ylabel: str,
    caption: str,
    titles: Mapping[str, str] | None = None,
    suptitle: str | None = None,
) -> FigureOut:
    """Final value vs the metric's parameter (ε, k or τ) with 95% CI error bars, panel per game.

    ``summary``: ``game, player, param, mean, ci_low, ci_high``. The x axis is logarithmic when
    every parameter is positive (symmetric-log otherwise, so k = 0 shows). Games without rows
    get no panel, as in :func:`curves_figure`; ``titles`` and ``suptitle`` as there.
    """
    plt = _plt()
    players = sorted(set(summary["player"]))
    games = _with_data(games, summary)
    heads = _titles(games, titles)
    lines = max((h.count("\n") + 1 for h in heads.values()), default=1)
    with plt.rc_context(RC):
        fig, axes, per_row = _grid(len(games), players, lines, suptitle)
        params = summary["param"].to_numpy(float)
        for ax, game in zip(axes, games, strict=True):
            part = summary[summary.game == game]
            for player, c in part.groupby("player", sort=True):
                st = styles[player]
                c = c.sort_values("param")
                x = c["param"].to_numpy(float)
                y = c["mean"].to_numpy(float)
                err = np.vstack([y - c["ci_low"].to_numpy(float), c["ci_high"].to_numpy(float) - y])
                err = np.where(np.isfinite(err), err, 0.0)
                bars = ax.errorbar(
                    x,
                    y,
                    yerr=err,
                    color=st.color,
                    ls=st.linestyle,
                    marker=st.marker or "o",
                    ms=3.5,
                    lw=1.4,
                    capsize=2,
                    elinewidth=0.9,
                    gid=f"player:{player}",
                )
                bars.lines[0].set_gid(f"player:{player}")
            _param_axis(ax, params)
            ax.set_title(heads[game])
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
        _legend(fig, styles, players, [], per_row, default_marker="o")
    return FigureOut(name, caption, fig, _read_colors(fig))


def save_figure(out: FigureOut, directory: Path, dpi: int = 150) -> FigureOut:
    """Write ``<name>.png`` and ``<name>.svg`` under ``directory``; keep the PNG bytes; close."""
    plt = _plt()
    directory.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    out.fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    out.png = buf.getvalue()
    png = directory / f"{out.name}.png"
    png.write_bytes(out.png)
    svg = directory / f"{out.name}.svg"
    with plt.rc_context(RC):
        out.fig.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
    out.paths = {"png": png, "svg": svg}
    plt.close(out.fig)
    return out
