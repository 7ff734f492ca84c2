"""A single-replicate game plays its chunks across checkpoints (``Stepper.step_span``).

The adversary's losses, the action uniforms and the player's ``p_t`` of a whole chunk come from
one call each; the totals and the metrics advance segment by segment, ending at each checkpoint.
The rows must be those of the same game played one round per chunk, to the bit, and a fault must
be named at its own round.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena import registry
from arena.adversaries.stochastic import Bernoulli
from arena.bandit import game as bandit_game
from arena.checkpoints import log_grid
from arena.errors import GameError
from arena.experts import game as experts_game
from arena.game import run_game
from arena.metric import Metric, computes_rowwise, reads_block_only, reads_core_only
from arena.metrics.regret import Regret
from arena.players.hedge import Hedge
from arena.players.ucb1 import UCB1

BLOCK_ONLY = {
    "regret": {},
    "loss": {},
    "realized_regret": {},
    "pseudo_regret": {},
    "dynamic_regret": {},
    "shifting_regret": {"k": [0, 2]},
    "adaptive_regret": {},
    "quantile_regret": {},
    "window_regret": {},
    "tv_variation": {},
    "tv_loss": {},
    "entropy": {},
}
"""Metrics that read only their blocks, the core and the adversary's oracles (spans allowed)."""

CORE_ONLY = {
    "regret": {},
    "loss": {},
    "realized_regret": {},
    "realized_loss": {},
    "dynamic_regret": {},
    "quantile_regret": {},
    "entropy": {},
    "zero_weight_frac": {},
    "subset_quantile_regret": {},
    "dg_score": {},
}
"""Metrics whose values are a function of the core alone: read from its snapshots at the
checkpoints of a span played in one call (``Stepper.core_snapshots``)."""


@pytest.fixture
def chunk_calls(monkeypatch):
    """Count the chunks whose losses and ``p_t`` (or arms) the experts or bandit stepper plays
    in one call (once: the bandit stepper's may call the experts stepper's)."""
    calls, inside = [], []

    def counting(play):
        def counted(self, t0, n, losses=None):
            if not inside:
                calls.append((t0, n))
            inside.append(True)
            try:
                return play(self, t0, n, losses)
            finally:
                inside.pop()

        return counted

    for stepper in (experts_game.ExpertsStepper, bandit_game.BanditStepper):
        monkeypatch.setattr(stepper, "_oblivious_play", counting(stepper._oblivious_play))
    return calls


@pytest.mark.parametrize(
    ("player", "adversary"),
    [
        ("hedge", "bernoulli"),
        ("ada_normal_hedge", "drifting_means"),
        ("ucb1", "bernoulli"),
        ("exp3", "drifting_means"),
        ("thompson", "beta"),
        ("epsilon_greedy", "shifting_experts"),
    ],
)
def test_a_span_gives_the_rows_of_one_round_per_chunk(player, adversary, chunk_calls):
    kw = dict(n_actions=5, horizon=1500, replicates=[4], seed=11, metrics=BLOCK_ONLY)
    spanned = run_game(player, adversary, **kw)
    assert len(chunk_calls) == 1  # the 1500 rounds and their 30 checkpoints in one chunk
    by_round = run_game(player, adversary, chunk_elements=1, **kw)
    assert len(chunk_calls) == 1 + 1500
    assert spanned.rows.t.nunique() > 20
    pd.testing.assert_frame_equal(spanned.rows, by_round.rows, check_exact=True)
    # and those of the same replicate beside another (R = 2: chunks end at every checkpoint)
    batch = run_game(player, adversary, **{**kw, "replicates": [3, 4]}).rows
    beside = batch[batch.replicate == 4].drop(columns=["run_id"]).reset_index(drop=True)
    alone = spanned.rows.drop(columns=["run_id"])
    pd.testing.assert_frame_equal(alone, beside, check_exact=True)


