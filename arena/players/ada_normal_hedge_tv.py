"""AdaNormalHedge.TV: sleeping AdaNormalHedge over start-time experts, for interval regret."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.experts.components import ExpertsPlayer
from arena.params import OneOf
from arena.players.ada_normal_hedge import log_weight
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

STARTS = ("all", "geometric")

SHIFT_K = (1, 2, 4, 8)
"""Switch budgets k (K = k + 1 segments) of the declared ``shifting_regret`` bounds."""

ZETA2 = math.pi**2 / 6.0

INITIAL_CAPACITY = 1024
"""Rounds of prefix storage allocated when the horizon is unknown (doubled as needed)."""


# ----------------------------------------------------------------------------------------------
# kernels


@njit(cache=True, nogil=True)
def _weight_parts(big_r, big_c):
    """Return ``(b, f)`` with ``w(R, C) = ½ e^b f``: ``b = [R−1]_+²/D``, ``f = expm1(δ)``.

    ``D = 3(C+1)``; ``δ = (R+1)²/D`` for ``−1 < R ≤ 1`` and ``4R/D`` for ``R > 1`` (the exact
    difference of the two exponents); ``f = 0`` for ``R ≤ −1``. ``f`` lies in
    ``[0, e^{4/3} − 1]`` when ``|R| ≤ C + 1``, so only ``b`` needs the log domain.
    """
    if big_r <= -1.0:
        return 0.0, 0.0
    d = 3.0 * (big_c + 1.0)
    if big_r <= 1.0:
        return 0.0, math.expm1((big_r + 1.0) * (big_r + 1.0) / d)
    return (big_r - 1.0) * (big_r - 1.0) / d, math.expm1(4.0 * big_r / d)


@njit(cache=True, nogil=True)
def _accumulate(m_buf, s_buf, i, e, f):
    """Add ``e^e f`` to expert i's streaming sum ``e^{m_i} s_i`` (rescaled on a new max)."""
    if f <= 0.0:
        return
    if e > m_buf[i]:
        s_buf[i] = s_buf[i] * math.exp(m_buf[i] - e) + f
        m_buf[i] = e
    else:
        s_buf[i] += f * math.exp(e - m_buf[i])


@njit(cache=True, nogil=True)
def _finish_round(losses, r, j, lo, scale, probs, m_buf, s_buf, r_out):
    """Normalize ``e^{m_i} s_i`` into ``probs[r, j]``, write ``r_t`` to ``r_out``, return max|r|."""
    n_act = m_buf.shape[0]
    top = -np.inf
    for i in range(n_act):
        m_buf[i] = m_buf[i] + math.log(s_buf[i])
        if m_buf[i] > top:
            top = m_buf[i]
    tot = 0.0
    for i in range(n_act):
        v = math.exp(m_buf[i] - top)
        probs[r, j, i] = v
        tot += v
    hat = 0.0
    for i in range(n_act):
        probs[r, j, i] /= tot
        hat += probs[r, j, i] * ((losses[r, j, i] - lo) / scale)
    biggest = 0.0
    for i in range(n_act):
        x = hat - (losses[r, j, i] - lo) / scale
        r_out[i] = x
        if abs(x) > biggest:
            biggest = abs(x)
    return biggest


@njit(cache=True, nogil=True)
def _tv_all_play_block(
    losses, pre_r, pre_c, log_prior, t_done, lo, scale, probs, m_buf, s_buf, r_buf, shift_mass
):
    """Exact AdaNH.TV over a chunk: O(N t) per round from the prefix arrays.

    ``pre_r[r, s] = R_s`` and ``pre_c[r, s] = C_s`` (s = 0 … t_done); rows ``t_done+1 …`` are
    filled. ``log_prior[τ] = −2 ln τ``. ``shift_mass[r]`` accumulates ``Σ_t max_i |r_{t,i}|``.
    """
    n_rep, n, n_act = losses.shape
    for r in range(n_rep):
        for j in range(n):
            t = t_done + j + 1
            for i in range(n_act):
                m_buf[i] = -np.inf
                s_buf[i] = 0.0
            for a in range(t):  # start τ = a + 1; interval [τ, t − 1] = prefix t−1 minus prefix a
                lp = log_prior[a + 1]
                for i in range(n_act):
                    big_r = pre_r[r, t - 1, i] - pre_r[r, a, i]
                    if big_r <= -1.0:
                        continue
                    big_c = pre_c[r, t - 1, i] - pre_c[r, a, i]
                    if big_c < 0.0:
                        big_c = 0.0
                    b, f = _weight_parts(big_r, big_c)
                    _accumulate(m_buf, s_buf, i, lp + b, f)
            shift_mass[r] += _finish_round(losses, r, j, lo, scale, probs, m_buf, s_buf, r_buf)
            for i in range(n_act):
                pre_r[r, t, i] = pre_r[r, t - 1, i] + r_buf[i]
                pre_c[r, t, i] = pre_c[r, t - 1, i] + abs(r_buf[i])


