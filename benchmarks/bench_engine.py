"""Engine throughput and memory benchmark: Hedge against Bernoulli losses.

Run it with ``make bench`` (which runs ``.venv/bin/python benchmarks/bench_engine.py``), or::

    .venv/bin/python benchmarks/bench_engine.py           # full run, a few minutes
    .venv/bin/python benchmarks/bench_engine.py --quick   # tiny sizes, a smoke test (< 20 s)

Everything is measured in one process run so that the ratios are comparable. Throughput is in
replicate-rounds per second (R·T / seconds of ``run_game``, setup and row assembly included),
for ``hedge`` (``eta='tuned'``) against ``bernoulli`` (default means: 0.5, the best expert 0.4),
N ∈ {10, 1000} experts and R ∈ {1, 64} replicates:

(a) ``run_game`` with every default metric (``metrics=None``) against :func:`naive_replicate`, a
    readable per-round Python/numpy loop over one replicate at a time that computes the same
    default metrics with the same algorithms (k-switch DP, Kadane, monotone deques per expert);
    before timing, it is fed the engine's own random streams and must reproduce the engine's
    rows to 1e-9, so it provably does the same work.
(b) ``run_game`` with ``metrics={"regret": {}}`` against :func:`run_fused`, a hand-fused numba
    kernel doing Hedge + Bernoulli losses + the regret in one pass, fed uniforms pre-drawn in
    chunks by numpy (faster than numba's own ``np.random`` inside the kernel, so the stronger
    baseline).
(c) Peak RSS (``resource.getrusage`` max RSS) of a fresh subprocess per horizon T, to show that
    memory does not grow with T. The subprocess is this script with ``--memory-probe T N R M``.
(d) The marginal cost per replicate-round at N = 10, R = 64 of three metric sets: regret only,
    the regret family :data:`FAMILY` (regret, loss, ε-quantile, shifting k ≤ 16, adaptive,
    strongly adaptive, dynamic regret) and the default set; the family against the naive loop
    restricted to the same family (``naive_replicate(..., family=True)``, checked like (a)), the
    default set against the family.
(e) The per-game fixed cost of ``run_game`` (validation, metric setup, seeding, resets, the
    rounds of a 1- or 10-round game, row assembly), split into its parts.

``--only d,e`` runs some sections (a–e) only.

The markdown tables are printed and written to ``benchmarks/results/latest.md`` (git-ignored).
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

from arena.game import DEFAULT_CHUNK_ELEMENTS

RESULTS = Path(__file__).resolve().parent / "results" / "latest.md"
GAP = 0.1  # Bernoulli default: the best expert (index 0) has mean 0.5 - gap, the others 0.5
SEED = 0

# (N, R) -> horizon T of each measurement, chosen for ~1-5 s per run on a 2-core Xeon (long
# enough that the per-call setup and row assembly, ~30 ms, do not dominate the rate); the
# exception is (a) at N = 1000, R = 64 (~20 s, run once): T must exceed τ = 1000 so that
# sa_regret's longest window is really computed.
FULL = {
    "ours_all": {(10, 1): 200_000, (10, 64): 40_000, (1000, 1): 5_000, (1000, 64): 1_200},
    "naive": {10: 20_000, 1000: 1_500},
    "ours_regret": {(10, 1): 1_000_000, (10, 64): 30_000, (1000, 1): 20_000, (1000, 64): 2_000},
    "memory": [
        (100_000, "all"),
        (1_000_000, "all"),
        (10_000_000, "all"),
        (100_000, "regret"),
        (1_000_000, "regret"),
        (10_000_000, "regret"),
    ],
    "check": 3_000,
}
QUICK = {
    "ours_all": {(10, 1): 10_000, (10, 64): 300, (1000, 1): 300, (1000, 64): 20},
    "naive": {10: 1_000, 1000: 40},
    "ours_regret": {(10, 1): 20_000, (10, 64): 1_000, (1000, 1): 1_000, (1000, 64): 40},
    "memory": [(10_000, "regret"), (100_000, "regret")],
    "check": 1_200,
}
CONFIGS = [(10, 1), (10, 64), (1000, 1), (1000, 64)]

FAMILY: dict[str, dict] = {
    "loss": {},
    "regret": {},
    "quantile_regret": {"eps": [0.01, 0.1, 0.25]},
    "shifting_regret": {"k": [1, 2, 4, 8, 16]},
    "adaptive_regret": {},
    "sa_regret": {"tau": [100, 1000]},
    "dynamic_regret": {},
}
"""The regret family of (d): the metrics a plain per-round numpy loop computes, with the
default parameters (:data:`arena.metrics.defaults.DEFAULT_METRICS`)."""
FAMILY_ROWS = {"loss", "regret", "quantile_regret", "shifting_regret", "adaptive_regret"}
FAMILY_ROWS |= {"sa_regret", "dynamic_regret"}
MARGINAL = {"full": {"ours": 30_000, "naive": 10_000}, "quick": {"ours": 1_000, "naive": 300}}


# ----------------------------------------------------------------------------------------------
# the naive per-round loop (one replicate at a time)


def bernoulli_means(n_actions: int) -> np.ndarray:
    """The default means of the ``bernoulli`` adversary."""
    mu = np.full(n_actions, 0.5)
    mu[0] = 0.5 - GAP
    return mu


def naive_replicate(n_actions, horizon, grid, adv_rng, act_rng, family=False):
    """Play Hedge vs Bernoulli for one replicate, round by round, computing the default metrics.

    Returns a list of ``(t, metric, param, value)`` snapshots at the checkpoint rounds ``grid``.
    With ``family`` only the metrics of :data:`FAMILY` are computed (no action is drawn).
    """
    from arena.metrics.base import exact_quantile_rank

    n = n_actions
    mu = bernoulli_means(n)
    eta = math.sqrt(8.0 * math.log(n) / horizon)  # Hedge eta="tuned"
    epss, ks, taus = (0.01, 0.1, 0.25), (1, 2, 4, 8, 16), (100, 1000)
    ranks = [exact_quantile_rank(e, n) for e in epss]

    cum = np.zeros(n)  # L_{t,i}
    learner = realized = sum_min = learner_mean = 0.0
    cum_means = np.zeros(n)
    table = np.zeros((max(ks) + 1, n))  # k-switch DP: least loss ending at i with <= b switches
    current = np.zeros(n)  # Kadane: best interval regret ending now, per expert
    adaptive = -math.inf
    prefix = np.zeros(n)  # C_{t,i}: prefix regret to expert i
    deques = [[collections.deque() for _ in range(n)] for _ in taus]  # (a, C_a), C increasing
    sa_best = [-math.inf for _ in taus]

    checkpoints = set(grid.tolist())
    out = []
    for t in range(1, horizon + 1):
        # the player commits p_t, the adversary draws l_t, the arena draws I_t ~ p_t
        w = np.exp(-eta * (cum - cum.min()))
        p = w / w.sum()
        loss = (adv_rng.random(n) < mu).astype(np.float64)
        h = float(p @ loss)
        learner += h
        sum_min += loss.min()
        cum += loss
        if not family:
            action = int(np.searchsorted(np.cumsum(p), act_rng.random(), side="right"))
            if action == n:
                action = int(np.flatnonzero(p > 0.0)[-1])
            realized += loss[action]
            learner_mean += float(p @ mu)
            cum_means += mu

        # shifting regret: stay (same budget) or switch in from the best of budget b - 1
        best_b = table.min(axis=1)
        np.minimum(table[1:], best_b[:-1, None], out=table[1:])
        table += loss

        # adaptive regret: Kadane per expert on r_{t,i} = h_t - l_{t,i}
        inst = h - loss
        current = np.maximum(current, 0.0) + inst
        adaptive = max(adaptive, float(current.max()))

        # strongly adaptive regret: C_t - min_{t - tau <= a < t} C_a with a monotone deque
        c_prev = prefix.tolist()
        prefix += inst
        c_now = prefix.tolist()
        for q, tau in enumerate(taus):
            best = sa_best[q]
            for i, dq in enumerate(deques[q]):
                c = c_prev[i]
                while dq and dq[-1][1] >= c:
                    dq.pop()
                dq.append((t - 1, c))
                while dq[0][0] < t - tau:
                    dq.popleft()
                v = c_now[i] - dq[0][1]
                if v > best:
                    best = v
            sa_best[q] = best

        if t in checkpoints:
            best_loss = cum.min()
            kth = np.partition(cum, [k - 1 for k in sorted(set(ranks))])
            shifting = table.min(axis=1)
            nan = math.nan
            out += [
                (t, "loss", nan, learner),
                (t, "regret", nan, learner - best_loss),
                *[
                    (t, "quantile_regret", e, learner - kth[k - 1])
                    for e, k in zip(epss, ranks, strict=True)
                ],
                *[(t, "shifting_regret", k, learner - shifting[k]) for k in ks],
                (t, "adaptive_regret", nan, adaptive),
                *[(t, "sa_regret", tau, v) for tau, v in zip(taus, sa_best, strict=True)],
                (t, "dynamic_regret", nan, learner - sum_min),
            ]
            if not family:
                pos = p[p > 0]
                out += [
                    (t, "realized_loss", nan, realized),
                    (t, "bound:regret", nan, math.log(n) / eta + eta * t / 8.0),
                    (t, "realized_regret", nan, realized - best_loss),
                    (t, "pseudo_regret", nan, learner_mean - cum_means.min()),
                    (t, "zero_weight_frac", nan, float((p == 0.0).mean())),
                    (t, "entropy", nan, float(-(pos * np.log(pos)).sum())),
                ]
    return out


def engine_streams(n_actions, horizon, replicates):
    """The engine's (adversary, action) generators of each replicate, for an exact comparison."""
    from arena.game import prepare_game
    from arena.seeding import replicate_streams

    game = prepare_game(
        "hedge", "bernoulli", horizon=horizon, n_actions=n_actions, replicates=replicates,
        seed=SEED, metrics={"regret": {}},
    )  # fmt: skip
    cell_key = game.config["cell_key"]
    game_key = json.loads(cell_key)["game"]
    return [replicate_streams(SEED, game_key, cell_key, r)[:2] for r in range(replicates)]


