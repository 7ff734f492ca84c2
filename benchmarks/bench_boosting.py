"""Online boosting throughput: Online BBM and AdaBoost.OL(.S) through the driver, against a naive
per-example loop and Vowpal Wabbit's ``--boosting N``.

Run it with::

    .venv/bin/python benchmarks/bench_boosting.py            # full run, about 90 s
    .venv/bin/python benchmarks/bench_boosting.py --quick    # tiny sizes, a smoke test
    .venv/bin/python benchmarks/bench_boosting.py --no-vw    # without the Vowpal Wabbit rows

Everything is measured in one process run. Throughput is in progressive examples per second
(R·T / wall seconds of the whole call: ``run_game`` with the ``mistakes`` metric, setup and row
assembly included) of ``online_bbm`` (γ = 0.2, importance weights), ``adaboost_ol`` and
``adaboost_ol_s`` (final layer Hedge with η = 1) with N ∈ {10, 100} ``linear`` weak learners (its
defaults: AdaGrad on the logistic loss, rate 0.5, outputs ±1) on ``dataset_stream``'s breast
cancer stream (569 × 30, standardized, reshuffled every epoch; T = 5,000 is 8.8 epochs), at
R = 1 and R = 8 replicates. Contenders, timed in alternation (:func:`bench_engine.best_times`):

* **naive** (:func:`naive_bbm`, :func:`naive_adaboost_ol`): the per-example loop a researcher
  would write, one replicate at a time: a Python loop over examples and, inside it, over N
  :class:`NaiveLinear` objects (one per weak learner, numpy vectors of length d + 1), with the
  booster's weights in scalar Python. Before timing, it is driven on the exported stream with the
  same generators as the registered booster and must reproduce its prediction on every round and
  its weak learners' parameters to 1e-9 (:func:`check_naive`), so it provably does the same work.
* **VW**: Vowpal Wabbit 9.11.9's C++ driver on the same stream written as a text file
  (``benchmarks/vw_peer.py``; workspace creation and parsing included), ``--boosting N`` with
  ``--alg BBM --gamma 0.1`` (the thesis's γ = 0.2) for ``online_bbm`` and ``--alg adaptive`` for
  both AdaBoost.OL rows (VW has no sampling variant). VW's weak learners are its own linear
  regressors, not ours, so its row compares implementations of the same booster, not identical
  computations (``bench_vw_boosting.py`` compares the errors).

A second table times ``online_bbm`` and ``adaboost_ol`` over ``stump`` weak learners (defaults,
K = 16 thresholds per feature; T = 1,000), ours only.

The tables are printed and written to ``benchmarks/results/boosting.md`` and ``boosting.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_engine import best_times, machine

RESULTS = Path(__file__).resolve().parent / "results"
SEED = 0
STREAM = ("dataset_stream", {"dataset": "breast_cancer"})
GAMMA = 0.2  # online_bbm's γ (the thesis's); VW's --gamma 0.1, its default
RATE = 0.5  # the linear weak learner's default AdaGrad rate
BOOSTERS = {
    "online_bbm": ({"gamma": GAMMA, "weak_learner": "linear"}, f"--alg BBM --gamma {GAMMA / 2}"),
    "adaboost_ol": ({"weak_learner": "linear"}, "--alg adaptive"),
    "adaboost_ol_s": ({"weak_learner": "linear"}, "--alg adaptive"),
}
N_LEARNERS = (10, 100)
REPLICATES = (1, 8)
FULL = {"ours": 5_000, "naive": {10: 2_000, 100: 400}, "vw": 5_000, "check": 300, "stump": 1_000}
QUICK = {"ours": 200, "naive": {10: 100, 100: 20}, "vw": 200, "check": 60, "stump": 50}
STUMP_BOOSTERS = ("online_bbm", "adaboost_ol")
"""Boosters also timed over ``stump`` weak learners (ours only: no naive stump loop)."""


# ----------------------------------------------------------------------------------------------
# the naive per-example loop


class NaiveLinear:
    """One linear weak learner as a Python object: AdaGrad on the logistic loss of ``θ·x̃``.

    The ``linear`` weak learner's defaults (``step="adagrad"``, ``loss="logistic"``), one lane:
    ``g = −w·y·σ(−y θ·x̃)·x̃``, ``G ← G + g²``, ``θ_k ← θ_k − η g_k/√G_k`` where ``G_k > 0``;
    it predicts ``+1`` when ``θ·x̃ ≥ 0``, else ``−1``.
    """

    def __init__(self, n_features: int, rate: float):
        self.theta = np.zeros(n_features + 1)
        self.sq_grads = np.zeros(n_features + 1)
        self.rate = rate

    def predict(self, xt: np.ndarray) -> float:
        return 1.0 if float(self.theta @ xt) >= 0.0 else -1.0

    def update(self, xt: np.ndarray, y: float, weight: float) -> None:
        if weight <= 0.0:
            return
        margin = y * float(self.theta @ xt)
        slope = 1.0 / (1.0 + math.exp(margin)) if margin < 700.0 else math.exp(-margin)
        g = (weight * (-y * slope)) * xt
        self.sq_grads += g * g
        seen = self.sq_grads > 0.0
        self.theta[seen] -= self.rate * g[seen] / np.sqrt(self.sq_grads[seen])


def _sign(v: float) -> float:
    return 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)


def _half_pmf(k: float, m: float, gamma: float) -> float:
    """``½·C(m, k) p^k q^{m−k}`` with ``p = (1+γ)/2`` (0 outside ``0 ≤ k ≤ m``)."""
    if k < 0.0 or k > m:
        return 0.0
    log_p, log_q = math.log1p(gamma) - math.log(2.0), math.log1p(-gamma) - math.log(2.0)
    log_c = math.lgamma(m + 1.0) - math.lgamma(k + 1.0) - math.lgamma(m - k + 1.0)
    return 0.5 * math.exp(log_c + k * log_p + (m - k) * log_q)


def naive_bbm(x, y, n_learners, gamma, rate=RATE, learners=None):
    """Online BBM (Luo 2016, Algorithm 7; importance weights ``w^i/W_i``) on one replicate.

    Returns the predictions (T,); ``learners`` (a list, filled here) exposes the weak learners.
    """
    learners = [] if learners is None else learners
    learners += [NaiveLinear(x.shape[1], rate) for _ in range(n_learners)]
    bound = []  # W_i = ½·max_k C(N−i, k) p^k q^{N−i−k}, the a-priori bound on ‖w^i‖∞
    for i in range(1, n_learners + 1):
        m = float(n_learners - i)
        bound.append(max(_half_pmf(float(k), m, gamma) for k in range(n_learners - i + 1)))
    out = np.empty(len(y))
    for t in range(len(y)):
        xt, label = np.append(x[t], 1.0), float(y[t])
        h = [wl.predict(xt) for wl in learners]
        out[t] = _sign(sum(h))
        s = 0.0  # s^{i−1}, the margin of the first i − 1 votes
        for i, wl in enumerate(learners, start=1):
            m = float(n_learners - i)
            w = _half_pmf(math.floor((m - s + 1.0) / 2.0), m, gamma)
            wl.update(xt, label, min(w / bound[i - 1], 1.0))
            s += label * h[i - 1]
    return out


def naive_adaboost_ol(x, y, n_learners, rng, sampling=False, rate=RATE, learners=None):
    """AdaBoost.OL (Luo 2016, Algorithm 8; ``sampling``: AdaBoost.OL.S) on one replicate.

    ``rng`` is the booster's generator, read in the registered booster's order (the lanes' seed,
    the experts' seed, then one uniform per round for the drawn expert, after the N sampling
    uniforms of AdaBoost.OL.S). Returns the predictions (T,).
    """
    learners = [] if learners is None else learners
    learners += [NaiveLinear(x.shape[1], rate) for _ in range(n_learners)]
    rng.integers(2**63)  # the lanes' seed (unused by the deterministic linear learner)
    rng.integers(2**63)  # the experts player's seed (Hedge draws nothing)
    alpha = [0.0] * n_learners
    expert_losses = [0.0] * n_learners  # Hedge (η = 1) on the experts' mistakes 1{s^i ≤ 0}
    uniform = rng.random()
    out = np.empty(len(y))
    for t in range(1, len(y) + 1):
        xt, label = np.append(x[t - 1], 1.0), float(y[t - 1])
        h = [wl.predict(xt) for wl in learners]
        lowest = min(expert_losses)
        v = [math.exp(-(loss - lowest)) for loss in expert_losses]
        total, cdf, drawn = sum(v), 0.0, n_learners - 1
        for i in range(n_learners):
            cdf += v[i] / total
            if cdf > uniform:
                drawn = i
                break
        vote = 0.0
        for i in range(drawn + 1):
            vote += alpha[i] * h[i]
        out[t - 1] = _sign(vote)
        draws = rng.random(n_learners) if sampling else None
        s_prev = 0.0
        for i, wl in enumerate(learners):
            z = label * h[i]
            w = 1.0 / (1.0 + math.exp(s_prev))
            s = s_prev + alpha[i] * z
            step = (4.0 / math.sqrt(t)) * z / (1.0 + math.exp(s))
            alpha[i] = min(max(alpha[i] + step, -2.0), 2.0)
            wl.update(xt, label, (1.0 if draws[i] < w else 0.0) if sampling else w)
            expert_losses[i] += 1.0 if s <= 0.0 else 0.0
            s_prev = s
        uniform = rng.random()
    return out


def naive(name, x, y, n_learners, rng, learners=None):
    """The naive loop of booster ``name`` on one replicate's examples."""
    if name == "online_bbm":
        return naive_bbm(x, y, n_learners, GAMMA, learners=learners)
    return naive_adaboost_ol(
        x, y, n_learners, rng, sampling=name == "adaboost_ol_s", learners=learners
    )


