"""Helpers shared by the tests of AdaHedge, FlipFlop, Squint, ML-Prod and BOA.

Imported by ``tests/players/test_{ada_hedge,flip_flop,squint,ml_prod,boa}.py`` as a top-level
module: pytest puts this folder on ``sys.path`` because it is not a package (it must stay one: a
``tests/players/__init__.py`` would shadow the ``players`` package). Nothing here reads an external
file files: constructions are re-implemented from their citations.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from adversaries.replay import Replay
from arena import GameSpec, run_game

BOUND_RTOL = 1e-9
"""A deterministic inequality is asserted as ``lhs <= rhs + 1e-9·max(1,
|rhs|)``."""

ENGINE_ATOL = 1e-12
"""predict/update, the block kernel and the engine run the same compiled row functions on the same
floats, so they agree to rounding (~1e-16); the player contract asks 1e-12."""

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
    }


def traced(player, adversary, tmp_path: Path, **kwargs):
    """Play a game with a Parquet trace; return ``(rows, trace arrays)``."""
    path = Path(tmp_path) / f"trace_{next(_counter)}.parquet"
    run = run_game(player, adversary, trace_path=path, **kwargs)
    return run.rows, read_trace(path)


def metric_table(rows, metric: str, param: float = math.nan) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(t, values)`` of one metric row family, values of shape (R, n_checkpoints)."""
    sub = rows[rows.metric == metric]
    if not math.isnan(param):
        sub = sub[np.isclose(sub.param, param)]
    sub = sub.sort_values(["replicate", "t"])
    ts = np.unique(sub.t.to_numpy())
    return ts, sub.value.to_numpy().reshape(-1, ts.size)


def assert_below(lhs, rhs, what: str) -> None:
    """Tolerance convention: ``lhs <= rhs + 1e-9·max(1, |rhs|)`` elementwise."""
    lhs, rhs = np.broadcast_arrays(np.asarray(lhs, float), np.asarray(rhs, float))
    slack = rhs + BOUND_RTOL * np.maximum(1.0, np.abs(rhs)) - lhs
    worst = np.unravel_index(np.argmin(slack), slack.shape)
    assert slack[worst] >= 0, f"{what}: {lhs[worst]!r} > {rhs[worst]!r} at index {worst}"


def assert_simplex(p: np.ndarray, what: str) -> None:
    """structural invariant: ``p ≥ 0`` and ``|Σ p − 1| ≤ 1e-12``."""
    assert np.all(np.isfinite(p)), what
    assert p.min() >= 0.0, f"{what}: negative weight {p.min()!r}"
    assert np.abs(p.sum(axis=-1) - 1.0).max() <= 1e-12, f"{what}: sums off by more than 1e-12"


def ftl_killer_matrix(horizon: int, n_act: int = 2) -> np.ndarray:
    """the FTL killer: ``l_1 = (½, 0)``, then (0, 1) on even t and (1, 0) on odd t ≥ 3;
    experts beyond the first two lose 1 every round."""
    t = np.arange(1, horizon + 1)
    out = np.ones((horizon, n_act))
    out[:, 0] = np.where(t % 2 == 0, 0.0, 1.0)
    out[:, 1] = np.where(t % 2 == 0, 1.0, 0.0)
    out[0, :2] = (0.5, 0.0)
    return out


