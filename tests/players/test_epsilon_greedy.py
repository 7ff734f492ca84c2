"""ε-greedy: literal transcription, golden values, the decaying schedule, robustness and the
cost of constant exploration."""

from __future__ import annotations

import numpy as np
import pytest

from arena.game import run_game
from arena.players.epsilon_greedy import EpsilonGreedy, _counted_draw, _uniform_draw
from arena.sampling import sample_action
from arena.spec import GameSpec
from tests.helpers.bandit import draw, run_block


def literal_epsilon_greedy(losses, uniforms, epsilon=None, c=5.0, d=0.1):
    """Auer, Cesa-Bianchi & Fischer 2002, ε_n-greedy (constant ε if given), one replicate:
    p = (1 − ε) on the greedy arm (an unplayed one first) plus ε/K everywhere."""
    k = len(losses[0])
    sums, counts, out = [0.0] * k, [0] * k, []
    for t in range(1, len(losses) + 1):
        eps = min(1.0, c * k / (d * d * t)) if epsilon is None else epsilon
        if 0 in counts:
            g = counts.index(0)
        else:
            g = min(range(k), key=lambda i: (sums[i] / counts[i], i))
        p = [eps / k + (1 - eps if i == g else 0.0) for i in range(k)]
        out.append(p)
        a = draw(p, uniforms[t - 1])
        sums[a] += losses[t - 1][a]
        counts[a] += 1
    return np.array(out)


@pytest.mark.parametrize(
    ("params", "literal"),
    [({}, {}), ({"epsilon": 0.1}, {"epsilon": 0.1}), ({"epsilon": 0.0}, {"epsilon": 0.0}),
     ({"c": 0.5, "d": 0.5}, {"c": 0.5, "d": 0.5})],
)  # fmt: skip
@pytest.mark.parametrize("n_rep", [1, 3, 5])  # 5: four replicates interleaved, then one alone
def test_fast_path_equals_literal_transcription(params, literal, n_rep):
    rng = np.random.default_rng(7)
    losses, uniforms = rng.random((n_rep, 600, 5)), rng.random((n_rep, 600))
    losses[..., 4] *= 0.3
    _, fast = run_block(EpsilonGreedy(**params), losses, uniforms)
    for r in range(n_rep):
        slow = literal_epsilon_greedy(losses[r].tolist(), uniforms[r].tolist(), **literal)
        assert float(np.abs(fast[r] - slow).max()) <= 1e-12


@pytest.mark.parametrize(
    "params",
    [{}, {"c": 0.5, "d": 0.5}, {"c": 5.0, "d": 0.5}, {"epsilon": 0.1}, {"epsilon": 0.0},
     {"epsilon": 1.0}, {"epsilon": 0.3}, {"epsilon": 0.7}],
)  # fmt: skip
def test_a_replicate_alone_plays_as_beside_others(params):
    """One replicate (a chain of its own, :func:`_eg_play_alone`) writes the same ``p_t``, to the
    bit, as beside three others (interleaved, drawn by selects), over chunks of uneven lengths
    (ε_t by the rounds played before each) and with losses outside [0, 1] (mapped by the range).

    The decaying schedule's uniform rounds (ε_t = 1, drawn without the greedy arm when alone)
    end in the 3rd chunk (c = 0.5, d = 0.5: after 12 rounds), inside the 3rd (c = 5: after 120)
    or never (the defaults: 3,000); a few uniforms lie just below 1, where rounding can leave
    every running sum of ``p_t`` at or below them. Alone, the draw counts sums while ε_t ≥
    :data:`~arena.players.epsilon_greedy.COUNTED_DRAW_EPSILON` (c = 0.5, d = 0.5: from round 12
    to 39; c = 5: from 120; constant ε = 0.3 and 0.7: throughout) and exits early after."""
    rng = np.random.default_rng(11)
    n_rep, n_act, lengths = 4, 6, (1, 7, 300, 92)
    losses = 3.0 * rng.random((n_rep, sum(lengths), n_act)) - 1.0
    losses[..., 2] -= 0.5
    uniforms = rng.random((n_rep, sum(lengths)))
    uniforms[:, ::37] = np.nextafter(1.0, 0.0)

    def chunked(lo: int, hi: int) -> np.ndarray:
        spec = GameSpec("bandit", n_act, sum(lengths), (-1.5, 2.0), n_replicates=hi - lo)
        player = EpsilonGreedy(**params)
        player.reset(spec, [np.random.default_rng(r) for r in range(lo, hi)])
        out, t0 = [], 0
        for n in lengths:
            out.append(player.play_block(losses[lo:hi, t0 : t0 + n].copy(),
                                         uniforms[lo:hi, t0 : t0 + n].copy()))  # fmt: skip
            t0 += n
        return np.concatenate(out, axis=1)

    together = chunked(0, n_rep)
    for r in range(n_rep):
        assert np.array_equal(chunked(r, r + 1)[0], together[r])


