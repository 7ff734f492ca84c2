"""Optimistic gradient descent on the simplex: optimistic mirror descent, Euclidean regularizer."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.errors import ConfigError
from arena.experts.components import ExpertsPlayer
from arena.oco.domains import project_simplex, project_simplex_row
from arena.params import Interval, OneOf
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views


def optimistic_gd_probs(center: np.ndarray, hint: np.ndarray, eta: float) -> np.ndarray:
    """Return ``f = Π_Δ(g − η m)`` row-wise: the Euclidean projection onto the simplex of the
    secondary iterate ``g`` moved against the hint ``m``.

    Examples
    --------
    >>> optimistic_gd_probs(np.array([[0.5, 0.5]]), np.array([[0.0, 1.0]]), 0.25)
    array([[0.625, 0.375]])
    """
    return project_simplex(center - eta * hint)


@njit(cache=True, nogil=True)
def _project_rows(v, out):
    """Project each row of ``v`` onto the simplex into ``out`` (the per-round path: one call per
    round for all replicates, where self-play spends its time)."""
    for r in range(v.shape[0]):
        project_simplex_row(v[r], out[r])


@njit(cache=True, nogil=True)
def _optimistic_gd_play_block(losses, center, last, sq, eta, lo, scale, probs):
    """Fill ``probs`` with ``f_t = Π(g_{t−1} − η m_t)`` for each round of a chunk, hint
    ``m_t = l̃_{t−1}`` (``last``); then advance ``center`` (``g_t = Π(g_{t−1} − η l̃_t)``),
    ``last`` and ``sq`` (``Σ_t ‖l̃_t − m_t‖²₂``) by the round's unit-range losses ``l̃_t``."""
    n_rep, n, n_act = losses.shape
    moved = np.empty(n_act)
    unit = np.empty(n_act)
    for r in range(n_rep):
        for j in range(n):
            for i in range(n_act):
                moved[i] = center[r, i] - eta * last[r, i]
            project_simplex_row(moved, probs[r, j])
            err = 0.0
            for i in range(n_act):
                u = (losses[r, j, i] - lo) / scale
                d = u - last[r, i]
                err += d * d
                unit[i] = u
                moved[i] = center[r, i] - eta * u
            sq[r] += err
            project_simplex_row(moved, center[r])
            for i in range(n_act):
                last[r, i] = unit[i]


