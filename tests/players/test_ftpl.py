"""Oracle tests of Follow the Perturbed Leader (``arena.players.ftpl``): Abernethy et al. 2014;
Kalai & Vempala 2005.

FTPL declares no bound (its guarantees are in expectation); its statistical claims are tested
with fixed seeds and CLT bands of 4 standard deviations (our tolerance convention).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import softmax

from arena import GameSpec, run_game
from arena.adversaries.replay import Replay
from arena.apps.hydra_support import generated_node
from arena.errors import ConfigError
from arena.game import prepare_game
from arena.params import validate_params
from arena.players.ftpl import FollowThePerturbedLeader
from arena.players.hedge import Hedge, hedge_probs
from tests.helpers import save_matrix, traced
from tests.helpers.experts import assert_simplex, loss_matrices, play_blocks, play_loop, spec_for


def literal_ftpl(losses, eta, noise, rng):
    """Kalai & Vempala / Kalai & Vempala 2005, literally: each round draw fresh i.i.d. noise Z_t
    (one (1, N) draw per round, in round order, from the player's stream) and play the point mass
    on argmin_i (L_{t−1,i} − Z_{t,i}/η), the lowest index among ties."""
    horizon, n = losses.shape
    cum = [0.0] * n
    out = np.zeros((horizon, n))
    for t in range(horizon):
        z = rng.gumbel(size=(1, n))[0] if noise == "gumbel" else rng.standard_exponential((1, n))[0]
        values = [cum[i] - z[i] / eta for i in range(n)]
        out[t, values.index(min(values))] = 1.0
        for i in range(n):
            cum[i] += losses[t][i]
    return out


@pytest.mark.parametrize("noise", ["gumbel", "exponential"])
@pytest.mark.parametrize("eta", [0.05, 1.0, 20.0])
def test_matches_literal_transcription(noise, eta):
    horizon, n_act = 200, 5
    mats = loss_matrices(np.random.default_rng(2), horizon, n_act)
    losses = np.stack(list(mats.values()))
    player = FollowThePerturbedLeader(eta=eta, noise=noise)
    want = np.stack(
        [literal_ftpl(m, eta, noise, np.random.default_rng(r)) for r, m in enumerate(mats.values())]
    )
    spec = spec_for(losses)
    np.testing.assert_array_equal(play_loop(player, losses, spec), want)
    for cuts in ([1], [3, 4, 120], list(range(0, horizon, 7))):  # any split: the same stream
        np.testing.assert_array_equal(play_blocks(player, losses, spec, cuts=cuts), want)


def test_engine_block_path_equals_per_round_path(tmp_path):
    # the engine plays oblivious games through play_block; a fresh clone reset with the same
    # streams (prepare_game) and stepped with predict/update must give the same trace
    losses = np.random.default_rng(3).random((3, 150, 6))
    player = FollowThePerturbedLeader(eta=2.0)
    kw = {"horizon": 150, "replicates": 3, "seed": 5, "metrics": {"regret": {}}}
    adversary = Replay(path=save_matrix(tmp_path, losses))
    _, tr = traced(player, adversary, tmp_path, **kw)
    game = prepare_game(player, adversary, **kw)
    stepped = np.empty_like(losses)
    for t in range(150):
        stepped[:, t] = game.player.predict()
        game.player.update(losses[:, t])
    np.testing.assert_array_equal(tr["probs"], stepped)
    assert_simplex(tr["probs"], "trace")
    # the learner's "expected" loss is the realized loss of FTPL's own draw
    np.testing.assert_array_equal(tr["expected"], (tr["probs"] * losses).sum(axis=2))
    # replicate 1 alone has the same rows as inside the batch (seeding contract)
    _, alone = traced(player, adversary, tmp_path, **{**kw, "replicates": [1]})
    np.testing.assert_array_equal(alone["probs"][0], tr["probs"][1])


# ----------------------------------------------------------------------------------------------
# distribution of the perturbed leader (Abernethy et al. 2014)

DRAWS = 200_000


def leader_frequencies(noise, eta, cum0):
    """Play round 1 with losses ``cum0`` and then DRAWS zero-loss rounds: each round's leader is an
    independent draw of argmin(cum0 − Z/η). Returns the empirical frequencies."""
    n = cum0.size
    losses = np.zeros((1, DRAWS + 1, n))
    losses[0, 0] = cum0
    p = FollowThePerturbedLeader(eta=eta, noise=noise)
    p.reset(GameSpec("experts", n, DRAWS + 1), [np.random.default_rng(2024)])
    probs = p.play_block(losses)[0, 1:]
    return probs.mean(axis=0)


def assert_binomial_band(freq, target, what):
    """Each frequency within 4 binomial standard deviations of its target (Gumbel-max)."""
    sd = np.sqrt(target * (1 - target) / DRAWS)
    assert (np.abs(freq - target) <= 4 * sd + 1e-12).all(), (what, freq, target)


@pytest.mark.parametrize("eta", [0.3, 1.0, 4.0])
def test_gumbel_leader_is_distributed_as_hedge(eta):
    # Gumbel-max trick: P(argmin(L − G/η) = i) = softmax(−ηL)_i exactly (Abernethy et al. 2014:
    # 2·10^5 draws, each frequency within 4 binomial sd)
    cum0 = np.array([0.0, 0.3, 0.5, 1.0, 2.0])
    assert_binomial_band(leader_frequencies("gumbel", eta, cum0), softmax(-eta * cum0), eta)


def test_exponential_leader_distribution_by_quadrature():
    # one-sided exponential noise: expert i leads iff Z_i/η − L_i is the largest; conditioning on
    # Z_i = z, P(i) = ∫_0^∞ e^{−z} Π_{j≠i} P(Z_j < z + η(L_j − L_i)) dz, with P(Z < x) = 1 − e^{−x}
    # for x > 0 (0 otherwise), integrated numerically (quad error ≪ the 4-sd band ~4e-3)
    eta, cum0 = 1.5, np.array([0.0, 0.3, 0.5, 1.0, 2.0])

    def prob(i):
        def f(z):
            out = math.exp(-z)
            for j in range(cum0.size):
                if j != i:
                    x = z + eta * (cum0[j] - cum0[i])
                    out *= 1.0 - math.exp(-x) if x > 0 else 0.0
            return out

        # the integrand has kinks where z + η(L_j − L_i) = 0: integrate between them
        edges = sorted({0.0, *(eta * (cum0[i] - c) for c in cum0 if c < cum0[i])})
        pieces = [quad(f, a, b)[0] for a, b in itertools.pairwise(edges)]
        return sum(pieces) + quad(f, edges[-1], np.inf)[0]

    target = np.array([prob(i) for i in range(cum0.size)])
    assert target.sum() == pytest.approx(1.0, abs=1e-8)
    assert_binomial_band(leader_frequencies("exponential", eta, cum0), target, "exponential")


def test_mean_regret_equals_hedge_regret(tmp_path):
    # per round E[p_t^FTPL·l_t | past] = softmax(−η L_{t−1})·l_t for an oblivious sequence, so the
    # mean regret over M replicates estimates Hedge's (deterministic) regret: CLT band of 4 sd
    # (expectation statements)
    horizon, n_act, eta, reps = 200, 4, 0.5, 2000
    losses = np.random.default_rng(7).random((horizon, n_act))
    path = save_matrix(tmp_path, losses)
    kw = {"horizon": horizon, "checkpoints": [horizon], "metrics": {"regret": {}}}
    ftpl = run_game(FollowThePerturbedLeader(eta=eta), Replay(path=path), replicates=reps, **kw)
    hedge = run_game(Hedge(eta=eta), Replay(path=path), **kw)
    values = ftpl.rows.value.to_numpy()
    target = float(hedge.rows.value.iloc[0])
    z = (values.mean() - target) / (values.std(ddof=1) / math.sqrt(reps))
    assert abs(z) <= 4.0, (values.mean(), target, z)
    # and the exact per-round identity for the first round's distribution
    assert hedge_probs(np.zeros((1, n_act)), eta).tolist() == [[0.25] * 4]


# ----------------------------------------------------------------------------------------------
# invariances, structure, validation


def test_shift_and_affine_range_with_dyadic_losses(tmp_path):
    # with dyadic losses every cumulative sum is exact, so a per-round shift l_t + c_t·1 and the
    # affine map of a declared range leave every argmin, hence every p_t, exactly unchanged
    rng = np.random.default_rng(8)
    base = rng.integers(0, 5, (2, 200, 4)) / 4.0
    shift = rng.integers(0, 5, (2, 200, 1)) / 4.0
    player = FollowThePerturbedLeader(eta=3.0)
    spec = spec_for(base)
    a = play_loop(player, base, spec)
    np.testing.assert_array_equal(play_loop(player, base + shift, spec), a)
    wide = spec_for(base, loss_range=(-1.0, 3.0))
    np.testing.assert_array_equal(play_loop(player, -1.0 + 4.0 * base, wide), a)


def test_point_masses_and_no_bound():
    losses = np.random.default_rng(9).random((3, 300, 7))
    probs = play_loop(
        FollowThePerturbedLeader(noise="exponential", eta=0.4), losses, spec_for(losses)
    )
    assert_simplex(probs, "ftpl")
    assert ((probs == 0) | (probs == 1)).all()
    assert FollowThePerturbedLeader().bounds(10) == {}


def test_tuned_rate_and_errors():
    p = FollowThePerturbedLeader()
    p.reset(GameSpec("experts", 8, 500), [np.random.default_rng(0)])
    assert p.learning_rate() == pytest.approx(math.sqrt(8 * math.log(8) / 500), rel=1e-15)
    for params, name, allowed in [
        ({"eta": 0.0}, "eta", "a real number in (0, inf) or one of 'tuned'"),
        ({"eta": "x"}, "eta", "a real number in (0, inf) or one of 'tuned'"),
        ({"noise": "uniform"}, "noise", "one of 'gumbel', 'exponential'"),
    ]:
        with pytest.raises(ConfigError, match=name) as err:
            validate_params(FollowThePerturbedLeader(**params))
        assert err.value.component == "player ftpl" and allowed in str(err.value)
    with pytest.raises(ConfigError, match="horizon"):
        FollowThePerturbedLeader().reset(GameSpec("experts", 3, None), [np.random.default_rng(0)])


def test_hydra_config_lists_every_parameter():
    # no YAML file: `arena run player=ftpl` composes the node generated from the signature
    node = generated_node("player", "ftpl")
    assert node.pop("_target_") == "arena.players.ftpl.FollowThePerturbedLeader"
    assert node == FollowThePerturbedLeader.param_defaults()