@pytest.mark.parametrize("n_act", [1, 2, 3, 6, 9, 10, 49])
def test_the_uniform_draw_is_sample_action(n_act):
    """:func:`_uniform_draw` (the count of running sums at or below u) gives
    :func:`~arena.sampling.sample_action`'s arm on ``p = 1/K`` everywhere: at random uniforms,
    at each running sum, one float either side of it, 0 and the largest double below 1."""
    p = np.full(n_act, 1.0 / n_act)
    sums = np.cumsum(p)  # sequential: the sums sample_action forms
    edges = np.concatenate([sums, np.nextafter(sums, 0.0), np.nextafter(sums, 2.0)])
    us = np.concatenate([np.random.default_rng(n_act).random(500), edges,
                         [0.0, np.nextafter(1.0, 0.0)]])  # fmt: skip
    for u in us[us < 1.0]:
        assert _uniform_draw(1.0 / n_act, u, n_act) == sample_action(p, u), u


@pytest.mark.parametrize("n_act", [1, 2, 3, 9, 10])
@pytest.mark.parametrize("epsilon", [0.0, 0.3, 0.7, 1.0])
def test_the_counted_draw_is_sample_action(n_act, epsilon):
    """:func:`_counted_draw` (the count of running sums at or below u, the last positive entry
    where it is K) gives :func:`~arena.sampling.sample_action`'s arm on ε-greedy's ``p_t`` with
    every greedy arm: at random uniforms, at each running sum, one float either side of it, 0 and
    the largest double below 1."""
    share = epsilon / n_act
    top = share + (1.0 - epsilon)
    for greedy in range(n_act):
        p = np.full(n_act, share)
        p[greedy] = top
        sums = np.cumsum(p)  # sequential: the sums sample_action forms
        edges = np.concatenate([sums, np.nextafter(sums, 0.0), np.nextafter(sums, 2.0)])
        us = np.concatenate([np.random.default_rng(n_act).random(200), edges,
                             [0.0, np.nextafter(1.0, 0.0)]])  # fmt: skip
        for u in us[us < 1.0]:
            count = _counted_draw(share, top, greedy, u, n_act)
            arm = count if count < n_act else (n_act - 1 if share > 0.0 else greedy)
            assert arm == sample_action(p, u), (greedy, u)


def test_golden_values():
    """K = 2, ε = ½: round 1 (nothing pulled) favours arm 0, p = (¾, ¼), u = 0.9 draws arm 1
    (loss 1); round 2 favours the unplayed arm 0; u = 0.1 draws it (loss 0); round 3 favours
    arm 0 (mean 0 < 1)."""
    losses = np.array([[[0.0, 1.0]] * 3])
    _, p = run_block(EpsilonGreedy(epsilon=0.5), losses, np.array([[0.9, 0.1, 0.5]]))
    assert np.allclose(p[0], [[0.75, 0.25]] * 3, atol=1e-15, rtol=0)
    _, p = run_block(EpsilonGreedy(epsilon=0.5), losses, np.array([[0.1, 0.9, 0.5]]))
    # u = 0.1 draws arm 0 (loss 0); round 2 favours the unplayed arm 1: (¼, ¾)
    assert np.allclose(p[0, :2], [[0.75, 0.25], [0.25, 0.75]], atol=1e-15, rtol=0)


def test_decaying_schedule():
    """ε_t = min(1, c K / (d² t)): with c = 1, d = ½, K = 2, ε_t = min(1, 8/t)."""
    player, _ = run_block(EpsilonGreedy(c=1.0, d=0.5), np.zeros((1, 15, 2)), np.zeros((1, 15)))
    assert player.exploration() == pytest.approx(0.5)  # t = 16
    player, _ = run_block(EpsilonGreedy(c=1.0, d=0.5), np.zeros((1, 3, 2)), np.zeros((1, 3)))
    assert player.exploration() == 1.0  # t = 4


def test_a_million_rounds_stay_finite():
    run = run_game("epsilon_greedy", "bernoulli", n_actions=9, horizon=10**6, replicates=2,
                   metrics=["regret", "arm_pulls"], per_decade=1)  # fmt: skip
    assert np.isfinite(run.rows.value).all()


def test_constant_exploration_pays_linearly():
    """With constant ε and gap Δ, each round costs about ε (K − 1)/K · Δ once the greedy arm is
    the best one: the mean pseudo-regret at T = 5000 is within 20% of ε (K − 1)/K · Δ · T."""
    eps, gap, horizon = 0.2, 0.2, 5000
    rows = run_game(EpsilonGreedy(epsilon=eps), "bernoulli", n_actions=4, horizon=horizon,
                    replicates=16, seed=5, adversary_params={"gap": gap},
                    metrics=["pseudo_regret"], per_decade=1).rows  # fmt: skip
    want = eps * 3 / 4 * gap * horizon
    assert abs(rows[rows.t == horizon].value.mean() - want) <= 0.2 * want
