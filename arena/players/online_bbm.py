"""Online boost-by-majority (Online BBM): the optimal online booster for a known edge γ.

Luo 2016, §3.1.2, Algorithm 7; Beygelzimer, Kale & Luo 2015.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from numba import njit
from scipy.special import bdtr, gammaln

from arena.boosting.components import WEAK_LEARNER_CONSTRAINTS, Booster, WeakLearner, check_task
from arena.oco.losses import is_sparse
from arena.params import Interval, OneOf
from arena.spec import GameSpec, PlayerTags
from arena.validation import readonly_contiguous
from arena.weak_learners._compiled import (
    compiled_lanes,
    dense_csr,
    lane_learn,
    lane_output,
    lane_score,
)

MODES = ("importance", "sampling", "potential")
"""How Online BBM feeds weak learner i: importance weight ``w/W_i``, the example with
probability ``w/W_i`` (Luo 2016, §3.1.1, step 5), or importance weight ``2w`` (Vowpal Wabbit's
``boosting.cc``)."""


def _coin(gamma: float) -> tuple[float, float]:
    """``(log p, log q)`` of the potentials' coin, ``p = (1+γ)/2``, ``q = (1−γ)/2``."""
    return float(np.log1p(gamma) - np.log(2.0)), float(np.log1p(-gamma) - np.log(2.0))


def _half_pmf(k: np.ndarray, m: np.ndarray, gamma: float) -> np.ndarray:
    """``½·C(m, k) p^k q^{m−k}`` in log space (no factorial overflow), 0 where ``k ∉ [0, m]``."""
    k, m = np.broadcast_arrays(np.asarray(k, dtype=np.float64), np.asarray(m, dtype=np.float64))
    inside = (k >= 0.0) & (k <= m)
    kk = np.where(inside, k, 0.0)
    log_p, log_q = _coin(gamma)
    log_pmf = gammaln(m + 1.0) - gammaln(kk + 1.0) - gammaln(m - kk + 1.0)
    log_pmf = log_pmf + kk * log_p + (m - kk) * log_q
    return np.where(inside, 0.5 * np.exp(log_pmf), 0.0)


def bbm_potential(i: Any, s: Any, n_learners: int, gamma: float) -> np.ndarray:
    """Return the boost-by-majority potential ``Φ_i(s)`` (Luo 2016, eq. (3.4) with equality).

    ``Φ_i(s) = P[Binomial(N − i, (1+γ)/2) ≤ (N − i − s)/2]``: the chance that a vote with margin
    s after i learners ends at a final margin ``≤ 0`` when each of the remaining ``N − i``
    learners is correct with probability ``(1+γ)/2``. ``Φ_N(s) = 1{s ≤ 0}`` and
    ``Φ_{i−1}(s) = ((1−γ)/2)·Φ_i(s−1) + ((1+γ)/2)·Φ_i(s+1)``.

    Parameters
    ----------
    i : int or array of int
        Learners already counted, ``0 ≤ i ≤ N``.
    s : int or array of int
        The margin ``s^i`` of the partial vote.
    n_learners : int
        N.
    gamma : float
        The assumed edge γ ∈ (0, ½).

    Examples
    --------
    >>> float(bbm_potential(3, 0, 3, 0.2)), float(bbm_potential(3, 1, 3, 0.2))
    (1.0, 0.0)
    >>> round(float(bbm_potential(0, 0, 1, 0.2)), 12)  # one learner: wrong w.p. (1−γ)/2
    0.4
    """
    i, s = np.broadcast_arrays(np.asarray(i, dtype=np.float64), np.asarray(s, dtype=np.float64))
    m = float(n_learners) - i
    k = np.floor((m - s) / 2.0)
    inside = k >= 0.0
    k = np.where(inside, np.minimum(k, m), 0.0)
    return np.where(inside, bdtr(k, m.astype(np.int64), (1 + gamma) / 2), 0.0)


