"""Two sections of Luo 2016's bounds measured: constant regret under a gap, and drifting games.

"Constant regret under a gap" is shown when the results hold ``pseudo_regret`` rows of
AdaNormalHedge (uniform prior) against ``bernoulli`` with its default means (every expert's mean
½ but the best one's, ½ − α). Luo 2016, §2.3, Theorem 5 (part 2) bounds the expected regret to
the best expert i* of any algorithm with ``R(u) ≤ √((u·C_T) A(u))`` by ``A(e_{i*})/α`` when the
loss vectors are independent and i* is better than every other expert by α in expectation; for
AdaNormalHedge, Theorem 4 (Eq. 2.6, a point mass is uniform on a one-element subset) gives
``A(e_{i*}) = 3(ln(1/q_{i*}) + ln B + 1)`` with ``B ≤ 5/2 + (3/2) ln(1 + T)``. With that upper
bound of B, A is a number and the proof's Jensen step applies (:func:`gap_constant`). The
pseudo-regret ``Σ_t p_t·(μ − μ_{i*})`` is an unbiased estimate of ``E[R_{T,i*}]`` (``p_t``
depends on the past only); with every other mean exactly α above, it is also ``α·Σ_t (1 −
p_{t,i*})``, so the theorem's second statement ``Σ_t E[1 − p_{t,i*}] ≤ A/α²`` is the same
inequality. The table gives, per gap, the mean at T with its interval, the bound, the ratios
(mean, interval and the largest replicate) and the growth exponent over the last decade: per
replicate ``ln(R_T / R_{t₀}) / ln(T/t₀)`` with t₀ the last checkpoint at or below T/10 (0 for a
regret that no longer grows; ½ for √T growth).

"Drifting-game bounds" is shown when the results hold ``regret`` and ``bound:regret`` rows of the
two general drifting-game algorithms of Luo 2016, Appendix A: ``dg_bandit`` (Algorithm 24 with
the exponential potential, which recovers EXP3; Theorem 21) and ``continuous_exp_weights``
(Algorithm 25 with the exponential potential; Theorem 22). Each declares its theorem's bound
(:func:`arena.reporting.stats.bound_ratios` pairs them). Theorem 21 bounds the pseudo-regret
``max_i E[Σ_t (ℓ_{t,I_t} − ℓ_{t,i})]``, an expectation: the logged ``regret``
``Σ_t p_t·ℓ_t − min_i L_{t,i}`` has an expectation at least as large (adaptive adversaries
included, since ``E_t[ℓ_{t,I_t}] = p_t·ℓ_t``), and its mean over replicates is compared with the
bound, with a t-interval; a single replicate above it is no violation. Theorem 22 holds on every
sequence: every replicate's ratio is compared.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from arena.reporting import stats
from arena.reporting.render import Block, Para, Table, code
from arena.reporting.sections.context import ReportContext, Section, Verdict, item_name
from arena.reporting.sections.formatting import ci, num

GAP_PLAYER = "ada_normal_hedge"
GAP_ADVERSARY = "bernoulli"

DG_THEOREMS = {
    "dg_bandit": "Luo 2016, App. A.2, Algorithm 24 (EXP3 potential), Theorem 21",
    "continuous_exp_weights": "Luo 2016, App. A.3, Algorithm 25 (exp potential), Theorem 22",
}
"""The drifting-game players this section reads, and the theorem each one's bound is."""

GAP_COLUMNS = [
    "game_label",
    "player_label",
    "gap",
    "n_actions",
    "t",
    "n",
    "mean",
    "ci_low",
    "ci_high",
    "bound",
    "ratio_mean",
    "ratio_ci_low",
    "ratio_ci_high",
    "ratio_max",
    "t_from",
    "slope",
    "slope_ci_low",
    "slope_ci_high",
    "bound_slope",
    "log_slope",
]
"""The columns of :func:`gap_table` (``stochastic_gap.csv``)."""


def gap_constant(n_actions: int, t: int) -> float:
    """Return AdaNormalHedge's ``A(e_{i*}) = 3(ln N + ln(5/2 + (3/2) ln(1 + t)) + 1)``.

    Luo 2016, §2.3, Theorem 4, Eq. (2.6) at a point mass with the uniform prior
    (``RE(e_{i*}‖q) = ln N``), with B replaced by its upper bound ``5/2 + (3/2) ln(1 + T)``
    (stated beside Eq. 2.5; our choice, which makes A deterministic, as the proof of Theorem 5
    needs for its Jensen step). ``A/α`` is Theorem 5's bound on ``E[R_{T,i*}]``.

    Examples
    --------
    >>> round(gap_constant(10, 10_000) / 0.1, 1)  # N = 10, T = 10⁴, α = 0.1
    182.8
    """
    b_bar = 2.5 + 1.5 * math.log1p(t)
    return 3.0 * (math.log(n_actions) + math.log(b_bar) + 1.0)


