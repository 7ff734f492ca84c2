"""AdaBoost.OL and AdaBoost.OL.S: adaptive online boosting by online logistic-loss minimization.

Beygelzimer, Kale & Luo (2015), AdaBoost.OL; Luo (2016), §3.1.4, Algorithm 8.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from numba import njit
from scipy.special import expit

from arena import registry
from arena.boosting.components import (
    WEAK_LEARNER_CONSTRAINTS,
    Booster,
    WeakLearner,
    check_task,
    held_out_rows,
)
from arena.errors import ArenaError, ConfigError
from arena.experts.components import ExpertsPlayer
from arena.oco.losses import is_sparse
from arena.params import InstanceOf, IsNone
from arena.players.hedge import DOUBLING, FIXED, Hedge, _epoch_rate
from arena.spec import GameSpec, PlayerTags
from arena.validation import readonly_contiguous
from arena.weak_learners._compiled import (
    compiled_lanes,
    dense_csr,
    lane_learn,
    lane_output,
    lane_score,
)

ALPHA_RADIUS = 2.0
"""The combination weights live in ``[−2, 2]`` (Luo 2016, §3.1.4: "it suffices to restrict α")."""

STEP_SCALE = 4.0
"""OGD's rate ``η_t = 4/√t`` (Luo 2016, Algorithm 8, line 13)."""

THESIS_HEDGE_PARAMS: dict[str, Any] = {"eta": 1.0}
"""The final layer of the thesis: Hedge with learning rate 1 (Algorithm 8, lines 7 and 15)."""


def logistic_weight(s: np.ndarray | float) -> np.ndarray:
    """Return ``w = −ℓ′(s) = 1/(1 + e^{s})`` of the logistic loss ``ℓ(s) = ln(1 + e^{−s})``.

    Computed as ``expit(−s)``, which neither overflows for large ``|s|`` nor rounds to 0 while
    ``|s| ≤ 2N`` for any N below 350 (the margins of AdaBoost.OL are at most 2N in absolute value).

    Examples
    --------
    >>> logistic_weight(np.array([0.0, 1000.0, -1000.0])).tolist()
    [0.5, 0.0, 1.0]
    """
    return expit(-np.asarray(s, dtype=np.float64))


def ogd_alpha_step(alpha: np.ndarray, z: np.ndarray, s: np.ndarray, t: int) -> np.ndarray:
    """Return ``α_{t+1} = Π_{[−2,2]}(α_t + (4/√t)·z/(1 + e^{s_t^i}))`` (Algorithm 8, line 13).

    ``s`` is ``s_t^i = s_t^{i−1} + α_t z``, computed with the pre-update α: the step is projected
    gradient descent on ``f_t(α) = ℓ(s_t^{i−1} + αz)``, whose derivative at ``α_t`` is
    ``−z/(1 + e^{s_t^i})``.

    Examples
    --------
    >>> ogd_alpha_step(np.array([0.0, 1.9]), np.array([1.0, 1.0]), np.array([0.0, 1.9]), 1)
    array([2., 2.])
    """
    step = (STEP_SCALE / math.sqrt(t)) * z * logistic_weight(s)
    return np.clip(alpha + step, -ALPHA_RADIUS, ALPHA_RADIUS)


