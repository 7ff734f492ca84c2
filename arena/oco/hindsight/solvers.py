"""The exact quadratic steps and the certified smooth solver the comparators share.

* eigen-coordinates of ``H ⪰ 0`` (:func:`_psd_eig`), the minimum-norm unconstrained step
  (:func:`_pinv_solve`) and the exact trust-region step on the ball (:func:`_trust_region`,
  Moré & Sorensen 1983);
* a primal active-set QP on a box or the simplex (:func:`_active_set_qp`, Nocedal & Wright 2006,
  Alg. 16.3), which together give :func:`_model_step`, the exact minimizer of a quadratic model
  over any domain kind;
* projected Newton (:func:`_newton`) over those model steps and :func:`_smooth_min`, which
  restarts it from a scipy pass (L-BFGS-B / SLSQP) when its certificate stays above
  :data:`~arena.oco.hindsight.certificates.GAP_RTOL`.

:func:`~arena.oco.hindsight.quadratic.best_quadratic` (box, simplex) and the logistic loss of
:func:`~arena.oco.hindsight.examples.best_examples` minimize through :func:`_smooth_min`.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.optimize as so

from arena.oco.domains import Domain
from arena.oco.hindsight.certificates import (
    _LBFGS,
    _SLSQP,
    EIG_RCOND,
    GAP_RTOL,
    HARD_CASE_RTOL,
    RANGE_RTOL,
    _center,
    _fw_gap,
    _warn_gap,
)


def _psd_eig(H: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(λ, Q)`` of the symmetric part of ``H``, tiny eigenvalues set to exactly 0."""
    lam, Q = np.linalg.eigh(0.5 * (H + H.T))
    lam_max = max(float(lam[-1]), 0.0) if lam.size else 0.0
    if lam.size and lam[0] < -1e-9 * max(lam_max, 1e-300):
        raise ValueError(f"H must be positive semidefinite; smallest eigenvalue {lam[0]:.3e}")
    lam = np.where(lam <= EIG_RCOND * lam_max, 0.0, lam)
    return lam, Q


def _pinv_solve(lam: np.ndarray, Q: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, bool]:
    """Minimum-norm minimizer of ``½vᵀΛv − bᵀv`` in eigen-coordinates; ``False`` if unbounded."""
    null = lam == 0.0
    bn = float(np.linalg.norm(b[null]))
    finite = bn <= RANGE_RTOL * float(np.linalg.norm(b))
    v = np.zeros_like(b)
    v[~null] = b[~null] / lam[~null]
    return Q @ v, finite