class OptimisticGD(ExpertsPlayer):
    """Optimistic gradient descent on the simplex, with the last loss vector as the hint.

    Optimistic Mirror Descent (Rakhlin & Sridharan 2013) with the Euclidean regularizer
    ``½‖x‖²₂`` on the probability simplex Δ: two projected gradient steps from a secondary
    iterate ``g``, one with the hint ``m_t`` (played) and one with the loss (kept),

        ``f_t = Π_Δ(g_{t−1} − η m_t)`` (played: ``p_t = f_t``),
        ``g_t = Π_Δ(g_{t−1} − η l̃_t)``,

    with ``g_0`` uniform, ``m_t = l̃_{t−1}`` (``m_1 = 0``, so ``p_1`` is uniform), Π_Δ the
    Euclidean projection onto Δ (by sorting; Shalev-Shwartz 2007, Figure 7.1) and the losses
    mapped to [0, 1] with the declared range ``[lo, hi]`` first. With the entropy in place of
    ``½‖x‖²`` the same two steps are Optimistic Hedge (``optimistic_hedge``); in a zero-sum game
    both players running this rule is the projected optimistic gradient descent-ascent (OGDA)
    of Wei, Lee, Zhang & Luo (2021).

    Parameters
    ----------
    eta : float or "tuned"
        A fixed step η > 0, or ``"tuned"`` (default): ``η = sqrt((1 − 1/N)/(N T))`` from the
        horizon, which minimizes the worst case of the bound below.

    Notes
    -----
    **Guarantee.** For every loss sequence (adaptive adversaries included), on unit-range losses,

        ``R_T ≤ (1 − 1/N)/(2η) + (η/2) Σ_{t≤T} ‖l̃_t − m_t‖²₂``.

    Proof (the optimistic mirror-descent argument of Rakhlin & Sridharan 2013 for ``½‖x‖²``):
    the projections satisfy ``⟨η l̃_t, g_t − u⟩ ≤ ½‖u − g_{t−1}‖² − ½‖u − g_t‖² −
    ½‖g_t − g_{t−1}‖²`` for every ``u ∈ Δ`` and ``⟨η m_t, f_t − g_t⟩ ≤ ½‖g_t − g_{t−1}‖² −
    ½‖g_t − f_t‖² − ½‖f_t − g_{t−1}‖²`` (first-order optimality of a projection and the
    three-point identity); adding them to ``η⟨l̃_t − m_t, f_t − g_t⟩ ≤ (η²/2)‖l̃_t − m_t‖² +
    ½‖f_t − g_t‖²`` bounds ``η⟨l̃_t, f_t − u⟩`` by a telescoping term plus
    ``(η²/2)‖l̃_t − m_t‖²``; summing, ``u`` a vertex and ``g_0`` uniform give
    ``‖u − g_0‖² = 1 − 1/N``. :meth:`bounds` declares it with the run's own hint errors, times
    ``hi − lo``, on the expected regret. Since ``‖l̃_t − m_t‖²₂ ≤ N``, ``"tuned"`` gives
    ``R_T ≤ sqrt((N − 1) T)``; on a constant loss sequence every term after the first vanishes.

    **Self-play** (``matrix_game`` with ``opponent="self"``). Keeping the ``−¼‖g_t − f_t‖² −
    ½‖f_t − g_{t−1}‖²`` terms (with ``η‖d‖‖f − g‖ ≤ η²‖d‖² + ¼‖f − g‖²`` instead) gives the RVU
    form ``R_T ≤ (1 − 1/N)/(2η) + η Σ_t ‖l̃_t − m_t‖² − (1/(8η)) Σ_{t≥2} ‖p_t − p_{t−1}‖²``
    (Syrgkanis, Agarwal, Luo & Schapire 2015, the RVU property). In a zero-sum game with
    rescaled loss matrix ``Ã = A/(a_max − a_min)`` the row player's hint error is
    ``Ã(q_t − q_{t−1})``, the column player's ``Ãᵀ(p_t − p_{t−1})``, so for
    ``η ≤ 1/(√8 ‖Ã‖₂)`` the variation terms cancel in the sum of the two regrets, and the
    duality gap of the averages is at most ``(a_max − a_min)·C/t`` at every round t, with
    ``C = (2 − 1/N − 1/M)/(2η) + η(‖l̃_1‖² + ‖c̃_1‖²)``: an O(1/T) rate for a constant η, where
    plain no-regret dynamics guarantee O(1/√T) (Rakhlin & Sridharan 2013; Syrgkanis et al.
    2015). The tests check this bound on self-play runs.

    Examples
    --------
    >>> from arena import play
    >>> df = play(OptimisticGD(eta=0.5), "ftl_killer", n_actions=2, horizon=1000,
    ...           metrics={"regret": {}, "bound": {}})
    >>> regret = df[df.metric == "regret"].value.iloc[-1]
    >>> bool(regret <= df[df.metric == "bound:regret"].value.iloc[-1])
    True

    References
    ----------
    Rakhlin & Sridharan (2013), "Optimization, learning, and games with predictable sequences",
    NeurIPS. Syrgkanis, Agarwal, Luo & Schapire (2015), "Fast convergence of regularized learning
    in games", NeurIPS. Wei, Lee, Zhang & Luo (2021), "Linear last-iterate convergence in
    constrained saddle-point optimization", ICLR. Shalev-Shwartz (2007), PhD thesis, Figure 7.1.
    """

    tags = PlayerTags(protocols=frozenset({"experts"}), block_kernel=True)
    parameter_constraints: ClassVar = {"eta": [Interval(0, None, closed="neither"), OneOf("tuned")]}

    def __init__(self, eta: float | str = "tuned"):
        self.eta = eta

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        n = spec.n_actions
        self._spread = 1.0 - 1.0 / n  # ‖vertex − uniform‖²₂
        if isinstance(self.eta, str):
            if spec.horizon is None:
                raise ConfigError(self.label(), "eta", "'tuned' needs the horizon; give a number")
            # N = 1: the simplex is one point, any step plays it
            eta = math.sqrt(self._spread / (n * spec.horizon)) if n > 1 else 1.0
        else:
            eta = float(self.eta)
        self._eta = eta
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        shape = (spec.n_replicates, n)
        self._center = np.full(shape, 1.0 / n)
        self._last = np.zeros(shape)
        self._sq = np.zeros(spec.n_replicates)

    def learning_rate(self) -> float:
        """Return the step η in use."""
        return self._eta

    def hint_errors(self) -> np.ndarray:
        """Return ``Σ_t ‖l̃_t − m_t‖²₂`` over the rounds played, shape (R,), unit-range losses."""
        return self._sq.copy()

    def center(self) -> np.ndarray:
        """Return the secondary iterate ``g_t`` (R, N) the next step starts from."""
        return self._center.copy()

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        # optimistic_gd_probs, with the compiled projection of the block kernel
        out = np.empty_like(self._center)
        _project_rows(self._center - self._eta * self._last, out)
        return out

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        unit = (losses - self._lo) / self._scale
        self._sq += ((unit - self._last) ** 2).sum(axis=-1)
        _project_rows(self._center - self._eta * unit, self._center)
        self._last = unit.copy()

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        probs = np.empty_like(losses)
        _optimistic_gd_play_block(
            losses, self._center, self._last, self._sq, self._eta, self._lo, self._scale, probs
        )
        return probs

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare ``(hi − lo)((1 − 1/N)/(2η) + (η/2) Σ_{s≤t} ‖l̃_s − m_s‖²₂)`` on the expected
        regret after ``t`` rounds (the rounds played so far; see Notes)."""
        return {("regret", math.nan): self.regret_bound()}

    def regret_bound(self) -> np.ndarray:
        """Return the bound of the Notes for the rounds played so far, shape (R,)."""
        if self._spread == 0.0:
            return np.zeros_like(self._sq)  # N = 1: nothing to regret
        return self._scale * (self._spread / (2.0 * self._eta) + 0.5 * self._eta * self._sq)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"eta": 0.3}
