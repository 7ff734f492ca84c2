"""One game on two threads: the speedup of ``n_jobs=2`` over ``n_jobs=1`` (``arena.parallel``).

Plays ``hedge`` against ``bernoulli`` at N ∈ {10, 100, 1000} × R ∈ {1, 64}, with every default
metric and with regret only, timing ``n_jobs=1`` and ``n_jobs=2`` in alternation (each keeps its
best of ``--repeats``), after a warm-up that compiles or loads every kernel. The rows of the two
are checked equal (bit for bit) before timing. Each row also times a compiled loop without the
GIL on one and two threads in the same alternation: its ratio, the "ceiling", is the speedup the
machine itself gave two threads while that row ran (about 2 on two idle cores, less on a machine
shared with other work); and, for R = 64, the game's two halves played at once in two warm
processes, which no GIL limits: threads that keep up with processes lose nothing to the GIL.
Prints a Markdown table (see benchmarks/README.md).

    .venv/bin/python benchmarks/bench_parallel.py [--repeats 3] [--quick]
        [--metrics default|"regret only"|both] [--replicates 1 64]
"""

from __future__ import annotations

import argparse
import os
import platform
import threading
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd
from numba import njit

from arena.game import run_game

METRICS = {"default": None, "regret only": {"regret": {}}}


def elements(r: int, metrics: str, quick: bool) -> int:
    """R·N·T of one timed game: a few seconds of one core for R = 64, so that what stays serial
    (preparing the whole game, assembling its rows: about 0.1 s at R = 64) is small against the
    rounds; less for R = 1, which is never split."""
    base = 8 * 10**7 if metrics == "default" else 2 * 10**8
    if r == 1:
        base //= 16
    return base // (200 if quick else 1)


@njit(nogil=True)
def _spin(n):
    s = 0.0
    for i in range(n):
        s += np.sqrt(i * 1.0)
    return s


def spin_time(k: int, n: int = 3 * 10**7) -> float:
    """Wall time of a compiled loop without the GIL, split over ``k`` threads."""
    threads = [threading.Thread(target=_spin, args=(n // k,)) for _ in range(k)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started


def _half(kw: dict, ids: list[int]) -> None:
    run_game("hedge", "bernoulli", n_jobs=1, **{**kw, "replicates": ids})


def timed_processes(pool: ProcessPoolExecutor, kw: dict) -> float:
    """Wall time of the game's two halves played at once in two warm processes (no GIL)."""
    r = kw["replicates"]
    halves = [list(range(r // 2)), list(range(r // 2, r))]
    started = time.perf_counter()
    list(pool.map(_half, [kw, kw], halves))
    return time.perf_counter() - started


def timed(kw: dict, n_jobs: int) -> float:
    started = time.perf_counter()
    run_game("hedge", "bernoulli", n_jobs=n_jobs, **kw)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--metrics", choices=[*METRICS, "both"], default="both")
    parser.add_argument("--replicates", type=int, nargs="+", default=[1, 64])
    args = parser.parse_args()
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.processor() or ''} "
        f"{os.cpu_count()} cores, load before: {load}"
    )
    _spin(10)
    pool = ProcessPoolExecutor(2)
    print()
    print(
        "| N | R | metrics | T | n_jobs=1 s | n_jobs=2 s | speedup | 2 processes | ceiling | "
        "M updates/s (1 → 2) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for metrics in METRICS if args.metrics == "both" else [args.metrics]:
        for n in (10, 100, 1000):
            for r in args.replicates:
                horizon = max(100, elements(r, metrics, args.quick) // (n * r))
                kw = dict(n_actions=n, replicates=r, horizon=horizon, metrics=METRICS[metrics])
                small = {**kw, "horizon": 50}
                one = run_game("hedge", "bernoulli", n_jobs=1, **small).rows
                two = run_game("hedge", "bernoulli", n_jobs=2, **small).rows
                pd.testing.assert_frame_equal(one, two, check_exact=True)
                if r > 1:
                    timed_processes(pool, small)  # the workers load the kernels
                best = {1: float("inf"), 2: float("inf"), "p": float("inf")}
                spin = {1: float("inf"), 2: float("inf")}
                for _ in range(args.repeats):
                    for jobs in (1, 2):
                        best[jobs] = min(best[jobs], timed(kw, jobs))
                        spin[jobs] = min(spin[jobs], spin_time(jobs))
                    if r > 1:
                        best["p"] = min(best["p"], timed_processes(pool, kw))
                work = n * r * horizon / 1e6
                print(
                    f"| {n} | {r} | {metrics} | {horizon} | {best[1]:.3f} | {best[2]:.3f} | "
                    f"{best[1] / best[2]:.2f}× | "
                    f"{'–' if r == 1 else format(best[1] / best['p'], '.2f') + '×'} | "
                    f"{spin[1] / spin[2]:.2f}× | "
                    f"{work / best[1]:.0f} → {work / best[2]:.0f} |",
                    flush=True,
                )
    pool.shutdown()
    print()
    print(f"load after: {os.getloadavg() if hasattr(os, 'getloadavg') else None}")


if __name__ == "__main__":
    main()
