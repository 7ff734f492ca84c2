"""Shared helpers of the adversary tests (trace reading, split invariance, CLT bands)."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq

from arena import GameSpec

CLT_Z = 4.0
"""Expectation statements are asserted within 4 standard errors."""


def rngs(seed: int, n: int) -> list[np.random.Generator]:
    return [np.random.default_rng([seed, r]) for r in range(n)]


def read_trace(path) -> dict[str, np.ndarray]:
    """Return ``probs`` and ``losses`` (R, T, N) from a trace written by ``play(trace_path=)``."""
    table = pq.read_table(path)
    rep = table.column("replicate").to_numpy()
    t = table.column("t").to_numpy()
    order = np.lexsort((t, rep))
    n_rep, horizon = np.unique(rep).size, int(t.max())
    out = {}
    for name in ("probs", "losses"):
        flat = table.column(name).combine_chunks().flatten().to_numpy()
        n_act = flat.size // rep.size
        out[name] = flat.reshape(rep.size, n_act)[order].reshape(n_rep, horizon, n_act)
    return out


def block_losses(adversary, spec: GameSpec, splits, seed: int = 0) -> np.ndarray:
    """Reset a clone with fixed streams and concatenate ``losses_block`` over the given split."""
    a = adversary.clone()
    a.reset(spec, rngs(seed, spec.n_replicates))
    parts, t0 = [], 1
    for n in splits:
        parts.append(np.asarray(a.losses_block(t0, n), dtype=np.float64))
        t0 += n
    return np.concatenate(parts, axis=1)


def assert_split_invariant(adversary, spec: GameSpec, seed: int = 0) -> np.ndarray:
    """Any split of the rounds into blocks gives the same losses; returns them."""
    horizon = spec.horizon
    whole = block_losses(adversary, spec, [horizon], seed)
    for splits in ([1] * horizon, [1, 2, horizon - 3], [horizon // 2, horizon - horizon // 2]):
        np.testing.assert_array_equal(block_losses(adversary, spec, splits, seed), whole)
    return whole


def clt_band(values) -> tuple[float, float]:
    """Return the mean and the half-width ``4·sd/√M`` of the CLT band."""
    v = np.asarray(values, dtype=np.float64)
    return float(v.mean()), CLT_Z * float(v.std(ddof=1)) / np.sqrt(v.size)


def last_values(rows, metric: str, t: int | None = None, param: float | None = None):
    """Values of one metric (optionally one param) at round t (default the last), by replicate."""
    sel = rows[rows.metric == metric]
    sel = sel[sel.t == (sel.t.max() if t is None else t)]
    if param is not None:
        sel = sel[np.isclose(sel.param, param)]
    return sel.sort_values("replicate").value.to_numpy()
