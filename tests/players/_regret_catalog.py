"""Shared helpers of the tests of fixed_share, mixing_past_posteriors, kt_experts, ftpl, cover2 and
the Hedge doubling trick: loss files, traces, the adversary catalog and declared-bound checks.

(Imported as a top-level module: pytest puts this folder on ``sys.path`` because it is not a
package; it must stay one, since a ``tests/players/__init__.py`` would shadow ``players``.)
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from arena import run_game

BOUND_RTOL = 1e-9
"""A deterministic inequality holds if ``lhs <= rhs + 1e-9·max(1, |rhs|)``."""

_counter = itertools.count()


def save_matrix(directory: Path, losses: np.ndarray) -> str:
    """Write a T×N or R×T×N loss array to a fresh ``.npy`` file and return its path."""
    path = Path(directory) / f"losses_{next(_counter)}.npy"
    np.save(path, np.asarray(losses, dtype=np.float64))
    return str(path)


def read_trace(path: Path) -> dict[str, np.ndarray]:
    """Return the per-round trace as arrays indexed ``[replicate_row, t − 1, ...]``."""
    table = pq.read_table(path)
    rep = table.column("replicate").to_numpy()
    t = table.column("t").to_numpy()
    order = np.lexsort((t, rep))
    n_rep, horizon = np.unique(rep).size, int(t.max())
    probs = table.column("probs").combine_chunks().flatten().to_numpy()
    losses = table.column("losses").combine_chunks().flatten().to_numpy()
    n_act = probs.size // rep.size
    return {
        "probs": probs.reshape(rep.size, n_act)[order].reshape(n_rep, horizon, n_act),
        "losses": losses.reshape(rep.size, n_act)[order].reshape(n_rep, horizon, n_act),
        "expected": table.column("expected_loss").to_numpy()[order].reshape(n_rep, horizon),
    }


def traced(player, adversary, tmp_path: Path, **kwargs):
    """Play a game with a trace; return ``(rows, trace arrays)``."""
    path = Path(tmp_path) / f"trace_{next(_counter)}.parquet"
    run = run_game(player, adversary, trace_path=path, **kwargs)
    return run.rows, read_trace(path)


def ftl_killer_matrix(horizon: int, n_actions: int = 2, first=(0.5, 0.0)) -> np.ndarray:
    """the FTL killer: ``l_1 = (½, 0)``, then (0, 1) on even t and (1, 0) on odd t ≥ 3;
    experts beyond the first two lose 1 every round."""
    t = np.arange(1, horizon + 1)
    out = np.ones((horizon, n_actions))
    out[:, 0] = np.where(t % 2 == 0, 0.0, 1.0)
    out[:, 1] = np.where(t % 2 == 0, 1.0, 0.0)
    out[0, :2] = first
    return out


def two_phase_matrix(horizon: int, n_actions: int, eta: float, first=(0.5, 0.0)) -> np.ndarray:
    """two-phase adversary: phase 1 of ``round(3 ln N/η)`` rounds (at least 1) where experts 0, 1
    lose 0 and the others 1, then the FTL killer on experts 0, 1 with the others still at 1."""
    t1 = min(horizon - 1, max(1, round(3.0 * math.log(max(n_actions, 2)) / eta)))
    out = np.ones((horizon, n_actions))
    out[:t1, :2] = 0.0
    out[t1:] = ftl_killer_matrix(horizon - t1, n_actions, first)
    return out


def assert_below(lhs, rhs, what: str) -> None:
    """Tolerance convention: ``lhs <= rhs + 1e-9·max(1, |rhs|)`` elementwise."""
    lhs, rhs = np.broadcast_arrays(np.asarray(lhs, float), np.asarray(rhs, float))
    slack = rhs + BOUND_RTOL * np.maximum(1.0, np.abs(rhs)) - lhs
    worst = np.unravel_index(np.argmin(slack), slack.shape)
    assert slack[worst] >= 0, f"{what}: {lhs[worst]!r} > {rhs[worst]!r} at index {worst}"


def check_declared_bounds(rows: pd.DataFrame, label: str) -> int:
    """Every ``bound:<metric>`` row dominates its ``<metric>`` row (same replicate, t, param).

    Returns the number of (bound, metric) pairs checked; fails if a bounded metric is missing.
    """
    bounds = rows[rows.metric.str.startswith("bound:")]
    target = bounds.assign(metric=bounds.metric.str.removeprefix("bound:"))
    key = ["replicate", "t", "metric", "param"]
    merged = target.merge(rows, on=key, how="left", suffixes=("_bound", ""))
    assert not merged.value.isna().any(), f"{label}: a bounded metric was not computed"
    assert_below(merged.value.to_numpy(), merged.value_bound.to_numpy(), label)
    return len(merged)


def catalog(directory: Path, n_act: int, horizon: int, eta0: float = 0.1, binary=False):
    """The adversary catalog of the player guide: ``(label, adversary, params, n_actions)``.

    bernoulli, fair_coin, ftl_killer, shifting_experts, greedy (both tie modes), a replay of
    random uniform losses (three replicates' worth) and a replay of the two-phase matrix of
    two-phase adversary
    (phase 1 of ``3 ln N/η0`` rounds). ``binary=True`` keeps every loss in {0, 1} (the killer and
    the two-phase matrix start with (1, 0) instead of (½, 0), the uniform replay is rounded).
    """
    rng = np.random.default_rng(1000 * n_act + horizon)
    uniform = rng.random((3, horizon, n_act))
    first = (1.0, 0.0) if binary else (0.5, 0.0)
    if binary:
        uniform = np.round(uniform)
    yield "bernoulli", "bernoulli", {"gap": 0.1}, n_act
    yield "fair_coin", "fair_coin", {}, n_act
    if not binary:
        yield "ftl_killer", "ftl_killer", {}, n_act
    else:
        killer = save_matrix(directory, ftl_killer_matrix(horizon, n_act, first))
        yield "ftl_killer_binary", "replay", {"path": killer}, n_act
    if n_act >= 2:
        yield "shifting", "shifting_experts", {"n_switches": 3, "gap": 0.3}, n_act
    yield "greedy_random", "greedy", {"ties": "random"}, n_act
    yield "greedy_all", "greedy", {"ties": "all"}, n_act
    yield "replay_uniform", "replay", {"path": save_matrix(directory, uniform)}, n_act
    two = two_phase_matrix(horizon, n_act, eta0, first)
    yield "replay_two_phase", "replay", {"path": save_matrix(directory, two)}, n_act


def play_catalog(player, directory, n_act, horizon, metrics, binary=False, replicates=3):
    """Play ``player`` on the whole catalog; yield ``(label, rows)``."""
    for label, adversary, params, n in catalog(directory, n_act, horizon, binary=binary):
        run = run_game(
            player,
            adversary,
            adversary_params=params,
            n_actions=n,
            horizon=horizon,
            replicates=replicates,
            seed=17,
            metrics=metrics,
        )
        yield label, run.rows


def metric_table(rows: pd.DataFrame, metric: str, param: float = math.nan) -> np.ndarray:
    """Values of one metric as an array (R, checkpoints), replicates and rounds in order."""
    sel = rows.metric == metric
    sel &= rows.param.isna() if math.isnan(param) else rows.param == param
    sub = rows[sel].sort_values(["replicate", "t"])
    n_t = sub.t.nunique()
    return sub.value.to_numpy().reshape(-1, n_t)


def random_matrices(rng: np.random.Generator, horizon: int, n_act: int) -> dict[str, np.ndarray]:
    """Loss matrices of Uniform, {0, 1}, and dyadic with a duplicated column (ties)."""
    ties = rng.integers(0, 5, size=(horizon, n_act)) / 4.0
    if n_act > 1:
        ties[:, -1] = ties[:, 0]
    return {
        "uniform": rng.random((horizon, n_act)),
        "binary": rng.integers(0, 2, size=(horizon, n_act)).astype(float),
        "ties": ties,
    }


def spec_for(losses: np.ndarray, horizon=None, loss_range=(0.0, 1.0)):
    """A GameSpec for an (R, T, N) loss array (horizon T unless given; None for anytime)."""
    from arena import GameSpec

    n_rep, t, n_act = losses.shape
    return GameSpec(
        "experts",
        n_act,
        t if horizon is None else horizon,
        tuple(loss_range),
        n_replicates=n_rep,
    )


def play_loop(player, losses: np.ndarray, spec, rngs=None) -> np.ndarray:
    """Reset a clone and play (R, T, N) losses with predict/update; check purity on the way."""
    p = player.clone()
    p.reset(spec, rngs or [np.random.default_rng(r) for r in range(losses.shape[0])])
    out = np.empty(losses.shape)
    for t in range(losses.shape[1]):
        first = np.array(p.predict(), copy=True)
        again = p.predict()
        assert np.array_equal(first, again), f"predict is not pure at round {t + 1}"
        out[:, t] = first
        p.update(losses[:, t].copy())
    return out


def play_blocks(player, losses: np.ndarray, spec, cuts, rngs=None) -> np.ndarray:
    """Reset a clone and play (R, T, N) losses through ``play_block`` cut at ``cuts``."""
    p = player.clone()
    p.reset(spec, rngs or [np.random.default_rng(r) for r in range(losses.shape[0])])
    edges = [0, *sorted(c for c in cuts if 0 < c < losses.shape[1]), losses.shape[1]]
    parts = [
        p.play_block(np.ascontiguousarray(losses[:, a:b])) for a, b in itertools.pairwise(edges)
    ]
    return np.concatenate(parts, axis=1)


def assert_simplex(probs: np.ndarray, what: str) -> None:
    """structural invariant: ``p ≥ 0`` and ``|Σ p − 1| ≤ 1e-12``."""
    assert (probs >= 0).all(), f"{what}: a negative weight"
    assert np.abs(probs.sum(axis=-1) - 1.0).max() <= 1e-12, f"{what}: weights do not sum to 1"
