"""The "Other regret notions" section: quantile (k-th and subset-uniform), shifting, strongly
adaptive and adaptive regret."""

from __future__ import annotations

from arena.reporting import stats
from arena.reporting.figures import curves_figure, sweep_figure
from arena.reporting.render import Block
from arena.reporting.sections.context import ReportContext, Section
from arena.reporting.sections.formatting import PARAM_SYMBOL

SWEEPS = [
    # metric, figure name, x label, y label, caption
    (
        "quantile_regret",
        "quantile_regret_vs_eps",
        "ε (fraction of experts)",
        "ε-quantile regret at T (loss units)",
        "ε-quantile regret at the horizon vs ε (regret to the ⌈εN⌉-th best expert), mean ± 95% "
        "t-interval.",
    ),
    (
        "subset_quantile_regret",
        "subset_quantile_regret_vs_eps",
        "ε (fraction of experts)",
        "subset-uniform ε-quantile regret at T",
        "Regret at the horizon to the uniform mixture of the ⌈εN⌉ best experts vs ε, mean ± 95% "
        "t-interval.",
    ),
    (
        "shifting_regret",
        "shifting_regret_vs_k",
        "comparator switches k",
        "shifting regret at T (loss units)",
        "Shifting regret at the horizon vs the comparator's switch budget k, mean ± 95% "
        "t-interval.",
    ),
    (
        "sa_regret",
        "sa_regret_vs_tau",
        "interval length τ (rounds)",
        "SA regret at T (loss units)",
        "Strongly adaptive regret at the horizon (max regret over intervals of length ≤ τ) vs τ, "
        "mean ± 95% t-interval.",
    ),
]

ADAPTIVE_YLABEL = "adaptive regret (loss units)"
ADAPTIVE_CAPTION = (
    "Adaptive regret (max regret over intervals [s, e] ⊆ [1, t]) vs round t, mean with 95% "
    "t-interval bands."
)


def other_notions(ctx: ReportContext) -> Section | None:
    """The other-notions section: final value vs parameter per notion, adaptive regret curves.

    A figure for each of quantile, shifting and strongly adaptive regret logged, then one of
    adaptive regret over rounds; ``None`` when none of them is logged.
    """
    rows, games, pct = ctx.rows, ctx.games, ctx.pct
    blocks: list[Block] = []
    for metric, fname, xlabel, ylabel, caption in SWEEPS:
        if metric not in ctx.logged:
            continue
        final = stats.final_rows(rows, metric)
        summ = stats.grouped_mean_ci(
            final, ["game_label", "player_label", "param"], level=ctx.level
        )
        summ = summ.rename(columns={"game_label": "game", "player_label": "player"})
        summ["game"] = summ["game"].astype(str)
        summ["player"] = summ["player"].astype(str)
        ctx.write_csv(f"{metric} vs {PARAM_SYMBOL[metric]}", summ, f"{fname}.csv")
        blocks.append(
            ctx.add_figure(
                sweep_figure(
                    fname,
                    summ,
                    games,
                    xlabel=xlabel,
                    ylabel=ylabel,
                    caption=caption.replace("95%", pct),
                    **ctx.figure_style(),
                )
            )
        )
    if "adaptive_regret" in ctx.logged:
        ad = stats.curve_summary(rows, "adaptive_regret", ctx.level)
        ctx.write_csv("adaptive regret curves", ad, "curves_adaptive_regret.csv")
        blocks.append(
            ctx.add_figure(
                curves_figure(
                    "adaptive_regret_curves",
                    ad,
                    games,
                    ylabel=ADAPTIVE_YLABEL,
                    caption=ADAPTIVE_CAPTION.replace("95%", pct),
                    **ctx.figure_style(),
                )
            )
        )
    if not blocks:
        return None
    return Section("Other regret notions", "other", blocks)
