"""Bandit metrics equal their brute-force definitions on small random instances."""

from __future__ import annotations

import numpy as np
import pytest

from arena.bandit.metrics import arm_pseudo_regret_bruteforce, arm_pulls_bruteforce
from arena.bandit.testing import SimpleExp3
from arena.experts.components import ObliviousAdversary
from arena.game import run_game
from arena.spec import AdversaryTags


class RandomMeans(ObliviousAdversary):
    """Bernoulli losses whose means are drawn afresh each round (non-stationary, exposed)."""

    name = "random_means"
    tags = AdversaryTags(oblivious=True, oracle=frozenset({"means"}))

    def reset(self, spec, rngs):
        self._rngs, self._k = list(rngs), spec.n_actions
        self._means: list = []

    def losses_block(self, t0, n):
        out, means = [], []
        for rng in self._rngs:
            draws = rng.random((n, 2, self._k))  # in round order: any chunking, same losses
            mu = draws[:, 0]
            out.append((draws[:, 1] < mu).astype(float))
            means.append(mu)
        self._means.append((t0, np.stack(means)))
        return np.stack(out)

    def oracle(self, key, t0, n):
        for start, mu in self._means:
            if start <= t0 and t0 + n <= start + mu.shape[1]:
                return mu[:, t0 - start : t0 - start + n]
        raise KeyError(t0)


@pytest.mark.parametrize("seed", range(6))
def test_arm_metrics_equal_brute_force(seed, tmp_path):
    rng = np.random.default_rng(seed)
    k, horizon = int(rng.integers(2, 6)), int(rng.integers(5, 60))
    path = tmp_path / "trace.parquet"
    run = run_game(SimpleExp3(eta=float(rng.uniform(0.05, 2))), RandomMeans(), n_actions=k,
                   horizon=horizon, replicates=2, seed=seed, trace_path=path,
                   metrics=["arm_pulls", "arm_pseudo_regret", "pseudo_regret"])  # fmt: skip
    import pandas as pd

    trace = pd.read_parquet(path)
    rows = run.rows[run.rows.t == horizon]
    # the means of each round, replayed from a fresh adversary with the same streams
    from arena.game import prepare_game

    game = prepare_game(SimpleExp3(), RandomMeans(), n_actions=k, horizon=horizon, replicates=2,
                        seed=seed, metrics=["loss"])  # fmt: skip
    game.adversary.losses_block(1, horizon)
    means = game.adversary.oracle("means", 1, horizon)
    for r in range(2):
        tr = trace[trace.replicate == r].sort_values("t")
        probs, actions = np.stack(tr.probs), tr.action.to_numpy()
        for arm in range(k):
            pulls = rows[(rows.metric == "arm_pulls") & (rows.replicate == r) & (rows.param == arm)]
            assert float(pulls.value.iloc[0]) == arm_pulls_bruteforce(actions, arm)
            split = rows[
                (rows.metric == "arm_pseudo_regret") & (rows.replicate == r) & (rows.param == arm)
            ]
            want = arm_pseudo_regret_bruteforce(probs, means[r], arm)
            assert abs(float(split.value.iloc[0]) - want) <= 1e-12


def test_arm_pseudo_regret_sums_to_pseudo_regret_with_stationary_means():
    rows = run_game("exp3", "bernoulli", n_actions=5, horizon=300, replicates=3,
                    metrics=["arm_pseudo_regret", "pseudo_regret"]).rows  # fmt: skip
    for t in rows.t.unique():
        at = rows[rows.t == t]
        split = at[at.metric == "arm_pseudo_regret"].groupby("replicate").value.sum().to_numpy()
        whole = at[at.metric == "pseudo_regret"].sort_values("replicate").value.to_numpy()
        assert np.allclose(split, whole, atol=1e-12, rtol=0)


def test_arm_subset_and_bad_arm():
    from arena.errors import ConfigError

    rows = run_game("ucb1", "bernoulli", n_actions=4, horizon=20,
                    metrics={"arm_pulls": {"arms": [3, 1]}}).rows  # fmt: skip
    assert rows[(rows.t == 20) & (rows.replicate == 0)].param.tolist() == [3.0, 1.0]
    with pytest.raises(ConfigError, match=r"an arm in \[0, 3\], got 4"):
        run_game("ucb1", "bernoulli", n_actions=4, horizon=20, metrics={"arm_pulls": {"arms": [4]}})
