"""Bandit players against SMPyBandits, the simulator bandit researchers would use instead.

Both sides play K = 9 Bernoulli arms for T = 10⁴ rounds; the arena plays R = 100 replicates in
one batched game with the regret metric only, SMPyBandits its bare policy loop
(``choice`` → a Bernoulli draw → ``getReward``) in one process. The measure is time per
policy-step (one round of one replicate): the arena's game time / (T·R), SMPyBandits' loop time /
(T·runs). The two sides alternate (interleaved timing, so a slow spell of the machine hits both)
and each keeps its minimum over the repeats. SMPyBandits is never a dependency of the project:
the script creates a benchmark-only virtual environment for it (SMPyBandits 0.9.7 with
``scipy<1.14``, ``numpy<2``, ``pandas<2.3``, the versions it installs with on Python 3.11).

Run::

    .venv/bin/python benchmarks/bench_bandits.py          # about 3 minutes (+ the first install)
    .venv/bin/python benchmarks/bench_bandits.py --quick  # smaller runs, a smoke test

The peer environment lives in ``benchmarks/results/peer-venv`` (ignored by git); results go to
``benchmarks/results/bandits.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

import numpy as np
from peer_env import ensure_venv

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
PEER_VENV = RESULTS / "peer-venv"
PEER_REQUIREMENTS = ["SMPyBandits==0.9.7", "scipy<1.14", "numpy<2", "pandas<2.3"]

#: arena player → SMPyBandits policy (class name, constructor keywords)
PAIRS = {
    "ucb1": ("UCB", {}),
    "thompson": ("Thompson", {}),
    "exp3": ("Exp3", {"gamma": 0.1}),
    "tsallis_inf": ("TsallisInf", {}),
}
K = 9
REWARD_MEANS = np.linspace(0.1, 0.9, K)  # SMPyBandits plays rewards; the arena, losses 1 − reward

PEER_LOOP = r"""
import json, sys, time, warnings
warnings.filterwarnings("ignore")
import numpy as np
from SMPyBandits import Policies
policy, kwargs, means, horizon, runs = json.loads(sys.argv[1])
means = np.array(means)
rng = np.random.default_rng(0)
cls = getattr(Policies, policy)
best = float("inf")
total = 0.0
for run in range(runs):
    p = cls(len(means), **kwargs)
    p.startGame()
    start = time.perf_counter()
    for t in range(horizon):
        arm = p.choice()
        p.getReward(arm, float(rng.random() < means[arm]))
    total += time.perf_counter() - start
print(json.dumps({"seconds": total, "steps": horizon * runs}))
"""


def ensure_peer_venv() -> Path:
    """Create the benchmark-only environment with SMPyBandits once; return its Python."""
    return ensure_venv(PEER_VENV.name, PEER_REQUIREMENTS)


def peer_step_seconds(python: Path, policy: str, kwargs: dict, horizon: int, runs: int) -> float:
    """Seconds per policy-step of SMPyBandits' bare loop (one child process)."""
    args = json.dumps([policy, kwargs, REWARD_MEANS.tolist(), horizon, runs])
    out = subprocess.run(
        [str(python), "-c", PEER_LOOP, args], capture_output=True, text=True, check=True
    )
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return data["seconds"] / data["steps"]


def ours_step_seconds(player: str, horizon: int, replicates: int) -> float:
    """Seconds per policy-step of the arena's batched game (regret only)."""
    from arena.game import run_game

    started = time.perf_counter()
    run_game(
        player,
        "bernoulli",
        adversary_params={"means": (1.0 - REWARD_MEANS).tolist()},
        n_actions=K,
        horizon=horizon,
        replicates=replicates,
        metrics={"regret": {}},
    )
    return (time.perf_counter() - started) / (horizon * replicates)


