"""Regret Matching (RM) and Regret Matching⁺ (RM⁺): play in proportion to the positive regrets."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.experts.components import ExpertsPlayer
from arena.params import OneOf
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

VARIANTS = ("rm", "rm_plus")


def regret_matching_probs(regrets: np.ndarray) -> np.ndarray:
    """Return ``p_i ∝ [R_i]_+`` row-wise, and the uniform distribution where every ``R_i ≤ 0``.

    Examples
    --------
    >>> regret_matching_probs(np.array([[1.0, -2.0, 3.0], [-1.0, 0.0, -5.0]])).tolist()
    [[0.25, 0.0, 0.75], [0.3333333333333333, 0.3333333333333333, 0.3333333333333333]]
    """
    pos = np.maximum(regrets, 0.0)
    total = pos.sum(axis=-1, keepdims=True)
    uniform = np.full_like(pos, 1.0 / pos.shape[-1])
    safe = np.where(total > 0.0, total, 1.0)
    return np.where(total > 0.0, pos / safe, uniform)


@njit(cache=True, nogil=True)
def _rm_play_block(losses, cum, plus, lo, scale, probs):
    """Fill ``probs`` with RM's (``plus`` False) or RM⁺'s distributions for a chunk; ``cum``
    (the regrets R, or RM⁺'s clipped Q, on unit-range losses) advances over the chunk.

    Each unit-range loss ``(l − lo)/scale`` is computed once per round and expert, and not at all
    for the unit range itself (``(l − 0)/1`` is ``l``, bit for bit): a division costs more than
    the rest of an expert's round.
    """
    n_rep, n, n_act = losses.shape
    unit = lo == 0.0 and scale == 1.0
    z = np.empty(n_act)
    for r in range(n_rep):
        for j in range(n):
            s = 0.0
            for i in range(n_act):
                c = cum[r, i]
                s += c if c > 0.0 else 0.0  # + 0.0 leaves s as it is (s ≥ +0.0)
            if s > 0.0:
                for i in range(n_act):
                    c = cum[r, i]
                    probs[r, j, i] = c / s if c > 0.0 else 0.0
            else:
                for i in range(n_act):
                    probs[r, j, i] = 1.0 / n_act
            mean = 0.0
            for i in range(n_act):
                zi = losses[r, j, i] if unit else (losses[r, j, i] - lo) / scale
                z[i] = zi
                mean += probs[r, j, i] * zi
            for i in range(n_act):
                c = cum[r, i] + (mean - z[i])
                if plus:
                    c = 0.0 if c < 0.0 else c
                cum[r, i] = c


class RegretMatching(ExpertsPlayer):
    """Regret Matching (Hart & Mas-Colell 2000) and Regret Matching⁺ (Tammelin 2014).

    With the instantaneous regrets ``r_{t,i} = p_t·l̃_t − l̃_{t,i}`` on the losses mapped to
    [0, 1] (``l̃ = (l − lo)/(hi − lo)`` for the declared range ``[lo, hi]``):

    * ``"rm"``: the cumulative regrets ``R_{t,i} = Σ_{s≤t} r_{s,i}``, ``p_{t,i} ∝ [R_{t−1,i}]_+``;
    * ``"rm_plus"``: the clipped recursion ``Q_{t,i} = max(0, Q_{t−1,i} + r_{t,i})``, ``Q_0 = 0``,
      and ``p_{t,i} ∝ Q_{t−1,i}``;

    in both, ``p_t`` is uniform when no entry is positive (round 1 included).

    Parameters
    ----------
    variant : {"rm", "rm_plus"}
        Regret Matching (default) or Regret Matching⁺.

    Notes
    -----
    **Guarantee.** For every loss sequence in ``[lo, hi]^N`` (adaptive adversaries included) both
    variants satisfy ``max_i R_{t,i} ≤ (hi − lo) sqrt(N t)`` on the expected regret, declared by
    :meth:`bounds`. For RM this is the polynomially weighted average forecaster with ``p = 2``
    (Cesa-Bianchi & Lugosi 2006, §2.1, Corollary 2.1: ``sqrt(t (p − 1) N^{2/p})``), whose
    potential argument is Blackwell's approachability condition; for RM⁺ it is the regret bound
    of regret-matching⁺ in Tammelin, Burch, Johanson & Bowling 2015 (§3). Both follow in three
    lines, which the tests check as invariants on every run: ``p_t ∝ [R_{t−1}]_+`` (resp.
    ``Q_{t−1}``) and ``p_t·r_t = 0`` give ``[R_{t−1}]_+·r_t = 0`` (resp. ``Q_{t−1}·r_t = 0``), so

    * RM: ``‖[R_t]_+‖² ≤ ‖[R_{t−1}]_+ + r_t‖² ≤ ‖[R_{t−1}]_+‖² + ‖r_t‖²``;
    * RM⁺: ``‖Q_t‖² ≤ ‖Q_{t−1} + r_t‖² = ‖Q_{t−1}‖² + ‖r_t‖²`` and ``R_{t,i} ≤ Q_{t,i}`` by
      induction (``Q_t ≥ Q_{t−1} + r_t``);

    hence ``max_i R_{t,i} ≤ sqrt(Σ_{s≤t} ‖r_s‖²₂) ≤ sqrt(N t)`` on unit-range losses, since
    ``|r_{s,i}| ≤ 1``.

    **Invariances.** ``p_t`` depends on the losses only through the regrets, so it is unchanged by
    a per-round shift ``l_t → l_t + c_t 1`` and by a rescaling ``l → c l`` (c > 0: the regrets are
    multiplied by c, the normalized positive part is not); permuting the experts permutes
    ``p_t``. Neither rule has a parameter, so the bound holds without the horizon.

    RM is the unconditional (external-regret) form of Hart & Mas-Colell's regret-matching
    procedure; in self-play on a zero-sum matrix game the average strategies of two RM (or RM⁺)
    players form an ε-equilibrium with ε → 0 at the rate of the bound above (Freund & Schapire
    1999; see ``arena.adversaries.matrix_game``).

    Examples
    --------
    >>> from arena import play
    >>> df = play(RegretMatching("rm_plus"), "ftl_killer", n_actions=2, horizon=1000,
    ...           metrics={"regret": {}})
    >>> bool(df.value.iloc[-1] <= math.sqrt(2 * 1000))
    True

    References
    ----------
    Hart & Mas-Colell (2000), "A simple adaptive procedure leading to correlated equilibrium",
    Econometrica 68(5). Cesa-Bianchi & Lugosi (2006), §2.1, Corollary 2.1. Tammelin (2014),
    arXiv:1407.5042. Tammelin, Burch, Johanson & Bowling (2015), IJCAI.
    """

    tags = PlayerTags(protocols=frozenset({"experts"}), block_kernel=True)
    parameter_constraints: ClassVar = {"variant": [OneOf(*VARIANTS)]}

    def __init__(self, variant: str = "rm"):
        self.variant = variant

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._plus = self.variant == "rm_plus"
        self._n = spec.n_actions
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._cum = np.zeros((spec.n_replicates, spec.n_actions))

    def regrets(self) -> np.ndarray:
        """Return the state (R,N): RM's cumulative regrets ``R_t`` or RM⁺'s clipped ``Q_t``."""
        return self._cum.copy()

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        return regret_matching_probs(self._cum)

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        unit = (losses - self._lo) / self._scale
        p = regret_matching_probs(self._cum)
        self._cum += (p * unit).sum(axis=-1, keepdims=True) - unit
        if self._plus:
            np.maximum(self._cum, 0.0, out=self._cum)

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        probs = np.empty_like(losses)
        _rm_play_block(losses, self._cum, self._plus, self._lo, self._scale, probs)
        return probs

    def bounds(self, t: int) -> dict[tuple[str, float], float]:
        """Declare ``R_t ≤ (hi − lo) sqrt(N t)`` on the expected regret (see Notes)."""
        return {("regret", math.nan): self.regret_bound(t)}

    def regret_bound(self, t: int) -> float:
        """Return ``(hi − lo) sqrt(N t)``, the proven bound after ``t`` rounds (see Notes)."""
        return self._scale * math.sqrt(self._n * t) if self._n > 1 else 0.0

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"variant": "rm_plus"}
