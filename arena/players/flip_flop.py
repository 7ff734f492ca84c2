"""FlipFlop: alternate Follow the Leader and AdaHedge by comparing their mixability gaps."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.experts.components import ExpertsPlayer
from arena.params import POSITIVE, Interval
from arena.players.ada_hedge import _gap_step, _mix, _rate
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

FTL, AH = 0, 1
"""Regime codes: Follow the Leader, AdaHedge."""


@njit(cache=True, nogil=True)
def _regime_rate(regime, gap_ah, log_n):
    return np.inf if regime == FTL else _rate(gap_ah, log_n)


@njit(cache=True, nogil=True)
def _flip_flop_round(cum, gaps, regime, u, log_n, phi_over_alpha, alpha, w, scratch):
    """Play one round on one replicate: fill ``w`` with p_t, advance the state, return the regime.

    ``gaps = [Δ^ftl, Δ^ah]``; the round's mixability gap goes to the current regime's total, then
    the regime flips when its total exceeds its multiple of the other's.
    """
    eta = _regime_rate(regime, gaps[AH], log_n)
    m0, ls0 = _mix(cum, eta, w)
    gaps[regime] += _gap_step(cum, u, eta, w, m0, ls0, scratch)[0]
    if regime == FTL:
        if gaps[FTL] > phi_over_alpha * gaps[AH]:
            return AH
    elif gaps[AH] > alpha * gaps[FTL]:
        return FTL
    return regime


@njit(cache=True, nogil=True)
def _flip_flop_probs(cum, gaps, regime, log_n, out):
    for r in range(cum.shape[0]):
        _mix(cum[r], _regime_rate(regime[r], gaps[r, AH], log_n), out[r])


@njit(cache=True, nogil=True)
def _flip_flop_update(cum, gaps, regime, log_n, phi_over_alpha, alpha, unit):
    n_act = cum.shape[1]
    w = np.empty(n_act)
    scratch = np.empty(n_act)
    for r in range(cum.shape[0]):
        regime[r] = _flip_flop_round(
            cum[r], gaps[r], regime[r], unit[r], log_n, phi_over_alpha, alpha, w, scratch
        )


@njit(cache=True, nogil=True)
def _flip_flop_play_block(
    losses, cum, gaps, regime, log_n, phi_over_alpha, alpha, lo, scale, probs
):
    """Play a chunk: ``probs[r, j]`` is p at the chunk's round j; the state advances."""
    n_rep, n, n_act = losses.shape
    u = np.empty(n_act)
    scratch = np.empty(n_act)
    for r in range(n_rep):
        for j in range(n):
            for i in range(n_act):
                u[i] = (losses[r, j, i] - lo) / scale
            regime[r] = _flip_flop_round(
                cum[r], gaps[r], regime[r], u, log_n, phi_over_alpha, alpha, probs[r, j], scratch
            )


