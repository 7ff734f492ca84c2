"""DGv2 (bandit chips) and DGv3 (OCO volume) metrics: brute force, closed forms and theory."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena.bandit.drifting import (
    DG2Score,
    dg2_score_bruteforce,
    dgv2_moments,
    dgv2_moments_bruteforce,
    dgv2_slack,
)
from arena.errors import ConfigError
from arena.game import prepare_game, run_game
from arena.oco.domains import Domain
from arena.oco.drifting import (
    DGVolume,
    VolumeQuantileRegret,
    domain_grid,
    grid_regrets_bruteforce,
)
from arena.oco.losses import RoundData
from arena.oco.metrics import OCOBlock, OCOCore
from arena.spec import GameSpec
from tests.helpers.contract import run_in_process

# ---------------------------------------------------------------------------------------------
# DGv2


def random_round(rng, k):
    p = rng.dirichlet(np.ones(k))
    p[rng.random(k) < 0.2] = 0.0  # some arms of probability 0
    if p.sum() == 0:
        p[0] = 1.0
    return p / p.sum(), rng.random(k) * (rng.random(k) < 0.8)


def test_dgv2_moments_equal_the_loop_over_outcomes():
    rng = np.random.default_rng(0)
    for _ in range(60):
        p, loss = random_round(rng, int(rng.integers(1, 6)))
        fast, slow = dgv2_moments(p, loss), dgv2_moments_bruteforce(p, loss)
        for a, b in zip(fast, slow, strict=True):
            # the same sums in another order: float64 rounding of terms ≤ 1/p_min ≈ 1e3
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        slack = dgv2_slack(p, loss)
        # Luo 2016, proof of Theorem 21: z ≥ −1, E z ≤ 1, E z² ≤ 1/p − 1, E p·z = 0
        assert slack[0] >= 0 and slack[1] >= 0 and slack[2] >= 1 - 1e-9
        assert abs(slack[3]) <= 1e-12


def test_dgv2_slack_flags_a_round_outside_the_game():
    # losses in [0, 2] (not normalized): z = −2 is possible and E[z_0] = 2 − 0.2 > 1
    slack = dgv2_slack(np.array([0.1, 0.9]), np.array([2.0, 0.0]))
    assert slack[0] < 0 and slack[1] < 0


def run_bandit(player, k, horizon, replicates, seed, tmp_path, metric, adversary="bernoulli"):
    path = tmp_path / "trace.parquet"
    run = run_game(player, adversary, n_actions=k, horizon=horizon, replicates=replicates,
                   seed=seed, trace_path=path, metrics=[metric, "regret"])  # fmt: skip
    return run, pd.read_parquet(path)


@pytest.mark.parametrize("player", ["exp3", "dg_bandit"])
def test_dg2_score_equals_brute_force_and_rounds_satisfy_dgv2(player, tmp_path):
    k, horizon = 3, 40
    metric = DG2Score(R=[-5.0, 0.0, 1.0, 3.0])
    run, trace = run_bandit(player, k, horizon, 2, 7, tmp_path, metric)
    rows = run.rows[(run.rows.metric == "dg2_score") & (run.rows.t == horizon)]
    for r in range(2):
        tr = trace[trace.replicate == r].sort_values("t")
        probs, losses = np.stack(tr.probs), np.stack(tr.losses)  # bernoulli: already in [0, 1]
        slack = dgv2_slack(probs, losses)
        assert (slack[:, :3] >= -1e-12).all() and np.abs(slack[:, 3]).max() <= 1e-12
        for threshold in metric.R:
            got = rows[(rows.replicate == r) & (rows.param == threshold)].value.iloc[0]
            assert got == dg2_score_bruteforce(probs, losses, tr.action, threshold)


@pytest.mark.parametrize("adversary", ["bernoulli", "greedy"])
def test_engine_equals_the_bandit_reference_loop(adversary):
    from arena.bandit.reference import reference_play

    kw = dict(n_actions=4, horizon=60, replicates=2, seed=5,
              metrics={"dg2_score": {"R": [-3.0, 0.0, 2.0, 10.0]}})  # fmt: skip
    for player in ("exp3", "ucb1"):
        ref = reference_play(player, adversary, **kw)
        got = run_game(player, adversary, chunk_elements=7 * 4 * 2, **kw).rows
        assert got.drop(columns="value").equals(ref.drop(columns="value"))
        assert (got.value.to_numpy() == ref.value.to_numpy()).all()  # fractions of K: exact


def test_chips_are_unbiased_for_minus_the_regrets(tmp_path):
    """``s_T − (L_T − Σ_t p_t·ℓ_t)`` is a sum of martingale differences: mean 0 over replicates.

    Per arm, the replicate mean divided by its standard error is compared with the two-sided
    normal quantile of a 1e-3 false-alarm rate split over the K = 3 arms (Bonferroni,
    |z| ≤ 3.59); the sums of 60 bounded increments with p ≥ 0.1 are close to normal.
    """
    k, horizon, n = 3, 60, 300
    metric = DG2Score(R=[0.0])
    from arena.players.exp3 import Exp3

    # uniform exploration γ = 0.3 keeps every p_{t,i} ≥ 0.1: all arms drawable, moderate weights
    _, trace = run_bandit(Exp3(eta=0.1, gamma=0.3), k, horizon, n, 11, tmp_path, metric)
    trace = trace.sort_values(["replicate", "t"])
    probs = np.stack(trace.probs).reshape(n, horizon, k)
    losses = np.stack(trace.losses).reshape(n, horizon, k)
    assert probs.min() >= 0.1 - 1e-12  # the normal approximation's premise
    expected = np.einsum("rtk,rtk->r", probs, losses)
    truth = losses.sum(axis=1) - expected[:, None]  # −(expected regret) to each arm
    diff = metric.chips() - truth
    z = diff.mean(axis=0) / (diff.std(axis=0, ddof=1) / math.sqrt(n))
    assert (np.abs(z) <= 3.59).all(), z
    # and the chips do move: they are not the regrets themselves
    assert np.abs(diff).max() > 1.0


def test_dg_bandit_meets_its_potential_bound_on_the_chips(tmp_path):
    """Theorems 20-21: ``E[dg2_score_t(R)] ≤ exp(−ηR)((e^η + e^{−η} + K e^η η²)/2)^t``."""
    from arena.players.dg_bandit import DriftingGameBandit, log_growth

    k, horizon, n, eta = 3, 300, 32, 0.1
    # the R of ε = 0.9, 0.5, 0.1 at t = T (Theorem 21's radius): the bound is loose below
    thresholds = [(math.log(1 / e) + horizon * log_growth(eta, k)) / eta for e in (0.9, 0.5, 0.1)]
    run = run_game(DriftingGameBandit(eta=eta), "bernoulli", n_actions=k, horizon=horizon,
                   replicates=n, seed=3, metrics={"dg2_score": {"R": thresholds}})  # fmt: skip
    rows = run.rows[run.rows.metric == "dg2_score"]
    means = rows.groupby(["t", "param"]).value.mean()
    for (t, threshold), mean in means.items():
        bound = math.exp(-eta * threshold + t * log_growth(eta, k))
        # an expectation bound on the replicate mean of a [0, 1] value: 32 replicates give a
        # Hoeffding deviation sqrt(ln(1e3)/(2·32)) = 0.33 at false-alarm rate 1e-3
        assert mean <= bound + 0.33, (t, threshold, mean, bound)


# ---------------------------------------------------------------------------------------------
# DGv3


def oco_spec(domain, dim, loss="linear", sigma=0.0, n_rep=1, horizon=10):
    return GameSpec("oco", dim, horizon, (0.0, math.inf), n_replicates=n_rep, dim=dim,
                    replicate_ids=tuple(range(n_rep)), domain=domain, loss=loss,
                    sigma=sigma)  # fmt: skip


def feed(metric, spec, learner, data):
    """Start ``metric`` and hand it one block of rounds with the learner's total loss."""
    metric.start(spec)
    n_rep = spec.n_replicates
    metric.advance(OCOBlock(None, None, None, data, None, 1), None)
    core = OCOCore(n_rep, spec.dim)
    core.learner[:] = learner
    return metric.values(core)


