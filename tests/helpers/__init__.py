"""Helpers of the test suite: one definition of each, imported by every test file that needs it.

This module holds what does not depend on the protocol; the others follow the library's layout:

- :mod:`tests.helpers` (here): the tolerance convention (:func:`assert_below`), loss files and
  traced games, per-replicate generators, CLT bands, lookups in result rows and the check that
  every declared bound dominates its metric.
- :mod:`tests.helpers.experts`: experts games — loss matrices, the FTL-killer and two-phase
  constructions, predict/update and block drivers, the adversary catalogs of the player tests.
- :mod:`tests.helpers.oco`: OCO players — specs, literal single-game pieces, streams, drivers,
  closed-form best comparators, small test adversaries.
- :mod:`tests.helpers.classification`: linear classifiers — specs, drivers, separable and r-of-k
  streams, mistake-bound quantities.
- :mod:`tests.helpers.oco_adversaries`: OCO adversaries — the spec the engine builds, block and
  per-round data, literal drivers and the tiny players the lower-bound constructions are run on.
- :mod:`tests.helpers.cli`: the ``arena`` command in a subprocess.

Fixtures live in ``tests/conftest.py``. A helper used by one test file only stays in that file.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd

from arena import run_game
from arena.results import read_trace
from arena.testing.common import rngs

__all__ = [
    "BOUND_RTOL",
    "CLT_Z",
    "assert_below",
    "check_declared",
    "clt_band",
    "last_values",
    "metric_table",
    "read_trace",
    "rngs",
    "save_matrix",
    "traced",
]

BOUND_RTOL = 1e-9
"""Tolerance convention: a deterministic inequality holds if ``lhs <= rhs + 1e-9·max(1, |rhs|)``."""

CLT_Z = 4.0
"""Expectation statements are asserted within 4 standard errors."""

_counter = itertools.count()


def assert_below(lhs, rhs, what: str = "") -> None:
    """Assert ``lhs <= rhs + 1e-9·max(1, |rhs|)`` elementwise, naming the worst violation.

    A NaN on either side is a violation; ``rhs = +inf`` bounds everything finite.
    """
    lhs, rhs = np.broadcast_arrays(np.asarray(lhs, dtype=float), np.asarray(rhs, dtype=float))
    with np.errstate(invalid="ignore"):
        ok = lhs <= rhs + BOUND_RTOL * np.maximum(1.0, np.abs(rhs))
    if ok.all():
        return
    with np.errstate(invalid="ignore"):
        excess = np.where(ok, -np.inf, np.nan_to_num(lhs - rhs, nan=np.inf))
    worst = np.unravel_index(np.argmax(excess), excess.shape)
    raise AssertionError(
        f"{what}: {int((~ok).sum())} violation(s); worst {lhs[worst]!r} > {rhs[worst]!r} at {worst}"
    )


def save_matrix(directory: Path, losses: np.ndarray) -> str:
    """Write a T×N or R×T×N loss array to a fresh ``.npy`` file (for ``Replay``); its path."""
    path = Path(directory) / f"losses_{next(_counter)}.npy"
    np.save(path, np.asarray(losses, dtype=np.float64))
    return str(path)


def traced(player, adversary, tmp_path: Path, **kwargs):
    """Play an experts game with a trace; return ``(rows, read_trace(trace))``."""
    path = Path(tmp_path) / f"trace_{next(_counter)}.parquet"
    run = run_game(player, adversary, trace_path=path, **kwargs)
    return run.rows, read_trace(path)


def clt_band(values) -> tuple[float, float]:
    """Return the mean and the half-width ``4·sd/√M`` of the CLT band."""
    v = np.asarray(values, dtype=np.float64)
    return float(v.mean()), CLT_Z * float(v.std(ddof=1)) / np.sqrt(v.size)


def metric_table(rows: pd.DataFrame, metric: str, param: float = math.nan):
    """Return ``(t, values)`` of one metric (and one param; NaN: the rows without a param), values
    of shape (R, n_checkpoints) with replicates and rounds in order. Fails if no row matches, so
    that a comparison of two tables cannot pass on empty arrays."""
    sub = rows[rows.metric == metric]
    sub = sub[sub.param.isna()] if math.isnan(param) else sub[np.isclose(sub.param, param)]
    assert len(sub), f"no rows of {metric} (param {param})"
    sub = sub.sort_values(["replicate", "t"])
    ts = np.unique(sub.t.to_numpy())
    return ts, sub.value.to_numpy().reshape(-1, ts.size)


def last_values(rows: pd.DataFrame, metric: str, t: int | None = None, param: float | None = None):
    """Values of one metric (optionally one param) at round t (default the last), by replicate."""
    sel = rows[rows.metric == metric]
    sel = sel[sel.t == (sel.t.max() if t is None else t)]
    if param is not None:
        sel = sel[np.isclose(sel.param, param)]
    return sel.sort_values("replicate").value.to_numpy()


def check_declared(rows: pd.DataFrame, label: str) -> int:
    """Every ``bound:<metric>`` row dominates the ``<metric>`` row of the same replicate, round
    and param (:func:`assert_below`). Fails if a bounded metric was not computed; returns the
    number of pairs checked."""
    bounds = rows[rows.metric.str.startswith("bound:")]
    target = bounds.assign(metric=bounds.metric.str.removeprefix("bound:"))
    key = ["replicate", "t", "metric", "param"]
    merged = target.merge(rows, on=key, how="left", suffixes=("_bound", ""))
    missing = merged[merged.value.isna()]
    assert missing.empty, f"{label}: bound on a metric not computed: {missing.metric.unique()}"
    assert_below(merged.value.to_numpy(), merged.value_bound.to_numpy(), label)
    return len(merged)
