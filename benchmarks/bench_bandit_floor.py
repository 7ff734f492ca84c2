"""The irreducible work of a Bernoulli bandit game, hand-fused, against the arena's whole game.

Issue 34, item 2 allows a policy that cannot reach 300× SMPyBandits per batched policy-step to be
"within 1.5× of its irreducible work measured alone". For the index policies ``ucb1``, ``moss``
and ``epsilon_greedy``, and for ``exp3pp`` (whose round is K exponentials, one per arm's weight
at a rate that changes every round, about 5.5 ns each here: half of its batched policy-step),
that work is more than the policy's own rule: the bandit game is the experts game under bandit
feedback, so every round draws all K arms' Bernoulli losses from the replicate's adversary
stream (common random numbers across players and protocols) and keeps the per-arm cumulative
losses that the regret against the best arm in hindsight needs.

A **floor** here is one numba kernel per policy that plays the whole game, R replicates × T
rounds, with no driver, no chunks, no buffers and no checks:

* the K losses of a round drawn exactly as the ``bernoulli`` adversary draws them
  (``1{U < μ_i}``, U from the replicate's own adversary generator, its PCG64 stepped in the
  kernel by :func:`arena.streams.pcg64_next` as
  :func:`arena.adversaries.stochastic._bernoulli_draw_pcg64` steps it), in round order;
* the action uniform, from the replicate's action stream, only where the policy needs one
  (``epsilon_greedy``, ``exp3pp``; the draw is :func:`arena.sampling.sample_action`'s
  convention);
* the policy's own index, argmin and update, with the arithmetic and the tie rule of its kernel
  in ``arena.players`` (the same per-round factors, caches and tables);
* the regret bookkeeping: the per-arm cumulative losses, the learner's expected loss
  ``Σ p_t·l_t`` and its realized loss ``Σ l_{t,I_t}``.

It leaves out what the game does that these policies do not need: the action uniform of a
deterministic policy (its point mass is drawn to its arm whatever the uniform), the ``p_t``
rows, the validation of losses and ``p_t``, ``Σ_t min_i l_{t,i}`` (dynamic regret's total), the
checkpoints and rows, and seeding the replicates' streams (the floor is handed generators seeded
as the game seeds them; the game's seeding is its fixed cost, reported apart).

Before anything is timed each floor must **reproduce the game**: the same arm of every round of
every replicate (the game's trace) and the same final ``regret`` and ``realized_regret``, bit
for bit, for several seeds. The sums are the game's in the game's order: for a point mass
``p_t·l_t = Σ_i p_i l_i`` is a sum of zeros and ``l_{t,I_t}``, which is ``l_{t,I_t}`` exactly,
and ``epsilon_greedy`` and ``exp3pp`` add ``p_i l_i`` over i in the order of the game's core kernel.

Then game and floor are timed alternately in process CPU time (the machine is shared) at
R = 100, T = 10⁴ and T = 10⁵ and at R = 1, T = 10⁵, ``--reps`` times, each timed call right
after an untimed one of the same code (:data:`bench_bandits.WARM_ROUNDS` rounds; the fixed cost
after an untimed game of T = 10), as ``bench_bandits.py`` times its contenders since
2026-11-30. The ratio game / floor is judged against the 1.5× target as ``paired.py`` says: the
median of the repeats' ratios, a bootstrap 95 % interval of that median, and the verdict *met*
(all of the interval at or below 1.5×), *not met* (none of it) or *within noise*. Each side's
best time, and the ratio of the best times that tables before 2026-11-30 judged, are printed
beside it. ``run_game`` also times its fixed cost (``run_game`` at T = 10, the same R).

Run::

    .venv/bin/python benchmarks/bench_bandit_floor.py             # ~1 min, 7 repeats
    .venv/bin/python benchmarks/bench_bandit_floor.py --quick     # smoke test, a few seconds
    .venv/bin/python benchmarks/bench_bandit_floor.py --only ucb1 --reps 7
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from bench_bandits import REWARD_MEANS, WARM_ROUNDS, K
from numba import njit
from paired import judge

from arena.game import check_game, run_game
from arena.players.epsilon_greedy import _epsilon
from arena.players.exp3pp import DEFAULT_C, exp3pp_round_probs, exp3pp_schedule
from arena.players.moss import BONUS_TABLE_MAX, _moss_bonus_table, _moss_index
from arena.players.ucb1 import WIDTH_TABLE_MAX, ucb1_width_table
from arena.sampling import sample_action
from arena.seeding import replicate_streams
from arena.streams import generator_handles, pcg64_load, pcg64_next, pcg64_save, pcg64_streams

LOSS_MEANS = (1.0 - REWARD_MEANS).tolist()
"""The arms' loss means, 0.9 … 0.1, as ``bench_bandits.py`` plays them (rewards 0.1 … 0.9)."""
POLICIES = ("ucb1", "moss", "epsilon_greedy", "exp3pp")
TARGET = 1.5
"""The issue's bound: the game within 1.5× of the policy's irreducible work."""
SIZES = ((100, 10_000), (100, 100_000), (1, 100_000))
"""(R, T) of the timed games."""


