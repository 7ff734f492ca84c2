"""The bandit protocol's conformance checks, and the partners it plays players against.

Players are driven as the arena drives them: ``predict``, the inverse-CDF draw of ``I_t`` from a
uniform (:func:`arena.sampling.sample_action`), then ``update(I_t, l_{t,I_t}, p_t)``; their block
kernels are handed loss blocks whose unobserved entries are NaN. The statistical checks use fixed
seeds (so they are reproducible) and state their false-alarm rate: the rate at which a correct
player would fail them if the seeds were drawn at random.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

import numpy as np

from arena.bandit.components import BanditPlayer
from arena.bandit.point_masses import plays_arms, point_mass_rows
from arena.bandit.testing import UniformBandit
from arena.experts.testing import AlternatingStream, BernoulliStream, UniformStream
from arena.sampling import sample_action
from arena.spec import GameSpec
from arena.testing.common import (
    BLOCK_ATOL,
    MEMORY_SLACK_BYTES,
    REPLICATES,
    ProtocolChecks,
    SkipCheck,
    assert_rows_chunk_invariant,
    call_read_only,
    fail,
    rngs,
    same_state,
    state_bytes,
    state_copy,
)
from arena.validation import readonly_contiguous

HORIZON = 40
"""Rounds of the small games the checks play."""

N_ARMS = 4
"""Arms K of the checks' games."""

SIMPLEX_TOL = 1e-9
"""``|Σ p − 1|`` allowed (the driver's tolerance)."""

UNBIASED_DRAWS = 20_000
"""Independent draws of ``I_t`` (one per replicate) in :func:`check_estimate_unbiased`."""

UNBIASED_FALSE_ALARM = 1e-6
"""Family-wise false-alarm rate of :func:`check_estimate_unbiased` (Bonferroni over the K arms,
two-sided, CLT): a correct estimator fails it with probability about 1e-6 per seed."""

BOUND_REPLICATES = 16
"""Replicates of each game of :func:`check_declared_bounds_hold`."""

BOUND_SIGMAS = 4.0
"""One-sided margin of :func:`check_declared_bounds_hold`: the mean over replicates may exceed
the bound by at most this many standard errors (false alarm ≈ 3·10⁻⁵ per comparison, CLT)."""


def _spec(n_rep: int = REPLICATES, horizon: int = HORIZON, loss_range=(0.0, 1.0)) -> GameSpec:
    return GameSpec("bandit", N_ARMS, horizon, loss_range, n_replicates=n_rep)