def _trust_region(lam: np.ndarray, Q: np.ndarray, b: np.ndarray, r: float) -> np.ndarray:
    """Exact minimizer of ``½vᵀΛv − bᵀv`` over ``‖v‖ ≤ r`` (Λ ≥ 0 diagonal), mapped by ``Q``.

    KKT: ``(Λ + μI)v = b``, ``μ ≥ 0``, ``μ(‖v‖ − r) = 0``. If the minimum-norm unconstrained
    minimizer lies in the ball (this includes the hard case ``b ⊥ null(Λ)``), it is returned
    (μ = 0); otherwise μ > 0 is the root of the secular equation ``1/r − 1/‖(Λ + μI)⁻¹b‖ = 0``
    bracketed in ``[max(‖b_null‖, ‖b‖ − rλ_max)/r, ‖b‖/r]`` and found by Brent's method to
    machine precision, and ``v`` is rescaled onto the sphere.
    """
    bh = float(np.linalg.norm(b))
    if bh == 0.0:
        return np.zeros(Q.shape[0])
    null = lam == 0.0
    b = b.copy()
    bn = float(np.linalg.norm(b[null]))
    if bn <= HARD_CASE_RTOL * bh:
        b[null] = 0.0
        bn = 0.0
        v0 = np.zeros_like(b)
        v0[~null] = b[~null] / lam[~null]
        if float(np.linalg.norm(v0)) <= r:
            return Q @ v0
    lam_max = float(lam.max())

    def vec(mu: float) -> np.ndarray:
        den = lam + mu
        return np.divide(b, den, out=np.zeros_like(b), where=b != 0.0)

    def sec(mu: float) -> float:
        n = float(np.linalg.norm(vec(mu)))
        return 1.0 / r - (1.0 / n if n > 0 else math.inf)

    lo = max(bn / r, bh / r - lam_max, 0.0)
    hi = bh / r
    # sec is decreasing; sec(lo) ≥ 0 ≥ sec(hi) in exact arithmetic (lo = 0 only if b_null = 0,
    # where sec(0) = 1/r − 1/‖v0‖ > 0 is finite)
    if sec(lo) <= 0.0:
        mu = lo
    elif sec(hi) >= 0.0:
        mu = hi
    else:
        mu = so.brentq(sec, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    v = vec(mu)
    n = float(np.linalg.norm(v))
    if n > 0:
        v *= r / n
    return Q @ v


def _active_set_qp(
    H: np.ndarray, b: np.ndarray, u: np.ndarray, domain: Domain, pd: bool = False
) -> np.ndarray:
    """Exact minimizer of ``½vᵀHv − bᵀv`` (H ⪰ 0) over a box or the simplex: primal active set.

    Nocedal & Wright (2006), Alg. 16.3, started from the feasible ``u``: the working set W holds
    coordinates fixed at a bound; on the free set F the equality-constrained QP (``Σ_F δ = 0`` on
    the simplex) is solved by least squares on its KKT system. If that system is inconsistent
    (singular H), its residual is a zero-curvature descent direction and the step runs to the
    first blocking bound. At ``δ = 0`` the most violated bound multiplier leaves W; none → KKT
    holds and ``v`` is optimal. Returns the best point met (at most ``100 + 20d`` iterations).
    ``pd``: H is known to be positive definite (every KKT system is then nonsingular and is
    solved by LU instead of least squares).
    """
    d = u.shape[0]
    simplex = domain.kind == "simplex"
    if simplex:
        lo, hi, unit = np.zeros(d), np.full(d, np.inf), 1.0
        u = np.where(u <= 1e-13, 0.0, u)
        u = u / u.sum() if u.sum() > 0 else np.full(d, 1.0 / d)
    else:
        unit = float(domain.radius)
        lo, hi = np.full(d, -unit), np.full(d, unit)
        u = np.clip(u, lo, hi)
        u = np.where(u <= lo + 1e-13 * unit, lo, np.where(u >= hi - 1e-13 * unit, hi, u))
    at_lo, at_hi = u == lo, u == hi
    hmax = float(np.abs(H).max()) if H.size else 0.0
    gtol = 1e-13 * (float(np.abs(b).max()) + hmax * unit * d + 1e-300)

    def fval(x):
        return 0.5 * float(x @ H @ x) - float(b @ x)

    best, fbest = u.copy(), fval(u)
    for _ in range(100 + 20 * d):
        g = H @ u - b
        F = ~(at_lo | at_hi)
        nF = int(F.sum())
        delta = np.zeros(d)
        ray = False
        if nF:
            HF = H[np.ix_(F, F)]
            if simplex:
                K = np.zeros((nF + 1, nF + 1))
                K[:nF, :nF] = HF
                K[:nF, nF] = K[nF, :nF] = 1.0
                rhs = np.concatenate([-g[F], [0.0]])
            else:
                K, rhs = HF, -g[F]
            sol = np.linalg.solve(K, rhs) if pd else np.linalg.lstsq(K, rhs, rcond=None)[0]
            res = rhs - K @ sol
            if float(np.linalg.norm(res)) > 1e-10 * float(np.linalg.norm(rhs)):
                delta[F], ray = res[:nF], True  # Hδ = 0, ⟨g, δ⟩ = −‖δ‖² < 0
            else:
                delta[F] = sol[:nF]
        if not ray and float(np.abs(delta).max()) <= 1e-14 * unit:
            if simplex:
                nu = -float(g[F].mean()) if nF else 0.0
                viol = np.where(at_lo, -(g + nu), -np.inf)
            else:
                viol = np.where(at_lo, -g, np.where(at_hi, g, -np.inf))
            j = int(np.argmax(viol))
            if not viol[j] > gtol:
                return u
            at_lo[j] = at_hi[j] = False
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(
                delta < 0, (lo - u) / delta, np.where(delta > 0, (hi - u) / delta, np.inf)
            )
        ratio = np.where(F, np.maximum(ratio, 0.0), np.inf)
        j = int(np.argmin(ratio))
        alpha = float(ratio[j]) if ray else min(1.0, float(ratio[j]))
        if not math.isfinite(alpha):
            return best
        u = u + alpha * delta
        if alpha == ratio[j]:
            if delta[j] < 0:
                u[j], at_lo[j] = lo[j], True
            else:
                u[j], at_hi[j] = hi[j], True
        u = np.clip(u, lo, hi)
        f = fval(u)
        if f <= fbest:
            best, fbest = u.copy(), f
    return best


def _model_step(H: np.ndarray, g: np.ndarray, u: np.ndarray, domain: Domain) -> np.ndarray:
    """Return ``argmin_{v∈K} ⟨g, v−u⟩ + ½(v−u)ᵀH(v−u)`` (exactly, for every domain kind)."""
    if domain.kind == "unconstrained":
        return u - np.linalg.lstsq(H, g, rcond=None)[0]
    hlin = H @ u - g  # model is ½vᵀHv − hlinᵀv + const
    if domain.kind == "ball":
        lam, Q = _psd_eig(H)
        return domain.project(_trust_region(lam, Q, Q.T @ hlin, float(domain.radius)))
    lam = np.linalg.eigvalsh(0.5 * (H + H.T))
    pd = bool(lam.size) and lam[0] > 1e-10 * lam[-1]
    return domain.project(_active_set_qp(H, hlin, u, domain, pd)[None, :])[0]


def _scipy_pass(fun, grad, u0: np.ndarray, domain: Domain) -> np.ndarray:
    """First pass of :func:`_smooth_min`: L-BFGS-B (unconstrained/box) or SLSQP (ball/simplex)."""
    d = u0.shape[0]
    kind = domain.kind
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind in ("unconstrained", "box"):
            bounds = None if kind == "unconstrained" else [(-domain.radius, domain.radius)] * d
            res = so.minimize(fun, u0, jac=grad, method="L-BFGS-B", bounds=bounds, options=_LBFGS)
        elif kind == "ball":
            r2 = float(domain.radius) ** 2
            cons = [{"type": "ineq", "fun": lambda x: r2 - x @ x, "jac": lambda x: -2.0 * x}]
            res = so.minimize(fun, u0, jac=grad, method="SLSQP", constraints=cons, options=_SLSQP)
        else:
            cons = [
                {"type": "eq", "fun": lambda x: x.sum() - 1.0, "jac": lambda x: np.ones_like(x)}
            ]
            res = so.minimize(
                fun,
                u0,
                jac=grad,
                method="SLSQP",
                bounds=[(0.0, 1.0)] * d,
                constraints=cons,
                options=_SLSQP,
            )
    x = np.asarray(res.x, dtype=np.float64)
    if not np.all(np.isfinite(x)):
        return u0
    return domain.project(x[None, :])[0]


def _newton(fun, grad, hess, u, domain: Domain, strong: float, scale: float, iters: int):
    """Projected Newton: minimize the quadratic model over ``K`` exactly, backtrack on the segment.

    Returns ``(u, f(u), certificate)``; stops at the rounding level of the certificate.
    """
    f = fun(u)
    gap = _fw_gap(grad(u), u, domain, strong)
    for _ in range(iters):
        slack = 8 * np.finfo(float).eps * (scale + abs(f))  # rounding level of f
        if gap <= 1e-15 * (scale + abs(f)):
            break
        v = _model_step(hess(u), grad(u), u, domain)
        step = v - u
        if not np.all(np.isfinite(step)) or not np.any(step):
            break
        alpha, accepted = 1.0, False
        for _ in range(60):
            cand = domain.project((u + alpha * step)[None, :])[0]
            fc = fun(cand)
            if fc <= f + slack:
                # near the optimum f − f* ~ ‖u − u*‖² is below rounding while the certificate is
                # ~‖u − u*‖: accept a non-worse point when it improves the certificate
                gc = _fw_gap(grad(cand), cand, domain, strong)
                if fc < f or gc < gap:
                    u, f, gap, accepted = cand, fc, gc, True
                    break
            alpha *= 0.5
        if not accepted:
            break
    return u, f, gap


def _smooth_min(fun, grad, hess, d: int, domain: Domain, strong: float, what: str):
    """Minimize a smooth convex ``fun`` over the domain; return ``(u, fun(u))``, certified.

    Projected Newton (:func:`_newton`) from the centre of ``K``: the quadratic model at ``u`` is
    minimized over ``K`` exactly by :func:`_model_step` (so a quadratic is solved in one step once
    the active set is found) and a backtracking search along the feasible segment accepts
    decreases. If the certificate (:func:`_fw_gap`) is still above :data:`GAP_RTOL`, a scipy pass
    (L-BFGS-B / SLSQP) restarts it.
    """
    u0 = _center(domain, d)
    f0 = fun(u0)
    rk = domain.max_norm(d)
    scale = abs(f0) + (float(np.linalg.norm(grad(u0))) * rk if math.isfinite(rk) else 0.0)
    u, f, gap = _newton(fun, grad, hess, u0, domain, strong, scale, 200)
    if not gap <= GAP_RTOL * (scale + abs(f)):
        u2, f2, gap2 = _newton(
            fun, grad, hess, _scipy_pass(fun, grad, u, domain), domain, strong, scale, 200
        )
        if f2 < f or (f2 <= f + 1e-15 * scale and gap2 < gap):
            u, f, gap = u2, f2, gap2
    _warn_gap(what, gap, scale + abs(f))
    return u, f
