"""Oracle tests of FTRL (``players.ftrl``) and its regularizers (``players.regularizers``).

Sources: Shalev-Shwartz 2007, Appendix A.4 (Lemmas 15–17), Lemma 2 (§3.5), Cor 1/2; Srebro, Lecture
16
(FTRL, linearized FTRL and its Ψ instances) and the checks: closed form = recursion, λ/t reduces to
fixed-step OGD, the off-by-2 between Ψ = ‖w‖² and ½‖w‖²).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from arena.errors import ConfigError
from arena.oco.domains import Domain
from players.ftrl import FTRL
from players.ogd import OGD
from players.regularizers import Entropic, Euclidean, PNorm, make_regularizer
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
        ({"regularizer": "pnorm", "p": 1.5, "eta": 1.0}, make_spec(3, 20), "regularizer"),
        ({"regularizer": "nope"}, ball, "regularizer"),
        ({"schedule": "lazy"}, ball, "schedule"),
        ({"eta": -1}, ball, "eta"),
        ({}, make_spec(3, 20, 1, Domain("unconstrained"), G=1.0), "eta"),
        ({"schedule": "fixed"}, make_spec(3, None, 1, Domain("ball", 1.0), G=1.0), "eta"),
    ):
        with pytest.raises(ConfigError) as err:
            reset(FTRL(**params), spec)
        assert err.value.parameter == parameter


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
# regularizers: Shalev-Shwartz 2007, Appendix A.4 (Lemmas 15–17)

REGS = [
    ("l2-ball", Euclidean(Domain("ball", 1.5))),
    ("l2-box", Euclidean(Domain("box", 0.7))),
    ("l2-simplex", Euclidean(Domain("simplex"))),
    ("l2-free", Euclidean()),
    ("entropic", Entropic()),
    ("pnorm-3", PNorm(p=3.0)),
    ("pnorm-7", PNorm(p=7.0)),
]


def random_in(reg, rng, d, n):
    """n random points of the regularizer's domain S."""
    kind = reg.domain.kind
    if kind == "simplex":
        return rng.dirichlet(np.ones(d) * 0.7, size=n)
    w = rng.standard_normal((n, d))
    return reg.domain.project(w * (2.0 if kind != "unconstrained" else 1.0))


@pytest.mark.parametrize(("label", "reg"), REGS, ids=[r[0] for r in REGS])
def test_regularizer_identities(label, reg):
    rng = np.random.default_rng(8)
    d, n = 4, 60
    theta = rng.standard_normal((n, d)) * 2.0
    lam = rng.standard_normal((n, d))
    w = reg.link(theta)
    assert reg.domain.contains(w).all()
    # Fenchel–Young at the link: f(∇f*(θ)) + f*(θ) = ⟨∇f*(θ), θ⟩ (Lemma 15.2, Lemma 11)
    np.testing.assert_allclose(
        reg.value(w) + reg.conjugate(theta), np.einsum("nd,nd->n", w, theta), atol=1e-12
    )
    # f*(θ) ≥ ⟨u, θ⟩ − f(u) for u ∈ S (definition of the conjugate)
    u = random_in(reg, rng, d, n)
    assert_below(np.einsum("nd,nd->n", u, theta) - reg.value(u), reg.conjugate(theta), "sup")
    # smoothness (Lemma 15.4): f*(θ+λ) − f*(θ) ≤ ⟨∇f*(θ), λ⟩ + ½‖λ‖_*²
    lhs = reg.conjugate(theta + lam) - reg.conjugate(theta)
    rhs = np.einsum("nd,nd->n", w, lam) + 0.5 * reg.dual_norm(lam) ** 2
    assert_below(lhs, rhs, "smoothness")
    # Lipschitz link (Lemma 15.3): ‖∇f*(θ₁) − ∇f*(θ₂)‖ ≤ ‖θ₁ − θ₂‖_*
    assert_below(reg.norm(reg.link(theta + lam) - w), reg.dual_norm(lam), "Lipschitz link")
    # 1-strong convexity on S (Def 4; Lemma 16 for the entropy, Lemma 17 for the p-norm)
    v = random_in(reg, rng, d, n)
    a = rng.random((n, 1))
    mid = reg.value(a * u + (1 - a) * v)
    chord = a[:, 0] * reg.value(u) + (1 - a[:, 0]) * reg.value(v)
    assert_below(mid, chord - 0.5 * a[:, 0] * (1 - a[:, 0]) * reg.norm(u - v) ** 2, "strong cvx")
    # ∇f* is the gradient of f* (central differences, step 1e-6: error ~1e-9)
    h = 1e-6
    for i in range(d):
        e = np.zeros(d)
        e[i] = h
        fd = (reg.conjugate(theta + e) - reg.conjugate(theta - e)) / (2 * h)
        np.testing.assert_allclose(fd, w[:, i], atol=1e-6)
    # f ≥ 0 on S (Lemma 2's precondition) and max_value bounds it
    top = reg.max_value(reg.domain, d)
    assert (reg.value(u) >= -1e-12).all()
    if math.isfinite(top):
        assert_below(reg.value(u), top, "max_value")


