"""Per-round minima ``min_{u∈K} f_t(u)`` and their minimizers, for the dynamic regret.

Closed forms for every loss kind; the minimizer returned in each case is on :func:`per_round_best`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

from arena.oco.domains import Domain
from arena.oco.losses import (
    EXAMPLE_LOSSES,
    RoundData,
    evaluate,
    prediction_loss,
)


def _box_min_norm(x: np.ndarray, p: np.ndarray, r: float) -> np.ndarray:
    """Minimum-norm ``u`` with ``⟨u, x⟩ = p`` and ``‖u‖_∞ ≤ r`` (rows; needs ``|p| ≤ r‖x‖₁``).

    KKT: ``u_i = clip(θx_i, −r, r)``·sign(p) with θ ≥ 0 (water-filling); ``θ`` is found exactly
    by sorting ``|x|`` in decreasing order (the largest coordinates saturate first).
    """
    a = np.abs(x)
    P = np.abs(p)
    a_s = -np.sort(-a, axis=-1)
    d = a.shape[-1]
    csum = np.cumsum(a_s, axis=-1)
    S = np.concatenate([np.zeros((*a.shape[:-1], 1)), csum], axis=-1)  # S_k, k = 0..d
    sq = a_s * a_s
    Qtail = np.concatenate(
        [np.cumsum(sq[..., ::-1], axis=-1)[..., ::-1], np.zeros((*a.shape[:-1], 1))], axis=-1
    )  # Q_k = Σ_{j≥k} a_j², k = 0..d
    with np.errstate(divide="ignore", invalid="ignore"):
        brk = np.where(a_s > 0, r / a_s, np.inf)  # θ at which sorted coordinate k saturates
        G = np.where(a_s > 0, r * S[..., :d] + brk * Qtail[..., :d], np.inf)
    k = np.sum(G < P[..., None], axis=-1)
    Sk = np.take_along_axis(S, k[..., None], axis=-1)[..., 0]
    Qk = np.take_along_axis(Qtail, k[..., None], axis=-1)[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.where(Qk > 0, (P - r * Sk) / Qk, np.inf)
    theta = np.maximum(theta, 0.0)
    with np.errstate(invalid="ignore"):
        mag = np.where(a > 0, np.minimum(theta[..., None] * a, r), 0.0)
    return np.sign(p)[..., None] * np.sign(x) * mag


def _prox(kind: str, q: np.ndarray, kappa: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Return ``argmin_p ℓ(p, y) + (κ/2)(p − q)²`` elementwise (κ > 0; logistic by Newton)."""
    if kind == "squared":
        return (y + kappa * q) / (1.0 + kappa)
    if kind == "absolute":
        r = q - y
        return y + np.sign(r) * np.maximum(np.abs(r) - 1.0 / kappa, 0.0)
    if kind == "hinge":
        m = y * q
        step = q + y / kappa
        out = np.where(m >= 1.0, q, np.where(y * step <= 1.0, step, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            kink = np.where(y != 0, 1.0 / y, 0.0)
        mid = (m < 1.0) & (y * step > 1.0)
        out = np.where(mid, kink, out)
        return np.where(y == 0, q, out)
    # logistic: κ(p − q) − y·expit(−yp) = 0, increasing in p, root between q and q + y/κ
    a = q + np.minimum(y, 0.0) / kappa
    b = q + np.maximum(y, 0.0) / kappa
    p = 0.5 * (a + b)
    for _ in range(100):
        e = expit(-y * p)
        fval = kappa * (p - q) - y * e
        fder = kappa + y * y * e * (1.0 - e)
        a = np.where(fval < 0, p, a)
        b = np.where(fval > 0, p, b)
        newton = p - fval / fder
        inside = (newton > a) & (newton < b)
        p_new = np.where(inside, newton, 0.5 * (a + b))
        done = np.all((p_new == p) | (b - a <= 4e-16 * np.maximum(np.abs(p), 1e-300)))
        p = np.where(fval == 0, p, p_new)
        if done:
            break
    return p


def _per_round_sigma(kind, domain, x, y, sigma, z):
    """Example loss + σ on unconstrained / ball: a 1-d prox along x plus the orthogonal part."""
    nx = np.linalg.norm(x, axis=-1)
    safe = np.where(nx > 0, nx, 1.0)
    xhat = x / safe[..., None]
    zx = np.einsum("...i,...i->...", z, xhat)
    zperp = z - zx[..., None] * xhat
    npp = np.linalg.norm(zperp, axis=-1)
    zphat = zperp / np.where(npp > 0, npp, 1.0)[..., None]

    def coords(mu):
        kappa = (sigma + mu) / (safe * safe)
        q = sigma * zx * safe / (sigma + mu)
        a = _prox(kind, q, kappa, y) / safe
        b = sigma * npp / (sigma + mu)
        return a, b

    a, b = coords(np.zeros_like(nx))
    if domain.kind == "ball":
        r = float(domain.radius)
        out = a * a + b * b > r * r
        if np.any(out):
            lo = np.zeros_like(nx)
            hi = np.full_like(nx, sigma)
            for _ in range(400):  # doubling until the bracket's top is feasible
                ah, bh = coords(hi)
                bad = out & (ah * ah + bh * bh > r * r)
                if not np.any(bad):
                    break
                lo = np.where(bad, hi, lo)
                hi = np.where(bad, 4.0 * hi, hi)
            for _ in range(200):  # bisection on μ to machine precision
                mid = 0.5 * (lo + hi)
                am, bm = coords(mid)
                big = am * am + bm * bm > r * r
                lo = np.where(out & big, mid, lo)
                hi = np.where(out & ~big, mid, hi)
                if np.all((hi - lo)[out] <= 2e-16 * hi[out]):
                    break
            ah, bh = coords(hi)
            a = np.where(out, ah, a)
            b = np.where(out, bh, b)
    u = a[..., None] * xhat + b[..., None] * zphat
    zero = nx == 0
    if np.any(zero):
        u[zero] = domain.project(z[zero])
    return domain.project(u)


def _per_round_multiclass(domain: Domain, x: np.ndarray, y: np.ndarray, k: int):
    """Per-round minimum of the multiclass hinge on ℝ^{kd} or a ball (closed form).

    Only the component of each row along ``x̂ = x/‖x‖`` moves the margins, and the centred,
    symmetric ``W = c·(e_y − 1/k) ⊗ x̂`` maximizes the smallest margin ``c‖x‖`` for its norm
    ``c√((k−1)/k)``; so ``c = 1/‖x‖`` (value 0, the minimum-norm minimizer) if the ball allows it,
    else ``c = r√(k/(k−1))`` (value ``1 − c‖x‖``). ``x = 0``: value 1 at ``W = 0``.
    """
    if domain.kind not in ("unconstrained", "ball"):
        raise NotImplementedError(
            f"per_round_best: the multiclass hinge's per-round minimizer is implemented on "
            f"unconstrained and ball domains, not {domain.kind!r}"
        )
    nx = np.linalg.norm(x, axis=-1)
    safe = np.where(nx > 0, nx, 1.0)
    c = np.where(nx > 0, 1.0 / safe, 0.0)
    value = np.where(nx > 0, 0.0, 1.0)
    if domain.kind == "ball":
        reach = float(domain.radius) * math.sqrt(k / (k - 1.0))
        capped = c > reach
        c = np.where(capped, reach, c)
        value = np.where(capped, np.maximum(1.0 - c * nx, 0.0), value)
    rows = (np.arange(k) == y.astype(np.int64)[..., None]) - 1.0 / k
    u = (c / safe)[..., None, None] * rows[..., :, None] * x[..., None, :]
    return value, u.reshape(*x.shape[:-1], k * x.shape[-1])


def per_round_best(
    kind: str,
    domain: Domain,
    data_x_or_g,
    y=None,
    sigma: float = 0.0,
    z=None,
    n_classes: int | None = None,
):
    """Per-round minimum ``min_{u∈K} f_t(u)`` and a minimizer, for the dynamic regret.

    ``f_t(u) = ⟨g_t, u⟩`` or ``ℓ(⟨u, x_t⟩, y_t)``, plus ``(σ/2)‖u − z_t‖²`` when σ > 0, or the
    multiclass hinge ``max_{r≠y_t}[1 − ⟨u_{y_t} − u_r, x_t⟩]₊`` (then ``n_classes`` is k and the
    minimizer has k·d coordinates).

    Parameters
    ----------
    kind : {"linear", "absolute", "squared", "hinge", "logistic", "multiclass_hinge"}
    domain : Domain
    data_x_or_g : array_like (..., d)
        ``g_t`` (linear) or ``x_t``, e.g. shape (R, n, d) for n rounds.
    y : array_like (...,), optional
        Labels (example-based losses).
    sigma : float
        σ ≥ 0 (0 for the multiclass hinge).
    z : array_like (..., d), optional
        Centres of the σ-term (default 0).
    n_classes : int, optional
        k of the multiclass hinge.

    Returns
    -------
    value : ndarray (...)
        ``min_{u∈K} f_t(u)`` (``−inf`` for unconstrained linear with ``g ≠ 0``).
    argmin : ndarray (..., d) (multiclass: (..., k·d))
        A minimizer (NaN rows where the minimum is not attained).

    Raises
    ------
    NotImplementedError
        For an example-based loss with σ > 0, or the multiclass hinge, on ``box`` or ``simplex``.

    Notes
    -----
    Closed forms (exact up to rounding), and the minimizer returned:

    * linear, σ = 0: :meth:`Domain.min_linear` (0, or the first vertex, when ``g = 0``).
    * linear, σ > 0: ``⟨g,u⟩ + (σ/2)‖u − z‖² = (σ/2)‖u − (z − g/σ)‖² + const``, so
      ``u = Π_K(z − g/σ)`` (unique).
    * example-based, σ = 0: ``min_{p∈[lo,hi]} ℓ(p, y)`` over the prediction range
      ``[lo, hi] = {⟨u, x⟩ : u ∈ K}`` (``[0, 0]`` when ``x = 0``; ``ℝ`` when unconstrained), at
      ``p* = clip(y)`` (absolute, squared), ``clip(1/y)`` (hinge, ``clip(0)`` if ``y = 0``: the
      optimal prediction of smallest ``|p|``), the range end maximizing ``yp`` (logistic; on an
      unconstrained domain with ``y ≠ 0`` the infimum 0 is not attained: value 0, argmin NaN).
      Minimizer: the minimum-norm ``u`` with ``⟨u, x⟩ = p*`` — ``p*x/‖x‖²`` (ball,
      unconstrained), the water-filling ``clip(θx, −r, r)`` (box); on the simplex the point
      ``λe_{i⁺} + (1 − λ)e_{i⁻}`` on the edge joining the first minimizing and first maximizing
      coordinates of ``x`` (barycentre if ``x`` is constant) — a minimizer, not minimum-norm.
    * example-based, σ > 0, unconstrained / ball: writing ``u = a·x̂ + b·ẑ⊥ + (rest)`` the
      problem is ``min ℓ(a‖x‖) + (σ/2)(a − ⟨z,x̂⟩)² + (σ/2)(b − ‖z⊥‖)²`` s.t. ``a² + b² ≤ r²``;
      for a multiplier μ ≥ 0, ``a`` is a proximal step of ℓ (closed form; logistic by safeguarded
      Newton) and ``b = σ‖z⊥‖/(σ + μ)``; μ = 0 if feasible, else the root of ``a² + b² = r²``
      by bisection to machine precision (unique minimizer: strongly convex).
    * multiclass hinge, unconstrained / ball: :func:`_per_round_multiclass` (value 0 at the
      minimum-norm ``(e_y − 1/k) ⊗ x/‖x‖²``, or ``[1 − r‖x‖√(k/(k−1))]₊`` on a small ball).

    Examples
    --------
    >>> x = np.array([[[3.0, 4.0], [0.0, 0.0]]])
    >>> v, u = per_round_best("absolute", Domain("ball", 1.0), x, np.array([[10.0, 1.0]]))
    >>> v.tolist(), u.round(12).tolist()
    ([[5.0, 1.0]], [[[0.6, 0.8], [0.0, 0.0]]])
    >>> per_round_best("linear", Domain("box", 1.0), np.array([[[1.0, -2.0]]]))[0].tolist()
    [[-3.0]]

    References
    ----------
    Zinkevich 2003, Theorem 2 (dynamic regret of OGD against per-round comparators with path
    length ``P_T``).
    """
    a = np.asarray(data_x_or_g, dtype=np.float64)
    sigma = float(sigma)
    if not (math.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"sigma must be finite and >= 0, got {sigma!r}")
    zz = (
        np.zeros_like(a) if z is None else np.broadcast_to(np.asarray(z, dtype=np.float64), a.shape)
    )
    if kind == "linear":
        if sigma == 0.0:
            val, u = domain.min_linear(a)
            return np.asarray(val, dtype=np.float64) + 0.0, u  # no −0.0
        u = domain.project(zz - a / sigma)
        val, _, _, _ = evaluate("linear", sigma, u, RoundData(g=a, z=zz))
        return val, u
    if kind == "multiclass_hinge":
        if y is None or n_classes is None or sigma:
            raise ValueError("per_round_best: the multiclass hinge needs y, n_classes and σ = 0")
        yy = np.broadcast_to(np.asarray(y, dtype=np.float64), a.shape[:-1])
        return _per_round_multiclass(domain, a, yy, int(n_classes))
    if kind not in EXAMPLE_LOSSES:
        raise ValueError(f"kind must be 'linear' or one of {EXAMPLE_LOSSES}, got {kind!r}")
    if y is None:
        raise ValueError(f"per_round_best: kind {kind!r} needs labels y")
    yy = np.broadcast_to(np.asarray(y, dtype=np.float64), a.shape[:-1])
    if sigma > 0.0:
        if domain.kind in ("box", "simplex"):
            raise NotImplementedError(
                f"per_round_best: exact per-round minimizer of an example loss ({kind}) with "
                f"sigma > 0 is implemented for unconstrained and ball domains only, not "
                f"{domain.kind!r}"
            )
        u = _per_round_sigma(kind, domain, a, yy, sigma, zz)
        val, _, _, _ = evaluate(kind, sigma, u, RoundData(x=a, y=yy, z=zz))
        return val, u
    nx2 = np.einsum("...i,...i->...", a, a)
    if domain.kind == "unconstrained":
        lo = np.where(nx2 > 0, -np.inf, 0.0)
        hi = -lo
    else:
        lo, hi = domain.prediction_range(a)
    if kind in ("absolute", "squared"):
        p = np.clip(yy, lo, hi)
    elif kind == "hinge":
        with np.errstate(divide="ignore"):
            target = np.where(yy != 0, 1.0 / np.where(yy != 0, yy, 1.0), 0.0)
        p = np.clip(target, lo, hi)
    else:
        p = np.where(yy > 0, hi, np.where(yy < 0, lo, np.clip(0.0, lo, hi)))
    val = prediction_loss(kind, p, yy)[0]
    finite = np.isfinite(p)
    pf = np.where(finite, p, 0.0)
    if domain.kind in ("ball", "unconstrained"):
        u = np.where(
            nx2[..., None] > 0, pf[..., None] * a / np.where(nx2 > 0, nx2, 1.0)[..., None], 0.0
        )
    elif domain.kind == "box":
        u = _box_min_norm(a, pf, float(domain.radius))
    else:
        dd = a.shape[-1]
        imin = np.argmin(a, axis=-1)[..., None]
        imax = np.argmax(a, axis=-1)[..., None]
        xmin = np.take_along_axis(a, imin, axis=-1)[..., 0]
        xmax = np.take_along_axis(a, imax, axis=-1)[..., 0]
        width = xmax - xmin
        lam = np.where(width > 0, (pf - xmin) / np.where(width > 0, width, 1.0), 1.0)
        lam = np.clip(lam, 0.0, 1.0)
        u = np.zeros_like(a)
        np.put_along_axis(u, imin, (1.0 - lam)[..., None], axis=-1)
        np.put_along_axis(u, imax, np.take_along_axis(u, imax, axis=-1) + lam[..., None], axis=-1)
        u = np.where((width > 0)[..., None], u, 1.0 / dd)
    u = np.where(finite[..., None], u, np.nan)
    return val, u
