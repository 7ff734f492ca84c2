"""The compiled chunks of Online BBM and AdaBoost.OL(.S) over ``linear`` lanes equal their
readable per-round loops: predictions, the learners' θ and G, α, Hedge's state, the totals and
the booster's stream, however the driver cuts the chunks.

Tolerances: the kernel computes each lane's ``θ·x̃`` as a sequential sum where numpy's einsum
groups it differently, and Hedge's normalization likewise; over a few hundred rounds of values of
size ≤ 10² this moves θ and G by a few ulps (~1e-14 observed), so 1e-12 (relative to 1 + |value|)
passes while a changed rule (a missing step, a wrong weight) moves them by ≥ 1e-3. Everything
discrete (predictions, mistakes counted by Hedge, call counts, draws) must agree exactly.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from arena.boosting.testing import LaneSGD
from arena.spec import GameSpec
from players.adaboost_ol import AdaBoostOL, AdaBoostOLS
from players.online_bbm import OnlineBBM, bbm_share_table, bbm_weight, bbm_weight_bound

TOL = 1e-12
LINEAR_RULES = [
    {"step": "adagrad", "loss": "logistic", "rate": 0.5},
    {"step": "sgd", "loss": "logistic", "rate": 0.3},
    {"step": "adagrad", "loss": "hinge", "rate": 0.5},
    {"step": "sgd", "loss": "perceptron", "rate": 1.0},
]
CUTS = (1, 2, 19, 64)  # the driver may cut a chunk anywhere, down to single rounds


def _data(n_rep: int, horizon: int, d: int, seed: int):
    """Noisy linear-threshold data: learnable, with enough mistakes to move every rule."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_rep, horizon, d))
    y = np.where(
        x @ rng.standard_normal(d) + 0.7 * rng.standard_normal((n_rep, horizon)) >= 0, 1.0, -1.0
    )
    return x, y


def _reset(booster, x):
    n_rep, horizon, d = x.shape
    spec = GameSpec(
        "boosting", d, horizon, n_replicates=n_rep, dim=d, loss="logistic", task="classification"
    )
    booster.reset(spec, [np.random.default_rng([11, r]) for r in range(n_rep)])
    return booster


def _loop(booster, x, y):
    out = np.empty(y.shape)
    for j in range(y.shape[1]):
        out[:, j] = booster.predict(x[:, j])
        booster.update(x[:, j], y[:, j])
    return out


def _chunks(booster, x, y):
    edges = [0, *CUTS, y.shape[1]]
    x, y = x.copy(), y.copy()
    x.flags.writeable = y.flags.writeable = False  # as the driver passes them
    return np.concatenate(
        [booster.play_block(x[:, a:b], y[:, a:b]) for a, b in itertools.pairwise(edges)], axis=1
    )


def _close(a, b) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= TOL * (1.0 + np.abs(a))))


def _assert_same_run(make, n_rep: int, horizon: int, seed: int):
    x, y = _data(n_rep, horizon, 4, seed)
    readable, compiled = _reset(make(), x), _reset(make(), x)
    expected, got = _loop(readable, x, y), _chunks(compiled, x, y)
    assert np.array_equal(expected, got)
    for a, b in zip(
        readable._learners.kernel_state(), compiled._learners.kernel_state(), strict=True
    ):
        assert _close(a, b)
    totals_a, totals_b = readable.learner_totals(), compiled.learner_totals()
    assert np.array_equal(totals_a["calls"], totals_b["calls"])
    assert _close(totals_a["weight"], totals_b["weight"])
    assert _close(totals_a["edge"], totals_b["edge"])
    for ra, rb in zip(readable._rngs, compiled._rngs, strict=True):  # the same draws consumed
        assert ra.random() == rb.random()
    return readable, compiled


@pytest.mark.parametrize("mode", ["importance", "sampling"])
def test_online_bbm_kernel_equals_the_readable_loop(mode):
    for n_learners, rule in zip((1, 6, 13, 30), LINEAR_RULES, strict=True):
        _assert_same_run(
            lambda n=n_learners, p=rule: OnlineBBM(
                n_learners=n, gamma=0.2, mode=mode, weak_learner="linear", weak_learner_params=p
            ),
            n_rep=2,
            horizon=150,
            seed=n_learners,
        )


def test_online_bbm_tables_are_the_readable_weights():
    """The kernel's lookup tables hold exactly the weights :meth:`OnlineBBM._feed` computes."""
    n, gamma = 9, 0.3
    w, share = bbm_share_table(n, gamma)
    for i in range(1, n + 1):
        s = np.arange(-(i - 1), i)
        assert np.array_equal(w[i - 1, s + n], bbm_weight(i, s, n, gamma))
        bound = bbm_weight_bound(n, gamma)[i - 1]
        assert np.array_equal(share[i - 1, s + n], np.minimum(w[i - 1, s + n] / bound, 1.0))


@pytest.mark.parametrize("cls", [AdaBoostOL, AdaBoostOLS])
def test_adaboost_ol_kernel_equals_the_readable_loop(cls):
    etas = (1.0, "anytime", "doubling", "tuned")
    for n_learners, rule, eta in zip((1, 5, 12, 30), LINEAR_RULES, etas, strict=True):
        readable, compiled = _assert_same_run(
            lambda n=n_learners, p=rule, e=eta: cls(
                n_learners=n,
                weak_learner="linear",
                weak_learner_params=p,
                expert_player_params={"eta": e},
            ),
            n_rep=2,
            horizon=150,
            seed=n_learners,
        )
        assert _close(readable.alphas(), compiled.alphas())
        assert np.array_equal(readable._experts._cum, compiled._experts._cum)
        assert readable._experts._rounds == compiled._experts._rounds == 150
        assert readable._t == compiled._t == 150
        assert np.array_equal(readable._uniform, compiled._uniform)
        assert _close(readable.expert_distribution(), compiled.expert_distribution())


def test_other_learners_and_final_layers_play_the_readable_loop():
    """LaneSGD lanes, or a final layer other than Hedge, fall back to the per-round loop."""
    x, y = _data(2, 40, 3, 5)
    for make in (
        lambda: OnlineBBM(n_learners=4, weak_learner=LaneSGD()),
        lambda: AdaBoostOL(n_learners=4, weak_learner=LaneSGD()),
        lambda: AdaBoostOL(n_learners=4, weak_learner="linear", expert_player="ftl"),
    ):
        readable, block = _reset(make(), x), _reset(make(), x)
        assert np.array_equal(_loop(readable, x, y), _chunks(block, x, y))