def _gap_of(adversary_params: str) -> float:
    """α of a ``bernoulli`` game with its default means (NaN when ``means`` are given)."""
    params = json.loads(adversary_params)
    if params.get("means") is not None:
        return math.nan
    return float(params.get("gap", math.nan))


def gap_table(rows: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per gap game of AdaNormalHedge (uniform prior): pseudo-regret at T against ``A/α``.

    Returns the columns :data:`GAP_COLUMNS`: the mean ``pseudo_regret`` at T with its t-interval,
    ``bound = A(e_{i*})/α`` (:func:`gap_constant` at T), the per-replicate ratio's mean,
    t-interval and largest value, and the growth exponent over ``[t_from, T]`` (per replicate,
    mean and t-interval) beside two references over the same rounds: the bound's own exponent
    (``bound_slope``, its ln ln T growth) and that of a regret growing like ln t
    (``log_slope``); empty without such games.

    Examples
    --------
    >>> rows = pd.DataFrame({
    ...     "metric": "pseudo_regret", "player": "ada_normal_hedge", "player_params": '{"q":null}',
    ...     "adversary": "bernoulli", "adversary_params": '{"best":0,"gap":0.1,"means":null}',
    ...     "game_label": "g", "player_label": "p", "n_actions": 10, "horizon": 10000, "seed": 0,
    ...     "replicate": [0, 1, 0, 1], "t": [1000, 1000, 10000, 10000],
    ...     "value": [10.0, 20.0, 10.0, 20.0]})
    >>> r = gap_table(rows).iloc[0]
    >>> float(r["mean"]), round(float(r["bound"]), 1), float(r["slope"]), int(r["t_from"])
    (15.0, 182.8, 0.0, 1000)
    """
    keep = (
        (rows["metric"].astype(str) == "pseudo_regret").to_numpy()
        & (rows["player"].astype(str) == GAP_PLAYER).to_numpy()
        & (rows["adversary"].astype(str) == GAP_ADVERSARY).to_numpy()
    )
    part = rows.loc[keep]
    if not part.empty:
        prior = part["player_params"].astype(str).map(lambda s: json.loads(s).get("q"))
        part = part.loc[prior.isna().to_numpy()]
    out = []
    for (game, player), cell in part.groupby(["game_label", "player_label"], observed=True):
        gap = _gap_of(str(cell["adversary_params"].iloc[0]))
        if not gap > 0:
            continue
        horizon = int(cell["horizon"].max())
        n_act = int(cell["n_actions"].iloc[0])
        times = np.sort(cell["t"].unique())
        early = times[times <= horizon / 10]
        wide = cell.pivot_table(index=["seed", "replicate"], columns="t", values="value")
        final = wide[horizon].to_numpy(dtype=np.float64)
        bound = gap_constant(n_act, horizon) / gap
        r = stats.mean_ci(final, level)
        ratio = stats.mean_ci(final / bound, level)
        row = {
            "game_label": game,
            "player_label": player,
            "gap": gap,
            "n_actions": n_act,
            "t": horizon,
            "n": r["n"],
            "mean": r["mean"],
            "ci_low": r["ci_low"],
            "ci_high": r["ci_high"],
            "bound": bound,
            "ratio_mean": ratio["mean"],
            "ratio_ci_low": ratio["ci_low"],
            "ratio_ci_high": ratio["ci_high"],
            "ratio_max": float(np.max(final / bound)),
            "t_from": math.nan,
            "slope": math.nan,
            "slope_ci_low": math.nan,
            "slope_ci_high": math.nan,
            "bound_slope": math.nan,
            "log_slope": math.nan,
        }
        if early.size:
            t0 = int(early[-1])
            start = wide[t0].to_numpy(dtype=np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                slopes = np.log(final / start) / math.log(horizon / t0)
            s = stats.mean_ci(slopes, level)
            span = math.log(horizon / t0)
            row.update(t_from=t0, slope=s["mean"], slope_ci_low=s["ci_low"])
            row["slope_ci_high"] = s["ci_high"]
            row["bound_slope"] = math.log(gap_constant(n_act, horizon) / gap_constant(n_act, t0))
            row["bound_slope"] /= span
            row["log_slope"] = math.log(math.log(horizon) / math.log(t0)) / span
        out.append(row)
    if not out:
        return pd.DataFrame(columns=GAP_COLUMNS)
    return pd.DataFrame(out, columns=GAP_COLUMNS).sort_values("gap").reset_index(drop=True)


def stochastic_gap(ctx: ReportContext) -> Section | None:
    """The "Constant regret under a gap" section; ``None`` without AdaNormalHedge gap games."""
    if "pseudo_regret" not in ctx.logged:
        return None
    table = gap_table(ctx.rows, ctx.level)
    if table.empty:
        return None
    ctx.write_csv("AdaNormalHedge under a gap at T", table, "stochastic_gap.csv")
    body = [
        [
            str(r.game_label),
            str(r.player_label),
            f"{r.gap:g}",
            str(int(r.n_actions)),
            str(int(r.t)),
            num(r.mean),
            ci(r.ci_low, r.ci_high),
            num(r.bound),
            f"{num(r.ratio_mean)} {ci(r.ratio_ci_low, r.ratio_ci_high)}",
            num(r.ratio_max),
            f"{num(r.slope)} {ci(r.slope_ci_low, r.slope_ci_high)}"
            + (f" (from t = {int(r.t_from)})" if np.isfinite(r.t_from) else ""),
            f"{num(r.bound_slope)} / {num(r.log_slope)}",
        ]
        for r in table.itertuples(index=False)
    ]
    over = {i for i, r in enumerate(table.itertuples(index=False)) if r.ratio_max > 1}
    blocks: list[Block] = [
        Para(
            f"Luo 2016, §2.3, Theorem 5 (part 2): when the loss vectors are independent and one "
            f"expert i* is better than every other by α in expectation, an algorithm with "
            f"R(u) ≤ √((u·C_T)·A(u)) has E[R_T,i*] ≤ A(e_i*)/α and Σ_t E[1 − p_t,i*] ≤ A/α², "
            f"constant in T. For AdaNormalHedge with the uniform prior, Theorem 4 (Eq. 2.6) "
            f"gives A = 3(ln N + ln B + 1) with B ≤ 5/2 + (3/2) ln(1 + T) (we use this upper "
            f"bound, so A is a number). Measured: {code('pseudo_regret')} Σ_t p_t·(μ − μ_i*), "
            f"an unbiased estimate of E[R_T,i*], against {code('bernoulli')} losses (the best "
            f"mean ½ − α, the others ½, so it also equals α·Σ_t (1 − p_t,i*)). The growth "
            f"exponent is, per replicate, ln(R_T/R_t₀)/ln(T/t₀) over the last decade (0: flat; "
            f"√T growth gives 0.5); beside it, over the same rounds, the bound's own exponent "
            f"(its ln ln T growth) and that of a regret growing like ln t. AdaNormalHedge does "
            f"not depend on T, so its checkpoints are its regret against T."
        ),
        Table(
            [
                "game",
                "player",
                "α",
                "N",
                "T",
                "pseudo-regret at T",
                "CI",
                "A/α",
                "ratio (mean, CI)",
                "max ratio",
                "growth exponent (mean, CI)",
                "A/α's / ln t's",
            ],
            body,
            caption=f"Regret to the best expert under a gap at T: mean over replicates with its "
            f"{ctx.pct} t-interval, Theorem 5's bound, and the ratio to it (mean, interval, "
            f"largest replicate).",
            bad_rows=over,
            text_columns={0, 1},
        ),
    ]
    verdict = Verdict(
        "Regret under a gap over Theorem 5's bound at T (every replicate)",
        "stochastic-gap",
        [
            item_name(r.game_label, r.player_label)
            for i, r in enumerate(table.itertuples(index=False))
            if i in over
        ],
        total=len(table),
    )
    return Section("Constant regret under a gap", "stochastic-gap", blocks, verdicts=[verdict])


def drifting_table(rows: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per game and drifting-game player (:data:`DG_THEOREMS`): ``regret`` against its declared
    bound at T, the columns of :func:`arena.reporting.stats.bound_ratios` plus ``theorem`` and
    ``protocol``; empty without such rows."""
    keep = rows["player"].astype(str).isin(list(DG_THEOREMS)).to_numpy()
    part = rows.loc[keep]
    if part.empty:
        return pd.DataFrame()
    ratios = stats.bound_ratios(part, level)
    ratios = ratios.loc[(ratios["metric"] == "regret").to_numpy()]
    if ratios.empty:
        return pd.DataFrame()
    labels = part[["player_label", "player", "game_label", "protocol"]].drop_duplicates()
    labels = labels.astype(str).rename(columns={"player_label": "player_lbl"})
    out = ratios.merge(
        labels, left_on=["player", "game"], right_on=["player_lbl", "game_label"], how="left",
        suffixes=("", "_name"),
    )  # fmt: skip
    out["theorem"] = out["player_name"].map(DG_THEOREMS)
    cols = ["game", "player", "protocol", "theorem", "t", "basis", "n", "value", "bound"]
    cols += ["ratio_mean", "ratio_ci_low", "ratio_ci_high", "ratio_max"]
    return out[cols].sort_values(["theorem", "game"]).reset_index(drop=True)


def drifting_bounds(ctx: ReportContext) -> Section | None:
    """The "Drifting-game bounds" section; ``None`` without those players' bounded regret."""
    if "bound:regret" not in ctx.logged:
        return None
    table = drifting_table(ctx.rows, ctx.level)
    if table.empty:
        return None
    ctx.write_csv("drifting-game bounds at T", table, "drifting_bounds.csv")
    body = [
        [
            str(r.game),
            str(r.player),
            str(r.theorem),
            str(r.basis),
            num(r.value),
            num(r.bound),
            num(r.ratio_mean),
            ci(r.ratio_ci_low, r.ratio_ci_high),
            num(r.ratio_max) if np.isfinite(r.ratio_max) else "—",
        ]
        for r in table.itertuples(index=False)
    ]
    over = {
        i
        for i, r in enumerate(table.itertuples(index=False))
        # in expectation: marked unless the whole interval is below 1 (the gallery's rule)
        if (r.ratio_max > 1 if np.isfinite(r.ratio_max) else not r.ratio_ci_high <= 1)
    }
    blocks: list[Block] = [
        Para(
            f"The general drifting-game algorithms of Luo 2016, Appendix A, with the "
            f"exponential potential. {code('dg_bandit')} is Algorithm 24 (the bandit problem as "
            f"a drifting game with importance-weighted chip movements; it recovers EXP3 without "
            f"explicit exploration), tuned with η* = √(2 ln(1/ε)/(T(1 + K√e))) at ε = 1/K; "
            f"Theorem 21 bounds its pseudo-regret max_i E[Σ_t (ℓ_t,I_t − ℓ_t,i)] by "
            f"R = (1/η) ln(1/ε) + (T/η) ln((e^η + e^−η)/2 + ½ K e^η η²) against any adversary, "
            f"adaptive included. Its logged {code('regret')} Σ_t p_t·ℓ_t − min_i L_t,i has an "
            f"expectation at least that large, so the mean over replicates is compared with R "
            f'(basis "in expectation": the interval is the mean\'s; a single replicate above R '
            f"is no violation). {code('continuous_exp_weights')} is Algorithm 25 (a density "
            f"over the domain, its mean played; the integrals by Gauss–Legendre quadrature, η "
            f"tuned for ε = T^−d); Theorem 22's regret bound R + Tε^(1/d) holds on every "
            f"sequence, and the player declares it in the measure it integrates against (its "
            f'docstring derives it), so every replicate is compared (basis "per replicate").'
        ),
        Table(
            [
                "game",
                "player",
                "algorithm and bound",
                "basis",
                "regret at T",
                "bound",
                "ratio",
                "CI",
                "max ratio",
            ],
            body,
            caption=f"Regret at T over the bound of its theorem: the mean (and its {ctx.pct} "
            f"t-interval) of the ratio, per replicate where the bound holds on every sequence, "
            f"of the means where it holds in expectation; the largest replicate's ratio where "
            f"it applies. A row is marked where a replicate's ratio exceeds 1 (a bound on every "
            f"sequence) or where the mean's interval is not below 1 (a bound in expectation, "
            f"not shown to hold at this level).",
            bad_rows=over,
            text_columns={0, 1, 2, 3},
        ),
    ]
    verdict = Verdict(
        "Drifting-game regret over Theorems 21 and 22's bounds at T",
        "drifting-bounds",
        [
            item_name(r.game, r.player)
            for i, r in enumerate(table.itertuples(index=False))
            if i in over
        ],
        total=len(table),
    )
    return Section("Drifting-game bounds", "drifting-bounds", blocks, verdicts=[verdict])
