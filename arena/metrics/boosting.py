"""Boosting metrics: the majority vote's training and test error, its margins and the mean edge.

Computed against an adversary that plays batch boosting as an experts game
(:class:`arena.adversaries.boosting_oracle.BoostingOracle`), which keeps the vote's running sums.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from arena.metrics.base import Core, ExpertsMetric, ExpertsRecord
from arena.spec import GameSpec

VOTE_METHODS = ("train_votes", "test_votes", "edges")


def vote_error(votes: np.ndarray) -> np.ndarray:
    """Return the error of the vote ``sign(Σ_s h_s)`` from ``Σ_s y_i h_s(x_i)``, row-wise.

    An example is an error when its vote sum is ≤ 0: a tie ``Σ_s h_s(x) = 0`` has sign 0, which
    is neither label. An empty row has error NaN.

    Examples
    --------
    >>> vote_error(np.array([[3.0, -1.0, 0.0, 1.0]])).tolist()
    [0.5]
    """
    if votes.shape[1] == 0:
        return np.full(votes.shape[0], np.nan)
    return (votes <= 0.0).mean(axis=1)


def margin_fractions(votes: np.ndarray, t: int, thetas: list[float]) -> np.ndarray:
    """Return the fraction of examples with normalized margin ``(1/t) Σ_s y_i h_s(x_i) ≤ θ``.

    The vote sums are integers, so ``Σ ≤ θt ⟺ Σ ≤ ⌊θt⌋``, computed exactly from θ's shortest
    decimal form (``0.3 · 10`` is ``3.0000000000000004`` in floats). Shape (R, len(thetas)).

    Examples
    --------
    >>> margin_fractions(np.array([[3.0, 1.0, -1.0]]), 10, [0.0, 0.3]).tolist()
    [[0.3333333333333333, 1.0]]
    """
    out = np.empty((votes.shape[0], len(thetas)))
    for k, theta in enumerate(thetas):
        cut = math.floor(Fraction(repr(float(theta))) * t)
        out[:, k] = (votes <= cut).mean(axis=1)
    return out


def train_votes_bruteforce(losses: np.ndarray) -> list[int]:
    """Return ``Σ_s y_i h_s(x_i)`` of every training example from the game's losses alone.

    The oracle's loss of example i in round s is ``1{y_i h_s(x_i) = 1}`` (an example the stump
    gets right costs the booster, as in boosting by drifting games), so ``y_i h_s(x_i) =
    2 l_{s,i} − 1``: the vote sums are integers read off the record, without the adversary.

    Examples
    --------
    >>> train_votes_bruteforce(np.array([[1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]))
    [2, 0, 0]
    """
    t, n = losses.shape
    return [sum(2 * int(losses[s, i]) - 1 for s in range(t)) for i in range(n)]


class _VoteMetric(ExpertsMetric):
    """A metric read from a boosting oracle's running vote sums (skipped against others)."""

    def applicable(self, player, adversary) -> str | None:
        ok = all(callable(getattr(adversary, m, None)) for m in VOTE_METHODS)
        return None if ok else "the adversary is not a boosting oracle (no train_votes/edges)"

    def attach(self, player, adversary) -> None:
        self._source = adversary


class VoteTrainError(_VoteMetric):
    """Training error of the majority vote ``H(x) = sign(Σ_{s≤t} h_s(x))`` after t rounds.

    The fraction of the training examples (the experts) with ``Σ_s y_i h_s(x_i) ≤ 0`` (a tie is
    an error), for the stumps the boosting oracle returned. Luo (2016, Theorem 3) bounds it for
    NH-Boost.DT by ``Õ(exp(−Tγ²/3))`` when every edge is at least γ. A fraction in [0, 1].
    Logged only against an adversary with ``train_votes()``, ``test_votes()`` and ``edges()``
    (``boosting_oracle``).

    Examples
    --------
    >>> from arena import play
    >>> from arena.adversaries.boosting_oracle import BoostingOracle
    >>> df = play("hedge", BoostingOracle(), player_params={"eta": 0.5}, horizon=30,
    ...           metrics=[VoteTrainError()])
    >>> bool(df.value.iloc[-1] < 0.1)
    True

    References
    ----------
    Luo (2016), PhD thesis, §2.2, Theorem 3; Freund & Schapire (1997), §4.
    """

    name = "vote_train_error"

    def values(self, core: Core) -> np.ndarray:
        return vote_error(self._source.train_votes())[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The fraction of examples whose vote sum (:func:`train_votes_bruteforce`) is ≤ 0."""
        votes = train_votes_bruteforce(record.losses)
        return sum(1 for v in votes if v <= 0) / len(votes)


class VoteTestError(_VoteMetric):
    """Test error of the majority vote ``sign(Σ_{s≤t} h_s(x))`` on the held-out examples.

    The fraction of the oracle's test split (never shown to the player or the weak learner)
    with ``Σ_s y_i h_s(x_i) ≤ 0`` (a tie is an error). Logged only against a boosting oracle
    with a non-empty test split (``test_fraction > 0``).

    Examples
    --------
    >>> from arena import play
    >>> from arena.adversaries.boosting_oracle import BoostingOracle
    >>> df = play("normal_hedge_dt", BoostingOracle(), horizon=30, metrics=[VoteTestError()])
    >>> bool(df.value.iloc[-1] < 0.15)
    True
    """

    name = "vote_test_error"

    def applicable(self, player, adversary) -> str | None:
        reason = super().applicable(player, adversary)
        if reason is None and not adversary.split_sizes()[1]:
            return "the boosting oracle holds out no test split (test_fraction = 0)"
        return reason

    def values(self, core: Core) -> np.ndarray:
        return vote_error(self._source.test_votes())[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """Every round's stump (``stumps()``) applied to every held-out example
        (``test_examples()``) by plain loops, and the fraction whose vote sum is ≤ 0."""
        stumps = {k: np.asarray(v)[record.replicate] for k, v in record.adversary.stumps().items()}
        x, y = (a[record.replicate] for a in record.adversary.test_examples())
        errors = 0
        for xk, yk in zip(x, y, strict=True):
            vote = 0.0
            for feature, threshold, sign in zip(*stumps.values(), strict=True):
                side = 1.0 if xk[int(feature)] > threshold else -1.0
                vote += float(yk) * float(sign) * side
            errors += vote <= 0.0
        return errors / len(y)


class MarginFraction(_VoteMetric):
    """Fraction of training examples with normalized margin ``(1/t) Σ_{s≤t} y_i h_s(x_i) ≤ θ``.

    The margin distribution of the unweighted vote (Luo 2016, §2.2), one row per θ; θ = 0 gives
    the training error. Luo (2016, Theorem 3) shows that for NH-Boost.DT the fraction with
    margin ≤ θ < 2γ vanishes as ``Õ(exp(−T(θ − 2γ)²/3))`` when every edge is at least γ: it
    converges to the optimal margin 2γ. Ties count exactly (the sums are integers).

    Parameters
    ----------
    theta : list of float
        Thresholds in [−1, 1].

    Examples
    --------
    >>> from arena import play
    >>> from arena.adversaries.boosting_oracle import BoostingOracle
    >>> df = play("normal_hedge_dt", BoostingOracle(), horizon=30,
    ...           metrics=[MarginFraction(theta=[-1.0, 1.0])])
    >>> df.value.tolist()[-2:]
    [0.0, 1.0]
    """

    name = "margin_frac"
    param_name = "theta"

    def __init__(self, theta=(0.0, 0.1, 0.2, 0.3)):
        self.theta = theta

    def param_values(self, spec: GameSpec) -> list[float]:
        return self._param_list(
            self.theta, float, lambda v: None if -1.0 <= v <= 1.0 else "theta must be in [-1, 1]"
        )

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._thetas = self.param_values(spec)

    def values(self, core: Core) -> np.ndarray:
        return margin_fractions(self._source.train_votes(), max(core.t, 1), self._thetas)

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The fraction of examples with ``(1/t) Σ_s y_i h_s(x_i) ≤ θ``, compared exactly
        (rationals: θ's shortest decimal form) with the vote sums of the record's losses."""
        theta = Fraction(repr(float(param)))
        votes = train_votes_bruteforce(record.losses)
        return sum(1 for v in votes if Fraction(v, record.t) <= theta) / len(votes)


class MeanEdge(_VoteMetric):
    """Mean edge ``(1/t) Σ_{s≤t} γ_s`` of the weak hypotheses, ``γ_s = ½ Σ_i p_{s,i} y_i h_s(x_i)``.

    Each ``γ_s ∈ [0, ½]`` for the exhaustive stump oracle. Since the regret of example i is
    ``Σ_s γ_s − ½ Σ_s y_i h_s(x_i)``, every example the vote misclassifies has regret at least
    ``t · mean_edge`` (Luo 2016, proof of Theorem 3).

    Examples
    --------
    >>> from arena import play
    >>> from arena.adversaries.boosting_oracle import BoostingOracle
    >>> df = play("normal_hedge_dt", BoostingOracle(), horizon=10, metrics=[MeanEdge()])
    >>> bool(0.0 < df.value.iloc[-1] <= 0.5)
    True
    """

    name = "mean_edge"

    def values(self, core: Core) -> np.ndarray:
        edges = self._source.edges()
        if edges.shape[1] == 0:
            return np.full((edges.shape[0], 1), np.nan)
        return edges.mean(axis=1)[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """``(1/t) Σ_s ½ Σ_i p_{s,i} (2 l_{s,i} − 1)``: each round's edge from the record (its
        losses give ``y_i h_s(x_i)``, as in :func:`train_votes_bruteforce`)."""
        t, n = record.probs.shape
        edges = [
            0.5
            * sum(float(record.probs[s, i]) * (2.0 * record.losses[s, i] - 1.0) for i in range(n))
            for s in range(t)
        ]
        return sum(edges) / t


class WeightedVoteTrainError(_VoteMetric):
    """Training error of the weighted vote ``sign(Σ_{s≤t} α_s h_s(x))`` of a primal–dual booster.

    The fraction of the training examples (the experts) whose margin
    ``F_i = Σ_s α_s y_i h_s(x_i)`` is ≤ 0 (a tie is an error), for the hypothesis weights
    ``α_s`` the player chose (``adaboost``, ``capped_adaboost``, ``gentle_boost``: players with
    ``vote_margins()`` and an ``alpha(edge)`` step). Shalev-Shwartz 2007, §6.2: it is at most the
    average exponential loss ``(1/m) Σ_i e^{−F_i} ≤ e^{−2γ²t}`` when every edge is at least γ;
    the players declare the run's bound as ``bound:weighted_vote_train_error``. Logged only
    against a boosting oracle and with such a player.

    Examples
    --------
    >>> from arena import play
    >>> df = play("gentle_boost", "boosting_oracle", horizon=20,
    ...           metrics=[WeightedVoteTrainError()])
    >>> bool(df.value.iloc[-1] < 0.1)
    True

    References
    ----------
    Shalev-Shwartz 2007, §6.1–6.2, Eq. (6.12).
    """

    name = "weighted_vote_train_error"

    def applicable(self, player, adversary) -> str | None:
        if not (callable(getattr(player, "vote_margins", None)) and hasattr(player, "alpha")):
            return "the player keeps no weighted vote (no vote_margins/alpha)"
        return super().applicable(player, adversary)

    def attach(self, player, adversary) -> None:
        self._player = player

    def values(self, core: Core) -> np.ndarray:
        return (self._player.vote_margins() <= 0.0).mean(axis=1)[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """Plain loops over the record: each round's ``v_{s,i} = 2 l_{s,i} − 1`` (on the game's
        loss range) and edge ``e_s = Σ_i p_{s,i} v_{s,i}``, the player's step ``α_s`` of that
        edge, and the fraction of examples with ``Σ_s α_s v_{s,i} ≤ 0``."""
        lo, scale = record.spec.loss_range[0], record.spec.loss_scale
        t, n = record.probs.shape
        margins = [0.0] * n
        for s in range(t):
            v = [2.0 * (float(record.losses[s, i]) - lo) / scale - 1.0 for i in range(n)]
            edge = sum(float(record.probs[s, i]) * v[i] for i in range(n))
            alpha = float(record.player.alpha(np.array([edge]))[0])
            margins = [margins[i] + alpha * v[i] for i in range(n)]
        return sum(1 for m in margins if m <= 0.0) / n
