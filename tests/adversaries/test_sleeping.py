"""Tests of the sleeping-experts adversary (arena/adversaries/sleeping.py) and of sleeping play.

Protocol: Luo 2016, §2.3.2 (confidence-rated and sleeping experts, Theorem 6: the bound called
B7 below) and our fallback for the all-asleep case. The engine's trace holds ``p_t`` and ``ℓ_t``
but not the confidences, so they are rebuilt from an identically seeded adversary
(:func:`arena.game.prepare_game`).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arena import GameSpec, play, run_game
from arena.adversaries.sleeping import Sleeping
from arena.adversaries.stochastic import Bernoulli
from arena.errors import ConfigError
from arena.experts.reference import reference_play
from arena.game import prepare_game
from arena.metrics.sleeping import sleeping_regret
from arena.players.ada_normal_hedge import AdaNormalHedge
from tests.helpers import assert_below, traced

ATOL = 1e-12
"""Engine against reference loop / brute force: sums of ≤ 400 terms in [0, 1], a few ulps each
(the tolerance of tests/arena/engine/test_reference_equivalence.py)."""

MODES = [
    {"mode": "random", "awake_prob": 0.4},
    {"mode": "random", "awake_prob": 0.05},
    {"mode": "arrivals"},
    {"mode": "specialists", "n_contexts": 3, "awake_prob": 0.2},
    {"mode": "specialists", "n_contexts": 9, "awake_prob": 0.0},
]


def reset_adversary(adversary, **kwargs):
    """The adversary as the engine resets it (same seeds, same spec)."""
    return prepare_game(AdaNormalHedge(), adversary, metrics={"sleeping_regret": {}}, **kwargs)


# ----------------------------------------------------------------------------------------------
# the masks


@pytest.mark.parametrize("params", MODES, ids=lambda p: "-".join(map(str, p.values())))
def test_masks_are_valid(params):
    n_act, horizon, n_rep = 6, 2000, 3
    game = reset_adversary(Sleeping(**params), n_actions=n_act, horizon=horizon, replicates=n_rep)
    conf = game.adversary.confidences_block(1, horizon)
    assert conf.shape == (n_rep, horizon, n_act) and conf.dtype == np.float64
    assert set(np.unique(conf)) <= {0.0, 1.0}
    assert (conf.sum(axis=2) >= 1).all()  # at least one expert awake every round
    mode = params["mode"]
    if mode == "random":
        frac = conf.mean()
        a = params["awake_prob"]
        # P(awake) = a + (1 − a)^N / N (the forced expert); 36000 Bernoulli draws: 5 sd ≈ 0.013
        assert abs(frac - (a + (1 - a) ** n_act / n_act)) < 0.02, frac
    elif mode == "arrivals":
        assert (conf[:, 0, 0] == 1).all() and (conf[:, :, 0] == 1).all()  # expert 0 from round 1
        assert (np.diff(conf, axis=1) >= 0).all()  # once arrived, always awake
        assert conf[:, 0].sum() < n_rep * n_act  # somebody arrives later
    else:
        k = params["n_contexts"]
        cover = game.adversary._cover
        for r in range(n_rep):
            columns = {tuple(cover[r][:, b].astype(float)) for b in range(k)}
            rows = {tuple(row) for row in conf[r]}
            assert rows == columns  # each round's mask is the cover of its context
            assert cover[r].any(axis=0).all()  # every context wakes somebody
            assert cover[r][np.arange(n_act), np.arange(n_act) % k].all()  # home buckets


@pytest.mark.parametrize("params", MODES, ids=lambda p: "-".join(map(str, p.values())))
def test_block_split_invariance(params):
    kw = {"n_actions": 5, "horizon": 300, "replicates": [4, 1]}
    one = reset_adversary(Sleeping(**params), **kw).adversary
    conf = one.confidences_block(1, 300)
    losses = one.losses_block(1, 300)
    split = reset_adversary(Sleeping(**params), **kw).adversary
    parts_c, parts_l, t0 = [], [], 1
    for n in (1, 2, 50, 1, 246):
        parts_c.append(split.confidences_block(t0, n))
        parts_l.append(split.losses_block(t0, n))
        t0 += n
    np.testing.assert_array_equal(np.concatenate(parts_c, axis=1), conf)
    np.testing.assert_array_equal(np.concatenate(parts_l, axis=1), losses)
    # the masks come from their own child stream: interleaving loss draws changes nothing
    again = reset_adversary(Sleeping(**params), **kw).adversary
    again.losses_block(1, 300)
    np.testing.assert_array_equal(again.confidences_block(1, 300), conf)


def test_streams_contract():
    # documented contract: the base adversary plays on rng.spawn(2)[0] of each replicate's
    # adversary stream, the masks on rng.spawn(2)[1]
    spec = GameSpec("experts", 4, 100, n_replicates=2)
    adversary = Sleeping(base_params={"gap": 0.3}, awake_prob=0.5)
    adversary.resolve_n_actions(4)
    adversary.reset(spec, [np.random.default_rng(s) for s in (1, 2)])
    base = Bernoulli(gap=0.3)
    base.reset(spec, [np.random.default_rng(s).spawn(2)[0] for s in (1, 2)])
    np.testing.assert_array_equal(adversary.losses_block(1, 100), base.losses_block(1, 100))
    masks = [np.random.default_rng(s).spawn(2)[1].random((100, 4)) < 0.5 for s in (1, 2)]
    conf = adversary.confidences_block(1, 100)
    for r in range(2):
        rows = masks[r].any(axis=1)  # rounds not needing the forced expert
        np.testing.assert_array_equal(conf[r][rows], masks[r][rows])


def test_passes_range_and_n_through(tmp_path):
    path = Path(tmp_path) / "l.npy"
    np.save(path, -1.0 + 3.0 * np.random.default_rng(0).random((50, 7)))
    adversary = Sleeping(base="replay", base_params={"path": str(path), "loss_range": [-1, 2]})
    assert adversary.resolve_n_actions(None) == 7
    assert adversary.declared_range() == (-1.0, 2.0)
    rows = play(AdaNormalHedge(), adversary, horizon=50, metrics={"sleeping_regret": {}})
    assert int(rows.n_actions.iloc[0]) == 7


# ----------------------------------------------------------------------------------------------
# sleeping play through the engine


@pytest.mark.parametrize("params", MODES, ids=lambda p: "-".join(map(str, p.values())))
def test_sleeping_regret_metric_equals_brute_force(params, tmp_path):
    kw = {"n_actions": 6, "horizon": 400, "replicates": 3, "seed": 2}
    adversary = Sleeping(**params)
    metrics = {"sleeping_regret": {}, "regret": {}, "bound": {}}
    rows, tr = traced(AdaNormalHedge(), adversary, tmp_path, metrics=metrics, **kw)
    game = reset_adversary(adversary, **kw)
    conf = game.adversary.confidences_block(1, 400)
    np.testing.assert_array_equal(tr["losses"], game.adversary.losses_block(1, 400))
    # zero mass on sleeping experts, exactly (U5)
    assert (tr["probs"][conf == 0] == 0).all()
    for t in sorted(set(rows.t)):
        got = rows[(rows.t == t) & (rows.metric == "sleeping_regret")].sort_values("replicate")
        want = [
            sleeping_regret(tr["probs"][r, :t], tr["losses"][r, :t], conf[r, :t]) for r in range(3)
        ]
        np.testing.assert_allclose(got.value.to_numpy(), want, rtol=0, atol=ATOL)
    # B7: the declared bound dominates the sleeping regret at every checkpoint
    sr = rows[rows.metric == "sleeping_regret"].sort_values(["t", "replicate"]).value.to_numpy()
    bd = rows[rows.metric == "bound:sleeping_regret"].sort_values(["t", "replicate"])
    assert_below(sr, bd.value.to_numpy(), f"B7 {params}")


@pytest.mark.parametrize("params", MODES[:4], ids=lambda p: "-".join(map(str, p.values())))
def test_engine_equals_reference_loop(params):
    # the fast path (kernel with confidences) against the literal loop (predict(confidences) /
    # update) of arena.experts.reference, every default metric that applies
    kw = {"n_actions": 5, "horizon": 150, "replicates": 3, "seed": 13}
    adversary = Sleeping(**params)
    fast = run_game(AdaNormalHedge(q=[1.0, 2.0, 3.0, 4.0, 5.0]), adversary, **kw).rows
    slow = reference_play(AdaNormalHedge(q=[1.0, 2.0, 3.0, 4.0, 5.0]), adversary, **kw)
    assert "sleeping_regret" in set(fast.metric) and "pseudo_regret" not in set(fast.metric)
    assert list(fast.columns) == list(slow.columns)
    np.testing.assert_allclose(fast.value, slow.value, rtol=0, atol=ATOL)
    pd.testing.assert_frame_equal(
        fast.drop(columns="value"), slow.drop(columns="value"), check_exact=True
    )


def test_fallback_fires_and_b7_holds():
    # our fallback for the all-asleep case: with random awake sets every awake expert can have R ≤
    # −1 (38-131 of
    # 400 rounds at N = 6); p ∝ q·I then, and the point-mass bound still holds for every expert
    kw = {"n_actions": 6, "horizon": 400, "replicates": 4, "seed": 7}
    adversary = Sleeping(awake_prob=0.4)
    game = reset_adversary(adversary, **kw)
    losses = game.adversary.losses_block(1, 400)
    conf = game.adversary.confidences_block(1, 400)
    player = AdaNormalHedge()
    player.reset(game.spec, [None] * 4)
    checkpoints = [1, 10, 100, 250, 400]
    t0 = 0
    for t in checkpoints:
        player.play_block(losses[:, t0:t], confidences=conf[:, t0:t])
        t0 = t
        big_r, big_c = player.cumulative_regrets, player.cumulative_magnitudes
        budget = player.potential_budget()
        point = np.sqrt(3 * big_c * np.log(budget[:, None] * 6))  # q_i = 1/6
        assert_below(np.maximum(big_r, 0), point, f"B7 per expert, t={t}")
        ((metric, param), value), *others = player.bounds(t).items()
        assert metric == "sleeping_regret" and math.isnan(param) and not others
        np.testing.assert_allclose(value, point.max(axis=1), rtol=1e-12)
    assert (player.fallback_rounds > 0).all(), player.fallback_rounds
    rows = play(AdaNormalHedge(), adversary, metrics={"sleeping_regret": {}, "bound": {}}, **kw)
    sr = rows[rows.metric == "sleeping_regret"].sort_values(["t", "replicate"]).value
    bd = rows[rows.metric == "bound:sleeping_regret"].sort_values(["t", "replicate"]).value
    assert_below(sr.to_numpy(), bd.to_numpy(), "B7 engine")


# ----------------------------------------------------------------------------------------------
# refusals


def test_player_without_confidences_is_refused():
    with pytest.raises(ConfigError) as info:
        play("hedge", Sleeping(), n_actions=3, horizon=10)
    msg = str(info.value)
    assert "hedge" in msg and "supports_confidences" in msg and "sleeping" in msg


@pytest.mark.parametrize(
    ("params", "parameter", "fragment"),
    [
        ({"base": "greedy"}, "base", "adaptive"),
        ({"base": "bernouli"}, "base", "did you mean"),
        ({"base_params": {"gapp": 0.1}}, "gapp", "did you mean"),
        ({"mode": "dreaming"}, "mode", "one of"),
        ({"awake_prob": 0.0}, "awake_prob", "(0, 1]"),
        ({"mode": "specialists", "awake_prob": 1.5}, "awake_prob", "[0, 1]"),
        ({"mode": "specialists", "n_contexts": 0}, "n_contexts", "≥ 1"),
    ],
)
def test_bad_parameters_are_refused(params, parameter, fragment):
    with pytest.raises(ConfigError) as info:
        play(AdaNormalHedge(), Sleeping(**params), n_actions=3, horizon=10)
    assert info.value.parameter == parameter and fragment in str(info.value), str(info.value)


def test_arrivals_need_the_horizon():
    adversary = Sleeping(mode="arrivals")
    adversary.resolve_n_actions(3)
    with pytest.raises(ConfigError, match="needs T"):
        adversary.reset(GameSpec("experts", 3, None), [np.random.default_rng(0)])


def test_confidence_mode_rates_the_awake_experts_in_0_1():
    """Confidence-rated experts (Luo 2016, §2.3.2): a sleeping expert's confidence is 0, an
    awake one's lies in (0, 1] and is fractional; every round wakes someone; any split of the
    rounds into blocks gives the same confidences."""
    adv = Sleeping(mode="confidence", awake_prob=0.6)
    spec = GameSpec("experts", 5, 400, n_replicates=3)
    streams = [np.random.default_rng(s) for s in range(3)]
    adv.reset(spec, streams)
    whole = adv.confidences_block(1, 400)
    assert ((whole >= 0) & (whole <= 1)).all()
    assert (whole.max(axis=2) > 0).all()
    awake = whole > 0
    assert 0.5 < awake.mean() < 0.7
    assert (whole[awake] < 1).mean() > 0.99  # fractional, not masks
    again = Sleeping(mode="confidence", awake_prob=0.6)
    again.reset(spec, [np.random.default_rng(s) for s in range(3)])
    parts = np.concatenate(
        [again.confidences_block(1, 150), again.confidences_block(151, 250)], axis=1
    )
    np.testing.assert_array_equal(whole, parts)


def test_ada_normal_hedge_keeps_its_sleeping_bound_under_real_confidences():
    run = run_game(AdaNormalHedge(), Sleeping(mode="confidence", awake_prob=0.6), n_actions=6,
                   horizon=2000, replicates=8, seed=5,
                   metrics={"sleeping_regret": {}, "bound": {}})  # fmt: skip
    rows = run.rows.pivot_table(index=["replicate", "t"], columns="metric", values="value")
    assert (rows["sleeping_regret"] <= rows["bound:sleeping_regret"] + 1e-9).all()
    # the engine and the literal loop agree on the confidence-rated regret
    game = {"n_actions": 6, "horizon": 200, "replicates": 2, "seed": 5,
            "metrics": {"sleeping_regret": {}}}  # fmt: skip
    adv = Sleeping(mode="confidence", awake_prob=0.6)
    ref = reference_play(AdaNormalHedge(), adv, **game)
    fast = run_game(AdaNormalHedge(), adv, **game).rows
    np.testing.assert_allclose(
        fast.sort_values(["t", "replicate"]).value.to_numpy(),
        ref.sort_values(["t", "replicate"]).value.to_numpy(),
        rtol=0,
        atol=1e-12,
    )