def interval_fraction(learner, g_sum, threshold, r):
    """Exact ``|{w ∈ [−r, r] : learner − g w ≥ R}| / 2r`` for linear losses (g ≠ 0)."""
    cut = (learner - threshold) / g_sum  # g > 0: w ≤ cut; g < 0: w ≥ cut
    inside = np.clip(cut, -r, r)
    return (inside + r) / (2 * r) if g_sum > 0 else (r - inside) / (2 * r)


def disc_fraction(learner, g, threshold, r):
    """Exact area fraction of ``{‖w‖ ≤ r, ⟨g, w⟩ ≤ learner − R}`` (a circular segment)."""
    c = np.clip((learner - threshold) / np.linalg.norm(g), -r, r)  # signed distance of the chord
    return 1.0 - (r * r * math.acos(c / r) - c * math.sqrt(r * r - c * c)) / (math.pi * r * r)


def test_dg_volume_converges_to_the_exact_fraction():
    rng = np.random.default_rng(1)
    for _ in range(20):
        r, t = float(rng.uniform(0.5, 2)), 7
        g = rng.normal(size=(1, t, 1))
        learner, threshold = float(rng.normal()), float(rng.normal())
        exact = interval_fraction(learner, g.sum(), threshold, r)
        for cells in (3, 10, 100, 1000):
            spec = oco_spec(Domain("box", r), 1)
            got = feed(DGVolume(R=[threshold], grid=cells), spec, learner, RoundData(g=g))
            # each end of the interval misplaces at most half a cell: |error| ≤ 1/cells
            assert abs(got[0, 0] - exact) <= 1.0 / cells + 1e-12
    errors = []
    for cells in (16, 64, 256):
        g = np.array([[[0.6, -0.8], [0.3, 0.1]]])
        learner, threshold = 0.2, -0.3
        exact = disc_fraction(learner, g.sum(axis=1)[0], threshold, 1.0)
        spec = oco_spec(Domain("ball", 1.0), 2)
        got = feed(DGVolume(R=[threshold], grid=cells), spec, learner, RoundData(g=g))
        errors.append(abs(got[0, 0] - exact))
        # cells crossed by the chord and the circle (length ≤ 2π + 2): O(1/cells), here ≤ 8/cells
        assert errors[-1] <= 8.0 / cells
    assert errors[-1] < 0.01


