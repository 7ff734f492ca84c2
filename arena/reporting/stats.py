"""The report's statistics, computed from tidy rows only.

Conventions (stated in the report's Methods section):

* A *unit* is one (seed, replicate) of one game; every player facing a game sees the same losses in
  the same unit when the adversary is oblivious (common random numbers, architecture: seeding), so
  comparisons between players are *paired* on units.
* Intervals are two-sided Student t intervals at ``level`` (default 95%): ``mean ± t_{n−1} s/√n``
  with the sample standard deviation ``s`` (ddof 1); NaN with fewer than two values.
* Paired differences: the same t interval on the per-unit differences; the two-sided paired t
  test's p-values are adjusted with Holm–Bonferroni over all pairs of players of one
  (game, metric, param) family.
* Growth exponent: per unit, the least-squares slope of ``log value`` on ``log t`` over the
  checkpoints whose ``log t`` lies in the upper half of ``[log t_1, log T]``; a t interval over
  units. Units with a non-positive value in that window have no slope and are left out (counted).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd
from scipy.special import stdtr, stdtrit  # scipy.stats costs ~1.5 s to import

UNIT = ["seed", "replicate"]
"""Columns that, within one game, identify the common loss sequence shared by every player."""

BOUND_RTOL = 1e-9
"""A value exceeds its declared bound when ``value > bound + 1e-9·max(1, |bound|)``."""

LOWER_BOUND_LEVEL = 0.999
"""One-sided confidence that a cell whose mean sits at a reference lower bound is not flagged
(Bonferroni over the cell's checkpoints)."""

_NAN_PARAM = -np.inf  # stands for "no parameter" (NaN) in joins; real params are ε > 0, k, τ ≥ 0


def t_quantile(dof: np.ndarray | float, level: float = 0.95) -> np.ndarray:
    """Two-sided Student t quantile ``t_{dof}(0.5 + level/2)``; NaN where ``dof < 1``."""
    dof = np.asarray(dof, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        q = stdtrit(np.where(dof >= 1, dof, 1.0), 0.5 + level / 2)
    return np.where(dof >= 1, q, np.nan)


def mean_ci(values: Sequence[float] | np.ndarray, level: float = 0.95) -> dict[str, float]:
    """Mean and two-sided t interval of the finite ``values``.

    Examples
    --------
    >>> r = mean_ci([1.0, 2.0, 3.0])
    >>> round(r["mean"], 6), round(r["ci_high"] - r["mean"], 4), r["n"]
    (2.0, 2.4841, 3)
    """
    x = np.asarray(values, dtype=np.float64)
    x = x[np.isfinite(x)]
    n = x.size
    mean = float(x.mean()) if n else math.nan
    sd = float(x.std(ddof=1)) if n > 1 else math.nan
    half = float(t_quantile(n - 1, level) * sd / math.sqrt(n)) if n > 1 else math.nan
    return {"mean": mean, "sd": sd, "ci_low": mean - half, "ci_high": mean + half, "n": n}


def grouped_mean_ci(
    df: pd.DataFrame, keys: list[str], value: str = "value", level: float = 0.95
) -> pd.DataFrame:
    """Per group of ``keys``: ``mean, sd, n, ci_low, ci_high`` of ``value`` (t interval)."""
    g = df.groupby(keys, observed=True, sort=True)[value]
    out = g.agg(["mean", "std", "count"]).reset_index()
    n = out["count"].to_numpy()
    half = t_quantile(n - 1, level) * out["std"].to_numpy() / np.sqrt(np.maximum(n, 1))
    out["ci_low"] = out["mean"] - half
    out["ci_high"] = out["mean"] + half
    return out.rename(columns={"count": "n", "std": "sd"})


def paired_t(diffs: np.ndarray, level: float = 0.95) -> dict[str, float]:
    """Mean difference, its t interval, the t statistic and the two-sided p-value (paired test).

    With zero spread, the difference is exact: p = 1 if it is 0, else p = 0.
    """
    d = np.asarray(diffs, dtype=np.float64)
    d = d[np.isfinite(d)]
    r = mean_ci(d, level)
    n, mean, sd = r["n"], r["mean"], r["sd"]
    if n < 2:
        t, p = math.nan, math.nan
    elif sd == 0.0:
        t = 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
        p = 1.0 if mean == 0.0 else 0.0
    else:
        t = mean / (sd / math.sqrt(n))
        p = float(2.0 * stdtr(n - 1, -abs(t)))
    return {**r, "t": t, "p": p}


def holm(pvalues: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values (NaN entries stay NaN and do not count in m).

    ``p_adj(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j))`` over the sorted p-values; reject at level
    α where ``p_adj ≤ α``.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03]).round(4).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    idx = np.flatnonzero(np.isfinite(p))
    m = idx.size
    if m == 0:
        return out
    order = idx[np.argsort(p[idx], kind="stable")]
    adj = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(adj)
    return out


