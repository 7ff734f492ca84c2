"""The conformance checks applied to every player and adversary (built-in or plugin).

Each ``check_*`` takes a component, works on clones of it, and raises ``AssertionError`` with a
message that names the check, the component and what is wrong; it returns None on success.
Modelled on scikit-learn's ``check_estimator`` and River's ``yield_checks`` (spec
anchors-aesthetics §3.10).
"""

from __future__ import annotations

import copy
import math
import random
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from arena.base import canonical_json
from arena.protocols import Adversary, ExpertsPlayer, ObliviousAdversary
from arena.spec import GameSpec, History, PlayerTags

Check = Callable[[Any], None]

HORIZON = 40
"""Rounds of the small games the checks play."""

REPLICATES = 3

BLOCK_ATOL = 1e-12
"""The block path must reproduce the per-round loop to this (design §6)."""

SIMPLEX_TOL = 1e-9
"""``|Σ p − 1|`` allowed (the engine's own tolerance, arena.engine.PROB_SUM_TOL)."""

MEMORY_SLACK_BYTES = 4096
"""State may grow by this much between round 200 and round 2000 (Python object overhead)."""


def _name(component: Any) -> str:
    params = ", ".join(f"{k}={v!r}" for k, v in component.get_params().items())
    return f"{type(component).__name__}({params})"


def _fail(check: str, component: Any, message: str) -> None:
    raise AssertionError(f"{check} failed for {_name(component)}: {message}")


def _rngs(seed: int, n: int = REPLICATES) -> list[np.random.Generator]:
    return [np.random.default_rng([seed, r]) for r in range(n)]


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


def _state(component: Any) -> dict[str, Any]:
    return copy.deepcopy({k: v for k, v in vars(component).items()})


