"""Bandit lower-bound constructions: needle in a haystack, two instances, a distribution reader.

Every construction here is an experts adversary (the bandit protocol plays experts adversaries
unchanged, with common random numbers). The stochastic ones draw Bernoulli losses in [0, 1] from
the replicate's stream in round order and expose their means (oracle ``means``), so both
``pseudo_regret`` (``Σ_t p_t·μ − min_i Σ_t μ_i``) and ``regret`` are exact. A declared
``lower_bound:<metric>`` is an expectation statement: it bounds the **mean over replicates** of
the metric (the expectation over the instance draw, the losses and the player's draws), and for
i.i.d. losses ``E[regret] ≥ E[pseudo_regret]`` (``E[min_i L_i] ≤ min_i E[L_i]``), so a bound on
the expected pseudo-regret is declared on both metrics.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from arena.adversaries.stochastic import MeanDrivenBernoulli
from arena.base import Footprint, declared_footprint
from arena.errors import ArenaError, ConfigError
from arena.experts.components import AdaptiveAdversary
from arena.params import InstanceOf, Interval, IsNone, OneOf
from arena.spec import AdversaryTags, GameSpec, History

# ----------------------------------------------------------------------------------------------
# needle in a haystack


def needle_lower_bound(t: int, n_actions: int, eps: float) -> float:
    """Return ``max(0, ε t (1 − 1/K − sqrt(−t ln(1 − 4ε²)/(4K))))``, the needle's forced regret.

    The expected pseudo-regret after t rounds of every player against the needle (good arm
    uniform among K, loss mean ½ − ε, the others ½) is at least this value. Proof (the argument
    of Auer, Cesa-Bianchi, Freund & Schapire 2002, Theorem 5.1, written for losses): let P₀ be the
    law of the interaction when every arm is a fair coin and P_j when arm j is good. Then
    ``E_j[T_j] ≤ E₀[T_j] + t·TV(P₀, P_j)``, Pinsker and the divergence decomposition give
    ``TV ≤ sqrt(½ E₀[T_j] kl(½‖½−ε))`` with ``kl(½‖½−ε) = −½ ln(1 − 4ε²)``, and averaging
    over j with Jensen (``Σ_j E₀[T_j] = t``) gives ``(1/K) Σ_j E_j[T_j] ≤ t/K +
    t·sqrt(−t ln(1−4ε²)/(4K))``; the pseudo-regret on instance j is ``ε(t − E_j[T_j])``.

    Examples
    --------
    >>> round(needle_lower_bound(1000, 3, 0.25 * math.sqrt(3 / 1000)), 4)
    5.7048
    """
    t, k = int(t), int(n_actions)
    if t <= 0 or k < 2 or eps <= 0:
        return 0.0
    root = math.sqrt(-t * math.log1p(-4.0 * eps * eps) / (4.0 * k))
    return max(0.0, eps * t * (1.0 - 1.0 / k - root))


def needle_gap(horizon: int, n_actions: int) -> float:
    """Return ``ε = ¼ min(1, sqrt(K/T))``, the gap of :class:`Needle` by default.

    With it :func:`needle_lower_bound` at t = T is at least ``(1/20) min(sqrt(KT), T)`` for
    every K ≥ 2 and T ≥ 1 (``−ln(1 − x) ≤ 4 ln(4/3) x`` for x ≤ ¼ makes the square root at most
    ``sqrt(ln(4/3)/4) < 0.27``, so the bracket is at least ``½ − 0.27 > 1/5``).

    Examples
    --------
    >>> needle_gap(1000, 10)
    0.025
    """
    return 0.25 * min(1.0, math.sqrt(int(n_actions) / int(horizon)))


class Needle(MeanDrivenBernoulli):
    """Needle in a haystack: fair-coin losses except one hidden arm whose mean is ½ − ε.

    Per replicate, the good arm j is drawn uniformly from the replicate's stream at reset; then
    ``l_{t,i} ~ Bernoulli(½ − ε·1{i = j})`` i.i.d. over rounds (one uniform per arm and round, in
    round order).

    Parameters
    ----------
    gap : float, optional
        ε ∈ (0, ½). Default ``¼ min(1, sqrt(K/T))`` (:func:`needle_gap`).

    Notes
    -----
    The minimax construction of Auer, Cesa-Bianchi, Freund & Schapire (2002), Theorem 5.1: for
    K ≥ 2 and every T, the expected regret of every algorithm against the random needle
    (expectation over j, the losses and the algorithm's randomization) is at least
    ``(1/20) min(sqrt(KT), T)``. The paper states it for gains and the weak regret ``G_max −
    E[G_A]``; its proof lower-bounds ``E[G_max]`` by the good arm's expected gain, so it bounds the
    pseudo-regret, and losses ``1 − x`` give the same game.

    ``lower_bounds`` declares, on ``pseudo_regret`` and ``regret`` (the mean over replicates),
    the exact value of that proof's bound for this ε at round t, :func:`needle_lower_bound`
    (rather than the rounded constant 1/20: it is larger and holds at every t, not only at T).
    With the default ε it is at least ``(1/20) min(sqrt(KT), T)`` at t = T. It holds for every
    non-anticipating player, with no other condition (K ≥ 2).

    Examples
    --------
    >>> from arena import play
    >>> df = play("exp3", Needle(), n_actions=3, horizon=1000, replicates=2,
    ...           checkpoints=[1000], metrics={"lower_bound": {}})
    >>> sorted(df.metric.unique()), round(float(df.value.iloc[0]), 4)
    (['lower_bound:pseudo_regret', 'lower_bound:regret'], 5.7048)

    References
    ----------
    Auer, Cesa-Bianchi, Freund & Schapire (2002), SIAM J. Comput., Theorem 5.1; Bubeck &
    Cesa-Bianchi (2012), §3.3.
    """

    parameter_constraints: ClassVar = {
        "gap": [Interval(0, 0.5, closed="neither"), IsNone()],
    }
    tags = AdversaryTags(oblivious=True, oracle=frozenset({"means"}), needs_horizon=True)

    def __init__(self, gap: float | None = None):
        self.gap = gap

    def resolve_n_actions(self, requested: int | None) -> int:
        return 3 if requested is None else int(requested)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        k = spec.n_actions
        if k < 2:
            raise ConfigError(self.label(), "n_actions", "the needle needs at least 2 arms")
        self._eps = needle_gap(spec.horizon, k) if self.gap is None else float(self.gap)
        self._rngs = list(rngs)
        self._n_act = k
        self._good = np.array([int(rng.integers(k)) for rng in self._rngs], dtype=np.int64)

    def good_arms(self) -> np.ndarray:
        """Return the good arm j of every replicate (after reset)."""
        return self._good.copy()

    def _mean_block(self, t0: int, n: int) -> np.ndarray:
        out = np.full((len(self._rngs), n, self._n_act), 0.5)
        out[np.arange(len(self._rngs)), :, self._good] = 0.5 - self._eps
        return out

    def lower_bounds(self, t: int, player: Any = None) -> dict[tuple[str, float], float]:
        """Declare :func:`needle_lower_bound` on the mean pseudo-regret and regret."""
        value = needle_lower_bound(int(t), self._n_act, self._eps)
        return {("pseudo_regret", math.nan): value, ("regret", math.nan): value}

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"gap": 0.2}


# ----------------------------------------------------------------------------------------------
# two instances against one policy


PILOT_TAG = 0x50494C4F
"""Spawn-key element of the pilot's SeedSequence ("PILO"): the game's streams never use it."""

PILOT_CHUNK = 1024
"""Rounds per pilot block (bounds the pilot's memory to R_pilot × chunk × K floats)."""

PILOT_OPS = 30
"""Operations per pilot game, round and arm: a Bernoulli draw, the player's update, the sums."""

INSTANCES = ("first", "second", "mixture")


def two_instance_gap(horizon: int, n_actions: int) -> float:
    """Return ``Δ = ¼ sqrt((K−1)/(n+K−1))``, which maximizes :func:`two_instance_lower_bound`.

    Examples
    --------
    >>> two_instance_gap(1023, 2)
    0.0078125
    """
    k, n = int(n_actions), int(horizon)
    return 0.25 * math.sqrt((k - 1) / (n + k - 1))


def two_instance_lower_bound(t: int, horizon: int, n_actions: int, gap: float) -> float:
    """Return ``(tΔ/4)(1 − 16Δ²)^{n/(2(K−1))}``, the bound on ``R_t(ν) + R_t(ν')``.

    Bernoulli version of Lattimore & Szepesvári (2020), Theorem 15.2's proof (n the horizon,
    ν: arm 1 has loss mean ½ − Δ, the others ½; ν': arm j ≠ 1 lowered to ½ − 2Δ, where
    ``E_ν[T_j(n)] ≤ n/(K−1)``). For every policy and t ≤ n: ``R_t(ν) ≥ (tΔ/2) P_ν(T_1(t) ≤ t/2)``,
    ``R_t(ν') ≥ (tΔ/2) P_ν'(T_1(t) > t/2)``, Bretagnolle–Huber gives ``P(A) + P'(Aᶜ) ≥
    ½ exp(−D(P_ν, P_ν'))``, and the divergence decomposition ``D = E_ν[T_j(t)] kl(½‖½−2Δ)`` with
    ``kl(½‖½−2Δ) = −½ ln(1 − 16Δ²)`` and ``E_ν[T_j(t)] ≤ n/(K−1)``. Needs 0 < Δ < ¼.

    Examples
    --------
    >>> n, k = 1000, 3
    >>> b = two_instance_lower_bound(n, n, k, two_instance_gap(n, k))
    >>> bool(b / 2 >= math.sqrt((k - 1) * n) / 75), round(b, 4)
    (True, 1.6945)
    """
    t, n, k = int(t), int(horizon), int(n_actions)
    if t <= 0 or k < 2 or not 0 < gap < 0.25:
        return 0.0
    return t * gap / 4.0 * math.exp(n / (2.0 * (k - 1)) * math.log1p(-16.0 * gap * gap))


def _pilot_seed(rngs: Sequence[np.random.Generator]) -> np.random.SeedSequence:
    """A SeedSequence common to all replicates of the game, disjoint from the game's streams.

    The arena's adversary stream of replicate r is ``SeedSequence(seed, spawn_key=(g, r, 0))``
    (:func:`arena.seeding.replicate_streams`); the pilot uses ``(g, PILOT_TAG)``, so it is the
    same whichever replicates run in a batch, and no generator of the game is advanced.
    """
    rng = rngs[0] if len(rngs) else None
    ss = getattr(getattr(rng, "bit_generator", None), "seed_seq", None)
    if not isinstance(ss, np.random.SeedSequence):
        return np.random.SeedSequence(0, spawn_key=(PILOT_TAG,))
    key = tuple(ss.spawn_key)
    prefix = key[:-2] if len(key) >= 2 else key
    return np.random.SeedSequence(ss.entropy, spawn_key=(*prefix, PILOT_TAG))


def pilot_pulls(
    player: Any, means: np.ndarray, horizon: int, replicates: int, seed: np.random.SeedSequence
) -> tuple[np.ndarray, np.ndarray]:
    """Play ``player`` (cloned) on Bernoulli ``means`` for ``replicates`` games of ``horizon``.

    Returns the per-replicate expected pulls ``Σ_t p_{t,i}`` (unbiased for ``E[T_i(n)]``) and
    pseudo-regrets ``Σ_t p_t·μ − n min μ``, shapes (M, K) and (M,). Uses the bandit protocol's
    own block interface (``play_block`` with the arena's uniforms), on streams spawned from
    ``seed`` only.
    """
    from arena.bandit.components import BanditPlayer

    k = len(means)
    if not isinstance(player, BanditPlayer):
        raise ConfigError("adversary", "player", f"{player!r} is not a bandit player")
    p = player.clone()
    loss_ss, action_ss, player_ss = seed.spawn(3)
    spec = GameSpec("bandit", k, int(horizon), (0.0, 1.0), n_replicates=int(replicates))
    p.reset(spec, [np.random.Generator(np.random.PCG64(s)) for s in player_ss.spawn(replicates)])
    loss_rng = np.random.Generator(np.random.PCG64(loss_ss))
    action_rng = np.random.Generator(np.random.PCG64(action_ss))
    pulls = np.zeros((replicates, k))
    t0 = 0
    while t0 < horizon:
        n = min(PILOT_CHUNK, horizon - t0)
        losses = (loss_rng.random((replicates, n, k)) < means).astype(np.float64)
        uniforms = action_rng.random((replicates, n))
        probs = np.asarray(p.play_block(losses, uniforms), dtype=np.float64)
        pulls += probs.sum(axis=1)
        t0 += n
    regret = pulls @ np.asarray(means) - horizon * float(np.min(means))
    return pulls, regret


def _resolve_player(owner: Any) -> Any:
    from arena.validation import resolve_component

    return resolve_component("player", owner.player, owner.player_params)


def _same_policy(a: Any, b: Any) -> bool:
    return (
        a is not None
        and type(a).registry_name() == type(b).registry_name()
        and a.get_params() == b.get_params()
    )


class TwoInstance(MeanDrivenBernoulli):
    """Policy-dependent pair of Bernoulli instances: arm 0 best by Δ, or arm j best by Δ.

    Instance ν: arm 0 has loss mean ½ − Δ, the others ½. A pilot run of the target policy on ν
    (``pilot_replicates`` games on streams of its own) estimates ``j = argmin_{i≠0} E_ν[T_i(n)]``;
    instance ν' lowers arm j to ½ − 2Δ (arm j best by Δ). Losses are i.i.d. Bernoulli.

    Parameters
    ----------
    player : str
        The policy the pilot simulates: ``"game"`` (default), the game's own player (the arena
        hands the adversary a clone before reset, :meth:`~arena.components.Adversary.bind_player`,
        so the pair is built against the algorithm under test, as in the theorem), or the
        registry name of a policy; a bound is declared only when the game's player is that
        policy (same registry name and parameters).
    player_params : dict, optional
        The named policy's constructor parameters (not with ``"game"``).
    instance : {"first", "second", "mixture"}
        Play ν, play ν', or (default) per replicate ν or ν' with probability ½ each (one
        uniform of the replicate's stream at reset; "first" and "second" draw none).
    gap : float, optional
        Δ ∈ (0, ¼). Default ``¼ sqrt((K−1)/(n+K−1))`` (:func:`two_instance_gap`).
    pilot_replicates : int
        Games in the pilot (0: no pilot, j = 1, which meets the bound's condition for
        label-symmetric policies only).

    Notes
    -----
    Lattimore & Szepesvári (2020), Theorem 15.2: for K > 1 and n ≥ K − 1, every policy has
    regret at least ``(1/27) sqrt((K−1)n)`` on one of two unit-variance Gaussian instances built
    as above (Δ = sqrt((K−1)/(4n)) there); the proof shows ``R_n(ν) + R_n(ν') ≥ (nΔ/4)
    exp(−2nΔ²/(K−1))``. The arena's losses lie in a declared bounded range, so the instances
    here are Bernoulli, and the constant is re-derived with the Bernoulli divergence
    ``kl(½‖½−2Δ) = −½ ln(1 − 16Δ²)`` (:func:`two_instance_lower_bound`): ``R_t(ν) + R_t(ν') ≥
    B_t = (tΔ/4)(1 − 16Δ²)^{n/(2(K−1))}`` for t ≤ n. With the default Δ, ``B_n/2 ≥
    e^{−1/2}/(32 sqrt 2) sqrt((K−1)n) > (1/75) sqrt((K−1)n)`` for n ≥ K − 1.

    The theorem bounds the sum only, so ``lower_bounds`` declares ``B_t/2`` on the mean
    ``pseudo_regret`` and ``regret`` for ``instance="mixture"`` (whose expected regret is
    ``(R(ν) + R(ν'))/2``), and nothing for "first" or "second". It is declared only when the
    game's player is the target policy: always with ``player="game"``. Condition: the j
    played satisfies ``E_ν[T_j(n)] ≤ n/(K−1)``. It holds for the exact argmin; the pilot's
    argmin is an estimate, but for label-symmetric policies (Exp3, Tsallis-INF: every arm
    i ≠ 0 has the same ``E_ν[T_i(n)] ≤ n/(K−1)``) every j satisfies it, so the pilot's noise
    cannot break the bound; for index-ordered tie-breaking (UCB1) it is an estimate. The pilot
    never advances the game's streams (:func:`_pilot_seed`): with "first" the losses equal
    those of the fixed instance ν.

    Examples
    --------
    >>> from arena import play
    >>> df = play("exp3", TwoInstance(pilot_replicates=4), n_actions=3, horizon=1000,
    ...           replicates=2, checkpoints=[1000], metrics={"lower_bound": {}})
    >>> round(float(df.value.iloc[0]), 4)
    0.8472

    References
    ----------
    Lattimore & Szepesvári (2020), Bandit Algorithms, Theorem 15.2 and its proof; Bretagnolle &
    Huber (1979).
    """

    parameter_constraints: ClassVar = {
        "player": [InstanceOf(str, "a registry name")],
        "player_params": [InstanceOf(dict, "a dict"), IsNone()],
        "instance": [OneOf(*INSTANCES)],
        "gap": [Interval(0, 0.25, closed="neither"), IsNone()],
        "pilot_replicates": [Interval(0, None, integer=True)],
    }
    tags = AdversaryTags(oblivious=True, oracle=frozenset({"means"}), needs_horizon=True)

    def __init__(
        self,
        player: str = "game",
        player_params: dict | None = None,
        instance: str = "mixture",
        gap: float | None = None,
        pilot_replicates: int = 16,
    ):
        self.player = player
        self.player_params = player_params
        self.instance = instance
        self.gap = gap
        self.pilot_replicates = pilot_replicates

    def resolve_n_actions(self, requested: int | None) -> int:
        return 3 if requested is None else int(requested)

    def bind_player(self, player: Any) -> None:
        self._bound = player

    def _gap(self, spec: GameSpec) -> float:
        return two_instance_gap(spec.horizon, spec.n_actions) if self.gap is None else self.gap

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        k, n = spec.n_actions, spec.horizon
        if k < 2:
            raise ConfigError(self.label(), "n_actions", "needs at least 2 arms")
        self._delta = float(self._gap(spec))
        self._horizon, self._n_act, self._rngs = n, k, list(rngs)
        self._target = self._policy()
        from arena.bandit.components import BanditPlayer

        if not isinstance(self._target, BanditPlayer):
            if self.player == "game":  # the game's player plays another protocol
                message = (
                    f"the game's player, {self._target!r}, is not a bandit player (the pilot "
                    "plays the bandit protocol)"
                )
                raise ConfigError(self.label(), "protocol", message)
            message = f"the policy named, {self._target!r}, is not a bandit player"
            raise ConfigError(self.label(), "player", message)
        self._first = np.full(k, 0.5)
        self._first[0] = 0.5 - self._delta
        self._pilot_pulls = self._pilot_regret = None
        j = 1
        if self.pilot_replicates > 0:
            self._pilot_pulls, self._pilot_regret = pilot_pulls(
                self._target, self._first, n, int(self.pilot_replicates), _pilot_seed(rngs)
            )
            j = 1 + int(np.argmin(self._pilot_pulls.mean(axis=0)[1:]))
        self._j = j
        self._second = self._first.copy()
        self._second[j] = 0.5 - 2.0 * self._delta
        if self.instance == "first":
            self._which = np.zeros(len(self._rngs), dtype=bool)
        elif self.instance == "second":
            self._which = np.ones(len(self._rngs), dtype=bool)
        else:
            self._which = np.array([rng.random() < 0.5 for rng in self._rngs], dtype=bool)

    def footprint(self, spec: GameSpec) -> Footprint:
        """The pilot: ``pilot_replicates`` games of T rounds before round 1, played in blocks of
        :data:`PILOT_CHUNK` rounds (losses, uniforms and ``p_t`` of a block held at once), with
        the simulated policy's own state for that many replicates."""
        games, k, n = int(self.pilot_replicates), int(spec.n_actions), int(spec.horizon or 1)
        if games == 0:
            return Footprint()
        chunk = min(PILOT_CHUNK, n)
        pilot = Footprint(
            memory=8 * games * (3 * chunk * k + chunk + 8 * k) + games * 3000,
            setup=PILOT_OPS * games * n * k,
        )
        try:  # the policy's own state for the pilot's replicates; a bad policy is reset's to name
            target = self._policy()
            pilot_spec = GameSpec("bandit", k, n, (0.0, 1.0), n_replicates=games)
            policy = declared_footprint(target, pilot_spec)
            pilot = pilot + Footprint(memory=policy.memory, setup=policy.work * n)
        except (ArenaError, ValueError, TypeError):
            pass
        return Footprint(
            memory=pilot.memory,
            setup=pilot.setup,
            parameter="pilot_replicates",
            what=f"pilot_replicates={games}: a pilot of {games} games of {n} rounds × {k} arms",
        )

    def _policy(self) -> Any:
        """The policy the pilot simulates: the bound game player, or the named one."""
        if self.player != "game":
            return _resolve_player(self)
        if self.player_params:
            message = "player_params go with a named policy, not with 'game'"
            raise ConfigError(self.label(), "player_params", message)
        bound = getattr(self, "_bound", None)
        if bound is None:
            message = (
                "'game' simulates the game's player, which the arena binds before reset "
                "(bind_player); outside a game name a policy, e.g. player='exp3'"
            )
            raise ConfigError(self.label(), "player", message)
        return bound

    def challenger(self) -> int:
        """Return j, the arm lowered in ν' (after reset)."""
        return self._j

    def pilot(self) -> dict[str, Any]:
        """Return the pilot's mean pulls ``E_ν[T_i(n)]`` and mean pseudo-regret on ν."""
        if self._pilot_pulls is None:
            return {}
        return {
            "pulls": self._pilot_pulls.mean(axis=0),
            "pseudo_regret": float(self._pilot_regret.mean()),
        }

    def _mean_block(self, t0: int, n: int) -> np.ndarray:
        mu = np.where(self._which[:, None], self._second[None, :], self._first[None, :])
        return np.repeat(mu[:, None, :], n, axis=1)

    def lower_bounds(self, t: int, player: Any = None) -> dict[tuple[str, float], float]:
        """Declare ``B_t/2`` on the mean regret ("mixture" and the target policy only)."""
        if self.instance != "mixture":
            return {}
        if self.player != "game" and not _same_policy(player, self._target):
            return {}
        value = 0.5 * two_instance_lower_bound(t, self._horizon, self._n_act, self._delta)
        return {("pseudo_regret", math.nan): value, ("regret", math.nan): value}

    @classmethod
    def _unit_test_params(cls):
        yield {"pilot_replicates": 2, "player": "exp3"}
        yield {"instance": "second", "player": "ucb1", "gap": 0.1, "pilot_replicates": 1}


# ----------------------------------------------------------------------------------------------
# the price of adaptivity


class PriceOfAdaptivity(TwoInstance):
    """The two instances with Δ = (K−1)/V: cheap for a policy with regret ≤ V on easy instances.

    Easy instance μ: arm 0 has loss mean ½ − Δ, the others ½, with ``Δ = (K−1)/V``. A pilot run of
    the target policy on μ picks ``j = argmin_{i≠0} E_μ[T_i(n)]``; the hard instance μ' lowers
    arm j to ½ − 2Δ. By default the hard instance is played.

    Parameters
    ----------
    player, player_params, pilot_replicates
        As in :class:`TwoInstance`.
    easy_regret : float, optional
        V, the regret the policy is assumed to achieve on every easy instance. Default: the
        largest V the theorem admits, ``sqrt(n(K−1)) e^{−2}/8``; V is raised to at least
        ``4(K−1)`` so that Δ ≤ ¼ (the hard arm's mean ½ − 2Δ stays in [0, 1]).
    instance : {"first", "second", "mixture"}
        Which instance to play (default "second", the hard one).

    Notes
    -----
    Lattimore & Szepesvári (2020), Theorem 24.4 (§24.4), for unit-variance Gaussian rewards:
    with Θ the instances whose arms 2..k have mean 0 and Θ' = [0, 1]^k, if
    ``2(k−1) ≤ V ≤ sqrt(n(k−1)) e^{−2}/8`` and ``sup_{μ∈Θ} R_n(μ) ≤ V``, then
    ``sup_{μ'∈Θ'} R_n(μ') ≥ n(k−1) e^{−2}/(8V)``: a policy tuned to be very good on the easy
    family pays ~nK/V on some instance (the proof is the two-instance argument with
    Δ = (k−1)/V). It is the finite-armed form of the price of adaptivity studied by Lattimore
    (2015, the Pareto regret frontier).

    **No bound is declared.** The theorem's hypothesis ``sup_Θ R_n ≤ V`` is about the player
    and cannot be checked by the arena (UCB1's own guarantee on Θ is ``O(V log n)``, not V),
    its conditions need ``n ≥ 256 e⁴ (k−1)`` (≈ 14,000(k−1) rounds), and its instances are
    Gaussian while these are Bernoulli. :meth:`theorem_value` returns ``n(K−1)e^{−2}/(8V)`` for
    reports; :meth:`pilot` the pilot's measured regret on the easy instance.

    Examples
    --------
    >>> from arena import play
    >>> df = play("ucb1", PriceOfAdaptivity(player="ucb1", pilot_replicates=2), n_actions=3,
    ...           horizon=200, replicates=2, metrics={"pseudo_regret": {}})
    >>> bool(df.value.iloc[-1] > 0)
    True

    References
    ----------
    Lattimore & Szepesvári (2020), Bandit Algorithms, Theorem 24.4; Lattimore (2015), NIPS,
    "The Pareto regret frontier for bandits".
    """

    parameter_constraints: ClassVar = {
        "player": [InstanceOf(str, "a registry name")],
        "player_params": [InstanceOf(dict, "a dict"), IsNone()],
        "instance": [OneOf(*INSTANCES)],
        "easy_regret": [Interval(0, None, closed="neither"), IsNone()],
        "pilot_replicates": [Interval(0, None, integer=True)],
    }

    def __init__(
        self,
        player: str = "ucb1",
        player_params: dict | None = None,
        instance: str = "second",
        easy_regret: float | None = None,
        pilot_replicates: int = 16,
    ):
        self.player = player
        self.player_params = player_params
        self.instance = instance
        self.easy_regret = easy_regret
        self.pilot_replicates = pilot_replicates

    def _v(self, n: int, k: int) -> float:
        if self.easy_regret is None:
            v = math.sqrt(n * (k - 1)) * math.exp(-2.0) / 8.0
        else:
            v = float(self.easy_regret)
        return max(v, 4.0 * (k - 1))

    def _gap(self, spec: GameSpec) -> float:
        return (spec.n_actions - 1) / self._v(spec.horizon, spec.n_actions)

    def theorem_value(self) -> float:
        """Return ``n(K−1)e^{−2}/(8V)``, Theorem 24.4's forced regret (a reference, not a bound)."""
        n, k = self._horizon, self._n_act
        return n * (k - 1) * math.exp(-2.0) / (8.0 * self._v(n, k))

    def lower_bounds(self, t: int, player: Any = None) -> dict[tuple[str, float], float]:
        """Declare nothing (see Notes)."""
        return {}

    @classmethod
    def _unit_test_params(cls):
        yield {"pilot_replicates": 2, "player": "ucb1"}
        yield {"instance": "mixture", "player": "exp3", "easy_regret": 20.0, "pilot_replicates": 0}


# ----------------------------------------------------------------------------------------------
# an adaptive adversary reading p_t

READER_RULES = ("above_uniform", "heaviest")
READER_TOL = 1e-12
"""``p_{t,i} > 1/K + tol`` counts as above uniform; within tol of the maximum as heaviest."""


class DistributionReader(AdaptiveAdversary):
    """Loss 1 on the arms the player favours in ``p_t``, 0 elsewhere: a deterministic-player killer.

    Parameters
    ----------
    rule : {"above_uniform", "heaviest"}
        Hit every arm with ``p_{t,i} > 1/K`` (default), or every arm tied for the largest
        ``p_{t,i}``.

    Notes
    -----
    It reads ``p_t`` (tag ``sees_distribution``) and nothing of the current draw ``I_t``. Against
    a player whose ``p_t`` is a point mass (UCB1) the played arm gets loss 1 and the others 0
    every round (under both rules), so the player loses every round while
    ``Σ_i L_{T,i} = T``, hence ``min_i L_{T,i} ≤ T/K`` and the regret is at least ``T(1 − 1/K)``:
    linear. Against Exp3 the losses are a function of the past through ``p_t``, an adaptive
    adversary that never sees ``I_t``; Exp3's analysis (Lattimore & Szepesvári 2020, Theorem
    11.2) bounds ``max_i E[Σ_t (l_{t,I_t} − l_{t,i})]`` for such adversaries too (the estimator
    stays unbiased given ``p_t``), which is not the expected regret to the best arm in hindsight
    (``E[max_i …]``) that the arena's ``regret`` measures. No lower bound is declared.

    A player that starts uniform and only moves on observed losses (Exp3) never leaves the
    uniform distribution under "above_uniform" (no arm is above 1/K, so every loss is 0); use
    "heaviest" against such players. Measured (K = 3, T = 10⁴, 8 replicates, mean ± 4·sd/√M):
    UCB1 regret 6667 (regret/T = 0.6667) under both rules; Exp3 ("heaviest") 96 ± 62 against
    its declared bound 257, Tsallis-INF 176 ± 36 against 639.

    Examples
    --------
    >>> from arena import play
    >>> df = play("ucb1", DistributionReader(), n_actions=3, horizon=300,
    ...           checkpoints=[300], metrics={"regret": {}})
    >>> float(df.value.iloc[0])  # loses all 300 rounds; each arm lost 100
    200.0

    References
    ----------
    Cesa-Bianchi & Lugosi (2006), §2.10 (deterministic players); Lattimore & Szepesvári (2020),
    Theorem 11.2.
    """

    parameter_constraints: ClassVar = {"rule": [OneOf(*READER_RULES)]}
    tags = AdversaryTags(oblivious=False, sees_distribution=True)

    def __init__(self, rule: str = "above_uniform"):
        self.rule = rule

    def resolve_n_actions(self, requested: int | None) -> int:
        return 3 if requested is None else int(requested)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._n_act = spec.n_actions

    def losses(self, t: int, history: History) -> np.ndarray:
        p = np.asarray(history.probs, dtype=np.float64)
        if self.rule == "heaviest":
            return (p >= p.max(axis=1, keepdims=True) - READER_TOL).astype(np.float64)
        return (p > 1.0 / p.shape[1] + READER_TOL).astype(np.float64)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"rule": "heaviest"}
