"""Driver throughput of this checkout against another git revision, measured in one run.

For refactors that must not cost speed (issue 13 asks the one-driver redesign to stay within 5%
of the previous main). The baseline revision is checked out into a temporary git worktree; each
measurement runs in a fresh child process whose ``sys.path`` starts with one tree or the other
(the installed entry points name modules, so the registry then loads that tree's players and
adversaries). Children alternate between the two trees (A B A B …) so that drifts of the
machine's speed hit both alike, and each tree's figure is the minimum over the repetitions (the
least disturbed run). Each child first plays every game once to compile or load the numba
kernels, then times them.

Usage::

    .venv/bin/python benchmarks/bench_compare.py --baseline 0e52b2e          # ~3 min
    .venv/bin/python benchmarks/bench_compare.py --baseline HEAD~3 --repeats 3 --quick

Prints a markdown table (seconds per game, ratio this/baseline) and writes it to
``benchmarks/results/compare.md`` (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "compare.md"

GAMES = [
    # (label, player, adversary, n_actions, horizon, replicates, metrics)
    ("hedge/bernoulli N=10 R=64, default metrics", "hedge", "bernoulli", 10, 80_000, 64, None),
    ("hedge/bernoulli N=1000 R=64, default metrics", "hedge", "bernoulli", 1000, 1_600, 64, None),
    ("hedge/bernoulli N=10 R=1, regret", "hedge", "bernoulli", 10, 4_000_000, 1, "regret"),
    ("hedge/bernoulli N=1000 R=64, regret", "hedge", "bernoulli", 1000, 3_000, 64, "regret"),
    ("hedge/greedy N=10 R=64 (adaptive), regret", "hedge", "greedy", 10, 6_000, 64, "regret"),
    ("ogd/random_linear d=10 R=64, OCO defaults", "ogd", "random_linear", 10, 60_000, 64, None),
]
QUICK_SCALE = 0.05


def _child(tree: str, scale: float) -> None:
    """Time every game with the driver of ``tree``; print ``{label: seconds}`` as JSON."""
    sys.path.insert(0, tree)
    import arena
    import arena.players.hedge
    from arena import run_game

    for module in (arena, arena.players.hedge):  # the tree under test, not the installed checkout
        if not Path(module.__file__).resolve().is_relative_to(Path(tree).resolve()):
            raise RuntimeError(f"{module.__name__} loaded from {module.__file__}, not {tree}")

    def play(game, horizon):
        _, player, adversary, n_act, _, reps, metrics = game
        run_game(
            player,
            adversary,
            n_actions=n_act,
            horizon=horizon,
            replicates=reps,
            seed=1,
            metrics={"regret": {}} if metrics == "regret" else None,
        )

    for game in GAMES:  # compile / load the kernels
        play(game, 50)
    out = {}
    for game in GAMES:
        horizon = max(50, int(game[4] * scale))
        start = time.perf_counter()
        play(game, horizon)
        out[game[0]] = time.perf_counter() - start
    print(json.dumps(out))


def _run_child(tree: Path, scale: float) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(tree), "--scale", str(scale)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="git revision to compare against")
    parser.add_argument("--repeats", type=int, default=5, help="children per tree")
    parser.add_argument("--quick", action="store_true", help="short games (a smoke test)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--scale", type=float, default=1.0, help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.child:
        _child(ns.child, ns.scale)
        return
    if not ns.baseline:
        parser.error("--baseline is required")
    scale = QUICK_SCALE if ns.quick else 1.0
    rev = subprocess.run(
        ["git", "rev-parse", "--short", ns.baseline],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.strip()
    here = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "baseline"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "-q", str(base), rev], check=True, cwd=ROOT
        )
        try:
            times: dict[str, list[dict[str, float]]] = {"this": [], "baseline": []}
            for i in range(ns.repeats):
                for which, tree in (("baseline", base), ("this", ROOT)):
                    times[which].append(_run_child(tree, scale))
                print(f"repeat {i + 1}/{ns.repeats} done", file=sys.stderr)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT)
    lines = [
        f"Driver time per game, this checkout ({here}{', dirty' if _dirty() else ''}) against "
        f"{rev}: minimum over {ns.repeats} alternating child processes per tree"
        f"{', quick sizes' if ns.quick else ''}; {os.cpu_count()} cores.",
        "",
        "| game | baseline s | this s | this / baseline |",
        "|---|---:|---:|---:|",
    ]
    for game in GAMES:
        label = game[0]
        b = min(t[label] for t in times["baseline"])
        t = min(t[label] for t in times["this"])
        lines.append(f"| {label} | {b:.3f} | {t:.3f} | {t / b:.3f} |")
    text = "\n".join(lines)
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text + "\n")


def _dirty() -> bool:
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return bool(status.stdout.strip())


if __name__ == "__main__":
    main()