def _same_state(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and bool(np.array_equal(a, b, equal_nan=True))
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_state(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same_state(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.random.Generator) and isinstance(b, np.random.Generator):
        return a.bit_generator.state == b.bit_generator.state
    if hasattr(a, "__dict__") and type(a) is type(b) and not isinstance(a, type):
        return _same_state(vars(a), vars(b))
    try:
        return bool(a == b) or (a != a and b != b)
    except (TypeError, ValueError):
        return a is b


def _state_bytes(component: Any) -> int:
    seen: set[int] = set()

    def size(obj: Any) -> int:
        if id(obj) in seen:
            return 0
        seen.add(id(obj))
        if isinstance(obj, np.ndarray):
            return obj.nbytes
        if isinstance(obj, dict):
            return sum(size(v) for v in obj.values())
        if isinstance(obj, list | tuple):
            return sum(size(v) for v in obj)
        if hasattr(obj, "__dict__") and not isinstance(obj, type | np.random.Generator):
            return size(vars(obj))
        return 8

    return size(component)


# ----------------------------------------------------------------------------------------------
# checks shared by players and adversaries


def check_init_stores_params_only(component: Any) -> None:
    """``__init__`` stores exactly its parameters under their own names, and nothing else."""
    fresh = type(component)(**component.get_params())
    names = set(type(component).param_names())
    stored = set(vars(fresh))
    if stored != names:
        extra, missing = sorted(stored - names), sorted(names - stored)
        _fail(
            "check_init_stores_params_only",
            component,
            f"__init__ must store exactly its parameters; extra attributes {extra}, "
            f"missing {missing} (build state in reset, not in __init__)",
        )


def check_clone_and_repr_roundtrip(component: Any) -> None:
    """``clone()`` and ``eval(repr(c))`` give a component with the same parameters."""
    cls = type(component)
    want = canonical_json(component.get_params())
    if canonical_json(component.clone().get_params()) != want:
        _fail("check_clone_and_repr_roundtrip", component, "clone() changed the parameters")
    namespace = {cls.__name__: cls, "nan": math.nan, "inf": math.inf}
    try:
        again = eval(repr(component), namespace)  # our own repr: parameters only
    except Exception as exc:
        _fail("check_clone_and_repr_roundtrip", component, f"repr does not evaluate: {exc}")
    if canonical_json(again.get_params()) != want:
        _fail(
            "check_clone_and_repr_roundtrip",
            component,
            f"eval(repr) gives {again.get_params()}, not {component.get_params()}",
        )


def _run_rows(player: Any, adversary: Any, **kwargs: Any):
    from arena.game import run_game

    kwargs.setdefault("horizon", HORIZON)
    kwargs.setdefault("replicates", REPLICATES)
    kwargs.setdefault("metrics", {"loss": {}, "realized_loss": {}, "regret": {}})
    return run_game(player, adversary, **kwargs).rows


# ----------------------------------------------------------------------------------------------
# players


def _reference_adversary_for(player: ExpertsPlayer):
    """A stochastic partner whose {0, 1} losses suit every player, binary-loss ones included."""
    from adversaries.stochastic import Bernoulli

    return Bernoulli(gap=0.2)


def _player_game_kwargs(player: ExpertsPlayer) -> dict[str, Any]:
    spec = _player_game(player)
    return {"n_actions": spec.n_actions}


def check_distribution_valid(player: ExpertsPlayer) -> None:
    """Every ``predict`` returns an (R, N) array of finite, non-negative rows summing to 1."""
    p0 = player.clone()
    spec = _player_game(p0)
    p0.reset(spec, _rngs(1))
    losses = _losses(p0, spec, HORIZON)
    for j in range(HORIZON):
        p = np.asarray(p0.predict())
        if p.shape != (spec.n_replicates, spec.n_actions):
            _fail(
                "check_distribution_valid",
                player,
                f"predict returned shape {p.shape} at round {j + 1}, expected "
                f"{(spec.n_replicates, spec.n_actions)}",
            )
        bad = ~np.isfinite(p).all() or (p < 0).any()
        if bad or np.abs(p.sum(axis=1) - 1).max() > SIMPLEX_TOL:
            _fail("check_distribution_valid", player, f"p = {p.tolist()} at round {j + 1}")
        _update(p0, losses[:, j].copy(), p, j)


def check_predict_is_pure(player: ExpertsPlayer) -> None:
    """``predict`` changes no state and returns the same distribution when called twice."""
    p0 = player.clone()
    spec = _player_game(p0)
    p0.reset(spec, _rngs(2))
    losses = _losses(p0, spec, 7)
    for j in range(7):
        _update(p0, losses[:, j].copy(), p0.predict(), j)
    before = _state(p0)
    first = np.array(p0.predict())
    second = np.array(p0.predict())
    after = vars(p0)
    changed = [k for k in set(before) | set(after) if not _same_state(before.get(k), after.get(k))]
    if changed:
        _fail("check_predict_is_pure", player, f"predict changed the state attributes {changed}")
    if not np.array_equal(first, second):
        _fail("check_predict_is_pure", player, "two predict calls returned different values")


def check_update_does_not_alias_input(player: ExpertsPlayer) -> None:
    """The player keeps no reference to the loss array passed to ``update``."""
    spec = _player_game(player)
    losses = _losses(player, spec, 6, seed=3)
    outs = []
    for mutate in (False, True):
        p0 = player.clone()
        p0.reset(spec, _rngs(3))
        for j in range(6):
            given = losses[:, j].copy()
            _update(p0, given, p0.predict(), j)
            if mutate:
                given[...] = losses[:, (j + 1) % 6]  # still a valid loss vector
        outs.append(np.array(p0.predict()))
    if not np.allclose(outs[0], outs[1], atol=0, rtol=0):
        _fail(
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
        p0.reset(spec, _rngs(4))
        seq = []
        for j in range(20):
            seq.append(np.array(p0.predict()))
            _update(p0, losses[:, j].copy(), seq[-1], j)
        runs.append(np.stack(seq))
    if not np.array_equal(runs[0], runs[1]):
        _fail("check_reset_restores_initial_state", player, "a second reset replays differently")


def check_block_matches_loop(player: ExpertsPlayer) -> None:
    """``play_block`` over any split of rounds equals the predict/update loop to 1e-12."""
    from arena.sampling import sample_actions

    spec = _player_game(player, horizon=30)
    losses = _losses(player, spec, 30, seed=5)
    uniforms = np.random.default_rng(6).random((spec.n_replicates, 30))
    observes = player.tags.observes_action
    loop = player.clone()
    loop.reset(spec, _rngs(5))
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
        block.reset(spec, _rngs(5))
        got, t0 = [], 0
        for n in split:
            part = np.ascontiguousarray(losses[:, t0 : t0 + n])
            kwargs = (
                {"uniforms": np.ascontiguousarray(uniforms[:, t0 : t0 + n])} if observes else {}
            )
            got.append(np.asarray(block.play_block(part, **kwargs)))
            t0 += n
        got_all = np.concatenate(got, axis=1)
        err = float(np.abs(got_all - expected).max())
        if not err <= BLOCK_ATOL:
            _fail(
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
        p0.reset(sp, _rngs(7))
        seq = []
        for j in range(15):
            seq.append(np.array(p0.predict()))
            _update(p0, ls[:, j].copy(), seq[-1], j)
        runs.append(np.stack(seq))
    if not np.allclose(runs[0], runs[1], atol=1e-9, rtol=0):
        _fail(
            "check_loss_range_respected",
            player,
            "losses 3l − 1 in the declared range [−1, 2] are not played like l in [0, 1] "
            "(map them with (l − lo) / (hi − lo))",
        )


def check_seed_determinism(component: Any) -> None:
    """The same seed gives identical rows; the rows do not depend on the batch."""
    player, adversary = _pair(component)
    a = _run_rows(player, adversary, seed=11, **_pair_kwargs(component))
    b = _run_rows(player, adversary, seed=11, **_pair_kwargs(component))
    if not a.equals(b):
        _fail("check_seed_determinism", component, "the same seed gave different results")
    alone = _run_rows(player, adversary, seed=11, replicates=[2], **_pair_kwargs(component))
    if not np.array_equal(a[a.replicate == 2].value.to_numpy(), alone.value.to_numpy()):
        _fail(
            "check_seed_determinism",
            component,
            "replicate 2 alone differs from replicate 2 in a batch of 3",
        )


def check_no_global_rng(component: Any) -> None:
    """Results do not depend on, and the game does not consume, numpy's or Python's global RNG."""
    player, adversary = _pair(component)
    rows = []
    for seed in (1, 2):
        np.random.seed(seed)  # noqa: NPY002 - deliberately perturbing the global state
        random.seed(seed)
        before = (np.random.get_state()[1].copy(), random.getstate())  # noqa: NPY002
        rows.append(_run_rows(player, adversary, seed=12, **_pair_kwargs(component)))
        after = (np.random.get_state()[1], random.getstate())  # noqa: NPY002
        if not np.array_equal(before[0], after[0]) or before[1] != after[1]:
            _fail("check_no_global_rng", component, "the game drew from the global RNG")
    if not rows[0].equals(rows[1]):
        _fail("check_no_global_rng", component, "results depend on the global RNG's seed")


def check_bounded_memory(component: Any) -> None:
    """The state does not grow with the number of rounds played."""
    if isinstance(component, ExpertsPlayer):
        spec = _player_game(component, horizon=2000)
        p0 = component.clone()
        p0.reset(spec, _rngs(8))
        losses = _losses(p0, spec, 2000, seed=8)
        sizes = []
        for t0, n in ((0, 200), (200, 1800)):
            p0.play_block(np.ascontiguousarray(losses[:, t0 : t0 + n]), **_uniform_kwargs(p0, n))
            sizes.append(_state_bytes(p0))
    else:
        adversary = component.clone()
        spec = GameSpec("experts", adversary.resolve_n_actions(None), 2000, n_replicates=2)
        adversary.reset(spec, _rngs(8, 2))
        history = History(2, spec.n_actions, adversary.tags.sees_distribution)
        sizes = []
        for stop in (200, 2000):
            while history.t < stop:
                p = np.full((2, spec.n_actions), 1.0 / spec.n_actions)
                history._show(p)
                losses = adversary.losses(history.t + 1, history)
                history._record(p, np.asarray(losses, dtype=float), np.zeros(2, dtype=np.int64))
            sizes.append(_state_bytes(adversary))
    if sizes[1] > sizes[0] + MEMORY_SLACK_BYTES:
        _fail(
            "check_bounded_memory",
            component,
            f"state grew from {sizes[0]} bytes after 200 rounds to {sizes[1]} after 2000",
        )


def _uniform_kwargs(player: ExpertsPlayer, n: int) -> dict[str, Any]:
    if not player.tags.observes_action:
        return {}
    return {"uniforms": np.random.default_rng(9).random((REPLICATES, n))}


def check_declared_bounds_hold(player: ExpertsPlayer) -> None:
    """Every declared ``bound:<metric>`` dominates its metric on a few adversaries."""
    if type(player).bounds is ExpertsPlayer.bounds:
        return
    from arena import registry
    from arena.errors import ArenaError
    from arena.game import run_game

    n_act = _player_game(player).n_actions
    for adversary in ("bernoulli", "fair_coin", "ftl_killer", "greedy"):
        game = {"n_actions": n_act, "horizon": 300, "replicates": 2, "seed": 13}
        try:
            declared = run_game(player, adversary, metrics={"bound": {}}, **game).rows
        except ArenaError:
            continue  # a game the player refuses (e.g. non-binary losses)
        # compute exactly the metrics and params the player declares bounds for
        metrics: dict[str, Any] = {"bound": {}}
        for label, param in declared[["metric", "param"]].drop_duplicates().itertuples(index=False):
            name = label.removeprefix("bound:")
            cls = registry.load("metric", name)
            if cls.param_name is None:
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
            _fail(
                "check_declared_bounds_hold",
                player,
                f"{row.metric} = {row.value:.6g} exceeds its declared bound {row.value_bound:.6g} "
                f"against {adversary} at round {row.t}, replicate {row.replicate}",
            )


# ----------------------------------------------------------------------------------------------
# adversaries


def _adversary_spec(adversary: Adversary, n_rep: int = REPLICATES) -> GameSpec:
    n_act = adversary.resolve_n_actions(None)
    lo, hi = adversary.declared_range()
    return GameSpec("experts", n_act, HORIZON, (lo, hi), n_replicates=n_rep)


def _adversary_losses(adversary: Adversary, spec: GameSpec, seed: int) -> np.ndarray:
    """Play the adversary against the uniform distribution through its per-round interface."""
    adversary.reset(spec, _rngs(seed, spec.n_replicates))
    history = History(spec.n_replicates, spec.n_actions, adversary.tags.sees_distribution)
    out = []
    p = np.full((spec.n_replicates, spec.n_actions), 1.0 / spec.n_actions)
    for t in range(1, spec.horizon + 1):
        history._show(p)
        loss = np.array(adversary.losses(t, history), dtype=np.float64)
        out.append(loss)
        history._record(p, loss, np.zeros(spec.n_replicates, dtype=np.int64))
    return np.stack(out, axis=1)


def check_losses_valid(adversary: Adversary) -> None:
    """Losses have shape (R, N), are finite and lie in the declared range, every round."""
    a = adversary.clone()
    spec = _adversary_spec(a)
    losses = _adversary_losses(a, spec, 20)
    lo, hi = spec.loss_range
    bad = np.argwhere(~np.isfinite(losses) | (losses < lo) | (losses > hi))
    if bad.size:
        r, j, i = (int(v) for v in bad[0])
        _fail(
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
    if not np.array_equal(a, b):
        _fail("check_adversary_seed_determinism", adversary, "the same seeds gave other losses")


def check_block_matches_stream(adversary: Adversary) -> None:
    """``losses_block`` over any split of rounds equals the per-round losses exactly."""
    if not isinstance(adversary, ObliviousAdversary):
        return
    spec = _adversary_spec(adversary)
    per_round = _adversary_losses(adversary.clone(), spec, 22)
    for split in ((HORIZON,), (1, 9, HORIZON - 10), (17, 1, 1, HORIZON - 19)):
        a = adversary.clone()
        a.reset(spec, _rngs(22))
        parts, t0 = [], 1
        for n in split:
            parts.append(np.asarray(a.losses_block(t0, n), dtype=np.float64))
            t0 += n
        got = np.concatenate(parts, axis=1)
        if got.shape != per_round.shape or not np.array_equal(got, per_round):
            _fail(
                "check_block_matches_stream",
                adversary,
                f"losses_block with splits {split} differs from the per-round losses (draw the "
                "randomness in round order, e.g. rng.random((n, N)) per block)",
            )


def check_oblivious_is_oblivious(adversary: Adversary) -> None:
    """An adversary tagged oblivious gives the same losses to different players."""
    if not adversary.tags.oblivious:
        return
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
            import pandas as pd

            seen.append(np.stack(pd.read_parquet(path).losses.to_numpy()))
    if not np.array_equal(seen[0], seen[1]):
        _fail(
            "check_oblivious_is_oblivious",
            adversary,
            "tagged oblivious, but two different players saw different losses with the same seed",
        )


def check_history_is_read_only(adversary: Adversary) -> None:
    """An adaptive adversary reads the history without writing to it."""
    if adversary.tags.oblivious:
        return
    a = adversary.clone()
    spec = _adversary_spec(a)
    try:
        _adversary_losses(a, spec, 24)
    except ValueError as exc:
        if "read-only" in str(exc):
            _fail("check_history_is_read_only", adversary, f"it wrote to the history: {exc}")
        raise


def check_oracle_declared(adversary: Adversary) -> None:
    """Every oracle key in the tags is served with shape (R, n, N); means lie in the range."""
    a = adversary.clone()
    spec = _adversary_spec(a)
    a.reset(spec, _rngs(25))
    for key in sorted(a.tags.oracle):
        try:
            value = np.asarray(a.oracle(key, 1, 5), dtype=np.float64)
        except Exception as exc:
            _fail(
                "check_oracle_declared", adversary, f"oracle {key!r} is declared but fails: {exc}"
            )
        shape = (spec.n_replicates, 5, spec.n_actions)
        if np.broadcast_shapes(value.shape, shape) != shape:
            _fail("check_oracle_declared", adversary, f"oracle {key!r} has shape {value.shape}")
        lo, hi = spec.loss_range
        if key == "means" and not ((value >= lo) & (value <= hi)).all():
            _fail("check_oracle_declared", adversary, "declared means lie outside the loss range")


# ----------------------------------------------------------------------------------------------
# pairing a component with a partner for whole-game checks


class _AwakeUniform(ExpertsPlayer):
    """Partner for adversaries that announce confidences: uniform over the awake experts."""

    tags = PlayerTags(supports_confidences=True)

    def __init__(self):
        pass

    def reset(self, spec: GameSpec, rngs) -> None:
        self._shape = (spec.n_replicates, spec.n_actions)

    def predict(self, confidences=None) -> np.ndarray:
        awake = np.ones(self._shape) if confidences is None else (np.asarray(confidences) > 0)
        return awake / awake.sum(axis=1, keepdims=True)

    def update(self, losses, actions=None, confidences=None) -> None:
        pass


def _partners(adversary: Adversary) -> tuple[Any, Any]:
    """Two different players that can play ``adversary`` (for whole-game adversary checks)."""
    if adversary.tags.emits_confidences:
        from players.ada_normal_hedge import AdaNormalHedge

        return AdaNormalHedge(), _AwakeUniform()
    from players.ftl import FollowTheLeader
    from players.hedge import Hedge

    return Hedge(eta=0.5), FollowTheLeader()


def _pair(component: Any) -> tuple[Any, Any]:
    if isinstance(component, ExpertsPlayer):
        return component, _reference_adversary_for(component)
    return _partners(component)[0], component


def _pair_kwargs(component: Any) -> dict[str, Any]:
    if isinstance(component, ExpertsPlayer):
        return _player_game_kwargs(component)
    return {}


PLAYER_CHECKS: tuple[Check, ...] = (
    check_init_stores_params_only,
    check_clone_and_repr_roundtrip,
    check_distribution_valid,
    check_predict_is_pure,
    check_update_does_not_alias_input,
    check_reset_restores_initial_state,
    check_block_matches_loop,
    check_loss_range_respected,
    check_seed_determinism,
    check_no_global_rng,
    check_bounded_memory,
    check_declared_bounds_hold,
)

ADVERSARY_CHECKS: tuple[Check, ...] = (
    check_init_stores_params_only,
    check_clone_and_repr_roundtrip,
    check_losses_valid,
    check_adversary_seed_determinism,
    check_block_matches_stream,
    check_oblivious_is_oblivious,
    check_history_is_read_only,
    check_oracle_declared,
    check_seed_determinism,
    check_no_global_rng,
    check_bounded_memory,
)


def yield_checks(component: Any) -> Iterator[Check]:
    """Yield the checks that apply to ``component`` (chosen by protocol base, not by name)."""
    from arena.oco.protocol import OCOAdversary, OCOPlayer
    from arena.testing import oco_checks

    shared = (check_init_stores_params_only, check_clone_and_repr_roundtrip)
    if isinstance(component, OCOPlayer):
        yield from shared
        yield from oco_checks.OCO_PLAYER_CHECKS
    elif isinstance(component, OCOAdversary):
        yield from shared
        yield from oco_checks.OCO_ADVERSARY_CHECKS
    elif isinstance(component, ExpertsPlayer):
        yield from PLAYER_CHECKS
    elif isinstance(component, Adversary):
        yield from ADVERSARY_CHECKS
    else:
        raise TypeError(f"no conformance checks for {type(component).__name__}")
