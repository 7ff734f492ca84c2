"""Oracle tests of OGD (``arena.players.ogd``): Zinkevich 2003; Hazan 2016 and Shalev-Shwartz 2007
Thm 5 (§4.3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import validate_params
from arena.players.ogd import OGD
from tests.helpers import assert_below
from tests.helpers.oco import (
    DOMAINS,
    ITERATE_ATOL,
    FixedStream,
    anti_gradient,
    drive,
    engine_check,
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
    strongly_convex_regret,
)

CUTS = ([1], [5, 6, 40], list(range(0, 80, 7)))


def literal_ogd(spec, data, r, schedule, eta, sigma):
    """Greedy projected OGD literally: ``w_1 = Π(0)``, ``w_{t+1} = Π(w_t − η_t g_t)``, with
    ``η_t = eta``, ``eta/√t`` or ``1/(σt)`` (Zinkevich 2003; Shalev-Shwartz 2007 Fig 4.1 + Example
    1)."""
    d = spec.dim

    def step(t, w, g):
        if schedule == "fixed":
            rate = eta
        elif schedule == "sqrt":
            rate = eta / math.sqrt(t)
        else:
            rate = 1.0 / (sigma * t)
        return literal_project(spec.domain, [w[i] - rate * g[i] for i in range(d)])

    return literal_run(step, literal_project(spec.domain, [0.0] * d), spec, data, r)


TRANSCRIPTION_CASES = [
    *[(dom, "linear", 0.0, sched) for dom in DOMAINS for sched in ("fixed", "sqrt")],
    *[(dom, "linear", 0.7, "strongly_convex") for dom in DOMAINS],
    *[
        (dom, loss, 0.0, "sqrt")
        for dom in ("ball", "unconstrained")
        for loss in ("hinge", "logistic", "squared", "absolute")
    ],
    ("box", "squared", 0.5, "strongly_convex"),
    ("ball", "hinge", 0.3, "fixed"),
]


@pytest.mark.parametrize(("dom", "loss", "sigma", "schedule"), TRANSCRIPTION_CASES)
def test_matches_literal_transcription(dom, loss, sigma, schedule):
    n_rep, horizon, dim = 3, 80, 4
    rng = np.random.default_rng(11)
    if loss == "linear":
        data = linear_data(rng, n_rep, horizon, dim, sigma=sigma)
    else:
        data = example_data(rng, n_rep, horizon, dim, loss, sigma=sigma)
    spec = make_spec(dim, horizon, n_rep, DOMAINS[dom], loss, sigma)
    params = {"sigma": None} if schedule == "strongly_convex" else {"eta": 0.3}
    want = np.stack([literal_ogd(spec, data, r, schedule, 0.3, sigma) for r in range(n_rep)])
    player = OGD(schedule=schedule, **params)
    run = drive(reset(player, spec), spec, data)
    np.testing.assert_allclose(run.w, want, rtol=0, atol=ITERATE_ATOL)
    assert DOMAINS[dom].contains(run.w.reshape(-1, dim)).all()
    for cuts in CUTS:  # the numba kernel, any split of the rounds
        got = play_split(reset(player, spec), spec, data, cuts)
        np.testing.assert_allclose(got, want, rtol=0, atol=ITERATE_ATOL)
    # kernel and loop agree to 1e-12 (the engine's contract), bounds included
    loop = reset(OGD(schedule=schedule, **params), spec)
    kern = reset(OGD(schedule=schedule, **params), spec)
    w_loop = drive(loop, spec, data).w
    w_kern = play_split(kern, spec, data, [17])
    np.testing.assert_allclose(w_kern, w_loop, rtol=0, atol=1e-12)
    if loop.bounds(horizon):
        np.testing.assert_allclose(
            kern.bounds(horizon)[("regret", math.nan)],
            loop.bounds(horizon)[("regret", math.nan)],
            rtol=1e-12,
        )


def test_tuned_step_sizes():
    dom, G, horizon = Domain("ball", 2.0), 3.0, 100
    spec = make_spec(3, horizon, 1, dom, G=G)
    g1 = np.array([[1.0, -2.0, 0.5]])
    D = 4.0
    for schedule, eta1, eta2 in (
        ("sqrt", D / G, D / (G * math.sqrt(2))),
        ("fixed", D / (G * math.sqrt(horizon)), D / (G * math.sqrt(horizon))),
    ):
        player = reset(OGD(schedule=schedule), spec)
        assert player.step_size(1) == pytest.approx(eta1, rel=1e-15)
        assert player.step_size(2) == pytest.approx(eta2, rel=1e-15)
        drive(player, spec, RoundData(g=g1[:, None]))
        np.testing.assert_allclose(player.predict(), dom.project(-eta1 * g1), atol=1e-15)


STREAMS = {
    "sphere": lambda rng, R, T, d, G: linear_data(rng, R, T, d, "sphere", G),
    "box": lambda rng, R, T, d, G: linear_data(rng, R, T, d, "box", G),
    "alternating": lambda rng, R, T, d, G: linear_data(rng, R, T, d, "alternating", G),
    "sparse": lambda rng, R, T, d, G: linear_data(rng, R, T, d, "sparse", G),
    "anti_gradient": anti_gradient,
    "follow_sign": follow_sign,
    "heaviest": heaviest_coordinate,
}


def run_stream(player, spec, stream, G, seed=3):
    make = STREAMS[stream]
    if stream in ("anti_gradient", "follow_sign", "heaviest"):
        return drive(player, spec, reveal=make(G), horizon=spec.horizon)
    rng = np.random.default_rng(seed)
    return drive(player, spec, make(rng, spec.n_replicates, spec.horizon, spec.dim, G))


@pytest.mark.parametrize("stream", sorted(STREAMS))
@pytest.mark.parametrize("dom", ["ball", "box", "simplex"])
def test_regret_bounds_on_every_stream(dom, stream):
    G, horizon, n_rep, dim = 1.5, 400, 3, 5
    domain = DOMAINS[dom]
    D = domain.diameter(dim)
    spec = make_spec(dim, horizon, n_rep, domain, G=G)
    t = np.arange(1, horizon + 1)
    for params, closed in (
        ({"schedule": "sqrt"}, 1.5 * G * D * np.sqrt(t)),  # Zinkevich 2003; Hazan 2016: (3/2)GD√T
        ({"schedule": "fixed"}, None),
        # η_t = c/√t: D²√T/(2c) + (cG²/2)Σ 1/√t ≤ D²√T/(2c) + (cG²/2)(2√T − 1)
        (
            {"schedule": "sqrt", "eta": 0.05},
            D**2 * np.sqrt(t) / 0.1 + 0.025 * G**2 * (2 * np.sqrt(t) - 1),
        ),
        ({"schedule": "fixed", "eta": 0.02}, D**2 / 0.04 + 0.01 * G**2 * t),  # D²/2η + ηG²T/2
    ):
        player = reset(OGD(**params), spec)
        run = run_stream(player, spec, stream, G)
        assert (np.linalg.norm(run.grads, axis=-1) <= G * (1 + 1e-12)).all()
        regret = linearized_regret(run.w, run.grads, domain)
        assert_below(regret, run.bound, f"{params} {stream}")
        if params == {"schedule": "fixed"}:
            eta = D / (G * math.sqrt(horizon))
            closed = D**2 / (2 * eta) + eta * G**2 * t / 2  # = GD√T at t = T
            assert closed[-1] == pytest.approx(G * D * math.sqrt(horizon))
        assert_below(run.bound, closed, f"declared ≤ closed form {params} {stream}")
        assert domain.contains(run.w.reshape(-1, dim)).all()


@pytest.mark.parametrize("dom", ["ball", "box", "unconstrained"])
@pytest.mark.parametrize("adaptive", [False, True])
def test_logarithmic_regret_on_strongly_convex_losses(dom, adaptive):
    # f_t(w) = ⟨g_t, w⟩ + (σ/2)‖w − z_t‖²: Shalev-Shwartz 2007 Thm 5 (§4.3) with L = max ½‖λ_t‖²,
    # exact regret
    sigma, horizon, n_rep, dim = 0.8, 300, 3, 4
    domain = DOMAINS[dom]
    spec = make_spec(dim, horizon, n_rep, domain, sigma=sigma)
    rng = np.random.default_rng(5)
    if adaptive:
        zs = 0.3 * rng.standard_normal((n_rep, horizon, dim))
        base = anti_gradient(1.0)

        def reveal(t, w):
            return RoundData(g=base(t, w).g, z=zs[:, t - 1])

        run = drive(
            reset(OGD(schedule="strongly_convex"), spec), spec, reveal=reveal, horizon=horizon
        )
    else:
        data = linear_data(rng, n_rep, horizon, dim, "sphere", 1.0, sigma=sigma)
        run = drive(reset(OGD(schedule="strongly_convex"), spec), spec, data)
    regret = strongly_convex_regret(run.values, run.data, sigma, domain)
    assert_below(regret, run.bound, "data-dependent Σ‖g‖²/(2σt)")
    t = np.arange(1, horizon + 1)
    L = 0.5 * np.maximum.accumulate((run.grads**2).sum(axis=-1), axis=1)
    assert_below(run.bound, L / sigma * (1 + np.log(t)), "Thm 5: (L/σ)(1 + ln T)")
    assert_below(regret, L / sigma * (1 + np.log(t)), "Thm 5")


def test_strongly_convex_step_on_euclidean_space_is_follow_the_leader():
    # identity: with η_t = 1/(σt) on ℝ^d and f_t = ⟨g_t, w⟩ + (σ/2)‖w − z_t‖², w_{t+1} is the
    # minimizer of Σ_{s≤t} f_s, and the Lemma 5 inequalities are equalities, so the regret equals
    # Σ_t ‖g_t‖²/(2σt) exactly (Shalev-Shwartz 2007, §4.3 with every inequality tight)
    sigma, horizon, n_rep, dim = 1.3, 200, 2, 3
    spec = make_spec(dim, horizon, n_rep, DOMAINS["unconstrained"], sigma=sigma)
    data = linear_data(np.random.default_rng(8), n_rep, horizon, dim, sigma=sigma)
    run = drive(reset(OGD(schedule="strongly_convex"), spec), spec, data)
    t = np.arange(1, horizon + 1)[None, :, None]
    ftl = (np.cumsum(sigma * data.z - data.g, axis=1) / (sigma * t))[:, :-1]
    np.testing.assert_allclose(run.w[:, 1:], ftl, rtol=0, atol=1e-12)
    regret = strongly_convex_regret(run.values, data, sigma, spec.domain)
    np.testing.assert_allclose(regret, run.bound, rtol=1e-10)  # float sums of ~200 terms


def test_no_bound_without_its_assumptions():
    spec = make_spec(3, 50, 1, DOMAINS["unconstrained"])
    assert reset(OGD(schedule="fixed", eta=0.1), spec).bounds(1) == {}
    assert reset(OGD(eta=0.1), spec).bounds(1) == {}
    # σ larger than the game's: the losses are not that strongly convex
    spec = make_spec(3, 50, 1, DOMAINS["ball"], sigma=0.5)
    assert reset(OGD(schedule="strongly_convex", sigma=1.0), spec).bounds(1) == {}
    assert reset(OGD(schedule="strongly_convex", sigma=0.25), spec).bounds(1) != {}
    spec = make_spec(3, 50, 1, DOMAINS["ball"], sigma=0.0)
    assert reset(OGD(schedule="strongly_convex", sigma=1.0), spec).bounds(1) == {}


@pytest.mark.parametrize(
    ("params", "spec_kw", "parameter"),
    [
        ({"schedule": "nope"}, {}, "schedule"),
        ({"eta": -1.0}, {}, "eta"),
        ({"eta": math.inf}, {}, "eta"),
        ({}, {"domain": Domain("unconstrained"), "G": 1.0}, "eta"),
        ({}, {"domain": Domain("ball", 1.0), "G": None}, "eta"),
        ({"schedule": "strongly_convex"}, {"sigma": 0.0}, "sigma"),
        ({"schedule": "strongly_convex", "eta": 0.1}, {"sigma": 1.0}, "eta"),
        ({"schedule": "fixed", "eta": 0.1, "sigma": 1.0}, {}, "sigma"),
    ],
)
def test_config_errors(params, spec_kw, parameter):
    kw = {"domain": Domain("ball", 1.0), "G": 1.0} | spec_kw
    spec, player = make_spec(2, 10, 1, **kw), OGD(**params)
    with pytest.raises(ConfigError) as err:
        validate_params(player)  # the declared constraints first, as the driver checks them
        reset(player, spec)  # then what depends on the game
    assert err.value.parameter == parameter and err.value.component == "player ogd"


def test_fixed_tuned_step_needs_the_horizon():
    spec = make_spec(2, None, 1, Domain("ball", 1.0), G=1.0)
    with pytest.raises(ConfigError):
        reset(OGD(schedule="fixed"), spec)
    reset(OGD(schedule="sqrt"), spec)  # anytime


@pytest.mark.parametrize(
    ("params", "adversary"),
    [
        ({}, "anti"),  # adaptive: the per-round path
        ({"schedule": "fixed", "eta": 0.2}, "gauss_box"),  # oblivious: the numba block path
        ({"schedule": "strongly_convex"}, "gauss_sc"),
    ],
)
def test_end_to_end_with_the_engine(params, adversary):
    from arena.oco.testing import AntiGradient, GaussianData

    adv = {
        "anti": AntiGradient(G=2.0, radius=0.5),
        "gauss_box": GaussianData(domain="box", radius=0.5),
        "gauss_sc": FixedStream(domain="ball", radius=1.0, sigma=0.5),
    }[adversary]
    engine_check(OGD(**params), adv, n_actions=3, horizon=120, replicates=2, seed=4)


def literal_l1_project(v, z):
    """Shalev-Shwartz 2007, Figure 7.2 (with ``sign(μ_i)β_i``) in plain floats: ``v`` inside the
    ball, else the Figure 7.1 simplex projection of ``|v|`` with the signs put back."""
    if sum(abs(a) for a in v) <= z:
        return list(v)
    mu = sorted((abs(a) for a in v), reverse=True)
    theta, css = 0.0, 0.0
    for j, m in enumerate(mu):
        css += m
        if m - (css - z) / (j + 1) > 0:
            theta = (css - z) / (j + 1)
    return [math.copysign(max(abs(a) - theta, 0.0), a) if a else 0.0 for a in v]


@pytest.mark.parametrize("schedule", ["fixed", "sqrt"])
@pytest.mark.parametrize("loss", ["linear", "hinge"])
def test_l1_ball_matches_literal_transcription(schedule, loss):
    n_rep, horizon, dim, rho = 2, 60, 6, 0.8
    rng = np.random.default_rng(12)
    if loss == "linear":
        data = linear_data(rng, n_rep, horizon, dim)
    else:
        data = example_data(rng, n_rep, horizon, dim, loss)
    spec = make_spec(dim, horizon, n_rep, DOMAINS["ball"], loss)

    def step(t, w, g):
        rate = 0.3 if schedule == "fixed" else 0.3 / math.sqrt(t)
        return literal_l1_project([w[i] - rate * g[i] for i in range(dim)], rho)

    want = np.stack([literal_run(step, [0.0] * dim, spec, data, r) for r in range(n_rep)])
    player = OGD(schedule=schedule, eta=0.3, l1_radius=rho)
    run = drive(reset(player, spec), spec, data)
    np.testing.assert_allclose(run.w, want, rtol=0, atol=ITERATE_ATOL)
    assert (np.abs(run.w).sum(-1) <= rho * (1 + 1e-12)).all()
    assert (run.w == 0.0).any()  # the ℓ1 projection zeroes coordinates
    for cuts in CUTS:
        got = play_split(reset(player, spec), spec, data, cuts)
        np.testing.assert_allclose(got, want, rtol=0, atol=ITERATE_ATOL)
    assert np.isnan(run.bound).all()  # d > 1: the ℓ1 ball is not the game's comparator set


@pytest.mark.parametrize("stream", ["sphere", "box", "alternating", "anti_gradient"])
def test_l1_ball_regret_bound(stream):
    G, horizon, n_rep, dim, rho = 1.0, 300, 3, 5, 0.7
    spec = make_spec(dim, horizon, n_rep, DOMAINS["unconstrained"], G=G)
    for params in ({"eta": 0.3}, {"schedule": "fixed", "eta": 0.05}):
        player = reset(OGD(l1_radius=rho, **params), spec)
        if stream == "anti_gradient":
            run = drive(player, spec, reveal=anti_gradient(G), horizon=horizon)
        else:
            run = drive(
                player, spec, linear_data(np.random.default_rng(8), n_rep, horizon, dim, stream, G)
            )
        t = np.arange(1, horizon + 1)
        eta = params["eta"] / (np.sqrt(t) if "schedule" not in params else 1.0)
        s_t = np.cumsum(eta * np.einsum("rtd,rtd->rt", run.grads, run.grads), axis=1)
        bound = (2 * rho) ** 2 / (2 * eta) + s_t / 2
        np.testing.assert_allclose(player.regret_bound(horizon), bound[:, -1], rtol=1e-12)
        # the best point of the ℓ1 ball against Σg is a signed vertex: −ρ‖Σg‖_∞
        played = np.cumsum(np.einsum("rtd,rtd->rt", run.grads, run.w), axis=1)
        regret = played + rho * np.abs(np.cumsum(run.grads, axis=1)).max(-1)
        assert_below(regret, bound, f"ℓ1 {params} {stream}")


def test_l1_ball_declares_its_bound_in_one_dimension():
    G, horizon, rho = 1.0, 200, 0.5
    for dom in (Domain("ball", rho), Domain("box", rho)):
        spec = make_spec(1, horizon, 2, dom, G=G)
        player = reset(OGD(eta=0.2, l1_radius=rho), spec)
        run = drive(player, spec, reveal=anti_gradient(G), horizon=horizon)
        assert np.isfinite(run.bound).all()
        assert_below(linearized_regret(run.w, run.grads, dom), run.bound, "ℓ1 OGD in 1-d")


def test_l1_ball_must_lie_in_the_domain():
    for dom in (Domain("simplex"), Domain("ball", 0.5), Domain("box", 0.5)):
        with pytest.raises(ConfigError) as err:
            reset(OGD(eta=0.1, l1_radius=1.0), make_spec(3, 20, 1, dom))
        assert err.value.parameter == "l1_radius"
    with pytest.raises(ConfigError):
        validate_params(OGD(l1_radius=0.0))