def partial_votes(alpha: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Return the experts' votes ``ŷ^i = sign(Σ_{j≤i} α^j h^j)``, (R, N), with ``sign(0) = 0``.

    The tie rule: a zero margin votes 0, which the arena counts as a mistake whatever the label
    (a mistake is ``y·ŷ ≤ 0``), as the analysis of Theorem 11 does (expert i errs when
    ``s_t^i ≤ 0``).

    Examples
    --------
    >>> partial_votes(np.array([[0.0, 0.5, -1.0]]), np.array([[1.0, 1.0, 1.0]])).tolist()
    [[0.0, 1.0, -1.0]]
    """
    return np.sign(np.cumsum(alpha * h, axis=-1))


@njit(cache=True, nogil=True)
def _hedge_rate(mode, eta, log_n, t):
    """Hedge's ``learning_rate()`` at round t: fixed, anytime ``√(8 ln N/t)`` or doubling."""
    if mode == FIXED:
        return eta
    if mode == DOUBLING:
        return _epoch_rate(t, log_n)
    return math.sqrt(8.0 * log_n / t)


@njit(cache=True, nogil=True)
def _adaboost_block(
    indptr, indices, values, y, lanes, alpha, t0, hedge, cum, rounds0, uniform, draws, totals, out
):
    """AdaBoost.OL(.S) over compiled lanes and a Hedge final layer for a whole chunk.

    The per-round loop of :meth:`AdaBoostOL.predict` and :meth:`AdaBoostOL.update`: ``alpha``
    (R, N), Hedge's cumulative losses ``cum`` (R, N), the current ``uniform`` (R,) and ``totals``
    (3, R, N) are updated in place; ``draws`` (R, n, N + 1) holds each round's N sampling
    uniforms (AdaBoost.OL.S) and the next round's uniform, last (AdaBoost.OL: (R, n, 1)).
    ``hedge`` is ``(mode, η, ln N, lo, scale)`` of :class:`~arena.players.hedge.Hedge`; the rows are
    CSR arrays (row ``r·n + j``) and ``lanes`` a
    :class:`arena.weak_learners._compiled.CompiledLanes`.
    """
    kind, code, rate, bound, theta, aux, norms, stats = lanes
    n_rep, n = y.shape
    n_learners = theta.shape[1]
    sampling = draws.shape[2] > 1
    mode, eta, log_n, lo, scale = hedge
    scores = np.empty(n_learners)
    z = np.empty(n_learners)
    v = np.empty(n_learners)
    for r in range(n_rep):
        for j in range(n):
            row = r * n + j
            cols = indices[indptr[row] : indptr[row + 1]]
            vals = values[indptr[row] : indptr[row + 1]]
            label = y[r, j]
            for i in range(n_learners):
                scores[i] = lane_score(theta, r, i, cols, vals)
                z[i] = label * lane_output(kind, code, bound, stats, r, i, scores[i])
            # the drawn expert: inverse CDF of Hedge's p_t at the current uniform
            step_eta = _hedge_rate(mode, eta, log_n, rounds0 + j + 1)
            lowest = cum[r, 0]
            for i in range(1, n_learners):
                lowest = min(lowest, cum[r, i])
            total = 0.0
            for i in range(n_learners):
                v[i] = math.exp(-step_eta * (cum[r, i] - lowest))
                total += v[i]
            cdf = 0.0
            drawn = 0
            for i in range(n_learners):
                cdf += v[i] / total
                if cdf <= uniform[r]:
                    drawn += 1
            drawn = min(drawn, n_learners - 1)
            vote = 0.0
            for i in range(drawn + 1):
                vote += alpha[r, i] * (label * z[i])  # α^i h^i: y² = 1
            out[r, j] = 1.0 if vote > 0.0 else (-1.0 if vote < 0.0 else 0.0)
            # the update
            t = t0 + j + 1
            gain = STEP_SCALE / math.sqrt(t)
            s_prev = 0.0
            hedge_round = rounds0 + j + 1
            restart = mode == DOUBLING and hedge_round & (hedge_round + 1) == 0
            for i in range(n_learners):
                w = 1.0 / (1.0 + math.exp(s_prev))  # logistic_weight: expit(−s), as scipy has it
                s = s_prev + alpha[r, i] * z[i]
                step = gain * z[i] * (1.0 / (1.0 + math.exp(s)))
                alpha[r, i] = min(max(alpha[r, i] + step, -ALPHA_RADIUS), ALPHA_RADIUS)
                passed = w
                if sampling:
                    passed = 1.0 if draws[r, j, i] < w else 0.0
                lane_learn(kind, code, rate, bound, theta, aux, norms, stats, r, i, cols, vals,
                           scores[i], label, passed)  # fmt: skip
                totals[0, r, i] += w
                totals[1, r, i] += w * z[i]
                if passed > 0.0:
                    totals[2, r, i] += 1.0
                if restart:
                    cum[r, i] = 0.0
                else:
                    cum[r, i] += ((1.0 if s <= 0.0 else 0.0) - lo) / scale
                s_prev = s
            uniform[r] = draws[r, j, draws.shape[2] - 1]


class AdaBoostOL(Booster):
    """AdaBoost.OL: online boosting that minimizes the logistic loss stage by stage (adaptive).

    N weak learners; learner i's combination weight ``α^i ∈ [−2, 2]`` is learned by projected
    online gradient descent, and the prediction follows one of the N partial votes ("experts")
    drawn by an experts player. Round t, with ``z_t^i = y_t·WL^i(x_t)`` and ``s_t^0 = 0``:

    - expert i votes ``ŷ_t^i = sign(Σ_{j≤i} α_t^j WL^j(x_t))`` (:func:`partial_votes`;
      ``sign(0) = 0``, a mistake);
    - the booster draws ``i_t`` from the experts player's distribution ``p_t`` and predicts
      ``ŷ_t = ŷ_t^{i_t}``;
    - for ``i = 1..N``: ``w_t^i = 1/(1 + e^{s_t^{i−1}})`` (:func:`logistic_weight`),
      ``s_t^i = s_t^{i−1} + α_t^i z_t^i``, ``α_{t+1}^i = Π_{[−2,2]}(α_t^i + (4/√t) z_t^i/(1 +
      e^{s_t^i}))`` (:func:`ogd_alpha_step`); WL^i learns ``(x_t, y_t)`` with importance weight
      ``w_t^i`` (AdaBoost.OL) or with probability ``w_t^i`` (:class:`AdaBoostOLS`);
    - the experts player sees the losses ``1{s_t^i ≤ 0}`` (expert i's mistakes).

    Parameters
    ----------
    n_learners : int
        N, the number of weak learners (and of experts).
    weak_learner : str or WeakLearner
        The weak learner: a registered weak learner's name or an instance (cloned). The default
        ``linear`` is the closest to the thesis's experiments (Vowpal Wabbit's linear learner).
    weak_learner_params : mapping, optional
        Its parameters (``'+player.weak_learner_params={rate:0.5}'``).
    expert_player : str or ExpertsPlayer
        The final layer: a registered experts player's name or an instance (cloned), which plays
        the N experts on their 0/1 losses. The thesis uses Hedge with η = 1.
    expert_player_params : mapping, optional
        Its parameters; None is η = 1 for ``hedge`` (the thesis) and the player's defaults for
        any other.

    Notes
    -----
    **Randomness.** The draw of ``i_t`` uses a uniform drawn from the booster's own stream at
    :meth:`reset` and at the end of each :meth:`update` (and, in AdaBoost.OL.S, the N sampling
    uniforms of the round are drawn in :meth:`update` before it), so :meth:`predict` is pure.
    The draw is inverse-CDF: ``i_t`` is the first i with ``Σ_{j≤i} p_t^j > u_t``.

    **Log-weights.** Hedge's weights ``v^i = e^{−M_i}`` underflow after about 745 mistakes;
    :class:`~arena.players.hedge.Hedge` computes ``p ∝ exp(−η(M_i − min_j M_j))``, which never does.

    **Held-out score.** :meth:`score` is deterministic: the sign of the ``p_t``-weighted mean of
    the N partial votes (the experts player's weighted majority; 0 on a tie).

    **No declared bound.** Theorem 11 bounds the number of mistakes by ``2T/Σ_i γ_i² +
    Õ(N²/Σ_i γ_i²)`` *with high probability*: its proof goes through the Azuma–Hoeffding
    inequality for the drawn expert (eq. (3.10)) and hides unspecified constants and logarithmic
    factors in Õ, so no deterministic bound computable from the run exists and :meth:`bounds`
    declares none. The deterministic core of the proof, ``Σ_t ℓ(s_t^N) + 2Σ_i γ_i²‖w^i‖₁ ≤
    T ln 2 + Σ_i R_i`` with ``R_i`` the realized OGD regret of ``α^i``, and ``2‖w^i‖₁ ≥
    M_{i−1}`` (eq. (3.11)), are checked by the tests.

    **Weighted edges.** :meth:`learner_totals` reports ``‖w^i‖₁ = Σ_t w_t^i`` and ``Σ_t w_t^i
    z_t^i`` (so ``γ_i = edge/(2·weight)``, the thesis's edge of Theorem 11), and the number of
    rounds learner i was passed an example with a positive weight.

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.boosting.testing import LaneSGD, ThresholdStream
    >>> run = run_game(AdaBoostOL(n_learners=4, weak_learner=LaneSGD()), ThresholdStream(),
    ...                n_actions=2, horizon=200, replicates=2, metrics=["mistakes"])
    >>> bool((run.rows.value < 200).all())
    True

    References
    ----------
    Beygelzimer, Kale & Luo (2015), "Optimal and adaptive algorithms for online boosting", ICML
    (AdaBoost.OL). Luo (2016), PhD thesis, §3.1.4, Algorithm 8, Theorems 11–12, Lemma 10.
    """

    name = "adaboost_ol"
    tags: ClassVar[PlayerTags] = PlayerTags(
        protocols=frozenset({"boosting"}), randomized=True, sparse_input=True
    )
    tasks: ClassVar[frozenset[str]] = frozenset({"classification"})
    sampling: ClassVar[bool] = False
    """AdaBoost.OL.S passes each example with probability ``w`` instead of weight ``w``."""

    parameter_constraints: ClassVar = {
        **WEAK_LEARNER_CONSTRAINTS,
        "expert_player": [
            InstanceOf(str, "an experts player's registry name"),
            InstanceOf(ExpertsPlayer, "an experts player instance"),
        ],
        "expert_player_params": [InstanceOf(Mapping, "a mapping of its parameters"), IsNone()],
    }

    def __init__(
        self,
        n_learners: int = 10,
        weak_learner: str | WeakLearner = "linear",
        weak_learner_params: Mapping[str, Any] | None = None,
        expert_player: str | ExpertsPlayer = "hedge",
        expert_player_params: Mapping[str, Any] | None = None,
    ):
        self.n_learners = n_learners
        self.weak_learner = weak_learner
        self.weak_learner_params = weak_learner_params
        self.expert_player = expert_player
        self.expert_player_params = expert_player_params

    # ------------------------------------------------------------------------------------------
    # the final layer

    def _make_experts(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> ExpertsPlayer:
        who, params = self.label(), self.expert_player_params
        if params is None:
            params = THESIS_HEDGE_PARAMS if self.expert_player == "hedge" else {}
        player = registry.make_inner(
            who, "player", self.expert_player, params, name_param="expert_player"
        )
        if not isinstance(player, ExpertsPlayer) or "experts" not in player.tags.protocols:
            raise ConfigError(who, "expert_player", f"{player.label()} is not an experts player")
        if player.tags.observes_action:
            raise ConfigError(
                who, "expert_player", f"{player.label()} needs its own draws; it sees only losses"
            )
        n = int(self.n_learners)
        lo, hi = player.tags.min_actions, player.tags.max_actions
        if n < lo or (hi is not None and n > hi):
            raise ConfigError(who, "n_learners", f"{player.label()} plays {lo}..{hi} experts")
        experts_spec = GameSpec(
            "experts",
            n,
            spec.horizon,
            (0.0, 1.0),
            n_replicates=spec.n_replicates,
            replicate_ids=spec.replicate_ids,
        )
        try:
            player.reset(experts_spec, rngs)
        except ArenaError as exc:
            raise ConfigError(who, "expert_player_params", str(exc)) from exc
        except (ValueError, TypeError, KeyError) as exc:
            raise ConfigError(
                who, "expert_player", f"{player.label()}: reset failed: {exc}"
            ) from exc
        return player

    # ------------------------------------------------------------------------------------------
    # the game

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        check_task(self, spec)
        n_rep, n = spec.n_replicates, int(self.n_learners)
        self._rngs = list(rngs)
        self._learners = self.make_learners(spec, rngs)
        expert_rngs = [np.random.default_rng(int(rng.integers(2**63))) for rng in self._rngs]
        self._experts = self._make_experts(spec, expert_rngs)
        self._alpha = np.zeros((n_rep, n))
        self._t = 0
        self._weight = np.zeros((n_rep, n))
        self._edge = np.zeros((n_rep, n))
        self._calls = np.zeros((n_rep, n))
        self._uniform = np.array([rng.random() for rng in self._rngs])

    def expert_distribution(self) -> np.ndarray:
        """Return the experts player's distribution ``p_t`` over the N partial votes, (R, N)."""
        return np.asarray(self._experts.predict(), dtype=np.float64)

    def alphas(self) -> np.ndarray:
        """Return the combination weights ``α_t`` of the next round, (R, N)."""
        return self._alpha.copy()

    def predict(self, x: np.ndarray) -> np.ndarray:
        votes = partial_votes(self._alpha, self._learners.predict(x))
        cdf = np.cumsum(self.expert_distribution(), axis=1)
        drawn = np.minimum((cdf <= self._uniform[:, None]).sum(axis=1), votes.shape[1] - 1)
        return votes[np.arange(votes.shape[0]), drawn]

    def play_block(self, x: Any, y: np.ndarray) -> np.ndarray:
        """Play a chunk: one compiled loop over compiled lanes and a Hedge final layer.

        With a weak learner that has compiled lanes (``linear``, every step rule and loss, and
        ``normalized_linear``: :func:`arena.weak_learners._compiled.compiled_lanes`) and the final
        layer :class:`~arena.players.hedge.Hedge` (every rate schedule), :func:`_adaboost_block`
        plays the :meth:`predict` / :meth:`update` loop in one compiled pass, reading the same
        uniforms of each replicate's stream in the same order, and leaves α, the learners' θ and
        G, Hedge's cumulative losses and the totals where the loop leaves them (to rounding in
        the order of the learners' dot products and of Hedge's normalization). Any other weak
        learner or final layer plays the per-round loop. A sparse chunk
        (:class:`~arena.oco.losses.SparseRows`, the tag ``sparse_input``) is read as CSR arrays
        by the compiled loop, in O(nnz) per lane and round; the per-round loop hands each
        round's rows as they are to a learner that reads them (``stump``, O(nnz) per lane and
        round) and densifies them for the others.
        """
        lanes = compiled_lanes(self._learners)
        if lanes is None or type(self._experts) is not Hedge:
            if is_sparse(x):
                return self._sparse_rounds(x, y)
            return super().play_block(x, y)
        n_rep, n = y.shape
        n_learners = int(self.n_learners)
        # per replicate, the stream's order is round by round: (N sampling uniforms,) then the
        # next round's uniform; one draw of n·k doubles is the stream of n draws of k (PCG64)
        per_round = n_learners + 1 if self.sampling else 1
        draws = np.stack([rng.random((n, per_round)) for rng in self._rngs])
        experts = self._experts
        hedge = (
            int(experts._mode),
            float(experts._eta),
            float(experts._log_n),
            float(experts._lo),
            float(experts._scale),
        )
        totals = np.stack([self._weight, self._edge, self._calls])
        out = np.empty((n_rep, n))
        csr = (x.indptr, x.indices, x.values) if is_sparse(x) else dense_csr(x)
        _adaboost_block(
            *csr,
            readonly_contiguous(y, np.float64),
            lanes,
            self._alpha,
            self._t,
            hedge,
            experts._cum,
            int(experts._rounds),
            self._uniform,
            draws,
            totals,
            out,
        )
        self._t += n
        experts._rounds += n
        self._weight, self._edge, self._calls = totals[0], totals[1], totals[2]
        return out

    def _sparse_rounds(self, x: Any, y: np.ndarray) -> np.ndarray:
        """The per-round loop on a sparse chunk: each round's rows as they are to a learner that
        reads them (``stump``: its attribute ``sparse_rows``), densified for the others."""
        rows = getattr(self._learners, "sparse_rows", False)
        out = np.empty(y.shape)
        for j in range(y.shape[1]):
            xj = x.round(j) if rows else x.round(j).densify()
            out[:, j] = self.predict(xj)
            self.update(xj, y[:, j])
        return out

    def update(self, x: np.ndarray, y: np.ndarray) -> None:
        h = self._learners.predict(x)
        z = np.asarray(y, dtype=np.float64)[:, None] * h
        s = np.cumsum(self._alpha * z, axis=1)  # s_t^i with the pre-update α_t
        s_prev = np.concatenate([np.zeros((s.shape[0], 1)), s[:, :-1]], axis=1)
        w = logistic_weight(s_prev)
        self._t += 1
        self._alpha = ogd_alpha_step(self._alpha, z, s, self._t)
        if self.sampling:
            draws = np.array([rng.random(s.shape[1]) for rng in self._rngs])
            passed = (draws < w).astype(np.float64)
        else:
            passed = w
        targets = np.repeat(np.asarray(y, dtype=np.float64)[:, None], s.shape[1], axis=1)
        self._learners.update(x, targets, passed)
        self._weight += w
        self._edge += w * z
        self._calls += passed > 0.0
        self._experts.update((s <= 0.0).astype(np.float64))
        self._uniform = np.array([rng.random() for rng in self._rngs])

    def score(self, x: Any) -> np.ndarray:
        """Return the sign of the ``p_t``-weighted mean partial vote on ``x`` (R, m, d); pure.
        ``x`` may be a ``SparseRows`` block (:func:`~arena.boosting.components.held_out_rows`)."""
        p = self.expert_distribution()
        out = np.empty(x.shape[:2])
        for k in range(x.shape[1]):
            rows = held_out_rows(x, k, self._learners)
            votes = partial_votes(self._alpha, self._learners.predict(rows))
            out[:, k] = np.sign(np.einsum("rn,rn->r", p, votes))
        return out

    def learner_totals(self) -> dict[str, np.ndarray]:
        return {
            "weight": self._weight.copy(),
            "edge": self._edge.copy(),
            "calls": self._calls.copy(),
        }

    @classmethod
    def _unit_test_params(cls):
        # registry names, not instances: the conformance suite evaluates repr(booster) with only
        # the booster's class in scope; no instance while no classification learner is registered
        available = registry.available("weak_learner")
        for learner in [name for name in ("linear", "stump") if name in available][:1]:
            yield {"n_learners": 3, "weak_learner": learner}
            yield {"n_learners": 4, "weak_learner": learner, "expert_player_params": {"eta": 0.5}}


class AdaBoostOLS(AdaBoostOL):
    """AdaBoost.OL.S: AdaBoost.OL passing each example to WL^i with probability ``w_t^i``.

    The algorithm analysed by Theorem 11 (Algorithm 8, line 14, as written): WL^i learns
    ``(x_t, y_t)`` with weight 1 when a uniform of the booster's stream, drawn in :meth:`update`,
    falls below ``w_t^i``, and is skipped (weight 0) otherwise. Everything else is
    :class:`AdaBoostOL`; :meth:`learner_totals` reports the weights ``w`` before sampling.

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.boosting.testing import LaneSGD, ThresholdStream
    >>> run = run_game(AdaBoostOLS(n_learners=4, weak_learner=LaneSGD()), ThresholdStream(),
    ...                n_actions=2, horizon=200, metrics=["mistakes"])
    >>> bool(run.rows.value.iloc[-1] < 200)
    True

    References
    ----------
    Beygelzimer, Kale & Luo (2015); Luo (2016), §3.1.4, Algorithm 8, and §3.1.5 (the name).
    """

    name = "adaboost_ol_s"
    sampling: ClassVar[bool] = True
