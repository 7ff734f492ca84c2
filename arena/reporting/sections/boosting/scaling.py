"""How many weak learners: the analogue of Luo 2016, Table 3.1.

Rows ``mistakes`` of ``online_bbm`` / ``adaboost_ol`` over ``oracle`` weak learners against
``edge_oracle``: per edge and ε, the smallest N whose measured error rate is ≤ ε beside the exact
binomial answer and Theorems 9 and 12's sufficient counts, the majority error at N = 51 beside its
exact value and Hoeffding's bound, and a figure of the error rate against N
(:func:`scaling_blocks`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from arena.reporting import stats
from arena.reporting.figures import FigureOut
from arena.reporting.render import Block, Para, Table, code
from arena.reporting.sections.context import ReportContext
from arena.reporting.sections.formatting import ci

SCALING_EPSILONS = (0.1, 0.05, 0.01)
"""The target error rates ε of the Table 3.1 analogue."""


SCALING_BOOSTERS = ("online_bbm", "adaboost_ol")
"""The boosters whose weak-learner count the Table 3.1 analogue measures (Online BBM, Theorem 9;
AdaBoost.OL, Theorem 12)."""


SOURCE_MAJORITY_51 = {0.2: (1.364e-3, 1.691e-2)}
"""Luo 2016, proof of Theorem 10: the majority of N = 51 independent learners correct with
probability ½ + 2γ (γ = 0.1, i.e. edge 0.2) errs with probability P[Bin(51, 0.7) ≤ 25] = 1.364e-3
exactly, which Hoeffding bounds by exp(−8Nγ²) = 1.691e-2."""


def exact_majority_error(n: int | np.ndarray, edge: float) -> np.ndarray | float:
    """Return the error ``P[Bin(N, ½ + edge) ≤ ⌊N/2⌋]`` of a majority vote of N (odd)
    independent learners, each correct with probability ``½ + edge``.

    This is the per-round error of Online BBM over N oracle weak learners on ``edge_oracle``
    (Luo 2016, proof of Theorem 10), and the Bayes error given their N votes.

    Examples
    --------
    >>> round(float(exact_majority_error(51, 0.2)), 6)
    0.001364
    """
    from scipy.stats import binom

    n = np.asarray(n)
    return binom.cdf((n - 1) // 2, n, 0.5 + float(edge))


def hoeffding_majority_bound(n: int | np.ndarray, edge: float) -> np.ndarray | float:
    """Return Hoeffding's bound ``exp(−2N·edge²)`` on :func:`exact_majority_error`
    (``exp(−8Nγ²)`` in the thesis's ``edge = 2γ``; ``exp(−Nγ_BBM²/2)`` with ``γ_BBM = 2·edge``,
    Luo 2016, Theorem 9).

    Examples
    --------
    >>> round(float(hoeffding_majority_bound(51, 0.2)), 6)
    0.016907
    """
    return np.exp(-2.0 * np.asarray(n, dtype=np.float64) * float(edge) ** 2)


def exact_smallest_odd_n(edge: float, eps: float, n_max: int = 100_001) -> int:
    """Return the smallest odd N whose majority error :func:`exact_majority_error` is ≤ ε.

    The error of odd N decreases with N, so this is the exact learner count Online BBM needs on
    Theorem 10's construction; ``n_max`` caps the search (a ``ValueError`` beyond it).

    Examples
    --------
    >>> exact_smallest_odd_n(0.2, 0.01), exact_smallest_odd_n(0.1, 0.05)
    (31, 67)
    """
    odd = np.arange(1, n_max + 1, 2)
    hits = np.flatnonzero(exact_majority_error(odd, edge) <= eps)
    if hits.size == 0:
        raise ValueError(f"no odd N ≤ {n_max} reaches ε = {eps} at edge {edge}")
    return int(odd[hits[0]])


def theorem9_learners(edge: float, eps: float) -> float:
    """Return Online BBM's sufficient count ``(2/γ²)·ln(1/ε)`` with ``γ = 2·edge`` (Luo 2016,
    Theorem 9).

    Examples
    --------
    >>> round(theorem9_learners(0.2, 0.01), 2)
    57.56
    """
    gamma = 2.0 * float(edge)
    return 2.0 / gamma**2 * math.log(1.0 / eps)


def theorem12_learners(edge: float, eps: float) -> float:
    """Return AdaBoost.OL's sufficient count ``8/(εγ²)`` with ``γ = 2·edge`` (Luo 2016,
    Theorem 12).

    Examples
    --------
    >>> round(theorem12_learners(0.2, 0.1), 9)
    500.0
    """
    gamma = 2.0 * float(edge)
    return 8.0 / (eps * gamma**2)


def smallest_n(ns: np.ndarray, errors: np.ndarray, eps: float) -> tuple[float, float]:
    """Return ``(first, interpolated)``: the first grid N whose measured error is ≤ ε, and the N
    where the error crosses ε between that point and the grid point before it (linear
    interpolation of ``ln(error)`` in N, as the error decays about exponentially in N; linear in
    the error where the later point measured 0). NaN for both when no grid point reaches ε;
    ``interpolated = first`` when the first grid point already does.

    Examples
    --------
    >>> smallest_n(np.array([1, 3, 5]), np.array([0.3, 0.2, 0.05]), 0.1)
    (5.0, 4.0)
    >>> smallest_n(np.array([1, 3]), np.array([0.3, 0.2]), 0.1)
    (nan, nan)
    """
    order = np.argsort(ns)
    ns, errors = np.asarray(ns, dtype=float)[order], np.asarray(errors, dtype=float)[order]
    hits = np.flatnonzero(errors <= eps)
    if hits.size == 0:
        return math.nan, math.nan
    k = int(hits[0])
    if k == 0:
        return float(ns[0]), float(ns[0])
    (n0, n1), (e0, e1) = ns[k - 1 : k + 1], errors[k - 1 : k + 1]
    if e1 > 0:
        frac = (math.log(e0) - math.log(eps)) / (math.log(e0) - math.log(e1))
    else:
        frac = (e0 - eps) / e0
    return float(ns[k]), float(n0 + frac * (n1 - n0))


def _param(params: str, key: str) -> object:
    import json

    try:
        return json.loads(params).get(key)
    except (TypeError, ValueError, AttributeError):
        return None


def scaling_rates(ctx: ReportContext) -> pd.DataFrame:
    """Per booster (of :data:`SCALING_BOOSTERS`), edge and N: the error rate mistakes/T at T on
    ``edge_oracle`` with oracle weak learners, mean over replicates with its t-interval."""
    columns = ["booster", "edge", "n_learners", "T", "mean", "ci_low", "ci_high", "replicates"]
    final = stats.final_rows(ctx.rows, "mistakes")
    if final.empty:
        return pd.DataFrame(columns=columns)
    final = final.astype(
        {"player": str, "adversary": str, "player_params": str, "adversary_params": str}
    )
    final = final[(final.adversary == "edge_oracle") & final.player.isin(SCALING_BOOSTERS)]
    # masks cast to bool: an empty object-dtype mask would select columns, not rows
    final = final[
        final.player_params.map(lambda p: _param(p, "weak_learner") == "oracle").astype(bool)
    ]
    # a warm-up (Theorem 10's second construction) is the theorems part's, not Table 3.1's
    final = final[final.adversary_params.map(lambda p: not _param(p, "warmup")).astype(bool)]
    if final.empty:
        return pd.DataFrame(columns=columns)
    final = final.assign(
        booster=final.player.astype(str),
        edge=final.adversary_params.map(lambda p: float(_param(p, "edge"))),
        n_learners=final.player_params.map(lambda p: int(_param(p, "n_learners"))),
        rate=final.value / final.t,
    )
    out = []
    for (booster, edge, n), part in final.groupby(["booster", "edge", "n_learners"]):
        summary = stats.mean_ci(part.rate.to_numpy(float), level=ctx.level)
        out.append(
            [
                booster,
                edge,
                n,
                int(part.t.max()),
                summary["mean"],
                summary["ci_low"],
                summary["ci_high"],
                len(part),
            ]
        )
    return pd.DataFrame(out, columns=columns)


def scaling_table(rates: pd.DataFrame, epsilons=SCALING_EPSILONS) -> pd.DataFrame:
    """Per edge and ε: each booster's smallest N (first grid point and interpolated), the exact
    smallest odd N of a majority vote, and Theorems 9 and 12's sufficient counts."""
    rows = []
    for edge, part in rates.groupby("edge"):
        for eps in epsilons:
            row = {
                "edge": edge,
                "gamma": 2 * edge,
                "eps": eps,
                "exact_odd_n": exact_smallest_odd_n(edge, eps),
                "theorem9_n": theorem9_learners(edge, eps),
                "theorem12_n": theorem12_learners(edge, eps),
            }
            for booster in SCALING_BOOSTERS:
                mine = part[part.booster == booster]
                first, interp = (
                    smallest_n(mine.n_learners.to_numpy(), mine["mean"].to_numpy(), eps)
                    if len(mine)
                    else (math.nan, math.nan)
                )
                grid_max = float(mine.n_learners.max()) if len(mine) else math.nan
                row |= {
                    f"{booster}_first": first,
                    f"{booster}_interp": interp,
                    f"{booster}_grid_max": grid_max,
                }
            rows.append(row)
    return pd.DataFrame(rows)


