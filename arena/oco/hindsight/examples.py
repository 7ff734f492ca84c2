"""Best fixed comparator for example-based losses (absolute, hinge, logistic, squared).

:func:`best_examples` solves ``min_{u∈K} Σ_s ℓ(⟨u, x_s⟩, y_s) + (σ/2)Σ_s‖u − z_s‖²`` per replicate
(:class:`_Problem`): the squared loss as a quadratic, the logistic loss by projected Newton, and
the piecewise-linear hinge / absolute losses by an epigraph LP (:func:`_lp_solve`), the Fenchel
dual (:func:`_dual_solve`) and Kelley cutting planes, each candidate polished on its kink pattern
(:func:`_polish_pl`) and certified by a dual point (:func:`_certify_pl`); :func:`_solve_pl`
orders these.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.optimize as so
import scipy.sparse as sp
from scipy.special import expit

from arena.oco.domains import Domain
from arena.oco.hindsight.certificates import _LBFGS, _SLSQP, GAP_RTOL, _as_rows, _center, _warn_gap
from arena.oco.hindsight.quadratic import best_quadratic
from arena.oco.hindsight.solvers import _smooth_min
from arena.oco.losses import (
    EXAMPLE_LOSSES,
    prediction_loss,
)


def _loss_sum(kind: str, X: np.ndarray, y: np.ndarray, u: np.ndarray) -> float:
    return float(prediction_loss(kind, X @ u, y)[0].sum())


class _Problem:
    """One replicate's ``P(u) = Σ_s ℓ(⟨u, x_s⟩, y_s) + (σt/2)‖u‖² − σ⟨Z, u⟩ + (σ/2)Σ‖z_s‖²``."""

    def __init__(self, kind, X, y, sigma, Z, zsq, t):
        self.kind, self.X, self.y = kind, X, y
        self.sigma, self.Z, self.zsq, self.t = sigma, Z, zsq, t

    def reg(self, u):
        if not self.sigma:
            return 0.0
        s = self.sigma
        return 0.5 * s * self.t * float(u @ u) - s * float(self.Z @ u) + 0.5 * s * self.zsq

    def value(self, u):
        return _loss_sum(self.kind, self.X, self.y, u) + self.reg(u)

    def grad(self, u):
        _, dl = prediction_loss(self.kind, self.X @ u, self.y)
        g = self.X.T @ dl
        if self.sigma:
            g = g + self.sigma * (self.t * u - self.Z)
        return g

    def hess(self, u):
        """Hessian of the logistic objective (the only smooth non-quadratic kind)."""
        m = self.y * (self.X @ u)
        w = self.y * self.y * expit(m) * expit(-m)
        Hm = self.X.T @ (w[:, None] * self.X)
        if self.sigma:
            Hm = Hm + self.sigma * self.t * np.eye(self.X.shape[1])
        return Hm


