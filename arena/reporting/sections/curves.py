"""Curves of one metric over rounds with its declared bounds (regret and metric-curve sections)."""

from __future__ import annotations

from arena.reporting import stats
from arena.reporting.figures import curves_figure
from arena.reporting.render import Figure
from arena.reporting.sections.context import ReportContext


def bounded_curves(ctx: ReportContext, metric: str, ylabel: str, caption: str) -> Figure:
    """The figure block of ``metric``'s curves, drawn with its bounds; its table is written too.

    Writes ``tables/curves_<metric>.csv`` and ``figures/<metric>_curves.{png,svg}``. The figure
    overlays the players' declared bounds (``bound:<metric>``) and the adversaries' reference
    lower bounds (``lower_bound:<metric>``, averaged over the players of a game).
    """
    curves = stats.curve_summary(ctx.rows, metric, ctx.level)
    ctx.write_csv(f"{metric} curves", curves, f"curves_{metric}.csv")
    bnd = stats.curve_summary(ctx.rows, f"bound:{metric}", ctx.level)
    lb = stats.curve_summary(ctx.rows, f"lower_bound:{metric}", ctx.level)
    if len(lb):
        lb = lb.groupby(["game", "t"], as_index=False)["mean"].mean()
    return ctx.add_figure(
        curves_figure(
            f"{metric}_curves",
            curves,
            ctx.games,
            ctx.styles,
            ylabel=ylabel,
            caption=caption,
            bounds=bnd if len(bnd) else None,
            lower=lb if len(lb) else None,
        )
    )
