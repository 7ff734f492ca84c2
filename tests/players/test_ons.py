"""Oracle tests of the Online Newton Step (``arena.players.ons``): Hazan, Agarwal & Kale (2007);
Zinkevich 2003; Hazan 2016 (ONS) and Duchi et al. 2011; Hazan, Agarwal & Kale 2007.

Deterministic inequalities use ``lhs <= rhs + 1e-9·max(1, |rhs|)`` (our tolerance convention).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import validate_params
from arena.players.ons import ONS, ball_generalized_projection
from tests.helpers import assert_below
from tests.helpers.oco import (
    bounded_spec,
    play_adaptive,
    play_loop,
    play_split,
    reset,
    stack_rounds,
)

ATOL = 1e-10
"""Literal transcription vs player: the transcription inverts A_t afresh (np.linalg.solve) and
projects by bisection, the player uses Sherman–Morrison and Newton in A's eigenbasis; A_t has
condition number ≤ (ε + T G²)/ε ≤ ~10³ here, so the two agree to ~1e-13 per round and the
iterates (norm ≤ a few units) stay within 1e-10 over 120 rounds."""

KERNEL_ATOL = 1e-12
"""play_block (numba kernel) vs predict/update (the same per-round numba step, gradients formed
by numpy instead of the kernel: differences of one rounding, ~1e-16)."""


# ---------------------------------------------------------------------------------------------
# literal transcription (Hazan, Agarwal & Kale 2007, "Online Newton Step")


def literal_projection(a_mat, y, radius):
    """argmin_{‖x‖≤r} (x−y)ᵀA(x−y) by bisection on the KKT multiplier: x(μ) = (A+μI)^{-1}Ay."""
    if radius is None or np.linalg.norm(y) <= radius:
        return y.copy()
    d = len(y)
    ay = a_mat @ y

    def x_of(mu):
        return np.linalg.solve(a_mat + mu * np.eye(d), ay)

    lo, hi = 0.0, 1.0
    while np.linalg.norm(x_of(hi)) > radius:
        hi *= 2.0
    for _ in range(200):
        if hi - lo <= 4e-16 * hi:
            break
        mid = 0.5 * (lo + hi)
        if np.linalg.norm(x_of(mid)) > radius:
            lo = mid
        else:
            hi = mid
    x = x_of(hi)
    return x * min(1.0, radius / np.linalg.norm(x))


def literal_ons(grad_of, horizon, dim, beta, eps, radius):
    """x_1 = 0; A_t = εI + Σ_{s≤t} g_s g_sᵀ; y = x_t − (1/β)A_t^{-1}g_t; x_{t+1} = Π^{A_t}(y)."""
    a_mat = eps * np.eye(dim)
    x = np.zeros(dim)
    out = []
    for t in range(1, horizon + 1):
        out.append(x.copy())
        g = np.asarray(grad_of(t, x), dtype=np.float64)
        a_mat = a_mat + np.outer(g, g)
        y = x - np.linalg.solve(a_mat, g) / beta
        x = literal_projection(a_mat, y, radius)
    return np.array(out)


def _gradient(kind, sigma, data, r):
    """Round t's gradient at x, written out per loss (arena.oco.losses conventions)."""

    def grad(t, x):
        j = t - 1
        if kind == "linear":
            g = data.g[r, j].copy()
        else:
            xf, yv = data.x[r, j], data.y[r, j]
            p = float(xf @ x)
            if kind == "squared":
                dl = p - yv
            elif kind == "logistic":
                dl = -yv / (1.0 + math.exp(yv * p))
            elif kind == "hinge":
                dl = -yv if yv * p < 1 else 0.0
            else:
                dl = float(np.sign(p - yv))
            g = dl * xf
        if sigma:
            z = 0.0 if data.z is None else data.z[r, j]
            g = g + sigma * (x - z)
        return g

    return grad


def _ball(rng, shape, radius):
    v = rng.standard_normal(shape)
    v /= np.linalg.norm(v, axis=-1, keepdims=True)
    return v * radius * rng.uniform(0, 1, (*shape[:-1], 1)) ** (1.0 / shape[-1])