def growth_window(ts: np.ndarray) -> np.ndarray:
    """The checkpoints whose ``log t`` lies in the upper half of ``[log t_1, log t_max]``."""
    ts = np.unique(np.asarray(ts, dtype=np.float64))
    if ts.size == 0:
        return ts
    lt = np.log(ts)
    return ts[lt >= (lt[0] + lt[-1]) / 2 - 1e-12]


def growth_exponent(values: np.ndarray, ts: np.ndarray, level: float = 0.95) -> dict[str, float]:
    """Empirical growth exponent of ``value ≈ c·t^α`` from a (units × checkpoints) matrix.

    Per unit (row), the least-squares slope of ``log value`` on ``log t`` over
    :func:`growth_window`; the exponent is their mean with a t interval over units. Units with a
    non-positive or missing value in the window are left out (``n_used`` counts the rest).
    ``mean_curve`` is the slope of the log of the mean curve over the same window.
    """
    values = np.asarray(values, dtype=np.float64)
    ts = np.asarray(ts, dtype=np.float64)
    window = growth_window(ts)
    nan = {"exponent": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n_used": 0}
    out = {
        **nan,
        "n": values.shape[0],
        "t_from": math.nan,
        "t_to": math.nan,
        "mean_curve": math.nan,
    }
    if window.size < 2:
        return out
    cols = np.isin(ts, window)
    y = values[:, cols]
    x = np.log(ts[cols])
    out["t_from"], out["t_to"] = float(window[0]), float(window[-1])
    xc = x - x.mean()
    sxx = float(xc @ xc)
    mean_curve = np.nanmean(y, axis=0) if y.size else y
    if mean_curve.size and np.all(mean_curve > 0):
        out["mean_curve"] = float(np.log(mean_curve) @ xc / sxx)
    ok = np.all(np.isfinite(y) & (y > 0), axis=1)
    if not ok.any():
        return out
    with np.errstate(divide="ignore"):
        slopes = np.log(y[ok]) @ xc / sxx
    r = mean_ci(slopes, level)
    out.update(exponent=r["mean"], ci_low=r["ci_low"], ci_high=r["ci_high"], n_used=r["n"])
    return out


# ----------------------------------------------------------------------------------------------
# tables built from the tidy rows


def final_rows(rows: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The rows of ``metric`` at the last round (``t == horizon``)."""
    m = (rows["metric"] == metric).to_numpy() & (rows["t"].to_numpy() == rows["horizon"].to_numpy())
    return rows.loc[m]


def _wide(final: pd.DataFrame) -> pd.DataFrame:
    """Units × players table of one game's final values (duplicates of a unit are averaged)."""
    g = final.groupby([*UNIT, "player_label"], observed=True)["value"].mean()
    return g.unstack("player_label")


def leaderboards(
    rows: pd.DataFrame,
    metrics: Sequence[str],
    level: float = 0.95,
    alpha: float = 0.05,
    games: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per (game, metric, param): each player's final mean, t interval, rank, and paired tests.

    Returns ``(board, pairs)``. ``board`` has ``game, metric, param, rank, player, mean, ci_low,
    ci_high, n`` and, against the leader (rank 1), ``delta, delta_ci_low, delta_ci_high,
    p_holm, significant``. ``pairs`` has every pair ``player_a, player_b`` (a ranked above b):
    ``n_pairs, mean_diff`` (a − b), its interval, ``t, p, p_holm, significant``. Holm's family is
    all pairs of one (game, metric, param). Games come in the order of ``games`` (default:
    sorted labels).
    """
    boards, pairs = [], []
    for metric in metrics:
        final = final_rows(rows, metric)
        if final.empty:
            continue
        params = final["param"].to_numpy()
        for param in pd.unique(params):
            if isinstance(param, float) and math.isnan(param):
                sub = final.loc[np.isnan(params)]
            else:
                sub = final.loc[params == param]
            parts = {str(g): p for g, p in sub.groupby("game_label", observed=True)}
            for game in games if games is not None else sorted(parts):
                if game not in parts:
                    continue
                wide = _wide(parts[game])
                b, p = _one_board(wide, level, alpha)
                for frame in (b, p):
                    frame.insert(0, "param", param)
                    frame.insert(0, "metric", metric)
                    frame.insert(0, "game", game)
                boards.append(b)
                pairs.append(p)
    board_cols = [
        "game",
        "metric",
        "param",
        "rank",
        "player",
        "mean",
        "ci_low",
        "ci_high",
        "n",
        "delta",
        "delta_ci_low",
        "delta_ci_high",
        "p_holm",
        "significant",
    ]
    pair_cols = [
        "game",
        "metric",
        "param",
        "player_a",
        "player_b",
        "n_pairs",
        "mean_diff",
        "ci_low",
        "ci_high",
        "t",
        "p",
        "p_holm",
        "significant",
    ]
    board = pd.concat(boards, ignore_index=True) if boards else pd.DataFrame(columns=board_cols)
    pair = pd.concat(pairs, ignore_index=True) if pairs else pd.DataFrame(columns=pair_cols)
    return board[board_cols], pair[pair_cols]


def _one_board(wide: pd.DataFrame, level: float, alpha: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    stats = {str(c): mean_ci(wide[c].to_numpy(), level) for c in wide.columns}
    order = sorted(stats, key=lambda c: (math.isnan(stats[c]["mean"]), stats[c]["mean"], c))
    means = pd.Series({c: stats[c]["mean"] for c in order})
    ranks = means.rank(method="min").to_dict()
    pair_rows = []
    for a, b in combinations(order, 2):
        both = wide[[a, b]].dropna()
        r = paired_t(both[a].to_numpy() - both[b].to_numpy(), level)
        pair_rows.append(
            {
                "player_a": a,
                "player_b": b,
                "n_pairs": r["n"],
                "mean_diff": r["mean"],
                "ci_low": r["ci_low"],
                "ci_high": r["ci_high"],
                "t": r["t"],
                "p": r["p"],
            }
        )
    pairs = pd.DataFrame(
        pair_rows,
        columns=["player_a", "player_b", "n_pairs", "mean_diff", "ci_low", "ci_high", "t", "p"],
    )
    pairs["p_holm"] = holm(pairs["p"].to_numpy()) if len(pairs) else []
    pairs["significant"] = pairs["p_holm"] <= alpha
    leader = order[0]
    vs = pairs[pairs.player_a == leader].set_index("player_b")
    board_rows = []
    for c in order:
        s = stats[c]
        row = {
            "rank": int(ranks[c]) if not math.isnan(ranks.get(c, math.nan)) else None,
            "player": c,
            "mean": s["mean"],
            "ci_low": s["ci_low"],
            "ci_high": s["ci_high"],
            "n": s["n"],
            "delta": math.nan,
            "delta_ci_low": math.nan,
            "delta_ci_high": math.nan,
            "p_holm": math.nan,
            "significant": False,
        }
        if c != leader and c in vs.index:
            v = vs.loc[c]  # leader − c: report c − leader
            row.update(
                delta=-v["mean_diff"],
                delta_ci_low=-v["ci_high"],
                delta_ci_high=-v["ci_low"],
                p_holm=v["p_holm"],
                significant=bool(v["significant"]),
            )
        board_rows.append(row)
    return pd.DataFrame(board_rows), pairs


def normalized_table(rows: pd.DataFrame, games: pd.DataFrame) -> pd.DataFrame:
    """Players × games: mean final regret / sqrt(T ln N) (NaN where N = 1), plus their mean."""
    final = final_rows(rows, "regret")
    means = final.groupby(["player_label", "game_label"], observed=True)["value"].mean()
    scale = {
        g.game_label: math.sqrt(g.horizon * math.log(g.n_actions)) if g.n_actions > 1 else math.nan
        for g in games.itertuples()
    }
    norm = means / means.index.get_level_values("game_label").map(scale).to_numpy(float)
    table = norm.unstack("game_label")
    table = table.reindex(columns=[g for g in games.game_label if g in table.columns])
    table.index = table.index.astype(str)
    table.columns = table.columns.astype(str)
    table = table.sort_index()
    table["mean over games"] = table.mean(axis=1, skipna=True)
    table.index.name = "player"
    return table


def win_matrix(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fraction of shared (game, unit) pairs where the row player's final regret < the column's.

    Returns ``(fraction, count)``: ``count[a, b]`` is the number of (game, seed, replicate) both
    players have; ties are not wins.
    """
    final = final_rows(rows, "regret")
    players = sorted(final["player_label"].astype(str).unique())
    k = len(players)
    wins = np.zeros((k, k))
    count = np.zeros((k, k), dtype=np.int64)
    pos = {p: i for i, p in enumerate(players)}
    for _, part in final.groupby("game_label", observed=True):
        wide = _wide(part)
        cols = [pos[str(c)] for c in wide.columns]
        v = wide.to_numpy(dtype=np.float64)
        ok = np.isfinite(v)
        for ai, a in enumerate(cols):
            for bi, b in enumerate(cols):
                if a == b:
                    continue
                both = ok[:, ai] & ok[:, bi]
                wins[a, b] += np.count_nonzero(v[both, ai] < v[both, bi])
                count[a, b] += np.count_nonzero(both)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(count > 0, wins / np.maximum(count, 1), np.nan)
    np.fill_diagonal(frac, np.nan)
    idx = pd.Index(players, name="player")
    return pd.DataFrame(frac, index=idx, columns=players), pd.DataFrame(
        count, index=idx, columns=players
    )


def curve_summary(rows: pd.DataFrame, metric: str, level: float = 0.95) -> pd.DataFrame:
    """Per (game, player, param, t): mean of ``metric`` over units with its t interval."""
    sub = rows.loc[(rows["metric"] == metric).to_numpy()]
    if sub.empty:
        return pd.DataFrame(
            columns=["game", "player", "param", "t", "mean", "sd", "n", "ci_low", "ci_high"]
        )
    sub = sub.assign(param=sub["param"].fillna(_NAN_PARAM))
    out = grouped_mean_ci(sub, ["game_label", "player_label", "param", "t"], level=level)
    out["param"] = out["param"].replace(_NAN_PARAM, np.nan)
    out = out.rename(columns={"game_label": "game", "player_label": "player"})
    out["game"] = out["game"].astype(str)
    out["player"] = out["player"].astype(str)
    return out


FLAT_START_EXPONENT = 0.2
"""A declared bound whose growth exponent over its first decade of rounds is below this is
"flat for small t" (a √t bound has 0.5 there; Hedge tuned for the horizon, about 0)."""


def flat_start_bounds(bounds: pd.DataFrame) -> pd.DataFrame:
    """The (game, player) whose mean declared bound is flat over its first decade of rounds.

    ``bounds`` is a :func:`curve_summary` of a ``bound:<metric>`` (one param). Per (game,
    player), from the first checkpoint ``t_a`` with a positive bound to the last one
    ``t_b ≤ 10 t_a``, the exponent is ``log(B(t_b)/B(t_a)) / log(t_b/t_a)``; a curve is flat when
    it is below :data:`FLAT_START_EXPONENT`. Curves spanning less than a factor 5 in t are not
    judged. Returns ``game, player, t_from, t_to, exponent``.

    Examples
    --------
    >>> t = np.array([1, 2, 5, 10, 100, 1000])
    >>> b = pd.DataFrame({"game": "g", "t": np.tile(t, 2), "player": np.repeat(["a", "b"], 6),
    ...                   "mean": np.r_[24 * (1 + t / 1000), 2 * np.sqrt(t)]})
    >>> flat_start_bounds(b)[["player", "t_to"]].values.tolist()
    [['a', 10]]
    """
    out = []
    for (game, player), part in bounds.groupby(["game", "player"], sort=True):
        curve = part.groupby("t")["mean"].mean()
        curve = curve[np.isfinite(curve.to_numpy(float)) & (curve.to_numpy(float) > 0)]
        if curve.empty:
            continue
        t_a = curve.index[0]
        window = curve[curve.index <= 10 * t_a]
        t_b = window.index[-1]
        if t_b < 5 * t_a:
            continue
        exponent = math.log(window.iloc[-1] / window.iloc[0]) / math.log(t_b / t_a)
        if exponent < FLAT_START_EXPONENT:
            out.append((game, player, int(t_a), int(t_b), exponent))
    return pd.DataFrame(out, columns=["game", "player", "t_from", "t_to", "exponent"])


def growth_table(rows: pd.DataFrame, metric: str = "regret", level: float = 0.95) -> pd.DataFrame:
    """Growth exponent of ``metric`` per (game, player); see :func:`growth_exponent`."""
    sub = rows.loc[(rows["metric"] == metric).to_numpy()]
    out = []
    for (game, player), part in sub.groupby(["game_label", "player_label"], observed=True):
        g = part.groupby([*UNIT, "t"], observed=True)["value"].mean().unstack("t")
        r = growth_exponent(g.to_numpy(), g.columns.to_numpy(), level)
        out.append({"game": str(game), "player": str(player), **r})
    cols = [
        "game",
        "player",
        "exponent",
        "ci_low",
        "ci_high",
        "n_used",
        "n",
        "t_from",
        "t_to",
        "mean_curve",
    ]
    return pd.DataFrame(out, columns=cols)


def _keyed(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    frame = frame[[*keys, "value"]].copy()
    frame["param"] = frame["param"].fillna(_NAN_PARAM)
    for k in keys:
        if isinstance(frame[k].dtype, pd.CategoricalDtype):
            frame[k] = frame[k].astype(str)
    return frame


EXPECTATION_PROTOCOLS = frozenset({"bandit"})
"""Protocols whose players' declared bounds bound the *expectation* of a metric (the arena's draws
make every value random): their rows are checked on the mean over units, one-sidedly
(:func:`expected_bound_violations`), not row by row."""


def in_expectation(rows: pd.DataFrame) -> np.ndarray:
    """Mask of the rows whose bounds hold in expectation (their protocol is in
    :data:`EXPECTATION_PROTOCOLS`); all False for rows without a ``protocol`` column."""
    if "protocol" not in rows.columns:
        return np.zeros(len(rows), dtype=bool)
    return rows["protocol"].astype(str).isin(EXPECTATION_PROTOCOLS).to_numpy()


def bound_violations(rows: pd.DataFrame) -> pd.DataFrame:
    """Every row whose value exceeds its player's declared bound (``bound:<metric>``, same param).

    Rows of protocols whose bounds hold in expectation (:data:`EXPECTATION_PROTOCOLS`) are left
    to :func:`expected_bound_violations`.
    Returns ``game, player, cell, seed, replicate, t, metric, param, value, bound, excess``.
    """
    rows = rows.loc[~in_expectation(rows)]
    metrics = rows["metric"]
    names = [str(m) for m in metrics.unique() if str(m).startswith("bound:")]
    keys = ["run_id", "seed", "replicate", "t", "param"]
    out = []
    for name in names:
        target = name.removeprefix("bound:")
        bnd = rows.loc[(metrics == name).to_numpy()]
        val = rows.loc[(metrics == target).to_numpy()]
        if bnd.empty or val.empty:
            continue
        extra = ["game_label", "player_label", "cell"]
        m = _keyed(val, keys + extra).merge(
            _keyed(bnd, keys).rename(columns={"value": "bound"}), on=keys, how="inner"
        )
        tol = BOUND_RTOL * np.maximum(1.0, np.abs(m["bound"].to_numpy()))
        bad = m[m["value"].to_numpy() > m["bound"].to_numpy() + tol]
        if bad.empty:
            continue
        bad = bad.assign(metric=target, excess=bad["value"] - bad["bound"])
        out.append(bad)
    cols = [
        "game",
        "player",
        "cell",
        "seed",
        "replicate",
        "t",
        "metric",
        "param",
        "value",
        "bound",
        "excess",
    ]
    if not out:
        return pd.DataFrame(columns=cols)
    res = pd.concat(out, ignore_index=True)
    res["param"] = res["param"].replace(_NAN_PARAM, np.nan)
    res = res.rename(columns={"game_label": "game", "player_label": "player"})
    return res[cols].sort_values(["game", "player", "metric", "param", "t", "seed", "replicate"])


def summarize_violations(viol: pd.DataFrame, max_listed: int = 12) -> pd.DataFrame:
    """One line per (game, player, cell, metric, param): rows, replicates, first t, worst excess."""
    cols = ["game", "player", "cell", "metric", "param", "rows", "replicates", "first_t", "excess"]
    if viol.empty:
        return pd.DataFrame(columns=cols)
    out = []
    keys = ["game", "player", "cell", "metric", "param"]
    for key, part in viol.assign(param=viol["param"].fillna(_NAN_PARAM)).groupby(keys, sort=True):
        reps = sorted({(int(s), int(r)) for s, r in zip(part.seed, part.replicate, strict=True)})
        seeds = {s for s, _ in reps}
        shown = [str(r) if len(seeds) == 1 else f"{s}/{r}" for s, r in reps[:max_listed]]
        text = ", ".join(shown) + (f", … ({len(reps)} in all)" if len(reps) > max_listed else "")
        out.append(
            dict(
                zip(keys, key, strict=True),
                rows=len(part),
                replicates=text,
                first_t=int(part.t.min()),
                excess=float(part.excess.max()),
            )
        )
    res = pd.DataFrame(out, columns=cols)
    res["param"] = res["param"].replace(_NAN_PARAM, np.nan)
    return res


RATIO_COLUMNS = [
    "game",
    "player",
    "metric",
    "param",
    "t",
    "basis",
    "n",
    "value",
    "bound",
    "ratio_mean",
    "ratio_ci_low",
    "ratio_ci_high",
    "ratio_max",
]
"""The columns of :func:`bound_ratios`."""

PER_REPLICATE, IN_EXPECTATION = "per replicate", "in expectation"
"""The two ``basis`` values of :func:`bound_ratios`."""


def bound_ratios(rows: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per (game, player, metric, param): the measured value over its declared bound at T.

    Each ``<metric>`` row at the horizon (``t == horizon``) is paired with the player's
    ``bound:<metric>`` row of the same cell, seed, replicate and param, as in
    :func:`bound_violations`. Then, per (game, player, metric, param):

    * bounds that hold on every sequence (``basis`` = ``"per replicate"``): the ratio
      ``value/bound`` of each replicate, ``ratio_mean`` with its t interval (:func:`mean_ci`)
      and ``ratio_max``; a replicate whose bound is not positive has no ratio (``n`` counts the
      others);
    * bounds that hold in expectation (:func:`in_expectation`, bandit players; ``basis`` =
      ``"in expectation"``): ``ratio_mean = mean value / mean bound``, its interval the value's
      t interval divided by the mean bound (exact when the bound is the same in every
      replicate, as for a bound of t alone), and no ``ratio_max`` (NaN): a single replicate
      above such a bound is no violation.

    ``value`` and ``bound`` are the means of the paired rows and ``t`` the horizon. Returns the
    columns :data:`RATIO_COLUMNS`, sorted by game, player, metric and param (NaN: none).

    Examples
    --------
    >>> rows = pd.DataFrame({
    ...     "metric": ["regret"] * 2 + ["bound:regret"] * 2, "param": np.nan,
    ...     "t": 10, "horizon": 10, "run_id": "c", "seed": 0, "replicate": [0, 1] * 2,
    ...     "game_label": "g", "player_label": "p", "value": [1.0, 3.0, 4.0, 5.0]})
    >>> r = bound_ratios(rows).iloc[0]
    >>> float(r.ratio_mean), float(r.ratio_max), float(r.bound), r.basis
    (0.425, 0.6, 4.5, 'per replicate')
    """
    final = rows.loc[rows["t"].to_numpy() == rows["horizon"].to_numpy()]
    metrics = final["metric"]
    names = sorted(str(m) for m in metrics.unique() if str(m).startswith("bound:"))
    keys = ["run_id", "seed", "replicate", "param"]
    labels = ["game_label", "player_label"]
    out = []
    for name in names:
        target = name.removeprefix("bound:")
        bnd = final.loc[(metrics == name).to_numpy()]
        val = final.loc[(metrics == target).to_numpy()]
        if bnd.empty or val.empty:
            continue
        val = val.assign(expectation=in_expectation(val))
        paired = _keyed(val, [*keys, *labels, "t", "expectation"]).merge(
            _keyed(bnd, keys).rename(columns={"value": "bound"}), on=keys, how="inner"
        )
        groups = paired.groupby([*labels, "param", "expectation"], sort=True)
        for (game, player, param, expectation), part in groups:
            out.append(
                {
                    "game": game,
                    "player": player,
                    "metric": target,
                    "param": param,
                    "t": int(part["t"].max()),
                    **_ratio_summary(part, bool(expectation), level),
                }
            )
    if not out:
        return pd.DataFrame(columns=RATIO_COLUMNS)
    res = pd.DataFrame(out)
    res["param"] = res["param"].replace(_NAN_PARAM, np.nan)
    res = res.sort_values(["game", "player", "metric", "param"], na_position="first")
    return res[RATIO_COLUMNS].reset_index(drop=True)


def _ratio_summary(paired: pd.DataFrame, expectation: bool, level: float) -> dict:
    """The ratio columns of :func:`bound_ratios` for one group of paired value and bound rows."""
    value = paired["value"].to_numpy(dtype=np.float64)
    bound = paired["bound"].to_numpy(dtype=np.float64)
    mean_bound = float(bound.mean())
    if expectation:
        r = mean_ci(value, level)
        scale = 1.0 / mean_bound if mean_bound > 0 else math.nan
        return {
            "basis": IN_EXPECTATION,
            "n": r["n"],
            "value": r["mean"],
            "bound": mean_bound,
            "ratio_mean": r["mean"] * scale,
            "ratio_ci_low": r["ci_low"] * scale,
            "ratio_ci_high": r["ci_high"] * scale,
            "ratio_max": math.nan,
        }
    positive = bound > 0
    ratio = np.where(positive, value / np.where(positive, bound, 1.0), np.nan)
    r = mean_ci(ratio, level)
    finite = ratio[np.isfinite(ratio)]
    return {
        "basis": PER_REPLICATE,
        "n": r["n"],
        "value": float(value.mean()),
        "bound": mean_bound,
        "ratio_mean": r["mean"],
        "ratio_ci_low": r["ci_low"],
        "ratio_ci_high": r["ci_high"],
        "ratio_max": float(finite.max()) if finite.size else math.nan,
    }


def lower_bound_violations(rows: pd.DataFrame, level: float = LOWER_BOUND_LEVEL) -> pd.DataFrame:
    """Checkpoints where a player's mean is *below* the adversary's reference lower bound.

    Flagged when ``mean < lower − q·s/√n − 1e-9·max(1, |lower|)``: a one-sided CLT margin with
    ``q`` the t quantile at ``1 − (1 − level)/K`` (Bonferroni over the K checkpoints of the cell),
    the lower bound averaged over units. Needs at least two units.
    Returns ``game, player, cell, t, metric, param, mean, lower_bound, margin, n``.
    """
    return _mean_against(rows, "lower_bound", level, above=False)


def expected_bound_violations(rows: pd.DataFrame, level: float = LOWER_BOUND_LEVEL) -> pd.DataFrame:
    """Checkpoints where a bandit player's mean is *above* its declared bound in expectation.

    The mirror of :func:`lower_bound_violations` for the rows of :data:`EXPECTATION_PROTOCOLS`:
    flagged when ``mean > bound + q·s/√n + 1e-9·max(1, |bound|)``, so a player whose expected
    regret sits exactly at its bound is wrongly flagged with probability ≤ ``1 − level`` per cell.
    Returns ``game, player, cell, t, metric, param, mean, bound, margin, n``.
    """
    return _mean_against(rows.loc[in_expectation(rows)], "bound", level, above=True)


def _mean_against(rows: pd.DataFrame, prefix: str, level: float, above: bool) -> pd.DataFrame:
    """Checkpoints whose mean over units is beyond the mean ``<prefix>:<metric>`` reference by
    more than the one-sided Bonferroni CLT margin (above it if ``above``, else below)."""
    metrics = rows["metric"]
    names = [str(m) for m in metrics.unique() if str(m).startswith(f"{prefix}:")]
    keys = ["run_id", "t", "param"]
    extra = ["game_label", "player_label", "cell"]
    out = []
    for name in names:
        target = name.removeprefix(f"{prefix}:")
        ref = rows.loc[(metrics == name).to_numpy()]
        val = rows.loc[(metrics == target).to_numpy()]
        if ref.empty or val.empty:
            continue
        v = grouped_mean_ci(_keyed(val, keys + extra), keys + extra)
        b = _keyed(ref, keys).groupby(keys, observed=True)["value"].mean().rename(prefix)
        m = v.merge(b.reset_index(), on=keys, how="inner")
        n = m["n"].to_numpy()
        # Bonferroni over the checkpoints of one cell and param
        checks = m.groupby(["run_id", "param"], observed=True)["t"].transform("size").to_numpy()
        one_sided = 1 - (1 - level) / checks
        q = t_quantile(n - 1, 2 * one_sided - 1)
        margin = q * m["sd"].to_numpy() / np.sqrt(np.maximum(n, 1))
        reference = m[prefix].to_numpy()
        tol = BOUND_RTOL * np.maximum(1.0, np.abs(reference))
        mean = m["mean"].to_numpy()
        beyond = mean > reference + margin + tol if above else mean < reference - margin - tol
        bad = (n >= 2) & beyond
        if bad.any():
            out.append(m[bad].assign(metric=target, margin=margin[bad]))
    cols = ["game", "player", "cell", "t", "metric", "param", "mean", prefix, "margin", "n"]
    if not out:
        return pd.DataFrame(columns=cols)
    res = pd.concat(out, ignore_index=True)
    res["param"] = res["param"].replace(_NAN_PARAM, np.nan)
    res = res.rename(columns={"game_label": "game", "player_label": "player"})
    return res[cols].sort_values(["game", "player", "metric", "param", "t"])


# ----------------------------------------------------------------------------------------------
# bandit feedback: growth models and the price of bandit feedback

GROWTH_MODELS = ("log t", "√t", "t")
"""The shapes :func:`growth_models` fits to a mean regret curve: ``a + b·g(t)`` for each."""


def growth_models(mean_curve: np.ndarray, ts: np.ndarray) -> dict[str, float]:
    """Fit ``a + b·g(t)`` for ``g`` in ``ln t``, ``√t`` and ``t`` to a mean curve; name the best.

    The fit is least squares over :func:`growth_window` (the upper half of the log-t range, as
    for the growth exponent). Each model's misfit is the root-mean-square residual divided by the
    root-mean-square of the curve there, so the three are comparable; ``best`` is the model with
    the smallest misfit. ``b`` of the ``ln t`` model is the regret per unit of ``ln t`` (the
    constant of a ``C·ln T`` stochastic bound), ``b`` of ``√t`` the constant of a ``C·√T`` one.

    Examples
    --------
    >>> ts = np.array([10.0, 30, 100, 300, 1000, 3000, 10000])
    >>> r = growth_models(5.0 + 2.0 * np.log(ts), ts)
    >>> r["best"], round(r["b_log t"], 6), r["misfit_log t"] < 1e-12
    ('log t', 2.0, True)
    >>> growth_models(3.0 * np.sqrt(ts), ts)["best"]
    '√t'
    """
    ts = np.asarray(ts, dtype=np.float64)
    y = np.asarray(mean_curve, dtype=np.float64)
    window = growth_window(ts)
    out: dict[str, float] = {"best": "n/a", "t_from": math.nan, "t_to": math.nan}
    for name in GROWTH_MODELS:
        out[f"b_{name}"] = math.nan
        out[f"misfit_{name}"] = math.nan
    cols = np.isin(ts, window) & np.isfinite(y)
    if cols.sum() < 3:
        return out
    t, v = ts[cols], y[cols]
    out["t_from"], out["t_to"] = float(t[0]), float(t[-1])
    scale = math.sqrt(float(np.mean(v**2)))
    best, best_misfit = "n/a", math.inf
    for name, g in zip(GROWTH_MODELS, (np.log(t), np.sqrt(t), t), strict=True):
        design = np.column_stack([np.ones_like(g), g])
        coef, *_ = np.linalg.lstsq(design, v, rcond=None)
        resid = v - design @ coef
        misfit = math.sqrt(float(np.mean(resid**2))) / scale if scale > 0 else math.nan
        out[f"b_{name}"], out[f"misfit_{name}"] = float(coef[1]), misfit
        if misfit < best_misfit:
            best, best_misfit = name, misfit
    out["best"] = best
    return out


def growth_model_table(rows: pd.DataFrame, metric: str = "regret") -> pd.DataFrame:
    """:func:`growth_models` of the mean ``metric`` curve of every (game, player)."""
    sub = rows.loc[(rows["metric"] == metric).to_numpy()]
    out = []
    for (game, player), part in sub.groupby(["game_label", "player_label"], observed=True):
        curve = part.groupby("t", observed=True)["value"].mean()
        r = growth_models(curve.to_numpy(), curve.index.to_numpy())
        out.append({"game": str(game), "player": str(player), **r})
    cols = ["game", "player", "best", "t_from", "t_to"]
    cols += [f"{k}_{m}" for m in GROWTH_MODELS for k in ("b", "misfit")]
    return pd.DataFrame(out, columns=cols)


def paired_difference(
    rows: pd.DataFrame, game: str, first: str, second: str, metric: str, level: float = 0.95
) -> dict[str, float]:
    """Paired t summary of ``first − second`` on ``metric`` at the horizon, per unit of ``game``.

    Units (:data:`UNIT`) are matched, so the two players are compared on the same losses (common
    random numbers); units that only one of them has are left out.
    """
    final = final_rows(rows, metric)
    final = final.loc[(final["game_label"] == game).to_numpy()]
    final = final.loc[final["param"].isna().to_numpy()] if final["param"].notna().any() else final
    a = final.loc[(final["player_label"] == first).to_numpy()].set_index(UNIT)["value"]
    b = final.loc[(final["player_label"] == second).to_numpy()].set_index(UNIT)["value"]
    both = a.index.intersection(b.index)
    return paired_t((a.loc[both] - b.loc[both]).to_numpy(), level)
