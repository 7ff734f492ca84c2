"""The ``estimate_bias`` metric: brute force on small random instances (a non-unit loss range, so
normalization matters), the statistics of Exp3's unbiased and Exp3-IX's biased estimators,
skipping for players without estimates, and the command line."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena.bandit.metrics import estimate_bias_bruteforce
from arena.experts.components import ObliviousAdversary
from arena.game import run_game
from arena.players.bandit_wrapper import BanditWrapper
from arena.players.exp3 import Exp3
from arena.players.exp3_ix import Exp3IX
from arena.spec import GameSpec
from tests.helpers.cli import arena_in_process

LO, HI = -1.0, 3.0


class ShiftedUniform(ObliviousAdversary):
    """Uniform losses on the declared range [−1, 3], so that normalization matters."""

    name = "shifted_uniform"

    def declared_range(self):
        return (LO, HI)

    def reset(self, spec, rngs):
        self._rngs, self._k = list(rngs), spec.n_actions

    def losses_block(self, t0, n):
        return np.stack([LO + (HI - LO) * rng.random((n, self._k)) for rng in self._rngs])


def _brute_force(trace: pd.DataFrame, denominator_extra: float):
    """Return, per replicate, the estimates ``Σ_s 1{I_s = i} ℓ_s / (p_{s,i} + γ)``, the normalized
    losses (T, K) and the expected bias ``Σ_s (p ℓ/(p + γ) − ℓ)``, from the trace alone."""
    out = {}
    for r, tr in trace.groupby("replicate"):
        tr = tr.sort_values("t")
        probs, losses = np.stack(tr.probs), (np.stack(tr.losses) - LO) / (HI - LO)
        est = np.zeros(probs.shape[1])
        expected = np.zeros(probs.shape[1])
        for p, ell, a in zip(probs.tolist(), losses.tolist(), tr.action.tolist(), strict=True):
            est[a] += ell[a] / (p[a] + denominator_extra)
            for i in range(len(p)):
                expected[i] += p[i] * ell[i] / (p[i] + denominator_extra) - ell[i]
        out[r] = (est, losses, expected)
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", ["exp3", "exp3_ix", "wrapper_ix"])
def test_estimate_bias_equals_brute_force(kind, seed, tmp_path):
    rng = np.random.default_rng(seed)
    k, horizon = int(rng.integers(2, 6)), int(rng.integers(5, 80))
    eta, gamma = float(rng.uniform(0.05, 1.0)), float(rng.uniform(0.01, 0.5))
    player, extra = {
        "exp3": (Exp3(eta=eta), 0.0),
        "exp3_ix": (Exp3IX(eta=eta, gamma=gamma), gamma),
        "wrapper_ix": (BanditWrapper("normal_hedge", estimator="ix", ix_gamma=gamma), gamma),
    }[kind]
    path = tmp_path / "trace.parquet"
    run = run_game(player, ShiftedUniform(), n_actions=k, horizon=horizon, replicates=2,
                   seed=seed, trace_path=path, metrics=["estimate_bias"])  # fmt: skip
    rows = run.rows[run.rows.t == horizon]
    for r, (est, losses, _) in _brute_force(pd.read_parquet(path), extra).items():
        at = rows[rows.replicate == r]
        for arm in range(k):
            got = at[(at.metric == "estimate_bias") & (at.param == arm)].value.iloc[0]
            want = estimate_bias_bruteforce(est, losses, arm)
            assert abs(got - want) <= 1e-9 * max(1.0, abs(est[arm]))


def _final_bias(rows):
    last = rows[(rows.t == rows.t.max()) & (rows.metric == "estimate_bias")]
    return last.pivot(index="replicate", columns="param", values="value").to_numpy()


def test_exp3_estimates_are_unbiased_on_average():
    """Mean over 400 replicates of ``L̂_{T,i} − L_{T,i}`` within 4 standard errors of 0, per arm."""
    rows = run_game(Exp3(gamma=0.05), "bernoulli", n_actions=3, horizon=300, replicates=400,
                    seed=11, metrics=["estimate_bias"]).rows  # fmt: skip
    bias = _final_bias(rows)
    se = bias.std(axis=0, ddof=1) / math.sqrt(bias.shape[0])
    assert (np.abs(bias.mean(axis=0)) <= 4 * se).all(), (bias.mean(axis=0), se)


def test_exp3_ix_bias_matches_its_expected_bias(tmp_path):
    """Exp3-IX's estimates are biased down. Its expected bias, ``Σ_s (E[ℓ̂_s | p_s] − ℓ_s)`` with
    the player's own ``estimate_expectation``, is computed from the trace; ``estimate_bias``
    minus it is a martingale, so its mean over 400 replicates lies within 4 standard errors of
    0 (paired per replicate), while the expected bias itself is clearly negative."""
    gamma = 0.05
    path = tmp_path / "trace.parquet"
    rows = run_game(Exp3IX(eta=0.1, gamma=gamma), "bernoulli", n_actions=3, horizon=300,
                    replicates=400, seed=12, metrics=["estimate_bias"],
                    trace_path=path).rows  # fmt: skip
    bias = _final_bias(rows)
    trace = pd.read_parquet(path).sort_values(["replicate", "t"])
    probs = np.stack(trace.probs).reshape(400, 300, 3)
    losses = np.stack(trace.losses).reshape(400, 300, 3)
    probe = Exp3IX(eta=0.1, gamma=gamma)
    probe.reset(GameSpec("bandit", 3, 300, (0.0, 1.0)), [np.random.default_rng(0)])
    expected = (probe.estimate_expectation(losses, probs) - losses).sum(axis=1)
    diff = bias - expected
    se = diff.std(axis=0, ddof=1) / math.sqrt(diff.shape[0])
    assert (np.abs(diff.mean(axis=0)) <= 4 * se).all(), (diff.mean(axis=0), se)
    assert (expected < 0).all()
    assert (expected.mean(axis=0) < -4 * se).all()  # the bias is detectable at this size


def test_players_without_estimates_log_nothing():
    run = run_game("ucb1", "bernoulli", n_actions=3, horizon=50,
                   metrics=["regret", "estimate_bias"])  # fmt: skip
    assert set(run.rows.metric) == {"regret"}
    assert "keeps no loss estimates" in run.skipped_metrics["estimate_bias"]
    default = run_game("thompson", "bernoulli", n_actions=3, horizon=50).rows  # default metrics
    assert "estimate_bias" not in set(default.metric)
    experts = run_game("hedge", "bernoulli", n_actions=3, horizon=50,
                       metrics=["regret", "estimate_bias"])  # fmt: skip
    assert "bandit protocol only" in experts.skipped_metrics["estimate_bias"]


def test_arm_subset():
    rows = run_game("tsallis_inf", "bernoulli", n_actions=4, horizon=40,
                    metrics={"estimate_bias": {"arms": [2]}}).rows  # fmt: skip
    assert set(rows.param) == {2.0} and np.isfinite(rows.value).all()


def test_estimate_bias_from_the_command_line(tmp_path):
    out = tmp_path / "run"
    res = arena_in_process(
        "run", "player=exp3_ix", "adversary=bernoulli", "n_actions=3", "horizon=200",
        "replicates=2", "metrics=regret", "+metrics.estimate_bias.arms=[0,2]",
        f"hydra.run.dir={out}", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    df = pd.read_parquet(out / "results.parquet")
    assert set(df.metric) == {"regret", "estimate_bias"}
    assert set(df[df.metric == "estimate_bias"].param) == {0.0, 2.0}
    # and in the default set of a bandit run
    out2 = tmp_path / "run2"
    res = arena_in_process("run", "player=exp3", "adversary=bernoulli", "n_actions=3", "horizon=50",
                f"hydra.run.dir={out2}", cwd=tmp_path)  # fmt: skip
    assert res.returncode == 0, res.stderr
    df = pd.read_parquet(out2 / "results.parquet")
    assert set(df[df.metric == "estimate_bias"].param) == {0.0, 1.0, 2.0}