def _game(kind, rng, n_rep=3, horizon=120, dim=4, sigma=0.0, domain=("ball", 1.0)):
    """Random data whose gradients stay below the declared G on the domain."""
    dom = Domain("unconstrained") if domain is None else Domain(*domain)
    radius = dom.max_norm(dim) if dom.bounded else 3.0
    shape = (n_rep, horizon, dim)
    z = _ball(rng, shape, 0.5) if sigma else None
    if kind == "linear":
        drift = rng.standard_normal((n_rep, 1, dim))
        drift *= 0.7 / np.linalg.norm(drift, axis=-1, keepdims=True)  # pushes w to the sphere
        data = RoundData(g=drift + _ball(rng, shape, 0.3), z=z)
        grad = 1.0
        protocol = "oco"
    else:
        x = _ball(rng, shape, 1.0)
        if kind in ("logistic", "hinge"):
            y = rng.choice([-1.0, 1.0], size=shape[:2])
            protocol, grad = "classification", 1.0
        else:
            y = rng.uniform(-1, 1, size=shape[:2]) + x[..., 0] * 2.0
            protocol, grad = "regression", radius + 3.0 if kind == "squared" else 1.0
        data = RoundData(x=x, y=y, z=z)
    grad += sigma * (radius + 0.5)
    spec = bounded_spec(
        dim,
        horizon,
        n_rep,
        domain=dom,
        loss=kind,
        sigma=sigma,
        gradient_bound=grad,
        protocol=protocol,
    )
    return data, spec


CASES = [
    pytest.param("linear", 0.0, ("ball", 1.0), {}, id="linear-ball-defaults"),
    pytest.param(
        "linear", 0.0, ("ball", 2.5), {"beta": 2.0, "eps": 0.5}, id="linear-ball-big-steps"
    ),
    pytest.param("linear", 0.7, ("ball", 1.0), {}, id="strongly-convex-ball"),
    pytest.param("squared", 0.0, ("ball", 1.5), {"alpha": 0.1}, id="squared-ball"),
    pytest.param("logistic", 0.0, ("ball", 1.0), {"beta": 1.0, "eps": 0.3}, id="logistic-ball"),
    pytest.param("hinge", 0.2, ("ball", 1.0), {"beta": 0.1, "eps": 0.5}, id="hinge-sigma-ball"),
    pytest.param("absolute", 0.0, None, {"beta": 0.5, "eps": 2.0}, id="absolute-free"),
    pytest.param("linear", 0.3, None, {"beta": 0.2, "eps": 1.0}, id="linear-sigma-free"),
]


@pytest.mark.parametrize(("kind", "sigma", "domain", "params"), CASES)
def test_matches_literal_transcription(kind, sigma, domain, params):
    rng = np.random.default_rng(5)
    data, spec = _game(kind, rng, sigma=sigma, domain=domain)
    player = reset(ONS(**params), spec)
    beta, eps, _ = player.step_parameters
    radius = None if domain is None else domain[1]
    want = np.stack(
        [
            literal_ons(_gradient(kind, sigma, data, r), spec.horizon, spec.dim, beta, eps, radius)
            for r in range(spec.n_replicates)
        ]
    )
    got = play_loop(player, spec, data)
    np.testing.assert_allclose(got, want, rtol=0, atol=ATOL)
    assert spec.domain.contains(got).all()
    if radius is not None:  # the generalized projection was exercised
        assert (np.abs(np.linalg.norm(got, axis=2) - radius) < 1e-12).sum() > 10
    for cuts in ([spec.horizon], [1, 7, 50], [33, 34]):
        blk = play_split(reset(ONS(**params), spec), spec, data, cuts)
        np.testing.assert_allclose(blk, got, rtol=0, atol=KERNEL_ATOL)


