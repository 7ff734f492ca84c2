"""Per-example cost of ``son`` (sparse Oja and RP, dense Oja) against ``vw --OjaNewton``.

Issue 30, item 4: on the same files, with matched options, µs per example at d = 10⁴ and 10⁵
sparse (``sparse_stream``, about 50 non-zeros a row, rows of norm 1), m = 10 and 20, and dense
at d = 1000 (``sparse_stream`` with 20,000 draws per row: every coordinate non-zero, emitted
dense). Replicate 0 of seed 0, exported through ``arena.game.prepare_game`` (the examples
``run_game`` shows) and written in VW's text format.

Three timings, alternated over the repeats (best of k each, so a slow spell of the shared
machine hits all of them):

* **player**: the player's own cost, :meth:`SON.play_predictions` over the stream in blocks of
  1000 rounds (predictions only, ``w_t`` never formed; dense ``oja``: its kernel, which forms
  ``w_t`` anyway), one BLAS thread (:func:`arena.resources.blas_threads`);
* **game**: a whole ``run_game(..., metrics=["loss"])`` divided by T: the protocol's per-round
  ``w_t`` (O(md) for the sparse representation, O(d) to record) included; beside it the same
  game of ``ogd`` (O(nnz) arithmetic): the floor of the stream's generation and the protocol;
* **VW**: VW 9.11.9's own driver on the text file (``pyvw.Workspace("-d FILE ...")
  .run_parser()``: parsing and learning), per example as ``(s(T) − s(T/2))/(T/2)`` (its
  marginal cost: the workspace's start-up cancels; ``s(T/2)`` is VW on the file's first half,
  run right after the whole file), the median over the repeats, and as ``s(T)/T`` (fastest).
  VW's start-up grows with m (about 2 s at m = 20: it sets up the sketch over all 2¹⁸ weight
  slots) and varies by a second from run to run, so at m = 20 the marginal is noisy.

VW options (matched to ours as in :mod:`bench_vw_oja`, ``matched``): ``--OjaNewton --sketch_size m
--alpha 1 --learning_rate_cnt 1 --normalize false --random_init false --noconstant
--min_prediction=-1e30 --max_prediction=1e30``; ours ``son(sketch=oja, m, alpha=1, C=None,
sigma=0.25, eta=0)`` on the squared loss. VW has no random-projection sketch (its only sketched
Newton reduction is ``--OjaNewton``), so ``son(sketch=rp, sparse=True)`` is timed against the
same VW Oja run. Predictions: ``son``'s sparse Oja against VW's ``-p`` file, relative gap
``|p − p_VW|/max(1, |p|)`` (VW computes in float32).

Run::

    .venv/bin/python benchmarks/bench_son_vw_speed.py           # about 5 minutes
    .venv/bin/python benchmarks/bench_son_vw_speed.py --quick   # smoke test

Results go to ``benchmarks/results/son_vw_speed.json`` and ``son_vw_speed.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from peer_env import RESULTS
from vw_peer import WORK, ensure_vw, run_vw

CASES = [  # (label, d, nnz draws, representation, m, T player/VW, T game)
    ("sparse", 10**4, 50, "sparse", 10, 10_000, 2_000),
    ("sparse", 10**4, 50, "sparse", 20, 10_000, 2_000),
    ("sparse", 10**5, 50, "sparse", 10, 10_000, 500),
    ("sparse", 10**5, 50, "sparse", 20, 10_000, 500),
    ("dense", 1000, 20_000, "dense", 10, 5_000, 500),
]


def ours(sketch: str, m: int, sparse: bool) -> dict:
    """``son``'s parameters matched to VW's (see the module docstring)."""
    return {"sketch": sketch, "m": m, "alpha": 1.0, "C": None, "sigma": 0.25, "eta": 0.0,
            "sparse": sparse}  # fmt: skip


def stream_params(nnz: int, representation: str) -> dict:
    return {"nnz": nnz, "representation": representation, "loss": "squared"}


def export(d: int, nnz: int, representation: str, horizon: int):
    """Return ``(game spec, x (1, T, d) as SparseRows or array, y (1, T))`` of replicate 0."""
    from arena.game import prepare_game

    game = prepare_game(
        "ogd",
        "sparse_stream",
        player_params={"eta": 1.0},
        adversary_params=stream_params(nnz, representation),
        n_actions=d,
        horizon=horizon,
        replicates=1,
        seed=0,
        metrics={"loss": {}},
    )
    data = game.adversary.data_block(1, horizon)
    return game.spec, data.x, np.asarray(data.y, dtype=np.float64)


def write_vw(x, y: np.ndarray, path) -> None:
    """VW text, feature j + 1 for coordinate j (as :func:`vw_peer.vw_line`), from CSR or dense."""
    from arena.oco.losses import SparseRows, is_sparse

    rows = x if is_sparse(x) else SparseRows.from_dense(np.asarray(x))
    indptr, indices, values = rows.indptr, rows.indices, rows.values
    with open(path, "w") as out:
        for t in range(y.shape[1]):
            lo, hi = indptr[t], indptr[t + 1]
            feats = " ".join(
                f"{i + 1}:{v:.17g}" for i, v in zip(indices[lo:hi], values[lo:hi], strict=True)
            )
            out.write(f"{y[0, t]:g} | {feats}\n")


def player_seconds(params: dict, spec, x, y: np.ndarray, block: int = 1000):
    """Seconds of ``play_predictions`` over the stream in blocks; returns (seconds, predictions)."""
    from arena.oco.losses import RoundData, is_sparse
    from arena.players.son import SON
    from arena.resources import blas_threads

    horizon = y.shape[1]
    chunks = []
    for lo in range(0, horizon, block):
        hi = min(horizon, lo + block)
        xs = x.rounds(lo, hi) if is_sparse(x) else np.ascontiguousarray(x[:, lo:hi])
        chunks.append(RoundData(x=xs, y=np.ascontiguousarray(y[:, lo:hi])))
    player = SON(**params)
    player.reset(spec, [np.random.default_rng(0)])
    with blas_threads():
        started = time.perf_counter()
        preds = [player.play_predictions(chunk, spec) for chunk in chunks]
        seconds = time.perf_counter() - started
    return seconds, np.concatenate(preds, axis=1)[0]


def game_seconds(
    params: dict, d: int, nnz: int, representation: str, horizon: int, player: str = "son"
) -> float:
    """Seconds of a whole ``run_game`` of ``player`` on the stream (``ogd``: the floor)."""
    from arena.game import run_game

    started = time.perf_counter()
    run_game(
        player,
        "sparse_stream",
        player_params=params,
        n_actions=d,
        horizon=horizon,
        adversary_params=stream_params(nnz, representation),
        metrics=["loss"],
        seed=0,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    ns = parser.parse_args()
    python = ensure_vw()
    WORK.mkdir(parents=True, exist_ok=True)
    rows = []
    print("load average at start:", os.getloadavg())
    for label, d, nnz, representation, m, horizon, game_t in CASES:
        if ns.quick:
            horizon, game_t = 300, 100
        spec, x, y = export(d, nnz, representation, horizon)
        path = WORK / f"son-speed-{d}-{representation}.vw"
        head = WORK / f"son-speed-{d}-{representation}-head.vw"
        write_vw(x, y, path)
        head.write_text("".join(path.read_text().splitlines(True)[: horizon // 2]))
        vw_opts = (
            f"--OjaNewton --sketch_size {m} --alpha 1 --learning_rate_cnt 1 --normalize false "
            "--random_init false --noconstant --min_prediction=-1e30 --max_prediction=1e30"
        )
        contenders = [("oja", True), ("rp", True)] + ([("oja", False)] if label == "dense" else [])
        for sketch, sparse in contenders:  # compile / warm up, keep predictions
            player_seconds(ours(sketch, m, sparse), spec, x, y, block=100)
            game_seconds(ours(sketch, m, sparse), d, nnz, representation, 20)
        best = {}
        preds = {}
        marginal = []  # VW's (s(T) − s(T/2))/(T/2), one per repeat
        vw_pred = run_vw(python, path, vw_opts)["predictions"]
        for _ in range(ns.repeats):
            for sketch, sparse in contenders:
                key = (sketch, sparse)
                sec, p = player_seconds(ours(sketch, m, sparse), spec, x, y)
                preds[key] = p
                best[("player", key)] = min(best.get(("player", key), np.inf), sec / horizon)
                sec = game_seconds(ours(sketch, m, sparse), d, nnz, representation, game_t)
                best[("game", key)] = min(best.get(("game", key), np.inf), sec / game_t)
            sec = game_seconds({"eta": 0.5}, d, nnz, representation, game_t, player="ogd")
            best["floor"] = min(best.get("floor", np.inf), sec / game_t)
            full = run_vw(python, path, vw_opts)["seconds"]
            start = run_vw(python, head, vw_opts)["seconds"]
            marginal.append((full - start) / (horizon - horizon // 2))
            best["vw_total"] = min(best.get("vw_total", np.inf), full / horizon)
        best["vw"] = float(np.median(marginal))
        for sketch, sparse in contenders:
            key = (sketch, sparse)
            gap = np.abs(preds[key] - vw_pred) / np.maximum(1.0, np.abs(preds[key]))
            row = {
                "stream": label, "d": d, "nnz_per_row": float(np.mean(np.diff(
                    x.indptr))) if hasattr(x, "indptr") else float(d),
                "m": m, "son": f"{sketch}{' sparse' if sparse else ' dense'}",
                "T": horizon, "T_game": game_t,
                "player_us": best[("player", key)] * 1e6, "game_us": best[("game", key)] * 1e6,
                "game_floor_ogd_us": best["floor"] * 1e6,
                "vw_us": best["vw"] * 1e6, "vw_total_us": best["vw_total"] * 1e6,
                "vw_marginals_us": [v * 1e6 for v in marginal],
                "player_over_vw": best[("player", key)] / best["vw"],
                "max_rel_gap_vs_vw": float(gap.max()) if sketch == "oja" else None,
                "median_rel_gap_vs_vw": float(np.median(gap)) if sketch == "oja" else None,
                "sign_disagreement": float(np.mean(np.sign(preds[key]) != np.sign(vw_pred)))
                if sketch == "oja" else None,
            }  # fmt: skip
            rows.append(row)
            print(json.dumps(row), flush=True)
    load = os.getloadavg()
    table = markdown(rows, load)
    print(table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "son_vw_speed.json").write_text(json.dumps({"rows": rows, "load": load}, indent=2))
    (RESULTS / "son_vw_speed.md").write_text(table)


def markdown(rows: list[dict], load) -> str:
    lines = [
        f"load average at the end: {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}",
        "",
        "| stream | d | nnz/row | m | son | player µs/ex | game µs/ex (ogd's) | VW µs/ex (s(T)/T) "
        "| player / VW | max rel. gap to VW | sign disagreement |",
        "| :--- | ---: | ---: | ---: | :--- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        gap = "—" if r["max_rel_gap_vs_vw"] is None else f"{r['max_rel_gap_vs_vw']:.1e}"
        sd = "—" if r["sign_disagreement"] is None else f"{r['sign_disagreement']:.4f}"
        lines.append(
            f"| {r['stream']} | {r['d']:,} | {r['nnz_per_row']:.1f} | {r['m']} | {r['son']} "
            f"| {r['player_us']:.1f} | {r['game_us']:.0f} ({r['game_floor_ogd_us']:.0f}) "
            f"| {r['vw_us']:.1f} "
            f"({r['vw_total_us']:.1f}) | {r['player_over_vw']:.2f}× | {gap} | {sd} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
