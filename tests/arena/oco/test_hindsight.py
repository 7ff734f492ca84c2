"""Tests of :mod:`arena.oco.hindsight`: each solver against brute force or scipy, small instances.

Oracles: exhaustive active-set enumeration (box / simplex quadratics, exact), the KKT conditions
(ball quadratics: sufficient for optimality when H ⪰ 0, so they certify exactness), vertex
enumeration (linear), and scipy SLSQP with the domain as constraints, started from two points and
with its answer projected onto the domain and re-evaluated (a feasible upper bound on the true
minimum, accurate to ~1e-8 relative). Every returned minimizer must be feasible and attain the
returned value. Per-round minima are checked against :func:`best_examples` on one-round data,
which uses entirely different code paths (LP, dual, Newton) from the closed forms.
"""

from __future__ import annotations

import itertools
import math
import warnings
import zlib

import numpy as np
import pytest
import scipy.optimize as so

from arena.oco import hindsight as hs
from arena.oco.domains import Domain
from arena.oco.hindsight.certificates import _center
from arena.oco.losses import RoundData, evaluate, prediction_loss

pytestmark = pytest.mark.usefixtures("single_threaded_blas")  # thousands of tiny dense solves


DOMAINS = {
    "unconstrained": Domain("unconstrained"),
    "ball": Domain("ball", 0.8),
    "box": Domain("box", 0.5),
    "simplex": Domain("simplex"),
}
DIMS = (1, 2, 3, 5)

# Feasibility of returned minimizers: they are projections computed in float64, so 1e-12
# (relative to the radius) is ~1e4 ulps of slack and still catches any real escape.
FEAS_TOL = 1e-12
# Value attained by the argmin: both sides are the same float64 expression up to summation
# order, so 1e-12 relative.
ATTAIN_RTOL = 1e-12
# Exact oracles (enumeration, KKT, closed forms): the solvers are exact up to rounding; 1e-10
# relative to the scale of the objective leaves room for conditioning (cond(H) ≤ ~1e4 here).
EXACT_RTOL = 1e-10
# SLSQP oracle (ftol 1e-14, projected, two starts): the solver must not be worse than a feasible
# scipy point by more than 1e-9 relative (the module's certificate tolerance, GAP_RTOL)...
UPPER_RTOL = 1e-9
# ...and must agree with it to 1e-6 relative (SLSQP's own accuracy on these kinked problems).
AGREE_RTOL = 1e-6


