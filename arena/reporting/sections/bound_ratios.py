"""The "Measured / bound" section: each metric over the bound its player declares, at the horizon.

Players declare proven bounds through ``bounds(t)``, logged as ``bound:<metric>`` rows (the
``bound`` metric). The Flags section checks that no value exceeds its bound; this section says
how close the values come: per (game, player, metric, param), at T, the ratio measured / bound
(:func:`arena.reporting.stats.bound_ratios`): its mean over replicates with a t interval, its
largest value and the bound's mean. A ratio near 1 means the adversary nearly attains the bound,
a small one that the bound is loose there. This is how the sources' bound tables (e.g. Luo 2016,
Tables 2.1 and 2.3) are checked empirically: on every adversary of a tournament at once.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from arena.reporting import stats
from arena.reporting.render import Block, Para, Table, code
from arena.reporting.sections.context import ReportContext, Section, Verdict, item_name
from arena.reporting.sections.formatting import PARAM_SYMBOL, ci, num, param_text

COLUMNS = ["game", "player", "metric", "n", "measured", "bound", "measured / bound", "CI", "max"]


def unbounded_metrics(rows: pd.DataFrame) -> dict[str, list[str]]:
    """Player → the metrics it was measured on at T but declares no bound for, among those
    another player of the results does bound (with their params, e.g. ``quantile_regret
    (ε = 0.1, 0.25)``).

    Examples
    --------
    >>> rows = pd.DataFrame({
    ...     "metric": ["regret", "regret", "bound:regret", "loss"], "param": np.nan,
    ...     "t": 5, "horizon": 5, "player_label": ["a", "b", "a", "b"], "value": 1.0})
    >>> unbounded_metrics(rows)
    {'b': ['regret']}
    """
    final = rows.loc[rows["t"].to_numpy() == rows["horizon"].to_numpy()]
    final = pd.DataFrame(
        {
            "player": final["player_label"].astype(str),
            "metric": final["metric"].astype(str),
            "param": final["param"].astype(float).fillna(-math.inf),  # NaN: no parameter
        }
    ).drop_duplicates()
    is_bound = final["metric"].str.startswith("bound:")
    bounds = final.loc[is_bound].assign(metric=final["metric"].str.removeprefix("bound:"))
    declared = set(bounds.itertuples(index=False, name=None))
    bounded = {(m, q) for _, m, q in declared}
    missing: dict[str, dict[str, list[float]]] = {}
    measured = final.loc[~is_bound].sort_values(["player", "metric", "param"])
    for p, m, q in measured.itertuples(index=False, name=None):
        if (m, q) in bounded and (p, m, q) not in declared:
            missing.setdefault(p, {}).setdefault(m, []).append(q)
    return {
        p: [_with_params(m, qs) for m, qs in by_metric.items()] for p, by_metric in missing.items()
    }


def _with_params(metric: str, params: list[float]) -> str:
    """``metric`` with its params, e.g. ``shifting_regret (k = 1, 2)`` (−inf: no parameter).

    Examples
    --------
    >>> _with_params("shifting_regret", [1.0, 2.0]), _with_params("regret", [-math.inf])
    ('shifting_regret (k = 1, 2)', 'regret')
    """
    values = [q for q in params if q != -math.inf]
    if not values:
        return metric
    listed = ", ".join(f"{q:g}" for q in values)
    return f"{metric} ({PARAM_SYMBOL.get(metric, 'param')} = {listed})"


def bound_ratios(ctx: ReportContext) -> Section | None:
    """The measured / bound section; ``None`` when no player declared a bound."""
    if not any(m.startswith("bound:") for m in ctx.logged):
        return None
    table = stats.bound_ratios(ctx.rows, ctx.level)
    if table.empty:
        return None
    ctx.write_csv("measured / declared bound at T", table, "bound_ratios.csv")
    order = {g: i for i, g in enumerate(ctx.games)}
    table = (  # games in the report's order, each player's regret first
        table.assign(_g=table["game"].map(order), _m=table["metric"] != "regret")
        .sort_values(["_g", "player", "_m", "metric", "param"], na_position="first")
        .reset_index(drop=True)
    )
    expectation = table["basis"] == stats.IN_EXPECTATION
    body = [
        [
            r.game,
            r.player,
            param_text(r.metric, r.param) + (" (in expectation)" if e else ""),
            str(int(r.n)),
            num(r.value),
            num(r.bound),
            num(r.ratio_mean),
            ci(r.ratio_ci_low, r.ratio_ci_high),
            "—" if e else num(r.ratio_max),
        ]
        for r, e in zip(table.itertuples(index=False), expectation, strict=True)
    ]
    beyond = np.where(expectation, table["ratio_ci_low"] > 1, table["ratio_max"] > 1)
    blocks: list[Block] = [
        Para(
            f"How close each player comes to the bound it declares: for every metric with "
            f"{code('bound:<metric>')} rows, at the horizon T, the ratio measured / bound of "
            f"each replicate (the value and its bound from the same replicate), its mean with a "
            f"{ctx.pct} t-interval over the replicates, its largest value, and the bound's mean. "
            "A bound holds on every loss sequence, so every ratio is at most 1 (a larger one is "
            "also listed under Flags); near 1, the adversary nearly attains the bound, far below "
            "it, the bound is loose on this adversary. Bandit players' bounds hold in "
            "expectation only: for them the ratio is mean value / mean bound, its interval the "
            "value's t-interval divided by the mean bound, and no maximum is shown."
        ),
        Table(
            COLUMNS,
            body,
            caption=f"Measured / declared bound at T: mean over replicates, {ctx.pct} "
            "t-interval and largest value.",
            bad_rows={i for i, b in enumerate(beyond) if b},
            text_columns={0, 1, 2},
            anchor="bound-ratio-table",
        ),
    ]
    missing = unbounded_metrics(ctx.rows)
    if missing:
        listed = "; ".join(f"{code(p)}: {', '.join(ms)}" for p, ms in missing.items())
        blocks.append(
            Para(
                "Measured without a declared bound (no ratio), on metrics that another player "
                f"bounds: {listed}.",
                note=True,
            )
        )
    verdict = Verdict(
        "Measured / declared bound at T",
        "bound-ratios",
        [
            item_name(r.game, r.player, param_text(r.metric, r.param))
            for r, b in zip(table.itertuples(index=False), beyond, strict=True)
            if b
        ],
        total=len(table),
    )
    return Section("Measured / bound", "bound-ratios", blocks, verdicts=[verdict])
