"""The experts protocol's conformance checks, and the partners it plays components against.

Players are driven through ``predict`` / ``update`` / ``play_block`` on small games whose losses
include exact ties, extreme values and binary rounds; adversaries are driven through ``losses`` /
``losses_block`` against the uniform distribution, and in whole games against the suite's own
partners (:mod:`arena.experts.testing`), never against the registered built-ins.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from arena.components import Adversary
from arena.errors import UndeclaredDistributionError
from arena.experts.components import (
    PROB_SUM_TOL,
    AdaptiveAdversary,
    ExpertsPlayer,
    ObliviousAdversary,
)
from arena.experts.testing import (
    AlternatingStream,
    BernoulliStream,
    ExponentialWeights,
    MostLikelyLoses,
    UniformPlayer,
    UniformStream,
)
from arena.spec import GameSpec, History
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
from arena.validation import readonly, readonly_contiguous

HORIZON = 40
"""Rounds of the small games the checks play."""

MEMORY_HORIZON = 1000
"""Rounds :func:`check_bounded_memory` plays (the state is measured after 200 and after these)."""

SIMPLEX_TOL = PROB_SUM_TOL
"""``|Σ p − 1|`` allowed: the driver's own tolerance."""


def _player_game(player: ExpertsPlayer, horizon: int = HORIZON) -> GameSpec:
    """A small game the player accepts: N = 4 within its tags' limits, unless a list-valued
    parameter (a prior) fixes N by its length."""
    tags = player.tags
    n_act = max(tags.min_actions, min(4, tags.max_actions or 4))
    for value in player.get_params().values():
        if (
            isinstance(value, list | tuple)
            and value
            and all(isinstance(v, int | float) for v in value)
        ):
            n_act = len(value)
    return GameSpec("experts", n_act, horizon, (0.0, 1.0), n_replicates=REPLICATES)