def two_phase_matrix(horizon: int, n_act: int, eta0: float = 0.1) -> np.ndarray:
    """two-phase adversary: phase 1 of ``round(3 ln N/η0)`` rounds (at most T/2) where experts 0 and
    1 lose 0 and the others 1, then the FTL killer on experts 0, 1 with the others at 1."""
    t1 = min(horizon // 2, round(3.0 * math.log(max(n_act, 2)) / eta0))
    out = np.ones((horizon, n_act))
    out[:t1, :2] = 0.0
    out[t1:] = ftl_killer_matrix(horizon - t1, n_act)
    return out


def loss_matrices(seed: int, horizon: int, n_act: int) -> dict[str, np.ndarray]:
    """Random T×N losses: uniform, {0, 1}, and tied (values in {0, ½, 1}, a duplicated column and
    some constant rows, so that exact ties in cumulative losses occur)."""
    rng = np.random.default_rng(seed)
    ties = rng.integers(0, 3, (horizon, n_act)) / 2.0
    if n_act > 1:
        ties[:, -1] = ties[:, 0]
    ties[rng.random(horizon) < 0.2] = 0.5
    return {
        "uniform": rng.random((horizon, n_act)),
        "binary": rng.integers(0, 2, (horizon, n_act)).astype(np.float64),
        "ties": ties,
    }


def run_predict_update(player, losses: np.ndarray, lo: float = 0.0, hi: float = 1.0):
    """Play an (R, T, N) loss array through ``reset``/``predict``/``update``; return the (R, T, N)
    distributions. Checks that ``predict`` is pure (two calls, same answer, state unchanged)."""
    n_rep, horizon, n_act = losses.shape
    spec = GameSpec("experts", n_act, horizon, (lo, hi), n_replicates=n_rep)
    player = player.clone()
    player.reset(spec, [np.random.default_rng(r) for r in range(n_rep)])
    out = np.empty_like(losses)
    for t in range(horizon):
        p = player.predict()
        again = player.predict()
        np.testing.assert_array_equal(p, again)  # purity (U2): predict changes nothing
        out[:, t] = p
        player.update(losses[:, t].copy())
    return out


def run_blocks(player, losses: np.ndarray, splits, lo: float = 0.0, hi: float = 1.0):
    """Play an (R, T, N) loss array through ``play_block`` in chunks of the given sizes."""
    n_rep, horizon, n_act = losses.shape
    assert sum(splits) == horizon
    spec = GameSpec("experts", n_act, horizon, (lo, hi), n_replicates=n_rep)
    player = player.clone()
    player.reset(spec, [np.random.default_rng(r) for r in range(n_rep)])
    parts, start = [], 0
    for size in splits:
        parts.append(player.play_block(np.ascontiguousarray(losses[:, start : start + size])))
        start += size
    return np.concatenate(parts, axis=1)


def three_ways(player, losses: np.ndarray, tmp_path: Path, lo: float = 0.0, hi: float = 1.0):
    """Return the (R, T, N) distributions of ``player`` on ``losses`` computed by predict/update,
    by ``play_block`` under several block splits, and by the engine (replay + trace)."""
    n_rep, horizon, _ = losses.shape
    rng = np.random.default_rng(horizon)
    cuts = np.sort(rng.choice(np.arange(1, horizon), size=min(5, horizon - 1), replace=False))
    random_split = np.diff(np.concatenate([[0], cuts, [horizon]])).tolist()
    out = {"predict_update": run_predict_update(player, losses, lo, hi)}
    for label, split in [("one_block", [horizon]), ("random_blocks", random_split)]:
        out[label] = run_blocks(player, losses, split, lo, hi)
    out["single_rounds"] = run_blocks(player, losses[:, :20], [1] * 20, lo, hi)
    path = save_matrix(tmp_path, losses)
    _, trace = traced(
        player,
        Replay(path=path, loss_range=[lo, hi]),
        tmp_path,
        horizon=horizon,
        replicates=n_rep,
        metrics={"regret": {}},
    )
    np.testing.assert_array_equal(trace["losses"], losses)
    out["engine"] = trace["probs"]
    return out


def bound_games(directory: Path, horizon: int, n_act: int, seed: int = 0):
    """The adversary families of and the player guide, as
    ``(label, adversary, adversary_params, n_actions)``."""
    rng = np.random.default_rng(seed)
    uniform = save_matrix(directory, rng.random((3, horizon, n_act)))
    two_phase = save_matrix(directory, two_phase_matrix(horizon, n_act))
    games = [
        ("bernoulli", "bernoulli", {"gap": 0.1}, n_act),
        ("fair_coin", "fair_coin", {}, n_act),
        ("ftl_killer", "ftl_killer", {}, n_act),
        ("shifting_experts", "shifting_experts", {"n_switches": 3, "gap": 0.3}, n_act),
        ("greedy_random", "greedy", {"ties": "random"}, n_act),
        ("greedy_all", "greedy", {"ties": "all"}, n_act),
        ("replay_uniform", "replay", {"path": uniform}, None),
        ("replay_two_phase", "replay", {"path": two_phase}, None),
    ]
    if n_act == 2:
        games.append(("ftl_killer_5", "ftl_killer", {}, 5))
    return games


def play_games(
    make_player: Callable[[], object], directory: Path, sizes, metrics: dict, seed: int = 0
):
    """Yield ``(label, rows)`` for every game of :func:`bound_games` at each (N, T) of ``sizes``."""
    for n_act, horizon in sizes:
        for label, adversary, params, n in bound_games(directory, horizon, n_act, seed):
            rows = run_game(
                make_player(),
                adversary,
                adversary_params=params,
                n_actions=n,
                horizon=horizon,
                replicates=3,
                seed=seed + 1,
                metrics=metrics,
            ).rows
            yield f"{label} N={n or n_act} T={horizon}", rows


def log_log_slope(ts: np.ndarray, values: np.ndarray) -> float:
    """Least-squares slope of ``ln(value)`` on ``ln(t)`` (our scaling test for O-form bounds)."""
    return float(np.polyfit(np.log(ts), np.log(values), 1)[0])


def worst_regret_slope(player, directory: Path, n_act: int = 5) -> tuple[float, np.ndarray]:
    """our recipe for O-form bounds: the
    least-squares slope of ln(max over adversaries of R_T) on ln T, T = 2^10..2^14.

    The adversaries are the FTL killer, the greedy adaptive adversary (mean of 2 replicates) and
    the two-phase matrix. Fair coins are left out on purpose: their expected regret is the same
    for every learner (the non-anticipation identity), so they would
    only add sampling noise to the slope.
    Returns the slope and the worst regret per checkpoint.
    """
    horizon = 2**14
    checkpoints = [2**k for k in range(10, 15)]
    two_phase = save_matrix(directory, two_phase_matrix(horizon, n_act))
    worst = np.zeros(len(checkpoints))
    for adversary, params, n, reps in [
        ("ftl_killer", {}, n_act, 1),
        ("greedy", {}, n_act, 2),
        ("replay", {"path": two_phase}, None, 1),
    ]:
        rows = run_game(
            player,
            adversary,
            adversary_params=params,
            n_actions=n,
            horizon=horizon,
            replicates=reps,
            checkpoints=checkpoints,
            metrics={"regret": {}},
        ).rows
        ts, regret = metric_table(rows, "regret")
        worst = np.maximum(worst, regret.mean(axis=0))
    return log_log_slope(ts, worst), worst


def gap_growth(player, horizon: int = 2**14, early: int = 2**10, runs: int = 20) -> np.ndarray:
    """Per-run growth of the pseudo-regret from round ``early`` to ``horizon`` against Bernoulli
    losses with a gap (means 0.4 vs 0.5, N = 5)."""
    rows = run_game(
        player,
        "bernoulli",
        n_actions=5,
        horizon=horizon,
        replicates=runs,
        adversary_params={"gap": 0.1},
        checkpoints=[early],
        metrics={"pseudo_regret": {}},
    ).rows
    _, pseudo = metric_table(rows, "pseudo_regret")
    return pseudo[:, -1] - pseudo[:, 0]