@pytest.mark.parametrize(
    ("kind", "dim", "loss", "sigma"),
    [("box", 1, "linear", 0.0), ("ball", 2, "hinge", 0.5), ("box", 2, "squared", 0.0)],
)
def test_grid_metrics_equal_brute_force(kind, dim, loss, sigma):
    rng = np.random.default_rng(dim)
    t, cells = 9, 6
    spec = oco_spec(Domain(kind, 1.5), dim, loss, sigma, n_rep=2, horizon=t)
    if loss == "linear":
        data = RoundData(g=rng.normal(size=(2, t, dim)), z=rng.normal(size=(2, t, dim)))
    else:
        y = np.sign(rng.normal(size=(2, t)))
        data = RoundData(x=rng.normal(size=(2, t, dim)), y=y, z=rng.normal(size=(2, t, dim)))
    w = rng.uniform(-1, 1, size=(t, dim))
    points = domain_grid(spec.domain, dim, cells)
    one = RoundData(*(None if a is None else a[0] for a in data))
    learner, slow = grid_regrets_bruteforce(spec, points, w, one)
    slow = np.array(slow)
    thresholds = sorted(slow[[0, 3, len(slow) // 2]].tolist())  # include exact ties
    # replicate 1 is other data; only replicate 0 is compared
    vol = feed(DGVolume(R=thresholds, grid=cells), spec, learner, data)[0]
    want = [np.mean(slow >= th - 1e-9 * max(1, abs(th))) for th in thresholds]
    np.testing.assert_allclose(vol, want, atol=0)
    eps = [1.0 / len(slow), 0.3, 1.0]
    quant = feed(VolumeQuantileRegret(eps=eps, grid=cells), spec, learner, data)[0]
    ordered = sorted(slow, reverse=True)
    # the same sums in another order: 1e-12 of values of size ~10
    np.testing.assert_allclose(quant, [ordered[math.ceil(e * len(slow)) - 1] for e in eps],
                               rtol=0, atol=1e-11)  # fmt: skip
    # the inverse relation: volume_quantile_regret(ε) < R ⟺ dg_volume(R) < ⌈εG⌉/G
    above = feed(DGVolume(R=[quant[1] + 1e-6], grid=cells), spec, learner, data)[0, 0]
    assert above < math.ceil(0.3 * len(slow)) / len(slow)


@pytest.mark.parametrize("adversary", ["random_linear", "strongly_convex"])
def test_engine_equals_the_oco_reference_loop(adversary):
    from arena.oco.reference import reference_play_oco

    kw = dict(n_actions=2, horizon=30, replicates=2, seed=4,
              metrics={"dg_volume": {"R": [-1.0, 0.0, 1.0, 3.0], "grid": 7},
                       "volume_quantile_regret": {"eps": [0.05, 0.5], "grid": 7}})  # fmt: skip
    ref = reference_play_oco("ogd", adversary, **kw)
    got = run_game("ogd", adversary, **kw).rows
    assert set(got.metric) == {"dg_volume", "volume_quantile_regret"}
    assert got.drop(columns="value").equals(ref.drop(columns="value"))
    # float sums in other orders, of ≤ 30 terms of size ≤ ~10: 1e-11
    np.testing.assert_allclose(got.value, ref.value, rtol=0, atol=1e-11)


def test_grid_metrics_in_a_game_and_their_refusals():
    run = run_game("ogd", "random_linear", n_actions=2, horizon=50, replicates=2,
                   metrics={"dg_volume": {"R": [0.0, 5.0], "grid": 16},
                            "volume_quantile_regret": {"eps": [1e-6], "grid": 16},
                            "regret": {}})  # fmt: skip
    last = run.rows[run.rows.t == 50].set_index(["metric", "replicate", "param"]).value
    for r in range(2):
        # ε → 0: the regret to the best grid point, at most the regret to the best point of K
        assert last["volume_quantile_regret", r, 1e-6] <= last["regret", r, np.nan] + 1e-9
        assert 0.0 <= last["dg_volume", r, 5.0] <= last["dg_volume", r, 0.0] <= 1.0
    run3 = prepare_game("ogd", "random_linear", n_actions=3, horizon=5,
                        metrics=["dg_volume", "loss"])  # fmt: skip
    assert "d ≤ 2" in run3.skipped["dg_volume"]
    from arena.adversaries.random_linear import RandomLinear

    simplex = prepare_game("ogd", RandomLinear(domain="simplex"), n_actions=2, horizon=5,
                           metrics=["volume_quantile_regret", "loss"])  # fmt: skip
    assert "box or ball" in simplex.skipped["volume_quantile_regret"]
    with pytest.raises(ConfigError, match="grid"):
        run_game("ogd", "random_linear", n_actions=1, horizon=5,
                 metrics={"dg_volume": {"grid": 0}})  # fmt: skip
    with pytest.raises(ConfigError, match="eps"):
        run_game("ogd", "random_linear", n_actions=1, horizon=5,
                 metrics={"volume_quantile_regret": {"eps": [0.0]}})  # fmt: skip


# ---------------------------------------------------------------------------------------------
# CLI and tournament


def test_cli_runs_both_protocols_and_a_tournament(tmp_path):
    bandit = run_in_process(["run", "player=dg_bandit", "adversary=bernoulli", "n_actions=3",
                             "horizon=200", "replicates=2", "metrics=regret",
                             "+metrics.dg2_score.R=[0.0,2.0]",
                             f"hydra.run.dir={tmp_path / 'b'}"], tmp_path)  # fmt: skip
    assert bandit.returncode == 0, bandit.stderr
    df = pd.read_parquet(tmp_path / "b" / "results.parquet")
    assert sorted(df[df.metric == "dg2_score"].param.unique()) == [0.0, 2.0]
    oco = run_in_process(["run", "player=ogd", "adversary=random_linear", "n_actions=1",
                          "horizon=100", "metrics.dg_volume.grid=64",
                          f"hydra.run.dir={tmp_path / 'o'}"],
                         tmp_path)  # fmt: skip
    assert oco.returncode == 0, oco.stderr
    df = pd.read_parquet(tmp_path / "o" / "results.parquet")
    assert {"dg_volume", "volume_quantile_regret"} <= set(df.metric)  # in the default set
    (tmp_path / "dg.yaml").write_text(
        "name: dg\nplayers: [exp3, dg_bandit]\nadversaries: [bernoulli]\nn_actions: [3]\n"
        "horizon: 100\nreplicates: 2\nseed: 1\nmetrics:\n  dg2_score: {R: [0.0, 2.0]}\n"
    )
    tour = run_in_process(["tournament", "--config", "dg.yaml", "executor=serial", "out=res"],
                          tmp_path)  # fmt: skip
    assert tour.returncode == 0, tour.stderr
    rows = pd.concat(pd.read_parquet(p) for p in (tmp_path / "res" / "parts").glob("*.parquet"))
    assert set(rows.metric) == {"dg2_score"} and set(rows.player) == {"exp3", "dg_bandit"}
