"""The "Curves of the leaderboard metrics" section (mistakes, loss of OCO tournaments, ...)."""

from __future__ import annotations

from arena.reporting.render import Block, Figure, code
from arena.reporting.sections.context import ReportContext, Section
from arena.reporting.sections.curves import bounded_curves

# Regret has its own section; adaptive regret is drawn among the other regret notions.
DRAWN_ELSEWHERE = frozenset({"regret", "adaptive_regret"})


def metric_curves(ctx: ReportContext) -> Section | None:
    """The metric-curves section: bounded curves of each parameterless leaderboard metric.

    Regret and adaptive regret are left to their own sections; ``None`` when no metric remains.
    Without regret curves, the first metric's figure is the report's headline.
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
    blocks: list[Block] = []
    for metric in metrics:
        blocks += bounded_curves(
            ctx,
            metric,
            metric,
            f"{code(metric)} vs round t (log-log), mean over replicates with {pct} t-interval "
            f"bands; thin dashed: declared bounds ({code(f'bound:{metric}')}) in each player's "
            f"colour, thick dashed black over the curves: reference lower bounds "
            f"({code(f'lower_bound:{metric}')}), where any.",
        )
    headline: list[Block] = []
    if "regret" not in ctx.logged:  # no regret figure to head the report: the first metric's
        first = next(i for i, b in enumerate(blocks) if isinstance(b, Figure))
        headline = [blocks.pop(first)]
    return Section("Curves of the leaderboard metrics", "metric-curves", blocks, headline=headline)