def test_matches_literal_transcription_in_higher_dimension():
    """d = 30: the low-rank buffer holds up to woodbury_capacity(30) = 19 gradients between
    eigendecomposition refreshes; the iterates still equal the transcription's."""
    rng = np.random.default_rng(15)
    data, spec = _game("linear", rng, n_rep=1, horizon=150, dim=30)
    params = {"beta": 0.3, "eps": 0.5}
    player = reset(ONS(**params), spec)
    want = literal_ons(_gradient("linear", 0.0, data, 0), 150, 30, 0.3, 0.5, 1.0)
    got = play_loop(player, spec, data)
    np.testing.assert_allclose(got[0], want, rtol=0, atol=ATOL)
    assert (np.abs(np.linalg.norm(got, axis=2) - 1.0) < 1e-12).sum() > 100
    blk = play_split(reset(ONS(**params), spec), spec, data, [19, 20, 77])
    np.testing.assert_allclose(blk, got, rtol=0, atol=KERNEL_ATOL)


def test_default_parameters_follow_hazan_agarwal_kale():
    spec = bounded_spec(3, 10, domain=Domain("ball", 2.0), gradient_bound=1.5)
    beta, eps, alpha = reset(ONS(), spec).step_parameters
    assert alpha is None and beta == 0.5 / (4 * 1.5 * 4.0) and eps == 1 / (beta * 4.0) ** 2
    beta, eps, alpha = reset(ONS(alpha=0.01), spec).step_parameters
    assert beta == 0.005 and eps == 1 / (beta * 4.0) ** 2
    spec = bounded_spec(3, 10, domain=Domain("ball", 2.0), sigma=0.9, gradient_bound=3.0)
    beta, eps, alpha = reset(ONS(), spec).step_parameters
    assert alpha == 0.1 and beta == 0.5 * min(1 / (4 * 3.0 * 4.0), 0.1)


def test_no_jit_path_matches(tmp_path):
    """NUMBA_DISABLE_JIT=1 runs the same kernels as plain Python: the same iterates."""
    rng = np.random.default_rng(6)
    data, spec = _game("squared", rng, n_rep=2, horizon=40, dim=3)
    want = reset(ONS(alpha=0.1), spec).play_block(data, spec)
    np.savez(tmp_path / "d.npz", x=data.x, y=data.y)
    script = f"""
import numpy as np
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.spec import GameSpec
from arena.players.ons import ONS
d = np.load({str(tmp_path / "d.npz")!r})
spec = GameSpec("regression", 3, 40, n_replicates=2, dim=3, domain=Domain("ball", 1.0),
                loss="squared", gradient_bound={spec.gradient_bound!r})
p = ONS(alpha=0.1)
p.reset(spec, [np.random.default_rng(0)] * 2)
np.save({str(tmp_path / "w.npy")!r}, p.play_block(RoundData(x=d["x"], y=d["y"]), spec))
"""
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", script], check=True, env=env, cwd=root, timeout=120)
    np.testing.assert_allclose(np.load(tmp_path / "w.npy"), want, rtol=0, atol=KERNEL_ATOL)


# ---------------------------------------------------------------------------------------------
# the generalized projection


