"""Oracle tests of KT coin betting for OLO (``arena.players.kt``): Orabona & Pál (2016), Algorithm
1, Orabona & Pál 2016 (wealth = KT potential), Orabona & Pál 2016, Algorithm 1 (regret bound) and
Orabona & Pál 2016 (KT OLO).

Deterministic inequalities use ``lhs <= rhs + 1e-9·max(1, |rhs|)`` (our tolerance convention).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import validate_params
from arena.players.kt import KT, kt_olo_regret_bound
from arena.players.kt_experts import kt_log_potential
from tests.helpers import assert_below
from tests.helpers.oco import (
    bounded_spec,
    play_adaptive,
    play_loop,
    play_split,
    reset,
    stack_rounds,
)

ATOL = 1e-10
"""Literal transcription vs player: the same float64 operations in a different order (numpy
vectorized vs Python scalars); wealth multiplies by factors ≤ 2 per round, so 300 rounds of
~1e-16 relative rounding stay far below 1e-10 relative to the O(1..1e3) iterates."""

LOG_POTENTIAL_TOL = 1e-9
"""Orabona & Pál 2016: log-wealth against the lgamma form of log F_T, tolerance 1e-9."""


# ---------------------------------------------------------------------------------------------
# literal transcription (Orabona & Pál 2016, Algorithm 1; coordinate-wise 1-d bettors for "1d")


def literal_kt(grad_of, horizon, dim, variant, eps, scale):
    """One game in plain Python. ``grad_of(t, w)`` returns round t's gradient (a list) at ``w``.

    ball: w_t = (1/t)(ε + Σ_{s<t} ⟨c_s, w_s⟩) Σ_{s<t} c_s with c_s = −g_s/G;
    1d:   w_{t,i} = (1/t)(ε + Σ_{s<t} c_{s,i} w_{s,i}) Σ_{s<t} c_{s,i}.
    """
    coin_sum = [0.0] * dim
    wealth = eps if variant == "ball" else [eps] * dim
    out = []
    for t in range(1, horizon + 1):
        if variant == "ball":
            w = [wealth * coin_sum[i] / t for i in range(dim)]
        else:
            w = [wealth[i] * coin_sum[i] / t for i in range(dim)]
        out.append(w)
        g = grad_of(t, w)
        c = [-g[i] / scale for i in range(dim)]
        if variant == "ball":
            wealth += sum(c[i] * w[i] for i in range(dim))
        else:
            wealth = [wealth[i] + c[i] * w[i] for i in range(dim)]
        coin_sum = [coin_sum[i] + c[i] for i in range(dim)]
    return np.array(out)


def _logistic_grad(w, x, y):
    m = y * sum(w[i] * x[i] for i in range(len(x)))
    dl = -y / (1.0 + math.exp(m)) if m >= 0 else -y * (1.0 - 1.0 / (1.0 + math.exp(-m)))
    return [dl * xi for xi in x]


def _ball_vectors(rng, shape, radius):
    v = rng.standard_normal(shape)
    v /= np.linalg.norm(v, axis=-1, keepdims=True)
    return v * radius * rng.uniform(0, 1, (*shape[:-1], 1)) ** (1.0 / shape[-1])


STREAMS = ["linear", "logistic", "absolute"]


def _stream(kind, rng, n_rep, horizon, dim, scale):
    """A random stream whose gradients have norm ≤ ``scale`` and the matching spec."""
    if kind == "linear":
        data = RoundData(g=_ball_vectors(rng, (n_rep, horizon, dim), scale))
        return data, bounded_spec(dim, horizon, n_rep, loss="linear", gradient_bound=scale)
    x = _ball_vectors(rng, (n_rep, horizon, dim), scale)
    if kind == "logistic":
        y = rng.choice([-1.0, 1.0], size=(n_rep, horizon))
        spec = bounded_spec(
            dim, horizon, n_rep, loss="logistic", gradient_bound=scale, protocol="classification"
        )
    else:
        y = rng.normal(size=(n_rep, horizon))
        spec = bounded_spec(
            dim, horizon, n_rep, loss="absolute", gradient_bound=scale, protocol="regression"
        )
    return RoundData(x=x, y=y), spec


def _grad_fn(kind, data, r):
    if kind == "linear":
        return lambda t, w: list(data.g[r, t - 1])
    x, y = data.x[r], data.y[r]
    if kind == "logistic":
        return lambda t, w: _logistic_grad(w, list(x[t - 1]), float(y[t - 1]))

    def absolute(t, w):
        p = sum(w[i] * x[t - 1][i] for i in range(len(w)))
        s = 1.0 if p > y[t - 1] else (-1.0 if p < y[t - 1] else 0.0)
        return [s * xi for xi in x[t - 1]]

    return absolute


@pytest.mark.parametrize("variant", ["ball", "1d"])
@pytest.mark.parametrize("kind", STREAMS)
def test_matches_literal_transcription(variant, kind):
    rng = np.random.default_rng(7)
    n_rep, horizon, dim, scale, eps = 3, 150, 4, 2.5, 0.7
    data, spec = _stream(kind, rng, n_rep, horizon, dim, scale)
    want = np.stack(
        [
            literal_kt(_grad_fn(kind, data, r), horizon, dim, variant, eps, scale)
            for r in range(n_rep)
        ]
    )
    player = KT(variant=variant, initial_wealth=eps)
    got = play_loop(reset(player, spec), spec, data)
    np.testing.assert_allclose(got, want, rtol=ATOL, atol=ATOL)
    for cuts in ([horizon], [1, 7, 50], [99]):
        got = play_split(reset(KT(variant=variant, initial_wealth=eps), spec), spec, data, cuts)
        np.testing.assert_allclose(got, want, rtol=ATOL, atol=ATOL)


def test_explicit_gradient_bound_overrides_the_game():
    rng = np.random.default_rng(3)
    data, spec = _stream("linear", rng, 2, 60, 3, 1.0)
    want = np.stack(
        [literal_kt(_grad_fn("linear", data, r), 60, 3, "ball", 1.0, 4.0) for r in range(2)]
    )
    got = play_loop(reset(KT(gradient_bound=4.0), spec), spec, data)
    np.testing.assert_allclose(got, want, rtol=ATOL, atol=ATOL)


def test_variants_coincide_in_one_dimension():
    rng = np.random.default_rng(4)
    data, spec = _stream("linear", rng, 2, 100, 1, 1.0)
    a = play_loop(reset(KT(variant="ball"), spec), spec, data)
    b = play_loop(reset(KT(variant="1d"), spec), spec, data)
    np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------------------------------
# wealth = KT potential (Orabona & Pál 2016)


def _play_coins(coins, eps=1.0, variant="ball"):
    """Feed coins (R, T, d) as linear losses g = −c with G = 1; return the player."""
    n_rep, horizon, dim = coins.shape
    spec = bounded_spec(dim, horizon, n_rep, gradient_bound=1.0)
    player = reset(KT(variant=variant, initial_wealth=eps), spec)
    play_loop(player, spec, RoundData(g=-coins))
    return player


@pytest.mark.parametrize("eps", [1.0, 0.01, 50.0])
def test_wealth_equals_kt_potential_on_pm1_coins(eps):
    rng = np.random.default_rng(11)
    for horizon in (1, 2, 17, 300):
        coins = rng.choice([-1.0, 1.0], size=(40, horizon, 1))
        coins[0] = 1.0  # all heads: the extreme of the potential's domain
        player = _play_coins(coins, eps)
        log_wealth = np.log(player.wealth())
        want = kt_log_potential(horizon, coins.sum(axis=(1, 2)), eps=eps)
        np.testing.assert_allclose(log_wealth, want, rtol=0, atol=LOG_POTENTIAL_TOL)


def test_wealth_dominates_kt_potential_on_fractional_coins():
    rng = np.random.default_rng(12)
    coins = rng.uniform(-1, 1, size=(100, 250, 1)) ** 3
    coins[:20] = np.sign(coins[:20]) * np.sqrt(np.abs(coins[:20]))  # mass near ±1 too
    player = _play_coins(coins)
    for t_check in (250,):
        want = kt_log_potential(t_check, coins.sum(axis=(1, 2)))
        assert_below(want, np.log(player.wealth()), "log F_T(Σc) ≤ log Wealth_T")


def test_hilbert_wealth_dominates_kt_potential_of_the_norm():
    """The reduction behind Orabona & Pál's Hilbert-space theorem: Wealth_T ≥ F_T(‖Σ c‖)
    for vector coins in the unit ball (reduction-hilbert-space.tex)."""
    rng = np.random.default_rng(13)
    for dim in (2, 5):
        coins = _ball_vectors(rng, (60, 200, dim), 1.0)
        coins[:10] /= np.linalg.norm(coins[:10], axis=-1, keepdims=True)  # unit coins
        coins[10:20, :, :] = coins[10:20, :1, :] / np.linalg.norm(
            coins[10:20, :1, :], axis=-1, keepdims=True
        )  # constant
        player = _play_coins(coins)
        norm = np.linalg.norm(coins.sum(axis=1), axis=1)
        assert_below(kt_log_potential(200, norm), np.log(player.wealth()), f"d = {dim}")


def test_wealth_bookkeeping_matches_the_definition():
    rng = np.random.default_rng(14)
    data, spec = _stream("linear", rng, 3, 80, 3, 2.0)
    for variant in ("ball", "1d"):
        player = reset(KT(variant=variant, initial_wealth=0.5), spec)
        w = play_loop(player, spec, data)
        gains = -(data.g * w) / 2.0
        want = 0.5 + (gains.sum(axis=(1, 2)) if variant == "ball" else gains.sum(axis=1))
        np.testing.assert_allclose(player.wealth(), want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(player.coin_sum(), -data.g.sum(axis=1) / 2.0, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# regret bound (Orabona & Pál 2016, Algorithm 1)

U_GRID = [0.0, 1e-9, 1e-4, 0.03, 0.5, 1.0, 3.0, 30.0, 1e3, 1e6, 1e10]


def literal_bound(u, t, eps):
    """Orabona & Pál (2016), Corollary for Algorithm 1, transcribed."""
    return u * math.sqrt(t * math.log(1 + 24 * t**2 * u**2 / eps**2)) + eps * (
        1 - 1 / (math.e * math.sqrt(math.pi * t))
    )


def test_bound_function_matches_the_formula():
    for u in U_GRID:
        for t in (1, 2, 10, 1000):
            for eps in (0.1, 1.0, 7.0):
                want = literal_bound(u, t, eps)
                assert math.isclose(float(kt_olo_regret_bound(u, t, eps)), want, rel_tol=1e-12)
    spec = bounded_spec(3, 10, gradient_bound=2.0)
    ball = reset(KT(initial_wealth=0.5), spec)
    assert math.isclose(ball.regret_bound(3.0, 10), 2.0 * literal_bound(3.0, 10, 0.5))
    coord = reset(KT(variant="1d", initial_wealth=0.5), spec)
    want = 2.0 * sum(literal_bound(u, 10, 0.5) for u in (1.0, 0.0, 4.0))
    assert math.isclose(coord.regret_bound([1.0, 0.0, -4.0], 10), want, rel_tol=1e-12)


def _adaptive_rules(scale, dim, rng):
    e1 = np.zeros(dim)
    e1[0] = 1.0

    def along(sign):
        def rule(t, w):
            n = np.linalg.norm(w, axis=1, keepdims=True)
            d = np.where(n > 0, w / np.where(n > 0, n, 1.0), e1)
            return RoundData(g=sign * scale * d)

        return rule

    def alternating(t, w):
        return RoundData(g=np.tile(scale * (-1.0) ** t * e1, (w.shape[0], 1)))

    def constant(t, w):
        return RoundData(g=np.tile(-scale * e1, (w.shape[0], 1)))

    def random_ball(t, w):
        return RoundData(g=_ball_vectors(rng, w.shape, scale))

    def sign_chaser(t, w):  # per coordinate, push against the current bet (or +1 at 0)
        return RoundData(g=scale / math.sqrt(dim) * np.where(w >= 0, 1.0, -1.0))

    return {
        "against_bet": along(1.0),
        "with_bet": along(-1.0),
        "alternating": alternating,
        "constant": constant,
        "random": random_ball,
        "sign_chaser": sign_chaser,
    }


@pytest.mark.parametrize("variant", ["ball", "1d"])
@pytest.mark.parametrize("dim", [1, 3])
def test_regret_bound_holds_for_every_comparator_scale(variant, dim):
    """Worst comparator of each scale in closed form: for ‖u‖ = U (ball),
    max Σ⟨g, w − u⟩ = Σ⟨g, w⟩ + U‖Σg‖; per coordinate |u_i| = U_i gives Σ⟨g,w⟩ + Σ U_i|Σg_i|."""
    rng = np.random.default_rng(21 + dim)
    scale, eps, horizon, n_rep = 1.5, 1.0, 300, 2
    spec = bounded_spec(dim, horizon, n_rep, gradient_bound=scale)
    worst_ratio = 0.0
    for name, rule in _adaptive_rules(scale, dim, rng).items():
        player = reset(KT(variant=variant, initial_wealth=eps), spec)
        w, rounds = play_adaptive(player, spec, rule, horizon)
        g = stack_rounds(rounds).g
        loss = np.cumsum(np.einsum("rtd,rtd->rt", g, w), axis=1)  # Σ_{s≤t} ⟨g_s, w_s⟩
        cum_g = np.cumsum(g, axis=1)
        ts = np.arange(1, horizon + 1)
        for u in U_GRID:
            if variant == "ball":
                regret = loss + u * np.linalg.norm(cum_g, axis=2)
                bound = np.array([scale * literal_bound(u, t, eps) for t in ts])
            else:  # the same |u_i| = u on every coordinate
                regret = loss + u * np.abs(cum_g).sum(axis=2)
                bound = np.array([scale * dim * literal_bound(u, t, eps) for t in ts])
            assert_below(regret, bound[None, :], f"{name}, U = {u}")
            worst_ratio = max(worst_ratio, float((regret / bound).max()))
        # mixed per-coordinate scales for the 1d variant
        if variant == "1d" and dim > 1:
            for _ in range(20):
                u = 10.0 ** rng.uniform(-6, 6, size=dim)
                regret = loss + (np.abs(cum_g) * u).sum(axis=2)
                bound = np.array([scale * sum(literal_bound(ui, t, eps) for ui in u) for t in ts])
                assert_below(regret, bound[None, :], f"{name}, mixed U")
    assert worst_ratio > 0.05  # the bound is not vacuous on these streams


def test_parameter_free_growth_against_a_far_comparator():
    """Against a constant reward the bettor's wealth grows exponentially, so its regret to
    u = U·e_1 is ~U√(T ln(U T)) for huge U without any tuning (the bound's shape)."""
    spec = bounded_spec(1, 400, gradient_bound=1.0)
    player = reset(KT(), spec)
    w, _ = play_adaptive(player, spec, lambda t, w: RoundData(g=-np.ones_like(w)), 400)
    assert w[0, -1, 0] > 1e50  # bets grow with the wealth: w_t = Wealth_{t−1}(t−1)/t
    loss = -w[0, :, 0].sum()
    assert loss < -1e50  # the player gains: negative loss, so regret to modest U is negative


# ---------------------------------------------------------------------------------------------
# configuration


@pytest.mark.parametrize(
    ("params", "spec_kw", "parameter"),
    [
        ({"variant": "2d"}, {}, "variant"),
        ({"initial_wealth": 0.0}, {}, "initial_wealth"),
        ({"initial_wealth": math.inf}, {}, "initial_wealth"),
        ({}, {"domain": Domain("ball", 1.0)}, "domain"),
        ({}, {"gradient_bound": None}, "gradient_bound"),
        ({"gradient_bound": -1.0}, {}, "gradient_bound"),
    ],
)
def test_config_errors(params, spec_kw, parameter):
    spec, player = bounded_spec(2, 10, **spec_kw), KT(**params)
    with pytest.raises(ConfigError) as info:
        validate_params(player)  # the declared constraints first, as the driver checks them
        reset(player, spec)  # then what depends on the game
    assert info.value.parameter == parameter and info.value.component == "player kt"


def test_declares_no_bound():
    spec = bounded_spec(2, 10)
    assert reset(KT(), spec).bounds(5) == {}


# ---------------------------------------------------------------------------------------------
# end to end with the OCO engine


def test_engine_end_to_end(tmp_path):
    """arena's OCO engine on an unconstrained linear game with a declared comparator u*: the
    traced bets equal the literal transcription and ``comparator_regret`` at c·u* stays below
    ``regret_bound(c, t)`` for c from 0.1 to 1e4."""
    from arena.game import run_game
    from tests.helpers.oco import LinearStream, read_oco_trace

    dim, horizon, scales = 3, 400, [0.1, 1.0, 10.0, 1e4]
    path = tmp_path / "trace.parquet"
    run = run_game(
        KT(),
        LinearStream(G=2.0, domain="unconstrained", drift=0.3),
        n_actions=dim,
        horizon=horizon,
        replicates=2,
        seed=5,
        metrics={"loss": {}, "comparator_regret": {"c": scales}},
        trace_path=path,
    )
    rows = run.rows
    ref = reset(KT(), bounded_spec(dim, horizon, gradient_bound=2.0))
    creg = rows[rows.metric == "comparator_regret"]
    assert set(creg.param) == set(scales)
    bound = np.array([ref.regret_bound(c, t) for c, t in zip(creg.param, creg.t, strict=True)])
    assert_below(creg.value.to_numpy(), bound, "comparator_regret")
    w, g = read_oco_trace(path, dim)
    for r in range(2):
        want = literal_kt(lambda t, x, r=r: list(g[r, t - 1]), horizon, dim, "ball", 1.0, 2.0)
        np.testing.assert_allclose(w[r], want, rtol=ATOL, atol=ATOL)
