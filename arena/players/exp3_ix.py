"""Exp3-IX: Exp3 with implicit exploration, ``ℓ̂ = ℓ 1{I = i} / (p_i + γ)`` (Neu 2015)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.bandit.components import BanditPlayer
from arena.params import Interval, IsNone, OneOf
from arena.players.exp3 import (
    ANYTIME,
    exp3_probs,
    exp3_rate,
    exp_weights_after_update,
    exp_weights_normalize,
    exp_weights_refresh,
)
from arena.sampling import sample_action
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views


@njit(cache=True, nogil=True)
def _ix_rates(mode, eta, gamma, log_k, n_act, t):
    """``(η_t, γ_t)``: fixed, or anytime ``η_t = sqrt(ln K / (K t))``; ``γ_t = η_t / 2`` when
    ``gamma`` is negative (the default, "half the rate")."""
    e = math.sqrt(log_k / (n_act * t)) if mode == ANYTIME else eta
    g = 0.5 * e if gamma < 0.0 else gamma
    return e, g


@njit(cache=True, nogil=True)
def _ix_play_block(losses, uniforms, est, rounds_done, mode, eta, gamma, log_k, lo, scale, probs):
    """Play a chunk of Exp3-IX; reads only the drawn arm's loss, advances ``est`` in place."""
    n_rep, n, n_act = losses.shape
    w = np.empty(n_act)
    for r in range(n_rep):
        m = np.inf  # the weights w are stale
        for j in range(n):
            e, g = _ix_rates(mode, eta, gamma, log_k, n_act, rounds_done + j + 1)
            if mode == ANYTIME or m == np.inf:
                m = exp_weights_refresh(est, r, e, w)
            exp_weights_normalize(w, probs, r, j)
            a = sample_action(probs[r, j], uniforms[r, j])
            est[r, a] += ((losses[r, j, a] - lo) / scale) / (probs[r, j, a] + g)
            if mode != ANYTIME:  # one exponential a round (exp3's kernel)
                m = exp_weights_after_update(est, r, a, e, w, m)


