"""Bandit wrapper: any registered experts player run on importance-weighted loss estimates."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from numba import njit

from arena.bandit.components import BanditPlayer
from arena.errors import ArenaError, ConfigError, GameError
from arena.experts.components import PROB_NEG_TOL, PROB_SUM_TOL, ExpertsPlayer
from arena.params import InstanceOf, Interval, IsNone, OneOf
from arena.sampling import sample_actions
from arena.spec import GameSpec, PlayerTags

ESTIMATORS = ("iw", "ix")
"""``iw``: importance weighting ``ℓ/p``; ``ix``: implicit exploration ``ℓ/(p + γ_ix)``."""


@njit(cache=True, nogil=True)
def _wrapper_first_bad_q(q, neg_tol, sum_tol):
    """Index of the first row of ``q`` (R, K) that is not a distribution (non-finite, below
    ``−neg_tol`` or not summing to 1 within ``sum_tol``), or −1."""
    n_rep, n_act = q.shape
    for r in range(n_rep):
        total = 0.0
        for i in range(n_act):
            v = q[r, i]
            if not np.isfinite(v) or v < -neg_tol:
                return r
            total += v
        if abs(total - 1.0) > sum_tol:
            return r
    return -1


@njit(cache=True, nogil=True)
def _wrapper_estimates(actions, losses, probs, lo, scale, ix_gamma, out):
    """Fill ``out`` (R, K) with ``ℓ̂_{t,i} = 1{I_t = i} ((l − lo)/scale) / (p_{t,I_t} + γ_ix)``;
    return the first replicate whose estimate is not finite, or −1."""
    n_rep, n_act = out.shape
    for r in range(n_rep):
        for i in range(n_act):
            out[r, i] = 0.0
        a = actions[r]
        value = ((losses[r] - lo) / scale) / (probs[r, a] + ix_gamma)
        if not np.isfinite(value):
            return r
        out[r, a] = value
    return -1


def inner_loss_bound(n_actions: int, gamma: float, ix_gamma: float) -> float:
    """Return the largest estimate ``ℓ̂_{t,i}`` can take, ``1/(γ/K + γ_ix)``, or ``inf``.

    Every ``p_{t,i} ≥ γ/K`` (uniform mixing), so ``ℓ/(p_{t,I_t} + γ_ix) ≤ 1/(γ/K + γ_ix)`` for a
    normalized loss ``ℓ ∈ [0, 1]``; with ``γ = γ_ix = 0`` the estimates are unbounded above
    (``K = 1`` excepted: then ``p = 1`` and the estimate is the loss).

    Examples
    --------
    >>> inner_loss_bound(4, 0.2, 0.0), inner_loss_bound(4, 0.0, 0.5), inner_loss_bound(4, 0.0, 0.0)
    (20.0, 2.0, inf)
    """
    if n_actions == 1:
        return 1.0
    floor = gamma / n_actions + ix_gamma
    return 1.0 / floor if floor > 0.0 else math.inf


class BanditWrapper(BanditPlayer):
    """Bandit wrapper: any experts player fed importance-weighted estimates of the loss vector.

    Each round the inner (full-information) experts player predicts ``q_t ∈ Δ_K``; the wrapper
    commits ``p_t = (1 − γ) q_t + γ/K``; the arena draws ``I_t ~ p_t`` and reveals only
    ``ℓ_{t,I_t}`` (normalized to [0, 1] with the declared loss range); the inner player is then
    updated with the whole estimated loss vector

    * ``"iw"`` (importance weighting): ``ℓ̂_{t,i} = 1{I_t = i} ℓ_{t,I_t} / p_{t,I_t}``, unbiased,
      ``E[ℓ̂_{t,i} | p_t] = ℓ_{t,i}`` (Auer et al. 2002, §3; Bubeck & Cesa-Bianchi 2012, §3.1);
    * ``"ix"`` (implicit exploration, Neu 2015, Lemma 1): ``ℓ̂_{t,i} = 1{I_t = i} ℓ_{t,I_t} /
      (p_{t,I_t} + γ_ix)``, biased down, ``E[ℓ̂_{t,i} | p_t] = p_{t,i} ℓ_{t,i} / (p_{t,i} + γ_ix)``.

    ``p_{t,I_t}`` is the probability ``I_t`` was actually drawn with (the ``p_t`` the arena hands
    back), never the inner player's ``q_t``. This is the reduction behind Exp3 (Lattimore &
    Szepesvári 2020, §11.2, importance-weighted estimators, and §11.3, exponential weights on
    them) with any experts algorithm in place of exponential weights.

    Parameters
    ----------
    player : str or ExpertsPlayer
        The inner experts player: a registry name (``"hedge"``, ``"normal_hedge"``, …) or an
        instance (cloned, never modified).
    player_params : mapping, optional
        Parameters of the inner player (given to the registry, or as overrides to the instance's
        :meth:`clone`). On the command line: ``player=bandit_wrapper player.player=hedge
        '+player.player_params={eta:0.1}'``.
    gamma : float
        Uniform mixing γ ∈ [0, 1): ``p_{t,i} ≥ γ/K`` and so ``ℓ̂_{t,i} ≤ K/γ`` (default 0.1).
    estimator : {"iw", "ix"}
        The loss estimator (default ``"iw"``).
    ix_gamma : float, optional
        The implicit exploration ``γ_ix > 0`` of ``"ix"``; None (default) is Neu's tuned value
        ``γ_ix = ½ sqrt(2 ln K / (K T))`` (needs the horizon). Ignored by ``"iw"``.

    Notes
    -----
    **The inner player's game.** It is reset with a ``GameSpec`` of the experts protocol with the
    same K, horizon and replicates and the loss range ``(0, B)``,
    ``B = 1 / (γ/K + γ_ix)`` (:func:`inner_loss_bound`; ``γ_ix = 0`` for ``"iw"``), which bounds
    every estimate: the inner player's own normalization ``ℓ̂ / B`` then maps the estimates into
    [0, 1], as every experts player assumes. So a rate the inner player tunes for unit losses acts
    on ``ℓ̂ / B``: wrapped Hedge with rate η is Exp3 with rate ``η / B``.

    With ``γ = 0`` and ``"iw"`` no bound exists (``ℓ̂ = ℓ/p`` grows as ``p → 0``): the inner
    player is then told the range ``(0, 1)`` and receives the raw estimates, which leave it.
    Players whose updates only need non-negative losses (Hedge, the exponential-weights family)
    are unaffected; players that rely on ``ℓ ≤ hi`` (bracketed root finding, clipping,
    confidence-interval arithmetic) may produce an invalid ``q_t``. Every ``q_t`` is checked
    (finite, non-negative, summing to 1 within the arena's tolerances), and an invalid one, a
    non-finite estimate, or an exception of the inner player stops the game with a
    :class:`~arena.errors.GameError` naming the wrapper, the inner player, the round and the
    replicate. Inner players that accept only binary losses (``binary_losses``) or a K the game
    does not have are refused before round 1.

    An inner player tagged ``observes_action`` is handed ``J_t ~ q_t``, its own draw: ``J_t =
    I_t`` when γ = 0; otherwise ``J_t`` is drawn from the wrapper's own random stream (the
    generators ``reset`` receives), so ``predict`` stays pure and replicates batch-invariant.

    **No guarantee is inherited.** The inner player's full-information bounds hold for losses in
    its declared range; the estimates are unbounded (γ = 0) or bounded only by ``K/γ``, and its
    regret on the estimates is not the wrapper's regret: the second moment ``E[Σ_i q_i ℓ̂_i²]``,
    which exponential weights pay, is ``O(K)``, but an inner bound in terms of the range would
    pay ``B = K/γ`` per round. The wrapper therefore declares no bound (``bounds`` is not
    overridden, so the ``bound`` metric is skipped). The one case with a proof: wrapping
    ``hedge`` with a fixed rate η and the ``"iw"`` estimator **is** loss-based Exp3
    (``arena/players/exp3.py``) with rate ``η' = η / B`` and the same γ (``B = 1`` when γ = 0), so
    Exp3's bound ``ln K / η' + η' K t / (2(1 − γ)) + γ t`` (times ``hi − lo``; Bubeck &
    Cesa-Bianchi 2012, Theorem 3.1, with the γ term of Exp3's docstring) holds; it is available
    as :meth:`exp3_regret_bound` (the ``bound`` metric's applicability is decided per class,
    before the inner player is known, so it is not logged; play ``exp3`` for the rows).

    :meth:`estimates` returns the cumulative estimates ``L̂_{t,i} = Σ_{s≤t} ℓ̂_{s,i}`` (normalized
    losses), and :meth:`estimate_expectation` their conditional expectation per round, so the
    conformance suite tests the estimator and the ``estimate_bias`` metric can log its bias.

    Examples
    --------
    >>> from arena import play
    >>> df = play(BanditWrapper("normal_hedge", gamma=0.1), "bernoulli", n_actions=3,
    ...           horizon=500, replicates=2, metrics={"regret": {}})
    >>> bool(np.isfinite(df.value).all())
    True
    >>> BanditWrapper("hedge", {"eta": 0.1}, gamma=0.0)
    BanditWrapper(player_params={'eta': 0.1}, gamma=0.0)

    References
    ----------
    Auer, Cesa-Bianchi, Freund & Schapire (2002), "The nonstochastic multiarmed bandit problem",
    SIAM J. Comput. 32(1), §3 (Exp3: exponential weights on importance-weighted estimates, γ
    mixing).
    Bubeck & Cesa-Bianchi (2012), §3.1, Theorem 3.1 (loss-based Exp3).
    Neu (2015), "Explore no more", NIPS, Lemma 1 and Theorem 1 (the implicit-exploration
    estimator).
    Lattimore & Szepesvári (2020), *Bandit Algorithms*, §11.2 (importance-weighted estimators),
    §11.3 (Exp3).
    """

    tags = PlayerTags(protocols=frozenset({"bandit"}), block_kernel=False)
    parameter_constraints: ClassVar = {
        "player": [
            InstanceOf(str, "an experts player's registry name"),
            InstanceOf(ExpertsPlayer, "an experts player instance"),
        ],
        "player_params": [InstanceOf(Mapping, "a mapping of its parameters"), IsNone()],
        "gamma": [Interval(0, 1, closed="left")],
        "estimator": [OneOf(*ESTIMATORS)],
        "ix_gamma": [Interval(0, None, closed="neither"), IsNone()],
    }

    def __init__(
        self,
        player: str | ExpertsPlayer = "hedge",
        player_params: Mapping[str, Any] | None = None,
        gamma: float = 0.1,
        estimator: str = "iw",
        ix_gamma: float | None = None,
    ):
        self.player = player
        self.player_params = player_params
        self.gamma = gamma
        self.estimator = estimator
        self.ix_gamma = ix_gamma

    # ------------------------------------------------------------------------------------------
    # the inner player

    def _make_inner(self) -> ExpertsPlayer:
        from arena import registry

        who = self.label()
        inner = registry.make_inner(
            who, "player", self.player, self.player_params, name_param="player"
        )
        if not isinstance(inner, ExpertsPlayer):
            raise ConfigError(
                who,
                "player",
                f"{self.player!r} is not an experts player "
                f"(it plays {sorted(inner.tags.protocols)})",
            )
        return inner

    def _inner_who(self) -> str:
        inner = self._inner
        return f"{self.label()} {self!r} (inner player {inner.registry_name()} {inner!r})"

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        inner = self._make_inner()
        n_act, tags = spec.n_actions, inner.tags
        if n_act < tags.min_actions or (tags.max_actions is not None and n_act > tags.max_actions):
            allowed = f"{tags.min_actions}..{tags.max_actions or '∞'}"
            raise ConfigError(
                who, "player", f"{inner.label()} plays {allowed} experts, not {n_act}"
            )
        if tags.binary_losses:
            raise ConfigError(
                who,
                "player",
                f"{inner.label()} accepts only binary losses; importance-weighted estimates "
                "are not binary",
            )
        ix_gamma = 0.0
        if self.estimator == "ix":
            if self.ix_gamma is not None:
                ix_gamma = float(self.ix_gamma)
            elif spec.horizon is None:
                raise ConfigError(who, "ix_gamma", "None (tuned) needs the horizon; give a value")
            else:
                ix_gamma = 0.5 * math.sqrt(2.0 * math.log(n_act) / (n_act * spec.horizon))
        gamma = float(self.gamma)
        bound = inner_loss_bound(n_act, gamma, ix_gamma)
        self._declared_hi = bound if math.isfinite(bound) else 1.0
        inner_spec = GameSpec(
            "experts",
            n_act,
            spec.horizon,
            (0.0, self._declared_hi),
            n_replicates=spec.n_replicates,
            replicate_ids=spec.replicate_ids,
        )
        self._rngs = list(rngs)
        inner_rngs = [np.random.default_rng(int(rng.integers(2**63))) for rng in self._rngs]
        try:
            inner.reset(inner_spec, inner_rngs)
        except ArenaError as exc:
            raise ConfigError(who, "player_params", str(exc)) from exc
        except (ValueError, TypeError, KeyError) as exc:
            raise ConfigError(who, "player", f"{inner.label()}: reset failed: {exc}") from exc
        self._inner = inner
        self._observes = bool(tags.observes_action)
        self._gamma, self._ix_gamma, self._n_act = gamma, ix_gamma, n_act
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._ids = spec.replicates()
        self._est = np.zeros((spec.n_replicates, n_act))
        self._rounds = 0

    def inner_player(self) -> ExpertsPlayer:
        """Return the (reset) inner experts player."""
        return self._inner

    def inner_loss_range(self) -> tuple[float, float]:
        """Return the loss range the inner player was told, ``(0, B)`` (see Notes)."""
        return (0.0, self._declared_hi)

    # ------------------------------------------------------------------------------------------
    # play

    def _inner_q(self) -> np.ndarray:
        t = self._rounds + 1
        try:
            raw = self._inner.predict()
            q = np.asarray(raw, dtype=np.float64)
        except Exception as exc:
            raise GameError(
                self._inner_who(), f"predict failed: {type(exc).__name__}: {exc}", round=t
            ) from exc
        shape = self._est.shape
        if q.shape != shape:
            raise GameError(
                self._inner_who(), f"predict returned shape {q.shape}, expected {shape}", round=t
            )
        r = _wrapper_first_bad_q(np.ascontiguousarray(q), PROB_NEG_TOL, PROB_SUM_TOL)
        if r >= 0:
            raise GameError(
                self._inner_who(),
                f"the inner player's q_t = {q[r].tolist()} is not a distribution",
                round=t,
                replicate=int(self._ids[r]),
            )
        return q

    def predict(self) -> np.ndarray:
        q = self._inner_q()
        if self._gamma == 0.0:
            return q.copy()
        return (1.0 - self._gamma) * q + self._gamma / self._n_act

    def update(self, actions: np.ndarray, losses: np.ndarray, probs: np.ndarray) -> None:
        t = self._rounds + 1
        n_rep = actions.shape[0]
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        losses = np.ascontiguousarray(losses, dtype=np.float64)
        probs = np.ascontiguousarray(probs, dtype=np.float64)
        est = np.empty((n_rep, self._n_act))
        args = (self._lo, self._scale, self._ix_gamma)
        r = _wrapper_estimates(actions, losses, probs, *args, est)
        if r >= 0:
            drawn = float(probs[r, actions[r]]) + self._ix_gamma
            raise GameError(
                self._inner_who(),
                f"the estimate {(float(losses[r]) - self._lo) / self._scale!r} / {drawn!r} of arm "
                f"{int(actions[r])} is not finite",
                round=t,
                replicate=int(self._ids[r]),
            )
        extra: dict[str, np.ndarray] = {}
        if self._observes:
            extra["actions"] = self._inner_actions(actions, probs)
        try:
            self._inner.update(est, **extra)
        except Exception as exc:
            raise GameError(
                self._inner_who(), f"update failed: {type(exc).__name__}: {exc}", round=t
            ) from exc
        self._est += est
        self._rounds += 1

    def _inner_actions(self, actions: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """``J_t ~ q_t`` for an inner player that observes its draw (``I_t`` itself when γ = 0)."""
        if self._gamma == 0.0:
            return actions.copy()
        q = (np.asarray(probs, dtype=np.float64) - self._gamma / self._n_act) / (1.0 - self._gamma)
        q = np.ascontiguousarray(np.maximum(q, 0.0))
        uniforms = np.array([rng.random() for rng in self._rngs])
        out = np.empty(q.shape[0], dtype=np.int64)
        sample_actions(q, uniforms, out)
        return out

    def play_block(self, losses: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        """The predict / draw / update loop, with the arena's batched inverse-CDF draw."""
        n_rep, n, n_act = losses.shape
        probs = np.empty((n_rep, n, n_act))
        actions = np.empty(n_rep, dtype=np.int64)
        rows = np.arange(n_rep)
        for j in range(n):
            p = np.ascontiguousarray(self.predict(), dtype=np.float64)
            probs[:, j] = p
            sample_actions(p, np.ascontiguousarray(uniforms[:, j]), actions)
            self.update(actions.copy(), losses[rows, j, actions], p)
        return probs

    # ------------------------------------------------------------------------------------------
    # estimates and the one proven bound

    def estimates(self) -> np.ndarray:
        return self._est.copy()

    def estimate_expectation(self, losses: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """``E[ℓ̂_t | p_t, ℓ_t]``: ``ℓ_t`` for ``"iw"``, ``p ℓ / (p + γ_ix)`` for ``"ix"``."""
        losses = np.asarray(losses, dtype=np.float64)
        if self._ix_gamma == 0.0:
            return losses
        p = np.asarray(probs, dtype=np.float64)
        return p * losses / (p + self._ix_gamma)

    def is_exp3(self) -> bool:
        """Whether this wrapper is loss-based Exp3: inner ``hedge`` at a fixed rate, ``"iw"``."""
        from arena.players.hedge import Hedge

        inner = self._inner
        eta = inner.eta if type(inner) is Hedge else None
        fixed = isinstance(eta, int | float) and not isinstance(eta, bool)
        return fixed and self._ix_gamma == 0.0 and self._n_act > 1

    def exp3_rate(self) -> float:
        """Return the rate ``η' = η / B`` of the Exp3 this wrapper is (see :meth:`is_exp3`)."""
        return float(self._inner.eta) / self._declared_hi

    def exp3_regret_bound(self, t: int) -> float:
        """Return Exp3's bound on the expected regret after ``t`` rounds, when the wrapper is Exp3
        (:meth:`is_exp3`); ``nan`` otherwise (see Notes: nothing else is proven)."""
        if not self.is_exp3():
            return math.nan
        k, gamma, eta = self._n_act, self._gamma, self.exp3_rate()
        bound = math.log(k) / eta + eta * k * t / (2.0 * (1.0 - gamma)) + gamma * t
        return self._scale * bound

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"player_params": {"eta": 0.3}, "gamma": 0.0}
        yield {"player": "normal_hedge", "gamma": 0.2}
        yield {"player": "ada_normal_hedge", "estimator": "ix", "ix_gamma": 0.05}