def _losses(n_rep: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    losses = rng.random((n_rep, n, N_ARMS))
    losses[..., 0] = np.round(losses[..., 0])  # exact ties and extreme values
    return losses


def _uniforms(n_rep: int, n: int, seed: int) -> np.ndarray:
    return np.random.default_rng([seed, 1]).random((n_rep, n))


def drive(player: BanditPlayer, losses: np.ndarray, uniforms: np.ndarray) -> tuple:
    """Play rounds as the arena does; return ``(probs (R, n, K), actions (R, n))``.

    ``update`` receives the drawn arms, their losses alone and the ``p_t`` they were drawn from.
    """
    n_rep, n, n_act = losses.shape
    probs = np.empty((n_rep, n, n_act))
    actions = np.empty((n_rep, n), dtype=np.int64)
    rows = np.arange(n_rep)
    for j in range(n):
        p = np.ascontiguousarray(player.predict(), dtype=np.float64)
        probs[:, j] = p
        for r in range(n_rep):
            actions[r, j] = sample_action(p[r], uniforms[r, j])
        player.update(actions[:, j].copy(), losses[rows, j, actions[:, j]].copy(), p.copy())
    return probs, actions


# ----------------------------------------------------------------------------------------------
# players


def check_distribution_valid(player: BanditPlayer) -> None:
    """Every ``predict`` returns an (R, K) array of finite, non-negative rows summing to 1."""
    p0 = player.clone()
    spec = _spec()
    p0.reset(spec, rngs(1))
    losses, uniforms = _losses(REPLICATES, HORIZON, 1), _uniforms(REPLICATES, HORIZON, 1)
    rows = np.arange(REPLICATES)
    for j in range(HORIZON):
        p = np.asarray(p0.predict(), dtype=np.float64)
        if p.shape != (REPLICATES, N_ARMS):
            fail(
                "check_distribution_valid",
                player,
                f"predict returned shape {p.shape} at round {j + 1}, expected "
                f"{(REPLICATES, N_ARMS)}",
            )
        if not np.isfinite(p).all() or (p < 0).any() or np.abs(p.sum(1) - 1).max() > SIMPLEX_TOL:
            fail("check_distribution_valid", player, f"p = {p.tolist()} at round {j + 1}")
        actions = np.array([sample_action(p[r], uniforms[r, j]) for r in rows], dtype=np.int64)
        p0.update(actions, losses[rows, j, actions], p.copy())


def check_predict_is_pure(player: BanditPlayer) -> None:
    """``predict`` changes no state and returns the same distribution when called twice."""
    p0 = player.clone()
    p0.reset(_spec(), rngs(2))
    drive(p0, _losses(REPLICATES, 7, 2), _uniforms(REPLICATES, 7, 2))
    before = state_copy(p0)
    first, second = np.array(p0.predict()), np.array(p0.predict())
    after = vars(p0)
    changed = [k for k in set(before) | set(after) if not same_state(before.get(k), after.get(k))]
    if changed:
        fail("check_predict_is_pure", player, f"predict changed the state attributes {changed}")
    if not np.array_equal(first, second, equal_nan=True):
        fail("check_predict_is_pure", player, "two predict calls returned different values")


def check_update_does_not_alias_input(player: BanditPlayer) -> None:
    """The player never writes into the arrays it is given (``update``'s arms, losses and
    ``p_t``, ``play_block``'s losses and uniforms, handed read-only as the engine hands them)
    and keeps no reference to the arrays passed to ``update``."""
    name = "check_update_does_not_alias_input"
    losses, uniforms = _losses(REPLICATES, 6, 3), _uniforms(REPLICATES, 6, 3)
    rows = np.arange(REPLICATES)
    p0 = player.clone()
    p0.reset(_spec(), rngs(3))
    for j in range(6):
        p = np.ascontiguousarray(p0.predict(), dtype=np.float64)
        actions = np.array([sample_action(p[r], uniforms[r, j]) for r in rows], dtype=np.int64)
        call_read_only(name, player, "update", p0.update, actions, losses[rows, j, actions], p)
    p0 = player.clone()
    p0.reset(_spec(), rngs(3))
    call_read_only(name, player, "play_block", p0.play_block, losses, uniforms)
    outs = []
    for mutate in (False, True):
        p0 = player.clone()
        p0.reset(_spec(), rngs(3))
        for j in range(6):
            p = np.ascontiguousarray(p0.predict(), dtype=np.float64)
            actions = np.array([sample_action(p[r], uniforms[r, j]) for r in rows], dtype=np.int64)
            given = [actions, losses[rows, j, actions].copy(), p.copy()]
            p0.update(*given)
            if mutate:
                given[0][...] = (given[0] + 1) % N_ARMS
                given[1][...] = 1.0 - given[1]
                given[2][...] = 1.0 / N_ARMS
        outs.append(np.array(p0.predict()))
    if not np.array_equal(outs[0], outs[1]):
        fail(
            "check_update_does_not_alias_input",
            player,
            "changing the arrays after update changed the next prediction (the player kept a "
            "reference to them; copy what you store)",
        )


def check_reset_restores_initial_state(player: BanditPlayer) -> None:
    """Resetting with the same seeds replays the same game exactly."""
    p0 = player.clone()
    losses, uniforms = _losses(REPLICATES, 20, 4), _uniforms(REPLICATES, 20, 4)
    runs = []
    for _ in range(2):
        p0.reset(_spec(), rngs(4))
        runs.append(drive(p0, losses, uniforms)[0])
    if not np.array_equal(runs[0], runs[1], equal_nan=True):
        fail("check_reset_restores_initial_state", player, "a second reset replays differently")


def _block_run(player: BanditPlayer, losses, uniforms, split, loss_range=(0.0, 1.0)) -> np.ndarray:
    block = player.clone()
    block.reset(_spec(horizon=losses.shape[1], loss_range=loss_range), rngs(5))
    got, t0 = [], 0
    for n in split:
        # read-only, as the engine shows them (and one compiled specialization of the kernel)
        part = readonly_contiguous(losses[:, t0 : t0 + n])
        drawn = readonly_contiguous(uniforms[:, t0 : t0 + n])
        got.append(np.asarray(block.play_block(part, drawn)))
        t0 += n
    return np.concatenate(got, axis=1)


SPLITS = ((30,), (1, 6, 23), (13, 1, 1, 15))


def check_block_matches_loop(player: BanditPlayer) -> None:
    """``play_block`` over any split of rounds equals the predict / draw / update loop to 1e-12."""
    losses, uniforms = _losses(REPLICATES, 30, 5), _uniforms(REPLICATES, 30, 5)
    loop = player.clone()
    loop.reset(_spec(horizon=30), rngs(5))
    expected, _ = drive(loop, losses, uniforms)
    for split in SPLITS:
        err = float(np.abs(_block_run(player, losses, uniforms, split) - expected).max())
        if not err <= BLOCK_ATOL:
            fail(
                "check_block_matches_loop",
                player,
                f"play_block with splits {split} differs from the predict/update loop by {err:.3g}",
            )


def check_reads_only_observed_losses(player: BanditPlayer) -> None:
    """The player never reads an unobserved loss: handed a block whose every entry but the
    ``l_{t,I_t}`` of the arms it draws is NaN, it plays exactly as the per-round loop (whose
    ``update`` receives the observed losses only)."""
    losses, uniforms = _losses(REPLICATES, 30, 6), _uniforms(REPLICATES, 30, 6)
    loop = player.clone()
    loop.reset(_spec(horizon=30), rngs(5))
    expected, actions = drive(loop, losses, uniforms)
    poisoned = np.full_like(losses, np.nan)
    rep, rnd = np.meshgrid(np.arange(REPLICATES), np.arange(30), indexing="ij")
    poisoned[rep, rnd, actions] = losses[rep, rnd, actions]
    for split in SPLITS:
        got = _block_run(player, poisoned, uniforms, split)
        if not np.isfinite(got).all():
            fail(
                "check_reads_only_observed_losses",
                player,
                f"play_block (splits {split}) read a loss of an arm it did not draw: NaN reached "
                "its distribution",
            )
        err = float(np.abs(got - expected).max())
        if not err <= BLOCK_ATOL:
            fail(
                "check_reads_only_observed_losses",
                player,
                f"with the unobserved losses replaced by NaN, play_block (splits {split}) differs "
                f"from the loop by {err:.3g}",
            )


ARMS_LOSS_RANGES = ((0.0, 1.0), (-1.0, 2.0))
"""The loss ranges :func:`check_arms_match_block` plays: [0, 1], where rescaling is the identity,
and one where a ``play_arms`` that skipped the rescaling would pull other arms."""


def check_arms_match_block(player: BanditPlayer) -> None:
    """A player that declares ``plays_arms`` plays the same game through ``play_arms`` as
    through ``play_block`` (the driver plays its chunks as arms, :mod:`arena.bandit.point_masses`):
    ``play_block``'s ``p_t`` are point masses, and ``play_arms`` returns their arms exactly, as an
    integer array, over any split of rounds, handed a block whose every entry but the pulled
    arms' losses is NaN, in [0, 1] and in another loss range."""
    if not plays_arms(type(player)):
        raise SkipCheck("does not play arms (plays_arms is False, or a p_t method is its own)")
    name = "check_arms_match_block"
    rep, rnd = np.meshgrid(np.arange(REPLICATES), np.arange(30), indexing="ij")
    for lo, hi in ARMS_LOSS_RANGES:
        losses = lo + (hi - lo) * _losses(REPLICATES, 30, 7)
        probs = _block_run(player, losses, _uniforms(REPLICATES, 30, 7), (30,), (lo, hi))
        arms = probs.argmax(axis=2)
        if not np.array_equal(probs, point_mass_rows(arms, N_ARMS)):
            fail(name, player, "declares plays_arms, but play_block's p_t are not all point masses")
        poisoned = np.full_like(losses, np.nan)
        poisoned[rep, rnd, arms] = losses[rep, rnd, arms]
        for split in SPLITS:
            played = player.clone()
            played.reset(_spec(horizon=30, loss_range=(lo, hi)), rngs(5))
            got, t0 = [], 0
            for n in split:
                part = readonly_contiguous(poisoned[:, t0 : t0 + n])
                out = np.full((REPLICATES, n), -1, dtype=np.int64)
                chunk = played.play_arms(part, out=out)
                if not (isinstance(chunk, np.ndarray) and np.issubdtype(chunk.dtype, np.integer)):
                    what = getattr(chunk, "dtype", type(chunk).__name__)
                    fail(name, player, f"play_arms returned {what} arms, not an integer array")
                got.append(chunk)
                t0 += n
            got = np.concatenate(got, axis=1)
            if got.shape != arms.shape:
                fail(
                    name, player, f"play_arms returned arms of shape {got.shape}, not {arms.shape}"
                )
            if not np.array_equal(got, arms):
                r, j = np.argwhere(got != arms)[0]
                fail(
                    name,
                    player,
                    f"play_arms (splits {split}, losses in [{lo:g}, {hi:g}]) pulled arm "
                    f"{got[r, j]} in round {j + 1} of replicate {r} where play_block committed "
                    f"the point mass on arm {arms[r, j]}",
                )


class _SeededRngs(Sequence):
    """``[np.random.default_rng([seed, r]) for r in range(n)]``, each made when first read.

    :func:`check_estimate_unbiased` runs 20,000 replicates, and making 20,000 generators up front
    cost ~0.7 s a player although most players never draw from theirs; a player that reads
    ``rngs[r]`` (or copies the list) gets the very generator the list held, made once."""

    def __init__(self, seed: int, n: int):
        self._seed, self._made = seed, [None] * n

    def __len__(self) -> int:
        return len(self._made)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[r] for r in range(len(self))[index]]
        rng = self._made[index]  # an IndexError here ends iteration
        if rng is None:
            r = range(len(self))[index]
            rng = self._made[r] = np.random.default_rng([self._seed, r])
        return rng


