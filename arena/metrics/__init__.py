"""Streaming regret metrics: O(N) or O(kN) per round per replicate, snapshotted at checkpoints."""

from arena.metrics.base import Block, Core, Metric, exact_quantile_rank

__all__ = ["Block", "Core", "Metric", "exact_quantile_rank"]
