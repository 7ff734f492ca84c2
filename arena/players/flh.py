"""Follow the Leading History (FLH): exponential weights over copies of a base learner started
at every round (or on a geometric covering), for adaptive (interval) regret."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from arena.base import Footprint
from arena.errors import ArenaError, ConfigError
from arena.experts.components import ExpertsPlayer
from arena.params import InstanceOf, Interval, IsNone, OneOf
from arena.players.ada_normal_hedge_tv import geometric_levels
from arena.spec import GameSpec, PlayerTags

STARTS = ("all", "geometric")

COPY_BYTES = 40_000
"""Bytes of one copy beside its arrays (the base learner's object, its streams, its bookkeeping;
measured: 30–60 kB per copy alive)."""

COPY_ROUND_OPS = 2e5
"""Work of one copy in one round beside its arrays: the Python calls of its predict and update
(measured: 100–350 µs per copy and round)."""

COPY_ARRAYS = 4
"""Arrays of shape (R, N) a copy of a base learner holds and reads per round: the estimate's."""


def lifetime(start: int, starts: str) -> float:
    """Return the number of rounds the copy started at ``start`` plays (``inf``: forever).

    ``"all"``: FLH keeps every copy. ``"geometric"``: the copy started at ``a`` serves every
    interval ``[a, a + 2^k − 1]`` of the geometric covering of Daniely, Gonen & Shalev-Shwartz
    (2015) that starts at ``a`` (levels ``k ≤ ν₂(a)``), so it lives ``2^{ν₂(a)}`` rounds; the
    copies alive at round t are then exactly the distinct starts of
    :func:`~arena.players.ada_normal_hedge_tv.geometric_levels` ``(t)``.

    Examples
    --------
    >>> [lifetime(a, "geometric") for a in (1, 2, 3, 4, 12)]
    [1, 2, 1, 4, 4]
    """
    if starts == "all":
        return math.inf
    return start & -start


def live_starts(t: int, starts: str) -> list[int]:
    """Return the starts of the copies alive at round ``t``, oldest first.

    Examples
    --------
    >>> live_starts(6, "geometric"), live_starts(4, "all")
    ([4, 6], [1, 2, 3, 4])
    """
    if starts == "all":
        return list(range(1, t + 1))
    return sorted({a for _, a in geometric_levels(t)})


class _Copy:
    """One copy of the base learner: its start, last round, player and running bound max."""

    def __init__(self, start: int, end: float, player: ExpertsPlayer, n_rep: int):
        self.start = start
        self.end = end
        self.player = player
        self.bound_max = np.zeros(n_rep)


class _CopyStreams(Sequence):
    """The random streams of the copy started at ``start``, one per replicate, each created when
    first read: most base players (Hedge, AdaNormalHedge, …) never draw, and creating R
    generators for each of the many copies dominated the meta-algorithms' time."""

    def __init__(self, seeds: Sequence[int], start: int):
        self._seeds = seeds
        self._start = start
        self._made: dict[int, np.random.Generator] = {}

    def __len__(self) -> int:
        return len(self._seeds)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        i = range(len(self))[index]
        if i not in self._made:
            self._made[i] = np.random.default_rng([self._seeds[i], self._start])
        return self._made[i]