def naive_game(n_actions, horizon, replicates, family=False):
    """Run :func:`naive_replicate` for each replicate in turn; return rows with a replicate id."""
    from arena.checkpoints import log_grid

    grid = log_grid(horizon)
    rows = []
    for r, (adv_rng, act_rng) in enumerate(engine_streams(n_actions, horizon, replicates)):
        replicate = naive_replicate(n_actions, horizon, grid, adv_rng, act_rng, family)
        rows += [(r, *row) for row in replicate]
    return rows


def check_naive(horizon: int) -> str:
    """Assert that the naive loop reproduces ``run_game``'s default-metric rows (same streams),
    and that its family-only variant reproduces the rows of ``metrics=FAMILY``, exactly those.

    Every row of the naive loop must match the engine's to 1e-9. Engine rows the naive loop does
    not compute (metrics added to the defaults later) only make the comparison conservative: they
    are listed in the report, not an error.
    """
    import pandas as pd

    from arena import play

    extra: set[str] = set()
    for n_actions, family in ((10, False), (50, False), (10, True), (50, True)):
        ours = play(
            "hedge", "bernoulli", horizon=horizon, n_actions=n_actions, replicates=2,
            metrics=FAMILY if family else None,
        )  # fmt: skip
        naive = pd.DataFrame(
            naive_game(n_actions, horizon, 2, family),
            columns=["replicate", "t", "metric", "param", "v"],
        )
        if family:  # the same rows, no more
            assert set(ours.metric) == set(naive.metric) == FAMILY_ROWS
            assert len(ours) == len(naive)
        keys = ["replicate", "t", "metric", "param"]
        for df in (ours, naive):
            df["param"] = df["param"].fillna(-1.0)
        merged = ours.merge(naive, on=keys, how="right", validate="1:1")
        missing = merged[merged["value"].isna()]
        assert missing.empty, f"engine lacks naive rows: {missing.head()}"
        err = float(np.max(np.abs(merged["value"] - merged["v"])))
        assert err < 1e-9, f"naive loop disagrees with run_game by {err:g} (N={n_actions})"
        regret = merged[(merged.metric == "regret") & (merged.t == horizon)]["v"]
        assert np.isfinite(regret).all() and len(regret) == 2
        if not family:
            extra |= set(ours.metric) - set(naive.metric)
            n_naive = naive.metric.nunique()
    note = f"; engine-only rows, not in the naive loop: {', '.join(sorted(extra))}" if extra else ""
    return (
        f"naive loop == run_game on all {n_naive} metrics it "
        f"computes, and its family-only variant on the {len(FAMILY_ROWS)} of the family "
        f"(N = 10, 50; T = {horizon:,}; R = 2; same random streams; max |Δ| < 1e-9){note}"
    )