def _n_cell(first: float, interp: float, grid_max: float) -> str:
    if math.isnan(grid_max):
        return "—"
    if math.isnan(first):
        return f"> {grid_max:.0f}"
    return f"{first:.0f} ({interp:.1f})"


def scaling_figure(rates: pd.DataFrame, ctx: ReportContext) -> FigureOut:
    """Error rate vs N, log y, one panel per edge: the measured boosters with their intervals,
    the exact majority error of odd N and Hoeffding's bound."""
    from arena.reporting.figures import RC, _plt

    plt = _plt()
    edges = sorted(rates.edge.unique())
    with plt.rc_context(RC):
        fig, axes = plt.subplots(
            1, len(edges), figsize=(3.6 * len(edges) + 0.4, 3.4), squeeze=False
        )
        n_max = int(rates.n_learners.max())
        odd = np.arange(1, n_max + 1, 2)
        for ax, edge in zip(axes[0], edges, strict=True):
            part = rates[rates.edge == edge]
            for k, (booster, mine) in enumerate(part.groupby("booster", sort=True)):
                mine = mine.sort_values("n_learners")
                shown = mine[mine["mean"] > 0]
                y = shown["mean"].to_numpy(float)
                low = np.maximum(shown.ci_low.to_numpy(float), y * 1e-3)
                err = np.vstack([y - low, shown.ci_high.to_numpy(float) - y])
                ax.errorbar(
                    shown.n_learners,
                    y,
                    yerr=np.where(np.isfinite(err), err, 0.0),
                    marker="os"[k % 2],
                    ms=3.5,
                    lw=1.3,
                    capsize=2,
                    label=booster,
                    gid=f"player:{booster}",
                )
            ax.plot(
                odd,
                exact_majority_error(odd, edge),
                color="black",
                lw=1.0,
                label="exact majority error (binomial)",
            )
            ax.plot(
                odd,
                hoeffding_majority_bound(odd, edge),
                color="gray",
                ls="--",
                lw=1.0,
                label="Hoeffding exp(−2N·edge²)",
            )
            for eps in SCALING_EPSILONS:
                ax.axhline(eps, color="lightgray", lw=0.7, ls=":")
            ax.set_yscale("log")
            ax.set_ylim(bottom=1e-4, top=1.0)
            ax.set_xlabel("weak learners N")
            ax.set_ylabel("error rate mistakes/T")
            ax.set_title(f"edge_oracle(edge={edge:g}), γ = {2 * edge:g}")
        axes[0][0].legend(fontsize=7, loc="lower left")
        fig.tight_layout()
    return FigureOut(
        "boosting_error_vs_n",
        "Table 3.1 analogue: error rate at T of each booster over N oracle weak learners (mean "
        f"± {ctx.pct} t-interval; a mean of 0 is not drawn on the log axis), the exact error "
        "of a majority of N independent learners (odd N) and Hoeffding's bound; dotted: "
        "ε = 0.1, 0.05, 0.01.",
        fig,
    )


