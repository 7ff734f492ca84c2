"""Online label ranking by dual ascent: updates I, II and III with the Euclidean or the entropic
regularizer (Shalev-Shwartz 2007, Ch. 8 and §7.3)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.errors import ConfigError
from arena.oco.components import LABEL_RANKING, OCOPlayer, feature_dim
from arena.oco.losses import LABEL_RANKING_LOSSES, Feedback, ranking_pair, relevant_mask
from arena.params import POSITIVE, Interval, OneOf
from arena.players._projections import project_simplex
from arena.spec import GameSpec, PlayerTags

VARIANTS = ("I", "II", "III")
REGULARIZERS = ("euclidean", "entropic")
SOLVERS = ("auto", "knot_scan", "pdip", "fig7_5")
PDIP_TOL = 1e-10
"""PDIP's stopping tolerance on the surrogate gap η and on the primal and dual residuals."""
PDIP_CONTRACTION = 0.1
"""The centring parameter σ of the PDIP's Newton steps (μ = σ·η/n; §7.3.2 sets it to 0.1)."""
BISECTIONS = 60
"""Most steps of the entropic update II's root finding (each at least halves a bisected bracket)."""


def link(theta: np.ndarray, c: float, regularizer: str) -> np.ndarray:
    """Return ``w_r = ∇f*(θ_r/c)`` for every row r of ``θ`` (..., k, d).

    Euclidean ``f = ½‖w‖²``: ``θ_r/c``; entropic ``f = log d + Σ_i w_i log w_i`` on the simplex:
    ``softmax(θ_r/c)`` (Shalev-Shwartz 2007, Eqs. (8.2), (8.3) and §2's table of links).

    Examples
    --------
    >>> link(np.array([[2.0, 0.0]]), 2.0, "euclidean").tolist()
    [[1.0, 0.0]]
    >>> link(np.zeros((1, 4)), 1.0, "entropic").tolist()
    [[0.25, 0.25, 0.25, 0.25]]
    """
    if regularizer == "euclidean":
        return theta / c
    a = theta / c
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def euclidean_step(margin_acc: np.ndarray, sq_norm: np.ndarray, c: float, gamma: float):
    """Return update II's Euclidean step ``a = clip((cγ − ⟨θ_{r'} − θ_{s'}, x⟩)/(2‖x‖²), 0, 1)``.

    ``margin_acc`` is ``⟨θ_{r'} − θ_{s'}, x⟩``: the maximizer over ``a ∈ [0, 1]`` of the dual gain
    ``γa − (a⟨θ_{r'} − θ_{s'}, x⟩ + a²‖x‖²)/c`` (erratum E8's range and gain; 0 at x = 0).

    Examples
    --------
    >>> euclidean_step(np.array([0.0, 5.0]), np.array([1.0, 1.0]), 1.0, 1.0).tolist()
    [0.5, 0.0]
    """
    safe = np.where(sq_norm > 0.0, sq_norm, 1.0)
    return np.where(sq_norm > 0.0, np.clip((c * gamma - margin_acc) / (2.0 * safe), 0.0, 1.0), 0.0)


