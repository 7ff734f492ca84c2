"""Mixing Past Posteriors (Bousquet & Warmuth 2002): share mass with every past posterior."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.errors import ConfigError
from arena.experts.components import ExpertsPlayer
from arena.params import NON_NEGATIVE, POSITIVE, Interval, OneOf
from arena.players.fixed_share import (
    _posterior,
    _probs_into,
    log_probs,
    switching_bracket,
    xlog_inv,
)
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

SCHEMES = ("uniform", "decaying")
UNIFORM, DECAYING = 0, 1

SHIFT_KS = (1, 2, 4, 8)
"""Switch budgets k at which the k-switch regret bound is declared."""


@njit(cache=True, nogil=True)
def _mpp_step(lw, losses, t, scheme, eta, alpha, lo, scale, running, history, decay, lv, mix):
    """One round of one replicate: ``lw = ln w_t`` becomes ``ln w_{t+1}`` after ``l_t``.

    ``running`` (N,) is ``Σ_{q<t} v_q`` (uniform scheme); ``history`` (cap, N) holds ``v_q`` in row
    q (decaying scheme); ``decay[0] = Σ_{j ≤ t} j^{−γ}`` is filled here and ``decay[j] = j^{−γ}``.
    """
    n_act = lw.shape[0]
    _posterior(lw, losses, eta, lo, scale, lv)
    if alpha == 0.0:
        for i in range(n_act):
            lw[i] = lv[i]
        return
    if scheme == UNIFORM:
        for i in range(n_act):
            v = math.exp(lv[i])
            lw[i] = math.log((1.0 - alpha) * v + alpha * running[i] / t)
            running[i] += v
    else:
        for i in range(n_act):
            mix[i] = 0.0
        z = 0.0
        for q in range(t):
            c = decay[t - q]  # (t − q)^{−γ}
            z += c
            for i in range(n_act):
                mix[i] += c * history[q, i]
        for i in range(n_act):
            v = math.exp(lv[i])
            lw[i] = math.log((1.0 - alpha) * v + alpha * mix[i] / z)
            history[t, i] = v


@njit(cache=True, nogil=True)
def _mpp_update(losses, lw, t, scheme, eta, alpha, lo, scale, running, history, decay):
    """One round for every replicate; ``t`` is the round just played (1-based)."""
    n_rep, n_act = losses.shape
    lv = np.empty(n_act)
    mix = np.empty(n_act)
    for r in range(n_rep):
        _mpp_step(
            lw[r],
            losses[r],
            t,
            scheme,
            eta,
            alpha,
            lo,
            scale,
            running[r],
            history[r],
            decay,
            lv,
            mix,
        )


@njit(cache=True, nogil=True)
def _mpp_play_block(
    losses, lw, rounds_done, scheme, eta, alpha, lo, scale, running, history, decay, probs
):
    """Play a chunk (R, n, N): ``probs[r, j] = w_t`` at ``t = rounds_done + j + 1``, then update."""
    n_rep, n, n_act = losses.shape
    lv = np.empty(n_act)
    mix = np.empty(n_act)
    for r in range(n_rep):
        for j in range(n):
            _probs_into(lw[r], probs[r, j])
            _mpp_step(
                lw[r],
                losses[r, j],
                rounds_done + j + 1,
                scheme,
                eta,
                alpha,
                lo,
                scale,
                running[r],
                history[r],
                decay,
                lv,
                mix,
            )


class MixingPastPosteriors(ExpertsPlayer):
    """Mixing Past Posteriors (MPP): exponential weights mixed with a blend of all past posteriors.

    Losses are mapped to [0, 1] with the declared range ``[lo, hi]`` before the update; the bounds
    below are for unit-range losses and scale by ``hi − lo``.

    Parameters
    ----------
    eta : float or "tuned"
        Learning rate η > 0; ``"tuned"`` (default, needs the horizon T) minimizes the declared
        regret bound at T: ``η = sqrt(8 [ln N + (T−1) ln(1/(1−α))] / T)``.
    alpha : float
        Mixing rate α ∈ [0, 1): the mass given to the past posteriors each round (α = 0 is Hedge).
    scheme : {"uniform", "decaying"}
        Mixing scheme over the past posteriors ``v_0, …, v_{t−1}`` (``v_0`` = uniform prior):
        ``"uniform"`` gives each ``α/t`` (O(N) per round with a running sum); ``"decaying"`` gives
        ``v_q`` the weight ``α (t−q)^{−γ}/Z_t`` with ``Z_t = Σ_{j=1}^{t} j^{−γ}`` (exact, so O(tN)
        time per round and O(TN) memory per replicate).
    gamma : float
        Decay exponent γ ≥ 0 of the ``"decaying"`` scheme (ignored by ``"uniform"``).

    Notes
    -----
    Update (Bousquet & Warmuth 2002, §3 "Mixing Past Posteriors"), from
    ``w_1 = v_0`` uniform, with ``p_t = w_t``:

    * loss update ``v_{t,i} = w_{t,i} e^{−η l'_{t,i}} / Σ_j w_{t,j} e^{−η l'_{t,j}}``;
    * mixing update ``w_{t+1} = Σ_{q=0}^{t} β_{t+1}(q) v_q`` with ``β_{t+1}(t) = 1 − α`` and the
      scheme's ``β_{t+1}(q)``, q < t, summing to α. The start-vector scheme ``β_{t+1}(0) = α`` is
      Fixed Share; at t = 1 both schemes here coincide with it.

    Weights are kept as logarithms and every ``v_q`` is normalized, so nothing overflows.

    Guarantee declared (derived here, [D]; the paper's sharper "small pool" bounds, which charge
    ``ln(n choose m)`` for a pool of m experts plus ``ln m`` per section, are not encoded because
    their constants were not checked against the paper). Writing ``m_t = l'_{t,i} + (1/η)
    ln(v_{t,i}/w_{t,i})`` for any i and telescoping along a comparator path ``i_{1:t}``, a round
    where the path stays costs ``ln(1/(1−α))`` (``w_{s+1} ≥ (1−α) v_s``) and a switch after round
    s costs at most ``ln(N/c_{s+1})`` with ``c_{s+1} = β_{s+1}(0)`` the weight of the prior ``v_0``
    (``w_{s+1,j} ≥ c_{s+1}/N``): ``c_{s+1} = α/s`` (uniform), ``α s^{−γ}/Z_s`` (decaying). With
    Hoeffding's ``p_t·l'_t − m_t ≤ η/8`` this gives, for every loss sequence in [0, 1] (adaptive
    adversaries included) and every path with m switches,

        ``Ĥ_t − L(i_{1:t}) ≤ [ln N + Σ_{switches s} ln(N/c_{s+1}) + (t−1−m) ln(1/(1−α))]/η + ηt/8``.

    ``c_{s+1}`` decreases in s, so the switches are charged at the latest boundaries
    ``s = t−1, …, t−m``; the player declares ``bound:regret`` (m = 0, the same as Fixed Share's)
    and ``bound:shifting_regret`` for k ∈ (1, 2, 4, 8) as the max over ``m ≤ min(k, t−1)``
    (none when α = 0). With ``c = α`` this is exactly CBL Thm 5.2's Fixed Share bound.

    The Fixed Share identity "weights = Bayes over switching paths" (Herbster & Warmuth 1998) does
    NOT carry over: MPP mixes the filtering posteriors ``v_q`` (data up to q), while Bayes over
    "jump back to the expert used at time q" paths would mix posteriors smoothed on the data up to
    t. The test suite shows the two differ on a tiny example, so MPP is not tested against a
    brute-force path mixture.

    Examples
    --------
    >>> from arena import play
    >>> df = play(MixingPastPosteriors(eta=0.5, alpha=0.02), "ftl_killer", n_actions=2,
    ...           horizon=100, metrics={"regret": {}, "bound": {}})
    >>> last = df[df.t == 100].set_index("metric").value
    >>> bool(last["regret"] <= last["bound:regret"])
    True

    References
    ----------
    Bousquet & Warmuth (2002), "Tracking a small set of experts by mixing past posteriors",
    JMLR 3:363-396 (mixing schemes "uniform past" and "decaying past").
    Cesa-Bianchi & Lugosi (2006) Thm 5.2 (the Fixed Share special case).
    """

    tags = PlayerTags(protocols=frozenset({"experts"}), block_kernel=True)
    parameter_constraints: ClassVar = {
        "eta": [POSITIVE, OneOf("tuned")],
        "alpha": [Interval(0, 1, closed="left")],
        "scheme": [OneOf(*SCHEMES)],
        "gamma": [NON_NEGATIVE],
    }

    def __init__(
        self,
        eta: float | str = "tuned",
        alpha: float = 0.01,
        scheme: str = "uniform",
        gamma: float = 1.0,
    ):
        self.eta = eta
        self.alpha = alpha
        self.scheme = scheme
        self.gamma = gamma

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        n_rep, n_act, horizon = spec.n_replicates, spec.n_actions, spec.horizon
        alpha, gamma = float(self.alpha), float(self.gamma)
        if self.eta == "tuned":
            if horizon is None:
                raise ConfigError(self.label(), "eta", "'tuned' needs the horizon T")
            eta = math.sqrt(8.0 * switching_bracket(0, horizon, n_act, alpha) / horizon)
        else:
            eta = float(self.eta)
        self._eta, self._alpha, self._gamma = eta, alpha, gamma
        self._scheme = UNIFORM if self.scheme == "uniform" else DECAYING
        self._n_act, self._n_rep = n_act, n_rep
        self._lo, self._scale = float(spec.loss_range[0]), spec.loss_scale
        self._lw = np.full((n_rep, n_act), -math.log(n_act))
        self._running = np.full((n_rep, n_act), 1.0 / n_act)  # Σ_{q<t} v_q, starting with v_0
        self._rounds = 0
        if self._scheme == DECAYING and alpha > 0.0:
            self._history = np.empty((n_rep, 0, n_act))
            self._decay = np.zeros(1)
            self._reserve((horizon if horizon is not None else 1024) + 1)
        else:
            self._history = np.empty((n_rep, 1, n_act))  # unused
            self._decay = np.zeros(1)

    def _reserve(self, rows: int) -> None:
        """Grow the decaying scheme's store of past posteriors to at least ``rows`` rows."""
        have = self._history.shape[1]
        if rows <= have:
            return
        rows = max(rows, 2 * have)
        grown = np.empty((self._n_rep, rows, self._n_act))
        grown[:, :have] = self._history
        if have == 0:
            grown[:, 0] = 1.0 / self._n_act  # v_0, the uniform prior
        self._history = grown
        self._decay = np.concatenate(
            [[0.0], np.arange(1, rows + 1, dtype=np.float64) ** -self._gamma]
        )

    def learning_rate(self) -> float:
        """Return the η in use (resolved from ``"tuned"`` at reset)."""
        return self._eta

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        return log_probs(self._lw)

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        t = self._rounds + 1
        if self._scheme == DECAYING and self._alpha > 0.0:
            self._reserve(t + 1)
        _mpp_update(
            np.ascontiguousarray(losses, dtype=np.float64),
            self._lw,
            t,
            self._scheme,
            self._eta,
            self._alpha,
            self._lo,
            self._scale,
            self._running,
            self._history,
            self._decay,
        )
        self._rounds = t

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        n = losses.shape[1]
        if self._scheme == DECAYING and self._alpha > 0.0:
            self._reserve(self._rounds + n + 1)
        probs = np.empty_like(losses)
        _mpp_play_block(
            losses,
            self._lw,
            self._rounds,
            self._scheme,
            self._eta,
            self._alpha,
            self._lo,
            self._scale,
            self._running,
            self._history,
            self._decay,
            probs,
        )
        self._rounds += n
        return probs

    def prior_share(self, s: int) -> float:
        """Return ``c_{s+1} = β_{s+1}(0)``, the weight of the prior ``v_0`` in ``w_{s+1}``."""
        if self._scheme == UNIFORM:
            return self._alpha / s
        z = float(np.sum(np.arange(1, s + 1, dtype=np.float64) ** -self._gamma))
        return self._alpha * s**-self._gamma / z

    def shifting_bound(self, k: int, t: int) -> float:
        """Return the bound on ``Ĥ_t − L(i_{1:t})`` over paths with ≤ k switches (see Notes)."""
        n, a, eta = self._n_act, self._alpha, self._eta
        if n == 1:
            return 0.0  # one expert: p = 1 and every path is that expert
        base = math.log(n) + xlog_inv(t - 1, 1.0 - a)
        best, code = base, base
        for m in range(1, min(k, t - 1) + 1):
            s = t - m  # the m-th latest boundary, between rounds s and s + 1
            code += math.log(n) - math.log(self.prior_share(s)) - xlog_inv(1, 1.0 - a)
            best = max(best, code)
        return self._scale * (best / eta + eta * t / 8.0)

    def bounds(self, t: int) -> dict[tuple[str, float], float]:
        """Declare the derived bounds of the Notes on the regret and the k-switch regret."""
        out = {("regret", math.nan): self.shifting_bound(0, t)}
        if self._alpha > 0.0:
            for k in SHIFT_KS:
                out[("shifting_regret", float(k))] = self.shifting_bound(k, t)
        return out

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"eta": 0.5, "alpha": 0.05, "scheme": "decaying", "gamma": 1.0}
        yield {"eta": 1.0, "alpha": 0.0}
