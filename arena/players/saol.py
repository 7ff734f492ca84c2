"""SAOL: the Strongly Adaptive Online Learner, Prod-type weights over base-learner copies on the
geometric covering (Daniely, Gonen & Shalev-Shwartz 2015), for strongly adaptive regret."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from arena.experts.components import ExpertsPlayer
from arena.params import Interval, ListOf
from arena.players.ada_normal_hedge_tv import cover_partition, geometric_levels
from arena.players.flh import BASE_CONSTRAINTS, CopyMixture, _Copy
from arena.spec import GameSpec


def level_rate(level: int) -> float:
    """Return ``η_I = min(1/2, 1/sqrt(|I|))`` for a covering interval of length ``|I| = 2^level``.

    Examples
    --------
    >>> [level_rate(k) for k in (0, 1, 2, 4)]
    [0.5, 0.5, 0.5, 0.25]
    """
    return min(0.5, 2.0 ** (-level / 2.0))


def intervals_started(t: int) -> int:
    """Return ``K_t``, the number of geometric-covering intervals that start in ``[1, t]``.

    Start a carries the ``ν₂(a) + 1`` intervals ``[a, a + 2^k − 1]``, ``k ≤ ν₂(a)``, so
    ``K_t = t + Σ_{a≤t} ν₂(a) = t + ν₂(t!) = 2t − popcount(t)`` (Legendre's formula).

    Examples
    --------
    >>> [intervals_started(t) for t in (1, 2, 3, 4, 8)]
    [1, 3, 4, 7, 15]
    """
    return 2 * t - t.bit_count()


def piece_meta_bound(level: int, n: int, log_k: float) -> float:
    """Return ``min(n, ln K/η + η n)``, SAOL's meta regret bound on the first ``n`` rounds of a
    covering interval of level ``level`` (``η`` = :func:`level_rate`, ``ln K`` =
    ``ln K_t`` of :func:`intervals_started`), in units of the loss range.

    Examples
    --------
    >>> round(piece_meta_bound(6, 64, math.log(127.0)), 6)  # 8 ln 127 + 8 < 64
    46.753497
    """
    eta = level_rate(level)
    return min(float(n), log_k / eta + eta * n)


def meta_bound(tau: int, t: int) -> float:
    """Return SAOL's meta part of the regret bound on every interval of length ≤ ``tau`` in
    ``[1, t]`` (unit loss range): see :class:`SAOL`, Notes.

    The interval's pieces are whole covering intervals of distinct levels (lengths ``2^k``
    summing to b) and a last piece of n rounds, ``b + n ≤ τ``. With ``P`` =
    :func:`piece_meta_bound` at ``ln K_t``, the whole pieces contribute at most
    ``H(b) = min(b, Σ_{k ≤ ⌊log₂ b⌋} P(k, 2^k))`` and the last one
    ``G(n) = P(⌈log₂ n⌉, n)`` (non-decreasing in n), so the bound is
    ``max_{0 ≤ n ≤ τ} H(τ − n) + G(n)``. Both are linear between their break points (powers of
    two, the kinks of the ``min``), so the maximum is taken over those O(log τ) points only.

    Examples
    --------
    >>> meta_bound(3, 3), round(meta_bound(1000, 10_000), 2), round(meta_bound(10_000, 10_000), 2)
    (3.0, 910.1, 3686.62)
    """
    tau = min(tau, t)
    if tau <= 0:
        return 0.0
    log_k = math.log(intervals_started(t))
    cumulative = list(
        itertools.accumulate(piece_meta_bound(k, 1 << k, log_k) for k in range(tau.bit_length()))
    )

    def whole(b: int) -> float:
        return 0.0 if b <= 0 else min(float(b), cumulative[b.bit_length() - 1])

    def last(n: int) -> float:
        return 0.0 if n <= 0 else piece_meta_bound((n - 1).bit_length(), n, log_k)

    kinks = [float(c) for c in cumulative]  # H: b = C_k
    for j in range(tau.bit_length() + 1):  # G: n = ln K/η + η n on block j
        eta = level_rate(j)
        kinks.append(log_k / eta / (1.0 - eta))
    points = {0, tau}
    for j in range(tau.bit_length() + 1):
        points.update((1 << j) - 1 + d for d in (0, 1, 2))
    for x in kinks:
        points.update((math.floor(x), math.ceil(x)))
    candidates = {n for x in points for n in (x, tau - x) if 0 <= n <= tau}
    return max(whole(tau - n) + last(n) for n in candidates)


def meta_bound_closed_form(tau: int, t: int) -> float:
    """Return ``(2 + √2)(λ + 1)√τ + √2 λ √τ + √τ`` with ``λ = ln(2t)``: a closed form above
    :func:`meta_bound`, the ``O(√τ log t)`` of Daniely et al. (2015) with explicit constants.

    Examples
    --------
    >>> meta_bound(100, 1000) <= meta_bound_closed_form(100, 1000)
    True
    """
    lam = math.log(2.0 * t)
    root = math.sqrt(tau)
    return ((2.0 + math.sqrt(2.0)) * (lam + 1.0) + math.sqrt(2.0) * lam + 1.0) * root


class SAOL(CopyMixture):
    """Strongly Adaptive Online Learner: Prod-type weights over base-learner copies on the
    geometric covering, each interval with its own rate ``η_I = min(1/2, 1/√|I|)``.

    Parameters
    ----------
    base : str or ExpertsPlayer
        The black-box learner: a registered experts player's name (``"hedge"``, ``"ada_hedge"``,
        …) or an instance (cloned, never modified).
    base_params : mapping, optional
        Parameters of the base learner. On the command line:
        ``player=saol player.base=hedge '+player.base_params={eta:anytime}'``.
    bound_taus : list of int
        Window lengths τ for which the strongly adaptive bound is declared as
        ``bound:sa_regret`` (to be logged next to the ``sa_regret`` metric with the same τ);
        empty (default): only ``bound:regret`` and ``bound:adaptive_regret`` are declared.

    Notes
    -----
    **Covering.** Level k holds the intervals ``I = [m 2^k, (m + 1) 2^k − 1]``, m ≥ 1; round t
    lies in exactly one interval of each level ``k ≤ ⌊log₂ t⌋`` (the active set, of size
    ``⌊log₂ t⌋ + 1``, :func:`~arena.players.ada_normal_hedge_tv.geometric_levels`).

    **Algorithm** (Daniely, Gonen & Shalev-Shwartz 2015, §3, Algorithm "SAOL^B"). Each interval
    I = [q, s] runs a black-box learner ``B_I`` started at q. With ``x_t(I)`` = ``q_{t,I}`` its
    distribution, the weights are

    * ``w_t(I) = η_I`` at t = q (the prior weight of a newcomer),
    * ``w_{t+1}(I) = w_t(I) (1 + η_I r_t(I))`` for ``t ∈ [q, s)``, with the instantaneous
      regret ``r_t(I) = ℓ̂_t − h_t(I)`` of the mixture to the copy (unit-range losses,
      ``h_t(I) = q_{t,I}·ℓ_t``, ``ℓ̂_t = p_t·ℓ_t``, evaluated as ``Σ_J p_t(J)(h_t(J) − h_t(I))``
      so that it is exactly 0 when the copies agree),
    * ``p_t(I) = w_t(I)/W_t``, ``W_t = Σ_{I active} w_t(I)`` (the sleeping-expert normalization
      over the active intervals), and the player plays ``p_t = Σ_I p_t(I) q_{t,I}``.

    The experts' losses are linear in p, so the paper's choice of one ``x_t(I)`` at random and
    the mixture have the same expected loss; the mixture is played. The state is kept as
    ``ln(w_t(I)/η_I) = Σ ln(1 + η_I r)``, one per level.

    *One copy per start.* The intervals starting at a (levels ``k ≤ ν₂(a)``) run the same black
    box on the same losses, so one copy serves them all (it lives ``2^{ν₂(a)}`` rounds,
    :func:`~arena.players.flh.lifetime`; a base tuned for its horizon is tuned for the longest of
    them). For an anytime or fixed-rate base this is exactly the paper's one instance per
    interval (the test's literal transcription has one per interval); each interval keeps its
    own weight and rate.

    **Guarantee** (the proof of Daniely et al. 2015, §3, with constants derived here for the
    experts setting). Write ``w̃(I) = w(I)/η_I``. Since ``Σ_I p_t(I) r_t(I) = 0``,
    ``Σ_{I active} η_I w̃_t(I) r_t(I) = 0``, so ``Σ_I w̃(I)`` over the ``K_t = 2t − popcount(t)``
    intervals started by t (:func:`intervals_started`; a newcomer brings ``w̃ = 1``, an
    expired interval keeps its last value) is exactly ``K_t``. Every ``w̃ > 0``
    (``η_I r ≥ −1/2``), so ``Π_{u=q}^{e}(1 + η_I r_u(I)) ≤ K_e`` and ``ln(1 + x) ≥ x − x²``
    (``x ≥ −1/2``) give on the first n rounds of a covering interval of level k

    ``Σ_{u=q}^{q+n−1} r_u(I) ≤ P(k, n) = min(n, ln K_t/η_k + η_k n)`` (:func:`piece_meta_bound`).

    An interval ``[s, e] ⊆ [1, t]`` of length ≤ τ is cut by
    :func:`~arena.players.ada_normal_hedge_tv.cover_partition` into whole covering intervals of
    distinct levels (lengths ``2^k`` summing to b) and a last piece of n rounds (``b + n ≤ τ``),
    a prefix of the covering interval of level ``⌈log₂ n⌉`` starting where it starts
    (:meth:`partition`). The meta regret on the pieces is at most
    ``meta(τ, t) = max_{b + n ≤ τ} H(b) + G(n) ≤ τ`` (:func:`meta_bound`, with
    ``H(b) = min(b, Σ_{k ≤ ⌊log₂ b⌋} P(k, 2^k))`` and ``G(n) = P(⌈log₂ n⌉, n)``); each piece is
    a prefix of one copy's life, so the base part is at most ``Σ_{k=0}^{⌊log₂ τ⌋} Q_k +
    Q_{⌈log₂ τ⌉}``, with ``Q_j`` the largest regret bound any copy declared
    (``bounds(age)["regret"]``, running maximum) at an age ≤ ``2^j``. In units of ``hi − lo``:

    ``SA_≤(τ) ≤ min(τ, meta(τ, t) + Σ_{k=0}^{⌊log₂ τ⌋} Q_k + Q_{⌈log₂ τ⌉})``.

    With an anytime base of regret ``C√n`` the base part is ``O(C√τ)``, and
    ``meta(τ, t) ≤ ((2 + √2)(λ + 1) + √2 λ + 1)√τ`` with ``λ = ln(2t)``
    (:func:`meta_bound_closed_form`): the ``R_B(|I|) + O(√|I| log T)`` of Daniely et al.
    (2015), here with explicit constants. Declared as ``bound:adaptive_regret`` and
    ``bound:regret`` (τ = t) and, for each τ in ``bound_taus``, as ``bound:sa_regret``; none
    when the base declares no regret bound. The rate ``1/√|I|`` is fixed by the interval, so
    the meta part carries ``ln K_t/η`` with ``ln K_t ≈ ln(2t)``, a ``√(ln t)`` factor above
    CBCE's; it is informative only for long windows: at t = 10⁴, ``meta(τ, t)/τ`` is 0.91 at
    τ = 1000 and 0.37 at τ = 10⁴.

    No numba kernel: a round costs one ``predict`` and one ``update`` call per live copy
    (``⌊log₂ t⌋ + 1``).

    Examples
    --------
    >>> from arena import play
    >>> df = play(SAOL("hedge", {"eta": "anytime"}, bound_taus=[50]), "shifting_experts",
    ...           n_actions=3, horizon=200,
    ...           metrics={"adaptive_regret": {}, "sa_regret": {"tau": [50]}, "bound": {}})
    >>> last = df[df.t == 200].set_index("metric").value
    >>> bool(last["sa_regret"] <= last["bound:sa_regret"])
    True

    References
    ----------
    Daniely, Gonen & Shalev-Shwartz (2015), "Strongly adaptive online learning", ICML
    (the geometric covering, SAOL and its strongly adaptive regret ``R_B(|I|) + O(√|I| log T)``).
    Luo (2016), thesis, §2.3.3 and Table 2.3.
    """

    parameter_constraints: ClassVar = {
        **BASE_CONSTRAINTS,
        "bound_taus": [ListOf(Interval(1, None, integer=True), allow_empty=True)],
    }

    starts = "geometric"

    def __init__(
        self,
        base: str | ExpertsPlayer = "hedge",
        base_params: Mapping[str, Any] | None = None,
        bound_taus: Sequence[int] = (),
    ):
        self.base = base
        self.base_params = base_params
        self.bound_taus = bound_taus

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._taus = [int(v) for v in self.bound_taus]
        # running max of the copies' declared regret bounds, by ⌈log₂ age⌉ (prefix max = Q_j)
        self._bound_by_age = np.zeros((spec.n_replicates, 1))
        super().reset(spec, rngs)

    # ------------------------------------------------------------------------------------------
    # the meta-learner: one Prod weight per level (the active interval of that level)

    def _meta_start(self) -> None:
        self._log_w = np.zeros((self._n_rep, 1))  # ln(w(I)/η_I) of level k's active interval
        self._eta = np.array([level_rate(0)])

    def _active(self, t: int) -> list[int]:
        """The live-copy index of the active interval of each level at round t."""
        index = {c.start: j for j, c in enumerate(self._copies)}
        return [index[a] for _, a in geometric_levels(t)]

    def interval_weights(self) -> np.ndarray:
        """Return ``p_t(I)`` of the active intervals, by level (0 … ⌊log₂ t⌋), shape (R, L)."""
        z = self._log_w + np.log(self._eta)[None, :]
        w = np.exp(z - z.max(axis=1, keepdims=True))
        return w / w.sum(axis=1, keepdims=True)

    def _meta_weights(self) -> np.ndarray:
        p_int = self.interval_weights()
        v = np.zeros((self._n_rep, len(self._copies)))
        for k, j in enumerate(self._active(self._t + 1)):
            v[:, j] += p_int[:, k]
        return v

    def _meta_update(self, h: np.ndarray, mix: np.ndarray) -> None:
        p_int = self.interval_weights()
        active = self._active(self._t + 1)
        h_int = h[:, active]  # (R, L): the loss of each active interval's copy
        # r_t(I) = Σ_J p(J)(h(J) − h(I)): exactly 0 when the copies agree (Σ p is 1 only up to
        # rounding)
        r = np.einsum("rj,rji->ri", p_int, h_int[:, :, None] - h_int[:, None, :])
        self._log_w = self._log_w + np.log1p(self._eta[None, :] * r)

    def _meta_remove(self, dead: list[int]) -> None:
        pass  # the weights are kept by level; the copies are looked up by start

    def _meta_birth(self, t: int) -> None:
        levels = (t & -t).bit_length()  # the intervals of levels k ≤ ν₂(t) start at t
        if levels > self._log_w.shape[1]:
            grow = levels - self._log_w.shape[1]
            self._log_w = np.concatenate([self._log_w, np.zeros((self._n_rep, grow))], axis=1)
            self._eta = np.array([level_rate(k) for k in range(levels)])
        self._log_w[:, :levels] = 0.0  # w(I) = η_I: the newcomers' prior weight

    # ------------------------------------------------------------------------------------------
    # the declared strongly adaptive bound

    def _copy_regret_bound(self, c: _Copy, age: int) -> np.ndarray:
        value = super()._copy_regret_bound(c, age)
        running = np.maximum(c.bound_max, value)
        slot = (age - 1).bit_length()  # ⌈log₂ age⌉
        if slot >= self._bound_by_age.shape[1]:
            grow = slot + 1 - self._bound_by_age.shape[1]
            self._bound_by_age = np.concatenate(
                [self._bound_by_age, np.zeros((self._n_rep, grow))], axis=1
            )
        self._bound_by_age[:, slot] = np.maximum(self._bound_by_age[:, slot], running)
        return value

    def base_bound_by_age(self, j: int) -> np.ndarray:
        """Return ``Q_j``: the largest regret bound a copy declared at an age ≤ ``2^j``, (R,)."""
        top = min(j + 1, self._bound_by_age.shape[1])
        return self._bound_by_age[:, :top].max(axis=1)

    def strongly_adaptive_bound(self, tau: int) -> np.ndarray:
        """Return the bound of the Notes on ``SA_≤(τ)`` after the rounds played, (R,), raw units
        (zeros before round 1; NaN when the base declares no regret bound)."""
        t = self._t
        tau = min(int(tau), t)
        if not self._base_bounds:
            return np.full(self._n_rep, np.nan)
        if tau <= 0:
            return np.zeros(self._n_rep)
        base = sum(self.base_bound_by_age(k) for k in range(tau.bit_length()))
        base = base + self.base_bound_by_age((tau - 1).bit_length())
        # the regret on m ≤ τ rounds is also at most m (hi − lo)
        return np.minimum(self._scale * tau, self._scale * meta_bound(tau, t) + base)

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare the strongly adaptive bound of the Notes (none if the base declares none)."""
        if not self._base_bounds:
            return {}
        whole = self.strongly_adaptive_bound(self._t)
        out = {("regret", math.nan): whole, ("adaptive_regret", math.nan): whole}
        for tau in self._taus:
            out[("sa_regret", float(tau))] = self.strongly_adaptive_bound(tau)
        return out

    @staticmethod
    def partition(s: int, e: int) -> list[tuple[int, int, int]]:
        """Return the pieces ``(start, end, level)`` the bound charges for ``[s, e]``: the
        :func:`~arena.players.ada_normal_hedge_tv.cover_partition` pieces, the last one relabelled
        to the shortest covering interval starting where it starts that contains it.

        Examples
        --------
        >>> SAOL.partition(3, 13)
        [(3, 3, 0), (4, 7, 2), (8, 13, 3)]
        >>> SAOL.partition(8, 9)
        [(8, 9, 1)]
        """
        pieces = cover_partition(s, e)
        x, end, _ = pieces[-1]
        pieces[-1] = (x, end, (end - x).bit_length())
        return pieces

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"base": "ada_hedge"}
        yield {"base_params": {"eta": "anytime"}, "bound_taus": [5]}
