"""The benchmark scripts stay runnable and honest.

They are not timed here (speed is measured in ``benchmarks/``, not in tests); these tests keep the
scripts importable (a renamed helper once broke ``bench_oco.py`` unnoticed) and re-run, at small
sizes, the checks that make their comparisons fair: the naive loops reproduce the engine's rows
and the two hand-fused kernels compute the same regret.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SCRIPTS = sorted(p.stem for p in BENCHMARKS.glob("bench_*.py"))


@pytest.fixture(scope="module")
def bench_path():
    """Put ``benchmarks/`` on ``sys.path`` as running a script there does."""
    sys.path.insert(0, str(BENCHMARKS))
    yield
    sys.path.remove(str(BENCHMARKS))


def test_every_script_is_found():
    assert {"bench_engine", "bench_oco", "bench_players"} <= set(SCRIPTS)


@pytest.mark.parametrize("name", SCRIPTS)
def test_script_imports(bench_path, name):
    module = importlib.import_module(name)
    assert callable(module.main)


def test_fused_kernels_agree(bench_path):
    bench = importlib.import_module("bench_engine")
    scalar = bench.run_fused(10, 3_000, 3)
    simd = bench.run_fused(10, 3_000, 3, kernel=bench.fused_simd_chunk)
    # the same sums of the same Hedge weights, exponentiated by two exp implementations (≤ 1 ulp
    # each) and normalized in a different order: ~1e-13 absolute on regrets of size ~10
    np.testing.assert_allclose(simd, scalar, rtol=0, atol=1e-9)
    assert np.all(scalar[:, -1] > 0)  # Hedge's regret against a planted best expert


def test_fused_kernel_matches_a_direct_computation(bench_path):
    bench = importlib.import_module("bench_engine")
    from arena.checkpoints import log_grid

    n_actions, horizon = 4, 300
    got = bench.run_fused(n_actions, horizon, 1, kernel=bench.fused_simd_chunk)[0]
    uniforms = np.random.default_rng([bench.SEED, 0]).random((horizon, n_actions))
    losses = (uniforms < bench.bernoulli_means(n_actions)).astype(float)
    eta = np.sqrt(8 * np.log(n_actions) / horizon)
    cum = np.vstack([np.zeros(n_actions), np.cumsum(losses, axis=0)[:-1]])
    weights = np.exp(-eta * (cum - cum.min(axis=1, keepdims=True)))
    expected = (weights * losses).sum(axis=1) / weights.sum(axis=1)
    regret = np.cumsum(expected) - np.cumsum(losses, axis=0).min(axis=1)
    np.testing.assert_allclose(got, regret[log_grid(horizon) - 1], rtol=0, atol=1e-10)


def test_naive_engine_loop_reproduces_the_engine(bench_path):
    bench = importlib.import_module("bench_engine")
    assert "max |Δ| < 1e-9" in bench.check_naive(300)


def test_naive_oco_loop_reproduces_the_engine(bench_path):
    bench = importlib.import_module("bench_oco")
    for player in bench.PLAYERS:
        assert bench.check_naive(player, 10, 60) < 1e-9


def test_son_kernel_reproduces_the_readable_loop(bench_path):
    bench = importlib.import_module("bench_son")
    # the same operations in another order; FD amplifies rounding ~10× per 50 rounds on this
    # stream (bench_son.CHECK_ROUNDS), so 40 rounds keep it near 1e-13
    assert bench.check_kernel(40) < 1e-10


def test_compare_child_times_every_game_of_the_tree_it_names(bench_path, capsys):
    import json

    bench_compare = importlib.import_module("bench_compare")
    bench_compare._child(str(BENCHMARKS.parent), scale=0.0)  # horizon 50: a smoke test
    times = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert sorted(times) == sorted(game[0] for game in bench_compare.GAMES)
    assert all(seconds > 0 for seconds in times.values())


def test_bandit_benchmark_plays_every_pair_in_the_arena(bench_path):
    """The arena side of bench_bandits.py runs for every player it compares (the peer side needs
    its own environment and is run by the benchmark only)."""
    bench = importlib.import_module("bench_bandits")
    for player in bench.PAIRS:
        assert 0.0 < bench.ours_step_seconds(player, 20, 2) < 1.0
        assert 0.0 < bench.kernel_step_seconds(player, 20, 2) < 1.0


def test_bandit_benchmark_index_conventions_match_the_peers(bench_path):
    """The arm sequences the bandit benchmark compares: our UCB1 and MOSS kernels on a reward
    table pick the arms of SMPyBandits' ``UCB`` / ``MOSSH`` indices written out here (rewards,
    ``t`` = rounds played, unplayed arms first, ties to the lowest arm)."""
    bench = importlib.import_module("bench_bandits")
    tables = bench.reward_tables(2, 300)
    for player in ("ucb1", "moss"):
        ours = bench.ours_arm_sequences(player, tables)
        for table, arms in zip(tables, ours, strict=True):
            pulls, rewards = np.zeros(bench.K), np.zeros(bench.K)
            for t, row in enumerate(table):
                with np.errstate(divide="ignore", invalid="ignore"):
                    if player == "ucb1":
                        bonus = np.sqrt(2 * np.log(t) / pulls)
                    else:
                        bonus = np.sqrt(np.maximum(0.0, np.log(300 / (bench.K * pulls))) / pulls)
                    index = np.where(pulls < 1, np.inf, rewards / pulls + bonus)
                arm = int(np.argmax(index))
                assert arms[t] == arm, (player, t)
                pulls[arm] += 1
                rewards[arm] += row[arm]


def test_bandit_benchmark_agreement_rule(bench_path):
    """Two samples agree when their 95% intervals overlap or |Δ| ≤ 3 SE(Δ)."""
    bench = importlib.import_module("bench_bandits")
    rng = np.random.default_rng(0)
    same = bench.compare_means(rng.normal(100, 10, 100), rng.normal(100, 10, 20))
    assert same["agree"] and same["intervals_overlap"]
    apart = bench.compare_means(rng.normal(100, 10, 100), rng.normal(200, 10, 20))
    assert not apart["agree"] and apart["diff_in_se"] < -3


def test_parallel_benchmark_verdict_rule(bench_path):
    """The 2-core verdict reads the bootstrap interval of the median paired ratio: met only when
    all of it clears 1.8×, not met only when none of it does, and only in the target's scope."""
    bench = importlib.import_module("bench_parallel")
    mid, low, high = bench.median_interval([1.70, 1.90, 1.95, 1.85, 1.99, 1.88, 1.92])
    assert mid == pytest.approx(1.90) and low <= mid <= high
    assert low >= 1.70 and high <= 1.99  # a median's interval stays inside the sample
    assert bench.verdict(1.81, 1.95, 10, 64) == "met"
    assert bench.verdict(1.60, 1.79, 1000, 64) == "not met"
    assert bench.verdict(1.75, 1.85, 100, 8) == "within noise"
    assert bench.verdict(1.0, 1.1, 10, 8) == "–"  # N < 100 and R < 64: outside the target
    assert bench.verdict(1.0, 1.1, 1000, 1) == "– (one thread)"  # one replicate: never split


