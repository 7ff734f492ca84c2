"""Hedge (exponential weights): fixed, horizon-tuned, anytime or doubling-trick learning rates."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.errors import ConfigError
from arena.experts.components import ExpertsPlayer
from arena.metrics.base import exact_quantile_rank
from arena.params import Interval, OneOf
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

ETA_SCHEDULES = ("tuned", "anytime", "doubling")

FIXED, ANYTIME, DOUBLING = 0, 1, 2
"""Kernel codes of the rate schedules (a number or ``"tuned"`` is FIXED)."""

BOUND_EPS = (0.1, 0.25)
"""Quantiles ε for which a fixed rate declares the ε-quantile regret bound (besides ε = 1/N)."""

DOUBLING_FACTOR = math.sqrt(2.0) / (math.sqrt(2.0) - 1.0)
"""``√2/(√2 − 1) ≈ 3.414``: the doubling trick's price over the tuned bound (CBL Ex. 2.8)."""


def hedge_probs(cum_losses: np.ndarray, eta: float) -> np.ndarray:
    """Return ``p_i ∝ exp(−η L_i)`` row-wise, computed stably as ``exp(−η (L_i − min L))``.

    Examples
    --------
    >>> hedge_probs(np.array([[0.0, 1.0]]), math.log(3.0)).round(3).tolist()
    [[0.75, 0.25]]
    """
    shifted = cum_losses - cum_losses.min(axis=-1, keepdims=True)
    w = np.exp(-eta * shifted)
    return w / w.sum(axis=-1, keepdims=True)


@njit(cache=True, nogil=True)
def _epoch_rate(t, log_n):
    """Doubling trick: round t lies in epoch m = ⌊log2 t⌋ (rounds 2^m .. 2^{m+1} − 1), whose rate is
    ``sqrt(8 ln N / 2^m)``, Hedge tuned for the epoch's length 2^m."""
    m = 0
    while (2 << m) <= t:
        m += 1
    return math.sqrt(8.0 * log_n / (1 << m))


@njit(cache=True, nogil=True)
def _hedge_block_exponents(losses, cum, rounds_done, mode, eta, log_n, lo, scale, out):
    """Write ``−η_t (L_{t−1,i} − min_j L_{t−1,j})`` for each round of a chunk into ``out``.

    ``out[r, j]`` belongs to round ``t = rounds_done + j + 1``; ``cum`` advances over the chunk.
    ``mode`` is FIXED (rate ``eta``), ANYTIME (``sqrt(8 ln N / t)``) or DOUBLING (per-epoch rate,
    and ``cum`` restarts from zero when round t + 1 opens a new epoch, i.e. is a power of two).
    Hedge's weights never depend on its own past distributions, so the exponentials of a whole
    chunk can be taken afterwards in one call.
    """
    n_rep, n, n_act = losses.shape
    for r in range(n_rep):
        for j in range(n):
            t = rounds_done + j + 1
            if mode == ANYTIME:
                e = math.sqrt(8.0 * log_n / t)
            elif mode == DOUBLING:
                e = _epoch_rate(t, log_n)
            else:
                e = eta
            m = np.inf
            for i in range(n_act):
                c = cum[r, i]
                m = c if c < m else m
            for i in range(n_act):
                out[r, j, i] = -e * (cum[r, i] - m)
            if mode == DOUBLING and (t + 1) & t == 0:
                for i in range(n_act):
                    cum[r, i] = 0.0
            else:
                for i in range(n_act):
                    cum[r, i] += (losses[r, j, i] - lo) / scale


MAX_TABLE = 1 << 16
"""Largest integral gap ``L_{t−1,i} − min_j L_{t−1,j}`` whose weight a fixed rate looks up."""