@pytest.mark.parametrize(("label", "reg"), REGS[:5], ids=[r[0] for r in REGS[:5]])
def test_link_is_the_argmax(label, reg):
    # ∇f*(θ) = argmax_{w∈S} ⟨w, θ⟩ − f(w) (Lemma 15.2), checked with scipy on small instances
    rng = np.random.default_rng(9)
    d = 3
    kind = reg.domain.kind
    for _ in range(4):
        theta = rng.standard_normal(d) * 1.5
        cons = []
        if kind == "ball":
            cons = [{"type": "ineq", "fun": lambda x: reg.domain.radius**2 - x @ x}]
        elif kind == "simplex":
            cons = [{"type": "eq", "fun": lambda x: x.sum() - 1.0}]
        bounds = None
        if kind == "box":
            bounds = [(-reg.domain.radius, reg.domain.radius)] * d
        elif kind == "simplex":
            bounds = [(1e-12, 1.0)] * d
        res = minimize(
            lambda x, theta=theta: float(reg.value(x) - x @ theta),
            np.full(d, 1.0 / d),
            method="SLSQP",
            bounds=bounds,
            constraints=cons,
            options={"ftol": 1e-15, "maxiter": 500},
        )
        np.testing.assert_allclose(reg.link(theta), res.x, atol=1e-5)  # SLSQP accuracy


def test_mirror_maps_are_inverse_and_max_values():
    rng = np.random.default_rng(10)
    for p in (2.0, 3.0, 10.0):
        reg = PNorm(p=p)
        theta = rng.standard_normal((20, 5))
        # mirror maps are inverse pairs
        np.testing.assert_allclose(reg.grad(reg.link(theta)), theta, atol=1e-12)
        w = rng.standard_normal((20, 5))
        np.testing.assert_allclose(reg.link(reg.grad(w)), w, atol=1e-12)
        assert reg.link(np.zeros((1, 5))).tolist() == [[0.0] * 5]  # Link(0) = 0 (P2)
        # max over a box/ball/simplex, attained at a corner/diagonal/vertex
        q, d = reg.q, 5
        corner = np.full(d, 0.7)
        assert reg.max_value(Domain("box", 0.7), d) == pytest.approx(float(reg.value(corner)))
        diag = np.full(d, 2.0 / math.sqrt(d))
        assert reg.max_value(Domain("ball", 2.0), d) == pytest.approx(float(reg.value(diag)))
        assert reg.max_value(Domain("simplex"), d) == pytest.approx(1 / (2 * (q - 1)))
    ent = Entropic()
    w = rng.dirichlet(np.ones(5), size=10)
    np.testing.assert_allclose(ent.link(ent.grad(w)), w, atol=1e-12)  # softmax(1 + ln w) = w
    assert ent.max_value(Domain("simplex"), 5) == math.log(5)
    assert float(ent.value(np.eye(5)[0])) == pytest.approx(math.log(5))  # attained at a vertex
    assert Euclidean().max_value(Domain("box", 0.5), 4) == pytest.approx(0.5 * 0.25 * 4)


def test_links_do_not_overflow():
    big = np.array([[1e5, -3e5, 2.0]])
    np.testing.assert_allclose(Entropic().link(big), [[1.0, 0.0, 0.0]])
    assert np.isfinite(Entropic().conjugate(big)).all()
    reg = PNorm(p=60.0)
    w = reg.link(np.array([[1e8, -3e7, 5e7]]))  # |θ_i|^59 alone would overflow
    assert np.isfinite(w).all()
    np.testing.assert_allclose(reg.grad(w), [[1e8, -3e7, 5e7]], rtol=1e-9)


def test_on_moves_the_domain_and_rejects_unsupported_sets():
    reg = Euclidean(Domain("ball", 1.0)).on(Domain("box", 2.0))
    np.testing.assert_allclose(reg.link(np.array([3.0, -1.0])), [2.0, -1.0])
    with pytest.raises(ValueError):
        Entropic().on(Domain("ball", 1.0))
    with pytest.raises(ValueError):
        PNorm(p=3.0).on(Domain("ball", 1.0))
    assert PNorm(p=3.0).on(Domain("unconstrained")).p == 3.0
