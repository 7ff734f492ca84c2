"""Oracle tests of the regularizers of FTRL and the primal-dual player
(``arena.players.regularizers``): Shalev-Shwartz 2007, Appendix A.4 (Lemmas 15–17) — Fenchel–Young,
smoothness, Lipschitz links, strong convexity, links as argmax, mirror maps, maximum values,
overflow.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from arena.oco.domains import Domain
from arena.players.regularizers import Entropic, Euclidean, PNorm
from tests.helpers import assert_below

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
