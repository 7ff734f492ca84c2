"""Exp3: exponential weights on importance-weighted loss estimates (bandit feedback)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.bandit.components import BanditPlayer
from arena.errors import ConfigError
from arena.params import Interval, OneOf
from arena.sampling import sample_action
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

FIXED, ANYTIME = 0, 1
"""Kernel codes of the rate schedules (a number or ``"tuned"`` is FIXED)."""


def exp3_probs(estimates: np.ndarray, eta: float, gamma: float) -> np.ndarray:
    """Return ``(1 − γ) q + γ/K`` row-wise, ``q_i ∝ exp(−η (L̂_i − min_j L̂_j))`` (stable softmax).

    Examples
    --------
    >>> exp3_probs(np.array([[0.0, math.log(3.0)]]), 1.0, 0.0).round(3).tolist()
    [[0.75, 0.25]]
    >>> exp3_probs(np.array([[0.0, 1e308]]), 1.0, 0.5).tolist()  # no overflow, γ/K floor
    [[0.75, 0.25]]
    """
    n_act = estimates.shape[-1]
    shifted = estimates - estimates.min(axis=-1, keepdims=True)
    w = np.exp(-eta * shifted)
    return (1.0 - gamma) * (w / w.sum(axis=-1, keepdims=True)) + gamma / n_act


@njit(cache=True, nogil=True)
def exp_weights_row(est, eta, out):
    """Write ``q_i = exp(−η (L̂_i − min_j L̂_j)) / Σ_k exp(−η (L̂_k − min_j L̂_j))`` of one
    replicate's estimates ``est`` (K,) into ``out`` (K,): the stable softmax of the
    exponential-weights bandit kernels (Exp3, Exp3-IX, the drifting-game player; EXP3++ runs the
    same operations fused with its per-arm exploration)."""
    n_act = est.shape[0]
    m = np.inf
    for i in range(n_act):
        m = est[i] if est[i] < m else m
    total = 0.0
    for i in range(n_act):
        w = math.exp(-eta * (est[i] - m))
        out[i] = w
        total += w
    for i in range(n_act):
        out[i] = out[i] / total


@njit(cache=True, nogil=True)
def exp_weights_refresh(est, r, eta, w):
    """Fill ``w[i] = exp(−η (L̂_{r,i} − m))`` from row r of the estimates ``est`` (R, K), with
    ``m = min_i L̂_{r,i}``, and return m: the unnormalized weights of :func:`exp_weights_row`, the
    same operations, kept between rounds by the kernels whose rate is fixed."""
    n_act = est.shape[1]
    m = np.inf
    for i in range(n_act):
        m = est[r, i] if est[r, i] < m else m
    for i in range(n_act):
        w[i] = math.exp(-eta * (est[r, i] - m))
    return m


@njit(cache=True, nogil=True)
def exp_weights_normalize(w, probs, r, j):
    """Write ``w / Σ w`` (summed in arm order) into ``probs[r, j]``: with the weights of
    :func:`exp_weights_refresh`, bit for bit what :func:`exp_weights_row` writes."""
    total = 0.0
    for i in range(w.shape[0]):
        total += w[i]
    for i in range(w.shape[0]):
        probs[r, j, i] = w[i] / total


@njit(cache=True, nogil=True)
def exp_weights_after_update(est, r, a, eta, w, m):
    """Keep ``w`` the weights of row r after ``L̂_{r,a}`` changed, at the cost of one exponential:
    only ``w[a]`` moves unless the minimum did (then every weight does: +inf is returned, and the
    caller refreshes them all). Return the minimum the weights are relative to."""
    m_new = np.inf
    for i in range(est.shape[1]):
        m_new = est[r, i] if est[r, i] < m_new else m_new
    if m_new != m:
        return np.inf
    w[a] = math.exp(-eta * (est[r, a] - m))
    return m


@njit(cache=True, nogil=True)
def _exp3_rate(mode, eta, log_k, n_act, t):
    """η_t: the fixed rate, or ``sqrt(ln K / (K t))`` (anytime)."""
    if mode == ANYTIME:
        return math.sqrt(log_k / (n_act * t))
    return eta


@njit(cache=True, nogil=True)
def _exp3_play_block(losses, uniforms, est, rounds_done, mode, eta, gamma, log_k, lo, scale, probs):
    """Play a chunk: per round ``p_t`` from the estimates, the arena's draw, the estimate update.

    Reads only ``losses[r, j, I]`` of the drawn arm ``I``; ``est`` (R, K) advances in place.
    With a fixed rate only the drawn arm's weight changes (unless the minimum estimate moves), so
    a round costs one exponential instead of K, and ``p_t`` is bit for bit the same.
    """
    n_rep, n, n_act = losses.shape
    w = np.empty(n_act)
    for r in range(n_rep):
        m = np.inf  # the weights w are stale
        for j in range(n):
            e = _exp3_rate(mode, eta, log_k, n_act, rounds_done + j + 1)
            if mode == ANYTIME or m == np.inf:
                m = exp_weights_refresh(est, r, e, w)
            exp_weights_normalize(w, probs, r, j)
            for i in range(n_act):
                probs[r, j, i] = (1.0 - gamma) * probs[r, j, i] + gamma / n_act
            a = sample_action(probs[r, j], uniforms[r, j])
            est[r, a] += ((losses[r, j, a] - lo) / scale) / probs[r, j, a]
            if mode != ANYTIME:
                m = exp_weights_after_update(est, r, a, e, w, m)


def exp3_rate(player: BanditPlayer, spec: GameSpec) -> tuple[int, float]:
    """Return the kernel's ``(mode, η)`` for a player's ``eta`` parameter in a game.

    A number is a fixed rate; ``"tuned"`` is ``η = sqrt(2 ln K / (K T))`` from the horizon (a
    :class:`~arena.errors.ConfigError` without one); ``"anytime"`` is the schedule
    ``η_t = sqrt(ln K / (K t))`` (mode ANYTIME, η unused).

    Examples
    --------
    >>> from arena.spec import GameSpec
    >>> mode, eta = exp3_rate(Exp3(), GameSpec("bandit", 2, 100, (0.0, 1.0)))
    >>> mode == FIXED, round(eta, 6)
    (True, 0.083255)
    """
    if player.eta == "anytime":
        return ANYTIME, 0.0
    if player.eta == "tuned":
        if spec.horizon is None:
            raise ConfigError(player.label(), "eta", "'tuned' needs the horizon; use 'anytime'")
        return FIXED, math.sqrt(2.0 * math.log(spec.n_actions) / (spec.n_actions * spec.horizon))
    return FIXED, float(player.eta)


class Exp3(BanditPlayer):
    """Exp3, loss-based: exponential weights on importance-weighted estimates, optional γ mixing.

    Each round ``p_t = (1 − γ) q_t + γ/K`` with ``q_{t,i} ∝ exp(−η_t L̂_{t−1,i})``; the arena draws
    ``I_t ~ p_t``; the estimate ``ℓ̂_{t,i} = 1{I_t = i} ℓ_{t,i} / p_{t,i}`` (with the probability
    the arm was drawn with) is unbiased, ``E[ℓ̂_t | p_t] = ℓ_t``, and ``L̂_t = Σ_{s≤t} ℓ̂_s``. Losses
    are mapped to [0, 1] with the declared range ``[lo, hi]``; the bounds scale by ``hi − lo``.

    Parameters
    ----------
    eta : float or {"tuned", "anytime"}
        A fixed rate η > 0; ``"tuned"`` (default) ``η = sqrt(2 ln K / (K T))`` from the horizon;
        ``"anytime"`` ``η_t = sqrt(ln K / (K t))``, no horizon needed.
    gamma : float
        Exploration γ ∈ [0, 1): the weight of the uniform mixture (0, the default, is the
        loss-based Exp3 without exploration; γ > 0 floors every ``p_{t,i}`` at γ/K, and so every
        estimate at ``K/γ``).

    Notes
    -----
    Guarantee, on every oblivious loss sequence in [0, 1], for the expected regret
    ``E[Σ_s p_s·ℓ_s] − min_i L_{t,i}`` (the ``regret`` metric's expectation over the draws):

    * fixed η (``"tuned"`` included): ``ln K / η + η K t / (2(1 − γ)) + γ t``;
    * ``"anytime"``: ``ln K / η_t + K/(2(1 − γ)) · sqrt(ln K / K) · (2√t − 1) + γ t``.

    With γ = 0 these are Bubeck & Cesa-Bianchi 2012, Theorem 3.1: ``√(2 t K ln K)`` at the tuned
    rate (t = T) and ``2√(T K ln K)`` anytime. For γ > 0 the same proof runs on ``q_t``: the
    second moment ``E[Σ_i q_{t,i} ℓ̂_{t,i}²] ≤ Σ_i q_{t,i}/p_{t,i} ≤ K/(1 − γ)``, and
    ``p_t·ℓ_t ≤ q_t·ℓ_t + γ`` adds ``γ t`` (mixing only costs in this bound; it exists to floor
    the probabilities, as in the original Exp3 of Auer et al. 2002). The anytime sum uses
    ``Σ_{s≤t} s^{−1/2} ≤ 2√t − 1``. Weights are computed as ``exp(−η (L̂ − min L̂))``: no
    exponential overflows, so 10⁶ rounds and more stay finite.

    Examples
    --------
    >>> from arena import play
    >>> df = play(Exp3(), "bernoulli", n_actions=5, horizon=2000, replicates=4,
    ...           metrics={"regret": {}, "bound": {}})
    >>> last = df[df.t == 2000].groupby("metric").value.mean()
    >>> bool(last["regret"] <= last["bound:regret"])
    True

    References
    ----------
    Auer, Cesa-Bianchi, Freund & Schapire (2002), "The nonstochastic multiarmed bandit problem",
    SIAM J. Comput. 32(1), §3 (Exp3).
    Bubeck & Cesa-Bianchi (2012), "Regret analysis of stochastic and nonstochastic multi-armed
    bandit problems", Found. Trends Mach. Learn. 5(1), §3.1, Theorem 3.1.
    """

    tags = PlayerTags(protocols=frozenset({"bandit"}), block_kernel=True)
    parameter_constraints: ClassVar = {
        "eta": [Interval(0, None, closed="neither"), OneOf("tuned", "anytime")],
        "gamma": [Interval(0, 1, closed="left")],
    }

    def __init__(self, eta: float | str = "tuned", gamma: float = 0.0):
        self.eta = eta
        self.gamma = gamma

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        n_act = spec.n_actions
        log_k = math.log(n_act)
        self._mode, self._eta = exp3_rate(self, spec)
        self._gamma = float(self.gamma)
        self._log_k, self._n_act = log_k, n_act
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._est = np.zeros((spec.n_replicates, n_act))
        self._rounds = 0

    def learning_rate(self) -> float:
        """Return η for the next round (``t = rounds played + 1``)."""
        return _exp3_rate(self._mode, self._eta, self._log_k, self._n_act, self._rounds + 1)

    def predict(self) -> np.ndarray:
        return exp3_probs(self._est, self.learning_rate(), self._gamma)

    def update(self, actions: np.ndarray, losses: np.ndarray, probs: np.ndarray) -> None:
        rows = np.arange(actions.shape[0])
        unit = (np.asarray(losses, dtype=np.float64) - self._lo) / self._scale
        self._est[rows, actions] += unit / probs[rows, actions]
        self._rounds += 1

    play_block_out = True

    def play_block(
        self, losses: np.ndarray, uniforms: np.ndarray, out: np.ndarray | None = None
    ) -> np.ndarray:
        losses, uniforms = kernel_views(losses, uniforms)
        probs = np.empty_like(losses) if out is None else out
        _exp3_play_block(
            losses,
            uniforms,
            self._est,
            self._rounds,
            self._mode,
            self._eta,
            self._gamma,
            self._log_k,
            self._lo,
            self._scale,
            probs,
        )
        self._rounds += losses.shape[1]
        return probs

    def estimates(self) -> np.ndarray:
        return self._est.copy()

    def bounds(self, t: int) -> dict[tuple[str, float], float]:
        """Declare the bound of the Notes on the expected regret after ``t`` rounds."""
        return {("regret", math.nan): self.regret_bound(t)}

    def regret_bound(self, t: int) -> float:
        """Return the proven bound on the expected regret after ``t`` rounds (see Notes)."""
        k, log_k, gamma = self._n_act, self._log_k, self._gamma
        if k == 1:
            return 0.0
        if self._mode == ANYTIME:
            eta_t = math.sqrt(log_k / (k * t))
            spread = k / (2.0 * (1.0 - gamma)) * math.sqrt(log_k / k) * (2.0 * math.sqrt(t) - 1.0)
            bound = log_k / eta_t + spread + gamma * t
        else:
            bound = log_k / self._eta + self._eta * k * t / (2.0 * (1.0 - gamma)) + gamma * t
        return self._scale * bound

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"eta": "anytime"}
        yield {"eta": 0.2, "gamma": 0.1}
