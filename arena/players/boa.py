"""BOA: Bernstein Online Aggregation with one adaptive learning rate per expert."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.experts.components import ExpertsPlayer
from arena.params import POSITIVE, IsNone, ListOf, expert_prior
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

VARIANCE_FACTOR = 2.2
"""``E_k = Σ_s 2.2 r²_{k,s}``: the constant of opera's ``R/BOA.R`` (Gaillard & Goude)."""


@njit(cache=True, nogil=True)
def _boa_probs_row(var, reg, log_pi, pi, out):
    """opera's weights: experts with ``E_k > 0`` share their prior mass in proportion to
    ``π_k E_k^{−1/2} exp(R̃_k/√E_k)``; experts with ``E_k = 0`` keep ``π_k``."""
    n = var.size
    mx = -np.inf
    mass = 0.0
    for i in range(n):
        if var[i] > 0.0:
            v = log_pi[i] - 0.5 * math.log(var[i]) + reg[i] / math.sqrt(var[i])
            out[i] = v
            mass += pi[i]
            if v > mx:
                mx = v
    s = 0.0
    for i in range(n):
        if var[i] > 0.0:
            out[i] = math.exp(out[i] - mx)
            s += out[i]
    total = 0.0
    for i in range(n):
        out[i] = mass * out[i] / s if var[i] > 0.0 else pi[i]
        total += out[i]
    for i in range(n):
        out[i] /= total


@njit(cache=True, nogil=True)
def _boa_update_row(var, reg, p, u):
    """``r_k = ℓ̂ − u_k`` (``ℓ̂ = min u + p·(u − min u)``), ``E_k += 2.2 r_k²``, and where
    ``E_k > 0``: ``R̃_k += r_k − r_k²/√E_k`` (with the updated ``E_k``)."""
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
        var[i] += VARIANCE_FACTOR * r * r
        if var[i] > 0.0:
            reg[i] += r - r * r / math.sqrt(var[i])


@njit(cache=True, nogil=True)
def _boa_probs(var, reg, log_pi, pi, out):
    for r in range(var.shape[0]):
        _boa_probs_row(var[r], reg[r], log_pi, pi, out[r])


@njit(cache=True, nogil=True)
def _boa_update(var, reg, log_pi, pi, unit):
    p = np.empty(var.shape[1])
    for r in range(var.shape[0]):
        _boa_probs_row(var[r], reg[r], log_pi, pi, p)
        _boa_update_row(var[r], reg[r], p, unit[r])


@njit(cache=True, nogil=True)
def _boa_play_block(losses, var, reg, log_pi, pi, lo, scale, probs):
    """Play a chunk: ``probs[r, j]`` is p at the chunk's round j; the state advances."""
    n_rep, n, n_act = losses.shape
    u = np.empty(n_act)
    for r in range(n_rep):
        for j in range(n):
            _boa_probs_row(var[r], reg[r], log_pi, pi, probs[r, j])
            for i in range(n_act):
                u[i] = (losses[r, j, i] - lo) / scale
            _boa_update_row(var[r], reg[r], probs[r, j], u)


class BOA(ExpertsPlayer):
    """BOA with per-expert rates: ``p_k ∝ π_k E_k^{−1/2} exp(R̃_k/√E_k)``, ``E_k = 2.2 Σ r²_k``.

    Parameters
    ----------
    pi : list of float, optional
        Prior masses on the experts (positive, normalized here); None is uniform.

    Notes
    -----
    With unit-range losses ``u_t`` (the declared range mapped to [0, 1]) and instantaneous regrets
    ``r_{k,t} = ℓ̂_t − u_{t,k}`` (``ℓ̂_t = p_t·u_t``, computed as ``min u_t + p_t·(u_t − min u_t)`` so
    that a round where all experts have the same loss gives ``r = 0`` exactly), after each round

    * ``E_k ← E_k + 2.2 r_k²`` (the inverse squared rate, ``η_k = 1/√E_k``);
    * if ``E_k > 0``: ``R̃_k ← R̃_k + r_k − r_k²/√E_k`` (the updated ``E_k``; the second-order
      "Bernstein" correction ``η_k r_k²``).

    The prediction gives the experts with ``E_k > 0`` their total prior mass, split in proportion
    to ``π_k E_k^{−1/2} exp(R̃_k/√E_k) = π_k η_k e^{η_k R̃_k}`` (computed as a softmax in logs), and
    leaves ``π_k`` on each expert with ``E_k = 0`` (all of them at t = 1: ``p_1 = π``). This is
    opera's rule (the paper states the weights for ``E_k > 0`` only).

    Guarantee: second-order regret bounds ``R_{T,k} = O(√((ln N + ln ln T) Σ_t r²_{k,t}) + ...)``
    and fast rates for exp-concave losses (Wintenberger 2017): O-forms only, so no numeric bound
    is declared. Invariant to per-round shifts of the losses (only ``r`` enters), and, once every
    ``E_k > 0``, to rescaling them (``η_k R̃_k`` is scale-free and ``E_k^{−1/2}`` scales all
    experts alike). A rate ``1/√E_k`` reacts to the *relative* size of an expert's regrets, so an
    expert whose regrets are all tiny but non-zero gets a large weight: that is the algorithm.

    Examples
    --------
    >>> from arena import play
    >>> df = play(BOA(), "bernoulli", n_actions=5, horizon=2000,
    ...           adversary_params={"gap": 0.2}, metrics={"regret": {}})
    >>> bool(df.value.iloc[-1] < 30)
    True

    References
    ----------
    Wintenberger (2017), "Optimal learning with Bernstein online aggregation", Machine Learning
    106 (BOA with multiple learning rates). The update and the constant 2.2 follow
    ``Dralliag/opera:R/BOA.R`` (``loss.gradient = FALSE``, i.e. plain expert losses).
    """

    tags = PlayerTags(protocols=frozenset({"experts"}), block_kernel=True)
    parameter_constraints: ClassVar = {"pi": [ListOf(POSITIVE), IsNone()]}

    def __init__(self, pi: list[float] | None = None):
        self.pi = pi

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._pi = expert_prior(self, "pi", spec.n_actions)
        self._log_pi = np.log(self._pi)
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._var = np.zeros((spec.n_replicates, spec.n_actions))
        self._reg = np.zeros((spec.n_replicates, spec.n_actions))

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        out = np.zeros_like(self._var)
        _boa_probs(self._var, self._reg, self._log_pi, self._pi, out)
        return out

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        unit = (np.asarray(losses, dtype=np.float64) - self._lo) / self._scale
        _boa_update(self._var, self._reg, self._log_pi, self._pi, unit)

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        probs = np.zeros_like(losses)
        _boa_play_block(
            losses, self._var, self._reg, self._log_pi, self._pi, self._lo, self._scale, probs
        )
        return probs

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"pi": [0.6, 0.3, 0.1]}
