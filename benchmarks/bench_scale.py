"""Real data at scale: a generated svmlight file of 10⁶ examples × 10⁵ features streamed through
``ogd`` and sparse ``son`` (Oja sketch, m = 10), from the command line and from ``play``.

The file (``benchmarks/results/scale_<n>x<d>.svm``, git-ignored) is written once, 10⁵ rows at a
time, by scikit-learn's ``dump_svmlight_file``: each row has 50 column draws uniform over d
(duplicates merged, so about 50 non-zeros), standard normal values scaled to norm 1 and rounded
to 4 decimals, and the label ``sign⟨u, x⟩`` of a planted unit vector u, flipped with
probability 0.05. Each measurement is a fresh process (``os.wait4`` gives its own peak resident
memory): the CLI run is ``arena run`` with ``adversary=dataset_stream adversary.dataset=file``,
the Python run the same game through ``run_game`` (what ``play`` returns the rows of), both with
one replicate, ``standardize=false`` and the metrics ``loss`` and ``mistakes``. Throughput is
rounds / the game's wall time (``GameRun.wall_time``, the manifest's ``wall_time_s``: the
game's preparation and the rounds, after the file was read); the wall column is the whole
process (start-up, reading the file, writing results); the peak memory is the whole
process's, the file's CSR copy (≈ 0.6 GB at 5·10⁷ non-zeros) included. Run::

    .venv/bin/python benchmarks/bench_scale.py                  # T = 10⁵ and 10⁶ (long)
    .venv/bin/python benchmarks/bench_scale.py --horizons 100000 200000
    .venv/bin/python benchmarks/bench_scale.py --quick          # 2·10⁴ × 10⁴, a smoke test
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PLAYERS = {
    "ogd": {"eta": 0.5},
    "son": {"sketch": "oja", "m": 10, "sparse": True, "C": None, "alpha": 1.0, "sigma": 0.25,
            "eta": 0.0},
}  # fmt: skip
"""The players streamed and their parameters: ogd's step η/√t; son's fastest sparse
configuration, sparse Oja with m = 10 and no projection (``C=None``: it plays through
predictions, so no round costs O(d)), with α, σ and η as matched to VW's ``--OjaNewton`` in
``bench_son_vw_speed.py`` (η = 0: ``eta`` has no default without C)."""


def generate(path: Path, n: int, d: int, nnz: int = 50, seed: int = 0, block: int = 100_000):
    """Write ``n`` examples × ``d`` features to ``path`` in svmlight format, ``block`` rows at a
    time (memory O(block·nnz)); return the seconds taken.

    Examples
    --------
    >>> import tempfile
    >>> from arena.data.files import read_examples
    >>> p = Path(tempfile.mkdtemp()) / "s.svm"
    >>> _ = generate(p, 30, 1000, nnz=5)
    >>> ex = read_examples(str(p))
    >>> ex.X.shape[0], ex.X.shape[1] <= 1000, 0 < ex.X.nnz <= 150
    (30, True, True)
    """
    import scipy.sparse as sp
    from sklearn.datasets import dump_svmlight_file

    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    part = path.with_name(path.name + ".part")
    with open(part, "wb") as f:
        for lo in range(0, n, block):
            m = min(block, n - lo)
            cols = rng.integers(0, d, size=(m, nnz))
            vals = rng.standard_normal((m, nnz))
            rows = np.repeat(np.arange(m), nnz)
            X = sp.csr_matrix((vals.ravel(), (rows, cols.ravel())), shape=(m, d))
            X.sum_duplicates()
            norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
            X = sp.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ X
            X.data = np.round(X.data, 4)
            y = np.where(X @ u >= 0, 1.0, -1.0)
            y = np.where(rng.random(m) < 0.05, -y, y)
            dump_svmlight_file(X, y, f, zero_based=False)
    part.replace(path)
    return time.perf_counter() - start


def _child_play(path: str, player: str, params: dict, horizon: int) -> None:
    """In a fresh process: read the file and compute what the game's preparation reads of it
    (the examples' digest for the game key, the gradient bound: cached), then play the game with
    ``run_game``; print those seconds and the game's own wall time (``GameRun.wall_time``), as
    the command line computes them before its clock starts too."""
    from arena.adversaries.dataset_stream import DatasetStream
    from arena.game import run_game

    start = time.perf_counter()
    adv = DatasetStream("file", path=path, standardize=False)
    adv.resolve_dim(None)  # reads the file (cached for the game)
    adv.data_identity()  # the digest of the examples (cached with them)
    adv.gradient_bound()
    read = time.perf_counter() - start
    run = run_game(
        player,
        adv,
        player_params=params,
        horizon=horizon,
        replicates=1,
        seed=0,
        metrics={"loss": {}, "mistakes": {}},
    )
    rows = run.rows
    last = rows[rows.t == rows.t.max()]
    mistakes = float(last[last.metric == "mistakes"].value.iloc[0])
    print(json.dumps({"read_s": read, "game_s": run.wall_time, "error_rate": mistakes / horizon}))


def _measure(cmd: list[str], env: dict | None = None) -> tuple[float, float, str]:
    """Run ``cmd`` and return its wall seconds, its own peak resident memory (GB) and stdout."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{err.decode()[-3000:]}")
    return wall, usage.ru_maxrss / 2**20, out.decode()  # ru_maxrss is in KiB on Linux


