"""The bandit protocol on the driver: selection, common random numbers, feedback, validation."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd
import pytest

from arena.bandit.components import BanditPlayer
from arena.bandit.testing import SimpleExp3, UniformBandit
from arena.errors import ConfigError, GameError
from arena.experts.testing import BernoulliStream, MostLikelyLoses
from arena.game import play, run_game
from arena.protocol import game_protocol
from arena.spec import GameSpec


class Recorder(BanditPlayer):
    """Uniform play that records every update's arguments (to prove what the player is handed)."""

    seen: ClassVar[list] = []

    def reset(self, spec: GameSpec, rngs) -> None:
        self._shape = (spec.n_replicates, spec.n_actions)
        Recorder.seen = []

    def predict(self) -> np.ndarray:
        return np.full(self._shape, 1.0 / self._shape[1])

    def update(self, actions, losses, probs) -> None:
        Recorder.seen.append((np.array(actions), np.array(losses), np.array(probs)))


class BadAtRound(BanditPlayer):
    """Commits an invalid distribution in replicate 1 from round ``t_bad`` on."""

    def __init__(self, t_bad: int = 7):
        self.t_bad = t_bad

    def reset(self, spec: GameSpec, rngs) -> None:
        self._shape, self._t = (spec.n_replicates, spec.n_actions), 0

    def predict(self) -> np.ndarray:
        p = np.full(self._shape, 1.0 / self._shape[1])
        if self._t + 1 >= self.t_bad:
            p[1, 0] = np.nan
        return p

    def update(self, actions, losses, probs) -> None:
        self._t += 1


def test_a_bandit_player_against_an_experts_adversary_plays_the_bandit_protocol():
    from arena import registry

    assert game_protocol(registry.make("player", "exp3"), registry.make("adversary", "greedy")) == (
        "bandit"
    )
    assert game_protocol(registry.make("player", "hedge"), BernoulliStream()) == "experts"
    run = run_game("exp3", "bernoulli", n_actions=3, horizon=50, metrics=["regret"])
    assert run.config["protocol"] == "bandit" and set(run.rows.protocol) == {"bandit"}


def test_a_bandit_player_refuses_an_oco_adversary():
    with pytest.raises(ConfigError, match="plays the oco protocol; this player plays the bandit"):
        run_game("exp3", "random_linear", horizon=10)


def test_sleeping_adversaries_are_refused():
    with pytest.raises(ConfigError, match="sleeping"):
        run_game("exp3", "sleeping", n_actions=3, horizon=10)


@pytest.mark.parametrize("adversary", ["bernoulli", "shifting_experts", "greedy"])
def test_losses_and_draws_are_those_of_the_experts_game(adversary, tmp_path):
    """Common random numbers across protocols: for the same adversary, seed and replicate, the
    bandit game's loss sequence is the experts game's, bit for bit, and a player committing the
    same p_t draws the same I_t."""
    kw = dict(n_actions=4, horizon=120, replicates=3, seed=5, metrics=["loss"])
    from arena.experts.testing import UniformPlayer

    run_game(UniformBandit(), adversary, trace_path=tmp_path / "b.parquet", **kw)
    run_game(UniformPlayer(), adversary, trace_path=tmp_path / "e.parquet", **kw)
    bandit, experts = (
        pd.read_parquet(tmp_path / "b.parquet"),
        pd.read_parquet(tmp_path / "e.parquet"),
    )
    assert np.array_equal(np.stack(bandit.losses), np.stack(experts.losses))
    assert np.array_equal(bandit.action.to_numpy(), experts.action.to_numpy())
    assert np.array_equal(np.stack(bandit.probs), np.stack(experts.probs))


def test_the_player_is_handed_only_the_drawn_arms_losses(tmp_path):
    kw = dict(n_actions=5, horizon=30, replicates=2, seed=1, metrics=["loss"])
    run_game(Recorder(), "bernoulli", trace_path=tmp_path / "t.parquet", **kw)
    trace = pd.read_parquet(tmp_path / "t.parquet").sort_values(["t", "replicate"])
    losses = np.stack(trace.losses).reshape(30, 2, 5)
    actions = trace.action.to_numpy().reshape(30, 2)
    assert len(Recorder.seen) == 30
    for t, (a, observed, p) in enumerate(Recorder.seen):
        assert a.shape == (2,) and observed.shape == (2,) and p.shape == (2, 5)
        assert np.array_equal(a, actions[t])
        assert np.array_equal(observed, losses[t, [0, 1], actions[t]])
        assert np.allclose(p, 0.2)


def test_an_adaptive_adversary_is_played_per_round():
    """MostLikelyLoses reads p_t; SimpleExp3's realized loss is always the arena's l_{t,I_t}."""
    rows = play(SimpleExp3(eta=0.5), MostLikelyLoses(), n_actions=3, horizon=60, replicates=2,
                metrics=["loss", "realized_loss", "arm_pulls"])  # fmt: skip
    last = rows[rows.t == 60]
    assert last[last.metric == "arm_pulls"].groupby("replicate").value.sum().tolist() == [60, 60]
    assert (last[last.metric == "loss"].value > 0).all()


def test_an_invalid_distribution_stops_the_game_naming_component_round_and_replicate():
    for adversary in (BernoulliStream(), MostLikelyLoses()):  # block path and per-round path
        with pytest.raises(GameError) as info:
            run_game(BadAtRound(t_bad=7), adversary, n_actions=3, horizon=20, replicates=3)
        message = str(info.value)
        assert message.startswith("player") and "BadAtRound" in message
        assert "round 7" in message and "replicate 1" in message


def test_bandit_metrics_are_skipped_in_other_protocols():
    run = run_game("hedge", "bernoulli", n_actions=3, horizon=10, metrics=["regret", "arm_pulls"])
    assert run.skipped_metrics["arm_pulls"] == "defined for the bandit protocol only, not experts"
    assert set(run.rows.metric) == {"regret"}


def test_default_metrics_of_a_bandit_game_include_every_experts_regret():
    rows = play("exp3", "bernoulli", n_actions=3, horizon=200, replicates=2)
    names = set(rows.metric)
    experts = {"loss", "realized_loss", "regret", "realized_regret", "quantile_regret",
               "shifting_regret", "adaptive_regret", "sa_regret", "dynamic_regret",
               "pseudo_regret", "zero_weight_frac", "entropy"}  # fmt: skip
    assert experts | {"arm_pulls", "arm_pseudo_regret", "bound:regret"} <= names


def test_cell_and_run_differ_from_the_experts_game_but_the_seeds_do_not():
    kw = dict(n_actions=3, horizon=10, metrics=["loss"])
    bandit = run_game(UniformBandit(), "bernoulli", **kw).config
    from arena.experts.testing import UniformPlayer

    experts = run_game(UniformPlayer(), "bernoulli", **kw).config
    assert bandit["cell"] != experts["cell"] and bandit["protocol"] == "bandit"
