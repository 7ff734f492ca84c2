"""The Hydra configs are a true picture of the registry: one YAML per built-in, every parameter."""

from __future__ import annotations

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from arena import registry
from arena.game import resolve_component
from arena.hydra_support import GROUPS, config_dir, generated_node, yaml_options
from arena.metrics.builtin import DEFAULT_METRICS

CASES = [
    (kind, name)
    for kind in GROUPS
    for name in registry.available(kind)
    if registry.entry(kind, name).distribution == "regret-arena"
]
"""Built-ins only: installed plugins get generated nodes (tests/arena/test_plugins.py)."""


@pytest.mark.parametrize(("kind", "name"), CASES)
def test_every_builtin_has_a_yaml_matching_its_signature(kind, name):
    assert name in yaml_options(GROUPS[kind]), f"configs/{kind}/{name}.yaml is missing"
    node = yaml.safe_load((config_dir() / GROUPS[kind] / f"{name}.yaml").read_text()) or {}
    assert node == generated_node(kind, name)


@pytest.mark.parametrize(("kind", "name"), CASES)
def test_every_option_composes_and_instantiates(kind, name):
    with initialize_config_dir(version_base=None, config_dir=str(config_dir())):
        cfg = compose("run", overrides=[f"{kind}={name}"])
    node = OmegaConf.to_container(cfg[kind])
    params = {k: v for k, v in node.items() if k != "_target_"}
    if name == "replay":
        assert params["path"] == "???"
        return
    component = resolve_component(kind, name, params)
    assert type(component).registry_name() == name


def test_default_metric_set_matches_the_engine_default():
    node = yaml.safe_load((config_dir() / "metrics" / "default.yaml").read_text())
    assert node == DEFAULT_METRICS
    builtin = {
        n
        for n in registry.available("metric")
        if registry.entry("metric", n).distribution == "regret-arena"
    }
    assert set(node) == builtin
