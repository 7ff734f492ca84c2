"""The "Game dynamics" section: how fast self-play approaches equilibrium, average and last iterate.

Shown when the results hold ``duality_gap`` (the gap of the average strategies) or
``last_iterate_gap`` (the gap of the strategies played at the checkpoint), the metrics of
``matrix_game``. For each game and player, the mean gap curve over replicates is fitted by a
straight line on log-log axes over the tail of the grid (the checkpoints whose ``log t`` lies in
the upper half of ``[log t_1, log T]``, as for the regret growth exponents), and the slope is shown
with the interval of the least-squares fit beside the rate the theory gives:

* average iterate: ``−1/2`` for no-regret dynamics with an ``O(√T)`` regret bound (Hedge with an
  anytime rate, Regret Matching, RM⁺): the gap is ``(a_max − a_min)(R^row_t + R^col_t)/t``
  (Freund & Schapire 1999), an upper bound, so a game may show faster; ``−1`` for the optimistic
  dynamics with a constant step: proved for ``optimistic_gd`` (its docstring), expected for
  Optimistic Hedge (Rakhlin & Sridharan 2013; Syrgkanis, Agarwal, Luo & Schapire 2015);
* last iterate: Hedge with a constant step moves away from an interior equilibrium (Bailey &
  Piliouras 2018; its anytime rate is not covered), RM⁺ has
  no last-iterate guarantee and fails to converge on a 3 × 3 game (Cai et al. 2023); optimistic
  multiplicative weights and optimistic gradient descent converge, at a linear rate under the
  conditions of Wei, Lee, Zhang & Luo (2021) (Daskalakis & Panageas 2019).

A curve that falls to rounding level (below :data:`ROUNDING_FLOOR` times its largest value) has no
power law: the table gives the first checkpoint where it does. A curve that is 0 throughout starts
at the equilibrium (uniform play in a game whose equilibrium is uniform).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from arena.reporting import stats
from arena.reporting.figures import curves_figure
from arena.reporting.render import Block, Para, Table, code
from arena.reporting.sections.context import ReportContext, Section

GAPS = {"duality_gap": "average", "last_iterate_gap": "last"}
"""The gap metrics and the iterate each measures."""

ROUNDING_FLOOR = 1e-9
"""A gap below this fraction of its curve's largest value is rounding: a converged last iterate
sits at 1e-16 to 1e-12 of the game's scale ``a_max − a_min`` (measured; Optimistic Hedge's floor
rises with t, as its cumulative losses lose relative precision), far below any power law the
grid could show."""

COLUMNS = [
    "game",
    "player",
    "iterate",
    "status",
    "slope",
    "ci_low",
    "ci_high",
    "points",
    "t_from",
    "t_to",
    "t_rounding",
    "final",
    "theory_slope",
    "theory",
]


@dataclass(frozen=True)
class Theory:
    """The rate the literature gives for one player and iterate: a slope (NaN: none) and why."""

    slope: float
    text: str


AVERAGE_SQRT = Theory(
    -0.5, "−1/2: an O(√T) regret bound for each side (upper bound; a game may converge faster)"
)
OPTIMISTIC_HEDGE_AVERAGE = Theory(
    -1.0,
    "−1 expected: with a constant step small enough the RVU property keeps the sum of the two "
    "regrets O(1) (Syrgkanis et al. 2015; Rakhlin & Sridharan 2013 prove O(log T/T) for a "
    "variant with adaptive steps)",
)
OPTIMISTIC_GD_AVERAGE = Theory(
    -1.0,
    "−1: proved for a constant η ≤ 1/(√8‖Ã‖₂), Ã the rescaled loss matrix (optimistic_gd's "
    "docstring, the RVU argument of Syrgkanis et al. 2015)",
)


def theory(player: str, params: dict, iterate: str) -> Theory:
    """The rate expected for ``player`` (registry name, constructor parameters) and ``iterate``.

    Examples
    --------
    >>> theory("optimistic_gd", {"eta": 0.2}, "average").slope
    -1.0
    >>> theory("hedge", {"eta": "anytime"}, "last").text.startswith("none")
    True
    """
    nan = math.nan
    if player == "hedge":
        eta = params.get("eta", "tuned")
        anytime = eta in ("anytime", "doubling")
        if iterate == "last":
            if anytime:
                return Theory(
                    nan,
                    "none guaranteed: the move away from an interior equilibrium (Bailey & "
                    "Piliouras 2018) is proved for multiplicative updates; this rate re-weights "
                    "exp(−η_t L_{t−1}) with a shrinking η_t (dual averaging), which it does not "
                    "cover",
                )
            return Theory(
                nan, "none: moves away from an interior equilibrium (Bailey & Piliouras 2018)"
            )
        if anytime:
            return AVERAGE_SQRT
        return Theory(
            nan,
            "none along the grid: with a fixed η the gap is at most (a_max − a_min)((ln N + "
            "ln M)/(ηt) + η/4) (Cesa-Bianchi & Lugosi 2006, Theorem 2.2), a 1/t decay down to a "
            "floor",
        )
    if player == "regret_matching":
        if iterate == "last":
            return Theory(
                nan,
                "none: no last-iterate guarantee; RM⁺ fails to converge on a 3 × 3 "
                "game (Cai et al. 2023)",
            )
        return AVERAGE_SQRT
    if player in ("optimistic_hedge", "optimistic_gd"):
        if iterate == "average":
            return (
                OPTIMISTIC_HEDGE_AVERAGE if player == "optimistic_hedge" else OPTIMISTIC_GD_AVERAGE
            )
        if player == "optimistic_hedge":
            return Theory(
                -math.inf,
                "→ 0, linear rate expected with a unique equilibrium and a small constant η "
                "(Daskalakis & Panageas 2019; Wei et al. 2021)",
            )
        return Theory(
            -math.inf,
            "→ 0 at a linear rate for a constant step below a smoothness threshold (Wei et al. "
            "2021, bilinear games over polytopes)",
        )
    return Theory(nan, "—")


def gap_slope(ts: np.ndarray, values: np.ndarray, level: float = 0.95) -> dict[str, float | str]:
    """Log-log slope of one gap curve over the tail of its grid, with the fit's interval.

    ``status`` is ``"fit"`` (least-squares slope of ``log gap`` on ``log t`` over
    :func:`~arena.reporting.stats.growth_window`, interval ``slope ± t_{k−2} s.e.`` from the
    residuals of the k points), ``"rounding"`` (the curve falls below :data:`ROUNDING_FLOOR`
    times its largest value at ``t_rounding``, inside the window), ``"zero"`` (0 at every
    checkpoint) or ``"n/a"`` (fewer than three points in the window). The curve is a mean over
    replicates; self-play of deterministic players is deterministic, so the interval measures how
    far the tail is from a straight line, not sampling noise.

    Examples
    --------
    >>> t = np.array([1.0, 10, 100, 1000, 10000])
    >>> r = gap_slope(t, 3.0 / t)
    >>> r["status"], round(r["slope"], 12), r["points"]
    ('fit', -1.0, 3)
    >>> gap_slope(t, np.exp(-t))["status"]
    'rounding'
    """
    ts = np.asarray(ts, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(ts)
    ts, values = ts[order], values[order]
    window = stats.growth_window(ts)
    out: dict[str, float | str] = {
        "status": "n/a",
        "slope": math.nan,
        "ci_low": math.nan,
        "ci_high": math.nan,
        "points": 0,
        "t_from": math.nan,
        "t_to": math.nan,
        "t_rounding": math.nan,
        "final": float(values[-1]) if values.size else math.nan,
    }
    if values.size == 0:
        return out
    peak = float(np.max(np.abs(values)))
    if peak == 0.0:
        out["status"] = "zero"
        return out
    inside = np.isin(ts, window)
    x, y = ts[inside], values[inside]
    out["t_from"], out["t_to"] = (float(x[0]), float(x[-1])) if x.size else (math.nan, math.nan)
    low = y <= ROUNDING_FLOOR * peak
    if low.any():
        out["status"] = "rounding"
        below = values <= ROUNDING_FLOOR * peak
        out["t_rounding"] = float(ts[np.argmax(below)])
        return out
    k = x.size
    if k < 3:
        return out
    lx, ly = np.log(x), np.log(y)
    xc = lx - lx.mean()
    sxx = float(xc @ xc)
    slope = float(ly @ xc / sxx)
    resid = ly - ly.mean() - slope * xc
    se = math.sqrt(float(resid @ resid) / (k - 2) / sxx)
    half = float(stats.t_quantile(k - 2, level)) * se
    out.update(status="fit", slope=slope, ci_low=slope - half, ci_high=slope + half, points=k)
    return out


def dynamics_table(rows: pd.DataFrame, cells: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per (game, player, iterate): the tail slope of the mean gap curve beside the theory's.

    ``cells`` maps each player label to its registry name and parameters (``player_label``,
    ``player``, ``player_params``), which fix the theory's rate (:func:`theory`).
    """
    spec: dict[str, tuple[str, dict]] = {}
    for c in cells.itertuples(index=False):
        try:
            params = json.loads(str(c.player_params) or "{}")
        except ValueError:
            params = {}
        spec[str(c.player_label)] = (str(c.player), params if isinstance(params, dict) else {})
    out = []
    for metric, iterate in GAPS.items():
        sub = rows.loc[(rows["metric"] == metric).to_numpy()]
        if sub.empty:
            continue
        keys = ["game_label", "player_label"]
        for (game, player), part in sub.groupby(keys, observed=True, sort=False):
            curve = part.groupby("t", observed=True)["value"].mean()
            fit = gap_slope(curve.index.to_numpy(), curve.to_numpy(), level)
            name, params = spec.get(str(player), (str(player), {}))
            th = theory(name, params, iterate)
            out.append(
                {
                    "game": str(game),
                    "player": str(player),
                    "iterate": iterate,
                    **fit,
                    "theory_slope": th.slope,
                    "theory": th.text,
                }
            )
    return pd.DataFrame(out, columns=COLUMNS)