def entropic_step(th_r: np.ndarray, th_s: np.ndarray, x: np.ndarray, c: float, gamma: float):
    """Return update II's entropic step: the maximizer over ``a ∈ [0, 1]`` of the dual gain.

    ``D(a) = γa − c·lse((θ_{r'} + a x)/c) − c·lse((θ_{s'} − a x)/c)`` (+ const) is concave, with
    ``D'(a) = γ − ⟨softmax((θ_{r'} + a x)/c), x⟩ + ⟨softmax((θ_{s'} − a x)/c), x⟩`` decreasing:
    0 if ``D'(0) ≤ 0``, 1 if ``D'(1) ≥ 0``, else the root of D' by Newton's method on D'
    (``D''(a) = −(Var_{p↑}(x) + Var_{p↓}(x))/c``) safeguarded by bisection, at most
    :data:`BISECTIONS` steps.
    Rows are replicates: ``th_r``, ``th_s``, ``x`` (R, d).

    Examples
    --------
    >>> a = entropic_step(np.zeros((1, 2)), np.zeros((1, 2)), np.array([[1.0, 0.0]]), 1.0, 0.1)
    >>> 0.0 < float(a[0]) < 1.0
    True
    """

    def slope(a):
        up = link(th_r + a[:, None] * x, c, "entropic")
        down = link(th_s - a[:, None] * x, c, "entropic")
        mean_up, mean_down = np.einsum("rd,rd->r", up, x), np.einsum("rd,rd->r", down, x)
        var = np.einsum("rd,rd->r", up, x * x) - mean_up**2
        var += np.einsum("rd,rd->r", down, x * x) - mean_down**2
        return gamma - mean_up + mean_down, np.maximum(var, 0.0) / c  # D'(a), −D''(a)

    n = x.shape[0]
    lo, hi = np.zeros(n), np.ones(n)
    at0, at1 = slope(lo)[0], slope(hi)[0]
    a = np.where(at0 <= 0.0, 0.0, np.where(at1 >= 0.0, 1.0, 0.5))
    live = (at0 > 0.0) & (at1 < 0.0)
    # Newton on D' kept inside a shrinking bracket around the root, bisecting where Newton
    # leaves it; a replicate stops once its step is below 1e-14
    for _ in range(BISECTIONS):
        if not live.any():
            break
        g, h = slope(a)
        pos = g > 0.0
        lo, hi = np.where(pos, a, lo), np.where(pos, hi, a)
        newton = a + g / np.where(h > 0.0, h, np.inf)
        inside = (h > 0.0) & (newton > lo) & (newton < hi)
        step = np.where(live, np.where(inside, newton, 0.5 * (lo + hi)), a)
        live &= np.abs(step - a) > 1e-14
        a = step
    return a


def knot_scan_z(mu: np.ndarray, nu: np.ndarray) -> float:
    """Return ``z* = argmin_{z∈[0,1]} g(z; μ) + g(z; ν)`` by the knot scan of §7.3.1 (corrected).

    ``g(z; μ)`` is half the squared distance from μ to the z-scaled simplex (7.21): convex,
    piecewise quadratic with knots ``z_i = Σ_{r≤i} μ_r − iμ_i`` (μ sorted descending, Lemma 10),
    with slope ``−θ_μ(z)``, where ``θ_μ(z) = (Σ_{r≤R} μ_r − z)/R`` on a piece with R active
    coordinates. On the piece starting at knot z' (R, S active) the stationary point is
    ``O(z') = (S·Σ_{r≤R} μ_r + R·Σ_{s≤S} ν_s)/(R + S)``; it is accepted inside the piece; z = 0
    when ``−μ_1 − ν_1 ≥ 0``, and z = 1 when no piece's point is at most 1.

    Examples
    --------
    >>> knot_scan_z(np.array([0.3]), np.array([0.3]))       # O = (0.3 + 0.3)/2
    0.3
    >>> knot_scan_z(np.array([-1.0, 0.5]), np.array([-2.0]))  # −μ_1 − ν_1 ≥ 0
    0.0
    >>> knot_scan_z(np.array([5.0]), np.array([5.0]))
    1.0
    """
    m = np.sort(np.asarray(mu, dtype=np.float64))[::-1]
    n = np.sort(np.asarray(nu, dtype=np.float64))[::-1]
    if -m[0] - n[0] >= 0.0:
        return 0.0
    cm, cn = np.cumsum(m), np.cumsum(n)
    # the knots are ≥ 0 and nondecreasing; round-off on equal entries must not break that
    knots_m = np.maximum.accumulate(np.maximum(cm - np.arange(1, m.size + 1) * m, 0.0))
    knots_n = np.maximum.accumulate(np.maximum(cn - np.arange(1, n.size + 1) * n, 0.0))
    starts = np.unique(np.concatenate([knots_m, knots_n]))
    for i, z0 in enumerate(starts):
        big_r = int(np.searchsorted(knots_m, z0, side="right"))
        big_s = int(np.searchsorted(knots_n, z0, side="right"))
        point = (big_s * cm[big_r - 1] + big_r * cn[big_s - 1]) / (big_r + big_s)
        z1 = starts[i + 1] if i + 1 < starts.size else np.inf
        if z0 <= point <= z1:
            return float(min(max(point, 0.0), 1.0))
    return 1.0


