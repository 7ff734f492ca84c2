"""Tests of the heavier-half adaptive adversary (arena/adversaries/adaptive.py; the greedy
adversary's mixed-player analogue)."""

from __future__ import annotations

import numpy as np
import pytest

from arena import GameSpec, play
from arena.adversaries.adaptive import HeavierHalf
from arena.errors import ConfigError
from arena.params import validate_params
from arena.players.ftl import FollowTheLeader
from arena.spec import History
from tests.helpers import read_trace, rngs


def hit(adv: HeavierHalf, p: np.ndarray, t: int = 1) -> np.ndarray:
    history = History(p.shape[0], p.shape[1], sees_distribution=True)
    history._show(p)
    return adv.losses(t, history)


def test_hits_the_smallest_heavy_prefix():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.full(9, 0.4), size=200)
    p[:20, 3] = p[:20, 5]  # some exact ties
    p /= p.sum(axis=1, keepdims=True)
    adv = HeavierHalf()
    adv.reset(GameSpec("experts", 9, 10, n_replicates=200), rngs(0, 200))
    losses = hit(adv, p)
    assert set(np.unique(losses)) <= {0.0, 1.0}
    for r in range(200):
        order = sorted(range(9), key=lambda i: (-p[r, i], i))
        k = next(j for j in range(9) if p[r, order[: j + 1]].sum() >= 0.5 - 1e-12)
        want = np.zeros(9)
        want[order[: k + 1]] = 1.0
        np.testing.assert_array_equal(losses[r], want)
        assert p[r] @ losses[r] >= 0.5 - 1e-12


@pytest.mark.parametrize(("n", "k"), [(4, 2), (6, 3), (7, 4), (10, 5)])
def test_uniform_weights_hit_half_the_experts(n, k):
    adv = HeavierHalf()
    adv.reset(GameSpec("experts", n, 10, n_replicates=1), rngs(0, 1))
    losses = hit(adv, np.full((1, n), 1.0 / n))
    assert losses.sum() == k
    np.testing.assert_array_equal(losses[0, :k], 1.0)  # lowest indices first among ties


def test_learner_pays_at_least_half_every_round(tmp_path):
    path = tmp_path / "trace.parquet"
    rows = play(
        "hedge",
        HeavierHalf(),
        n_actions=6,
        horizon=300,
        replicates=2,
        trace_path=path,
        metrics={"loss": {}, "regret": {}},
    )
    trace = read_trace(path)
    per_round = np.einsum("rtn,rtn->rt", trace["probs"], trace["losses"])
    assert per_round.min() >= 0.5 - 1e-12
    final = rows[(rows.metric == "loss") & (rows.t == 300)].value
    assert (final >= 150 - 1e-9).all()


def test_pure_player_loses_every_round():
    rows = play(
        FollowTheLeader(tie_break="lowest"),
        HeavierHalf(),
        n_actions=5,
        horizon=100,
        metrics={"loss": {}, "regret": {}},
    )
    last = rows[rows.t == 100].set_index("metric").value
    assert last["loss"] == 100.0
    assert last["regret"] >= 100 * (1 - 1 / 5)


def test_random_ties_vary_and_are_seeded():
    n = 6
    spec = GameSpec("experts", n, 50, n_replicates=2)
    sets = []
    for _ in range(2):
        adv = HeavierHalf(ties="random")
        adv.reset(spec, rngs(3, 2))
        sets.append(np.stack([hit(adv, np.full((2, n), 1.0 / n), t) for t in range(1, 51)]))
    np.testing.assert_array_equal(sets[0], sets[1])
    assert (sets[0].sum(axis=2) == 3).all()
    assert len({tuple(row) for row in sets[0][:, 0]}) > 5  # many different halves


def test_bad_ties():
    with pytest.raises(ConfigError, match="one of 'index', 'random', got 'all'") as err:
        validate_params(HeavierHalf(ties="all"))
    assert err.value.parameter == "ties" and err.value.component == "adversary heavier_half"
