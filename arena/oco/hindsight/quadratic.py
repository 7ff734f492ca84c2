"""Best fixed comparator for quadratic losses: ``min_{u∈K} ½uᵀHu − hᵀu + c`` (H ⪰ 0).

The squared loss from streamed sufficient statistics and the σ-regularized linear losses; the
methods by domain are on :func:`best_quadratic`.
"""

from __future__ import annotations

import numpy as np

from arena.oco.domains import Domain
from arena.oco.hindsight.certificates import _as_rows
from arena.oco.hindsight.solvers import _pinv_solve, _psd_eig, _smooth_min, _trust_region


def _qp_value(H, h, c, u):
    return 0.5 * float(u @ H @ u) - float(h @ u) + float(c)


def best_quadratic(H, h, c, domain: Domain, *, isotropic=None, return_argmin: bool = False):
    """Best fixed comparator for quadratic losses: ``min_{u∈K} ½uᵀHu − hᵀu + c`` (H ⪰ 0).

    Covers the squared loss (``H = Σ_s x_sx_sᵀ + σtI``, ``h = Σ_s y_sx_s + σΣ_s z_s``,
    ``c = ½Σ_s y_s² + (σ/2)Σ_s‖z_s‖²``) and σ-regularized linear losses
    (``isotropic = σt``, ``h = σΣ_s z_s − Σ_s g_s``, ``c = (σ/2)Σ_s‖z_s‖²``).

    Parameters
    ----------
    H : array_like (R, d, d) or None
        Positive semidefinite matrices (symmetrized; ``ValueError`` if an eigenvalue is below
        ``−1e-9·λ_max``). Ignored (may be None) when ``isotropic`` is given.
    h : array_like (R, d)
    c : float or array_like (R,)
    domain : Domain
    isotropic : array_like (R,) or float, optional
        ``H = s·I`` with ``s ≥ 0``.
    return_argmin : bool
        Also return a minimizer (R, d).

    Returns
    -------
    value : ndarray (R,)
        The minimum (``−inf`` when unbounded below: unconstrained and ``h ∉ range(H)``, or
        ``s = 0`` and ``h ≠ 0``).
    argmin : ndarray (R, d), optional
        A minimizer; where the minimum is −inf, the minimum-norm least-squares point (unconstrained
        ``H``) or 0 (``s = 0``).

    Notes
    -----
    Methods, by case:

    * ``isotropic`` (any domain): ``½s‖u‖² − hᵀu = (s/2)‖u − h/s‖² − ‖h‖²/(2s)``, so the
      minimizer is the Euclidean projection of ``h/s`` onto ``K`` (exact); ``s = 0`` is
      :func:`best_linear` of ``−h``.
    * ``unconstrained``: ``H = QΛQᵀ``; the minimum-norm minimizer ``u = QΛ⁺Qᵀh`` with value
      ``c − ½hᵀH⁺h``, finite iff ``h ∈ range(H)`` (tolerance :data:`RANGE_RTOL`).
    * ``ball``: the trust-region subproblem, solved exactly (Moré & Sorensen 1983): if the
      minimum-norm unconstrained minimizer has norm ≤ r it is returned (this is the convex "hard
      case", ``h ⊥ null(H)``, where the minimizer is not unique); otherwise
      ``u = (H + μI)⁻¹h`` on the sphere with ``μ > 0`` the bracketed Brent root of
      ``1/r − 1/‖(H + μI)⁻¹h‖``.
    * ``box`` / ``simplex``: a primal active-set method (Nocedal & Wright 2006, Alg. 16.3; singular
      H handled by zero-curvature rays), exact in finitely many steps; the value is certified by
      the Frank–Wolfe gap (warning above :data:`GAP_RTOL`; measured ≤ 4e-15 relative). The
      minimizer is a vertex-like point of the optimal face, not necessarily minimum-norm.

    The value is the objective evaluated at the returned feasible minimizer.

    Examples
    --------
    >>> H = np.array([[[2.0, 0.0], [0.0, 0.0]]])        # rank deficient
    >>> best_quadratic(H, np.array([[2.0, 0.0]]), 0.0, Domain("unconstrained"))
    array([-1.])
    >>> best_quadratic(H, np.array([[2.0, 0.0]]), 0.0, Domain("ball", 0.5))
    array([-0.75])
    >>> best_quadratic(None, np.array([[3.0, 0.0]]), 1.0, Domain("box", 1.0), isotropic=1.0)
    array([-1.5])

    References
    ----------
    Srebro, Lecture 16 (regret against the best in class, computed offline); Moré & Sorensen
    (1983), SIAM J. Sci. Stat. Comput. 4(3).
    """
    h = _as_rows(h, "h", 2)
    n_rep, d = h.shape
    c = np.broadcast_to(np.asarray(c, dtype=np.float64), (n_rep,))
    value = np.empty(n_rep)
    u = np.zeros((n_rep, d))
    if isotropic is not None:
        s = np.broadcast_to(np.asarray(isotropic, dtype=np.float64), (n_rep,))
        if np.any(s < 0) or not np.all(np.isfinite(s)):
            raise ValueError("isotropic must be finite and >= 0")
        pos = s > 0
        if np.any(pos):
            up = domain.project(h[pos] / s[pos, None])
            u[pos] = up
            value[pos] = (
                0.5 * s[pos] * np.einsum("ij,ij->i", up, up)
                - np.einsum("ij,ij->i", h[pos], up)
                + c[pos]
            )
        if np.any(~pos):
            v0, u0 = domain.min_linear(-h[~pos])
            value[~pos] = v0 + c[~pos]
            u[~pos] = u0
        return (value, u) if return_argmin else value

    H = _as_rows(H, "H", 3)
    if H.shape != (n_rep, d, d):
        raise ValueError(f"H must have shape {(n_rep, d, d)}, got {H.shape}")
    for i in range(n_rep):
        Hi = 0.5 * (H[i] + H[i].T)
        if domain.kind in ("unconstrained", "ball"):
            lam, Q = _psd_eig(Hi)
            b = Q.T @ h[i]
            if domain.kind == "unconstrained":
                ui, finite = _pinv_solve(lam, Q, b)
                u[i] = ui
                value[i] = _qp_value(Hi, h[i], c[i], ui) if finite else -np.inf
            else:
                ui = domain.project(_trust_region(lam, Q, b, float(domain.radius)))
                u[i] = ui
                value[i] = _qp_value(Hi, h[i], c[i], ui)
        else:
            _psd_eig(Hi)  # validation only
            hi_, ci = h[i], float(c[i])

            def fun(x, Hi=Hi, hi_=hi_, ci=ci):
                return 0.5 * float(x @ Hi @ x) - float(hi_ @ x) + ci

            def grad(x, Hi=Hi, hi_=hi_):
                return Hi @ x - hi_

            def hess(x, Hi=Hi):
                return Hi

            ui, fi = _smooth_min(fun, grad, hess, d, domain, 0.0, "quadratic")
            u[i] = ui
            value[i] = fi
    return (value, u) if return_argmin else value
