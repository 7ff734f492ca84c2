"""Luo's drifting-game bandit algorithm (Algorithm 24) with the exponential (EXP3) potential."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.bandit.components import BanditPlayer
from arena.errors import ConfigError
from arena.params import POSITIVE, Interval, IsNone, OneOf
from arena.players.exp3 import exp_weights_after_update, exp_weights_normalize, exp_weights_refresh
from arena.sampling import sample_action
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

SQRT_E = math.sqrt(math.e)


def log_growth(eta: float, n_act: int) -> float:
    """Return ``ln((e^η + e^{−η})/2 + ½ K e^η η²)``, the per-round growth of the potential.

    Computed as ``η + ln((1 + e^{−2η})/2 + ½ K η²)``: no overflow for large η.

    Examples
    --------
    >>> eta = 0.3
    >>> direct = math.log((math.exp(eta) + math.exp(-eta)) / 2 + 0.5 * 4 * math.exp(eta) * eta**2)
    >>> math.isclose(log_growth(eta, 4), direct, rel_tol=1e-14)
    True
    """
    return eta + math.log(0.5 * (1.0 + math.exp(-2.0 * eta)) + 0.5 * n_act * eta * eta)


def theorem_radius(t: int, eta: float, epsilon: float, n_act: int) -> float:
    """Return Theorem 21's ``R = (1/η) ln(1/ε) + (t/η) ln((e^η + e^{−η})/2 + ½ K e^η η²)``.

    It makes ``Φ_0(0) = ε`` for the horizon-t potential ``Φ_t(s) = exp(−η(s + R))``: the
    pseudo-regret bound after t rounds (Luo 2016, Appendix A.2, Theorem 21, EXP3 instance).

    Examples
    --------
    >>> round(theorem_radius(1000, tuned_eta(1000, 10, 0.1), 0.1, 10), 1)
    232.4
    """
    return (math.log(1.0 / epsilon) + t * log_growth(eta, n_act)) / eta


def tuned_eta(horizon: int, n_act: int, epsilon: float) -> float:
    """Return ``η* = sqrt(2 ln(1/ε) / (T (1 + K √e)))`` (Luo 2016, Appendix A.2).

    With ``η* ≤ 1`` Theorem 21's bound is at most ``sqrt(2 T (1 + K √e) ln(1/ε))``.

    Examples
    --------
    >>> round(tuned_eta(1000, 10, 0.1), 5)
    0.01623
    """
    return math.sqrt(2.0 * math.log(1.0 / epsilon) / (horizon * (1.0 + n_act * SQRT_E)))


def exp_alpha(eta: float) -> float:
    """Return ``α = e^η η² / (2 (e^η − e^{−η}))``, Algorithm 24's ``α_t`` for the exp potential
    (``½ Φ_t''(s−1) / (Φ_t(s−1) − Φ_t(s+1))``, the same for every s and t)."""
    return math.exp(eta) * eta * eta / (2.0 * (math.exp(eta) - math.exp(-eta)))


def exp_potential(s, t: int, horizon: int, eta: float, radius: float, n_act: int):
    """Return ``Φ_t(s) = exp(−η(s + R)) ((e^η + e^{−η} + K e^η η²)/2)^{T−t}``, the EXP3
    potential of Luo 2016, Appendix A.2, which satisfies (A.3) with equality."""
    return np.exp(
        -eta * (np.asarray(s, dtype=np.float64) + radius) + (horizon - t) * log_growth(eta, n_act)
    )


def dg_movement(probs: np.ndarray, action: int, loss: float) -> np.ndarray:
    """Return the chip movements ``z_{t,i} = 1{i = i_t} ℓ_{t,i_t}/p_{t,i_t} − ℓ_{t,i_t}`` (K,).

    Examples
    --------
    >>> dg_movement(np.array([0.25, 0.75]), 0, 1.0).tolist()
    [3.0, -1.0]
    """
    z = np.full(np.shape(probs), -float(loss))
    z[action] += loss / probs[action]
    return z


def dg_probs(state: np.ndarray, eta: float) -> np.ndarray:
    """Return ``p_{t,i} ∝ Φ_t(s_{t−1,i} − 1) − Φ_t(s_{t−1,i} + 1) ∝ exp(−η s_{t−1,i})`` row-wise.

    For the exp potential the difference is ``exp(−η(s + R)) (e^η − e^{−η})`` times a factor
    common to all arms, so the distribution is the stable softmax of ``−η (s − min s)``.

    Examples
    --------
    >>> dg_probs(np.array([[0.0, math.log(3.0)]]), 1.0).round(3).tolist()
    [[0.75, 0.25]]
    """
    shifted = state - state.min(axis=-1, keepdims=True)
    w = np.exp(-eta * shifted)
    return w / w.sum(axis=-1, keepdims=True)


@njit(cache=True, nogil=True)
def _dg_bandit_play_block(losses, uniforms, est, paid, eta, lo, scale, probs):
    """Play a chunk: ``p_t`` from the chip positions, the arena's draw, ``s_t = s_{t−1} + z_t``.

    The positions are held as ``s_t = est − paid·1`` (see :class:`DriftingGameBandit`): the
    drawn arm's ``est`` gains ``ℓ/p_{t,i_t}`` and ``paid`` gains ``ℓ``. Reads only
    ``losses[r, j, i_t]``; ``est`` (R, K) and ``paid`` (R,) advance in place.
    """
    n_rep, n, n_act = losses.shape
    w = np.empty(n_act)
    for r in range(n_rep):
        m = exp_weights_refresh(est, r, eta, w)
        for j in range(n):
            if m == np.inf:
                m = exp_weights_refresh(est, r, eta, w)
            exp_weights_normalize(w, probs, r, j)
            a = sample_action(probs[r, j], uniforms[r, j])
            unit = (losses[r, j, a] - lo) / scale
            est[r, a] += unit / probs[r, j, a]
            paid[r] += unit
            # one exponential a round: only the drawn arm's weight moves (exp3's kernel)
            m = exp_weights_after_update(est, r, a, eta, w, m)


class DriftingGameBandit(BanditPlayer):
    """Drifting-game bandit player: Luo's Algorithm 24 with the exponential potential.

    The bandit game is a drifting game with random chip movements (Luo 2016, Appendix A.2): arm i
    is a chip at ``s_{t−1,i}``; the player plays ``p_{t,i} ∝ Φ_t(s_{t−1,i} − 1) −
    Φ_t(s_{t−1,i} + 1)``, the arena draws ``i_t ~ p_t``, and the chips move by
    ``z_{t,i} = 1{i = i_t} ℓ_{t,i_t}/p_{t,i_t} − ℓ_{t,i_t}``, so ``s_t = s_{t−1} + z_t``. With the
    EXP3 instance's potential ``Φ_T(s) = exp(−η(s + R))`` the backward recursion (A.3) holds with
    equality, ``Φ_t(s) = exp(−η(s + R)) ((e^η + e^{−η} + K e^η η²)/2)^{T−t}`` and
    ``α_t = e^η η² / (2(e^η − e^{−η}))``, and ``p_{t,i} ∝ exp(−η s_{t−1,i})``: loss-based EXP3
    without exploration (``s_{t,i}`` is the estimate ``L̂_{t,i}`` minus the learner's realized
    loss, a shift common to all arms). Losses are mapped to [0, 1] with the declared range; the
    bound scales by ``hi − lo``.

    Parameters
    ----------
    eta : float or "tuned"
        A fixed η > 0, or ``"tuned"`` (default): ``η* = sqrt(2 ln(1/ε) / (T (1 + K √e)))``,
        which needs the horizon T and is refused (ConfigError) when ``η* > 1``, where the
        tuned closed form of the bound no longer holds.
    epsilon : float or None
        The quantile ε ∈ (0, 1) of the guarantee; None (default) is ``1/K``: the bound holds
        against every arm, i.e. against the best one.

    Notes
    -----
    Guarantee (Luo 2016, Appendix A.2, Theorem 21 with the EXP3 instance; the adversary may be
    adaptive): fewer than ``εK`` arms have ``E[Σ_{s≤t} ℓ_{s,i_s}] − E[Σ_{s≤t} ℓ_{s,i}] ≥ R`` with

        ``R = (1/η) ln(1/ε) + (t/η) ln((e^η + e^{−η})/2 + ½ K e^η η²)``,

    for every t (the algorithm does not depend on T, so the theorem applies to each prefix).
    With ``ε ≤ 1/K`` no arm does: R bounds the pseudo-regret against the best arm, which against
    an oblivious adversary is the expectation of the ``regret`` metric; this is declared as
    ``bound:regret``. With ``ε > 1/K`` it bounds the pseudo-regret against the ``⌈εK⌉``-th best
    arm, an ε-quantile statement that :meth:`regret_bound` returns but ``bounds`` does not
    declare. For ``η ≤ 1``, ``R ≤ (1/η) ln(1/ε) + tη(½ + K√e/2)``, and at ``η*`` with ``t = T``
    it is at most ``sqrt(2 T (1 + K √e) ln(1/ε))`` (:meth:`tuned_bound`).

    Numerics: the positions are held as two exact running sums, ``s_t = L̂_t − C_t·1`` with
    ``L̂_{t,i} = Σ_{τ≤t} 1{i = i_τ} ℓ_{τ,i_τ}/p_{τ,i_τ}`` and ``C_t = Σ_{τ≤t} ℓ_{τ,i_τ}`` (each
    round adds exactly ``z_t``), and ``p_t`` is the softmax of ``−η (L̂ − min L̂)``, which equals
    ``−η (s − min s)`` with the common shift cancelled exactly: storing ``s`` itself would lose
    ``|s|·1e-16`` to cancellation when importance weights are large. No exponential overflows.

    Examples
    --------
    >>> from arena import play
    >>> df = play(DriftingGameBandit(), "bernoulli", n_actions=5, horizon=2000, replicates=4,
    ...           metrics={"regret": {}, "bound": {}})
    >>> last = df[df.t == 2000].groupby("metric").value.mean()
    >>> bool(last["regret"] <= last["bound:regret"])
    True

    References
    ----------
    Luo (2016), *Optimal and Adaptive Online Learning*, PhD thesis, Princeton University,
    Appendix A.2: Algorithm 24, Theorems 20 and 21, the EXP3 instance.
    """

    tags = PlayerTags(protocols=frozenset({"bandit"}), block_kernel=True)
    parameter_constraints: ClassVar = {
        "eta": [POSITIVE, OneOf("tuned")],
        "epsilon": [Interval(0, 1, closed="neither"), IsNone()],
    }

    def __init__(self, eta: float | str = "tuned", epsilon: float | None = None):
        self.eta = eta
        self.epsilon = epsilon

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        n_act = spec.n_actions
        eps = 1.0 / n_act if self.epsilon is None else float(self.epsilon)
        if self.eta == "tuned":
            if spec.horizon is None:
                raise ConfigError(self.label(), "eta", "'tuned' needs the horizon; give a number")
            eta = tuned_eta(spec.horizon, n_act, eps) if eps < 1.0 else 1.0  # K = 1: any η
            if eta > 1.0:
                raise ConfigError(
                    self.label(),
                    "eta",
                    f"the tuned rate η* = {eta:.4g} exceeds 1 (horizon {spec.horizon} too short "
                    f"for ε = {eps:.4g}); Theorem 21's tuned bound needs η* ≤ 1: give eta",
                )
        else:
            eta = float(self.eta)
        self._eta, self._eps, self._n_act, self._horizon = eta, eps, n_act, spec.horizon
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._est = np.zeros((spec.n_replicates, n_act))  # L̂_t
        self._paid = np.zeros(spec.n_replicates)  # C_t, the learner's realized loss

    def learning_rate(self) -> float:
        """Return the fixed η in use."""
        return self._eta

    def predict(self) -> np.ndarray:
        return dg_probs(self._est, self._eta)  # s − min s = L̂ − min L̂

    def update(self, actions: np.ndarray, losses: np.ndarray, probs: np.ndarray) -> None:
        rows = np.arange(actions.shape[0])
        unit = (np.asarray(losses, dtype=np.float64) - self._lo) / self._scale
        # s_t = s_{t−1} + z_t, z_{t,i} = 1{i = i_t} ℓ/p_{t,i_t} − ℓ: both parts of s = L̂ − C·1
        self._est[rows, actions] += unit / probs[rows, actions]
        self._paid += unit

    play_block_out = True

    def play_block(
        self, losses: np.ndarray, uniforms: np.ndarray, out: np.ndarray | None = None
    ) -> np.ndarray:
        losses, uniforms = kernel_views(losses, uniforms)
        probs = np.empty_like(losses) if out is None else out
        _dg_bandit_play_block(
            losses, uniforms, self._est, self._paid, self._eta, self._lo, self._scale, probs
        )
        return probs

    def state(self) -> np.ndarray:
        """Return the chip positions ``s_t = L̂_t − C_t·1`` (R, K)."""
        return self._est - self._paid[:, None]

    def estimates(self) -> np.ndarray:
        """Return the importance-weighted cumulative loss estimates ``L̂_t`` (unbiased: each round
        adds ``1{I_t = i} ℓ_{t,i} / p_{t,i}``); the chips sit at ``s_t = L̂_t − Σ_s ℓ_{s,I_s}``
        (:meth:`state`), whose movements ``z_t`` have expectation ``ℓ_t − p_t·ℓ_t``."""
        return self._est.copy()

    def bounds(self, t: int) -> dict[tuple[str, float], float]:
        """Declare Theorem 21's bound after ``t`` rounds when ``ε ≤ 1/K`` (see Notes)."""
        if self._eps * self._n_act > 1.0 + 1e-12:
            return {}
        return {("regret", math.nan): self.regret_bound(t)}

    def regret_bound(self, t: int) -> float:
        """Return ``(hi − lo) R`` of Theorem 21 after ``t`` rounds (see Notes)."""
        if self._n_act == 1:
            return 0.0
        return self._scale * theorem_radius(t, self._eta, self._eps, self._n_act)

    def tuned_bound(self) -> float:
        """Return ``(hi − lo) sqrt(2 T (1 + K √e) ln(1/ε))``, the bound at ``η*`` and ``t = T``."""
        k, horizon = self._n_act, self._horizon
        return self._scale * math.sqrt(2.0 * horizon * (1.0 + k * SQRT_E) * math.log(1 / self._eps))

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"eta": 0.3}
        yield {"eta": 0.2, "epsilon": 0.5}
