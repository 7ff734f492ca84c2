"""Figure 5.4 of Shalev-Shwartz (2007), transcribed line by line for one stream of examples.

The test oracle of :class:`arena.players.structured_self_tuned.StructuredSelfTuned`: plain Python
floats and lists, the argmax of (5.20) by enumerating every string of Σ^m (the first maximizer
in lexicographic order), none of the player's arrays or dynamic program.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable

import numpy as np


def fig54(
    structure, U: float, examples: Iterable[tuple[np.ndarray, np.ndarray]]
) -> list[list[int]]:
    """Play Figure 5.4 on ``examples`` (pairs ``(x_t, y_t)``); return every prediction ``y′_t``.

    Examples
    --------
    >>> from arena.structured.chain import ChainStructure
    >>> s = ChainStructure(n_labels=2, length=2, n_features=1)
    >>> fig54(s, 1.0, [(np.array([[1.0], [1.0]]), np.array([1, 1]))] * 2)
    [[0, 0], [1, 1]]
    """
    strings = [
        list(y) for y in itertools.product(range(structure.n_labels), repeat=structure.length)
    ]

    def phi(x, y):
        return [float(v) for v in structure.features(x, np.array(y))]

    theta = [0.0] * structure.dim  # INITIALIZE: θ_1 = 0; X_0 = 0; M_0 = 0
    x_max, m_count = 0.0, 0
    out = []
    for x, y in examples:  # FOR t = 1, 2, …: receive x_t
        best, y_pred = -math.inf, None
        for cand in strings:  # predict y′_t = argmax_y ⟨θ_t, φ(x_t, y)⟩
            score = sum(a * b for a, b in zip(theta, phi(x, cand), strict=True))
            if score > best:
                best, y_pred = score, cand
        out.append(y_pred)
        y = [int(v) for v in y]  # receive the correct target y_t
        rho = float(sum(1 for a, b in zip(y, y_pred, strict=True) if a != b))
        if rho > 0:  # IF ρ(y_t, y′_t) > 0
            m_count += 1
            a_t = [p - q for p, q in zip(phi(x, y), phi(x, y_pred), strict=True)]
            norm_sq = sum(v * v for v in a_t)
            x_max = max(math.sqrt(norm_sq), x_max)
            c_t = x_max * math.sqrt(m_count / (2.0 * U))
            if norm_sq > 0:  # the figure divides by ‖a_t‖²; a zero a_t moves nothing
                inner = sum(p * q for p, q in zip(theta, a_t, strict=True))
                alpha = min(1.0, max(c_t * rho - inner, 0.0) / norm_sq)
                theta = [p + alpha * q for p, q in zip(theta, a_t, strict=True)]
    return out
