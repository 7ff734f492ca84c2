"""The Hydra configs are a true picture of the registry: every built-in composes, with every
parameter; a YAML file exists only where it says what no parameter declaration can."""

from __future__ import annotations

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from arena import registry
from arena.apps.hydra_support import (
    GROUPS,
    config_dir,
    generated_node,
    register_generated_nodes,
    yaml_options,
)
from arena.metrics.defaults import DEFAULT_METRICS
from arena.validation import resolve_component

CASES = [
    (kind, name)
    for kind in GROUPS
    for name in registry.available(kind)
    if registry.entry(kind, name).distribution == "regret-arena"
]
"""Built-ins only: installed plugins get generated nodes (tests/arena/test_plugins.py)."""


KEPT = [(kind, name) for kind in GROUPS for name in sorted(yaml_options(GROUPS[kind]))]
"""The YAML files left: each documents what the parameter declarations cannot."""


def test_yaml_files_are_the_exception():
    # most built-ins run on the node generated from their signature; the rest say why they stay
    assert len(KEPT) < len(CASES) / 3
    assert all(case in CASES for case in KEPT), "a YAML file for no built-in"


@pytest.mark.parametrize(("kind", "name"), KEPT)
def test_kept_yaml_matches_the_signature_and_says_why_it_is_kept(kind, name):
    text = (config_dir() / GROUPS[kind] / f"{name}.yaml").read_text()
    node = yaml.safe_load(text) or {}
    assert node == generated_node(kind, name)
    comment = " ".join(line[1:].strip() for line in text.splitlines() if line.startswith("#"))
    assert "Kept" in comment and "no parameter declaration can say" in comment


@pytest.mark.parametrize(("kind", "name"), CASES)
def test_every_option_composes_and_instantiates(kind, name):
    register_generated_nodes()  # as `arena run` does: the names without a YAML file
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
    builtin = {  # a metric's names: one entry point per implementation (regret, regret.oco)
        n.partition(".")[0]
        for n in registry.available("metric")
        if registry.entry("metric", n).distribution == "regret-arena"
    }
    assert set(node) == builtin
