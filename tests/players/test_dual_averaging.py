"""Oracle tests of dual averaging / lazy projected OGD (``arena.players.dual_averaging``):
Shalev-Shwartz 2007, §3.3-3.5."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.params import validate_params
from arena.players.dual_averaging import DualAveraging
from arena.players.ftrl import FTRL
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
    literal_round_grad,
    make_spec,
    reset,
)


def literal_dual_averaging(spec, data, r, schedule, c):
    """Shalev-Shwartz 2007 Fig 3.1/3.2 with f = ½‖w‖² on S (Example 1: the link is the projection)
    and the conservative rule: ``θ ← 0``; each round ``w_t = Proj_S(θ/c_t)``, ``θ ← θ − λ'_t``."""
    d = spec.dim
    theta = [0.0] * d
    out = []
    for j in range(data.g.shape[1] if data.g is not None else data.x.shape[1]):
        t = j + 1
        c_t = c * math.sqrt(t) if schedule == "sqrt" else c
        w = literal_project(spec.domain, [theta[i] / c_t for i in range(d)])
        out.append(w)
        rd = data.round(j)
        lam = literal_round_grad(spec, rd, r, w)
        theta = [theta[i] - lam[i] for i in range(d)]
    return np.array(out)


CASES = [
    *[(dom, "linear", sched) for dom in DOMAINS for sched in ("fixed", "sqrt")],
    *[("ball", loss, "sqrt") for loss in ("hinge", "logistic", "squared", "absolute")],
    ("simplex", "logistic", "fixed"),
]


@pytest.mark.parametrize(("dom", "loss", "schedule"), CASES)
def test_matches_literal_transcription_and_ftrl_l2(dom, loss, schedule):
    n_rep, horizon, dim = 3, 80, 4
    rng = np.random.default_rng(31)
    if loss == "linear":
        data = linear_data(rng, n_rep, horizon, dim)
    else:
        data = example_data(rng, n_rep, horizon, dim, loss)
    spec = make_spec(dim, horizon, n_rep, DOMAINS[dom], loss)
    want = np.stack([literal_dual_averaging(spec, data, r, schedule, 2.5) for r in range(n_rep)])
    run = drive(reset(DualAveraging(schedule=schedule, c=2.5), spec), spec, data)
    np.testing.assert_allclose(run.w, want, rtol=0, atol=ITERATE_ATOL)
    assert DOMAINS[dom].contains(run.w.reshape(-1, dim)).all()
    # it is FTRL with R = ½‖w‖² on the domain and η_t = 1/c_t (same floats up to rounding)
    ftrl = drive(reset(FTRL("l2", schedule=schedule, eta=1 / 2.5), spec), spec, data)
    np.testing.assert_allclose(ftrl.w, run.w, rtol=0, atol=1e-12)
    if dom != "unconstrained":
        np.testing.assert_allclose(ftrl.bound, run.bound, rtol=1e-12)


def test_lazy_equals_greedy_on_euclidean_space_only():
    # on ℝ^d with a fixed c both are w_{t+1} = w_t − g_t/c; with a projection they differ
    n_rep, horizon, dim = 2, 60, 3
    data = linear_data(np.random.default_rng(2), n_rep, horizon, dim)
    free = make_spec(dim, horizon, n_rep, DOMAINS["unconstrained"])
    lazy = drive(reset(DualAveraging(schedule="fixed", c=4.0), free), free, data).w
    greedy = drive(reset(OGD(schedule="fixed", eta=0.25), free), free, data).w
    np.testing.assert_allclose(lazy, greedy, rtol=0, atol=1e-12)
    ball = make_spec(dim, horizon, n_rep, Domain("ball", 0.3))
    lazy = drive(reset(DualAveraging(schedule="fixed", c=4.0), ball), ball, data).w
    greedy = drive(reset(OGD(schedule="fixed", eta=0.25), ball), ball, data).w
    assert np.abs(lazy - greedy).max() > 1e-3


