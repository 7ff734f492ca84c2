"""Tests of the boosting oracle: batch boosting as an experts game (Luo 2016, §2.2).

Oracles: the stump search against brute force over every (feature, threshold, sign); the
reduction's identity ``ℓ_{t,i} − p_t·ℓ_t = ½ y_i h_t(x_i) − γ_t``; literal transcriptions of
NH-Boost.DT (Luo 2016, Algorithm 4), NH-Boost (Algorithm 5) and AdaBoost with a constant step
(Freund & Schapire 1997) against the arena's ``normal_hedge_dt``, ``normal_hedge`` and ``hedge``
on this game; Theorem 3's training-error bound with the run's edges.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from arena import play, run_game
from arena.adversaries.boosting_oracle import BoostingOracle, best_stump, presort, stump_predict
from arena.errors import ConfigError
from arena.game import prepare_game, reference_play
from arena.metrics.boosting import MeanEdge, VoteTrainError
from arena.players.hedge import Hedge
from arena.players.normal_hedge import NormalHedge
from arena.players.normal_hedge_dt import NormalHedgeDT
from arena.spec import History
from tests.helpers import check_declared, last_values, traced

# digits 4 vs 9 with half held out: N = 181 experts, a fast game
SMALL = {"dataset": "digits", "test_fraction": 0.5}


def brute_force_best_edge(x: np.ndarray, p: np.ndarray, y: np.ndarray) -> float:
    """Largest ``Σ_i p_i y_i h(x_i)`` over every stump, by enumeration (x: (N, d))."""
    best = -math.inf
    n, d = x.shape
    for j in range(d):
        values = sorted(set(x[:, j].tolist()))
        cuts = [values[0] - 1.0] + [(a + b) / 2 for a, b in itertools.pairwise(values)]
        cuts.append(values[-1] + 1.0)
        for theta in cuts:
            for s in (1.0, -1.0):
                edge = sum(p[i] * y[i] * (s if x[i, j] > theta else -s) for i in range(n))
                best = max(best, edge)
    return best


def test_best_stump_matches_brute_force():
    gen = np.random.default_rng(1)
    for n, d in [(1, 1), (5, 2), (12, 3), (30, 4)]:
        # few distinct values, so that ties between examples are common
        x = gen.integers(0, 4, size=(3, n, d)).astype(np.float64)
        y = gen.choice([-1.0, 1.0], size=(3, n))
        p = gen.dirichlet(np.ones(n), size=3)
        p[0, : n // 2] = 0.0  # zero weights, as NH-Boost.DT gives
        p[0] /= p[0].sum()
        feature, threshold, sign = best_stump(presort(x), p, y)
        h = stump_predict(x, feature, threshold, sign)
        for r in range(3):
            # sums of ≤ 30 terms in [−1, 1] in two orders: rounding below 1e-13
            expected = brute_force_best_edge(x[r], p[r], y[r])
            assert abs(float(np.dot(p[r] * y[r], h[r])) - expected) < 1e-13


def test_losses_edges_and_vote_sums():
    game = prepare_game("normal_hedge_dt", BoostingOracle(**SMALL), horizon=20, replicates=2)
    pl, adv, spec = game.player, game.adversary, game.spec
    history = History(spec.n_replicates, spec.n_actions, sees_distribution=True)
    votes = np.zeros((spec.n_replicates, spec.n_actions))
    for t in range(1, 21):
        p = pl.predict()
        history._show(p)
        loss = adv.losses(t, history)
        margin = 2.0 * loss - 1.0  # y_i h_t(x_i)
        gamma = adv.edges()[:, -1]
        assert set(np.unique(loss)) <= {0.0, 1.0}
        assert np.all(gamma >= 0.0) and np.all(gamma <= 0.5)
        # the reduction: ℓ − p·ℓ = ½ y h − γ, to rounding of a 181-term dot product
        increment = loss - np.einsum("rn,rn->r", p, loss)[:, None]
        np.testing.assert_allclose(increment, 0.5 * margin - gamma[:, None], atol=1e-13)
        votes += margin
        pl.update(loss)
        history._record(p, loss, np.zeros(spec.n_replicates, dtype=np.int64))
    np.testing.assert_array_equal(adv.train_votes(), votes)
    # the recorded stumps recompute the votes from the raw data, train and test
    X, y = adv._data()
    stumps, split = adv.stumps(), adv.split()
    for part, got in (("train", adv.train_votes()), ("test", adv.test_votes())):
        idx = split[part]
        total = np.zeros(idx.shape)
        for s in range(20):
            h = stump_predict(X[idx], stumps["feature"][:, s].astype(int),
                              stumps["threshold"][:, s], stumps["sign"][:, s])  # fmt: skip
            total += h * y[idx]
        np.testing.assert_array_equal(got, total)
    assert not set(split["train"][0]) & set(split["test"][0])
    assert split["train"].shape[1] + split["test"].shape[1] == X.shape[0]


def test_replicate_independent_of_batch(tmp_path):
    """Replicate 1's split, stumps and p_t are the same alone and in a batch of two."""
    game = {"horizon": 8, "metrics": [VoteTrainError()]}
    _, both = traced("hedge", BoostingOracle(**SMALL), tmp_path, replicates=[0, 1], **game)
    _, alone = traced("hedge", BoostingOracle(**SMALL), tmp_path, replicates=[1], **game)
    np.testing.assert_array_equal(both["losses"][1], alone["losses"][0])
    np.testing.assert_array_equal(both["probs"][1], alone["probs"][0])
    assert not np.array_equal(both["losses"][0], both["losses"][1])  # their own splits


