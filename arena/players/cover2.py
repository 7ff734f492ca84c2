"""Cover's exact minimax learner for two experts and binary losses (Cover 1965/67)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numba import njit

from arena.errors import ConfigError
from arena.experts.components import ExpertsPlayer
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

SERIES_FROM = 500
"""From this j on, ``ln(C(2j, j)/4^j)`` is taken from its asymptotic series (error < 1e-16 there);
below, from the exact integer ratio (Python's int division is correctly rounded)."""


def central(j: int) -> float:
    """Return ``C(2j, j)/4^j``, the probability that 2j fair ±1 steps sum to 0.

    Examples
    --------
    >>> central(2)  # C(4, 2)/16
    0.375
    """
    if j < SERIES_FROM:
        return math.comb(2 * j, j) / 4**j
    return math.exp(log_central(j))


def log_central(j: int) -> float:
    """Return ``ln(C(2j, j)/4^j)`` (exact ratio below :data:`SERIES_FROM`, series above)."""
    if j < SERIES_FROM:
        return math.log(math.comb(2 * j, j) / 4**j)
    x = 1.0 / j
    tail = x * (-1.0 / 8 + x * (1.0 / 128 + x * (5.0 / 1024 + x * (-21.0 / 32768))))
    return -0.5 * math.log(math.pi * j) + math.log1p(tail)


def cover_value(horizon: int) -> float:
    """Return Cover's minimax regret ``V_T = ½ Σ_{j=0}^{J} C(2j, j)/4^j``, ``J = ⌊(T−1)/2⌋``.

    Uses ``Σ_{j ≤ J} C(2j, j)/4^j = (2J + 1) C(2J, J)/4^J`` (Cover 1965).

    Examples
    --------
    >>> [cover_value(t) for t in (1, 2, 3, 5, 9)]  # 1/2, 1/2, 3/4, 15/16, 315/256
    [0.5, 0.5, 0.75, 0.9375, 1.23046875]
    """
    if horizon <= 0:
        return 0.0
    j = (horizon - 1) // 2
    return 0.5 * (2 * j + 1) * central(j)


@njit(cache=True, nogil=True)
def _advance(state, n, a, b):
    """Advance one replicate's state after the binary losses ``(a, b)`` of experts 0 and 1.

    ``state = [g, lead, u, la]``: gap ``g = |L_0 − L_1|``, the leader, the weight
    ``u = P(S_n < g) + ½ P(S_n = g)`` of the leader (S_n: n fair ±1 steps, n = rounds left after
    this one) and ``la = ln π_m(g)`` with ``π_m(g) = P(S_m = g)``, ``m ∈ {n, n−1}`` of g's parity.
    """
    g = int(state[0])
    la = state[3]
    d = math.exp(la)
    m = n if (n - g) % 2 == 0 else n - 1
    k = (m + g) // 2
    if a == b:  # a pass: (0, 0) or (1, 1); the gap stays and one round fewer remains
        if m == n:
            state[2] += 0.5 * d * g / n if n > 0 else 0.0
            ratio = 4.0 * k * (n - k) / (n * (n - 1.0)) if n > 1 else 0.0
            state[3] = la + math.log(ratio) if ratio > 0.0 else -np.inf
            _clamp(state)
        return
    loser = 0 if a == 1.0 else 1
    if g > 0 and loser == int(state[1]):  # the leader loses: the gap shrinks
        state[2] -= 0.5 * d
        ratio = 2.0 * k / m if m > 0 else 0.0
        state[0] = g - 1
        if g == 1:
            state[2] = 0.5  # a tie: u_n(0) = ½ exactly
    else:  # the other expert loses (or either, from a tie): the gap grows
        if g == 0:
            state[1] = 1 - loser
        state[2] += 0.5 * d
        ratio = 2.0 * (m - k) / m if m > 0 else 0.0
        state[0] = g + 1
    state[3] = la + math.log(ratio) if ratio > 0.0 else -np.inf
    _clamp(state)


@njit(cache=True, nogil=True)
def _clamp(state):
    """Keep ``u`` in [½, 1], where it lies exactly (rounding could leave 1 + 1e-16)."""
    if state[2] > 1.0:
        state[2] = 1.0
    elif state[2] < 0.5:
        state[2] = 0.5


@njit(cache=True, nogil=True)
def _fill_probs(state, out):
    if state[0] == 0:
        out[0] = 0.5
        out[1] = 0.5
    else:
        lead = int(state[1])
        out[lead] = state[2]
        out[1 - lead] = 1.0 - state[2]


@njit(cache=True, nogil=True)
def _cover2_update(states, unit_losses, n):
    for r in range(states.shape[0]):
        _advance(states[r], n, unit_losses[r, 0], unit_losses[r, 1])


@njit(cache=True, nogil=True)
def _cover2_play_block(states, unit_losses, rounds_done, horizon, probs):
    n_rep, n, _ = unit_losses.shape
    for r in range(n_rep):
        for j in range(n):
            _fill_probs(states[r], probs[r, j])
            _advance(
                states[r],
                horizon - (rounds_done + j + 1),
                unit_losses[r, j, 0],
                unit_losses[r, j, 1],
            )


class Cover2(ExpertsPlayer):
    """Cover's minimax learner for two experts: exact regret ``V_T`` on every binary sequence.

    The game has N = 2 experts and loss vectors in ``{(0,1), (1,0), (0,0), (1,1)}`` (in raw units
    ``{lo, hi}``, mapped to {0, 1}); the horizon T must be known. Any other loss vector is refused
    with a ``ValueError`` naming the round.

    Notes
    -----
    With gap ``g = |L_{t−1,0} − L_{t−1,1}|`` and ``r = T − t + 1`` rounds to go, the value of the
    game is ``V_0 ≡ 0``, ``V_r(0) = ½ + V_{r−1}(1)``, ``V_r(g) = ½(V_{r−1}(g−1) + V_{r−1}(g+1))``,
    and the learner puts ``1 − (V_{r−1}(g−1) − V_{r−1}(g+1))/2`` on the leader (½ at a tie), which
    equalizes the adversary's two moves (Cover 1965). Since
    ``V_r(g) = (E|g + S_r| − g)/2`` for S_r a sum of r fair ±1 steps, that weight is

        ``u_n(g) = P(S_n < g) + ½ P(S_n = g)``,  n = r − 1 = T − t,

    the probability (ties halved) that the leader is still ahead after a random continuation.
    ``u`` is harmonic, ``u_n(g) = ½(u_{n−1}(g−1) + u_{n−1}(g+1))``, with
    ``u_{n−1}(g ± 1) = u_n(g) ± ½ π(g)`` where ``π(g)`` is the one of ``P(S_n = g)``,
    ``P(S_{n−1} = g)`` that is not 0 by parity; a pass gives ``u_{n−1}(g) = u_n(g) + ½ P(S_n = g)
    g/n``. The player carries ``u`` and ``ln π`` along (ratios of binomials), O(1) per round and
    without any table; ``π`` starts from the central probability ``C(2j, j)/4^j``
    (:func:`central`).

    Guarantee: on every sequence of ``(1,0)/(0,1)`` vectors the regret after t rounds is exactly
    ``V_T − V_{T−t}(g_t)``, hence exactly ``V_T`` at t = T; pass rounds add no regret and do not
    increase the value to go, so the regret is ≤ ``V_T`` at every t on every binary sequence
    (adaptive adversaries included). The player declares ``bound:regret = V_T`` (times
    ``hi − lo``), with ``V_T = ½ Σ_{j ≤ ⌊(T−1)/2⌋} C(2j,j)/4^j ≈ sqrt(T/(2π))``
    (:func:`cover_value`). No learner has a smaller worst-case regret on this game.

    Examples
    --------
    >>> import os, tempfile
    >>> from arena import play
    >>> from arena.adversaries.replay import Replay
    >>> f = os.path.join(tempfile.mkdtemp(), "l.npy")
    >>> np.save(f, np.tile([[1.0, 0.0], [0.0, 1.0]], (5, 1))[:9])
    >>> df = play(Cover2(), Replay(path=f), horizon=9, metrics={"regret": {}})
    >>> float(df.value.iloc[-1])  # V_9 = 315/256
    1.23046875

    References
    ----------
    Cover (1965/67), "Behavior of sequential predictors of binary sequences"; Cesa-Bianchi &
    Lugosi (2006) §8.3 (the binary prediction game).
    """

    tags = PlayerTags(
        protocols=frozenset({"experts"}),
        needs_horizon=True,
        block_kernel=True,
        min_actions=2,
        max_actions=2,
        binary_losses=True,
    )

    def __init__(self):
        pass

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        if spec.n_actions != 2:
            raise ConfigError(who, "n_actions", f"plays two experts only, got N = {spec.n_actions}")
        if spec.horizon is None:
            raise ConfigError(who, "horizon", "needs the horizon T")
        horizon = int(spec.horizon)
        self._horizon = horizon
        self._ids = np.asarray(spec.replicates(), dtype=np.int64)
        self._lo, self._scale = float(spec.loss_range[0]), spec.loss_scale
        n = horizon - 1  # rounds left after round 1
        la = log_central(n // 2)  # P(S_m = 0), m = n or n − 1 (even)
        self._states = np.zeros((spec.n_replicates, 4))
        self._states[:, 2] = 0.5
        self._states[:, 3] = la
        self._rounds = 0
        self._value = cover_value(horizon)

    def value(self) -> float:
        """Return ``V_T`` for the game's horizon (unit losses)."""
        return self._value

    def _unit(self, losses: np.ndarray, t0: int) -> np.ndarray:
        """Map raw losses (R, n, 2) to {0, 1}; raise naming the first round that is not binary."""
        unit = (np.asarray(losses, dtype=np.float64) - self._lo) / self._scale
        ok = (unit == 0.0) | (unit == 1.0)
        if not ok.all():
            r, j, _ = (int(v) for v in np.argwhere(~ok)[0])
            raise ValueError(
                f"cover2 needs binary losses {{lo, hi}} = {{{self._lo:g}, "
                f"{self._lo + self._scale:g}}}; round {t0 + j}, replicate {int(self._ids[r])} "
                f"has {np.asarray(losses)[r, j].tolist()}"
            )
        if self._rounds + unit.shape[1] > self._horizon:
            raise ValueError(f"cover2 plays exactly T = {self._horizon} rounds")
        return np.ascontiguousarray(unit)

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        g, lead, u = self._states[:, 0], self._states[:, 1], self._states[:, 2]
        on_0 = np.where(g == 0, 0.5, np.where(lead == 0, u, 1.0 - u))
        on_1 = np.where(g == 0, 0.5, np.where(lead == 1, u, 1.0 - u))
        return np.stack([on_0, on_1], axis=1)

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        t = self._rounds + 1
        unit = self._unit(np.asarray(losses)[:, None, :], t)[:, 0]
        _cover2_update(self._states, unit, self._horizon - t)
        self._rounds = t

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        unit = self._unit(losses, self._rounds + 1)
        probs = np.empty_like(unit)
        _cover2_play_block(self._states, unit, self._rounds, self._horizon, probs)
        self._rounds += unit.shape[1]
        return probs

    def bounds(self, t: int) -> dict[tuple[str, float], float]:
        """Declare ``V_T`` (raw units) on the regret, at every t (see Notes)."""
        return {("regret", math.nan): self._scale * self._value}