def bbm_weight(i: Any, s_prev: Any, n_learners: int, gamma: float) -> np.ndarray:
    """Return Online BBM's weight ``w^i`` of learner i given the previous margin ``s^{i−1}``.

    ``w^i = ½(Φ_i(s−1) − Φ_i(s+1)) = ½·C(m, k) p^k q^{m−k}`` with ``m = N − i``,
    ``k = ⌊(N − i − s + 1)/2⌋``, ``p = (1+γ)/2`` (Luo 2016, eq. (3.5); Algorithm 7, line 8 prints
    it without the ½, which cancels in ``w/W_i`` but not in Lemma 8's identity). It is 0 exactly
    when ``s ≥ N − i + 2`` or ``s ≤ −(N − i + 1)``: the vote is decided whatever the rest say.

    Examples
    --------
    >>> float(bbm_weight(1, 0, 1, 0.2))  # the last learner decides a tied vote
    0.5
    >>> float(bbm_weight(2, 3, 3, 0.2))
    0.0
    """
    i, s = np.broadcast_arrays(
        np.asarray(i, dtype=np.float64), np.asarray(s_prev, dtype=np.float64)
    )
    m = float(n_learners) - i
    return _half_pmf(np.floor((m - s + 1.0) / 2.0), m, gamma)


def bbm_weight_bound(n_learners: int, gamma: float) -> np.ndarray:
    """Return ``W_i = ½·max_k C(N−i, k) p^k q^{N−i−k}`` for i = 1 … N, shape (N,).

    The a-priori bound on ``‖w^i‖∞`` that normalizes the sampling probability ``w/W_i ∈ [0, 1]``
    (Luo 2016, footnote 9 and Lemma 9: ``W_i = O(1/√(N−i))``; ``W_N = ½``). The binomial mode
    is ``⌊(m+1)p⌋`` (and ``⌊(m+1)p⌋ − 1`` ties it when ``(m+1)p`` is an integer).

    Examples
    --------
    >>> bbm_weight_bound(3, 0.2).round(4).tolist()
    [0.24, 0.3, 0.5]
    """
    m = float(n_learners) - np.arange(1, n_learners + 1, dtype=np.float64)
    mode = np.minimum(np.floor((m + 1.0) * (1 + gamma) / 2.0), m)
    return np.maximum(_half_pmf(mode, m, gamma), _half_pmf(mode - 1.0, m, gamma))


def _fed_weight(w: np.ndarray, bound: np.ndarray, mode: str) -> np.ndarray:
    """What learner i is fed from its weight ``w^i``: ``min(w/W_i, 1)`` (the importance weight,
    or the sampling probability), or ``2w`` (``mode="potential"``, Vowpal Wabbit's weight)."""
    if mode == "potential":
        return 2.0 * w
    return np.minimum(w / bound, 1.0)  # ≤ 1 by construction; min guards rounding


def bbm_share_table(
    n_learners: int, gamma: float, mode: str = "importance"
) -> tuple[np.ndarray, np.ndarray]:
    """Return ``w^i`` and what learner i is fed, for every learner and binomial index k, (N, N).

    Learner i's weight depends on the previous margin only through ``k = ⌊(N − i − s + 1)/2⌋``
    (:func:`bbm_weight`): entry ``[i − 1, k]`` holds ``½·C(N − i, k) p^k q^{N−i−k}`` for
    ``0 ≤ k ≤ N − i`` (0 elsewhere, where the vote is decided), computed by the very expressions
    of :meth:`OnlineBBM._feed`, so the compiled chunk (:func:`_bbm_block`) looks up the readable
    path's numbers bit for bit, for integer and real margins alike.

    Examples
    --------
    >>> w, share = bbm_share_table(3, 0.2)
    >>> float(w[2, 0]), float(share[2, 0])  # the last learner on a tied vote: w = ½ = W_N
    (0.5, 1.0)
    """
    n = int(n_learners)
    m = (float(n) - np.arange(1, n + 1, dtype=np.float64))[:, None]
    k = np.arange(n, dtype=np.float64)[None, :]
    w = _half_pmf(k, m, float(gamma))
    return w, _fed_weight(w, bbm_weight_bound(n, float(gamma))[:, None], mode)