def test_ball_projection_is_exact():
    """KKT: x on the sphere and A(x − y) = −μx with μ ≥ 0, to 1e-12 relative; it matches the
    bisection solve and is no worse than scipy's SLSQP on the objective."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(8)
    for trial in range(60):
        d = int(rng.integers(1, 9))
        q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        lam = 10.0 ** rng.uniform(-3, 3, d) if trial % 2 else rng.uniform(0.5, 2.0, d)
        a_mat = (q * lam) @ q.T
        a_mat = 0.5 * (a_mat + a_mat.T)
        radius = float(rng.uniform(0.1, 3.0))
        y = rng.standard_normal(d)
        y *= radius * rng.uniform(1.01, 20.0) / np.linalg.norm(y)  # outside the ball
        x = np.empty(d)
        ball_generalized_projection(a_mat, y, radius, x)
        nx = np.linalg.norm(x)
        assert abs(nx - radius) <= 1e-14 * radius
        resid = a_mat @ (x - y)
        mu = -float(x @ resid) / nx**2
        assert mu >= 0
        # 1e-10: the residual of a float64 solve relative to its size, times cond(A) ≤ 1e6
        assert np.linalg.norm(resid + mu * x) <= 1e-10 * np.linalg.norm(resid)
        np.testing.assert_allclose(x, literal_projection(a_mat, y, radius), atol=1e-9 * radius)

        def obj(v, a_mat=a_mat, y=y):
            return float((v - y) @ a_mat @ (v - y))

        ref = minimize(
            obj,
            np.zeros(d),
            method="SLSQP",
            options={"ftol": 1e-14},
            constraints=[{"type": "ineq", "fun": lambda v, r=radius: r * r - v @ v}],
        )
        feasible = ref.x * min(1.0, radius / np.linalg.norm(ref.x))  # SLSQP may step outside
        assert obj(x) <= obj(feasible) * (1 + 1e-12)
    inside = np.array([0.1, -0.2])
    out = np.empty(2)
    ball_generalized_projection(np.eye(2), inside, 1.0, out)
    np.testing.assert_array_equal(out, inside)


def test_sherman_morrison_inverse_stays_accurate():
    rng = np.random.default_rng(9)
    data, spec = _game("linear", rng, n_rep=2, horizon=600, dim=6)
    player = reset(ONS(), spec)
    player.play_block(data, spec)
    for r in range(2):
        err = np.abs(player._a_inv[r] @ player._a[r] - np.eye(6)).max()
        assert err < 1e-12  # condition number of A_600 ≤ 1 + 600·G²/ε ≈ 10
    want = np.einsum("rti,rtj->rij", data.g, data.g) + player.step_parameters[1] * np.eye(6)
    np.testing.assert_allclose(player._a, want, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# regret bounds on exp-concave losses


def _strongly_convex_regret(w, g, z, sigma, radius):
    """Regret of f_t(w) = ⟨g_t, w⟩ + (σ/2)‖w − z_t‖² against the best u in the ball, at every t.

    Σ_{s≤t} f_s(u) = (tσ/2)‖u‖² − ⟨σΣz − Σg, u⟩ + const: the minimizer over the ball is the
    Euclidean projection of (σΣz − Σg)/(tσ) (an isotropic quadratic), exactly.
    """
    f_w = np.einsum("rtd,rtd->rt", g, w) + 0.5 * sigma * ((w - z) ** 2).sum(axis=2)
    ts = np.arange(1, w.shape[1] + 1)[None, :, None]
    u = (sigma * np.cumsum(z, axis=1) - np.cumsum(g, axis=1)) / (ts * sigma)
    u = Domain("ball", radius).project(u)
    best = np.einsum("rtd,rtd->rt", np.cumsum(g, axis=1), u) + 0.5 * sigma * (
        ts[..., 0] * (u**2).sum(axis=2)
        - 2 * np.einsum("rtd,rtd->rt", u, np.cumsum(z, axis=1))
        + np.cumsum((z**2).sum(axis=2), axis=1)
    )
    return np.cumsum(f_w, axis=1) - best


def _sc_rules(g0, dim, rng):
    e1 = np.zeros(dim)
    e1[0] = 1.0

    def unit(w):
        n = np.linalg.norm(w, axis=1, keepdims=True)
        return np.where(n > 0, w / np.where(n > 0, n, 1.0), e1)

    def z_of(w):
        return _ball(rng, w.shape, 0.5)

    return {
        "random": lambda t, w: RoundData(g=_ball(rng, w.shape, g0), z=z_of(w)),
        "anti": lambda t, w: RoundData(g=-g0 * unit(w), z=z_of(w)),
        "along": lambda t, w: RoundData(g=g0 * unit(w), z=-0.5 * unit(w)),
        "alternating": lambda t, w: RoundData(
            g=np.tile((-1.0) ** t * g0 * e1, (len(w), 1)), z=np.zeros_like(w)
        ),
        "constant": lambda t, w: RoundData(g=np.tile(g0 * e1, (len(w), 1)), z=z_of(w)),
    }


@pytest.mark.parametrize("params", [{}, {"beta": "book"}])
@pytest.mark.parametrize(("sigma", "dim"), [(1.0, 1), (0.5, 3), (2.0, 5)])
def test_declared_bound_holds_on_strongly_convex_losses(sigma, dim, params):
    """σ-strongly convex losses with ‖∇f‖ ≤ G are σ/G²-exp-concave: the player derives α and
    declares bound (1); it holds at every t against oblivious and adaptive streams."""
    rng = np.random.default_rng(int(10 * sigma) + dim)
    radius, g0, horizon, n_rep = 1.0, 1.0, 250, 2
    grad = g0 + sigma * (radius + 0.5)
    spec = bounded_spec(
        dim, horizon, n_rep, domain=Domain("ball", radius), sigma=sigma, gradient_bound=grad
    )
    if params:  # Hazan's book: β = ½ min{1/(GD), α}, ε = 1/(β²D²)
        beta = 0.5 * min(1 / (grad * 2 * radius), sigma / grad**2)
        params = {"beta": beta, "eps": 1 / (beta * 2 * radius) ** 2}
    for name, rule in _sc_rules(g0, dim, rng).items():
        player = reset(ONS(**params), spec)
        w, rounds = play_adaptive(player, spec, rule, horizon)
        assert spec.domain.contains(w).all()
        data = stack_rounds(rounds)
        regret = _strongly_convex_regret(w, data.g, data.z, sigma, radius)
        # replay to read the declared bound after every round
        replay = reset(ONS(**params), spec)
        declared = np.empty((n_rep, horizon))
        for t in range(horizon):
            replay.play_block(RoundData(g=data.g[:, t : t + 1], z=data.z[:, t : t + 1]), spec)
            declared[:, t] = replay.bounds(t + 1)[("regret", math.nan)]
            assert declared[:, t].max() <= replay.regret_bound(t + 1) * (1 + 1e-12)
        assert_below(regret, declared, f"{name}")


def test_hazan_agarwal_kale_constant_follows_for_t_at_least_3():
    """Bound (2) with the default β, ε is ≤ 5(1/α + GD) d ln T for every T ≥ 3 (the paper's
    Thm 2 constant), on a grid of α, G, D, d; at T = 1 the paper's form is 0 and cannot hold."""
    for d in (1, 2, 10, 1000):
        for grad in (0.1, 1.0, 7.0):
            for diam in (0.5, 2.0):
                for alpha in (1e-3, 0.1, 1.0, 50.0):
                    beta = 0.5 * min(1 / (4 * grad * diam), alpha)
                    eps = 1 / (beta * diam) ** 2
                    for t in (3, 4, 10, 100, 10**4, 10**7):
                        ours = d * math.log1p(t * grad**2 / (d * eps)) / (2 * beta)
                        ours += beta * eps * diam**2 / 2
                        hak = 5 * (1 / alpha + grad * diam) * d * math.log(t)
                        assert ours <= hak, (d, grad, diam, alpha, t)