def check_estimate_unbiased(player: BanditPlayer) -> None:
    """The importance-weighted estimate has its declared expectation given the ``p_t`` used.

    For players that keep estimates (:meth:`BanditPlayer.estimates`): after a common history,
    M = :data:`UNBIASED_DRAWS` replicates each draw ``I_t ~ p_t`` independently and ``update``
    with it; the added estimates ``ℓ̂_t`` (M, K) must average to
    :meth:`BanditPlayer.estimate_expectation` ``(l_t, p_t)`` (``l_t`` for an unbiased estimator):
    a two-sided z-test per arm at family-wise false-alarm rate :data:`UNBIASED_FALSE_ALARM`. An
    estimator divided by a probability other than the one ``I_t`` was drawn with (e.g. the
    distribution after the update) fails it.
    """
    probe = player.clone()
    probe.reset(_spec(n_rep=1), rngs(7, 1))
    if probe.estimates() is None:
        raise SkipCheck("estimates() is None: the player exposes no loss estimates")
    m = UNBIASED_DRAWS
    p0 = player.clone()
    p0.reset(_spec(n_rep=m, horizon=HORIZON), _SeededRngs(7, m))
    # a common history: the same losses and the same uniforms in every replicate
    warm = 6
    losses = np.broadcast_to(_losses(1, warm + 1, 7), (m, warm + 1, N_ARMS)).copy()
    uniforms = np.broadcast_to(_uniforms(1, warm, 7), (m, warm)).copy()
    drive(p0, losses[:, :warm], uniforms)
    p = np.ascontiguousarray(p0.predict(), dtype=np.float64)
    lt = losses[:, warm]
    target = np.asarray(p0.estimate_expectation(lt, p), dtype=np.float64)
    before = np.asarray(p0.estimates(), dtype=np.float64)
    draws = np.random.default_rng(8).random(m)
    actions = np.array([sample_action(p[r], draws[r]) for r in range(m)], dtype=np.int64)
    p0.update(actions, lt[np.arange(m), actions].copy(), p.copy())
    diff = np.asarray(p0.estimates(), dtype=np.float64) - before - target
    z_crit = NormalDist().inv_cdf(1.0 - UNBIASED_FALSE_ALARM / (2 * N_ARMS))
    for i in range(N_ARMS):
        mean, sd = float(diff[:, i].mean()), float(diff[:, i].std(ddof=1))
        se = sd / math.sqrt(m)
        if (se == 0.0 and abs(mean) > 1e-12) or (se > 0.0 and abs(mean) / se > z_crit):
            fail(
                "check_estimate_unbiased",
                player,
                f"the estimate of arm {i} averages {mean:+.4g} away from its declared expectation "
                f"(z = {mean / se if se else math.inf:.2f}, limit {z_crit:.2f}, "
                f"p_t = {p[0].round(4).tolist()}): divide by the probability I_t was drawn with",
            )


