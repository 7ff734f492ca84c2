"""Hardening II, class 4 (issue 28): runtime data is validated, never silently wrong.

Each test is one case of the issue, and each failed on the code before the fix: a player writing
into the losses it is shown, a weak learner predicting 7.0, an overflowing loss or metric value,
a tournament resumed over an edited replay file, an empty parameter grid, and a report of a
tournament that is still running. Games are small and played in process.
"""

from __future__ import annotations

import json
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

from arena.apps.tournament import Tournament, TournamentConfig
from arena.bandit.testing import SimpleExp3
from arena.boosting.testing import LaneSGD, LinearTargetStream, MajorityVote, ThresholdStream
from arena.errors import ArenaError, ConfigError, GameError
from arena.experts.components import AdaptiveAdversary
from arena.game import play, run_game
from arena.oco.testing import GaussianRegression
from arena.players.hedge import Hedge
from arena.players.online_bbm import OnlineBBM
from arena.results import folder_lock
from arena.spec import AdversaryTags, PlayerTags
from tests.helpers.contract import assert_refused, run_in_process

GAME = {"n_actions": 3, "horizon": 40, "replicates": 2, "metrics": {"regret": {}}}

# ----------------------------------------------------------------------------------------------
# players that write into what they are shown


class BlockZeroingHedge(Hedge):
    """Plays its block with Hedge's kernel, then zeroes the losses it was shown."""

    def play_block(self, losses, confidences=None, uniforms=None):
        probs = super().play_block(losses)
        losses[...] = 0.0
        return probs


class RoundShiftingHedge(Hedge):
    """Shifts each round's losses in place (``l −= min l``) before learning from them."""

    tags = PlayerTags(block_kernel=False)

    def update(self, losses, actions=None):
        losses -= losses.min(axis=-1, keepdims=True)
        super().update(losses)

    def play_block(self, losses, confidences=None, uniforms=None):
        return super(Hedge, self).play_block(losses)


class BlockZeroingExp3(SimpleExp3):
    """A bandit player whose block loop zeroes the whole loss table it was shown."""

    def play_block(self, losses, uniforms):
        probs = super().play_block(losses, uniforms)
        losses[...] = 0.0
        return probs


class Heaviest(AdaptiveAdversary):
    """Loss 1 on the experts that hold the most weight in ``p_t`` (an adaptive game)."""

    tags = AdversaryTags(oblivious=False, sees_distribution=True)

    def __init__(self):
        pass

    def reset(self, spec, rngs):
        self._shape = (spec.n_replicates, spec.n_actions)

    def losses(self, t, history):
        p = history.probs
        return (p >= p.max(axis=1, keepdims=True)).astype(float)


def test_a_player_that_zeroes_its_block_losses_is_stopped_naming_it_and_the_round():
    # before: the metrics read the zeroed array, and the regret came out 0.0 with exit 0
    with pytest.raises(GameError) as info:
        play(BlockZeroingHedge(eta=0.5), "bernoulli", **GAME)
    message = str(info.value)
    assert message.startswith("player BlockZeroingHedge")
    assert "play_block wrote into an array the arena hands it read-only" in message
    # the block call that wrote: its rounds (one span: every checkpoint of the game's chunk)
    assert "(rounds 1..40, replicate 0)" in message
    # the same player without the write: regret well above 0, the numbers the writer hid
    rows = play(Hedge(eta=0.5), "bernoulli", **GAME)
    assert rows[rows.t == 40].value.abs().max() > 0.5


def test_a_player_that_writes_its_round_losses_is_named_against_an_adaptive_adversary():
    with pytest.raises(GameError, match="update wrote into an array the arena hands it read-only"):
        play(RoundShiftingHedge(eta=0.5), Heaviest(), **GAME)


def test_a_bandit_player_that_zeroes_its_block_losses_is_stopped():
    with pytest.raises(GameError, match=r"player BlockZeroingExp3.*read-only.*\(rounds 1\.\."):
        play(BlockZeroingExp3(), "bernoulli", **GAME)


def test_read_only_views_change_no_result():
    # the views are the same memory: a well-behaved kernel player plays exactly as before,
    # and its inputs are given to it read-only
    seen = {}

    class Spy(Hedge):
        def play_block(self, losses, confidences=None, uniforms=None):
            seen["writeable"] = losses.flags.writeable
            return super().play_block(losses)

    spy = play(Spy(eta=0.5), "bernoulli", **GAME)
    plain = play(Hedge(eta=0.5), "bernoulli", **GAME)
    assert seen == {"writeable": False}
    assert spy.value.to_numpy().tobytes() == plain.value.to_numpy().tobytes()


WRITING_PLUGIN = textwrap.dedent(
    '''
    from arena.players.hedge import Hedge


    class NormalizingHedge(Hedge):
        """Maps the losses it is shown to [0, 1] in place before learning."""

        def play_block(self, losses, confidences=None, uniforms=None):
            losses -= losses.min()
            return super().play_block(losses)
    '''
)


