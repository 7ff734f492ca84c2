"""Pieces the brute-force definitions of several experts-block metrics share.

Each metric's definition sits beside its class (its ``reference``); these helpers only check a
stored history and form the learner's per-round losses, written as plainly as the definitions
(Luo 2016, §2.3: ``h_t = p_t·l_t``, ``L_{T,i} = Σ_t l_{t,i}``, ``R_{T,i} = Ĥ_T − L_{T,i}``).

Inputs are one replicate's history, rounds ``1..T`` as rows ``0..T-1``: ``probs`` (T, N) the
player's ``p_t``, ``losses`` (T, N) the ``l_t``, ``actions`` (T,) the drawn ``I_t`` (0-based).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_history", "check_losses", "learner_losses", "realized_losses", "required"]


def check_history(probs: np.ndarray, losses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``probs`` and ``losses`` as float arrays of one shape (T, N), T, N ≥ 1."""
    probs = np.asarray(probs, dtype=np.float64)
    losses = np.asarray(losses, dtype=np.float64)
    if losses.ndim != 2 or losses.shape[0] < 1 or losses.shape[1] < 1:
        raise ValueError(f"losses must have shape (T, N) with T, N ≥ 1, got {losses.shape}")
    if probs.shape != losses.shape:
        raise ValueError(f"probs has shape {probs.shape}, losses {losses.shape}")
    return probs, losses


def check_losses(losses: np.ndarray) -> np.ndarray:
    """Return ``losses`` as a float array of shape (T, N), T, N ≥ 1."""
    losses = np.asarray(losses, dtype=np.float64)
    if losses.ndim != 2 or losses.shape[0] < 1 or losses.shape[1] < 1:
        raise ValueError(f"losses must have shape (T, N) with T, N ≥ 1, got {losses.shape}")
    return losses


def learner_losses(probs: np.ndarray, losses: np.ndarray) -> np.ndarray:
    """Return ``h_t = p_t·l_t`` for every round, shape (T,)."""
    return (probs * losses).sum(axis=1)


def realized_losses(losses: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Return ``l_{t, I_t}`` for every round, shape (T,)."""
    actions = np.asarray(actions, dtype=np.int64)
    if actions.shape != (losses.shape[0],):
        raise ValueError(f"actions must have shape ({losses.shape[0]},), got {actions.shape}")
    if actions.min() < 0 or actions.max() >= losses.shape[1]:
        raise ValueError("actions must be expert indices in [0, N)")
    return losses[np.arange(losses.shape[0]), actions]


def required(record: Any, field: str, metric: str) -> np.ndarray:
    """Return ``record.<field>`` (means, confidences, competitor, ...), which ``metric`` needs.

    Raises
    ------
    ValueError
        Where the record lacks it (the adversary exposes no such oracle).
    """
    value = getattr(record, field)
    if value is None:
        raise ValueError(f"{metric} needs the {field} of the game")
    return value
