"""Tests of the self-play matrix-game adversary and of the duality_gap and last_iterate_gap
metrics.

Oracle: for the average strategies, ``max_j (p̄ᵀA)_j − min_i (A q̄)_i = (a_max − a_min)(R^row +
R^col)/T`` exactly (Freund & Schapire 1999; Cesa-Bianchi & Lugosi 2006 §7.2), so two no-regret
players drive it to 0; the last-iterate gap is the same formula on ``(p_t, q_t)``, checked against
a brute-force double loop.
"""

from __future__ import annotations

import numpy as np
import pytest

from arena import GameSpec, run_game
from arena.adversaries.matrix_game import GAMES, MatrixGame
from arena.errors import ConfigError
from arena.game import prepare_game
from arena.metrics.games import DualityGap, LastIterateGap, duality_gap
from arena.params import validate_params
from arena.players.hedge import Hedge
from arena.spec import History
from tests.helpers import read_trace, rngs


def self_play(player, adversary, horizon, **kwargs):
    """Play the game round by round on the engine's reset components; return what we need."""
    game = prepare_game(player, adversary, horizon=horizon, metrics={"loss": {}}, **kwargs)
    pl, adv, spec = game.player, game.adversary, game.spec
    n_rep, n = spec.n_replicates, spec.n_actions
    history = History(n_rep, n, sees_distribution=True)
    p_sum, learner, cum = np.zeros((n_rep, n)), np.zeros(n_rep), np.zeros((n_rep, n))
    for t in range(1, horizon + 1):
        p = pl.predict()
        history._show(p)
        loss = adv.losses(t, history)
        assert loss.min() >= 0 and loss.max() <= 1
        pl.update(loss)
        history._record(p, loss, np.zeros(n_rep, dtype=np.int64))
        p_sum += p
        learner += np.einsum("rn,rn->r", p, loss)
        cum += loss
    return {
        "adversary": adv,
        "p_bar": p_sum / horizon,
        "row_regret": learner - cum.min(axis=1),
    }


@pytest.mark.parametrize("game", ["rock_paper_scissors", "matching_pennies", "shapley", None])
def test_gap_equals_sum_of_regrets(game):
    horizon = 400
    out = self_play(
        Hedge(eta=0.3),
        MatrixGame(game=game, n_columns=None),
        horizon,
        n_actions=None if game else 5,
        replicates=2,
    )
    adv = out["adversary"]
    gap = duality_gap(adv.game_matrix(), out["p_bar"], adv.column_average())
    want = adv.loss_scale() * (out["row_regret"] + adv.column_regret()) / horizon
    np.testing.assert_allclose(gap, want, atol=1e-12)
    assert (gap >= -1e-12).all()


def test_metric_equals_manual_gap():
    horizon = 300
    out = self_play(
        "hedge",
        MatrixGame(game="rock_paper_scissors", opponent_params={"eta": 0.2}),
        horizon,
        replicates=2,
        seed=1,
    )
    rows = run_game(
        "hedge",
        MatrixGame(game="rock_paper_scissors", opponent_params={"eta": 0.2}),
        horizon=horizon,
        replicates=2,
        seed=1,
        checkpoints=[horizon],
        metrics=[DualityGap()],
    ).rows
    adv = out["adversary"]
    manual = duality_gap(adv.game_matrix(), out["p_bar"], adv.column_average())
    np.testing.assert_allclose(rows.sort_values("replicate").value, manual, atol=1e-12)


def test_hedge_vs_hedge_rps_gap_vanishes():
    """Both Hedges start uniform, which is RPS's equilibrium: by symmetry they stay there."""
    rows = run_game(
        "hedge",
        MatrixGame(game="rock_paper_scissors"),
        horizon=5000,
        checkpoints=[50, 500, 5000],
        metrics=[DualityGap()],
    ).rows
    assert (rows.value.abs() <= 1e-12).all()


@pytest.mark.parametrize(
    ("n_actions", "params"),
    [
        (4, {"n_columns": 6, "game_seed": 1}),  # Hedge vs Hedge off equilibrium
        (None, {"game": "rock_paper_scissors", "opponent": "ftpl"}),  # a randomized opponent
    ],
)
def test_no_regret_self_play_gap_decreases(n_actions, params):
    rows = run_game(
        "hedge",
        MatrixGame(**params),
        n_actions=n_actions,
        horizon=5000,
        replicates=2,
        seed=2,
        checkpoints=[50, 500, 5000],
        metrics=[DualityGap()],
    ).rows
    gap = rows.groupby("t").value.max()
    assert gap[5000] < gap[500] < gap[50]
    assert gap[5000] < 0.05


def test_row_losses_are_expected_column_losses(tmp_path):
    """Round 1: a Hedge opponent plays uniform, so l_1 = (A·1/M − a_min)/(a_max − a_min)."""
    path = tmp_path / "trace.parquet"
    run_game(
        "hedge",
        MatrixGame(n_columns=4, game_seed=3),
        n_actions=3,
        horizon=5,
        trace_path=path,
        metrics={"loss": {}},
    )
    losses = read_trace(path)["losses"][0]
    a = np.random.default_rng(3).uniform(-1, 1, (3, 4))
    np.testing.assert_allclose(losses[0], (a.mean(axis=1) - a.min()) / (a.max() - a.min()))
    assert losses.min() >= 0 and losses.max() <= 1