class CopyMixture(ExpertsPlayer):
    """Shared machinery of the meta-players that start copies of a base experts player.

    A subclass implements the meta-learner: :meth:`_meta_start` (state at round 1),
    :meth:`_meta_weights` (the distribution over the live copies, (R, M)), :meth:`_meta_update`
    (after the copies' losses are known), :meth:`_meta_remove` (copies that died) and
    :meth:`_meta_birth` (the copy born for the next round). The mixture plays
    ``p_t = Σ_j v_{t,j} q_{t,j}``, with ``q_{t,j}`` the distribution of copy j.
    """

    tags = PlayerTags(protocols=frozenset({"experts"}), block_kernel=False)
    starts: str = "geometric"

    # ------------------------------------------------------------------------------------------
    # the base learner

    def footprint(self, spec: GameSpec) -> Footprint:
        """The copies alive at once, each a base learner of (R, N) state updated every round:
        about log₂ T of them on the geometric covering, and with ``starts="all"`` one more
        every round (T at the end, so T²/2 copy-rounds of work in all)."""
        n_rep, n_act = int(spec.n_replicates), int(spec.n_actions)
        horizon = int(spec.horizon or 1)
        copy = 8 * COPY_ARRAYS * n_rep * n_act + COPY_BYTES
        if self.starts == "all":
            alive, mean_alive = horizon, (horizon + 1) / 2
        else:
            alive = mean_alive = horizon.bit_length()
        return Footprint(
            memory=alive * copy,
            work=mean_alive * (COPY_ROUND_OPS + 4 * COPY_ARRAYS * n_rep * n_act),
            parameter="starts",
            what=f"starts={self.starts}: up to {alive} copies of the base learner, "
            f"each of {COPY_ARRAYS} arrays of shape ({n_rep}, {n_act})",
            advice="use starts=geometric (log₂ T copies), or lower the horizon"
            if self.starts == "all"
            else "",
        )

    def _make_base(self) -> ExpertsPlayer:
        from arena import registry

        who = self.label()
        base = registry.make_inner(who, "player", self.base, self.base_params, name_param="base")
        if not isinstance(base, ExpertsPlayer):
            raise ConfigError(
                who,
                "base",
                f"{self.base!r} is not an experts player (it plays "
                f"{sorted(base.tags.protocols)}); the base learner must output p_t over the "
                "experts",
            )
        tags = base.tags
        if tags.observes_action or tags.supports_confidences or tags.binary_losses:
            raise ConfigError(
                who,
                "base",
                f"{base.label()} needs its own draws, confidences or binary losses; the copies "
                "of a base learner see only the full loss vectors",
            )
        return base

    def _copy_spec(self, start: int) -> GameSpec:
        """The game of the copy started at ``start``: its horizon is its lifetime (bounded by T)."""
        spec = self._spec
        life = lifetime(start, self._starts)
        if spec.horizon is not None:
            life = max(1, min(life, spec.horizon - start + 1))  # ≥ 1 past T (never played)
        horizon = None if math.isinf(life) else int(life)
        return GameSpec(
            "experts",
            spec.n_actions,
            horizon,
            spec.loss_range,
            n_replicates=spec.n_replicates,
            replicate_ids=spec.replicate_ids,
        )

    def _new_copy(self, start: int) -> _Copy:
        player = self._base.clone()
        rngs = _CopyStreams(self._seeds, start)
        try:
            player.reset(self._copy_spec(start), rngs)
        except ArenaError as exc:
            raise ConfigError(self.label(), "base_params", str(exc)) from exc
        except (ValueError, TypeError, KeyError) as exc:
            raise ConfigError(
                self.label(), "base", f"{player.label()}: reset failed: {exc}"
            ) from exc
        return _Copy(start, start + lifetime(start, self._starts) - 1, player, self._n_rep)

    # ------------------------------------------------------------------------------------------
    # the game

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._spec = spec
        self._starts = self.starts
        self._n_rep, self._n_act = spec.n_replicates, spec.n_actions
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._seeds = [0 if rng is None else int(rng.integers(2**63)) for rng in rngs]
        self._base = self._make_base()
        cls = type(self._base)
        self._base_bounds = cls.bounds is not ExpertsPlayer.bounds
        self._t = 0
        self._copies = [self._new_copy(1)]
        self._level_max: dict[int, np.ndarray] = {}  # level → max bound of the dead copies
        self._dead_max = np.zeros(self._n_rep)
        self._meta_start()

    def live_copies(self) -> list[int]:
        """Return the starts of the copies alive for the next round."""
        return [c.start for c in self._copies]

    def copy_distributions(self) -> np.ndarray:
        """Return the copies' distributions ``q_{t,j}`` for the next round, shape (R, M, N)."""
        return np.stack([np.asarray(c.player.predict(), float) for c in self._copies], axis=1)

    def copy_weights(self) -> np.ndarray:
        """Return the meta-distribution ``v_t`` over the live copies, shape (R, M)."""
        return self._meta_weights()

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        return np.einsum("rm,rmn->rn", self._meta_weights(), self.copy_distributions())

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        losses = np.asarray(losses, dtype=np.float64)
        q = self.copy_distributions()
        v = self._meta_weights()
        unit = (losses - self._lo) / self._scale
        h = np.einsum("rmn,rn->rm", q, unit)  # the copies' losses h_{t,j} ∈ [0, 1]
        mix = np.einsum("rm,rm->r", v, h)  # the mixture's loss ĥ_t = p_t·ℓ_t
        self._meta_update(h, mix)
        t = self._t + 1
        for c in self._copies:
            c.player.update(losses.copy())
            if self._base_bounds:
                c.bound_max = np.maximum(c.bound_max, self._copy_regret_bound(c, t - c.start + 1))
        self._t = t
        dead = [j for j, c in enumerate(self._copies) if c.end <= t]
        for j in dead:
            c = self._copies[j]
            level = (c.start & -c.start).bit_length() - 1
            prev = self._level_max.get(level, np.zeros(self._n_rep))
            self._level_max[level] = np.maximum(prev, c.bound_max)
            self._dead_max = np.maximum(self._dead_max, c.bound_max)
        if dead:
            self._copies = [c for j, c in enumerate(self._copies) if j not in dead]
            self._meta_remove(dead)
        self._copies.append(self._new_copy(t + 1))
        self._meta_birth(t + 1)

    # ------------------------------------------------------------------------------------------
    # composing the base learner's bound

    def _copy_regret_bound(self, c: _Copy, age: int) -> np.ndarray:
        declared = c.player.bounds(age)
        for (metric, param), value in declared.items():
            if metric == "regret" and param != param:
                return np.broadcast_to(np.asarray(value, dtype=np.float64), (self._n_rep,))
        self._base_bounds = False  # the base declares no regret bound: compose none
        return np.zeros(self._n_rep)

    def base_bound_terms(self) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(max_j M_j, Σ_k max_{j: ν₂(start_j) = k} M_j)`` over every copy so far.

        ``M_j`` is the running maximum over the copy's rounds of the regret bound it declares
        (``bounds(age)[("regret", nan)]``): it bounds copy j's regret on every prefix of its
        life, whether or not the base's bound grows with the rounds.
        """
        by_level = {k: v.copy() for k, v in self._level_max.items()}
        top = self._dead_max.copy()
        for c in self._copies:
            if c.start > self._t:
                continue  # born for the next round, not played yet
            level = (c.start & -c.start).bit_length() - 1
            by_level[level] = np.maximum(by_level.get(level, np.zeros(self._n_rep)), c.bound_max)
            top = np.maximum(top, c.bound_max)
        total = sum(by_level.values(), np.zeros(self._n_rep))
        return top, total

    # ------------------------------------------------------------------------------------------
    # the meta-learner (subclasses)

    def _meta_start(self) -> None:
        raise NotImplementedError

    def _meta_weights(self) -> np.ndarray:
        raise NotImplementedError

    def _meta_update(self, h: np.ndarray, mix: np.ndarray) -> None:
        raise NotImplementedError

    def _meta_remove(self, dead: list[int]) -> None:
        raise NotImplementedError

    def _meta_birth(self, t: int) -> None:
        raise NotImplementedError


BASE_CONSTRAINTS: dict[str, list] = {
    "base": [
        InstanceOf(str, "an experts player's registry name"),
        InstanceOf(ExpertsPlayer, "an experts player instance"),
    ],
    "base_params": [InstanceOf(Mapping, "a mapping of its parameters"), IsNone()],
}


class FLH(CopyMixture):
    """Follow the Leading History: exponential weights over base-learner copies started every round.

    At round t a fresh copy of the base experts player (``base``) starts; the copies alive are
    mixed with exponential weights, the newcomer entering with prior weight ``1/t``.

    Parameters
    ----------
    base : str or ExpertsPlayer
        The base learner: a registered experts player's name (``"hedge"``, ``"ada_hedge"``, …) or
        an instance (cloned, never modified).
    base_params : mapping, optional
        Parameters of the base learner. On the command line:
        ``player=flh player.base=hedge '+player.base_params={eta:anytime}'``.
    eta : float or "tuned"
        The meta-learner's rate η > 0 on losses mapped to [0, 1]; ``"tuned"`` (default) minimizes
        the meta part of the declared bound at T (needs the horizon, see Notes).
    starts : {"all", "geometric"}
        ``"geometric"`` (default): only the copies of the geometric covering of Daniely et al.
        (2015) stay alive (the copy started at a lives ``2^{ν₂(a)}`` rounds, :func:`lifetime`),
        at most ``⌊log₂ t⌋ + 1`` copies, as in the pruned AFLH of Hazan & Seshadhri (2009);
        ``"all"``: FLH itself, one copy per start, O(t) copies and O(t) base calls at round t
        (O(T²) per game: for short games and checks).

    Notes
    -----
    **Algorithm** (Hazan & Seshadhri 2009, Algorithm 1 "FLH", with linear losses). With
    ``h_{t,j} = q_{t,j}·ℓ_t`` the unit-range loss of copy j (started at round j) and ``v_t`` the
    weights over the live copies (``v_1 = (1)``), play ``p_t = Σ_j v_{t,j} q_{t,j}``, then

    * ``v̂_{t+1,j} ∝ v_{t,j} exp(−η h_{t,j})`` (normalized over the live copies);
    * ``"geometric"``: drop the copies whose life ends at t and renormalize (if none is left,
      the newcomer gets weight 1);
    * ``v_{t+1,t+1} = 1/(t+1)`` and ``v_{t+1,j} = (1 − 1/(t+1)) v̂_{t+1,j}`` for the others.

    **Guarantee** (derived here; the losses of the experts setting are linear, so the
    exp-concave analysis of Hazan & Seshadhri with α = η is replaced by Hoeffding's lemma,
    ``Σ_j v_j h_j ≤ −ln Σ_j v_j e^{−η h_j}/η + η/8``, Cesa-Bianchi & Lugosi 2006, Lemma 2.2).
    For a copy started at r and alive through s, ``ln v`` of copy r starts at ``−ln r``, loses
    ``ln(t/(t+1))`` at each later birth and only gains from renormalizations, so
    ``Σ_{t=r}^{s} (ĥ_t − h_{t,r}) ≤ ln s / η + η (s − r + 1)/8`` (the meta-regret).
    The regret of FLH to expert i on ``[r, s]`` is that plus the regret of copy r, a fresh base
    learner over ``s − r + 1`` rounds. With ``M_j`` the running maximum of the regret bound copy j
    declares (the base's ``bounds(age)["regret"]``), for every interval of ``[1, t]``:

    * ``"all"``: ``adaptive_regret ≤ ln t/η + η t/8 + max_j M_j``;
    * ``"geometric"``: split ``[s, e]`` by
      :func:`~arena.players.ada_normal_hedge_tv.cover_partition` into pieces starting at a copy's
      birth, of distinct levels ``k ≤ ⌊log₂ t⌋``, so at most ``m_t = ⌊log₂ t⌋ + 1`` pieces:
      ``adaptive_regret ≤ m_t ln t/η + η t/8 + Σ_k max_{j: ν₂(j) = k} M_j``.

    Both are declared (also as ``bound:regret``: ``[1, t]`` is an interval), in units of
    ``hi − lo``, when the base declares a regret bound; otherwise none is declared. ``"tuned"``
    is ``η = sqrt(8 c ln T / T)`` with ``c = 1`` (``"all"``) or ``c = m_T`` (``"geometric"``),
    which makes the meta part ``sqrt(c T ln T / 2)``: the ``O(sqrt(T log T))`` adaptive regret of
    Hazan & Seshadhri for bounded convex losses (Luo 2016, Table 2.3, quotes FLH's interval
    regret ``O(sqrt(t₂) ln t₂)`` without tuning).

    Each copy's game has the horizon of its life (bounded by T), so a base tuned for its
    horizon (``hedge``'s ``"tuned"``) is tuned for the copy; ``"all"`` with an unknown horizon
    gives copies an unknown horizon. Each copy draws its random stream from the replicate's
    stream and its start (replicates stay batch-invariant). No numba kernel: a round costs one
    ``predict`` and one ``update`` call per live copy, which the meta-update (O(M) numpy) does
    not change.

    Examples
    --------
    >>> from arena import play
    >>> df = play(FLH("hedge", {"eta": "anytime"}, eta=0.5, starts="geometric"),
    ...           "shifting_experts", n_actions=3, horizon=200,
    ...           metrics={"adaptive_regret": {}, "bound": {}})
    >>> last = df[df.t == 200].set_index("metric").value
    >>> bool(last["adaptive_regret"] <= last["bound:adaptive_regret"])
    True

    References
    ----------
    Hazan & Seshadhri (2009), "Efficient learning algorithms for changing environments", ICML,
    Algorithm 1 (FLH) and §4 (pruning to O(log T) experts).
    Daniely, Gonen & Shalev-Shwartz (2015), "Strongly adaptive online learning", ICML (the
    geometric covering).
    Cesa-Bianchi & Lugosi (2006), *Prediction, Learning, and Games*, Lemma 2.2.
    Luo (2016), thesis, §2.3.3 and Table 2.3.
    """

    parameter_constraints: ClassVar = {
        **BASE_CONSTRAINTS,
        "eta": [Interval(0, None, closed="neither"), OneOf("tuned")],
        "starts": [OneOf(*STARTS)],
    }

    def __init__(
        self,
        base: str | ExpertsPlayer = "hedge",
        base_params: Mapping[str, Any] | None = None,
        eta: float | str = "tuned",
        starts: str = "geometric",
    ):
        self.base = base
        self.base_params = base_params
        self.eta = eta
        self.starts = starts

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        if self.eta == "tuned":
            if spec.horizon is None:
                raise ConfigError(self.label(), "eta", "'tuned' needs the horizon; give a rate")
            big_t = max(spec.horizon, 2)
            c = 1 if self.starts == "all" else big_t.bit_length()
            self._eta = math.sqrt(8.0 * c * math.log(big_t) / big_t)
        else:
            self._eta = float(self.eta)
        super().reset(spec, rngs)

    def _meta_start(self) -> None:
        self._log_v = np.zeros((self._n_rep, 1))

    def _meta_weights(self) -> np.ndarray:
        w = np.exp(self._log_v - self._log_v.max(axis=1, keepdims=True))
        return w / w.sum(axis=1, keepdims=True)

    @staticmethod
    def _normalized(log_v: np.ndarray) -> np.ndarray:
        if log_v.shape[1] == 0:
            return log_v
        top = log_v.max(axis=1, keepdims=True)
        return log_v - (top + np.log(np.exp(log_v - top).sum(axis=1, keepdims=True)))

    def _meta_update(self, h: np.ndarray, mix: np.ndarray) -> None:
        self._log_v = self._normalized(self._log_v - self._eta * h)

    def _meta_remove(self, dead: list[int]) -> None:
        keep = np.ones(self._log_v.shape[1], dtype=bool)
        keep[dead] = False
        self._log_v = self._normalized(self._log_v[:, keep])

    def _meta_birth(self, t: int) -> None:
        if self._log_v.shape[1] == 0:  # every copy died: the newcomer holds the whole mass
            self._log_v = np.zeros((self._n_rep, 1))
            return
        new = np.full((self._n_rep, 1), -math.log(t))
        self._log_v = np.concatenate([self._log_v + math.log1p(-1.0 / t), new], axis=1)

    def learning_rate(self) -> float:
        """Return the meta-learner's rate η (unit-range losses)."""
        return self._eta

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare the adaptive-regret bound of the Notes (none if the base declares none)."""
        t = self._t
        if not self._base_bounds:
            return {}
        top, by_level = self.base_bound_terms()
        if t == 0:
            value = np.zeros(self._n_rep)
        elif self._starts == "all":
            value = self._scale * (math.log(t) / self._eta + self._eta * t / 8.0) + top
        else:
            m = t.bit_length()
            value = self._scale * (m * math.log(t) / self._eta + self._eta * t / 8.0) + by_level
        return {("regret", math.nan): value, ("adaptive_regret", math.nan): value}

    @classmethod
    def _unit_test_params(cls):
        # "all" keeps O(t) copies by design, which the suite's bounded-memory check refuses; it
        # is tested in tests/players/test_flh.py
        yield {"starts": "geometric"}
        yield {"base": "ada_hedge", "eta": 1.0, "starts": "geometric"}
        yield {"base_params": {"eta": "anytime"}, "eta": 0.5, "starts": "geometric"}
