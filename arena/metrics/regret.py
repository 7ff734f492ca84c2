"""The cumulative losses and regrets read straight off the running totals: ``loss``,
``realized_loss``, ``regret`` (to the best fixed expert), ``realized_regret`` and
``dynamic_regret`` (to the per-round best expert), Luo 2016, Chapter 2. Notation as in
:mod:`arena.metrics`."""

from __future__ import annotations

import numpy as np

from arena.metrics.base import Core, ExpertsMetric, ExpertsRecord
from arena.metrics.literal import check_history, check_losses, learner_losses, realized_losses


def loss(probs: np.ndarray, losses: np.ndarray) -> float:
    """Cumulative expected loss ``Ĥ_T = Σ_t p_t·l_t`` (the learner's loss ``p_t·ℓ_t`` of Luo 2016).

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)

    Returns
    -------
    float

    Examples
    --------
    >>> loss(np.array([[0.5, 0.5], [1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]))
    0.5
    """
    probs, losses = check_history(probs, losses)
    return float(learner_losses(probs, losses).sum())


class Loss(ExpertsMetric):
    """Cumulative expected loss ``Ĥ_t = Σ_{s≤t} p_s·l_s``.

    Examples
    --------
    >>> from arena import play
    >>> df = play("ftl", "ftl_killer", n_actions=2, horizon=4, metrics={"loss": {}})
    >>> float(df[df.t == 4].value.iloc[0])  # ¼ in round 1 (a tie), then 1 per round
    3.25
    """

    name = "loss"
    rowwise_values = True

    def values(self, core: Core) -> np.ndarray:
        return core.learner[:, None].copy()

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`loss`."""
        return loss(record.probs, record.losses)


def realized_loss(losses: np.ndarray, actions: np.ndarray) -> float:
    """Cumulative realized loss ``Σ_t l_{t, I_t}`` of the drawn actions (Luo 2016, §2.1.5).

    Parameters
    ----------
    losses : ndarray, shape (T, N)
    actions : ndarray of int, shape (T,)

    Returns
    -------
    float
    """
    losses = check_losses(losses)
    return float(realized_losses(losses, actions).sum())


class RealizedLoss(ExpertsMetric):
    """Cumulative realized loss ``Σ_{s≤t} l_{s,I_s}`` with ``I_s ~ p_s`` drawn by the arena."""

    name = "realized_loss"
    rowwise_values = True

    def values(self, core: Core) -> np.ndarray:
        return core.realized[:, None].copy()

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`realized_loss`."""
        return realized_loss(record.losses, record.actions)


def regret(probs: np.ndarray, losses: np.ndarray) -> float:
    """External regret ``Ĥ_T − min_i L_{T,i}`` to the best fixed expert.

    Luo 2016, Chapter 1 and §2.3 (``max_i R_{T,i}``). Computed as the largest of the per-expert
    regrets ``R_{T,i}``.

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)

    Returns
    -------
    float
    """
    probs, losses = check_history(probs, losses)
    learner = learner_losses(probs, losses).sum()
    per_expert = learner - losses.sum(axis=0)  # R_{T,i}
    return float(per_expert.max())


class Regret(ExpertsMetric):
    """Expected regret to the best fixed expert, ``Ĥ_t − min_i L_{t,i} = max_i R_{t,i}``.

    References
    ----------
    Luo 2016, Chapter 1 and §2.3 (``R(u)`` at point masses).
    """

    name = "regret"
    rowwise_values = True

    def values(self, core: Core) -> np.ndarray:
        # numpy's ufunc directly: ndarray.min's Python wrapper was a fifth of a one-replicate
        # checkpoint's cost (the same reduction, the same value)
        return (core.learner - np.minimum.reduce(core.cum_losses, axis=1))[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`regret`."""
        return regret(record.probs, record.losses)


def realized_regret(losses: np.ndarray, actions: np.ndarray) -> float:
    """Realized regret ``Σ_t l_{t,I_t} − min_i L_{T,i}`` (Luo 2016, §2.1.5).

    Parameters
    ----------
    losses : ndarray, shape (T, N)
    actions : ndarray of int, shape (T,)

    Returns
    -------
    float
    """
    losses = check_losses(losses)
    return float(realized_losses(losses, actions).sum() - losses.sum(axis=0).min())


class RealizedRegret(ExpertsMetric):
    """Realized regret ``Σ_s l_{s,I_s} − min_i L_{t,i}`` (a random variable; Luo 2016, §2.1.5)."""

    name = "realized_regret"
    rowwise_values = True

    def values(self, core: Core) -> np.ndarray:
        return (core.realized - core.cum_losses.min(axis=1))[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`realized_regret`."""
        return realized_regret(record.losses, record.actions)


def dynamic_regret(probs: np.ndarray, losses: np.ndarray) -> float:
    """Worst-case dynamic regret ``Ĥ_T − Σ_t min_i l_{t,i}`` (Zinkevich 2003).

    The comparator picks the best expert of every round; equals the shifting regret with
    ``k ≥ T − 1`` switches.

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)

    Returns
    -------
    float
    """
    probs, losses = check_history(probs, losses)
    return float(learner_losses(probs, losses).sum() - losses.min(axis=1).sum())


class DynamicRegret(ExpertsMetric):
    """Regret to the per-round best expert, ``Ĥ_t − Σ_{s≤t} min_i l_{s,i}`` (Zinkevich 2003)."""

    name = "dynamic_regret"
    rowwise_values = True

    def values(self, core: Core) -> np.ndarray:
        return (core.learner - core.sum_min)[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`dynamic_regret`."""
        return dynamic_regret(record.probs, record.losses)