def game_dynamics(ctx: ReportContext) -> Section | None:
    """The game-dynamics section; ``None`` when no gap metric is in the results."""
    metrics = [m for m in GAPS if m in ctx.logged]
    if not metrics:
        return None
    table = dynamics_table(ctx.rows, ctx.src.cells, ctx.level)
    order = {g: i for i, g in enumerate(ctx.games)}
    table = table.sort_values(
        ["game", "player", "iterate"], key=lambda c: c.map(order) if c.name == "game" else c
    ).reset_index(drop=True)
    ctx.write_csv("game dynamics: gap slopes", table, "dynamics_slopes.csv")
    blocks: list[Block] = [_slope_table(ctx, table), _reading(ctx)]
    for metric in metrics:
        curves = stats.curve_summary(ctx.rows, metric, ctx.level)
        ctx.write_csv(f"{metric} curves", curves, f"curves_{metric}.csv")
        what = "average strategies" if GAPS[metric] == "average" else "current strategies"
        blocks.append(
            ctx.add_figure(
                curves_figure(
                    f"dynamics_{metric}",
                    curves,
                    ctx.games,
                    ylabel=f"{metric} (units of A)",
                    caption=f"{code(metric)}: the duality gap of the {what} vs round t "
                    f"(log-log), mean over replicates with {ctx.pct} t-interval bands. A curve "
                    "that leaves the panel downwards reached rounding level (or 0).",
                    **ctx.figure_style(),
                )
            )
        )
    return Section("Game dynamics", "dynamics", blocks)


