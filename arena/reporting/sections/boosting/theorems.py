"""The boosting theorems measured beside their bounds: Luo 2016, Theorems 3, 10, 14 and 15.

* **Theorem 3** (rows ``vote_train_error`` / ``margin_frac`` of ``normal_hedge_dt`` against
  ``edge_boosting_oracle``, a weak learner with edge γ on every round): NH-Boost.DT's training
  error and fraction of examples with margin ≤ θ against T, per replicate over the bound we make
  explicit from the theorem's proof (:func:`theorem3_bound`), and their decay rates fitted against
  the theorem's exponents (:func:`theorem3_table`).
* **Theorem 10, sample complexity** (rows ``mistakes`` of ``online_bbm`` / ``adaboost_ol`` against
  ``edge_oracle`` with a ``warmup``): the examples a booster needs to reach error rate ε after T_0
  uninformative rounds, beside the proof's ``T_0/(2ε)`` and a per-replicate bound
  (:func:`theorem10_table`).
* **Theorems 14 and 15** (rows ``loss`` of ``ogb_hull`` against ``hull_lower_bound``): the loss over
  Theorem 14's bound ``8β_D D² T/N + L_D R(T)``, and the slope of the regret to ``f̄ = (1/M)Σ_j f_j``
  against T/N (:func:`theorem14_table`, :func:`theorem15_table`).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from arena.reporting import stats
from arena.reporting.render import Block, Para, Table, code
from arena.reporting.sections.context import ReportContext
from arena.reporting.sections.formatting import ci

THEOREM3_MIN_FRACTION = 2e-3
"""The fit window of :func:`decay_rate`: the checkpoints where the replicates' mean fraction is at
least this (≥ 4 examples of 2000 per replicate: a logarithm of a count below a few is noise)."""

THEOREM3_MAX_FRACTION = 0.5
"""... and at most this (before, the fraction is still near its start and not yet exponential)."""

THEOREM3_MIN_T = 20
"""... and at rounds t ≥ this: in the first rounds the fractions still move from their start
(about ½ − γ wrong after one round) and jump with the parity of t (a tie counts as an error)."""

THEOREM10_DELTA = 0.01
"""δ of the per-replicate form of Theorem 10's bound (:func:`theorem10_bound`): each replicate's
warm-up mistakes fall below ``T_0/2 − √(T_0 ln(1/δ)/2)`` with probability at most δ (Hoeffding),
the construction's δ as well (T_0 = S/(4γ) with S ≥ ln(1/δ)/γ)."""

THEOREM10_EPSILONS = (0.1, 0.05)
"""The error rates ε whose sample complexity the Theorem 10 table reads."""

THEOREM15_INTERVAL = (1.0 / 4000.0, 8.0)
"""The interval the slope of regret against T/N must lie in: Theorem 15's constant c = 1/4000
(regret ≥ c·T/N with probability 0.1, in the theorem's environment) and Theorem 14's leading
constant 8β_D D² = 8 (Luo 2016, §3.2.2 and §3.2.4)."""


def _params(text: object) -> dict:
    try:
        out = json.loads(str(text))
    except (TypeError, ValueError):
        return {}
    return out if isinstance(out, dict) else {}


# ----------------------------------------------------------------------------------------------
# Theorem 3


def nhdt_log_factor(t: int) -> float:
    """Return ``1 − b_0 = ½ Σ_{τ≤t} (e^{4/(3τ)} − 1)``, the factor of NormalHedge.DT's quantile
    bound (Luo 2016, proof of Corollary 2), ``O(ln t)``: 6.05 at t = 1000.

    Examples
    --------
    >>> round(nhdt_log_factor(1), 6)  # ½(e^{4/3} − 1)
    1.396834
    """
    tau = np.arange(1, int(t) + 1, dtype=np.float64)
    return 0.5 * float(np.expm1(4.0 / (3.0 * tau)).sum())


