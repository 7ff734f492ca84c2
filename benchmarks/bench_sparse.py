"""Per-round time of the sparse-aware OCO players, sparse rows against the same rows dense.

For d ∈ {10⁴, 10⁵}, about 50 non-zeros a row (``sparse_stream``, rows of norm 1), R = 1:

* **player**: ``play_block`` alone on pre-generated blocks of the driver's chunk size (the
  player's arithmetic, with the one O(d) write of ``w_t`` a round that the protocol records,
  measured alone as the floor), best of 3;
* **game**: ``run_game(..., metrics=["loss"])`` divided by T (the stream, the checks, the
  losses and the metric included), best of 2; for a player that plays sparse games through
  predictions (``ogd``: no ``w_t`` written a round, the module docstring of
  :mod:`arena.oco.components`) also through points, its ``plays_predictions`` turned off: the
  game as it was played before, O(d) a round.

Dense rows are the sparse ones densified (``representation="dense"``: the same examples).
``--boosting`` times boosting games instead: ``online_bbm`` (N = 10) over ``linear`` and
``normalized_linear`` lanes and over ``stump`` on ``sparse_stream`` at d ∈ {10³, 10⁵},
T = 5,000, R = 1, sparse rows (read in O(nnz) per lane and round: by the chunk kernel, and by
the stumps' sparse path in the per-round loop) against the same rows dense (``--weak stump``:
that learner only). ``--fd`` times Sparse FD-SON (``son`` with ``sketch`` ``fd`` / ``fd_epoch``,
``sparse=True``, m = 10, C = 1, α = 8) per example against dense FD-SON on the same rows, at
d ∈ {10⁴, 10⁵} with 10 non-zeros a row: the sparse player's ``play_predictions`` (its O(m·s)
path, no ``w_t`` formed) against the dense player's ``play_block`` (its numba kernel), plus the
share of decompositions that re-materialized. Run::

    .venv/bin/python benchmarks/bench_sparse.py              # about a minute
    .venv/bin/python benchmarks/bench_sparse.py --boosting   # about a minute
    .venv/bin/python benchmarks/bench_sparse.py --fd         # about two minutes
    .venv/bin/python benchmarks/bench_sparse.py --quick      # smoke test, numbers not meaningful
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from arena.adversaries.sparse_stream import SparseStream
from arena.game import DEFAULT_CHUNK_ELEMENTS, run_game
from arena.oco.domains import Domain
from arena.oco.game import MIN_CHUNK_ROUNDS
from arena.spec import GameSpec

PLAYERS = [
    ("ogd", {"eta": 0.5}, {}),
    ("ogd", {"eta": 0.5}, {"domain": "ball", "radius": 10.0}),
    ("adagrad", {"eta": 0.5}, {}),
    ("perceptron", {}, {}),
    ("passive_aggressive", {}, {}),
]


def _label(name, pp, ap):
    extra = ",".join(f"{k}={v}" for k, v in ap.items() if k != "radius")
    return f"{name}({extra})" if extra else name


def chunk_rounds(d: int, n_rep: int = 1) -> int:
    """Rounds per chunk of the driver at this size (``arena.game.run_game``)."""
    return max(MIN_CHUNK_ROUNDS, DEFAULT_CHUNK_ELEMENTS // (n_rep * d))


def player_time(name, pp, ap, d, n, representation, repeats):
    """Best seconds per round of ``play_block`` over n rounds, in the driver's chunks."""
    from arena import registry

    adv = SparseStream(nnz=50, representation=representation, **ap)
    spec = GameSpec(
        "classification",
        d,
        n,
        dim=d,
        domain=adv.declared_domain(),
        loss=adv.declared_loss(),
        sparse=representation == "sparse",
    )
    assert isinstance(spec.domain, Domain)
    adv.reset(spec, [np.random.default_rng(0)])
    size = chunk_rounds(d)
    chunks = [adv.data_block(t0, min(size, n - t0 + 1)) for t0 in range(1, n + 1, size)]
    best = np.inf
    for _ in range(repeats + 1):  # the first pass compiles or loads the kernels
        player = registry.make("player", name, **pp)
        player.reset(spec, [np.random.default_rng(1)])
        start = time.perf_counter()
        for data in chunks:
            player.play_block(data, spec)
        best = min(best, time.perf_counter() - start)
    return best / n


