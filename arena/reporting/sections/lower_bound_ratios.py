"""The "Lower bound / measured" section: each adversary's declared lower bound over the value at T.

Adversaries declare reference lower bounds through ``lower_bounds(t)``, logged as
``lower_bound:<metric>`` rows (the ``lower_bound`` metric). The Flags section checks that no mean
falls below one; this section says how close the players come to it: per (game, player, metric,
param), at T, the ratio lower bound / measured of each replicate (the mirror of "Measured /
bound"), its mean with a t interval and its largest value, beside the measured mean and its
interval. A lower bound that holds on every run (a forcing construction such as Shalev-Shwartz
2007, Theorem 4) gives ratios at most 1 on every replicate; one that is an expectation (Theorem
3's ``E|σ_1 + … + σ_T|``) is compared with the measured mean's interval instead.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from arena.reporting import stats
from arena.reporting.render import Para, Table, code
from arena.reporting.sections.context import ReportContext, Section
from arena.reporting.sections.formatting import ci, num, param_text

PREFIX = "lower_bound:"

LOWER_RATIO_COLUMNS = [
    "game",
    "player",
    "metric",
    "param",
    "t",
    "n",
    "value",
    "value_ci_low",
    "value_ci_high",
    "lower_bound",
    "ratio_mean",
    "ratio_ci_low",
    "ratio_ci_high",
    "ratio_max",
]
"""The columns of :func:`lower_bound_ratios` (and of ``lower_bound_ratios.csv``)."""

COLUMNS = ["game", "player", "metric", "n", "measured", "CI", "lower bound", "lower / measured"]


def lower_bound_ratios(rows: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per (game, player, metric, param): the declared lower bound over the measured value at T.

    Each ``<metric>`` row at the horizon is paired with the ``lower_bound:<metric>`` row of the
    same cell, seed, replicate and param. Per group: the measured mean with its t interval
    (``value``, ``value_ci_low``, ``value_ci_high``), the lower bound's mean, and the ratio
    ``lower bound / value`` of each replicate whose value is positive (``n`` counts them): its
    mean with a t interval and its largest value, which is infinite where a replicate's value is
    ≤ 0 under a positive lower bound (the bound is broken). Returns :data:`LOWER_RATIO_COLUMNS`.

    Examples
    --------
    >>> rows = pd.DataFrame({
    ...     "metric": ["mistakes"] * 2 + ["lower_bound:mistakes"] * 2, "param": np.nan,
    ...     "t": 10, "horizon": 10, "run_id": "c", "seed": 0, "replicate": [0, 1] * 2,
    ...     "game_label": "g", "player_label": "p", "value": [10.0, 12.0, 10.0, 10.0]})
    >>> r = lower_bound_ratios(rows).iloc[0]
    >>> float(r.value), round(float(r.ratio_max), 6), float(r.lower_bound)
    (11.0, 1.0, 10.0)
    """
    final = rows.loc[rows["t"].to_numpy() == rows["horizon"].to_numpy()]
    metrics = final["metric"].astype(str)
    names = sorted(m for m in metrics.unique() if m.startswith(PREFIX))
    keys = ["run_id", "seed", "replicate", "param"]
    labels = ["game_label", "player_label"]
    out = []
    for name in names:
        target = name.removeprefix(PREFIX)
        low = final.loc[(metrics == name).to_numpy()]
        val = final.loc[(metrics == target).to_numpy()]
        if low.empty or val.empty:
            continue
        paired = stats._keyed(val, [*keys, *labels, "t"]).merge(
            stats._keyed(low, keys).rename(columns={"value": "lower"}), on=keys, how="inner"
        )
        for (game, player, param), part in paired.groupby([*labels, "param"], sort=True):
            value = part["value"].to_numpy(dtype=np.float64)
            lower = part["lower"].to_numpy(dtype=np.float64)
            v = stats.mean_ci(value, level)
            positive = value > 0
            # a value ≤ 0 under a positive lower bound breaks it: an infinite ratio, which the
            # largest ratio keeps (the mean and interval are over the finite ratios)
            ratio = np.where(
                positive,
                lower / np.where(positive, value, 1.0),
                np.where(lower > 0, np.inf, np.nan),
            )
            r = stats.mean_ci(ratio, level)
            seen = ratio[~np.isnan(ratio)]
            out.append(
                {
                    "game": game,
                    "player": player,
                    "metric": target,
                    "param": param,
                    "t": int(part["t"].max()),
                    "n": r["n"],
                    "value": v["mean"],
                    "value_ci_low": v["ci_low"],
                    "value_ci_high": v["ci_high"],
                    "lower_bound": float(lower.mean()),
                    "ratio_mean": r["mean"],
                    "ratio_ci_low": r["ci_low"],
                    "ratio_ci_high": r["ci_high"],
                    "ratio_max": float(seen.max()) if seen.size else math.nan,
                }
            )
    if not out:
        return pd.DataFrame(columns=LOWER_RATIO_COLUMNS)
    res = pd.DataFrame(out)
    res["param"] = res["param"].replace(stats._NAN_PARAM, np.nan)
    res = res.sort_values(["game", "player", "metric", "param"], na_position="first")
    return res[LOWER_RATIO_COLUMNS].reset_index(drop=True)


def lower_bound_section(ctx: ReportContext) -> Section | None:
    """The lower bound / measured section; ``None`` when no adversary declared a lower bound."""
    if not any(m.startswith(PREFIX) for m in ctx.logged):
        return None
    table = lower_bound_ratios(ctx.rows, ctx.level)
    if table.empty:
        return None
    ctx.write_csv("declared lower bound / measured at T", table, "lower_bound_ratios.csv")
    order = {g: i for i, g in enumerate(ctx.games)}
    table = (
        table.assign(_g=table["game"].map(order))
        .sort_values(["_g", "player", "metric", "param"], na_position="first")
        .reset_index(drop=True)
    )
    body = [
        [
            r.game,
            r.player,
            param_text(r.metric, r.param),
            str(int(r.n)),
            num(r.value),
            ci(r.value_ci_low, r.value_ci_high),
            num(r.lower_bound),
            f"{num(r.ratio_mean)} (max {num(r.ratio_max)})",
        ]
        for r in table.itertuples(index=False)
    ]
    blocks = [
        Para(
            f"How close each player comes to the lower bound its adversary declares: for every "
            f"metric with {code('lower_bound:<metric>')} rows, at the horizon T, the measured "
            f"mean with its {ctx.pct} t-interval, the lower bound's mean, and the ratio lower "
            "bound / measured of each replicate (its mean and largest value; replicates whose "
            "value is not positive have none). A forcing construction's bound holds on every "
            "run, so each ratio is at most 1, and 1 where the player is forced exactly; a bound "
            "on the expectation (the same for every player) is met when it lies in the "
            "measured mean's interval, and single replicates may fall below it."
        ),
        Table(
            COLUMNS,
            body,
            caption=f"Declared lower bound / measured at T: the measured mean with its {ctx.pct} "
            "t-interval, and the per-replicate ratio's mean and maximum.",
            text_columns={0, 1, 2},
            anchor="lower-bound-ratio-table",
        ),
    ]
    return Section("Lower bound / measured", "lower-bound-ratios", blocks)