class FlipFlop(ExpertsPlayer):
    """FlipFlop: Follow the Leader while it is cheap, AdaHedge when FTL starts to pay.

    Parameters
    ----------
    phi : float
        ``φ > 1``: how much larger than AdaHedge's gap FTL's gap may grow (relative to α) before
        switching to AdaHedge. Default 2.37, the paper's choice.
    alpha : float
        ``α > 0``: how much larger than FTL's gap AdaHedge's gap may grow before switching back to
        FTL. Default 1.243, the paper's choice.

    Notes
    -----
    Two cumulative mixability gaps are kept, ``Δ^ftl`` and ``Δ^ah`` (both 0 at the start), and the
    player starts in the FTL regime. Each round:

    * the rate is ``η_t = ∞`` in the FTL regime (``p_t`` uniform over ``argmin L_{t−1}``) and
      ``η_t = ln N / Δ^ah`` in the AdaHedge regime (also ∞ while ``Δ^ah = 0``);
    * ``p_{t,i} ∝ exp(−η_t L_{t−1,i})``; the round's mixability gap
      ``δ_t = p_t·ℓ_t − (M_{η_t}(L_t) − M_{η_t}(L_{t−1}))`` (as in
      :class:`arena.players.ada_hedge.AdaHedge`, rounding-level values counted as 0; at η = ∞ it is
      ``p_t·ℓ_t − (min L_t − min L_{t−1})``) is added to the current regime's gap;
    * then the FTL regime switches to AdaHedge when ``Δ^ftl > (φ/α) Δ^ah``, and the AdaHedge
      regime switches to FTL when ``Δ^ah > α Δ^ftl``.

    Losses are mapped to [0, 1] with the declared range; like AdaHedge, the weights are invariant
    to translating (per round) and rescaling the losses.

    Guarantee: de Rooij et al. (2014) prove ``R_ff ≤ min{c₁ R_ftl + c₂, c₃ R_ah + c₄}`` for
    constants depending on (φ, α). Those constants could not be confirmed from the paper here,
    so no bound is declared. The tests
    check the behaviour the paper promises instead: O(√T) regret on the FTL killer (like AdaHedge)
    and bounded regret on stochastic data with a gap (like FTL).

    Examples
    --------
    >>> from arena import play
    >>> df = play(FlipFlop(), "ftl_killer", n_actions=2, horizon=1000, metrics={"regret": {}})
    >>> bool(df.value.iloc[-1] < 2 * math.sqrt(1000 * math.log(2)))
    True

    References
    ----------
    de Rooij, van Erven, Grünwald & Koolen (2014), "Follow the Leader If You Can, Hedge If You
    Must", JMLR 15, §3 (FlipFlop, with φ = 2.37 and α = 1.243). The regime structure, the
    thresholds ``[φ/α, α]`` and the default values are those of the Python port in
    ``geflaspohler/poold:poold/learners/learners.py`` (class ``FlipFlop``); that port compares
    ``Δ^regime > threshold + Δ^other``, whereas the paper (each regime lasts while its own
    mixability gap stays below a multiple of the other's) multiplies: we follow the paper.
    """

    tags = PlayerTags(protocols=frozenset({"experts"}), block_kernel=True)
    parameter_constraints: ClassVar = {
        "phi": [Interval(1, None, closed="neither")],
        "alpha": [POSITIVE],
    }

    def __init__(self, phi: float = 2.37, alpha: float = 1.243):
        self.phi = phi
        self.alpha = alpha

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        phi, alpha = float(self.phi), float(self.alpha)
        self._phi_over_alpha = phi / alpha
        self._alpha = alpha
        self._log_n = math.log(spec.n_actions)
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._cum = np.zeros((spec.n_replicates, spec.n_actions))
        self._gaps = np.zeros((spec.n_replicates, 2))
        self._regime = np.full(spec.n_replicates, FTL, dtype=np.int64)

    def regime(self) -> np.ndarray:
        """Return the regime of the next round per replicate: 0 = FTL, 1 = AdaHedge."""
        return self._regime.copy()

    def mixability_gaps(self) -> np.ndarray:
        """Return ``(Δ^ftl, Δ^ah)`` per replicate, shape (R, 2), in raw loss units."""
        return self._scale * self._gaps

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        out = np.empty_like(self._cum)
        _flip_flop_probs(self._cum, self._gaps, self._regime, self._log_n, out)
        return out

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        unit = (np.asarray(losses, dtype=np.float64) - self._lo) / self._scale
        _flip_flop_update(
            self._cum,
            self._gaps,
            self._regime,
            self._log_n,
            self._phi_over_alpha,
            self._alpha,
            unit,
        )

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        probs = np.empty_like(losses)
        _flip_flop_play_block(
            losses,
            self._cum,
            self._gaps,
            self._regime,
            self._log_n,
            self._phi_over_alpha,
            self._alpha,
            self._lo,
            self._scale,
            probs,
        )
        return probs

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"phi": 3.0, "alpha": 0.5}