# ----------------------------------------------------------------------------------------------
# ours, the check, VW


def ours(name, n_learners, horizon, replicates, weak_learner="linear"):
    """``run_game`` with the ``mistakes`` metric; return the mistakes per replicate at T."""
    from arena.game import run_game

    params = {**BOOSTERS[name][0], "n_learners": n_learners, "weak_learner": weak_learner}
    run = run_game(
        name, STREAM[0], adversary_params=STREAM[1], player_params=params, horizon=horizon,
        replicates=replicates, seed=SEED, metrics={"mistakes": {}},
    )  # fmt: skip
    last = run.rows[(run.rows.metric == "mistakes") & (run.rows.t == horizon)]
    return last.sort_values("replicate").value.to_numpy()


def export(horizon: int, replicates: int) -> tuple[np.ndarray, np.ndarray]:
    from vw_peer import export_stream

    return export_stream(*STREAM, horizon=horizon, replicates=replicates, seed=SEED)


def check_naive(name: str, n_learners: int, horizon: int) -> float:
    """Drive the registered booster and the naive loop on one stream with the same generator.

    Asserts that every prediction agrees and returns the largest difference of the weak
    learners' parameters θ at the end.
    """
    from arena.game import prepare_game

    params = {**BOOSTERS[name][0], "n_learners": n_learners}
    game = prepare_game(
        name, STREAM[0], adversary_params=STREAM[1], player_params=params, horizon=horizon,
        replicates=1, seed=SEED, metrics={"mistakes": {}},
    )  # fmt: skip
    x, y = export(horizon, 1)
    player = game.player
    player.reset(game.spec, [np.random.default_rng([SEED, 7])])
    theirs = np.empty(horizon)
    for t in range(horizon):
        theirs[t] = player.predict(x[:, t])[0]
        player.update(x[:, t], y[:, t])
    learners: list[NaiveLinear] = []
    mine = naive(name, x[0], y[0], n_learners, np.random.default_rng([SEED, 7]), learners)
    differ = int(np.sum(mine != theirs))
    assert differ == 0, f"naive {name} (N = {n_learners}) differs on {differ} rounds"
    theta = np.stack([wl.theta for wl in learners])
    return float(np.abs(theta - player._learners._theta[0]).max())