def negative_part(v: float) -> float:
    """``[v]_- = max(−v, 0)``."""
    return max(-v, 0.0)


def nh_boost_dt(margins: np.ndarray) -> np.ndarray:
    """Luo 2016, Algorithm 4, literally; ``margins[t−1, i] = y_i h_t(x_i)`` from the run's stumps.

    Returns p_1..p_T, shape (T, N).
    """
    n_rounds, n = margins.shape
    s = [0.0] * n
    out = []
    for t in range(1, n_rounds + 1):
        w = [
            math.exp(negative_part(si - 1.0) ** 2 / (3 * t))
            - math.exp(negative_part(si + 1.0) ** 2 / (3 * t))
            for si in s
        ]
        total = sum(w)
        p = [wi / total for wi in w]
        gamma = 0.5 * sum(p[i] * margins[t - 1, i] for i in range(n))
        s = [s[i] + 0.5 * margins[t - 1, i] - gamma for i in range(n)]
        out.append(p)
    return np.array(out)


def nh_boost(margins: np.ndarray) -> np.ndarray:
    """Luo 2016, Algorithm 5, literally (c by bisection on log c to machine precision).

    When every ``[s]_- = 0`` no c solves line 6; the weights are then uniform, as at t = 1
    (NormalHedge's convention, Chaudhuri, Freund & Hsu 2009).
    """
    n_rounds, n = margins.shape
    s = [0.0] * n
    out = []
    for t in range(1, n_rounds + 1):
        neg = [max(-si, 0.0) for si in s]
        if t == 1 or max(neg) == 0.0:
            p = [1.0 / n] * n
        else:

            def excess(log_c, neg=neg):
                return sum(math.exp(v * v / math.exp(log_c)) for v in neg) - n * math.e

            top = max(neg) ** 2
            lo, hi = math.log(top / (1.0 + math.log(n))), math.log(top)
            for _ in range(200):
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
            c = math.exp(0.5 * (lo + hi))
            w = [v * math.exp(v * v / c) for v in neg]
            total = sum(w)
            p = [wi / total for wi in w]
        gamma = 0.5 * sum(p[i] * margins[t - 1, i] for i in range(n))
        s = [s[i] + 0.5 * margins[t - 1, i] - gamma for i in range(n)]
        out.append(p)
    return np.array(out)


def adaboost_constant_step(margins: np.ndarray, alpha: float) -> np.ndarray:
    """AdaBoost's reweighting ``D_{t+1}(i) ∝ D_t(i) exp(−α y_i h_t(x_i))`` with a fixed α."""
    n_rounds, n = margins.shape
    d = [1.0 / n] * n
    out = []
    for t in range(n_rounds):
        out.append(d)
        w = [d[i] * math.exp(-alpha * margins[t, i]) for i in range(n)]
        d = [wi / sum(w) for wi in w]
    return np.array(out)


