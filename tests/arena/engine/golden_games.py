"""The games whose rows are pinned across refactors of the driver (issue 13: one driver).

:func:`golden_digests` plays each game and returns a SHA-256 digest of its tidy rows, column by
column and byte for byte (the float64 ``value`` column included). The digests in
``data/golden_rows.json`` were recorded with ``python -m tests.arena.engine.golden_games`` on the
commit named there; the test ``test_golden_rows.py`` replays the games and compares.

Bit-for-bit equality is a property of the machine's floating-point kernels as much as of the code
(numpy's SIMD ``exp`` and the BLAS may round differently on another processor), so the file also
records a digest of a probe of those kernels; where the probe differs, the test compares the final
values within a tolerance instead of the digests.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

DATA = Path(__file__).parent / "data" / "golden_rows.json"

_EXPERTS_METRICS = {
    "loss": {},
    "regret": {},
    "realized_regret": {},
    "quantile_regret": {"eps": [0.1, 0.5]},
    "shifting_regret": {"k": [1, 3]},
    "adaptive_regret": {},
    "sa_regret": {"tau": [7, 50]},
    "dynamic_regret": {},
    "pseudo_regret": {},
    "zero_weight_frac": {},
    "entropy": {},
    "bound": {},
    "lower_bound": {},
}

# (name, player, player_params, adversary, adversary_params, n_actions, horizon, replicates, extra)
SAMPLE_GAMES: list[tuple[str, str, dict, str, dict, int | None, int, Any, dict]] = [
    ("hedge_bernoulli", "hedge", {}, "bernoulli", {}, 6, 700, 3, {"trace": True}),
    ("hedge_anytime_greedy", "hedge", {"eta": "anytime"}, "greedy", {}, 5, 300, 2, {}),
    ("normal_hedge_dt_shifting", "normal_hedge_dt", {}, "shifting_experts", {}, 7, 500, 3, {}),
    ("ada_normal_hedge_sleeping", "ada_normal_hedge", {}, "sleeping", {}, 5, 400, 2, {}),
    ("fixed_share_piecewise", "fixed_share", {}, "piecewise_stochastic", {}, 4, 600, [1, 4], {}),
    ("ftpl_fair_coin", "ftpl", {}, "fair_coin", {}, 3, 300, 2, {}),
    ("squint_heavier_half", "squint", {}, "heavier_half", {}, 6, 250, 2, {}),
    ("ftl_ftl_killer", "ftl", {}, "ftl_killer", {}, 2, 200, 1, {"checkpoints": [10, 50]}),
    ("ogd_random_linear", "ogd", {}, "random_linear", {}, 4, 300, 2, {}),
    ("adagrad_separable", "adagrad", {"eta": 0.5}, "separable_stream", {}, 5, 300, 2, {}),
    ("perceptron_separable", "perceptron", {}, "separable_stream", {}, 5, 400, 3, {"trace": True}),
    ("ons_strongly_convex", "ons", {}, "strongly_convex", {}, 3, 200, 2, {}),
    ("kt_unconstrained", "kt", {}, "random_linear", {"domain": "unconstrained"}, 3, 300, 2, {}),
    ("ogd_contrarian", "ogd", {"eta": 0.1}, "contrarian", {}, 3, 150, 2, {"trace": True}),
    ("pa_threshold_search", "passive_aggressive", {}, "threshold_search", {}, 4, 120, 2, {}),
]
"""Experts games (stochastic, adaptive, sleeping, explicit replicate indices, checkpoints) and OCO /
classification / regression games (oblivious and adaptive): every branch of both engines."""


def rows_digest(rows: pd.DataFrame) -> str:
    """Return the SHA-256 of a tidy table: column names, then each column's exact contents."""
    h = hashlib.sha256()
    for col in rows.columns:
        h.update(col.encode())
        values = rows[col]
        if values.dtype.kind in "fiub":
            h.update(np.ascontiguousarray(values.to_numpy()).tobytes())
        else:
            h.update("\x1f".join(values.astype(str).tolist()).encode())
    return h.hexdigest()