def theorem3_bound(t: int, gamma: float, theta: float) -> float:
    """Return our explicit form of Luo 2016, Theorem 3: the fraction of NH-Boost.DT's training
    examples with margin ≤ θ after t rounds when every edge is at least γ (θ = 0: the error).

    The theorem's proof (Eq. 2.4) with NormalHedge.DT's quantile bound ``R_(k)(t) ≤ √(3t ln((N/k)
    (1 − b_0) + 1))`` (Corollary 2 before its last relaxation, :func:`nhdt_log_factor`): an example
    with margin ≤ θ has regret at least ``Σ_s γ_s − θt/2 ≥ t(γ − θ/2)``, and fewer than k examples
    have a regret that large once the k-th largest regret's bound is below it, so the fraction is at
    most ``(1 − b_0)/(exp(t(2γ − θ)²/12) − 1)``: the theorem's ``Õ(exp(−tγ²/3))`` at θ = 0, with
    its Õ's factor ``1 − b_0 = O(ln t)`` and the −1 made explicit (ours). For θ > 0 the proof gives
    the exponent ``t(2γ − θ)²/12``, not the ``t(θ − 2γ)²/3`` the theorem states (which at θ = 0
    would be four times the training error's). Infinite for θ ≥ 2γ.

    Examples
    --------
    >>> round(theorem3_bound(1000, 0.1, 0.0), 4)  # 1 − b_0 = 6.05, e^{10/3} − 1 = 27.03
    0.2239
    """
    x = float(t) * (2.0 * float(gamma) - float(theta)) ** 2 / 12.0
    if theta >= 2.0 * gamma or x <= 0.0:
        return math.inf
    return nhdt_log_factor(t) / math.expm1(x)


def binary_kl(a: float, b: float) -> float:
    """Return ``KL(a ‖ b)`` of two Bernoulli laws, in nats.

    Examples
    --------
    >>> round(binary_kl(0.5, 0.6), 6)
    0.020411
    """

    def term(p: float, q: float) -> float:
        return 0.0 if p == 0.0 else p * math.log(p / q)

    return term(a, b) + term(1.0 - a, 1.0 - b)


def decay_rate(ts: np.ndarray, fractions: np.ndarray, window: np.ndarray) -> float:
    """Return ``−slope`` of the least-squares line of ``ln(fraction)`` against t over the window's
    checkpoints where the fraction is positive (NaN with fewer than 3 such points).

    Examples
    --------
    >>> ts = np.arange(1, 6.0)
    >>> round(decay_rate(ts, np.exp(-0.3 * ts), np.ones(5, bool)), 12)
    0.3
    """
    use = window & (fractions > 0)
    if use.sum() < 3:
        return math.nan
    slope = np.polyfit(ts[use].astype(float), np.log(fractions[use]), 1)[0]
    return float(-slope)


def _edge_games(ctx: ReportContext) -> pd.DataFrame:
    rows = ctx.rows
    keep = (rows["adversary"].astype(str) == "edge_boosting_oracle").to_numpy() & rows[
        "metric"
    ].astype(str).isin(["vote_train_error", "margin_frac"]).to_numpy()
    return rows.loc[keep]