def _lp_solve(
    kind: str, X: np.ndarray, y: np.ndarray, domain: Domain, cuts: list | None = None
) -> tuple[np.ndarray, float]:
    """Solve ``min Σ_s ℓ(⟨u, x_s⟩, y_s)`` (hinge/absolute) as an epigraph LP; return ``(u, value)``.

    ``domain`` is unconstrained, a box or the simplex; ``cuts`` adds rows ``⟨a, u⟩ ≤ radius``
    (outer approximations of a ball inside a box). HiGHS interior point with crossover, so ``u``
    is a vertex.
    """
    t, d = X.shape
    if kind == "hinge":  # −y_s⟨x_s,u⟩ − ξ_s ≤ −1
        A = sp.hstack([sp.csr_matrix(-y[:, None] * X), -sp.identity(t, format="csr")])
        b = -np.ones(t)
    else:  # ±(⟨x_s,u⟩ − y_s) ≤ ξ_s
        Xs = sp.csr_matrix(X)
        eye = sp.identity(t, format="csr")
        A = sp.vstack([sp.hstack([Xs, -eye]), sp.hstack([-Xs, -eye])])
        b = np.concatenate([y, -y])
    if cuts:
        C = np.asarray(cuts)
        A = sp.vstack([A, sp.hstack([sp.csr_matrix(C), sp.csr_matrix((len(cuts), t))])])
        b = np.concatenate([b, np.full(len(cuts), float(domain.radius))])
    cost = np.concatenate([np.zeros(d), np.ones(t)])
    if domain.kind in ("box", "ball"):
        ub = [(-domain.radius, domain.radius)] * d
    elif domain.kind == "simplex":
        ub = [(0.0, None)] * d
    else:
        ub = [(None, None)] * d
    bounds = ub + [(0.0, None)] * t
    A_eq = b_eq = None
    if domain.kind == "simplex":
        A_eq = np.concatenate([np.ones(d), np.zeros(t)])[None, :]
        b_eq = np.array([1.0])
    res = so.linprog(
        cost,
        A_ub=A.tocsr(),
        b_ub=b,
        A_eq=A_eq,
        b_eq=b_eq,
        bounds=bounds,
        method="highs-ipm",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    if res.status != 0:
        raise RuntimeError(f"linprog failed for the {kind} hindsight LP: {res.message}")
    return np.asarray(res.x[:d], dtype=np.float64), float(res.fun)


def _psi_star(prob: _Problem, domain: Domain, v: np.ndarray) -> tuple[float, np.ndarray]:
    """Return ``(Ψ*(v), ∇Ψ*(v))`` for ``Ψ = (σt/2)‖u‖² − σ⟨Z,u⟩ + C + ι_K`` (σ = 0: ball only)."""
    sigma = prob.sigma
    if sigma:
        st = sigma * prob.t
        vz = v + sigma * prob.Z
        uu = domain.project((vz / st)[None, :])[0]
        return float(vz @ uu) - 0.5 * st * float(uu @ uu) - 0.5 * sigma * prob.zsq, uu
    nv = float(np.linalg.norm(v))
    r = float(domain.radius)
    return r * nv, (r * v / nv if nv > 0 else np.zeros_like(v))


def _dual_parts(prob: _Problem) -> tuple[np.ndarray, np.ndarray, float]:
    """Return ``(a, c, lo)``: the dual is ``max_{β∈[lo,1]^t} ⟨a,β⟩ − Ψ*(Σ_s β_s c_s x_s)``."""
    n = prob.X.shape[0]
    if prob.kind == "hinge":
        return np.ones(n), prob.y, 0.0
    return prob.y, np.ones(n), -1.0


def _dual_value(prob: _Problem, domain: Domain, beta: np.ndarray) -> float:
    a, cvec, _ = _dual_parts(prob)
    return float(a @ beta) - _psi_star(prob, domain, prob.X.T @ (cvec * beta))[0]


def _dual_solve(prob: _Problem, domain: Domain, beta0=None) -> tuple[np.ndarray, float, np.ndarray]:
    """Hinge/absolute via the Fenchel dual (σ > 0, or σ = 0 on the ball); return ``(u, D(β), β)``.

    With ``Ψ(u) = (σt/2)‖u‖² − σ⟨Z,u⟩ + C + ι_K(u)`` the primal ``min_u Σ_s ℓ(⟨u,x_s⟩) + Ψ(u)`` has
    the dual ``max_β ⟨a, β⟩ − Ψ*(Xᵀ(c∘β))`` over a box: hinge ``β ∈ [0,1]^t``, ``a = 1``,
    ``c = y``; absolute ``β ∈ [−1,1]^t``, ``a = y``, ``c = 1``. For σ > 0 ``Ψ*`` is C¹ with
    ``∇Ψ*(v) = Π_K((v + σZ)/(σt))``; for σ = 0 on the ball ``Ψ* = r‖·‖`` (``∇ = rv/‖v‖``, not
    smooth at 0). L-BFGS-B solves the dual and ``u = ∇Ψ*(v)`` recovers the primal.
    """
    X = prob.X
    a, cvec, lo = _dual_parts(prob)
    Xc = cvec[:, None] * X

    def neg_dual(beta):
        val, uu = _psi_star(prob, domain, Xc.T @ beta)
        return -(float(a @ beta) - val), -(a - Xc @ uu)

    opts = (
        _LBFGS if beta0 is not None else {**_LBFGS, "maxiter": 3000, "ftol": 1e-12, "gtol": 1e-10}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = so.minimize(
            neg_dual,
            np.zeros(X.shape[0]) if beta0 is None else beta0,
            jac=True,
            method="L-BFGS-B",
            bounds=[(lo, 1.0)] * X.shape[0],
            options=opts,
        )
    beta = np.clip(res.x, lo, 1.0)
    val, uu = _psi_star(prob, domain, Xc.T @ beta)
    return uu, float(a @ beta) - val, beta


def _pattern(prob: _Problem, u: np.ndarray, tau: float):
    """Split the examples at ``u`` into kinks S (within ``tau``) and fixed linear pieces.

    Returns ``(S, beta_fixed, kappa)``: on S the kink equation is ``⟨x_s, u⟩ = κ_s``; off S,
    ``β_s`` is the dual variable forced by the sign of the piece (hinge: 1 where ``y⟨x,u⟩ < 1``,
    0 above; absolute: ``−sign(⟨x,u⟩ − y)``), and the loss is linear with gradient ``−Σβ_sc_sx_s``.
    """
    p = prob.X @ u
    y = prob.y
    if prob.kind == "hinge":
        m = y * p
        S = (y != 0) & (np.abs(m - 1.0) <= tau * np.maximum(1.0, np.abs(m)))
        beta = np.where(m < 1.0, 1.0, 0.0)
        with np.errstate(divide="ignore"):
            kappa = np.where(y != 0, 1.0 / np.where(y != 0, y, 1.0), 0.0)
    else:
        res = p - y
        S = np.abs(res) <= tau * np.maximum(1.0, np.abs(y))
        beta = -np.sign(res)
        kappa = y
    return S, np.where(S, 0.0, beta), kappa


def _polish_pl(prob: _Problem, domain: Domain, u: np.ndarray, tau: float) -> np.ndarray | None:
    """Exact minimizer for the kink/bound pattern of ``u`` (ball, or σ > 0 on any domain).

    Kinks S within ``tau`` give equations ``⟨x_s, u⟩ = κ_s``; on a box the coordinates within
    ``tau·r`` of a bound are fixed there, on the simplex those below ``tau`` are fixed at 0 (and
    ``Σ u = 1`` joins the equations). On that affine set the objective is
    ``⟨c, u⟩ + (σt/2)‖u‖² − σ⟨Z, u⟩`` with ``c = −Σ_{s∉S} β_s c_s x_s``; writing the free part
    ``u_F = u₀ + Nw`` (``u₀`` the minimum-norm solution, N an orthonormal null-space basis) it is
    an isotropic quadratic (linear if σ = 0) in ``w``, over ``‖w‖² ≤ r² − ‖u₀‖²`` on the ball:
    closed form. Returns None if the pattern is inconsistent (the caller keeps the better point).
    """
    S, beta, kappa = _pattern(prob, u, tau)
    _, cvec, _ = _dual_parts(prob)
    X = prob.X
    d = X.shape[1]
    g = -(X.T @ (beta * cvec))
    if prob.sigma:
        g = g - prob.sigma * prob.Z
    st = prob.sigma * prob.t
    fixed_val = np.zeros(d)
    if domain.kind == "box":
        r = float(domain.radius)
        fixed = np.abs(u) >= r * (1.0 - tau)
        fixed_val = np.where(fixed, np.sign(u) * r, 0.0)
    elif domain.kind == "simplex":
        fixed = u <= tau
    else:
        fixed = np.zeros(d, dtype=bool)
    F = ~fixed
    if not F.any():
        return None
    rows = X[S][:, F]
    rhs = kappa[S] - X[S][:, fixed] @ fixed_val[fixed]
    if domain.kind == "simplex":
        rows = np.vstack([rows, np.ones((1, int(F.sum())))])
        rhs = np.concatenate([rhs, [1.0]])
    nf = int(F.sum())
    if rows.shape[0]:
        U_, sv, Vt = np.linalg.svd(rows, full_matrices=True)
        rank = int(np.sum(sv > 1e-12 * sv[0])) if sv.size and sv[0] > 0 else 0
        if rank == 0:
            return None
        u0 = Vt[:rank].T @ ((U_[:, :rank].T @ rhs) / sv[:rank])
        if np.linalg.norm(rows @ u0 - rhs) > 1e-9 * (1.0 + np.linalg.norm(rhs)):
            return None
        N = Vt[rank:].T
    else:
        u0, N = np.zeros(nf), np.eye(nf)
    gn = N.T @ g[F]
    if domain.kind == "ball":
        rho2 = float(domain.radius) ** 2 - float(u0 @ u0)
        if rho2 < 0:
            return None
        rho = math.sqrt(rho2)
        if st:
            w = -gn / st
            nw = float(np.linalg.norm(w))
            if nw > rho:
                w *= rho / nw
        else:
            ng = float(np.linalg.norm(gn))
            w = -rho * gn / ng if ng > 0 else np.zeros_like(gn)
    elif st:
        w = -gn / st
    else:
        return None
    out = fixed_val.copy()
    out[F] = u0 + N @ w
    return domain.project(out[None, :])[0]


def _certify_pl(prob: _Problem, domain: Domain, u: np.ndarray, tau: float) -> float:
    """Return a dual lower bound ``D(β)`` built from the kink pattern of ``u`` (weak duality).

    ``β`` is fixed off the kinks; on the kinks, and with the normal-cone multipliers of ``K`` at
    ``u``, it solves the stationarity ``Σ_s β_s c_s x_s ∈ σtu − σZ + N_K(u)`` by bounded least
    squares (BVLS). Any ``β`` in the dual box gives a valid lower bound; at the optimum with the
    right pattern it is tight.
    """
    S, beta, _ = _pattern(prob, u, tau)
    _, cvec, lo = _dual_parts(prob)
    X = prob.X
    d = X.shape[1]
    v_fix = X.T @ (beta * cvec)
    target = (prob.sigma * (prob.t * u - prob.Z) if prob.sigma else np.zeros(d)) - v_fix
    cols = [(cvec[S][:, None] * X[S]).T]
    lb = [np.full(int(S.sum()), lo)]
    ub = [np.ones(int(S.sum()))]
    kind, eye = domain.kind, np.eye(d)
    if kind == "ball" and np.linalg.norm(u) >= float(domain.radius) * (1 - 1e-10):
        cols.append(-u[:, None])
        lb.append([0.0])
        ub.append([np.inf])
    elif kind == "box":
        r = float(domain.radius)
        hi_, lo_ = u >= r * (1 - 1e-12), u <= -r * (1 - 1e-12)
        cols += [-eye[:, hi_], eye[:, lo_]]
        k = int(hi_.sum() + lo_.sum())
        lb.append(np.zeros(k))
        ub.append(np.full(k, np.inf))
    elif kind == "simplex":
        zero = u <= 1e-14
        cols += [-np.ones((d, 1)), eye[:, zero]]
        lb.append(np.concatenate([[-np.inf], np.zeros(int(zero.sum()))]))
        ub.append(np.full(1 + int(zero.sum()), np.inf))
    A = np.hstack(cols)
    if A.shape[1]:
        lbv, ubv = np.concatenate(lb), np.concatenate(ub)
        sol = so.lsq_linear(A, target, bounds=(lbv, ubv), method="bvls", tol=1e-15).x
        beta = beta.copy()
        beta[S] = np.clip(sol[: int(S.sum())], lo, 1.0)
    return _dual_value(prob, domain, beta)


_TAUS = (1e-10, 1e-8, 1e-6, 1e-4, 1e-2)


def _refine_pl(prob: _Problem, domain: Domain, cands, best):
    """Polish and certify candidate points; ``best = [u, P(u), lower bound]`` is updated."""
    for c in cands:
        c = domain.project(np.asarray(c, dtype=np.float64)[None, :])[0]
        pts = [c]
        if domain.kind == "ball" or prob.sigma:
            for tau in _TAUS:
                q = _polish_pl(prob, domain, c, tau)
                if q is not None:
                    pts.append(q)
        for q in pts:
            fq = prob.value(q)
            if fq < best[1]:
                best[0], best[1] = q, fq
    for tau in _TAUS:
        best[2] = max(best[2], _certify_pl(prob, domain, best[0], tau))


def _solve_pl(prob: _Problem, domain: Domain, what: str) -> tuple[np.ndarray, float]:
    """Hinge/absolute: LP (σ = 0, polyhedral K), cutting planes (σ = 0, ball) or the dual."""
    d = prob.X.shape[1]
    if not prob.sigma and domain.kind != "ball":
        u, _ = _lp_solve(prob.kind, prob.X, prob.y, domain)
        u = domain.project(u[None, :])[0]
        return u, prob.value(u)
    u0 = _center(domain, d)
    scale = abs(prob.value(u0)) + float(np.linalg.norm(prob.grad(u0))) * domain.max_norm(d)
    best = [u0, prob.value(u0), -math.inf]

    def done():
        return best[1] - best[2] <= GAP_RTOL * (scale + abs(best[1]))

    if not prob.sigma:
        # (1) the LP over the box ⊇ ball: exact if its vertex lies in the ball; (2) the dual
        # max_β Σβ_s a_s − r‖Σβ_s c_s x_s‖ by L-BFGS-B, u = r·v/‖v‖; both polished on their kink
        # pattern and certified; (3) Kelley cutting planes: tangent cuts ⟨u_k/‖u_k‖, u⟩ ≤ r
        # added to the LP (whose value stays a lower bound), each LP point polished.
        r = float(domain.radius)
        ulp, lpval = _lp_solve(prob.kind, prob.X, prob.y, domain)
        best[2] = lpval
        if float(np.linalg.norm(ulp)) <= r * (1 + 1e-12):
            u = domain.project(ulp[None, :])[0]
            return u, prob.value(u)
        ud, _, beta = _dual_solve(prob, domain)
        _refine_pl(prob, domain, [ulp, ud], best)
        if not done():
            _refine_pl(prob, domain, [_dual_solve(prob, domain, beta)[0]], best)
        cuts = [ulp / float(np.linalg.norm(ulp))]
        for _ in range(60):
            if done():
                break
            ulp, lpval = _lp_solve(prob.kind, prob.X, prob.y, domain, cuts)
            best[2] = max(best[2], lpval)
            nrm = float(np.linalg.norm(ulp))
            _refine_pl(prob, domain, [ulp], best)
            if nrm <= r * (1 + 1e-12):
                break
            cuts.append(ulp / nrm)
    else:
        u1, dual, beta = _dual_solve(prob, domain)
        best[2] = max(best[2], dual)
        _refine_pl(prob, domain, [u1], best)
        if not done():
            u1, dual, _ = _dual_solve(prob, domain, beta)
            best[2] = max(best[2], dual)
            _refine_pl(prob, domain, [u1], best)
    if not done() and prob.X.shape[0] + d <= 2000:
        _refine_pl(prob, domain, [_epigraph_slsqp(prob, domain, best[0])], best)
    _warn_gap(what, best[1] - best[2], scale + abs(best[1]))
    return best[0], best[1]


def _epigraph_slsqp(prob: _Problem, domain: Domain, u0: np.ndarray) -> np.ndarray:
    """Fallback for hinge/absolute: SLSQP on ``min Σξ + reg(u)`` (epigraph + domain constraints)."""
    X, y = prob.X, prob.y
    n, d = X.shape
    if prob.kind == "hinge":
        A = np.hstack([y[:, None] * X, np.eye(n)])  # y⟨x,u⟩ + ξ − 1 ≥ 0
        b = np.ones(n)
    else:
        A = np.vstack([np.hstack([-X, np.eye(n)]), np.hstack([X, np.eye(n)])])
        b = np.concatenate([-y, y])
    cons = [{"type": "ineq", "fun": lambda z: A @ z - b, "jac": lambda z: A}]
    bounds = [(None, None)] * d + [(0.0, None)] * n
    if domain.kind == "box":
        bounds[:d] = [(-domain.radius, domain.radius)] * d
    elif domain.kind == "simplex":
        bounds[:d] = [(0.0, 1.0)] * d
        e = np.concatenate([np.ones(d), np.zeros(n)])
        cons.append({"type": "eq", "fun": lambda z: z[:d].sum() - 1.0, "jac": lambda z: e})
    elif domain.kind == "ball":
        r2 = float(domain.radius) ** 2

        def ball_jac(z):
            j = np.zeros_like(z)
            j[:d] = -2.0 * z[:d]
            return j

        cons.append({"type": "ineq", "fun": lambda z: r2 - z[:d] @ z[:d], "jac": ball_jac})

    def fun(z):
        return float(z[d:].sum()) + prob.reg(z[:d])

    def jac(z):
        gz = np.concatenate([np.zeros(d), np.ones(n)])
        if prob.sigma:
            gz[:d] = prob.sigma * (prob.t * z[:d] - prob.Z)
        return gz

    xi0 = prediction_loss(prob.kind, X @ u0, y)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = so.minimize(
            fun,
            np.concatenate([u0, xi0]),
            jac=jac,
            method="SLSQP",
            bounds=bounds,
            constraints=cons,
            options=_SLSQP,
        )
    return domain.project(np.asarray(res.x[:d])[None, :])[0]


def best_examples(
    kind: str,
    X,
    Y,
    domain: Domain,
    *,
    sigma: float = 0.0,
    z_sum=None,
    z_sqsum=None,
    t: int | None = None,
    return_argmin: bool = False,
):
    """Best fixed comparator in hindsight for example-based losses (numerical convex solve).

    ``min_{u∈K} Σ_{s≤t} ℓ(⟨u, x_s⟩, y_s) + (σ/2)Σ_{s≤t}‖u − z_s‖²``, where the σ-term equals
    ``(σt/2)‖u‖² − σ⟨Z, u⟩ + (σ/2)Σ_s‖z_s‖²`` with ``Z = Σ_s z_s``.

    Parameters
    ----------
    kind : {"absolute", "hinge", "logistic", "squared"}
    X : array_like (R, t, d)
        Features of the t rounds.
    Y : array_like (R, t)
        Labels / targets.
    domain : Domain
    sigma : float
        Strong-convexity constant σ ≥ 0 of the game.
    z_sum, z_sqsum : array_like (R, d) and (R,), optional
        ``Σ_s z_s`` and ``Σ_s ‖z_s‖²`` (default 0; give both or neither).
    t : int, optional
        Number of rounds behind the σ-term (default ``X.shape[1]``).
    return_argmin : bool
        Also return the minimizer (R, d).

    Returns
    -------
    value : ndarray (R,)
        The minimum, evaluated at the returned feasible minimizer.
    argmin : ndarray (R, d), optional

    Raises
    ------
    ValueError
        For ``(logistic, unconstrained, σ = 0)``: the infimum is approached at infinity on
        (partly) separable data and is not attained in general, so no fixed comparator exists.

    Notes
    -----
    Methods (all values certified; accuracy in the module docstring):

    * ``squared``: :func:`best_quadratic` with ``H = XᵀX + σtI``, ``h = Xᵀy + σZ``; for
      ``(unconstrained, σ = 0)`` the minimum-norm least-squares solution (``lstsq``), whose
      value is always finite. The value is recomputed from the data at the minimizer.
    * ``hinge`` / ``absolute`` with σ = 0 on ``unconstrained`` / ``box`` / ``simplex``: the
      epigraph LP ``min Σξ_s`` s.t. ``ξ_s ≥ ℓ``-pieces, solved by HiGHS (with crossover); the
      minimizer is an LP vertex (not minimum-norm where the solution set is not a point). The
      unconstrained problem is always attained (a polyhedral function bounded below).
    * ``hinge`` / ``absolute`` on the ball with σ = 0: the LP over the enclosing box (exact if its
      vertex lies in the ball), then candidates from the Fenchel dual
      ``max_{β∈[0,1]^t} Σβ − r‖Σβ_s y_s x_s‖`` (hinge; absolute:
      ``max_{β∈[−1,1]^t} Σβy − r‖Σβ_s x_s‖``) by L-BFGS-B with ``u = r·v/‖v‖``, and from Kelley
      cutting planes (tangent cuts added to the LP, whose value stays a lower bound).
    * ``hinge`` / ``absolute`` with σ > 0 (any domain): the smooth Fenchel dual over the box of β
      (``Ψ*`` of the σ-term plus ``ι_K``, gradient ``Π_K((v + σZ)/(σt))``) by L-BFGS-B.
    * In both cases every candidate is *polished*: its kink set (``y⟨x,u⟩ = 1`` / ``⟨x,u⟩ = y``)
      and active bounds are fixed and the remaining isotropic-quadratic (or linear) problem on
      that affine set ∩ K is solved in closed form; a dual point ``β`` is then built from the
      pattern by bounded least squares on the stationarity conditions, and ``P(u) − D(β)``
      certifies the result (SLSQP on the epigraph form is a last resort for small problems).
      The minimizer is unique when σ > 0.
    * ``logistic``: smooth; projected Newton from the centre of ``K``, the quadratic model being
      minimized exactly over ``K`` (trust-region step on the ball, active set on box / simplex),
      certified by the Frank–Wolfe gap or ``‖∇P‖²/(2σt)``; a scipy pass (L-BFGS-B / SLSQP)
      restarts it if the certificate stays above :data:`GAP_RTOL`.

    Examples
    --------
    >>> X = np.array([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]])
    >>> Y = np.array([[1.0, -1.0, 1.0]])
    >>> float(best_examples("hinge", X, Y, Domain("box", 1.0))[0])
    1.0
    >>> round(float(best_examples("squared", X, Y, Domain("ball", 10.0))[0]), 12)
    0.166666666667

    References
    ----------
    Srebro, Lecture 16 (regret = logged loss − offline best in class; the minimum over the ball
    for linear losses is ``−B‖v_m‖₂``).
    """
    if kind not in EXAMPLE_LOSSES:
        raise ValueError(f"kind must be one of {EXAMPLE_LOSSES}, got {kind!r}")
    X = _as_rows(X, "X", 3)
    Y = _as_rows(Y, "Y", 2)
    n_rep, n_t, d = X.shape
    if Y.shape != (n_rep, n_t):
        raise ValueError(f"Y must have shape {(n_rep, n_t)}, got {Y.shape}")
    sigma = float(sigma)
    if not (math.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"sigma must be finite and >= 0, got {sigma!r}")
    t_reg = n_t if t is None else int(t)
    if (z_sum is None) != (z_sqsum is None):
        raise ValueError("give both z_sum and z_sqsum, or neither")
    Z = np.zeros((n_rep, d)) if z_sum is None else _as_rows(z_sum, "z_sum", 2)
    zsq = (
        np.zeros(n_rep)
        if z_sqsum is None
        else np.broadcast_to(np.asarray(z_sqsum, dtype=np.float64), (n_rep,))
    )
    if kind == "logistic" and domain.kind == "unconstrained" and sigma == 0.0:
        raise ValueError(
            "best_examples: (logistic, unconstrained, sigma=0) is ill-posed: on (partly) "
            "separable data the infimum is approached only as ‖u‖ → ∞ and no fixed comparator "
            "attains it; use a bounded domain or sigma > 0"
        )
    value = np.empty(n_rep)
    u = np.zeros((n_rep, d))
    const = 0.5 * sigma * zsq
    if n_t == 0 or (kind == "squared"):
        if n_t == 0:
            res = best_quadratic(
                None, sigma * Z, const, domain, isotropic=sigma * t_reg, return_argmin=True
            )
            return res if return_argmin else res[0]
        if domain.kind == "unconstrained" and sigma == 0.0:
            for i in range(n_rep):
                u[i] = np.linalg.lstsq(X[i], Y[i], rcond=None)[0]
        else:
            H = np.einsum("rti,rtj->rij", X, X) + sigma * t_reg * np.eye(d)
            h = np.einsum("rti,rt->ri", X, Y) + sigma * Z
            c = 0.5 * np.einsum("rt,rt->r", Y, Y) + const
            _, u = best_quadratic(H, h, c, domain, return_argmin=True)
        for i in range(n_rep):
            value[i] = _Problem(kind, X[i], Y[i], sigma, Z[i], float(zsq[i]), t_reg).value(u[i])
        return (value, u) if return_argmin else value

    for i in range(n_rep):
        prob = _Problem(kind, X[i], Y[i], sigma, Z[i], float(zsq[i]), t_reg)
        what = f"{kind} on {domain.kind} (sigma={sigma:g}), replicate {i}"
        if kind == "logistic":
            strong = sigma * t_reg
            ui, fi = _smooth_min(prob.value, prob.grad, prob.hess, d, domain, strong, what)
        else:
            ui, fi = _solve_pl(prob, domain, what)
        u[i] = ui
        value[i] = fi
    return (value, u) if return_argmin else value
