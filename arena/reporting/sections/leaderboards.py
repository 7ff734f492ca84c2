"""The "Leaderboards" section: final values ranked per game and metric, with paired tests."""

from __future__ import annotations

import pandas as pd

from arena.reporting import stats
from arena.reporting.render import Block, Heading, Links, Para, Table
from arena.reporting.sections.context import ReportContext, Section
from arena.reporting.sections.formatting import ci, num, p_value, param_text

# The all-pairs table grows quadratically; beyond this many players only its CSV is linked.
MAX_PAIRWISE_PLAYERS = 8


def leaderboards(ctx: ReportContext) -> Section:
    """The leaderboards section: a table per (metric, parameter) and game, then regret's pairs.

    The first metric's tables (regret's) go to the report's headline.
    """
    pct = ctx.pct
    board, pairs = stats.leaderboards(ctx.rows, ctx.board_metrics, ctx.level, games=ctx.games)
    ctx.write_csv("leaderboards", board, "leaderboards.csv")
    ctx.write_csv("pairwise", pairs, "pairwise.csv")
    blocks: list[Block] = [
        Para(
            f"Final value at t = T per game. Mean and {pct} t-interval over replicates; rank by "
            "mean (1 = lowest). Δ is the paired difference to the leader over the same "
            f"(seed, replicate) units (same losses), with its {pct} t-interval; p is the paired "
            "t-test's p-value after Holm–Bonferroni correction over all pairs of players of the "
            "game and metric; 'signif. worse' = yes when that p ≤ 0.05."
        )
    ]
    headline: list[Block] = []
    groups = board.groupby(["metric", "param"], sort=False, dropna=False)
    for i, ((metric, param), mboard) in enumerate(groups):
        title = param_text(metric, param)
        if i == 0:
            blocks.append(
                Para(f"The {title} leaderboards are the report's headline, at the top.", note=True)
            )
        into = headline if i == 0 else blocks
        into.append(Heading(f"Leaderboard: {title}", 3, f"lb-{metric}-{param}"))
        for game in ctx.games:
            gb = mboard[mboard.game == game]
            if gb.empty:
                continue
            into.append(
                Table(
                    [
                        "rank",
                        "player",
                        "mean",
                        f"{pct} CI",
                        "n",
                        "Δ vs leader",
                        "Δ CI",
                        "p (Holm)",
                        "signif. worse",
                    ],
                    [
                        [
                            "" if r.rank is None or pd.isna(r.rank) else str(int(r.rank)),
                            r.player,
                            num(r.mean),
                            ci(r.ci_low, r.ci_high),
                            str(int(r.n)),
                            "—" if pd.isna(r.delta) else num(r.delta),
                            "—" if pd.isna(r.delta) else ci(r.delta_ci_low, r.delta_ci_high),
                            "—" if pd.isna(r.delta) else p_value(r.p_holm),
                            "—" if pd.isna(r.delta) else ("yes" if r.significant else "no"),
                        ]
                        for r in gb.itertuples()
                    ],
                    caption=f"{title} — {game}",
                    text_columns={1},
                    css_class="leaderboard",
                )
            )
    if len(pairs) and len(ctx.src.player_labels) <= MAX_PAIRWISE_PLAYERS:
        blocks.append(Heading("Pairwise paired comparisons (regret)", 3, "pairwise"))
        reg = pairs[(pairs.metric == "regret")]
        blocks.append(
            Table(
                [
                    "game",
                    "player a",
                    "player b",
                    "n",
                    "mean a − b",
                    f"{pct} CI",
                    "p",
                    "p (Holm)",
                    "significant",
                ],
                [
                    [
                        r.game,
                        r.player_a,
                        r.player_b,
                        str(int(r.n_pairs)),
                        num(r.mean_diff),
                        ci(r.ci_low, r.ci_high),
                        p_value(r.p),
                        p_value(r.p_holm),
                        "yes" if r.significant else "no",
                    ]
                    for r in reg.itertuples()
                ],
                caption="Paired differences of final regret",
                text_columns={0, 1, 2},
            )
        )
    blocks.append(
        Links(
            [
                ("pairwise.csv", ctx.tables["pairwise"]),
                ("leaderboards.csv", ctx.tables["leaderboards"]),
            ],
            "All pairs, every metric: ",
        )
    )
    return Section("Leaderboards", "leaderboards", blocks, headline=headline)