def optimal_duals(
    scores: np.ndarray, mask: np.ndarray, sq_norm: float, c: float, gamma: float
) -> np.ndarray:
    """Return update III's dual weights β (k,) of one round (Euclidean, §7.3.1 corrected).

    ``μ_r = c(γ/2 − ρ_r)/‖x‖²`` (r ∈ Y), ``ν_s = c(γ/2 + ρ_s)/‖x‖²`` (s ∉ Y) with the scores
    ``ρ = ⟨w_r, x⟩`` (erratum E8), ``z*`` by :func:`knot_scan_z`, then ``β_Y = Π_{zΔ}(μ)``,
    ``β_Ȳ = Π_{zΔ}(ν)``; the update is ``w_r += β_r x/c`` (r ∈ Y), ``w_s −= β_s x/c``. No pair
    (Y empty or full) or x = 0: β = 0.

    Examples
    --------
    >>> optimal_duals(np.array([0.0, 0.0]), np.array([True, False]), 1.0, 1.0, 1.0).tolist()
    [0.5, 0.5]
    """
    beta = np.zeros(scores.shape[-1])
    if sq_norm <= 0.0 or mask.all() or not mask.any():
        return beta
    mu = c * (0.5 * gamma - scores[mask]) / sq_norm
    nu = c * (0.5 * gamma + scores[~mask]) / sq_norm
    z = knot_scan_z(mu, nu)
    if z > 0.0:
        beta[mask] = project_simplex(mu, z)
        beta[~mask] = project_simplex(nu, z)
    return beta


def max_hinge_inner(
    scores: np.ndarray, mask: np.ndarray, x: np.ndarray, c: float, gamma: float, steps: int
) -> np.ndarray:
    """Return Fig 7.5's approximate aggressive step z (R, k, d) for the max-pair hinge, batched.

    The OPT step of a max-of-hinge loss ``max_i [b_i − ⟨w, a_i⟩]₊`` (7.33) from ``w_t`` is
    ``w_t + z*``, ``z* = argmin_z φ(z)``, ``φ(z) = (c/2)‖z‖² + max_i [γ_i − ⟨a_i, z⟩]₊`` with
    ``γ_i = b_i − ⟨a_i, w_t⟩`` (Shalev-Shwartz 2007, §7.4). For label ranking the
    hinges are the pairs ``(r, s) ∈ Y × Ȳ``: ``a_{rs} = φ(x, r) − φ(x, s)`` and
    ``γ_{rs} = γ − (ρ_r − ρ_s)``. Fig 7.5 (Pegasos on φ): ``z_1 = 0``,
    ``U = √((2/c) max_i [γ_i]₊)``; for τ = 1..T: i the pair of largest ``γ_i − ⟨z_τ, a_i⟩`` (first
    on ties), ``v = c z_τ − a_i`` if that is positive else ``c z_τ``, ``z' = z_τ − v/(cτ)``,
    ``z_{τ+1} = min{1, U/‖z'‖} z'``; the output is ``(1/T) Σ_{τ≤T} z_τ``. Guarantee (§7.4):
    ``φ(z̄) ≤ φ(z*) + (√(2c max_i [γ_i]₊) + max_i ‖a_i‖)² (1 + ln T)/(2cT)``.

    Parameters
    ----------
    scores : ndarray (R, k)
        ``ρ_r = ⟨w_r, x⟩`` at the current weights.
    mask : ndarray of bool (R, k)
        The relevant sets (rows without a pair get z = 0).
    x : ndarray (R, d)
    c, gamma : float
    steps : int
        T, the inner iterations.

    Examples
    --------
    >>> z = max_hinge_inner(np.zeros((1, 2)), np.array([[True, False]]), np.array([[1.0]]),
    ...                     1.0, 1.0, 2000)
    >>> np.round(z[0, :, 0], 2).tolist()          # z* = (½, −½): the exact prox step
    [0.5, -0.5]
    """
    n_rep, k = scores.shape
    d = x.shape[-1]
    has_pair = mask.any(axis=1) & (~mask).any(axis=1)
    margin0 = np.where(has_pair, ranking_pair(scores, mask)[0], np.inf)
    top = np.where(has_pair, np.maximum(gamma - margin0, 0.0), 0.0)  # max_i [γ_i]₊
    radius = np.sqrt(2.0 / c * top)
    z = np.zeros((n_rep, k, d))
    total = np.zeros((n_rep, k, d))
    rows = np.arange(n_rep)
    for tau in range(1, steps + 1):
        total += z
        moved = scores + np.einsum("rkd,rd->rk", z, x)
        margin, r1, s1, _ = ranking_pair(moved, mask)
        active = has_pair & (gamma - margin > 0.0)  # γ_i > ⟨z_τ, a_i⟩ for the chosen pair
        v = c * z
        v[rows, r1] -= np.where(active, 1.0, 0.0)[:, None] * x
        v[rows, s1] += np.where(active, 1.0, 0.0)[:, None] * x
        z = z - v / (c * tau)
        norm = np.sqrt((z * z).sum(axis=(1, 2)))
        scale = np.where(norm > radius, radius / np.where(norm > 0.0, norm, 1.0), 1.0)
        z = z * scale[:, None, None]
    return np.where(has_pair[:, None, None], total / steps, 0.0)


