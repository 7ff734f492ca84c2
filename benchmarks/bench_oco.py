"""OCO engine throughput: OGD, AdaGrad and ONS against random linear losses, ours vs a naive loop.

Run it with::

    .venv/bin/python benchmarks/bench_oco.py           # full run, about two minutes
    .venv/bin/python benchmarks/bench_oco.py --quick   # tiny sizes, a smoke test (< 30 s)

Everything is measured in one process run. Throughput is in replicate-rounds per second
(R·T / seconds of ``run_game``, setup and row assembly included) for ``ogd`` (η_t = D/(G√t),
unit ball), ``adagrad`` (diagonal, η = D∞/√2, box ``[−1, 1]^d``) and ``ons`` (β = ½, ε = 1,
unconstrained) against ``random_linear`` (``g_t`` uniform on the unit sphere), d ∈ {10, 1000},
R ∈ {1, 64}, metrics ``loss`` and ``regret`` (ONS: regret against the unit ball). The baseline is
:func:`naive_replicate`: the readable per-round numpy loop a researcher would write, one
replicate at a time, drawing ``g_t`` per round and computing the same metrics on the same
checkpoint grid. Before timing, it is fed the engine's own ``g_t`` (from ``trace.parquet``) and
must reproduce the engine's points ``w_t`` and metric rows to 1e-9, so it provably does the same
work. The markdown table is printed and written to ``benchmarks/results/oco_latest.md``
(git-ignored).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_engine import best_times, fmt_rate, machine

RESULTS = Path(__file__).resolve().parent / "results" / "oco_latest.md"
SEED = 0

PLAYERS = {
    "ogd": ({}, {"domain": "ball", "distribution": "sphere"}, {"loss": {}, "regret": {}}),
    "adagrad": (
        {"variant": "diagonal"},
        {"domain": "box", "distribution": "sphere"},
        {"loss": {}, "regret": {}},
    ),
    "ons": (
        {"beta": 0.5, "eps": 1.0},
        {"domain": "unconstrained", "distribution": "sphere"},
        {"loss": {}, "regret": {"radius": [1.0]}},
    ),
}

# (player, d, R) -> horizon of our run; (player, d) -> horizon of the naive loop. Chosen for
# ~1–5 s per measurement on a 2-core Xeon.
FULL = {
    "ours": {
        ("ogd", 10, 1): 200_000, ("ogd", 10, 64): 20_000,
        ("ogd", 1000, 1): 50_000, ("ogd", 1000, 64): 2_000,
        ("adagrad", 10, 1): 200_000, ("adagrad", 10, 64): 20_000,
        ("adagrad", 1000, 1): 50_000, ("adagrad", 1000, 64): 2_000,
        ("ons", 10, 1): 100_000, ("ons", 10, 64): 10_000,
        ("ons", 1000, 1): 1_000, ("ons", 1000, 64): 60,
    },
    "naive": {
        ("ogd", 10): 20_000, ("ogd", 1000): 10_000,
        ("adagrad", 10): 20_000, ("adagrad", 1000): 10_000,
        ("ons", 10): 10_000, ("ons", 1000): 300,
    },
}  # fmt: skip
QUICK = {
    "ours": {k: max(20, v // 100) for k, v in FULL["ours"].items()},
    "naive": {k: max(20, v // 100) for k, v in FULL["naive"].items()},
}
DIMS = (10, 1000)
REPS = (1, 64)


def naive_replicate(player, dim, horizon, grid, rng, g_given=None):
    """One replicate of the game as a plain per-round numpy loop; return (points, rows).

    ``rows`` are ``(t, metric, value)`` at the checkpoints; ``g_given`` (T, d) replaces the
    per-round draws (for the equality check).
    """
    checkpoints = set(grid)
    w = np.zeros(dim)
    g_sum = np.zeros(dim)
    loss = 0.0
    sq_sum = np.zeros(dim)  # AdaGrad
    a_inv = np.eye(dim)  # ONS: A_0 = εI with ε = 1
    points, rows = [], []
    for t in range(1, horizon + 1):
        points.append(w.copy())
        if g_given is None:
            z = rng.standard_normal(dim)
            g = z / np.linalg.norm(z)
        else:
            g = g_given[t - 1]
        loss += g @ w
        g_sum += g
        if player == "ogd":  # η_t = D/(G√t), D = 2, G = 1; Euclidean projection on the ball
            w = w - (2.0 / math.sqrt(t)) * g
            norm = np.linalg.norm(w)
            if norm > 1.0:
                w /= norm
        elif player == "adagrad":  # η = D∞/√2 = √2; clip to the box
            sq_sum += g * g
            scale = np.zeros(dim)
            seen = sq_sum > 0
            scale[seen] = 1.0 / np.sqrt(sq_sum[seen])
            w = np.clip(w - math.sqrt(2.0) * g * scale, -1.0, 1.0)
        else:  # ONS, unconstrained: A_t = I + Σ g gᵀ (Sherman–Morrison), w −= (1/β) A_t⁻¹ g
            ag = a_inv @ g
            a_inv -= np.outer(ag, ag) / (1.0 + g @ ag)
            w = w - 2.0 * (a_inv @ g)
        if t in checkpoints:
            best = -np.linalg.norm(g_sum) if player != "adagrad" else -np.abs(g_sum).sum()
            rows += [(t, "loss", loss), (t, "regret", loss - best)]
    return np.array(points), rows


def ours(player, dim, horizon, replicates, trace_path=None):
    from arena.game import run_game

    params, adv_params, metrics = PLAYERS[player]
    return run_game(
        player, "random_linear", horizon=horizon, n_actions=dim, replicates=replicates,
        seed=SEED, metrics=metrics, player_params=params, adversary_params=adv_params,
        trace_path=trace_path,
    )  # fmt: skip


def check_naive(player: str, dim: int, horizon: int) -> float:
    """Feed the engine's g_t to the naive loop; return the largest difference in w_t and rows."""
    import pyarrow.parquet as pq

    from arena.checkpoints import log_grid

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.parquet"
        run = ours(player, dim, horizon, 2, trace_path=path)
        trace = pq.read_table(path).to_pandas()
    grid = log_grid(horizon, 10).tolist()
    err = 0.0
    for r in range(2):
        tr = trace[trace.replicate == r].sort_values("t")
        g = np.stack(tr.g.to_numpy())
        points, rows = naive_replicate(player, dim, horizon, grid, None, g_given=g)
        err = max(err, float(np.abs(points - np.stack(tr.w.to_numpy())).max()))
        mine = run.rows[run.rows.replicate == r]
        for t, metric, value in rows:
            theirs = mine[(mine.t == t) & (mine.metric == metric)].value.iloc[0]
            err = max(err, abs(theirs - value))
    assert err < 1e-9, f"naive {player} disagrees with the engine by {err:g}"
    return err