def _ball_least_squares(h, b, radius):
    """min ½uᵀHu − bᵀu over ‖u‖ ≤ r (H ⪰ 0): eigenbasis + bisection on the multiplier."""
    lam, q = np.linalg.eigh(h)
    c = q.T @ b

    def u_of(mu):
        return q @ (c / np.maximum(lam + mu, 1e-300))

    if lam.min() > 1e-12 and np.linalg.norm(u_of(0.0)) <= radius:
        return u_of(0.0)
    lo, hi = 0.0, 1.0
    while np.linalg.norm(u_of(hi)) > radius:
        hi *= 2
    with np.errstate(over="ignore"):  # μ → 0 on a singular H: ‖u(μ)‖ → ∞ (> r), as wanted
        for _ in range(200):
            if hi - lo <= 4e-16 * hi:
                break
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if np.linalg.norm(u_of(mid)) > radius else (lo, mid)
    return u_of(hi)


def test_bounds_hold_on_squared_loss_with_bounded_data():
    """½(⟨w, x⟩ − y)² with ‖x‖ ≤ X, |y| ≤ Y on a ball of radius r is α-exp-concave with
    α = 1/(rX + Y)² (α(p − y)² ≤ 1 = ℓ''), and G = (rX + Y)X. The game cannot declare α, so
    the player declares nothing; bounds (1) and (2) are checked directly."""
    rng = np.random.default_rng(31)
    dim, horizon, n_rep, radius, xmax, ymax = 3, 400, 3, 1.0, 1.0, 0.8
    alpha = 1 / (radius * xmax + ymax) ** 2
    grad = (radius * xmax + ymax) * xmax
    x = _ball(rng, (n_rep, horizon, dim), xmax)
    u_true = _ball(rng, (n_rep, 1, dim), 1.0)
    y = np.clip(
        np.einsum("rtd,rd->rt", x, u_true[:, 0]) + 0.3 * rng.standard_normal((n_rep, horizon)),
        -ymax,
        ymax,
    )
    spec = bounded_spec(
        dim,
        horizon,
        n_rep,
        domain=Domain("ball", radius),
        loss="squared",
        gradient_bound=grad,
        protocol="regression",
    )
    for params in ({"alpha": alpha}, {"alpha": alpha, "beta": 0.5 * min(1 / (grad * 2), alpha)}):
        player = reset(ONS(**params), spec)
        assert player.bounds(1) == {}
        w = np.empty((n_rep, horizon, dim))
        bound1 = np.empty((n_rep, horizon))
        for t in range(horizon):
            w[:, t : t + 1] = player.play_block(
                RoundData(x=x[:, t : t + 1], y=y[:, t : t + 1]), spec
            )
            bound1[:, t] = player.data_dependent_bound()
            assert bound1[:, t].max() <= player.regret_bound(t + 1) * (1 + 1e-12)
        loss = np.cumsum(0.5 * (np.einsum("rtd,rtd->rt", w, x) - y) ** 2, axis=1)
        for r in range(n_rep):
            for t in [*range(0, horizon, 37), horizon - 1]:
                xs, ys = x[r, : t + 1], y[r, : t + 1]
                u = _ball_least_squares(xs.T @ xs, xs.T @ ys, radius)
                best = 0.5 * float(((xs @ u - ys) ** 2).sum())
                assert_below(loss[r, t] - best, bound1[r, t], f"replicate {r}, t = {t + 1}")


