"""The ``tv_regret`` metric (Luo 2016, §2.3.3, Theorem 7) equals its brute-force definition.

The kernel is driven with hand-built chunks of random histories and random nonnegative
competitors (point masses, mixtures, zero rows, vectors that are not distributions), split at
random points, and through the engine against an adversary declaring the ``competitor`` oracle;
every value is compared with the literal loops of the metrics' references. Chunking must
not change a single bit. The losses-only family (best competitor of variation ≤ V) is checked
against a linear program.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena.errors import GameError
from arena.experts.components import ObliviousAdversary
from arena.game import prepare_game, run_game
from arena.metrics import time_varying
from arena.metrics.base import Block, Core
from arena.metrics.shifting import shifting_opt
from arena.metrics.time_varying import (
    CompetitorExcessLoss,
    CompetitorVariation,
    TimeVaryingRegret,
    best_variation_regret,
    theorem7_bound,
)
from arena.spec import AdversaryTags, GameSpec
from tests.helpers import metric_table, read_trace

ATOL = 1e-12
"""Values are sums of at most 60 rounds of N ≤ 5 terms, each at most 3 in magnitude (competitor
entries ≤ 3, losses and ``ℓ̂`` in [0, 1]), so at most ~900 but in practice below 200, where an ulp
is 3e-14; the kernel adds sequentially and the brute force by numpy's pairwise sums, a few ulps
apart. Observed differences are below 1e-13."""

LP_ATOL = 1e-7
"""HiGHS solves the variation LP to its default feasibility/optimality tolerances (1e-7)."""


def random_competitor(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Nonnegative u of shape (R, T, N) mixing point-mass runs, mixtures, zeros and scaled rows."""
    n_rep, horizon, n_act = shape
    u = np.zeros(shape)
    t = 0
    while t < horizon:
        run = int(rng.integers(1, 8))
        kind = int(rng.integers(4))
        sl = slice(t, min(horizon, t + run))
        if kind == 0:  # a point mass held over the run
            u[:, sl, :] = np.eye(n_act)[rng.integers(n_act, size=n_rep)][:, None, :]
        elif kind == 1:  # a fresh distribution every round
            u[:, sl, :] = rng.dirichlet(np.ones(n_act), size=(n_rep, sl.stop - sl.start))
        elif kind == 2:  # arbitrary heights (the thesis allows any u ≥ 0)
            u[:, sl, :] = 3.0 * rng.random((n_rep, sl.stop - sl.start, n_act))
        # kind 3: zero rows
        t = sl.stop
    return u


def drive(metrics, probs, losses, competitor, ends, player=None):
    """Feed a (R, T, N) history to the metrics in chunks ending at ``ends``; return
    ``{t: values (R, columns of every metric side by side)}``."""
    n_rep, horizon, n_act = losses.shape
    spec = GameSpec("experts", n_act, horizon, n_replicates=n_rep)

    class Source:
        def oracle(self, key, t0, n):
            assert key == "competitor"
            return competitor[:, t0 - 1 : t0 - 1 + n]

    for m in metrics:
        m.attach(player, Source())
        m.start(spec)
    core = Core(n_rep, n_act)
    snaps, t0 = {}, 1
    for end in ends:
        sl = slice(t0 - 1, end)
        p, lo = np.ascontiguousarray(probs[:, sl]), np.ascontiguousarray(losses[:, sl])
        expected = (p * lo).sum(axis=2)
        core.t = end
        actions = np.zeros(expected.shape, dtype=np.int64)
        for m in metrics:
            m.advance(Block(p, lo, expected, expected, actions, None, t0), core)
        snaps[end] = np.concatenate([m.values(core) for m in metrics], axis=1)
        t0 = end + 1
    return snaps


def three():
    return [TimeVaryingRegret(), CompetitorVariation(), CompetitorExcessLoss()]


def random_ends(rng, horizon):
    cuts = rng.choice(np.arange(1, horizon + 1), size=int(rng.integers(0, min(horizon, 9))))
    return sorted({*cuts.tolist(), horizon})


@pytest.mark.parametrize("seed", range(4))
def test_kernel_equals_bruteforce_and_chunking_changes_no_bit(seed):
    rng = np.random.default_rng(seed)
    n_rep, horizon, n_act = (int(rng.integers(1, k)) for k in (4, 61, 6))
    losses = rng.random((n_rep, horizon, n_act))
    if seed % 2:
        losses = np.round(losses)  # ties: ℓ_{t,i} = ℓ̂_t exactly in some rounds
    probs = rng.dirichlet(np.full(n_act, 0.7), size=(n_rep, horizon))
    u = random_competitor(rng, losses.shape)
    snaps = drive(three(), probs, losses, u, random_ends(rng, horizon))
    for t, values in snaps.items():
        for r in range(n_rep):
            want = [
                time_varying.tv_regret(probs[r, :t], losses[r, :t], u[r, :t]),
                time_varying.tv_variation(u[r, :t]),
                time_varying.tv_loss(probs[r, :t], losses[r, :t], u[r, :t]),
            ]
            np.testing.assert_allclose(values[r], want, rtol=0, atol=ATOL)
    # another split, and one round per chunk: the same bits at the shared checkpoint T
    for ends in (random_ends(rng, horizon), list(range(1, horizon + 1))):
        again = drive(three(), probs, losses, u, ends)
        np.testing.assert_array_equal(again[horizon], snaps[horizon])