def test_arena_check_fails_a_player_that_writes_into_its_inputs(tmp_path):
    (tmp_path / "writing_plugin.py").write_text(WRITING_PLUGIN)
    done = run_in_process(["check", "writing_plugin:NormalizingHedge"], tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = [ln for ln in done.stdout.splitlines() if "check_update_does_not_alias_input" in ln]
    assert lines  # one per parameter set of the class's _unit_test_params
    for line in lines:
        assert "FAIL" in line and "play_block writes into an input array" in line, line


# ----------------------------------------------------------------------------------------------
# weak learners


class SevenAtRoundFive(LaneSGD):
    """Lane 2 of replicate 1 predicts 7.0 from its fifth example on (counting its own updates)."""

    name = "seven_at_five"

    def reset(self, spec, rngs):
        super().reset(spec, rngs)
        self._fed = 0

    def predict(self, x):
        out = super().predict(x)
        if self._fed >= 4 and out.shape[1] > 2:
            out = out.copy()
            out[1, 2] = 7.0
        return out

    def update(self, x, target, weight):
        super().update(x, target, weight)
        self._fed += 1


@pytest.mark.parametrize(
    "booster", [MajorityVote(n_learners=3), OnlineBBM(n_learners=3)], ids=["vote", "online_bbm"]
)
def test_a_weak_learner_predicting_seven_is_refused_naming_it_the_round_and_replicate(booster):
    # before: the booster weighed a learner whose "label" was 7.0, and its weighted edge fell to
    # −3.2 (outside [−½, ½]) with no word
    booster = booster.clone(weak_learner=SevenAtRoundFive())
    with pytest.raises(GameError) as info:
        run_game(booster, ThresholdStream(), n_actions=2, horizon=40, replicates=3)
    message = str(info.value)
    assert message.startswith("weak learner seven_at_five")
    assert "predict gave 7.0 in lane 2, not in [−1, 1]" in message
    assert message.endswith("(round 5, replicate 1)")


def test_a_regression_weak_learner_beyond_its_bound_is_refused():
    class Loud(LaneSGD):
        name = "loud"

        def predict(self, x):
            return 3.0 * np.ones((x.shape[0], self._spec.n_lanes))

    with pytest.raises(GameError, match=r"weak learner loud.*3\.0.*\[−1, 1\].*\(round 1"):
        run_game(
            MajorityVote(n_learners=2, weak_learner=Loud()),
            LinearTargetStream(),
            horizon=20,
            replicates=2,
            metrics=["loss"],
        )


def test_valid_weak_learners_play_as_before():
    run = run_game(
        MajorityVote(n_learners=3, weak_learner=LaneSGD()),
        ThresholdStream(),
        n_actions=2,
        horizon=40,
        replicates=2,
        metrics=["mistakes", "weighted_edge"],
    )
    edges = run.rows[run.rows.metric == "weighted_edge"].value.dropna()
    assert len(edges) and edges.abs().max() <= 0.5


# ----------------------------------------------------------------------------------------------
# overflow: losses, predictions, metric values


def test_ill_conditioned_refuses_a_kappa_whose_losses_overflow(tmp_path):
    with pytest.raises(ConfigError, match=r"kappa.*\[1, 1e\+15\].*got 1e\+300"):
        play("son", "ill_conditioned", adversary_params={"kappa": 1e300}, n_actions=5, horizon=5)
    done = run_in_process(
        ["run", "player=son", "adversary=ill_conditioned", "adversary.kappa=1e300", "horizon=20"],
        tmp_path,
    )
    assert_refused(done, "adversary ill_conditioned", "kappa", "1e+15")
    assert not list(tmp_path.rglob("*.parquet"))


class HugeRegression(GaussianRegression):
    """Gaussian regression whose features are scaled by 1e100: finite data, overflowing losses."""

    name = "huge_regression"

    def __init__(self):
        super().__init__(domain="unconstrained")

    def data_block(self, t0, n):
        rd = super().data_block(t0, n)
        return rd._replace(x=rd.x * 1e100)


def test_an_overflowing_loss_stops_the_game_before_any_inf_is_written():
    # before: rows of inf losses and regrets, exit 0 (and numpy's overflow warnings)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning before the error
        with pytest.raises(GameError) as info:
            play(
                "ogd",
                HugeRegression(),
                player_params={"eta": 0.1},
                n_actions=3,
                horizon=20,
                replicates=2,
                metrics=["loss", "regret"],
            )
    message = str(info.value)
    assert message.startswith("adversary huge_regression")
    assert "the loss f_t(w_t) of player ogd = inf" in message
    assert "(round 2, replicate 0)" in message


def test_an_overflowing_boosting_loss_names_the_booster():
    class Shouting(MajorityVote):
        name = "shouting_vote"

        def play_block(self, x, y):
            return 1e200 * super().play_block(x, y)

    with pytest.raises(GameError, match=r"player shouting_vote.*squared loss.*inf.*\(round 1"):
        run_game(
            Shouting(n_learners=2),
            LinearTargetStream(),
            horizon=20,
            replicates=2,
            metrics=["loss"],
        )


def test_an_infinite_metric_value_is_never_written():
    class InfiniteBound(Hedge):
        def bounds(self, t):
            return {("regret", float("nan")): np.inf if t >= 10 else 1.0}

    with pytest.raises(GameError, match=r"metric bound:regret: value inf is not finite.*round 10"):
        play(InfiniteBound(eta=0.5), "bernoulli", **{**GAME, "metrics": ["regret", "bound"]})


# ----------------------------------------------------------------------------------------------
# tournaments: data identity, empty grids


def _replay_tournament(folder: Path, seed: int) -> TournamentConfig:
    path = folder / "losses.npy"
    np.save(path, np.random.default_rng(seed).random((100, 3)))
    return TournamentConfig.from_mapping(
        {
            "name": "replayed",
            "players": ["hedge", "ftl"],
            "adversaries": [{"name": "replay", "params": {"path": str(path)}}],
            "horizon": 50,
            "replicates": 2,
            "metrics": {"regret": {}},
        }
    )


def test_a_tournament_resumed_after_its_replay_file_changed_is_refused_naming_the_file(tmp_path):
    config = _replay_tournament(tmp_path, 0)
    out = tmp_path / "out"
    first = Tournament(config, out, executor="serial").run()
    assert len(first.finished) == 2
    (out / "parts" / f"manifest-{first.finished[1]}.json").unlink()  # as if killed mid-run
    parts = sorted(p.name for p in (out / "parts").iterdir())
    _replay_tournament(tmp_path, 1)  # the same path, other losses
    with pytest.raises(ArenaError) as info:
        Tournament(config, out, executor="serial").run()
    message = str(info.value)
    assert "\n" not in message
    assert f"replay (path {tmp_path / 'losses.npy'}) changed" in message
    assert sorted(p.name for p in (out / "parts").iterdir()) == parts  # nothing was played
    _replay_tournament(tmp_path, 0)  # the file restored: the resume plays the missing cell
    again = Tournament(config, out, executor="serial").run()
    assert (len(again.finished), len(again.skipped)) == (1, 1)


def test_an_empty_player_grid_is_refused_naming_the_component_and_parameter(tmp_path):
    mapping = {
        "name": "empty",
        "players": [{"name": "hedge", "grid": {"eta": []}}],
        "adversaries": ["bernoulli"],
        "horizon": 20,
        "replicates": 1,
    }
    with pytest.raises(ConfigError, match=r"tournament player hedge: parameter 'grid.eta'"):
        TournamentConfig.from_mapping(mapping).validate()
    (tmp_path / "empty.yaml").write_text(yaml.safe_dump(mapping))
    done = run_in_process(
        ["tournament", "--config", "empty.yaml", "executor=serial", "out=results"], tmp_path
    )
    assert_refused(done, "hedge", "grid.eta", "empty list")
    assert not (tmp_path / "results").exists()


# ----------------------------------------------------------------------------------------------
# reports of unfinished tournaments


def test_a_report_of_a_running_tournament_is_refused_or_says_it_is_partial(tmp_path):
    config = TournamentConfig.from_mapping(
        {
            "name": "nine",
            "players": ["hedge", "ftl", "ada_hedge"],
            "adversaries": ["bernoulli", "fair_coin", "greedy"],
            "n_actions": [3],
            "horizon": 30,
            "replicates": 2,
            "metrics": {"regret": {}},
        }
    )
    out = tmp_path / "out"
    Tournament(config, out, executor="serial").run()
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["cells"]) == 9
    for part in sorted((out / "parts").glob("manifest-*.json"))[:4]:
        part.unlink()  # four cells not played yet: the tournament is running
    with folder_lock(out, "arena tournament nine"):
        refused = run_in_process(["report", "out", "--name", "r"], tmp_path)
        assert_refused(refused, "tournament nine", "5 of 9 cells finished", "still running")
        assert "--partial" in refused.stderr
        assert not (tmp_path / "outputs" / "reports").exists()
        done = run_in_process(["report", "out", "--name", "r", "--partial"], tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "outputs" / "reports" / "r" / "report.md").read_text()
    assert "Partial report: tournament nine" in text
    assert "5 of 9 cells finished, 4 not yet played; still running" in text
    summary = text.index("⚠ [Unfinished tournaments](#overview): 1 (tournament nine")
    assert summary < text.index("## Overview")  # the summary, above the overview, says it too
    # interrupted (nobody holds the lock): still incomplete, and said so
    refused = run_in_process(["report", "out", "--name", "r"], tmp_path)
    assert_refused(refused, "5 of 9 cells", "interrupted")
    # finished: reported without a word about partiality
    Tournament(config, out, executor="serial").run()
    done = run_in_process(["report", "out", "--name", "r"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Partial" not in (tmp_path / "outputs" / "reports" / "r" / "report.md").read_text()