def _measured(r) -> str:
    if r.status == "fit":
        return f"{r.slope:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}]"
    if r.status == "rounding":
        return f"→ rounding level by t = {int(r.t_rounding):,}"
    if r.status == "zero":
        return "0 throughout (starts at equilibrium)"
    return "n/a"


def _theory_cell(r) -> str:
    s = r.theory_slope
    if np.isnan(s):
        return "none"
    if np.isinf(s):
        return "→ 0 (linear)"
    return f"{s:g}"


def _slope_table(ctx: ReportContext, table: pd.DataFrame) -> Table:
    by = {(r.game, r.player, r.iterate): r for r in table.itertuples(index=False)}
    pairs = list(dict.fromkeys(zip(table["game"], table["player"], strict=True)))
    iterates = [i for i in GAPS.values() if i in set(table["iterate"])]
    columns = ["game", "player"]
    for it in iterates:
        columns += [f"{it} iterate: slope [{ctx.pct}]", "theory"]
    body = []
    for game, player in pairs:
        line = [game, player]
        for it in iterates:
            r = by.get((game, player, it))
            line += ["—", "—"] if r is None else [_measured(r), _theory_cell(r)]
        body.append(line)
    return Table(
        columns,
        body,
        caption="Log-log slope of the duality gap over the tail of the grid (t from √T to T), "
        f"with the {ctx.pct} interval of the least-squares fit, beside the slope the theory "
        "gives (see the note; the full statements are in the CSV)",
        text_columns={0, 1, *range(2, len(columns))},
        anchor="dynamics-slopes",
    )


def _reading(ctx: ReportContext) -> Para:
    return Para(
        "The gap of the average strategies is (a_max − a_min)(R^row_t + R^col_t)/t exactly "
        f"(Freund & Schapire 1999; {code('matrix_game')}), so an O(√t) regret bound for each "
        "side gives slope −1/2 at worst (Hedge with an anytime rate, Regret Matching and RM⁺: "
        "upper bounds, a game may show faster). Optimistic dynamics with a constant step small "
        "enough keep the sum of the two regrets O(1) in self-play, hence −1: proved with its "
        f"constant for {code('optimistic_gd')} (its docstring, after the RVU property of "
        "Syrgkanis, Agarwal, Luo & Schapire 2015), expected for Optimistic Hedge (the same "
        "property; Rakhlin & Sridharan 2013 prove O(log T/T) for a variant of optimistic mirror "
        "descent with adaptive steps). The last iterate is another matter: Hedge with a "
        "constant step moves away from an interior equilibrium (Bailey & Piliouras 2018; "
        "Hedge's anytime rate shrinks its step inside exp(−η_t L_{t−1}), a map that result "
        "does not cover), simultaneous RM⁺ has no last-iterate guarantee and is shown not to "
        "converge on a 3 × 3 game (Cai, Farina, Grand-Clément, Kroer, Lee, Luo & Zheng 2023), "
        "while optimistic multiplicative weights (Optimistic Hedge) and optimistic gradient "
        "descent converge (Daskalakis & Panageas 2019), at a linear rate for a constant step "
        "small enough (Wei, Lee, Zhang & Luo 2021): such a curve drops to rounding level, and "
        "the table says when. A slope near 0 with a wide interval is a gap that oscillates "
        "without converging. The slopes are read along one run's grid, so they are rates in t "
        "for the parameters run: a step tuned for the horizon T is a constant within the run. "
        "Self-play of deterministic players is deterministic, and the interval is that of the "
        "fit (how straight the tail is on log-log axes), not a sampling interval.",
        note=True,
    )
