"""Every bound a player declares holds on every adversary of the catalog, round by round.

A player's ``bounds(t)`` is logged as rows ``bound:<metric>``; here each such row must dominate
the matching ``<metric>`` row (same replicate, round and param) up to 1e-9 relative, on every
registered adversary with its default parameters, a replay of random losses and a replay of the
two-phase construction (which nearly attains fixed-η Hedge's bound), at
several (N, T). Games a component refuses (e.g. a two-expert player at N = 10) are skipped.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena import registry
from arena.errors import ConfigError, GameError
from arena.game import run_game
from tests.helpers import check_declared
from tests.helpers.experts import two_phase_matrix

METRICS = {
    "regret": {},
    "quantile_regret": {"eps": [0.01, 0.1, 0.25, 0.5]},
    "subset_quantile_regret": {"eps": [0.1, 0.25]},
    "shifting_regret": {"k": [0, 1, 2, 3, 4, 8]},
    "adaptive_regret": {},
    "sa_regret": {"tau": [10, 100]},
    "dynamic_regret": {},
    "sleeping_regret": {},
    "tv_regret": {},  # the time-varying competitor of shifting_experts and drifting_means
    "weighted_vote_train_error": {},  # the primal–dual boosters, against the boosting oracles
    "bound": {},
}
"""Every metric a player may bound, with the params players declare bounds for."""

OWN_N = ["expert_predictions"]
"""Constructions that fix N (11 experts for ``expert_predictions``): neither N = 2 nor N = 10
plays them, so they are also played at their own N."""

SKIP_ADVERSARIES = {"replay", "sleeping", "tree_experts"}
"""``replay`` is exercised through the two files below; ``sleeping`` and ``tree_experts`` (whose
N is fixed by its depth) only with the players that support confidences (their own tests)."""


TREE_GAMES_ONLY = {"pruning_hedge"}
"""Players that declare bounds only in tree games (``bound:tree_regret``), which the catalog
below never plays: their own tests check them on ``tree_experts`` and an adaptive tree game."""


def declaring_players() -> list[str]:
    from arena.experts.components import ExpertsPlayer

    out = []
    for name in registry.available("player"):
        cls = registry.load("player", name)
        declares = issubclass(cls, ExpertsPlayer) and cls.bounds is not ExpertsPlayer.bounds
        if declares and name not in TREE_GAMES_ONLY:
            out.append(name)
    return out


SHORT = 500
"""The horizon of the sweep of every declaring player."""

SHORT_GROWING = 200
"""The sweep's horizon for the players of :data:`GROWING_COST`, whose games cost O(T log T) or
O(N·T²) in Python: the geometric covering of FLH, CBCE and SAOL has its eight levels (2⁰ … 2⁷) by
T = 200 and every bound is checked at every checkpoint, so the catalog still reaches each
mechanism of their bounds; their own tests (test_flh.py, test_cbce.py, test_saol.py at T = 200-300
on adaptive adversaries, test_ada_normal_hedge_tv.py at T = 2000) play the longer games. CBCE's
tightest bound ratio (metric/bound) over the catalog is 0.298 at T = 200 and 0.298 at T = 500."""

LONGER = 2000
"""The horizon of the longer games (it was 5000, ~200 s of the suite's CPU). Every bound is
checked at every checkpoint up to T, and how tight the catalog gets does not move with T past
2000: the largest metric/bound ratio over the catalog is 0.978 at T = 2000 and 0.985 at T = 5000
for hedge (planted_windows), 0.929 at both for ada_hedge (beta), 0.357 at both for
normal_hedge_dt; the two-phase file is rebuilt for each horizon, so it nearly attains fixed-η
Hedge's bound at T = 2000 as it did at 5000."""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bounds")
    rng = np.random.default_rng(5)
    out = {}
    for n_act in (2, 10):
        for horizon in (SHORT_GROWING, SHORT, LONGER):
            p = folder / f"uniform_{n_act}_{horizon}.npy"
            np.save(p, rng.random((horizon, n_act)))
            out["uniform", n_act, horizon] = str(p)
            p = folder / f"two_phase_{n_act}_{horizon}.npy"
            np.save(p, two_phase_matrix(horizon, n_act, first=(1.0, 0.0)))
            out["two_phase", n_act, horizon] = str(p)
    return out


def games(horizon: int):
    adversaries = [a for a in registry.available("adversary") if a not in SKIP_ADVERSARIES]
    for n_act in (2, 10):
        for adversary in adversaries:
            yield adversary, {}, n_act
        for kind in ("uniform", "two_phase"):
            yield "replay", {"kind": kind, "horizon": horizon}, n_act
    for adversary in OWN_N:
        yield adversary, {}, None


def run_all(player: str, horizon: int, files) -> int:
    checked = 0
    for adversary, extra, n_act in games(horizon):
        kwargs = {"horizon": horizon, "replicates": 4, "seed": 3, "metrics": METRICS}
        if adversary == "replay":
            kwargs["adversary_params"] = {"path": files[extra["kind"], n_act, horizon]}
            label = f"{player} vs replay {extra['kind']} N={n_act} T={horizon}"
        else:
            kwargs["n_actions"] = n_act
            label = f"{player} vs {adversary} N={n_act} T={horizon}"
        try:
            run = run_game(player, adversary, **kwargs)
        except ConfigError as exc:
            # a game this player or adversary refuses before round 1: another protocol, a number
            # of experts or a horizon it does not play; any other refusal is a bug to report
            if exc.parameter not in ("protocol", "n_actions", "horizon"):
                raise
            continue
        except GameError as exc:
            # a binary-loss player (Cover's learner) refuses the first fractional loss it is
            # shown; any other error mid-game is a bug the test must report
            binary = registry.load("player", player).tags.binary_losses
            if binary and "needs binary losses" in str(exc) and str(exc).startswith("player"):
                continue
            raise
        checked += check_declared(run.rows, label)
    return checked


GROWING_COST = {"ada_normal_hedge_tv", "flh", "cbce", "saol"}
"""Players whose per-round cost grows with t: AdaNormalHedge.TV's exact variant (O(N·t) per
round, O(N·T²) per game), and the meta-players FLH, CBCE and SAOL (one Python ``predict`` and
``update`` of the base per live copy, O(log t) copies): the T = 200 games below and their own
tests cover them (:data:`SHORT_GROWING`)."""


META_PLAYERS = {"flh", "cbce", "saol"}
"""The meta-players of :data:`GROWING_COST` (8–9 s each here, a third of this sweep's time): their
sweep runs with the slow tests (``make test-slow``); in ``make test`` their own tests check their
bounds on adaptive adversaries and the conformance suite on its adversaries."""


BOOSTERS = {"adaboost", "capped_adaboost", "gentle_boost"}
"""The primal–dual boosters declare a bound only against the boosting oracles (one game of the
catalog, ``edge_boosting_oracle``) and play the rest in Python rounds (~5 s of CPU each): their
sweep runs with the slow tests; ``tests/players/test_pd_boost.py`` checks their bound on both
boosting oracles in ``make test``."""


@pytest.mark.parametrize(
    "player",
    [
        pytest.param(p, marks=pytest.mark.slow) if p in META_PLAYERS | BOOSTERS else p
        for p in declaring_players()
    ],
)
def test_declared_bounds_hold(player, files):
    horizon = SHORT_GROWING if player in GROWING_COST else SHORT
    assert run_all(player, horizon, files) > 0


@pytest.mark.slow
@pytest.mark.parametrize("player", [p for p in declaring_players() if p not in GROWING_COST])
def test_declared_bounds_hold_longer_games(player, files):
    assert run_all(player, LONGER, files) > 0


def test_a_violated_bound_is_caught():
    """Negative control: a bound declared 10% below Hedge's actual regret must be flagged."""
    run = run_game("hedge", "ftl_killer", n_actions=2, horizon=200, metrics={"regret": {}})
    rows = run.rows
    fake = rows.assign(metric="bound:regret", value=rows.value * 0.9)
    with pytest.raises(AssertionError, match=r"negative control: .* violation"):
        check_declared(pd.concat([rows, fake]), "negative control")