def trace_digest(trace: pd.DataFrame) -> str:
    """Return the SHA-256 of a trace table (list columns hashed element by element)."""
    h = hashlib.sha256()
    for col in trace.columns:
        h.update(col.encode())
        values = trace[col]
        if values.dtype.kind in "fiub":
            h.update(np.ascontiguousarray(values.to_numpy()).tobytes())
        else:
            h.update(np.concatenate([np.asarray(v, dtype=np.float64) for v in values]).tobytes())
    return h.hexdigest()


def final_values(rows: pd.DataFrame) -> dict[str, float]:
    """Return the mean over replicates of each metric's final value, keyed ``metric|param``."""
    last = rows[rows.t == rows.t.max()]
    means = last.groupby(["metric", "param"], dropna=False).value.mean()
    return {f"{m}|{p!r}": float(v) for (m, p), v in means.items()}


def _sample_game(entry) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Play one sample game; return its rows and, with ``trace``, its trace table."""
    import tempfile

    from arena import run_game

    name, player, pparams, adversary, aparams, n_act, horizon, reps, extra = entry
    extra = dict(extra)
    oco = adversary in _OCO_ADVERSARIES
    if extra.pop("trace", False):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "trace.parquet"
            rows, _ = _sample_game(
                (
                    name,
                    player,
                    pparams,
                    adversary,
                    aparams,
                    n_act,
                    horizon,
                    reps,
                    {**extra, "trace_path": path},
                )
            )
            trace = pd.read_parquet(path)
        return rows, trace
    rows = run_game(
        player,
        adversary,
        player_params=pparams,
        adversary_params=aparams,
        n_actions=n_act,
        horizon=horizon,
        replicates=reps,
        seed=11,
        metrics=None if oco else _EXPERTS_METRICS,
        **extra,
    ).rows
    return rows, None


_OCO_ADVERSARIES = {
    "random_linear",
    "separable_stream",
    "strongly_convex",
    "contrarian",
    "threshold_search",
}


def golden_games() -> dict[str, Any]:
    """Yield ``(name, play)`` for every pinned game: the demo tournament's cells, then the sample.

    ``play()`` returns the game's tidy rows and its trace table (or None).
    """
    from arena.apps.demo import demo_config
    from arena.apps.tournament import run_cell

    games: dict[str, Any] = {}
    config = demo_config()
    for cell in config.cells():

        def play(cell=cell):
            out = run_cell(cell, config)
            if not out["ok"]:
                raise RuntimeError(out["error"])
            return out["rows"], None

        games[f"demo/{cell.label()}"] = play
    for entry in SAMPLE_GAMES:
        games[f"sample/{entry[0]}"] = lambda entry=entry: _sample_game(entry)
    return games


def float_probe_digest() -> str:
    """Digest of numpy's vectorized exp/log and a BLAS product on fixed inputs (see module doc)."""
    x = np.linspace(-30.0, 30.0, 4099)
    a = np.sin(np.arange(64 * 64, dtype=np.float64)).reshape(64, 64)
    h = hashlib.sha256()
    for arr in (np.exp(x), np.log1p(np.abs(x)), np.expm1(x / 7), a @ a, np.linalg.solve(a, a[0])):
        h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


def record() -> dict[str, Any]:
    """Play every golden game and return the recording (digests, final values, provenance)."""
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    out: dict[str, Any] = {"commit": commit, "float_probe": float_probe_digest(), "games": {}}
    for name, play in golden_games().items():
        rows, trace = play()
        out["games"][name] = {
            "rows": len(rows),
            "digest": rows_digest(rows),
            "final": final_values(rows),
        }
        if trace is not None:
            out["games"][name]["trace_digest"] = trace_digest(trace)
        print(name, len(rows), file=sys.stderr)
    return out


if __name__ == "__main__":
    DATA.write_text(json.dumps(record(), indent=1, sort_keys=True) + "\n")
