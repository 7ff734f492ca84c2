"""The bandit stepper's fast path: fused check and core, kept buffers, uniforms drawn in numba,
and the kernels' interleaved replicates, each equal to the code it replaces to the last bit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena.bandit.components import BanditPlayer
from arena.errors import GameError
from arena.experts.components import PROB_NEG_TOL, PROB_SUM_TOL
from arena.experts.game import _checked_advance, _core_advance, _fill_uniforms, _first_bad_probs
from arena.game import run_game
from arena.players.moss import _moss_bonus, _moss_play_arms, moss_bonus_table
from arena.registry import load
from arena.spec import GameSpec
from arena.streams import generator_handles, jit_disabled


def _totals(n_rep, n, n_act):
    return (
        np.zeros((n_rep, n_act)),
        np.zeros(n_rep),
        np.zeros(n_rep),
        np.zeros(n_rep),
        np.full((n_rep, n), np.nan),
        np.full((n_rep, n), np.nan),
        np.full((n_rep, n), -1, dtype=np.int64),
    )


def _hostile_valid_probs(rng, n_rep, n, n_act):
    """Valid p_t that exercise every branch of the draw: point masses, trailing zeros, entries a
    hair below 0 and sums a hair off 1 (within the driver's tolerances)."""
    probs = rng.random((n_rep, n, n_act))
    probs /= probs.sum(axis=-1, keepdims=True)
    kind = rng.integers(0, 5, (n_rep, n))
    for r, j in zip(*np.nonzero(kind == 0), strict=True):  # point mass
        probs[r, j] = 0.0
        probs[r, j, rng.integers(n_act)] = 1.0
    for r, j in zip(*np.nonzero(kind == 1), strict=True):  # zeros after the last positive entry
        probs[r, j, n_act // 2 :] = 0.0
        probs[r, j] /= probs[r, j].sum()
    probs[kind == 2, 0] -= 0.5 * PROB_NEG_TOL  # slightly negative, still allowed
    probs[kind == 3] *= 1.0 - 0.5 * PROB_SUM_TOL  # sums a little below 1: u may exceed them all
    return probs


@pytest.mark.parametrize("seed", range(4))
def test_the_fused_kernel_equals_the_check_and_the_core_kernel(seed):
    rng = np.random.default_rng(seed)
    n_rep, n, n_act = 5, 300, 6
    probs = _hostile_valid_probs(rng, n_rep, n, n_act)
    losses = rng.random((n_rep, n, n_act))
    losses[..., 1] = np.round(losses[..., 1])
    uniforms = rng.random((n_rep, n))
    # uniforms on the cumulative sums themselves, and above every sum (the last positive arm)
    cums = np.cumsum(probs, axis=-1)
    uniforms[:, ::7] = cums[:, ::7, n_act // 3]
    uniforms[:, 3::11] = np.nextafter(1.0, 0.0)
    assert _first_bad_probs(probs, PROB_NEG_TOL, PROB_SUM_TOL)[0] == 0
    old, new = _totals(n_rep, n, n_act), _totals(n_rep, n, n_act)
    _core_advance(probs, losses, uniforms, *old)
    assert _checked_advance(probs, losses, uniforms, *new, PROB_NEG_TOL, PROB_SUM_TOL)
    for a, b in zip(old, new, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "bad",
    [np.nan, np.inf, -np.inf, -2 * PROB_NEG_TOL, "sum_high", "sum_low"],
    ids=["nan", "inf", "-inf", "negative", "sum_high", "sum_low"],
)
def test_the_fused_kernel_stops_exactly_where_the_check_fails(bad):
    rng = np.random.default_rng(1)
    n_rep, n, n_act = 3, 40, 4
    probs = np.full((n_rep, n, n_act), 1.0 / n_act)
    if bad == "sum_high":
        probs[2, 17, 3] += 3 * PROB_SUM_TOL
    elif bad == "sum_low":
        probs[2, 17, 3] -= 3 * PROB_SUM_TOL
    else:
        probs[2, 17, 1] = bad
    losses, uniforms = rng.random((n_rep, n, n_act)), rng.random((n_rep, n))
    assert _first_bad_probs(probs, PROB_NEG_TOL, PROB_SUM_TOL)[0] != 0
    assert not _checked_advance(probs, losses, uniforms, *_totals(n_rep, n, n_act), 1e-9, 1e-9)
    probs[2, 17] = 1.0 / n_act  # the same chunk repaired passes both
    assert _first_bad_probs(probs, PROB_NEG_TOL, PROB_SUM_TOL)[0] == 0
    assert _checked_advance(probs, losses, uniforms, *_totals(n_rep, n, n_act), 1e-9, 1e-9)


def test_uniforms_drawn_in_numba_are_the_generators_own_draws():
    ours = [np.random.default_rng([7, r]) for r in range(3)]
    theirs = [np.random.default_rng([7, r]) for r in range(3)]
    handles = generator_handles(ours)
    for n in (5, 1, 64):
        out = np.empty((3, n))
        _fill_uniforms(handles, ours if jit_disabled() else None, out)
        expected = np.stack([g.random(n) for g in theirs])
        np.testing.assert_array_equal(out, expected)
    for a, b in zip(ours, theirs, strict=True):  # the states advanced in place, alike
        assert a.random() == b.random()


class BadInLaterChunk(BanditPlayer):
    """A kernel-style player that fills ``out`` and breaks one entry of round ``t_bad``."""

    play_block_out = True

    def __init__(self, t_bad: int = 150):
        self.t_bad = t_bad

    def reset(self, spec: GameSpec, rngs) -> None:
        self._shape, self._t = (spec.n_replicates, spec.n_actions), 0

    def predict(self) -> np.ndarray:
        return np.full(self._shape, 1.0 / self._shape[1])

    def update(self, actions, losses, probs) -> None:
        self._t += 1

    def play_block(self, losses, uniforms, out=None):
        n = losses.shape[1]
        out[:] = 1.0 / self._shape[1]
        if self._t < self.t_bad <= self._t + n:
            out[2, self.t_bad - self._t - 1, 1] = -0.25
        self._t += n
        return out


def test_a_bad_distribution_in_a_kept_buffer_is_caught_and_named():
    with pytest.raises(GameError) as info:
        kw = dict(n_actions=4, horizon=400, replicates=4, chunk_elements=97)
        run_game(BadInLaterChunk(), "bernoulli", **kw)
    message = str(info.value)
    assert message.startswith("player") and "BadInLaterChunk" in message
    assert "round 150" in message and "replicate 2" in message
    assert "p[1] = " in message and "-0.25" in message and "is not a probability" in message


class NoOutUCB1(load("player", "ucb1")):
    """A subclass that overrides ``play_block`` without ``out``: it must still be played."""

    def play_block(self, losses, uniforms):
        return super().play_block(losses, uniforms)


def test_a_subclass_without_out_is_played_without_it():
    kw = dict(n_actions=3, horizon=200, replicates=3, metrics={"regret": {}})
    ours = run_game(NoOutUCB1(), "bernoulli", **kw).rows
    theirs = run_game("ucb1", "bernoulli", **kw).rows
    np.testing.assert_array_equal(ours.value.to_numpy(), theirs.value.to_numpy())


def test_a_class_whose_play_block_is_replaced_after_a_game_is_asked_again(monkeypatch):
    """Whether a player fills ``out`` is read once per ``play_block`` function, not per class:
    a test that patches the class after a game must not be handed ``out``."""
    ucb1 = load("player", "ucb1")
    kw = dict(n_actions=3, horizon=50, replicates=2, metrics={"regret": {}})
    before = run_game("ucb1", "bernoulli", **kw).rows
    play = ucb1.play_block

    def without_out(self, losses, uniforms):
        return play(self, losses, uniforms)

    monkeypatch.setattr(ucb1, "play_block", without_out)
    after = run_game("ucb1", "bernoulli", **kw).rows
    np.testing.assert_array_equal(before.value.to_numpy(), after.value.to_numpy())


@pytest.mark.parametrize("player", ["ucb1", "moss", "epsilon_greedy", "exp3", "thompson"])
def test_rows_do_not_depend_on_the_chunking(player):
    """Kept buffers are reused by chunks of every length; the rows are the same to the bit."""
    kw = dict(
        n_actions=5,
        horizon=700,
        replicates=6,
        seed=4,
        metrics={"regret": {}, "pseudo_regret": {}, "arm_pulls": {}, "adaptive_regret": {}},
    )
    base = run_game(player, "bernoulli", **kw).rows
    for chunk_elements in (31, 500, 4096):
        rows = run_game(player, "bernoulli", chunk_elements=chunk_elements, **kw).rows
        pd.testing.assert_frame_equal(rows, base, check_exact=True)


@pytest.mark.parametrize("player", ["ucb1", "moss", "epsilon_greedy", "kl_ucb"])
@pytest.mark.parametrize("n_rep", [1, 3, 6, 9])
def test_interleaved_kernels_equal_the_per_round_loop(player, n_rep):
    """Every replicate group size (the kernels advance replicates four at a time): the kernel's
    p_t equal the readable predict / draw / update loop's to the last bit, and so do the states."""
    horizon, n_act = 120, 4
    rng = np.random.default_rng(n_rep)
    losses = np.round(rng.random((n_rep, horizon, n_act)), 1)
    uniforms = rng.random((n_rep, horizon))
    spec = GameSpec("bandit", n_act, horizon, (0.0, 1.0), n_replicates=n_rep)
    cls = load("player", player)
    fast, slow = cls(), cls()
    fast.reset(spec, [np.random.default_rng(r) for r in range(n_rep)])
    slow.reset(spec, [np.random.default_rng(r) for r in range(n_rep)])
    out = np.full((n_rep, 50, n_act), np.nan)
    got = [
        fast.play_block(losses[:, :50].copy(), uniforms[:, :50].copy(), out=out).copy(),
        fast.play_block(losses[:, 50:].copy(), uniforms[:, 50:].copy()),
    ]
    expected = BanditPlayer.play_block(slow, losses, uniforms)
    np.testing.assert_array_equal(np.concatenate(got, axis=1), expected)
    np.testing.assert_array_equal(fast._sums, slow._sums)
    np.testing.assert_array_equal(fast._counts, slow._counts)


def test_the_moss_bonus_table_is_the_kernels_expression_and_its_end_is_exact():
    horizon, n_act = 1000.0, 4
    table = moss_bonus_table(horizon, n_act)
    assert table.size == 252
    for k in range(1, table.size):
        assert table[k] == _moss_bonus(float(k), horizon, n_act)
    assert table[250] == 0.0 and table[249] > 0.0  # ln(T / (K n)) ≤ 0 from n = T/K on
    # counts past a (short) table fall back to the expression: the same arms and state
    rng = np.random.default_rng(0)
    losses = rng.random((3, 400, n_act))
    runs = []
    for bonus in (table, table[:5]):
        sums, counts = np.zeros((3, n_act)), np.zeros((3, n_act))
        arms = np.empty((3, 400), dtype=np.int64)
        _moss_play_arms(losses, sums, counts, horizon, bonus, 0.0, 1.0, arms)
        runs.append((arms, sums, counts))
    for a, b in zip(*runs, strict=True):
        np.testing.assert_array_equal(a, b)
