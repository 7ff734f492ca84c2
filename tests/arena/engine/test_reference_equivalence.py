"""The fast engine reproduces the literal reference loops to 1e-12.

For every registered player against every built-in adversary, in the protocol the pair plays
(:mod:`arena.experts.reference`; :mod:`arena.bandit.reference` for bandit players),
``run_game(...).rows`` (block kernels for oblivious adversaries, batched per-round loop for
adaptive ones, streaming metric kernels) must equal ``reference_play(...)`` (``predict`` /
``update`` every round, one action uniform per round, brute-force metrics from the stored
history): the same rows in the same order with the same dtypes, every non-value column exactly
and every value to 1e-12. The players of ``FULL_METRICS`` are compared on every default metric;
the others on the metrics that read what a player does (``PLAYER_METRICS``, which says why).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena import registry
from arena.errors import ArenaError, ConfigError, GameError
from arena.experts.reference import draw_action
from arena.game import reference_play, run_game
from arena.metrics.defaults import DEFAULT_METRICS

ATOL = 1e-12
"""Values are sums of at most 150 terms in [0, 1]: at most 150 in magnitude, where a float64 ulp is
3e-14. Engine and reference add in different orders (sequential kernels against numpy pairwise
sums and prefix-sum differences), which moves a value by at most a few ulps per 10 terms; the
largest difference seen is about 2e-13."""

HORIZON = 150
REPLICATES = 3
METRICS = {**DEFAULT_METRICS, "sa_regret": {"tau": [3, 10, 1000]}}
"""All default metrics; small windows so that the sliding-window kernel is exercised (τ = 1000 > T
takes the Kadane path)."""

PLAYER_METRICS = {
    name: METRICS[name]
    for name in (
        "loss",
        "realized_loss",
        "regret",
        "realized_regret",
        "pseudo_regret",
        "zero_weight_frac",
        "entropy",
        "bound",
        "lower_bound",
        "arm_pulls",
        "arm_pseudo_regret",
        "estimate_bias",
    )
}
"""The metrics that read what a player does: ``p_t`` (expected loss and regret, entropy, zero
weights), the action drawn from it (realized loss and regret, arm pulls), its declared bounds and
its own estimates. Every other metric is a function of the loss sequence and these, computed by
the engine whatever the player; the players of :data:`FULL_METRICS` check them all, on every
path the engine plays a player through, and ``test_metric_walker.py`` checks each metric's stream
against its brute force. The reference loop's brute-force metrics cost ~7× the game itself, so
the other players are compared on these: a player whose fast path differs from its readable loop
changes ``p_t`` or the action, and with it the expected loss to 1e-12."""

PLAYERS = registry.available("player")
ADVERSARIES = ["bernoulli", "fair_coin", "ftl_killer", "shifting_experts", "greedy", "replay"]
NEEDS_TWO = {"ftl_killer", "shifting_experts"}
"""Adversaries that refuse N = 1."""


def n_for(player: str, wanted: int) -> int:
    """``wanted`` clipped to the numbers of experts the player supports (its tags)."""
    tags = registry.load("player", player).tags
    return max(tags.min_actions, min(wanted, tags.max_actions or wanted))


def refused_by_design(player: str, adversary: str, n_act: int, exc: ArenaError) -> bool:
    """Whether the components' declarations predict this refusal: a player of another protocol,
    a number of experts outside the player's range or below the adversary's two, a binary-loss
    player shown a fractional loss. Any other error (a crash mid-game, a refusal nothing
    declares) is a failure, not a game to skip."""
    tags = registry.load("player", player).tags
    if isinstance(exc, ConfigError):
        if exc.parameter == "protocol":
            return registry.load("adversary", adversary).tags.protocol not in tags.protocols
        if exc.parameter == "n_actions":
            outside = not tags.min_actions <= n_act <= (tags.max_actions or n_act)
            return outside or (n_act == 1 and adversary in NEEDS_TWO)
        return False
    binary = isinstance(exc, GameError) and "needs binary losses" in str(exc)
    return binary and tags.binary_losses


def assert_same_or_both_refuse(player, adversary, run_kwargs=None, **kwargs):
    """Engine and reference agree, or both refuse a game the declarations rule out."""
    try:
        rows = run_game(player, adversary, **(run_kwargs or {}), **kwargs).rows
    except ArenaError as exc:
        path = kwargs.get("adversary_params", {}).get("path")
        n_act = kwargs["n_actions"] if path is None else np.load(path).shape[-1]
        if not refused_by_design(player, adversary, n_act, exc):
            raise
        with pytest.raises(type(exc) if isinstance(exc, ConfigError) else Exception):
            reference_play(player, adversary, **kwargs)
        return
    assert_same_rows(rows, reference_play(player, adversary, **kwargs))


@pytest.fixture(scope="module")
def replay_files(tmp_path_factory):
    """Random T×N loss matrices (uniform, with {0, 1} columns and a repeated column for ties)."""
    rng = np.random.default_rng(2024)
    folder = tmp_path_factory.mktemp("replay")
    files = {}
    for n_act in (1, 2, 3, 7):
        losses = rng.random((HORIZON, n_act))
        if n_act > 1:
            losses[:, 0] = rng.integers(0, 2, HORIZON)
            losses[:, -1] = losses[:, 0]
        path = folder / f"losses_{n_act}.npy"
        np.save(path, losses)
        files[n_act] = str(path)
    # one R×T×N file: a different matrix per replicate
    path = folder / "losses_rtn.npy"
    np.save(path, rng.integers(0, 3, (REPLICATES, HORIZON, 3)) / 2.0)
    files["rtn"] = str(path)
    return files


def game_kwargs(adversary, n_act, replay_files, **extra):
    kwargs = {
        "horizon": HORIZON,
        "replicates": REPLICATES,
        "seed": 11,
        "metrics": METRICS,
        **extra,
    }
    if adversary == "replay":
        kwargs["adversary_params"] = {
            "path": replay_files[n_act],
            **extra.get("adversary_params", {}),
        }
    else:
        kwargs["n_actions"] = n_act
    return kwargs


ESTIMATE_METRICS = frozenset({"estimate_bias"})
"""Metrics of the player's own importance-weighted estimates ``L̂_{t,i}`` (sums of ``ℓ/p``). A
compiled kernel and its readable path agree on ``p_t`` to an ulp or so (scalar ``exp`` against
numpy's), which ``1/p`` amplifies in ``L̂``; these rows are compared to 1e-12 relative to their
operands, ``|L̂_{t,i}| ≤ |value| + t`` (losses normalized to [0, 1])."""


def assert_same_rows(engine: pd.DataFrame, reference: pd.DataFrame) -> None:
    assert list(engine.columns) == list(reference.columns)
    pd.testing.assert_frame_equal(
        engine.drop(columns="value"), reference.drop(columns="value"), check_exact=True
    )
    scaled = engine.metric.isin(ESTIMATE_METRICS).to_numpy()
    tol = np.where(scaled, ATOL * (np.abs(reference["value"]) + reference["t"]), ATOL)
    a, b = engine["value"].to_numpy(), reference["value"].to_numpy()
    same = (np.abs(a - b) <= tol) | (np.isnan(a) & np.isnan(b))
    assert same.all(), f"largest difference {np.nanmax(np.abs(a - b)):.3g}"
    pd.testing.assert_frame_equal(engine[~scaled], reference[~scaled], atol=ATOL, rtol=0)


FULL_GRID = {"hedge", "ftl"}
"""Players run on the whole (adversary × N) grid; every other player on N = 3 against every
adversary plus N = 1 and N = 7 against one each, which keeps the file fast as the catalog grows."""

FULL_METRICS = FULL_GRID | {"leader", "exp3", "bandit_wrapper"}
"""Players compared on every metric of :data:`METRICS`: ``hedge`` and ``ftl`` (experts block
kernels), ``leader`` (an experts player without a block kernel: the per-round path), ``exp3`` (a
bandit block kernel) and ``bandit_wrapper`` (a bandit player without one)."""


def metrics_for(player: str) -> dict:
    """:data:`METRICS` for the players of :data:`FULL_METRICS`, else :data:`PLAYER_METRICS`."""
    return METRICS if player in FULL_METRICS else PLAYER_METRICS


SLOW_ADVERSARIES = {"fair_coin", "shifting_experts"}
"""Adversaries that the players outside :data:`FULL_GRID` meet only in ``make test-slow``: a second
stochastic oblivious stream beside ``bernoulli`` and a second deterministic one beside
``ftl_killer`` and ``replay`` (each adversary's own kernel keeps its ``test_adversary_variants``
case), which keeps ``make test`` within its 15 minutes as the catalog grows."""


def _case(player: str, adversary: str, n_act: int):
    slow = player not in FULL_GRID and adversary in SLOW_ADVERSARIES
    return pytest.param(player, adversary, n_act, marks=[pytest.mark.slow] if slow else [])


CASES = [
    _case(player, adversary, n_act)
    for player in PLAYERS
    for adversary in ADVERSARIES
    for n_act in (1, 3, 7)
    if player in FULL_GRID
    or n_act == 3
    or (n_act == 1 and adversary == "bernoulli")
    or (n_act == 7 and adversary in ("replay", "greedy"))
]


@pytest.mark.parametrize(("player", "adversary", "n_act"), CASES)
def test_engine_equals_reference(player, adversary, n_act, replay_files):
    metrics = metrics_for(player)
    kwargs = game_kwargs(adversary, n_act, replay_files, metrics=metrics)
    try:
        run = run_game(player, adversary, **kwargs)
    except ArenaError as exc:
        # a game a component refuses (another protocol's player, two-expert constructions at
        # N = 1, a two-expert player at N ≠ 2, a binary-loss player against fractional losses) is
        # refused by the reference loop too, with the same kind of error; nothing else may fail
        if not refused_by_design(player, adversary, n_act, exc):
            raise
        if player in FULL_GRID:
            assert n_act == 1 and isinstance(exc, ConfigError)
        # (the reference loop does not wrap component exceptions into GameError)
        with pytest.raises(type(exc) if isinstance(exc, ConfigError) else Exception):
            reference_play(player, adversary, **kwargs)
        return
    assert not (n_act == 1 and adversary in NEEDS_TWO), "N = 1 should have been refused"
    reference = reference_play(player, adversary, **kwargs)
    assert_same_rows(run.rows, reference)
    # declared bounds are logged as "bound:<metric>" rows, one per declared metric
    logged = {m.split(":")[0] for m in run.rows.metric}
    assert logged == {m for m in metrics if m not in run.skipped_metrics}
    assert ("pseudo_regret" in run.skipped_metrics) == (
        adversary in ("ftl_killer", "greedy", "replay")
    )


@pytest.mark.parametrize("player", PLAYERS)
def test_player_variants(player, replay_files):
    """Every parameter set a player offers for testing, against an oblivious and an adaptive game.

    (``_unit_test_params``; the main matrix above plays the default parameters only.)
    """
    cls = registry.load("player", player)
    n_act = n_for(player, 3)
    for params in cls._unit_test_params():
        for adversary in ("replay", "greedy", "bernoulli"):
            kwargs = game_kwargs(
                adversary,
                n_act,
                replay_files,
                player_params=params,
                horizon=60,
                metrics=metrics_for(player),
            )
            assert_same_or_both_refuse(player, adversary, **kwargs)


@pytest.mark.parametrize("adversary", [a for a in ADVERSARIES if a != "replay"])
def test_adversary_variants(adversary, replay_files):
    """Every parameter set an adversary offers for testing (random change points, tie rules)."""
    cls = registry.load("adversary", adversary)
    for params in cls._unit_test_params():
        kwargs = game_kwargs(adversary, 3, replay_files, adversary_params=params, horizon=80)
        assert_same_rows(
            run_game("hedge", adversary, **kwargs).rows,
            reference_play("hedge", adversary, **kwargs),
        )


@pytest.mark.parametrize("adversary", ["bernoulli", "greedy", "replay", "shifting_experts"])
@pytest.mark.parametrize("player", PLAYERS)
def test_one_round_chunks(player, adversary, replay_files):
    """``chunk_elements=1`` splits every chunk into single rounds; nothing may change."""
    kwargs = game_kwargs(
        adversary, n_for(player, 3), replay_files, horizon=60, metrics=metrics_for(player)
    )
    assert_same_or_both_refuse(player, adversary, {"chunk_elements": 1}, **kwargs)


@pytest.mark.parametrize("adversary", ["fair_coin", "greedy"])
def test_replicate_ids_and_checkpoints(adversary, replay_files):
    """Explicit global replicate indices (in a given order), custom checkpoints, another seed."""
    kwargs = game_kwargs(
        adversary,
        7,
        replay_files,
        replicates=[4, 0, 9],
        checkpoints=[7, 1, 77, 33],
        seed=123456789,
    )
    reference = reference_play("hedge", adversary, **kwargs)
    assert reference.replicate.unique().tolist() == [4, 0, 9]
    assert reference.t.unique().tolist() == [1, 7, 33, 77, HORIZON]
    assert_same_rows(run_game("hedge", adversary, chunk_elements=50, **kwargs).rows, reference)


def test_replay_per_replicate_file(replay_files):
    """An R×T×N replay file gives each replicate its own matrix, in both loops."""
    kwargs = game_kwargs("replay", "rtn", replay_files)
    for player in sorted(FULL_GRID):  # the per-replicate slicing is the adversary's business
        reference = reference_play(player, "replay", **kwargs)
        assert_same_rows(run_game(player, "replay", **kwargs).rows, reference)
        final = reference[(reference.t == HORIZON) & (reference.metric == "dynamic_regret")]
        assert final.value.nunique() > 1


def test_draw_action_matches_the_inverse_cdf():
    p = np.array([0.2, 0.0, 0.3, 0.5, 0.0])
    assert [draw_action(p, u) for u in (0.0, 0.1999, 0.2, 0.4999, 0.5, 0.9999)] == [
        0,
        0,
        2,
        2,
        3,
        3,
    ]
    # u at or above the total mass (rounding): the last expert with positive weight
    assert draw_action(p, 1.0) == 3
    assert draw_action(np.array([1.0 - 2e-16, 0.0]), 1.0 - 1e-16) == 0


def test_draw_action_agrees_with_the_engine_sampler():
    """The reference draw and the engine's compiled sampler agree on random (and tied) inputs."""
    from arena.sampling import sample_action as _sample_action

    rng = np.random.default_rng(5)
    for _ in range(2000):
        n_act = int(rng.integers(1, 6))
        p = rng.dirichlet(np.ones(n_act))
        p[rng.random(n_act) < 0.3] = 0.0
        if p.sum() == 0.0:
            p[0] = 1.0
        p /= p.sum()
        u = rng.random() if rng.random() < 0.8 else float(np.cumsum(p)[rng.integers(0, n_act)])
        assert draw_action(p, u) == _sample_action(p, u)
