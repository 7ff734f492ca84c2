"""Oracle tests of Regret Matching and Regret Matching⁺ (``arena.players.regret_matching``).

Every number asserted here is computed by hand, follows from an exact identity, or is a proven
bound (Cesa-Bianchi & Lugosi 2006, Corollary 2.1 with p = 2 for RM; Tammelin et al. 2015 for
RM⁺; the three-line potential argument is reproduced in the class docstring and checked below as
an invariant). Deterministic inequalities use ``assert_below`` (1e-9 relative slack).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena import GameSpec, run_game
from arena.adversaries.matrix_game import MatrixGame
from arena.adversaries.replay import Replay
from arena.metrics.games import DualityGap
from arena.players.regret_matching import RegretMatching, regret_matching_probs
from tests.helpers import assert_below, check_declared, metric_table, save_matrix, traced
from tests.helpers.experts import (
    ADAPTIVE_GAMES,
    assert_simplex,
    check_affine_rescale,
    check_declared_adaptive_and_wide,
    check_permutation_equivariance,
    play_blocks,
    play_catalog,
    play_loop,
    regrets_from_trace,
    spec_for,
    three_ways,
)

P_ATOL = 1e-12
"""Kernel, predict/update and the literal loop do the same float operations up to summation
order (at most ~1e-16 apart per round); the house contract is 1e-12."""

VARIANTS = ["rm", "rm_plus"]


# ----------------------------------------------------------------------------------------------
# the literal rule, in plain Python


def literal_regret_matching(losses, plus: bool, lo: float = 0.0, hi: float = 1.0):
    """RM / RM⁺ transcribed literally for one (T, N) loss list: lists and floats only."""
    n_act = len(losses[0])
    state = [0.0] * n_act
    out = []
    for row in losses:
        pos = [max(s, 0.0) for s in state]
        total = sum(pos)
        p = [v / total for v in pos] if total > 0.0 else [1.0 / n_act] * n_act
        out.append(p)
        unit = [(v - lo) / (hi - lo) for v in row]
        mean = sum(pi * ui for pi, ui in zip(p, unit, strict=True))
        state = [s + mean - u for s, u in zip(state, unit, strict=True)]
        if plus:
            state = [max(s, 0.0) for s in state]
    return np.array(out)


# ----------------------------------------------------------------------------------------------
# golden values (computed by hand)

GOLDEN = {
    # two experts, l = (0,1), (1,0), (0,1), (1,0):
    # RM: r_1 = (½, −½) → p_2 = (1, 0); r_2 = (1 − 1, 1 − 0) = (0, 1) → R_2 = (½, ½) → p_3 uniform;
    #     r_3 = (½, −½) → R_3 = (1, 0) → p_4 = (1, 0).
    # RM⁺: Q_1 = (½, 0) → p_2 = (1, 0); Q_2 = (½, 1) → p_3 = (1/3, 2/3); p_3·l_3 = 2/3, so
    #     r_3 = (2/3, −1/3) and Q_3 = (7/6, 2/3) → p_4 = (7/11, 4/11).
    "two": (
        [[0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]],
        {
            "rm": [[0.5, 0.5], [1.0, 0.0], [0.5, 0.5], [1.0, 0.0]],
            "rm_plus": [[0.5, 0.5], [1.0, 0.0], [1 / 3, 2 / 3], [7 / 11, 4 / 11]],
        },
    ),
    # three experts, l = (1, 0, ½), (0, 1, 0), (0, 0, 0):
    # r_1 = (−½, ½, 0) → p_2 = (0, 1, 0); r_2 = (1, 0, 1).
    # RM: R_2 = (½, ½, 1) → p_3 = (¼, ¼, ½).
    # RM⁺: Q_1 = (0, ½, 0), Q_2 = (1, ½, 1) → p_3 = (0.4, 0.2, 0.4).
    "three": (
        [[1.0, 0.0, 0.5], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]],
        {
            "rm": [[1 / 3] * 3, [0.0, 1.0, 0.0], [0.25, 0.25, 0.5]],
            "rm_plus": [[1 / 3] * 3, [0.0, 1.0, 0.0], [0.4, 0.2, 0.4]],
        },
    ),
}


@pytest.mark.parametrize("case", list(GOLDEN))
@pytest.mark.parametrize("variant", VARIANTS)
def test_golden_values(case, variant, tmp_path):
    losses, wants = GOLDEN[case]
    want = np.array(wants[variant])
    arr = np.array(losses)[None]
    spec = spec_for(arr)
    np.testing.assert_allclose(play_loop(RegretMatching(variant), arr, spec)[0], want, atol=P_ATOL)
    blocks = play_blocks(RegretMatching(variant), arr, spec, [1, len(losses) - 1])
    np.testing.assert_allclose(blocks[0], want, rtol=0, atol=P_ATOL)
    np.testing.assert_allclose(literal_regret_matching(losses, variant == "rm_plus"), want)
    _, tr = traced(
        RegretMatching(variant),
        Replay(path=save_matrix(tmp_path, arr[0])),
        tmp_path,
        horizon=len(losses),
        metrics={"regret": {}},
    )
    np.testing.assert_allclose(tr["probs"][0], want, rtol=0, atol=P_ATOL)


def test_probs_helper_uniform_when_no_positive_regret():
    p = regret_matching_probs(np.array([[0.0, 0.0], [-1.0, -3.0], [0.0, 2.0]]))
    np.testing.assert_array_equal(p, [[0.5, 0.5], [0.5, 0.5], [0.0, 1.0]])


# ----------------------------------------------------------------------------------------------
# the kernel is the readable rule


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("lo", "hi"), [(0.0, 1.0), (-1.0, 2.0)])
def test_kernel_equals_literal_rule(variant, lo, hi, tmp_path):
    rng = np.random.default_rng(11)
    n_rep, horizon, n_act = 3, 120, 5
    losses = lo + (hi - lo) * rng.random((n_rep, horizon, n_act))
    losses[1] = lo + (hi - lo) * np.round((losses[1] - lo) / (hi - lo))  # {lo, hi}: ties
    ways = three_ways(RegretMatching(variant), losses, tmp_path, lo, hi)
    for r in range(n_rep):
        want = literal_regret_matching(losses[r].tolist(), variant == "rm_plus", lo, hi)
        for label, got in ways.items():
            k = got.shape[1]
            np.testing.assert_allclose(got[r], want[:k], rtol=0, atol=P_ATOL, err_msg=label)
    assert_simplex(ways["engine"], variant)


# ----------------------------------------------------------------------------------------------
# the potential invariants and the declared bound


@pytest.mark.parametrize("variant", VARIANTS)
def test_potential_invariants(variant, tmp_path):
    # Notes of the class: max_i R_{t,i} ≤ sqrt(Σ_{s≤t} ‖r_s‖²) ≤ sqrt(N t), round by round, and for
    # RM⁺ the regrets never exceed the clipped state: R_{t,i} ≤ Q_{t,i}.
    rng = np.random.default_rng(3)
    losses = rng.random((4, 400, 6))
    losses[2:] = np.round(losses[2:])
    _, tr = traced(
        RegretMatching(variant),
        Replay(path=save_matrix(tmp_path, losses)),
        tmp_path,
        horizon=400,
        replicates=4,
        metrics={"regret": {}},
    )
    big_r = regrets_from_trace(tr)[:, 1:]
    inst = tr["expected"][:, :, None] - tr["losses"]
    energy = np.sqrt(np.cumsum((inst**2).sum(axis=2), axis=1))
    assert_below(big_r.max(axis=2), energy, "max R_t <= sqrt(sum ||r||^2)")
    assert_below(energy, np.sqrt(6 * np.arange(1, 401)), "sqrt(sum ||r||^2) <= sqrt(N t)")
    if variant == "rm_plus":
        q = np.zeros((4, 6))
        for t in range(400):
            q = np.maximum(q + inst[:, t], 0.0)
            assert_below(big_r[:, t], q, f"R_t <= Q_t at t={t + 1}")


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("n_act", [2, 5])
def test_declared_bound_on_catalog(variant, n_act, tmp_path):
    # the catalog (tests/helpers/experts.py) includes the adaptive greedy adversary; heavier_half
    # below is the other adaptive one
    checked = 0
    metrics = {"regret": {}, "bound": {}}
    for label, rows in play_catalog(RegretMatching(variant), tmp_path, n_act, 1000, metrics):
        checked += check_declared(rows, f"{variant} {label}")
        ts, bound = metric_table(rows, "bound:regret")
        np.testing.assert_allclose(bound[0], np.sqrt(n_act * ts), rtol=1e-12)
    assert checked > 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_declared_bound_adaptive_and_wide_range(variant, tmp_path):
    games = (*ADAPTIVE_GAMES, ("ftl_killer", {}, 2))
    player = RegretMatching(variant)
    rows = check_declared_adaptive_and_wide(player, variant, tmp_path, 2000, 500, games)
    # a declared range [−1, 2]: the bound scales by hi − lo = 3
    ts, bound = metric_table(rows, "bound:regret")
    np.testing.assert_allclose(bound[0], 3.0 * np.sqrt(4 * ts), rtol=1e-12)


def test_regret_bound_values():
    rm = RegretMatching()
    rm.reset(GameSpec("experts", 4, 100, (0.0, 2.0)), [np.random.default_rng(0)])
    assert rm.regret_bound(100) == pytest.approx(2.0 * math.sqrt(400.0), rel=1e-15)
    one = RegretMatching("rm_plus")
    one.reset(GameSpec("experts", 1, 10), [np.random.default_rng(0)])
    assert one.regret_bound(10) == 0.0


# ----------------------------------------------------------------------------------------------
# invariances


@pytest.mark.parametrize("variant", VARIANTS)
def test_scale_invariance(variant, tmp_path):
    # p depends on the regrets only through [R]_+/Σ[R]_+: multiplying every loss by c = ¼ (exact
    # in binary floating point) multiplies every regret by c and leaves p unchanged; the regret
    # metric is multiplied by c.
    rng = np.random.default_rng(8)
    losses = rng.random((3, 300, 5))
    kw = {"horizon": 300, "replicates": 3, "metrics": {"regret": {}}}
    rows_a, a = traced(
        RegretMatching(variant), Replay(path=save_matrix(tmp_path, losses)), tmp_path, **kw
    )
    rows_b, b = traced(
        RegretMatching(variant), Replay(path=save_matrix(tmp_path, losses / 4)), tmp_path, **kw
    )
    np.testing.assert_allclose(b["probs"], a["probs"], rtol=0, atol=P_ATOL)
    np.testing.assert_allclose(
        4 * metric_table(rows_b, "regret")[1], metric_table(rows_a, "regret")[1], atol=1e-9
    )


@pytest.mark.parametrize("variant", VARIANTS)
def test_affine_rescale_and_permutation(variant, tmp_path):
    check_affine_rescale(RegretMatching(variant), tmp_path, atol=1e-9)
    check_permutation_equivariance(RegretMatching(variant), tmp_path, dyadic=False, atol=1e-9)


# ----------------------------------------------------------------------------------------------
# game dynamics: self-play on matrix_game (average iterates)

GAP_T = 4000
GAP_CHECKPOINTS = [100, 1000, GAP_T]


def self_play_gap(name, params, n_actions=None, **game):
    """Duality gap of the average strategies when ``name`` plays itself on ``matrix_game``."""
    adversary = MatrixGame(**{"opponent": name, "opponent_params": params, **game})
    rows = run_game(
        name,
        adversary,
        player_params=params,
        n_actions=n_actions,
        horizon=GAP_T,
        seed=3,
        checkpoints=GAP_CHECKPOINTS,
        metrics=[DualityGap()],
    ).rows
    return rows.groupby("t").value.max()


def test_rock_paper_scissors_self_play_stays_at_equilibrium():
    # both start uniform, RPS's equilibrium: the expected losses are all equal, every regret is 0,
    # and both stay uniform, so the gap is exactly 0 (as for Hedge, test_matrix_game.py)
    for variant in VARIANTS:
        gap = self_play_gap("regret_matching", {"variant": variant}, game="rock_paper_scissors")
        assert (gap.abs() <= 1e-12).all(), variant


@pytest.mark.parametrize(("seed", "n_act"), [(1, 5), (2, 10), (3, 10)])
def test_random_game_self_play_gap(seed, n_act):
    # measured (T = 4000; gap at t = 100 / 1000 / 4000) on game_seed 1..3, N ∈ {5, 10}:
    #   RM 2.8e-2/8.3e-3/3.9e-3 .. 1.1e-1/3.6e-2/1.7e-2;
    #   RM⁺ 1.7e-2/3.1e-3/1.2e-3 .. 9.3e-2/2.2e-2/1.1e-2;
    #   Hedge (tuned η) 2.8e-1/5.2e-2/1.5e-2 .. 6.6e-1/1.0e-1/2.7e-2.
    # Asserted: the gaps shrink, RM⁺ ends below RM and both below tuned Hedge, and both obey
    # the bound gap ≤ (a_max − a_min)·2·sqrt(N/T) of the two players' declared regret bounds.
    rm = self_play_gap("regret_matching", {"variant": "rm"}, n_act, game_seed=seed)
    plus = self_play_gap("regret_matching", {"variant": "rm_plus"}, n_act, game_seed=seed)
    hedge = self_play_gap("hedge", {}, n_act, game_seed=seed)
    for gap in (rm, plus):
        assert gap[GAP_T] < gap[1000] < gap[100]
        # A uniform on [−1, 1] has a_max − a_min ≤ 2
        assert gap[GAP_T] <= 2.0 * 2.0 * math.sqrt(n_act / GAP_T)
    assert plus[GAP_T] < rm[GAP_T] < hedge[GAP_T]


def test_rock_paper_scissors_against_follow_the_leader():
    # an off-equilibrium start: the opponent is FTL with lowest-index ties (a pure strategy at
    # round 1). Measured (t = 100 / 1000 / 4000): RM 1.8e-1/6.0e-2/2.6e-2,
    # RM⁺ 1.0e-1/2.5e-2/2.0e-2.
    for variant in VARIANTS:
        rows = run_game(
            "regret_matching",
            MatrixGame(
                game="rock_paper_scissors", opponent="ftl", opponent_params={"tie_break": "lowest"}
            ),
            player_params={"variant": variant},
            horizon=GAP_T,
            seed=3,
            checkpoints=GAP_CHECKPOINTS,
            metrics=[DualityGap()],
        ).rows
        gap = rows.groupby("t").value.max()
        assert gap[GAP_T] < gap[1000] < gap[100], variant
        assert gap[GAP_T] < 0.05, variant


@pytest.mark.parametrize("plus", [False, True])
@pytest.mark.parametrize(("lo", "hi"), [(0.0, 1.0), (-1.0, 2.0), (2.0, 3.0)])
def test_kernel_is_the_per_round_arithmetic_bitwise(plus, lo, hi):
    """The kernel's doubles are the plain per-round rule's, operation for operation: the unit-range
    loss ``(l − lo)/scale`` (skipped on [0, 1], where it is ``l``), ``[R]_+ / Σ [R]_+``, and the
    regret update, in the same order."""
    from arena.players.regret_matching import _rm_play_block

    rng = np.random.default_rng(int(plus) + int(10 * (lo + 1.0)))
    n_rep, n, n_act = 3, 300, 7
    scale = hi - lo
    losses = lo + scale * rng.random((n_rep, n, n_act))
    losses[1] = lo + scale * (rng.random((n, n_act)) < 0.5)  # {lo, hi}
    losses[2, :, 0] = -0.0 if lo == 0.0 else lo
    cum = rng.normal(size=(n_rep, n_act))
    want_cum, want = cum.copy(), np.empty((n_rep, n, n_act))
    for r in range(n_rep):
        for j in range(n):
            c = want_cum[r]
            s = 0.0
            for i in range(n_act):
                if c[i] > 0.0:
                    s += c[i]
            for i in range(n_act):
                want[r, j, i] = (c[i] / s if c[i] > 0.0 else 0.0) if s > 0.0 else 1.0 / n_act
            z = [(losses[r, j, i] - lo) / scale for i in range(n_act)]
            mean = 0.0
            for i in range(n_act):
                mean += want[r, j, i] * z[i]
            for i in range(n_act):
                v = c[i] + (mean - z[i])
                c[i] = 0.0 if plus and v < 0.0 else v
    got_cum, got = cum.copy(), np.empty((n_rep, n, n_act))
    _rm_play_block(losses, got_cum, plus, lo, scale, got)
    assert got.tobytes() == want.tobytes()
    assert got_cum.tobytes() == want_cum.tobytes()
