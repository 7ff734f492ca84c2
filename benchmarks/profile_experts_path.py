"""Where an experts game's time goes: CPU ns per replicate-round of each stage, and page faults.

Plays ``run_game(player, "bernoulli", n_actions=10, horizon=T, replicates=64,
metrics={"regret": {}}, n_jobs=1)`` with the stages of :class:`arena.experts.game.ExpertsStepper`'s
oblivious chunk wrapped in timers, as :mod:`profile_bandit_path` does for bandits: the adversary's
``losses_block`` with its validation (``losses``; of which ``draws`` is the fused uniform draw and
Bernoulli threshold, ``_bernoulli_draw``, and ``check_losses`` the engine's range check), the
action uniforms (``_fill_uniforms``), the player's ``play_block``, the kernel that checks ``p_t``,
draws ``I_t`` and advances the core (``_checked_advance``) and the rest (the driver's Python per
chunk, the metric, row assembly: the game's time minus the stages). Times are the thread's CPU
time (``time.thread_time_ns``), which a busy machine's other processes inflate far less than wall
time; kernel time spent on page faults counts. The last columns are the game's minor page faults
and system CPU seconds (``getrusage``).

Run::

    .venv/bin/python benchmarks/profile_experts_path.py                       # hedge, rm, rm_plus
    .venv/bin/python benchmarks/profile_experts_path.py hedge --chunk-elements 65536 262144
"""

from __future__ import annotations

import argparse
import math
import resource
import time
from collections import defaultdict

import arena.adversaries.stochastic as stochastic
import arena.experts.game as eg
from arena.game import run_game

STAGES = ["losses", "draws", "check_losses", "uniforms", "play_block", "check_and_core"]


def _timed(name, fn, acc):
    def wrapper(*args, **kwargs):
        start = time.thread_time_ns()
        try:
            return fn(*args, **kwargs)
        finally:
            acc[name] += time.thread_time_ns() - start

    return wrapper


def _player(key: str, horizon: int) -> tuple[str, dict]:
    if key == "hedge":
        return "hedge", {"eta": math.sqrt(8.0 * math.log(10) / horizon)}
    return "regret_matching", {"variant": key}


def profile(key: str, horizon: int, replicates: int, chunk_elements: int | None) -> dict:
    """One timed game: CPU ns per replicate-round of each stage, the game's faults and sys time."""
    acc: dict[str, int] = defaultdict(int)
    names = ("_oblivious_losses", "_fill_uniforms", "_checked_advance", "_first_bad_losses")
    saved = {name: getattr(eg, name) for name in names}
    saved_draw = stochastic._bernoulli_draw
    saved_init = eg.ExpertsStepper.__init__

    def init(self, game):
        saved_init(self, game)
        self.player.play_block = _timed("play_block", self.player.play_block, acc)

    eg._oblivious_losses = _timed("losses", saved["_oblivious_losses"], acc)
    eg._fill_uniforms = _timed("uniforms", saved["_fill_uniforms"], acc)
    eg._checked_advance = _timed("check_and_core", saved["_checked_advance"], acc)
    eg._first_bad_losses = _timed("check_losses", saved["_first_bad_losses"], acc)
    stochastic._bernoulli_draw = _timed("draws", saved_draw, acc)
    eg.ExpertsStepper.__init__ = init
    name, params = _player(key, horizon)
    extra = {} if chunk_elements is None else {"chunk_elements": chunk_elements}
    try:
        before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.thread_time_ns()
        run_game(
            name, "bernoulli", n_actions=10, horizon=horizon, replicates=replicates,
            player_params=params, metrics={"regret": {}}, n_jobs=1, **extra,
        )  # fmt: skip
        total = time.thread_time_ns() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
    finally:
        for fn_name, fn in saved.items():
            setattr(eg, fn_name, fn)
        stochastic._bernoulli_draw = saved_draw
        eg.ExpertsStepper.__init__ = saved_init
    steps = replicates * horizon
    out = {k: acc[k] / steps for k in STAGES}
    top = ("losses", "uniforms", "play_block", "check_and_core")
    out["rest"] = total / steps - sum(out[k] for k in top)
    out["total"] = total / steps
    out["faults"] = after.ru_minflt - before.ru_minflt
    out["sys_s"] = after.ru_stime - before.ru_stime
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("players", nargs="*", default=["hedge", "rm", "rm_plus"])
    parser.add_argument("--reps", type=int, default=3, help="repeats; the fastest is kept")
    parser.add_argument("--horizon", type=int, default=30_000)
    parser.add_argument("--replicates", type=int, default=64)
    parser.add_argument("--chunk-elements", type=int, nargs="*", default=[None])
    args = parser.parse_args()
    cols = [*STAGES, "rest", "total"]
    print("| player | chunk elements | " + " | ".join(cols) + " | page faults | sys s |")
    print("|---|---:|" + "---:|" * (len(cols) + 2))
    for key in args.players:
        for chunk in args.chunk_elements:
            profile(key, 50, args.replicates, chunk)  # compile / cache load
            best = min(
                (profile(key, args.horizon, args.replicates, chunk) for _ in range(args.reps)),
                key=lambda d: d["total"],
            )
            cells = " | ".join(f"{best[c]:.1f}" for c in cols)
            label = "default" if chunk is None else f"{chunk:,}"
            print(f"| {key} | {label} | {cells} | {best['faults']:,} | {best['sys_s']:.3f} |")


if __name__ == "__main__":
    main()