# ----------------------------------------------------------------------------------------------
# the floors: one kernel per policy, the whole game


@njit(cache=True, nogil=True)
def floor_ucb1(adv, means, horizon, regret, realized_regret, arms):
    """UCB1's whole game: K Bernoulli losses, the index argmin and update, the regret totals.

    ``adv`` is :func:`arena.streams.generator_handles` of the replicates' adversary generators;
    ``regret`` and ``realized_regret`` (R,) receive the final values; ``arms`` (R, T) the arm of
    every round, or is (R, 0) to record nothing. The index is ``mean_i − sqrt(2 ln n) · w_i``
    with ``w_i = 1/sqrt(n_i)`` and the factor tabulated per round, as the player's kernel
    computes it; ``w_i`` is read from the player's table (built here by the player's own
    function) while the count is tabulated; an unplayed arm's index is −inf (lowest index first).
    """
    n_rep = adv.shape[0]
    n_act = means.shape[0]
    record = arms.shape[1] > 0
    widths = ucb1_width_table(min(horizon + 1, WIDTH_TABLE_MAX))
    n_table = widths.size
    factor = np.empty(horizon)
    for t in range(horizon):
        factor[t] = math.sqrt(2.0 * math.log(max(t, 1)))
    mean = np.empty(n_act)
    width = np.empty(n_act)
    sums = np.empty(n_act)
    counts = np.empty(n_act)
    cum = np.empty(n_act)
    for r in range(n_rep):
        rng = pcg64_load(adv, r)
        mean[:] = -np.inf
        width[:] = 0.0
        sums[:] = 0.0
        counts[:] = 0.0
        cum[:] = 0.0
        learner = 0.0
        for t in range(horizon):
            s = factor[t]
            best = 0
            best_index = np.inf
            for i in range(n_act):
                index = mean[i] - s * width[i]
                if index < best_index:
                    best, best_index = i, index
            pulled = 0.0
            for i in range(n_act):
                rng, draw = pcg64_next(rng)
                li = 1.0 if draw < means[i] else 0.0
                cum[i] += li
                pulled = li if i == best else pulled
            # a point mass: p_t·l_t and l_{t,I_t} are both the pulled arm's loss
            learner += pulled
            total = sums[best] + pulled
            c = counts[best] + 1.0
            sums[best] = total
            counts[best] = c
            mean[best] = total / c
            k = int(c)
            width[best] = widths[k] if k < n_table else 1.0 / math.sqrt(c)
            if record:
                arms[r, t] = best
        pcg64_save(adv, r, rng)
        regret[r] = learner - cum.min()
        realized_regret[r] = regret[r]