def test_logarithmic_regret_against_ogd_square_root():
    """Squared loss ½(w − y_t)² on [−1, 1] with i.i.d. y_t = ±1 (mean 0.3): exp-concave with
    α = 1/4, G = 2, D = 2. ONS's regret grows by a constant per doubling of t (log T), OGD's
    (η_t = D/(G√t), Zinkevich 2003; Hazan 2016) by √2 per doubling (√T); averaged over 40
    replicates."""
    n_rep, horizon = 40, 4096
    rng = np.random.default_rng(0)
    y = np.where(rng.uniform(size=(n_rep, horizon)) < 0.65, 1.0, -1.0)
    spec = bounded_spec(
        1,
        horizon,
        n_rep,
        domain=Domain("ball", 1.0),
        loss="squared",
        gradient_bound=2.0,
        protocol="regression",
    )
    player = reset(ONS(alpha=0.25, beta=1 / 8, eps=16.0), spec)  # Hazan's book: γ = ½min{1/GD, α}
    w_ons = player.play_block(RoundData(x=np.ones((n_rep, horizon, 1)), y=y), spec)[..., 0]
    w_ogd = np.empty((n_rep, horizon))
    w = np.zeros(n_rep)
    for t in range(horizon):
        w_ogd[:, t] = w
        w = np.clip(w - (w - y[:, t]) * 2.0 / (2.0 * math.sqrt(t + 1)), -1.0, 1.0)
    ts = np.arange(1, horizon + 1)
    mean = np.clip(np.cumsum(y, axis=1) / ts, -1, 1)
    best = 0.5 * (ts - 2 * mean * np.cumsum(y, axis=1) + ts * mean**2)
    reg_ons = np.cumsum(0.5 * (w_ons - y) ** 2, axis=1) - best
    reg_ogd = np.cumsum(0.5 * (w_ogd - y) ** 2, axis=1) - best
    bound2 = np.array([player.regret_bound(t) for t in ts])
    assert_below(reg_ons, bound2[None, :], "ONS bound (2)")
    incr = {}
    for name, reg in (("ons", reg_ons.mean(axis=0)), ("ogd", reg_ogd.mean(axis=0))):
        incr[name] = np.array([reg[2 ** (k + 1) - 1] - reg[2**k - 1] for k in range(8, 12)])
    assert incr["ons"].max() / incr["ons"].min() < 1.6  # ≈ constant per doubling (1.27-1.61)
    assert np.all(incr["ogd"][1:] / incr["ogd"][:-1] > 1.2)  # ≈ √2 growth per doubling
    assert incr["ogd"][-1] / incr["ogd"][0] > 2.0  # (√2)³ ≈ 2.8 expected
    assert reg_ons[:, -1].mean() < 0.5 * reg_ogd[:, -1].mean()


