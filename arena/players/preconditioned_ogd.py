"""Preconditioned online gradient descent with a fixed matrix Q (Srebro, Lecture 16, Q-norm OGD)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from arena.errors import ConfigError
from arena.oco.components import OCO_PROTOCOLS, OCOPlayer, game_dim, game_domain
from arena.oco.losses import Feedback
from arena.params import POSITIVE, Interval, IsNone, ListOf, OneOf
from arena.players.ons import ball_generalized_projection
from arena.spec import GameSpec, PlayerTags

SCHEDULES = ("fixed", "sqrt")

SYMMETRY_RTOL = 1e-12
"""A full ``Q`` must equal its transpose to this relative tolerance (it is then symmetrized)."""


def q_matrix(Q: Any, dim: int, who: str = "player preconditioned_ogd") -> np.ndarray:
    """Return the d×d matrix a ``Q`` parameter stands for, or raise ``ConfigError``.

    None is the identity, a number c is ``c·I``, a list of d numbers a diagonal matrix and a list
    of d rows of d numbers the matrix itself, which must be symmetric positive definite.

    Examples
    --------
    >>> q_matrix([1.0, 4.0], 2).tolist()
    [[1.0, 0.0], [0.0, 4.0]]
    >>> q_matrix(2.0, 2).tolist()
    [[2.0, 0.0], [0.0, 2.0]]
    """
    if Q is None:
        return np.eye(dim)
    if np.isscalar(Q):
        return float(Q) * np.eye(dim)
    a = np.asarray(Q, dtype=np.float64)
    if a.ndim == 1:
        if a.shape != (dim,):
            raise ConfigError(who, "Q", f"a diagonal needs d = {dim} entries, got {a.size}")
        return np.diag(a)
    if a.shape != (dim, dim):
        raise ConfigError(who, "Q", f"a matrix must be {dim}×{dim}, got shape {a.shape}")
    if not np.allclose(a, a.T, rtol=SYMMETRY_RTOL, atol=0.0):
        raise ConfigError(who, "Q", "must be symmetric")
    a = 0.5 * (a + a.T)
    if not np.linalg.eigvalsh(a).min() > 0:
        raise ConfigError(who, "Q", "must be positive definite")
    return a


class PreconditionedOGD(OCOPlayer):
    """Online gradient descent in the norm of a fixed matrix Q: ``w_{t+1} = Π_Q(w_t − η_t Q⁻¹g_t)``.

    ``w_1 = 0`` and ``g_t`` is the arena's subgradient at ``w_t``. ``Π_Q(v) = argmin_{w∈K}
    ‖w − v‖_Q`` with ``‖w‖_Q = √(wᵀQw)`` is the projection in Q's norm (the Bregman projection of
    ``Ψ(w) = ½wᵀQw``): the identity on ℝ^d, and on the ball ``‖w‖₂ ≤ r`` the solution
    ``(Q + μI)⁻¹Qv`` of the KKT conditions, with the multiplier μ > 0 found by Newton's method on
    the secular equation (:func:`arena.players.ons.ball_generalized_projection`). ``Q = I`` is
    :class:`arena.players.ogd.OGD`.

    Parameters
    ----------
    Q : None, float, list of float or list of list of float
        The preconditioner, symmetric positive definite: None is I, a number c is ``c·I``, d
        numbers a diagonal, d rows of d numbers the full matrix (:func:`q_matrix`).
    schedule : {"fixed", "sqrt"}
        ``η_t = η`` or ``η_t = η/√t``.
    eta : float or None
        The step η. None tunes it from the game (a ball and a gradient bound G needed):
        ``η = D_Q/(G_*√T)`` (``"fixed"``) or ``D_Q/G_*`` (``"sqrt"``), with ``D_Q = 2r√λ_max(Q)``
        the ball's diameter in Q's norm and ``G_* = G/√λ_min(Q) ≥ ‖g‖_{Q⁻¹}``.

    Notes
    -----
    Srebro, Lecture 16, "Q-norm" instance of linearized FTRL: ``Ψ(w) = ½wᵀQw`` is 1-strongly
    convex with respect to ``‖·‖_Q``, whose dual norm is ``‖ν‖_* = √(νᵀQ⁻¹ν)``; ``∇Ψ(w) = Qw``
    and ``∇Ψ⁻¹(ν) = Q⁻¹ν``, so with ``λ_t = λ/t`` the lecture's update ``w_{t+1} =
    ((t−1)λ_{t−1}/(tλ_t))·w_t − (1/(tλ_t))·Q⁻¹∇ℓ(w_t, z_t)`` is ``w_t − (1/λ)Q⁻¹g_t``: this player
    with ``η = 1/λ``, and with the Q-norm projection when K is constrained. Its regret is of order
    ``√((wᵀQw)(gᵀQ⁻¹g)/m)`` per round. Equivalently, it is Euclidean OGD on ``(Q^{1/2}w,
    Q^{−1/2}g)`` over the set ``Q^{1/2}K`` (the change of variables maps one run onto the other),
    so Zinkevich 2003's analysis gives, for every sequence and every ``u ∈ K``, with
    non-increasing ``η_t``:

        ``R_T(u) ≤ D_Q²/(2η_T) + ½ Σ_{t≤T} η_t ‖g_t‖²_{Q⁻¹}``,

    ``D_Q = max_{a,b∈K} ‖a − b‖_Q``, which is ``2r√λ_max(Q)`` on the ball of radius r.
    :meth:`bounds` declares it on ``regret`` with the run's own gradients (on the ball; none on
    ℝ^d, where ``D_Q`` is infinite). A fixed η tuned as above gives ``D_Q G_* √T``. A round costs
    O(d²), plus one O(d³) eigendecomposition when the step leaves the ball.

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("oco", 2, 10, dim=2, domain=Domain("unconstrained"), loss="linear")
    >>> p = PreconditionedOGD(Q=[1.0, 4.0], schedule="fixed", eta=1.0)
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> p.update(feedback("linear", 0.0, p.predict(), RoundData(g=np.array([[1.0, 1.0]]))))
    >>> p.predict().tolist()  # the step is Q⁻¹g: the stiff coordinate moves 4 times less
    [[-1.0, -0.25]]

    References
    ----------
    Srebro, Lecture 16, slides "Q-norm" (the preconditioned instance of linearized FTRL and
    its rate); Zinkevich 2003, Theorem 1 and its proof (greedy projection, applied after the
    change of variables ``w ↦ Q^{1/2}w``).
    """

    tags = PlayerTags(
        protocols=OCO_PROTOCOLS, randomized=False, domains=frozenset({"unconstrained", "ball"})
    )
    parameter_constraints: ClassVar = {
        "Q": [IsNone(), POSITIVE, ListOf(POSITIVE), ListOf(ListOf(Interval(None, None)))],
        "schedule": [OneOf(*SCHEDULES)],
        "eta": [POSITIVE, IsNone()],
    }

    def __init__(self, Q: Any = None, schedule: str = "fixed", eta: float | None = None):
        self.Q = Q
        self.schedule = schedule
        self.eta = eta

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        dim = game_dim(spec)
        domain = game_domain(spec)
        if domain.kind not in ("unconstrained", "ball"):
            raise ConfigError(
                who, "domain", f"the Q-norm projection is on ℝ^d or a ball, got {domain.kind!r}"
            )
        q = q_matrix(self.Q, dim, who)
        eig = np.linalg.eigvalsh(q)
        self._q = q
        self._q_inv = np.linalg.inv(q)
        self._q_inv = 0.5 * (self._q_inv + self._q_inv.T)
        self._ball = domain.kind == "ball"
        self._radius = float(domain.radius) if self._ball else math.inf
        self._diameter_q = 2.0 * self._radius * math.sqrt(eig.max()) if self._ball else math.inf
        eta = None if self.eta is None else float(self.eta)
        if eta is None:
            G = spec.gradient_bound
            if not self._ball or G is None or not G > 0:
                raise ConfigError(
                    who, "eta", "null (tuned) needs a ball and spec.gradient_bound > 0; give eta"
                )
            dual = float(G) / math.sqrt(eig.min())
            if self.schedule == "fixed":
                if spec.horizon is None:
                    raise ConfigError(who, "eta", "null with schedule 'fixed' needs the horizon")
                eta = self._diameter_q / (dual * math.sqrt(spec.horizon))
            else:
                eta = self._diameter_q / dual
        self._eta = eta
        self._w = np.zeros((spec.n_replicates, dim))
        self._acc = np.zeros(spec.n_replicates)  # Σ η_t ‖g_t‖²_{Q⁻¹}
        self._rounds = 0

    def step_size(self, t: int) -> float:
        """Return ``η_t``, the step taken after round ``t``."""
        return self._eta if self.schedule == "fixed" else self._eta / math.sqrt(t)

    def matrix(self) -> np.ndarray:
        """Return Q (d×d), after reset."""
        return self._q.copy()

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return self._w.copy()

    def update(self, fb: Feedback) -> None:
        t = self._rounds + 1
        eta = self.step_size(t)
        g = np.asarray(fb.grad, dtype=np.float64)
        step = g @ self._q_inv  # Q⁻¹ is symmetric: row r is (Q⁻¹g_r)ᵀ
        self._acc += eta * np.einsum("ri,ri->r", g, step)
        v = self._w - eta * step
        if self._ball:
            for r in range(v.shape[0]):
                ball_generalized_projection(self._q, v[r].copy(), self._radius, v[r])
        self._w = v
        self._rounds = t

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare ``D_Q²/(2η_t) + ½Σ_{s≤t} η_s‖g_s‖²_{Q⁻¹}`` on ``regret`` (on the ball)."""
        if not self._ball:
            return {}
        return {("regret", math.nan): self.regret_bound(t)}

    def regret_bound(self, t: int) -> np.ndarray:
        """Return the Notes' bound after ``t`` rounds, shape (R,)."""
        half = 0.5 * self._acc
        if t == 0:
            return half
        return self._diameter_q**2 / (2.0 * self.step_size(t)) + half

    @classmethod
    def _unit_test_params(cls):
        yield {"eta": 0.5}
        yield {"Q": 3.0, "schedule": "sqrt", "eta": 0.5}
