"""Oracle tests of EG and EG± (``arena.players.eg``): Srebro, Lecture 16, slide "Normalized
Exponentiated Gradient (EG)"."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData, feedback
from arena.params import validate_params
from arena.players.eg import EG, EGPlusMinus
from arena.players.ftrl import FTRL
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
    literal_round_grad,
    make_spec,
    play_split,
    reset,
)


def literal_eg(spec, data, r, schedule, eta, radius=None):
    """EG literally (one game, plain floats).

    Fixed η: the multiplicative form of (Srebro, Lecture 16) from ``w_1`` uniform,
    ``w_{t+1,i} = w_{t,i} e^{−η g_{t,i}}/Σ_j w_{t,j} e^{−η g_{t,j}}``. ``η_t = η/√t``: the lazy
    closed form (Srebro, Lecture 16), ``w_{t,i} = e^{−η_t v_i}/Σ_j e^{−η_t v_j}`` with ``v = Σ_{s<t}
    g_s``. EG± (``radius`` = U): the same on the 2d experts with losses ``U(g, −g)``, played as
    ``U(w⁺ − w⁻)``.
    """
    d = spec.dim
    n = d if radius is None else 2 * d
    weights = [1.0 / n] * n
    cum = [0.0] * n
    horizon = next(a for a in (data.g, data.x, data.y) if a is not None).shape[1]
    out = []
    for j in range(horizon):
        if schedule == "sqrt":
            rate = eta / math.sqrt(j + 1)
            m = min(cum)
            e = [math.exp(-rate * (c - m)) for c in cum]
            weights = [v / sum(e) for v in e]
        w = (
            list(weights)
            if radius is None
            else [radius * (weights[i] - weights[d + i]) for i in range(d)]
        )
        out.append(w)
        rd = data.round(j)
        g = literal_round_grad(spec, rd, r, w)
        losses = g if radius is None else [radius * v for v in g] + [-radius * v for v in g]
        cum = [cum[i] + losses[i] for i in range(n)]
        if schedule == "fixed":
            e = [weights[i] * math.exp(-eta * losses[i]) for i in range(n)]
            weights = [v / sum(e) for v in e]
    return np.array(out)


@pytest.mark.parametrize("schedule", ["fixed", "sqrt"])
@pytest.mark.parametrize("loss", ["linear", "logistic", "squared"])
def test_eg_matches_literal_transcription_and_entropic_ftrl(schedule, loss):
    n_rep, horizon, dim = 3, 80, 5
    rng = np.random.default_rng(51)
    if loss == "linear":
        data = linear_data(rng, n_rep, horizon, dim)
    else:
        data = example_data(rng, n_rep, horizon, dim, loss)
    spec = make_spec(dim, horizon, n_rep, DOMAINS["simplex"], loss)
    want = np.stack([literal_eg(spec, data, r, schedule, 0.6) for r in range(n_rep)])
    run = drive(reset(EG(schedule=schedule, eta=0.6), spec), spec, data)
    np.testing.assert_allclose(run.w, want, rtol=0, atol=ITERATE_ATOL)
    got = play_split(reset(EG(schedule=schedule, eta=0.6), spec), spec, data, [3, 50])
    np.testing.assert_allclose(got, want, rtol=0, atol=ITERATE_ATOL)
    # EG = entropic linearized FTRL; weights positive and on the simplex
    ftrl = drive(reset(FTRL("entropic", schedule, eta=0.6), spec), spec, data)
    np.testing.assert_allclose(ftrl.w, run.w, rtol=0, atol=1e-12)
    assert (run.w > 0).all()
    np.testing.assert_allclose(run.w.sum(-1), 1.0, atol=1e-12)


@pytest.mark.parametrize("schedule", ["fixed", "sqrt"])
@pytest.mark.parametrize("dom", ["unconstrained", "ball", "box"])
def test_eg_pm_matches_literal_transcription(schedule, dom):
    n_rep, horizon, dim, U = 3, 80, 4, 0.5
    rng = np.random.default_rng(52)
    data = linear_data(rng, n_rep, horizon, dim)
    spec = make_spec(dim, horizon, n_rep, DOMAINS[dom])
    want = np.stack([literal_eg(spec, data, r, schedule, 0.6, radius=U) for r in range(n_rep)])
    run = drive(reset(EGPlusMinus(schedule, eta=0.6, radius=U), spec), spec, data)
    np.testing.assert_allclose(run.w, want, rtol=0, atol=ITERATE_ATOL)
    assert (np.abs(run.w).sum(-1) <= U * (1 + 1e-12)).all()  # inside the ℓ1 ball of radius U
    assert DOMAINS[dom].contains(run.w.reshape(-1, dim)).all()


def test_translation_invariance_and_log_domain_stability():
    # adding c·1 to any g_t leaves w_{t+1} unchanged (and the declared bound: ranges)
    n_rep, horizon, dim = 2, 60, 4
    rng = np.random.default_rng(5)
    data = linear_data(rng, n_rep, horizon, dim)
    shifted = RoundData(g=data.g + rng.normal(size=(n_rep, horizon, 1)) * 50)
    spec = make_spec(dim, horizon, n_rep, DOMAINS["simplex"])
    for schedule in ("fixed", "sqrt"):
        a = drive(reset(EG(schedule, eta=0.4), spec), spec, data)
        b = drive(reset(EG(schedule, eta=0.4), spec), spec, shifted)
        np.testing.assert_allclose(a.w, b.w, rtol=0, atol=1e-12)
        np.testing.assert_allclose(a.bound, b.bound, rtol=1e-9)  # ranges differ by rounding
    huge = RoundData(g=data.g * 1e6)
    w = drive(reset(EG("fixed", eta=1.0), spec), spec, huge).w
    assert np.isfinite(w).all()
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)


def test_tuned_rates():
    G, horizon, dim = 2.0, 100, 6
    spec = make_spec(dim, horizon, 1, DOMAINS["simplex"], G=G)
    B = math.sqrt(2) * G  # max_i g_i − min_i g_i ≤ √2‖g‖₂
    assert reset(EG("fixed"), spec).learning_rate(7) == pytest.approx(
        math.sqrt(8 * math.log(dim) / (horizon * B * B))
    )
    assert reset(EG(), spec).learning_rate(4) == pytest.approx(
        math.sqrt(8 * math.log(dim) / (4 * B * B))
    )
    ball = make_spec(dim, horizon, 1, Domain("ball", 3.0), G=G)
    pm = reset(EGPlusMinus("fixed"), ball)
    assert pm.learning_rate(1) == pytest.approx(
        math.sqrt(8 * math.log(2 * dim) / (horizon * (2 * 3.0 * G) ** 2))
    )


ADAPTIVE = {
    "anti_gradient": anti_gradient,
    "follow_sign": follow_sign,
    "heaviest": heaviest_coordinate,
}


@pytest.mark.parametrize("stream", ["sphere", "box", "alternating", "sparse", *ADAPTIVE])
def test_eg_regret_bounds_on_every_stream(stream):
    G, horizon, n_rep, dim = 1.5, 400, 3, 6
    domain = DOMAINS["simplex"]
    spec = make_spec(dim, horizon, n_rep, domain, G=G)
    t = np.arange(1, horizon + 1)
    log_d = math.log(dim)
    for params in ({}, {"schedule": "fixed"}, {"eta": 0.05}, {"schedule": "fixed", "eta": 4.0}):
        player = reset(EG(**params), spec)
        if stream in ADAPTIVE:
            run = drive(player, spec, reveal=ADAPTIVE[stream](G), horizon=horizon)
        else:
            run = drive(
                player, spec, linear_data(np.random.default_rng(4), n_rep, horizon, dim, stream, G)
            )
        regret = linearized_regret(run.w, run.grads, domain)
        assert_below(regret, run.bound, f"{params} {stream}")
        g_inf = np.abs(run.grads).max(-1)
        if params == {}:  # anytime tuned: ≤ (3/√8)·B√(t ln d) = (3/2)G√(t ln d)
            assert_below(run.bound, 1.5 * G * np.sqrt(t * log_d), "(3/2)G√(T ln d)")
        if params == {"schedule": "fixed"}:  # tuned: ln d/η + ηB²t/8, = G√(T ln d) at T
            eta = math.sqrt(8 * log_d / (horizon * 2 * G * G))
            closed = log_d / eta + eta * 2 * G * G * t / 8
            assert closed[-1] == pytest.approx(G * math.sqrt(horizon * log_d))
            assert_below(run.bound, closed, "tuned fixed")
        if params.get("eta") == 4.0:
            # gradients in [a, a + 2G∞]: ln d/η + (η/2)Σ‖g_t‖_∞², the Hedge form, which
            # is also Shalev-Shwartz 2007 Cor 1's entropic framework bound (dual norm ‖·‖_∞): both
            # looser
            closed = log_d / 4.0 + 4.0 * np.cumsum(g_inf**2, axis=1) / 2
            assert_below(run.bound, closed, "Hedge form with 2G∞ ranges / Cor 1")


@pytest.mark.parametrize("stream", ["sphere", "sparse", "anti_gradient"])
@pytest.mark.parametrize("dom", ["unconstrained", "ball"])
def test_eg_pm_regret_against_the_l1_ball(dom, stream):
    G, horizon, n_rep, dim, U = 1.0, 300, 3, 5, 0.8
    spec = make_spec(dim, horizon, n_rep, DOMAINS[dom], G=G)
    for params in ({}, {"schedule": "fixed"}, {"eta": 0.1}):
        player = reset(EGPlusMinus(radius=U, **params), spec)
        bounds = []
        if stream == "anti_gradient":
            run = drive(player, spec, reveal=anti_gradient(G), horizon=horizon)
        else:
            run = drive(
                player, spec, linear_data(np.random.default_rng(3), n_rep, horizon, dim, stream, G)
            )
        assert np.isnan(run.bound).all()  # d > 1: the ℓ1 ball is not the game's comparator set
        # recompute the ℓ1-ball bound along the run: replay with l1_regret_bound after each round
        replay = reset(EGPlusMinus(radius=U, **params), spec)
        for j in range(horizon):
            replay.update(feedback("linear", 0.0, run.w[:, j], RoundData(g=run.grads[:, j])))
            bounds.append(replay.l1_regret_bound(j + 1))
        bounds = np.stack(bounds, axis=1)
        # best comparator in the ℓ1 ball of radius U: −U‖Σg‖_∞ (a signed vertex)
        played = np.cumsum(np.einsum("rtd,rtd->rt", run.grads, run.w), axis=1)
        regret = played + U * np.abs(np.cumsum(run.grads, axis=1)).max(-1)
        assert_below(regret, bounds, f"EG± {params} {stream}")


def test_eg_pm_declares_its_bound_in_one_dimension():
    # d = 1: the ℓ1 ball of radius U is the segment [−U, U], the game's ball/box of radius U
    G, horizon = 1.0, 200
    for dom in (Domain("ball", 0.5), Domain("box", 0.5)):
        spec = make_spec(1, horizon, 2, dom, G=G)
        run = drive(reset(EGPlusMinus(), spec), spec, reveal=anti_gradient(G), horizon=horizon)
        regret = linearized_regret(run.w, run.grads, dom)
        assert np.isfinite(run.bound).all()
        assert_below(regret, run.bound, "EG± in 1-d")


def test_config_errors():
    for player, dom, parameter in (
        (EG(eta=1.0), Domain("ball", 1.0), "domain"),
        (EG(), Domain("simplex"), "eta"),  # no G declared
        (EG(schedule="nope"), Domain("simplex"), "schedule"),
        (EGPlusMinus(eta=1.0), Domain("simplex"), "domain"),
        (EGPlusMinus(eta=1.0, radius=2.0), Domain("ball", 1.0), "radius"),
        (EGPlusMinus(eta=1.0, radius=-1.0), Domain("unconstrained"), "radius"),
    ):
        with pytest.raises(ConfigError) as err:
            validate_params(player)  # the declared constraints first, as the driver checks them
            reset(player, make_spec(3, 20, 1, dom))  # then what depends on the game
        assert err.value.parameter == parameter
        assert err.value.component == f"player {type(player).registry_name()}"


def test_end_to_end_with_the_engine():
    from arena.oco.testing import AntiGradient

    engine_check(EG(), FixedStream(domain="simplex", G=1.0), n_actions=4, horizon=100, replicates=2)
    engine_check(
        EGPlusMinus(), AntiGradient(G=1.0, radius=0.5), n_actions=1, horizon=100, replicates=2
    )


def literal_floor(u, eps):
    """Figure 7.3 of Shalev-Shwartz 2007 with the corrected normalizer, in plain floats: sort
    ascending, floor the first l for the smallest l with ``u_(l+1)/Z_l > ε``,
    ``Z_l = Σ_{j>l} u_(j)/(1 − lε)``, and ``u_j/Z_l`` elsewhere."""
    order = sorted(range(len(u)), key=lambda i: u[i])
    for ell in range(len(u)):
        z = sum(u[order[j]] for j in range(ell, len(u))) / (1.0 - ell * eps)
        if u[order[ell]] / z > eps:
            break
    w = [u[i] / z for i in range(len(u))]
    for j in range(ell):
        w[order[j]] = eps
    return w


@pytest.mark.parametrize("schedule", ["fixed", "sqrt"])
def test_floored_eg_matches_literal_transcription(schedule):
    n_rep, horizon, dim, eps, eta = 2, 60, 5, 0.08, 3.0
    data = linear_data(np.random.default_rng(53), n_rep, horizon, dim, G=3.0)
    spec = make_spec(dim, horizon, n_rep, DOMAINS["simplex"])
    run = drive(reset(EG(schedule=schedule, eta=eta, floor=eps), spec), spec, data)
    for r in range(n_rep):
        cum = [0.0] * dim
        for j in range(horizon):
            rate = eta / math.sqrt(j + 1) if schedule == "sqrt" else eta
            e = [math.exp(-rate * (c - min(cum))) for c in cum]
            want = literal_floor([v / sum(e) for v in e], eps)
            np.testing.assert_allclose(run.w[r, j], want, rtol=0, atol=ITERATE_ATOL)
            cum = [cum[i] + data.g[r, j, i] for i in range(dim)]
    assert run.w.min() >= eps - 1e-15
    assert (run.w.min(-1) <= eps + 1e-12).any()  # the floor binds on this stream
    plain = drive(reset(EG(schedule=schedule, eta=eta), spec), spec, data)
    zero = drive(reset(EG(schedule=schedule, eta=eta, floor=0.0), spec), spec, data)
    np.testing.assert_array_equal(zero.w, plain.w)


@pytest.mark.parametrize("stream", ["sphere", "alternating", *ADAPTIVE])
def test_floored_eg_regret_bound_on_every_stream(stream):
    G, horizon, n_rep, dim = 1.5, 300, 3, 6
    domain = DOMAINS["simplex"]
    spec = make_spec(dim, horizon, n_rep, domain, G=G)
    for params in (
        {"floor": 0.02},
        {"schedule": "fixed", "floor": 0.1},
        {"eta": 3.0, "floor": 0.15},
    ):
        player = reset(EG(**params), spec)
        if stream in ADAPTIVE:
            run = drive(player, spec, reveal=ADAPTIVE[stream](G), horizon=horizon)
        else:
            run = drive(
                player, spec, linear_data(np.random.default_rng(6), n_rep, horizon, dim, stream, G)
            )
        regret = linearized_regret(run.w, run.grads, domain)
        assert_below(regret, run.bound, f"{params} {stream}")
        # the floor term is in the declared bound: it exceeds plain EG's form on the same run
        ranges = run.grads.max(-1) - run.grads.min(-1)
        extra = params["floor"] * (dim - 1) * np.cumsum(ranges, axis=1)
        assert (run.bound >= extra).all()


def test_floor_must_leave_room_on_the_simplex():
    with pytest.raises(ConfigError) as err:
        reset(EG(eta=1.0, floor=0.25), make_spec(4, 20, 1, Domain("simplex")))
    assert err.value.parameter == "floor"
    with pytest.raises(ConfigError):
        validate_params(EG(floor=-0.1))