def test_paired_verdict_rule_both_ways(bench_path):
    """The shared rule of the speed benchmarks (bench_bandits' ≥ 30×/300×, bench_bandit_floor's
    ≤ 1.5×): met only when the whole interval meets the target, on the target's side."""
    paired = importlib.import_module("paired")
    assert paired.interval_verdict(30.0, 41.0, 30.0) == "met"  # the end on the target counts
    assert paired.interval_verdict(21.0, 29.9, 30.0) == "not met"
    assert paired.interval_verdict(29.0, 31.0, 30.0) == "within noise"
    assert paired.interval_verdict(1.10, 1.50, 1.5, at_most=True) == "met"
    assert paired.interval_verdict(1.51, 1.90, 1.5, at_most=True) == "not met"
    assert paired.interval_verdict(1.40, 1.60, 1.5, at_most=True) == "within noise"
    # a ratio over the target is met for "at least", not met for "at most"
    assert paired.interval_verdict(2.0, 2.5, 1.5) == "met"
    assert paired.interval_verdict(2.0, 2.5, 1.5, at_most=True) == "not met"
    mid, low, high = paired.median_interval([25.0, 33.0, 31.0, 28.0, 35.0, 30.0, 32.0])
    assert mid == 31.0 and 25.0 <= low <= mid <= high <= 35.0


