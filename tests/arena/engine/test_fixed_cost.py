"""The per-game fixed cost's shortcuts answer exactly as the long ways they replace.

A game's validation, seeding and rows were most of a short game's time (issue 34); each
shortcut here (a cached checkpoint grid, a JSON fast path for plain values, a lazy refusal
message, a cheaper interval test, rows filled metric by metric) must give the same answers.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from arena.base import canonical_json
from arena.checkpoints import log_grid
from arena.game import run_game
from arena.params import Interval, constraint_errors, describe_constraints
from arena.players.hedge import Hedge
from arena.results import reference_rows, tidy_frame


def test_the_cached_grid_is_a_fresh_array_each_call():
    first = log_grid(1000)
    first[:] = -1  # a caller's edit never reaches the next game
    again = log_grid(1000)
    assert again.tolist() == log_grid(1000, 10).tolist()
    assert again[0] == 1 and again[-1] == 1000 and again.flags.writeable
    assert log_grid(np.int64(100), 4).tolist() == [1, 2, 3, 6, 10, 18, 32, 56, 100]
    with pytest.raises(ValueError, match="horizon"):
        log_grid(0)


def test_canonical_json_of_plain_and_numpy_values():
    value = {
        "b": [
            1,
            2.5,
            True,
            None,
            "x",
            np.float64(0.1),
            np.int64(3),
            (np.bool_(True), [np.arange(2)]),
        ],
        "a": np.float32(0.5),
    }
    text = canonical_json(value)
    assert text == '{"a":0.5,"b":[1,2.5,true,null,"x",0.1,3,[true,[[0,1]]]]}'
    assert json.loads(text)["b"][5] == 0.1


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_JSON_VALUES)
@example(math.nan)
@example(math.inf)
@example(-math.inf)
@example(-0.0)
@example(2**70)
@example(True)
@example("é\n\u2028")
@example([math.nan, -math.inf, {"b": -0.0, "a": "é"}])
def test_canonical_json_is_json_dumps_to_the_character(value):
    """Scalars written directly and containers by the one kept encoder give the text of
    ``json.dumps(..., sort_keys=True, separators=(",", ":"), allow_nan=True)``: NaN, ±inf,
    −0.0, huge integers, escaped and non-ASCII strings included."""
    want = json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=True)
    assert canonical_json(value) == want


def test_interval_accepts_as_before_on_every_kind_of_number():
    positive = Interval(0, None, closed="neither")
    accepted = [1, 2.5, np.float64(3.0), np.int32(4), 1e308]
    refused = [0, -1.0, True, False, float("nan"), float("inf"), "1", None, np.bool_(True)]
    assert all(positive.accepts(v) for v in accepted)
    assert not any(positive.accepts(v) for v in refused)
    assert Interval(1, None, integer=True).accepts(3.0)
    assert not Interval(1, None, integer=True).accepts(2.5)


def test_the_refusal_message_names_the_allowed_values():
    player = Hedge()
    player.eta = -1.0
    # the words of describe_constraints, which arena list and the docs show
    allowed = describe_constraints(Hedge)["eta"]
    assert allowed.startswith("a real number in (0, inf) or one of 'tuned'")
    assert constraint_errors(player) == [("eta", f"must be {allowed}, got -1.0")]
    assert constraint_errors(Hedge()) == []


def test_rows_of_several_metrics_and_params_are_in_the_contract_order():
    """Rows are ordered by checkpoint, then metric and param, then replicate: filled metric by
    metric, they equal the rows a reference loop would write, value for value."""
    metrics = {"regret": {}, "quantile_regret": {"eps": [0.1, 0.5]}, "loss": {}}
    run = run_game("hedge", "bernoulli", n_actions=4, horizon=30, replicates=3, metrics=metrics)
    rows = run.rows
    assert rows.t.is_monotonic_increasing
    first = rows[rows.t == rows.t.iloc[0]]
    assert first.metric.tolist() == ["regret"] * 3 + ["quantile_regret"] * 6 + ["loss"] * 3
    assert first.param.iloc[3:9].tolist() == [0.1] * 3 + [0.5] * 3
    assert first.replicate.tolist() == [0, 1, 2] * 4
    # the same rows from the row dicts of a reference loop, built one by one
    constants = {c: rows[c].iloc[0] for c in ("run_id", "cell", "player", "player_params")}
    constants |= {c: rows[c].iloc[0] for c in ("adversary", "adversary_params", "protocol")}
    constants |= {c: int(rows[c].iloc[0]) for c in ("n_actions", "horizon", "seed")}
    dicts = []
    for t, at_t in rows.groupby("t", sort=True):
        labelled = [
            (name, param, group.value.to_numpy())
            for (name, param), group in at_t.groupby(["metric", "param"], sort=False, dropna=False)
        ]
        dicts += reference_rows(constants, np.arange(3), int(t), labelled)
    expected = tidy_frame(dicts)
    assert expected.equals(rows.reset_index(drop=True))


def test_a_metric_whose_values_miss_a_column_is_refused_not_padded():
    """Rows are filled metric by metric into one buffer: a metric whose values have fewer
    columns than its row keys would leave a column of whatever the buffer held."""
    from arena.metrics.regret import Regret

    class TwoKeysOneColumn(Regret):
        name = "regret"

        def row_keys(self, spec):
            return [("regret", 1.0), ("regret", 2.0)]

    with pytest.raises(ValueError, match=r"metric regret: values have shape \(2, 1\), expected"):
        run_game(
            "hedge", "bernoulli", n_actions=3, horizon=5, replicates=2, metrics=[TwoKeysOneColumn()]
        )


def test_a_metric_whose_values_change_shape_between_checkpoints_is_refused():
    from arena.metrics.regret import Regret

    class Growing(Regret):
        name = "regret"

        def values(self, core):
            values = super().values(core)
            return np.repeat(values, 2, axis=0) if core.t >= 3 else values

    with pytest.raises(ValueError, match=r"metric regret: values change shape between checkpoints"):
        run_game("hedge", "bernoulli", n_actions=3, horizon=5, replicates=2, metrics=[Growing()])


def test_an_entry_point_target_is_parsed_as_entry_point_load_parses_it():
    from arena.registry import _target

    assert _target("arena.players.hedge:Hedge") == ("arena.players.hedge", ("Hedge",))
    assert _target("pkg.mod:Outer.Inner.") == ("pkg.mod", ("Outer", "Inner"))
    assert _target("pkg.mod") == ("pkg.mod", ())