@njit(cache=True, nogil=True)
def _tv_geometric_play_block(
    losses, lev_r, lev_c, total_c, t_done, lo, scale, probs, m_buf, s_buf, r_buf, shift_mass
):
    """Geometric-cover AdaNH.TV over a chunk: O(N log t) per round.

    ``lev_r[r, k]``, ``lev_c[r, k]`` are R and C of the level-k expert alive now (started at
    ``a_k = 2^k ⌊t/2^k⌋``); a level whose interval ends is zeroed for the next round.
    """
    n_rep, n, n_act = losses.shape
    n_lev = lev_r.shape[1]
    for r in range(n_rep):
        for j in range(n):
            t = t_done + j + 1
            for i in range(n_act):
                m_buf[i] = -np.inf
                s_buf[i] = 0.0
            k = 0
            while k < n_lev and (1 << k) <= t:
                a = (t >> k) << k
                lp = -2.0 * math.log(a)
                for i in range(n_act):
                    big_r = lev_r[r, k, i]
                    if big_r <= -1.0:
                        continue
                    b, f = _weight_parts(big_r, lev_c[r, k, i])
                    _accumulate(m_buf, s_buf, i, lp + b, f)
                k += 1
            shift_mass[r] += _finish_round(losses, r, j, lo, scale, probs, m_buf, s_buf, r_buf)
            alive = k
            for k in range(alive):
                restart = ((t + 1) >> k) << k == t + 1
                for i in range(n_act):
                    if restart:
                        lev_r[r, k, i] = 0.0
                        lev_c[r, k, i] = 0.0
                    else:
                        lev_r[r, k, i] += r_buf[i]
                        lev_c[r, k, i] += abs(r_buf[i])
            for i in range(n_act):
                total_c[r, i] += abs(r_buf[i])


@njit(cache=True, nogil=True)
def _tv_all_bound_terms(pre_c, t, out_budget, out_adaptive):
    """Per replicate: ``B'_t`` and ``max_{τ ≤ t, i} C_{[τ,t],i} ln(τ² B'_t)`` from the prefixes."""
    n_rep = pre_c.shape[0]
    n_act = pre_c.shape[2]
    for r in range(n_rep):
        budget = 0.0
        for a in range(t):
            inv = 1.0 / ((a + 1.0) * (a + 1.0))
            for i in range(n_act):
                c = pre_c[r, t, i] - pre_c[r, a, i]
                if c < 0.0:
                    c = 0.0
                budget += inv * (2.5 + 1.5 * math.log1p(c))
        best = 0.0
        for a in range(t):
            lg = 2.0 * math.log(a + 1.0) + math.log(budget)
            for i in range(n_act):
                v = (pre_c[r, t, i] - pre_c[r, a, i]) * lg
                if v > best:
                    best = v
        out_budget[r] = budget
        out_adaptive[r] = best


# ----------------------------------------------------------------------------------------------
# readable helpers


def geometric_levels(t: int) -> list[tuple[int, int]]:
    """Return the ``(level k, start a_k)`` of the start-time experts awake at round ``t``.

    Level k covers ``[1, ∞)`` with the intervals ``[m 2^k, (m+1) 2^k − 1]``, m ≥ 1 (the
    geometric covering of Daniely, Gonen & Shalev-Shwartz 2015); round t lies in one interval
    of each level with ``2^k ≤ t``.

    Examples
    --------
    >>> geometric_levels(6)
    [(0, 6), (1, 6), (2, 4)]
    """
    return [(k, (t >> k) << k) for k in range(t.bit_length())]