def test_a_metric_that_keeps_a_component_is_shown_whole_chunks_only(chunk_calls):
    """A metric that reads the player's state at a checkpoint must see the state of that round,
    so a game with one plays a chunk per checkpoint (as every game did before spans)."""

    class PlayerWeightSum(Metric):
        name = "player_weight_sum"
        protocols = frozenset({"experts"})

        def attach(self, player, adversary):
            self._player = player

        def values(self, core):
            return self._player.predict().sum(axis=1, keepdims=True)

    assert not reads_block_only(PlayerWeightSum()) and reads_block_only(Regret())
    kw = dict(n_actions=4, horizon=300, replicates=1, seed=2)
    metrics = [Regret(), PlayerWeightSum()]
    rows = run_game(Hedge(eta=0.3), "bernoulli", metrics=metrics, **kw).rows
    assert len(chunk_calls) == rows.t.nunique()  # one chunk per checkpoint: no span
    by_round = run_game(Hedge(eta=0.3), "bernoulli", metrics=metrics, chunk_elements=1, **kw)
    pd.testing.assert_frame_equal(rows, by_round.rows, check_exact=True)


class ArmsBadAt(UCB1):
    """UCB1 pulling arm K (no such arm) at the (round, row) pairs given."""

    def __init__(self, bad=()):
        super().__init__()
        self.bad = bad

    def reset(self, spec, rngs):
        super().reset(spec, rngs)
        self._next_round = 1

    def play_arms(self, losses, out=None):
        arms = np.array(super().play_arms(losses, out=out))
        t0, n = self._next_round, losses.shape[1]
        self._next_round += n
        for t, row in self.bad:
            if t0 <= t < t0 + n:
                arms[row, t - t0] = losses.shape[2]
        return arms


class NanBadAt(Hedge):
    """Hedge whose ``p_t`` is NaN at the (round, row) pairs given."""

    def __init__(self, bad=()):
        super().__init__(eta=0.5)
        self.bad = bad

    def reset(self, spec, rngs):
        super().reset(spec, rngs)
        self._next_round = 1

    def play_block(self, losses, confidences=None):
        probs = np.array(super().play_block(losses, confidences))
        t0, n = self._next_round, losses.shape[1]
        self._next_round += n
        for t, row in self.bad:
            if t0 <= t < t0 + n:
                probs[row, t - t0] = np.nan
        return probs


def test_a_bad_distribution_inside_a_span_is_named_at_its_round(chunk_calls):
    with pytest.raises(GameError, match=r"round 37\b") as info:
        run_game(
            NanBadAt(bad=((37, 0),)),
            "bernoulli",
            n_actions=3,
            horizon=200,
            replicates=1,
            metrics={"regret": {}},
        )
    assert "not a probability" in str(info.value)
    assert len(chunk_calls) == 1  # found inside the one chunk, at its segment


class BadLossAt500(Bernoulli):
    """Bernoulli losses, but expert 1's loss at round 500 is 7 (outside [0, 1])."""

    def losses_block(self, t0, n):
        losses = super().losses_block(t0, n)
        if t0 <= 500 < t0 + n:
            losses[:, 500 - t0, 1] = 7.0
        return losses


def test_a_bad_loss_inside_a_span_is_named_after_the_rounds_before_it(chunk_calls):
    """The rounds up to the last checkpoint before a bad loss are played first, as chunks that
    end on every checkpoint play them: a bad ``p_t`` at round 37 is named, not the loss."""
    kw = dict(n_actions=3, horizon=1000, replicates=1, metrics={"regret": {}})
    with pytest.raises(GameError, match=r"round 37\b"):
        run_game(NanBadAt(bad=((37, 0),)), BadLossAt500(), **kw)
    with pytest.raises(GameError, match=r"loss of expert 1 = 7\.0 lies outside") as info:
        run_game(Hedge(eta=0.5), BadLossAt500(), **kw)
    assert "round 500" in str(info.value)
    before = max(t for t in log_grid(1000).tolist() if t < 500)  # 398
    assert chunk_calls[-1] == (1, before)  # played up to the checkpoint before round 500


