"""Thompson sampling (Beta-Bernoulli with the Bernoulli trick, Gaussian): literal transcription,
its posterior probabilities by hand, its own streams, robustness and the stochastic regime."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from numba import njit

from arena.game import run_game
from arena.players.thompson import BETA, Thompson, _posterior_sample
from tests.helpers.bandit import draw, run_block


def literal_thompson(losses, uniforms, rng, gaussian):
    """Agrawal & Goyal 2012, Algorithm 2 (2013, Algorithm 2 if ``gaussian``) on rewards 1 − ℓ,
    one replicate, drawing from ``rng`` as the player documents: K posterior samples in arm order
    for round 1, then per round the Bernoulli-trick uniform (Beta) and the next K samples."""
    k = len(losses[0])
    s, f, total, pulls, arms = [0] * k, [0] * k, [0.0] * k, [0] * k, []

    def sample():
        if gaussian:
            theta = [rng.normal(total[i] / (pulls[i] + 1), 1 / math.sqrt(pulls[i] + 1))
                     for i in range(k)]  # fmt: skip
        else:
            theta = [rng.beta(s[i] + 1, f[i] + 1) for i in range(k)]
        return max(range(k), key=lambda i: (theta[i], -i))

    arm = sample()
    for t in range(len(losses)):
        p = [1.0 if i == arm else 0.0 for i in range(k)]
        a = draw(p, uniforms[t])
        arms.append(a)
        reward = 1 - losses[t][a]
        pulls[a] += 1
        total[a] += reward
        if not gaussian:
            if rng.random() < reward:
                s[a] += 1
            else:
                f[a] += 1
        arm = sample()
    return arms


@pytest.mark.parametrize("prior", ["beta", "gaussian"])
def test_fast_path_equals_literal_transcription(prior):
    rng = np.random.default_rng(4)
    losses, uniforms = rng.random((3, 300, 4)), rng.random((3, 300))
    losses[..., 0] *= 0.5
    _, probs = run_block(Thompson(prior=prior), losses, uniforms)
    assert set(np.unique(probs)) <= {0.0, 1.0}
    for r in range(3):
        slow = literal_thompson(losses[r].tolist(), uniforms[r].tolist(),
                                np.random.default_rng(r), prior == "gaussian")  # fmt: skip
        assert probs[r].argmax(axis=1).tolist() == slow


def test_bernoulli_trick_counts():
    """With losses in {0, 1} the trick is exact: every pull of a loss-0 arm is a success, of a
    loss-1 arm a failure, and the Gaussian posterior sums the rewards."""
    losses = np.zeros((2, 200, 3))
    losses[..., 1] = 1.0
    player, probs = run_block(Thompson(), losses, np.zeros((2, 200)))
    pulls = probs.sum(axis=1)
    assert np.array_equal(player._successes, pulls * [1, 0, 1])
    assert np.array_equal(player._failures, pulls * [0, 1, 0])
    player, probs = run_block(Thompson(prior="gaussian"), losses, np.zeros((2, 200)))
    assert np.array_equal(player._rewards, probs.sum(axis=1) * [1, 0, 1])


@pytest.mark.parametrize(
    ("prior", "want"),
    # Beta: θ_0 ~ Beta(2, 1) (density 2x), θ_1 ~ U(0, 1): P(θ_0 > θ_1) = E[θ_0] = 2/3.
    # Gaussian: θ_0 ~ N(½, ½), θ_1 ~ N(0, 1): P(θ_0 > θ_1) = Φ(½/√1.5) = 0.6585.
    [("beta", 2 / 3), ("gaussian", NormalDist().cdf(0.5 / math.sqrt(1.5)))],
)
def test_posterior_probability_by_hand(prior, want):
    """After one pull of arm 0 with loss 0 (reward 1), the next round plays arm 0 with the
    posterior probability that it is best: 20 000 replicates, each on its own stream, |z| ≤ 4.5."""
    m = 20_000
    losses = np.zeros((m, 1, 2))
    uniforms = np.zeros((m, 1))  # draws arm 0 from any point mass on it
    player = Thompson(prior=prior)
    from arena.spec import GameSpec

    player.reset(GameSpec("bandit", 2, 2, (0.0, 1.0), n_replicates=m),
                 [np.random.default_rng([11, r]) for r in range(m)])  # fmt: skip
    player._arm[:] = 0  # round 1 pulls arm 0 in every replicate
    player.play_block(losses, uniforms)
    assert player._counts[:, 0].tolist() == [1.0] * m
    share = float((player.predict()[:, 0] == 1.0).mean())
    assert abs(share - want) <= 4.5 * math.sqrt(want * (1 - want) / m)


def test_each_replicate_has_its_own_stream():
    """Batch invariance: replicate 2 of a batch of 5 plays as when it runs alone."""
    kw = {"n_actions": 4, "horizon": 500, "metrics": ["regret", "arm_pulls"], "seed": 3}
    batch = run_game("thompson", "bernoulli", replicates=5, **kw).rows
    alone = run_game("thompson", "bernoulli", replicates=[2], **kw).rows
    got = batch[batch.replicate == 2].value.to_numpy()
    assert np.array_equal(got, alone.value.to_numpy())


@pytest.mark.parametrize("prior", ["beta", "gaussian"])
def test_a_million_rounds_stay_finite(prior):
    run = run_game(Thompson(prior=prior), "bernoulli", n_actions=9, horizon=10**6, replicates=2,
                   metrics=["regret", "arm_pulls"], per_decade=1)  # fmt: skip
    assert np.isfinite(run.rows.value).all()
    last = run.rows[(run.rows.t == 10**6) & (run.rows.metric == "arm_pulls")]
    assert last.groupby("replicate").value.sum().tolist() == [10**6, 10**6]


@pytest.mark.parametrize("prior", ["beta", "gaussian"])
def test_stochastic_regime(prior):
    """Logarithmic growth (from t = 10³ to 10⁴ the mean pseudo-regret at most doubles, √t would
    triple it) and a smaller pseudo-regret than UCB1 on the same games (paired)."""
    kw = {"n_actions": 4, "horizon": 10_000, "replicates": 16, "seed": 2, "per_decade": 1,
          "adversary_params": {"gap": 0.2}, "metrics": ["pseudo_regret"]}  # fmt: skip
    mean = run_game(Thompson(prior=prior), "bernoulli", **kw).rows.groupby("t").value.mean()
    ucb = run_game("ucb1", "bernoulli", **kw).rows.groupby("t").value.mean()
    assert mean[10_000] <= 2.0 * mean[1000]
    assert mean[10_000] < ucb[10_000]


def test_kernel_streams_are_numpys_bit_for_bit():
    """The kernel draws from each replicate's own generator exactly what numpy would: after a
    block, every generator's state equals that of the literal transcription's numpy draws (the
    same number of variates), and the arms agree round by round."""
    rng = np.random.default_rng(9)
    losses, uniforms = rng.random((3, 500, 5)), rng.random((3, 500))
    player, probs = run_block(Thompson(), losses, uniforms)
    for r in range(3):
        literal = np.random.default_rng(r)
        arms = literal_thompson(losses[r].tolist(), uniforms[r].tolist(), literal, False)
        assert probs[r].argmax(axis=1).tolist() == arms
        assert player._rngs[r].bit_generator.state == literal.bit_generator.state


@njit(cache=True)
def _beta_draws(successes, failures, n, rng):
    """``n`` posterior draws of the kernel's sampler, ``Beta(successes + 1, failures + 1)``."""
    out = np.empty(n)
    for k in range(n):
        out[k] = _posterior_sample(BETA, successes, failures, 0.0, 0.0, rng)
    return out


@pytest.mark.parametrize(("a", "b"), [(1, 1), (1, 7), (2, 5), (40, 3), (900, 1000), (5000, 12)])
def test_posterior_beta_draws_fit_the_beta_law(a, b):
    """Goodness of fit of the kernel's own sampler (:func:`_posterior_sample`, the kernel's
    :func:`_beta`): 20 000 draws of ``Beta(a, b)`` against scipy's Beta CDF by Kolmogorov–Smirnov,
    at significance 10⁻³ per parameter pair (fixed seeds: the verdict is reproducible; a sampler
    whose CDF is off by 0.014 anywhere fails at this size), and bit for bit numpy's
    ``Generator.beta`` on the same stream."""
    from scipy import stats

    x = _beta_draws(a - 1.0, b - 1.0, 20_000, np.random.default_rng(a * b))
    assert stats.kstest(x, stats.beta(a, b).cdf).pvalue > 1e-3
    assert np.array_equal(x, np.random.default_rng(a * b).beta(a, b, 20_000))  # numpy's, exactly