@pytest.mark.parametrize(
    "player, transcription",
    [
        (NormalHedgeDT(), nh_boost_dt),
        (NormalHedge(), nh_boost),
        (Hedge(eta=0.4), lambda m: adaboost_constant_step(m, 0.2)),  # η = 2α
    ],
)
def test_players_are_the_boosters(player, transcription, tmp_path):
    rows, tr = traced(player, BoostingOracle(**SMALL), tmp_path, horizon=60, metrics=[MeanEdge()])
    margins = 2.0 * tr["losses"][0] - 1.0  # y_i h_t(x_i) of the stumps the run chose
    expected = transcription(margins)
    # 60 rounds of float updates of s (or of R) in two summation orders: ≤ 1e-10 on p
    np.testing.assert_allclose(tr["probs"][0], expected, rtol=0, atol=1e-10)
    gammas = 0.5 * np.einsum("tn,tn->t", expected, margins)
    assert abs(last_values(rows, "mean_edge")[0] - gammas.mean()) < 1e-10


def test_theorem_3_training_error_bound():
    """Luo 2016, Theorem 3 (Eq. 2.4): error ≤ (j − 1)/N once NH.DT's j/N-regret bound < Σγ."""
    horizon = 200
    game = prepare_game(
        "normal_hedge_dt", BoostingOracle(dataset="digits"), horizon=horizon, replicates=2
    )
    pl, adv, spec = game.player, game.adversary, game.spec
    n_rep, n = spec.n_replicates, spec.n_actions
    history = History(n_rep, n, sees_distribution=True)
    regret = np.zeros((n_rep, n))
    for t in range(1, horizon + 1):
        p = pl.predict()
        history._show(p)
        loss = adv.losses(t, history)
        regret += np.einsum("rn,rn->r", p, loss)[:, None] - loss
        pl.update(loss)
        history._record(p, loss, np.zeros(n_rep, dtype=np.int64))
    edge_sum = adv.edges().sum(axis=1)
    votes = adv.train_votes()
    # R_{T,i} = Σγ − ½ Σ y h: every example the vote misclassifies has regret ≥ Σγ
    np.testing.assert_allclose(regret, edge_sum[:, None] - 0.5 * votes, atol=1e-9)
    error = (votes <= 0).mean(axis=1)
    for r in range(n_rep):
        j = next(k for k in range(1, n + 1) if pl.quantile_bound(horizon, k) < edge_sum[r])
        assert error[r] <= (j - 1) / n
        assert (j - 1) / n < 0.5  # the bound says something here (measured: 0.14 and 0.11)


def test_bad_parameters():
    with pytest.raises(ConfigError, match="n_actions"):
        BoostingOracle().resolve_n_actions(10)
    with pytest.raises(ConfigError, match="digits"):
        BoostingOracle(dataset="digits", digits=[3, 3]).split_sizes()
    with pytest.raises(ConfigError, match="test_fraction"):
        BoostingOracle(test_fraction=0.001).split_sizes()  # ⌊0.569⌋ = 0 held out


@pytest.mark.parametrize("player", ["hedge", "normal_hedge_dt", "ada_normal_hedge"])
def test_declared_bounds_hold_on_the_oracle(player):
    """The boosting oracle is an adaptive adversary: the players' declared bounds still hold."""
    metrics = {
        "regret": {},
        "quantile_regret": {"eps": [0.01, 0.1, 0.25, 0.5]},
        "subset_quantile_regret": {"eps": [0.1, 0.25]},
        "shifting_regret": {"k": [0, 1, 2, 3, 4, 8]},
        "adaptive_regret": {},
        "sa_regret": {"tau": [10, 100]},
        "bound": {},
    }  # every metric these players declare a bound on
    rows = play(player, BoostingOracle(**SMALL), horizon=100, replicates=2, metrics=metrics)
    assert check_declared(rows, f"{player} vs boosting_oracle") > 0