def cover_partition(s: int, e: int) -> list[tuple[int, int, int]]:
    """Partition ``[s, e]`` into prefixes of geometric-cover intervals, as ``(start, end, level)``.

    From ``x = s``: the interval of level ``k = ν₂(x)`` (the largest level starting at x) is taken
    whole if it ends before e, else cut at e. Levels strictly increase, so there are at most
    ``⌊log₂(e − s + 1)⌋ + 2`` pieces.

    Examples
    --------
    >>> cover_partition(3, 13)
    [(3, 3, 0), (4, 7, 2), (8, 13, 3)]
    """
    out = []
    x = s
    while x <= e:
        k = (x & -x).bit_length() - 1
        end = min(e, x + (1 << k) - 1)
        out.append((x, end, k))
        x = end + 1
    return out


def _softmax_of_log_sums(lw: np.ndarray) -> np.ndarray:
    """``lw`` (R, M, N) log-weights of M start-time experts per expert: return p (R, N)."""
    m = lw.max(axis=1)
    with np.errstate(divide="ignore"):
        per_expert = m + np.log(np.exp(lw - m[:, None, :]).sum(axis=1))
    top = per_expert.max(axis=1, keepdims=True)
    w = np.exp(per_expert - top)
    return w / w.sum(axis=1, keepdims=True)