def test_bound_column_is_theorem7_of_the_declared_constant():
    class Declares:
        def interval_regret_constant(self, t):
            return np.full(2, 0.5 * t)

    rng = np.random.default_rng(9)
    losses, probs = rng.random((2, 30, 3)), rng.dirichlet(np.ones(3), size=(2, 30))
    u = random_competitor(rng, losses.shape)
    plain = drive(three(), probs, losses, u, [7, 30])
    metric = TimeVaryingRegret()
    bounded = drive([metric], probs, losses, u, [7, 30], player=Declares())
    assert metric.row_keys(None)[1][0] == "bound:tv_regret"
    assert [k for k, _ in TimeVaryingRegret().row_keys(None)] == ["tv_regret"]  # no player
    for t in (7, 30):
        np.testing.assert_array_equal(bounded[t][:, 0], plain[t][:, 0])
        a_v = 0.5 * t * plain[t][:, 1]
        want = a_v / 2 + np.sqrt(a_v**2 / 4 + 2 * a_v * plain[t][:, 2])
        np.testing.assert_allclose(bounded[t][:, 1], want, rtol=1e-15, atol=0)
    assert float(theorem7_bound(1.0, 2.0, 0.0)) == 2.0  # no excess loss: A·V


# ----------------------------------------------------------------------------------------------
# through the engine


class RandomCompetitor(ObliviousAdversary):
    """Uniform losses and a random nonnegative competitor, both drawn per round in round order."""

    name = "random_competitor"
    tags = AdversaryTags(oblivious=True, oracle=frozenset({"competitor"}))

    def __init__(self, negative_at: int = 0):
        self.negative_at = negative_at

    def reset(self, spec, rngs):
        self._rngs, self._n = list(rngs), spec.n_actions
        self._u: dict[int, np.ndarray] = {}

    def losses_block(self, t0, n):
        draws = np.stack([rng.random((n, 2, self._n)) for rng in self._rngs])
        u = np.where(draws[:, :, 1] < 0.4, 0.0, 2.0 * draws[:, :, 1])
        if t0 <= self.negative_at < t0 + n:
            u[-1, self.negative_at - t0, 0] = -0.5
        self._u[t0] = u
        return draws[:, :, 0]

    def oracle(self, key, t0, n):
        if key != "competitor":
            return super().oracle(key, t0, n)
        return self._u[t0][:, :n]


def test_engine_rows_equal_bruteforce_from_the_trace(tmp_path):
    horizon, n_act, n_rep = 40, 4, 2
    kw = dict(n_actions=n_act, horizon=horizon, replicates=n_rep, seed=4,
              metrics={"tv_regret": {}, "tv_variation": {}, "tv_loss": {}})  # fmt: skip
    path = tmp_path / "trace.parquet"
    rows = run_game("hedge", RandomCompetitor(), trace_path=path, chunk_elements=24, **kw).rows
    other = run_game("hedge", RandomCompetitor(), chunk_elements=10**6, **kw).rows
    pd.testing.assert_frame_equal(rows, other, check_exact=True)  # chunking changes no bit
    tr = read_trace(path)
    game = prepare_game("hedge", RandomCompetitor(), **kw)
    game.adversary.losses_block(1, horizon)
    u = game.adversary.oracle("competitor", 1, horizon)
    probs, losses = tr["probs"], tr["losses"]
    for name, brute in (
        ("tv_regret", lambda r, t: time_varying.tv_regret(probs[r, :t], losses[r, :t], u[r, :t])),
        ("tv_variation", lambda r, t: time_varying.tv_variation(u[r, :t])),
        ("tv_loss", lambda r, t: time_varying.tv_loss(probs[r, :t], losses[r, :t], u[r, :t])),
    ):
        ts, values = metric_table(rows, name)
        want = [[brute(r, int(t)) for t in ts] for r in range(n_rep)]
        np.testing.assert_allclose(values, want, rtol=0, atol=ATOL)
    assert not rows.metric.str.startswith("bound:").any()  # hedge declares no interval constant


def test_a_negative_competitor_stops_the_game_naming_round_and_replicate():
    with pytest.raises(GameError, match=r"random_competitor.*nonnegative.*round 13, replicate 1"):
        run_game("hedge", RandomCompetitor(negative_at=13), n_actions=3, horizon=20,
                 replicates=2, metrics={"tv_regret": {}})  # fmt: skip


def test_skipped_without_a_declared_competitor():
    run = run_game("hedge", "bernoulli", n_actions=3, horizon=10, metrics=["regret", "tv_regret"])
    assert run.skipped_metrics["tv_regret"] == "adversary exposes no competitor"


