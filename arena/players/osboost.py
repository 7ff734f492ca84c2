"""OSBoost and OSBoost.OCP: online smooth boosting (Chen, Lin & Lu 2012).

The online SmoothBoost of Chen, Lin & Lu (2012), the two variants Luo (2016, §3.1.5, Table 3.2)
compares: the uniform vote (``osboost``) and the vote weights learned by online convex
programming (``osboost_ocp``). Both feed the weak learners the same smooth weights.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from arena.boosting.components import WEAK_LEARNER_CONSTRAINTS, Booster, WeakLearner, check_task
from arena.oco.losses import is_sparse
from arena.params import Interval
from arena.players._projections import project_simplex
from arena.spec import GameSpec, PlayerTags


def smooth_margin_offset(gamma: float) -> float:
    """Return SmoothBoost's target margin ``θ = γ/(2 + γ)`` (Servedio 2003; Chen et al. 2012).

    Examples
    --------
    >>> round(smooth_margin_offset(0.1), 12)
    0.047619047619
    """
    return gamma / (2.0 + gamma)


def smooth_weights(z: np.ndarray, gamma: float) -> np.ndarray:
    """Return the smooth weights ``w^i = min{1, (1 − γ)^{z^{i−1}/2}}`` of every learner.

    ``z`` holds ``y·h^i − θ`` per learner on the last axis (R, N); the running margin
    ``z^{i−1} = Σ_{j<i} (y h^j − θ)`` is summed left to right (``z^0 = 0``, so ``w^1 = 1``).
    Every weight is in (0, 1] (the smoothness of SmoothBoost), and 1 exactly while the running
    margin is ``≤ 0``.

    Examples
    --------
    >>> smooth_weights(np.array([[1.0, 1.0, -1.0]]), 0.2).round(4).tolist()
    [[1.0, 0.8944, 0.8]]
    """
    running = np.cumsum(z, axis=-1) - z  # z^{i−1}: sequential sums, the transcription's order
    return np.minimum(1.0, np.power(1.0 - gamma, running / 2.0))


def ocp_regret_bound(n_learners: int, rounds: int | float) -> float:
    """Return the OCP layer's regret bound ``√(NT) + √N (√T − ½)`` after T rounds.

    Zinkevich (2003), Theorem 1, for projected gradient steps ``η_t = 1/√(Nt)`` on the simplex
    (diameter² 2) against hinge losses whose gradients ``−y·h`` have ``‖·‖² ≤ N``:
    ``R(T) ≤ D²/(2η_T) + (G²/2) Σ_t η_t ≤ √(NT) + √N (√T − ½)`` (``Σ_t t^{−1/2} ≤ 2√T − 1``).

    Examples
    --------
    >>> round(ocp_regret_bound(4, 100), 6)
    39.0
    """
    if rounds <= 0:
        return 0.0
    root_n, root_t = math.sqrt(n_learners), math.sqrt(rounds)
    return root_n * root_t + root_n * (root_t - 0.5)


class OSBoost(Booster):
    """OSBoost: online SmoothBoost with a uniform vote (Chen, Lin & Lu 2012).

    Round t, with the weak learners' answers ``h^i = WL^i(x_t) ∈ [−1, 1]`` (queried before any
    of them learns ``y_t``) and ``θ = γ/(2 + γ)``:

    * predict the uniform vote ``ŷ_t = sign(Σ_i h^i)`` (a tie predicts 0, which the arena counts
      as a mistake);
    * after ``y_t``: ``z^0 = 0``; for i = 1 … N, feed ``(x_t, y_t)`` to ``WL^i`` with the
      importance weight ``w^i = min{1, (1 − γ)^{z^{i−1}/2}}`` and set
      ``z^i = z^{i−1} + y_t h^i − θ`` (:func:`smooth_weights`).

    The weights are SmoothBoost's (Servedio 2003) on the online margin: an example the first
    ``i − 1`` learners already classify with margin above ``(i − 1)θ`` is down-weighted
    geometrically, and no weight exceeds 1 (the smoothness the online weak-learning assumption of
    Chen et al. needs, where the weak learner's weighted error is bounded relative to the total
    weight). **Guarantee** (Chen et al. 2012; Luo 2016, Table 3.1): with online weak learners of
    edge γ, ``N = O(1/(εγ²))`` learners and ``T = Õ(1/(εγ²))`` examples give error rate ε. The
    premise is the weak-learning assumption on the run's weighted examples, which no arena run
    certifies, so no ``bound`` is declared; :meth:`learner_totals` gives each learner's weighted
    edge (metric ``weighted_edge``).

    **Which formulas.** The paper's text was not available to the lab; the rules above are those
    of Vowpal Wabbit's ``boosting.cc`` (``--alg smooth``, the implementation behind Luo 2016's
    Table 3.2), which agree with the SmoothBoost weights and θ of Servedio (2003). A learner
    answering real values (``normalized_linear`` with ``output="score"``) makes ``z`` real, as VW's
    non-``--discrete`` mode does.

    Parameters
    ----------
    n_learners : int
        N, the number of weak learners.
    gamma : float
        The assumed edge γ ∈ (0, ½).
    weak_learner : str or WeakLearner
        Registry name (group ``arena.weak_learners``) or instance; default ``oracle``.
    weak_learner_params : dict or None
        Its parameters.

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.adversaries.edge_oracle import EdgeOracle
    >>> run = run_game(OSBoost(n_learners=21, gamma=0.2), EdgeOracle(edge=0.2), n_actions=21,
    ...                horizon=400, metrics=["mistakes"])
    >>> 0 < float(run.rows.query("t == 400").value.iloc[0]) < 40  # the vote errs ~ 2.7 %
    True

    References
    ----------
    Chen, Lin & Lu 2012 (OSBoost, the online SmoothBoost); Servedio 2003 (SmoothBoost, the
    weights and θ); Luo 2016, §3.1.5, Tables 3.1–3.2 (the comparison).
    """

    name = "osboost"
    tags: ClassVar[PlayerTags] = PlayerTags(protocols=frozenset({"boosting"}), sparse_input=True)
    parameter_constraints: ClassVar = {
        **WEAK_LEARNER_CONSTRAINTS,
        "gamma": [Interval(0, 0.5, closed="neither")],
    }

    def __init__(
        self,
        n_learners: int = 20,
        gamma: float = 0.1,
        weak_learner: str | WeakLearner = "oracle",
        weak_learner_params: dict[str, Any] | None = None,
    ):
        self.n_learners = n_learners
        self.gamma = gamma
        self.weak_learner = weak_learner
        self.weak_learner_params = weak_learner_params

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        check_task(self, spec)
        n, n_rep = int(self.n_learners), spec.n_replicates
        self._learners = self.make_learners(spec, rngs)
        self._theta = smooth_margin_offset(float(self.gamma))
        self._weight = np.zeros((n_rep, n))
        self._edge = np.zeros((n_rep, n))
        self._calls = np.zeros((n_rep, n))
        self._t = 0
        self._reset_vote(n_rep, n)

    def _reset_vote(self, n_rep: int, n: int) -> None:
        """Set up the vote weights (none: the vote is uniform)."""

    def _vote(self, h: np.ndarray) -> np.ndarray:
        return np.sign(h.sum(axis=1))

    def _learn_vote(self, h: np.ndarray, y: np.ndarray) -> None:
        """Update the vote weights after the label (none: the vote is uniform)."""

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self._vote(self._learners.predict(x))

    def update(self, x: np.ndarray, y: np.ndarray) -> None:
        self._feed(x, y, self._learners.predict(x))

    def play_block(self, x: Any, y: np.ndarray) -> np.ndarray:
        """The per-round loop, querying the learners once per round (the update uses the
        answers the prediction read, which no learner has changed yet). A sparse chunk is handed
        as it is to a learner that reads sparse rows (``stump``) and densified for the others."""
        n_rep, n = y.shape
        out = np.empty((n_rep, n))
        rows = getattr(self._learners, "sparse_rows", False)
        for j in range(n):
            xj = (x.round(j) if rows else x.round(j).densify()) if is_sparse(x) else x[:, j]
            h = self._learners.predict(xj)
            out[:, j] = self._vote(h)
            self._feed(xj, y[:, j], h)
        return out

    def _feed(self, x: np.ndarray, y: np.ndarray, h: np.ndarray) -> None:
        self._t += 1
        z = y[:, None] * h
        w = smooth_weights(z - self._theta, float(self.gamma))
        self._learn_vote(h, y)
        self._weight += w
        self._edge += w * z
        self._calls += w > 0.0
        self._learners.update(x, np.repeat(y[:, None], h.shape[1], axis=1), w)

    def learner_totals(self) -> dict[str, np.ndarray]:
        """``weight = Σ_t w_t^i``, ``edge = Σ_t w_t^i y_t h_t^i`` and ``calls`` (updates with a
        positive weight: every round, the smooth weights being positive), each (R, N)."""
        return {
            "weight": self._weight.copy(),
            "edge": self._edge.copy(),
            "calls": self._calls.copy(),
        }

    @classmethod
    def _unit_test_params(cls):
        yield {"n_learners": 5, "gamma": 0.2}
        yield {"n_learners": 4, "gamma": 0.1, "weak_learner": "linear"}


class OSBoostOCP(OSBoost):
    """OSBoost.OCP: OSBoost's smooth weights with vote weights learned by online convex programming.

    The weak learners are fed exactly as by :class:`OSBoost`; the vote is weighted,
    ``ŷ_t = sign(Σ_i α_t^i h^i)``, with ``α_1 = (1/N, …, 1/N)`` and, after ``y_t``, one projected
    gradient step (Zinkevich 2003) on the hinge loss at the target margin θ,

    ``f_t(α) = max{0, θ − y_t Σ_i α^i h^i}``: if ``y_t Σ_i α_t^i h^i < θ``,
    ``α_{t+1} = Π_Δ(α_t + η_t y_t h)``, ``η_t = 1/√(N t)``,

    where ``Π_Δ`` is the Euclidean projection onto the simplex (Duchi et al. 2008) and t counts
    every round (Vowpal Wabbit's ``--alg OCP``, the implementation behind Luo 2016's Table 3.2).

    **Guarantee** (our statement of the OCP argument of Chen et al. 2012, with Zinkevich 2003,
    Theorem 1): for every fixed ``u`` in the simplex, whatever the learners answer,
    ``Σ_t f_t(α_t) ≤ Σ_t f_t(u) + √(NT) + √N (√T − ½)`` (:func:`ocp_regret_bound`), and since a
    mistake (``y Σ α h ≤ 0``) costs ``f_t(α_t) ≥ θ``,
    ``mistakes ≤ (Σ_t f_t(u) + √(NT) + √N (√T − ½)) / θ``; with ``u`` uniform this ties
    OSBoost.OCP to the uniform vote's margins, which OSBoost's analysis controls. The tests check
    both inequalities on runs through :meth:`ocp_totals` (``u`` uniform).

    **Vowpal Wabbit's slip.** VW's ``predict_or_learn_OCP`` accumulates the running margin as
    ``z += z + y h − θ`` (doubling it every learner); this booster uses ``z^i = z^{i−1} + y h − θ``,
    the rule of its own ``--alg smooth`` and of SmoothBoost.

    Parameters
    ----------
    n_learners : int
        N, the number of weak learners.
    gamma : float
        The assumed edge γ ∈ (0, ½); it sets θ = γ/(2 + γ) for both the weights and the hinge.
    weak_learner : str or WeakLearner
        Registry name (group ``arena.weak_learners``) or instance; default ``oracle``.
    weak_learner_params : dict or None
        Its parameters.

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.adversaries.edge_oracle import EdgeOracle
    >>> run = run_game(OSBoostOCP(n_learners=21, gamma=0.2), EdgeOracle(edge=0.2), n_actions=21,
    ...                horizon=400, metrics=["mistakes"])
    >>> 0 < float(run.rows.query("t == 400").value.iloc[0]) < 60
    True

    References
    ----------
    Chen, Lin & Lu 2012 (OSBoost.OCP); Zinkevich 2003, Theorem 1 (projected online gradient
    descent); Duchi, Shalev-Shwartz, Singer & Chandra 2008 (the simplex projection); Luo 2016,
    §3.1.5, Table 3.2.
    """

    name = "osboost_ocp"

    def _reset_vote(self, n_rep: int, n: int) -> None:
        self._alpha = np.full((n_rep, n), 1.0 / n)
        self._hinge = np.zeros(n_rep)
        self._uniform_hinge = np.zeros(n_rep)

    def _vote(self, h: np.ndarray) -> np.ndarray:
        return np.sign((self._alpha * h).sum(axis=1))

    def _learn_vote(self, h: np.ndarray, y: np.ndarray) -> None:
        margin = y * (self._alpha * h).sum(axis=1)
        self._hinge += np.maximum(0.0, self._theta - margin)
        self._uniform_hinge += np.maximum(0.0, self._theta - y * h.mean(axis=1))
        below = margin < self._theta
        if below.any():
            eta = 1.0 / math.sqrt(h.shape[1] * self._t)
            stepped = project_simplex(self._alpha + eta * y[:, None] * h)
            self._alpha = np.where(below[:, None], stepped, self._alpha)

    def vote_weights(self) -> np.ndarray:
        """Return the current vote weights ``α_t`` (R, N), a point of the simplex."""
        return self._alpha.copy()

    def ocp_totals(self) -> dict[str, np.ndarray]:
        """``hinge = Σ_s f_s(α_s)`` and ``uniform_hinge = Σ_s f_s(1/N)``, each (R,), and
        ``rounds`` (the T of :func:`ocp_regret_bound`)."""
        return {
            "hinge": self._hinge.copy(),
            "uniform_hinge": self._uniform_hinge.copy(),
            "rounds": np.full(self._hinge.shape, float(self._t)),
        }
