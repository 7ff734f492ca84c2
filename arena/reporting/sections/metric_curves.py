"""The "Curves of the leaderboard metrics" section (mistakes, loss of OCO tournaments, ...)."""

from __future__ import annotations

from arena.reporting.render import Block, code
from arena.reporting.sections.context import ReportContext, Section
from arena.reporting.sections.curves import bounded_curves

# Regret has its own section; adaptive regret is drawn among the other regret notions.
DRAWN_ELSEWHERE = frozenset({"regret", "adaptive_regret"})


def metric_curves(ctx: ReportContext) -> Section | None:
    """The metric-curves section: bounded curves of each parameterless leaderboard metric.

    Regret and adaptive regret are left to their own sections; ``None`` when no metric remains.
    """
    rows = ctx.rows
    metrics = [
        m
        for m in ctx.board_metrics
        if m not in DRAWN_ELSEWHERE and rows.loc[rows["metric"] == m, "param"].isna().all()
    ]
    if not metrics:
        return None
    pct = ctx.pct
    blocks: list[Block] = [
        bounded_curves(
            ctx,
            metric,
            metric,
            f"{code(metric)} vs round t (log-log), mean over replicates with {pct} t-interval "
            f"bands; dashed: declared bounds ({code(f'bound:{metric}')}), dotted grey: reference "
            f"lower bounds ({code(f'lower_bound:{metric}')}), where any.",
        )
        for metric in metrics
    ]
    return Section("Curves of the leaderboard metrics", "metric-curves", blocks)