def theorem3_table(ctx: ReportContext) -> pd.DataFrame:
    """Per game, player and θ (θ = 0 from ``vote_train_error``, the others from
    ``margin_frac``): the fraction at T (mean, interval), our bound at T (:func:`theorem3_bound`),
    the largest measured/bound ratio over every replicate and checkpoint, the decay rate fitted per
    replicate (:func:`decay_rate`, mean and interval) beside the exponent the proof gives
    ``(2γ − θ)²/12``, the one the theorem states (``γ²/3`` at θ = 0, ``(θ − 2γ)²/3`` above) and
    the Chernoff exponent ``KL(½ + θ/2 ‖ ½ + γ)`` of a vote of independent hypotheses each right
    with probability ½ + γ (ours, for comparison)."""
    rows = _edge_games(ctx)
    columns = [
        "game",
        "player",
        "gamma",
        "theta",
        "T",
        "n_examples",
        "at_T",
        "at_T_ci_low",
        "at_T_ci_high",
        "bound_at_T",
        "ratio_max",
        "rate",
        "rate_ci_low",
        "rate_ci_high",
        "window_first",
        "window_last",
        "proof_rate",
        "stated_rate",
        "chernoff_rate",
    ]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    rows = rows.assign(
        theta=np.where(rows["metric"].astype(str) == "vote_train_error", 0.0, rows["param"]),
        game=rows["game_label"].astype(str),
        player_l=rows["player_label"].astype(str),
    )
    # θ = 0 is logged twice when margin_frac has it: the error metric is kept
    rows = rows[~((rows["metric"].astype(str) == "margin_frac") & (rows["theta"] == 0.0))]
    out = []
    for (game, player, theta), part in rows.groupby(["game", "player_l", "theta"], sort=True):
        gamma = float(_params(part["adversary_params"].iloc[0]).get("edge", math.nan))
        if not theta < 2.0 * gamma:
            continue
        wide = part.pivot_table(index="t", columns="replicate", values="value").sort_index()
        ts = wide.index.to_numpy()
        horizon = int(ts.max())
        bounds = np.array([theorem3_bound(int(t), gamma, theta) for t in ts])
        ratio_max = float(np.nanmax(wide.to_numpy() / bounds[:, None]))
        mean = wide.mean(axis=1).to_numpy()
        window = (
            (mean >= THEOREM3_MIN_FRACTION)
            & (mean <= THEOREM3_MAX_FRACTION)
            & (ts >= THEOREM3_MIN_T)
        )
        rates = [decay_rate(ts, wide[r].to_numpy(float), window) for r in wide.columns]
        rate = stats.mean_ci(rates, level=ctx.level)
        at_t = stats.mean_ci(wide.loc[horizon].to_numpy(float), level=ctx.level)
        stated = gamma**2 / 3.0 if theta == 0.0 else (theta - 2.0 * gamma) ** 2 / 3.0
        out.append(
            {
                "game": game,
                "player": player,
                "gamma": gamma,
                "theta": float(theta),
                "T": horizon,
                "n_examples": int(part["n_actions"].iloc[0]),
                "at_T": at_t["mean"],
                "at_T_ci_low": at_t["ci_low"],
                "at_T_ci_high": at_t["ci_high"],
                "bound_at_T": theorem3_bound(horizon, gamma, theta),
                "ratio_max": ratio_max,
                "rate": rate["mean"],
                "rate_ci_low": rate["ci_low"],
                "rate_ci_high": rate["ci_high"],
                "window_first": int(ts[window].min()) if window.any() else -1,
                "window_last": int(ts[window].max()) if window.any() else -1,
                "proof_rate": (2.0 * gamma - theta) ** 2 / 12.0,
                "stated_rate": stated,
                "chernoff_rate": binary_kl(0.5 + theta / 2.0, 0.5 + gamma),
            }
        )
    return pd.DataFrame(out, columns=columns)


def theorem3_blocks(ctx: ReportContext) -> list[Block]:
    """Theorem 3's table and its explanation; nothing without ``edge_boosting_oracle`` games."""
    table = theorem3_table(ctx)
    if table.empty:
        return []
    ctx.write_csv("NH-Boost.DT's rates (Theorem 3)", table, "boosting_theorem3.csv")
    body = [
        [
            str(r.game),
            str(r.player),
            f"{r.theta:g}",
            f"{r.at_T:.2e}",
            ci(r.at_T_ci_low, r.at_T_ci_high),
            f"{r.bound_at_T:.3g}",
            f"{r.ratio_max:.3g}",
            f"{r.rate:.4f}",
            ci(r.rate_ci_low, r.rate_ci_high),
            f"{r.window_first}–{r.window_last}",
            f"{r.proof_rate:.5f}",
            f"{r.stated_rate:.5f}",
            f"{r.chernoff_rate:.4f}",
        ]
        for r in table.itertuples(index=False)
    ]
    gamma = float(table["gamma"].iloc[0])
    return [
        Para(
            f"Luo 2016, §2.2, Theorem 3: when every edge is at least γ, NH-Boost.DT's training "
            f"error after T rounds is Õ(exp(−Tγ²/3)) and its fraction of examples with margin ≤ θ "
            f"(θ < 2γ) vanishes. {code('edge_boosting_oracle')} gives every round a hypothesis "
            f"right on a random set of examples of weight ½ + γ (γ = {gamma:g} here), so the edge "
            f"is known. The bound (ours, from the theorem's proof, Eq. 2.4, with NormalHedge.DT's "
            f"quantile bound of Corollary 2 before its last relaxation): the fraction with margin "
            f"≤ θ is at most (1 − b_0)/(exp(T(2γ − θ)²/12) − 1) with 1 − b_0 = ½ Σ_{{τ≤T}} "
            f"(e^{{4/(3τ)}} − 1) = O(ln T) — at θ = 0 the theorem's rate γ²/3 with the Õ's factor "
            f"made explicit; for θ > 0 the proof's steps give the exponent (2γ − θ)²/12, a "
            f"quarter of the (θ − 2γ)²/3 the theorem states. The decay rate is the slope of "
            f"ln(fraction) against T, fitted per replicate over the checkpoints "
            f"t ≥ {THEOREM3_MIN_T} where the mean fraction lies in [{THEOREM3_MIN_FRACTION:g}, "
            f"{THEOREM3_MAX_FRACTION:g}]."
        ),
        Table(
            [
                "game",
                "player",
                "θ",
                "fraction at T",
                "CI",
                "bound at T",
                "max ratio",
                "decay rate",
                "CI",
                "fit rounds",
                "proof (2γ−θ)²/12",
                "stated",
                "KL(½+θ/2‖½+γ)",
            ],
            body,
            caption="θ = 0 is the training error. Max ratio: the largest measured/bound over "
            "every replicate and checkpoint (≤ 1: the bound holds). Stated: the theorem's exponent "
            "(γ²/3 at θ = 0, (θ − 2γ)²/3 above). KL: the Chernoff exponent of a majority of "
            "independent hypotheses each right with probability ½ + γ (ours, for comparison; "
            "the theorem's bound covers every weak learner).",
            text_columns={0, 1},
        ),
    ]