def pdip(grad_hess, A: np.ndarray, b: np.ndarray, alpha: np.ndarray, max_iter: int = 100):
    """Return ``(α, iterations)``: ``argmin Σ_r f_r(α_r)`` s.t. ``Aα = b``, ``α ≥ 0`` (§7.3.2).

    The primal–dual interior point method of Shalev-Shwartz 2007, §7.3.2 ((7.24)–(7.32)) for
    separable convex ``f_r`` with the constraints of (7.24) (here ``p_r = −1``, ``q_r = 0``):
    with multipliers ν (equalities) and λ ≥ 0, the surrogate gap ``η = Σ λ_r α_r`` and
    ``μ = 0.1·η/n``, each Newton step on the perturbed KKT conditions
    ``∇f + Aᵀν − λ = 0``, ``λ_r α_r = μ``, ``Aα = b`` eliminates Δλ and Δα, leaving the
    ``m × m`` system ``(A D⁻¹ Aᵀ) Δν = r_p − A D⁻¹ r̃`` with ``D = diag(f''_r + λ_r/α_r)`` (m = 2
    here: (7.31)–(7.32)); the step keeps α, λ > 0 (a fraction 0.99 of the longest). It stops when
    η and the residuals are below :data:`PDIP_TOL`.

    Parameters
    ----------
    grad_hess : callable
        ``α ↦ (f'_r(α_r), f''_r(α_r))``, two arrays (n,), ``f'' ≥ 0``.
    A : ndarray (m, n)
    b : ndarray (m,)
    alpha : ndarray (n,)
        A start with ``α > 0`` (``Aα = b`` need not hold).

    Examples
    --------
    >>> gh = lambda a: (a - np.array([2.0, 0.5]), np.ones(2))    # ½‖α − (2, ½)‖², α₁ + α₂ = 1
    >>> a, _ = pdip(gh, np.ones((1, 2)), np.ones(1), np.full(2, 0.5))
    >>> np.round(a, 8).tolist()
    [1.0, 0.0]
    """
    alpha = np.array(alpha, dtype=np.float64)
    n = alpha.size
    lam = np.ones(n)
    nu = np.zeros(A.shape[0])
    for it in range(1, max_iter + 1):
        g, h = grad_hess(alpha)
        r_dual = g + A.T @ nu - lam
        r_prim = A @ alpha - b
        eta = float(lam @ alpha)
        if eta < PDIP_TOL and np.abs(r_dual).max() < PDIP_TOL and np.abs(r_prim).max() < PDIP_TOL:
            return alpha, it - 1
        mu = PDIP_CONTRACTION * eta / n
        r_tilde = r_dual + (lam * alpha - mu) / alpha  # r_d + r_c/α
        dinv = 1.0 / (h + lam / alpha)
        schur = (A * dinv) @ A.T
        d_nu = np.linalg.solve(schur, r_prim - (A * dinv) @ r_tilde)
        d_alpha = -dinv * (r_tilde + A.T @ d_nu)
        d_lam = -(lam * alpha - mu + lam * d_alpha) / alpha
        step = 1.0
        for v, dv in ((alpha, d_alpha), (lam, d_lam)):
            shrink = dv < 0.0
            if shrink.any():
                step = min(step, 0.99 * float(np.min(-v[shrink] / dv[shrink])))
        alpha, lam, nu = alpha + step * d_alpha, lam + step * d_lam, nu + step * d_nu
    return alpha, max_iter


