"""The exact worst-case search (issue 33, item 4): brute force, the real engine, known values.

* the search equals the enumeration of every loss sequence (:func:`arena.attack.brute_force`, one
  replicate per sequence of the player's own batched code) on tiny games;
* the sequence it returns, replayed through the real engine (``arena.play`` with the ``replay``
  adversary), has the regret it reports, to 1e-9;
* Cover's minimax player has regret exactly ``V_T`` (its value and every non-pass sequence), FTL
  the ``T/2``-type construction, Hedge stays under its declared bound;
* the sufficiency of each declared state: shift invariance and path independence of ``p``.
"""

from __future__ import annotations

import json
import math
from itertools import product

import numpy as np
import pytest

from arena import GameSpec, play
from arena.adversaries.replay import Replay
from arena.attack import ADAPTERS, brute_force, exact_worst_case
from arena.errors import ConfigError
from arena.players.cover2 import cover_value
from arena.registry import make

PLAYERS = [
    ("hedge", {}),
    ("hedge", {"eta": 0.7}),
    ("hedge", {"eta": "anytime"}),
    ("hedge", {"eta": "doubling"}),
    ("ftl", {}),
    ("ftl", {"tie_break": "lowest"}),
    ("ftpl", {}),
    ("normal_hedge", {}),
    ("normal_hedge_dt", {}),
    ("ada_normal_hedge", {}),
]
"""Every supported player of N ≥ 2 (cover2, N = 2 and binary only, is tested on its own)."""

GAMES = [(2, 6, "binary"), (3, 3, "binary"), (2, 3, [0.0, 0.5, 1.0])]
SLOW_GAMES = [(2, 10, "binary"), (3, 6, "binary"), (2, 5, [0.0, 0.5, 1.0])]


def _id(case):
    name, params = case
    return name + "".join(f"-{v}" for v in params.values())


@pytest.mark.parametrize("game", GAMES, ids=str)
@pytest.mark.parametrize("case", PLAYERS, ids=_id)
def test_search_equals_brute_force(case, game):
    name, params = case
    n, horizon, losses = game
    res = exact_worst_case(name, n, horizon, losses, params=params, verify=True)
    value, _ = brute_force(name, n, horizon, losses, params=params)
    assert res.complete and res.rounds == horizon
    assert res.value == pytest.approx(value, abs=1e-12)
    assert res.regret[-1] == pytest.approx(res.value, abs=1e-12)
    assert res.key_check is not None and res.key_check <= 1e-12


@pytest.mark.parametrize("game", [(2, 5, "binary"), *GAMES[1:]], ids=str)
@pytest.mark.parametrize("case", [*PLAYERS, ("ada_normal_hedge", {"q": [0.7, 0.2, 0.1]})], ids=_id)
def test_reduced_search_equals_brute_force(case, game):
    """Shifted moves and permuted experts merged: the same value to rounding, and the sequence
    (mapped back to the experts' own labels) attains it."""
    name, params = case
    n, horizon, losses = game
    if "q" in params and n != 3:
        pytest.skip("the prior names three experts")
    res = exact_worst_case(name, n, horizon, losses, params=params, reduce=True, verify=True)
    value, _ = brute_force(name, n, horizon, losses, params=params)
    assert res.value == pytest.approx(value, abs=1e-12)
    assert res.regret[-1] == pytest.approx(value, abs=1e-12)
    assert res.key_check <= 1e-12


def test_reduce_needs_a_declared_state():
    with pytest.raises(ConfigError, match="declared state"):
        exact_worst_case("ada_hedge", 2, 3, reduce=True)


def test_reduce_merges_permuted_states():
    full = exact_worst_case("normal_hedge", 3, 5, prune=False)
    reduced = exact_worst_case("normal_hedge", 3, 5, prune=False, reduce=True)
    assert reduced.value == pytest.approx(full.value, abs=1e-12)
    assert reduced.states * 3 < full.states


@pytest.mark.slow
@pytest.mark.parametrize("game", SLOW_GAMES, ids=str)
@pytest.mark.parametrize("case", PLAYERS, ids=_id)
def test_search_equals_brute_force_larger(case, game):
    name, params = case
    n, horizon, losses = game
    res = exact_worst_case(name, n, horizon, losses, params=params)
    assert res.value == pytest.approx(brute_force(name, n, horizon, losses, params=params)[0])