def _no_warnings(fn, *args, **kwargs):
    """Call a solver with its RuntimeWarning (certificate above tolerance) turned into an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        return fn(*args, **kwargs)


def _feasible(domain: Domain, u: np.ndarray) -> bool:
    return bool(np.all(domain.contains(np.atleast_2d(u), tol=FEAS_TOL)))


def _random_psd(rng, d, rank):
    A = rng.normal(size=(d, rank))
    return A @ A.T


# ----------------------------------------------------------------------------- oracles


def _box_qp_enum(H, h, r):
    """Exact ``min ½uᵀHu − hᵀu`` over ``[−r, r]^d`` by enumerating all 3^d active patterns."""
    d = len(h)
    best = math.inf
    for pat in itertools.product((-1, 0, 1), repeat=d):
        pat = np.array(pat)
        free = pat == 0
        v = np.where(free, 0.0, pat * r)
        if free.any():
            A = H[np.ix_(free, free)]
            rhs = h[free] - H[np.ix_(free, ~free)] @ v[~free]
            sol = np.linalg.lstsq(A, rhs, rcond=None)[0]
            if np.linalg.norm(A @ sol - rhs) > 1e-9 * (1 + np.linalg.norm(rhs)):
                continue
            v[free] = sol
        if np.abs(v).max() <= r * (1 + 1e-12):
            best = min(best, 0.5 * v @ H @ v - h @ v)
    return best


def _simplex_qp_enum(H, h):
    """Exact ``min ½uᵀHu − hᵀu`` over the simplex by enumerating all supports."""
    d = len(h)
    best = math.inf
    for k in range(1, d + 1):
        for S in itertools.combinations(range(d), k):
            S = list(S)
            K = np.zeros((k + 1, k + 1))
            K[:k, :k] = H[np.ix_(S, S)]
            K[:k, k] = K[k, :k] = 1.0
            rhs = np.concatenate([h[S], [1.0]])
            sol = np.linalg.lstsq(K, rhs, rcond=None)[0]
            if np.linalg.norm(K @ sol - rhs) > 1e-9 * (1 + np.linalg.norm(rhs)):
                continue
            v = np.zeros(d)
            v[S] = sol[:k]
            if v.min() >= -1e-12:
                best = min(best, 0.5 * v @ H @ v - h @ v)
    return best


def _slsqp(fun, d, domain, rng, n_extra=0, extra_cons=(), extra_bounds=None, z0_tail=None):
    """SLSQP over ``u ∈ K`` (plus ``n_extra`` epigraph variables); best projected value."""
    cons = list(extra_cons)
    bounds = [(None, None)] * d
    if domain.kind == "box":
        bounds = [(-domain.radius, domain.radius)] * d
    elif domain.kind == "simplex":
        bounds = [(0.0, 1.0)] * d
        cons.append({"type": "eq", "fun": lambda z: z[:d].sum() - 1.0})
    elif domain.kind == "ball":
        cons.append({"type": "ineq", "fun": lambda z: domain.radius**2 - z[:d] @ z[:d]})
    bounds = bounds + (extra_bounds or [])
    points = []
    for start in range(2):
        u0 = _center(domain, d) if start == 0 else domain.project(rng.normal(size=(1, d)))[0]
        z0 = u0 if z0_tail is None else np.concatenate([u0, z0_tail(u0)])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = so.minimize(
                fun,
                z0,
                method="SLSQP",
                bounds=bounds,
                constraints=cons,
                options={"ftol": 1e-14, "maxiter": 3000},
            )
        points.append(domain.project(res.x[None, :d])[0])
    return points


def _objective(kind, X, y, sigma, Z, zsq, t):
    def P(u):
        val = prediction_loss(kind, X @ u, y)[0].sum()
        if sigma:
            val += 0.5 * sigma * t * u @ u - sigma * Z @ u + 0.5 * sigma * zsq
        return float(val)

    return P


def _examples_oracle(kind, X, y, domain, sigma, Z, zsq, t, rng):
    """Best SLSQP value (epigraph form for the kinked losses), projected and re-evaluated."""
    n, d = X.shape
    P = _objective(kind, X, y, sigma, Z, zsq, t)

    def reg(u):
        return 0.5 * sigma * t * u @ u - sigma * Z @ u if sigma else 0.0

    if kind in ("hinge", "absolute"):
        if kind == "hinge":
            A = np.hstack([y[:, None] * X, np.eye(n)])
            b = np.ones(n)
        else:
            A = np.vstack([np.hstack([-X, np.eye(n)]), np.hstack([X, np.eye(n)])])
            b = np.concatenate([-y, y])
        cons = [{"type": "ineq", "fun": lambda z: A @ z - b, "jac": lambda z: A}]
        pts = _slsqp(
            lambda z: z[d:].sum() + reg(z[:d]),
            d,
            domain,
            rng,
            extra_cons=cons,
            extra_bounds=[(0.0, None)] * n,
            z0_tail=lambda u: prediction_loss(kind, X @ u, y)[0] + 1e-3,
        )
    else:
        pts = _slsqp(P, d, domain, rng)
    return min(P(p) for p in pts), P


def _ball_kkt_residual(H, h, u, r):
    """Relative KKT residual of ``min ½uᵀHu − hᵀu`` s.t. ``‖u‖ ≤ r`` (sufficient: H ⪰ 0)."""
    g = H @ u - h
    scale = 1.0 + np.linalg.norm(H) * r + np.linalg.norm(h)
    nu = np.linalg.norm(u)
    if nu < r * (1 - 1e-9):
        return np.linalg.norm(g) / scale
    mu = -(g @ u) / (u @ u)
    return (np.linalg.norm(g + mu * u) + max(-mu, 0.0) * r) / scale


# ----------------------------------------------------------------------------- best_linear


@pytest.mark.parametrize("kind", list(DOMAINS))
def test_best_linear_closed_forms(kind):
    rng = np.random.default_rng(10)
    domain = DOMAINS[kind]
    for d in DIMS:
        G = rng.normal(size=(4, d))
        G[0] = 0.0  # degenerate: zero data
        if d > 1:
            G[1, 1:] = G[1, 0]  # ties
        val, u = hs.best_linear(G, domain, return_argmin=True)
        assert val.shape == (4,) and val.dtype == np.float64
        assert val[0] == 0.0
        if kind == "unconstrained":
            assert np.all(np.isneginf(val[1:]))
            continue
        assert _feasible(domain, u)
        np.testing.assert_allclose(np.einsum("ij,ij->i", G, u), val, rtol=ATTAIN_RTOL, atol=0)
        for i in range(4):
            if kind == "box":  # vertex enumeration (a linear function is minimized at a vertex)
                verts = np.array(list(itertools.product((-1, 1), repeat=d))) * domain.radius
                oracle = (verts @ G[i]).min()
            elif kind == "simplex":
                oracle = G[i].min()
            else:  # Srebro, Lecture 16 §3.4: −B‖v‖; and SLSQP over the ball
                oracle = -domain.radius * np.linalg.norm(G[i])
                pts = _slsqp(lambda x, g=G[i]: g @ x, d, domain, rng)
                assert min(G[i] @ p for p in pts) >= oracle - 1e-12
            assert val[i] == pytest.approx(oracle, rel=EXACT_RTOL, abs=1e-15)


# ----------------------------------------------------------------------------- best_quadratic


def test_best_quadratic_unconstrained_min_norm_and_unbounded():
    rng = np.random.default_rng(11)
    dom = DOMAINS["unconstrained"]
    for d in DIMS:
        for rank in range(d + 1):
            H = np.stack([_random_psd(rng, d, rank) for _ in range(3)])
            # h in range(H): finite, minimum-norm minimizer H⁺h
            h = np.einsum("rij,rj->ri", H, rng.normal(size=(3, d)))
            c = rng.normal(size=3)
            val, u = _no_warnings(hs.best_quadratic, H, h, c, dom, return_argmin=True)
            for i in range(3):
                pinv = np.linalg.pinv(H[i], rcond=1e-12)
                ref = c[i] - 0.5 * h[i] @ pinv @ h[i]
                scale = 1 + abs(c[i]) + abs(h[i] @ pinv @ h[i])
                assert abs(val[i] - ref) <= EXACT_RTOL * scale
                np.testing.assert_allclose(u[i], pinv @ h[i], atol=1e-9 * (1 + np.abs(u[i]).max()))
            if rank < d:  # a component of h in null(H): unbounded below
                null = np.linalg.eigh(H[0])[1][:, 0]
                val2 = hs.best_quadratic(H[:1], h[:1] + null, 0.0, dom)
                assert np.isneginf(val2[0])


def _hard_case_instance(rng, d, scale_in):
    """H = Q diag(0, λ₂, …) Qᵀ and h ⊥ null(H) (the trust-region 'hard case')."""
    Q = np.linalg.qr(rng.normal(size=(d, d)))[0]
    lam = np.concatenate([[0.0], rng.uniform(0.5, 3.0, size=d - 1)])
    H = Q @ np.diag(lam) @ Q.T
    coef = np.concatenate([[0.0], rng.normal(size=d - 1)]) * scale_in
    return H, Q @ coef, Q, lam, coef


def test_best_quadratic_ball_trust_region_exact():
    rng = np.random.default_rng(12)
    for trial in range(80):
        d = DIMS[trial % 4]
        rank = int(rng.integers(0, d + 1))
        H = _random_psd(rng, d, rank)
        h = rng.normal(size=d) * rng.choice([0.1, 1.0, 10.0])
        r = float(rng.choice([0.3, 1.0, 3.0]))
        dom = Domain("ball", r)
        val, u = _no_warnings(hs.best_quadratic, H[None], h[None], 0.0, dom, return_argmin=True)
        assert _feasible(dom, u)
        assert val[0] == pytest.approx(0.5 * u[0] @ H @ u[0] - h @ u[0], rel=ATTAIN_RTOL)
        assert _ball_kkt_residual(H, h, u[0], r) <= EXACT_RTOL
        pts = _slsqp(lambda x, H=H, h=h: 0.5 * x @ H @ x - h @ x, d, dom, rng)
        oracle = min(0.5 * p @ H @ p - h @ p for p in pts)
        assert val[0] <= oracle + UPPER_RTOL * (1 + abs(oracle))
        assert val[0] == pytest.approx(oracle, rel=AGREE_RTOL, abs=AGREE_RTOL)


def test_best_quadratic_ball_hard_case():
    rng = np.random.default_rng(13)
    for d in (2, 3, 5):
        # (a) h ⊥ null(H) and ‖H⁺h‖ < r: the minimizers are H⁺h + null(H) ∩ ball; the
        # minimum-norm one, H⁺h, is returned with value −½hᵀH⁺h
        H, h, Q, lam, coef = _hard_case_instance(rng, d, 0.1)
        vpinv = np.concatenate([[0.0], coef[1:] / lam[1:]])
        r = 2.0 * np.linalg.norm(vpinv) + 0.1
        val, u = _no_warnings(
            hs.best_quadratic, H[None], h[None], 1.5, Domain("ball", r), return_argmin=True
        )
        ref = 1.5 - 0.5 * np.sum(coef[1:] ** 2 / lam[1:])
        assert val[0] == pytest.approx(ref, rel=EXACT_RTOL)
        np.testing.assert_allclose(u[0], Q @ vpinv, atol=1e-12)
        assert abs(u[0] @ Q[:, 0]) <= 1e-12  # no component along the null space
        # (b) h ⊥ null(H) but ‖H⁺h‖ > r: boundary solution with μ > 0
        r_small = 0.5 * np.linalg.norm(vpinv)
        _, u_b = hs.best_quadratic(
            H[None], h[None], 0.0, Domain("ball", r_small), return_argmin=True
        )
        assert np.linalg.norm(u_b[0]) == pytest.approx(r_small, rel=1e-12)
        assert _ball_kkt_residual(H, h, u_b[0], r_small) <= EXACT_RTOL
        # (c) near-hard case: a tiny null-space component pushes the minimizer to the sphere,
        # and the value is continuous in it
        eps = 1e-7
        h_c = h + eps * Q[:, 0]
        val_c, u_c = hs.best_quadratic(
            H[None], h_c[None], 1.5, Domain("ball", r), return_argmin=True
        )
        assert np.linalg.norm(u_c[0]) == pytest.approx(r, rel=1e-12)
        assert _ball_kkt_residual(H, h_c, u_c[0], r) <= EXACT_RTOL
        assert val_c[0] <= val[0] and val[0] - val_c[0] <= 2 * eps * r
    # H = 0 (rank 0): linear, −r‖h‖ (Srebro, Lecture 16 §3.4)
    h = np.array([[3.0, 4.0]])
    assert hs.best_quadratic(np.zeros((1, 2, 2)), h, 0.0, Domain("ball", 2.0))[0] == -10.0
    # not PSD: refused
    with pytest.raises(ValueError, match="positive semidefinite"):
        hs.best_quadratic(-np.eye(2)[None], h, 0.0, Domain("ball", 1.0))


@pytest.mark.parametrize("kind", ["box", "simplex"])
def test_best_quadratic_box_simplex_exact_by_enumeration(kind):
    rng = np.random.default_rng(14 if kind == "box" else 15)
    dom = DOMAINS[kind]
    for trial in range(24):
        d = DIMS[trial % 4]
        rank = int(rng.integers(0, d + 1))  # includes H = 0 and rank-deficient H
        R = 2
        H = np.stack([_random_psd(rng, d, rank) for _ in range(R)])
        h = rng.normal(size=(R, d)) * rng.choice([0.3, 3.0])
        if trial % 6 == 5 and d > 1:
            h[:, 1] = h[:, 0]  # ties
        c = rng.normal(size=R)
        val, u = _no_warnings(hs.best_quadratic, H, h, c, dom, return_argmin=True)
        assert _feasible(dom, u)
        for i in range(R):
            q = 0.5 * u[i] @ H[i] @ u[i] - h[i] @ u[i] + c[i]
            assert val[i] == pytest.approx(q, rel=ATTAIN_RTOL, abs=1e-14)
            oracle = c[i] + (
                _box_qp_enum(H[i], h[i], dom.radius)
                if kind == "box"
                else _simplex_qp_enum(H[i], h[i])
            )
            scale = 1 + abs(oracle) + np.linalg.norm(h[i]) + np.linalg.norm(H[i])
            assert abs(val[i] - oracle) <= EXACT_RTOL * scale


@pytest.mark.parametrize("kind", list(DOMAINS))
def test_best_quadratic_isotropic_is_projection(kind):
    rng = np.random.default_rng(16)
    dom = DOMAINS[kind]
    for d in DIMS:
        s = np.array([0.7, 2.0, 0.0, 0.0])
        h = rng.normal(size=(4, d))
        h[3] = 0.0
        c = rng.normal(size=4)
        val, u = hs.best_quadratic(None, h, c, dom, isotropic=s, return_argmin=True)
        # s > 0: same as the general-H solver with H = sI
        ref = _no_warnings(hs.best_quadratic, s[:2, None, None] * np.eye(d), h[:2], c[:2], dom)
        np.testing.assert_allclose(val[:2], ref, rtol=EXACT_RTOL, atol=1e-13)
        # s = 0: linear
        lin = hs.best_linear(-h[2:], dom) + c[2:]
        np.testing.assert_array_equal(val[2:], lin)
        if kind != "unconstrained":
            assert _feasible(dom, u)
            for i in range(2):
                si, hi, ci = s[i], h[i], c[i]
                pts = _slsqp(
                    lambda x, si=si, hi=hi, ci=ci: 0.5 * si * x @ x - hi @ x + ci, d, dom, rng
                )
                oracle = min(0.5 * s[i] * p @ p - h[i] @ p + c[i] for p in pts)
                assert val[i] <= oracle + UPPER_RTOL * (1 + abs(oracle))


# ----------------------------------------------------------------------------- best_examples


def _labels(kind, rng, shape):
    if kind in ("hinge", "logistic"):
        return rng.choice([-1.0, 1.0], size=shape)
    return rng.normal(size=shape) * 2.0


CASES = [
    (kind, dom, sigma)
    for kind in ("absolute", "hinge", "logistic", "squared")
    for dom in DOMAINS
    for sigma in (0.0, 0.3)
    if not (kind == "logistic" and dom == "unconstrained" and sigma == 0.0)
]


@pytest.mark.parametrize(("kind", "dom", "sigma"), CASES)
def test_best_examples_vs_scipy(kind, dom, sigma):
    rng = np.random.default_rng(zlib.crc32(repr((kind, dom, sigma)).encode()))
    domain = DOMAINS[dom]
    for d in (1, 3, 5):
        n, R = int(rng.integers(1, 41)), 2
        X = rng.normal(size=(R, n, d))
        Y = _labels(kind, rng, (R, n))
        Zs = rng.normal(size=(R, n, d)) if sigma else np.zeros((R, n, d))
        Z, zsq = Zs.sum(1), (Zs**2).sum((1, 2))
        val, u = _no_warnings(
            hs.best_examples,
            kind,
            X,
            Y,
            domain,
            sigma=sigma,
            z_sum=Z,
            z_sqsum=zsq,
            return_argmin=True,
        )
        assert val.shape == (R,) and u.shape == (R, d)
        assert _feasible(domain, u)
        for i in range(R):
            oracle, P = _examples_oracle(kind, X[i], Y[i], domain, sigma, Z[i], zsq[i], n, rng)
            # (σ/2)Σ‖u − z_s‖² written out round by round, independently of the (Z, Σ‖z‖²) form
            direct = evaluate(kind, sigma, u[i], RoundData(x=X[i], y=Y[i], z=Zs[i]))[0].sum()
            assert val[i] == pytest.approx(direct, rel=1e-11, abs=1e-11)
            assert val[i] == pytest.approx(P(u[i]), rel=ATTAIN_RTOL, abs=1e-13)
            assert val[i] <= oracle + UPPER_RTOL * (1 + abs(oracle))
            assert val[i] == pytest.approx(oracle, rel=AGREE_RTOL, abs=AGREE_RTOL)


def test_best_examples_squared_matches_sufficient_statistics():
    rng = np.random.default_rng(17)
    for dom in DOMAINS.values():
        for sigma in (0.0, 0.4):
            X = rng.normal(size=(3, 12, 3))
            Y = rng.normal(size=(3, 12))
            Z = rng.normal(size=(3, 3))
            zsq = (Z**2).sum(1) + 1.0
            kw = {"z_sum": Z, "z_sqsum": zsq} if sigma else {}
            v = hs.best_examples("squared", X, Y, dom, sigma=sigma, **kw)
            H = np.einsum("rti,rtj->rij", X, X) + sigma * 12 * np.eye(3)
            h = np.einsum("rti,rt->ri", X, Y) + (sigma * Z if sigma else 0.0)
            c = 0.5 * (Y**2).sum(1) + (0.5 * sigma * zsq if sigma else 0.0)
            ref = hs.best_quadratic(H, h, c, dom)
            np.testing.assert_allclose(v, ref, rtol=1e-10, atol=1e-10)


def test_best_examples_degenerate_data():
    rng = np.random.default_rng(18)
    n, d = 7, 3
    Y = rng.choice([-1.0, 1.0], size=(2, n))
    Yr = rng.normal(size=(2, n))
    X0 = np.zeros((2, n, d))
    for dom in DOMAINS.values():
        # zero features: the loss is constant in u, the minimizer the centre of K
        assert np.allclose(hs.best_examples("hinge", X0, Y, dom), n)
        assert np.allclose(hs.best_examples("absolute", X0, Yr, dom), np.abs(Yr).sum(1))
        assert np.allclose(hs.best_examples("squared", X0, Yr, dom), 0.5 * (Yr**2).sum(1))
        if dom.kind != "unconstrained":
            assert np.allclose(hs.best_examples("logistic", X0, Y, dom), n * math.log(2.0))
        # no rounds at all
        v, u = hs.best_examples(
            "hinge", np.zeros((2, 0, d)), np.zeros((2, 0)), dom, return_argmin=True
        )
        assert np.all(v == 0.0) and _feasible(dom, u)
        # duplicated examples with opposite labels (ties): hinge/absolute value is attained
        Xd = np.repeat(rng.uniform(-1.0, 1.0, size=(2, 1, d)), 4, axis=1)  # p = 0 or |p| ≤ 1
        Yd = np.array([[1.0, -1.0, 1.0, -1.0]] * 2)
        v, u = hs.best_examples("hinge", Xd, Yd, dom, return_argmin=True)
        assert _feasible(dom, u)
        # two opposite hinges on the same prediction p: [1−p]₊ + [1+p]₊ ≥ 2, equality on |p| ≤ 1
        assert np.allclose(v, 4.0)
    # σ-term only with no rounds: (σ/2)Σ‖z‖² − … minimized by projecting Z/t
    v = hs.best_examples(
        "logistic",
        np.zeros((1, 0, 2)),
        np.zeros((1, 0)),
        Domain("ball", 1.0),
        sigma=1.0,
        z_sum=np.zeros((1, 2)),
        z_sqsum=np.array([3.0]),
        t=2,
    )
    assert v[0] == pytest.approx(1.5)


def test_best_examples_separable_logistic_on_ball_and_ill_posed_unconstrained():
    rng = np.random.default_rng(19)
    w = np.array([1.0, -2.0, 0.5])
    X = rng.normal(size=(2, 30, 3))
    Y = np.sign(X @ w)
    dom = Domain("ball", 2.0)
    v, u = _no_warnings(hs.best_examples, "logistic", X, Y, dom, return_argmin=True)
    # separable: the infimum over ℝ^d is 0 at infinity, so the ball constraint is active
    np.testing.assert_allclose(np.linalg.norm(u, axis=1), 2.0, rtol=1e-12)
    for i in range(2):
        oracle, _ = _examples_oracle("logistic", X[i], Y[i], dom, 0.0, np.zeros(3), 0.0, 30, rng)
        assert v[i] <= oracle + UPPER_RTOL * (1 + oracle)
    with pytest.raises(ValueError, match="ill-posed"):
        hs.best_examples("logistic", X, Y, Domain("unconstrained"))
    # hinge / absolute unconstrained are attained LPs (finite)
    assert np.all(np.isfinite(hs.best_examples("hinge", X, Y, Domain("unconstrained"))))
    # hinge on separable data with an unconstrained comparator: zero loss is reachable
    assert np.allclose(hs.best_examples("hinge", X, Y, Domain("unconstrained")), 0.0, atol=1e-9)


def test_best_examples_argument_checks():
    X, Y = np.zeros((1, 2, 2)), np.ones((1, 2))
    dom = Domain("ball", 1.0)
    with pytest.raises(ValueError, match="kind"):
        hs.best_examples("linear", X, Y, dom)
    with pytest.raises(ValueError, match="z_sum and z_sqsum"):
        hs.best_examples("hinge", X, Y, dom, sigma=1.0, z_sum=np.zeros((1, 2)))
    with pytest.raises(ValueError, match="Y must have shape"):
        hs.best_examples("hinge", X, np.ones((1, 3)), dom)


# ----------------------------------------------------------------------------- per_round_best


def _per_round_data(rng, kind, R, n, d):
    x = rng.normal(size=(R, n, d))
    x[:, 0] = 0.0  # zero features
    if d > 1:
        x[:, 1, 1:] = x[:, 1, :1]  # ties among coordinates
    y = _labels(kind, rng, (R, n))
    if kind in ("hinge", "logistic"):
        y[:, 2] = 0.0  # a zero label
    z = rng.normal(size=(R, n, d))
    return x, y, z


PER_ROUND = [
    (kind, dom, sigma)
    for kind in ("absolute", "hinge", "logistic", "squared")
    for dom in DOMAINS
    for sigma in (0.0, 0.5)
    if not (sigma and dom in ("box", "simplex"))
    and not (kind == "logistic" and dom == "unconstrained" and sigma == 0.0)
]


@pytest.mark.parametrize(("kind", "dom", "sigma"), PER_ROUND)
def test_per_round_best_matches_one_round_hindsight(kind, dom, sigma):
    rng = np.random.default_rng(zlib.crc32(repr((kind, dom, sigma, "pr")).encode()))
    domain = DOMAINS[dom]
    for d in DIMS:
        R, n = 2, 5
        x, y, z = _per_round_data(rng, kind, R, n, d)
        zz = z if sigma else None
        val, u = hs.per_round_best(kind, domain, x, y, sigma, zz)
        assert val.shape == (R, n) and u.shape == (R, n, d)
        assert _feasible(domain, u.reshape(-1, d))
        attained = evaluate(kind, sigma, u, RoundData(x=x, y=y, z=zz))[0]
        np.testing.assert_allclose(attained, val, rtol=ATTAIN_RTOL, atol=1e-14)
        for j in range(n):
            zj = z[:, j] if sigma else np.zeros((R, d))
            ref = _no_warnings(
                hs.best_examples,
                kind,
                x[:, j : j + 1],
                y[:, j : j + 1],
                domain,
                sigma=sigma,
                z_sum=zj,
                z_sqsum=(zj**2).sum(1),
            )
            np.testing.assert_allclose(val[:, j], ref, rtol=EXACT_RTOL, atol=EXACT_RTOL)


def test_per_round_best_min_norm_minimizers():
    rng = np.random.default_rng(20)
    for kind in ("absolute", "hinge", "squared", "logistic"):
        for d in (2, 5):
            x, y, _ = _per_round_data(rng, kind, 2, 6, d)
            # ball / unconstrained: u = p*·x/‖x‖², parallel to x
            for dom in (DOMAINS["ball"], DOMAINS["unconstrained"]):
                if kind == "logistic" and dom.kind == "unconstrained":
                    continue
                _, u = hs.per_round_best(kind, dom, x, y)
                cross = u[..., :, None] * x[..., None, :] - x[..., :, None] * u[..., None, :]
                assert np.abs(cross).max() <= 1e-12
            # box: the water-filling point is the minimum-norm u with ⟨u, x⟩ = p*
            box = DOMAINS["box"]
            _, u = hs.per_round_best(kind, box, x, y)
            for i, j in itertools.product(range(1), range(6)):
                xv, p = x[i, j], float(u[i, j] @ x[i, j])
                if not np.any(xv):
                    assert not np.any(u[i, j])
                    continue
                # KKT of min ‖w‖² s.t. ⟨w, x⟩ = p, |w_i| ≤ r: w_i = sign(p)·clip(θx_i, −r, r)
                a = np.abs(u[i, j])
                free = (a < box.radius * (1 - 1e-12)) & (xv != 0)
                theta = np.max(a[free] / np.abs(xv[free])) if free.any() else np.inf
                expect = np.sign(p) * np.sign(xv) * np.minimum(theta * np.abs(xv), box.radius)
                np.testing.assert_allclose(u[i, j], np.where(xv != 0, expect, 0.0), atol=1e-12)
                cons = [{"type": "eq", "fun": lambda w, xv=xv, p=p: w @ xv - p}]
                res = so.minimize(
                    lambda w: w @ w,
                    np.zeros(d),
                    method="SLSQP",
                    bounds=[(-box.radius, box.radius)] * d,
                    constraints=cons,
                    options={"ftol": 1e-15, "maxiter": 500},
                )
                # SLSQP may violate the equality by ~1e-9, moving its value by ~1e-8
                assert u[i, j] @ u[i, j] <= res.fun + 1e-7


def test_per_round_best_linear_and_special_cases():
    rng = np.random.default_rng(21)
    R, n, d = 2, 4, 3
    g = rng.normal(size=(R, n, d))
    g[:, 0] = 0.0
    z = rng.normal(size=(R, n, d))
    for dom in DOMAINS.values():
        v, u = hs.per_round_best("linear", dom, g)
        ref_v, ref_u = dom.min_linear(g)
        np.testing.assert_array_equal(v, ref_v)
        np.testing.assert_array_equal(u, ref_u)
        # σ > 0: Π_K(z − g/σ), the same as the isotropic hindsight quadratic of one round
        v, u = hs.per_round_best("linear", dom, g, None, 0.5, z)
        assert _feasible(dom, u.reshape(-1, d))
        for j in range(n):
            ref = hs.best_quadratic(
                None, 0.5 * z[:, j] - g[:, j], 0.25 * (z[:, j] ** 2).sum(1), dom, isotropic=0.5
            )
            np.testing.assert_allclose(v[:, j], ref, rtol=EXACT_RTOL, atol=1e-14)
    # unconstrained logistic: infimum 0 not attained (argmin NaN) unless y = 0
    x = rng.normal(size=(1, 3, 2))
    y = np.array([[1.0, -1.0, 0.0]])
    v, u = hs.per_round_best("logistic", Domain("unconstrained"), x, y)
    np.testing.assert_array_equal(v[0, :2], 0.0)
    assert v[0, 2] == pytest.approx(math.log(2.0))
    assert np.isnan(u[0, :2]).all() and np.all(u[0, 2] == 0.0)
    # example loss with σ > 0 on a box / simplex: refused
    for kind in ("box", "simplex"):
        with pytest.raises(NotImplementedError, match="unconstrained and ball"):
            hs.per_round_best("hinge", DOMAINS[kind], x, y, 0.5, None)
    with pytest.raises(ValueError, match="labels"):
        hs.per_round_best("hinge", DOMAINS["ball"], x)