def pdip_duals(
    theta: np.ndarray, mask: np.ndarray, x: np.ndarray, c: float, gamma: float, regularizer: str
) -> tuple[np.ndarray, int]:
    """Return update III's dual weights β (k,) of one round by :func:`pdip`, and its iterations.

    Minimizes ``Σ_r c·f*((θ_r + σ_r β_r x)/c) − γ Σ_{r∈Y} β_r`` (σ_r = +1 on Y, −1 off it) over
    ``β ≥ 0``, ``Σ_Y β = Σ_Ȳ β ≤ 1`` (a slack ξ ≥ 0 makes the second an equality: the two rows
    of (7.24)); ``f*`` is ``½‖·‖²`` (Euclidean: the knot scan's problem) or log-sum-exp
    (entropic); ``θ_r += σ_r β_r x`` is then the OPT update (3.12). No pair: β = 0.

    Examples
    --------
    >>> beta, _ = pdip_duals(np.zeros((2, 1)), np.array([True, False]), np.array([1.0]),
    ...                      1.0, 1.0, "euclidean")
    >>> np.round(beta, 8).tolist()                       # the knot scan's [0.5, 0.5]
    [0.5, 0.5]
    """
    k = mask.size
    if mask.all() or not mask.any() or not np.any(x):
        return np.zeros(k), 0
    sign = np.where(mask, 1.0, -1.0)
    on_y = mask.astype(np.float64)

    def grad_hess(alpha):
        beta = alpha[:k]
        moved = theta + (sign * beta)[:, None] * x[None, :]
        if regularizer == "euclidean":
            g = sign * (moved @ x) / c - gamma * on_y
            h = np.full(k, float(x @ x) / c)
        else:
            p = link(moved, c, "entropic")
            mean = p @ x
            g = sign * mean - gamma * on_y
            h = np.maximum(p @ (x * x) - mean**2, 0.0) / c
        return np.append(g, 0.0), np.append(h, 0.0)  # the slack ξ costs nothing

    A = np.zeros((2, k + 1))
    A[0, :k] = sign  # Σ_Y β − Σ_Ȳ β = 0
    A[1, :k], A[1, k] = on_y, 1.0  # Σ_Y β + ξ = 1
    start = np.append(np.where(mask, 0.5 / mask.sum(), 0.5 / (~mask).sum()), 0.5)
    alpha, iterations = pdip(grad_hess, A, np.array([0.0, 1.0]), start)
    return np.maximum(alpha[:k], 0.0), iterations


