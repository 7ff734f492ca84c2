"""What the boosting section's parts read alike from the rows.

The mean at the horizon per (game, player) with its interval, looked up by labels, and the
registry name behind each player label.
"""

from __future__ import annotations

import pandas as pd

from arena.reporting import stats
from arena.reporting.sections.context import ReportContext


def final_means(ctx: ReportContext, metric: str) -> pd.DataFrame:
    """The mean of ``metric`` at the horizon per (game, player), with its interval."""
    final = stats.final_rows(ctx.rows, metric)
    if final.empty:
        return pd.DataFrame(columns=["game_label", "player_label", "mean", "ci_low", "ci_high"])
    return stats.grouped_mean_ci(final, ["game_label", "player_label"], level=ctx.level)


def by_game_player(frame: pd.DataFrame) -> dict[tuple[str, str], tuple[float, float, float]]:
    """(game label, player label) → (mean, low, high) of a :func:`final_means` frame."""
    return {
        (str(r.game_label), str(r.player_label)): (r.mean, r.ci_low, r.ci_high)
        for r in frame.itertuples(index=False)
    }


def registry_names(ctx: ReportContext) -> dict[str, str]:
    """player label → registry name, from the rows."""
    pairs = ctx.rows[["player_label", "player"]].drop_duplicates()
    return {str(a): str(b) for a, b in zip(pairs.player_label, pairs.player, strict=True)}