def test_a_subclass_that_keeps_a_component_is_not_block_only():
    from arena.metrics.time_varying import CompetitorVariation

    class KeepsThePlayer(CompetitorVariation):
        def attach(self, player, adversary):
            super().attach(player, adversary)
            self._player = player

    assert reads_block_only(CompetitorVariation())
    assert not reads_block_only(KeepsThePlayer())


@pytest.fixture
def core_span_calls(monkeypatch):
    """Count the spans played by ``ExpertsStepper.core_snapshots`` (the bandit stepper's too)."""
    calls = []
    core_snapshots = experts_game.ExpertsStepper.core_snapshots

    def counted(self, t0, n, ends):
        calls.append((t0, n, len(ends)))
        return core_snapshots(self, t0, n, ends)

    monkeypatch.setattr(experts_game.ExpertsStepper, "core_snapshots", counted)
    return calls


@pytest.mark.parametrize(
    ("player", "adversary"),
    [
        ("hedge", "bernoulli"),
        ("ada_normal_hedge", "drifting_means"),
        ("ucb1", "bernoulli"),
        ("moss", "shifting_experts"),
        ("exp3", "drifting_means"),
        ("thompson", "beta"),
        ("epsilon_greedy", "bernoulli"),
    ],
)
@pytest.mark.parametrize("replicates", [[4], [4, 9, 2]])
def test_metrics_of_the_core_alone_read_its_snapshots(
    player, adversary, replicates, core_span_calls, tmp_path
):
    """Every row equals, to the bit, that of the same game whose blocks are built segment by
    segment (a trace needs them): the snapshots are the totals at each checkpoint, of one
    replicate or several."""
    assert all(reads_core_only(registry.load("metric", name)()) for name in CORE_ONLY)
    kw = dict(n_actions=5, horizon=1500, replicates=replicates, seed=11, metrics=CORE_ONLY)
    snapshots = run_game(player, adversary, **kw)
    assert len(core_span_calls) == 1 and core_span_calls[0][2] > 20
    blocks = run_game(player, adversary, trace_path=tmp_path / "trace.parquet", **kw)
    assert len(core_span_calls) == 1  # a trace reads blocks: step_span
    pd.testing.assert_frame_equal(snapshots.rows, blocks.rows, check_exact=True)
    # and, at every round, those of one round per chunk
    every = {**kw, "horizon": 300, "checkpoints": "all"}
    by_round = run_game(player, adversary, chunk_elements=1, **every).rows
    pd.testing.assert_frame_equal(
        run_game(player, adversary, **every).rows, by_round, check_exact=True
    )


def test_one_block_reader_plays_the_blocks(core_span_calls):
    run_game("hedge", "bernoulli", n_actions=3, horizon=500, metrics={"regret": {}})
    assert len(core_span_calls) == 1
    metrics = {"regret": {}, "shifting_regret": {"k": [1]}}
    run_game("hedge", "bernoulli", n_actions=3, horizon=500, metrics=metrics)
    assert len(core_span_calls) == 1


def test_reads_core_only_is_what_a_metric_reads():
    from arena.metrics.shifting import ShiftingRegret

    class KeepsThePlayer(Regret):
        def attach(self, player, adversary):
            self._player = player

    class CountsItsBlocks(Regret):
        def advance(self, block, core):
            self.rounds = getattr(self, "rounds", 0) + block.losses.shape[1]

    class ReadsIncrements(Regret):
        reads_increments = True

    assert reads_core_only(Regret())
    for metric in (ShiftingRegret(), KeepsThePlayer(), CountsItsBlocks(), ReadsIncrements()):
        assert not reads_core_only(metric)


