"""Drifting-game metrics: the fraction of experts (or chips) beating the learner by at least R.

``dg_score`` reads the run's own totals, ``R_{t,i} = Ĥ_t − L_{t,i}``; ``dg_loss`` reads the chip
positions of a drifting-game adversary (:class:`arena.adversaries.drifting_game.DriftingGame`).
"""

from __future__ import annotations

import math

import numpy as np

from arena.metrics.base import Core, ExpertsMetric, ExpertsRecord
from arena.spec import GameSpec

TIE_TOL = 1e-9
"""``R_{t,i} ≥ R − 1e-9·max(1, |R|)`` counts as reaching R: regrets are float sums of ``p·l``, so
an exact tie (e.g. on the ½-lattice of the drifting game) must not be lost to rounding."""


def _reach(thresholds: list[float]) -> np.ndarray:
    """The least value counted as reaching each threshold (:data:`TIE_TOL` below it)."""
    return np.array([r - TIE_TOL * max(1.0, abs(r)) for r in thresholds])


def _fractions(values: np.ndarray, reach: np.ndarray) -> np.ndarray:
    """``out[r, j]``: the fraction of row r's entries at least ``reach[j]`` (:func:`_reach`), all
    thresholds in one comparison."""
    return (values[:, None, :] >= reach[None, :, None]).mean(axis=2)


def dg_score_bruteforce(probs: np.ndarray, losses: np.ndarray, threshold: float) -> float:
    """Brute-force ``dg_score`` at the last round of one game (probs, losses: (T, N)).

    Examples
    --------
    >>> p = np.array([[0.5, 0.5], [0.5, 0.5]]); l = np.array([[1.0, 0.0], [1.0, 0.0]])
    >>> dg_score_bruteforce(p, l, 1.0)
    0.5
    """
    learner = float(np.einsum("tn,tn->", probs, losses))
    regret = learner - losses.sum(axis=0)
    return float(_fractions(regret[None, :], _reach([float(threshold)]))[0, 0])


class DGScore(ExpertsMetric):
    """Fraction of experts whose regret ``R_{t,i} = Ĥ_t − L_{t,i}`` is at least R.

    The drifting-game score of Luo 2016 (§2.1.2, proof of Theorem 1): with chips at the
    regrets, it is the DGv1 loss ``(1/N) Σ_i 1{s_{t,i} ≤ −R}`` of Algorithm 2's conversion, and
    the inverse of the ε-quantile regret: ``R_(k)(t) < R ⟺ dg_score(R) < k/N``.
    Ties within 1e-9 count as reaching R (:data:`TIE_TOL`). Regrets are in loss units.

    Parameters
    ----------
    R : list of float
        Thresholds.

    Examples
    --------
    >>> from arena import play
    >>> df = play("ftl", "ftl_killer", n_actions=2, horizon=10, metrics=[DGScore(R=[0])])
    >>> float(df.value.iloc[-1])
    1.0
    """

    name = "dg_score"
    rowwise_values = True
    param_name = "R"

    def __init__(self, R=(1.0, 5.0, 10.0, 20.0)):
        self.R = R

    def param_values(self, spec: GameSpec) -> list[float]:
        return self._param_list(
            self.R, float, lambda v: None if math.isfinite(v) else "R must be finite"
        )

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._reach = _reach(self.param_values(spec))

    def values(self, core: Core) -> np.ndarray:
        regret = core.learner[:, None] - core.cum_losses
        return _fractions(regret, self._reach)

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`dg_score_bruteforce`."""
        return dg_score_bruteforce(record.probs, record.losses, float(param))


class DGLoss(ExpertsMetric):
    """Fraction of a drifting-game adversary's chips at regret position ``X_{t,i} ≥ R``.

    The DGv1 loss ``(1/N) Σ_i 1{s_{t,i} ≤ −R}`` of Luo 2016, §2.1.2, on the adversary's own chips
    (``X = −s``), read through :meth:`attach` from an adversary that has a ``dg_positions()``
    method (``drifting_game``); skipped otherwise. It is at most ``dg_score`` (the experts'
    regrets are the chips shifted up by the adversary's slack), and it is what the
    boost-by-majority potential bounds for ±½ movements (Freund 1995; Schapire 2001).

    Parameters
    ----------
    R : list of float
        Thresholds.
    """

    name = "dg_loss"
    param_name = "R"

    def __init__(self, R=(1.0, 5.0, 10.0, 20.0)):
        self.R = R

    def applicable(self, player, adversary) -> str | None:
        if callable(getattr(adversary, "dg_positions", None)):
            return None
        return "the adversary is not a drifting game (no dg_positions)"

    def attach(self, player, adversary) -> None:
        self._source = adversary

    def param_values(self, spec: GameSpec) -> list[float]:
        return self._param_list(
            self.R, float, lambda v: None if math.isfinite(v) else "R must be finite"
        )

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._reach = _reach(self.param_values(spec))

    def values(self, core: Core) -> np.ndarray:
        return _fractions(np.asarray(self._source.dg_positions()), self._reach)

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The fraction of the adversary's chips at ``X ≥ R`` (ties within :data:`TIE_TOL`),
        counted chip by chip. The chips are the adversary's declaration: its losses
        ``l_{t,i} = max_j d_{t,j} − d_{t,i}`` lose each round's largest movement, so the
        positions ``X_t = Σ_s d_s`` cannot be recovered from the record's losses."""
        chips = np.asarray(record.adversary.dg_positions(), dtype=np.float64)[record.replicate]
        cut = float(param) - TIE_TOL * max(1.0, abs(float(param)))
        return sum(1.0 for x in chips.tolist() if x >= cut) / len(chips)
