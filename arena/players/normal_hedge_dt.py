"""NormalHedge.DT: Luo's parameter-free drifting-games algorithm with an exp(s²/3t) potential."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.experts.components import ExpertsPlayer
from arena.kernels import normalize_log_weights
from arena.metrics.base import exact_quantile_rank
from arena.params import OneOf
from arena.sampling import sample_action
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

STATES = ("expected", "realized")

BOUND_EPS = (0.1, 0.25)
"""Quantiles ε for which ``bounds`` declares the ε-quantile regret bound (besides ε = 1/N)."""

LN2 = math.log(2.0)


def nhdt_log_weights(regret: np.ndarray, t: int) -> np.ndarray:
    """Return ``log w`` of NormalHedge.DT at round ``t`` (denominator ``D = 3t``), elementwise.

    ``w(R) = ½[exp([R+1]_+²/D) − exp([R−1]_+²/D)]`` (the s-form of Luo 2016, Algorithm 4, at
    ``s = −R``), computed without cancellation as ``log w = b + log(expm1(δ)) − ln 2`` with
    ``b = [R−1]_+²/D`` and ``δ = 4R/D`` for ``R ≥ 1``, ``δ = (R+1)²/D`` for ``−1 < R < 1``
    (``log expm1(δ) = δ + log(−expm1(−δ))`` for δ > 1; in a game δ < 4/3 since R < t);
    ``w = 0`` (``log w = −inf``) for ``R ≤ −1``.

    Examples
    --------
    >>> round(float(np.exp(nhdt_log_weights(np.array([0.0]), 1))[0]), 10)  # ½(e^{1/3} − 1), §5.7
    0.1978062125
    """
    r = np.asarray(regret, dtype=np.float64)
    d = 3.0 * t
    above = r >= 1.0
    delta = np.where(above, 4.0 * r / d, (r + 1.0) ** 2 / d)
    b = np.where(above, (r - 1.0) ** 2 / d, 0.0)
    with np.errstate(divide="ignore", over="ignore"):  # masked below: R ≤ −1 has weight 0
        # log(expm1(δ)), written as δ + log(−expm1(−δ)) above 1 so that it never overflows
        log_expm1 = np.where(
            delta > 1.0, delta + np.log(-np.expm1(-delta)), np.log(np.expm1(delta))
        )
        logw = b + log_expm1 - LN2
    return np.where(r > -1.0, logw, -np.inf)


def softmax_rows(logw: np.ndarray) -> np.ndarray:
    """Normalize ``exp(logw)`` row-wise, subtracting the row max; a row of ``−inf`` is uniform."""
    m = logw.max(axis=-1, keepdims=True)
    finite = np.isfinite(m)
    w = np.exp(logw - np.where(finite, m, 0.0))
    w = np.where(finite, w, 1.0)
    return w / w.sum(axis=-1, keepdims=True)


def harmonic_exp_sum(t: int) -> float:
    """Return ``Σ_{τ=1}^{t} (e^{4/(3τ)} − 1)``, i.e. ``2(1 − b_0)`` for horizon t.

    Examples
    --------
    >>> round(harmonic_exp_sum(1), 10)  # e^{4/3} − 1
    2.7936678947
    """
    tau = np.arange(1, t + 1, dtype=np.float64)
    return float(np.expm1(4.0 / (3.0 * tau)).sum())


@njit(cache=True, nogil=True)
def _nhdt_linear_probs(regret, d, out):
    """Try p in the linear domain (2 transcendental calls per expert instead of 3).

    By the potential invariant (Luo 2016, Lemma 2) the exponents ``[R−1]_+²/D`` stay below
    ``ln(N(1 + ½Σ(e^{4/(3τ)} − 1)))``, so a correct run never overflows here; if an exponent
    exceeds 700 or the weights' sum is tiny, it returns False and the log-domain path is used.
    """
    n_act = regret.shape[0]
    total = 0.0
    for i in range(n_act):
        x = regret[i]
        w = 0.0
        if x > -1.0:
            if x >= 1.0:
                a = (x - 1.0) * (x - 1.0) / d
                if a > 700.0:
                    return False
                w = 0.5 * math.exp(a) * math.expm1(4.0 * x / d)
            else:
                w = 0.5 * math.expm1((x + 1.0) * (x + 1.0) / d)
        out[i] = w
        total += w
    if not total > 1e-280:
        return False
    for i in range(n_act):
        out[i] /= total
    return True


@njit(cache=True, nogil=True)
def _nhdt_row_probs(regret, t, out):
    """Fill ``out`` with NormalHedge.DT's p at round ``t`` for one replicate's regrets."""
    n_act = regret.shape[0]
    d = 3.0 * t
    if _nhdt_linear_probs(regret, d, out):
        return
    m = -np.inf
    for i in range(n_act):
        x = regret[i]
        if x > -1.0:
            if x >= 1.0:
                delta = 4.0 * x / d
                b = (x - 1.0) * (x - 1.0) / d
            else:
                delta = (x + 1.0) * (x + 1.0) / d
                b = 0.0
            if delta > 1.0:
                lw = b + (delta + math.log(-math.expm1(-delta))) - LN2
            else:
                lw = b + math.log(math.expm1(delta)) - LN2
        else:
            lw = -np.inf
        out[i] = lw
        if lw > m:
            m = lw
    normalize_log_weights(out, m)


@njit(cache=True, nogil=True)
def _nhdt_play_block(losses, uniforms, regret, rounds_done, realized, lo, scale, probs):
    """Play a chunk: ``probs[r, j]`` is p at round ``rounds_done + j + 1``; ``regret`` advances.

    In the realized-state mode the learner's loss is ``ℓ_{t,I_t}`` with ``I_t`` drawn from the
    arena's uniform ``uniforms[r, j]`` exactly as the arena draws it.
    """
    n_rep, n, n_act = losses.shape
    for r in range(n_rep):
        for j in range(n):
            p = probs[r, j]
            _nhdt_row_probs(regret[r], rounds_done + j + 1, p)
            if realized:
                a = sample_action(p, uniforms[r, j])
                h = (losses[r, j, a] - lo) / scale
            else:
                h = 0.0
                for i in range(n_act):
                    h += p[i] * ((losses[r, j, i] - lo) / scale)
            for i in range(n_act):
                regret[r, i] += h - (losses[r, j, i] - lo) / scale


class NormalHedgeDT(ExpertsPlayer):
    """NormalHedge.DT: ``p_{t,i} ∝ exp([s_{t−1,i} − 1]_-²/(3t)) − exp([s_{t−1,i} + 1]_-²/(3t))``.

    Algorithm 3 of Luo's thesis with the potential of Lemma 2, ``Φ_t(s) = a(exp([s]_-²/(3t)) −
    b_t)``, ``[x]_- = min(0, x)``, d = 3. Parameter-free and anytime.

    Parameters
    ----------
    state : {"expected", "realized"}
        ``"expected"`` (default) is the thesis's expert algorithm: the cumulative regrets use the
        learner's expected loss ``p_t·ℓ_t``. ``"realized"`` is the randomized-play variant of
        Luo 2016, §2.1.5: they use the realized loss ``ℓ_{t,I_t}`` of the arena's draw
        ``I_t ~ p_t``, so ``p`` depends on the draws. The player is
        tagged ``observes_action``; in the expected mode it ignores the actions and never needs
        them.

    Notes
    -----
    With losses mapped to [0, 1] by the declared range, the learner keeps
    ``R_{t,i} = Σ_{τ≤t} (h_τ − ℓ_{τ,i})`` with ``h_τ = p_τ·ℓ_τ`` (expected) or ``ℓ_{τ,I_τ}``
    (realized), and at round t plays ``p_{t,i} ∝ w(R_{t−1,i})`` with ``D = 3t`` and::

        w(R) = ½[exp([R + 1]_+²/D) − exp([R − 1]_+²/D)]
             = 0                                 if R ≤ −1
             = ½ expm1((R + 1)²/D)                if −1 < R < 1
             = ½ exp((R − 1)²/D) expm1(4R/D)      if R ≥ 1.

    This is the s-form at ``s = −R`` (``[s ± 1]_-² = [R ∓ 1]_+²``), equal to AdaNormalHedge's weight
    with ``C_{t−1} = t − 1`` (Luo 2016, §2.3). ``p_1`` is uniform. The weights are computed in the
    log domain with ``expm1`` of the exact exponent difference and normalized after subtracting the
    max, so nothing overflows and no cancellation occurs. An expert with ``R_{t−1,i} ≤ −1`` gets
    exactly zero weight. In exact arithmetic some weight always survives; a row of zero weights,
    which only rounding could produce, falls back to uniform.

    **Source typos followed as corrected**: in Luo 2016, §2.1.4, the update printed after
    Lemma 2 has ``[·]_+`` and the potentials ``Φ_T``, ``Φ_t`` (before and in Lemma 2) have
    ``|s|``; this implementation uses the negative part ``[·]_-`` in both, as in Table 2.1,
    Algorithm 4 and the proof of Lemma 2 in Appendix A.1 (with ``|s|`` the potential would not
    be nonincreasing, which Algorithm 3 requires).

    Guarantee (expected state; Lemma 2 and the proof of Corollary 2): for every loss
    sequence in [0, 1], adaptive adversaries included, every t and every k, the k-th largest
    regret satisfies::

        R_(k)(t) ≤ sqrt(3t ln((N/k)(1 − b_0) + 1)),  1 − b_0 = ½ Σ_{τ=1}^{t} (e^{4/(3τ)} − 1),

    the intermediate (tighter) form of Corollary 2 at ``ε = k/N`` (Corollary 2 itself relaxes
    ``1 − b_0 ≤ ½(e^{4/3} − 1)(ln t + 1)``). ``bounds`` declares it for the regret (k = 1) and the
    ε-quantile regret at ε ∈ {0.1, 0.25} (``k = ⌈εN⌉``), times the loss range width. The
    realized-state variant only has a high-probability guarantee (§2.1.5), so it
    declares no bound.

    Examples
    --------
    >>> from arena import play
    >>> df = play(NormalHedgeDT(), "fair_coin", n_actions=10, horizon=1000,
    ...           metrics={"regret": {}, "bound": {}})
    >>> last = df[df.t == 1000].set_index("metric").value
    >>> bool(last["regret"] <= last["bound:regret"])
    True

    References
    ----------
    Luo 2016: Algorithm 3 (§2.1.3), Lemma 2, the update and Corollary 2 with its proof
    (§2.1.4), high-probability variant (§2.1.5), R-form (§2.3), proof of Lemma 2 (Appendix A.1).
    Luo & Schapire (2014), "A drifting-games analysis for online learning and applications to
    boosting", NIPS.
    """

    tags = PlayerTags(protocols=frozenset({"experts"}), block_kernel=True, observes_action=True)
    parameter_constraints: ClassVar = {"state": [OneOf(*STATES)]}

    def __init__(self, state: str = "expected"):
        self.state = state

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._realized = self.state == "realized"
        self._n = spec.n_actions
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._regret = np.zeros((spec.n_replicates, spec.n_actions))
        self._rounds = 0
        self._sum_t, self._sum = 0, 0.0  # cache of Σ_{τ≤t} (e^{4/(3τ)} − 1) for the bounds

    @property
    def regret(self) -> np.ndarray:
        """Cumulative regrets ``R_{t,i}`` of the state (unit-range losses), shape (R, N), a copy."""
        return self._regret.copy()

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        return softmax_rows(nhdt_log_weights(self._regret, self._rounds + 1))

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        unit = (losses - self._lo) / self._scale
        if self._realized:
            if actions is None:
                raise ValueError("normal_hedge_dt(state='realized') needs the realized actions")
            h = unit[np.arange(unit.shape[0]), np.asarray(actions, dtype=np.int64)]
        else:
            h = np.einsum("rn,rn->r", self.predict(), unit)
        self._regret += h[:, None] - unit
        self._rounds += 1

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        if self._realized:
            if uniforms is None:
                raise ValueError("normal_hedge_dt(state='realized') needs the action uniforms")
            u = np.ascontiguousarray(uniforms, dtype=np.float64)
        else:
            u = np.empty((0, 0))
        probs = np.empty_like(losses)
        _nhdt_play_block(
            losses,
            u,
            self._regret,
            self._rounds,
            self._realized,
            self._lo,
            self._scale,
            probs,
        )
        self._rounds += losses.shape[1]
        return probs

    def bounds(self, t: int) -> dict[tuple[str, float], float]:
        """Declare the bound of the Notes (expected state only; the realized one declares none)."""
        if self._realized:
            return {}
        out = {("regret", math.nan): self.quantile_bound(t, 1)}
        for eps in BOUND_EPS:
            out["quantile_regret", eps] = self.quantile_bound(t, exact_quantile_rank(eps, self._n))
        return out

    def quantile_bound(self, t: int, k: int) -> float:
        """Return ``scale · sqrt(3t ln((N/k)(1 − b_0) + 1))`` after t rounds (see Notes)."""
        one_minus_b0 = 0.5 * self._exp_sum(t)
        return self._scale * math.sqrt(3.0 * t * math.log1p(self._n / k * one_minus_b0))

    def _exp_sum(self, t: int) -> float:
        """``Σ_{τ≤t} (e^{4/(3τ)} − 1)``, extended incrementally between checkpoints."""
        if t < self._sum_t:
            self._sum_t, self._sum = 0, 0.0
        if t > self._sum_t:
            tau = np.arange(self._sum_t + 1, t + 1, dtype=np.float64)
            self._sum += float(np.expm1(4.0 / (3.0 * tau)).sum())
            self._sum_t = t
        return self._sum

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"state": "realized"}
