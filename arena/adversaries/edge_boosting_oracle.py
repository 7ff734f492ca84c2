"""Batch boosting as an experts game against a weak learner of known edge (Luo 2016, Theorem 3)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.experts.components import AdaptiveAdversary
from arena.params import Interval
from arena.spec import AdversaryTags, GameSpec, History


def random_correct_set(p: np.ndarray, order: np.ndarray, edge: float) -> np.ndarray:
    """Return ``y_i h(x_i) ∈ {±1}``: correct on a prefix of ``order`` of p-mass at least ½ + edge.

    The examples are taken in ``order`` until their total weight under ``p`` reaches ``½ + edge``
    (the example that crosses it included); those are classified correctly (+1), the others
    wrongly (−1). So the weighted edge ``½ Σ_i p_i y_i h(x_i) = mass − ½`` lies in
    ``[edge, edge + max_i p_i]``; a rounding shortfall of the total (Σ p = 1 − 1e-16) takes every
    example.

    Examples
    --------
    >>> random_correct_set(np.full(4, 0.25), np.array([2, 0, 3, 1]), 0.2).tolist()
    [1.0, -1.0, 1.0, 1.0]
    """
    mass = np.cumsum(p[order])
    k = min(int(np.searchsorted(mass, 0.5 + edge, side="left")) + 1, p.shape[0])
    correct = -np.ones(p.shape[0])
    correct[order[:k]] = 1.0
    return correct


class EdgeBoostingOracle(AdaptiveAdversary):
    """Batch boosting as an experts game whose weak learner has edge γ on every round, at random.

    The N experts (``n_actions``, default 10) are N training examples. Round t: the player commits
    ``p_t`` (tag ``sees_distribution``); the weak hypothesis ``h_t`` is correct on the examples of
    a uniformly random order taken until their weight under ``p_t`` reaches ``½ + γ``
    (:func:`random_correct_set`) and wrong on the rest, so its edge
    ``γ_t = ½ Σ_i p_{t,i} y_i h_t(x_i)`` is at least γ (at most γ plus the largest weight); the
    losses are ``ℓ_{t,i} = 1{h_t(x_i) = y_i}``, the reduction of
    :class:`arena.adversaries.boosting_oracle.BoostingOracle` (Luo 2016, §2.2): ``normal_hedge_dt``
    is NH-Boost.DT (Algorithm 4), ``normal_hedge`` NH-Boost, ``hedge`` AdaBoost with a constant
    step. The examples have no features: only whether each ``h_t`` gets each one right matters to
    the booster, its unweighted vote ``sign(Σ_t h_t)`` and its margins ``(1/t) Σ_s y_i h_s(x_i)``.

    This is the weak-learning assumption of Luo 2016, §2.2 (``γ_t ≥ γ > 0``) met with the edge
    known, which Theorem 3 needs to be checked: NH-Boost.DT's training error after T rounds is
    ``Õ(exp(−Tγ²/3))`` and its fraction of examples with margin ≤ θ < 2γ vanishes. Under uniform
    weights each round is a uniformly random set of ``⌈(½ + γ)N⌉`` examples (up to the rounding
    of the cumulative weights), so an example is right with probability about ``½ + γ``, as with
    the independent weak learners of the lower bound of Luo 2016, Theorem 10; a vote of T
    independent such hypotheses errs with probability ``P[Bin(T, ½ + γ) ≤ T/2] ≤ exp(−2Tγ²)``
    (Hoeffding). It is not the worst weak learner for a given booster.

    The vote's running sums (:meth:`train_votes`) and the edges (:meth:`edges`) are what the
    ``vote_train_error``, ``margin_frac`` and ``mean_edge`` metrics read; there is no held-out
    split (``vote_test_error`` is skipped). The edges are kept for the whole game (O(R·T)), so
    conformance's ``check_bounded_memory`` is declared to fail.

    Parameters
    ----------
    edge : float
        γ ∈ (0, ½]: the weak learner's guaranteed edge.

    Examples
    --------
    >>> from arena import play
    >>> from arena.metrics.boosting import MeanEdge, VoteTrainError
    >>> df = play("normal_hedge_dt", EdgeBoostingOracle(edge=0.2), n_actions=200, horizon=100,
    ...           metrics=[VoteTrainError(), MeanEdge()])
    >>> last = df[df.t == 100].groupby("metric").value.first()
    >>> float(last["vote_train_error"]), bool(0.2 <= last["mean_edge"] < 0.21)
    (0.0, True)

    References
    ----------
    Luo 2016, PhD thesis, §2.2, Algorithm 4 and Theorem 3 (and §3.1.3, Theorem 10's independent
    weak learners); Freund & Schapire 1997, §4 (boosting as an experts game).
    """

    tags = AdversaryTags(
        oblivious=False,
        sees_distribution=True,
        expected_failed_checks=(
            (
                "check_bounded_memory",
                "it keeps every round's edge (O(T·R)) for mean_edge, beside the O(R·N) vote sums",
            ),
        ),
    )
    parameter_constraints: ClassVar = {"edge": [Interval(0, 0.5, closed="right")]}

    def __init__(self, edge: float = 0.1):
        self.edge = edge

    def split_sizes(self) -> tuple[int, int]:
        """Return ``(N, 0)``: every example is a training example (no held-out split).

        N is 0 before the first reset: a game asks for the split before it resets its
        components (``vote_test_error`` is skipped against a split without test examples).
        """
        return int(getattr(self, "_n", 0)), 0

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._n = int(spec.n_actions)
        self._rngs = list(rngs)
        self._train_votes = np.zeros((spec.n_replicates, self._n))
        self._edges: list[np.ndarray] = []

    def losses(self, t: int, history: History) -> np.ndarray:
        p = np.asarray(history.probs, dtype=np.float64)
        correct = np.stack(
            [
                random_correct_set(p[r], rng.permutation(self._n), float(self.edge))
                for r, rng in enumerate(self._rngs)
            ]
        )
        self._edges.append(0.5 * np.einsum("rn,rn->r", p, correct))
        self._train_votes += correct
        return (correct > 0).astype(np.float64)

    def train_votes(self) -> np.ndarray:
        """Return ``Σ_{s≤t} y_i h_s(x_i)`` for every example, shape (R, N)."""
        return self._train_votes.copy()

    def test_votes(self) -> np.ndarray:
        """Return the held-out vote sums: none, shape (R, 0)."""
        return np.zeros((self._train_votes.shape[0], 0))

    def edges(self) -> np.ndarray:
        """Return the edges ``γ_s = ½ Σ_i p_{s,i} y_i h_s(x_i)`` of rounds 1..t, shape (R, t)."""
        n_rep = self._train_votes.shape[0]
        return np.stack(self._edges, axis=1) if self._edges else np.zeros((n_rep, 0))

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"edge": 0.5}