def _losses(player: ExpertsPlayer, spec: GameSpec, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    shape = (spec.n_replicates, n, spec.n_actions)
    if player.tags.binary_losses:
        if spec.n_actions == 2:  # the binary prediction game: one expert errs each round
            first = rng.integers(0, 2, shape[:2]).astype(np.float64)
            return np.stack([first, 1.0 - first], axis=-1)
        return rng.integers(0, 2, shape).astype(np.float64)
    losses = rng.random(shape)
    losses[..., 0] = np.round(losses[..., 0])  # some exact ties and extreme values
    return losses


def _update(player: ExpertsPlayer, losses: np.ndarray, p: np.ndarray, t: int) -> None:
    """Feed one round's losses; players that observe their action get the inverse-CDF draw of
    ``p`` at a fixed uniform (the engine's rule), so every check can drive them."""
    if player.tags.observes_action:
        from arena.sampling import sample_actions

        actions = np.empty(losses.shape[0], dtype=np.int64)
        uniforms = np.random.default_rng([99, t]).random(losses.shape[0])
        sample_actions(np.ascontiguousarray(p, dtype=np.float64), uniforms, actions)
        player.update(losses, actions=actions)
    else:
        player.update(losses)


# ----------------------------------------------------------------------------------------------
# players


def check_distribution_valid(player: ExpertsPlayer) -> None:
    """Every ``predict`` returns an (R, N) array of finite, non-negative rows summing to 1."""
    p0 = player.clone()
    spec = _player_game(p0)
    p0.reset(spec, rngs(1))
    losses = _losses(p0, spec, HORIZON)
    for j in range(HORIZON):
        p = np.asarray(p0.predict())
        if p.shape != (spec.n_replicates, spec.n_actions):
            fail(
                "check_distribution_valid",
                player,
                f"predict returned shape {p.shape} at round {j + 1}, expected "
                f"{(spec.n_replicates, spec.n_actions)}",
            )
        bad = ~np.isfinite(p).all() or (p < 0).any()
        if bad or np.abs(p.sum(axis=1) - 1).max() > SIMPLEX_TOL:
            fail("check_distribution_valid", player, f"p = {p.tolist()} at round {j + 1}")
        _update(p0, losses[:, j].copy(), p, j)


def check_predict_is_pure(player: ExpertsPlayer) -> None:
    """``predict`` changes no state and returns the same distribution when called twice."""
    p0 = player.clone()
    spec = _player_game(p0)
    p0.reset(spec, rngs(2))
    losses = _losses(p0, spec, 7)
    for j in range(7):
        _update(p0, losses[:, j].copy(), p0.predict(), j)
    before = state_copy(p0)
    first = np.array(p0.predict())
    second = np.array(p0.predict())
    after = vars(p0)
    changed = [k for k in set(before) | set(after) if not same_state(before.get(k), after.get(k))]
    if changed:
        fail("check_predict_is_pure", player, f"predict changed the state attributes {changed}")
    if not np.array_equal(first, second, equal_nan=True):
        fail("check_predict_is_pure", player, "two predict calls returned different values")


def check_update_does_not_alias_input(player: ExpertsPlayer) -> None:
    """The player never writes into the arrays it is given (``update``'s losses, ``play_block``'s
    losses and uniforms, handed read-only as the engine hands them) and keeps no reference to
    the loss array passed to ``update``."""
    name = "check_update_does_not_alias_input"
    spec = _player_game(player)
    losses = _losses(player, spec, 6, seed=3)
    p0 = player.clone()
    p0.reset(spec, rngs(3))
    for j in range(6):
        call_read_only(name, player, "update", _update, p0, losses[:, j], p0.predict(), j)
    p0 = player.clone()
    p0.reset(spec, rngs(3))
    extra = {}
    if player.tags.observes_action:
        extra["uniforms"] = np.random.default_rng(3).random(losses.shape[:2])
    call_read_only(name, player, "play_block", p0.play_block, losses, **extra)
    outs = []
    for mutate in (False, True):
        p0 = player.clone()
        p0.reset(spec, rngs(3))
        for j in range(6):
            given = losses[:, j].copy()
            _update(p0, given, p0.predict(), j)
            if mutate:
                given[...] = losses[:, (j + 1) % 6]  # still a valid loss vector
        outs.append(np.array(p0.predict()))
    if not np.allclose(outs[0], outs[1], atol=0, rtol=0):
        fail(
            "check_update_does_not_alias_input",
            player,
            "changing the loss array after update changed the next prediction (the player kept "
            "a reference to it; copy what you store)",
        )


def check_reset_restores_initial_state(player: ExpertsPlayer) -> None:
    """Resetting with the same seeds replays the same game exactly."""
    p0 = player.clone()
    spec = _player_game(p0)
    losses = _losses(p0, spec, 20, seed=4)
    runs = []
    for _ in range(2):
        p0.reset(spec, rngs(4))
        seq = []
        for j in range(20):
            seq.append(np.array(p0.predict()))
            _update(p0, losses[:, j].copy(), seq[-1], j)
        runs.append(np.stack(seq))
    if not np.array_equal(runs[0], runs[1], equal_nan=True):
        fail("check_reset_restores_initial_state", player, "a second reset replays differently")


def check_block_matches_loop(player: ExpertsPlayer) -> None:
    """``play_block`` over any split of rounds equals the predict/update loop to 1e-12."""
    from arena.sampling import sample_actions

    spec = _player_game(player, horizon=30)
    losses = _losses(player, spec, 30, seed=5)
    uniforms = np.random.default_rng(6).random((spec.n_replicates, 30))
    observes = player.tags.observes_action
    loop = player.clone()
    loop.reset(spec, rngs(5))
    expected = np.empty_like(losses)
    actions = np.empty(spec.n_replicates, dtype=np.int64)
    for j in range(30):
        p = np.ascontiguousarray(loop.predict(), dtype=np.float64)
        expected[:, j] = p
        if observes:
            sample_actions(p, uniforms[:, j].copy(), actions)
            loop.update(losses[:, j].copy(), actions=actions.copy())
        else:
            loop.update(losses[:, j].copy())
    for split in ((30,), (1, 6, 23), (13, 1, 1, 15)):
        block = player.clone()
        block.reset(spec, rngs(5))
        got, t0 = [], 0
        for n in split:
            # read-only, as the engine shows them (and one compiled specialization of a kernel)
            part = readonly_contiguous(losses[:, t0 : t0 + n])
            kwargs = {"uniforms": readonly_contiguous(uniforms[:, t0 : t0 + n])} if observes else {}
            got.append(np.asarray(block.play_block(part, **kwargs)))
            t0 += n
        got_all = np.concatenate(got, axis=1)
        err = float(np.abs(got_all - expected).max())
        if not err <= BLOCK_ATOL:
            fail(
                "check_block_matches_loop",
                player,
                f"play_block with splits {split} differs from the predict/update loop by {err:.3g}",
            )


def check_loss_range_respected(player: ExpertsPlayer) -> None:
    """Losses in a declared range ``[lo, hi]`` are played as their image in [0, 1]."""
    spec01 = _player_game(player)
    spec = GameSpec("experts", spec01.n_actions, spec01.horizon, (-1.0, 2.0), REPLICATES)
    losses = _losses(player, spec01, 15, seed=7)
    runs = []
    for sp, ls in ((spec01, losses), (spec, 3.0 * losses - 1.0)):
        p0 = player.clone()
        p0.reset(sp, rngs(7))
        seq = []
        for j in range(15):
            seq.append(np.array(p0.predict()))
            _update(p0, ls[:, j].copy(), seq[-1], j)
        runs.append(np.stack(seq))
    if not np.allclose(runs[0], runs[1], atol=1e-9, rtol=0):
        fail(
            "check_loss_range_respected",
            player,
            "losses 3l − 1 in the declared range [−1, 2] are not played like l in [0, 1] "
            "(map them with (l − lo) / (hi − lo))",
        )


def check_bounded_memory(component: Any) -> None:
    """The state does not grow with the number of rounds played (from round 200 to round 1000:
    800 rounds, so one number kept per round, 6.4 kB, is past the slack of 4 kB)."""
    if isinstance(component, ExpertsPlayer):
        spec = _player_game(component, horizon=MEMORY_HORIZON)
        p0 = component.clone()
        p0.reset(spec, rngs(8))
        losses = _losses(p0, spec, MEMORY_HORIZON, seed=8)
        sizes = []
        for t0, n in ((0, 200), (200, MEMORY_HORIZON - 200)):
            p0.play_block(readonly_contiguous(losses[:, t0 : t0 + n]), **_uniform_kwargs(p0, n))
            sizes.append(state_bytes(p0))
    else:
        adversary = component.clone()
        spec = GameSpec(
            "experts", adversary.resolve_n_actions(None), MEMORY_HORIZON, n_replicates=2
        )
        adversary.reset(spec, rngs(8, 2))
        sees = adversary.tags.sees_distribution
        history = History(2, spec.n_actions, sees, owner=_who(adversary))
        sizes = []
        for stop in (200, MEMORY_HORIZON):
            while history.t < stop:
                p = np.full((2, spec.n_actions), 1.0 / spec.n_actions)
                history._show(p)
                losses = adversary.losses(history.t + 1, history)
                history._record(p, np.asarray(losses, dtype=float), np.zeros(2, dtype=np.int64))
            sizes.append(state_bytes(adversary))
    if sizes[1] > sizes[0] + MEMORY_SLACK_BYTES:
        fail(
            "check_bounded_memory",
            component,
            f"state grew from {sizes[0]} bytes after 200 rounds to {sizes[1]} after "
            f"{MEMORY_HORIZON}",
        )


def _uniform_kwargs(player: ExpertsPlayer, n: int) -> dict[str, Any]:
    if not player.tags.observes_action:
        return {}
    return {"uniforms": readonly(np.random.default_rng(9).random((REPLICATES, n)))}


def check_declared_bounds_hold(player: ExpertsPlayer) -> None:
    """Every declared ``bound:<metric>`` dominates its metric on a few adversaries."""
    if type(player).bounds is ExpertsPlayer.bounds:
        raise SkipCheck("declares no bounds (bounds() is not overridden)")
    from arena.errors import ArenaError
    from arena.game import run_game
    from arena.metric import metric_for

    n_act = _player_game(player).n_actions
    streams = (BernoulliStream(gap=0.1), BernoulliStream(gap=0.0), AlternatingStream())
    played = 0
    for adversary in (*streams, MostLikelyLoses()):
        game = {"n_actions": n_act, "horizon": 300, "replicates": 2, "seed": 13}
        try:
            declared = run_game(player, adversary, metrics={"bound": {}}, **game).rows
        except ArenaError:
            continue  # a game the player refuses (e.g. non-binary losses)
        played += 1
        # compute exactly the metrics and params the player declares bounds for
        metrics: dict[str, Any] = {"bound": {}}
        for label, param in declared[["metric", "param"]].drop_duplicates().itertuples(index=False):
            name = label.removeprefix("bound:")
            cls = metric_for(name, "experts")  # a str: not computed here, no param
            if getattr(cls, "param_name", None) is None:
                metrics[name] = {}
            else:
                values = metrics.setdefault(name, {cls.param_name: []})[cls.param_name]
                values.append(int(param) if cls.param_name in ("k", "tau") else float(param))
        rows = run_game(player, adversary, metrics=metrics, **game).rows
        bounds = rows[rows.metric.str.startswith("bound:")]
        key = ["replicate", "t", "metric", "param"]
        merged = bounds.assign(metric=bounds.metric.str.removeprefix("bound:")).merge(
            rows, on=key, how="left", suffixes=("_bound", "")
        )
        limit = merged.value_bound + 1e-9 * np.maximum(1.0, merged.value_bound.abs())
        bad = merged[~(merged.value <= limit)]
        if not bad.empty:
            row = bad.iloc[0]
            fail(
                "check_declared_bounds_hold",
                player,
                f"{row.metric} = {row.value:.6g} exceeds its declared bound {row.value_bound:.6g} "
                f"against {adversary} at round {row.t}, replicate {row.replicate}",
            )
    if not played:
        raise SkipCheck("the player refused every partner game, so no declared bound was tested")


# ----------------------------------------------------------------------------------------------
# adversaries


def _who(adversary: Adversary) -> str:
    """The adversary as the game's errors name it (``adversary NAME repr``)."""
    from arena.validation import describe

    return describe("adversary", adversary)


def _adversary_spec(adversary: Adversary, n_rep: int = REPLICATES) -> GameSpec:
    n_act = adversary.resolve_n_actions(None)
    lo, hi = adversary.declared_range()
    return GameSpec("experts", n_act, HORIZON, (lo, hi), n_replicates=n_rep)


def _adversary_losses(adversary: Adversary, spec: GameSpec, seed: int) -> np.ndarray:
    """Play the adversary against the uniform distribution through its per-round interface."""
    adversary.reset(spec, rngs(seed, spec.n_replicates))
    history = History(
        spec.n_replicates, spec.n_actions, adversary.tags.sees_distribution, owner=_who(adversary)
    )
    out = []
    p = np.full((spec.n_replicates, spec.n_actions), 1.0 / spec.n_actions)
    for t in range(1, spec.horizon + 1):
        history._show(p)
        loss = np.array(adversary.losses(t, history), dtype=np.float64)
        out.append(loss)
        history._record(p, loss, np.zeros(spec.n_replicates, dtype=np.int64))
    return np.stack(out, axis=1)


def check_tags_match_class(adversary: Adversary) -> None:
    """The tags agree with the base class and with what the adversary reads.

    An ``AdaptiveAdversary`` is not ``oblivious``, an ``ObliviousAdversary`` is, an oblivious
    adversary never sees ``p_t``, and one that reads ``history.probs`` declares
    ``sees_distribution``. The tags decide how the arena plays and checks an adversary (an
    adversary tagged oblivious is never checked for writing to the history), so a contradiction
    would let a fault pass every other check.
    """
    tags = adversary.tags
    if isinstance(adversary, AdaptiveAdversary) and tags.oblivious:
        fail(
            "check_tags_match_class",
            adversary,
            "it subclasses AdaptiveAdversary but its tags declare oblivious=True; remove "
            "oblivious=True from its tags (AdaptiveAdversary's tags say oblivious=False), or "
            "subclass ObliviousAdversary and implement losses_block if its losses never depend "
            "on the player",
        )
    if isinstance(adversary, ObliviousAdversary) and not tags.oblivious:
        fail(
            "check_tags_match_class",
            adversary,
            "it subclasses ObliviousAdversary but its tags declare oblivious=False, so the arena "
            "plays it round by round and never calls losses_block; remove oblivious=False from "
            "its tags, or subclass AdaptiveAdversary and implement losses(t, history) if its "
            "losses react to the player",
        )
    if tags.oblivious and tags.sees_distribution:
        fail(
            "check_tags_match_class",
            adversary,
            "its tags declare oblivious=True and sees_distribution=True, but an oblivious "
            "adversary's losses are fixed before the player commits p_t; subclass "
            "AdaptiveAdversary (oblivious=False) to read history.probs, or drop "
            "sees_distribution=True",
        )
    if tags.sees_distribution:
        return
    try:
        # played exactly as the game plays it: p_t hidden unless declared
        _adversary_losses(adversary.clone(), _adversary_spec(adversary), 26)
    except UndeclaredDistributionError as exc:
        fail(
            "check_tags_match_class",
            adversary,
            f"it reads history.probs at round {exc.round} but does not declare "
            "sees_distribution=True; add sees_distribution=True to its tags "
            "(tags = AdversaryTags(sees_distribution=True))",
        )


def check_losses_valid(adversary: Adversary) -> None:
    """Losses have shape (R, N), are finite and lie in the declared range, every round."""
    a = adversary.clone()
    spec = _adversary_spec(a)
    losses = _adversary_losses(a, spec, 20)
    lo, hi = spec.loss_range
    bad = np.argwhere(~np.isfinite(losses) | (losses < lo) | (losses > hi))
    if bad.size:
        r, j, i = (int(v) for v in bad[0])
        fail(
            "check_losses_valid",
            adversary,
            f"loss {losses[r, j, i]!r} of expert {i} at round {j + 1}, replicate {r} is not a "
            f"finite number in the declared range [{lo}, {hi}]",
        )


def check_adversary_seed_determinism(adversary: Adversary) -> None:
    """The same streams give the same losses."""
    spec = _adversary_spec(adversary)
    a = _adversary_losses(adversary.clone(), spec, 21)
    b = _adversary_losses(adversary.clone(), spec, 21)
    if not np.array_equal(a, b, equal_nan=True):  # a NaN is another check's business
        fail("check_adversary_seed_determinism", adversary, "the same seeds gave other losses")


def check_block_matches_stream(adversary: Adversary) -> None:
    """``losses_block`` over any split of rounds equals the per-round losses exactly."""
    if not isinstance(adversary, ObliviousAdversary):
        raise SkipCheck("not an ObliviousAdversary: it has no losses_block")
    spec = _adversary_spec(adversary)
    per_round = _adversary_losses(adversary.clone(), spec, 22)
    for split in ((HORIZON,), (1, 9, HORIZON - 10), (17, 1, 1, HORIZON - 19)):
        a = adversary.clone()
        a.reset(spec, rngs(22))
        parts, t0 = [], 1
        for n in split:
            parts.append(np.asarray(a.losses_block(t0, n), dtype=np.float64))
            t0 += n
        got = np.concatenate(parts, axis=1)
        same = got.shape == per_round.shape and np.array_equal(got, per_round, equal_nan=True)
        if not same:
            fail(
                "check_block_matches_stream",
                adversary,
                f"losses_block with splits {split} differs from the per-round losses (draw the "
                "randomness in round order, e.g. rng.random((n, N)) per block)",
            )


def check_oblivious_is_oblivious(adversary: Adversary) -> None:
    """An adversary tagged oblivious gives the same losses to different players."""
    if not adversary.tags.oblivious:
        raise SkipCheck("tagged oblivious=False: its losses may depend on the player")
    from arena.game import run_game

    with tempfile.TemporaryDirectory() as tmp:
        seen = []
        for k, player in enumerate(_partners(adversary)):
            path = Path(tmp) / f"{k}.parquet"
            run_game(
                player,
                adversary,
                horizon=HORIZON,
                replicates=2,
                seed=23,
                metrics={"loss": {}},
                trace_path=path,
            )
            seen.append(np.stack(pd.read_parquet(path).losses.to_numpy()))
    if not np.array_equal(seen[0], seen[1], equal_nan=True):
        fail(
            "check_oblivious_is_oblivious",
            adversary,
            "tagged oblivious, but two different players saw different losses with the same seed",
        )


def check_history_is_read_only(adversary: Adversary) -> None:
    """An adaptive adversary reads the history without writing to it."""
    if adversary.tags.oblivious:
        raise SkipCheck("tagged oblivious=True: the arena shows it no history")
    a = adversary.clone()
    spec = _adversary_spec(a)
    try:
        _adversary_losses(a, spec, 24)
    except ValueError as exc:
        if "read-only" in str(exc):
            fail("check_history_is_read_only", adversary, f"it wrote to the history: {exc}")
        raise


def check_oracle_declared(adversary: Adversary) -> None:
    """Every oracle key in the tags is served with shape (R, n, N); means lie in the range."""
    if not adversary.tags.oracle:
        raise SkipCheck("declares no oracle")
    a = adversary.clone()
    spec = _adversary_spec(a)
    a.reset(spec, rngs(25))
    for key in sorted(a.tags.oracle):
        try:
            value = np.asarray(a.oracle(key, 1, 5), dtype=np.float64)
        except Exception as exc:
            fail("check_oracle_declared", adversary, f"oracle {key!r} is declared but fails: {exc}")
        shape = (spec.n_replicates, 5, spec.n_actions)
        if np.broadcast_shapes(value.shape, shape) != shape:
            fail("check_oracle_declared", adversary, f"oracle {key!r} has shape {value.shape}")
        lo, hi = spec.loss_range
        if key == "means" and not ((value >= lo) & (value <= hi)).all():
            fail("check_oracle_declared", adversary, "declared means lie outside the loss range")
    if isinstance(adversary, ObliviousAdversary) and adversary.tags.oblivious:
        _check_oracle_piecewise(adversary, spec)


def _check_oracle_piecewise(adversary: ObliviousAdversary, spec: GameSpec) -> None:
    """An oblivious adversary's oracles answer for the rounds of the chunk it drew last, asked
    whole or piece by piece in order (a chunk played across checkpoints shows its metrics one
    segment at a time: :meth:`arena.protocol.Stepper.step_span`), the same values to the bit."""
    advice = "serve any rounds of the last chunk drawn, in order"
    n_rep, n_act = spec.n_replicates, spec.n_actions
    for key in sorted(adversary.tags.oracle):
        answers = []
        for pieces in (((1, 8),), ((1, 3), (4, 2), (6, 3))):
            a = adversary.clone()
            a.reset(spec, rngs(26))
            a.losses_block(1, 8)
            try:
                parts = [
                    np.broadcast_to(
                        np.asarray(a.oracle(key, t0, n), dtype=np.float64), (n_rep, n, n_act)
                    )
                    for t0, n in pieces
                ]
            except Exception as exc:
                asked = ", ".join(f"{t0}..{t0 + n - 1}" for t0, n in pieces)
                fail(
                    "check_oracle_declared",
                    adversary,
                    f"oracle {key!r} asked for rounds {asked} after losses_block(1, 8) "
                    f"fails: {type(exc).__name__}: {exc}; {advice}",
                )
            answers.append(np.concatenate(parts, axis=1))
        if not np.array_equal(answers[0], answers[1], equal_nan=True):
            fail(
                "check_oracle_declared",
                adversary,
                f"oracle {key!r} over rounds 1..8 differs when asked as rounds 1..3, 4..5, 6..8 "
                f"after the same losses_block(1, 8): {advice}",
            )


# ----------------------------------------------------------------------------------------------
# partners


def _partners(adversary: Adversary) -> tuple[ExpertsPlayer, ExpertsPlayer]:
    """Two different players of the suite that can play any experts adversary, sleeping ones
    included (for whole-game adversary checks)."""
    return ExponentialWeights(eta=0.5), UniformPlayer()


def _pair(component: Any) -> tuple[Any, Any, dict[str, Any]]:
    game = {
        "horizon": HORIZON,
        "replicates": REPLICATES,
        "metrics": {"loss": {}, "realized_loss": {}, "regret": {}},
    }
    if isinstance(component, ExpertsPlayer):
        return (
            component,
            BernoulliStream(gap=0.2),
            {**game, "n_actions": _player_game(component).n_actions},
        )
    return _partners(component)[0], component, game


def check_rows_chunk_invariant(component: Any) -> None:
    """The rows are the same to the last bit for every chunking of the rounds (the protocol
    declares it: :attr:`ExpertsProtocol.chunk_invariant`). A player plays uniform losses in
    [0, 1] (one that takes binary losses only, its partner's {0, 1}); an adversary its partner
    player."""
    player, adversary, game = _pair(component)
    if isinstance(component, ExpertsPlayer) and not component.tags.binary_losses:
        adversary = UniformStream()
    assert_rows_chunk_invariant("check_rows_chunk_invariant", component, player, adversary, game)


CHECKS = ProtocolChecks(
    player_checks=(
        check_distribution_valid,
        check_predict_is_pure,
        check_update_does_not_alias_input,
        check_reset_restores_initial_state,
        check_block_matches_loop,
        check_loss_range_respected,
        check_bounded_memory,
        check_declared_bounds_hold,
        check_rows_chunk_invariant,
    ),
    adversary_checks=(
        check_tags_match_class,
        check_losses_valid,
        check_adversary_seed_determinism,
        check_block_matches_stream,
        check_oblivious_is_oblivious,
        check_history_is_read_only,
        check_oracle_declared,
        check_bounded_memory,
        check_rows_chunk_invariant,
    ),
    is_player=lambda component: isinstance(component, ExpertsPlayer),
    pair=_pair,
)
"""The experts protocol's part of the conformance suite (:meth:`ExpertsProtocol.conformance`)."""
