"""One dispatch rule (issue 29): a protocol computes metric name n with the registered class whose
``name == n`` and whose ``protocols`` contain the protocol (:func:`arena.metric.metric_for`).

Names shared across protocols keep their column and have one entry point per implementation;
two classes claiming one (name, protocol), a metric declaring no protocols and a misnamed entry
point are refused with a message naming them; a broken plugin breaks only its own names.
"""

from __future__ import annotations

import pickle
from importlib.metadata import EntryPoint
from typing import ClassVar

import numpy as np
import pytest

from arena import registry
from arena.errors import ArenaError, ConfigError, UnknownComponentError
from arena.game import run_game
from arena.metric import EVERY_PROTOCOL, Metric, metric_for, metric_index, protocol_reason
from arena.metrics.base import ExpertsMetric
from arena.metrics.regret import Regret
from arena.protocol import protocol_for

PROTOCOLS = registry.available("protocol")


def _names() -> list[str]:
    return sorted({key.partition(".")[0] for key in registry.available("metric")})


def test_every_registered_metric_declares_its_protocols_and_is_well_named():
    problems = {key: found for key, found in metric_index().items() if isinstance(found, str)}
    assert problems == {}
    for key, cls in metric_index().items():
        assert cls.protocols, key
        assert key.partition(".")[0] == cls.name


@pytest.mark.parametrize(
    ("name", "implementations"),
    [
        (
            "loss",
            {"experts": "Loss", "bandit": "Loss", "oco": "OCOLoss", "boosting": "BoostingLoss"},
        ),
        ("regret", {"experts": "Regret", "bandit": "Regret", "regression": "OCORegret"}),
        ("dynamic_regret", {"experts": "DynamicRegret", "multiclass": "OCODynamicRegret"}),
        ("mistakes", {"classification": "Mistakes", "boosting": "BoostingMistakes"}),
        ("bound", dict.fromkeys(PROTOCOLS, "Bound")),
        ("lower_bound", dict.fromkeys(PROTOCOLS, "LowerBound")),
    ],
)
def test_a_shared_name_keeps_its_column_with_one_class_per_protocol(name, implementations):
    for protocol, cls_name in implementations.items():
        cls = metric_for(name, protocol)
        assert (cls.__name__, cls.name) == (cls_name, name)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_protocol_follows_the_one_rule(protocol):
    game = protocol_for(protocol)
    for name in _names():
        found = metric_for(name, protocol)
        assert game.metric_class(name) is found or game.metric_class(name) == found
        if isinstance(found, str):
            assert found.startswith("defined for the") and found.endswith(f"not {protocol}")
            servers = [c for c in metric_index().values() if c.name == name]
            assert all(protocol not in c.protocols for c in servers)
        else:
            assert protocol in found.protocols and found.name == name
            assert game.accepts_metric(found.__new__(found))


def test_an_instance_of_another_protocols_metric_gets_this_protocols_class():
    run = run_game("ogd", "random_linear", n_actions=2, horizon=10, metrics=[Regret()])
    assert set(run.rows.metric) == {"regret"} and run.config["protocol"] == "oco"
    assert not protocol_for("oco").accepts_metric(Regret())


def test_every_protocol_is_a_sentinel_that_survives_pickling():
    assert "experts" in EVERY_PROTOCOL and "a plugin's protocol" in EVERY_PROTOCOL
    assert EVERY_PROTOCOL != frozenset() and repr(EVERY_PROTOCOL) == "EVERY_PROTOCOL"
    again = pickle.loads(pickle.dumps(EVERY_PROTOCOL))
    assert again == EVERY_PROTOCOL and "oco" in again
    assert protocol_reason(metric_for("bound", "experts"), "anything") is None


def test_an_unknown_name_is_refused_with_the_closest_names():
    with pytest.raises(
        UnknownComponentError, match="unknown metric 'regert'; did you mean 'regret'"
    ):
        metric_for("regert", "experts")
    with pytest.raises(UnknownComponentError, match="did you mean 'regret'"):
        run_game("hedge", "bernoulli", n_actions=2, horizon=5, metrics=["regert"])