def test_builtin_games_and_rows():
    for name, a in GAMES.items():
        adv = MatrixGame(game=name)
        assert adv.resolve_n_actions(None) == len(a)
        with pytest.raises(ConfigError, match="n_actions"):
            adv.resolve_n_actions(len(a) + 1)
    assert MatrixGame().resolve_n_actions(7) == 7
    adv = MatrixGame(n_columns=2)
    adv.reset(GameSpec("experts", 5, 10, n_replicates=2), rngs(0, 2))
    assert adv.game_matrix().shape == (5, 2)
    other = MatrixGame(n_columns=2, game_seed=1)
    other.reset(GameSpec("experts", 5, 10, n_replicates=2), rngs(0, 2))
    assert not np.array_equal(adv.game_matrix(), other.game_matrix())


@pytest.mark.parametrize("suffix", [".npy", ".csv"])
def test_matrix_from_file(tmp_path, suffix):
    a = np.array([[0.0, 2.0, 1.0], [2.0, 0.0, 1.5]])
    path = tmp_path / f"game{suffix}"
    if suffix == ".npy":
        np.save(path, a)
    else:
        path.write_text("x,y,z\n" + "\n".join(",".join(map(str, row)) for row in a) + "\n")
    adv = MatrixGame(matrix_path=str(path))
    assert adv.resolve_n_actions(None) == 2
    adv.reset(GameSpec("experts", 2, 10, n_replicates=1), rngs(0, 1))
    np.testing.assert_array_equal(adv.game_matrix(), a)
    rows = run_game(
        "hedge", MatrixGame(matrix_path=str(path)), horizon=200, metrics=[DualityGap()]
    ).rows
    assert np.isfinite(rows.value).all()


def test_opponent_that_observes_its_actions():
    params = {
        "game": "matching_pennies",
        "opponent": "normal_hedge_dt",
        "opponent_params": {"state": "realized"},
    }
    kw = dict(horizon=200, replicates=3, seed=4, metrics=[DualityGap()])
    a = run_game("hedge", MatrixGame(**params), **kw).rows
    b = run_game("hedge", MatrixGame(**params), **kw).rows
    np.testing.assert_array_equal(a.value, b.value)
    assert np.isfinite(a.value).all()


def test_duality_gap_needs_a_matrix_game():
    run = run_game("hedge", "fair_coin", n_actions=3, horizon=10, metrics=[DualityGap(), "regret"])
    assert "duality_gap" in run.skipped_metrics


@pytest.mark.parametrize(
    ("params", "bad"),
    [
        ({"game": "chess"}, "game"),
        ({"game": "shapley", "matrix_path": "x.npy"}, "game"),
        ({"matrix_path": "missing.npy"}, "matrix_path"),
        ({"opponent": "no_such_player"}, "opponent"),
        ({"opponent_params": {"eta": -1.0}}, "opponent_params"),
        ({"opponent": "self", "opponent_params": {"eta": 1.0}}, "opponent_params"),
        ({"opponent": "self"}, "opponent"),  # outside a game: no player was bound
        ({"n_columns": 0}, "n_columns"),
        ({"game_seed": -2}, "game_seed"),
    ],
)
def test_bad_params(params, bad):
    with pytest.raises(ConfigError) as err:
        adv = MatrixGame(**params)
        validate_params(adv)  # the declared constraints first, as the driver checks them
        n = adv.resolve_n_actions(None)
        adv.reset(GameSpec("experts", n, 10), rngs(0, 1))  # then what depends on the game
    assert err.value.parameter == bad and err.value.component == "adversary matrix_game"


# ----------------------------------------------------------------------------------------------
# self-play and the last iterate


def brute_force_gap(a: np.ndarray, p: np.ndarray, q: np.ndarray) -> float:
    """``max_j Σ_i p_i A_ij − min_i Σ_j A_ij q_j`` by explicit loops (one replicate)."""
    n, m = a.shape
    col = max(sum(p[i] * a[i, j] for i in range(n)) for j in range(m))
    row = min(sum(a[i, j] * q[j] for j in range(m)) for i in range(n))
    return col - row


