"""Statistics of the learner's distribution ``p_t`` at the checkpoint round: ``zero_weight_frac``
(Luo 2016, Figure 2.2) and ``entropy``."""

from __future__ import annotations

import math

import numpy as np

from arena.metrics.base import Core, ExpertsMetric, ExpertsRecord


def zero_weight_frac(probs: np.ndarray) -> float:
    """Fraction of experts with weight exactly 0 in the last distribution ``p_T``.

    Luo 2016, §2.2.1 and Figure 2.2 (the per-round fraction of zero weights).

    Parameters
    ----------
    probs : ndarray, shape (T, N)

    Returns
    -------
    float
    """
    last = np.asarray(probs, dtype=np.float64)[-1]
    return float(np.count_nonzero(last == 0.0) / last.size)


class ZeroWeightFraction(ExpertsMetric):
    """Fraction of experts with ``p_{t,i} = 0`` exactly, at the round (Luo 2016, Figure 2.2)."""

    name = "zero_weight_frac"
    rowwise_values = True

    def values(self, core: Core) -> np.ndarray:
        p = core.last_probs  # a count over N: the boolean mean's value, at a third of its cost
        return (np.count_nonzero(p == 0.0, axis=1) / p.shape[1])[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`zero_weight_frac`."""
        return zero_weight_frac(record.probs)


def entropy(probs: np.ndarray) -> float:
    """Shannon entropy ``−Σ_i p_{T,i} ln p_{T,i}`` (nats) of the last distribution, ``0 ln 0 = 0``.

    Parameters
    ----------
    probs : ndarray, shape (T, N)

    Returns
    -------
    float

    Examples
    --------
    >>> abs(entropy(np.array([[0.5, 0.5, 0.0]])) - math.log(2)) < 1e-15
    True
    """
    last = np.asarray(probs, dtype=np.float64)[-1]
    return float(-sum(p * math.log(p) for p in last.tolist() if p > 0.0))


class Entropy(ExpertsMetric):
    """Shannon entropy ``−Σ_i p_{t,i} ln p_{t,i}`` (nats) of ``p_t`` at the checkpoint round."""

    name = "entropy"
    rowwise_values = True

    def values(self, core: Core) -> np.ndarray:
        p = core.last_probs
        positive = p > 0
        # log(1) = 0 where p ≤ 0: no warning to silence (an errstate context cost a third)
        terms = np.where(positive, -p * np.log(np.where(positive, p, 1.0)), 0.0)
        return terms.sum(axis=1)[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`entropy`."""
        return entropy(record.probs)
