"""The "Regret curves" section: expected regret over rounds with bounds, and its growth exponent."""

from __future__ import annotations

import numpy as np
import pandas as pd

from arena.reporting import stats
from arena.reporting.render import Block, Figure, Para, Table, code
from arena.reporting.sections.context import ReportContext, Section
from arena.reporting.sections.curves import bounded_curves

YLABEL = "expected regret (loss units)"
CAPTION = (
    "Expected regret vs round t (log-log), mean over replicates with 95% t-interval bands; "
    f"thin dashed: each player's declared bound ({code('bound:regret')}) in its colour; thick "
    f"dashed black, drawn over the curves: the adversary's reference lower bound "
    f"({code('lower_bound:regret')})."
)


def regret_curves(ctx: ReportContext) -> Section | None:
    """The regret-curves section: regret curves with their bounds, and growth exponents.

    The figure goes to the report's headline; ``None`` without regret rows.
    """
    if "regret" not in ctx.logged:
        return None
    pct, games = ctx.pct, ctx.games
    drawn = bounded_curves(ctx, "regret", YLABEL, CAPTION.replace("95%", pct))
    headline = [b for b in drawn if isinstance(b, Figure)]
    blocks: list[Block] = [
        Para("The figure of the regret curves is the report's headline, at the top.", note=True),
        *(b for b in drawn if not isinstance(b, Figure)),
    ]
    growth = stats.growth_table(ctx.rows, "regret", ctx.level)
    ctx.write_csv("growth exponents", growth, "growth_exponent.csv")
    g = growth.set_index(["player", "game"])
    blocks.append(
        Table(
            ["player", *games],
            [
                [
                    p,
                    *(_growth_cell(g.loc[(p, gm)]) if (p, gm) in g.index else "—" for gm in games),
                ]
                for p in ctx.src.player_labels
            ],
            caption=f"Empirical growth exponent α of regret ≈ c·t^α ({pct} CI)",
            anchor="growth",
        )
    )
    blocks.append(
        Para(
            "α is estimated per replicate as the least-squares slope of log regret on "
            "log t over the checkpoints in the upper half of the log-t range "
            "(log t ≥ (log t₁ + log T)/2), then averaged over replicates with a t-interval "
            "over replicates. Replicates whose regret is ≤ 0 somewhere in that window "
            "have no slope and are left out; 'k/n' shows how many were used when some "
            "were. √t growth gives α ≈ 0.5, bounded regret α ≈ 0, linear regret α ≈ 1.",
            note=True,
        )
    )
    return Section("Regret curves", "curves", blocks, headline=headline)


def _growth_cell(r: pd.Series) -> str:
    if not np.isfinite(r["exponent"]):
        return "n/a"
    if not np.isfinite(r["ci_low"]):
        return f"{r['exponent']:.3f} (one replicate)"
    used = "" if r["n_used"] == r["n"] else f" ({int(r['n_used'])}/{int(r['n'])})"
    return f"{r['exponent']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]{used}"