@pytest.mark.parametrize("chunk_elements", [1, 1 << 20])
def test_engine_equals_the_reference_loop(chunk_elements):
    """The engine's rows equal the protocol's literal per-round loop, in any chunking."""
    kwargs = {"horizon": 15, "replicates": 2}
    # the metrics with a brute-force definition in the reference loop (the boosting metrics are
    # checked against brute force in tests/arena/metrics/test_boosting.py)
    kwargs["metrics"] = {"loss": {}, "regret": {}, "zero_weight_frac": {}, "entropy": {}}
    engine = run_game(
        "normal_hedge_dt", BoostingOracle(**SMALL), chunk_elements=chunk_elements, **kwargs
    ).rows
    reference = reference_play("normal_hedge_dt", BoostingOracle(**SMALL), **kwargs)
    pd.testing.assert_frame_equal(engine.drop(columns="value"), reference.drop(columns="value"))
    # the regret is a sum of 15 rounds in two orders: rounding below 1e-12; the rest is exact
    np.testing.assert_allclose(engine.value, reference.value, rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# skip_zero_weights: the same stumps from a search over the examples of positive weight


def test_skipping_search_gives_the_same_stumps_bitwise():
    from arena.adversaries.boosting_oracle import best_stump_skipping, next_valid

    gen = np.random.default_rng(4)
    for n, d in [(1, 1), (2, 1), (5, 2), (12, 3), (40, 4), (40, 1)]:
        for trial in range(40):
            # few distinct values (ties in x), zero weights in runs, some equal scores
            x = gen.integers(0, 3 + trial % 4, size=(4, n, d)).astype(np.float64)
            y = gen.choice([-1.0, 1.0], size=(4, n))
            p = gen.dirichlet(np.ones(n), size=4)
            zero = gen.random((4, n)) < [[0.0], [0.5], [0.9], [0.99]]
            zero[np.arange(4), gen.integers(n, size=4)] = False  # one positive weight at least
            p = np.where(zero, 0.0, p)
            if trial % 5 == 0:  # equal weights: exact ties between cuts
                p = np.where(zero, 0.0, 1.0)
            p /= p.sum(axis=1, keepdims=True)
            sf = presort(x)
            want = best_stump(sf, p, y)
            got = best_stump_skipping(sf, next_valid(sf.valid), p, y)
            for a, b in zip(want, got[:3], strict=True):
                np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(got[3], d * (p > 0).sum(axis=1))


def play_oracle(player, adversary, horizon=40, replicates=2):
    """The game played round by round (as ``test_losses_edges_and_vote_sums``); returns the
    reset adversary after the game and the losses of every round."""
    game = prepare_game(player, adversary, horizon=horizon, replicates=replicates)
    pl, adv, spec = game.player, game.adversary, game.spec
    history = History(spec.n_replicates, spec.n_actions, sees_distribution=True)
    losses = []
    for t in range(1, horizon + 1):
        p = pl.predict()
        history._show(p)
        loss = adv.losses(t, history)
        losses.append(loss)
        pl.update(loss)
        history._record(p, loss, np.zeros(spec.n_replicates, dtype=np.int64))
    return adv, np.stack(losses, axis=1)


@pytest.mark.parametrize("player", ["normal_hedge_dt", "normal_hedge", "hedge"])
def test_skipping_plays_the_same_game_with_less_work(player):
    full, loss_full = play_oracle(player, BoostingOracle(**SMALL))
    skip, loss_skip = play_oracle(player, BoostingOracle(**SMALL, skip_zero_weights=True))
    np.testing.assert_array_equal(loss_full, loss_skip)
    for key, col in full.stumps().items():
        np.testing.assert_array_equal(col, skip.stumps()[key], err_msg=key)
    np.testing.assert_array_equal(full.edges(), skip.edges())
    np.testing.assert_array_equal(full.test_votes(), skip.test_votes())
    n, d = full._x_train.shape[1:]
    assert (full.stump_search_work() == 40 * n * d).all()
    if player == "hedge":  # Hedge's weights are never 0: nothing to skip
        np.testing.assert_array_equal(skip.stump_search_work(), full.stump_search_work())
    else:  # NormalHedge(.DT) put weight 0 on the examples whose regret is not positive
        assert (skip.stump_search_work() < full.stump_search_work()).all()


def test_skipping_keeps_the_cell_key_and_the_rows():
    adv = BoostingOracle(**SMALL, skip_zero_weights=True)
    assert adv.cell_params() == BoostingOracle(**SMALL).cell_params()
    kw = {"horizon": 30, "replicates": 2, "metrics": [VoteTrainError(), MeanEdge()]}
    a = run_game("normal_hedge_dt", BoostingOracle(**SMALL), **kw).rows
    b = run_game("normal_hedge_dt", adv, **kw).rows
    cols = ["replicate", "t", "metric", "param", "value", "cell"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
