"""Throughput of every registered experts player relative to Hedge, in the batched fast path.

Plays each player against ``bernoulli`` (default means) with ``metrics={"regret": {}}`` (so the
player's own kernel dominates), R = 64 replicates, N ∈ {10, 1000}, after a warm-up call that
compiles or loads the kernels. Each player is timed interleaved with Hedge (``eta="tuned"``):
up to 5 rounds of one Hedge call then one call of the player, best wall time of each, so that a
drift of the (shared, virtualized) machine's speed hits both alike. Prints a Markdown table of
replicate-rounds per second and the ratio to Hedge's rate measured in the same rounds, and writes
it to ``benchmarks/results/players.md``.

Run: ``.venv/bin/python benchmarks/bench_players.py`` (about 5 minutes on 2 cores).
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench_engine import best_times

from arena import registry, run_game

HORIZON = {10: 20_000, 1000: 500}
REPLICATES = 64
VARIANTS = {
    "normal_hedge_dt": [{}, {"state": "realized"}],
    "ada_normal_hedge_tv": [{"starts": "geometric"}, {}],
    "mixing_past_posteriors": [{}],
}
SLOW_EXACT = {("ada_normal_hedge_tv", ""): 0.1}
"""Exact O(N·t) players run at a tenth of the horizon (their rate still falls with T)."""


def relative_rate(
    player: str, params: dict, n_act: int, horizon: int
) -> tuple[float, float] | None:
    """Return the player's replicate-rounds/s and its ratio to Hedge's, timed interleaved."""
    kwargs = dict(n_actions=n_act, replicates=REPLICATES, metrics={"regret": {}})
    try:
        run_game(player, "bernoulli", horizon=min(horizon, 200), player_params=params, **kwargs)
    except Exception as exc:  # a player that cannot play this game (e.g. two experts only)
        print(f"  skip {player} {params} N={n_act}: {exc}", file=sys.stderr)
        return None
    run_game("hedge", "bernoulli", horizon=200, **kwargs)
    (hedge_time, player_time), _ = best_times(
        [
            lambda: run_game("hedge", "bernoulli", horizon=HORIZON[n_act], **kwargs),
            lambda: run_game(player, "bernoulli", horizon=horizon, player_params=params, **kwargs),
        ],
        repeats=5,
        budget=30.0,
    )
    player_rate = REPLICATES * horizon / player_time
    return player_rate, player_rate / (REPLICATES * HORIZON[n_act] / hedge_time)


def main() -> None:
    rows = []
    for n_act in (10, 1000):
        for name in registry.available("player"):
            for params in VARIANTS.get(name, [{}]):
                label = name + "".join(f" {k}={v}" for k, v in params.items())
                scale = SLOW_EXACT.get((name, "".join(map(str, params.values()))), 1.0)
                horizon = max(200, int(HORIZON[n_act] * scale))
                measured = relative_rate(name, params, n_act, horizon)
                if measured is not None:
                    r, ratio = measured
                    rows.append((n_act, label, horizon, r, ratio))
                    print(f"N={n_act:5d} {label:40s} T={horizon:7d} {r:12,.0f} rr/s  {ratio:5.2f}x")
    lines = [
        "| N | player | T | replicate-rounds/s | vs hedge |",
        "|---:|:---|---:|---:|---:|",
    ]
    lines += [f"| {n} | {p} | {t:,} | {r:,.0f} | {x:.2f} |" for n, p, t, r, x in rows]
    out = Path(__file__).resolve().parent / "results" / "players.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