def record_floor(d, n, repeats):
    """Best seconds per round to write one point of d floats into a fresh chunk buffer: the
    O(d) part every player pays for the points the protocol records (``out[r, j] = w``)."""
    size = chunk_rounds(d)
    w = np.random.default_rng(0).standard_normal(d)
    best = np.inf
    for _ in range(repeats + 1):
        start = time.perf_counter()
        for t0 in range(0, n, size):
            out = np.empty((1, min(size, n - t0), d))
            out[0] = w
        best = min(best, time.perf_counter() - start)
    return best / n


def game_time(name, pp, ap, d, horizon, representation, repeats, points=False):
    """Best seconds per round of a whole ``run_game`` (``points``: with the player's
    ``plays_predictions`` turned off, so that the game records ``w_t`` every round)."""
    from arena import registry

    if points:
        cls = type(registry.make("player", name))
        saved = cls.plays_predictions
        cls.plays_predictions = lambda self: False
        try:
            return game_time(name, pp, ap, d, horizon, representation, repeats)
        finally:
            cls.plays_predictions = saved
    params = {"nnz": 50, "representation": representation, **ap}
    kw = dict(n_actions=d, horizon=horizon, metrics=["loss"], player_params=pp)
    run_game(name, "sparse_stream", **{**kw, "horizon": 20}, adversary_params=params)
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        run_game(name, "sparse_stream", **kw, adversary_params=params)
        best = min(best, time.perf_counter() - start)
    return best / horizon


BOOSTING = [
    ("linear", {"weak_learner": "linear"}),
    ("normalized_linear", {"weak_learner": "normalized_linear", "mode": "potential"}),
    ("stump", {"weak_learner": "stump"}),
]


def boosting_time(params: dict, d: int, n: int, representation: str) -> float:
    """Seconds per round of an ``online_bbm`` (N = 10) game on ``sparse_stream`` (R = 1)."""
    kw = dict(
        player_params={"n_learners": 10, **params},
        adversary_params={"nnz": 50, "representation": representation},
        n_actions=d,
        replicates=1,
        metrics=["mistakes"],
    )
    run_game("online_bbm", "sparse_stream", horizon=20, **kw)  # compile / load the kernels
    started = time.perf_counter()
    run_game("online_bbm", "sparse_stream", horizon=n, **kw)
    return (time.perf_counter() - started) / n


