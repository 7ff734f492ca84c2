"""Oracle tests of continuous exponential weights (``arena.players.continuous_exp_weights``): Luo
2016, Algorithm 25 and Theorem 22, with the EXP, 2-norm and NormalHedge.DT potentials of §2.1.4.

Deterministic inequalities use ``lhs <= rhs + 1e-9·max(1, |rhs|)`` (our tolerance convention).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import truncnorm

from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import validate_params
from arena.players.continuous_exp_weights import (
    LAMBDAS,
    ContinuousExpWeights,
    composite_gauss_legendre,
    window_masses,
)
from arena.players.drifting_potential import potential_values
from tests.helpers import assert_below
from tests.helpers.oco import (
    anti_gradient,
    bounded_spec,
    drive,
    engine_check,
    follow_sign,
    linearized_regret,
    play_loop,
    play_split,
    reset,
)

QUADRATURE_ATOL = 1e-12
"""The exp potential against closed forms: its weight e^{−ηs/B} is analytic, and a 16-node
Gauss–Legendre panel integrates e^{cx}, x e^{cx} to ~2e-15 relative while |c|h ≤ 20 (3e-12 at
30); the games below keep |c|h ≤ 25, so the means agree to ~1e-13 (observed ≤ 2e-13)."""

KINK_ATOL = 3e-8
"""two_norm and nh_dt against adaptive quadrature: their weights are C¹ only where s = ±1, so a
panel crossing those points contributes O(h³) (observed 8e-9 with 64 panels; 3e-7 with 16)."""


def exp_mean(a, radius):
    """Mean of the density ∝ e^{a x} on [−r, r]: r coth(ar) − 1/a (a r²/3 near a = 0)."""
    a = np.asarray(a, dtype=np.float64)
    small = np.abs(a * radius) < 1e-5
    safe = np.where(small, 1.0, a)
    return np.where(small, a * radius**2 / 3.0, radius / np.tanh(safe * radius) - 1.0 / safe)


# ---------------------------------------------------------------------------------------------
# the integrals: closed forms and a literal transcription of Algorithm 25


@pytest.mark.parametrize(
    ("dim", "domain", "eta", "drift"),
    [
        pytest.param(1, Domain("ball", 1.5), None, 0.3, id="interval-tuned"),
        pytest.param(1, Domain("box", 0.5), 25.0, 0.9, id="interval-peaked"),
        pytest.param(2, Domain("box", 1.0), None, 0.3, id="square-tuned"),
    ],
)
def test_exp_potential_matches_closed_form_on_linear_losses(dim, domain, eta, drift):
    """p_t(x) ∝ exp(−(η/B)⟨Σ_{τ<t} g_τ, x⟩) factorizes over the coordinates of a box: each
    coordinate of w_t is the closed-form mean of a truncated exponential. In the peaked game
    the log-density falls by up to ~21 across a panel (~1350 across the interval)."""
    rng = np.random.default_rng(dim)
    horizon, n_rep, radius = 120, 3 - dim, domain.radius  # 65 536 nodes on the square
    g = (rng.uniform(-1, 1, (n_rep, horizon, dim)) + drift) / (2 * math.sqrt(dim))
    spec = bounded_spec(dim, horizon, n_rep, domain=domain, gradient_bound=1.0)
    params = {} if eta is None else {"eta": eta}
    player = reset(ContinuousExpWeights(**params), spec)
    got = player.play_block(RoundData(g=g), spec)
    past = np.concatenate([np.zeros((n_rep, 1, dim)), np.cumsum(g, axis=1)[:, :-1]], axis=1)
    scale = 1.0 * domain.diameter(dim)  # B = G·D
    want = exp_mean(-player.step_rate * past / scale, radius)
    np.testing.assert_allclose(got, want, rtol=0, atol=QUADRATURE_ATOL * radius)
    if eta is None:
        assert player.step_rate == math.sqrt(2 * dim * math.log(horizon) / horizon)
    for cuts in ([1, 50], [119]):
        split = play_split(reset(ContinuousExpWeights(**params), spec), spec, RoundData(g=g), cuts)
        np.testing.assert_array_equal(split, got)


@pytest.mark.parametrize("dim", [1, 2])
def test_exp_potential_matches_truncated_gaussian_on_strongly_convex_losses(dim):
    """f_τ(x) = ⟨g_τ, x⟩ + (σ/2)‖x − z_τ‖²: the density ∝ exp(−(η/B)Σ_τ f_τ(x)) is a Gaussian
    N(m, v) per coordinate, v = B/(ησt), m = (Σz − Σg/σ)/t, truncated to [−r, r]; the
    predictions follow an adaptive rule g_t = −w_t/‖w_t‖ (they shape the data)."""
    rng = np.random.default_rng(10 + dim)
    horizon, sigma, radius = 60, 2.0, 1.0
    z = rng.uniform(-0.6, 0.6, (1, horizon, dim))
    grad_bound = 1.0 + sigma * 2 * radius * math.sqrt(dim)
    spec = bounded_spec(
        dim, horizon, 1, domain=Domain("box", radius), sigma=sigma, gradient_bound=grad_bound
    )
    rule = anti_gradient(1.0)

    def reveal(t, w):
        return RoundData(g=rule(t, w).g, z=z[:, t - 1])

    run = drive(reset(ContinuousExpWeights(panels=8 * dim), spec), spec, reveal=reveal, horizon=20)
    player = reset(ContinuousExpWeights(panels=8 * dim), spec)
    got = play_loop(player, spec, run.data)[0]
    np.testing.assert_array_equal(got, run.w[0])
    eta, scale = player.step_rate, grad_bound * Domain("box", radius).diameter(dim)
    for t in range(1, 20):  # w_{t+1} from rounds 1..t
        gs, zs = run.data.g[0, :t].sum(0), run.data.z[0, :t].sum(0)
        mean, sd = (zs - gs / sigma) / t, math.sqrt(scale / (eta * sigma * t))
        want = truncnorm.mean((-radius - mean) / sd, (radius - mean) / sd, loc=mean, scale=sd)
        np.testing.assert_allclose(got[t], want, rtol=0, atol=1e-12)


def literal_algorithm_25(values_at, horizon, radius, scale, potential, eta=math.nan):
    """Algorithm 25 on [−r, r] step by step: s_{t−1}(x) = Σ_{τ<t}(f_τ(x) − f_τ(w_τ))/B, the
    density p_t(x) ∝ Φ_t(s_{t−1}(x) − 1) − Φ_t(s_{t−1}(x) + 1) with Φ the named potential
    (:func:`arena.players.drifting_potential.potential_values`, the potential itself, not its
    differenced weights) and w_t = ∫x p_t / ∫p_t by adaptive quadrature (scipy's ``quad``),
    split where s = ±1 (kinks of the 2-norm and NH.DT weights) when s is linear."""
    past = []  # (f_τ, f_τ(w_τ))
    out = []
    for t in range(1, horizon + 1):

        def s_of(x, past=past):
            return sum(f(x) - f_w for f, f_w in past) / scale

        def weight(x, t=t, s_of=s_of):
            s = np.array([s_of(x)])
            lo = potential_values(potential, t, s - 1.0, eta=eta)
            hi = potential_values(potential, t, s + 1.0, eta=eta)
            return float(lo[0] - hi[0])

        s0, s1 = s_of(0.0), s_of(1.0)
        slope = s1 - s0
        kinks = [] if slope == 0 else [(c - s0) / slope for c in (-1.0, 1.0)]
        points = [x for x in kinks if -radius < x < radius] or None
        opts = {"points": points, "epsabs": 1e-14, "epsrel": 1e-12, "limit": 400}
        den = quad(weight, -radius, radius, **opts)[0]
        # ∫(x + r)p ≥ 0 has no cancellation, unlike ∫x p when w is near 0
        shifted = quad(lambda x, weight=weight: (x + radius) * weight(x), -radius, radius, **opts)
        w = shifted[0] / den - radius
        out.append(w)
        f = values_at(t)
        past.append((f, f(w)))
    return np.array(out)


@pytest.mark.parametrize("potential", ["two_norm", "nh_dt"])
def test_parameter_free_potentials_match_literal_algorithm_25(potential):
    rng = np.random.default_rng(5)
    horizon, radius = 40, 1.0
    g = rng.uniform(-1, 1, horizon) + 0.3
    spec = bounded_spec(1, horizon, 1, domain=Domain("ball", radius), gradient_bound=1.3)
    player = reset(ContinuousExpWeights(potential=potential), spec)
    got = play_loop(player, spec, RoundData(g=g[None, :, None]))[0, :, 0]
    want = literal_algorithm_25(
        lambda t: lambda x, c=g[t - 1]: c * x, horizon, radius, 1.3 * 2, potential
    )
    np.testing.assert_allclose(got, want, rtol=0, atol=KINK_ATOL)
    assert np.abs(got).max() > 0.3  # the chips moved: not a trivial uniform mean


def test_exp_potential_matches_literal_algorithm_25_on_logistic_losses():
    """A non-linear loss (logistic, σ = 0.5): the player evaluates every f_τ at its nodes; the
    transcription integrates the same density adaptively (smooth: agreement ~1e-12)."""
    rng = np.random.default_rng(6)
    horizon, sigma = 30, 0.5
    x = rng.uniform(-1, 1, (1, horizon, 1))
    y = np.where(rng.uniform(size=(1, horizon)) < 0.7, 1.0, -1.0)
    z = rng.uniform(-0.5, 0.5, (1, horizon, 1))
    spec = bounded_spec(
        1, horizon, 1, domain=Domain("box", 1.0), loss="logistic", sigma=sigma,
        gradient_bound=1.0 + sigma * 1.5, protocol="classification",
    )  # fmt: skip
    player = reset(ContinuousExpWeights(eta=0.4), spec)
    got = play_loop(player, spec, RoundData(x=x, y=y, z=z))[0, :, 0]

    def values_at(t):
        xs, ys, zs = x[0, t - 1, 0], y[0, t - 1], z[0, t - 1, 0]
        return lambda w: math.log1p(math.exp(-ys * xs * w)) + 0.5 * sigma * (w - zs) ** 2

    want = literal_algorithm_25(values_at, horizon, 1.0, 1.75 * 2, "exp", eta=0.4)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_window_masses_against_brute_force():
    """m(λ) is the least quadrature mass of [a, a + 2λr] ⊆ [−r, r] (a on a fine grid and just
    after every node), never above it and within one node's weight of it."""
    rng = np.random.default_rng(7)
    for panels, nodes in ((4, 4), (3, 7)):
        x, w = composite_gauss_legendre(1.3, panels, nodes)
        w = w / w.sum()
        lams = rng.uniform(0.0, 1.0, 15)
        got = window_masses(x, w, 1.3, lams)
        for lam, m in zip(lams, got, strict=True):
            length = 2 * lam * 1.3
            starts = np.concatenate([np.linspace(-1.3, 1.3 - length, 2001), x + 1e-12])
            starts = starts[starts <= 1.3 - length]
            brute = min(w[(x >= a) & (x <= a + length)].sum() for a in starts)
            assert brute - w.max() - 1e-12 <= m <= brute + 1e-12


# ---------------------------------------------------------------------------------------------
# declared bounds


@pytest.mark.parametrize(
    ("potential", "dim", "rule"),
    [
        ("exp", 1, "anti_gradient"),
        ("exp", 2, "follow_sign"),
        ("exp", 2, "drift"),
        ("two_norm", 1, "anti_gradient"),
        ("nh_dt", 1, "drift"),
    ],
)
def test_declared_bound_holds(potential, dim, rule):
    """Linear losses (the regret is Σ⟨g_t, w_t − u⟩ exactly), adaptive and oblivious, on an
    interval and a square: regret ≤ bound (1) at every t."""
    horizon, n_rep = 300, 2
    domain = Domain("box", 1.0)
    spec = bounded_spec(dim, horizon, n_rep, domain=domain, gradient_bound=1.0)
    player = reset(ContinuousExpWeights(potential=potential, panels=64 if dim == 1 else 8), spec)
    if rule == "drift":
        rng = np.random.default_rng(dim)
        g = (rng.uniform(-1, 1, (n_rep, horizon, dim)) + 0.4) / (2 * math.sqrt(dim))
        run = drive(player, spec, data=RoundData(g=g))
    else:
        reveal = anti_gradient(1.0) if rule == "anti_gradient" else follow_sign(1.0)
        run = drive(player, spec, reveal=reveal, horizon=horizon)
    regret = linearized_regret(run.w, run.grads, domain)
    assert_below(regret, run.bound, f"{potential} {rule}")


def test_quadrature_bound_approaches_theorem_22():
    """With the default rule and η the declared bound (quadrature measure) is within 5% of the
    Lebesgue-measure bound of Theorem 22 up to T = 10⁴ (0.1 … 2.2% on the interval, 0.7 … 4.2%
    on the square; the gap grows with T as the optimal shrink λ ≈ d/(ηT) nears the node
    spacing) and below the thesis's B(√(2dT ln T) + 1) (ε = T^{−d})."""
    for dim, domain in ((1, Domain("ball", 1.0)), (2, Domain("box", 1.0))):
        for horizon in (100, 1000, 10**4):
            spec = bounded_spec(dim, horizon, 1, domain=domain, gradient_bound=1.0)
            player = reset(ContinuousExpWeights(), spec)
            ours, lebesgue = player.regret_bound(horizon), player.lebesgue_bound(horizon)
            thesis = domain.diameter(dim) * (math.sqrt(2 * dim * horizon * math.log(horizon)) + 1)
            assert lebesgue <= ours <= 1.05 * lebesgue
            assert ours <= thesis
    assert LAMBDAS[0] < 1e-7 and LAMBDAS[-1] == 1.0


def test_engine_end_to_end():
    """The OCO engine (block kernel) equals the literal reference loop; regret ≤ bound."""
    from arena.adversaries.random_linear import RandomLinear

    engine_check(
        ContinuousExpWeights(panels=8), RandomLinear(domain="box"), n_actions=2, horizon=200,
        replicates=2,
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# configuration


@pytest.mark.parametrize(
    ("params", "spec_kw", "parameter"),
    [
        ({}, {"dim": 3}, "n_actions"),  # quadrature in d ≤ 2 only
        ({}, {"domain": Domain("ball", 1.0)}, "domain"),  # a disc (d = 2) is not integrated
        ({}, {"domain": Domain("simplex")}, "domain"),
        ({}, {"domain": Domain("unconstrained")}, "domain"),
        ({}, {"gradient_bound": None}, "scale"),
        ({"potential": "two_norm", "eta": 0.5}, {}, "eta"),
        ({"potential": "bbm"}, {}, "potential"),
        ({"panels": 2.5}, {}, "panels"),
        ({"nodes": 0}, {}, "nodes"),
        ({}, {"horizon": None}, "eta"),
    ],
)
def test_config_errors(params, spec_kw, parameter):
    kw = {"domain": Domain("box", 1.0), "gradient_bound": 1.0, "dim": 2, "horizon": 10, **spec_kw}
    dim, horizon = kw.pop("dim"), kw.pop("horizon")
    player = ContinuousExpWeights(**params)
    with pytest.raises(ConfigError) as info:
        validate_params(player)
        reset(player, bounded_spec(dim, horizon, **kw))
    assert info.value.parameter == parameter
    assert info.value.component == "player continuous_exp_weights"
    if parameter == "n_actions":
        assert "d ≤ 2" in str(info.value) and "d = 3" in str(info.value)


def test_declares_bounds_only_when_verified():
    spec = bounded_spec(1, 10, domain=Domain("box", 1.0), gradient_bound=1.0)
    assert reset(ContinuousExpWeights(scale=1.0), spec).bounds(1) == {}  # B below G·D = 2
    assert reset(ContinuousExpWeights(scale=3.0), spec).bounds(1) != {}
    spec = bounded_spec(1, 10, domain=Domain("box", 1.0), gradient_bound=None)
    assert reset(ContinuousExpWeights(scale=3.0), spec).bounds(1) == {}
