"""Oracle tests of confidence-rated (sleeping) ML-Prod (``arena.players.ml_prod``): Gaillard, Stoltz
& van Erven (2014), ML-Prod through their generic reduction for experts that report their
confidences, i.e. ``p ∝ I η w`` and ``r = I(ℓ̂ − ℓ)``.

A literal transcription with plain weights, through the reduction's modified losses
``ℓ̃ = I ℓ + (1 − I) ℓ̂`` (so the reduction itself is checked, not only its simplified form);
equality with plain ML-Prod when every confidence is 1; the declared bound on the confidence-rated
regret in the 0/1 modes and the confidence mode of the ``sleeping`` adversary, and against an
adaptive adversary; zero mass on sleeping experts.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena import play
from arena.adversaries.sleeping import Sleeping
from arena.game import prepare_game
from arena.players.ml_prod import MLProd
from tests.helpers import assert_below, check_declared, save_matrix, traced
from tests.helpers.experts import block_player, spec, step_player

LITERAL_ATOL = 1e-10
"""The transcription multiplies plain weights (w·(1 + ηr))^{η'/η}, the player adds logarithms;
both are exact to ~1e-15 relative per round, so p agrees to ~1e-13 after 200 rounds."""

KERNEL_ATOL = 1e-12
"""predict/update and play_block run the same kernels row by row: equal up to rounding."""

SPLITS = [[200], [1, 199], [7, 50, 143]]


def random_confidences(rng, n_rounds, n_act, fractional, awake=0.5):
    """0/1 masks with at least one expert awake; ``fractional``: awake levels in (0, 1]."""
    conf = (rng.random((n_rounds, n_act)) < awake).astype(float)
    none = ~conf.any(axis=1)
    conf[none, rng.integers(0, n_act, none.sum())] = 1.0
    if fractional:
        conf *= rng.choice([0.25, 0.5, 1.0, rng.random()], size=conf.shape)
    return conf


def literal_sleeping_ml_prod(losses, conf, adaptive=False):
    """ML-Prod on the reduction's losses, plain weights, for one (T, N) game.

    Standard ML-Prod gives p̃ ∝ η w; the player plays p ∝ I p̃ and ML-Prod then sees the losses
    ℓ̃_k = I_k ℓ_k + (1 − I_k) ℓ̂ (ℓ̂ = p·ℓ), whose instantaneous regrets p̃·ℓ̃ − ℓ̃_k are used as
    is. ``adaptive``: ignore ``losses`` and put loss 1 on the awake experts of largest p_t.
    Returns p_t, the losses played, the per-expert confidence-rated regrets and the bound terms
    (ln N/η_0 + Σ η r² + ln B_t/η_t) per round.
    """
    horizon, k = losses.shape
    log_n = math.log(k)
    w = [1.0 / k] * k
    eta = [min(0.5, math.sqrt(log_n))] * k
    sq, eta_sq = [0.0] * k, [0.0] * k
    excess = 0.0
    regret = [0.0] * k
    probs, played, regrets, bounds = [], [], [], []
    for t in range(horizon):
        z = [eta[i] * w[i] for i in range(k)]
        p_tilde = [v / sum(z) for v in z]
        mass = [conf[t, i] * p_tilde[i] for i in range(k)]
        p = [v / sum(mass) for v in mass]
        if adaptive:
            top = max(p)
            row = [1.0 if v >= top - 1e-12 and conf[t, i] > 0 else 0.0 for i, v in enumerate(p)]
        else:
            row = list(losses[t])
        h = sum(p[i] * row[i] for i in range(k))
        modified = [conf[t, i] * row[i] + (1.0 - conf[t, i]) * h for i in range(k)]
        h_tilde = sum(p_tilde[i] * modified[i] for i in range(k))
        for i in range(k):
            r = h_tilde - modified[i]
            regret[i] += conf[t, i] * (h - row[i])
            sq[i] += r * r
            eta_sq[i] += eta[i] * r * r
            new = min(0.5, math.sqrt(log_n / (1.0 + sq[i])))
            w[i] = (w[i] * (1.0 + eta[i] * r)) ** (new / eta[i])
            excess += eta[i] / new - 1.0
            eta[i] = new
        probs.append(p)
        played.append(row)
        regrets.append(list(regret))
        big_b = 1.0 + excess / math.e
        eta0 = min(0.5, math.sqrt(log_n))
        bounds.append([log_n / eta0 + eta_sq[i] + math.log(big_b) / eta[i] for i in range(k)])
    return np.array(probs), np.array(played), np.array(regrets), np.array(bounds)


@pytest.mark.parametrize("fractional", [False, True])
def test_matches_literal_transcription(fractional):
    rng = np.random.default_rng(51 + fractional)
    horizon, n_act, n_rep = 200, 5, 2
    losses = rng.random((n_rep, horizon, n_act))
    losses[1] = np.round(losses[1])
    conf = np.stack([random_confidences(rng, horizon, n_act, fractional) for _ in range(n_rep)])
    want = np.stack([literal_sleeping_ml_prod(losses[r], conf[r])[0] for r in range(n_rep)])
    player = MLProd()
    player.reset(spec(n_act, horizon, n_rep), [None] * n_rep)
    got = step_player(player, losses, conf)
    np.testing.assert_allclose(got, want, rtol=0, atol=LITERAL_ATOL)
    assert (got[conf == 0] == 0).all()  # exactly zero on the sleeping experts
    for split in SPLITS:
        fast = MLProd()
        fast.reset(spec(n_act, horizon, n_rep), [None] * n_rep)
        np.testing.assert_allclose(
            block_player(fast, losses, split, conf), got, rtol=0, atol=KERNEL_ATOL
        )


def test_engine_sleeping_game_matches_transcription(tmp_path):
    # the engine hands the adversary's confidences to predict, update and play_block; rebuild
    # them from an identically seeded, identically reset adversary
    rng = np.random.default_rng(8)
    horizon, n_act = 200, 4
    losses = rng.random((horizon, n_act))
    adversary = Sleeping(
        base="replay",
        base_params={"path": save_matrix(tmp_path, losses)},
        mode="confidence",
        awake_prob=0.6,
    )
    kwargs = {"horizon": horizon, "replicates": 2, "seed": 4}
    _, tr = traced(MLProd(), adversary, tmp_path, metrics={"sleeping_regret": {}}, **kwargs)
    game = prepare_game(MLProd(), adversary, metrics={"sleeping_regret": {}}, **kwargs)
    conf = game.adversary.confidences_block(1, horizon)
    assert ((conf > 0) & (conf < 1)).any()
    for r in range(2):
        want = literal_sleeping_ml_prod(losses, conf[r])[0]
        np.testing.assert_allclose(tr["probs"][r], want, rtol=0, atol=LITERAL_ATOL)


def test_all_confidences_one_is_plain_ml_prod_exactly():
    rng = np.random.default_rng(3)
    horizon, n_act, n_rep = 150, 6, 2
    losses = rng.random((n_rep, horizon, n_act))
    ones = np.ones_like(losses)
    runs = {}
    for label, conf in (("plain", None), ("ones", ones)):
        for mode in ("step", "block"):
            player = MLProd()
            player.reset(spec(n_act, horizon, n_rep), [None] * n_rep)
            p = (
                step_player(player, losses, conf)
                if mode == "step"
                else block_player(player, losses, [40, 110], conf)
            )
            runs[label, mode] = (p, player.expert_bounds())
    for mode in ("step", "block"):
        np.testing.assert_array_equal(runs["ones", mode][0], runs["plain", mode][0])
        np.testing.assert_array_equal(runs["ones", mode][1], runs["plain", mode][1])


# ----------------------------------------------------------------------------------------------
# the declared bound on the confidence-rated regret


@pytest.mark.parametrize("kind", ["oblivious", "adaptive"])
@pytest.mark.parametrize("fractional", [False, True])
def test_per_expert_bound_round_by_round(kind, fractional):
    # R_{t,k} = Σ I(ℓ̂ − ℓ_k) ≤ ln N/η_0 + Σ η r² + ln B_t/η_t for every expert and round, and
    # the player's expert_bounds are the transcription's; against a greedy adaptive adversary too
    rng = np.random.default_rng(60 + fractional)
    horizon, n_act = 300, 5
    conf = random_confidences(rng, horizon, n_act, fractional, awake=0.6)
    _, played, regrets, bounds = literal_sleeping_ml_prod(
        rng.random((horizon, n_act)), conf, adaptive=kind == "adaptive"
    )
    assert_below(regrets, bounds, f"{kind} fractional={fractional}")
    player = MLProd()
    player.reset(spec(n_act, horizon), [None])
    step_player(player, played[None], conf[None])
    np.testing.assert_allclose(player.expert_bounds()[0], bounds[-1], rtol=1e-10, atol=0)


@pytest.mark.parametrize(
    "params",
    [
        {"mode": "random", "awake_prob": 0.4},
        {"mode": "specialists", "n_contexts": 3, "awake_prob": 0.2},
        {"mode": "arrivals"},
        {"mode": "confidence", "awake_prob": 0.7},
        {"base": "fair_coin", "mode": "confidence", "awake_prob": 0.3},
    ],
)
def test_declared_sleeping_bound_on_sleeping_adversaries(params):
    rows = play(MLProd(), Sleeping(**params), n_actions=6, horizon=400, replicates=3, seed=2,
                metrics={"sleeping_regret": {}, "bound": {}})  # fmt: skip
    assert set(rows.metric) == {"sleeping_regret", "bound:sleeping_regret"}
    assert check_declared(rows, f"ml_prod vs sleeping {params}") > 0


def test_no_expert_awake_is_refused():
    player = MLProd()
    player.reset(spec(3, 10), [None])
    with pytest.raises(ValueError, match="no expert is awake"):
        player.predict(confidences=np.zeros((1, 3)))
    with pytest.raises(ValueError, match="no expert is awake"):
        player.play_block(np.zeros((1, 2, 3)), confidences=np.zeros((1, 2, 3)))