def check_declared_bounds_hold(player: BanditPlayer) -> None:
    """Every declared ``bound:<metric>`` dominates the metric's mean over replicates.

    On oblivious streams (Bernoulli arms with and without a gap, the alternating sequence) with
    :data:`BOUND_REPLICATES` replicates: at each checkpoint, ``mean − 4·sd/√R ≤ bound``; a bound
    on an expectation is only testable so (false alarm ≈ 3·10⁻⁵ per comparison).
    """
    if type(player).bounds is BanditPlayer.bounds:
        raise SkipCheck("declares no bounds (bounds() is not overridden)")
    from arena.errors import ArenaError
    from arena.game import run_game
    from arena.metric import metric_for

    for adversary in (BernoulliStream(gap=0.1), BernoulliStream(gap=0.0), AlternatingStream()):
        game = {"n_actions": N_ARMS, "horizon": 300, "replicates": BOUND_REPLICATES, "seed": 13}
        try:
            declared = run_game(player, adversary, metrics={"bound": {}}, **game).rows
        except ArenaError:
            continue
        metrics: dict[str, Any] = {"bound": {}}
        for label in declared.metric.unique():
            name = label.removeprefix("bound:")
            if getattr(metric_for(name, "bandit"), "param_name", None) is not None:
                fail("check_declared_bounds_hold", player, f"bounds on {name} are not checked")
            metrics[name] = {}
        rows = run_game(player, adversary, metrics=metrics, **game).rows
        stats = rows.groupby(["t", "metric"]).value.agg(["mean", "std"]).reset_index()
        for label in declared.metric.unique():
            name = label.removeprefix("bound:")
            got = stats[stats.metric == name].set_index("t")
            bound = stats[stats.metric == label].set_index("t")["mean"]
            margin = BOUND_SIGMAS * got["std"].fillna(0.0) / math.sqrt(BOUND_REPLICATES)
            excess = got["mean"] - margin - bound
            if (excess > 1e-9 * np.maximum(1.0, bound.abs())).any():
                t = int(excess.idxmax())
                fail(
                    "check_declared_bounds_hold",
                    player,
                    f"mean {name} = {got['mean'][t]:.6g} (± {margin[t]:.3g}) exceeds its declared "
                    f"bound {bound[t]:.6g} against {adversary!r} at round {t}",
                )