# ----------------------------------------------------------------------------------------------
# Theorem 10, sample complexity


def theorem10_bound(warmup: int, eps: float, delta: float = THEOREM10_DELTA) -> float:
    """Return ``(T_0/2 − √(T_0 ln(1/δ)/2))/ε``: with probability 1 − δ, the rounds any booster
    needs before its error rate (mistakes/t) is at most ε on Theorem 10's second construction.

    Every warm-up round is a fair coin to every booster (Luo 2016, §3.1.3, proof of Theorem 10),
    so its warm-up mistakes are Bin(T_0, ½), below ``T_0/2 − √(T_0 ln(1/δ)/2)`` with probability at
    most δ (Hoeffding), and ``mistakes_t/t ≤ ε`` needs ``t ≥ mistakes_{T_0}/ε``; the proof's
    Ω(T_0/ε) with this constant is ours.

    Examples
    --------
    >>> round(theorem10_bound(125, 0.1), 2)
    455.35
    """
    t0 = float(warmup)
    return (0.5 * t0 - math.sqrt(t0 * math.log(1.0 / delta) / 2.0)) / float(eps)


def first_crossing(ts: np.ndarray, mistakes: np.ndarray, eps: float, after: int) -> tuple[int, int]:
    """Return ``(low, high)`` bracketing the first round ``t > after`` with ``mistakes_t ≤ εt``,
    from the mistakes read at the checkpoints ``ts`` only.

    ``high`` is the first checkpoint that satisfies it. ``low`` is the least round that can, given
    that the mistakes never decrease: between checkpoints ``t_a < t_b`` a round t satisfies it
    only if ``M_{t_a} ≤ εt``, so the first gap (from round 0 with no mistakes) where
    ``max(t_a + 1, ⌈M_{t_a}/ε⌉, after + 1) ≤ t_b`` gives that maximum. ``(−1, −1)`` when no
    checkpoint satisfies it.

    Examples
    --------
    >>> first_crossing(np.array([10, 20, 40]), np.array([5, 6, 6]), 0.2, 10)  # 6 ≤ 0.2·40
    (30, 40)
    """
    order = np.argsort(ts)
    ts = np.concatenate([[0], np.asarray(ts, dtype=np.int64)[order]])
    mistakes = np.concatenate([[0.0], np.asarray(mistakes, dtype=float)[order]])
    ok = np.flatnonzero((ts > after) & (mistakes <= eps * ts + 1e-9))
    if ok.size == 0:
        return -1, -1
    high = int(ts[ok[0]])
    for a in range(len(ts) - 1):
        t_b = int(ts[a + 1])
        if t_b <= after:
            continue
        low = max(int(ts[a]) + 1, math.ceil(mistakes[a] / eps - 1e-9), after + 1)
        if low <= t_b:
            return min(low, high), high
    return high, high


