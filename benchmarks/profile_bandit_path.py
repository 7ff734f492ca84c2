"""Where a bandit game's time goes: ns per policy-step of each stage of the engine path.

Plays ``run_game(player, "bernoulli", n_actions=9, horizon=T, replicates=R,
metrics={"regret": {}})`` with the stages of :class:`arena.bandit.game.BanditStepper` wrapped in
timers: the adversary's ``losses_block`` (with its validation), the action uniforms, the player's
``play_block`` kernel, the check of ``p_t``, the core kernel (``_core_advance``) and the rest
(the driver's Python per chunk, the metric, row assembly: the game's time minus the stages).
Every number is nanoseconds per policy-step (one round of one replicate); the timers add a few
microseconds per chunk, so the total is a little above an untimed game's.

Run::

    .venv/bin/python benchmarks/profile_bandit_path.py                 # every bandit policy
    .venv/bin/python benchmarks/profile_bandit_path.py ucb1 thompson --reps 5
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import arena.experts.game as eg
from arena.game import run_game

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
STAGES = ["losses", "uniforms", "play_block", "check_probs", "core", "rest"]


def _timed(name, fn, acc):
    def wrapper(*args, **kwargs):
        start = time.perf_counter_ns()
        try:
            return fn(*args, **kwargs)
        finally:
            acc[name] += time.perf_counter_ns() - start

    return wrapper


class _TimedRng:
    """A generator proxy that times ``random(out=...)`` (the action uniforms)."""

    def __init__(self, rng, acc):
        self._rng, self._acc = rng, acc

    def random(self, *args, **kwargs):
        start = time.perf_counter_ns()
        try:
            return self._rng.random(*args, **kwargs)
        finally:
            self._acc["uniforms"] += time.perf_counter_ns() - start

    def __getattr__(self, name):
        return getattr(self._rng, name)


def profile(player: str, replicates: int, horizon: int) -> dict[str, float]:
    """One timed game: ns per policy-step of each stage, and of the whole game."""
    acc: dict[str, int] = defaultdict(int)
    saved = {
        name: getattr(eg, name) for name in ("_oblivious_losses", "_check_probs", "_core_advance")
    }
    saved_start = eg.ExpertsStepper.__init__

    def init(self, game):
        saved_start(self, game)
        self.action_rngs = [_TimedRng(g, acc) for g in self.action_rngs]
        play = self.player.play_block
        self.player.play_block = _timed("play_block", play, acc)

    eg._oblivious_losses = _timed("losses", saved["_oblivious_losses"], acc)
    eg._check_probs = _timed("check_probs", saved["_check_probs"], acc)
    eg._core_advance = _timed("core", saved["_core_advance"], acc)
    eg.ExpertsStepper.__init__ = init
    try:
        start = time.perf_counter_ns()
        run_game(
            player,
            "bernoulli",
            n_actions=9,
            horizon=horizon,
            replicates=replicates,
            metrics={"regret": {}},
        )
        total = time.perf_counter_ns() - start
    finally:
        for name, fn in saved.items():
            setattr(eg, name, fn)
        eg.ExpertsStepper.__init__ = saved_start
    steps = replicates * horizon
    out = {k: acc[k] / steps for k in STAGES[:-1]}
    out["rest"] = total / steps - sum(out.values())
    out["total"] = total / steps
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("players", nargs="*", default=POLICIES)
    parser.add_argument("--reps", type=int, default=3, help="repeats; the minimum is kept")
    parser.add_argument("--horizon", type=int, default=10_000)
    parser.add_argument("--horizon-r1", type=int, default=100_000)
    args = parser.parse_args()
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