@pytest.mark.parametrize("horizon", [1, 2, 7, pytest.param(10, marks=pytest.mark.slow)])
def test_cover2_search_equals_brute_force(horizon):
    res = exact_worst_case("cover2", 2, horizon, verify=True)
    assert res.value == pytest.approx(brute_force("cover2", 2, horizon)[0], abs=1e-12)
    assert res.key_check <= 1e-12


def _engine_regret(player, losses: np.ndarray, tmp_path) -> float:
    path = tmp_path / "seq.npy"
    np.save(path, losses)
    df = play(player, Replay(path=str(path)), horizon=len(losses), metrics={"regret": {}})
    return float(df.loc[df.t == len(losses), "value"].iloc[-1])


REPLAY_GAMES = [
    (2, 12, "binary"),
    pytest.param(3, 5, "binary", marks=pytest.mark.slow),
    pytest.param(2, 5, [0.0, 0.5, 1.0], marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("n", "horizon", "losses"), REPLAY_GAMES)
@pytest.mark.parametrize("case", [*PLAYERS, ("cover2", {})], ids=_id)
def test_found_sequence_replays_through_the_engine(case, n, horizon, losses, tmp_path):
    name, params = case
    if name == "cover2" and (n != 2 or losses != "binary"):
        pytest.skip("cover2 plays two experts and binary losses")
    res = exact_worst_case(name, n, horizon, losses, params=params, reduce=name != "cover2")
    # ftpl's expectation is hedge's at its rate: the randomized player is not replayed
    player = make("player", "hedge") if name == "ftpl" else make("player", name, **params)
    assert _engine_regret(player, res.losses, tmp_path) == pytest.approx(res.value, abs=1e-9)


@pytest.mark.parametrize("horizon", [1, 2, 3, 9, 64, 201])
def test_cover2_value_is_v_t(horizon):
    res = exact_worst_case("cover2", 2, horizon)
    assert res.value == pytest.approx(cover_value(horizon), abs=1e-9)
    assert res.ratio == pytest.approx(1.0, abs=1e-9)


def test_cover2_regret_is_v_t_on_every_sequence_without_passes():
    horizon = 10
    seqs = np.array(list(product([0, 1], repeat=horizon)))
    losses = np.stack([seqs, 1 - seqs], axis=2).astype(float)  # (1,0) or (0,1) each round
    player = make("player", "cover2")
    player.reset(GameSpec("experts", 2, horizon, n_replicates=len(seqs)), [None] * len(seqs))
    learner = np.zeros(len(seqs))
    for t in range(horizon):
        learner += np.einsum("rn,rn->r", player.predict(), losses[:, t])
        player.update(losses[:, t])
    regret = learner - losses.sum(axis=1).min(axis=1)
    assert np.abs(regret - cover_value(horizon)).max() <= 1e-12


def test_ftl_worst_case_is_the_t_over_2_construction():
    lowest = exact_worst_case("ftl", 2, 100, params={"tie_break": "lowest"})
    assert lowest.value == 50.0  # the leader loses 1 every round, min L grows every other round
    # uniform ties: binary losses give T/4, the ½ first loss of ftl_killer gives T/2 − 1/4
    assert exact_worst_case("ftl", 2, 100).value == 25.0
    halves = exact_worst_case("ftl", 2, 100, [0.0, 0.5, 1.0])
    assert halves.value == pytest.approx(100 / 2 - 0.25, abs=1e-12)
    assert exact_worst_case("ftl", 3, 30, params={"tie_break": "lowest"}).value == 20.0


@pytest.mark.parametrize("eta", ["tuned", 0.3, "anytime", "doubling"])
def test_hedge_stays_under_its_bound(eta):
    res = exact_worst_case("hedge", 2, 64, params={"eta": eta})
    assert res.bound is not None and 0.0 < res.value <= res.bound
    assert res.ratio == pytest.approx(res.value / res.bound)
    table = res.table
    assert (table.value <= table.bound + 1e-12).all()


def test_the_table_and_the_curve():
    res = exact_worst_case("hedge", 2, 50)
    t = res.table
    assert list(t.columns) == [
        "t",
        "value",
        "path_regret",
        "bound",
        "ratio",
        "states",
        "pruned",
        "seconds",
    ]
    assert t.t.tolist() == list(range(1, 51))
    assert (np.diff(t.value) >= -1e-12).all()  # the zero move keeps the regret
    assert (t.path_regret <= t.value + 1e-12).all()
    assert t.path_regret.iloc[-1] == pytest.approx(res.value)
    assert res.losses.shape == (50, 2) and set(np.unique(res.losses)) <= {0.0, 1.0}
    record = json.loads(json.dumps(res.to_dict()))
    assert record["value"] == res.value and len(record["table"]) == 50
    assert np.array_equal(np.array(record["losses"]), res.losses)


def test_a_limit_stops_the_search_at_an_exact_round():
    full = exact_worst_case("normal_hedge", 2, 9)
    cut = exact_worst_case("normal_hedge", 2, 9, max_states=20)
    assert not cut.complete and cut.stopped and cut.rounds < 9
    assert cut.value == pytest.approx(full.table.value.iloc[cut.rounds - 1], abs=1e-12)
    assert cut.losses.shape == (cut.rounds, 2)
    assert cut.regret[-1] == pytest.approx(cut.value, abs=1e-12)


def test_pruning_changes_nothing_but_the_work():
    a = exact_worst_case("normal_hedge", 2, 9, prune=False)
    b = exact_worst_case("normal_hedge", 2, 9)
    assert a.value == pytest.approx(b.value, abs=1e-12)
    assert b.pruned > 0 and b.states < a.states


def test_an_undeclared_player_is_searched_by_clones():
    res = exact_worst_case("ada_hedge", 2, 5, verify=True)
    assert res.engine == "clones"
    assert res.value == pytest.approx(brute_force("ada_hedge", 2, 5)[0], abs=1e-12)
    with pytest.raises(ConfigError, match="no declared state"):
        exact_worst_case("ada_hedge", 2, 5, allow_clones=False)


@pytest.mark.parametrize(
    ("name", "params", "n", "losses", "match"),
    [
        ("cover2", {}, 3, "binary", "two experts"),
        ("cover2", {}, 2, [0.0, 0.5, 1.0], "binary"),
        ("ftpl", {"noise": "exponential"}, 2, "binary", "closed form"),
        ("normal_hedge_dt", {"state": "realized"}, 2, "binary", "random draws"),
        ("hedge", {}, 2, [0.0, 2.0], r"\[0, 1\]"),
        ("hedge", {}, 2, [0.0, 1 / math.pi], "multiples"),
    ],
)
def test_refusals(name, params, n, losses, match):
    with pytest.raises(ConfigError, match=match):
        exact_worst_case(name, n, 4, losses, params=params)


# -- the declared states are sufficient -------------------------------------------------------

SHIFT_INVARIANT = [
    case
    for case in PLAYERS
    if ADAPTERS[case[0]].state_key is None and case[1].get("eta") != "doubling"
]


@pytest.mark.parametrize("case", [*SHIFT_INVARIANT, ("cover2", {})], ids=_id)
def test_shift_invariance_of_the_declared_players(case):
    """``p`` after a sequence equals ``p`` after it with one (0, 0) round made (1, 1)."""
    name, params = case
    n, horizon, reps = (2, 40, 64) if name == "cover2" else (3, 40, 64)
    rng = np.random.default_rng(7)
    losses = rng.integers(0, 2, size=(reps, horizon, n)).astype(float)
    when = rng.integers(0, horizon - 1, size=reps)
    losses[np.arange(reps), when] = 0.0
    shifted = losses.copy()
    shifted[np.arange(reps), when] = 1.0
    out = []
    for seq in (losses, shifted):
        player = make("player", "hedge" if name == "ftpl" else name, **params)
        player.reset(GameSpec("experts", n, horizon, n_replicates=reps), [None] * reps)
        for t in range(horizon - 1):
            player.update(seq[:, t])
        out.append(player.predict())
    assert np.abs(out[0] - out[1]).max() <= 1e-12


@pytest.mark.parametrize("case", [("cover2", {}), ("hedge", {"eta": "doubling"}), *PLAYERS[:3]])
def test_merged_states_have_equal_distributions(case):
    """Every replicate the search merges into another predicts the same next ``p``."""
    name, params = case
    res = exact_worst_case(name, 2, 40, params=params, verify=True, prune=False)
    assert res.key_check <= 1e-12