# ---------------------------------------------------------------------------------------------
# declarations and configuration


@pytest.mark.parametrize(
    ("spec_kw", "params"),
    [
        ({"sigma": 0.0}, {}),  # linear losses are not exp-concave
        ({"sigma": 1.0, "loss": "hinge", "protocol": "classification"}, {}),  # kink
        ({"sigma": 1.0}, {"alpha": 10.0}),  # user α above σ/G²: not verified
        ({"sigma": 1.0}, {"beta": 1.0}),  # β above ½ min{1/(GD), α}
    ],
)
def test_declares_bounds_only_when_verified(spec_kw, params):
    spec = bounded_spec(2, 10, domain=Domain("ball", 1.0), gradient_bound=2.0, **spec_kw)
    assert reset(ONS(**params), spec).bounds(1) == {}


@pytest.mark.parametrize(
    ("params", "spec_kw", "parameter"),
    [
        ({}, {"domain": Domain("box", 1.0)}, "domain"),
        ({}, {"domain": Domain("simplex")}, "domain"),
        ({}, {"domain": Domain("unconstrained")}, "beta"),
        ({"beta": 0.1}, {"domain": Domain("unconstrained")}, "eps"),
        ({}, {"gradient_bound": None}, "beta"),
        ({"alpha": -1.0}, {}, "alpha"),
        ({"beta": 0.0}, {}, "beta"),
        ({"eps": math.nan}, {}, "eps"),
    ],
)
def test_config_errors(params, spec_kw, parameter):
    kw = {"domain": Domain("ball", 1.0), "gradient_bound": 1.0, **spec_kw}
    player = ONS(**params)
    with pytest.raises(ConfigError) as info:
        validate_params(player)  # the declared constraints first, as the driver checks them
        reset(player, bounded_spec(2, 10, **kw))  # then what depends on the game
    assert info.value.parameter == parameter and info.value.component == "player ons"


# ---------------------------------------------------------------------------------------------
# end to end with the OCO engine


def test_engine_end_to_end(tmp_path):
    """arena's OCO engine with a strongly convex linear game (σ = 0.8 → α = σ/G² derived): the
    traced iterates equal the literal transcription and the declared bound holds."""
    from arena.game import run_game
    from tests.helpers.oco import LinearStream, read_oco_trace

    sigma, dim, horizon = 0.8, 3, 300
    path = tmp_path / "trace.parquet"
    run = run_game(
        ONS(),
        LinearStream(G=1.0, domain="ball", radius=1.0, sigma=sigma),
        n_actions=dim,
        horizon=horizon,
        replicates=3,
        seed=4,
        metrics=["regret", "bound"],
        trace_path=path,
    )
    rows = run.rows
    regret = rows[rows.metric == "regret"].set_index(["replicate", "t"]).value
    bound = rows[rows.metric == "bound:regret"].set_index(["replicate", "t"]).value
    assert len(bound) == len(regret) > 10
    assert_below(regret.to_numpy(), bound.loc[regret.index].to_numpy(), "engine bound")
    w, g = read_oco_trace(path, dim)
    beta = 0.5 * min(1 / (4 * 1.8 * 2.0), sigma / 1.8**2)
    for r in range(3):
        want = literal_ons(
            lambda t, x, r=r: g[r, t - 1] + sigma * x, horizon, dim, beta, 1 / (beta * 2) ** 2, 1.0
        )
        np.testing.assert_allclose(w[r], want, rtol=0, atol=ATOL)
