"""The projections of Shalev-Shwartz 2007, §7.1, against a QP / convex solver and their KKT."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from arena.oco.domains import project_simplex as domain_project_simplex
from arena.players._projections import (
    entropic_floor_row,
    l1_ball_row,
    project_entropic_floor,
    project_l1_ball,
    project_simplex,
    simplex_row,
)

SOLVER_TOL = 1e-6
"""On these 2..8-dimensional instances SLSQP lands within 4.4e-14 (simplex), 6.4e-14 (ℓ1 ball)
and 5.4e-8 (entropic floor, a non-quadratic objective) of the kernels' points; 1e-6 leaves a
margin and still fails a wrong support or normalizer (the printed Fig 7.3 recursion errs by
≥ 1e-2 on such instances)."""


def _slsqp(objective, grad, x0, constraints, bounds=None):
    res = minimize(
        objective,
        x0,
        jac=grad,
        method="SLSQP",
        constraints=constraints,
        bounds=bounds,
        options={"ftol": 1e-14, "maxiter": 500},
    )
    # Status 8 ("positive directional derivative") is SLSQP's line search stalling at the
    # optimum to working precision; the comparison below still judges the point.
    assert res.success or res.status == 8, res.message
    return res.x


def _qp_simplex(v, z):
    """``argmin ½‖w − v‖²`` s.t. ``w ≥ 0, Σw = z`` by SLSQP."""
    d = v.size
    return _slsqp(
        lambda w: 0.5 * np.sum((w - v) ** 2),
        lambda w: w - v,
        np.full(d, z / d),
        [{"type": "eq", "fun": lambda w: w.sum() - z, "jac": lambda w: np.ones(d)}],
        bounds=[(0.0, None)] * d,
    )


def _qp_l1(v, z):
    """``argmin ½‖w − v‖²`` s.t. ``‖w‖₁ ≤ z`` as a QP in ``(w⁺, w⁻) ≥ 0``, ``Σ(w⁺ + w⁻) ≤ z``."""
    d = v.size

    def obj(x):
        return 0.5 * np.sum((x[:d] - x[d:] - v) ** 2)

    def grad(x):
        r = x[:d] - x[d:] - v
        return np.concatenate([r, -r])

    x = _slsqp(
        obj,
        grad,
        np.zeros(2 * d),
        [{"type": "ineq", "fun": lambda x: z - x.sum(), "jac": lambda x: -np.ones(2 * d)}],
        bounds=[(0.0, None)] * (2 * d),
    )
    return x[:d] - x[d:]


def _kl_floor(u, eps):
    """``argmin Σ w ln(w/u)`` s.t. ``w ≥ ε, Σw = 1`` by SLSQP."""
    d = u.size
    return _slsqp(
        lambda w: float(np.sum(w * np.log(w / u))),
        lambda w: np.log(w / u) + 1.0,
        np.full(d, 1.0 / d),
        [{"type": "eq", "fun": lambda w: w.sum() - 1.0, "jac": lambda w: np.ones(d)}],
        bounds=[(eps, 1.0)] * d,
    )


def _instances(seed, count=40):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        d = int(rng.integers(2, 9))
        yield rng, d, rng.normal(scale=float(rng.choice([0.3, 1.0, 3.0])), size=d)


def test_simplex_matches_the_qp_and_its_kkt():
    for rng, _d, v in _instances(1):
        z = float(rng.choice([0.5, 1.0, 2.5]))
        w = project_simplex(v, z)
        np.testing.assert_allclose(w, _qp_simplex(v, z), atol=SOLVER_TOL)
        # Feasible, and KKT (Fig 7.1 / Lemma 7): w_i = v_i − θ on the support, v_i ≤ θ off it.
        assert w.min() >= 0.0 and abs(w.sum() - z) < 1e-12
        support = w > 0
        theta = float(np.mean(v[support] - w[support]))
        np.testing.assert_allclose(v[support] - w[support], theta, atol=1e-12)
        assert np.all(v[~support] <= theta + 1e-12)


def test_simplex_agrees_with_the_domain_projection_and_is_idempotent():
    v = np.random.default_rng(2).normal(size=(30, 7))
    w = project_simplex(v)
    np.testing.assert_allclose(w, domain_project_simplex(v), atol=1e-15)
    np.testing.assert_allclose(project_simplex(w), w, atol=1e-15)


def test_l1_ball_matches_the_qp_keeps_signs_and_is_idempotent():
    for rng, _d, v in _instances(3):
        z = float(rng.choice([0.3, 1.0, 2.0]))
        w = project_l1_ball(v, z)
        np.testing.assert_allclose(w, _qp_l1(v, z), atol=SOLVER_TOL)
        assert np.abs(w).sum() <= z * (1.0 + 1e-12)
        assert np.all(w * v >= 0.0)  # Lemma 8: same signs (or 0)
        np.testing.assert_allclose(project_l1_ball(w, z), w, atol=1e-15)
        # KKT: outside the ball, v − w = θ·sign(w) on the support and |v_i| ≤ θ off it.
        if np.abs(v).sum() > z:
            support = w != 0
            theta = float(np.mean(np.abs(v[support]) - np.abs(w[support])))
            assert theta > 0
            np.testing.assert_allclose(np.abs(v[support]) - np.abs(w[support]), theta, atol=1e-12)
            assert np.all(np.abs(v[~support]) <= theta + 1e-12)


def test_l1_ball_leaves_inside_points_alone():
    v = np.array([0.25, -0.5, 0.0])
    assert project_l1_ball(v, 1.0).tolist() == v.tolist()


def test_entropic_floor_matches_the_convex_solver_and_lemma_9():
    for rng, d, _ in _instances(4):
        u = rng.dirichlet(np.full(d, float(rng.choice([0.2, 1.0]))))
        u = np.maximum(u, 1e-9)
        eps = float(rng.uniform(0.0, 0.9 / d))
        w = project_entropic_floor(u, eps)
        np.testing.assert_allclose(w, _kl_floor(u, eps), atol=SOLVER_TOL)
        assert w.min() >= eps - 1e-15 and abs(w.sum() - 1.0) < 1e-12
        # Lemma 9: off the floor w ∝ u, and the floored set is a prefix of ascending u.
        free = w > eps + 1e-15
        ratio = w[free] / u[free]
        np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)
        if (~free).any() and free.any():
            assert u[~free].max() <= u[free].min()
        np.testing.assert_allclose(project_entropic_floor(w, eps), w, atol=1e-15)


def test_entropic_floor_without_floor_normalizes_and_scale_does_not_matter():
    u = np.array([[1.0, 3.0, 6.0]])
    np.testing.assert_allclose(project_entropic_floor(u, 0.0), u / 10.0, rtol=1e-15)
    np.testing.assert_array_equal(
        project_entropic_floor(1e-3 * u, 0.2), project_entropic_floor(u, 0.2)
    )


def test_entropic_floor_corrects_the_printed_recursion():
    """Two floored weights: the printed Fig 7.3 recursion ``Z ← Z + (εZ − u_l)/(1−ε)`` leaves
    ``Σw ≠ 1`` here; the kernel's ``Z_l = Σ_{j>l} u_j/(1 − lε)`` sums to 1."""
    u = np.array([0.001, 0.002, 0.497, 0.5])
    eps = 0.1
    w = project_entropic_floor(u, eps)
    assert w[:2].tolist() == [eps, eps]
    assert w.sum() == pytest.approx(1.0, abs=1e-15)
    z, printed = u.sum(), []
    for ell in range(2):
        z = z + (eps * z - u[ell]) / (1.0 - eps)
    printed = np.concatenate([[eps, eps], u[2:] / z])
    assert abs(printed.sum() - 1.0) > 1e-3


def test_row_kernels_may_write_in_place():
    rng = np.random.default_rng(5)
    for kernel, arg, make in (
        (simplex_row, 1.0, lambda: rng.normal(size=6)),
        (l1_ball_row, 0.7, lambda: rng.normal(size=6)),
        (entropic_floor_row, 0.05, lambda: rng.random(6) + 1e-3),
    ):
        v = make()
        expected = np.empty_like(v)
        kernel(v.copy(), arg, expected)
        kernel(v, arg, v)
        np.testing.assert_array_equal(v, expected)
