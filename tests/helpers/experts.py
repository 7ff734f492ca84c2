"""Helpers of the experts tests (players and adversaries): loss matrices, the FTL-killer and
two-phase constructions, drivers of predict/update and play_block, the adversary catalogs of the
player guide, and AdaNormalHedge's potential.

Nothing here reads an external file: every construction is re-implemented from its citation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from arena import GameSpec, run_game
from arena.adversaries.replay import Replay
from arena.metric import Metric, metric_for
from arena.metrics.base import ExpertsRecord
from tests.helpers import check_declared, metric_table, rngs, save_matrix, traced

ENGINE_ATOL = 1e-12
"""predict/update, the block kernel and the engine run the same compiled row functions on the same
floats, so they agree to rounding (~1e-16); the player contract asks 1e-12."""


# ----------------------------------------------------------------------------------------------
# a metric's brute-force value on a hand-built history


def reference_value(
    metric: Metric | str,
    param: float,
    probs: np.ndarray,
    losses: np.ndarray,
    actions: np.ndarray,
    means: np.ndarray | None = None,
    previous: int = 0,
) -> float:
    """An experts metric's brute-force value (its ``reference``) on one replicate's history.

    ``metric`` is an instance, or a name (the experts class, default parameters).
    """
    if isinstance(metric, str):
        metric = metric_for(metric, "experts")()
    record = ExpertsRecord(
        t=len(losses), probs=probs, losses=losses, actions=actions, means=means, previous=previous
    )
    return metric.reference(record, param)


# ----------------------------------------------------------------------------------------------
# loss matrices and constructions


def ftl_killer_matrix(horizon: int, n_act: int = 2, first=(0.5, 0.0)) -> np.ndarray:
    """The FTL killer: ``l_1 = first`` (default (½, 0)), then (0, 1) on even t and (1, 0) on odd
    t ≥ 3; experts beyond the first two lose 1 every round."""
    t = np.arange(1, horizon + 1)
    out = np.ones((horizon, n_act))
    out[:, 0] = np.where(t % 2 == 0, 0.0, 1.0)
    out[:, 1] = np.where(t % 2 == 0, 1.0, 0.0)
    out[0, :2] = first
    return out


def two_phase_matrix(
    horizon: int, n_act: int, eta: float = 0.1, first=(0.5, 0.0), longest_phase1: int | None = None
) -> np.ndarray:
    """The two-phase adversary: a phase 1 of ``round(3 ln N/η)`` rounds (at least 1, at most
    ``longest_phase1``, default T/2) where experts 0, 1 lose 0 and the others 1, then the FTL killer
    (:func:`ftl_killer_matrix` with ``first``) on experts 0, 1 with the others still at 1."""
    longest = horizon // 2 if longest_phase1 is None else longest_phase1
    t1 = min(longest, max(1, round(3.0 * math.log(max(n_act, 2)) / eta)))
    out = np.ones((horizon, n_act))
    out[:t1, :2] = 0.0
    out[t1:] = ftl_killer_matrix(horizon - t1, n_act, first)
    return out


def loss_matrices(seed, horizon: int, n_act: int) -> dict[str, np.ndarray]:
    """Random T×N losses drawn from ``seed`` (an int or a Generator): ``uniform``, ``binary``
    ({0, 1}) and ``ties`` (values in {0, ½, 1}, a duplicated column and some constant rows, so that
    exact ties in cumulative losses occur)."""
    rng = np.random.default_rng(seed)
    ties = rng.integers(0, 3, (horizon, n_act)) / 2.0
    if n_act > 1:
        ties[:, -1] = ties[:, 0]
    ties[rng.random(horizon) < 0.2] = 0.5
    return {
        "uniform": rng.random((horizon, n_act)),
        "binary": rng.integers(0, 2, (horizon, n_act)).astype(np.float64),
        "ties": ties,
    }


def regrets_from_trace(tr) -> np.ndarray:
    """``R_t = Σ_{τ≤t} (p_τ·ℓ_τ − ℓ_τ)`` from :func:`~arena.results.read_trace` arrays, shape
    (R, T + 1, N) with ``R_0 = 0``."""
    inst = tr["expected"][:, :, None] - tr["losses"]
    cum = np.cumsum(inst, axis=1)
    return np.concatenate([np.zeros_like(cum[:, :1]), cum], axis=1)


def phi(big_r, big_c):
    """AdaNormalHedge's potential ``Φ(R, C) = exp([R]_+²/(3C))`` with ``Φ(0, 0) := 1`` (Luo 2016,
    §2.3), elementwise."""
    big_r, big_c = np.broadcast_arrays(np.asarray(big_r, float), np.asarray(big_c, float))
    pos = np.maximum(big_r, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.exp(pos**2 / (3.0 * big_c))
    return np.where(pos == 0.0, 1.0, out)


def big_phi(x: float, c: float) -> float:
    """:func:`phi` of one scalar pair, in plain Python (for the literal transcriptions)."""
    pos = max(x, 0.0)
    return 1.0 if pos == 0.0 else math.exp(pos * pos / (3.0 * c))


def literal_mix(eta: float, cum: list[float]) -> tuple[list[float], float]:
    """The ``mix`` of de Rooij et al. 2014 in plain Python: weights ∝ exp(−η(L − min L)) (the
    leaders at η = ∞) and the mix loss ``M = min L − ln(mean exp(−η(L − min L)))/η``."""
    mn = min(cum)
    if eta == math.inf:
        w = [1.0 if v == mn else 0.0 for v in cum]
    else:
        w = [math.exp(-eta * (v - mn)) for v in cum]
    s = sum(w)
    w = [v / s for v in w]
    big_m = mn if eta == math.inf else mn - math.log(s / len(cum)) / eta
    return w, big_m


# ----------------------------------------------------------------------------------------------
# specs and drivers


def spec(n_act: int, horizon: int | None, n_rep: int = 1, loss_range=(0.0, 1.0)) -> GameSpec:
    """The GameSpec of an experts game (``horizon=None``: anytime)."""
    return GameSpec("experts", n_act, horizon, tuple(loss_range), n_replicates=n_rep)


def spec_for(losses: np.ndarray, horizon=None, loss_range=(0.0, 1.0)) -> GameSpec:
    """:func:`spec` for an (R, T, N) loss array (horizon T unless given; None for anytime)."""
    n_rep, t, n_act = losses.shape
    return spec(n_act, t if horizon is None else horizon, n_rep, loss_range)


def _fresh(player, losses: np.ndarray, spec: GameSpec, streams):
    p = player.clone()
    p.reset(spec, streams or [np.random.default_rng(r) for r in range(losses.shape[0])])
    return p


def play_loop(player, losses: np.ndarray, spec: GameSpec, rngs=None) -> np.ndarray:
    """Reset a clone and play (R, T, N) losses with predict/update; return p (R, T, N).

    Checks on the way that ``predict`` is pure (two calls, the same answer). ``rngs`` default to
    ``default_rng(r)`` for replicate r.
    """
    p = _fresh(player, losses, spec, rngs)
    out = np.empty(losses.shape)
    for t in range(losses.shape[1]):
        first = np.array(p.predict(), copy=True)
        again = p.predict()
        assert np.array_equal(first, again), f"predict is not pure at round {t + 1}"
        out[:, t] = first
        p.update(losses[:, t].copy())
    return out


def play_blocks(
    player, losses: np.ndarray, spec: GameSpec, splits=None, rngs=None, *, cuts=None
) -> np.ndarray:
    """Reset a clone and play (R, T, N) losses through ``play_block``; return p (R, T, N).

    The blocks are given either by their sizes (``splits``, summing to T) or by the rounds they
    end at (``cuts``: positions in (0, T), any order, repeats ignored).
    """
    horizon = losses.shape[1]
    if cuts is not None:
        ends = sorted({c for c in cuts if 0 < c < horizon})
        splits = np.diff([0, *ends, horizon]).tolist()
    assert sum(splits) == horizon, f"blocks {splits} do not cover the {horizon} rounds"
    p = _fresh(player, losses, spec, rngs)
    parts, t0 = [], 0
    for n in splits:
        parts.append(p.play_block(np.ascontiguousarray(losses[:, t0 : t0 + n])))
        t0 += n
    return np.concatenate(parts, axis=1)


def run_predict_update(player, losses: np.ndarray, lo: float = 0.0, hi: float = 1.0):
    """:func:`play_loop` on losses declared in ``[lo, hi]``."""
    return play_loop(player, losses, spec_for(losses, loss_range=(lo, hi)))


def step_player(player, losses: np.ndarray, conf=None) -> np.ndarray:
    """Play (R, T, N) losses through predict/update on an already reset player (confidences
    ``conf`` (R, T, N) or None); return p (R, T, N)."""
    out = []
    for t in range(losses.shape[1]):
        c = None if conf is None else conf[:, t]
        if c is None:
            out.append(player.predict())
            player.update(losses[:, t])
        else:
            out.append(player.predict(confidences=c))
            player.update(losses[:, t], confidences=c)
    return np.stack(out, axis=1)


def block_player(player, losses: np.ndarray, split, conf=None) -> np.ndarray:
    """Play (R, T, N) losses through ``play_block`` in blocks of the given sizes, on an already
    reset player (confidences ``conf`` or None); return p (R, T, N)."""
    out, t0 = [], 0
    for n in split:
        c = None if conf is None else conf[:, t0 : t0 + n]
        block = losses[:, t0 : t0 + n]
        out.append(
            player.play_block(block) if c is None else player.play_block(block, confidences=c)
        )
        t0 += n
    return np.concatenate(out, axis=1)


def three_ways(player, losses: np.ndarray, tmp_path: Path, lo: float = 0.0, hi: float = 1.0):
    """Return the (R, T, N) distributions of ``player`` on ``losses`` computed by predict/update,
    by ``play_block`` under several block splits, and by the engine (replay + trace)."""
    n_rep, horizon, _ = losses.shape
    rng = np.random.default_rng(horizon)
    cuts = np.sort(rng.choice(np.arange(1, horizon), size=min(5, horizon - 1), replace=False))
    random_split = np.diff(np.concatenate([[0], cuts, [horizon]])).tolist()
    spec = spec_for(losses, loss_range=(lo, hi))
    out = {"predict_update": play_loop(player, losses, spec)}
    for label, split in [("one_block", [horizon]), ("random_blocks", random_split)]:
        out[label] = play_blocks(player, losses, spec, split)
    first = losses[:, :20]
    out["single_rounds"] = play_blocks(
        player, first, spec_for(first, loss_range=(lo, hi)), [1] * 20
    )
    path = save_matrix(tmp_path, losses)
    _, trace = traced(
        player,
        Replay(path=path, loss_range=[lo, hi]),
        tmp_path,
        horizon=horizon,
        replicates=n_rep,
        metrics={"regret": {}},
    )
    np.testing.assert_array_equal(trace["losses"], losses)
    out["engine"] = trace["probs"]
    return out


def assert_simplex(p: np.ndarray, what: str) -> None:
    """Structural invariant: finite, ``p ≥ 0`` and ``|Σ p − 1| ≤ 1e-12``."""
    assert np.all(np.isfinite(p)), f"{what}: a weight is not finite"
    assert p.min() >= 0.0, f"{what}: negative weight {p.min()!r}"
    assert np.abs(p.sum(axis=-1) - 1.0).max() <= 1e-12, f"{what}: sums off by more than 1e-12"


# ----------------------------------------------------------------------------------------------
# the adversary catalogs of the player guide


def catalog(directory: Path, n_act: int, horizon: int, eta0: float = 0.1, binary=False):
    """The adversary catalog of the regret-bound tests: ``(label, adversary, params, n_actions)``.

    bernoulli, fair_coin, ftl_killer, shifting_experts, greedy (both tie modes), a replay of
    random uniform losses (three replicates' worth) and a replay of the two-phase matrix (phase 1
    of ``3 ln N/η0`` rounds, at most T − 1). ``binary=True`` keeps every loss in {0, 1} (the
    killer and the two-phase matrix start with (1, 0) instead of (½, 0), the uniform replay is
    rounded).
    """
    rng = np.random.default_rng(1000 * n_act + horizon)
    uniform = rng.random((3, horizon, n_act))
    first = (1.0, 0.0) if binary else (0.5, 0.0)
    if binary:
        uniform = np.round(uniform)
    yield "bernoulli", "bernoulli", {"gap": 0.1}, n_act
    yield "fair_coin", "fair_coin", {}, n_act
    if not binary:
        yield "ftl_killer", "ftl_killer", {}, n_act
    else:
        killer = save_matrix(directory, ftl_killer_matrix(horizon, n_act, first))
        yield "ftl_killer_binary", "replay", {"path": killer}, n_act
    if n_act >= 2:
        yield "shifting", "shifting_experts", {"n_switches": 3, "gap": 0.3}, n_act
    yield "greedy_random", "greedy", {"ties": "random"}, n_act
    yield "greedy_all", "greedy", {"ties": "all"}, n_act
    yield "replay_uniform", "replay", {"path": save_matrix(directory, uniform)}, n_act
    two = two_phase_matrix(horizon, n_act, eta0, first, longest_phase1=horizon - 1)
    yield "replay_two_phase", "replay", {"path": save_matrix(directory, two)}, n_act


def play_catalog(player, directory, n_act, horizon, metrics, binary=False, replicates=3):
    """Play ``player`` on the whole :func:`catalog`; yield ``(label, rows)``."""
    for label, adversary, params, n in catalog(directory, n_act, horizon, binary=binary):
        run = run_game(
            player,
            adversary,
            adversary_params=params,
            n_actions=n,
            horizon=horizon,
            replicates=replicates,
            seed=17,
            metrics=metrics,
        )
        yield label, run.rows


def bound_games(directory: Path, horizon: int, n_act: int, seed: int = 0):
    """The adversary families of the player guide as ``(label, adversary, params, n_actions)``
    (None: the replay's own N), plus a five-expert FTL killer when N = 2."""
    rng = np.random.default_rng(seed)
    uniform = save_matrix(directory, rng.random((3, horizon, n_act)))
    two_phase = save_matrix(directory, two_phase_matrix(horizon, n_act))
    games = [
        ("bernoulli", "bernoulli", {"gap": 0.1}, n_act),
        ("fair_coin", "fair_coin", {}, n_act),
        ("ftl_killer", "ftl_killer", {}, n_act),
        ("shifting_experts", "shifting_experts", {"n_switches": 3, "gap": 0.3}, n_act),
        ("greedy_random", "greedy", {"ties": "random"}, n_act),
        ("greedy_all", "greedy", {"ties": "all"}, n_act),
        ("replay_uniform", "replay", {"path": uniform}, None),
        ("replay_two_phase", "replay", {"path": two_phase}, None),
    ]
    if n_act == 2:
        games.append(("ftl_killer_5", "ftl_killer", {}, 5))
    return games


def play_games(
    make_player: Callable[[], object], directory: Path, sizes, metrics: dict, seed: int = 0
):
    """Yield ``(label, rows)`` for every game of :func:`bound_games` at each (N, T) of ``sizes``."""
    for n_act, horizon in sizes:
        for label, adversary, params, n in bound_games(directory, horizon, n_act, seed):
            rows = run_game(
                make_player(),
                adversary,
                adversary_params=params,
                n_actions=n,
                horizon=horizon,
                replicates=3,
                seed=seed + 1,
                metrics=metrics,
            ).rows
            yield f"{label} N={n or n_act} T={horizon}", rows


def log_log_slope(ts: np.ndarray, values: np.ndarray) -> float:
    """Least-squares slope of ``ln(value)`` on ``ln(t)`` (our scaling test for O-form bounds)."""
    return float(np.polyfit(np.log(ts), np.log(values), 1)[0])


def worst_regret_slope(player, directory: Path, n_act: int = 5) -> tuple[float, np.ndarray]:
    """Our recipe for O-form bounds: the least-squares slope of ln(max over adversaries of R_T) on
    ln T, T = 2^10..2^14.

    The adversaries are the FTL killer, the greedy adaptive adversary (mean of 2 replicates) and
    the two-phase matrix. Fair coins are left out on purpose: their expected regret is the same
    for every learner (the non-anticipation identity), so they would only add sampling noise to
    the slope. Returns the slope and the worst regret per checkpoint.
    """
    horizon = 2**14
    checkpoints = [2**k for k in range(10, 15)]
    two_phase = save_matrix(directory, two_phase_matrix(horizon, n_act))
    worst = np.zeros(len(checkpoints))
    for adversary, params, n, reps in [
        ("ftl_killer", {}, n_act, 1),
        ("greedy", {}, n_act, 2),
        ("replay", {"path": two_phase}, None, 1),
    ]:
        rows = run_game(
            player,
            adversary,
            adversary_params=params,
            n_actions=n,
            horizon=horizon,
            replicates=reps,
            checkpoints=checkpoints,
            metrics={"regret": {}},
        ).rows
        ts, regret = metric_table(rows, "regret")
        worst = np.maximum(worst, regret.mean(axis=0))
    return log_log_slope(ts, worst), worst


def gap_growth(player, horizon: int = 2**14, early: int = 2**10, runs: int = 20) -> np.ndarray:
    """Per-run growth of the pseudo-regret from round ``early`` to ``horizon`` against Bernoulli
    losses with a gap (means 0.4 vs 0.5, N = 5)."""
    rows = run_game(
        player,
        "bernoulli",
        n_actions=5,
        horizon=horizon,
        replicates=runs,
        adversary_params={"gap": 0.1},
        checkpoints=[early],
        metrics={"pseudo_regret": {}},
    ).rows
    _, pseudo = metric_table(rows, "pseudo_regret")
    return pseudo[:, -1] - pseudo[:, 0]


# ----------------------------------------------------------------------------------------------
# metamorphic checks through the engine (Hedge and FTL share them)


def dyadic_losses(rng: np.random.Generator, shape) -> np.ndarray:
    """Losses on the grid k/8 so that every cumulative sum, and thus every FTL tie, is exact."""
    return rng.integers(0, 5, size=shape) / 8.0


def check_affine_rescale(player, tmp_path: Path, atol: float = 1e-12) -> None:
    """``l' = lo + (hi − lo)·l`` with the declared range [lo, hi] gives the same p as l on [0, 1]
    (to ``atol``), and the regret scales by hi − lo (metamorphic tests)."""
    rng = np.random.default_rng(3)
    horizon, n_act = 400, 5
    unit = rng.random((3, horizon, n_act))
    base_rows, base = traced(
        player,
        Replay(path=save_matrix(tmp_path, unit)),
        tmp_path,
        horizon=horizon,
        replicates=3,
        metrics={"regret": {}},
    )
    lo, hi = -1.0, 2.0
    wide_rows, wide = traced(
        player,
        Replay(path=save_matrix(tmp_path, lo + (hi - lo) * unit), loss_range=[lo, hi]),
        tmp_path,
        horizon=horizon,
        replicates=3,
        metrics={"regret": {}},
    )
    np.testing.assert_allclose(wide["probs"], base["probs"], rtol=0, atol=atol)
    # regret sums 400 rescaled terms: relative float error ≲ 1e-13
    np.testing.assert_allclose(
        metric_table(wide_rows, "regret")[1],
        (hi - lo) * metric_table(base_rows, "regret")[1],
        rtol=1e-9,
        atol=1e-9,
    )


def check_shift_invariance(player, tmp_path: Path, *, exact: bool, atol: float = 0.0) -> None:
    """``l_t → l_t + c_t·1`` (staying in [0, 1]) leaves p_{1:T} and the regret unchanged.

    ``exact``: dyadic losses and shifts (≤ ½ each) keep every sum exact, so ties survive and p
    must agree bitwise; otherwise continuous data and p within ``atol``.
    """
    rng = np.random.default_rng(5)
    horizon, n_act, n_rep = 300, 6, 3
    base = dyadic_losses(rng, (n_rep, horizon, n_act))
    shift = rng.integers(0, 5, size=(n_rep, horizon, 1)) / 8.0
    if not exact:  # continuous data
        base = rng.random((n_rep, horizon, n_act)) / 2.0
        shift = rng.random((n_rep, horizon, 1)) / 2.0
    kw = {"horizon": horizon, "replicates": n_rep, "metrics": {"regret": {}}}
    rows_a, a = traced(player, Replay(path=save_matrix(tmp_path, base)), tmp_path, **kw)
    rows_b, b = traced(player, Replay(path=save_matrix(tmp_path, base + shift)), tmp_path, **kw)
    if exact:
        np.testing.assert_array_equal(b["probs"], a["probs"])
    else:
        np.testing.assert_allclose(b["probs"], a["probs"], rtol=0, atol=atol)
    np.testing.assert_allclose(
        metric_table(rows_b, "regret")[1], metric_table(rows_a, "regret")[1], atol=1e-9
    )


def check_permutation_equivariance(
    player, tmp_path: Path, *, dyadic: bool, skip_first_round: bool = False, atol: float = 1e-12
) -> None:
    """Permuting the experts permutes p (to ``atol``; the softmax normalizer sums in another
    order) and leaves the regret unchanged. ``dyadic``: data full of exact ties; otherwise
    continuous data, whose only tie is the all-zero start. ``skip_first_round``: a label-dependent
    tie-break (its round-1 point mass, hence its regret, depends on the labels)."""
    rng = np.random.default_rng(6)
    horizon, n_act = 300, 7
    if dyadic:
        base = dyadic_losses(rng, (horizon, n_act))
    else:
        base = rng.random((horizon, n_act))
    perm = rng.permutation(n_act)
    kw = {"horizon": horizon, "metrics": {"regret": {}}}
    rows_a, a = traced(player, Replay(path=save_matrix(tmp_path, base)), tmp_path, **kw)
    rows_b, b = traced(player, Replay(path=save_matrix(tmp_path, base[:, perm])), tmp_path, **kw)
    first = 1 if skip_first_round else 0
    np.testing.assert_allclose(
        b["probs"][:, first:], a["probs"][:, first:, perm], rtol=0, atol=atol
    )
    if not skip_first_round:
        np.testing.assert_allclose(
            metric_table(rows_b, "regret")[1], metric_table(rows_a, "regret")[1], atol=1e-9
        )


# ----------------------------------------------------------------------------------------------
# experts adversaries


def block_losses(adversary, spec: GameSpec, splits, seed: int = 0) -> np.ndarray:
    """Reset a clone with fixed streams and concatenate ``losses_block`` over the given split."""
    a = adversary.clone()
    a.reset(spec, rngs(seed, spec.n_replicates))
    parts, t0 = [], 1
    for n in splits:
        parts.append(np.asarray(a.losses_block(t0, n), dtype=np.float64))
        t0 += n
    return np.concatenate(parts, axis=1)


def assert_split_invariant(adversary, spec: GameSpec, seed: int = 0) -> np.ndarray:
    """Any split of the rounds into blocks gives the same losses; returns them."""
    horizon = spec.horizon
    whole = block_losses(adversary, spec, [horizon], seed)
    for splits in ([1] * horizon, [1, 2, horizon - 3], [horizon // 2, horizon - horizon // 2]):
        np.testing.assert_array_equal(block_losses(adversary, spec, splits, seed), whole)
    return whole


__all__ = [
    "ENGINE_ATOL",
    "assert_simplex",
    "assert_split_invariant",
    "big_phi",
    "block_losses",
    "block_player",
    "bound_games",
    "catalog",
    "check_affine_rescale",
    "check_permutation_equivariance",
    "check_shift_invariance",
    "dyadic_losses",
    "ftl_killer_matrix",
    "gap_growth",
    "literal_mix",
    "log_log_slope",
    "loss_matrices",
    "phi",
    "play_blocks",
    "play_catalog",
    "play_games",
    "play_loop",
    "reference_value",
    "regrets_from_trace",
    "run_predict_update",
    "spec",
    "spec_for",
    "step_player",
    "three_ways",
    "two_phase_matrix",
]


ADAPTIVE_GAMES = (("heavier_half", {}, 6), ("greedy", {"ties": "all"}, 3))
"""The adaptive games a declared bound is checked on beside the catalog: (name, params, N)."""


def check_declared_adaptive_and_wide(
    player, label: str, folder: Path, horizon: int, wide_rounds: int, games=ADAPTIVE_GAMES
):
    """Check ``player``'s declared bound against the adaptive ``games`` (2 replicates, ``horizon``
    rounds) and on a replay of uniform losses in a declared range [−1, 2] (``wide_rounds``
    rounds, 4 experts); return the replay's rows."""
    metrics = {"regret": {}, "bound": {}}
    for adversary, params, n_act in games:
        rows = run_game(
            player,
            adversary,
            adversary_params=params,
            n_actions=n_act,
            horizon=horizon,
            replicates=2,
            metrics=metrics,
        ).rows
        check_declared(rows, f"{label} {adversary}")
    wide = -1.0 + 3.0 * np.random.default_rng(4).random((wide_rounds, 4))
    rows = run_game(
        player,
        Replay(path=save_matrix(folder, wide), loss_range=[-1.0, 2.0]),
        horizon=wide_rounds,
        metrics=metrics,
    ).rows
    check_declared(rows, f"{label} replay [-1, 2]")
    return rows
