"""The walker of the metric registry: every registered metric, in every protocol it declares,
streamed by the driver and recomputed by its own reference on the game's literal record.

For each (metric, protocol) it looks, among the registered players and adversaries of the
protocol, for games the metric applies to (cheap partners first, then every other registered
component in name order), plays a few of them for a few seeds with :func:`arena.game.run_game` and
with the protocol's literal reference loop (:func:`arena.game.reference_play`, which calls
``metric.reference`` on one record per replicate), and compares every row.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from arena import registry
from arena.errors import ArenaError
from arena.game import prepare_game, reference_play, run_game
from arena.metric import EVERY_PROTOCOL, Metric, metric_for
from arena.protocol import protocol_for

HORIZON = 12
REPLICATES = 2
SEEDS = (0, 1)
GAMES = 1
"""Games per (metric, protocol): the first playable one in the order of :data:`PREFERRED`."""

TOLERANCE = 1e-9
"""``|streamed − reference| ≤ TOLERANCE · max(1, |reference|)``. Both sides are float64 sums of
at most 12 rounds of values in the declared loss range, added in different orders (kernels
against Python loops and numpy reductions): they agree to a few ulps, about 1e-14. The largest
amplifications the walker meets stay far below 1e-9: ``estimate_bias``'s importance weights
``1/p_t`` (a player's compiled kernel and its readable path agree on ``p_t`` to an ulp, which
``1/p`` multiplies by at most ``1/p_min``), and comparators in hindsight, solved on the same
stored examples by the same solver on both sides (the squared loss's, two exact solvers of the
same quadratic, streamed statistics against stored examples, agree to 1e-12 on 12 rounds)."""

SMALL_PARAMS: dict[str, dict[str, Any]] = {
    "dg_volume": {"R": [0.0, 1.0], "grid": 16},
    "volume_quantile_regret": {"eps": [0.1, 0.5], "grid": 16},
    "shifting_regret": {"k": [0, 1, 3]},
    "sa_regret": {"tau": [1, 3, 20]},
    "quantile_regret": {"eps": [0.3, 1.0]},
    "subset_quantile_regret": {"eps": [0.3, 1.0]},
    "dg_score": {"R": [0.0, 0.5]},
    "dg_loss": {"R": [0.0, 0.5]},
    "dg2_score": {"R": [0.0, 0.5]},
    "comparator_regret": {"c": [0.5, 2.0]},
    "sketch_error": {"k": [1, 2]},
}
"""Parameters small enough for the brute-force definitions at T = 12 (the defaults of the grid
metrics integrate over 1024 cells by a plain loop)."""

PREFERRED = {
    "player": (
        "hedge",
        "ada_normal_hedge",
        "ada_normal_hedge_tv",
        "exp3",
        "ogd",
        "perceptron",
        "multiclass_perceptron",
        "son",
        "online_bbm",
        "adaboost_ol",
    ),
    "adversary": (
        "bernoulli",
        "fair_coin",
        "shifting_experts",
        "tree_experts",
        "sleeping",
        "matrix_game",
        "drifting_game",
        "boosting_oracle",
        "random_linear",
        "ill_conditioned",
        "separable_stream",
        "dataset_stream",
        "multiclass_separable_stream",
        "scale_lower_bound",
    ),
}
"""Partners tried first: cheap, and proven equal to their reference loops elsewhere. Every other
registered component follows in name order, so a metric no preferred game applies to still finds
its games."""

ADVERSARY_PARAMS: dict[str, list[dict[str, Any]]] = {
    "boosting_oracle": [{"test_fraction": 0.3}],
    "dataset_stream": [{"test_fraction": 0.2}, {"dataset": "diabetes", "test_fraction": 0.2}],
    "separable_stream": [{"test_size": 20}, {"domain": "ball"}],
}
"""Parameters that make an adversary expose what some metrics read (a held-out split) or play
another protocol (``dataset_stream``'s regression set)."""

METRIC_PARAMS: dict[str, list[dict[str, Any]]] = {
    "regret.oco": [{}, {"radius": [math.inf]}, {"radius": [1.0]}],
}
"""Parameter sets tried in turn, where the default does not apply to every game (the best
comparator over ℝ^d is unbounded for linear losses; the multiclass hinge's ball is not solved)."""

N_ACTIONS = (3, 2, None)
"""Sizes tried in turn (the grid metrics need d ≤ 2; some adversaries fix their own)."""

UNCOVERED = {
    ("bound", "boosting"): "no registered booster declares a bound",
    ("bound", "multiclass"): "no registered multiclass player declares a bound",
    ("lower_bound", "multiclass"): "no registered multiclass adversary declares a lower bound",
    ("bound", "structured"): (
        "Theorem 7 holds at a comparator, so structured_self_tuned logs it through "
        "structured_cost_bound, not bounds(t)"
    ),
    ("lower_bound", "structured"): "no registered structured adversary declares a lower bound",
    ("bound", "label_ranking"): "no registered label_ranking player declares a bound",
    ("bound", "instance_ranking"): "no registered instance_ranking player declares a bound",
    ("lower_bound", "instance_ranking"): (
        "no registered instance_ranking adversary declares a lower bound"
    ),
    ("lower_bound", "label_ranking"): (
        "no registered label_ranking adversary declares a lower bound"
    ),
    ("weighted_vote_train_error", "bandit"): (
        "no registered bandit player keeps a weighted vote (the primal-dual boosters are experts "
        "players)"
    ),
    **{
        (grid, protocol): f"no registered {protocol} adversary plays a box or ball in d ≤ 2"
        for grid in ("dg_volume", "volume_quantile_regret")
        for protocol in ("multiclass", "regression")
    },
}
"""(entry point, protocol) pairs no registered game exercises, and why. A plugin's component that
declares what they read makes the walker play them; the test fails if one gets covered (so the
list stays true) or if any other pair has no game."""


@dataclass(frozen=True)
class Case:
    """One metric in one protocol: its entry-point key and class."""

    key: str
    cls: type[Metric]
    protocol: str

    @property
    def id(self) -> str:
        return f"{self.key}@{self.protocol}"


def cases(index: dict[str, type[Metric] | str]) -> Iterator[Case]:
    """Every (registered metric, protocol it declares); EVERY_PROTOCOL: every registered one."""
    protocols = registry.available("protocol")
    for key, cls in sorted(index.items()):
        if isinstance(cls, str):  # a broken entry point: the index test names it
            continue
        declared = protocols if cls.protocols == EVERY_PROTOCOL else sorted(cls.protocols)
        for protocol in declared:
            if protocol in protocols:
                yield Case(key, cls, protocol)


def _ordered(kind: str) -> list[str]:
    names = registry.available(kind)
    first = [n for n in PREFERRED[kind] if n in names]
    return first + [n for n in names if n not in first]


def _plays(kind: str, name: str, protocol: str) -> bool:
    tags = registry.load(kind, name).tags
    if kind == "player":
        return protocol in tags.protocols
    game = protocol_for(protocol)
    return tags.protocol == protocol or tags.protocol in type(game).hosts


def _adversary_variants(name: str) -> list[dict[str, Any]]:
    return ADVERSARY_PARAMS.get(name, [{}])


def games(case: Case) -> Iterator[dict[str, Any]]:
    """The keyword arguments of the games the metric applies to, cheap ones first."""
    players = [p for p in _ordered("player") if _plays("player", p, case.protocol)]
    for adversary in _ordered("adversary"):
        for adversary_params in _adversary_variants(adversary):
            try:  # an adversary's protocol may depend on its parameters (a regression dataset)
                made = registry.make("adversary", adversary, **adversary_params)
            except (ArenaError, ValueError, TypeError):
                continue
            hosted = type(protocol_for(case.protocol)).hosts
            if made.tags.protocol != case.protocol and made.tags.protocol not in hosted:
                continue
            for player in players:
                found = _playable(case, player, adversary, adversary_params)
                if found is not None:
                    yield found


def _playable(case: Case, player: str, adversary: str, adversary_params) -> dict | None:
    """The first (metric parameters, n_actions) with which the metric is computed in this game."""
    for metric_params in METRIC_PARAMS.get(case.key, [SMALL_PARAMS.get(case.cls.name, {})]):
        for n_actions in N_ACTIONS:
            kwargs = {
                "player": player,
                "adversary": adversary,
                "adversary_params": adversary_params,
                "n_actions": n_actions,
                "horizon": HORIZON,
                "replicates": REPLICATES,
                "metrics": {case.cls.name: metric_params},
            }
            try:
                game = prepare_game(**kwargs)
            except (ArenaError, ValueError, TypeError):
                continue  # refused: another size, or the metric does not apply ("no metric left")
            if game.protocol.name == case.protocol and [type(m) for m in game.metrics] == [
                case.cls
            ]:
                return kwargs
    return None


def compare(case: Case, kwargs: dict[str, Any], seed: int) -> float:
    """Play one game both ways; return the largest scaled difference (asserting the rows agree)."""
    run_kwargs = {**kwargs, "seed": seed}
    player, adversary = run_kwargs.pop("player"), run_kwargs.pop("adversary")
    streamed = run_game(player, adversary, **run_kwargs).rows
    reference = reference_play(player, adversary, **run_kwargs)
    pd.testing.assert_frame_equal(
        streamed.drop(columns="value"), reference.drop(columns="value"), check_exact=True
    )
    got, want = streamed["value"].to_numpy(), reference["value"].to_numpy()
    both_nan = np.isnan(got) & np.isnan(want)
    scaled = np.where(both_nan, 0.0, np.abs(got - want) / np.maximum(1.0, np.abs(want)))
    worst = float(np.max(scaled)) if scaled.size else 0.0
    if not worst <= TOLERANCE:  # NaN on one side only is a failure too
        i = int(np.argmax(np.where(np.isnan(scaled), np.inf, scaled)))
        row = streamed.iloc[i]
        raise AssertionError(
            f"{case.id}: {player} vs {adversary}, seed {seed}: {row.metric} (param {row.param}) "
            f"at t = {row.t}, replicate {row.replicate}: streamed {got[i]!r} against the "
            f"reference's {want[i]!r}"
        )
    return worst


def has_reference(cls: type[Metric]) -> bool:
    """Whether the class defines its brute-force definition (``reference``, ``reference_rows``)."""
    return cls.reference is not Metric.reference or cls.reference_rows is not Metric.reference_rows


def check_case(case: Case) -> list[tuple[str, str, float]]:
    """Walk one case; return ``(player, adversary, worst scaled difference)`` per game played."""
    assert metric_for(case.cls.name, case.protocol) is case.cls, case.id
    played = []
    for kwargs in games(case):
        worst = max(compare(case, kwargs, seed) for seed in SEEDS)
        played.append((kwargs["player"], kwargs["adversary"], worst))
        if len(played) == GAMES:
            break
    return played


def reference_missing(index) -> list[str]:
    """Registered metrics without a brute-force definition, or declaring no protocol."""
    out = []
    for key, cls in index.items():
        if isinstance(cls, str):
            out.append(f"{key}: {cls}")
        elif not cls.protocols:
            out.append(f"{key}: declares no protocols")
        elif not has_reference(cls):
            out.append(f"{key}: no reference")
    return out