@njit(cache=True, nogil=True)
def _hedge_fixed_block(losses, cum, lo, scale, table, neg_eta, out, rows):
    """One pass of a fixed rate over a chunk: each round's weights, normalized, into ``out``.

    Round ``j`` of replicate ``r`` has the gaps ``d_i = L_{t−1,i} − min_k L_{t−1,k}``. When
    they are all whole numbers below ``table.size`` (0/1 losses: Bernoulli, coins, most
    constructed adversaries) its row is ``table[d_i]`` divided by the row's sum, ``table`` being
    ``np.exp(−η k)``. Any other row gets the exponents ``(−η)·d_i`` and its flat index
    ``r·n + j`` in ``rows``, for ``np.exp`` and the normalization afterwards. ``cum`` advances
    over the chunk. Returns how many rows were left to ``np.exp``.
    """
    n_rep, n, n_act = losses.shape
    size = table.shape[0]
    unit = lo == 0.0 and scale == 1.0
    count = 0
    for r in range(n_rep):
        for j in range(n):
            m = np.inf
            for i in range(n_act):
                c = cum[r, i]
                m = c if c < m else m
            lookup = True
            for i in range(n_act):
                d = cum[r, i] - m
                lookup &= (d == math.floor(d)) & (d < size)
            if lookup:
                s = 0.0
                for i in range(n_act):
                    x = table[int(cum[r, i] - m)]
                    out[r, j, i] = x
                    s += x
                for i in range(n_act):
                    out[r, j, i] /= s
            else:
                for i in range(n_act):
                    out[r, j, i] = neg_eta * (cum[r, i] - m)
                rows[count] = r * n + j
                count += 1
            if unit:  # (l − 0)/1 is l, bit for bit, and a division costs more than the rest
                for i in range(n_act):
                    cum[r, i] += losses[r, j, i]
            else:
                for i in range(n_act):
                    cum[r, i] += (losses[r, j, i] - lo) / scale
    return count


def _fixed_rate_table(eta: float, cum: np.ndarray, n: int, n_values: int) -> np.ndarray:
    """Return ``np.exp(−η k)`` for ``k = 0 …`` up to the widest whole-number gap a chunk of ``n``
    rounds can reach (capped at :data:`MAX_TABLE`, and at the chunk's ``n_values`` entries).

    A gap grows by at most 1 a round (the losses are in range, so each round adds to every
    ``L_i`` a value in [0, 1]): the chunk's gaps stay below the widest gap of ``cum`` plus ``n``.
    The table is built per chunk, so that the player's state does not grow with the rounds;
    never longer than the chunk, it costs at most one ``exp`` per entry of the chunk, and a
    round whose gaps lie beyond it is exponentiated instead.
    """
    widest = float(np.max(cum.max(axis=1) - cum.min(axis=1))) if cum.size else 0.0
    need = min(math.ceil(widest) + n, MAX_TABLE) + 1 if math.isfinite(widest) else 1
    return np.exp(-eta * np.arange(min(need, n_values), dtype=np.float64))


@njit(cache=True, nogil=True)
def _normalize_rows(w):
    """Divide each ``w[r, j]`` by its sum, in place."""
    n_rep, n, n_act = w.shape
    for r in range(n_rep):
        for j in range(n):
            s = 0.0
            for i in range(n_act):
                s += w[r, j, i]
            for i in range(n_act):
                w[r, j, i] /= s


def _hedge_play_block(losses, cum, rounds_done, mode, eta, log_n, lo, scale, probs) -> None:
    """Fill ``probs`` with Hedge's distributions for a chunk of ``losses``; ``cum`` advances.

    The anytime and doubling rates take three passes: the exponents (numba), ``np.exp`` over
    the whole chunk (numpy's vectorized loop: about 10× faster per element than the scalar
    ``exp`` a compiled per-round loop calls where the CPU has AVX-512, and the function the
    readable :func:`hedge_probs` uses), and the normalization (numba).

    A fixed rate takes one pass (:func:`_hedge_fixed_block`): rounds whose gaps are whole
    numbers take their weights from a table of ``np.exp(−η k)``, ``k = 0, 1, …``
    (:func:`_fixed_rate_table`); other rounds are exponentiated by ``np.exp`` afterwards, all
    of the chunk at once when none was looked up. The exponent of gap ``d = k`` is the same
    double ``(−η)·k`` either way and numpy's ``exp`` maps it to the same double, so the weights
    are bitwise those of the three passes (tested), at a fraction of the cost (``exp`` is ~5 ns
    per element without AVX-512, and one pass instead of three).
    """
    if mode != FIXED:
        _hedge_block_exponents(losses, cum, rounds_done, mode, eta, log_n, lo, scale, probs)
        np.exp(probs, out=probs)
        _normalize_rows(probs)
        return
    n_rep, n, n_act = losses.shape
    table = _fixed_rate_table(eta, cum, n, probs.size)
    rows = np.empty(n_rep * n, dtype=np.int64)
    count = _hedge_fixed_block(losses, cum, lo, scale, table, -eta, probs, rows)
    if count == n_rep * n:  # nothing looked up: the chunk's exponents in one contiguous call
        np.exp(probs, out=probs)
        _normalize_rows(probs)
    elif count:
        flat = probs.reshape(-1, n_act)
        picked = np.exp(flat[rows[:count]])
        _normalize_rows(picked[None])
        flat[rows[:count]] = picked