def theorem10_table(ctx: ReportContext, epsilons=THEOREM10_EPSILONS) -> pd.DataFrame:
    """Per booster, warm-up T_0 and ε: the first round at which mistakes/t ≤ ε
    (:func:`first_crossing`, both ends, mean and interval of the low end), its ratio to the proof's
    ``T_0/(2ε)``, our per-replicate bound (:func:`theorem10_bound`) and the largest bound/measured
    ratio over the replicates (≤ 1: the bound holds)."""
    columns = [
        "game",
        "player",
        "booster",
        "edge",
        "warmup",
        "eps",
        "replicates",
        "reached",
        "t_eps_low",
        "t_eps_low_ci_low",
        "t_eps_low_ci_high",
        "t_eps_high",
        "leading",
        "over_leading",
        "over_leading_ci_low",
        "over_leading_ci_high",
        "bound",
        "ratio_max",
    ]
    rows = ctx.rows
    keep = (rows["adversary"].astype(str) == "edge_oracle").to_numpy() & (
        rows["metric"].astype(str) == "mistakes"
    ).to_numpy()
    rows = rows.loc[keep]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    warm = rows["adversary_params"].astype(str).map(lambda p: int(_params(p).get("warmup", 0) or 0))
    rows = rows.assign(warmup=warm)[warm > 0]
    out = []
    for (game, player), part in rows.groupby(
        [rows["game_label"].astype(str), rows["player_label"].astype(str)], sort=True
    ):
        t0 = int(part["warmup"].iloc[0])
        edge = float(_params(part["adversary_params"].iloc[0]).get("edge", math.nan))
        wide = part.pivot_table(index="t", columns="replicate", values="value").sort_index()
        ts = wide.index.to_numpy()
        for eps in epsilons:
            brackets = [first_crossing(ts, wide[r].to_numpy(), eps, t0) for r in wide.columns]
            reached = [b for b in brackets if b[0] > 0]
            lows = np.array([b[0] for b in reached], dtype=float)
            highs = np.array([b[1] for b in reached], dtype=float)
            leading = t0 / (2.0 * eps)
            bound = theorem10_bound(t0, eps)
            low = stats.mean_ci(lows, level=ctx.level)
            over = stats.mean_ci(lows / leading, level=ctx.level)
            all_reached = len(reached) == len(brackets)
            out.append(
                {
                    "game": game,
                    "player": player,
                    "booster": str(part["player"].iloc[0]),
                    "edge": edge,
                    "warmup": t0,
                    "eps": eps,
                    "replicates": len(brackets),
                    "reached": len(reached),
                    "t_eps_low": low["mean"],
                    "t_eps_low_ci_low": low["ci_low"],
                    "t_eps_low_ci_high": low["ci_high"],
                    "t_eps_high": float(highs.mean()) if highs.size else math.nan,
                    "leading": leading,
                    "over_leading": over["mean"],
                    "over_leading_ci_low": over["ci_low"],
                    "over_leading_ci_high": over["ci_high"],
                    "bound": bound,
                    # a replicate that never reaches ε within T needs more than T: ratio < bound/T
                    "ratio_max": float((bound / lows).max()) if all_reached else math.nan,
                }
            )
    return pd.DataFrame(out, columns=columns)


def theorem10_blocks(ctx: ReportContext) -> list[Block]:
    """Theorem 10's sample-complexity table; nothing without ``edge_oracle`` warm-up games."""
    table = theorem10_table(ctx)
    if table.empty:
        return []
    ctx.write_csv("examples needed after a warm-up (Theorem 10)", table, "boosting_theorem10.csv")
    body = [
        [
            str(r.player),
            str(r.warmup),
            f"{r.eps:g}",
            f"{r.t_eps_low:.0f}",
            ci(r.t_eps_low_ci_low, r.t_eps_low_ci_high),
            f"{r.t_eps_high:.0f}",
            f"{r.leading:.0f}",
            f"{r.over_leading:.3f}",
            ci(r.over_leading_ci_low, r.over_leading_ci_high),
            f"{r.bound:.0f}",
            f"{r.ratio_max:.3f}",
            f"{r.reached} / {r.replicates}",
        ]
        for r in table.itertuples(index=False)
    ]
    return [
        Para(
            f"Luo 2016, §3.1.3, Theorem 10's sample-complexity half: on the proof's second "
            f"construction the weak learners carry no information for T_0 = S/(4γ) rounds "
            f"({code('edge_oracle')} with {code('warmup')}), so every booster errs with "
            f"probability ½ there and needs Ω(T_0/ε) = Ω(S/(εγ)) examples to reach error rate "
            f"ε. Measured: the first round t > T_0 at which mistakes/t ≤ ε, per replicate (the "
            f"log grid of checkpoints brackets it; the low end is the least round it can be, as "
            f"the mistakes never decrease), beside the proof's leading term T_0/(2ε) and our "
            f"per-replicate bound (T_0/2 − √(T_0 ln(1/δ)/2))/ε, δ = {THEOREM10_DELTA:g} "
            f"(Hoeffding on the warm-up's fair coins; the constants are ours)."
        ),
        Table(
            [
                "player",
                "T_0",
                "ε",
                "first t (low)",
                "CI",
                "first t (high)",
                "T_0/(2ε)",
                "low / T_0/(2ε)",
                "CI",
                "bound",
                "max bound / low",
                "reached",
            ],
            body,
            caption="Means over the replicates that reach ε within T (reached). Max bound / low: "
            "the largest ratio of the bound to a replicate's first round (≤ 1: the bound holds).",
            text_columns={0},
        ),
    ]


