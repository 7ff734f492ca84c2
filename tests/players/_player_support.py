"""Helpers shared by the player test files: traces, loss matrices, loops, tolerant asserts."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np

from arena import GameSpec, run_game
from arena.results import read_trace

BOUND_RTOL = 1e-9
"""Tolerance convention: ``lhs <= rhs + 1e-9·max(1, |rhs|)``."""

_counter = itertools.count()


def save_matrix(directory: Path, losses: np.ndarray) -> str:
    """Save a loss array as ``.npy`` under a fresh name and return its path (for ``Replay``)."""
    path = Path(directory) / f"losses_{next(_counter)}.npy"
    np.save(path, np.asarray(losses, dtype=np.float64))
    return str(path)


def traced(player, adversary, tmp_path: Path, **kwargs):
    """Run a game with a trace; return its rows and :func:`arena.results.read_trace` arrays."""
    path = Path(tmp_path) / f"trace_{next(_counter)}.parquet"
    run = run_game(player, adversary, trace_path=path, **kwargs)
    return run.rows, read_trace(path)


def assert_below(lhs, rhs, what: str) -> None:
    """Assert ``lhs <= rhs`` elementwise within :data:`BOUND_RTOL`, naming the worst entry."""
    lhs, rhs = np.broadcast_arrays(np.asarray(lhs, float), np.asarray(rhs, float))
    slack = rhs + BOUND_RTOL * np.maximum(1.0, np.abs(rhs)) - lhs
    worst = np.unravel_index(np.argmin(slack), slack.shape)
    assert slack[worst] >= 0, f"{what}: {lhs[worst]!r} > {rhs[worst]!r} at {worst}"


def loss_matrices(seed: int, horizon: int, n_act: int) -> dict[str, np.ndarray]:
    """Uniform, {0, 1} and tied (duplicate columns, constant rows, values in {0, ½, 1}) losses."""
    rng = np.random.default_rng(seed)
    ties = rng.integers(0, 3, (horizon, n_act)) / 2.0
    ties[:, -1] = ties[:, 0]
    ties[::7] = 0.5  # constant rows: no-op rounds
    return {
        "uniform": rng.random((horizon, n_act)),
        "binary": rng.integers(0, 2, (horizon, n_act)).astype(float),
        "ties": ties,
    }


def regrets_from_trace(tr) -> np.ndarray:
    """``R_t = Σ_{τ≤t} (p_τ·ℓ_τ − ℓ_τ)``, shape (R, T + 1, N) with ``R_0 = 0``."""
    inst = tr["expected"][:, :, None] - tr["losses"]
    cum = np.cumsum(inst, axis=1)
    return np.concatenate([np.zeros_like(cum[:, :1]), cum], axis=1)


def play_loop(player, losses: np.ndarray, spec: GameSpec) -> np.ndarray:
    """predict/update every round; losses (R, T, N) → p (R, T, N)."""
    player.reset(spec, [np.random.default_rng(0)] * spec.n_replicates)
    out = []
    for j in range(losses.shape[1]):
        out.append(player.predict())
        player.update(losses[:, j])
    return np.stack(out, axis=1)


def play_blocks(player, losses: np.ndarray, spec: GameSpec, splits) -> np.ndarray:
    """``play_block`` over the given split of rounds; losses (R, T, N) → p (R, T, N)."""
    player.reset(spec, [np.random.default_rng(0)] * spec.n_replicates)
    out, t0 = [], 0
    for n in splits:
        out.append(player.play_block(np.ascontiguousarray(losses[:, t0 : t0 + n])))
        t0 += n
    assert t0 == losses.shape[1]
    return np.concatenate(out, axis=1)
