"""Numerical kernels shared by several players: shared math lives in ``arena``, not in a player."""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def normalize_log_weights(out, m):
    """Turn log-weights into a distribution in place: ``out ← exp(out − m) / Σ exp(out − m)``.

    ``m`` is ``max(out)``, subtracted so that nothing overflows (stable softmax). When every
    weight is zero (``m = −inf``) the result is uniform.

    Examples
    --------
    >>> x = np.log(np.array([1.0, 3.0])); normalize_log_weights(x, x.max()); x.tolist()
    [0.25, 0.75]
    >>> y = np.full(2, -np.inf); normalize_log_weights(y, -np.inf); y.tolist()
    [0.5, 0.5]
    """
    n = out.shape[0]
    if m == -np.inf:
        for i in range(n):
            out[i] = 1.0 / n
        return
    total = 0.0
    for i in range(n):
        w = math.exp(out[i] - m)
        out[i] = w
        total += w
    for i in range(n):
        out[i] /= total