class LabelRanking(OCOPlayer):
    """Online label ranking by dual ascent: updates I, II or III, Euclidean or entropic.

    The learner keeps one accumulator ``θ_r ∈ ℝ^d`` per label (``θ = 0`` at the start) and plays
    ``w_r = ∇f*(θ_r/c)`` (:func:`link`: ``θ_r/c``, or ``softmax(θ_r/c)`` for the entropic
    regularizer). Round t shows ``x_t`` and the relevant set ``Y_t``; with the pair (8.4)
    ``(r', s') = argmin_{r∈Y, s∉Y} ⟨w_r − w_s, x_t⟩`` (:func:`~arena.oco.losses.ranking_pair`)
    and the loss (8.1) ``g_t(w̄) = max_{r∈Y,s∉Y}[γ − ⟨w_r − w_s, x_t⟩]₊``:

    * ``variant="I"`` (conservative): on a ranking mistake (``⟨w_{r'} − w_{s'}, x⟩ ≤ 0``)
      ``θ_{r'} += x_t``, ``θ_{s'} −= x_t`` (the label-ranking Perceptron; EG when entropic);
    * ``variant="II"`` (aggressive along the sub-gradient): ``θ_{r'} += a x_t``,
      ``θ_{s'} −= a x_t`` every round, the scalar ``a ∈ [0, 1]`` maximizing the dual gain
      (erratum E8's range; :func:`euclidean_step`'s closed form, :func:`entropic_step`'s
      bisection);
    * ``variant="III"`` (optimal dual ascent (3.12)): Euclidean, the prox step
      ``argmin_{w̄} (c/2)Σ_r‖w_r − w_r^t‖² + g_t(w̄)``, solved exactly by the corrected knot scan
      of §7.3.1 (:func:`optimal_duals`); any regularizer, by the interior point of §7.3.2
      (:func:`pdip_duals`).

    Parameters
    ----------
    variant : {"I", "II", "III"}
        The dual-ascent update.
    regularizer : {"euclidean", "entropic"}
        ``Σ_r ½‖w_r‖²`` (8.2) or ``Σ_r (log d + Σ_i w_{r,i} log w_{r,i})``, each w_r on the simplex
        (8.3).
    c : float
        The regularization weight c > 0.
    gamma : float
        The margin γ > 0 of the loss (8.1) the updates use (the arena's loss has γ = 1).
    solver : {"auto", "knot_scan", "pdip", "fig7_5"}
        Update III's solver: the exact knot scan (Euclidean; ``"auto"``'s choice there), the
        primal–dual interior point of §7.3.2 (:func:`pdip_duals`, any regularizer; ``"auto"``'s
        choice for the entropic one), or the aggressive max-of-hinge update of §7.4 computed by
        Fig 7.5's inner Pegasos solver (:func:`max_hinge_inner`, Euclidean), within its stated
        guarantee of the exact step.
    inner_steps : int
        Fig 7.5's T (``solver="fig7_5"``).

    Notes
    -----
    The mistake bounds are those of the generic dual-ascent framework through Lemma 18
    (Shalev-Shwartz 2007, Ch. 8): no separate theorem is stated for label ranking, so nothing is
    declared by :meth:`bounds`. Each update costs O(k·d); update III adds O(k log k) (knot scan),
    O(k·d) per interior-point iteration (:attr:`pdip_iterations` records the most one update
    needed), or O(T·k·d) (Fig 7.5, T inner steps).

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("label_ranking", 4, 1, dim=4, domain=Domain(),
    ...                 loss="label_ranking_hinge", n_classes=2)
    >>> p = LabelRanking("III", c=1.0)
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> rd = RoundData(x=np.array([[1.0, 0.0]]), y=np.array([1.0]))   # Y = {0}
    >>> p.update(feedback("label_ranking_hinge", 0.0, p.predict(rd.x), rd))
    >>> p.predict().tolist()             # the prox step: margin ⟨w_0 − w_1, x⟩ = γ = 1
    [[0.5, 0.0, -0.5, 0.0]]

    References
    ----------
    Shalev-Shwartz 2007, Ch. 8 (Eqs. (8.1)–(8.4), updates I/II/III) and §7.3.1 (the exact
    Euclidean update, with the correction of erratum E8: μ and ν both carry γ/2); Crammer &
    Singer (2003, category ranking) (the label-ranking Perceptron, update I, Euclidean).
    """

    tags = PlayerTags(
        protocols=frozenset({LABEL_RANKING}),
        randomized=False,
        domains=frozenset({"unconstrained"}),
        losses=frozenset(LABEL_RANKING_LOSSES),
    )
    parameter_constraints: ClassVar = {
        "variant": [OneOf(*VARIANTS)],
        "regularizer": [OneOf(*REGULARIZERS)],
        "c": [POSITIVE],
        "gamma": [POSITIVE],
        "solver": [OneOf(*SOLVERS)],
        "inner_steps": [Interval(1, None, integer=True)],
    }

    def __init__(
        self,
        variant: str = "II",
        regularizer: str = "euclidean",
        c: float = 1.0,
        gamma: float = 1.0,
        solver: str = "auto",
        inner_steps: int = 200,
    ):
        self.variant = variant
        self.regularizer = regularizer
        self.c = c
        self.gamma = gamma
        self.solver = solver
        self.inner_steps = inner_steps

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        if self.regularizer != "euclidean" and self.solver in ("knot_scan", "fig7_5"):
            raise ConfigError(
                self.label(), "solver", f"{self.solver} solves the euclidean update III only"
            )
        self._k = int(spec.n_classes)
        self._d = feature_dim(spec)
        self._c, self._gamma = float(self.c), float(self.gamma)
        self._theta = np.zeros((spec.n_replicates, self._k, self._d))
        self._pdip_max = 0  # the most PDIP iterations of one update so far

    @property
    def pdip_iterations(self) -> int:
        """The most interior-point iterations one update III needed so far (§8.4 saw ≤ 15)."""
        return self._pdip_max

    def weights(self) -> np.ndarray:
        """The weights ``w_r = ∇f*(θ_r/c)``, shape (R, k, d)."""
        return link(self._theta, self._c, self.regularizer)

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        w = self.weights()
        return w.reshape(w.shape[0], -1)

    def update(self, fb: Feedback) -> None:
        self._step(np.asarray(fb.data.densified().x, dtype=np.float64), fb.data.y)

    def _step(self, x: np.ndarray, y: np.ndarray) -> None:
        w = self.weights()
        scores = np.einsum("rkd,rd->rk", w, x)
        mask = relevant_mask(y, self._k)
        margin, r1, s1, has_pair = ranking_pair(scores, mask)
        rows = np.arange(x.shape[0])
        sq = np.einsum("rd,rd->r", x, x)
        if self.variant == "III" and self.solver == "fig7_5":
            z = max_hinge_inner(scores, mask, x, self._c, self._gamma, int(self.inner_steps))
            self._theta += self._c * z  # w_{t+1} = w_t + z̄
            return
        if self.variant == "III":
            pd_solve = self.solver == "pdip" or (
                self.solver == "auto" and self.regularizer == "entropic"
            )
            for i in np.flatnonzero(has_pair):
                if pd_solve:
                    beta, its = pdip_duals(
                        self._theta[i], mask[i], x[i], self._c, self._gamma, self.regularizer
                    )
                    self._pdip_max = max(self._pdip_max, its)
                else:
                    beta = optimal_duals(scores[i], mask[i], sq[i], self._c, self._gamma)
                sign = np.where(mask[i], 1.0, -1.0)
                self._theta[i] += (sign * beta)[:, None] * x[i][None, :]
            return
        if self.variant == "I":
            a = np.where(has_pair & (margin <= 0.0), 1.0, 0.0)
        elif self.regularizer == "euclidean":
            acc = self._c * np.where(has_pair, margin, 0.0)  # ⟨θ_{r'} − θ_{s'}, x⟩
            a = np.where(has_pair, euclidean_step(acc, sq, self._c, self._gamma), 0.0)
        else:
            th_r, th_s = self._theta[rows, r1], self._theta[rows, s1]
            a = np.where(has_pair, entropic_step(th_r, th_s, x, self._c, self._gamma), 0.0)
        self._theta[rows, r1] += a[:, None] * x
        self._theta[rows, s1] -= a[:, None] * x

    @classmethod
    def _unit_test_params(cls):
        # the other variants and update III's three solvers pass the suite too, in a slow test
        # (about 12 s between them: tests/players/test_label_ranking.py)
        yield {}
