"""Point-mass players played as arms: the same game to the bit, errors named, p_t made on read."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import arena.bandit.game as bandit_game
import arena.experts.game as experts_game
from arena.bandit.point_masses import (
    PointMassBlock,
    first_bad_arm,
    plays_arms,
    point_mass_advance,
    point_mass_rows,
)
from arena.errors import GameError
from arena.experts.game import _checked_advance
from arena.game import run_game
from arena.metrics.base import Block
from arena.players.epsilon_greedy import EpsilonGreedy
from arena.players.thompson import Thompson
from arena.players.ucb1 import UCB1
from arena.seeding import GameStreams

POINT_MASS_PLAYERS = ["ucb1", "moss", "kl_ucb", "thompson"]
PROBS_READERS = {
    "regret": {},
    "realized_regret": {},
    "arm_pulls": {},
    "arm_pseudo_regret": {},
    "instant_pseudo_regret": {},
    "window_pseudo_regret": {},
    "entropy": {},
    "zero_weight_frac": {},
}
"""Metrics that read the block's ``p_t`` (or the core's last one) beside the totals'."""


def _game(player, tmp_path, name, *, as_arms, monkeypatch, **kwargs):
    """Rows and trace of a game, played as arms or (``as_arms=False``) as ``p_t``."""
    with monkeypatch.context() as patch:
        if not as_arms:
            patch.setattr(bandit_game, "plays_arms", lambda cls: False)
        trace = tmp_path / f"{name}.parquet"
        run = run_game(player, trace_path=trace, **kwargs)
    return run.rows, pq.read_table(trace).to_pandas()


@pytest.mark.parametrize("player", POINT_MASS_PLAYERS)
@pytest.mark.parametrize(
    ("adversary", "replicates", "metrics"),
    [
        ("bernoulli", 5, PROBS_READERS),
        ("beta", 1, PROBS_READERS),  # one replicate: the span path
        ("piecewise_stochastic", 3, None),  # the default metrics
        ("ucb_trap", 2, None),  # adaptive: the per-round loop, untouched
    ],
)
def test_arms_play_the_game_of_point_masses_to_the_bit(
    player, adversary, replicates, metrics, tmp_path, monkeypatch
):
    kwargs = {
        "adversary": adversary,
        "n_actions": 4,
        "horizon": 700,
        "replicates": replicates,
        "seed": 11,
        "metrics": metrics,
        "chunk_elements": 1000,  # several chunks between checkpoints
        "n_jobs": 1,
    }
    arms = _game(player, tmp_path, "arms", as_arms=True, monkeypatch=monkeypatch, **kwargs)
    probs = _game(player, tmp_path, "probs", as_arms=False, monkeypatch=monkeypatch, **kwargs)
    for ours, theirs in zip(arms, probs, strict=True):
        pd.testing.assert_frame_equal(ours, theirs, check_exact=True)


def test_an_oblivious_point_mass_game_draws_no_uniforms_and_plays_no_p_t(monkeypatch):
    """Nor makes the action streams (:class:`arena.seeding.GameStreams`)."""

    def refused(*args, **kwargs):
        raise AssertionError("the arms path drew uniforms, made their streams or played p_t")

    monkeypatch.setattr(experts_game, "_fill_uniforms", refused)
    monkeypatch.setattr(experts_game, "pcg64_fill", refused)
    monkeypatch.setattr(GameStreams, "actions", property(refused))
    monkeypatch.setattr(UCB1, "play_block", refused)
    monkeypatch.setattr(UCB1, "play_arms", UCB1.play_arms)  # still below play_block
    rows = run_game("ucb1", "bernoulli", n_actions=3, horizon=300, replicates=2)
    assert (rows.rows.metric == "regret").any()