def test_vw_export_writes_the_engine_stream_in_vw_text_format(bench_path, tmp_path):
    """The Vowpal Wabbit benchmarks feed VW the examples run_game shows (VW itself is not needed):
    one line per round, label then features 1..d with the float64 values read back exactly."""
    peer = importlib.import_module("vw_peer")
    stream = ("ill_conditioned", {"n_large": 2})
    x, y = peer.export_stream(*stream, horizon=7, replicates=2)
    path = peer.write_vw_text(x[1], y[1], tmp_path / "stream.vw")
    lines = path.read_text().splitlines()
    assert len(lines) == 7
    for line, row, label in zip(lines, x[1], y[1], strict=True):
        head, features = line.split(" | ")
        assert float(head) == label
        parsed = dict(item.split(":") for item in features.split())
        assert {int(k): float(v) for k, v in parsed.items()} == {
            j + 1: v for j, v in enumerate(row) if v != 0.0
        }
    # a zero prediction is a mistake, as in the arena's mistakes metric
    assert peer.progressive_error(np.array([1.0, -1.0]), np.array([0.0, -2.0])) == 0.5


def test_naive_boosting_loops_reproduce_the_boosters(bench_path):
    """bench_boosting.py's per-example loops make every prediction of the registered boosters
    (asserted inside ``check_naive``) and end with the same weak learners: θ differs only by the
    rounding of a different summation order (~1e-14 over a few dozen AdaGrad steps)."""
    bench = importlib.import_module("bench_boosting")
    for name in bench.BOOSTERS:
        assert bench.check_naive(name, 5, 40) < 1e-9


def test_vw_comparison_real_valued_learner_is_a_squared_loss_regressor(bench_path):
    """The ablation learner of bench_vw_boosting.py answers clip(θ·x̃, −1, 1) and moves only
    the lanes with a positive weight."""
    bench = importlib.import_module("bench_vw_boosting")
    from arena.boosting.components import WeakSpec

    wl = bench.RealValuedLinear(rate=0.5)
    wl.reset(WeakSpec("classification", n_features=2, n_lanes=2), [[None, None]])
    x = np.array([[0.5, -1.0]])
    for _ in range(50):
        wl.update(x, np.array([[0.3, 1.0]]), np.array([[1.0, 0.0]]))
    out = wl.predict(x)
    assert abs(out[0, 0] - 0.3) < 1e-6  # AdaGrad on ½(θ·x̃ − 0.3)² converges on one example
    assert out[0, 1] == 0.0


def test_bandit_floors_reproduce_the_game(bench_path):
    """Each hand-fused floor of bench_bandit_floor.py plays the game's arms and final regrets bit
    for bit (past ε-greedy's uniform exploration, which ends at t = 4500), and a floor that
    played another arm would be caught: the check compares every round."""
    bench = importlib.import_module("bench_bandit_floor")
    for policy in bench.POLICIES:
        assert bench.check_reproduces(policy, 2, 5_000, seeds=(4,)) == 10_000
    call, regret, realized, arms = bench.floor_call(
        "ucb1", *bench.streams("ucb1", 2, 300), 300, record=True
    )
    call()
    assert np.all(regret == realized) and np.all(regret > 0)
    assert set(np.unique(arms)) == set(range(bench.K))  # UCB1 pulls every arm