# ----------------------------------------------------------------------------------------------
# the hand-fused numba kernel


@njit(cache=True)
def fused_regret_chunk(mu, eta, uniforms, cum, learner):
    """Advance Hedge vs Bernoulli(mu) and its regret totals over a chunk of pre-drawn uniforms.

    ``uniforms[r, j, i]`` decides expert i's loss ``1{u < mu_i}`` at the chunk's round j of
    replicate r; ``cum`` (R, N) are the cumulative losses, ``learner`` (R,) the expected loss.
    """
    n_rep, n, n_act = uniforms.shape
    w = np.empty(n_act)
    for r in range(n_rep):
        for j in range(n):
            m = cum[r, 0]
            for i in range(1, n_act):
                m = min(m, cum[r, i])
            s = 0.0
            for i in range(n_act):
                w[i] = math.exp(-eta * (cum[r, i] - m))
                s += w[i]
            h = 0.0
            for i in range(n_act):
                x = 1.0 * (uniforms[r, j, i] < mu[i])  # branch-free Bernoulli draw
                h += w[i] * x
                cum[r, i] += x
            learner[r] += h / s


@njit(cache=True)
def fused_exponents_chunk(mu, eta, uniforms, cum):
    """First pass of the SIMD variant: losses in place of the uniforms, and the exponents.

    On return ``uniforms[r, j, i]`` holds ``−η (L_{t−1,i} − min_k L_{t−1,k})`` of the chunk's
    round j and ``cum`` has advanced over the chunk; the losses themselves are not kept, only
    the learner's expected loss needs them, and :func:`fused_learner_chunk` recovers it from the
    cumulative losses' increments.
    """
    n_rep, n, n_act = uniforms.shape
    for r in range(n_rep):
        for j in range(n):
            m = cum[r, 0]
            for i in range(1, n_act):
                m = min(m, cum[r, i])
            for i in range(n_act):
                x = 1.0 * (uniforms[r, j, i] < mu[i])
                uniforms[r, j, i] = -eta * (cum[r, i] - m)
                cum[r, i] += x