def check_bounded_memory(player: BanditPlayer) -> None:
    """The state does not grow with the number of rounds played."""
    p0 = player.clone()
    p0.reset(_spec(horizon=2000), rngs(8))
    losses, uniforms = _losses(REPLICATES, 2000, 8), _uniforms(REPLICATES, 2000, 8)
    sizes = []
    for t0, n in ((0, 200), (200, 1800)):
        p0.play_block(
            readonly_contiguous(losses[:, t0 : t0 + n]),
            readonly_contiguous(uniforms[:, t0 : t0 + n]),
        )
        sizes.append(state_bytes(p0))
    if sizes[1] > sizes[0] + MEMORY_SLACK_BYTES:
        fail(
            "check_bounded_memory",
            player,
            f"state grew from {sizes[0]} bytes after 200 rounds to {sizes[1]} after 2000",
        )


# ----------------------------------------------------------------------------------------------
# partners


def _pair(component: Any) -> tuple[Any, Any, dict[str, Any]]:
    game = {
        "horizon": HORIZON,
        "replicates": REPLICATES,
        "n_actions": N_ARMS,
        "metrics": {"loss": {}, "realized_loss": {}, "regret": {}, "arm_pulls": {}},
    }
    if isinstance(component, BanditPlayer):
        return component, BernoulliStream(gap=0.2), game
    return UniformBandit(), component, game


def check_rows_chunk_invariant(component: Any) -> None:
    """The rows are the same to the last bit for every chunking of the rounds (the bandit
    protocol plays the experts game, which declares it). A player plays uniform losses in
    [0, 1] (one that takes binary losses only, its partner's {0, 1}); an adversary its partner
    player."""
    player, adversary, game = _pair(component)
    if isinstance(component, BanditPlayer) and not component.tags.binary_losses:
        adversary = UniformStream()
    assert_rows_chunk_invariant("check_rows_chunk_invariant", component, player, adversary, game)


CHECKS = ProtocolChecks(
    player_checks=(
        check_distribution_valid,
        check_predict_is_pure,
        check_update_does_not_alias_input,
        check_reset_restores_initial_state,
        check_block_matches_loop,
        check_reads_only_observed_losses,
        check_arms_match_block,
        check_estimate_unbiased,
        check_declared_bounds_hold,
        check_bounded_memory,
        check_rows_chunk_invariant,
    ),
    adversary_checks=(),
    is_player=lambda component: isinstance(component, BanditPlayer),
    pair=_pair,
)
"""The bandit protocol's part of the conformance suite (:meth:`BanditProtocol.conformance`).

Its adversaries are the experts protocol's, checked there; seed determinism, batch invariance
(replicate 2 alone equals replicate 2 in a batch) and the global-RNG check apply to every bandit
player through :data:`arena.testing.common.COMMON_CHECKS` on the pair above."""