def test_tuned_tradeoffs_use_the_comparator_radius():
    # tuning from Shalev-Shwartz 2007, Cor 1/Cor 2: c = G√T/M and c_t = (G/M)√t with M = max ‖u‖ (a
    # radius, not the diameter)
    G, horizon = 2.0, 64
    for dom, M in (
        (Domain("ball", 3.0), 3.0),
        (Domain("box", 0.5), 0.5 * 2.0),
        (Domain("simplex"), 1.0),
    ):
        spec = make_spec(4, horizon, 1, dom, G=G)
        fixed = reset(DualAveraging(schedule="fixed"), spec)
        anytime = reset(DualAveraging(), spec)
        assert fixed.tradeoff(5) == pytest.approx(G * math.sqrt(horizon) / M, rel=1e-15)
        assert anytime.tradeoff(9) == pytest.approx(3 * G / M, rel=1e-15)


ADAPTIVE = {
    "anti_gradient": anti_gradient,
    "follow_sign": follow_sign,
    "heaviest": heaviest_coordinate,
}


@pytest.mark.parametrize("stream", ["sphere", "box", "alternating", "sparse", *ADAPTIVE])
@pytest.mark.parametrize("dom", ["ball", "box", "simplex"])
def test_regret_bounds_on_every_stream(dom, stream):
    G, horizon, n_rep, dim = 1.5, 400, 3, 5
    domain = DOMAINS[dom]
    M = domain.max_norm(dim)
    spec = make_spec(dim, horizon, n_rep, domain, G=G)
    t = np.arange(1, horizon + 1)
    for params in ({}, {"schedule": "fixed"}, {"c": 0.3}, {"schedule": "fixed", "c": 40.0}):
        player = reset(DualAveraging(**params), spec)
        if stream in ADAPTIVE:
            run = drive(player, spec, reveal=ADAPTIVE[stream](G), horizon=horizon)
        else:
            run = drive(
                player, spec, linear_data(np.random.default_rng(6), n_rep, horizon, dim, stream, G)
            )
        regret = linearized_regret(run.w, run.grads, domain)
        assert_below(regret, run.bound, f"{params} {stream}")
        # Cor 2 tuned: GM√T/2 + (GM/2)(2√T − 1) ≤ (3/2)GM√T (Cor 2 prints the looser 2GM√T)
        if params == {}:
            assert_below(run.bound, 1.5 * G * M * np.sqrt(t), "(3/2)GM√T")
        if params == {"schedule": "fixed"}:  # Cor 1: cM²/2 + G²t/(2c), = GM√T at t = T
            c = G * math.sqrt(horizon) / M
            closed = c * M**2 / 2 + G**2 * t / (2 * c)
            assert closed[-1] == pytest.approx(G * M * math.sqrt(horizon))
            assert_below(run.bound, closed, "Cor 1")


def test_no_bound_on_euclidean_space_and_config_errors():
    spec = make_spec(3, 20, 1, Domain("unconstrained"))
    assert reset(DualAveraging(c=1.0), spec).bounds(1) == {}
    for params, spec_kw, parameter in (
        ({"schedule": "greedy"}, {}, "schedule"),
        ({"c": 0}, {}, "c"),
        ({}, {"G": None}, "c"),
        ({}, {"domain": Domain("unconstrained")}, "c"),
    ):
        kw = {"domain": Domain("ball", 1.0), "G": 1.0} | spec_kw
        player = DualAveraging(**params)
        with pytest.raises(ConfigError) as err:
            validate_params(player)  # the declared constraints first, as the driver checks them
            reset(player, make_spec(3, 20, 1, **kw))  # then what depends on the game
        assert err.value.parameter == parameter
        assert err.value.component == "player dual_averaging"
    with pytest.raises(ConfigError):
        reset(DualAveraging(schedule="fixed"), make_spec(3, None, 1, Domain("ball", 1.0), G=1.0))


@pytest.mark.parametrize("params", [{}, {"schedule": "fixed", "c": 3.0}])
def test_end_to_end_with_the_engine(params):
    from arena.oco.testing import AntiGradient

    engine_check(
        DualAveraging(**params),
        AntiGradient(G=2.0, radius=0.5),
        n_actions=3,
        horizon=100,
        replicates=2,
    )
    engine_check(
        DualAveraging(**params),
        FixedStream(domain="box", radius=0.5, G=1.0),
        n_actions=3,
        horizon=100,
        replicates=2,
    )
