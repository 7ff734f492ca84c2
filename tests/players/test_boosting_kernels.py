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
from arena.players.adaboost_ol import AdaBoostOL, AdaBoostOLS
from arena.players.online_bbm import OnlineBBM, bbm_share_table, bbm_weight, bbm_weight_bound
from arena.spec import GameSpec

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


@pytest.mark.parametrize("mode", ["importance", "potential"])
def test_online_bbm_tables_are_the_readable_weights(mode):
    """The kernel's lookup tables, indexed by ``k = ⌊(N − i − s + 1)/2⌋``, hold exactly the
    weights :meth:`OnlineBBM._feed` computes for every margin that maps to k (0 where none)."""
    n, gamma = 9, 0.3
    w, share = bbm_share_table(n, gamma, mode)
    for i in range(1, n + 1):
        s = np.arange(-(i - 1), i)
        k = np.floor((n - i - s + 1) / 2).astype(int)
        inside = (k >= 0) & (k <= n - i)
        assert np.array_equal(w[i - 1, k[inside]], bbm_weight(i, s[inside], n, gamma))
        assert (bbm_weight(i, s[~inside], n, gamma) == 0).all()
        bound = bbm_weight_bound(n, gamma)[i - 1]
        fed = 2 * w[i - 1] if mode == "potential" else np.minimum(w[i - 1] / bound, 1.0)
        assert np.array_equal(share[i - 1], fed)


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


NORMALIZED = [{"output": "score"}, {"output": "sign"}, {"output": "score", "rate": 1.5}]


@pytest.mark.parametrize("mode", ["importance", "sampling", "potential"])
def test_online_bbm_kernel_over_normalized_lanes_equals_the_readable_loop(mode):
    """Over ``normalized_linear`` (real answers with ``output="score"``: real margins, k the floor
    of a real number) the compiled chunk is the readable loop too."""
    for n_learners, params in zip((1, 7, 20), NORMALIZED, strict=True):
        _assert_same_run(
            lambda n=n_learners, p=params: OnlineBBM(
                n_learners=n,
                gamma=0.2,
                mode=mode,
                weak_learner="normalized_linear",
                weak_learner_params=p,
            ),
            n_rep=2,
            horizon=150,
            seed=n_learners + 3,
        )


@pytest.mark.parametrize("cls", [AdaBoostOL, AdaBoostOLS])
def test_adaboost_ol_kernel_over_normalized_lanes_equals_the_readable_loop(cls):
    for n_learners, params in zip((1, 6, 15), NORMALIZED, strict=True):
        readable, compiled = _assert_same_run(
            lambda n=n_learners, p=params: cls(
                n_learners=n, weak_learner="normalized_linear", weak_learner_params=p
            ),
            n_rep=2,
            horizon=150,
            seed=n_learners + 5,
        )
        assert _close(readable.alphas(), compiled.alphas())
        assert np.array_equal(readable._experts._cum, compiled._experts._cum)


def _sparse_data(n_rep: int, horizon: int, d: int, seed: int):
    """The noisy threshold data with about 60% of the entries set to 0 (absent)."""
    x, y = _data(n_rep, horizon, d, seed)
    x[np.random.default_rng(seed + 1).random(x.shape) < 0.6] = 0.0
    return x, y


SPARSE_CASES = [
    lambda: OnlineBBM(n_learners=6, gamma=0.2, weak_learner="linear"),
    lambda: OnlineBBM(
        n_learners=5,
        gamma=0.2,
        mode="sampling",
        weak_learner="linear",
        weak_learner_params={"step": "sgd", "loss": "hinge"},
    ),
    lambda: OnlineBBM(n_learners=8, gamma=0.2, mode="potential", weak_learner="normalized_linear"),
    lambda: AdaBoostOL(n_learners=6, weak_learner="linear"),
    lambda: AdaBoostOLS(n_learners=5, weak_learner="normalized_linear"),
    lambda: AdaBoostOL(n_learners=4, weak_learner=LaneSGD()),  # no compiled lanes
    lambda: OnlineBBM(n_learners=4, weak_learner=LaneSGD()),
]


@pytest.mark.parametrize("case", range(len(SPARSE_CASES)))
def test_sparse_chunks_equal_the_dense_chunks(case):
    """A chunk of :class:`SparseRows` (the CSR rows of the boosting game's sparse streams) gives
    the dense chunk's predictions exactly and its state to 1e-12: the compiled lanes visit only
    a row's entries, which for ``linear`` are the dense kernel's operations less the ones that
    add 0 (bit for bit), and for ``normalized_linear`` the very same (it skips zeros in both);
    a learner without compiled lanes sees each round densified."""
    from arena.oco.losses import SparseRows

    x, y = _sparse_data(2, 120, 6, 40 + case)
    dense, sparse = _reset(SPARSE_CASES[case](), x), _reset(SPARSE_CASES[case](), x)
    edges = [0, 1, 17, 64, 120]
    got, expected = [], []
    for a, b in itertools.pairwise(edges):
        expected.append(dense.play_block(x[:, a:b], y[:, a:b]))
        got.append(sparse.play_block(SparseRows.from_dense(x[:, a:b]).readonly(), y[:, a:b]))
    assert np.array_equal(np.concatenate(expected, 1), np.concatenate(got, 1))
    states = getattr(dense._learners, "kernel_state", None)
    if states is not None:
        for u, v in zip(states(), sparse._learners.kernel_state(), strict=True):
            assert _close(u, v)
    totals_a, totals_b = dense.learner_totals(), sparse.learner_totals()
    assert all(_close(totals_a[k], totals_b[k]) for k in totals_a)


@pytest.mark.parametrize(
    ("player", "params"),
    [
        ("online_bbm", {"n_learners": 5, "gamma": 0.2, "weak_learner": "linear"}),
        ("online_bbm", {"n_learners": 5, "mode": "potential", "weak_learner": "normalized_linear"}),
    ],
)
def test_sparse_boosting_game_equals_the_dense_game(player, params):
    """The boosting protocol hands a booster tagged ``sparse_input`` the stream's CSR rows; the
    game's rows (mistakes, losses, the base learner's) equal those of the same examples dense.
    (A randomized booster's stream is keyed by the cell, which names the representation, so the
    deterministic Online BBM is compared here; the chunk test above covers AdaBoost.OL.)"""
    from arena.game import run_game

    runs = [
        run_game(
            player,
            "sparse_stream",
            player_params=params,
            adversary_params={"nnz": 4, "representation": rep},
            n_actions=40,
            horizon=150,
            replicates=2,
            metrics=["mistakes", "loss", "base_mistakes"],
        ).rows
        for rep in ("sparse", "dense")
    ]
    assert runs[0].value.tolist() == runs[1].value.tolist()
    assert runs[0].value.max() > 0
