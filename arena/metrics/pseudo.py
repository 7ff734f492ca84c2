"""``pseudo_regret``: the regret against the adversary's mean losses (Luo 2016, Appendix A.2;
Bubeck & Cesa-Bianchi 2012), with its numba kernel. Notation as in :mod:`arena.metrics`."""

from __future__ import annotations

import numpy as np
from numba import njit

from arena.metrics.base import Block, Core, ExpertsMetric, ExpertsRecord
from arena.metrics.literal import check_history, learner_losses, required
from arena.spec import GameSpec


@njit(cache=True, nogil=True)
def _pseudo_advance(probs, means, cum_means, learner_mean):
    n_rep, n, n_act = probs.shape
    for r in range(n_rep):
        for j in range(n):
            s = 0.0
            for i in range(n_act):
                mu = means[r, j, i]
                s += probs[r, j, i] * mu
                cum_means[r, i] += mu
            learner_mean[r] += s


def pseudo_regret(probs: np.ndarray, means: np.ndarray) -> float:
    """Pseudo-regret ``Σ_t p_t·μ_t − min_i Σ_t μ_{t,i}`` against the mean losses.

    The pseudo-regret ``max_i E[Σ_t(l_{t,I_t} − l_{t,i})]`` (Luo 2016, Appendix A.2, Theorem 21;
    Bubeck & Cesa-Bianchi 2012), with the expectation of the oblivious stochastic losses taken in
    closed form.

    Parameters
    ----------
    probs, means : ndarray, shape (T, N)
        The distributions ``p_t`` and the adversary's mean losses ``μ_t``.

    Returns
    -------
    float
    """
    probs, means = check_history(probs, means)
    return float(learner_losses(probs, means).sum() - means.sum(axis=0).min())


class PseudoRegret(ExpertsMetric):
    """Pseudo-regret ``Σ_s p_s·μ_s − min_i Σ_s μ_{s,i}`` against the adversary's mean losses.

    Logged only when the adversary exposes the oracle ``means`` (Luo 2016, Appendix A.2,
    Theorem 21; Bubeck & Cesa-Bianchi 2012).
    """

    name = "pseudo_regret"
    requires = frozenset({"means"})

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._cum_means = np.zeros((spec.n_replicates, spec.n_actions))
        self._learner_mean = np.zeros(spec.n_replicates)

    def advance(self, block: Block, core: Core) -> None:
        _pseudo_advance(block.probs, block.means, self._cum_means, self._learner_mean)

    def values(self, core: Core) -> np.ndarray:
        return (self._learner_mean - self._cum_means.min(axis=1))[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`pseudo_regret`."""
        return pseudo_regret(record.probs, required(record, "means", self.name))
