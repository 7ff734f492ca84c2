"""One game on two threads: the speedup of ``n_jobs=2`` over ``n_jobs=1`` (``arena.parallel``).

Plays ``hedge`` against ``bernoulli`` at N ∈ {10, 100, 1000} × R ∈ {1, 64}, with every default
metric and with regret only, after a warm-up that compiles or loads every kernel and checks the
rows of ``n_jobs=1`` and ``n_jobs=2`` equal, bit for bit.

**Paired alternation.** Each of ``--repeats`` rounds times ``n_jobs=1``, ``n_jobs=2`` and (for
R = 64) the game's two halves played at once in two warm processes, which no GIL limits, in
alternating order (forward, then backward). A round's ratios are taken between runs seconds apart,
so that the machine's slow drift (a shared host's neighbours come and go over minutes, and each
vCPU's speed moves by up to 30 % with them) cancels; the table gives their **median** and a
bootstrap 95 % interval of that median (2,000 resamples), and, for continuity with earlier tables,
the ratio of the two sides' best times. **Verdict** applies the issue's target (≥ 1.8× on two
cores, for N ≥ 100 or R ≥ 64) to the interval: ``met`` when its lower end is ≥ 1.8, ``not met``
when its upper end is below, ``within noise`` otherwise; ``–`` outside the target's scope, and
``– (one thread)`` for R = 1, which the split (it shares a game's replicates) never splits.

Each row also times a compiled loop without the GIL on one and two threads in the same
alternation: its ratio, the "ceiling", is the speedup the machine itself gave two threads while
that row ran (about 2 on two idle cores, less on a machine shared with other work).

Four more columns say what the ``n_jobs=2`` run itself spent, in CPU seconds, which a busy
machine disturbs far less than wall time: **serial s**, the calling thread's CPU (checking the
whole game, planning the blocks, concatenating their snapshots, assembling the rows), **parallel
s**, the blocks' threads' CPU summed (each block's preparation and rounds), the **implied**
speedup ``(S + P) / (S + P/2)`` that Amdahl's law gives two cores for them, and **wait s**, the
blocks' wall time less their CPU (summed over blocks): what they spent waiting for the GIL or,
on a busy machine, for a core. Each is its least over the rounds.
With ``--gil-share PY_SPY`` (a py-spy executable), each R > 1 row also plays one block alone
(R/2 replicates, in a block's chunks) under ``py-spy record --gil`` and adds **GIL share**,
the fraction of that block's time spent holding the GIL, and **GIL-serial implied**, Amdahl's
speedup with that share of the blocks' CPU counted as serial too (pessimistic: a block's
GIL-held Python can overlap the other block's compiled code).
Prints a Markdown table (see benchmarks/README.md).

    .venv/bin/python benchmarks/bench_parallel.py [--repeats 7] [--quick]
        [--metrics default|"regret only"|both] [--replicates 1 64] [--gil-share py-spy]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd
from numba import njit
from paired import interval_verdict, median_interval

import arena.game
from arena.game import DEFAULT_CHUNK_ELEMENTS, check_game, run_game
from arena.parallel import MIN_BLOCK

METRICS = {"default": None, "regret only": {"regret": {}}}


def elements(r: int, metrics: str, quick: bool) -> int:
    """R·N·T of one timed game: a few seconds of one core for R = 64, so that what stays serial
    (checking the whole game, assembling its rows: 4–19 ms of CPU at R = 64) is small against
    the rounds; less for R = 1, which is never split."""
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


def split_cpu(kw: dict) -> tuple[float, float, float]:
    """Play the game with ``n_jobs=2``; return the calling thread's CPU seconds, the blocks'
    threads' CPU seconds (summed) and their wall seconds less their CPU (summed).

    The blocks are timed from inside their threads (``time.thread_time``) by wrapping the
    driver's :func:`arena.parallel.run_blocks` for this one call.
    """
    blocks: list[tuple[float, float]] = []
    real = arena.game.run_blocks

    def timed_blocks(ids, play_block):
        def play(index, block_ids, halt):
            cpu, wall = time.thread_time(), time.perf_counter()
            try:
                return play_block(index, block_ids, halt)
            finally:
                blocks.append((time.thread_time() - cpu, time.perf_counter() - wall))

        return real(ids, play)

    arena.game.run_blocks = timed_blocks
    try:
        cpu = time.thread_time()
        run_game("hedge", "bernoulli", n_jobs=2, **kw)
        serial = time.thread_time() - cpu
    finally:
        arena.game.run_blocks = real
    assert len(blocks) == 2, "the game was not split"
    return serial, sum(c for c, _ in blocks), sum(w - c for c, w in blocks)


GIL_RATE = 200
"""py-spy's samples per second for ``--gil-share``."""


def _timed_block(kw: dict) -> float:
    started = time.perf_counter()
    run_game("hedge", "bernoulli", n_jobs=1, **kw)
    return time.perf_counter() - started


def _play_one_block(spec: str) -> None:
    """Child of :func:`gil_share`: warm up, then play the block in :func:`_timed_block` on a
    thread of its own, as a split game's block is played (a thread allocates from its own
    malloc arena, which returns freed chunks to the system less often than the main thread's),
    and print its wall seconds."""
    kw = json.loads(spec)
    run_game("hedge", "bernoulli", n_jobs=1, **{**kw, "horizon": 50})
    wall: list[float] = []
    block = threading.Thread(target=lambda: wall.append(_timed_block(kw)))
    block.start()
    block.join()
    print("block wall", wall[0])