def kernel_step_seconds(player: str, horizon: int, replicates: int) -> float:
    """Seconds per policy-step of the player's own kernel alone: ``play_block`` on pre-drawn
    losses and action uniforms, in chunks of the engine's size (``DEFAULT_CHUNK_ELEMENTS`` loss
    entries), so the policy's share of :func:`ours_step_seconds`; the rest is the game (every
    arm's Bernoulli loss, the action uniforms, the regret core, validation, logging)."""
    from arena.game import DEFAULT_CHUNK_ELEMENTS
    from arena.registry import load
    from arena.spec import GameSpec

    rng = np.random.default_rng(0)
    rounds = max(1, DEFAULT_CHUNK_ELEMENTS // (replicates * K))
    chunks = []
    for t0 in range(0, horizon, rounds):
        n = min(rounds, horizon - t0)
        losses = (rng.random((replicates, n, K)) < 1.0 - REWARD_MEANS).astype(np.float64)
        chunks.append((losses, rng.random((replicates, n))))
    spec = GameSpec("bandit", K, horizon, (0.0, 1.0), n_replicates=replicates)
    policy = load("player", player)()
    policy.reset(spec, [np.random.default_rng(r) for r in range(replicates)])
    started = time.perf_counter()
    for losses, uniforms in chunks:
        policy.play_block(losses, uniforms)
    return (time.perf_counter() - started) / (horizon * replicates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small runs (a smoke test)")
    parser.add_argument("--repeats", type=int, default=3)
    ns = parser.parse_args()
    horizon = 2_000 if ns.quick else 10_000
    replicates = 10 if ns.quick else 100
    peer_runs = 1 if ns.quick else 2
    python = ensure_peer_venv()
    for player in PAIRS:  # compile the kernels before timing
        ours_step_seconds(player, 50, 2)
    ours: dict[str, float] = {p: float("inf") for p in PAIRS}
    peer: dict[str, float] = {p: float("inf") for p in PAIRS}
    kernel: dict[str, float] = {p: float("inf") for p in PAIRS}
    for _ in range(ns.repeats):
        for player, (policy, kwargs) in PAIRS.items():  # alternate: ours, then the peer
            ours[player] = min(ours[player], ours_step_seconds(player, horizon, replicates))
            kernel[player] = min(kernel[player], kernel_step_seconds(player, horizon, replicates))
            step = peer_step_seconds(python, policy, kwargs, horizon, peer_runs)
            peer[player] = min(peer[player], step)
    rows = []
    print(f"K = {K}, T = {horizon}, arena R = {replicates}, SMPyBandits runs = {peer_runs}")
    print(
        f"{'player':<12} {'arena ns/step':>14} {'SMPyBandits ns/step':>20} {'speed-up':>9} "
        f"{'kernel ns/step':>15} {'game ns/step':>13}"
    )
    for player, (policy, _) in PAIRS.items():
        ratio = peer[player] / ours[player]
        game = max(ours[player] - kernel[player], 0.0)
        rows.append(
            {
                "player": player,
                "peer_policy": policy,
                "arena_ns_per_step": ours[player] * 1e9,
                "peer_ns_per_step": peer[player] * 1e9,
                "speedup": ratio,
                "kernel_ns_per_step": kernel[player] * 1e9,
                "game_ns_per_step": game * 1e9,
            }
        )
        print(
            f"{player:<12} {ours[player] * 1e9:>14.0f} {peer[player] * 1e9:>20.0f} {ratio:>8.0f}× "
            f"{kernel[player] * 1e9:>15.0f} {game * 1e9:>13.0f}"
        )
    ratio = ours["tsallis_inf"] / ours["exp3"]
    print(f"tsallis_inf / exp3 in the arena: {ratio:.2f}×")
    RESULTS.mkdir(parents=True, exist_ok=True)
    record = {
        "horizon": horizon,
        "replicates": replicates,
        "peer_runs": peer_runs,
        "repeats": ns.repeats,
        "rows": rows,
        "tsallis_over_exp3": ratio,
    }
    (RESULTS / "bandits.json").write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
