"""Where a bandit game's time goes: ns per policy-step of each stage of the engine path.

Plays ``run_game(player, "bernoulli", n_actions=9, horizon=T, replicates=R,
metrics={"regret": {}})`` with the stages of :class:`arena.bandit.game.BanditStepper` wrapped in
timers: the adversary's ``losses_block`` (with its validation), the action uniforms, the player's
``play_block`` kernel, the check of ``p_t`` with the draw of ``I_t`` and the core totals (one
fused kernel, ``_checked_advance``) and the rest (the driver's Python per chunk, the metric, row
assembly: the game's time minus the stages).
Every number is nanoseconds per policy-step (one round of one replicate); the timers add a few
microseconds per chunk, so the total is a little above an untimed game's.

``--thompson`` adds Thompson sampling's irreducible work: K Beta draws per round alone, with the
posterior parameters of a game replayed (its pulls and Bernoulli-trick outcomes), by numba's
``Generator.beta`` and by the kernel's sampler (:func:`arena.players.thompson._beta`, the same draws
with each arm's Gamma constants kept), against the player's kernel alone and the whole game.
Each repeat times the four one after another; the kernel's and the game's ratio to the kernel's
sampler are the median of the repeats' ratios with a bootstrap 95 % interval, judged against the
issue's 1.5× (``paired.py``), beside the ratio of the best times.

Run::

    .venv/bin/python benchmarks/profile_bandit_path.py                 # every bandit policy
    .venv/bin/python benchmarks/profile_bandit_path.py ucb1 thompson --reps 5
    .venv/bin/python benchmarks/profile_bandit_path.py thompson --thompson
    .venv/bin/python benchmarks/profile_bandit_path.py ucb1 --cpu      # on a busy machine
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import numpy as np
from bench_bandit_floor import TARGET
from numba import njit
from paired import judge

import arena.bandit.game as bandit_game
import arena.experts.game as bg
from arena.game import run_game
from arena.players.thompson import _beta, _gamma_constants

POLICIES = [
    "ucb1",
    "moss",
    "kl_ucb",
    "thompson",
    "epsilon_greedy",
    "exp3",
    "exp3_ix",
    "exp3pp",
    "tsallis_inf",
    "dg_bandit",
]
STAGES = ["losses", "uniforms", "play_block", "check+core", "rest"]


_clock = time.perf_counter_ns
"""The stages' clock: wall time, or this thread's CPU time under ``--cpu`` (on a shared machine
the wall clock also counts the time other processes hold the core)."""


def _timed(name, fn, acc):
    def wrapper(*args, **kwargs):
        start = _clock()
        try:
            return fn(*args, **kwargs)
        finally:
            acc[name] += _clock() - start

    return wrapper


def profile(player: str, replicates: int, horizon: int) -> dict[str, float]:
    """One timed game: ns per policy-step of each stage, and of the whole game. A point-mass
    player's stages are ``play_arms`` (under ``play_block``) and ``point_mass_advance`` (under
    ``check+core``), and it draws no uniforms."""
    acc: dict[str, int] = defaultdict(int)
    saved = {
        name: getattr(bg, name)
        for name in ("_oblivious_losses", "_fill_uniforms", "_checked_advance")
    }
    saved_bandit = {
        name: getattr(bandit_game, name) for name in ("_oblivious_losses", "point_mass_advance")
    }
    saved_start = bandit_game.BanditStepper.__init__

    def init(self, game):
        saved_start(self, game)
        for method in ("play_block", "play_arms"):
            setattr(self.player, method, _timed("play_block", getattr(self.player, method), acc))

    bg._oblivious_losses = _timed("losses", saved["_oblivious_losses"], acc)
    bg._fill_uniforms = _timed("uniforms", saved["_fill_uniforms"], acc)
    bg._checked_advance = _timed("check+core", saved["_checked_advance"], acc)
    bandit_game._oblivious_losses = _timed("losses", saved_bandit["_oblivious_losses"], acc)
    bandit_game.point_mass_advance = _timed("check+core", saved_bandit["point_mass_advance"], acc)
    bandit_game.BanditStepper.__init__ = init
    try:
        start = _clock()
        run_game(
            player,
            "bernoulli",
            n_actions=9,
            horizon=horizon,
            replicates=replicates,
            metrics={"regret": {}},
        )
        total = _clock() - start
    finally:
        for name, fn in saved.items():
            setattr(bg, name, fn)
        for name, fn in saved_bandit.items():
            setattr(bandit_game, name, fn)
        bandit_game.BanditStepper.__init__ = saved_start
    steps = replicates * horizon
    out = {k: acc[k] / steps for k in STAGES[:-1]}
    out["rest"] = total / steps - sum(out.values())
    out["total"] = total / steps
    return out


@njit(cache=True, nogil=True)
def _replay_numba(rng, arms, wins, n_act):
    """K Beta draws per round by ``rng.beta``, the posterior of the replayed pulls."""
    s, f, acc = np.zeros(n_act), np.zeros(n_act), 0.0
    for t in range(arms.size):
        for i in range(n_act):
            acc += rng.beta(s[i] + 1.0, f[i] + 1.0)
        if wins[t]:
            s[arms[t]] += 1.0
        else:
            f[arms[t]] += 1.0
    return acc


@njit(cache=True, nogil=True)
def _replay_kernel_sampler(rng, arms, wins, n_act):
    """The same draws by the kernel's sampler, with each arm's Gamma constants kept."""
    s, f, acc = np.zeros(n_act), np.zeros(n_act), 0.0
    s_b, s_c, f_b, f_c = np.empty(n_act), np.empty(n_act), np.empty(n_act), np.empty(n_act)
    for i in range(n_act):
        s_b[i], s_c[i] = _gamma_constants(1.0)
        f_b[i], f_c[i] = _gamma_constants(1.0)
    for t in range(arms.size):
        for i in range(n_act):
            acc += _beta(rng, s[i] + 1.0, f[i] + 1.0, s_b[i], s_c[i], f_b[i], f_c[i])
        a = arms[t]
        if wins[t]:
            s[a] += 1.0
            s_b[a], s_c[a] = _gamma_constants(s[a] + 1.0)
        else:
            f[a] += 1.0
            f_b[a], f_c[a] = _gamma_constants(f[a] + 1.0)
    return acc


def thompson_irreducible(
    reps: int, horizon: int = 100_000, n_act: int = 9
) -> dict[str, list[float]]:
    """ns per round in each repeat: Thompson's kernel alone, the whole game (R = 1), and K Beta
    draws alone (numba's ``Generator.beta``, the kernel's sampler), timed one after another."""
    from arena.registry import load
    from arena.spec import GameSpec

    rng = np.random.default_rng(0)
    means = np.full(n_act, 0.5)
    means[0] = 0.4  # the game's default Bernoulli arms (gap 0.1)
    losses = (rng.random((1, horizon, n_act)) < means).astype(float)
    uniforms = rng.random((1, horizon))

    def kernel():
        player = load("player", "thompson")()
        player.reset(GameSpec("bandit", n_act, horizon, (0.0, 1.0)), [np.random.default_rng(1)])
        start = time.perf_counter_ns()
        probs = player.play_block(losses, uniforms)
        return (time.perf_counter_ns() - start) / horizon, probs

    _, probs = kernel()
    arms = probs[0].argmax(axis=1)
    wins = losses[0, np.arange(horizon), arms] == 0.0  # the trick is exact on {0, 1} losses
    _replay_numba(np.random.default_rng(2), arms[:9], wins[:9], n_act)
    _replay_kernel_sampler(np.random.default_rng(2), arms[:9], wins[:9], n_act)
    rounds: dict[str, list[float]] = defaultdict(list)
    kw = {"n_actions": n_act, "horizon": horizon, "metrics": {"regret": {}}}
    for _ in range(reps):
        rounds["kernel"].append(kernel()[0])
        start = time.perf_counter_ns()
        run_game("thompson", "bernoulli", **kw)
        rounds["game"].append((time.perf_counter_ns() - start) / horizon)
        for name, fn in (("beta", _replay_numba), ("sampler", _replay_kernel_sampler)):
            start = time.perf_counter_ns()
            fn(np.random.default_rng(2), arms, wins, n_act)
            rounds[name].append((time.perf_counter_ns() - start) / horizon)
    return dict(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("players", nargs="*", default=POLICIES)
    parser.add_argument(
        "--reps",
        type=int,
        default=3,
        help="repeats: each stage keeps its best; --thompson judges them as paired rounds "
        "(15 give a usable interval)",
    )
    parser.add_argument("--horizon", type=int, default=10_000)
    parser.add_argument("--horizon-r1", type=int, default=100_000)
    parser.add_argument("--thompson", action="store_true", help="Thompson's irreducible work")
    parser.add_argument("--cpu", action="store_true", help="time the stages in thread CPU time")
    args = parser.parse_args()
    if args.cpu:
        global _clock
        _clock = time.thread_time_ns
    if args.thompson:
        res = {name: np.asarray(v) for name, v in thompson_irreducible(args.reps).items()}
        best = {name: v.min() for name, v in res.items()}
        print(
            f"thompson, K = 9, R = 1, T = 1e5, ns per round (best of {args.reps}); against the "
            "kernel's sampler: the median of the repeats' ratios [bootstrap 95 % interval], its "
            f"verdict (≤ {TARGET}×, benchmarks/paired.py) and the ratio of the best times"
        )
        print(f"  K Beta draws alone, numba Generator.beta:   {best['beta']:8.1f}")
        print(f"  K Beta draws alone, the kernel's sampler:   {best['sampler']:8.1f}")
        for name, label in (("kernel", "the player's kernel (play_block)"),
                            ("game", "the whole game (regret metric)")):  # fmt: skip
            mid, low, high, verdict = judge(res[name] / res["sampler"], TARGET, at_most=True)
            print(f"  {label:<43}{best[name]:8.1f}  ({mid:.2f}x [{low:.2f}–{high:.2f}] "
                  f"{verdict}; best-of {best[name] / best['sampler']:.2f}x)")  # fmt: skip
        return
    for p in args.players:  # compile
        run_game(p, "bernoulli", n_actions=9, horizon=50, replicates=2, metrics={"regret": {}})
    best: dict[tuple[str, int], dict[str, float]] = {}
    for _ in range(args.reps):  # interleaved: a slow spell of the machine hits every policy
        for p in args.players:
            for r, h in ((100, args.horizon), (1, args.horizon_r1)):
                res = profile(p, r, h)
                key = (p, r)
                if key not in best or res["total"] < best[key]["total"]:
                    best[key] = res
    header = f"{'player':<16}{'R':>4}" + "".join(f"{s:>12}" for s in [*STAGES, "total"])
    print(header)
    for (p, r), res in best.items():
        print(f"{p:<16}{r:>4}" + "".join(f"{res[s]:>12.1f}" for s in [*STAGES, "total"]))


if __name__ == "__main__":
    main()
