"""Fixed Share (Herbster & Warmuth 1998): exponential weights sharing α of the mass each round."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.errors import ConfigError
from arena.experts.components import ExpertsPlayer
from arena.params import POSITIVE, Interval, IsNone, OneOf
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views


def xlog_inv(count: float, x: float) -> float:
    """Return ``count · ln(1/x)`` with the convention ``0 · ln(1/0) = 0`` (and ``+inf`` if x = 0).

    Examples
    --------
    >>> xlog_inv(0, 0.0), xlog_inv(2, 0.5) == 2 * math.log(2.0), xlog_inv(1, 0.0)
    (0.0, True, inf)
    """
    if count == 0:
        return 0.0
    if x <= 0.0:
        return math.inf
    return count * -math.log(x)


def switching_bracket(m: int, t: int, n_actions: int, alpha: float) -> float:
    """Return ``(m+1) ln N + m ln(1/α) + (t−m−1) ln(1/(1−α))``: the code length (nats) of an
    m-switch path of length t under the Fixed Share prior (CBL Thm 5.2).

    Examples
    --------
    >>> round(switching_bracket(0, 10, 4, 0.0), 12) == round(math.log(4), 12)
    True
    """
    return (m + 1) * math.log(n_actions) + xlog_inv(m, alpha) + xlog_inv(t - m - 1, 1.0 - alpha)


def shift_regret_bound(k: int, t: int, n_actions: int, alpha: float, eta: float) -> float:
    """Return ``max_{0 ≤ m ≤ min(k, t−1)} B_t(m)`` for unit-range losses, where
    ``B_t(m) = switching_bracket(m, t, N, α)/η + η t/8`` bounds ``Ĥ_t − L(i_{1:t})`` for every path
    with exactly m switches (CBL Thm 5.2); the max makes it a bound for at most k switches.
    """
    best = -math.inf
    for m in range(min(k, t - 1) + 1):
        best = max(best, switching_bracket(m, t, n_actions, alpha))
    if eta == 0.0:
        return 0.0 if best == 0.0 else math.inf
    return best / eta + eta * t / 8.0


def log_probs(log_weights: np.ndarray) -> np.ndarray:
    """Return ``p ∝ exp(log_weights)`` row-wise, subtracting the max before exponentiating."""
    w = np.exp(log_weights - log_weights.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True)


@njit(cache=True, nogil=True)
def _posterior(lw, losses, eta, lo, scale, out):
    """``out = ln v`` with ``v ∝ exp(lw) e^{−η l'}`` normalized (``l' = (l − lo)/scale``)."""
    n_act = lw.shape[0]
    m = -np.inf
    for i in range(n_act):
        a = lw[i] - eta * ((losses[i] - lo) / scale)
        out[i] = a
        if a > m:
            m = a
    s = 0.0
    for i in range(n_act):
        s += math.exp(out[i] - m)
    shift = m + math.log(s)
    for i in range(n_act):
        out[i] -= shift


@njit(cache=True, nogil=True)
def _probs_into(lw, out):
    """``out = exp(lw − max) / Σ``, the distribution of the log weights ``lw``."""
    n_act = lw.shape[0]
    m = -np.inf
    for i in range(n_act):
        if lw[i] > m:
            m = lw[i]
    s = 0.0
    for i in range(n_act):
        out[i] = math.exp(lw[i] - m)
        s += out[i]
    for i in range(n_act):
        out[i] /= s


@njit(cache=True, nogil=True)
def _share(lv, alpha, out):
    """Fixed Share mixing in log space: ``out = ln(α/N + (1−α) exp(lv))`` (``lv`` when α = 0)."""
    n_act = lv.shape[0]
    if alpha == 0.0:
        for i in range(n_act):
            out[i] = lv[i]
        return
    for i in range(n_act):
        out[i] = math.log(alpha / n_act + (1.0 - alpha) * math.exp(lv[i]))


@njit(cache=True, nogil=True)
def _fixed_share_update(losses, lw, eta, alpha, lo, scale):
    """One round for every replicate: ``lw`` (R, N) becomes ``ln w_{t+1}`` after losses (R, N)."""
    n_rep, n_act = losses.shape
    lv = np.empty(n_act)
    for r in range(n_rep):
        _posterior(lw[r], losses[r], eta, lo, scale, lv)
        _share(lv, alpha, lw[r])


@njit(cache=True, nogil=True)
def _fixed_share_play_block(losses, lw, eta, alpha, lo, scale, probs):
    """Play a chunk (R, n, N): ``probs[r, j] = w_t`` then the update; ``lw`` advances n rounds."""
    n_rep, n, n_act = losses.shape
    lv = np.empty(n_act)
    for r in range(n_rep):
        for j in range(n):
            _probs_into(lw[r], probs[r, j])
            _posterior(lw[r], losses[r, j], eta, lo, scale, lv)
            _share(lv, alpha, lw[r])


class FixedShare(ExpertsPlayer):
    """Fixed Share: exponential weights whose posterior is mixed with the uniform vector each round.

    Losses are mapped to [0, 1] with the declared range ``[lo, hi]`` (``l' = (l − lo)/(hi − lo)``)
    before the update; the bounds below are for unit-range losses and scale by ``hi − lo``.

    Parameters
    ----------
    eta : float or "tuned"
        Learning rate η > 0. ``"tuned"`` (default, needs the horizon T) minimizes the k-switch
        bound of the Notes at T: ``η = sqrt(8 C / T)`` with ``C`` the bracket for
        ``k = n_switches`` (0 if None) and the player's α (CBL Cor. 5.1 when α is tuned too).
    alpha : float or "tuned"
        Switching rate α ∈ [0, 1). ``"tuned"`` (default, needs the horizon) is
        ``α = m/(T − 1)`` with ``m = n_switches`` (α = 0 when T = 1). α = 0 is Hedge.
    n_switches : int or None
        Number of switches k ≥ 0 the comparator is allowed (used by the tuned α and η, and for the
        declared shifting-regret bound); None: unknown (then α must be a number).

    Notes
    -----
    Update, "mix after update" (Herbster & Warmuth 1998; CBL §5.2), from ``w_1`` uniform:

    * ``v_{t,i} = w_{t,i} e^{−η l'_{t,i}} / Σ_j w_{t,j} e^{−η l'_{t,j}}``;
    * ``w_{t+1,i} = α/N + (1 − α) v_{t,i}``;

    and ``p_t = w_t``. The weights are kept as logarithms (the posterior step is a log-sum-exp), so
    neither a long game nor a large η underflows them; α = 0 is exactly Hedge in log space.

    ``w_t`` is the marginal at time t of exponential weights over all ``N^T`` expert paths with the
    Markov prior ``P(i_1) = 1/N``, ``P(i_{t+1} = j | i_t = i) = α/N + (1 − α)·1[i = j]``, so the mix
    losses telescope to ``−(1/η) ln Σ_paths prior(path) e^{−η L(path)}`` (A.1.2; tested by brute
    force). Since a path with m switches has prior ≥ ``(1/N)(α/N)^m (1 − α)^{t−1−m}`` and Hoeffding
    bounds each round's gap ``p_t·l_t − m_t ≤ η/8``, for every loss sequence in [0, 1] (adaptive
    adversaries included), every t and every path ``i_{1:t}`` with exactly m switches
    (CBL Thm 5.2; Herbster & Warmuth 1998):

        ``Ĥ_t − L(i_{1:t}) ≤ [(m+1) ln N + m ln(1/α) + (t−m−1) ln(1/(1−α))]/η + η t/8 =: B_t(m)``.

    The bracket grows with m by ``ln N + ln((1−α)/α)``, which is ≥ 0 iff ``α ≤ N/(N+1)`` (so for
    every α ≤ 1/2): then ``B_t(k)`` covers every path with at most k switches. To be valid for every
    α the player declares ``max_{m ≤ min(k, t−1)} B_t(m)`` as ``bound:shifting_regret`` at
    ``k = n_switches`` (unless α = 0, where switching paths get an infinite bound), and ``B_t(0)``
    as ``bound:regret``. With ``α = m/(T−1)`` the bracket at T is ``(m+1) ln N + (T−1) H(α)``
    (binary entropy in nats) and the tuned η gives ``sqrt((T/2)[(m+1) ln N + (T−1) H(α)])``
    (CBL Cor. 5.1).

    Examples
    --------
    >>> from arena import play
    >>> df = play(FixedShare(eta=0.5, alpha=0.01), "ftl_killer", n_actions=2, horizon=100,
    ...           metrics={"regret": {}, "bound": {}})
    >>> last = df[df.t == 100].set_index("metric").value
    >>> bool(last["regret"] <= last["bound:regret"])
    True

    References
    ----------
    Herbster & Warmuth (1998), "Tracking the best expert", Machine Learning 32.
    Cesa-Bianchi & Lugosi (2006), *Prediction, Learning, and Games*, §5.2, Thm 5.2, Cor. 5.1.
    Reference implementation: ``Dralliag/opera:R/fixedshare.R`` (Gaillard & Goude).
    """

    tags = PlayerTags(protocols=frozenset({"experts"}), block_kernel=True)
    parameter_constraints: ClassVar = {
        "eta": [POSITIVE, OneOf("tuned")],
        "alpha": [Interval(0, 1, closed="left"), OneOf("tuned")],
        "n_switches": [Interval(0, None, integer=True), IsNone()],
    }

    def __init__(
        self,
        eta: float | str = "tuned",
        alpha: float | str = "tuned",
        n_switches: int | None = 3,
    ):
        self.eta = eta
        self.alpha = alpha
        self.n_switches = n_switches

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        n_act, horizon = spec.n_actions, spec.horizon
        k = None if self.n_switches is None else int(self.n_switches)
        if self.alpha == "tuned":
            if k is None:
                raise ConfigError(who, "alpha", "'tuned' needs n_switches (m/(T−1))")
            if horizon is None:
                raise ConfigError(who, "alpha", "'tuned' needs the horizon T (α = m/(T−1))")
            alpha = k / (horizon - 1) if horizon > 1 else 0.0
            if alpha >= 1.0:
                raise ConfigError(
                    who, "n_switches", f"tuned α = {k}/(T−1) must be < 1 (T = {horizon})"
                )
        else:
            alpha = float(self.alpha)
        if self.eta == "tuned":
            if horizon is None:
                raise ConfigError(who, "eta", "'tuned' needs the horizon T")
            bracket = switching_bracket(min(k or 0, horizon - 1), horizon, n_act, alpha)
            if not math.isfinite(bracket):
                raise ConfigError(who, "eta", "'tuned' needs α > 0 when n_switches > 0")
            eta = math.sqrt(8.0 * bracket / horizon)
        else:
            eta = float(self.eta)
        self._eta, self._alpha, self._k = eta, alpha, k
        self._n_act = n_act
        self._lo, self._scale = float(spec.loss_range[0]), spec.loss_scale
        self._lw = np.full((spec.n_replicates, n_act), -math.log(n_act))

    def learning_rate(self) -> float:
        """Return the η in use (resolved from ``"tuned"`` at reset)."""
        return self._eta

    def switching_rate(self) -> float:
        """Return the α in use (resolved from ``"tuned"`` at reset)."""
        return self._alpha

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        return log_probs(self._lw)

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        _fixed_share_update(
            np.ascontiguousarray(losses, dtype=np.float64),
            self._lw,
            self._eta,
            self._alpha,
            self._lo,
            self._scale,
        )

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        probs = np.empty_like(losses)
        _fixed_share_play_block(
            losses, self._lw, self._eta, self._alpha, self._lo, self._scale, probs
        )
        return probs

    def bounds(self, t: int) -> dict[tuple[str, float], float]:
        """Declare ``B_t(0)`` on the regret and ``max_{m ≤ k} B_t(m)`` on the k-switch regret."""
        out = {("regret", math.nan): self.shifting_bound(0, t)}
        if self._k is not None and self._k > 0 and self._alpha > 0.0:
            out[("shifting_regret", float(self._k))] = self.shifting_bound(self._k, t)
        return out

    def shifting_bound(self, k: int, t: int) -> float:
        """Return the bound on ``Ĥ_t − L(i_{1:t})`` over paths with ≤ k switches (see Notes)."""
        if self._n_act == 1:
            return 0.0  # one expert: every path is that expert, and p = 1
        return self._scale * shift_regret_bound(k, t, self._n_act, self._alpha, self._eta)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"eta": 0.5, "alpha": 0.05, "n_switches": None}
        yield {"eta": 2.0, "alpha": 0.0, "n_switches": 1}
