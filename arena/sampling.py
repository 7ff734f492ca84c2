"""Inverse-CDF action sampling shared by the engine, the protocols and players that see ``I_t``."""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def sample_action(p, u):
    """Inverse-CDF draw: the first i with ``p_1 + … + p_i > u``; the last positive one if none.

    Examples
    --------
    >>> import numpy as np
    >>> sample_action(np.array([0.25, 0.0, 0.75]), 0.25), sample_action(np.array([0.5, 0.5]), 1.0)
    (2, 1)
    """
    c = 0.0
    last = 0
    for i in range(p.shape[0]):
        if p[i] > 0.0:
            last = i
        c += p[i]
        if u < c:
            return i
    return last


@njit(cache=True, nogil=True)
def sample_actions(probs, uniforms, out):
    """Fill ``out[r]`` with the draw of ``probs[r]`` (R, N) at ``uniforms[r]`` (R,)."""
    for r in range(probs.shape[0]):
        out[r] = sample_action(probs[r], uniforms[r])
