"""The "Time-varying competitors" section: regret to the competitor sequence an adversary declares.

Shown when the results hold ``tv_regret`` rows (games against an adversary that declares a
competitor ``u_1, …, u_T``, e.g. ``shifting_experts`` and ``drifting_means``). Per game and player,
at the horizon: the regret ``R(u_{1:T}) = Σ_t u_t·r_t``, the competitor's variation
``V(u_{1:T})`` and excess loss ``L̃(u_{1:T})`` (``tv_variation``, ``tv_loss``), and, for players
that declare it (AdaNormalHedge.TV), Theorem 7's bound ``bound:tv_regret`` evaluated on the run's
own V and L̃ (Luo 2016, §2.3.3, Table 2.3), with the largest ratio of regret to bound over the
replicates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from arena.reporting import stats
from arena.reporting.render import Block, Para, Table, code
from arena.reporting.sections.context import ReportContext, Section, Verdict, item_name
from arena.reporting.sections.formatting import ci, num

COLUMNS = [
    "game",
    "player",
    "tv_regret at T",
    "CI",
    "V",
    "L̃",
    "bound:tv_regret",
    "max regret / bound",
]


def time_varying_table(rows: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per game and player, at the horizon: mean and t-interval of ``tv_regret``, the mean of
    ``tv_variation``, ``tv_loss`` and ``bound:tv_regret``, and the largest per-replicate ratio
    of regret to bound (``ratio_max`` of :func:`arena.reporting.stats.bound_ratios`; NaN where
    no bound is declared).

    Examples
    --------
    >>> rows = pd.DataFrame({
    ...     "metric": ["tv_regret", "tv_regret", "bound:tv_regret", "bound:tv_regret"],
    ...     "param": np.nan, "t": 10, "horizon": 10, "game_label": "g", "player_label": "p",
    ...     "run_id": "c", "seed": 0, "replicate": [0, 1, 0, 1], "value": [1.0, 3.0, 4.0, 4.0]})
    >>> out = time_varying_table(rows)
    >>> float(out["mean"].iloc[0]), float(out["bound"].iloc[0]), float(out["ratio"].iloc[0])
    (2.0, 4.0, 0.75)
    """
    keys = ["game_label", "player_label"]
    final = {
        m: stats.final_rows(rows, m)
        for m in ("tv_regret", "tv_variation", "tv_loss", "bound:tv_regret")
    }
    out = stats.grouped_mean_ci(final["tv_regret"], keys, level=level)
    for metric, column in (
        ("tv_variation", "V"),
        ("tv_loss", "L"),
        ("bound:tv_regret", "bound"),
    ):
        means = final[metric].groupby(keys, observed=True)["value"].mean().rename(column)
        out = out.merge(means.reset_index(), on=keys, how="left")
    pair = pd.concat([final["tv_regret"], final["bound:tv_regret"]])
    ratios = stats.bound_ratios(pair, level)
    ratio = ratios.rename(
        columns={"game": "game_label", "player": "player_label", "ratio_max": "ratio"}
    )[[*keys, "ratio"]]
    return out.merge(ratio, on=keys, how="left")


def time_varying(ctx: ReportContext) -> Section | None:
    """The time-varying-competitors section; ``None`` without ``tv_regret`` rows."""
    if "tv_regret" not in ctx.logged:
        return None
    table = time_varying_table(ctx.rows, ctx.level)
    if table.empty:
        return None
    ctx.write_csv("time-varying competitors at T", table, "time_varying.csv")
    order = {g: i for i, g in enumerate(ctx.games)}
    table = table.assign(_g=table["game_label"].astype(str).map(order)).sort_values(["_g", "mean"])
    body = [
        [
            str(r.game_label),
            str(r.player_label),
            num(r.mean),
            ci(r.ci_low, r.ci_high),
            num(r.V),
            num(r.L),
            num(r.bound) if np.isfinite(r.bound) else "—",
            num(r.ratio) if np.isfinite(r.ratio) else "—",
        ]
        for r in table.itertuples(index=False)
    ]
    over = {i for i, r in enumerate(table.itertuples(index=False)) if r.ratio > 1}
    blocks: list[Block] = [
        Para(
            f"Against adversaries that declare a competitor sequence u₁, …, u_T, "
            f"{code('tv_regret')} is R(u) = Σ_t u_t·r_t, the regret to that sequence; "
            f"{code('tv_variation')} is its variation V = Σ_t Σ_i [u_t,i − u_t−1,i]₊ (k + 1 for a "
            f"k-switch sequence of point masses) and {code('tv_loss')} its excess loss "
            f"L̃ = Σ_t Σ_i u_t,i [l_t,i − p_t·l_t]₊. Players that declare Theorem 7's guarantee "
            f"(Luo 2016, §2.3.3: R(u) = Ô(√(V·L̃·ln NT)), made explicit by the player) log "
            f"{code('bound:tv_regret')} on the run's own V and L̃; the last column is the largest "
            f"ratio of regret to bound over the replicates at T (above 1 would be a violation, "
            f"and is also listed under Flags)."
        ),
        Table(
            COLUMNS,
            body,
            caption=f"Regret to the declared time-varying competitor at T: mean, {ctx.pct} "
            f"t-interval, and the competitor's mean V and L̃.",
            bad_rows=over,
            text_columns={0, 1},
        ),
    ]
    bounded = [i for i, r in enumerate(table.itertuples(index=False)) if np.isfinite(r.ratio)]
    verdict = Verdict(
        "Regret to the time-varying competitor over Theorem 7's bound at T",
        "time-varying",
        [
            item_name(table["game_label"].iloc[i], table["player_label"].iloc[i])
            for i in sorted(over)
        ],
        total=len(bounded),
    )
    verdicts = [verdict] if bounded else []
    return Section("Time-varying competitors", "time-varying", blocks, verdicts=verdicts)