class Exp3IX(BanditPlayer):
    """Exp3-IX: exponential weights on implicitly exploring, optimistically biased estimates.

    ``p_{t,i} ∝ exp(−η_t L̂_{t−1,i})``, ``I_t ~ p_t`` and ``ℓ̂_{t,i} = 1{I_t = i} ℓ_{t,i} /
    (p_{t,i} + γ_t)``: the extra γ in the denominator biases the estimate down,
    ``E[ℓ̂_{t,i} | p_t] = p_{t,i} ℓ_{t,i} / (p_{t,i} + γ_t) ≤ ℓ_{t,i}``, and keeps it below ``1/γ``,
    which buys high-probability bounds without explicit exploration. Losses are mapped to [0, 1]
    with the declared range; bounds scale by ``hi − lo``.

    Parameters
    ----------
    eta : float or {"tuned", "anytime"}
        A fixed η > 0; ``"tuned"`` (default) ``η = sqrt(2 ln K / (K T))``; ``"anytime"``
        ``η_t = sqrt(ln K / (K t))``.
    gamma : float or None
        The implicit exploration γ ≥ 0; None (default) is ``γ_t = η_t / 2``, Neu's choice.

    Notes
    -----
    * High probability (Neu 2015, Theorem 1; Lattimore & Szepesvári 2020, Theorem 12.1): with
      ``η = 2γ = sqrt(2 ln K / (K T))`` (the defaults), for every δ ∈ (0, 1), with probability at
      least 1 − δ the realized regret ``Σ_t ℓ_{t,I_t} − min_i L_{T,i}`` is at most
      ``2 sqrt(2 K T ln K) + (sqrt(2 K T / ln K) + 1) ln(2/δ)`` (:meth:`high_probability_bound`).
    * Expectation (declared as ``bound:regret``, every t, any schedule): with the Hedge inequality
      on the non-negative estimates, ``Σ_i p_{t,i} ℓ̂_{t,i} = ℓ_{t,I_t} − γ_t Σ_i ℓ̂_{t,i}``,
      ``p_{t,i} ℓ̂_{t,i}² ≤ ℓ̂_{t,i}`` and ``E[ℓ̂_{t,i}] ≤ ℓ_{t,i}``,
      ``E[R_t] ≤ ln K / η_t + Σ_{s≤t} (η_s/2 + γ_s) K`` (the proof of Lattimore & Szepesvári
      2020, Theorem 12.1, in expectation); anytime sums use ``Σ_{s≤t} s^{−1/2} ≤ 2√t − 1``.

    Examples
    --------
    >>> from arena import play
    >>> df = play(Exp3IX(), "bernoulli", n_actions=5, horizon=2000, replicates=4,
    ...           metrics={"regret": {}, "bound": {}})
    >>> last = df[df.t == 2000].groupby("metric").value.mean()
    >>> bool(last["regret"] <= last["bound:regret"])
    True

    References
    ----------
    Neu (2015), "Explore no more: improved high-probability regret bounds for non-stochastic
    bandits", NeurIPS, Theorem 1.
    Lattimore & Szepesvári (2020), *Bandit Algorithms*, Cambridge University Press, §12.1,
    Theorem 12.1.
    """

    tags = PlayerTags(protocols=frozenset({"bandit"}), block_kernel=True)
    parameter_constraints: ClassVar = {
        "eta": [Interval(0, None, closed="neither"), OneOf("tuned", "anytime")],
        "gamma": [Interval(0, None), IsNone()],
    }

    def __init__(self, eta: float | str = "tuned", gamma: float | None = None):
        self.eta = eta
        self.gamma = gamma

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        n_act = spec.n_actions
        log_k = math.log(n_act)
        self._mode, self._eta = exp3_rate(self, spec)
        self._gamma = -1.0 if self.gamma is None else float(self.gamma)
        self._log_k, self._n_act, self._horizon = log_k, n_act, spec.horizon
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._est = np.zeros((spec.n_replicates, n_act))
        self._rounds = 0

    def rates(self) -> tuple[float, float]:
        """Return ``(η_t, γ_t)`` for the next round."""
        e, g = _ix_rates(
            self._mode, self._eta, self._gamma, self._log_k, self._n_act, self._rounds + 1
        )
        return float(e), float(g)

    def predict(self) -> np.ndarray:
        return exp3_probs(self._est, self.rates()[0], 0.0)

    def update(self, actions: np.ndarray, losses: np.ndarray, probs: np.ndarray) -> None:
        rows = np.arange(actions.shape[0])
        gamma = self.rates()[1]
        unit = (np.asarray(losses, dtype=np.float64) - self._lo) / self._scale
        self._est[rows, actions] += unit / (probs[rows, actions] + gamma)
        self._rounds += 1

    play_block_out = True

    def play_block(
        self, losses: np.ndarray, uniforms: np.ndarray, out: np.ndarray | None = None
    ) -> np.ndarray:
        losses, uniforms = kernel_views(losses, uniforms)
        probs = np.empty_like(losses) if out is None else out
        _ix_play_block(
            losses,
            uniforms,
            self._est,
            self._rounds,
            self._mode,
            self._eta,
            self._gamma,
            self._log_k,
            self._lo,
            self._scale,
            probs,
        )
        self._rounds += losses.shape[1]
        return probs

    def estimates(self) -> np.ndarray:
        return self._est.copy()

    def estimate_expectation(self, losses: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """``E[ℓ̂_{t,i} | p_t] = p_{t,i} ℓ_{t,i} / (p_{t,i} + γ_t)``: biased down by design."""
        gamma = self.rates()[1]
        return np.asarray(probs) * np.asarray(losses) / (np.asarray(probs) + gamma)

    def bounds(self, t: int) -> dict[tuple[str, float], float]:
        """Declare the bound in expectation of the Notes after ``t`` rounds."""
        return {("regret", math.nan): self.regret_bound(t)}

    def regret_bound(self, t: int) -> float:
        """Return the proven bound on the expected regret after ``t`` rounds (see Notes)."""
        k, log_k = self._n_act, self._log_k
        if k == 1:
            return 0.0
        if self._mode == ANYTIME:
            eta_t = math.sqrt(log_k / (k * t))
            rate_sum = math.sqrt(log_k / k) * (2.0 * math.sqrt(t) - 1.0)  # ≥ Σ_s η_s
            gamma_sum = 0.5 * rate_sum if self._gamma < 0 else self._gamma * t
            bound = log_k / eta_t + k * (0.5 * rate_sum + gamma_sum)
        else:
            gamma = 0.5 * self._eta if self._gamma < 0 else self._gamma
            bound = log_k / self._eta + k * t * (0.5 * self._eta + gamma)
        return self._scale * bound

    def high_probability_bound(self, delta: float) -> float:
        """Neu 2015, Theorem 1: the bound on the realized regret after T rounds that holds with
        probability ≥ 1 − δ, for the defaults (``eta="tuned"``, ``gamma=None``) only."""
        if self.eta != "tuned" or self.gamma is not None:
            raise ValueError("Theorem 1 of Neu 2015 is stated for eta='tuned', gamma=None")
        if not 0.0 < delta < 1.0:
            raise ValueError(f"delta must lie in (0, 1), got {delta}")
        k, horizon, log_k = self._n_act, self._horizon, self._log_k
        if k == 1:
            return 0.0
        lead = 2.0 * math.sqrt(2.0 * k * horizon * log_k)
        tail = (math.sqrt(2.0 * k * horizon / log_k) + 1.0) * math.log(2.0 / delta)
        return self._scale * (lead + tail)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"eta": "anytime"}
        yield {"eta": 0.3, "gamma": 0.05}