class Hedge(ExpertsPlayer):
    """Hedge / exponential weights: ``p_{t,i} ∝ exp(−η_t L_{t−1,i})``.

    Losses are first mapped to [0, 1] with the declared range ``[lo, hi]``, so ``η`` is the rate for
    unit-range losses and the bounds below scale by ``hi − lo``.

    Parameters
    ----------
    eta : float or {"tuned", "anytime", "doubling"}
        A fixed rate η > 0; ``"tuned"`` (default) uses ``η = sqrt(8 ln N / T)`` from the horizon;
        ``"anytime"`` uses ``η_t = sqrt(8 ln N / t)`` at round t and needs no horizon;
        ``"doubling"`` is the doubling trick: epochs ``m = 0, 1, 2, …`` cover rounds
        ``2^m .. 2^{m+1} − 1``, and in epoch m Hedge restarts from uniform weights with the rate
        ``η_m = sqrt(8 ln N / 2^m)`` tuned for the epoch's length (needs no horizon).

    Notes
    -----
    Guarantees, for every loss sequence in [0, 1] (adaptive adversaries included):

    * fixed η: ``R_T ≤ ln N / η + η T / 8`` (Cesa-Bianchi & Lugosi 2006, Thm 2.2);
    * ``"tuned"``: ``R_T ≤ sqrt(T ln N / 2)`` (same theorem);
    * ``"anytime"``: ``R_T ≤ 2 sqrt((T/2) ln N) + sqrt(ln N / 8)`` (CBL Thm 2.3);
    * ``"doubling"``: ``R_T ≤ (√2/(√2 − 1)) sqrt(T ln N / 2)`` for every T (CBL Ex. 2.8). Epoch m
      (complete or the last, partial one, of length ≤ 2^m) costs at most
      ``ln N/η_m + η_m 2^m/8 = sqrt(2^m ln N / 2)``; the regret to the best expert overall is at
      most the sum of the per-epoch regrets, and ``Σ_{m ≤ ⌊log2 T⌋} 2^{m/2} ≤ (√2/(√2 − 1)) √T``.

    These are Cesa-Bianchi & Lugosi 2006, Theorems 2.2 and 2.3 and Exercise 2.8 (doubling);
    Luo 2016 (§2.1.4, "Exponential Weights (EXP) Algorithm") states the same algorithm as EXP with
    the ``z ∈ [−1, 1]`` bound ``ln N/η + Tη/2``. The weights are
    computed as ``exp(−η (L − min L))`` so that no exponential overflows.

    Quantiles (Luo 2016, Table 2.1 and Theorem 2: EXP's ε-regret
    ``R_T^ε ≤ (ln(1/ε) + T ln cosh η)/η``, there for movements ``z ∈ [−1, 1]``). With a fixed η
    (a number or ``"tuned"``), for every t and every k the k-th largest regret satisfies
    ``R_(k)(t) ≤ ln(N/k)/η + ηt/8``, i.e. ``R_t^ε ≤ ln(1/ε)/η + ηt/8`` at ``ε = k/N``: the
    proof of CBL Theorem 2.2 bounds ``ln(W_t/W_0) ≤ −η Σ_s p_s·l_s + η²t/8`` for
    ``W_t = Σ_i e^{−η L_{t,i}}`` (Hoeffding's lemma, every round, whatever the adversary saw),
    and ``W_t ≥ k e^{−η L_(k)}`` with ``L_(k)`` the k-th smallest cumulative loss, while
    ``W_0 = N``. Hoeffding's ``η²/8`` replaces the thesis's ``ln cosh η ≈ η²/2`` because the
    learner's loss and the experts' lie in one interval of width 1. ``bounds`` declares it for
    the ε-quantile regret at ε ∈ {0.1, 0.25} (``k = ⌈εN⌉``), times the loss range width; at
    k = 1 it is the regret bound. The anytime and doubling rates declare the regret bound only.

    Examples
    --------
    >>> from arena import play
    >>> df = play(Hedge(eta=0.5), "ftl_killer", n_actions=2, horizon=1000,
    ...           metrics={"regret": {}})
    >>> bool(df.value.iloc[-1] <= math.log(2) / 0.5 + 0.5 * 1000 / 8)
    True

    References
    ----------
    Freund & Schapire (1997), "A decision-theoretic generalization of on-line learning".
    Cesa-Bianchi & Lugosi (2006), *Prediction, Learning, and Games*, Thms 2.2 and 2.3.
    """

    tags = PlayerTags(protocols=frozenset({"experts"}), block_kernel=True)
    parameter_constraints: ClassVar = {
        "eta": [Interval(0, None, closed="neither"), OneOf(*ETA_SCHEDULES)]
    }

    def __init__(self, eta: float | str = "tuned"):
        self.eta = eta

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        log_n = math.log(spec.n_actions)
        if isinstance(self.eta, str):
            if self.eta == "tuned" and spec.horizon is None:
                raise ConfigError(self.label(), "eta", "'tuned' needs the horizon; use 'anytime'")
            mode = {"tuned": FIXED, "anytime": ANYTIME, "doubling": DOUBLING}[self.eta]
            eta = math.sqrt(8.0 * log_n / spec.horizon) if mode == FIXED else 0.0
        else:
            eta, mode = float(self.eta), FIXED
        self._mode = mode
        self._eta = eta
        self._log_n = log_n
        self._n = spec.n_actions
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._cum = np.zeros((spec.n_replicates, spec.n_actions))
        self._rounds = 0

    def learning_rate(self) -> float:
        """Return η for the next round (``t = rounds played + 1``)."""
        if self._mode == ANYTIME:
            return math.sqrt(8.0 * self._log_n / (self._rounds + 1))
        if self._mode == DOUBLING:
            return _epoch_rate(self._rounds + 1, self._log_n)
        return self._eta

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        return hedge_probs(self._cum, self.learning_rate())

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        self._rounds += 1
        if self._mode == DOUBLING and self._rounds & (self._rounds + 1) == 0:
            self._cum[...] = 0.0  # round t + 1 = 2^m opens a new epoch: restart from uniform
        else:
            self._cum += (losses - self._lo) / self._scale

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        probs = np.empty_like(losses)
        _hedge_play_block(
            losses,
            self._cum,
            self._rounds,
            self._mode,
            self._eta,
            self._log_n,
            self._lo,
            self._scale,
            probs,
        )
        self._rounds += losses.shape[1]
        return probs

    def bounds(self, t: int) -> dict[tuple[str, float], float]:
        """Declare the bounds of the Notes after ``t`` rounds: on the regret, and with a fixed
        rate on the ε-quantile regrets."""
        out = {("regret", math.nan): self.regret_bound(t)}
        if self._mode == FIXED:
            for eps in BOUND_EPS:
                k = exact_quantile_rank(eps, self._n)
                out["quantile_regret", eps] = self.quantile_bound(t, k)
        return out

    def quantile_bound(self, t: int, k: int) -> float:
        """Return ``scale · (ln(N/k)/η + ηt/8)``, the fixed-rate bound on the k-th largest regret
        after ``t`` rounds (see Notes).

        Examples
        --------
        >>> from arena.spec import GameSpec
        >>> h = Hedge(eta=0.5)
        >>> h.reset(GameSpec("experts", 10, 100, (0.0, 1.0)), [np.random.default_rng(0)])
        >>> round(h.quantile_bound(100, 5), 4) == round(math.log(2) / 0.5 + 0.5 * 100 / 8, 4)
        True
        """
        if self._mode != FIXED:
            raise ValueError(f"{self.label()}: only a fixed rate has a quantile bound")
        if self._eta == 0.0:
            return 0.0  # N = 1: nothing to regret
        return self._scale * (math.log(self._n / k) / self._eta + self._eta * t / 8.0)

    def regret_bound(self, t: int) -> float:
        """Return the proven bound on the expected regret after ``t`` rounds (see Notes)."""
        n = self._log_n
        if self._mode == ANYTIME:
            bound = 2.0 * math.sqrt(t / 2.0 * n) + math.sqrt(n / 8.0)
        elif self._mode == DOUBLING:
            bound = DOUBLING_FACTOR * math.sqrt(t * n / 2.0)
        elif self._eta == 0.0:
            bound = 0.0  # N = 1: nothing to regret
        else:
            bound = n / self._eta + self._eta * t / 8.0
        return self._scale * bound

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"eta": 0.3}
        yield {"eta": "anytime"}
        yield {"eta": "doubling"}
