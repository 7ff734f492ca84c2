"""The "Tree experts" section: regret to the best pruning of a template tree, and time per round.

Shown when the results hold ``tree_regret`` rows (games against ``tree_experts``). Per game
(template depth, N edges) and player, at the horizon: the mean ``tree_regret`` ``R_G`` (the
player's loss minus the best pruning's, by the pruning dynamic program) with its t-interval, the
declared ``bound:tree_regret`` where a player declares one (``pruning_hedge``), and the cell's wall
time per round and replicate; then a figure of ``R_G`` at T against N. It is the empirical side of
Luo 2016, Table 2.4 (AdaNormalHedge on the awake edges, Adapt-ML-Prod's sleeping version and
exponential weights over prunings, Helmbold & Schapire 1997), whose regret terms differ by
``ln(N_T/m)`` against ``ln N`` and whose time per round is linear in the depth.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from arena.reporting import stats
from arena.reporting.figures import sweep_figure
from arena.reporting.render import Block, Para, Table, code
from arena.reporting.sections.context import ReportContext, Section, Verdict, item_name
from arena.reporting.sections.formatting import ci, num

PANEL = "tree experts"
"""The one panel of the figure: every tree game, with N on the x axis."""


def tree_table(rows: pd.DataFrame, cells: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per game and player, at the horizon: ``n_actions``, mean and t-interval of
    ``tree_regret``, the mean ``bound:tree_regret`` (NaN if none) and the wall time per round
    and replicate in microseconds (from the cells' manifests; NaN if not recorded).

    Examples
    --------
    >>> rows = pd.DataFrame({
    ...     "metric": "tree_regret", "t": 10, "horizon": 10, "game_label": "g",
    ...     "player_label": "p", "n_actions": 6, "replicate": [0, 1], "value": [1.0, 3.0]})
    >>> cells = pd.DataFrame({"game_label": ["g"], "player_label": ["p"], "horizon": [10],
    ...                       "replicates": [2], "wall_time_s": [2e-5]})
    >>> out = tree_table(rows, cells)
    >>> r = out.iloc[0]
    >>> float(r["mean"]), int(r["n_actions"]), float(r["us_per_round"])
    (2.0, 6, 1.0)
    """
    keys = ["game_label", "player_label"]
    final = stats.final_rows(rows, "tree_regret")
    out = stats.grouped_mean_ci(final, keys, level=level)
    sizes = final.groupby(keys, observed=True)["n_actions"].first().rename("n_actions")
    out = out.merge(sizes.reset_index(), on=keys, how="left")
    bound = stats.final_rows(rows, "bound:tree_regret")
    means = bound.groupby(keys, observed=True)["value"].mean().rename("bound")
    out = out.merge(means.reset_index(), on=keys, how="left")
    timing = cells[[*keys, "horizon", "replicates", "wall_time_s"]].copy()
    rounds = timing["horizon"].astype(float) * timing["replicates"].astype(float)
    timing["us_per_round"] = 1e6 * timing["wall_time_s"].astype(float) / rounds
    per_cell = timing.groupby(keys, observed=True)["us_per_round"].mean()
    return out.merge(per_cell.reset_index(), on=keys, how="left")


def tree_experts(ctx: ReportContext) -> Section | None:
    """The tree-experts section; ``None`` without ``tree_regret`` rows."""
    if "tree_regret" not in ctx.logged:
        return None
    cells = ctx.src.cells.copy()
    table = tree_table(ctx.rows, cells, ctx.level)
    if table.empty:
        return None
    table = table.sort_values(["n_actions", "game_label", "mean"]).reset_index(drop=True)
    # the wall time changes from run to run: it goes to the build's record, not the report
    timing = table[["game_label", "n_actions", "player_label", "us_per_round"]]
    timing_csv = ctx.write_run_csv(timing, "tree_timing.csv")
    ctx.run_blocks.append(
        Table(
            ["game", "N", "player", "µs / round"],
            [
                [
                    str(r.game_label),
                    str(int(r.n_actions)),
                    str(r.player_label),
                    num(r.us_per_round) if np.isfinite(r.us_per_round) else "n/a",
                ]
                for r in timing.itertuples(index=False)
            ],
            caption="Tree experts: the cell's wall time divided by T·R (all replicates are played "
            "together, so it is the amortized cost of one round of one game).",
            text_columns={0, 2},
        )
    )
    table = table.drop(columns=["us_per_round"])
    ctx.write_csv("tree regret at T", table, "tree_regret.csv")
    body = [
        [
            str(r.game_label),
            str(int(r.n_actions)),
            str(r.player_label),
            num(r.mean),
            ci(r.ci_low, r.ci_high),
            num(r.bound) if np.isfinite(r.bound) else "—",
        ]
        for r in table.itertuples(index=False)
    ]
    over = {
        i
        for i, r in enumerate(table.itertuples(index=False))
        if np.isfinite(r.bound) and r.mean > r.bound
    }
    blocks: list[Block] = [
        Para(
            f"{code('tree_regret')} is the player's loss minus that of the best pruning of the "
            f"template tree in hindsight (the pruning dynamic program), R_G of Luo 2016, §2.3.4. "
            f"Table 2.4 there predicts R_G = Ô(√(m·L̃*·ln(N_T/m))) for AdaNormalHedge on the "
            f"awake edges, Ô(√(m·L̃*·ln N)) for Adapt-ML-Prod's sleeping version, and "
            f"O(√(m·L*)) for exponential weights over the prunings when m and L* are known "
            f"(Helmbold & Schapire 1997); time per round linear in the depth for all three. "
            f"The section has no experiment: the comparison below is ours, and "
            f"{code('pruning_hedge')} is tuned by default for T and the worst-case pruning, not "
            f"for L* and m, which are unknown in practice (§2.3.4). "
            f"The wall time per round, which a rerun changes, is in the build's record "
            f"({timing_csv})."
        ),
        Table(
            ["game", "N", "player", "tree_regret at T", "CI", "bound:tree_regret"],
            body,
            caption=f"Regret to the best pruning at T: mean over replicates with its {ctx.pct} "
            f"t-interval; the declared bound's mean where a player declares one.",
            bad_rows=over,
            text_columns={0, 2},
        ),
    ]
    summary = table.rename(columns={"player_label": "player"}).assign(
        game=PANEL, param=table["n_actions"].astype(float)
    )
    summary["player"] = summary["player"].astype(str)
    if summary["param"].nunique() > 1:
        blocks.append(
            ctx.add_figure(
                sweep_figure(
                    "tree_regret_vs_n",
                    summary,
                    [PANEL],
                    ctx.styles,
                    xlabel="edges of the template tree N",
                    ylabel="tree regret at T (loss units)",
                    caption=f"Regret to the best pruning at the horizon vs the number of edges N "
                    f"(one game per depth), mean ± {ctx.pct} t-interval.",
                    titles={PANEL: "tree_experts, by template depth"},
                    suptitle=ctx.suptitle,
                )
            )
        )
    bounded = int(np.isfinite(table["bound"].to_numpy(float)).sum())
    verdict = Verdict(
        "Mean regret to the best pruning within its declared bound at T",
        "tree-experts",
        [
            item_name(table["game_label"].iloc[i], table["player_label"].iloc[i])
            for i in sorted(over)
        ],
        total=bounded,
    )
    return Section("Tree experts", "tree-experts", blocks, verdicts=[verdict] if bounded else [])