def gil_share(py_spy: str, kw: dict) -> float:
    """Fraction of one block's wall time (R/2 replicates played alone, on one thread, in the
    chunks the split gives a block) during which it held the GIL, sampled by
    ``py-spy record --gil``."""
    block = {**kw, "replicates": kw["replicates"] // 2}
    if not check_game("hedge", "bernoulli", **kw).protocol.chunk_invariant:
        # the block plays the whole game's chunks: sized for R replicates, not R/2
        block["chunk_elements"] = DEFAULT_CHUNK_ELEMENTS * block["replicates"] // kw["replicates"]
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "gil.txt")
        child = [sys.executable, __file__, "--one-block", json.dumps(block)]
        command = [py_spy, "record", "--gil", "-r", str(GIL_RATE), "-f", "raw", "-o", raw, "--"]
        out = subprocess.run(command + child, capture_output=True, text=True, check=True)
        wall = next(float(w.split()[-1]) for w in out.stdout.splitlines() if "block wall" in w)
        with open(raw) as lines:
            held = sum(int(line.rsplit(" ", 1)[1]) for line in lines if "_timed_block (" in line)
    return held / GIL_RATE / wall


TARGET = 1.8
"""Issue 34's target: ``n_jobs=2`` at least this much faster than ``n_jobs=1`` on two cores."""


def verdict(low: float, high: float, n: int, r: int) -> str:
    """The target's verdict for a row from its interval (module docstring)."""
    if r < 2 * MIN_BLOCK:
        return "– (one thread)"  # the split shares replicates: one replicate is never split
    if n < 100 and r < 64:
        return "–"
    return interval_verdict(low, high, TARGET)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--metrics", choices=[*METRICS, "both"], default="both")
    parser.add_argument("--replicates", type=int, nargs="+", default=[1, 64])
    parser.add_argument("--gil-share", metavar="PY_SPY", help="py-spy executable (optional)")
    parser.add_argument("--one-block", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_block:
        _play_one_block(args.one_block)
        return
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.processor() or ''} "
        f"{os.cpu_count()} cores, load before: {load}, {args.repeats} paired rounds a row"
    )
    _spin(10)
    pool = ProcessPoolExecutor(2)
    print()
    print(
        "| N | R | metrics | T | n_jobs=1 s | n_jobs=2 s | speedup (median) | 95 % interval | "
        "verdict | best-of | 2 processes (median) | ceiling | M updates/s (1 → 2) | serial s | "
        "parallel s | implied | wait s |"
        + (" GIL share | GIL-serial implied |" if args.gil_share else "")
    )
    print("|---" * (19 if args.gil_share else 17) + "|")
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
                runs = {
                    1: functools.partial(timed, kw, 1),
                    2: functools.partial(timed, kw, 2),
                    "spin1": functools.partial(spin_time, 1),
                    "spin2": functools.partial(spin_time, 2),
                }
                if r > 1:
                    runs["p"] = functools.partial(timed_processes, pool, kw)
                order = list(runs)
                times: dict = {key: [] for key in order}
                cpu = [float("inf")] * 3  # serial, parallel, wait: each its least over repeats
                for i in range(args.repeats):
                    for key in order if i % 2 == 0 else order[::-1]:
                        times[key].append(runs[key]())
                    if r > 1:
                        cpu = [min(a, b) for a, b in zip(cpu, split_cpu(kw), strict=True)]
                one_s, two_s = np.array(times[1]), np.array(times[2])
                mid, low, high = median_interval(one_s / two_s)
                procs = (
                    "–"
                    if r == 1
                    else format(float(np.median(one_s / np.array(times["p"]))), ".2f") + "×"
                )
                ceiling = float(np.median(np.array(times["spin1"]) / np.array(times["spin2"])))
                work = n * r * horizon / 1e6
                serial, parallel, wait = cpu
                cpu_columns = (
                    "– | – | – | –"
                    if r == 1
                    else f"{serial:.3f} | {parallel:.3f} | "
                    f"{(serial + parallel) / (serial + parallel / 2):.2f}× | {wait:.3f}"
                )
                if args.gil_share:
                    if r == 1:
                        cpu_columns += " | – | –"
                    else:
                        held = gil_share(args.gil_share, kw) * parallel
                        bound = (serial + parallel) / (serial + held + (parallel - held) / 2)
                        cpu_columns += f" | {held / parallel:.2f} | {bound:.2f}×"
                print(
                    f"| {n} | {r} | {metrics} | {horizon} | {np.median(one_s):.3f} | "
                    f"{np.median(two_s):.3f} | {mid:.2f}× | {low:.2f}–{high:.2f}× | "
                    f"{verdict(low, high, n, r)} | {one_s.min() / two_s.min():.2f}× | {procs} | "
                    f"{ceiling:.2f}× | {work / np.median(one_s):.0f} → "
                    f"{work / np.median(two_s):.0f} | {cpu_columns} |",
                    flush=True,
                )
    pool.shutdown()
    print()
    print(f"load after: {os.getloadavg() if hasattr(os, 'getloadavg') else None}")


if __name__ == "__main__":
    main()
