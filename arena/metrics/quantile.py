"""The ε-quantile regrets: ``quantile_regret`` (the ⌈εN⌉-th largest per-expert regret,
Chaudhuri et al. 2009) and ``subset_quantile_regret`` (to the uniform distribution over the ⌈εN⌉
best experts, Luo 2016, §2.3). Notation as in :mod:`arena.metrics`."""

from __future__ import annotations

import numpy as np

from arena.metrics.base import Core, ExpertsMetric, ExpertsRecord, exact_quantile_rank
from arena.metrics.literal import check_history, learner_losses
from arena.spec import GameSpec

SORT_AT_MOST = 64
"""Experts up to which :class:`QuantileRegret` sorts each row instead of partitioning it
(numpy's partition over a list of kths costs more than a sort of a few numbers)."""


def quantile_regret(probs: np.ndarray, losses: np.ndarray, eps: float) -> float:
    """ε-quantile regret: the k-th largest ``R_{T,i}`` with ``k = ⌈εN⌉`` (Chaudhuri et al. 2009).

    Luo 2016, §2.1.2: equivalently ``Ĥ_T − L_{T,(k)}`` with ``L_{(k)}`` the k-th
    smallest cumulative loss. ``k`` is computed exactly by
    :func:`arena.metrics.base.exact_quantile_rank` (floats get ``⌈εN⌉`` wrong), and the k-th
    largest is read
    off a full sort.

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)
    eps : float
        Quantile ε in (0, 1].

    Returns
    -------
    float
    """
    if not 0 < eps <= 1:
        raise ValueError(f"eps must be in (0, 1], got {eps!r}")
    probs, losses = check_history(probs, losses)
    k = exact_quantile_rank(eps, losses.shape[1])
    per_expert = learner_losses(probs, losses).sum() - losses.sum(axis=0)  # R_{T,i}
    descending = np.sort(per_expert)[::-1]
    return float(descending[k - 1])


class QuantileRegret(ExpertsMetric):
    """ε-quantile regret: the k-th largest ``R_{t,i}`` with ``k = ⌈εN⌉`` computed exactly.

    Equals ``Ĥ_t − L_{t,(k)}`` with ``L_{(k)}`` the k-th smallest cumulative loss (Chaudhuri, Freund
    & Hsu 2009; Luo 2016, §2.1.2). ``k = 1`` is the ordinary regret.

    Parameters
    ----------
    eps : list of float
        Quantiles ε in (0, 1].
    """

    name = "quantile_regret"
    rowwise_values = True
    param_name = "eps"

    def __init__(self, eps=(0.01, 0.1, 0.25)):
        self.eps = eps

    def param_values(self, spec: GameSpec) -> list[float]:
        return self._param_list(
            self.eps, float, lambda e: None if 0 < e <= 1 else "ε must be in (0, 1]"
        )

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._ranks = [exact_quantile_rank(e, spec.n_actions) for e in self.param_values(spec)]
        self._columns = np.array(self._ranks) - 1  # the k-th least loss's column, per param
        self._kths = sorted(set(self._columns.tolist()))

    def values(self, core: Core) -> np.ndarray:
        losses = core.cum_losses
        # the k-th least of each row (the same number whether found by a sort or a partition):
        # a sort for a few experts, where numpy's partition with its list of kths costs more
        if losses.shape[1] <= SORT_AT_MOST:
            ordered = np.sort(losses, axis=1)
        else:
            ordered = np.partition(losses, self._kths, axis=1)
        return core.learner[:, None] - ordered[:, self._columns]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`quantile_regret`."""
        return quantile_regret(record.probs, record.losses, float(param))


def subset_quantile_regret(probs: np.ndarray, losses: np.ndarray, eps: float) -> float:
    """Subset-uniform ε-quantile regret ``R(u_S)``: u uniform on the ``k = ⌈εN⌉`` experts with
    the smallest cumulative losses (Luo 2016, §2.3), from its definition ``Σ_t u·r_t``.

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)
    eps : float
        Quantile ε in (0, 1].

    Returns
    -------
    float
    """
    if not 0 < eps <= 1:
        raise ValueError(f"eps must be in (0, 1], got {eps!r}")
    probs, losses = check_history(probs, losses)
    k = exact_quantile_rank(eps, losses.shape[1])
    subset = np.argsort(losses.sum(axis=0), kind="stable")[:k]
    total = 0.0
    for t in range(losses.shape[0]):
        learner = float(probs[t] @ losses[t])
        total += sum(learner - float(losses[t, i]) for i in subset) / k
    return total


class SubsetQuantileRegret(QuantileRegret):
    """Subset-uniform ε-quantile regret: the regret ``R(u_{S_ε}) = Ĥ_t − (1/k) Σ_{j≤k} L_{t,(j)}``
    to the uniform distribution over the ``k = ⌈εN⌉`` experts with the smallest cumulative
    losses.

    The competitor of Luo 2016, §2.3 (after Theorem 4): ``R_{(k)} ≤ R(u_{S_ε})`` always, and
    AdaNormalHedge's Theorem 4 bound (2.6) for subset-uniform competitors is stated for it (Luo
    & Schapire 2015). ``k = 1`` is the ordinary regret, ``ε = 1`` the regret to the uniform
    mixture.

    Parameters
    ----------
    eps : list of float
        Quantiles ε in (0, 1].

    Examples
    --------
    >>> from arena import play
    >>> df = play("hedge", "fair_coin", n_actions=4, horizon=100,
    ...           metrics={"quantile_regret": {"eps": [0.5]},
    ...                    "subset_quantile_regret": {"eps": [0.5]}})
    >>> v = df[df.t == 100].set_index("metric").value
    >>> bool(v.subset_quantile_regret >= v.quantile_regret)
    True
    """

    name = "subset_quantile_regret"
    rowwise_values = True

    def values(self, core: Core) -> np.ndarray:
        ascending = np.sort(core.cum_losses, axis=1)
        prefix = np.cumsum(ascending, axis=1)
        return core.learner[:, None] - prefix[:, self._columns] / (self._columns + 1)

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`subset_quantile_regret`."""
        return subset_quantile_regret(record.probs, record.losses, float(param))