# ----------------------------------------------------------------------------------------------
# Theorems 14 and 15


def hull_weights_square_sum(n: int) -> float:
    """Return ``Σ_i w_i²`` of ogb_hull's mixing weights ``w_i = 2i/(N(N+1))``:
    ``2(2N + 1)/(3N(N + 1))``.

    Examples
    --------
    >>> round(hull_weights_square_sum(2), 6)  # (1/3)² + (2/3)²
    0.555556
    """
    n = float(n)
    return 2.0 * (2.0 * n + 1.0) / (3.0 * n * (n + 1.0))


def expected_hull_regret(t: float, n: int, m: int, eps: float) -> float:
    """Return ``E[regret to f̄]`` of ogb_hull over N sampling Hedge learners on
    ``hull_lower_bound`` after t rounds: ``t(¼ − ε²)(Σ_i w_i² − 1/M)/2`` (ours).

    Each learner outputs ``f_k(x_t)`` for a k drawn from its weights, a Bernoulli(y*_t) bit
    independent of the past whatever k is, so ``ŷ_t = Σ_i w_i b_i`` is unbiased with variance
    ``y*(1 − y*)Σ w_i²`` (the lanes' draws taken independent), and ``f̄`` has variance
    ``y*(1 − y*)/M``, with ``y*(1 − y*) = ¼ − ε²`` for both labels.

    Examples
    --------
    >>> round(expected_hull_regret(1000, 2, 100, 0.05), 2)
    67.51
    """
    return float(t) * (0.25 - eps**2) * (hull_weights_square_sum(n) - 1.0 / m) / 2.0


def _hull_rows(ctx: ReportContext) -> pd.DataFrame:
    rows = ctx.rows
    keep = (
        (rows["adversary"].astype(str) == "hull_lower_bound").to_numpy()
        & (rows["player"].astype(str) == "ogb_hull").to_numpy()
        & (rows["metric"].astype(str) == "loss").to_numpy()
    )
    rows = rows.loc[keep]
    if rows.empty:
        return rows
    player = rows["player_params"].astype(str).map(_params)
    adversary = rows["adversary_params"].astype(str).map(_params)
    n_boost = adversary.map(lambda p: int(p.get("n_boost", 5)))
    m = [
        int(a["m_functions"]) if a.get("m_functions") is not None else 4000 * nb
        for a, nb in zip(adversary, n_boost, strict=True)
    ]
    weak = player.map(lambda p: p.get("weak_learner_params") or {})
    k = [2 * mm if w.get("symmetric") else mm for w, mm in zip(weak, m, strict=True)]
    eps = 1.0 / (10.0 * np.sqrt(n_boost.to_numpy(float)))
    out = rows.assign(
        n=player.map(lambda p: int(p.get("n_learners", 20))).to_numpy(),
        m=m,
        k=k,
        sample=weak.map(lambda w: bool(w.get("sample", False))).to_numpy(),
        lipschitz=1.0 + player.map(lambda p: float(p.get("label_bound", 1.0))).to_numpy(),
        eps=eps,
    )
    t = out["t"].to_numpy(float)
    comparator = t * (0.25 - out["eps"].to_numpy() ** 2) / (2.0 * out["m"].to_numpy(float))
    return out.assign(regret=out["value"].to_numpy(float) - comparator)


