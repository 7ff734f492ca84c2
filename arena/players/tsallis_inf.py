"""Tsallis-INF: FTRL with the ½-Tsallis entropy, optimal in both bandit regimes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.bandit.components import BanditPlayer
from arena.params import OneOf
from arena.sampling import sample_action
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

IW, RV = 0, 1
"""Kernel codes of the estimators: importance-weighted, reduced-variance."""

RATE = {IW: 2.0, RV: 4.0}
"""``c`` of the learning rate ``η_t = c/√t`` (Zimmert & Seldin 2021, Theorem 1)."""

NEWTON_TOL = 1e-12
"""The normalization stops when ``|Σ_i w_{t,i} − 1| ≤ NEWTON_TOL`` (or x stops moving)."""

MAX_ITER = 200
"""Iteration cap of the normalization: Newton needs a handful, bisection at most ~60."""


def tsallis_probs(estimates: np.ndarray, eta: float) -> np.ndarray:
    """Return ½-Tsallis-INF's ``w_{t,i} = 4 (η (L̂_i − x))^{−2}`` row-wise, ``Σ_i w_{t,i} = 1``.

    ``x < min_i L̂_i`` is the normalizing multiplier (Zimmert & Seldin 2021, Algorithm 2): with
    ``y = min_i L̂_i − x`` the sum ``f(y) = Σ_i 4 (η (L̂_i − min L̂ + y))^{−2}`` is decreasing and
    convex, ``f(2/η) ≥ 1 ≥ f(2√K/η)``, so Newton's method from ``y = 2/η`` climbs monotonically
    to the root; an iterate outside the bracket (rounding) is replaced by the bracket's midpoint,
    so the solve never fails. It stops at ``|f(y) − 1| ≤ 1e-12``; the weights are then divided by
    their sum (a change below 1e-12). Working with ``L̂ − min L̂`` keeps the precision of ``y``
    when the estimates grow large.

    Examples
    --------
    >>> tsallis_probs(np.zeros((1, 4)), 1.0).round(12).tolist()
    [[0.25, 0.25, 0.25, 0.25]]
    >>> w = tsallis_probs(np.array([[5 / 6, 0.0]]), 1.0)  # 2/√w: 10/3 and 5/2, 5/6 apart
    >>> np.allclose(w, [[9 / 25, 16 / 25]], atol=1e-12, rtol=0)
    True
    """
    est = np.atleast_2d(np.asarray(estimates, dtype=np.float64))
    n_rep, k = est.shape
    d = est - est.min(axis=-1, keepdims=True)
    lo = np.full(n_rep, 2.0 / eta)
    hi = np.full(n_rep, 2.0 * math.sqrt(k) / eta)
    y = lo.copy()
    active = np.ones(n_rep, dtype=bool)
    for _ in range(MAX_ITER):
        u = eta * (d + y[:, None])
        w = 4.0 / (u * u)
        f = w.sum(axis=-1) - 1.0
        active &= ~(np.abs(f) <= NEWTON_TOL)
        if not active.any():
            break
        lo = np.where(active & (f > 0.0), y, lo)
        hi = np.where(active & (f < 0.0), y, hi)
        y_new = y + f / (eta * (w * 2.0 / u).sum(axis=-1))  # f' = −η Σ w^{3/2}, w^{3/2} = w·2/u
        y_new = np.where((y_new > lo) & (y_new <= hi), y_new, 0.5 * (lo + hi))
        moved = y_new != y
        y = np.where(active, y_new, y)
        active &= moved
    u = eta * (d + y[:, None])
    w = 4.0 / (u * u)
    return w / w.sum(axis=-1, keepdims=True)


@njit(cache=True, nogil=True)
def _tsallis_normalize(est, eta, out):
    """Write the ½-Tsallis-INF distribution of one row ``est`` (K,) into ``out`` (see
    :func:`tsallis_probs`: the same Newton iteration with the bracketing fallback)."""
    k = est.shape[0]
    m = np.inf
    for i in range(k):
        m = est[i] if est[i] < m else m
    lo = 2.0 / eta
    hi = 2.0 * math.sqrt(k) / eta
    y = lo
    for _ in range(MAX_ITER):
        s = 0.0
        s32 = 0.0
        for i in range(k):
            u = eta * (est[i] - m + y)
            w = 4.0 / (u * u)
            s += w
            s32 += w * 2.0 / u
        f = s - 1.0
        if abs(f) <= NEWTON_TOL:
            break
        if f > 0.0:
            lo = y
        elif f < 0.0:
            hi = y
        y_new = y + f / (eta * s32)
        if not (y_new > lo and y_new <= hi):
            y_new = 0.5 * (lo + hi)
        if y_new == y:
            break
        y = y_new
    total = 0.0
    for i in range(k):
        u = eta * (est[i] - m + y)
        out[i] = 4.0 / (u * u)
        total += out[i]
    for i in range(k):
        out[i] /= total


@njit(cache=True, nogil=True)
def _tsallis_play_block(losses, uniforms, est, rounds_done, estimator, lo, scale, probs):
    """Play a chunk of Tsallis-INF: per round the normalization, the arena's draw and the
    estimate update with the ``p_t`` drawn from; reads only ``losses[r, j, I_t]``."""
    n_rep, n, n_act = losses.shape
    c = 4.0 if estimator == RV else 2.0
    for r in range(n_rep):
        for j in range(n):
            eta = c / math.sqrt(rounds_done + j + 1)
            _tsallis_normalize(est[r], eta, probs[r, j])
            a = sample_action(probs[r, j], uniforms[r, j])
            unit = (losses[r, j, a] - lo) / scale
            if estimator == RV:
                cut = eta * eta
                for i in range(n_act):
                    b = 0.5 if probs[r, j, i] >= cut else 0.0
                    if i == a:
                        est[r, i] += (unit - b) / probs[r, j, i] + b
                    else:
                        est[r, i] += b
            else:
                est[r, a] += unit / probs[r, j, a]


class TsallisInf(BanditPlayer):
    """½-Tsallis-INF: FTRL on the loss estimates with the ½-Tsallis entropy, rate ``c/√t``.

    Round t plays ``w_t = argmin_{w ∈ Δ_K} ⟨w, L̂_{t−1}⟩ − Σ_i 4√w_i / η_t``, that is
    ``w_{t,i} = 4 (η_t (L̂_{t−1,i} − x_t))^{−2}`` with ``x_t`` the multiplier making ``w_t`` sum to
    one (:func:`tsallis_probs`: Newton's method to 1e-12 with a bracketing fallback). The arena
    draws ``I_t ~ w_t`` and the estimate, divided by the probability ``w_{t,I_t}`` the arm was
    drawn with, is

    * ``"rv"`` (reduced variance, default): ``ℓ̂_{t,i} = 1{I_t = i}(ℓ_{t,i} − B_{t,i})/w_{t,i} +
      B_{t,i}`` with ``B_{t,i} = ½·1{w_{t,i} ≥ η_t²}``, and ``η_t = 4/√t``;
    * ``"iw"`` (importance-weighted): ``ℓ̂_{t,i} = 1{I_t = i} ℓ_{t,i}/w_{t,i}``, ``η_t = 2/√t``.

    Both are unbiased, ``E[ℓ̂_t | w_t] = ℓ_t``. Losses are mapped to [0, 1] with the declared range
    ``[lo, hi]``; bounds scale by ``hi − lo``. Anytime: no horizon needed.

    Parameters
    ----------
    estimator : {"rv", "iw"}
        The loss estimator and its learning rate (above).

    Notes
    -----
    Guarantee (Zimmert & Seldin 2021, Theorem 1), on every oblivious loss sequence in [0, 1] and
    every t, for the pseudo-regret, which against an oblivious adversary is the expectation of
    the ``regret`` metric:

    * ``"iw"``: ``4√(K t) + 1``;
    * ``"rv"``: ``2√(K t) + 10 K ln t + 16``.

    In the stochastic regime (and its stochastically constrained and corrupted relatives) the
    pseudo-regret is also ``O(Σ_{i: Δ_i > 0} ln t / Δ_i)`` (their Theorem 2), which depends on
    gaps the player never sees and is not declared. Numerics: the normalization works on
    ``L̂ − min L̂`` and brackets its root, so every ``w_t`` is a distribution to 1e-12 for 10⁶
    rounds and more; the RV estimate may be negative, which FTRL allows.

    Examples
    --------
    >>> from arena import play
    >>> df = play(TsallisInf(), "bernoulli", n_actions=5, horizon=2000, replicates=4,
    ...           metrics={"regret": {}, "bound": {}})
    >>> last = df[df.t == 2000].groupby("metric").value.mean()
    >>> bool(last["regret"] <= last["bound:regret"])
    True

    References
    ----------
    Zimmert & Seldin (2021), "Tsallis-INF: an optimal algorithm for stochastic and adversarial
    bandits", JMLR 22(28), Algorithm 1 (Tsallis-INF), Algorithm 2 (the Newton normalization),
    Theorems 1 and 2.
    """

    tags = PlayerTags(protocols=frozenset({"bandit"}), block_kernel=True)
    parameter_constraints: ClassVar = {"estimator": [OneOf("rv", "iw")]}

    def __init__(self, estimator: str = "rv"):
        self.estimator = estimator

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._code = RV if self.estimator == "rv" else IW
        self._n_act = spec.n_actions
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._est = np.zeros((spec.n_replicates, spec.n_actions))
        self._rounds = 0

    def learning_rate(self) -> float:
        """Return ``η_t = c/√t`` for the next round (``t = rounds played + 1``)."""
        return RATE[self._code] / math.sqrt(self._rounds + 1)

    def predict(self) -> np.ndarray:
        return tsallis_probs(self._est, self.learning_rate())

    def update(self, actions: np.ndarray, losses: np.ndarray, probs: np.ndarray) -> None:
        rows = np.arange(actions.shape[0])
        unit = (np.asarray(losses, dtype=np.float64) - self._lo) / self._scale
        drawn = probs[rows, actions]  # the probability I_t was drawn with
        if self._code == RV:
            eta = self.learning_rate()  # the rate of the round just played
            b = np.where(probs >= eta * eta, 0.5, 0.0)
            self._est += b
            self._est[rows, actions] += (unit - b[rows, actions]) / drawn
        else:
            self._est[rows, actions] += unit / drawn
        self._rounds += 1

    play_block_out = True

    def play_block(
        self, losses: np.ndarray, uniforms: np.ndarray, out: np.ndarray | None = None
    ) -> np.ndarray:
        losses, uniforms = kernel_views(losses, uniforms)
        probs = np.empty_like(losses) if out is None else out
        _tsallis_play_block(
            losses, uniforms, self._est, self._rounds, self._code, self._lo, self._scale, probs
        )
        self._rounds += losses.shape[1]
        return probs

    def estimates(self) -> np.ndarray:
        return self._est.copy()

    def bounds(self, t: int) -> dict[tuple[str, float], float]:
        """Declare Theorem 1's bound on the expected regret after ``t`` rounds (see Notes)."""
        return {("regret", math.nan): self.regret_bound(t)}

    def regret_bound(self, t: int) -> float:
        """Return Zimmert & Seldin 2021, Theorem 1's bound after ``t`` rounds (see Notes)."""
        k = self._n_act
        if k == 1:
            return 0.0
        if self._code == RV:
            bound = 2.0 * math.sqrt(k * t) + 10.0 * k * math.log(t) + 16.0
        else:
            bound = 4.0 * math.sqrt(k * t) + 1.0
        return self._scale * bound

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"estimator": "iw"}
