"""Best fixed comparator for linear losses: ``min_{u∈K} ⟨G, u⟩`` in closed form."""

from __future__ import annotations

import numpy as np

from arena.oco.domains import Domain
from arena.oco.hindsight.certificates import _as_rows


def best_linear(g_sum, domain: Domain, *, return_argmin: bool = False):
    """Best fixed comparator in hindsight for linear losses: ``min_{u∈K} ⟨G, u⟩``.

    Parameters
    ----------
    g_sum : array_like, shape (R, d)
        ``G = Σ_s g_s`` for each replicate.
    domain : Domain
        The feasible set ``K``.
    return_argmin : bool
        Also return a minimizer (R, d).

    Returns
    -------
    value : ndarray (R,)
        ``−r‖G‖₂`` (ball), ``−r‖G‖₁`` (box), ``min_i G_i`` (simplex), ``−inf`` unless ``G = 0``
        (unconstrained, then 0).
    argmin : ndarray (R, d), optional
        ``−rG/‖G‖`` (ball), ``−r·sign(G)`` (box), the first minimizing vertex (simplex), 0 when
        ``G = 0`` or unconstrained (a thin wrapper of :meth:`Domain.min_linear`).

    Examples
    --------
    >>> best_linear(np.array([[3.0, 4.0], [0.0, 0.0]]), Domain("ball", 2.0))
    array([-10.,   0.])

    References
    ----------
    Srebro, Lecture 16 (the minimum over the ball for linear losses is ``−B‖v_m‖₂``).
    """
    g = _as_rows(g_sum, "g_sum", 2)
    value, u = domain.min_linear(g)
    value = np.asarray(value, dtype=np.float64) + 0.0  # no −0.0
    return (value, u) if return_argmin else value