@njit(cache=True)
def fused_learner_chunk(weights, losses, learner):
    """Second pass of the SIMD variant: ``learner[r] += Σ_j p_{t_j}·l_{t_j}`` from the weights."""
    n_rep, n, n_act = weights.shape
    for r in range(n_rep):
        for j in range(n):
            s = 0.0
            h = 0.0
            for i in range(n_act):
                s += weights[r, j, i]
                h += weights[r, j, i] * losses[r, j, i]
            learner[r] += h / s


def fused_simd_chunk(mu, eta, uniforms, cum, learner):
    """The same step as :func:`fused_regret_chunk` with the exponentials taken by ``np.exp``.

    numba without Intel's SVML calls the scalar libm ``exp`` per element, which dominates the
    one-pass kernel; numpy's ``exp`` loop is vectorized (AVX-512 here). So the strongest
    hand-written Hedge for general losses is three passes: losses and exponents (numba), one
    ``np.exp`` over the chunk, then the normalization and the learner's loss (numba).
    """
    losses = uniforms < mu  # kept for the second pass (bool: an eighth of the memory traffic)
    fused_exponents_chunk(mu, eta, uniforms, cum)
    np.exp(uniforms, out=uniforms)
    fused_learner_chunk(uniforms, losses, learner)


def run_fused(
    n_actions, horizon, replicates, chunk_elements=DEFAULT_CHUNK_ELEMENTS, kernel=fused_regret_chunk
):
    """Regret of Hedge vs Bernoulli at the log grid, R replicates, via a hand-fused ``kernel``.

    ``kernel`` is :func:`fused_regret_chunk` (one numba pass, scalar exp) or
    :func:`fused_simd_chunk` (three passes, numpy's vectorized exp); both give the same regret to
    rounding. The uniforms come from one numpy PCG64 Generator per replicate, drawn in chunks of
    at most ``chunk_elements`` values that end on the checkpoints (as the engine does).
    """
    from arena.checkpoints import log_grid

    mu = bernoulli_means(n_actions)
    eta = math.sqrt(8.0 * math.log(n_actions) / horizon)
    rngs = [np.random.default_rng([SEED, r]) for r in range(replicates)]
    cum = np.zeros((replicates, n_actions))
    learner = np.zeros(replicates)
    max_chunk = max(1, chunk_elements // (replicates * n_actions))
    grid = log_grid(horizon)
    out = np.empty((replicates, grid.size))
    t0 = 1
    for g, stop in enumerate(grid.tolist()):
        while t0 <= stop:
            n = min(max_chunk, stop - t0 + 1)
            uniforms = np.empty((replicates, n, n_actions))
            for rng, block in zip(rngs, uniforms, strict=True):
                rng.random(out=block)
            kernel(mu, eta, uniforms, cum, learner)
            t0 += n
        out[:, g] = learner - cum.min(axis=1)
    assert np.isfinite(out).all()
    return out


# ----------------------------------------------------------------------------------------------
# measurement helpers


def best_times(fns, repeats=5, budget=20.0):
    """Best wall time of each of ``fns`` over up to ``repeats`` interleaved rounds.

    Each round calls every function once, in turn, so that slow drifts of a shared (virtualized)
    machine's speed hit all contenders alike; rounds stop once ``budget`` s are spent. Returns
    the best times and the number of rounds.
    """
    times: list[list[float]] = [[] for _ in fns]
    spent = 0.0
    while len(times[0]) < repeats and spent < budget:
        for fn, record in zip(fns, times, strict=True):
            start = time.perf_counter()
            fn()
            record.append(time.perf_counter() - start)
            spent += record[-1]
    return [min(t) for t in times], len(times[0])


def ours(n_actions, horizon, replicates, metrics):
    """Play ``run_game("hedge", "bernoulli", ...)`` and check that its final regret is finite."""
    from arena.game import run_game

    run = run_game(
        "hedge", "bernoulli", horizon=horizon, n_actions=n_actions, replicates=replicates,
        seed=SEED, metrics=metrics,
    )  # fmt: skip
    final = run.rows[(run.rows.metric == "regret") & (run.rows.t == horizon)].value
    assert np.isfinite(final).all()
    return run


def memory_probe(horizon: int, n_actions: int, replicates: int, metrics: str) -> None:
    """Child process of (c): print baseline and peak max RSS (MiB) of one game as JSON."""
    spec = None if metrics == "all" else {metrics: {}}
    ours(n_actions, min(horizon, 2_000), replicates, spec)  # load every kernel and module
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    ours(n_actions, horizon, replicates, spec)
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"base_mib": base, "peak_mib": peak, "wall_s": wall}))


