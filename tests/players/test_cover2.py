"""Oracle tests of Cover's two-expert minimax learner (``arena.players.cover2``): Cover 1965,
Cover 1965, Cover 1965. Exact rationals (``fractions.Fraction``) are the reference wherever T is
small.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from functools import cache

import numpy as np
import pytest
from scipy.stats import binom

from arena import GameSpec, play
from arena.adversaries.replay import Replay
from arena.errors import ConfigError, GameError
from arena.players.cover2 import Cover2, cover_value, log_central
from tests.helpers import assert_below, check_declared, metric_table, save_matrix, traced
from tests.helpers.experts import assert_simplex, play_blocks, play_catalog, play_loop, spec_for

# Cover's values (Cover 1965), computed exactly: V_T exact for T = 1..10, and to 6 decimals at T =
# 100, 1000
V_TABLE = {
    1: Fraction(1, 2),
    2: Fraction(1, 2),
    3: Fraction(3, 4),
    4: Fraction(3, 4),
    5: Fraction(15, 16),
    6: Fraction(15, 16),
    7: Fraction(35, 32),
    8: Fraction(35, 32),
    9: Fraction(315, 256),
    10: Fraction(315, 256),
}
V_100, V_1000 = 3.979462, 12.612509

P_ATOL = 1e-12
"""p is a probability built from O(T) additions of binomial terms ≤ 1 (relative error ~1e-16
each): 1e-12 is a thousand times the rounding at T ≤ 10^3."""


@cache
def exact_value(r: int, g: int) -> Fraction:
    """Cover 1965: V_0 = 0; V_r(0) = ½ + V_{r−1}(1); V_r(g) = ½(V_{r−1}(g−1) +
    V_{r−1}(g+1)) for g ≥ 1 (the passes (0,0), (1,1) never change the value)."""
    if r == 0:
        return Fraction(0)
    if g == 0:
        return Fraction(1, 2) + exact_value(r - 1, 1)
    return (exact_value(r - 1, g - 1) + exact_value(r - 1, g + 1)) / 2


def literal_cover(losses, horizon):
    """Cover 1965 learner, in exact rationals: weight 1 − (V_{r−1}(g−1) − V_{r−1}(g+1))/2 on the
    leader
    (r = rounds to go, including this one), ½ at a tie. Returns (p_t as Fractions, regret_t)."""
    cum = [0, 0]
    loss = Fraction(0)
    probs, regrets = [], []
    for t, (a, b) in enumerate(losses, start=1):
        r, g = horizon - t + 1, abs(cum[0] - cum[1])
        if g == 0:
            p = [Fraction(1, 2), Fraction(1, 2)]
        else:
            lead = 0 if cum[0] < cum[1] else 1
            q = 1 - (exact_value(r - 1, g - 1) - exact_value(r - 1, g + 1)) / 2
            p = [q, 1 - q] if lead == 0 else [1 - q, q]
        probs.append(p)
        loss += p[0] * int(a) + p[1] * int(b)
        cum[0] += int(a)
        cum[1] += int(b)
        regrets.append(loss - min(cum))
    return probs, regrets


MOVES = {0: (1.0, 0.0), 1: (0.0, 1.0), 2: (0.0, 0.0), 3: (1.0, 1.0)}


def random_sequence(rng, horizon, passes):
    kinds = rng.integers(0, 4 if passes else 2, horizon)
    return np.array([MOVES[int(k)] for k in kinds])


# ----------------------------------------------------------------------------------------------
# golden values and the exhaustive exact test (Cover 1965, Cover 1965)


def test_value_table():
    for horizon, want in V_TABLE.items():
        assert exact_value(horizon, 0) == want
        assert cover_value(horizon) == float(want)  # dyadic: exact in float64
    # closed form ½ Σ_{j ≤ ⌊(T−1)/2⌋} C(2j, j)/4^j, exactly, up to T = 40
    for horizon in range(1, 41):
        closed = Fraction(1, 2) * sum(
            Fraction(math.comb(2 * j, j), 4**j) for j in range((horizon - 1) // 2 + 1)
        )
        assert exact_value(horizon, 0) == closed
        assert cover_value(horizon) == pytest.approx(float(closed), rel=1e-15)
    assert round(cover_value(100), 6) == V_100
    assert round(cover_value(1000), 6) == V_1000
    # the series branch of log_central against exact big-integer binomials
    for j in (499, 500, 501, 5000, 123456):
        exact = math.log(math.comb(2 * j, j) / 4**j)  # int division: correctly rounded
        assert log_central(j) == pytest.approx(exact, rel=1e-14, abs=1e-14)


@pytest.mark.parametrize("horizon", range(1, 11))
def test_regret_is_exactly_V_T_on_every_binary_sequence(horizon):
    # Cover 1965: on every (1,0)/(0,1) sequence Cover's learner has regret exactly V_T. All 2^T
    # sequences at once (one replicate each), the float player to 1e-12 and the Fraction
    # transcription exactly.
    seqs = np.array(list(itertools.product([0, 1], repeat=horizon)))
    losses = np.stack([seqs == 0, seqs == 1], axis=-1).astype(float)
    probs = play_loop(Cover2(), losses, spec_for(losses))
    regret = (probs * losses).sum(axis=(1, 2)) - losses.sum(axis=1).min(axis=1)
    value = float(V_TABLE[horizon])
    assert np.abs(regret - value).max() <= 1e-12
    for seq in losses:
        exact_p, exact_regret = literal_cover(seq, horizon)
        assert exact_regret[-1] == V_TABLE[horizon]
    # the float player's p equals the exact p
    for r in range(0, len(losses), max(1, len(losses) // 64)):
        exact_p, _ = literal_cover(losses[r], horizon)
        np.testing.assert_allclose(probs[r], np.array(exact_p, dtype=float), rtol=0, atol=P_ATOL)


@pytest.mark.parametrize("horizon", [5, 10, 17, 40, 200])
def test_matches_exact_learner_with_passes(horizon, tmp_path):
    # Cover 1965 exact test on random sequences (200 at T ∈ {5, 10, 17, 40}), here with
    # the passes (0,0)/(1,1) too: p_t equals the exact rational learner, through predict/update,
    # play_block (several splits) and the engine; regret_t ≤ V_T at every t, with
    # regret_t + V_{T−t}(g_t) = V_T while no pass has occurred and ≤ V_T after.
    rng = np.random.default_rng(horizon)
    n_seq = 40 if horizon <= 40 else 6
    losses = np.stack([random_sequence(rng, horizon, passes=s % 2 == 1) for s in range(n_seq)])
    spec = spec_for(losses)
    got = play_loop(Cover2(), losses, spec)
    value = exact_value(horizon, 0)
    for s, seq in enumerate(losses):
        exact_p, exact_regret = literal_cover(seq, horizon)
        np.testing.assert_allclose(got[s], np.array(exact_p, dtype=float), rtol=0, atol=P_ATOL)
        cum = np.cumsum(seq, axis=0)
        passed = np.cumsum(seq[:, 0] == seq[:, 1]) > 0
        for t in range(1, horizon + 1):
            to_go = exact_value(horizon - t, int(abs(cum[t - 1, 0] - cum[t - 1, 1])))
            if passed[t - 1]:
                assert exact_regret[t - 1] + to_go <= value
            else:
                assert exact_regret[t - 1] + to_go == value
    for cuts in ([1], [2, 3, horizon - 1], list(range(0, horizon, 4))):
        np.testing.assert_array_equal(play_blocks(Cover2(), losses, spec, cuts=cuts), got)
    _, tr = traced(
        Cover2(),
        Replay(path=save_matrix(tmp_path, losses)),
        tmp_path,
        horizon=horizon,
        replicates=n_seq,
        metrics={"regret": {}},
    )
    np.testing.assert_array_equal(tr["probs"], got)
    assert_simplex(tr["probs"], "trace")


def test_long_game_against_binomial_cdf():
    # u_n(g) = P(S_n < g) + ½ P(S_n = g) (the player's closed form of the leader's weight) against
    # scipy's binomial cdf at T = 10^5, and the final regret against V_T on a pass-free sequence:
    # 10^5 additions of terms ≤ 1 in Ĥ ≈ 5·10^4 leave ~1e-9 of rounding
    horizon = 100_000
    rng = np.random.default_rng(1)
    losses = random_sequence(rng, horizon, passes=False)[None]
    p = Cover2()
    p.reset(spec_for(losses), [None])
    probs = p.play_block(losses)[0]
    regret = float((probs * losses[0]).sum() - losses[0].sum(axis=0).min())
    assert regret == pytest.approx(cover_value(horizon), abs=1e-8)
    cum = np.vstack([[0, 0], np.cumsum(losses[0], axis=0)])[:-1]
    gap, leader = np.abs(cum[:, 0] - cum[:, 1]), np.argmin(cum, axis=1)
    for t in rng.choice(horizon, 300, replace=False):
        n, g = horizon - (t + 1), int(gap[t])
        if g == 0:
            continue
        # S_n = 2B − n with B ~ Bin(n, ½)
        below = binom.cdf(math.ceil((n + g) / 2) - 1, n, 0.5)
        at = binom.pmf((n + g) // 2, n, 0.5) if (n + g) % 2 == 0 else 0.0
        assert probs[t, leader[t]] == pytest.approx(below + 0.5 * at, abs=1e-12), t


# ----------------------------------------------------------------------------------------------
# declared bound V_T on the binary catalog


@pytest.mark.parametrize("horizon", [200, 2000])
def test_declared_bound_holds_on_the_catalog(horizon, tmp_path):
    metrics = {"regret": {}, "bound": {}}
    checked = 0
    for label, rows in play_catalog(Cover2(), tmp_path, 2, horizon, metrics, binary=True):
        checked += check_declared(rows, label)
        declared = metric_table(rows, "bound:regret")[1]
        assert np.all(declared == cover_value(horizon))
    assert checked > 0


def test_killer_and_greedy_force_exactly_V_T():
    # the FTL killer and greedy play only (1,0)/(0,1) vectors against two experts (greedy with
    # ties="random"), so the regret at T is exactly V_T (Cover 1965)
    horizon = 1000
    rows = play(
        Cover2(), "greedy", n_actions=2, horizon=horizon, replicates=3, metrics={"regret": {}}
    )
    final = rows[rows.t == horizon].value.to_numpy()
    np.testing.assert_allclose(final, cover_value(horizon), rtol=0, atol=1e-9)
    assert_below(rows.value.to_numpy(), cover_value(horizon), "greedy")


# ----------------------------------------------------------------------------------------------
# symmetry, ranges, refusals


def test_symmetry_and_declared_range(tmp_path):
    rng = np.random.default_rng(4)
    losses = np.stack([random_sequence(rng, 300, passes=True) for _ in range(3)])
    spec = spec_for(losses)
    a = play_loop(Cover2(), losses, spec)
    np.testing.assert_array_equal(play_loop(Cover2(), losses[..., ::-1].copy(), spec), a[..., ::-1])
    # a pass (0,0) and a pass (1,1) are the same move
    flipped = losses.copy()
    same = flipped[..., 0] == flipped[..., 1]
    flipped[same] = 1.0 - flipped[same]
    np.testing.assert_array_equal(play_loop(Cover2(), flipped, spec), a)
    # raw losses {lo, hi} on the declared range: the same p; regret and bound scale by hi − lo
    lo, hi = -3.0, 1.0
    kw = {"horizon": 300, "replicates": 3, "metrics": {"regret": {}, "bound": {}}}
    rows_a, ta = traced(Cover2(), Replay(path=save_matrix(tmp_path, losses)), tmp_path, **kw)
    wide = Replay(path=save_matrix(tmp_path, lo + (hi - lo) * losses), loss_range=[lo, hi])
    rows_b, tb = traced(Cover2(), wide, tmp_path, **kw)
    np.testing.assert_array_equal(tb["probs"], ta["probs"])
    for metric in ("regret", "bound:regret"):
        np.testing.assert_allclose(
            metric_table(rows_b, metric)[1], 4.0 * metric_table(rows_a, metric)[1], rtol=1e-12
        )


def test_refusals():
    with pytest.raises(ConfigError, match="two experts"):
        Cover2().reset(GameSpec("experts", 3, 10), [None])
    with pytest.raises(ConfigError, match="horizon"):
        Cover2().reset(GameSpec("experts", 2, None), [None])
    p = Cover2()
    p.reset(GameSpec("experts", 2, 10, n_replicates=2), [None, None])
    p.update(np.array([[1.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="round 2, replicate 1"):
        p.update(np.array([[1.0, 0.0], [0.5, 0.0]]))
    p = Cover2()
    p.reset(GameSpec("experts", 2, 10), [None])
    with pytest.raises(ValueError, match="round 4"):
        p.play_block(np.array([[[1.0, 0.0]] * 3 + [[0.0, 0.25]]]))
    # through the engine: the FTL killer's first round (½, 0) is refused, naming round 1
    with pytest.raises(GameError, match="round 1"):
        play(Cover2(), "ftl_killer", n_actions=2, horizon=10, metrics={"regret": {}})
