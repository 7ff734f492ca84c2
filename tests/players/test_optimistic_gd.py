"""Oracle tests of optimistic gradient descent on the simplex (``arena.players.optimistic_gd``).

Every number asserted here is computed by hand, follows from an exact identity, or is a bound
proved in the player's docstring: ``R_T ≤ (1 − 1/N)/(2η) + (η/2) Σ_t ‖l_t − m_t‖²₂`` with the hint
``m_t = l_{t−1}`` (the optimistic mirror-descent argument of Rakhlin & Sridharan 2013 for the
Euclidean regularizer), and in self-play with ``η ≤ 1/(√8‖Ã‖₂)`` the duality gap
``≤ (a_max − a_min)·C/t`` (the RVU argument of Syrgkanis et al. 2015).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena import GameSpec, run_game
from arena.adversaries.matrix_game import MatrixGame
from arena.adversaries.replay import Replay
from arena.errors import ConfigError
from arena.metrics.games import DualityGap, LastIterateGap
from arena.players.optimistic_gd import OptimisticGD
from tests.helpers import assert_below, check_declared, metric_table, save_matrix, traced
from tests.helpers.experts import (
    assert_simplex,
    check_affine_rescale,
    check_declared_adaptive_and_wide,
    check_permutation_equivariance,
    check_shift_invariance,
    play_blocks,
    play_catalog,
    play_loop,
    regrets_from_trace,
    spec_for,
    three_ways,
)

P_ATOL = 1e-12
"""Projections of O(1) vectors after O(T) steps: float64 error ~1e-15; the house contract."""


def literal_projection(v: list[float]) -> list[float]:
    """Euclidean projection onto the probability simplex, lists only: with ``μ`` sorted
    descending, ``θ = (Σ_{r≤ρ} μ_r − 1)/ρ`` for the largest ``ρ`` with ``μ_ρ > θ_ρ``."""
    mu = sorted(v, reverse=True)
    total, theta = 0.0, 0.0
    for j, m in enumerate(mu, start=1):
        total += m
        candidate = (total - 1.0) / j
        if m - candidate > 0:
            theta = candidate
    return [max(x - theta, 0.0) for x in v]


def literal_optimistic_gd(losses, eta: float, lo: float = 0.0, hi: float = 1.0):
    """Optimistic mirror descent with ``½‖x‖²`` on the simplex (Rakhlin & Sridharan 2013, the
    two-step update), transcribed for one (T, N) loss list: play ``f_t = Π(g_{t−1} − η m_t)``,
    then ``g_t = Π(g_{t−1} − η l_t)``, hint ``m_t = l_{t−1}``, ``m_1 = 0``, ``g_0`` uniform."""
    n_act = len(losses[0])
    g, hint = [1.0 / n_act] * n_act, [0.0] * n_act
    out = []
    for row in losses:
        out.append(literal_projection([gi - eta * mi for gi, mi in zip(g, hint, strict=True)]))
        unit = [(v - lo) / (hi - lo) for v in row]
        g = literal_projection([gi - eta * ui for gi, ui in zip(g, unit, strict=True)])
        hint = unit
    return np.array(out)


# ----------------------------------------------------------------------------------------------
# golden values (computed by hand)


def test_golden_two_experts(tmp_path):
    # η = ¼, l = (0,1), (0,1), (1,0), (0,0); Π(a, b) on two experts adds (1 − a − b)/2 to both
    # while both stay ≥ 0:
    # f_1 = g_0 = (½, ½); g_1 = Π(½, ¼) = (⅝, ⅜); f_2 = Π(g_1 − ¼(0,1)) = Π(⅝, ⅛) = (¾, ¼);
    # g_2 = (¾, ¼); f_3 = Π(¾, 0) = (⅞, ⅛); g_3 = Π(g_2 − ¼(1,0)) = Π(½, ¼) = (⅝, ⅜);
    # f_4 = Π(g_3 − ¼(1,0)) = Π(⅜, ⅜) = (½, ½).
    eta = 0.25
    losses = [[0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.0, 0.0]]
    want = np.array([[0.5, 0.5], [0.75, 0.25], [0.875, 0.125], [0.5, 0.5]])
    arr = np.array(losses)[None]
    spec = spec_for(arr)
    np.testing.assert_allclose(play_loop(OptimisticGD(eta), arr, spec)[0], want, atol=P_ATOL)
    blocks = play_blocks(OptimisticGD(eta), arr, spec, [2, 1, 1])
    np.testing.assert_allclose(blocks[0], want, rtol=0, atol=P_ATOL)
    np.testing.assert_allclose(literal_optimistic_gd(losses, eta), want, rtol=0, atol=P_ATOL)
    rows, tr = traced(
        OptimisticGD(eta),
        Replay(path=save_matrix(tmp_path, arr[0])),
        tmp_path,
        horizon=4,
        checkpoints=[3, 4],
        metrics={"regret": {}, "bound": {}},
    )
    np.testing.assert_allclose(tr["probs"][0], want, rtol=0, atol=P_ATOL)
    # hint errors ‖l_t − m_t‖²₂: 1 (m_1 = 0), 0, 2, 1; bound (½)/(2η) + (η/2)·Σ = 1 + Σ/8
    _, bound = metric_table(rows, "bound:regret")
    np.testing.assert_allclose(bound[0], [1.0 + 3.0 / 8.0, 1.0 + 4.0 / 8.0], rtol=1e-12)


def test_a_large_step_lands_on_a_vertex():
    # η = 1, l_1 = (0, 1): g_1 = Π(½, −½) = (1, 0) (θ = −½ keeps one coordinate), and
    # f_2 = Π(g_1 − (0, 1)) = Π(1, −1) = (1, 0)
    arr = np.array([[[0.0, 1.0], [0.0, 0.0]]])
    got = play_loop(OptimisticGD(1.0), arr, spec_for(arr))[0]
    np.testing.assert_array_equal(got, [[0.5, 0.5], [1.0, 0.0]])


def test_tuned_rate_and_horizon():
    p = OptimisticGD()
    p.reset(GameSpec("experts", 4, 100), [np.random.default_rng(0)])
    assert p.learning_rate() == pytest.approx(math.sqrt(0.75 / 400), rel=1e-15)
    with pytest.raises(ConfigError, match="horizon"):
        OptimisticGD().reset(GameSpec("experts", 4, None), [np.random.default_rng(0)])
    one = OptimisticGD()
    one.reset(GameSpec("experts", 1, 10), [np.random.default_rng(0)])
    assert one.regret_bound().tolist() == [0.0]
    assert one.predict().tolist() == [[1.0]]


# ----------------------------------------------------------------------------------------------
# the kernel is the readable rule


@pytest.mark.parametrize("eta", [0.05, 1.0, "tuned"])
@pytest.mark.parametrize(("lo", "hi"), [(0.0, 1.0), (-1.0, 2.0)])
def test_kernel_equals_literal_rule(eta, lo, hi, tmp_path):
    rng = np.random.default_rng(12)
    n_rep, horizon, n_act = 3, 120, 5
    losses = lo + (hi - lo) * rng.random((n_rep, horizon, n_act))
    ways = three_ways(OptimisticGD(eta), losses, tmp_path, lo, hi)

    def rate(t):
        return math.sqrt((1 - 1 / n_act) / (n_act * t)) if eta == "tuned" else eta

    for r in range(n_rep):
        want = literal_optimistic_gd(losses[r].tolist(), rate(horizon), lo, hi)
        for label, got in ways.items():
            k = got.shape[1]
            if label == "single_rounds":  # that run's horizon is 20
                want20 = literal_optimistic_gd(losses[r, :20].tolist(), rate(20), lo, hi)
                np.testing.assert_allclose(got[r], want20, rtol=0, atol=P_ATOL, err_msg=label)
                continue
            np.testing.assert_allclose(got[r], want[:k], rtol=0, atol=P_ATOL, err_msg=label)
    assert_simplex(ways["engine"], str(eta))
    # a large step reaches the faces of the simplex: the projection's clipping is exercised
    if eta == 1.0:
        assert (ways["engine"] == 0.0).any()


# ----------------------------------------------------------------------------------------------
# the declared bound


def test_declared_bound_is_the_formula(tmp_path):
    # the bound rows equal (1 − 1/N)/(2η) + (η/2) Σ_{s≤t} ‖l_s − l_{s−1}‖²₂ from the trace
    rng = np.random.default_rng(2)
    losses = rng.random((2, 300, 4))
    eta = 0.2
    rows, tr = traced(
        OptimisticGD(eta),
        Replay(path=save_matrix(tmp_path, losses)),
        tmp_path,
        horizon=300,
        replicates=2,
        metrics={"regret": {}, "bound": {}},
    )
    prev = np.concatenate([np.zeros((2, 1, 4)), tr["losses"][:, :-1]], axis=1)
    err = np.cumsum(((tr["losses"] - prev) ** 2).sum(axis=2), axis=1)
    ts, bound = metric_table(rows, "bound:regret")
    np.testing.assert_allclose(bound, 0.75 / (2 * eta) + 0.5 * eta * err[:, ts - 1], rtol=1e-12)
    assert_below(regrets_from_trace(tr)[:, ts].max(axis=2), bound, "regret <= bound")


@pytest.mark.parametrize("eta", [1.0, "tuned"])
def test_declared_bound_on_catalog(eta, tmp_path):
    checked = 0
    metrics = {"regret": {}, "bound": {}}
    n_act, horizon = 4, 400
    for label, rows in play_catalog(OptimisticGD(eta), tmp_path, n_act, horizon, metrics):
        checked += check_declared(rows, f"η={eta} {label}")
        if eta == "tuned":  # ‖l − m‖²₂ ≤ N: the tuned bound never exceeds sqrt((N − 1) T)
            assert_below(
                metric_table(rows, "bound:regret")[1][:, -1],
                math.sqrt((n_act - 1) * horizon),
                label,
            )
    assert checked > 0


@pytest.mark.parametrize("eta", [0.1])
def test_declared_bound_adaptive_and_wide_range(eta, tmp_path):
    check_declared_adaptive_and_wide(OptimisticGD(eta), f"η={eta}", tmp_path, 600, 400)


# ----------------------------------------------------------------------------------------------
# invariances


def test_invariances(tmp_path):
    # the projection onto {Σ x = 1} ignores a shift c·1 of its argument, so a per-round shift of
    # the losses leaves p unchanged (up to rounding); mapping [lo, hi] onto [0, 1] first makes
    # the declared range irrelevant; permuting the experts permutes p.
    player = OptimisticGD(0.3)
    check_shift_invariance(player, tmp_path, exact=False, atol=1e-12)
    check_affine_rescale(player, tmp_path, atol=P_ATOL)
    check_permutation_equivariance(player, tmp_path, dyadic=False, atol=P_ATOL)


# ----------------------------------------------------------------------------------------------
# self-play on matrix_game: the O(1/t) gap of the averages, the last iterate's convergence

SELF_PLAY_T = 3000


@pytest.mark.parametrize(
    "game", [{"game": "biased_rock_paper_scissors"}, {"game_seed": 1, "n_columns": 7}]
)
def test_self_play_gap_is_within_the_rvu_bound(game):
    adv = MatrixGame(opponent="self", **game)
    n = adv.resolve_n_actions(None if "game" in game else 5)
    a = adv._build_matrix(n)
    scale = a.max() - a.min()
    n_rows, n_cols = a.shape
    eta = 0.99 / (math.sqrt(8.0) * np.linalg.norm(a / scale, 2))  # the condition, just met
    # round 1: both sides uniform, so l_1 = (A·1/M − a_min)/s and c_1 = (a_max − 1ᵀA/N)/s
    l1 = (a.mean(axis=1) - a.min()) / scale
    c1 = (a.max() - a.mean(axis=0)) / scale
    const = (2 - 1 / n_rows - 1 / n_cols) / (2 * eta) + eta * (l1 @ l1 + c1 @ c1)
    checkpoints = [1, 10, 100, 1000, SELF_PLAY_T]
    rows = run_game(
        OptimisticGD(eta),
        adv,
        n_actions=n,
        horizon=SELF_PLAY_T,
        checkpoints=checkpoints,
        metrics=[DualityGap(), LastIterateGap()],
    ).rows
    gap = rows[rows.metric == "duality_gap"].set_index("t").value
    # the proof's bound, every checkpoint; measured: gap·t / (s·C) between 0.08 and 0.43
    ts = gap.index.to_numpy()
    assert_below(gap.to_numpy(), scale * const / ts, f"gap <= s C / t ({game})")
    last = rows[rows.metric == "last_iterate_gap"].set_index("t").value
    # measured at t = 3000: 4e-16 (biased RPS) and 7e-10 (random) of the first value, on the
    # way down at a linear rate (Wei et al. 2021)
    assert last[SELF_PLAY_T] <= 1e-8 * last[1]


def test_self_play_averages_converge_faster_than_hedge():
    # measured (biased RPS, T = 3000): optimistic_gd (η = 0.2) gap·t = 194.2 at t = 1000 and
    # 193.6 at 3000 (a 1/t rate); Hedge (anytime η) gap 0.85 at 1000, 0.48 at 3000 (about
    # t^{−1/2}), 7.4 times optimistic_gd's at T
    game = MatrixGame(game="biased_rock_paper_scissors", opponent="self")
    kw = dict(horizon=SELF_PLAY_T, checkpoints=[1000, SELF_PLAY_T], metrics=[DualityGap()])
    ogd = run_game(OptimisticGD(0.2), game, **kw).rows.set_index("t").value
    hedge = run_game("hedge", game, player_params={"eta": "anytime"}, **kw).rows
    hedge = hedge.set_index("t").value
    assert ogd[SELF_PLAY_T] * SELF_PLAY_T <= 1.2 * ogd[1000] * 1000
    assert 4 * ogd[SELF_PLAY_T] < hedge[SELF_PLAY_T]
