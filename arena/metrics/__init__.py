"""The metrics of the experts block (experts and bandit protocols): O(N) or O(kN) per round per
replicate, snapshotted at checkpoints. The protocol-generic :class:`~arena.metric.Metric` and the
dispatch rule are in :mod:`arena.metric`; each other protocol's metrics live in its folder.

One module per family, each holding its classes with their numba kernels and brute-force
definitions (the regret notions of Luo 2016, Chapter 2): :mod:`~arena.metrics.regret`,
:mod:`~arena.metrics.instant`, :mod:`~arena.metrics.weights`, :mod:`~arena.metrics.quantile`,
:mod:`~arena.metrics.pseudo`, :mod:`~arena.metrics.shifting`, :mod:`~arena.metrics.adaptive`,
:mod:`~arena.metrics.sleeping`; the protocol-generic ``bound`` and ``lower_bound`` in
:mod:`~arena.metrics.declared`; the default metric set in :mod:`~arena.metrics.defaults`.

Notation: ``h_t = p_t·l_t`` (expected learner loss), ``r_{t,i} = h_t − l_{t,i}``,
``R_{t,i} = Σ_{s≤t} r_{s,i}``, ``L_{t,i} = Σ_{s≤t} l_{s,i}``, ``Ĥ_t = Σ_{s≤t} h_s``.
Every metric is exact (no sampling of intervals or comparators) and its state never grows with T.
"""

from arena.metric import Metric
from arena.metrics.base import Block, Core, ExpertsMetric, exact_quantile_rank

__all__ = ["Block", "Core", "ExpertsMetric", "Metric", "exact_quantile_rank"]
