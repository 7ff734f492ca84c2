"""The "Online-to-batch" section: held-out risk of the averaged and the last iterate.

Shown when the results hold rows of the ``online_to_batch`` metric (games whose adversary holds
out a test split). One table per game: each player's mean, over replicates, at the horizon T of
the test 0-1 error and the test risk of the averaged iterate ``w̄_T`` and of the last one
``w_T``, the online average loss ``M_T``, and the excess-risk bound ``B_T/T`` when the player
declares a regret bound B (Shalev-Shwartz 2007, Appendix B.3: Theorem 10 with Jensen's
inequality, ``E risk(w̄_T) ≤ risk(h*) + E B_T/T``). Intervals are in the CSV.
"""

from __future__ import annotations

import math

import pandas as pd

from arena.reporting import stats
from arena.reporting.render import Block, Para, Table, code
from arena.reporting.sections.context import ReportContext, Section
from arena.reporting.sections.formatting import num

PREFIX = "online_to_batch:"

COLUMNS = [
    ("avg_error", "error of w̄_T"),
    ("last_error", "error of w_T"),
    ("avg_risk", "risk of w̄_T"),
    ("last_risk", "risk of w_T"),
    ("online_loss", "M_T"),
    ("excess_risk_bound", "B_T/T"),
]
"""The quantities shown, in order, with their column headers."""


def online_to_batch(ctx: ReportContext) -> Section | None:
    """The online-to-batch section; ``None`` when no ``online_to_batch`` rows were logged."""
    names = sorted(m for m in ctx.logged if m.startswith(PREFIX))
    if not names:
        return None
    parts = [stats.final_rows(ctx.rows, m) for m in names]
    final = pd.concat(parts, ignore_index=True)
    keys = ["game_label", "player_label", "metric"]
    nan = final["param"].isna().to_numpy()
    # groupby drops NaN keys: the rows without a param are grouped without that column
    summ = pd.concat(
        [
            stats.grouped_mean_ci(final.loc[nan], keys, level=ctx.level).assign(param=math.nan),
            stats.grouped_mean_ci(final.loc[~nan], [*keys, "param"], level=ctx.level),
        ],
        ignore_index=True,
    )
    summ = summ.rename(columns={"game_label": "game", "player_label": "player"})
    for col in ("game", "player", "metric"):
        summ[col] = summ[col].astype(str)
    ctx.write_csv("online-to-batch risks at T", summ, "online_to_batch.csv")
    # the bound against the game's own domain (param NaN); other comparator sets are in the CSV
    main = summ[summ["param"].isna()]
    columns = (main["game"], main["player"], main["metric"], main["mean"])
    means = {(g, p, m.removeprefix(PREFIX)): v for g, p, m, v in zip(*columns, strict=True)}
    blocks: list[Block] = []
    for game in ctx.games:
        players = sorted({p for (g, p, _) in means if g == game})
        if not players:
            continue
        shown = [(k, h) for k, h in COLUMNS if any((game, p, k) in means for p in players)]
        rows = [[p, *(num(means.get((game, p, k), math.nan)) for k, _ in shown)] for p in players]
        blocks.append(
            Table(
                ["player", *(h for _, h in shown)],
                rows,
                caption=f"{game}: held-out test error and risk at T, mean over replicates",
                anchor=None,
            )
        )
    if not blocks:
        return None
    blocks.append(
        Para(
            f"Rows {code('online_to_batch:*')} of the metric {code('online_to_batch')}, on the "
            "test split the adversary holds out (never streamed). w̄_T = (1/T) Σ_t w_t is the "
            "averaged iterate, w_T the point played at round T; the error counts y⟨w, x⟩ ≤ 0 "
            "(classification), the risk is the game's loss. M_T = (1/T) Σ_t f_t(w_t) estimates "
            "the ensemble's mean risk without bias on i.i.d. data (Shalev-Shwartz 2007, "
            "Theorem 9), and for a convex loss E risk(w̄_T) ≤ E M_T (Jensen). B_T/T is the "
            "player's declared regret bound over T: E risk(w̄_T) exceeds the best risk in the "
            "comparator set (the game's domain) by at most E B_T/T (Theorem 10), a statement "
            "about the mean over replicates, not each one. The CSV has "
            f"{ctx.pct} intervals and the bounds for other comparator sets.",
            note=True,
        )
    )
    return Section("Online-to-batch", "online-to-batch", blocks)