def naive_game(player, dim, horizon, replicates):
    from arena.checkpoints import log_grid

    grid = log_grid(horizon, 10).tolist()
    for r in range(replicates):
        naive_replicate(player, dim, horizon, grid, np.random.default_rng([SEED, r]))


def main(quick: bool) -> str:
    sizes = QUICK if quick else FULL
    started = time.perf_counter()
    lines = [f"# OCO engine benchmark ({'quick' if quick else 'full'})", "", machine(), ""]
    print("warming up and checking the naive loop against the engine ...", flush=True)
    checks = []
    for player in PLAYERS:
        for dim in DIMS:
            for reps in REPS:
                ours(player, dim, 30, reps)
            checks.append(check_naive(player, dim, 200 if dim == 10 else 40))
    lines += [
        f"Sanity check: the naive loop reproduces the engine's w_t and rows on the engine's own "
        f"g_t (largest difference {max(checks):.1e}, every player and d).",
        "",
        "| player | d | R | T (ours) | ours rr/s | naive reps × T | naive rr/s | speedup |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for player in PLAYERS:
        for dim in DIMS:
            naive_t = sizes["naive"][(player, dim)]
            horizons = [sizes["ours"][(player, dim, reps)] for reps in REPS]
            # the naive loop and ours at every R, timed in turn (see bench_engine.best_times)
            (nsec, *secs), k = best_times(
                [lambda: naive_game(player, dim, naive_t, 1)]  # noqa: B023
                + [
                    lambda reps=reps, horizon=horizon: ours(player, dim, horizon, reps)  # noqa: B023
                    for reps, horizon in zip(REPS, horizons, strict=True)
                ],
                repeats=3,
            )
            nrate = naive_t / nsec
            for reps, horizon, sec in zip(REPS, horizons, secs, strict=True):
                rate = reps * horizon / sec
                row = (
                    f"| {player} | {dim} | {reps} | {horizon:,} | {fmt_rate(rate)} | "
                    f"1 × {naive_t:,} | {fmt_rate(nrate)} | {rate / nrate:,.1f}× |"
                )
                lines.append(row)
                print(row, f"(best of {k} interleaved rounds)", flush=True)
    lines += ["", f"Total benchmark time: {time.perf_counter() - started:.0f} s."]
    text = "\n".join(lines) + "\n"
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(text)
    return text


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    print(main(parser.parse_args().quick))
