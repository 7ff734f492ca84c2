"""Hydra glue: where the configs live and config nodes for registered names without a YAML file.

Config group = registry kind (``player``, ``adversary``), option = registry name (architecture:
parameters). A registered name gets a node generated from its ``__init__`` signature, so ``arena run
adversary=my_plugin adversary.param=1`` works right after ``pip install``, and so do the built-ins:
what each parameter may be is declared once, on the class (:mod:`arena.params`). A YAML file in
``configs/<group>/`` is kept only where it says what no declaration can (e.g. that a default is
tuned from the game's domain, so the player needs an adversary that declares one); it must repeat
the signature's defaults (``tests/arena/test_configs.py``).
"""

from __future__ import annotations

import inspect
from pathlib import Path

from arena import registry
from arena.errors import ArenaError

GROUPS = {"player": "player", "adversary": "adversary"}


def config_dir() -> Path:
    """Return the directory holding ``run.yaml`` and the config groups."""
    here = Path(__file__).resolve().parent
    # a wheel ships them inside the package; a checkout (or an editable install) has them beside
    for candidate in (here / "conf", here.parent / "configs"):
        if (candidate / "run.yaml").is_file():
            return candidate
    raise ArenaError(f"cannot find the arena configs next to {here}")


def yaml_options(group: str) -> set[str]:
    """Registry names that have a YAML file in ``configs/<group>/``."""
    return {p.stem for p in (config_dir() / group).glob("*.yaml")}


def generated_node(kind: str, name: str) -> dict:
    """Return a config node for ``name`` built from its signature (``???`` marks a required one)."""
    cls = registry.load(kind, name)
    reg = registry.entry(kind, name)
    node: dict = {"_target_": reg.entry_point.value.replace(":", ".")}
    for pname, default in cls.param_defaults().items():
        node[pname] = "???" if default is inspect.Parameter.empty else _yamlable(default)
    return node


def _yamlable(value):
    if isinstance(value, tuple):
        return [_yamlable(v) for v in value]
    return value


def register_generated_nodes() -> list[str]:
    """Store a generated node in Hydra's ConfigStore for every registered name without a YAML.

    Plugins that fail to import are skipped here (``arena list`` reports them). Returns the names
    registered.
    """
    from hydra.core.config_store import ConfigStore

    cs = ConfigStore.instance()
    done = []
    for kind, group in GROUPS.items():
        have = yaml_options(group)
        for name in registry.available(kind):
            if name in have:
                continue
            try:
                node = generated_node(kind, name)
            except ArenaError:
                continue
            cs.store(group=group, name=name, node=node)
            done.append(f"{group}/{name}")
    return done
