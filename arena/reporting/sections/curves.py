"""Curves of one metric over rounds with its declared bounds (regret and metric-curve sections)."""

from __future__ import annotations

import pandas as pd

from arena.reporting import stats
from arena.reporting.figures import curves_figure
from arena.reporting.render import Block, Para, code
from arena.reporting.sections.context import ReportContext

FLAT_BOUND_WHY = (
    "A declared bound is flat for small t, among the built-in players, for one of three reasons. "
    "(1) The learning rate is fixed before round 1 — a number, or tuned for the horizon T "
    f"({code('eta=tuned')}: η = √(8 ln N / T)) — and the bound ln N/η + ηt/8 (Cesa-Bianchi & "
    "Lugosi 2006, Theorem 2.2; Fixed Share and Mixing Past Posteriors add their switching cost "
    "to ln N) pays ln N/η from round 1: tuned for T it is √(T ln N / 8)·(1 + t/T), within a "
    "factor 2 of its value at T from the first round. (2) The bound is a value for the horizon, "
    "declared at every t (cover2's minimax value V_T). Either way it holds at every t; it is "
    "simply not smaller before T. (3) The bound is data-dependent (ada_hedge, ada_normal_hedge, "
    "ada_normal_hedge_tv, ml_prod): it grows only as the quantity it is stated in grows, which "
    "the adversary's losses may keep flat (see the player's docstring)."
)


def bounded_curves(ctx: ReportContext, metric: str, ylabel: str, caption: str) -> list[Block]:
    """The figure block of ``metric``'s curves, drawn with its bounds; its table is written too.

    Writes ``tables/curves_<metric>.csv`` and ``figures/<metric>_curves.{png,svg}``. The figure
    overlays the players' declared bounds (``bound:<metric>``) and the adversaries' reference
    lower bounds (``lower_bound:<metric>``, averaged over the players of a game). When a
    declared bound is flat for small t (:func:`~arena.reporting.stats.flat_start_bounds`), a
    note after the figure names its players and says why such bounds are flat.
    """
    curves = stats.curve_summary(ctx.rows, metric, ctx.level)
    ctx.write_csv(f"{metric} curves", curves, f"curves_{metric}.csv")
    bnd = stats.curve_summary(ctx.rows, f"bound:{metric}", ctx.level)
    lb = stats.curve_summary(ctx.rows, f"lower_bound:{metric}", ctx.level)
    if len(lb):
        lb = lb.groupby(["game", "t"], as_index=False)["mean"].mean()
    blocks: list[Block] = [
        ctx.add_figure(
            curves_figure(
                f"{metric}_curves",
                curves,
                ctx.games,
                ylabel=ylabel,
                caption=caption,
                bounds=bnd if len(bnd) else None,
                lower=lb if len(lb) else None,
                **ctx.figure_style(),
            )
        )
    ]
    flat = stats.flat_start_bounds(bnd) if len(bnd) else pd.DataFrame()
    if len(flat):
        blocks.append(Para(f"{_flat_players(flat, len(ctx.games))} {FLAT_BOUND_WHY}", note=True))
    return blocks


def _flat_players(flat: pd.DataFrame, n_games: int) -> str:
    """Which players' bounds are flat for small t, and on how many games."""
    parts = []
    for player, rows in flat.groupby("player", sort=True):
        where = "every game" if len(rows) == n_games else ", ".join(sorted(rows["game"]))
        parts.append(f"{player} ({where})")
    return "Declared bounds flat over the first decade of rounds: " + "; ".join(parts) + "."
