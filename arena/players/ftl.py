"""Follow the Leader: all weight on the experts with the least cumulative loss."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.experts.components import ExpertsPlayer
from arena.params import OneOf
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

TIE_RTOL = 1e-12
"""Experts within ``TIE_RTOL·max(1, |min L|)`` of the least cumulative loss count as leaders."""


def ftl_probs(cum_losses: np.ndarray, lowest: bool) -> np.ndarray:
    """Return FTL's distribution row-wise: uniform on the leaders, or the lowest-index leader.

    Examples
    --------
    >>> ftl_probs(np.array([[1.0, 0.0, 0.0]]), lowest=False).tolist()
    [[0.0, 0.5, 0.5]]
    """
    m = cum_losses.min(axis=-1, keepdims=True)
    leaders = cum_losses - m <= TIE_RTOL * np.maximum(1.0, np.abs(m))
    if lowest:
        first = leaders.argmax(axis=-1)
        out = np.zeros_like(cum_losses)
        np.put_along_axis(out, first[..., None], 1.0, axis=-1)
        return out
    return leaders / leaders.sum(axis=-1, keepdims=True)


@njit(cache=True, nogil=True)
def _ftl_play_block(losses, cum, lowest, probs):
    n_rep, n, n_act = losses.shape
    for r in range(n_rep):
        for j in range(n):
            m = np.inf
            for i in range(n_act):
                if cum[r, i] < m:
                    m = cum[r, i]
            tol = TIE_RTOL * max(1.0, abs(m))
            count = 0
            for i in range(n_act):
                lead = cum[r, i] - m <= tol
                if lowest and count > 0:
                    lead = False
                probs[r, j, i] = 1.0 if lead else 0.0
                if lead:
                    count += 1
            for i in range(n_act):
                probs[r, j, i] /= count
                cum[r, i] += losses[r, j, i]


class FollowTheLeader(ExpertsPlayer):
    """Follow the Leader (FTL): ``p_t`` uniform on ``argmin_i L_{t−1,i}``.

    Parameters
    ----------
    tie_break : {"uniform", "lowest"}
        Spread the weight uniformly over tied leaders (default) or put it all on the lowest index.

    Notes
    -----
    FTL has O(1) expected regret on i.i.d. losses with a unique best mean but linear worst-case
    regret: on ``ftl_killer`` its regret is exactly ``T/2 − 1/4`` with uniform tie-break and
    ``T/2`` with the lowest-index rule (a direct computation). Ties are exact up to a relative
    ``1e-12`` so that rounding in cumulative sums does not split a tie.

    Examples
    --------
    >>> from arena import play
    >>> df = play("ftl", "ftl_killer", n_actions=2, horizon=10, metrics={"regret": {}})
    >>> float(df.value.iloc[-1])
    4.75

    References
    ----------
    Kalai & Vempala (2005); Cesa-Bianchi & Lugosi (2006) §3.2; de Rooij et al. (2014) JMLR.
    """

    tags = PlayerTags(protocols=frozenset({"experts"}), block_kernel=True)
    parameter_constraints: ClassVar = {"tie_break": [OneOf("uniform", "lowest")]}

    def __init__(self, tie_break: str = "uniform"):
        self.tie_break = tie_break

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._lowest = self.tie_break == "lowest"
        self._cum = np.zeros((spec.n_replicates, spec.n_actions))

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        return ftl_probs(self._cum, self._lowest)

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        self._cum += losses

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        probs = np.empty_like(losses)
        _ftl_play_block(losses, self._cum, self._lowest, probs)
        return probs

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"tie_break": "lowest"}
