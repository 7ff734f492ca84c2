"""Oracle tests of AdaGrad (``arena.players.adagrad``): Zinkevich 2003; Hazan 2016; Duchi et al.
2011; Hazan, Agarwal & Kale 2007."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData, feedback
from arena.params import validate_params
from arena.players.adagrad import AdaGrad, mahalanobis_ball_row
from tests.helpers import assert_below
from tests.helpers.oco import (
    DOMAINS,
    ITERATE_ATOL,
    anti_gradient,
    drive,
    example_data,
    follow_sign,
    heaviest_coordinate,
    linear_data,
    linearized_regret,
    literal_project,
    literal_run,
    make_spec,
    play_split,
    reset,
)

CUTS = ([1], [5, 6, 40], list(range(0, 80, 7)))


def literal_mahalanobis_ball(y, a, radius):
    """``argmin_{‖x‖ ≤ ρ} Σ a_i (x_i − y_i)²`` by bisection on the KKT multiplier μ ≥ 0:
    ``x_i = a_i y_i/(a_i + μ)`` (0 where ``a_i = 0``) with ``‖x(μ)‖ = ρ``."""
    if sum(v * v for v in y) <= radius * radius:
        return list(y)

    def point(mu):
        return [a[i] * y[i] / (a[i] + mu) if a[i] > 0 else 0.0 for i in range(len(y))]

    def norm2(mu):
        return sum(v * v for v in point(mu))

    if norm2(0.0) <= radius * radius:
        return point(0.0)
    lo, hi = 0.0, 1.0
    while norm2(hi) > radius * radius:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if norm2(mid) > radius * radius:
            lo = mid
        else:
            hi = mid
    return point(hi)


def literal_adagrad(spec, data, r, variant, eta):
    """Duchi, Hazan & Singer (2011) literally (Duchi et al. 2011; Hazan, Agarwal & Kale 2007):
    diagonal ``G_t = Σ g²``, ``x_{t+1} = Π^{diag(√G_t)}(x_t − η g_t/√G_t)`` skipping ``G = 0``; norm
    ``x_{t+1} = Π(x_t − η g_t/√(Σ‖g_s‖²))``."""
    d, domain = spec.dim, spec.domain
    sums = [0.0] * d
    total = [0.0]

    def step(t, x, g):
        if variant == "diagonal":
            for i in range(d):
                sums[i] += g[i] * g[i]
            y = [x[i] - eta * g[i] / math.sqrt(sums[i]) if sums[i] > 0 else x[i] for i in range(d)]
            if domain.kind == "ball":
                return literal_mahalanobis_ball(y, [math.sqrt(s) for s in sums], domain.radius)
            return literal_project(domain, y)
        total[0] += sum(v * v for v in g)
        if total[0] == 0:
            return x
        rate = eta / math.sqrt(total[0])
        return literal_project(domain, [x[i] - rate * g[i] for i in range(d)])

    return literal_run(step, literal_project(domain, [0.0] * d), spec, data, r)


TRANSCRIPTION_CASES = [
    *[("diagonal", dom, "linear") for dom in ("ball", "box", "unconstrained")],
    *[("norm", dom, "linear") for dom in DOMAINS],
    *[("diagonal", "box", loss) for loss in ("hinge", "logistic", "squared", "absolute")],
    *[("diagonal", "ball", loss) for loss in ("hinge", "squared")],
    *[("norm", "ball", loss) for loss in ("logistic", "absolute")],
]


@pytest.mark.parametrize(("variant", "dom", "loss"), TRANSCRIPTION_CASES)
def test_matches_literal_transcription(variant, dom, loss):
    n_rep, horizon, dim = 3, 80, 4
    rng = np.random.default_rng(21)
    if loss == "linear":
        data = linear_data(rng, n_rep, horizon, dim, "sparse", 1.0)  # coordinates with G = 0 early
        data = RoundData(g=data.g + 0.3 * rng.standard_normal(data.g.shape) * (data.g != 0))
    else:
        data = example_data(rng, n_rep, horizon, dim, loss)
    spec = make_spec(dim, horizon, n_rep, DOMAINS[dom], loss)
    want = np.stack([literal_adagrad(spec, data, r, variant, 0.4) for r in range(n_rep)])
    player = AdaGrad(variant=variant, eta=0.4)
    run = drive(reset(player, spec), spec, data)
    np.testing.assert_allclose(run.w, want, rtol=0, atol=ITERATE_ATOL)
    assert DOMAINS[dom].contains(run.w.reshape(-1, dim)).all()
    for cuts in CUTS:
        got = play_split(reset(player, spec), spec, data, cuts)
        np.testing.assert_allclose(got, want, rtol=0, atol=ITERATE_ATOL)
    loop = reset(AdaGrad(variant=variant, eta=0.4), spec)
    kern = reset(AdaGrad(variant=variant, eta=0.4), spec)
    np.testing.assert_allclose(
        play_split(kern, spec, data, [13]), drive(loop, spec, data).w, rtol=0, atol=1e-12
    )
    if loop.bounds(horizon):
        np.testing.assert_allclose(
            kern.bounds(horizon)[("regret", math.nan)],
            loop.bounds(horizon)[("regret", math.nan)],
            rtol=1e-12,
        )


def test_mahalanobis_ball_projection_is_the_constrained_minimizer():
    rng = np.random.default_rng(4)
    radius = 1.0
    for _ in range(20):
        d = int(rng.integers(2, 6))
        y = rng.standard_normal(d) * 3.0
        a = rng.exponential(size=d) * (rng.random(d) < 0.8)
        y = np.where(a > 0, y, 0.0)  # coordinates with a_i = 0 have never moved from 0
        out = np.empty(d)
        mahalanobis_ball_row(y, a, radius, out)
        assert np.linalg.norm(out) <= radius * (1 + 1e-12)
        res = minimize(
            lambda x, y=y, a=a: float(np.sum(a * (x - y) ** 2)),
            np.zeros(d),
            constraints=[{"type": "ineq", "fun": lambda x: radius**2 - x @ x}],
            method="SLSQP",
            options={"ftol": 1e-14, "maxiter": 500},
        )
        # SLSQP reaches ~1e-7 in the objective; the closed form must be at least as good
        assert np.sum(a * (out - y) ** 2) <= res.fun + 1e-8
        np.testing.assert_allclose(out, literal_mahalanobis_ball(y, a, radius), atol=1e-12)


def test_first_step_moves_every_coordinate_by_eta_or_along_the_gradient():
    # after one round G_{1,i} = g_i², so the diagonal step is η·sign(g_i) in every coordinate;
    # the norm variant steps η along g/‖g‖
    spec = make_spec(2, 10, 1, Domain("unconstrained"))
    g = np.array([[3.0, 0.1]])
    for variant, want in (("diagonal", [[-0.5, -0.5]]), ("norm", -0.5 * g / np.linalg.norm(g))):
        player = reset(AdaGrad(variant=variant, eta=0.5), spec)
        player.update(feedback("linear", 0.0, player.predict(), RoundData(g=g)))
        np.testing.assert_allclose(player.predict(), want, rtol=1e-15)


ADAPTIVE = {
    "anti_gradient": anti_gradient,
    "follow_sign": follow_sign,
    "heaviest": heaviest_coordinate,
}


@pytest.mark.parametrize("stream", ["sphere", "box", "alternating", "sparse", *ADAPTIVE])
@pytest.mark.parametrize(
    ("variant", "dom"),
    [
        ("diagonal", "ball"),
        ("diagonal", "box"),
        ("norm", "ball"),
        ("norm", "box"),
        ("norm", "simplex"),
    ],
)
def test_regret_bounds_on_every_stream(variant, dom, stream):
    G, horizon, n_rep, dim = 1.5, 400, 3, 5
    domain = DOMAINS[dom]
    spec = make_spec(dim, horizon, n_rep, domain, G=G)
    for eta in (None, 0.05, 3.0):
        player = reset(AdaGrad(variant=variant, eta=eta), spec)
        if stream in ADAPTIVE:
            run = drive(player, spec, reveal=ADAPTIVE[stream](G), horizon=horizon)
        else:
            data = linear_data(np.random.default_rng(9), n_rep, horizon, dim, stream, G)
            run = drive(player, spec, data)
        regret = linearized_regret(run.w, run.grads, domain)
        assert_below(regret, run.bound, f"{variant} eta={eta} {stream}")
        assert domain.contains(run.w.reshape(-1, dim)).all()
        if eta is None:  # the tuned closed forms of Zinkevich 2003; Hazan 2016
            if variant == "diagonal":
                d_inf = 2 * domain.radius
                closed = math.sqrt(2) * d_inf * np.sqrt(np.cumsum(run.grads**2, axis=1)).sum(-1)
            else:
                sq = np.cumsum((run.grads**2).sum(-1), axis=1)
                closed = math.sqrt(2) * domain.diameter(dim) * np.sqrt(sq)
            np.testing.assert_allclose(run.bound, closed, rtol=1e-12)
            # Σ_i ‖g_{1:t,i}‖ ≤ √d·√(Σ‖g‖²) ≤ √d·G√t: diagonal ≤ √2·D_∞√d·G√t, norm ≤ √2·D·G√t
            t = np.arange(1, horizon + 1)
            if variant == "diagonal":
                scale = 2 * domain.radius * math.sqrt(dim)
            else:
                scale = domain.diameter(dim)
            assert_below(run.bound, math.sqrt(2) * scale * G * np.sqrt(t), "≤ √2·D·G·√T")


def test_no_bound_on_unbounded_domains_and_config_errors():
    spec = make_spec(3, 20, 1, Domain("unconstrained"))
    assert reset(AdaGrad(eta=1.0), spec).bounds(1) == {}
    assert reset(AdaGrad(variant="norm", eta=1.0), spec).bounds(1) == {}
    for params, dom, parameter in (
        ({"variant": "full"}, Domain("ball", 1.0), "variant"),
        ({}, Domain("unconstrained"), "eta"),
        ({"eta": 0.0}, Domain("ball", 1.0), "eta"),
        ({}, Domain("simplex"), "domain"),
    ):
        player = AdaGrad(**params)
        with pytest.raises(ConfigError) as err:
            validate_params(player)  # the declared constraints first, as the driver checks them
            reset(player, make_spec(3, 20, 1, dom))  # then what depends on the game
        assert err.value.parameter == parameter and err.value.component == "player adagrad"