@njit(cache=True, nogil=True)
def _bbm_block(indptr, indices, values, y, lanes, w_table, share_table, uniforms, totals, out):
    """Online BBM over compiled lanes for a whole chunk: :meth:`OnlineBBM.play_block`'s loop.

    The chunk's rows are CSR arrays (row ``r·n + j``; a dense chunk as :func:`dense_csr`);
    ``lanes`` is :class:`arena.weak_learners._compiled.CompiledLanes`; ``uniforms`` (R, n, N) are
    the sampling draws (empty unless ``mode="sampling"``); ``totals`` (3, R, N) the running
    ``weight``, ``edge`` and ``calls``, updated in place.
    """
    kind, code, rate, bound, theta, aux, scale, stats = lanes
    n_rep, n = y.shape
    n_learners = theta.shape[1]
    sampling = uniforms.shape[0] > 0
    scores = np.empty(n_learners)
    votes = np.empty(n_learners)
    for r in range(n_rep):
        for j in range(n):
            row = r * n + j
            cols = indices[indptr[row] : indptr[row + 1]]
            vals = values[indptr[row] : indptr[row + 1]]
            total = 0.0
            for i in range(n_learners):
                scores[i] = lane_score(theta, r, i, cols, vals)
                votes[i] = lane_output(kind, code, bound, stats, r, i, scores[i])
                total += votes[i]
            out[r, j] = 1.0 if total > 0.0 else (-1.0 if total < 0.0 else 0.0)
            label = y[r, j]
            s_prev = 0.0
            for i in range(n_learners):
                z = label * votes[i]
                m = n_learners - 1 - i
                k = math.floor((m - s_prev + 1.0) / 2.0)
                w = 0.0
                share = 0.0
                if 0.0 <= k <= m:
                    w = w_table[i, int(k)]
                    share = share_table[i, int(k)]
                if sampling:
                    share = 1.0 if uniforms[r, j, i] < share else 0.0
                totals[0, r, i] += w
                totals[1, r, i] += w * z
                if share > 0.0:
                    totals[2, r, i] += 1.0
                lane_learn(kind, code, rate, bound, theta, aux, scale, stats, r, i, cols, vals,
                           scores[i], label, share)  # fmt: skip
                s_prev += z