@pytest.mark.parametrize("player", [NanBadAt(bad=((37, 0),)), ArmsBadAt(bad=((37, 0),))])
def test_a_bad_play_inside_a_core_span_is_named_at_its_round(player, core_span_calls):
    with pytest.raises(GameError, match=r"round 37\b"):
        run_game(player, "bernoulli", n_actions=3, horizon=200, metrics={"regret": {}})
    assert len(core_span_calls) == 1


@pytest.mark.parametrize("make", [NanBadAt, ArmsBadAt])
def test_the_earliest_bad_play_of_any_replicate_in_a_core_span_is_named(make, core_span_calls):
    """Several replicates: the spans' kernels advance them one after another, so the first bad
    play found (row 0's, round 50) is not the earliest (row 2's, round 37); the game names the
    earliest, and the checkpoints before its segment are read first (the rows of the same game
    stopped just before it agree)."""
    with pytest.raises(GameError, match=r"round 37, replicate 7\b"):
        run_game(make(bad=((50, 0), (37, 2))), "bernoulli", n_actions=3, horizon=200,
                 replicates=[5, 6, 7], metrics={"regret": {}})  # fmt: skip
    assert len(core_span_calls) == 1


def test_a_stepper_that_advances_its_own_way_plays_its_blocks(monkeypatch, core_span_calls):
    """A subclass that changes how a segment's totals advance, without saying how a span's
    segments do, is played segment by segment: its own advance decides the totals."""

    class ShiftedLearner(bandit_game.BanditStepper):
        def _oblivious_advance(self, t0, n, probs, losses, uniforms, means_of, outputs):
            block = super()._oblivious_advance(t0, n, probs, losses, uniforms, means_of, outputs)
            self.core.learner += 0.5 * n
            return block

    monkeypatch.setattr(
        bandit_game.BanditProtocol, "start", lambda self, game: ShiftedLearner(game)
    )
    kw = dict(n_actions=3, horizon=200, replicates=1, metrics={"loss": {}})
    shifted = run_game("ucb1", "bernoulli", **kw).rows.value.iloc[-1]
    assert core_span_calls == []
    monkeypatch.undo()
    plain = run_game("ucb1", "bernoulli", **kw).rows.value.iloc[-1]
    assert shifted == plain + 100.0


class RegretOneByOne(Regret):
    """``regret``, read one checkpoint at a time (its values are not declared row by row)."""

    name = "regret_one_by_one"
    rowwise_values = False


class CountedRegret(Regret):
    """``regret``, read row by row, counting the rows each call was given."""

    name = "counted_regret"
    rowwise_values = True

    def __init__(self):
        self.rows_read = []

    def values(self, core):
        self.rows_read.append(core.cum_losses.shape[0])
        return super().values(core)


@pytest.mark.parametrize(
    ("player", "adversary"),
    [("hedge", "bernoulli"), ("ucb1", "bernoulli"), ("epsilon_greedy", "drifting_means")],
)
@pytest.mark.parametrize("replicates", [[2], [2, 5, 8]])
def test_rowwise_metrics_read_a_span_in_one_call(player, adversary, replicates, core_span_calls):
    """Every checkpoint of a span is read by one call of a row-by-row metric, on the snapshots
    stacked as replicates (R rows per checkpoint): the rows are, to the bit, those of the same
    values read one checkpoint at a time, beside a core-only metric that is not row by row (so
    each checkpoint's core is built too) and one that reads ``p_t`` (``entropy``)."""
    kw = dict(n_actions=5, horizon=700, replicates=replicates, seed=4, checkpoints="all")
    counted = CountedRegret()
    rows = run_game(player, adversary, metrics=[counted, "entropy", RegretOneByOne()], **kw).rows
    assert len(core_span_calls) == 1
    n = 700 * len(replicates)
    assert counted.rows_read == [n]  # the 700 checkpoints in one call
    assert rows.metric.value_counts().to_dict() == {
        "counted_regret": n, "entropy": n, "regret_one_by_one": n
    }  # fmt: skip
    by_row = rows[rows.metric == "counted_regret"].value.to_numpy()
    one_by_one = rows[rows.metric == "regret_one_by_one"].value.to_numpy()
    assert np.array_equal(by_row, one_by_one)
    # entropy read from the stacked p_t equals entropy read checkpoint by checkpoint
    alone = run_game(player, adversary, metrics=[EntropyOneByOne()], **kw).rows
    assert np.array_equal(rows[rows.metric == "entropy"].value.to_numpy(), alone.value.to_numpy())


