"""The accuracy contract of every comparator in hindsight: tolerances and optimality certificates.

The tolerances below decide when an eigenvalue is zero, when ``h`` is in the range of ``H`` and when
the ball's hard case applies; :func:`_fw_gap` bounds ``f(u) − min_K f`` (the Frank–Wolfe gap, or
``‖∇f‖²/(2σt)`` unconstrained) and :func:`_warn_gap` warns when a certificate exceeds
:data:`GAP_RTOL` times the problem's scale (accuracy: :mod:`arena.oco.hindsight`). Also the
shared inputs: the centre of ``K`` every solver starts from, the batched-array check and the scipy
options.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from arena.oco.domains import Domain

EIG_RCOND = 1e-12
"""Eigenvalues ``λ ≤ EIG_RCOND·λ_max`` of ``H`` are treated as exactly 0 (eigh's rounding error is
~1e-16·λ_max; treating a true 1e-12·λ_max as 0 moves the ball's value by ≤ ½·1e-12·λ_max·r²)."""


RANGE_RTOL = 1e-8
"""Unconstrained quadratics: ``h`` counts as in ``range(H)`` (finite minimum) when its component in
the null space of ``H`` is ≤ ``RANGE_RTOL·‖h‖`` (rounding of eigenvectors is ~1e-16·cond(H))."""


HARD_CASE_RTOL = 1e-12
"""Ball quadratics: a null-space component of ``h`` below ``HARD_CASE_RTOL·‖h‖`` is set to 0, so
the hard case returns the minimum-norm minimizer (value change ≤ 1e-12·‖h‖·r)."""


GAP_RTOL = 1e-9
"""Relative optimality certificate above which the numerical solvers warn (see module docstring)."""


_LBFGS = {"maxiter": 20000, "maxfun": 40000, "ftol": 1e-15, "gtol": 1e-13, "maxcor": 30}


_SLSQP = {"maxiter": 2000, "ftol": 1e-15}


def _center(domain: Domain, d: int) -> np.ndarray:
    """Return the minimum-norm point of the domain (0, or the simplex's barycentre)."""
    if domain.kind == "simplex":
        return np.full(d, 1.0 / d)
    return np.zeros(d)


def _fw_gap(g: np.ndarray, u: np.ndarray, domain: Domain, strong: float) -> float:
    """Return an upper bound on ``f(u) − min_K f`` from the gradient ``g`` at ``u``.

    Bounded domains: the Frank–Wolfe gap ``⟨g, u⟩ − min_{s∈K} ⟨g, s⟩``; unconstrained with
    ``strong > 0`` (strong convexity modulus): ``‖g‖²/(2·strong)``.
    """
    if domain.kind == "unconstrained":
        gg = float(g @ g)
        if gg == 0.0:
            return 0.0
        return gg / (2.0 * strong) if strong > 0 else math.inf
    lin, _ = domain.min_linear(g[None, :])
    return max(float(g @ u) - float(lin[0]), 0.0)


def _warn_gap(what: str, gap: float, scale: float) -> None:
    if not gap <= GAP_RTOL * scale:
        warnings.warn(
            f"hindsight solver for {what}: optimality certificate {gap:.3e} exceeds "
            f"{GAP_RTOL:g} × scale {scale:.3e}; the reported value may be too high by that much",
            RuntimeWarning,
            stacklevel=3,
        )


def _as_rows(a, name: str, ndim: int) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    if a.ndim != ndim:
        raise ValueError(
            f"{name} must have {ndim} dimensions (leading replicate axis), got {a.shape}"
        )
    return a
