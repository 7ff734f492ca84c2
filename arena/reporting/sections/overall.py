"""The "Overall" section: regret across games, normalized, and who beats whom."""

from __future__ import annotations

from arena.reporting import stats
from arena.reporting.render import Block, Table
from arena.reporting.sections.context import ReportContext, Section
from arena.reporting.sections.formatting import num


def overall(ctx: ReportContext) -> Section | None:
    """The overall section: normalized final regret and the win matrix (``None`` without regret)."""
    if "regret" not in ctx.logged:
        return None
    norm = stats.normalized_table(ctx.rows, ctx.src.games)
    win, win_n = stats.win_matrix(ctx.rows)
    ctx.write_csv("normalized regret", norm, "normalized_regret.csv", index=True)
    ctx.write_csv("win matrix", win, "win_matrix.csv", index=True)
    ctx.write_csv("win counts", win_n, "win_counts.csv", index=True)
    blocks: list[Block] = [
        Table(
            ["player", *norm.columns],
            [[p, *(num(v, 3) for v in row)] for p, row in norm.iterrows()],
            caption="Normalized regret: mean final regret / sqrt(T ln N) (n/a for N = 1)",
            anchor="normalized",
        ),
        Table(
            ["row beats column", *win.columns],
            [
                [p, *("—" if p == b else num(win.loc[p, b], 2) for b in win.columns)]
                for p in win.index
            ],
            caption="Win matrix: fraction of (game, seed, replicate) units where the row "
            "player's final regret is strictly below the column player's",
            anchor="win-matrix",
        ),
    ]
    return Section("Overall", "overall", blocks)