@pytest.mark.parametrize(
    ("player", "params", "game", "n_actions", "replicates"),
    [
        ("hedge", {"eta": 0.5}, {"n_columns": 6, "game_seed": 4, "opponent": "self"}, 4, 1),
        ("hedge", {}, {"game": "shapley", "opponent": "ftpl"}, None, 3),  # randomized opponent
        ("optimistic_gd", {"eta": 0.3}, {"game": "biased_rock_paper_scissors"}, None, 1),
    ],
)
def test_last_iterate_gap_against_brute_force(player, params, game, n_actions, replicates):
    horizon, checkpoints = 60, [1, 7, 30, 60]
    adv = MatrixGame(**{"opponent": "self", **game})
    game_ = prepare_game(
        player,
        adv,
        player_params=params,
        n_actions=n_actions,
        horizon=horizon,
        replicates=replicates,
        seed=5,
        metrics={"loss": {}},
    )
    pl, ad, spec = game_.player, game_.adversary, game_.spec
    history = History(spec.n_replicates, spec.n_actions, sees_distribution=True)
    want = {}
    for t in range(1, horizon + 1):
        p = pl.predict()
        history._show(p)
        loss = ad.losses(t, history)
        pl.update(loss)
        history._record(p, loss, np.zeros(spec.n_replicates, dtype=np.int64))
        q = ad.column_strategy()
        if t in checkpoints:
            want[t] = [brute_force_gap(ad.game_matrix(), p[r], q[r]) for r in range(len(p))]
    rows = run_game(
        player,
        MatrixGame(**{"opponent": "self", **game}),
        player_params=params,
        n_actions=n_actions,
        horizon=horizon,
        replicates=replicates,
        seed=5,
        checkpoints=checkpoints,
        metrics=[LastIterateGap()],
    ).rows.sort_values(["t", "replicate"])
    for t in checkpoints:
        got = rows[rows.t == t].value.to_numpy()
        # ≤ 3 matrix entries of size ≤ 50 times probabilities: rounding ≲ 1e-13
        np.testing.assert_allclose(got, want[t], rtol=0, atol=1e-12, err_msg=f"t={t}")
        assert (got >= -1e-12).all()


def test_self_play_is_the_named_opponent_with_the_same_parameters():
    kw = dict(n_actions=5, horizon=300, replicates=2, seed=3, checkpoints=[10, 300])
    metrics = [DualityGap(), LastIterateGap()]
    params = {"eta": 0.4}
    own = run_game(
        "optimistic_hedge", MatrixGame(opponent="self"), player_params=params, metrics=metrics, **kw
    ).rows
    named = run_game(
        "optimistic_hedge",
        MatrixGame(opponent="optimistic_hedge", opponent_params=params),
        player_params=params,
        metrics=metrics,
        **kw,
    ).rows
    np.testing.assert_array_equal(own.value.to_numpy(), named.value.to_numpy())
    assert own.adversary_params.iloc[0] != named.adversary_params.iloc[0]  # another cell


def test_self_play_in_a_symmetric_game_plays_the_same_strategy_on_both_sides():
    # biased RPS is skew-symmetric (Aᵀ = −A, a_min = −a_max), so the column player's rescaled
    # loss (a_max − Aᵀp)/s equals the row player's (Ap − a_min)/s when p = q: from the same
    # start, self-play keeps p_t = q_t, and the last-iterate gap is max_j (pᵀA)_j − min_i (Ap)_i
    a = np.array(GAMES["biased_rock_paper_scissors"])
    np.testing.assert_array_equal(a.T, -a)
    equilibrium = np.array([1.0, 10.0, 5.0]) / 16.0
    np.testing.assert_allclose(a @ equilibrium, 0.0, atol=1e-12)  # value 0, no better column
    np.testing.assert_allclose(equilibrium @ a, 0.0, atol=1e-12)
    game = prepare_game(
        "regret_matching",
        MatrixGame(game="biased_rock_paper_scissors", opponent="self"),
        horizon=50,
        metrics={"loss": {}},
    )
    pl, ad = game.player, game.adversary
    history = History(1, 3, sees_distribution=True)
    np.testing.assert_array_equal(ad.column_strategy(), [[1 / 3, 1 / 3, 1 / 3]])  # before round 1
    moved = False
    for t in range(1, 51):
        p = pl.predict()
        history._show(p)
        loss = ad.losses(t, history)
        pl.update(loss)
        history._record(p, loss, np.zeros(1, dtype=np.int64))
        np.testing.assert_array_equal(ad.column_strategy(), p)
        moved |= bool(np.abs(p - 1 / 3).max() > 0.1)
    assert moved  # uniform is not this game's equilibrium: the dynamics leave it


def test_self_play_needs_an_experts_player():
    with pytest.raises(ConfigError) as err:
        run_game("exp3", MatrixGame(opponent="self"), n_actions=3, horizon=10)
    assert err.value.parameter == "opponent" and "experts player" in str(err.value)


def test_self_play_from_uniform_stays_at_a_uniform_equilibrium():
    # rock-paper-scissors: uniform play is the equilibrium and both gaps are 0 from round 1
    rows = run_game(
        "regret_matching",
        MatrixGame(game="rock_paper_scissors", opponent="self"),
        player_params={"variant": "rm_plus"},
        horizon=200,
        checkpoints=[1, 200],
        metrics=[DualityGap(), LastIterateGap()],
    ).rows
    assert (rows.value.abs() <= 1e-12).all()
    assert set(rows.metric) == {"duality_gap", "last_iterate_gap"}


def test_last_iterate_gap_needs_a_matrix_game():
    run = run_game(
        "hedge", "fair_coin", n_actions=3, horizon=10, metrics=[LastIterateGap(), "regret"]
    )
    assert "last_iterate_gap" in run.skipped_metrics