def run_play(path: Path, player: str, horizon: int) -> dict:
    """Measure the ``play`` run of one player over ``horizon`` rounds in a fresh process."""
    code = (
        "import json, sys; from benchmarks.bench_scale import _child_play; "
        "_child_play(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4]))"
    )
    params = json.dumps(PLAYERS[player])
    cmd = [sys.executable, "-c", code, str(path), player, params, str(horizon)]
    wall, rss, out = _measure(cmd, env={**os.environ, "PYTHONPATH": str(ROOT)})
    info = json.loads(out.strip().splitlines()[-1])
    return {"wall_s": wall, "rss_gb": rss, **info}


def run_cli(path: Path, player: str, horizon: int, out: Path) -> dict:
    """Measure ``arena run`` of one player over ``horizon`` rounds (``metrics=boosting_protocol``
    is the preset of ``loss`` and ``mistakes``; the others it names skip this game)."""
    import shutil

    shutil.rmtree(out, ignore_errors=True)
    arena = str(Path(sys.executable).with_name("arena"))
    args = [
        f"player.{k}={'null' if v is None else str(v).lower() if isinstance(v, bool) else v}"
        for k, v in PLAYERS[player].items()
    ]
    cmd = [
        arena, "run", f"player={player}", *args, "adversary=dataset_stream",
        "adversary.dataset=file", f"adversary.path={path}", "adversary.standardize=false",
        f"horizon={horizon}", "replicates=1", "metrics=boosting_protocol",
        f"hydra.run.dir={out}",
    ]  # fmt: skip
    wall, rss, _ = _measure(cmd)
    game = json.loads((out / "manifest.json").read_text())["wall_time_s"]
    return {"wall_s": wall, "game_s": game, "rss_gb": rss, "command": " ".join(cmd[1:])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10**6)
    parser.add_argument("--features", type=int, default=10**5)
    parser.add_argument("--horizons", type=int, nargs="+", default=[10**5, 10**6])
    parser.add_argument("--players", nargs="+", default=list(PLAYERS))
    parser.add_argument("--no-cli", action="store_true", help="measure play only")
    parser.add_argument("--cli-horizons", type=int, nargs="+", help="CLI runs at these T only")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.examples, args.features, args.horizons = 20_000, 10_000, [5_000, 20_000]
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"scale_{args.examples}x{args.features}.svm"
    if not path.exists():
        secs = generate(path, args.examples, args.features)
        print(f"wrote {path} ({path.stat().st_size / 1e9:.2f} GB) in {secs:.0f} s", flush=True)
    print(
        "| player | from | T | wall s | read s | game s | examples/s (game) | peak RSS GB "
        "| error rate |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    command = ""
    for player in args.players:
        for horizon in args.horizons:
            p = run_play(path, player, horizon)
            print(
                f"| {player} | play | {horizon} | {p['wall_s']:.1f} | {p['read_s']:.1f} | "
                f"{p['game_s']:.1f} | {horizon / p['game_s']:,.0f} | {p['rss_gb']:.2f} | "
                f"{p['error_rate']:.4f} |",
                flush=True,
            )
            if args.no_cli or (args.cli_horizons and horizon not in args.cli_horizons):
                continue
            c = run_cli(path, player, horizon, RESULTS / f"scale_cli_{player}_{horizon}")
            command = c["command"]
            print(
                f"| {player} | CLI | {horizon} | {c['wall_s']:.1f} | | {c['game_s']:.1f} | "
                f"{horizon / c['game_s']:,.0f} | {c['rss_gb']:.2f} | |",
                flush=True,
            )
    if command:
        print(f"\nlast CLI command: arena {command}")


if __name__ == "__main__":
    main()