class OnlineBBM(Booster):
    """Online BBM: weak learners weighted by the boost-by-majority potential, majority vote.

    Round t, with ``z_t^i = y_t·WL^i(x_t)`` and the partial margins ``s_t^0 = 0``,
    ``s_t^i = s_t^{i−1} + z_t^i`` (all combination weights ``α ≡ 1``):

    * predict the majority vote ``ŷ_t = sign(Σ_i WL^i(x_t))``; a tie (possible for even N only)
      predicts 0, which the arena counts as a mistake (``y·0 ≤ 0``), exactly as the analysis
      counts ``s_t^N ≤ 0``;
    * after ``y_t``, learner i gets the weight ``w_t^i = ½·C(m, k) p^k q^{m−k}``,
      ``m = N − i``, ``k = ⌊(m − s_t^{i−1} + 1)/2⌋``, ``p = (1+γ)/2`` (:func:`bbm_weight`) and is
      fed ``(x_t, y_t)`` with the importance weight ``w_t^i/W_i`` (``mode="importance"``) or with
      probability ``w_t^i/W_i`` (``mode="sampling"``: weight 1, else 0), where ``W_i``
      (:func:`bbm_weight_bound`) is the a-priori bound ``½·max_k`` pmf on ``‖w^i‖∞``, not a
      running maximum.

    **Identity.** Since the potentials satisfy the recursion with equality, every round obeys
    ``1{s_t^N ≤ 0} + Σ_i w_t^i (z_t^i − γ) = Φ_0(0)`` whatever the learners say (Luo 2016, proof of
    Lemma 8), so ``mistakes = T·Φ_0(0) − Σ_i (w^i·z^i − γ‖w^i‖₁)`` exactly: the booster errs at
    rate ``Φ_0(0) ≤ exp(−Nγ²/2)`` (Hoeffding) when each learner's weighted correlation
    ``w^i·z^i`` reaches ``γ‖w^i‖₁``. **Guarantee** (Theorem 9): if every ``WL^i`` is a weak learner
    with edge γ and excess loss S, then with high probability
    ``mistakes ≤ exp(−Nγ²/2)·T + Õ(√N (S + 1/γ))``; ``N = (2/γ²) ln(1/ε)`` learners give error
    rate ε, optimal up to constants (Theorem 10). The guarantee needs the weak-learning assumption
    on the run's weighted examples, which no arena run certifies, so no ``bound`` is declared; the
    identity is checked by the tests through :meth:`learner_totals`.

    **Confidence-rated learners.** A weak learner may answer real values ``h ∈ [−1, 1]``
    (``normalized_linear`` with ``output="score"``, as VW's learners do): then ``z_t^i`` and the
    margins are real, ``k`` floors a real number (exactly VW's rule) and the vote is the sign of
    the real sum; the identity above holds for ±1 answers only.

    **Which γ.** The potentials assume each learner correct with probability ``(1+γ)/2``, so
    weak learners correct with probability ``½ + e`` (``edge_oracle`` with ``edge = e``) are
    matched by ``γ = 2e``: the identity's slack ``Σ_i (w^i·z^i − γ‖w^i‖₁)`` then has mean zero and
    the error rate is ``Φ_0(0)``, the majority vote's. Any ``γ < 2e`` satisfies the premise of
    Lemma 8 on average too (with slack). Theorem 10's construction calls a learner correct with
    probability ``½ + 2γ`` one with edge γ in the sense of Definition (3.1).

    Parameters
    ----------
    n_learners : int
        N, the number of weak learners.
    gamma : float
        The assumed edge γ ∈ (0, ½).
    mode : {"importance", "sampling", "potential"}
        How the weak learners are fed (above). Sampling draws N uniforms per replicate and round
        from the booster's own stream in ``update``, whether or not they are used.
        ``"potential"`` feeds the importance weight ``2w_t^i = Φ_i(s−1) − Φ_i(s+1)``, unnormalized,
        as Vowpal Wabbit's ``--boosting`` does (its ``--gamma g`` is this γ = 2g): the two
        importance modes differ only by a constant factor per learner, which changes nothing
        for AdaGrad lanes (``linear``) but does for ``normalized_linear`` (VW's learner).
    weak_learner : str or WeakLearner
        Registry name (group ``arena.weak_learners``) or instance; default ``oracle``.
    weak_learner_params : dict or None
        Its parameters.

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.adversaries.edge_oracle import EdgeOracle, majority_error
    >>> run = run_game(OnlineBBM(n_learners=21, gamma=0.4), EdgeOracle(edge=0.2), n_actions=21,
    ...                horizon=400, metrics=["mistakes"])
    >>> round(400 * majority_error(21, 0.2), 1)  # the expected mistakes of the majority vote
    10.6
    >>> 0 < float(run.rows.query("t == 400").value.iloc[0]) < 25
    True

    References
    ----------
    Luo 2016, §3.1.2 (Algorithm 7, Lemmas 8–9, Theorems 8–9) and §3.1.3 (Theorem 10);
    Beygelzimer, Kale & Luo 2015 (the same algorithm and bounds); Freund 1995 (boost-by-majority).
    """

    name = "online_bbm"
    tags: ClassVar[PlayerTags] = PlayerTags(protocols=frozenset({"boosting"}), sparse_input=True)
    parameter_constraints: ClassVar = {
        **WEAK_LEARNER_CONSTRAINTS,
        "gamma": [Interval(0, 0.5, closed="neither")],
        "mode": [OneOf(*MODES)],
    }

    def __init__(
        self,
        n_learners: int = 21,
        gamma: float = 0.1,
        mode: str = "importance",
        weak_learner: str | WeakLearner = "oracle",
        weak_learner_params: dict[str, Any] | None = None,
    ):
        self.n_learners = n_learners
        self.gamma = gamma
        self.mode = mode
        self.weak_learner = weak_learner
        self.weak_learner_params = weak_learner_params

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        check_task(self, spec)
        n, n_rep = int(self.n_learners), spec.n_replicates
        self._learners = self.make_learners(spec, rngs)
        self._rngs = list(rngs)
        self._m = float(n) - np.arange(1, n + 1, dtype=np.float64)  # N − i, i = 1 … N
        self._bound = bbm_weight_bound(n, float(self.gamma))
        self._weight = np.zeros((n_rep, n))
        self._edge = np.zeros((n_rep, n))
        self._calls = np.zeros((n_rep, n))
        self._tables = None  # the compiled chunk's weight tables, built on its first use

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.sign(self._learners.predict(x).sum(axis=1))

    def update(self, x: np.ndarray, y: np.ndarray) -> None:
        self._feed(x, y, self._learners.predict(x))

    def play_block(self, x: Any, y: np.ndarray) -> np.ndarray:
        """The per-round loop, querying the learners once per round (predict and update share
        the outputs, which the update does not change before it uses them).

        Over a weak learner with compiled lanes (``linear``, every step rule and loss, and
        ``normalized_linear``: :func:`arena.weak_learners._compiled.compiled_lanes`) the whole chunk
        is one compiled loop (:func:`_bbm_block`) that leaves the learners' state, the totals and
        the sampling stream where this loop leaves them (to rounding in the order of the
        learners' dot products); any other weak learner plays the loop below. ``x`` may be a
        :class:`~arena.oco.losses.SparseRows` chunk (the tag ``sparse_input``): the compiled loop
        reads its CSR arrays as they are, in O(nnz) per lane and round; the loop below hands
        each round's rows as they are to a learner that reads them (``stump``: its attribute
        ``sparse_rows``, O(nnz) per lane and round) and densifies them for the others.
        """
        lanes = compiled_lanes(self._learners)
        if lanes is not None:
            return self._compiled_block(lanes, x, y)
        n_rep, n = y.shape
        out = np.empty((n_rep, n))
        rows = getattr(self._learners, "sparse_rows", False)  # the learner reads sparse rows
        for j in range(n):
            xj = (x.round(j) if rows else x.round(j).densify()) if is_sparse(x) else x[:, j]
            h = self._learners.predict(xj)
            out[:, j] = np.sign(h.sum(axis=1))
            self._feed(xj, y[:, j], h)
        return out

    def _compiled_block(self, lanes: Any, x: Any, y: np.ndarray) -> np.ndarray:
        n_rep, n = y.shape
        n_learners = int(self.n_learners)
        if getattr(self, "_tables", None) is None:
            self._tables = bbm_share_table(n_learners, float(self.gamma), self.mode)
        if self.mode == "sampling":
            # one draw of n·N doubles is the stream of n consecutive draws of N (PCG64 doubles)
            uniforms = np.stack([rng.random((n, n_learners)) for rng in self._rngs])
        else:
            uniforms = np.empty((0, 0, 0))
        totals = np.stack([self._weight, self._edge, self._calls])
        out = np.empty((n_rep, n))
        csr = (x.indptr, x.indices, x.values) if is_sparse(x) else dense_csr(x)
        _bbm_block(*csr, readonly_contiguous(y, np.float64), lanes, *self._tables, uniforms,
                   totals, out)  # fmt: skip
        self._weight, self._edge, self._calls = totals[0], totals[1], totals[2]
        return out

    def _feed(self, x: np.ndarray, y: np.ndarray, h: np.ndarray) -> None:
        z = y[:, None] * h
        s = np.cumsum(z, axis=1)  # sequential sums, as the compiled chunk adds them
        s_prev = np.concatenate([np.zeros((z.shape[0], 1)), s[:, :-1]], axis=1)  # s^{i−1}
        w = _half_pmf(np.floor((self._m - s_prev + 1.0) / 2.0), self._m, float(self.gamma))
        share = _fed_weight(w, self._bound, self.mode)
        if self.mode == "sampling":
            u = np.stack([rng.random(share.shape[1]) for rng in self._rngs])
            share = np.where(u < share, 1.0, 0.0)
        self._weight += w
        self._edge += w * z
        self._calls += share > 0.0
        self._learners.update(x, np.repeat(y[:, None], h.shape[1], axis=1), share)

    def learner_totals(self) -> dict[str, np.ndarray]:
        """``weight = Σ_t w_t^i`` (with the ½, before sampling), ``edge = Σ_t w_t^i z_t^i`` and
        ``calls`` (updates with a positive weight), each (R, N)."""
        return {
            "weight": self._weight.copy(),
            "edge": self._edge.copy(),
            "calls": self._calls.copy(),
        }

    @classmethod
    def _unit_test_params(cls):
        # registered weak learners only (the suite evaluates repr); the tests drive learning
        # perceptron lanes (LaneSGD) through both modes against the literal transcription
        yield {"n_learners": 5, "gamma": 0.2}
        yield {"n_learners": 4, "gamma": 0.1, "mode": "sampling"}
        yield {"n_learners": 3, "gamma": 0.2, "mode": "potential"}