@njit(cache=True, nogil=True)
def floor_moss(adv, means, horizon, regret, realized_regret, arms):
    """MOSS's whole game (arguments as :func:`floor_ucb1`): the index
    ``S_i/n_i − sqrt(max(ln(T/(K n_i)), 0)/n_i)``, its bonus read from the player's table by pull
    count (computed here by the player's own function), the lowest index on ties."""
    n_rep = adv.shape[0]
    n_act = means.shape[0]
    record = arms.shape[1] > 0
    h = float(horizon)
    bonus = _moss_bonus_table(h, n_act, int(min(horizon // n_act + 2, BONUS_TABLE_MAX)))
    n_table = bonus.size
    index = np.empty(n_act)
    sums = np.empty(n_act)
    counts = np.empty(n_act)
    cum = np.empty(n_act)
    for r in range(n_rep):
        rng = pcg64_load(adv, r)
        index[:] = -np.inf
        sums[:] = 0.0
        counts[:] = 0.0
        cum[:] = 0.0
        learner = 0.0
        for t in range(horizon):
            # the player's ``index[i] < index[best]`` with index[best] kept in a register
            best = 0
            best_index = index[0]
            for i in range(1, n_act):
                if index[i] < best_index:
                    best, best_index = i, index[i]
            pulled = 0.0
            for i in range(n_act):
                rng, draw = pcg64_next(rng)
                li = 1.0 if draw < means[i] else 0.0
                cum[i] += li
                pulled = li if i == best else pulled
            learner += pulled
            total = sums[best] + pulled
            c = counts[best] + 1.0
            sums[best] = total
            counts[best] = c
            k = int(c)
            if k < n_table:
                index[best] = total / c - bonus[k]
            else:
                index[best] = _moss_index(total, c, h, n_act)
            if record:
                arms[r, t] = best
        pcg64_save(adv, r, rng)
        regret[r] = learner - cum.min()
        realized_regret[r] = regret[r]


@njit(cache=True, nogil=True)
def floor_epsilon_greedy(adv, act, means, horizon, c, d, regret, realized_regret, arms):
    """ε-greedy's whole game with the decaying ``ε_t = min(1, cK/(d² t))`` (arguments as
    :func:`floor_ucb1`, and ``act`` the handles of the action streams).

    ``p_t = (1 − ε_t) e_g + ε_t/K`` on the greedy arm g (least mean loss, unplayed arms first,
    the lowest index on ties), ``I_t`` its inverse-CDF draw at the round's action uniform (the
    first i with ``p_1 + … + p_i > u``, else the last positive one), ``p_t·l_t`` summed in arm
    order: what the player's kernel and the game's core compute, once.
    """
    n_rep = adv.shape[0]
    n_act = means.shape[0]
    record = arms.shape[1] > 0
    share = np.empty(horizon)  # ε_t / K, every arm's
    top = np.empty(horizon)  # the greedy arm's, ε_t/K + (1 − ε_t)
    for t in range(horizon):
        e = _epsilon(True, 0.0, c, d, n_act, t + 1)
        share[t] = e / n_act
        top[t] = share[t] + (1.0 - e)
    mean = np.empty(n_act)
    sums = np.empty(n_act)
    counts = np.empty(n_act)
    cum = np.empty(n_act)
    losses = np.empty(n_act)
    for r in range(n_rep):
        rng = pcg64_load(adv, r)
        action_rng = pcg64_load(act, r)
        mean[:] = -np.inf
        sums[:] = 0.0
        counts[:] = 0.0
        cum[:] = 0.0
        learner = 0.0
        realized = 0.0
        for t in range(horizon):
            best = 0
            best_mean = np.inf
            for i in range(n_act):
                if mean[i] < best_mean:
                    best, best_mean = i, mean[i]
            action_rng, u = pcg64_next(action_rng)
            for i in range(n_act):
                rng, draw = pcg64_next(rng)
                li = 1.0 if draw < means[i] else 0.0
                losses[i] = li
                cum[i] += li
            lo, hi = share[t], top[t]
            s = 0.0
            acc = 0.0
            found = n_act
            last = 0
            for i in range(n_act):
                p = hi if i == best else lo
                s += p * losses[i]
                last = i if p > 0.0 else last
                acc += p
                found = i if (u < acc) & (found == n_act) else found
            a = found if found < n_act else last
            la = losses[a]
            learner += s
            realized += la
            total = sums[a] + la
            k = counts[a] + 1.0
            sums[a] = total
            counts[a] = k
            mean[a] = total / k
            if record:
                arms[r, t] = a
        m = cum.min()
        pcg64_save(adv, r, rng)
        pcg64_save(act, r, action_rng)
        regret[r] = learner - m
        realized_regret[r] = realized - m


@njit(cache=True, nogil=True, error_model="numpy")
def floor_exp3pp(adv, act, means, horizon, c, regret, realized_regret, arms):
    """EXP3++'s whole game (arguments as :func:`floor_epsilon_greedy`, ``c`` the player's).

    ``ρ̃_t`` by the player's kernel's own round (:func:`arena.players.exp3pp.exp3pp_round_probs`:
    the softmax of the loss estimates shifted by their minimum at ``β_t``, the exploration
    ``ε_t(a) = min(floor_t, c ln(x)/x)`` where the schedule's thresholds do not already say it is
    the floor, ``(1 − Σε)(w/Σw) + ε`` in arm order); ``I_t`` drawn by
    :func:`arena.sampling.sample_action`; ``L̃(I_t) += ℓ/ρ̃_t(I_t)``. The per-round constants
    come from the player's own :func:`~arena.players.exp3pp.exp3pp_schedule`, once for the whole
    horizon (the game's kernel asks them chunk by chunk). Not a point mass: ``p_t·l_t`` is summed
    in arm order, as the game's core sums it.
    """
    n_rep = adv.shape[0]
    n_act = means.shape[0]
    record = arms.shape[1] > 0
    beta, floor, thresholds = exp3pp_schedule(0, horizon, n_act, c)
    est = np.empty(n_act)
    p = np.empty(n_act)
    eps = np.empty(n_act)
    cum = np.empty(n_act)
    losses = np.empty(n_act)
    for r in range(n_rep):
        rng = pcg64_load(adv, r)
        action_rng = pcg64_load(act, r)
        est[:] = 0.0
        cum[:] = 0.0
        learner = 0.0
        realized = 0.0
        for j in range(horizon):
            exp3pp_round_probs(est, j + 1, beta[j], floor[j], thresholds[j], c, p, eps)
            action_rng, u = pcg64_next(action_rng)
            s = 0.0
            for i in range(n_act):
                rng, draw = pcg64_next(rng)
                li = 1.0 if draw < means[i] else 0.0
                losses[i] = li
                cum[i] += li
                s += p[i] * li
            a = sample_action(p, u)
            la = losses[a]
            learner += s
            realized += la
            est[a] += la / p[a]
            if record:
                arms[r, j] = a
        low = cum.min()
        pcg64_save(adv, r, rng)
        pcg64_save(act, r, action_rng)
        regret[r] = learner - low
        realized_regret[r] = realized - low


# ----------------------------------------------------------------------------------------------
# the game and the floor on the same streams


def game_kwargs(replicates: int, horizon: int, seed: int = 0) -> dict:
    """The game every figure here plays: K = 9 Bernoulli arms of loss means 0.9 … 0.1."""
    return {
        "n_actions": K,
        "horizon": horizon,
        "replicates": replicates,
        "seed": seed,
        "adversary_params": {"means": LOSS_MEANS},
        "n_jobs": 1,
    }


def streams(policy: str, replicates: int, horizon: int, seed: int = 0):
    """The replicates' (adversary, action) generators, seeded as the game seeds them: the game
    and cell keys of the game, checked by :func:`arena.game.check_game`, then
    :func:`arena.seeding.replicate_streams` per replicate."""
    kw = game_kwargs(replicates, horizon, seed)
    kw.pop("n_jobs")
    game = check_game(policy, "bernoulli", metrics={"regret": {}}, **kw)
    made = [
        replicate_streams(seed, game.game_key, game.config["cell_key"], int(r)) for r in game.ids
    ]
    return [s[0] for s in made], [s[1] for s in made]


def floor_call(
    policy: str, adv_rngs: list, act_rngs: list, horizon: int, record: bool = False
) -> tuple[Callable[[], None], np.ndarray, np.ndarray, np.ndarray]:
    """The policy's floor on these generators, ready to run: return a call that plays it
    (advancing the generators), and the arrays it fills: the final regrets, realized regrets and,
    if ``record``, the (R, T) arms. The generators' handles are read here, not in the call; the
    call holds the generators, which the handles point into (freed, they would be freed memory)."""
    n_rep = len(adv_rngs)
    if not pcg64_streams([*adv_rngs, *act_rngs]):  # the floors step PCG64 as the game does
        raise RuntimeError("the floors need numba and NumPy's PCG64 stepped in the kernel")
    means = np.asarray(LOSS_MEANS)
    regret, realized = np.empty(n_rep), np.empty(n_rep)
    arms = np.zeros((n_rep, horizon if record else 0), dtype=np.int64)
    adv = generator_handles(adv_rngs)
    if policy == "ucb1":

        def call() -> None:
            floor_ucb1(adv, means, horizon, regret, realized, arms)

    elif policy == "moss":

        def call() -> None:
            floor_moss(adv, means, horizon, regret, realized, arms)

    elif policy == "epsilon_greedy":
        act = generator_handles(act_rngs)

        def call() -> None:
            # the player's defaults: the decaying schedule with c = 5, d = 0.1
            floor_epsilon_greedy(adv, act, means, horizon, 5.0, 0.1, regret, realized, arms)

    elif policy == "exp3pp":
        act = generator_handles(act_rngs)

        def call() -> None:
            floor_exp3pp(adv, act, means, horizon, DEFAULT_C, regret, realized, arms)

    else:
        raise ValueError(f"no floor for {policy!r}; have {POLICIES}")
    call.generators = (adv_rngs, act_rngs)  # alive as long as the call: the handles point in
    return call, regret, realized, arms


def check_reproduces(policy: str, replicates: int, horizon: int, seeds: tuple[int, ...]) -> int:
    """Assert that the floor plays the game: every replicate's arm of every round (the game's
    trace) and its final ``regret`` and ``realized_regret``, bit for bit; return the rounds
    compared."""
    compared = 0
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            trace = Path(tmp) / "trace.parquet"
            run = run_game(
                policy,
                "bernoulli",
                metrics={"regret": {}, "realized_regret": {}},
                trace_path=trace,
                **game_kwargs(replicates, horizon, seed),
            )
            table = pq.read_table(trace, columns=["replicate", "t", "action"]).to_pandas()
        game_arms = np.zeros((replicates, horizon), dtype=np.int64)
        game_arms[table.replicate.to_numpy(), table.t.to_numpy() - 1] = table.action.to_numpy()
        last = run.rows[run.rows.t == horizon].sort_values("replicate")
        call, regret, realized, arms = floor_call(
            policy, *streams(policy, replicates, horizon, seed), horizon, record=True
        )
        call()
        where = f"{policy}, seed {seed}"
        game_regret = last[last.metric == "regret"].value.to_numpy()
        game_realized = last[last.metric == "realized_regret"].value.to_numpy()
        # raised, not asserted: the check must hold under ``python -O`` too
        for what, ours, theirs in (
            ("arm sequences", arms, game_arms),
            ("final regrets", regret, game_regret),
            ("final realized regrets", realized, game_realized),
        ):
            if not np.array_equal(ours, theirs):
                raise AssertionError(f"{where}: the floor's {what} differ from the game's")
        compared += replicates * horizon
    return compared


# ----------------------------------------------------------------------------------------------
# timing


def _cpu(fn: Callable[[], object]) -> float:
    """Process CPU seconds of one call."""
    start = time.process_time()
    fn()
    return time.process_time() - start


def time_game(policy: str, replicates: int, horizon: int) -> float:
    """Process CPU seconds of one ``run_game`` with the regret metric (the timed game)."""
    kw = game_kwargs(replicates, horizon)
    return _cpu(lambda: run_game(policy, "bernoulli", metrics={"regret": {}}, **kw))


def time_floor(policy: str, replicates: int, horizon: int) -> float:
    """Process CPU seconds of the floor's kernel on freshly seeded generators (the seeding and
    the handles are not timed)."""
    call = floor_call(policy, *streams(policy, replicates, horizon), horizon)[0]
    return _cpu(call)


def measure(policies, sizes, reps: int) -> dict[tuple[str, int, int], dict[str, list[float]]]:
    """Process CPU ns per policy-step of game, floor and the game's fixed cost (T = 10) in each
    repeat, alternating game and floor within a repeat and every size and policy across
    repeats (``benchmarks/paired.py``: a repeat is a round, its game/floor ratio a pair)."""
    rounds: dict[tuple[str, int, int], dict[str, list[float]]] = {}
    for _ in range(reps):
        for replicates, horizon in sizes:
            for policy in policies:
                entry = rounds.setdefault(
                    (policy, replicates, horizon), {"game": [], "floor": [], "fixed": []}
                )
                steps = replicates * horizon
                # each timed call follows an untimed one of the same code (WARM_ROUNDS rounds)
                time_game(policy, replicates, WARM_ROUNDS)
                entry["game"].append(time_game(policy, replicates, horizon) / steps * 1e9)
                time_floor(policy, replicates, WARM_ROUNDS)
                entry["floor"].append(time_floor(policy, replicates, horizon) / steps * 1e9)
                time_game(policy, replicates, 10)
                entry["fixed"].append(time_game(policy, replicates, 10) / steps * 1e9)
    return rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--only", default=",".join(POLICIES), help="comma-separated policies")
    parser.add_argument("--reps", type=int, default=7, help="repeats (paired rounds)")
    args = parser.parse_args()
    policies = [p for p in args.only.split(",") if p]
    # ε-greedy explores uniformly until t = cK/d² = 4500: a check must play past it
    check_sizes = (2, 6_000) if args.quick else (20, 20_000)
    sizes = ((4, 2_000),) if args.quick else SIZES
    reps = 1 if args.quick else args.reps
    for policy in policies:
        n = check_reproduces(policy, *check_sizes, seeds=(0, 1, 2))
        print(f"{policy}: the floor reproduces the game (arms of {n} rounds, final regret and "
              "realized regret bit for bit, seeds 0, 1, 2)")  # fmt: skip
    for policy in policies:  # compile and warm everything that is timed
        time_game(policy, 2, 50)
        time_floor(policy, 2, 50)
    start_load = os.getloadavg()[0]
    results = measure(policies, sizes, reps)
    end_load = os.getloadavg()[0]
    print(f"\nprocess CPU ns per policy-step, best of {reps}; game/floor: the median of the "
          f"{reps} repeats' ratios [bootstrap 95 % interval], its verdict (benchmarks/paired.py) "
          f"and the ratio of the best times; 1-minute load average {start_load:.2f} at the start, "
          f"{end_load:.2f} at the end")  # fmt: skip
    if args.quick:
        print("(--quick: a smoke test, the times are not meaningful)")
    header = (
        f"{'policy':<16}{'R':>5}{'T':>8}{'game':>9}{'fixed':>8}{'floor':>8}"
        f"{'game/floor':>25}  {'verdict':<13}{'best-of':>8}"
    )
    print(header)
    for (policy, replicates, horizon), e in results.items():
        game, floor = np.asarray(e["game"]), np.asarray(e["floor"])
        mid, low, high, verdict = judge(game / floor, TARGET, at_most=True)
        interval = f"{mid:.2f} [{low:.2f}–{high:.2f}]"
        best_of = game.min() / floor.min()
        print(f"{policy:<16}{replicates:>5}{horizon:>8}{game.min():>9.1f}{min(e['fixed']):>8.1f}"
              f"{floor.min():>8.1f}{interval:>25}  {verdict:<13}{best_of:>8.2f}")  # fmt: skip
    print(f"target: game/floor ≤ {TARGET}; 'fixed' is run_game at T = 10 (same R) spread over "
          "the T rounds of the row")  # fmt: skip


if __name__ == "__main__":
    main()