def scaling_blocks(ctx: ReportContext) -> list[Block]:
    """The Table 3.1 analogue: smallest N per ε, the N = 51 majority error, and the figure."""
    rates = scaling_rates(ctx)
    if rates.empty:
        return []
    ctx.write_csv("error rate vs N (edge_oracle)", rates, "boosting_scaling_rates.csv")
    table = scaling_table(rates)
    ctx.write_csv("smallest N per ε (Table 3.1 analogue)", table, "boosting_scaling.csv")
    body = []
    for r in table.itertuples(index=False):
        body.append(
            [
                f"{r.edge:g}",
                f"{r.gamma:g}",
                f"{r.eps:g}",
                _n_cell(r.online_bbm_first, r.online_bbm_interp, r.online_bbm_grid_max),
                str(r.exact_odd_n),
                f"{r.theorem9_n:.1f}",
                _n_cell(r.adaboost_ol_first, r.adaboost_ol_interp, r.adaboost_ol_grid_max),
                f"{r.theorem12_n:.0f}",
            ]
        )
    blocks: list[Block] = [
        Para(
            f"Table 3.1 of Luo 2016 measured: how many weak learners a booster needs for error "
            f"rate ε. {code('edge_oracle')} is Theorem 10's construction — y_t a fair sign and "
            f"independent bits equal to y_t with probability ½ + edge — and the "
            f"{code('oracle')} weak learner's lane i reads bit i, so N lanes are N independent "
            f"weak learners with γ = 2·edge in the weak-learning assumption (3.1) (the thesis's "
            f"own γ in ½ + 2γ is edge/2). Online BBM is then a majority vote, whose error is "
            f"exactly P[Bin(N, ½ + edge) ≤ ⌊N/2⌋] for odd N; Theorem 9 asks for "
            f"(2/γ²)·ln(1/ε) learners (a Hoeffding bound), Theorem 12 for 8/(εγ²) for "
            f"AdaBoost.OL, which learns its weights online instead of being told γ."
        ),
        Table(
            [
                "edge",
                "γ",
                "ε",
                "online_bbm N",
                "exact odd N",
                "Thm 9 (2/γ²)ln(1/ε)",
                "adaboost_ol N",
                "Thm 12 8/(εγ²)",
            ],
            body,
            caption="Smallest N whose measured error rate (mistakes/T at T, mean over "
            "replicates) is ≤ ε: the first grid point reaching ε, and in parentheses the N "
            "where ln(error) interpolated linearly between the two bracketing grid points "
            "crosses ε; '> n' when no grid point up to n reaches it. Exact odd N: the smallest "
            "odd N with P[Bin(N, ½ + edge) ≤ ⌊N/2⌋] ≤ ε (scipy). The theorems' counts are "
            "sufficient conditions (upper bounds), not predictions.",
            text_columns=set(),
        ),
    ]
    at51 = rates[rates.n_learners == 51]
    rows51 = []
    for r in at51.sort_values(["edge", "booster"]).itertuples(index=False):
        source = SOURCE_MAJORITY_51.get(round(float(r.edge), 10))
        rows51.append(
            [
                f"{r.edge:g}",
                str(r.booster),
                f"{r.mean:.3e}",
                ci(r.ci_low, r.ci_high),
                f"{float(exact_majority_error(51, r.edge)):.3e}",
                f"{float(hoeffding_majority_bound(51, r.edge)):.3e}",
                "—" if source is None else f"{source[0]:.3e} / {source[1]:.3e}",
            ]
        )
    if rows51:
        blocks.append(
            Table(
                [
                    "edge",
                    "booster",
                    "error rate at N = 51",
                    "CI",
                    "exact binomial",
                    "Hoeffding exp(−2N·edge²)",
                    "source (exact / Hoeffding)",
                ],
                rows51,
                caption="The majority error at N = 51: measured, exact, and Hoeffding's bound "
                "exp(−8Nγ²) in the thesis's γ = edge/2 (Luo 2016, proof of Theorem 10: γ = 0.1 "
                "gives 1.364e-3 exactly against 1.691e-2).",
                text_columns={1},
            )
        )
    blocks.append(ctx.add_figure(scaling_figure(rates, ctx)))
    return blocks
