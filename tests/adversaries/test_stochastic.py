"""Tests of the stochastic adversaries added to arena/adversaries/stochastic.py and of LB(T, N).

Reference values are the exact fair-coin lower bound (Cesa-Bianchi et al. 1997; CBL Thm 3.7),
computed by us, and the non-anticipation identity (every player's expected loss is ½ per round);
the generators follow Luo 2016, Theorem 5 (gap, piecewise) and §2.3.3.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import bdtrc

from arena import GameSpec, play, run_game
from arena.adversaries.stochastic import (
    Beta,
    DriftingMeans,
    FairCoin,
    PiecewiseStochastic,
    fair_coin_lower_bound,
    fold_unit,
)
from arena.errors import ConfigError
from arena.game import prepare_game
from arena.params import validate_params
from tests.helpers import clt_band, last_values, read_trace, rngs
from tests.helpers.experts import assert_split_invariant

# ----------------------------------------------------------------------------------------------
# LB(T, N)

LB_TABLE = {  # the exact fair-coin lower bound (CBL Thm 3.7), computed by us, 3 decimals
    (10, 10): 2.382,
    (10, 100): 3.750,
    (10, 1000): 4.624,
    (100, 2): 2.817,
    (100, 10): 7.678,
    (100, 100): 12.476,
    (100, 1000): 16.072,
    (1000, 2): 8.920,
    (1000, 10): 24.325,
    (1000, 100): 39.629,
    (1000, 1000): 51.209,
    (10000, 2): 28.209,
    (10000, 10): 76.936,
    (10000, 100): 125.374,
    (10000, 1000): 162.058,
}


def test_lb_exact_small_case():
    """T = 10, N = 2: 230945/262144 (Cesa-Bianchi et al. 1997; CBL Thm 3.7)."""
    assert fair_coin_lower_bound(10, 2) == pytest.approx(230945 / 262144, rel=1e-13)


@pytest.mark.parametrize(("t", "n"), sorted(LB_TABLE))
def test_lb_matches_table(t, n):
    assert round(fair_coin_lower_bound(t, n), 3) == pytest.approx(LB_TABLE[t, n], abs=1e-9)


@pytest.mark.parametrize(("t", "n"), [(4096, 2), (5000, 10), (20000, 100)])
def test_lb_window_path_equals_full_sum(t, n):
    """The windowed log-pmf path (t ≥ 4096) equals the literal O(t) sum."""
    k = np.arange(1, t + 1, dtype=np.float64)
    full = t / 2 - float((bdtrc(k - 1, t, 0.5) ** n).sum())
    assert fair_coin_lower_bound(t, n) == pytest.approx(full, rel=1e-10)


def test_lb_trivial_cases_and_asymptotics():
    assert fair_coin_lower_bound(0, 5) == 0.0
    assert fair_coin_lower_bound(50, 1) == 0.0
    # LB / sqrt(T ln N / 2) at T = 10^4 (last row of the Cesa-Bianchi et al. 1997; CBL Thm 3.7
    # table)
    ratio = fair_coin_lower_bound(10000, 10) / math.sqrt(10000 * math.log(10) / 2)
    assert ratio == pytest.approx(0.717, abs=5e-4)


def test_fair_coin_declares_lb_at_every_checkpoint():
    rows = play(
        "hedge",
        FairCoin(),
        n_actions=10,
        horizon=1000,
        checkpoints=[10, 100, 1000],
        metrics={"regret": {}, "lower_bound": {}},
    )
    lb = rows[rows.metric == "lower_bound:regret"].set_index("t").value
    assert lb[10] == pytest.approx(2.382, abs=5e-4)
    assert lb[100] == pytest.approx(7.678, abs=5e-4)
    assert lb[1000] == pytest.approx(24.325, abs=5e-4)


def test_fair_coin_mean_regret_is_lb_for_any_player():
    """Non-anticipation identity (every player's expected loss is ½ per round):
    E[R_T] = LB(T, N) for every player."""
    for player in ("hedge", "ftl"):
        rows = play(
            player,
            FairCoin(),
            n_actions=10,
            horizon=200,
            replicates=2000,
            seed=7,
            checkpoints=[200],
            metrics={"regret": {}},
        )
        mean, half = clt_band(last_values(rows, "regret"))
        assert abs(mean - fair_coin_lower_bound(200, 10)) <= half, (player, mean, half)


# ----------------------------------------------------------------------------------------------
# Beta


def test_beta_losses_means_and_variance():
    adv = Beta(means=[0.2, 0.5, 0.9], concentration=4.0)
    spec = GameSpec("experts", 3, 400, n_replicates=5)
    losses = assert_split_invariant(adv, spec)
    assert np.isfinite(losses).all() and losses.min() >= 0 and losses.max() <= 1
    mu = np.array([0.2, 0.5, 0.9])
    flat = losses.reshape(-1, 3)
    half = 4 * np.sqrt(mu * (1 - mu) / 5 / flat.shape[0])
    assert np.all(np.abs(flat.mean(axis=0) - mu) <= half)
    var = flat.var(axis=0)
    np.testing.assert_allclose(var, mu * (1 - mu) / 5, rtol=0.15)
    a = adv.clone()
    a.reset(spec, rngs(0, 5))
    np.testing.assert_array_equal(a.oracle("means", 1, 4), np.broadcast_to(mu, (5, 4, 3)))


def test_beta_defaults_and_degenerate_shapes():
    adv = Beta(gap=0.3, best=2, concentration=0.5)  # a, b < 1: Johnk's branch of numpy's beta
    spec = GameSpec("experts", 4, 60, n_replicates=3)
    losses = assert_split_invariant(adv, spec, seed=3)
    assert losses.min() >= 0 and losses.max() <= 1
    a = adv.clone()
    a.reset(spec, rngs(0, 3))
    np.testing.assert_allclose(a.oracle("means", 1, 1)[0, 0], [0.5, 0.5, 0.2, 0.5])
    assert Beta(means=[0.3, 0.4]).resolve_n_actions(None) == 2
    with pytest.raises(ConfigError, match="n_actions"):
        Beta(means=[0.3, 0.4]).resolve_n_actions(3)


def test_beta_is_oblivious_and_seeded(tmp_path):
    seen = []
    for player in ("hedge", "ftl"):
        path = tmp_path / f"{player}.parquet"
        play(
            player,
            Beta(),
            n_actions=4,
            horizon=50,
            replicates=2,
            seed=4,
            trace_path=path,
            metrics={"loss": {}},
        )
        seen.append(read_trace(path)["losses"])
    np.testing.assert_array_equal(seen[0], seen[1])
    other = tmp_path / "other.parquet"
    play(
        "hedge",
        Beta(),
        n_actions=4,
        horizon=50,
        replicates=2,
        seed=5,
        trace_path=other,
        metrics={"loss": {}},
    )
    assert not np.array_equal(read_trace(other)["losses"], seen[0])


@pytest.mark.parametrize(
    ("params", "bad"),
    [
        ({"means": [0.0, 0.5]}, "means"),
        ({"means": [0.5, 1.0]}, "means"),
        ({"gap": 0.5}, "gap"),
        ({"best": 7}, "best"),
        ({"concentration": 0.0}, "concentration"),
        ({"concentration": math.inf}, "concentration"),
    ],
)
def test_beta_bad_params(params, bad):
    adv = Beta(**params)
    n = adv.resolve_n_actions(None if "means" in params else 3)
    with pytest.raises(ConfigError) as err:
        validate_params(adv)  # the declared constraints first, as the driver checks them
        adv.reset(GameSpec("experts", n, 10), rngs(0, 1))  # then what depends on the game
    assert err.value.parameter == bad and err.value.component == "adversary beta"


# ----------------------------------------------------------------------------------------------
# piecewise stochastic


def test_piecewise_segments_have_a_gap():
    adv = PiecewiseStochastic(n_segments=5, gap=0.15, best_mean=0.3, spread=0.4)
    spec = GameSpec("experts", 6, 500, n_replicates=4)
    losses = assert_split_invariant(adv, spec, seed=1)
    assert set(np.unique(losses)) <= {0.0, 1.0}
    a = adv.clone()
    a.reset(spec, rngs(1, 4))
    mu = a.oracle("means", 1, 500)
    for r in range(4):
        # even change points: segment s covers rounds 1 + s·T/K .. (s+1)·T/K
        for s in range(5):
            seg = mu[r, s * 100 : (s + 1) * 100]
            assert (seg == seg[0]).all()
            best = int(seg[0].argmin())
            assert seg[0, best] == pytest.approx(0.3)
            others = np.delete(seg[0], best)
            assert others.min() >= 0.3 + 0.15 - 1e-12 and others.max() <= 0.85 + 1e-12
            if s:
                assert best != int(mu[r, (s - 1) * 100].argmin())


def test_piecewise_random_change_points_and_empirical_means():
    adv = PiecewiseStochastic(n_segments=3, gap=0.2, change_points="random")
    spec = GameSpec("experts", 3, 300, n_replicates=200)
    a = adv.clone()
    a.reset(spec, rngs(2, 200))
    mu = a.oracle("means", 1, 300)
    changes = (np.abs(np.diff(mu, axis=1)).sum(axis=2) > 0).sum(axis=1)
    assert (changes == 2).all()
    losses = a.losses_block(1, 300)
    diff = losses - mu
    mean, half = clt_band(diff.reshape(-1))
    assert abs(mean) <= half


def test_piecewise_switching_comparator_beats_every_fixed_expert():
    """The (K−1)-switch comparator gains ``min_i Σ_t μ_{t,i} − Σ_t min_i μ_{t,i}`` in expectation
    over any fixed expert (≥ T·gap/2 here: a best expert recurs at most every other segment)."""
    kwargs = dict(
        n_actions=4,
        horizon=2000,
        replicates=20,
        seed=3,
        checkpoints=[2000],
        metrics={"regret": {}, "shifting_regret": {"k": [3]}},
    )
    adv = PiecewiseStochastic(n_segments=4, gap=0.3, best_mean=0.2)
    rows = play("hedge", adv, **kwargs)
    gain = last_values(rows, "shifting_regret", param=3) - last_values(rows, "regret")
    mu = prepare_game("hedge", adv, **kwargs).adversary.oracle("means", 1, 2000)
    expected = mu.sum(axis=1).min(axis=1) - mu.min(axis=2).sum(axis=1)
    assert expected.min() >= 2000 * 0.3 / 2 - 1e-9
    assert gain.mean() >= 0.9 * expected.mean()


@pytest.mark.parametrize(
    ("params", "bad"),
    [
        ({"n_segments": 0}, "n_segments"),
        ({"n_segments": 11}, "n_segments"),
        ({"gap": 0.0}, "gap"),
        ({"best_mean": 0.8, "gap": 0.3}, "spread"),
        ({"change_points": "weekly"}, "change_points"),
    ],
)
def test_piecewise_bad_params(params, bad):
    adv = PiecewiseStochastic(**params)
    with pytest.raises(ConfigError) as err:
        validate_params(adv)  # the declared constraints first, as the driver checks them
        adv.reset(GameSpec("experts", 3, 10), rngs(0, 1))  # then what depends on the game
    assert err.value.parameter == bad and err.value.component == "adversary piecewise_stochastic"


# ----------------------------------------------------------------------------------------------
# drifting means


def test_fold_unit_reflects():
    x = np.linspace(-3, 3, 61)
    y = fold_unit(x)
    assert y.min() >= 0 and y.max() <= 1
    np.testing.assert_allclose(fold_unit(-x), y)  # even
    np.testing.assert_allclose(fold_unit(x + 2), y)  # period 2
    inside = (x >= 0) & (x <= 1)
    np.testing.assert_allclose(y[inside], x[inside])


@pytest.mark.parametrize("params", [{}, {"mode": "sinusoid", "period": 37.0, "amplitude": 0.7}])
def test_drifting_means_split_invariant_and_in_range(params):
    adv = DriftingMeans(**params)
    spec = GameSpec("experts", 5, 120, n_replicates=3)
    losses = assert_split_invariant(adv, spec, seed=4)
    assert set(np.unique(losses)) <= {0.0, 1.0}
    a = adv.clone()
    a.reset(spec, rngs(4, 3))
    mu = a.oracle("means", 1, 120)
    assert mu.min() >= 0 and mu.max() <= 1


def test_drifting_means_oracle_before_losses_and_block_order():
    """Means do not depend on whether the oracle or the losses ask first, nor on the split."""
    spec = GameSpec("experts", 4, 50, n_replicates=2)
    a, b = DriftingMeans(step=0.05), DriftingMeans(step=0.05)
    a.reset(spec, rngs(9, 2))
    b.reset(spec, rngs(9, 2))
    early = a.oracle("means", 1, 5)  # before any losses (as the conformance check does)
    la = a.losses_block(1, 20)
    ma = a.oracle("means", 1, 20)
    np.testing.assert_array_equal(early, ma[:, :5])
    lb_parts = [b.losses_block(1, 7), b.losses_block(8, 13)]
    mb = np.concatenate([b.oracle("means", 8, 13)], axis=1)
    np.testing.assert_array_equal(np.concatenate(lb_parts, axis=1), la)
    np.testing.assert_array_equal(mb, ma[:, 7:])
    with pytest.raises(ValueError, match="already passed"):
        b.oracle("means", 1, 3)


def test_drifting_means_random_walk_step_size():
    """Away from the walls the reflected walk moves by N(0, σ²) per round."""
    spec = GameSpec("experts", 50, 400, n_replicates=2)
    a = DriftingMeans(step=0.002, initial=[0.5] * 50)
    a.reset(spec, rngs(5, 2))
    mu = a.oracle("means", 1, 400)
    np.testing.assert_array_equal(mu[:, 0], 0.5)
    inc = np.diff(mu, axis=1).reshape(-1)
    assert inc.std() == pytest.approx(0.002, rel=0.05)
    assert abs(inc.mean()) <= 4 * 0.002 / np.sqrt(inc.size)


def test_drifting_means_sinusoid_formula():
    spec = GameSpec("experts", 3, 20, n_replicates=2)
    a = DriftingMeans(mode="sinusoid", period=10.0, amplitude=0.3)
    a.reset(spec, rngs(6, 2))
    mu = a.oracle("means", 3, 4)
    t = np.arange(3, 7)[:, None]
    i = np.arange(3)[None, :]
    for r in range(2):
        phase = a._phase[r]
        want = 0.5 + 0.3 * np.sin(2 * np.pi * t / 10 + phase + 2 * np.pi * i / 3)
        np.testing.assert_allclose(mu[r], want, atol=1e-15)


def test_drifting_means_empirical_loss_matches_means():
    rows_losses = []
    spec = GameSpec("experts", 3, 300, n_replicates=50)
    a = DriftingMeans(step=0.05)
    a.reset(spec, rngs(8, 50))
    losses = a.losses_block(1, 300)
    mu = a.oracle("means", 1, 300)
    rows_losses.append(losses - mu)
    mean, half = clt_band(np.concatenate(rows_losses).reshape(-1))
    assert abs(mean) <= half


def test_drifting_means_pseudo_regret_runs():
    run = run_game(
        "hedge",
        DriftingMeans(mode="sinusoid", period=200.0),
        n_actions=4,
        horizon=400,
        replicates=2,
        metrics={"pseudo_regret": {}, "dynamic_regret": {}},
    )
    assert "pseudo_regret" not in run.skipped_metrics


@pytest.mark.parametrize(
    ("params", "bad"),
    [
        ({"mode": "brownian"}, "mode"),
        ({"step": -0.1}, "step"),
        ({"period": 0.0}, "period"),
        ({"amplitude": -1.0}, "amplitude"),
        ({"step": math.nan}, "step"),
    ],
)
def test_drifting_means_bad_params(params, bad):
    with pytest.raises(ConfigError) as err:
        validate_params(DriftingMeans(**params))
    assert err.value.parameter == bad and err.value.component == "adversary drifting_means"


def test_drifting_means_initial_fixes_n():
    assert DriftingMeans(initial=[0.1, 0.2]).resolve_n_actions(None) == 2
    with pytest.raises(ConfigError, match="n_actions"):
        DriftingMeans(initial=[0.1, 0.2]).resolve_n_actions(5)
    with pytest.raises(ConfigError, match=r"each item a real number in \[0, 1\]") as err:
        validate_params(DriftingMeans(initial=[0.1, 1.2]))
    assert err.value.parameter == "initial"
    with pytest.raises(ConfigError, match=r"one value per expert \(n_actions = 3\), got 2"):
        DriftingMeans(initial=[0.1, 0.2]).reset(GameSpec("experts", 3, 10), rngs(0, 1))


def test_a_bernoulli_adversary_copies_without_its_game_state():
    """A Bernoulli adversary in a game keeps its generators' handles and μ broadcast to the
    chunk's shape; a copy or pickle leaves both out (pointers into this process; a view whose
    copy would be R·n·N values) and draws as the original does."""
    import copy
    import pickle

    from arena.adversaries.stochastic import Bernoulli

    adversary = Bernoulli(gap=0.2)
    adversary.reset(GameSpec("experts", 3, 100, (0.0, 1.0), n_replicates=4), rngs(0, 4))
    first = adversary.losses_block(1, 50)
    assert adversary._means_view is not None and adversary._means_view.shape == (4, 50, 3)
    twin = copy.deepcopy(adversary)
    assert "_means_view" not in vars(twin) and "_handles" not in vars(twin)
    assert len(pickle.dumps(adversary)) < 2_000
    assert np.array_equal(twin.losses_block(51, 50), adversary.losses_block(51, 50))
    assert first.shape == (4, 50, 3)