def _point_mass_totals(arms, losses, path, rng, zero_row=None):
    """The totals and outputs of :func:`point_mass_advance` (``path="arms"``) or of the fused
    ``p_t`` advance on the point masses (``"probs"``), from the same starting totals (those of
    replicate ``zero_row`` −0), and whether every round was played."""
    n_rep, n, n_act = losses.shape
    totals = [np.full((n_rep, n_act), 0.5), *(np.full(n_rep, 0.25) for _ in range(3))]
    for total in totals if zero_row is not None else ():
        total[zero_row] = -0.0  # its totals keep the sign of a zero where its losses are ±0
    outs = [np.zeros((n_rep, n)), np.zeros((n_rep, n)), np.zeros((n_rep, n), np.int64)]
    if path == "arms":
        whole = point_mass_advance(arms, losses, *totals, *outs)
    else:
        uniforms = rng.random((n_rep, n))
        probs = point_mass_rows(arms, n_act)
        whole = _checked_advance(probs, losses, uniforms, *totals, *outs, 1e-9, 1e-9)
    return totals + outs, whole


@pytest.mark.parametrize("n_act", [4, 8, 9, 17])  # 8 and more: eight sums in registers
def test_the_advance_equals_the_fused_p_t_advance_to_the_bit(n_act):
    rng = np.random.default_rng(3)
    n_rep, n = 5, 60
    losses = rng.random((n_rep, n, n_act)) * 2.0 - 1.0
    losses[0, :5] = -0.0  # p_t·l_t of a point mass on a −0 loss is +0, as the p_t path sums it
    losses[1, :, ::2] = -0.0  # min_i l_{t,i} of ±0 losses: the first in arm order, −0 here
    losses[1, :, 1::2] = 0.0
    arms = rng.integers(0, n_act, (n_rep, n))
    (ours, whole), (theirs, theirs_whole) = (
        _point_mass_totals(arms, losses, path, rng, zero_row=1) for path in ("arms", "probs")
    )
    assert whole and theirs_whole
    for a, b in zip(ours, theirs, strict=True):
        assert a.tobytes() == b.tobytes()  # the bits, signs of zeros included


@pytest.mark.parametrize("n_act", [4, 9])
def test_a_bad_arm_stops_the_advance_with_the_totals_of_the_rounds_before(n_act):
    """Replicates 0 and 1 advance whole, replicate 2 up to its bad arm (round 30), the others
    not at all: each as the fused ``p_t`` advance of those rounds alone."""
    rng = np.random.default_rng(5)
    n_rep, n = 5, 60
    losses = rng.random((n_rep, n, n_act))
    arms = rng.integers(0, n_act, (n_rep, n))
    arms[2, 30] = n_act
    ours, whole = _point_mass_totals(arms, losses, "arms", rng)
    assert not whole
    played = {0: n, 1: n, 2: 30, 3: 0, 4: 0}
    for r, rounds in played.items():
        one = slice(r, r + 1)
        theirs, _ = _point_mass_totals(arms[one, :rounds], losses[one, :rounds], "probs", rng)
        assert ours[0][r].tobytes() == theirs[0][0].tobytes()  # the cumulative losses
        for k in (1, 2, 3):  # expected, realized and least losses
            assert ours[k][r] == theirs[k][0]
        for k in (4, 5, 6):  # the rounds' outputs
            assert ours[k][r, :rounds].tobytes() == theirs[k][0].tobytes()


class OutOfRangeUCB1(UCB1):
    """Pulls arm K (there is none) in round 5 of its third replicate."""

    def play_arms(self, losses, out=None):
        t0 = self._rounds
        arms = super().play_arms(losses, out=out)
        if t0 <= 4 < t0 + arms.shape[1]:
            arms[2, 4 - t0] = losses.shape[2]
        return arms


class FloatArmsUCB1(UCB1):
    def play_arms(self, losses, out=None):
        return super().play_arms(losses).astype(float)


class FailingArmsUCB1(UCB1):
    def play_arms(self, losses, out=None):
        raise ZeroDivisionError("a bug in the arms kernel")


class LossWritingUCB1(UCB1):
    def play_arms(self, losses, out=None):
        losses[0, 0, 0] = 0.0
        return super().play_arms(losses, out=out)


