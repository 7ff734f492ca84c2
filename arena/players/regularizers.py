"""Regularizers of FTRL / dual averaging / primal-dual players: values, links and conjugates.

A regularizer is a function ``f : S → ℝ`` on a closed convex set ``S`` (its *domain*, a
:class:`~arena.oco.domains.Domain`), 1-strongly convex w.r.t. a norm ``‖·‖`` on S and ``≥ 0``
there. Players only meet it through its conjugate ``f*(θ) = sup_{w∈S} ⟨w, θ⟩ − f(w)`` and the
*link* ``∇f*(θ) = argmax_{w∈S} ⟨w, θ⟩ − f(w)`` (Shalev-Shwartz 2007, Appendix A.4, Lemma 15).

API (every array method is batched over leading axes; the last axis is the coordinate):

``name`` (class attribute)
    ``"l2"``, ``"entropic"`` or ``"pnorm"`` (the keys of :data:`REGULARIZERS`).
``domains`` (class attribute)
    Domain kinds ``S`` may take (``l2``: all four; ``entropic``: simplex; ``pnorm``: unconstrained).
``domain``
    The set S of this instance; ``on(domain)`` returns the same regularizer on another S
    (ValueError if unsupported).
``value(w) -> (...,)``
    ``f(w)`` (for w in S).
``grad(w) -> (..., d)``
    ``∇f(w)`` (the mirror map; on the simplex the representative ``1 + ln w``; ``-inf`` at 0).
``link(theta) -> (..., d)``
    ``∇f*(θ)``, a point of S.
``conjugate(theta) -> (...,)``
    ``f*(θ)``.
``strong_convexity_norm`` (str), ``norm(w)``, ``dual_norm(v)``
    The norm f is 1-strongly convex in (``"l2"``, ``"l1"``, ``"lq"`` with q = p/(p−1)) and its dual
    (``‖·‖₂``, ``‖·‖_∞``, ``‖·‖_p``).
``max_value(domain, d) -> float``
    ``sup_{u ∈ domain} f(u)`` over a comparator set (``inf`` when unbounded); e.g. ``ln d`` for the
    entropy on the simplex, ``½ radius²`` for ``l2`` on a ball.

:func:`make_regularizer` builds one by name. Guarantees the players derive from this API: with
``w_t = link(−η_t Σ_{s<t} g_s)`` and ``η_t`` non-increasing, ``R_T(u) ≤ f(u)/η_T +
½ Σ_t η_t ‖g_t‖_*²`` for every u ∈ S (Shalev-Shwartz 2007, Lemma 2, with ``c_t = 1/η_t``).

References
----------
Shalev-Shwartz 2007: ½‖w‖² (§5.1.1; Example 1 in §4.2: the link is the Euclidean projection),
relative entropy to uniform (§5.1.2; Lemma 16 in Appendix A.4), p-norm ``‖w‖_q²/(2(q−1))``
(§5.1.4, Eq. 5.9; Lemma 17 in Appendix A.4; the link is defined as 0 at θ = 0, which removes
the 0/0). Srebro, Lecture 16, slides "Example: ||w||_2", "Example: ||w||_p" and "Normalized
Exponentiated Gradient (EG)" state the same maps for Ψ = ½‖w‖², ½‖w‖_p² (p ∈ (1, 2], our q)
and the entropy.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from scipy.special import logsumexp, xlogy

from arena.oco.domains import Domain


class Regularizer:
    """Base of the regularizers: a strongly convex ``f ≥ 0`` on a domain S (see the module doc)."""

    name: ClassVar[str] = ""
    domains: ClassVar[frozenset[str]] = frozenset()
    strong_convexity_norm: ClassVar[str] = ""

    def __init__(self, domain: Domain | None = None):
        domain = self.default_domain() if domain is None else domain
        if domain.kind not in self.domains:
            raise ValueError(
                f"regularizer {self.name!r} is defined on {sorted(self.domains)}, "
                f"not on a {domain.kind!r} domain"
            )
        self.domain = domain

    @classmethod
    def default_domain(cls) -> Domain:
        return Domain("unconstrained")

    def on(self, domain: Domain) -> Regularizer:
        """Return the same regularizer on the set ``domain``."""
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        Regularizer.__init__(out, domain)
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(domain={self.domain!r})"

    def value(self, w: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def grad(self, w: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def link(self, theta: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def conjugate(self, theta: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def norm(self, w: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def dual_norm(self, v: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def max_value(self, domain: Domain, d: int) -> float:
        raise NotImplementedError


class Euclidean(Regularizer):
    """``f(w) = ½‖w‖₂²`` on S; link = Euclidean projection onto S (Shalev-Shwartz 2007, Example 1).

    Examples
    --------
    >>> r = Euclidean(Domain("ball", 1.0))
    >>> r.link(np.array([3.0, 4.0])).tolist(), float(r.conjugate(np.array([3.0, 4.0])))
    ([0.6000000000000001, 0.8], 4.5)
    """

    name = "l2"
    domains = frozenset({"unconstrained", "ball", "box", "simplex"})
    strong_convexity_norm = "l2"

    def value(self, w):
        w = np.asarray(w, dtype=np.float64)
        return 0.5 * np.einsum("...i,...i->...", w, w)

    def grad(self, w):
        return np.array(w, dtype=np.float64, copy=True)

    def link(self, theta):
        return self.domain.project(theta)

    def conjugate(self, theta):
        theta = np.asarray(theta, dtype=np.float64)
        w = self.link(theta)
        return np.einsum("...i,...i->...", w, theta) - self.value(w)

    def norm(self, w):
        return np.linalg.norm(w, axis=-1)

    def dual_norm(self, v):
        return np.linalg.norm(v, axis=-1)

    def max_value(self, domain, d):
        return 0.5 * domain.max_norm(d) ** 2


class Entropic(Regularizer):
    """Relative entropy to uniform, ``f(w) = ln d + Σ w_i ln w_i``, on the simplex; link = softmax.

    1-strongly convex w.r.t. ``‖·‖₁`` (Shalev-Shwartz 2007, Lemma 16);
    ``f*(θ) = ln((1/d) Σ e^{θ_i})``; the link and conjugate subtract ``max θ`` before
    exponentiating, so no exponential overflows.

    Examples
    --------
    >>> r = Entropic()
    >>> r.link(np.array([0.0, math.log(3.0)])).round(3).tolist()
    [0.25, 0.75]
    >>> float(r.max_value(Domain("simplex"), 4)) == math.log(4)
    True
    """

    name = "entropic"
    domains = frozenset({"simplex"})
    strong_convexity_norm = "l1"

    @classmethod
    def default_domain(cls):
        return Domain("simplex")

    def value(self, w):
        w = np.asarray(w, dtype=np.float64)
        return math.log(w.shape[-1]) + xlogy(w, w).sum(axis=-1)

    def grad(self, w):
        with np.errstate(divide="ignore"):
            return 1.0 + np.log(np.asarray(w, dtype=np.float64))

    def link(self, theta):
        theta = np.asarray(theta, dtype=np.float64)
        e = np.exp(theta - theta.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def conjugate(self, theta):
        theta = np.asarray(theta, dtype=np.float64)
        return logsumexp(theta, axis=-1) - math.log(theta.shape[-1])

    def norm(self, w):
        return np.abs(w).sum(axis=-1)

    def dual_norm(self, v):
        return np.abs(v).max(axis=-1)

    def max_value(self, domain, d):
        return math.log(d) if domain.kind == "simplex" else math.inf


class PNorm(Regularizer):
    """``f(w) = ‖w‖_q²/(2(q−1))`` on ``ℝ^d``, ``q = p/(p−1)`` with ``p ≥ 2`` the dual exponent.

    1-strongly convex w.r.t. ``‖·‖_q`` for ``q ∈ (1, 2]`` (Shalev-Shwartz 2007, Lemma 17);
    ``f*(θ) = ‖θ‖_p²/(2(p−1))`` and the link (Example 5 and Eq. 5.9)
    ``∇f*(θ)_i = sign(θ_i)|θ_i|^{p−1}/((p−1)‖θ‖_p^{p−2})``, defined as 0 at θ = 0 (no 0/0).
    It is computed as ``‖θ‖_p (|θ_i|/‖θ‖_p)^{p−1} sign(θ_i)/(p−1)`` so that large p does not
    overflow. ``p = 2`` is ``½‖w‖²``; large p approaches the ℓ1 geometry of Winnow (§5.1.4).

    Parameters
    ----------
    p : float
        Dual exponent, ``p ≥ 2`` (finite).

    Examples
    --------
    >>> r = PNorm(p=4.0)
    >>> theta = np.array([1.0, -2.0])
    >>> bool(np.allclose(r.grad(r.link(theta)), theta))
    True
    """

    name = "pnorm"
    domains = frozenset({"unconstrained"})
    strong_convexity_norm = "lq"

    def __init__(self, p: float = 2.0, domain: Domain | None = None):
        p = float(p)
        if not (math.isfinite(p) and p >= 2.0):
            raise ValueError(f"p must be finite and >= 2, got {p!r}")
        self.p = p
        self.q = p / (p - 1.0)
        super().__init__(domain)

    def __repr__(self) -> str:
        return f"PNorm(p={self.p!r}, domain={self.domain!r})"

    @staticmethod
    def _lnorm(v, r):
        """``‖v‖_r`` row-wise, scaled by the max modulus (no overflow for large r)."""
        v = np.abs(np.asarray(v, dtype=np.float64))
        m = v.max(axis=-1)
        safe = np.where(m > 0, m, 1.0)
        return m * ((v / safe[..., None]) ** r).sum(axis=-1) ** (1.0 / r)

    def _map(self, v, r):
        """``sign(v)|v|^{r−1}/‖v‖_r^{r−2}`` row-wise (0 at v = 0)."""
        v = np.asarray(v, dtype=np.float64)
        n = self._lnorm(v, r)
        safe = np.where(n > 0, n, 1.0)[..., None]
        return np.where(n[..., None] > 0, np.sign(v) * safe * (np.abs(v) / safe) ** (r - 1.0), 0.0)

    def value(self, w):
        return self._lnorm(w, self.q) ** 2 / (2.0 * (self.q - 1.0))

    def grad(self, w):
        return self._map(w, self.q) / (self.q - 1.0)

    def link(self, theta):
        return self._map(theta, self.p) / (self.p - 1.0)

    def conjugate(self, theta):
        return self._lnorm(theta, self.p) ** 2 / (2.0 * (self.p - 1.0))

    def norm(self, w):
        return self._lnorm(w, self.q)

    def dual_norm(self, v):
        return self._lnorm(v, self.p)

    def max_value(self, domain, d):
        q = self.q
        if domain.kind == "ball":
            m = domain.radius * d ** (1.0 / q - 0.5)  # Hölder: ‖u‖_q ≤ d^{1/q−1/2}‖u‖₂
        elif domain.kind == "box":
            m = domain.radius * d ** (1.0 / q)
        elif domain.kind == "simplex":
            m = 1.0
        else:
            return math.inf
        return m * m / (2.0 * (q - 1.0))


REGULARIZERS: dict[str, type[Regularizer]] = {
    "l2": Euclidean,
    "entropic": Entropic,
    "pnorm": PNorm,
}
"""Regularizer classes by name."""


def make_regularizer(name: str, domain: Domain, p: float | None = None) -> Regularizer:
    """Return the regularizer ``name`` on the set ``domain`` (``p`` only for ``"pnorm"``).

    Raises ValueError for an unknown name or an unsupported domain.

    Examples
    --------
    >>> make_regularizer("l2", Domain("box", 2.0)).link(np.array([3.0, -1.0])).tolist()
    [2.0, -1.0]
    """
    if name not in REGULARIZERS:
        raise ValueError(f"unknown regularizer {name!r}; expected one of {sorted(REGULARIZERS)}")
    if name == "pnorm":
        return PNorm(2.0 if p is None else p, domain)
    if p is not None:
        raise ValueError(f"p is only used by the 'pnorm' regularizer, not {name!r}")
    return REGULARIZERS[name](domain)