class AdaNormalHedgeTV(ExpertsPlayer):
    """AdaNormalHedge.TV: sleeping AdaNormalHedge over start-time experts ``(τ, i)``, prior ∝ τ⁻².

    Parameters
    ----------
    starts : {"all", "geometric"}
        ``"all"`` (default): the exact algorithm of the thesis, one expert ``(τ, i)`` per start
        ``τ ≤ t``, O(N t) time per round and O(N T) memory. ``"geometric"``: only the start-time
        experts of a geometric covering, O(N log t) time and memory (see Notes).

    Notes
    -----
    **Exact version** (Luo 2016, §2.3.3, "Special cases: adaptive regret and tracking the best
    expert"). Expert ``(τ, i)`` is awake from round τ on with expert i's
    losses; with ``R_{[τ,t]}``, ``C_{[τ,t]}`` the interval sums of ``r_{s,i} = ℓ̂_s − ℓ_{s,i}`` and
    ``|r_{s,i}|`` and ``w`` AdaNormalHedge's weight,

    ``p_{t,i} ∝ Σ_{τ=1}^{t} τ⁻² w(R_{[τ,t−1],i}, C_{[τ,t−1],i})`` (the prior ``q_{(τ,i)} ∝ τ⁻²``),

    the τ = t term being ``w(0, 0) > 0``. The interval sums are differences of prefix arrays
    ``R_s, C_s`` (s = 0 … t), stored for every round: O(N T) memory per replicate is inherent
    to the exact algorithm (``(R, T+1, N)`` arrays allocated at reset when T is known, grown by
    doubling otherwise). Interval ``C`` is clipped at 0 against cancellation.

    **Geometric version.** Level k ≥ 0 has one expert ``(k, a, i)`` per interval
    ``J = [a, a + 2^k − 1]``, ``a = m 2^k``, m ≥ 1, awake exactly on J, with prior ``a⁻²``; at
    round t the ``⌊log₂ t⌋ + 1`` awake start-time experts per i are those of
    :func:`geometric_levels`. It is sleeping AdaNormalHedge, so Lemma 4 applies with
    ``B^g_t ≤ β_t := N (4/3)(π²/6)(5/2 + (3/2) ln(1 + t))`` (``Σ_a a⁻²(ν₂(a) + 1) = (4/3)ζ(2)``):

    * for every cover interval J with start a, every ``t₂ ∈ J`` and i:
      ``[R_{[a,t₂],i}]_+ ≤ sqrt(3 C_{[a,t₂],i} ln(a² β_{t₂}))`` (the exact version's bound);
    * for every interval ``[s, e]``: :func:`cover_partition` splits it into
      ``m ≤ ⌊log₂(e−s+1)⌋ + 2`` such prefixes, so by Cauchy-Schwarz
      ``R_{[s,e],i} ≤ sqrt(3 m C_{[s,e],i} ln(e² β_e))``: an extra ``sqrt(m) = O(sqrt(log(e−s)))``
      factor, and ``ln e`` in place of ``ln s`` (the price quoted in §2.3.3).

    Guarantees declared (units of ``hi − lo``; every loss sequence, adaptive adversaries
    included). Exact version, with ``B'_t = Σ_{τ≤t, j} τ⁻²(5/2 + (3/2) ln(1 + C_{[τ,t],j}))``
    computed exactly (Lemma 4 on the sleeping experts; ``B'`` is nondecreasing in t):

    * interval: ``[R_{[t₁,t₂],i}]_+ ≤ sqrt(3 C_{[t₁,t₂],i} ln(t₁² B'_{t₂}))`` for all
      ``t₁ ≤ t₂``, so ``bound:adaptive_regret = max_{τ≤t, i} sqrt(3 C_{[τ,t],i} ln(τ² B'_t))``
      (C grows with the interval end) and ``bound:regret = max_i sqrt(3 C_{t,i} ln B'_t)``;
    * K-shift (§2.3.3, "tracking the best expert"): ``bound:shifting_regret`` for k switches
      (K = k+1 segments) is ``min(K · bound:adaptive_regret, sqrt(3 K M_t ln(t² B'_t)))`` with
      ``M_t = Σ_s max_i |r_{s,i}|`` (Cauchy-Schwarz over the segments).

    Geometric version: the same three with ``m_t = ⌊log₂ t⌋ + 2`` extra pieces per interval,
    ``bound:regret = bound:adaptive_regret = max_i sqrt(3 m_t C_{t,i} ln(t² β_t))`` and
    ``bound:shifting_regret = min(K · that, sqrt(3 K m_t M_t ln(t² β_t)))``.

    Time-varying competitors (Theorem 7 and Lemma 5, §2.3.3): both versions meet Theorem 7's
    hypothesis ``R_{[t₁,t₂],i} ≤ sqrt(A_t C_{[t₁,t₂],i})`` on every interval of ``[1, t]``, with
    the constant :meth:`interval_regret_constant` returns, ``A_t = 3 ln(t² B'_t)`` (exact; from
    ``t₁ ≤ t`` and ``B'_{t₂} ≤ B'_t``) or ``A_t = 3 m_t ln(t² β_t)`` (geometric). So for every
    nonnegative competitor sequence, adaptive adversaries included,
    ``R(u_{1:t}) ≤ A_t V/2 + sqrt((A_t V/2)² + 2 A_t V L̃)`` with V its variation and L̃ its
    excess loss ``Σ_s Σ_i u_{s,i}[ℓ_{s,i} − ℓ̂_s]_+``: Theorem 7's
    ``Ô(sqrt(V L̃ ln(NT)))`` with its constant, logged as ``bound:tv_regret`` by the
    ``tv_regret`` metric for the competitor the adversary declares
    (:mod:`arena.metrics.time_varying`).

    Weights are computed with the exponent ``[R−1]_+²/D − 2 ln τ`` in the log domain (streaming
    max per expert) times the bounded factor ``expm1(δ) ∈ [0, e^{4/3}−1]``.

    Examples
    --------
    >>> from arena import play
    >>> df = play(AdaNormalHedgeTV(starts="geometric"), "shifting_experts", n_actions=3,
    ...           horizon=300, metrics={"adaptive_regret": {}, "bound": {}})
    >>> last = df[df.t == 300].set_index("metric").value
    >>> bool(last["adaptive_regret"] <= last["bound:adaptive_regret"])
    True

    References
    ----------
    Luo 2016, §2.3.3 (AdaNormalHedge.TV, K-shifting regret, Theorem 7 and Table 2.3).
    Luo & Schapire (2015), COLT. Adamskiy, Koolen, Chernov & Vovk (2012) and Freund, Schapire,
    Singer & Warmuth (1997) for the start-time reduction. Daniely, Gonen & Shalev-Shwartz (2015),
    "Strongly adaptive online learning", ICML, for the geometric covering intervals (the thesis
    cites the streaming idea of Hazan & Seshadhri 2009 without details).
    """

    tags = PlayerTags(protocols=frozenset({"experts"}), block_kernel=True)
    parameter_constraints: ClassVar = {"starts": [OneOf(*STARTS)]}

    def __init__(self, starts: str = "all"):
        self.starts = starts

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        n_rep, n = spec.n_replicates, spec.n_actions
        self._n_act = n
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._t = 0
        self._shift_mass = np.zeros(n_rep)
        if self.starts == "all":
            cap = (spec.horizon + 1) if spec.horizon is not None else INITIAL_CAPACITY
            self._pre_r = np.zeros((n_rep, cap, n))
            self._pre_c = np.zeros((n_rep, cap, n))
            self._log_prior = self._prior_table(cap)
        else:
            levels = spec.horizon.bit_length() if spec.horizon is not None else 32
            self._lev_r = np.zeros((n_rep, levels, n))
            self._lev_c = np.zeros((n_rep, levels, n))
            self._total_c = np.zeros((n_rep, n))

    @staticmethod
    def _prior_table(cap: int) -> np.ndarray:
        out = np.empty(cap + 1)
        out[0] = 0.0
        out[1:] = -2.0 * np.log(np.arange(1, cap + 1, dtype=np.float64))
        return out

    def _ensure_capacity(self, rounds: int) -> None:
        """Grow the prefix arrays (exact version) to hold ``rounds`` more rounds."""
        if self.starts == "all":
            need = self._t + rounds + 1
            cap = self._pre_r.shape[1]
            if need > cap:
                new = max(need, 2 * cap)
                for attr in ("_pre_r", "_pre_c"):
                    old = getattr(self, attr)
                    grown = np.zeros((old.shape[0], new, old.shape[2]))
                    grown[:, :cap] = old
                    setattr(self, attr, grown)
                self._log_prior = self._prior_table(new)
        else:
            levels = max(1, (self._t + rounds).bit_length())
            have = self._lev_r.shape[1]
            if levels > have:
                pad = ((0, 0), (0, levels - have), (0, 0))
                self._lev_r = np.pad(self._lev_r, pad)
                self._lev_c = np.pad(self._lev_c, pad)

    # -- readable path ------------------------------------------------------------------------

    def _log_weights(self) -> np.ndarray:
        """Log-weights (R, M, N) of the M start-time experts awake at round ``t = rounds + 1``."""
        t = self._t + 1
        if self.starts == "all":
            pre_r, pre_c = self._pre_r[:, :t], self._pre_c[:, :t]  # prefixes 0 … t−1
            big_r = pre_r[:, -1:, :] - pre_r  # row a: interval [a+1, t−1]
            big_c = np.maximum(pre_c[:, -1:, :] - pre_c, 0.0)
            log_prior = -2.0 * np.log(np.arange(1, t + 1, dtype=np.float64))
        else:
            levels = geometric_levels(t)
            ks = [k for k, _ in levels]
            big_r, big_c = self._lev_r[:, ks], self._lev_c[:, ks]
            log_prior = -2.0 * np.log(np.array([a for _, a in levels], dtype=np.float64))
        return log_weight(big_r, big_c) + log_prior[None, :, None]

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        return _softmax_of_log_sums(self._log_weights())

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        self._ensure_capacity(1)
        p = self.predict()
        unit = (np.asarray(losses, dtype=np.float64) - self._lo) / self._scale
        r = np.einsum("rn,rn->r", p, unit)[:, None] - unit
        self._shift_mass += np.abs(r).max(axis=1)
        t = self._t + 1
        if self.starts == "all":
            self._pre_r[:, t] = self._pre_r[:, t - 1] + r
            self._pre_c[:, t] = self._pre_c[:, t - 1] + np.abs(r)
        else:
            for k, _ in geometric_levels(t):
                if ((t + 1) >> k) << k == t + 1:  # level k's interval ends at t
                    self._lev_r[:, k] = 0.0
                    self._lev_c[:, k] = 0.0
                else:
                    self._lev_r[:, k] += r
                    self._lev_c[:, k] += np.abs(r)
            self._total_c += np.abs(r)
        self._t = t

    # -- fast path ----------------------------------------------------------------------------

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        losses = np.ascontiguousarray(losses, dtype=np.float64)
        n = losses.shape[1]
        self._ensure_capacity(n)
        probs = np.empty_like(losses)
        bufs = (np.empty(self._n_act), np.empty(self._n_act), np.empty(self._n_act))
        lo, scale = float(self._lo), float(self._scale)
        if self.starts == "all":
            _tv_all_play_block(
                losses,
                self._pre_r,
                self._pre_c,
                self._log_prior,
                self._t,
                lo,
                scale,
                probs,
                *bufs,
                self._shift_mass,
            )
        else:
            _tv_geometric_play_block(
                losses,
                self._lev_r,
                self._lev_c,
                self._total_c,
                self._t,
                lo,
                scale,
                probs,
                *bufs,
                self._shift_mass,
            )
        self._t += n
        return probs

    # -- state and guarantees -----------------------------------------------------------------

    def prefix_regrets(self) -> np.ndarray:
        """Exact version: ``R_s`` for s = 0 … t, shape (R, t+1, N) (unit-range losses), a copy."""
        return self._pre_r[:, : self._t + 1].copy()

    def prefix_magnitudes(self) -> np.ndarray:
        """Exact version: ``C_s`` for s = 0 … t, shape (R, t+1, N), a copy."""
        return self._pre_c[:, : self._t + 1].copy()

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare the regret, adaptive-regret and K-shift bounds of the Notes after round t."""
        t = self._t
        n_rep = self._shift_mass.shape[0]
        if t == 0:
            zero = np.zeros(n_rep)
            keys = [("regret", math.nan), ("adaptive_regret", math.nan)]
            keys += [("shifting_regret", float(k)) for k in SHIFT_K]
            return dict.fromkeys(keys, zero)
        if self.starts == "all":
            budget, adaptive = np.empty(n_rep), np.empty(n_rep)
            _tv_all_bound_terms(self._pre_c, t, budget, adaptive)
            regret = np.sqrt(3.0 * self._pre_c[:, t].max(axis=1) * np.log(budget))
            adaptive = np.sqrt(3.0 * adaptive)
            pieces, log_term = 1, 2.0 * math.log(t) + np.log(budget)
        else:
            beta = self._n_act * (4.0 / 3.0) * ZETA2 * (2.5 + 1.5 * math.log1p(t))
            pieces = t.bit_length() + 1  # ⌊log₂ t⌋ + 2
            log_term = 2.0 * math.log(t) + math.log(beta)
            regret = np.sqrt(3.0 * pieces * self._total_c.max(axis=1) * log_term)
            adaptive = regret
        out = {("regret", math.nan): self._scale * regret}
        out[("adaptive_regret", math.nan)] = self._scale * adaptive
        for k in SHIFT_K:
            segs = k + 1
            via_mass = np.sqrt(3.0 * segs * pieces * self._shift_mass * log_term)
            out[("shifting_regret", float(k))] = self._scale * np.minimum(segs * adaptive, via_mass)
        return out

    def interval_regret_constant(self, t: int) -> np.ndarray:
        """Theorem 7's constant ``A_t`` (loss units): ``R_{[t₁,t₂],i} ≤ sqrt(A_t C_{[t₁,t₂],i})``
        for every ``1 ≤ t₁ ≤ t₂ ≤ t`` and i, with ``C`` the sum of ``|r_{s,i}|`` (see the Notes).

        Returns
        -------
        ndarray, shape (R,)
            ``3 ln(t² B'_t)`` (exact version) or ``3 m_t ln(t² β_t)`` (geometric), times the loss
            range ``hi − lo``; 0 before round 1.
        """
        t = self._t
        n_rep = self._shift_mass.shape[0]
        if t == 0:
            return np.zeros(n_rep)
        if self.starts == "all":
            budget, adaptive = np.empty(n_rep), np.empty(n_rep)
            _tv_all_bound_terms(self._pre_c, t, budget, adaptive)
            unit = 3.0 * (2.0 * math.log(t) + np.log(budget))
        else:
            beta = self._n_act * (4.0 / 3.0) * ZETA2 * (2.5 + 1.5 * math.log1p(t))
            pieces = t.bit_length() + 1  # ⌊log₂ t⌋ + 2
            unit = np.full(n_rep, 3.0 * pieces * (2.0 * math.log(t) + math.log(beta)))
        return self._scale * unit

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"starts": "geometric"}