@pytest.mark.parametrize(
    ("player", "message", "where"),
    [
        (OutOfRangeUCB1(), r"pulled arm 3, not one of the K = 3 arms", "round 5, replicate 2"),
        (FloatArmsUCB1(), r"returned a float64 array, expected an integer array", "round 1"),
        (FailingArmsUCB1(), r"play_arms.*a bug in the arms kernel", "round"),
        (LossWritingUCB1(), r"play_arms.*read-only", "round"),
    ],
)
def test_bad_arms_stop_the_game_naming_the_player_round_and_replicate(player, message, where):
    with pytest.raises(GameError, match=message) as caught:
        run_game(player, "bernoulli", n_actions=3, horizon=50, replicates=4)
    text = str(caught.value)
    assert type(player).__name__ in text and where in text


def test_the_first_bad_arm_is_the_earliest_round_then_replicate():
    arms = np.array([[0, 1, 3], [1, -1, 0], [9, 0, 0]])
    assert first_bad_arm(arms, 3) == (2, 0)
    assert first_bad_arm(arms[:2], 3) == (1, 1)
    assert first_bad_arm(np.zeros((2, 2), dtype=np.int64), 3) is None


class OwnBlockUCB1(UCB1):
    """Replaces play_block alone: the driver must play its play_block, not the inherited arms."""

    def play_block(self, losses, uniforms, out=None):
        probs = super().play_block(losses, uniforms, out=out)
        probs[:] = 0.0
        probs[..., 0] = 1.0
        return probs


class OwnKernelUCB1(UCB1):
    """Replaces the chunk kernel of its p_t path alone: arm 0 every round."""

    def _play_kernel(self, losses, uniforms, probs):
        probs[:] = 0.0
        probs[..., 0] = 1.0
        self._counts[:, 0] += losses.shape[1]


class RedeclaredUCB1(OwnKernelUCB1):
    """Declares plays_arms again below its own kernel: played as arms (its play_arms is UCB1's,
    which the conformance check would hold to its kernel)."""

    plays_arms = True


@pytest.mark.parametrize("player_class", [OwnBlockUCB1, OwnKernelUCB1])
def test_a_subclass_with_its_own_p_t_path_is_played_through_it(player_class):
    assert not plays_arms(player_class)
    rows = run_game(player_class(), "bernoulli", n_actions=3, horizon=60, metrics=["arm_pulls"])
    pulls = rows.rows[rows.rows.t == 60].sort_values("param").value.tolist()
    assert pulls == [60.0, 0.0, 0.0]


def test_which_classes_are_played_as_arms():
    assert plays_arms(UCB1) and plays_arms(Thompson) and plays_arms(RedeclaredUCB1)
    assert not plays_arms(EpsilonGreedy)  # mixed p_t in its exploring rounds


class HugeArmUCB1(UCB1):
    """Returns unsigned arms, one of them 2⁶⁴ − 1 (which a cast to int64 would make −1)."""

    def play_arms(self, losses, out=None):
        arms = super().play_arms(losses).astype(np.uint64)
        arms[1, 0] = np.iinfo(np.uint64).max
        return arms


def test_an_unsigned_arm_past_int64_is_named_as_returned():
    with pytest.raises(GameError, match="pulled arm 18446744073709551615") as caught:
        run_game(HugeArmUCB1(), "bernoulli", n_actions=3, horizon=50, replicates=2)
    assert "round 1" in str(caught.value) and "replicate 1" in str(caught.value)


def test_a_point_mass_block_is_the_plain_block_as_a_tuple():
    actions = np.array([[2, 0]])
    zeros = np.zeros((1, 2))
    block = PointMassBlock(None, np.zeros((1, 2, 3)), zeros, zeros, actions, None, 1)
    plain = block._replace()
    assert type(plain) is Block and plain.probs is block.probs
    assert block[0] is block.probs and block._asdict()["probs"] is block.probs
    assert block._replace(probs=np.ones((1, 2, 3))).probs.sum() == 6.0


def test_a_point_mass_block_builds_its_p_t_once_when_read():
    actions = np.array([[2, 0, 1]])
    zeros = np.zeros((1, 3))
    block = PointMassBlock(None, np.zeros((1, 3, 3)), zeros, zeros, actions, None, 1)
    assert "_probs" not in block.__dict__
    probs = block.probs
    assert block.probs is probs and not probs.flags.writeable
    np.testing.assert_array_equal(probs[0], np.eye(3)[[2, 0, 1]])