def test_shifting_experts_declares_its_segment_path():
    """u_t is the segment's best expert: V = k + 1 exactly, and no k-switch path does better."""
    kw = dict(n_actions=4, horizon=300, replicates=3, seed=1,
              adversary_params={"n_switches": 3, "change_points": "random"})  # fmt: skip
    game = prepare_game("hedge", "shifting_experts", metrics=["loss"], **kw)
    u = game.adversary.oracle("competitor", 1, 300)
    mu = game.adversary.oracle("means", 1, 300)
    np.testing.assert_array_equal(u.argmax(axis=2), mu.argmin(axis=2))
    assert (u.sum(axis=2) == 1).all()
    rows = run_game("hedge", "shifting_experts",
                    metrics={"tv_regret": {}, "tv_variation": {}, "shifting_regret": {"k": [3]}},
                    **kw).rows  # fmt: skip
    _, variation = metric_table(rows, "tv_variation")
    assert (variation[:, -1] == 4.0).all()
    _, tv = metric_table(rows, "tv_regret")
    _, shifting = metric_table(rows, "shifting_regret", 3.0)
    assert (tv <= shifting + 1e-9).all()


def test_drifting_means_declares_the_expert_of_least_mean():
    for params in ({}, {"mode": "sinusoid", "period": 50.0}):
        game = prepare_game("hedge", "drifting_means", n_actions=5, horizon=200, replicates=2,
                            adversary_params=params, metrics=["loss"])  # fmt: skip
        mu = game.adversary.oracle("means", 1, 200)
        u = game.adversary.oracle("competitor", 1, 200)
        np.testing.assert_array_equal(u, np.eye(5)[mu.argmin(axis=2)])


# ----------------------------------------------------------------------------------------------
# the losses-only family: best competitor of variation ≤ V


def test_best_variation_regret_is_the_envelope_of_shifting_regrets():
    """``max {R(u): V(u) ≤ V}`` over sequences of distributions (a linear program) equals the
    upper concave envelope of the k-switch regrets at k = V − 1 (module docstring)."""
    rng = np.random.default_rng(11)
    for trial in range(12):
        horizon, n_act = int(rng.integers(1, 8)), int(rng.integers(1, 4))
        losses = rng.random((horizon, n_act))
        if trial % 2:
            losses = np.round(losses)
        probs = rng.dirichlet(np.ones(n_act), size=horizon)
        hat = float((probs * losses).sum())
        shifting = [hat - shifting_opt(losses, k) for k in range(horizon)]
        for budget in (1.0, 1.3, 2.0, 2.5, 3.7, float(horizon), horizon + 2.0):
            lp = time_varying.best_variation_regret_lp(probs, losses, budget)
            assert abs(best_variation_regret(shifting, budget) - lp) <= LP_ATOL, (trial, budget)
    with pytest.raises(ValueError, match="variation ≥ 1"):
        best_variation_regret([0.0], 0.5)
    assert math.isfinite(best_variation_regret([0.0, 1.0], 1.0))


# ----------------------------------------------------------------------------------------------
# from the command line and in a tournament


def test_cli_run_and_tournament_log_the_rows(tmp_path):
    from tests.helpers.contract import run_in_process

    done = run_in_process(
        ["run", "player=ada_normal_hedge_tv", "adversary=shifting_experts", "n_actions=3",
         "horizon=60", "replicates=2", "metrics=[regret,tv_regret]", "progress=false",
         "hydra.run.dir=one"], tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = pd.read_parquet(tmp_path / "one" / "results.parquet")
    names = {"regret", "tv_regret", "tv_variation", "tv_loss", "bound:tv_regret"}  # the yaml
    assert set(rows.metric) == names
    assert (rows[rows.metric == "tv_variation"].value[rows.t == 60] == 4.0).all()

    config = {
        "name": "tv", "players": ["hedge", {"name": "ada_normal_hedge_tv",
                                            "params": {"starts": "geometric"}}],
        "adversaries": ["shifting_experts", "bernoulli"], "n_actions": [3], "horizon": 40,
        "replicates": 2, "seed": 1, "metrics": {"regret": {}, "tv_regret": {}, "tv_loss": {}},
    }  # fmt: skip
    import yaml

    (tmp_path / "tv.yaml").write_text(yaml.safe_dump(config))
    done = run_in_process(
        ["tournament", "--config", "tv.yaml", "executor=serial", "out=results", "progress=false"],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    parts = (tmp_path / "results" / "parts").glob("*.parquet")
    rows = pd.concat(pd.read_parquet(p) for p in parts)
    tv = rows[rows.metric.str.contains("tv_")]
    assert set(tv.adversary) == {"shifting_experts"}  # bernoulli declares no competitor
    bounded = set(tv[tv.metric == "bound:tv_regret"].player)
    assert bounded == {"ada_normal_hedge_tv"} and set(tv.player) == {"hedge", "ada_normal_hedge_tv"}