def probe(horizon, n_actions, replicates, metrics):
    """Run :func:`memory_probe` in a fresh process and return its JSON report.

    The child is started through ``sh``, which forks it: on Linux a process's ``ru_maxrss``
    survives ``exec`` and so would start at this (large) process's resident size if we exec'd
    the child straight from here.
    """
    cmd = [sys.executable, __file__, "--memory-probe"]
    cmd += [str(horizon), str(n_actions), str(replicates), metrics]
    if os.path.exists("/bin/sh"):
        cmd = ["/bin/sh", "-c", '"$@"; status=$?; exit $status', "sh", *cmd]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import numba

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} CPUs ({model}), Python {platform.python_version()}, "
        f"numpy {np.__version__}, numba {numba.__version__}; load average at start {load}"
    )


def fmt_rate(x: float) -> str:
    return f"{x:,.0f}"


# ----------------------------------------------------------------------------------------------
# main


def marginal_costs(quick: bool) -> list[str]:
    """(d): marginal ns per replicate-round of regret only, the family and the default set."""
    sizes = MARGINAL["quick" if quick else "full"]
    n_actions, replicates, horizon, naive_t = 10, 64, sizes["ours"], sizes["naive"]
    sets = {"regret only": {"regret": {}}, "regret family": FAMILY, "default set": None}
    contenders = []
    for spec in sets.values():
        contenders += [
            lambda spec=spec: ours(n_actions, horizon, replicates, spec),
            lambda spec=spec: ours(n_actions, 10, replicates, spec),
        ]
    contenders += [
        lambda: naive_game(n_actions, naive_t, 1, family=True),
        lambda: naive_game(n_actions, naive_t, 1),
    ]
    for fn in contenders[:6]:
        fn()  # warm-up: every metric's kernels
    best, k = best_times(contenders, budget=60.0)
    naive_ns = {"regret family": best[6] / naive_t * 1e9, "default set": best[7] / naive_t * 1e9}
    lines = [
        "",
        f"## (d) marginal cost per replicate-round (N = {n_actions}, R = {replicates})",
        "",
        f"(T(ours) − 10 rounds) / (R·(T − 10)) with T = {horizon:,}, against the naive loop with "
        f"the same metrics (1 replicate × {naive_t:,} rounds); best of {k} interleaved rounds.",
        "",
        "| metrics | rows per checkpoint | ours ns/rr | naive ns/rr | speedup | vs family | "
        "target |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    cost = {}
    for g, (label, spec) in enumerate(sets.items()):
        run = ours(n_actions, 10, 1, spec)
        n_rows = int((run.rows.t == 10).sum())
        cost[label] = (best[2 * g] - best[2 * g + 1]) / (replicates * (horizon - 10)) * 1e9
        naive = naive_ns.get(label)
        speedup = f"{naive / cost[label]:,.1f}×" if naive else ""
        rel = cost[label] / cost["regret family"] if "regret family" in cost else math.nan
        target = ""
        if label == "regret family":
            target = "≥ 100×: " + ("met" if naive / cost[label] >= 100 else "**missed**")
        elif label == "default set":
            target = "≤ 1.5× family: " + ("met" if rel <= 1.5 else "**missed**")
        row = (
            f"| {label} | {n_rows} | {cost[label]:.1f} | "
            f"{'' if naive is None else f'{naive:,.0f}'} | {speedup} | "
            f"{'' if math.isnan(rel) else f'{rel:.2f}'} | {target} |"
        )
        lines.append(row)
        print(row, flush=True)
    return lines


def fixed_costs(quick: bool) -> list[str]:
    """(e): the per-game fixed cost of ``run_game`` at R = 1, split into its parts.

    The preparation (``check_game``: validation, metric resolution and parameter checks, run id
    and cell key; then ``reset_game``: seeding, the components' resets) and ``assemble_rows`` are
    timed inside the call by wrapping the names ``arena.game.run_game`` calls; the rest is metric
    start-up, the rounds and the snapshots.
    """
    import arena.game as game

    parts = {"prepare": 0.0, "rows": 0.0}
    check, reset, assemble = game.check_game, game.reset_game, game.assemble_rows

    def timed(key, fn):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                parts[key] += time.perf_counter() - start

        return wrapper

    repeats = 5 if quick else 30
    lines = [
        "",
        "## (e) per-game fixed cost of `run_game` (N = 10, R = 1; hedge vs bernoulli)",
        "",
        f"Best of {repeats} calls, in ms: the whole call's wall time and its CPU time "
        "(`time.process_time`, less sensitive to other processes on a shared machine), and the "
        "wall time of the preparation (`check_game`: validation, metrics' parameters, run id and "
        "cell key; `reset_game`: seeding, resets), of `assemble_rows` (the tidy table) and of "
        "the rest (metric start-up, the rounds, the checkpoint snapshots) in the best call.",
        "",
        "| metrics | T | checkpoints | rows | run_game ms | CPU ms | prepare ms | rows ms "
        "| rest ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    game.check_game, game.reset_game = timed("prepare", check), timed("prepare", reset)
    game.assemble_rows = timed("rows", assemble)
    try:
        for label, spec in (("regret only", {"regret": {}}), ("default set", None)):
            for horizon in (1, 10):
                best, cpu = None, math.inf
                for _ in range(repeats):
                    parts.update(prepare=0.0, rows=0.0)
                    start, cpu_start = time.perf_counter(), time.process_time()
                    run = game.run_game(
                        "hedge", "bernoulli", horizon=horizon, n_actions=10, replicates=1,
                        seed=SEED, metrics=spec,
                    )  # fmt: skip
                    total = time.perf_counter() - start
                    cpu = min(cpu, time.process_time() - cpu_start)
                    if best is None or total < best[0]:
                        best = (total, parts["prepare"], parts["rows"])
                total, prep, rows = best
                row = (
                    f"| {label} | {horizon} | {len(run.config['checkpoints'])} | {len(run.rows)} "
                    f"| {total * 1e3:.1f} | {cpu * 1e3:.1f} | {prep * 1e3:.1f} | "
                    f"{rows * 1e3:.1f} | {(total - prep - rows) * 1e3:.1f} |"
                )
                lines.append(row)
                print(row, flush=True)
    finally:
        game.check_game, game.reset_game, game.assemble_rows = check, reset, assemble
    return lines


def main(quick: bool, only: str = "abcde") -> str:
    sizes = QUICK if quick else FULL
    started = time.perf_counter()
    lines = [f"# Engine benchmark ({'quick' if quick else 'full'})", "", machine(), ""]
    if quick:
        lines += ["Quick mode: sizes too small for meaningful rates (a smoke test only).", ""]

    print("warming up (numba compile / cache load) ...", flush=True)
    for n_actions, replicates in CONFIGS:
        ours(n_actions, 50, replicates, None)
        ours(n_actions, 50, replicates, {"regret": {}})
    for kernel in (fused_regret_chunk, fused_simd_chunk):
        np.testing.assert_allclose(
            run_fused(10, 2_000, 2, kernel=kernel), run_fused(10, 2_000, 2), rtol=0, atol=1e-9
        )
    if set(only) & set("ad"):
        lines += [f"Sanity check: {check_naive(sizes['check'])}.", ""]
        print(lines[-2], flush=True)

    if "a" in only:  # all default metrics vs the naive loop
        lines += [
            "## (a) all default metrics: `run_game(metrics=None)` vs naive per-round loop",
            "",
            "| N | R | T (ours) | ours rr/s | naive reps × T | naive rr/s | speedup | target |",
            "|---:|---:|---:|---:|---:|---:|---:|---|",
        ]
        for n_actions, replicates in CONFIGS:
            horizon = sizes["ours_all"][(n_actions, replicates)]
            naive_reps = min(replicates, 2)
            naive_t = sizes["naive"][n_actions] // naive_reps
            (sec, nsec), k = best_times(
                [
                    lambda: ours(n_actions, horizon, replicates, None),  # noqa: B023
                    lambda: naive_game(n_actions, naive_t, naive_reps),  # noqa: B023
                ]
            )
            rate = replicates * horizon / sec
            nrate = naive_reps * naive_t / nsec
            target = ""
            if (n_actions, replicates) == (10, 64):
                target = "≥ 100×: " + ("met" if rate / nrate >= 100 else "**missed**")
            row = (
                f"| {n_actions} | {replicates} | {horizon:,} | {fmt_rate(rate)} | "
                f"{naive_reps} × {naive_t:,} | {fmt_rate(nrate)} | {rate / nrate:,.1f}× | "
                f"{target} |"
            )
            lines.append(row)
            print(row, f"(best of {k} interleaved rounds)", flush=True)

    if "b" in only:  # regret only vs the fused numba kernel
        lines += [
            "",
            "## (b) regret only: `run_game(metrics={'regret': {}})` vs hand-fused numba kernel",
            "",
            "| N | R | T | ours rr/s | fused rr/s (scalar exp) | fused rr/s (SIMD exp) "
            "| ours time / best fused time | target |",
            "|---:|---:|---:|---:|---:|---:|---:|---|",
        ]
        for n_actions, replicates in CONFIGS:
            horizon = sizes["ours_regret"][(n_actions, replicates)]
            spec = {"regret": {}}
            (sec, fsec, ssec), k = best_times(
                [
                    lambda: ours(n_actions, horizon, replicates, spec),  # noqa: B023
                    lambda: run_fused(n_actions, horizon, replicates),  # noqa: B023
                    lambda: run_fused(n_actions, horizon, replicates, kernel=fused_simd_chunk),  # noqa: B023
                ]
            )
            rr = replicates * horizon
            ratio = sec / min(fsec, ssec)
            row = (
                f"| {n_actions} | {replicates} | {horizon:,} | {fmt_rate(rr / sec)} | "
                f"{fmt_rate(rr / fsec)} | {fmt_rate(rr / ssec)} | {ratio:.2f} | "
                f"≤ 2: {'met' if ratio <= 2 else '**missed**'} |"
            )
            lines.append(row)
            print(row, f"(best of {k} interleaved rounds)", flush=True)

    if "d" in only:
        lines += marginal_costs(quick)
    if "e" in only:
        lines += fixed_costs(quick)

    if "c" in only:  # memory flat in T
        lines += [
            "",
            "## (c) peak RSS vs horizon (fresh subprocess each; N = 10, R = 1)",
            "",
            "| T | metrics | RSS after warm-up (MiB) | peak RSS (MiB) | growth (MiB) | wall (s) |",
            "|---:|---|---:|---:|---:|---:|",
        ]
        for horizon, metrics in sizes["memory"]:
            res = probe(horizon, 10, 1, metrics)
            row = (
                f"| {horizon:,} | {metrics} | {res['base_mib']:.1f} | {res['peak_mib']:.1f} | "
                f"{res['peak_mib'] - res['base_mib']:.1f} | {res['wall_s']:.1f} |"
            )
            lines.append(row)
            print(row, flush=True)

    lines += [
        "",
        "Notes:",
        "",
        "- rr/s = replicate-rounds per second: R·T / wall seconds of the whole call (setup, "
        "seeding and row assembly included).",
        "- Best of up to 5 interleaved rounds (ours, then the baseline, in turn; fewer when the "
        "rounds exceed 20 s). The naive loop plays its replicates one after another, so its "
        "rate does not depend on R (R = 64 rows run 2).",
        "- Fused kernels: uniforms pre-drawn in chunks of 2^18 values by numpy PCG64 (one "
        "Generator per replicate), then one numba pass for Hedge, losses and regret (scalar "
        "exp), or numba exponents + one `np.exp` over the chunk + numba normalization (SIMD "
        "exp); the ratio is taken against the faster of the two.",
        "- Peak RSS: `ru_maxrss` of a fresh process after a warm-up game (T ≤ 2,000), then "
        "after the measured game. 'all' = `metrics=None` (every default metric).",
        "",
        f"Total benchmark wall time: {time.perf_counter() - started:.0f} s.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    parser.add_argument("--only", default="abcde", help="sections to run, e.g. 'd,e' (a–e)")
    parser.add_argument(
        "--memory-probe", nargs=4, metavar=("T", "N", "R", "METRICS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.memory_probe:
        t, n, r, m = args.memory_probe
        memory_probe(int(t), int(n), int(r), m)
        sys.exit(0)
    report = main(args.quick, args.only.replace(",", ""))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(report)
    print(f"\nwritten to {RESULTS}")
