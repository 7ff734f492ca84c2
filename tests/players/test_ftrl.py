"""Oracle tests of FTRL (``arena.players.ftrl``); its regularizers are tested in
``test_regularizers.py``.

Sources: Shalev-Shwartz 2007, Appendix A.4 (Lemmas 15–17), Lemma 2 (§3.5), Cor 1/2; Srebro, Lecture
16
(FTRL, linearized FTRL and its Ψ instances) and the checks: closed form = recursion, λ/t reduces to
fixed-step OGD, the off-by-2 between Ψ = ‖w‖² and ½‖w‖²).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.params import validate_params
from arena.players.ftrl import FTRL
from arena.players.ogd import OGD
from arena.players.regularizers import PNorm, make_regularizer
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

# ----------------------------------------------------------------------------------------------
# literal links (Shalev-Shwartz 2007, §5.1 and Appendix A.4), one vector, plain Python


def literal_link(name, domain, theta, p=None):
    if name == "l2":  # Proj_S(θ) (Example 1, Shalev-Shwartz 2007, §4.2)
        return literal_project(domain, theta)
    if name == "entropic":  # softmax(θ), shifted by the max (so no exponential overflows)
        m = max(theta)
        e = [math.exp(v - m) for v in theta]
        return [v / sum(e) for v in e]
    # p-norm: sign(θ_i)|θ_i|^{p−1}/((p−1)‖θ‖_p^{p−2}), 0 at θ = 0 (no 0/0)
    norm = sum(abs(v) ** p for v in theta) ** (1 / p)
    if norm == 0:
        return [0.0] * len(theta)
    return [math.copysign(abs(v) ** (p - 1), v) / ((p - 1) * norm ** (p - 2)) for v in theta]


def literal_ftrl(spec, data, r, name, schedule, eta, p=None):
    """w_t = argmin_{w∈K} ⟨Σ_{s<t} g_s, w⟩ + R(w)/η_t = ∇R*(−η_t Σ_{s<t} g_s) (Shalev-Shwartz 2007
    (3.7))."""
    d = spec.dim
    total = [0.0] * d
    out = []
    horizon = next(a for a in (data.g, data.x, data.y) if a is not None).shape[1]
    for j in range(horizon):
        rate = eta / math.sqrt(j + 1) if schedule == "sqrt" else eta
        w = literal_link(name, spec.domain, [-rate * v for v in total], p)
        out.append(w)
        rd = data.round(j)
        g = literal_round_grad(spec, rd, r, w)
        total = [total[i] + g[i] for i in range(d)]
    return np.array(out)


CASES = [
    *[("l2", dom, "linear", s, None) for dom in DOMAINS for s in ("fixed", "sqrt")],
    *[("entropic", "simplex", "linear", s, None) for s in ("fixed", "sqrt")],
    *[("pnorm", "unconstrained", "linear", s, p) for s in ("fixed", "sqrt") for p in (2.5, 4.0)],
    ("l2", "ball", "hinge", "sqrt", None),
    ("entropic", "simplex", "logistic", "sqrt", None),
    ("pnorm", "unconstrained", "squared", "fixed", 3.0),
    ("l2", "box", "absolute", "fixed", None),
]


@pytest.mark.parametrize(("name", "dom", "loss", "schedule", "p"), CASES)
def test_matches_literal_transcription(name, dom, loss, schedule, p):
    n_rep, horizon, dim = 3, 80, 4
    rng = np.random.default_rng(41)
    if loss == "linear":
        data = linear_data(rng, n_rep, horizon, dim)
    else:
        data = example_data(rng, n_rep, horizon, dim, loss)
    spec = make_spec(dim, horizon, n_rep, DOMAINS[dom], loss)
    want = np.stack([literal_ftrl(spec, data, r, name, schedule, 0.3, p) for r in range(n_rep)])
    player = FTRL(regularizer=name, schedule=schedule, eta=0.3, p=p)
    run = drive(reset(player, spec), spec, data)
    np.testing.assert_allclose(run.w, want, rtol=0, atol=ITERATE_ATOL)
    assert DOMAINS[dom].contains(run.w.reshape(-1, dim)).all()
    # the default play_block (the per-round loop) gives the same points
    from tests.helpers.oco import play_split

    got = play_split(reset(player, spec), spec, data, [7, 30])
    np.testing.assert_allclose(got, want, rtol=0, atol=ITERATE_ATOL)


def test_closed_form_equals_recursion():
    # closed form = recursion (Srebro, Lecture 16), in our indexing (the lecture's 1/(2λ_t t) is
    # η_{t+1} for Ψ = ‖w‖²):
    # w_{t+1} = (η_{t+1}/η_t) w_t − η_{t+1} g_t for any positive non-increasing η_t
    n_rep, horizon, dim = 2, 100, 3
    data = linear_data(np.random.default_rng(1), n_rep, horizon, dim)
    spec = make_spec(dim, horizon, n_rep, DOMAINS["unconstrained"])
    w = drive(reset(FTRL("l2", "sqrt", eta=0.7), spec), spec, data).w
    rate = 0.7 / np.sqrt(np.arange(1, horizon + 1))
    rec = np.zeros_like(w)
    for t in range(horizon - 1):
        rec[:, t + 1] = rate[t + 1] / rate[t] * rec[:, t] - rate[t + 1] * data.g[:, t]
    np.testing.assert_allclose(w, rec, rtol=0, atol=1e-12)


def test_lambda_over_t_is_fixed_step_ogd_and_the_off_by_two():
    # λ_t = λ/t ⇒ w_{t+1} = w_t − g_t/λ for Ψ = ½‖w‖² (Srebro's Euclidean example), but w_t −
    # g_t/(2λ) for
    # the lecture's Ψ = ‖w‖² (Srebro, Lecture 16), i.e. our η = 1/(2λ): the most likely off-by-2 bug
    lam, n_rep, horizon, dim = 4.0, 2, 60, 3
    data = linear_data(np.random.default_rng(2), n_rep, horizon, dim)
    spec = make_spec(dim, horizon, n_rep, DOMAINS["unconstrained"])
    half = drive(reset(FTRL("l2", "fixed", eta=1 / lam), spec), spec, data).w
    ogd = drive(reset(OGD("fixed", eta=1 / lam), spec), spec, data).w
    np.testing.assert_allclose(half, ogd, rtol=0, atol=1e-12)
    step_004 = np.concatenate(
        [np.zeros((n_rep, 1, dim)), -np.cumsum(data.g, axis=1)[:, :-1] / (2 * lam)], axis=1
    )  # literal (Srebro, Lecture 16) recursion from w_1 = 0
    full = drive(reset(FTRL("l2", "fixed", eta=1 / (2 * lam)), spec), spec, data).w
    np.testing.assert_allclose(full, step_004, rtol=0, atol=1e-12)
    assert np.abs(half - full).max() > 0.1


def test_pnorm_with_p_2_is_euclidean_and_instances_work():
    n_rep, horizon, dim = 2, 50, 4
    data = linear_data(np.random.default_rng(3), n_rep, horizon, dim)
    spec = make_spec(dim, horizon, n_rep, DOMAINS["unconstrained"])
    two = drive(reset(FTRL("pnorm", "sqrt", eta=0.5, p=2.0), spec), spec, data).w
    l2 = drive(reset(FTRL("l2", "sqrt", eta=0.5), spec), spec, data).w
    np.testing.assert_allclose(two, l2, rtol=0, atol=1e-12)
    inst = drive(reset(FTRL(PNorm(p=3.0), "sqrt", eta=0.5), spec), spec, data).w
    named = drive(reset(FTRL("pnorm", "sqrt", eta=0.5, p=3.0), spec), spec, data).w
    np.testing.assert_array_equal(inst, named)
    # default p = max(2, 2 ln d) (Gentile 2003)
    big = make_spec(50, 10, 1, DOMAINS["unconstrained"])
    player = reset(FTRL("pnorm", eta=0.5), big)
    assert player.regularizer_object.p == pytest.approx(2 * math.log(50))
    assert player.bounds(1) == {}  # ℝ^d: no comparator bound


ADAPTIVE = {
    "anti_gradient": anti_gradient,
    "follow_sign": follow_sign,
    "heaviest": heaviest_coordinate,
}


@pytest.mark.parametrize("stream", ["sphere", "box", "alternating", "sparse", *ADAPTIVE])
@pytest.mark.parametrize(
    ("name", "dom"), [("l2", "ball"), ("l2", "box"), ("l2", "simplex"), ("entropic", "simplex")]
)
def test_regret_bounds_on_every_stream(name, dom, stream):
    G, horizon, n_rep, dim = 1.5, 300, 3, 5
    domain = DOMAINS[dom]
    spec = make_spec(dim, horizon, n_rep, domain, G=G)
    U = make_regularizer(name, domain).max_value(domain, dim)
    L = G * G / 2
    t = np.arange(1, horizon + 1)
    for params in ({}, {"schedule": "fixed"}, {"eta": 0.02}, {"schedule": "fixed", "eta": 3.0}):
        player = reset(FTRL(regularizer=name, **params), spec)
        if stream in ADAPTIVE:
            run = drive(player, spec, reveal=ADAPTIVE[stream](G), horizon=horizon)
        else:
            data = linear_data(np.random.default_rng(7), n_rep, horizon, dim, stream, G)
            run = drive(player, spec, data)
        regret = linearized_regret(run.w, run.grads, domain)
        assert_below(regret, run.bound, f"{name} {params} {stream}")
        if params == {}:  # Cor 2 (direct computation; Cor 2 prints 4√(LUT)): ≤ 3√(LUT)
            assert_below(run.bound, 3 * np.sqrt(L * U * t), "3√(LUT)")
            if name == "l2" and dom == "ball":  # (Srebro, Lecture 16), cumulative: √(32 G²B² t)
                assert_below(regret, np.sqrt(32 * G**2 * domain.radius**2 * t), "√32·GB√t")
        if params == {"schedule": "fixed"}:  # Cor 1: U/η + ηLt, = 2√(LUT) at t = T
            eta = math.sqrt(U / (L * horizon))
            closed = U / eta + eta * L * t
            assert closed[-1] == pytest.approx(2 * math.sqrt(L * U * horizon))
            assert_below(run.bound, closed, "Cor 1")


def test_config_errors():
    ball = make_spec(3, 20, 1, Domain("ball", 1.0), G=1.0)
    for params, spec, parameter in (
        ({"regularizer": "entropic"}, ball, "regularizer"),
        ({"regularizer": "pnorm", "eta": 1.0}, ball, "regularizer"),
        ({"regularizer": "l2", "p": 3.0}, ball, "regularizer"),
        ({"regularizer": "pnorm", "p": 1.5, "eta": 1.0}, make_spec(3, 20), "p"),
        ({"regularizer": "nope"}, ball, "regularizer"),
        ({"schedule": "lazy"}, ball, "schedule"),
        ({"eta": -1}, ball, "eta"),
        ({}, make_spec(3, 20, 1, Domain("unconstrained"), G=1.0), "eta"),
        ({"schedule": "fixed"}, make_spec(3, None, 1, Domain("ball", 1.0), G=1.0), "eta"),
    ):
        player = FTRL(**params)
        with pytest.raises(ConfigError) as err:
            validate_params(player)  # the declared constraints first, as the driver checks them
            reset(player, spec)  # then what depends on the game
        assert err.value.parameter == parameter and err.value.component == "player ftrl"


def test_end_to_end_with_the_engine():
    from arena.oco.testing import AntiGradient

    engine_check(FTRL(), AntiGradient(G=2.0, radius=0.5), n_actions=3, horizon=100, replicates=2)
    engine_check(
        FTRL("entropic", "fixed", eta=0.3),
        FixedStream(domain="simplex", G=1.0),
        n_actions=4,
        horizon=100,
        replicates=2,
    )


# ----------------------------------------------------------------------------------------------
# objective="raw": FTRL on the convex losses themselves, against a generic convex solver


def raw_objective(loss, sigma, w, data, r, upto, eta_t):
    """Σ_{s<upto} f_s(w) + ‖w‖²/(2η_t), the losses by the textbook formulas (plain loops)."""
    from arena.oco.literal import round_loss

    total = sum(round_loss(loss, sigma, w, data.round(s), r)[0] for s in range(upto))
    return total + float(w @ w) / (2.0 * eta_t)


def generic_argmin(loss, sigma, data, r, upto, eta_t, domain, dim):
    """The regularized cumulative loss minimized by scipy's SLSQP, in epigraph form for the kinked
    losses (hinge, absolute: slack ξ_s ≥ each linear piece), with the domain as constraints."""
    from scipy.optimize import minimize

    rounds = [data.round(s) for s in range(upto)]
    kinked = loss in ("hinge", "absolute")
    n_xi = upto if kinked else 0

    def split(v):
        return v[:dim], v[dim:]

    def fun(v):
        w, xi = split(v)
        if kinked:
            sig = sum(
                0.5 * sigma * float((w - rd.z[r]) @ (w - rd.z[r])) for rd in rounds
            ) if sigma else 0.0  # fmt: skip
            return float(xi.sum()) + sig + float(w @ w) / (2.0 * eta_t)
        return raw_objective(loss, sigma, w, data, r, upto, eta_t)

    cons = []
    for s, rd in enumerate(rounds):
        if not kinked:
            break
        x, y = rd.x[r], float(rd.y[r])
        if loss == "hinge":
            cons.append({"type": "ineq", "fun": lambda v, s=s: v[dim + s]})
            cons.append(
                {"type": "ineq", "fun": lambda v, s=s, x=x, y=y: v[dim + s] - 1 + y * (x @ v[:dim])}
            )
        else:
            cons.append(
                {"type": "ineq", "fun": lambda v, s=s, x=x, y=y: v[dim + s] - (x @ v[:dim] - y)}
            )
            cons.append(
                {"type": "ineq", "fun": lambda v, s=s, x=x, y=y: v[dim + s] + (x @ v[:dim] - y)}
            )
    bounds = [(None, None)] * (dim + n_xi)
    if domain.kind == "ball":
        cons.append({"type": "ineq", "fun": lambda v: domain.radius**2 - v[:dim] @ v[:dim]})
    elif domain.kind == "box":
        bounds[:dim] = [(-domain.radius, domain.radius)] * dim
    elif domain.kind == "simplex":
        bounds[:dim] = [(0.0, None)] * dim
        cons.append({"type": "eq", "fun": lambda v: v[:dim].sum() - 1.0})
    v0 = np.concatenate(
        [domain.project(np.zeros(dim)), np.full(n_xi, 2.0 + 10 * (loss == "absolute"))]
    )
    res = minimize(fun, v0, method="SLSQP", bounds=bounds, constraints=cons,
                   options={"ftol": 1e-14, "maxiter": 1000})  # fmt: skip
    return res.x[:dim]


RAW_CASES = [
    ("squared", "unconstrained", "fixed", 0.0),
    ("squared", "ball", "sqrt", 0.0),
    ("squared", "box", "fixed", 0.3),
    ("squared", "simplex", "sqrt", 0.0),
    ("logistic", "unconstrained", "fixed", 0.0),
    ("logistic", "ball", "sqrt", 0.3),
    ("hinge", "ball", "fixed", 0.0),
    ("hinge", "unconstrained", "sqrt", 0.0),
    ("absolute", "box", "fixed", 0.0),
    ("linear", "ball", "sqrt", 0.3),
]


@pytest.mark.parametrize(("loss", "dom", "schedule", "sigma"), RAW_CASES)
def test_raw_equals_a_generic_convex_solver(loss, dom, schedule, sigma):
    n_rep, horizon, dim, eta = 2, 12, 3, 0.4
    rng = np.random.default_rng(7)
    if loss == "linear":
        data = linear_data(rng, n_rep, horizon, dim, sigma=sigma)
    else:
        data = example_data(rng, n_rep, horizon, dim, loss, sigma=sigma)
    domain = DOMAINS[dom]
    spec = make_spec(dim, horizon, n_rep, domain, loss, sigma=sigma)
    run = drive(reset(FTRL(schedule=schedule, eta=eta, objective="raw"), spec), spec, data)
    for r in range(n_rep):
        for t in range(1, horizon + 1):  # w_t minimizes the first t − 1 losses
            eta_t = eta / math.sqrt(t) if schedule == "sqrt" else eta
            want = generic_argmin(loss, sigma, data, r, t - 1, eta_t, domain, dim)
            got = run.w[r, t - 1]
            f_got = raw_objective(loss, sigma, got, data, r, t - 1, eta_t)
            f_want = raw_objective(loss, sigma, want, data, r, t - 1, eta_t)
            # the exact solver is never worse than SLSQP, and the unique minimizer is the same
            assert f_got <= f_want + 1e-9 * max(1.0, abs(f_want))
            np.testing.assert_allclose(got, want, atol=1e-5)
    assert domain.contains(run.w.reshape(-1, dim)).all()


def test_raw_squared_equals_the_closed_form():
    # unconstrained: w_t = (Σ_{s<t} x xᵀ + I/η)⁻¹ Σ_{s<t} y x (ridge regression of the past)
    n_rep, horizon, dim, eta = 2, 40, 4, 0.5
    data = example_data(np.random.default_rng(3), n_rep, horizon, dim, "squared")
    spec = make_spec(dim, horizon, n_rep, DOMAINS["unconstrained"], "squared")
    run = drive(reset(FTRL(schedule="fixed", eta=eta, objective="raw"), spec), spec, data)
    for r in range(n_rep):
        for t in range(horizon):
            x, y = data.x[r, :t], data.y[r, :t]
            want = np.linalg.solve(x.T @ x + np.eye(dim) / eta, x.T @ y)
            np.testing.assert_allclose(run.w[r, t], want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dom", ["ball", "box", "simplex", "unconstrained"])
def test_raw_equals_linearized_on_linear_losses(dom):
    n_rep, horizon, dim = 2, 50, 3
    data = linear_data(np.random.default_rng(5), n_rep, horizon, dim)
    spec = make_spec(dim, horizon, n_rep, DOMAINS[dom])
    lin = drive(reset(FTRL(schedule="sqrt", eta=0.3), spec), spec, data).w
    raw = drive(reset(FTRL(schedule="sqrt", eta=0.3, objective="raw"), spec), spec, data).w
    np.testing.assert_allclose(raw, lin, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("adversary", "params"),
    [
        ("separable_stream", {"domain": "ball", "loss": "hinge"}),
        ("separable_stream", {"domain": "ball", "loss": "logistic", "noise": 0.1}),
        ("separable_stream", {"domain": "ball", "loss": "squared", "radius": 1.0}),
        ("random_linear", {}),
        ("self_confirming", {}),
    ],
)
def test_raw_declared_bound_holds_on_catalog_adversaries(adversary, params):
    from arena import play, registry
    from tests.helpers import check_declared

    adv = registry.make("adversary", adversary, **params)
    rows = play(
        FTRL(schedule="fixed", objective="raw"), adv, n_actions=3, horizon=60, replicates=2,
        metrics=["regret", "bound"], checkpoints=[1, 10, 60],
    )  # fmt: skip
    assert check_declared(rows, f"ftrl raw vs {adversary}") == 6


def test_raw_refusals_and_no_bound_with_a_moving_rate():
    spec = make_spec(3, 10, 1, DOMAINS["simplex"])
    with pytest.raises(ConfigError, match="'l2' only"):
        reset(FTRL("entropic", eta=0.5, objective="raw"), spec)
    spec = make_spec(6, 10, 1, DOMAINS["unconstrained"], "multiclass_hinge")
    with pytest.raises(ConfigError, match="no exact solver"):
        reset(FTRL(eta=0.5, objective="raw"), spec)
    spec = make_spec(3, 10, 1, DOMAINS["ball"], G=1.0)
    assert reset(FTRL(schedule="sqrt", eta=0.5, objective="raw"), spec).bounds(3) == {}
    fixed = reset(FTRL(schedule="fixed", eta=0.5, objective="raw"), spec)
    # U/η + ηtG² with U = ½·2² on the ball of radius 2
    assert fixed.bounds(3)[("regret", math.nan)].tolist() == [2.0 / 0.5 + 0.5 * 3]
