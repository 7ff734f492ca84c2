"""Helpers of the bandit player tests: the arena's draw, written out, and statistical checks."""

from __future__ import annotations

import math

import numpy as np

from arena.game import run_game


def draw(p: list[float], u: float) -> int:
    """The arena's inverse-CDF draw, literally: the first i with p_1 + … + p_i > u."""
    c = 0.0
    for i, pi in enumerate(p):
        c += pi
        if u < c:
            return i
    return max(i for i, pi in enumerate(p) if pi > 0)


def run_block(player, losses: np.ndarray, uniforms: np.ndarray, horizon: int | None = None):
    """Reset ``player`` for (R, T, K) losses in [0, 1] and return its ``play_block`` output."""
    from arena.spec import GameSpec

    n_rep, n, n_act = losses.shape
    spec = GameSpec("bandit", n_act, horizon or n, (0.0, 1.0), n_replicates=n_rep)
    p = player.clone()
    p.reset(spec, [np.random.default_rng(r) for r in range(n_rep)])
    return p, p.play_block(np.ascontiguousarray(losses), np.ascontiguousarray(uniforms))


def expected_bound_holds(player, adversary, *, metric="regret", bound=None, sigmas=4.0, **game):
    """Assert ``mean − sigmas·sd/√R ≤ bound`` of ``metric`` at every checkpoint (one-sided CLT
    test: false alarm ≈ 3·10⁻⁵ per comparison at 4σ); return the worst ratio mean / bound."""
    metrics = {metric: {}, "bound": {}} if bound is None else {metric: {}}
    rows = run_game(player, adversary, metrics=metrics, **game).rows
    stats = rows.groupby(["t", "metric"]).value.agg(["mean", "std", "count"]).reset_index()
    got = stats[stats.metric == metric].set_index("t")
    if bound is None:
        limit = stats[stats.metric == f"bound:{metric}"].set_index("t")["mean"]
    else:
        limit = got.index.to_series().map(bound)
    margin = sigmas * got["std"] / np.sqrt(got["count"])
    excess = got["mean"] - margin - limit
    assert (excess <= 1e-9).all(), (
        f"{player!r} vs {adversary!r}: mean {metric} exceeds its bound at t = "
        f"{int(excess.idxmax())}: {got['mean'][excess.idxmax()]:.4g} > {limit[excess.idxmax()]:.4g}"
    )
    return float((got["mean"] / limit).max())


def z_scores(estimates: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Per-arm z statistics of the mean of ``estimates − target`` over its first axis."""
    diff = estimates - target
    with np.errstate(invalid="ignore", divide="ignore"):  # an exact estimate: 0/0 is NaN
        return diff.mean(axis=0) / (diff.std(axis=0, ddof=1) / math.sqrt(diff.shape[0]))
