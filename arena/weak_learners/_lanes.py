"""Helpers the weak learners share: the bias feature, the stable sigmoid, the per-lane masks."""

from __future__ import annotations

import numpy as np
from scipy.special import expit


def with_bias(x: np.ndarray) -> np.ndarray:
    """Return ``x̃ = (x, 1)`` for ``x`` (R, d): shape (R, d + 1), the bias feature last."""
    x = np.asarray(x, dtype=np.float64)
    return np.concatenate([x, np.ones((x.shape[0], 1))], axis=1)


def logistic_slope(margin: np.ndarray) -> np.ndarray:
    """``σ(−m) = 1/(1 + e^m)``: minus the derivative of ``log(1 + e^{−m})`` at the margin m."""
    return expit(-margin)


def sign_output(score: np.ndarray) -> np.ndarray:
    """``+1`` where ``score ≥ 0``, else ``−1`` (ties predict +1)."""
    return np.where(score >= 0.0, 1.0, -1.0)


def active_lanes(weight: np.ndarray, shape: tuple[int, int], who: str) -> np.ndarray:
    """Return the (R, L) mask ``weight > 0`` of the lanes an update moves; check the shape and sign.

    A lane with weight exactly 0 is left bit for bit as it was (the protocol's contract).
    """
    weight = np.asarray(weight, dtype=np.float64)
    if weight.shape != shape:
        raise ValueError(f"{who}: update weights have shape {weight.shape}, expected {shape}")
    if (weight < 0).any() or not np.isfinite(weight).all():
        raise ValueError(f"{who}: update weights must be finite and ≥ 0")
    return weight > 0.0