def theorem14_bound(horizon: int, n: int, k: int, lipschitz: float) -> float:
    """Return Theorem 14's bound ``8β_D D² T/N + L_D R(T)`` with β_D = D = 1 and Hedge's
    ``R(T) = 2D√(T ln K/2)`` over K functions (Luo 2016, §3.2.2, Theorem 14).

    Examples
    --------
    >>> round(theorem14_bound(1000, 2, 100, 2.0), 2)  # 4000 + 2·2·√(1000 ln 100/2)
    4191.94
    """
    return 8.0 * horizon / n + lipschitz * 2.0 * math.sqrt(horizon * math.log(k) / 2.0)


def theorem14_table(ctx: ReportContext) -> pd.DataFrame:
    """Per game and player (ogb_hull against hull_lower_bound): at T the cumulative loss (an upper
    estimate of the regret to the best of CH(F), whose loss is ≥ 0), the regret to ``f̄`` (the loss
    less f̄'s expected loss, T(¼ − ε²)/(2M)) with our expectation beside it, Theorem 14's bound and
    the largest loss/bound ratio over the replicates."""
    columns = [
        "game",
        "player",
        "n_learners",
        "m_functions",
        "T",
        "loss",
        "regret",
        "regret_ci_low",
        "regret_ci_high",
        "expected_regret",
        "bound",
        "ratio_mean",
        "ratio_max",
    ]
    rows = _hull_rows(ctx)
    if rows.empty:
        return pd.DataFrame(columns=columns)
    final = rows[rows["t"] == rows["horizon"]]
    out = []
    for (game, player), part in final.groupby(
        [final["game_label"].astype(str), final["player_label"].astype(str)], sort=True
    ):
        first = part.iloc[0]
        horizon = int(first["t"])
        bound = theorem14_bound(
            horizon, int(first["n"]), int(first["k"]), float(first["lipschitz"])
        )
        regret = stats.mean_ci(part["regret"].to_numpy(float), level=ctx.level)
        ratios = part["value"].to_numpy(float) / bound
        out.append(
            {
                "game": game,
                "player": player,
                "n_learners": int(first["n"]),
                "m_functions": int(first["m"]),
                "T": horizon,
                "loss": float(part["value"].mean()),
                "regret": regret["mean"],
                "regret_ci_low": regret["ci_low"],
                "regret_ci_high": regret["ci_high"],
                "expected_regret": expected_hull_regret(
                    horizon, int(first["n"]), int(first["m"]), float(first["eps"])
                )
                if bool(first["sample"])
                else math.nan,
                "bound": bound,
                "ratio_mean": float(ratios.mean()),
                "ratio_max": float(ratios.max()),
            }
        )
    return pd.DataFrame(out, columns=columns).sort_values(["game", "n_learners"])


def theorem15_table(ctx: ReportContext) -> pd.DataFrame:
    """Per game (hull_lower_bound stream) with two N or more: the slope of the regret to f̄
    against t/N, fitted per replicate by least squares (with an intercept) over every ogb_hull
    cell's checkpoints t ≥ T/10, mean and interval; the same fit of our expectation
    (:func:`expected_hull_regret`); and :data:`THEOREM15_INTERVAL`."""
    columns = [
        "game",
        "n_values",
        "points",
        "slope",
        "slope_ci_low",
        "slope_ci_high",
        "expected_slope",
        "interval_low",
        "interval_high",
    ]
    rows = _hull_rows(ctx)
    if rows.empty:
        return pd.DataFrame(columns=columns)
    rows = rows[rows["t"] >= rows["horizon"] / 10.0]
    out = []
    for game, part in rows.groupby(rows["game_label"].astype(str), sort=True):
        ns = sorted(part["n"].unique())
        if len(ns) < 2:
            continue
        x = part["t"].to_numpy(float) / part["n"].to_numpy(float)
        slopes = []
        for _, rep in part.assign(x=x).groupby("replicate"):
            slopes.append(float(np.polyfit(rep["x"].to_numpy(), rep["regret"].to_numpy(), 1)[0]))
        expected = [
            expected_hull_regret(t, int(n), int(m), float(e))
            for t, n, m, e in zip(part["t"], part["n"], part["m"], part["eps"], strict=True)
        ]
        one = part["replicate"] == part["replicate"].iloc[0]
        expected_slope = float(
            np.polyfit(x[one.to_numpy()], np.array(expected)[one.to_numpy()], 1)[0]
        )
        slope = stats.mean_ci(slopes, level=ctx.level)
        out.append(
            {
                "game": game,
                "n_values": " ".join(str(int(n)) for n in ns),
                "points": int(one.sum()),
                "slope": slope["mean"],
                "slope_ci_low": slope["ci_low"],
                "slope_ci_high": slope["ci_high"],
                "expected_slope": expected_slope,
                "interval_low": THEOREM15_INTERVAL[0],
                "interval_high": THEOREM15_INTERVAL[1],
            }
        )
    return pd.DataFrame(out, columns=columns)


