"""Tests of the expert-predictions adversary (forecasters of a real series, clipped errors)."""

from __future__ import annotations

import numpy as np
import pytest

from arena import GameSpec, play
from arena.adversaries.expert_predictions import (
    ExpertPredictions,
    goog_prices,
    min_max,
    synthetic_series,
)
from arena.errors import ConfigError
from arena.params import validate_params
from tests.helpers import read_trace, rngs
from tests.helpers.experts import assert_split_invariant


def reset(adv, horizon, n_rep=1, seed=0):
    a = adv.clone()
    a.reset(
        GameSpec("experts", a.resolve_n_actions(None), horizon, n_replicates=n_rep),
        rngs(seed, n_rep),
    )
    return a


def test_goog_ships_offline():
    y = goog_prices()
    assert y.shape == (1047,) and np.isfinite(y).all() and (y > 0).all()
    assert y[0] == pytest.approx(100.34)


def test_default_experts_and_n():
    adv = ExpertPredictions()
    assert adv.resolve_n_actions(None) == 11
    assert adv.expert_names()[5] == "moving average 1"
    with pytest.raises(ConfigError, match="N = 11"):
        adv.resolve_n_actions(10)


@pytest.mark.parametrize("loss", ["absolute", "squared"])
def test_losses_follow_the_definitions(loss):
    adv = reset(ExpertPredictions(loss=loss, n_constants=3, windows=[1, 4], ar_coefs=[0.5]), 30)
    y = min_max(goog_prices())
    got = adv.losses_block(1, 30)[0]
    warm = 4
    for t in range(1, 31):
        i = warm + t - 1  # index of the value forecast at round t
        preds = [
            0.0,
            0.5,
            1.0,
            y[i - 1],
            y[i - 4 : i].mean(),
            y[i - 1] + 0.5 * (y[i - 1] - y[i - 2]),
        ]
        err = np.clip(preds, 0, 1) - y[i]
        want = np.abs(err) if loss == "absolute" else err**2
        np.testing.assert_allclose(got[t - 1], want, atol=1e-14)


def test_split_invariant_oblivious_and_common_to_replicates(tmp_path):
    adv = ExpertPredictions()
    spec = GameSpec("experts", 11, 90, n_replicates=3)
    losses = assert_split_invariant(adv, spec)
    np.testing.assert_array_equal(losses[0], losses[2])  # fixed offset: same series
    assert losses.min() >= 0 and losses.max() <= 1
    seen = []
    for player in ("hedge", "ftl"):
        path = tmp_path / f"{player}.parquet"
        play(player, adv, horizon=40, replicates=2, trace_path=path, metrics={"loss": {}})
        seen.append(read_trace(path)["losses"])
    np.testing.assert_array_equal(seen[0], seen[1])


def test_random_offsets():
    adv = ExpertPredictions(offset="random")
    a = reset(adv, 500, n_rep=20, seed=1)
    offsets = a.start_offsets()
    assert offsets.min() >= 0 and offsets.max() <= 1047 - 20 - 500
    assert np.unique(offsets).size > 10
    np.testing.assert_array_equal(reset(adv, 500, n_rep=20, seed=1).start_offsets(), offsets)
    losses = a.losses_block(1, 5)
    b = reset(ExpertPredictions(), 1000)
    full = b.losses_block(1, 1000 - 0)[0]
    for r in range(3):
        o = offsets[r]
        if o + 5 <= 1000:
            np.testing.assert_allclose(losses[r], full[o : o + 5], atol=1e-14)


def test_horizon_must_fit_the_series():
    with pytest.raises(ConfigError, match="1027 rounds") as err:
        reset(ExpertPredictions(), 1028)
    assert err.value.parameter == "horizon"
    reset(ExpertPredictions(), 1027)
    reset(ExpertPredictions(series="synthetic"), 50000)  # the synthetic series grows with T


def test_synthetic_series_is_prefix_stable():
    a, b = synthetic_series(300, 4), synthetic_series(900, 4)
    np.testing.assert_array_equal(a, b[:300])
    short = reset(ExpertPredictions(series="synthetic"), 100).losses_block(1, 100)
    long = reset(ExpertPredictions(series="synthetic"), 400).losses_block(1, 100)
    np.testing.assert_array_equal(short, long)


@pytest.mark.parametrize("kind", ["csv_named", "csv_index", "csv_plain", "npy"])
def test_user_series_from_path(tmp_path, kind):
    y = np.cumsum(np.random.default_rng(0).standard_normal(200)) + 50
    if kind == "npy":
        path, column = tmp_path / "s.npy", None
        np.save(path, y)
    elif kind == "csv_plain":
        path, column = tmp_path / "s.csv", None
        path.write_text("\n".join(f"{float(v)!r}" for v in y) + "\n")
    else:
        path = tmp_path / "s.csv"
        column = "price" if kind == "csv_named" else 1
        path.write_text(
            "day,price\n" + "\n".join(f"{i},{float(v)!r}" for i, v in enumerate(y)) + "\n"
        )
    adv = reset(ExpertPredictions(path=str(path), column=column, windows=[1]), 100)
    z = min_max(y)
    got = adv.losses_block(1, 100)[0]
    persistence = adv.expert_names().index("moving average 1")
    np.testing.assert_allclose(got[:, persistence], np.abs(z[1:101] - z[2:102]), atol=1e-14)


def test_persistence_wins_on_prices_and_hedge_tracks_it():
    rows = play(
        "hedge",
        ExpertPredictions(),
        horizon=1000,
        checkpoints=[1000],
        metrics={"regret": {}, "loss": {}},
    )
    adv = reset(ExpertPredictions(), 1000)
    totals = adv.losses_block(1, 1000)[0].sum(axis=0)
    assert adv.expert_names()[int(totals.argmin())] == "moving average 1"
    regret = rows[rows.metric == "regret"].value.iloc[0]
    assert 0 <= regret <= np.sqrt(1000 * np.log(11) / 2)  # tuned Hedge's bound


@pytest.mark.parametrize(
    ("params", "bad"),
    [
        ({"series": "sp500"}, "series"),
        ({"series": "goog", "path": "x.csv"}, "series"),
        ({"path": "/no/such/file.csv"}, "path"),
        ({"loss": "hinge"}, "loss"),
        ({"windows": [0]}, "windows"),
        ({"ar_coefs": [float("nan")]}, "ar_coefs"),
        ({"n_constants": -1}, "n_constants"),
        ({"n_constants": 0, "windows": [], "ar_coefs": []}, "n_constants"),
        ({"offset": "middle"}, "offset"),
    ],
)
def test_bad_params(params, bad):
    with pytest.raises(ConfigError) as err:
        adv = ExpertPredictions(**params)
        validate_params(adv)  # the declared constraints first, as the driver checks them
        spec = GameSpec("experts", adv.resolve_n_actions(None), 10)
        adv.reset(spec, rngs(0, 1))  # then what depends on the game
    assert err.value.parameter == bad and err.value.component == "adversary expert_predictions"
