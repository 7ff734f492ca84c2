"""Regret to a time-varying competitor the adversary declares (Luo 2016, §2.3.3, Theorem 7).

Notation: ``ℓ̂_t = p_t·ℓ_t``, ``r_{t,i} = ℓ̂_t − ℓ_{t,i}``, and a competitor sequence
``u_1, …, u_T ∈ ℝ_+^N`` (a distribution per round in the built-in adversaries; the thesis allows
any nonnegative vectors). With ``u_0 = 0``:

* ``tv_regret``: ``R(u_{1:t}) = Σ_{s≤t} u_s·r_s`` (regret to the sequence);
* ``tv_variation``: ``V(u_{1:t}) = Σ_{s≤t} Σ_i [u_{s,i} − u_{s−1,i}]_+`` (its variation,
  Cesa-Bianchi et al. 2012; for distributions, 1 plus the total-variation distance travelled, so
  a path of point masses with k switches has ``V = k + 1``);
* ``tv_loss``: ``L̃(u_{1:t}) = Σ_{s≤t} Σ_i u_{s,i} [ℓ_{s,i} − ℓ̂_s]_+`` (the competitor's loss in
  excess of the learner's, which the first-order bounds of the thesis are written in).

**Which competitor.** An adversary declares the oracle ``competitor`` (in ``tags.oracle``) and
serves ``oracle("competitor", t0, n)``: ``u_t`` for the rounds ``t0 … t0+n−1`` as an (R, n, N)
array, like its ``means``. ``shifting_experts`` declares the best expert of each segment (a
k-shift path, ``V = n_switches + 1``); ``drifting_means`` the expert of least mean in each round.

**Families computed from the losses alone.** The best competitor with at most k switches is
:class:`~arena.metrics.shifting.ShiftingRegret` and is not repeated here. The best competitor
sequence of distributions with variation at most V needs no new computation either: TV distance
is optimal transport with cost 1 per switch, so such sequences are the unit flows of a layered
graph (one node per round and expert, switching edges costing 1) with one budget constraint; a
linear objective over a flow polytope cut by one constraint is maximized at a mixture of two
paths, so the best regret is the upper concave envelope, over k, of the shifting regret with k
switches, evaluated at ``k = V − 1`` (:func:`best_variation_regret`, checked against a linear
program in the tests). It needs the shifting regret for every k up to ``t − 1``, O(N t²) per
checkpoint: tractable for small games only, so no metric computes it.

**Declared bound.** A player declares Theorem 7's constant through
``interval_regret_constant(t) -> (R,)``: an ``A_t`` (loss units) such that every interval
``[t₁, t₂] ⊆ [1, t]`` and expert i have ``R_{[t₁,t₂],i} ≤ sqrt(A_t Σ_{s=t₁}^{t₂} |r_{s,i}|)``.
Theorem 7 (with Lemma 5's decomposition of each ``u_{·,i}`` into intervals of total weight
``Σ_t [u_{t,i} − u_{t−1,i}]_+``, and Cauchy–Schwarz over experts) then gives
``R(u) ≤ sqrt(A V Σ_t u_t·|r_t|)``, and ``Σ_t u_t·|r_t| = R(u) + 2 L̃(u)``, so solving the
quadratic,

``R(u_{1:t}) ≤ A V / 2 + sqrt((A V / 2)² + 2 A V L̃)  (≤ A V + sqrt(2 A V L̃))``,

the explicit form of Theorem 7's ``Ô(sqrt(V L̃ ln(NT)))``. The ``tv_regret`` metric logs it as
``bound:tv_regret`` for the declared competitor's own V and L̃.

References
----------
Luo 2016, §2.3.3 ("General time-varying competitors"), Theorem 7 and Lemma 5 (proof in
Appendix A.4); Cesa-Bianchi, Gaillard, Lugosi & Stoltz 2012 (the variation V).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from arena.metrics.base import Block, Core, ExpertsMetric, ExpertsRecord
from arena.metrics.literal import check_history, learner_losses, required
from arena.spec import GameSpec

TV_METRICS = ("tv_regret", "tv_variation", "tv_loss")
"""The metrics of this module: ``R(u_{1:t})``, ``V(u_{1:t})``, ``L̃(u_{1:t})``."""


@njit(cache=True, nogil=True)
def _tv_advance(losses, expected, competitor, last, sums):
    """Add each round's ``u_t·r_t``, ``Σ_i [u_{t,i} − u_{t−1,i}]_+`` and ``Σ_i u_{t,i}[ℓ_{t,i} −
    ℓ̂_t]_+`` to ``sums[r, 0:3]``, one round after the other (so the sums are the same to the last
    bit however the rounds are chunked); ``last[r]`` carries ``u_{t−1}`` across chunks."""
    n_rep, n, n_act = losses.shape
    for r in range(n_rep):
        for j in range(n):
            hat = expected[r, j]
            regret = 0.0
            variation = 0.0
            excess = 0.0
            for i in range(n_act):
                u = competitor[r, j, i]
                loss = losses[r, j, i]
                regret += u * (hat - loss)
                rise = u - last[r, i]
                if rise > 0.0:
                    variation += rise
                if loss > hat:
                    excess += u * (loss - hat)
                last[r, i] = u
            sums[r, 0] += regret
            sums[r, 1] += variation
            sums[r, 2] += excess


def theorem7_bound(constant, variation, excess_loss):
    """Theorem 7's bound ``A V/2 + sqrt((A V/2)² + 2 A V L̃)`` on ``R(u_{1:t})`` (see the module).

    Parameters
    ----------
    constant : array_like
        ``A``: the interval constant, ``R_{[t₁,t₂],i} ≤ sqrt(A Σ_{s=t₁}^{t₂} |r_{s,i}|)``.
    variation, excess_loss : array_like
        The competitor's ``V(u_{1:t})`` and ``L̃(u_{1:t})``.

    Returns
    -------
    ndarray

    Examples
    --------
    >>> float(theorem7_bound(2.0, 3.0, 0.0))  # no excess loss: A·V
    6.0
    >>> float(theorem7_bound(2.0, 1.0, 4.0))  # 1 + sqrt(1 + 16)
    5.123105625617661
    """
    half = 0.5 * np.asarray(constant, dtype=np.float64) * np.asarray(variation, dtype=np.float64)
    return half + np.sqrt(half * half + 4.0 * half * np.asarray(excess_loss, dtype=np.float64))


def best_variation_regret(shifting: Sequence[float], budget: float) -> float:
    """The best regret to a sequence of distributions with variation ``V ≤ budget``, from the
    shifting regrets with ``k = 0, 1, …, K`` switches (``K = t − 1``: every budget of the game).

    It is the upper concave envelope of ``k ↦ shifting[k]`` at ``k = budget − 1`` (see the module
    docstring for why); ``V ≥ 1`` for any sequence of distributions, and budgets beyond ``K + 1``
    give ``shifting[K]`` (the dynamic regret when ``K = t − 1``).

    Parameters
    ----------
    shifting : sequence of float
        ``shifting_regret`` at ``k = 0 … K`` (consecutive, nondecreasing in k).
    budget : float
        The variation budget V ≥ 1.

    Returns
    -------
    float

    Examples
    --------
    >>> best_variation_regret([0.0, 1.0, 4.0], 2.5)  # on the chord from k = 0 to k = 2
    3.0
    >>> best_variation_regret([0.0, 3.0, 4.0], 1.5)
    1.5
    """
    values = np.asarray(shifting, dtype=np.float64)
    if values.ndim != 1 or values.size < 1:
        raise ValueError("shifting must list the shifting regret for k = 0, 1, …, K")
    if not budget >= 1.0:
        raise ValueError(f"a sequence of distributions has variation ≥ 1, got budget {budget!r}")
    x = min(float(budget) - 1.0, float(values.size - 1))
    best = -math.inf
    for lo in range(math.floor(x) + 1):
        for hi in range(math.ceil(x), values.size):
            if hi == lo:
                best = max(best, float(values[lo]))
            else:
                w = (x - lo) / (hi - lo)
                best = max(best, (1.0 - w) * float(values[lo]) + w * float(values[hi]))
    return best


# ----------------------------------------------------------------------------------------------
# brute-force definitions (the metrics' references)


def check_competitor(competitor: np.ndarray, losses: np.ndarray) -> np.ndarray:
    """Return the competitor (T, N) as floats, checked finite, ≥ 0 and shaped as the losses."""
    u = np.asarray(competitor, dtype=np.float64)
    if u.shape != losses.shape:
        raise ValueError(f"competitor has shape {u.shape}, losses {losses.shape}")
    if not (np.isfinite(u) & (u >= 0.0)).all():
        raise ValueError("a competitor must be finite and nonnegative")
    return u


def tv_regret(probs: np.ndarray, losses: np.ndarray, competitor: np.ndarray) -> float:
    """Regret to a time-varying competitor, ``R(u_{1:T}) = Σ_t Σ_i u_{t,i} (p_t·l_t − l_{t,i})``.

    Luo 2016, §2.3.3 ("General time-varying competitors"), summed over the whole (T, N) table of
    ``u_{t,i} r_{t,i}``.

    Parameters
    ----------
    probs, losses, competitor : ndarray, shape (T, N)
        ``competitor[t−1]`` is ``u_t`` (nonnegative).

    Returns
    -------
    float

    Examples
    --------
    >>> p = np.array([[0.5, 0.5], [0.5, 0.5]]); l = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> tv_regret(p, l, np.array([[0.0, 1.0], [1.0, 0.0]]))  # the per-round best: ½ + ½
    1.0
    """
    probs, losses = check_history(probs, losses)
    u = check_competitor(competitor, losses)
    hat = learner_losses(probs, losses)
    return float((u * (hat[:, None] - losses)).sum())


def tv_variation(competitor: np.ndarray) -> float:
    """Variation ``V(u_{1:T}) = Σ_t Σ_i [u_{t,i} − u_{t−1,i}]_+`` with ``u_0 = 0``.

    Cesa-Bianchi, Gaillard, Lugosi & Stoltz 2012; Luo 2016, §2.3.3. The rows ``u_0 = 0, u_1, …,
    u_T`` are stacked and the positive parts of their differences summed.

    Parameters
    ----------
    competitor : ndarray, shape (T, N)

    Returns
    -------
    float

    Examples
    --------
    >>> tv_variation(np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]))  # 1 + 1 + ½
    2.5
    """
    u = np.asarray(competitor, dtype=np.float64)
    rows = np.vstack([np.zeros((1, u.shape[1])), u])  # u_0 = 0, u_1, …, u_T
    return float(np.maximum(rows[1:] - rows[:-1], 0.0).sum())


def tv_loss(probs: np.ndarray, losses: np.ndarray, competitor: np.ndarray) -> float:
    """The competitor's excess loss ``L̃(u_{1:T}) = Σ_t Σ_i u_{t,i} [l_{t,i} − p_t·l_t]_+``.

    Luo 2016, §2.3.3, after Theorem 7.

    Parameters
    ----------
    probs, losses, competitor : ndarray, shape (T, N)

    Returns
    -------
    float
    """
    probs, losses = check_history(probs, losses)
    u = check_competitor(competitor, losses)
    hat = learner_losses(probs, losses)
    return float((u * np.maximum(losses - hat[:, None], 0.0)).sum())


def best_variation_regret_lp(probs: np.ndarray, losses: np.ndarray, budget: float) -> float:
    """``max R(u_{1:T})`` over sequences of distributions ``u_t ∈ Δ_N`` with ``V(u_{1:T}) ≤
    budget``, by a linear program (the literal definition; Luo 2016, §2.3.3).

    Variables ``u_{t,i} ≥ 0`` and ``d_{t,i} ≥ u_{t,i} − u_{t−1,i}``, ``d ≥ 0`` (``u_0 = 0``), with
    ``Σ_i u_{t,i} = 1`` and ``Σ d ≤ budget``; maximize ``Σ u_{t,i} r_{t,i}``. Solved by HiGHS
    (``scipy.optimize.linprog``) to its default tolerances, ~1e-9 on instances of a few rounds.

    Parameters
    ----------
    probs, losses : ndarray, shape (T, N)
    budget : float
        The variation budget V ≥ 1.

    Returns
    -------
    float
    """
    from scipy.optimize import linprog

    probs, losses = check_history(probs, losses)
    n_rounds, n_act = losses.shape
    regret = learner_losses(probs, losses)[:, None] - losses
    n_u = n_rounds * n_act
    cost = np.concatenate([-regret.reshape(-1), np.zeros(n_u)])  # minimize −R
    a_ub, b_ub = [], []
    for t in range(n_rounds):
        for i in range(n_act):
            row = np.zeros(2 * n_u)
            row[t * n_act + i] = 1.0  # u_{t,i} − u_{t−1,i} − d_{t,i} ≤ 0
            if t > 0:
                row[(t - 1) * n_act + i] = -1.0
            row[n_u + t * n_act + i] = -1.0
            a_ub.append(row)
            b_ub.append(0.0)
    a_ub.append(np.concatenate([np.zeros(n_u), np.ones(n_u)]))  # Σ d ≤ budget
    b_ub.append(float(budget))
    a_eq = np.zeros((n_rounds, 2 * n_u))
    for t in range(n_rounds):
        a_eq[t, t * n_act : (t + 1) * n_act] = 1.0
    result = linprog(cost, A_ub=np.array(a_ub), b_ub=b_ub, A_eq=a_eq, b_eq=np.ones(n_rounds))
    if result.status != 0:
        raise ValueError(f"the variation LP failed: {result.message}")
    return float(-result.fun)


# ----------------------------------------------------------------------------------------------
# the streaming metrics


class _CompetitorSums(ExpertsMetric):
    """Base of the metrics of the competitor the adversary declares: the running sums of
    ``u_t·r_t``, ``Σ_i [u_{t,i} − u_{t−1,i}]_+`` and ``Σ_i u_{t,i}[ℓ_{t,i} − ℓ̂_t]_+``.

    Computed only against adversaries exposing the oracle ``competitor`` (an (R, n, N) array of
    nonnegative ``u_t`` per chunk, read through the adversary's ``oracle``). O(N) per round and
    replicate; every sum is added in round order, so any split of the rounds into chunks gives the
    same values to the last bit.
    """

    requires = frozenset({"competitor"})
    block_only = True  # the adversary is kept for its oracle over each block's rounds
    column = 0
    """Which sum :meth:`values` reports (0: regret, 1: variation, 2: excess loss)."""

    def attach(self, player: Any, adversary: Any) -> None:
        self._adversary = adversary

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._sums = np.zeros((spec.n_replicates, 3))
        self._last = np.zeros((spec.n_replicates, spec.n_actions))

    def _competitor(self, block: Block) -> np.ndarray:
        """The adversary's ``u_t`` for the block's rounds, (R, n, N), checked finite and ≥ 0."""
        from arena.errors import GameError
        from arena.validation import Who, real_array

        shape = block.losses.shape
        who = Who("adversary", self._adversary)
        raw = real_array(
            self._adversary.oracle("competitor", block.t0, shape[1]),
            who,
            'oracle("competitor")',
            round=block.t0,
        )
        try:
            u = np.ascontiguousarray(np.broadcast_to(raw, shape))
        except ValueError:
            msg = f'oracle("competitor") returned shape {raw.shape}, expected {shape}'
            raise GameError(str(who), msg, round=block.t0) from None
        bad = ~(np.isfinite(u) & (u >= 0.0))
        if bad.any():
            r, j, i = (int(x[0]) for x in np.nonzero(bad))
            msg = (
                f'oracle("competitor") gave u_t = {float(u[r, j, i])!r} for expert {i}; a '
                "competitor must be finite and nonnegative"
            )
            replicate = int(self._spec.replicate_ids[r]) if len(self._spec.replicate_ids) else r
            raise GameError(str(who), msg, round=block.t0 + j, replicate=replicate)
        return u

    def advance(self, block: Block, core: Core) -> None:
        _tv_advance(block.losses, block.expected, self._competitor(block), self._last, self._sums)

    def values(self, core: Core) -> np.ndarray:
        return self._sums[:, self.column : self.column + 1].copy()


class TimeVaryingRegret(_CompetitorSums):
    """Regret ``R(u_{1:t}) = Σ_{s≤t} u_s·r_s`` to the competitor sequence the adversary declares
    (Luo 2016, §2.3.3, "General time-varying competitors").

    Also logs ``bound:tv_regret`` when the player declares ``interval_regret_constant``:
    Theorem 7's bound for this competitor, ``A V/2 + sqrt((A V/2)² + 2 A V L̃)`` with the
    competitor's variation V (:class:`CompetitorVariation`) and excess loss L̃
    (:class:`CompetitorExcessLoss`); definitions and derivation in the module docstring.

    Examples
    --------
    >>> from arena import play
    >>> df = play("ada_normal_hedge_tv", "shifting_experts", n_actions=3, horizon=200,
    ...           adversary_params={"n_switches": 2},
    ...           metrics={"tv_regret": {}, "tv_variation": {}, "shifting_regret": {"k": [2]}})
    >>> last = df[df.t == 200].set_index("metric").value
    >>> float(last["tv_variation"])  # three segments: V = k + 1
    3.0
    >>> bool(last["tv_regret"] <= last["shifting_regret"])  # the best 2-switch path does better
    True
    >>> bool(last["tv_regret"] <= last["bound:tv_regret"])
    True

    References
    ----------
    Luo 2016, §2.3.3, Theorem 7 and Lemma 5; Cesa-Bianchi, Gaillard, Lugosi & Stoltz 2012.
    """

    name = "tv_regret"
    block_only = False  # its bound reads the player's declared constant at the last round
    column = 0

    def attach(self, player: Any, adversary: Any) -> None:
        super().attach(player, adversary)
        declares = callable(getattr(player, "interval_regret_constant", None))
        self._player = player if declares else None

    def row_keys(self, spec: GameSpec) -> list[tuple[str, float]]:
        keys = [(self.name, math.nan)]
        if getattr(self, "_player", None) is not None:
            keys.append(("bound:tv_regret", math.nan))
        return keys

    def values(self, core: Core) -> np.ndarray:
        regret = self._sums[:, 0]
        if self._player is None:
            return regret[:, None].copy()
        constant = np.broadcast_to(
            np.asarray(self._player.interval_regret_constant(core.t), dtype=np.float64),
            (self._spec.n_replicates,),
        )
        return np.stack([regret, theorem7_bound(constant, self._sums[:, 1], self._sums[:, 2])], 1)

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`tv_regret`."""
        u = required(record, "competitor", self.name)
        return tv_regret(record.probs, record.losses, u)

    def reference_rows(self, records) -> list[tuple[str, float, list[float]]]:
        """The regret, and where the player declares Theorem 7's constant A (one per replicate)
        its bound ``A V/2 + sqrt((A V/2)² + 2 A V L̃)`` from the brute-force V and L̃."""
        rows = [(self.name, math.nan, [self.reference(rec, math.nan) for rec in records])]
        player = records[0].player
        declares = getattr(player, "interval_regret_constant", None)
        if callable(declares):
            constant = np.broadcast_to(declares(records[0].t), (len(records),))
            bound = []
            for rec in records:
                u = required(rec, "competitor", self.name)
                half = 0.5 * float(constant[rec.replicate]) * tv_variation(u)
                excess = tv_loss(rec.probs, rec.losses, u)
                bound.append(half + math.sqrt(half * half + 4.0 * half * excess))  # Theorem 7
            rows.append(("bound:tv_regret", math.nan, bound))
        return rows


class CompetitorVariation(_CompetitorSums):
    """Variation ``V(u_{1:t}) = Σ_{s≤t} Σ_i [u_{s,i} − u_{s−1,i}]_+`` (``u_0 = 0``) of the
    competitor the adversary declares: ``k + 1`` for a path of point masses with k switches.

    References
    ----------
    Cesa-Bianchi, Gaillard, Lugosi & Stoltz 2012; Luo 2016, §2.3.3.
    """

    name = "tv_variation"
    column = 1

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`tv_variation`."""
        return tv_variation(required(record, "competitor", self.name))


class CompetitorExcessLoss(_CompetitorSums):
    """Excess loss ``L̃(u_{1:t}) = Σ_{s≤t} Σ_i u_{s,i} [ℓ_{s,i} − ℓ̂_s]_+`` of the competitor the
    adversary declares over the learner (the first-order quantity of Theorem 7).

    References
    ----------
    Luo 2016, §2.3.3, after Theorem 7.
    """

    name = "tv_loss"
    column = 2

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`tv_loss`."""
        u = required(record, "competitor", self.name)
        return tv_loss(record.probs, record.losses, u)