def hull_blocks(ctx: ReportContext) -> list[Block]:
    """Theorems 14 and 15 on ``hull_lower_bound``; nothing without ogb_hull games on it."""
    table14 = theorem14_table(ctx)
    if table14.empty:
        return []
    ctx.write_csv("ogb_hull over Theorem 14's bound", table14, "boosting_theorem14.csv")
    table15 = theorem15_table(ctx)
    body14 = [
        [
            str(r.game),
            str(r.n_learners),
            f"{r.loss:.2f}",
            f"{r.regret:.2f}",
            ci(r.regret_ci_low, r.regret_ci_high),
            f"{r.expected_regret:.2f}",
            f"{r.bound:.0f}",
            f"{r.ratio_mean:.4f}",
            f"{r.ratio_max:.4f}",
        ]
        for r in table14.itertuples(index=False)
    ]
    blocks: list[Block] = [
        Para(
            f"Luo 2016, §3.2.2, Theorem 14 (Beygelzimer, Hazan, Kale & Luo 2015, Theorem 2): "
            f"{code('ogb_hull')} (Algorithm 10) with N weak learners of regret R(T) has regret "
            f"against CH(F) at most 8β_D D² T/N + L_D R(T); Theorem 15 (their Theorem 3): on "
            f"{code('hull_lower_bound')} no booster with N calls per round does better than "
            f"Ω(T/N). Here β_D = D = 1, L_D = 1 + label bound, and R(T) = 2√(T ln K/2), the "
            f"bound of the Hedge weak learner ({code('hedge_features')}, sampling one of the K "
            f"functions, so it holds in expectation). The loss at T is our upper estimate of the "
            f"regret (the best of CH(F) has loss ≥ 0); the regret to f̄ = (1/M)Σ_j f_j subtracts "
            f"f̄'s expected loss T(¼ − ε²)/(2M) (its realized value differs by about "
            f"√T·(¼ − ε²)/(√2·M), a few hundredths here). Expected regret: "
            f"T(¼ − ε²)(Σ_i w_i² − 1/M)/2 (ours: each sampled function value is a Bernoulli(y*) "
            f"bit, so ŷ = Σ_i w_i b_i is unbiased with variance y*(1 − y*)Σ_i w_i²)."
        ),
        Table(
            [
                "game",
                "N",
                "loss at T",
                "regret to f̄",
                "CI",
                "expected (ours)",
                "Thm 14 bound",
                "loss / bound",
                "max",
            ],
            body14,
            caption="Means over the replicates; max: the largest replicate's loss/bound (≤ 1: "
            "the bound holds).",
            text_columns={0},
        ),
    ]
    if not table15.empty:
        ctx.write_csv("regret against T/N (Theorem 15)", table15, "boosting_theorem15.csv")
        blocks.append(
            Table(
                ["game", "N", "points", "slope", "CI", "expected (ours)", "interval"],
                [
                    [
                        str(r.game),
                        str(r.n_values),
                        str(r.points),
                        f"{r.slope:.4f}",
                        ci(r.slope_ci_low, r.slope_ci_high),
                        f"{r.expected_slope:.4f}",
                        f"[{r.interval_low:g}, {r.interval_high:g}]",
                    ]
                    for r in table15.itertuples(index=False)
                ],
                caption="Theorem 15's Ω(T/N): the slope of the regret to f̄ against t/N, a "
                "least-squares line with an intercept per replicate over every N's checkpoints "
                "t ≥ T/10 (points per replicate), mean and interval. Interval: Theorem 15's "
                "constant c = 1/4000 (in the theorem's environment, M = 4000·N and T ≥ 12M) to "
                "Theorem 14's 8β_D D² = 8.",
                text_columns={0, 1},
            )
        )
    return blocks


def theorem_blocks(ctx: ReportContext) -> list[Block]:
    """Every part of this module that has rows, in the order Theorems 3, 10, 14–15."""
    return theorem3_blocks(ctx) + theorem10_blocks(ctx) + hull_blocks(ctx)