def naive_game(name, n_learners, x, y):
    for r in range(x.shape[0]):
        naive(name, x[r], y[r], n_learners, np.random.default_rng([SEED, r]))


def vw_rates(n_learners: int, horizon: int, repeats: int) -> dict[str, dict]:
    """VW's progressive examples per second for every booster's VW counterpart (fastest)."""
    from vw_peer import WORK, ensure_vw, progressive_error, run_vw, write_vw_text

    python = ensure_vw()
    x, y = export(horizon, 1)
    data = write_vw_text(x[0], y[0], WORK / f"bench-boost-{horizon}.vw")
    out = {}
    for options in sorted({alg for _, alg in BOOSTERS.values()}):
        full = f"--boosting {n_learners} {options}"
        runs = [run_vw(python, data, full) for _ in range(repeats)]
        out[options] = {
            "options": full,
            "examples_per_s": horizon / min(run["seconds"] for run in runs),
            "error": progressive_error(y[0], runs[0]["predictions"]),
            "version": runs[0]["version"],
        }
    return out


def main(quick: bool, with_vw: bool) -> str:
    sizes = QUICK if quick else FULL
    started = time.perf_counter()
    print("warming up and checking the naive loops against the boosters ...", flush=True)
    checks = []
    for name in BOOSTERS:
        for n in N_LEARNERS:
            ours(name, n, 30, max(REPLICATES))
            checks.append(check_naive(name, n, sizes["check"]))
    t_ours = sizes["ours"]
    x_all, y_all = export(max(max(sizes["naive"].values()), 1), 1)
    rows = []
    for n in N_LEARNERS:
        vw = vw_rates(n, sizes["vw"], 3) if with_vw else {}
        t_naive = sizes["naive"][n]
        x, y = x_all[:, :t_naive], y_all[:, :t_naive]
        for name, (_, vw_options) in BOOSTERS.items():
            # the naive loop and ours at every R, timed in turn (see bench_engine.best_times)
            (nsec, *secs), k = best_times(
                [lambda: naive_game(name, n, x, y)]  # noqa: B023
                + [lambda reps=reps: ours(name, n, t_ours, reps) for reps in REPLICATES],  # noqa: B023
                repeats=3,
                budget=30.0,
            )
            naive_rate = t_naive / nsec
            for reps, sec in zip(REPLICATES, secs, strict=True):
                rate = reps * t_ours / sec
                peer = vw.get(vw_options)
                row = {
                    "booster": name, "n_learners": n, "replicates": reps, "horizon": t_ours,
                    "examples_per_s": rate, "naive_horizon": t_naive,
                    "naive_examples_per_s": naive_rate, "speedup_vs_naive": rate / naive_rate,
                    "vw_options": None if peer is None else peer["options"],
                    "vw_examples_per_s": None if peer is None else peer["examples_per_s"],
                    "vw_over_ours": None if peer is None else peer["examples_per_s"] / rate,
                    "rounds": k,
                }  # fmt: skip
                rows.append(row)
                print(row, flush=True)
    stump_rows = []
    for n in N_LEARNERS:
        for name in STUMP_BOOSTERS:
            t_stump = sizes["stump"]
            ours(name, n, 30, max(REPLICATES), "stump")
            secs, k = best_times(
                [
                    lambda reps=reps: ours(name, n, t_stump, reps, "stump")  # noqa: B023
                    for reps in REPLICATES
                ],
                repeats=2,
                budget=30.0,
            )
            for reps, sec in zip(REPLICATES, secs, strict=True):
                linear = next(
                    r["examples_per_s"]
                    for r in rows
                    if (r["booster"], r["n_learners"], r["replicates"]) == (name, n, reps)
                )
                row = {
                    "booster": name, "n_learners": n, "replicates": reps, "horizon": t_stump,
                    "weak_learner": "stump", "examples_per_s": reps * t_stump / sec,
                    "linear_examples_per_s": linear, "rounds": k,
                }  # fmt: skip
                stump_rows.append(row)
                print(row, flush=True)
    lines = [
        f"# Online boosting benchmark ({'quick' if quick else 'full'})",
        "",
        machine(),
        "",
        f"Sanity check: the naive loops reproduce every prediction of the registered boosters "
        f"(largest weak-learner θ difference {max(checks):.1e}).",
        "",
        "| booster | N | R | T (ours) | ours ex/s | naive T | naive ex/s | ours / naive "
        "| VW options | VW ex/s | VW / ours |",
        "| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :--- | ---: | ---: |",
    ]
    for r in rows:
        vw_cells = (
            f"`{r['vw_options']}` | {r['vw_examples_per_s']:,.0f} | {r['vw_over_ours']:.1f}×"
            if r["vw_options"]
            else " | | "
        )
        lines.append(
            f"| {r['booster']} | {r['n_learners']} | {r['replicates']} | {r['horizon']:,} "
            f"| {r['examples_per_s']:,.0f} | {r['naive_horizon']:,} "
            f"| {r['naive_examples_per_s']:,.0f} | {r['speedup_vs_naive']:.1f}× | {vw_cells} |"
        )
    lines += [
        "",
        "Over `stump` weak learners (defaults: K = 16 thresholds per feature; ours only):",
        "",
        "| booster | N | R | T | stump ex/s | linear ex/s (above) |",
        "| :--- | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r['booster']} | {r['n_learners']} | {r['replicates']} | {r['horizon']:,} "
        f"| {r['examples_per_s']:,.0f} | {r['linear_examples_per_s']:,.0f} |"
        for r in stump_rows
    ]
    lines += ["", f"Total benchmark time: {time.perf_counter() - started:.0f} s."]
    text = "\n".join(lines) + "\n"
    if not quick:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "boosting.md").write_text(text)
        record = {
            "machine": machine(),
            "max_theta_gap": max(checks),
            "rows": rows,
            "stump_rows": stump_rows,
        }
        (RESULTS / "boosting.json").write_text(json.dumps(record, indent=2) + "\n")
    return text


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    parser.add_argument("--no-vw", action="store_true", help="skip the Vowpal Wabbit rows")
    ns = parser.parse_args()
    print(main(ns.quick, not ns.no_vw))