class EntropyOneByOne(registry.load("metric", "entropy")):
    rowwise_values = False


def test_every_rowwise_declaration_holds():
    """Each registered metric that declares its values row by row gives, on a core of six
    replicates, the rows it gives on each replicate's core alone, to the bit (random totals,
    ties among the cumulative losses, zeros and ties in ``p_t``)."""
    from arena.metrics.base import Core
    from arena.spec import GameSpec

    rng = np.random.default_rng(8)
    n_rep, n_act = 6, 7
    core = Core(n_rep, n_act)
    core.t = 50
    core.cum_losses = rng.integers(0, 30, (n_rep, n_act)) * 0.5
    core.learner, core.realized, core.sum_min = rng.random((3, n_rep)) * 20.0
    probs = rng.random((n_rep, n_act)) * (rng.random((n_rep, n_act)) < 0.7)
    probs[:, 0] = probs[:, 1]
    core.last_probs = probs / probs.sum(axis=1, keepdims=True)
    declared = [
        name for name in registry.available("metric")
        if computes_rowwise(registry.load("metric", name)())
    ]  # fmt: skip
    assert {"regret", "loss", "quantile_regret", "entropy", "dg_score"} <= set(declared)
    for name in declared:
        metric = registry.load("metric", name)()
        metric.start(GameSpec("experts", n_act, 50, (0.0, 1.0), n_replicates=n_rep))
        together = np.asarray(metric.values(core))
        for r in range(n_rep):
            one = Core(1, n_act)
            one.t = core.t
            one.cum_losses, one.last_probs = core.cum_losses[r : r + 1], core.last_probs[r : r + 1]
            one.learner, one.realized = core.learner[r : r + 1], core.realized[r : r + 1]
            one.sum_min = core.sum_min[r : r + 1]
            assert np.array_equal(np.asarray(metric.values(one)), together[r : r + 1]), name


class InfOnceLossReaches(Regret):
    """``regret``, but +inf from the first checkpoint whose cumulative loss of expert 0 reaches
    40 (read one checkpoint at a time)."""

    name = "inf_regret"

    def values(self, core):
        return np.where(core.cum_losses[:, :1] >= 40.0, np.inf, super().values(core))


class InfOnceLossReachesRowwise(InfOnceLossReaches):
    rowwise_values = True


@pytest.mark.parametrize("replicates", [[1], [0, 1, 2]])
def test_an_infinite_value_read_in_one_call_is_named_at_its_checkpoint(replicates, core_span_calls):
    kw = dict(n_actions=3, horizon=400, replicates=replicates, seed=3, checkpoints="all")
    messages = []
    for metric in (InfOnceLossReaches(), InfOnceLossReachesRowwise()):
        with pytest.raises(GameError, match="value inf is not finite") as info:
            run_game(Hedge(eta=0.2), "bernoulli", metrics=[metric], **kw)
        messages.append(str(info.value))
    assert messages[0] == messages[1] and f"replicate {replicates[0]})" in messages[0]
    assert len(core_span_calls) == 2


def test_a_wrong_rowwise_declaration_is_named():
    class Summed(Regret):
        name = "summed_regret"
        rowwise_values = True

        def values(self, core):
            return super().values(core).sum(axis=0, keepdims=True)  # one row for them all

    with pytest.raises(ValueError, match=r"metric summed_regret: values of \d+ snapshots"):
        run_game("hedge", "bernoulli", n_actions=3, horizon=100, metrics=[Summed()])
