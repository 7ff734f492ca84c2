"""The metrics of the experts block (experts and bandit protocols): O(N) or O(kN) per round per
replicate, snapshotted at checkpoints. The protocol-generic :class:`~arena.metric.Metric` and the
dispatch rule are in :mod:`arena.metric`; each other protocol's metrics live in its folder."""

from arena.metric import Metric
from arena.metrics.base import Block, Core, ExpertsMetric, exact_quantile_rank

__all__ = ["Block", "Core", "ExpertsMetric", "Metric", "exact_quantile_rank"]
