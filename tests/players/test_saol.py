"""Tests of SAOL (arena/players/saol.py): a literal transcription of Daniely, Gonen & Shalev-Shwartz
(2015), Algorithm SAOL^B with one black box per covering interval, golden values, the Prod
potential and per-interval meta bound the declared bound rests on, the declared strongly
adaptive bound on several adversaries (one adaptive), the gain over Hedge on shifting experts,
memory and errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import yaml

from arena import play
from arena.errors import ConfigError
from arena.players.ada_normal_hedge_tv import geometric_levels
from arena.players.saol import (
    SAOL,
    intervals_started,
    level_rate,
    meta_bound,
    meta_bound_closed_form,
    piece_meta_bound,
)
from tests.helpers import check_declared
from tests.helpers.contract import run_in_process
from tests.helpers.experts import spec, step_player

TOL = 1e-12
"""The transcription multiplies plain weights, the player adds ln(1 + ηr) and normalizes a
softmax; both are exact to ~1e-16 relative per round, far below 1e-12 after 70 rounds."""


def hedge_fixed(cum, eta):
    """Hedge with a fixed rate on cumulative unit losses (the black box of the transcription)."""
    w = [math.exp(-eta * (c - min(cum))) for c in cum]
    return [x / sum(w) for x in w]


def transcription(losses, base_eta, adaptive=False):
    """SAOL^B from the paper's pseudocode for one (T, N) game, plain Python.

    Every covering interval J = [q, s] (s = q + 2^k − 1, 2^k | q) gets its own black box
    B_J = Hedge(base_eta) started at q and the weight w(J) = η_J = min(1/2, |J|^{−1/2}) at q,
    then w(J) ← w(J)(1 + η_J r_t(J)) with r_t(J) = ℓ_t(x_t) − ℓ_t(x_t(J)); the player plays
    x_t = Σ_J w(J) x_t(J)/W_t over the active J. ``adaptive``: ignore ``losses`` and put loss 1
    on the experts of largest p_t (ties all hit). Returns p_t, the losses played, and per round,
    for every interval (q, k) started so far, w(J)/η_J and the sum of r_t(J) over its rounds.
    """
    n_rounds, n = losses.shape
    boxes = {}  # (q, k) -> dict(cum, w, r_sum)
    out, played, history = [], [], []
    for t in range(1, n_rounds + 1):
        for k in range(t.bit_length()):
            if t % (1 << k) == 0:
                eta = min(0.5, 1.0 / math.sqrt(1 << k))
                boxes[(t, k)] = {"cum": [0.0] * n, "w": eta, "eta": eta, "r_sum": 0.0}
        active = [J for J in boxes if J[0] <= t <= J[0] + (1 << J[1]) - 1]
        big_w = sum(boxes[J]["w"] for J in active)
        x = {J: hedge_fixed(boxes[J]["cum"], base_eta) for J in active}
        p = [sum(boxes[J]["w"] * x[J][i] for J in active) / big_w for i in range(n)]
        out.append(p)
        if adaptive:
            top = max(p)
            ell = [1.0 if v >= top - 1e-12 else 0.0 for v in p]
        else:
            ell = list(losses[t - 1])
        played.append(ell)
        loss_mix = sum(p[i] * ell[i] for i in range(n))
        for J in active:
            b = boxes[J]
            r = loss_mix - sum(x[J][i] * ell[i] for i in range(n))
            b["w"] *= 1.0 + b["eta"] * r
            b["r_sum"] += r
            b["cum"] = [c + v for c, v in zip(b["cum"], ell, strict=True)]
        history.append({J: (b["w"] / b["eta"], b["r_sum"]) for J, b in boxes.items()})
    return np.array(out), np.array(played), history


# ----------------------------------------------------------------------------------------------
# the algorithm


@pytest.mark.parametrize("n_act", [1, 2, 4])
def test_matches_transcription(n_act):
    rng = np.random.default_rng(20 + n_act)
    losses = rng.random((70, n_act))
    losses[:, 0] = np.round(losses[:, 0])
    want = transcription(losses, 0.5)[0]
    player = SAOL("hedge", {"eta": 0.5})
    player.reset(spec(n_act, 70), [np.random.default_rng(0)])
    np.testing.assert_allclose(step_player(player, losses[None])[0], want, rtol=0, atol=TOL)


def test_golden_first_rounds():
    # losses (0, 1) every round, base Hedge(η = ln 3): a copy that saw m rounds plays
    # (1, 3^{−m})/(1 + 3^{−m}). Rounds 1, 2 and 4: every active interval starts now, p uniform.
    # Round 3: [3,3] (new, w = ½) and [2,3] (w = ½(1 + ½·0): r = 0 at round 2, one copy alive),
    # so p_3 = ½(¾, ¼) + ½(½, ½). Round 5: [5,5], [4,5] and [4,7], all of weight ½:
    # p_5 = ⅔(¾, ¼) + ⅓(½, ½). Round 6: [4,7] has w = ½(1 + ½ r_5), r_5 = ⅓ − ¼ = 1/12, against
    # the newcomers [6,6] and [6,7] of weight ½ each.
    player = SAOL("hedge", {"eta": math.log(3.0)})
    player.reset(spec(2, 16), [None])
    half, q1, q2 = np.array([0.5, 0.5]), np.array([0.75, 0.25]), np.array([0.9, 0.1])
    w47 = 0.5 * (1 + 0.5 / 12)
    want = {
        1: half,
        2: half,
        3: 0.5 * q1 + 0.5 * half,
        4: half,
        5: (2 * q1 + half) / 3,
        6: (w47 * q2 + 1.0 * half) / (w47 + 1.0),
    }
    for t in range(1, 7):
        np.testing.assert_allclose(player.predict()[0], want[t], rtol=0, atol=TOL, err_msg=str(t))
        player.update(np.array([[0.0, 1.0]]))


def test_interval_weights_follow_the_levels():
    # one weight per level, summing to 1; the copy of each level's interval is the covering's
    player = SAOL("hedge", {"eta": 0.3})
    player.reset(spec(3, None, n_rep=2), [None, None])
    rng = np.random.default_rng(2)
    for t in range(1, 130):
        p_int = player.interval_weights()
        assert p_int.shape == (2, t.bit_length())
        np.testing.assert_allclose(p_int.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        assert player.live_copies() == sorted({a for _, a in geometric_levels(t)})
        v = player.copy_weights()
        assert v.shape == (2, len(player.live_copies()))
        player.update(rng.random((2, 3)))
    assert [level_rate(k) for k in range(6)] == [0.5, 0.5, 0.5, 2**-1.5, 0.25, 2**-2.5]


# ----------------------------------------------------------------------------------------------
# the facts the declared bound uses


@pytest.mark.parametrize("kind", ["uniform", "adaptive"])
def test_prod_potential_and_interval_meta_bound(kind):
    # Σ_I w(I)/η_I over the intervals started by t is exactly K_t = 2t − popcount(t), and on
    # every prefix of n rounds of a level-k interval Σ r ≤ P(k, n) at ln K_t, round by round, on
    # random losses and against the greedy adaptive adversary
    rng = np.random.default_rng(7)
    losses = rng.random((200, 3))
    _, _, history = transcription(losses, 0.4, adaptive=kind == "adaptive")
    for t, state in enumerate(history, start=1):
        assert len(state) == intervals_started(t)
        total = sum(w for w, _ in state.values())
        assert abs(total - intervals_started(t)) <= 1e-9 * t
        log_k = math.log(intervals_started(t))
        for (q, k), (_, r_sum) in state.items():
            n = min(t, q + (1 << k) - 1) - q + 1
            assert r_sum <= piece_meta_bound(k, n, log_k) + 1e-9, (t, q, k)


def test_meta_bound_against_brute_force():
    # meta_bound = max over (whole pieces of distinct levels, last piece) of the piece bounds,
    # ≥ the exact subset maximum, and below the closed form
    def exact(tau, t):
        log_k = math.log(intervals_started(t))
        best = 0.0
        for b in range(tau + 1):
            whole = sum(
                piece_meta_bound(k, 1 << k, log_k) for k in range(b.bit_length()) if b >> k & 1
            )
            n = tau - b
            last = piece_meta_bound((n - 1).bit_length(), n, log_k) if n else 0.0
            best = max(best, whole + last)
        return best

    for t, tau in [(3, 3), (40, 17), (300, 64), (300, 300), (5000, 200), (10**6, 129)]:
        m = meta_bound(tau, t)
        assert exact(tau, t) <= m + 1e-9 and m <= min(tau, meta_bound_closed_form(tau, t))
    for t, tau in itertools.product([10, 10**4, 10**7], [1, 2, 7, 100, 4096, 10**4]):
        assert meta_bound(tau, t) <= meta_bound_closed_form(min(tau, t), t) + 1e-9


def test_partition_pieces_are_covering_prefixes():
    rng = np.random.default_rng(3)
    for _ in range(300):
        s = int(rng.integers(1, 500))
        e = s + int(rng.integers(0, 300))
        pieces = SAOL.partition(s, e)
        assert pieces[0][0] == s and pieces[-1][1] == e
        for (_, e0, _), (s1, _, _) in itertools.pairwise(pieces):
            assert s1 == e0 + 1
        for x, end, k in pieces:
            assert x % (1 << k) == 0 and end - x + 1 <= 1 << k
        whole = [k for x, end, k in pieces[:-1]]
        assert all(end - x + 1 == 1 << k for x, end, k in pieces[:-1])
        assert len(set(whole)) == len(whole)
        n = e - s + 1
        x, end, k = pieces[-1]
        assert sum(1 << j for j in whole) <= n and k == (end - x).bit_length()


# ----------------------------------------------------------------------------------------------
# the declared bound and behaviour

ADVERSARIES = [
    ("shifting_experts", {"n_switches": 4, "gap": 0.4}),
    ("planted_windows", {}),
    ("greedy", {}),
    ("bernoulli", {"gap": 0.2}),
]
METRICS = {"regret": {}, "adaptive_regret": {}, "sa_regret": {"tau": [10, 60]}, "bound": {}}


@pytest.mark.parametrize(("name", "params"), ADVERSARIES)
def test_declared_bound_holds(name, params):
    for player in (SAOL(bound_taus=[10, 60]), SAOL("hedge", {"eta": "anytime"}, [10, 60])):
        rows = play(player, name, n_actions=3, horizon=300, replicates=2, seed=4,
                    adversary_params=params, metrics=METRICS)  # fmt: skip
        assert rows.metric.eq("bound:sa_regret").any()
        assert check_declared(rows, f"{player!r} {name}") > 0


def test_no_bound_without_base_bound():
    rows = play(SAOL("ftl", bound_taus=[5]), "bernoulli", n_actions=2, horizon=50,
                metrics={"regret": {}, "bound": {}})  # fmt: skip
    assert not rows.metric.str.startswith("bound:").any()
    player = SAOL("ftl")
    player.reset(spec(2, 10), [None])
    player.update(np.array([[0.0, 1.0]]))
    assert np.isnan(player.strongly_adaptive_bound(1)).all()


def test_beats_hedge_on_shifting_experts():
    # measured (T = 2000, N = 5, 8 switches, gap 0.4, 4 replicates, mean adaptive / sa τ=250):
    # hedge 105.85 / 96.25; saol with hedge "anytime" 55.02 / 50.62, with the default horizon-tuned
    # hedge 71.42 / 57.06, with ada_hedge 53.67 / 49.95
    kw = {"n_actions": 5, "horizon": 2000, "replicates": 4, "seed": 1,
          "adversary_params": {"n_switches": 8, "gap": 0.4},
          "metrics": {"adaptive_regret": {}, "sa_regret": {"tau": [250]}}}  # fmt: skip
    hedge = play("hedge", "shifting_experts", **kw)
    saol = play(SAOL("hedge", {"eta": "anytime"}), "shifting_experts", **kw)
    h = hedge[hedge.t == 2000].groupby("metric").value.mean()
    s = saol[saol.t == 2000].groupby("metric").value.mean()
    assert s["adaptive_regret"] < 0.65 * h["adaptive_regret"], (s, h)
    assert s["sa_regret"] < 0.65 * h["sa_regret"], (s, h)


def test_live_copies_logarithmic():
    player = SAOL("hedge", {"eta": 0.2})
    player.reset(spec(2, None), [None])
    rng = np.random.default_rng(1)
    for t in range(1, 1100):
        assert len(player.live_copies()) <= t.bit_length()
        player.update(rng.random((1, 2)))


def test_errors_name_the_component():
    with pytest.raises(ConfigError, match=r"saol.*base.*exp3.*not an experts player"):
        play(SAOL("exp3"), "bernoulli", n_actions=2, horizon=5)
    with pytest.raises(ConfigError, match=r"saol.*base_params"):
        play(SAOL("hedge", {"eta": -1.0}), "bernoulli", n_actions=2, horizon=5)
    with pytest.raises(ConfigError, match=r"saol.*bound_taus"):
        play(SAOL(bound_taus=[0]), "bernoulli", n_actions=2, horizon=5)


# ----------------------------------------------------------------------------------------------
# from the command line and in a tournament


def test_cli_run_and_tournament(tmp_path):
    out = tmp_path / "run"
    done = run_in_process(
        [
            "run",
            "player=saol",
            "player.base=hedge",
            "+player.base_params={eta:anytime}",
            "player.bound_taus=[10,30]",
            "adversary=shifting_experts",
            "n_actions=3",
            "horizon=80",
            "replicates=2",
            "metrics=regret",
            "+metrics.sa_regret.tau=[10,30]",
            "+metrics.adaptive_regret={}",
            "+metrics.bound={}",
            f"hydra.run.dir={out}",
        ],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    rows = pd.read_parquet(out / "results.parquet")
    assert check_declared(rows, "cli saol") > 0
    assert sorted(rows[rows.metric == "bound:sa_regret"].param.unique()) == [10.0, 30.0]
    config = {
        "name": "saol_tiny",
        "players": [
            {"name": "saol", "params": {"base": "hedge", "base_params": {"eta": "anytime"}}},
            {"name": "saol", "params": {"base": "ada_hedge"}},
            "ml_prod",
        ],
        "adversaries": ["shifting_experts", "greedy"],
        "n_actions": [3],
        "horizon": 60,
        "replicates": 2,
        "seed": 5,
        "metrics": {"adaptive_regret": {}, "sa_regret": {"tau": [10]}, "bound": {}},
    }
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(config))
    done = run_in_process(
        ["tournament", "--config", "tiny.yaml", "executor=serial", "out=results"], tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "6 cell(s) run, 0 already done, 0 failed" in done.stdout
    parts = (tmp_path / "results" / "parts").glob("results-*.parquet")
    rows = pd.concat(pd.read_parquet(p) for p in parts)
    assert set(rows.player) == {"saol", "ml_prod"}
    assert rows[rows.player == "saol"].metric.eq("bound:adaptive_regret").any()