def boosting_main(quick: bool, weak: list[str] | None = None) -> None:
    """The boosting table: µs per round, sparse rows against the same rows dense (``weak``: only
    these weak learners)."""
    n = 200 if quick else 5000
    print("| online_bbm (N = 10) over | d | game µs/round sparse | dense | dense / sparse |")
    print("|---|---|---|---|---|")
    for label, params in BOOSTING:
        if weak and label not in weak:
            continue
        for d in (10**3, 10**5):
            sparse = boosting_time(params, d, n, "sparse")
            dense = boosting_time(params, d, n if d <= 10**3 else n // 25, "dense")
            print(
                f"| {label} | {d:.0e} | {sparse * 1e6:.1f} | {dense * 1e6:.1f} "
                f"| {dense / sparse:.1f}× |",
                flush=True,
            )


def fd_time(sketch: str, d: int, n: int, sparse: bool) -> tuple[float, float]:
    """Seconds per example of FD-SON on ``sparse_stream`` (10 non-zeros a row, R = 1), and the
    share of decompositions that re-materialized (sparse; 0 for dense). Sparse: the
    predictions path; dense: ``play_block`` on the densified rows (its numba kernel)."""
    from arena.players.son import SON

    def block(rounds):
        adv = SparseStream(nnz=10, representation="sparse", loss="logistic")
        adv.reset(spec, [np.random.default_rng(0)])
        data = adv.data_block(1, rounds)
        return data if sparse else data.densified()

    spec = GameSpec("classification", d, n, dim=d, domain=Domain(), loss="logistic", sparse=True)
    for warm in (True, False):  # the first pass compiles or loads the kernels
        player = SON(sketch=sketch, m=10, alpha=8.0, C=1.0, eta=0.5, sparse=sparse)
        player.reset(spec, [np.random.default_rng(1)])
        part = block(5 if warm else n)
        start = time.perf_counter()
        if sparse:
            player.play_predictions(part, spec)
        else:
            player.play_block(part, spec)
        elapsed = time.perf_counter() - start
    share = 0.0
    if sparse:
        state = player._fd[0]
        share = state.materializations / max(1, state.decompositions)
    return elapsed / n, share


def fd_main(quick: bool) -> None:
    """The Sparse FD-SON table: µs per example, sparse against dense FD-SON, with one BLAS
    thread as in a game (:func:`arena.resources.blas_threads`)."""
    from arena.resources import blas_threads

    with blas_threads(1):
        _fd_table(quick)


def _fd_table(quick: bool) -> None:
    print("| sketch | d | sparse µs/example | dense | dense / sparse | re-materialized |")
    print("|---|---|---|---|---|---|")
    for sketch in ("fd", "fd_epoch"):
        for d in (10**4, 10**5):
            n = 50 if quick else 2000
            sparse, share = fd_time(sketch, d, n, True)
            dense, _ = fd_time(sketch, d, n if d <= 10**4 or quick else n // 5, False)
            print(
                f"| {sketch} | {d:.0e} | {sparse * 1e6:.1f} | {dense * 1e6:.1f} "
                f"| {dense / sparse:.1f}× | {share:.0%} |",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--boosting", action="store_true", help="the boosting table instead")
    parser.add_argument("--players", nargs="+", help="registry names (default: all five)")
    parser.add_argument("--weak", nargs="+", help="--boosting: only these weak learners")
    parser.add_argument("--fd", action="store_true", help="the Sparse FD-SON table instead")
    args = parser.parse_args()
    if args.fd:
        fd_main(args.quick)
        return
    if args.boosting:
        boosting_main(args.quick, args.weak)
        return
    dims = (10**4, 10**5)
    rounds = {10**4: 2000, 10**5: 400} if not args.quick else {10**4: 50, 10**5: 20}
    # the games run longer, so that the setup (the stream's planted d-vector) weighs less
    game_rounds = {10**4: 4000, 10**5: 4000} if not args.quick else rounds
    for d in dims:
        floor = record_floor(d, rounds[d], 1 if args.quick else 3)
        us = floor * 1e6
        print(f"d = {d:.0e}: writing w_t (the protocol's O(d) record) costs {us:.1f} µs/round")
    print()
    print(
        "| player | d | player µs/round sparse | dense | ratio "
        "| game µs/round sparse | through points | dense | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, pp, ap in PLAYERS:
        if args.players and name not in args.players:
            continue
        for d in dims:
            n = rounds[d]
            ps = player_time(name, pp, ap, d, n, "sparse", 1 if args.quick else 3)
            pdn = player_time(name, pp, ap, d, n, "dense", 1 if args.quick else 3)
            gs = game_time(name, pp, ap, d, game_rounds[d], "sparse", 1 if args.quick else 2)
            gp = (
                game_time(name, pp, ap, d, game_rounds[d], "sparse", 1 if args.quick else 2, True)
                if name == "ogd"
                else gs
            )
            gd = game_time(name, pp, ap, d, game_rounds[d], "dense", 1 if args.quick else 2)
            through = f"{gp * 1e6:.1f}" if name == "ogd" else "="
            print(
                f"| {_label(name, pp, ap)} | {d:.0e} | {ps * 1e6:.1f} | {pdn * 1e6:.1f} | "
                f"{pdn / ps:.1f}× | {gs * 1e6:.1f} | {through} | {gd * 1e6:.1f} | "
                f"{gd / gs:.1f}× |",
                flush=True,
            )


if __name__ == "__main__":
    main()
