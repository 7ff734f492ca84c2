"""Metric selection reads the same from Python and the command line (issue 35, item 3)."""

from __future__ import annotations

import pytest

from arena import play
from arena.errors import UnknownComponentError
from arena.metric_sets import metric_set, metric_set_names
from tests.helpers.contract import run_in_process

GAME = dict(n_actions=3, horizon=40, replicates=2)


def metrics_of(rows) -> set[str]:
    return set(rows.metric.unique())


def test_a_set_name_plays_the_sets_metrics():
    oco = play("ogd", "random_linear", metrics="oco", **GAME)
    # the OCO set's metrics that an experts-free linear game computes, and no experts metric
    assert {"loss", "regret", "dynamic_regret", "path_length"} <= metrics_of(oco)
    assert "quantile_regret" not in metrics_of(oco)
    assert metrics_of(play("hedge", "bernoulli", metrics="regret", **GAME)) == {"regret"}


def test_default_is_the_games_own_protocols_defaults():
    by_name = play("ogd", "random_linear", metrics="default", **GAME)
    by_none = play("ogd", "random_linear", metrics=None, **GAME)
    assert metrics_of(by_name) == metrics_of(by_none)
    assert by_name.value.equals(by_none.value)


def test_lists_mix_sets_and_metric_names():
    rows = play("hedge", "bernoulli", metrics=["regret", "instant_regret"], **GAME)
    assert metrics_of(rows) == {"regret", "instant_regret"}
    # a metric both in a set and named again alike is counted once
    both = play("hedge", "bernoulli", metrics=["regret", "default"], **GAME)
    assert metrics_of(both) == metrics_of(play("hedge", "bernoulli", **GAME))
    one = play("hedge", "bernoulli", metrics="instant_regret", **GAME)
    assert metrics_of(one) == {"instant_regret"}


def test_a_name_that_is_neither_a_set_nor_a_metric_suggests_the_closest():
    with pytest.raises(UnknownComponentError, match=r"unknown metric 'oc'; did you mean 'oco'"):
        play("ogd", "random_linear", metrics="oc", **GAME)
    with pytest.raises(UnknownComponentError, match="neither a metric nor a metric set"):
        play("hedge", "bernoulli", metrics=["regret", "regrett"], **GAME)


def test_a_protocols_own_metric_is_known_by_its_plain_name():
    rows = play("perceptron", "separable_stream", metrics=["mistakes"], n_actions=4, horizon=40)
    assert metrics_of(rows) == {"mistakes"}


def test_every_set_file_is_a_mapping_of_metrics():
    assert {"default", "oco", "regret"} <= metric_set_names()
    for name in metric_set_names():
        assert isinstance(metric_set(name), dict) and metric_set(name)


def test_the_command_line_takes_one_metric_or_a_list(tmp_path):
    done = run_in_process(
        [
            "run",
            "player=hedge",
            "adversary=bernoulli",
            "metrics=[regret,instant_regret]",
            "horizon=40",
            "replicates=2",
            "progress=false",
            "hydra.run.dir=r",
        ],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "instant_regret" in done.stdout and "(N = 10, T = 40, R = 2)" in done.stdout
    lines = [line.split()[0] for line in done.stdout.splitlines() if line.strip()]
    assert "quantile_regret" not in lines