def test_a_parameter_of_another_protocols_metric_is_named():
    with pytest.raises(
        ConfigError, match=r"is a parameter of regret in .*oco.* games, and this is"
    ):
        run_game("hedge", "bernoulli", n_actions=2, horizon=5, metrics={"regret": {"radius": [1]}})


# ----------------------------------------------------------------------------------------------
# plugins: conflicts, undeclared protocols, misnamed and broken entry points


class MyRegret(ExpertsMetric):
    """A second experts ``regret``: a conflict."""

    name = "regret"

    def values(self, core):
        return np.zeros((core.learner.shape[0], 1))


class MyOcoOnlyRegret(MyRegret):
    """A ``regret`` for a protocol nobody else serves it in: no conflict."""

    name = "regret"
    protocols: ClassVar[frozenset[str]] = frozenset({"guessing"})


class Undeclared(Metric):
    name = "undeclared"

    def values(self, core):
        return np.zeros((core.learner.shape[0], 1))


class Misnamed(ExpertsMetric):
    name = "something_else"


@pytest.fixture
def plugin_metrics(monkeypatch):
    """Add ``arena.metrics`` entry points, as a plugin's distribution would, for one test."""
    added: list[EntryPoint] = []
    real = registry.entry_points

    def entry_points(group):
        found = list(real(group=group))
        return found + [ep for ep in added if ep.group == group]

    def add(key: str, target: str) -> None:
        added.append(EntryPoint(key, target, "arena.metrics"))
        registry._claims.cache_clear()

    monkeypatch.setattr(registry, "entry_points", entry_points)
    yield add
    registry._claims.cache_clear()


def test_two_classes_claiming_one_name_and_protocol_are_named(plugin_metrics):
    plugin_metrics("regret.mine", f"{__name__}:MyRegret")
    with pytest.raises(ArenaError, match=r"'regret' is defined twice for the experts protocol: "):
        metric_for("regret", "experts")
    with pytest.raises(ArenaError, match=r"regret\.mine"):
        run_game("hedge", "bernoulli", n_actions=2, horizon=5, metrics=["regret"])
    assert "defined twice" in metric_index()["regret.mine"]
    assert metric_for("regret", "oco").__name__ == "OCORegret"  # the other protocols are fine


def test_another_implementation_for_another_protocol_is_no_conflict(plugin_metrics):
    plugin_metrics("regret.guessing", f"{__name__}:MyOcoOnlyRegret")
    assert metric_for("regret", "guessing") is MyOcoOnlyRegret
    assert metric_for("regret", "experts") is Regret
    assert not isinstance(metric_index()["regret.guessing"], str)


def test_a_metric_declaring_no_protocols_is_refused(plugin_metrics):
    plugin_metrics("undeclared", f"{__name__}:Undeclared")
    with pytest.raises(ArenaError, match=r"metric undeclared .*Undeclared.* declares no protocols"):
        run_game("hedge", "bernoulli", n_actions=2, horizon=5, metrics=["undeclared", "regret"])
    assert "declares no protocols" in metric_index()["undeclared"]
    # an unregistered instance of such a class is refused too, by name
    with pytest.raises(ArenaError, match="declares no protocols"):
        run_game("hedge", "bernoulli", n_actions=2, horizon=5, metrics=[Undeclared()])


def test_a_misnamed_entry_point_is_refused(plugin_metrics):
    plugin_metrics("misnamed", f"{__name__}:Misnamed")
    with pytest.raises(ArenaError, match="is named 'something_else': register a metric under"):
        metric_for("misnamed", "experts")


def test_a_broken_plugin_breaks_only_its_own_names(plugin_metrics):
    plugin_metrics("regret.broken", "no_such_module_anywhere:Regret")
    plugin_metrics("broken_only", "no_such_module_anywhere:Thing")
    assert metric_for("regret", "experts") is Regret
    run = run_game("hedge", "bernoulli", n_actions=2, horizon=5, metrics=["regret"])
    assert set(run.rows.metric) == {"regret"}
    with pytest.raises(ArenaError, match=r"broken_only.*failed to import"):
        metric_for("broken_only", "experts")
