"""Squint: second-order quantile experts algorithm with a prior over learning rates."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.experts.components import ExpertsPlayer
from arena.kernels import normalize_log_weights
from arena.params import POSITIVE, IsNone, ListOf, OneOf, expert_prior
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

PRIOR_ETAS = ("cv", "uniform")

SQRT_PI = math.sqrt(math.pi)

_GL_X, _GL_W = np.polynomial.legendre.leggauss(10)
GL_ETA = (1.0 + _GL_X) / 4.0
"""10-point Gauss–Legendre nodes on [0, ½], used where ``a ≤ 0`` and ``b/4 − a/2 ≤ 1`` (the one
region where the closed form cancels): there ``|a| ≤ 2`` and ``b ≤ 4``, the integrand is entire
with ``|d^{20}/dη^{20}| ≲ 6^{20}``, and the rule's error is below 1e-20 (it matches 40-digit
quadrature to ~1e-16 relative)."""
GL_W = _GL_W / 4.0

_SPLIT = 1048576.0
"""2^20: ``x = xh + xl`` with ``xh`` on a 2^-20 grid, so ``xh²`` is exact for ``x < 8``."""


@njit(cache=True, nogil=True)
def erfcx(x):
    """Scaled complementary error function ``e^{x²} erfc(x)`` for ``x ≥ 0``.

    For ``x < 8``, ``e^{x²}`` is formed as ``e^{xh²} e^{xl(x + xh)}`` with ``xh²`` exact, times
    ``math.erfc``; for ``x ≥ 8`` the asymptotic series
    ``(1/(x√π)) Σ_{n<21} (−1)^n (2n−1)!!/(2x²)^n``
    (truncation error below 1e-18 relative there). Agrees with 40-digit ``mpmath`` to 7e-16
    relative on [0, 30] and at 1e3, 1e5, 1e8.

    Examples
    --------
    >>> round(erfcx(0.0), 15), round(erfcx(10.0) * 10.0 * math.sqrt(math.pi), 6)
    (1.0, 0.995073)
    """
    if x < 8.0:
        xh = math.floor(x * _SPLIT) / _SPLIT
        xl = x - xh
        return math.exp(xh * xh) * math.exp(xl * (x + xh)) * math.erfc(x)
    z = 0.5 / (x * x)
    term = 1.0
    s = 1.0
    for n in range(1, 21):
        term *= -(2 * n - 1) * z
        s += term
    return s / (x * SQRT_PI)


@njit(cache=True, nogil=True)
def mills_h(x):
    """``1 − √π x erfcx(x)`` for ``x ≥ 0`` without cancellation (≈ ``1/(2x²)`` for large x).

    Direct for ``x < 8`` (relative error ≤ 6e-14 against ``mpmath``), asymptotic series
    ``Σ_{n≥1} (−1)^{n+1} (2n−1)!!/(2x²)^n`` (21 terms) beyond.
    """
    if x < 8.0:
        return 1.0 - SQRT_PI * x * erfcx(x)
    z = 0.5 / (x * x)
    term = z
    s = z
    for n in range(2, 22):
        term *= -(2 * n - 1) * z
        s += term
    return s


@njit(cache=True, nogil=True)
def _log_integrals_left(a, b, need_i1, gl_eta, gl_w):
    """``(ln I0, ln I1)`` of :func:`log_integrals` for ``a ≤ b/2`` (the mass leans towards η = 0).

    Three regimes, each free of cancellation:

    * ``a ≤ 0`` and ``d = b/4 − a/2 ≤ 1``: Gauss–Legendre on [0, ½];
    * ``0 < a ≤ b/2`` (the Gaussian's mode ``a/(2b)`` lies in (0, ¼]): ``I0 = (√π/(2√b)) e^{a²/(4b)}
      [erf((b−a)/(2√b)) + erf(a/(2√b))]`` (two positive terms) and ``I1 = (a/(2b)) I0 + (1 −
      e^{a/2 − b/4})/(2b)`` (two non-negative terms);
    * ``a ≤ 0``: with ``lo = −a/(2√b)``, ``hi = lo + √b/2`` and ``d = b/4 − a/2 > 1``,
      ``I0 = (√π/(2√b)) [erfcx(lo) − erfcx(hi) e^{−d}]`` and
      ``I1 = [h(lo) − e^{−d}(h(hi) + (√b/2)√π erfcx(hi))]/(2b)`` with ``h`` = :func:`mills_h`.
      At ``b = 0``: ``I0 = (1 − e^{a/2})/(−a)``, ``I1 = (1 − e^{a/2}(1 − a/2))/a²``.
    """
    if a <= 0.0 and 0.25 * b - 0.5 * a <= 1.0:
        s0 = 0.0
        s1 = 0.0
        for j in range(gl_eta.size):
            eta = gl_eta[j]
            e = gl_w[j] * math.exp(eta * (a - eta * b))
            s0 += e
            s1 += eta * e
        return math.log(s0), math.log(s1)
    if b == 0.0:  # then a < −2
        l0 = math.log(-math.expm1(0.5 * a) / (-a))
        if not need_i1:
            return l0, 0.0
        return l0, math.log((1.0 - math.exp(0.5 * a) * (1.0 - 0.5 * a)) / (a * a))
    s = math.sqrt(b)
    if a > 0.0:
        x1 = a / (2.0 * s)
        x2 = 0.5 * s - x1
        l0 = math.log(SQRT_PI / (2.0 * s)) + x1 * x1 + math.log(math.erf(x2) + math.erf(x1))
        if not need_i1:
            return l0, 0.0
        t1 = math.log(a / (2.0 * b)) + l0
        t2 = math.log(-math.expm1(0.5 * a - 0.25 * b) / (2.0 * b))
        m = max(t1, t2)
        return l0, m + math.log(math.exp(t1 - m) + math.exp(t2 - m))
    lo = -a / (2.0 * s)
    hi = lo + 0.5 * s
    ed = math.exp(-(0.25 * b - 0.5 * a))
    ex_hi = erfcx(hi)
    l0 = math.log(SQRT_PI / (2.0 * s) * (erfcx(lo) - ex_hi * ed))
    if not need_i1:
        return l0, 0.0
    i1 = (mills_h(lo) - ed * (mills_h(hi) + 0.5 * s * SQRT_PI * ex_hi)) / (2.0 * b)
    return l0, math.log(i1)


@njit(cache=True, nogil=True)
def log_integrals(a, b, need_i1, gl_eta, gl_w):
    """Return ``(ln I0(a, b), ln I1(a, b))`` for real ``a`` and ``b ≥ 0``, where

    ``I0 = ∫_0^{1/2} e^{ηa − η²b} dη`` and ``I1 = ∫_0^{1/2} η e^{ηa − η²b} dη``
    (Koolen & van Erven 2015). ``ln I1`` is only computed when ``need_i1`` (else 0 is returned).

    For ``a > b/2`` the substitution ``η → ½ − η`` gives ``I0(a, b) = e^{d} I0(b − a, b)`` and
    ``I1(a, b) = e^{d} [½ I0(b − a, b) − I1(b − a, b)]`` with ``d = a/2 − b/4``; the bracket is at
    least ``¼ I0(b − a, b)`` because the reflected mass leans towards 0. Everything is done in
    logs, so nothing overflows. Against 40-digit ``mpmath`` quadrature on 542 points spanning
    ``b ∈ [0, 1e5]``, ``|a| ≤ 1e4``, the largest error of either log is 2.3e-13 (where ``ln I`` is
    in the thousands, i.e. 1e-16 relative: the rounding of ``a/2 − b/4`` itself), and on 3000
    random points with ``|a| ≤ 4`` and ``b`` down to 1e-300 it is 5e-14.

    Examples
    --------
    >>> l0, l1 = log_integrals(0.0, 0.0, True, GL_ETA, GL_W)
    >>> round(math.exp(l0), 15), round(math.exp(l1), 15)
    (0.5, 0.125)
    """
    if a <= 0.5 * b:
        return _log_integrals_left(a, b, need_i1, gl_eta, gl_w)
    d = 0.5 * a - 0.25 * b
    l0, l1 = _log_integrals_left(b - a, b, need_i1, gl_eta, gl_w)
    if not need_i1:
        return d + l0, 0.0
    return d + l0, d + l0 + math.log(0.5 - math.exp(l1 - l0))


@njit(cache=True, nogil=True)
def _squint_probs_row(big_r, big_v, log_pi, uniform_prior, gl_eta, gl_w, out):
    n = big_r.size
    mx = -np.inf
    for i in range(n):
        l0, l1 = log_integrals(big_r[i], big_v[i], uniform_prior, gl_eta, gl_w)
        v = log_pi[i] + (l1 if uniform_prior else l0)
        out[i] = v
        if v > mx:
            mx = v
    normalize_log_weights(out, mx)


@njit(cache=True, nogil=True)
def _squint_update_row(big_r, big_v, p, u):
    """``r_i = ℓ̂ − u_i`` with ``ℓ̂ = min u + Σ p (u − min u)``; ``R += r``, ``V += r²``."""
    n = u.size
    m = np.inf
    for i in range(n):
        if u[i] < m:
            m = u[i]
    h = 0.0
    for i in range(n):
        h += p[i] * (u[i] - m)
    h += m
    for i in range(n):
        r = h - u[i]
        big_r[i] += r
        big_v[i] += r * r


@njit(cache=True, nogil=True)
def _squint_probs(big_r, big_v, log_pi, uniform_prior, gl_eta, gl_w, out):
    for r in range(big_r.shape[0]):
        _squint_probs_row(big_r[r], big_v[r], log_pi, uniform_prior, gl_eta, gl_w, out[r])


@njit(cache=True, nogil=True)
def _squint_update(big_r, big_v, log_pi, uniform_prior, gl_eta, gl_w, unit):
    p = np.empty(big_r.shape[1])
    for r in range(big_r.shape[0]):
        _squint_probs_row(big_r[r], big_v[r], log_pi, uniform_prior, gl_eta, gl_w, p)
        _squint_update_row(big_r[r], big_v[r], p, unit[r])


@njit(cache=True, nogil=True)
def _squint_play_block(losses, big_r, big_v, log_pi, uniform_prior, gl_eta, gl_w, lo, scale, probs):
    """Play a chunk: ``probs[r, j]`` is p at the chunk's round j; ``R`` and ``V`` advance."""
    n_rep, n, n_act = losses.shape
    u = np.empty(n_act)
    for r in range(n_rep):
        for j in range(n):
            _squint_probs_row(big_r[r], big_v[r], log_pi, uniform_prior, gl_eta, gl_w, probs[r, j])
            for i in range(n_act):
                u[i] = (losses[r, j, i] - lo) / scale
            _squint_update_row(big_r[r], big_v[r], probs[r, j], u)


class Squint(ExpertsPlayer):
    """Squint: ``p_{t,k} ∝ π_k E_γ[η e^{η R_{t−1,k} − η² V_{t−1,k}}]``, a prior γ on η ∈ [0, ½].

    Parameters
    ----------
    pi : list of float, optional
        Prior masses on the experts (positive, normalized here); None is uniform.
    prior_eta : {"cv", "uniform"}
        The prior γ on the learning rate. ``"cv"`` (default) is the improper ``γ(η) ∝ 1/η`` on
        [0, ½], whose weights have the closed form ``π_k I0(R_k, V_k)``; ``"uniform"`` is the
        uniform density 2 on [0, ½], with weights ``∝ π_k I1(R_k, V_k)``.

    Notes
    -----
    With unit-range losses ``u_t`` (the declared range mapped to [0, 1]),
    ``r_{t,k} = ℓ̂_t − u_{t,k}``
    (``ℓ̂_t = p_t·u_t``, computed as ``min u_t + p_t·(u_t − min u_t)`` so that a round where every
    expert has the same loss gives ``r = 0`` exactly), ``R_{t,k} = Σ_{s≤t} r_{s,k}`` and
    ``V_{t,k} = Σ_{s≤t} r_{s,k}²``:

    * ``"cv"``: ``p_{t,k} ∝ π_k I0(R_{t−1,k}, V_{t−1,k})``, ``I0(a, b) = ∫_0^{1/2} e^{ηa − η²b} dη
      = (√π/(2√b)) e^{a²/(4b)} [erf((b − a)/(2√b)) + erf(a/(2√b))]`` (½ at ``a = b = 0``);
    * ``"uniform"``: ``p_{t,k} ∝ π_k I1(R_{t−1,k}, V_{t−1,k})``, ``I1(a, b) = ∫_0^{1/2} η e^{ηa −
      η²b} dη``.

    Both are evaluated in logs without cancellation or overflow (:func:`log_integrals`), so the
    weights are exact to ~1e-13 relative for any (R, V) a game can produce.

    Guarantee: ``R_T^K = O(√(V_T^K (C_K + ln ln T)) + C_K + ln ln T)`` for every subset K of
    experts,
    ``C_K = −ln π(K)`` (Koolen & van Erven 2015): an O-form only, so no numeric bound is
    declared. With the proper uniform prior the potential ``Φ_t = Σ_k π_k E_γ[e^{ηR_{t,k} −
    η²V_{t,k}}] = Σ_k π_k 2 I0(R_{t,k}, V_{t,k})`` never increases (``Φ_0 = 1``, because
    ``e^{x − x²} ≤ 1 + x`` for ``x ≥ −½`` and ``Σ_k p_{t,k} r_{t,k} = 0``); the tests check it round
    by round. Squint is invariant to per-round shifts of the losses, not to scaling (η ≤ ½ is
    tied to the unit range).

    Examples
    --------
    >>> from arena import play
    >>> df = play(Squint(), "bernoulli", n_actions=5, horizon=2000,
    ...           adversary_params={"gap": 0.2}, metrics={"regret": {}})
    >>> bool(df.value.iloc[-1] < 30)
    True

    References
    ----------
    Koolen & van Erven (2015), "Second-order quantile methods for experts and combinatorial
    games", COLT (Squint; the CV prior and its erf closed form).
    """

    tags = PlayerTags(protocols=frozenset({"experts"}), block_kernel=True)
    parameter_constraints: ClassVar = {
        "pi": [ListOf(POSITIVE), IsNone()],
        "prior_eta": [OneOf(*PRIOR_ETAS)],
    }

    def __init__(self, pi: list[float] | None = None, prior_eta: str = "cv"):
        self.pi = pi
        self.prior_eta = prior_eta

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._uniform = self.prior_eta == "uniform"
        self._log_pi = np.log(expert_prior(self, "pi", spec.n_actions))
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._big_r = np.zeros((spec.n_replicates, spec.n_actions))
        self._big_v = np.zeros((spec.n_replicates, spec.n_actions))

    def regret_statistics(self) -> tuple[np.ndarray, np.ndarray]:
        """Return copies of ``(R_t, V_t)``, each (R, N), for unit-range losses."""
        return self._big_r.copy(), self._big_v.copy()

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        out = np.empty_like(self._big_r)
        _squint_probs(self._big_r, self._big_v, self._log_pi, self._uniform, GL_ETA, GL_W, out)
        return out

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        unit = (np.asarray(losses, dtype=np.float64) - self._lo) / self._scale
        _squint_update(self._big_r, self._big_v, self._log_pi, self._uniform, GL_ETA, GL_W, unit)

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        probs = np.empty_like(losses)
        _squint_play_block(
            losses,
            self._big_r,
            self._big_v,
            self._log_pi,
            self._uniform,
            GL_ETA,
            GL_W,
            self._lo,
            self._scale,
            probs,
        )
        return probs

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"prior_eta": "uniform"}
        yield {"pi": [0.5, 0.3, 0.2], "prior_eta": "cv"}
