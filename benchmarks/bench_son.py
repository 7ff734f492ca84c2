"""SON per-round cost: numba kernels against the readable loop, scaling in d and m, vs AdaGrad.

Run it with::

    .venv/bin/python benchmarks/bench_son.py           # full run, about three minutes
    .venv/bin/python benchmarks/bench_son.py --quick   # tiny sizes, a smoke test (< 30 s)

Everything is measured in one process run. The time is the player's alone: ``play_block`` of
``son`` (C = 1, logistic loss, η by the thesis's tuning, α = 1) on a pre-drawn block of the
``ill_conditioned`` stream (κ = 100, one replicate), reset included, best of interleaved repeats
(:func:`bench_engine.best_times`), reported in µs per round. Three tables:

(a) against d at m = 10 (d ∈ {25, 50, 100, 200, 400}) for the four sketches, with the fitted
    log-log exponent ``b`` of ``time ∝ d^b`` (the thesis: O(md) for RP, O(m²d) per round for
    our FD and Oja, O(d²) for full SON);
(b) against m at d = 100 (m ∈ {5, 10, 20, 40}), with the exponent in m;
(c) at d = 50, m = 10: the kernel against the readable per-round loop (``SON.predict`` /
    ``SON.update`` in numpy, one round at a time: what the player ran before its kernels, and
    the loop a researcher would write) and Oja-SON's time over diagonal AdaGrad's (η = 1,
    unconstrained, its own numba kernel) on the same data; Luo 2016, §4.6.2, reports Oja-SON
    about 11× slower than AdaGrad in Vowpal Wabbit.

Before timing, the kernel and the readable loop must give the same points to 1e-10 relative
to the largest ``|w|`` on the first 80 rounds of the benchmark data (d = 50; see
:data:`CHECK_ROUNDS`). The markdown is printed and written to
``benchmarks/results/son_latest.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_engine import best_times, machine

RESULTS = Path(__file__).resolve().parent / "results" / "son_latest.md"
SKETCHES = ("full", "fd", "rp", "oja")
DIMS = (25, 50, 100, 200, 400)
SIZES = (5, 10, 20, 40)
FULL = {"rounds": 4000, "readable_rounds": 400, "repeats": 5}
CHECK_ROUNDS = 80
"""Rounds of the equality check. FD-SON on this stream amplifies rounding about tenfold every
50 rounds (a 1e-15 relative perturbation of the features moves the readable loop's own points
by 4e-7 after 400 rounds; RP's by 1e-10), so two correct implementations agree closely only
on short runs."""
QUICK = {"rounds": 200, "readable_rounds": 40, "repeats": 1}


def stream(dim: int, rounds: int):
    """A block of the ill-conditioned stream (κ = 100) and its game spec, one replicate."""
    from arena.adversaries.ill_conditioned import IllConditioned
    from arena.oco.domains import Domain
    from arena.spec import GameSpec

    spec = GameSpec("classification", dim, rounds, dim=dim, domain=Domain(), loss="logistic")
    adversary = IllConditioned(kappa=100.0, n_large=min(10, dim), loss="logistic")
    adversary.reset(spec, [np.random.default_rng(0)])
    return spec, adversary.data_block(1, rounds)


def son(sketch: str, m: int):
    from arena.players.son import SON

    return SON(sketch=sketch, m=m, alpha=1.0, C=1.0)


def adagrad():
    from arena.players.adagrad import AdaGrad

    return AdaGrad(variant="diagonal", eta=1.0)


def kernel_run(make, spec, data):
    player = make()
    player.reset(spec, [np.random.default_rng(1)])
    return player.play_block(data, spec)


def readable_run(make, spec, data):
    from arena.oco.components import OCOPlayer

    player = make()
    player.reset(spec, [np.random.default_rng(1)])
    return OCOPlayer.play_block(player, data, spec)  # SON.predict / SON.update per round


def check_kernel(rounds: int, dim: int = 50) -> float:
    """Largest difference of the kernel's and the readable loop's points, relative to max |w|."""
    spec, data = stream(dim, rounds)
    worst = 0.0
    for sketch in SKETCHES:
        fast = kernel_run(lambda s=sketch: son(s, 10), spec, data)
        slow = readable_run(lambda s=sketch: son(s, 10), spec, data)
        worst = max(worst, float(np.abs(fast - slow).max() / np.abs(slow).max()))
    return worst


def per_round_us(fns, rounds, repeats):
    secs, _ = best_times(fns, repeats=repeats)
    return [1e6 * s / r for s, r in zip(secs, rounds, strict=True)]


def slope(xs, ys) -> float:
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def main(quick: bool) -> str:
    sizes = QUICK if quick else FULL
    rounds, repeats = sizes["rounds"], sizes["repeats"]
    started = time.perf_counter()
    lines = [f"# SON benchmark ({'quick' if quick else 'full'})", "", machine(), ""]
    spec50, data50 = stream(50, sizes["readable_rounds"])
    worst = check_kernel(CHECK_ROUNDS)  # also compiles the kernel
    assert worst < 1e-10, f"kernel and readable loop differ by {worst:g}"
    kernel_run(adagrad, spec50, data50)
    lines += [
        f"Check: kernel = readable loop to {worst:.1e} (relative) on {CHECK_ROUNDS} rounds at "
        "d = 50, m = 10 (every sketch).",
        "",
        f"(a) µs per round against d, m = 10 ({rounds:,} rounds each):",
        "",
        "| sketch | " + " | ".join(f"d = {d}" for d in DIMS) + " | exponent in d |",
        "|---|" + "---:|" * (len(DIMS) + 1),
    ]
    by_d = {s: [] for s in SKETCHES}
    adagrad_by_d = []
    for dim in DIMS:
        spec, data = stream(dim, rounds)
        fns = [lambda s=s: kernel_run(lambda: son(s, 10), spec, data) for s in SKETCHES]  # noqa: B023
        fns.append(lambda: kernel_run(adagrad, spec, data))  # noqa: B023
        times = per_round_us(fns, [rounds] * len(fns), repeats)
        for sketch, us in zip(SKETCHES, times, strict=False):
            by_d[sketch].append(us)
        adagrad_by_d.append(times[-1])
        print(f"d = {dim}: " + ", ".join(f"{t:.2f}" for t in times), flush=True)
    for sketch in SKETCHES:
        cells = " | ".join(f"{us:.2f}" for us in by_d[sketch])
        lines.append(f"| {sketch} | {cells} | {slope(DIMS, by_d[sketch]):.2f} |")
    cells = " | ".join(f"{us:.2f}" for us in adagrad_by_d)
    lines.append(f"| adagrad (diagonal) | {cells} | {slope(DIMS, adagrad_by_d):.2f} |")
    ratios = " | ".join(f"{o / a:.1f}×" for o, a in zip(by_d["oja"], adagrad_by_d, strict=True))
    lines += [f"| oja / adagrad | {ratios} | |", ""]

    lines += [
        f"(b) µs per round against m, d = 100 ({rounds:,} rounds each):",
        "",
        "| sketch | " + " | ".join(f"m = {m}" for m in SIZES) + " | exponent in m |",
        "|---|" + "---:|" * (len(SIZES) + 1),
    ]
    spec, data = stream(100, rounds)
    for sketch in ("fd", "rp", "oja"):
        fns = [lambda m=m: kernel_run(lambda: son(sketch, m), spec, data) for m in SIZES]  # noqa: B023
        times = per_round_us(fns, [rounds] * len(fns), repeats)
        cells = " | ".join(f"{us:.2f}" for us in times)
        lines.append(f"| {sketch} | {cells} | {slope(SIZES, times):.2f} |")
        print(sketch, times, flush=True)

    n_read = sizes["readable_rounds"]
    lines += [
        "",
        f"(c) d = 50, m = 10: kernel ({rounds:,} rounds) against the readable per-round loop "
        f"({n_read:,} rounds), µs per round:",
        "",
        "| player | kernel | readable loop | speedup | over AdaGrad (kernel) |",
        "|---|---:|---:|---:|---:|",
    ]
    spec_k, data_k = stream(50, rounds)
    fns, counts = [lambda: kernel_run(adagrad, spec_k, data_k)], [rounds]
    for sketch in SKETCHES:
        fns.append(lambda s=sketch: kernel_run(lambda: son(s, 10), spec_k, data_k))
        fns.append(lambda s=sketch: readable_run(lambda: son(s, 10), spec50, data50))
        counts += [rounds, n_read]
    times = per_round_us(fns, counts, repeats)
    ada = times[0]
    for i, sketch in enumerate(SKETCHES):
        fast, slow = times[1 + 2 * i], times[2 + 2 * i]
        lines.append(
            f"| son {sketch} | {fast:.2f} | {slow:.1f} | {slow / fast:.0f}× | {fast / ada:.1f}× |"
        )
    lines.append(f"| adagrad (diagonal) | {ada:.2f} | | | 1.0× |")
    lines += ["", f"Total benchmark time: {time.perf_counter() - started:.0f} s."]
    text = "\n".join(lines) + "\n"
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(text)
    return text


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    print(main(parser.parse_args().quick))
