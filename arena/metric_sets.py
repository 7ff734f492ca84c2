"""Named metric sets: what ``metrics="oco"`` means, the same from Python and the command line.

A **metric set** is a YAML file of the configs' ``metrics/`` group (``configs/metrics/oco.yaml``
in a checkout, ``arena/conf/metrics/oco.yaml`` in an installed wheel), a mapping
``{metric name: parameters}``. ``arena run metrics=oco`` selects one through Hydra's config group;
:func:`arena.play` and :func:`arena.run_game` take the same names, so a researcher writes the
same word in both places. ``default`` is always the game's own protocol's default set (the
``default.yaml`` file is the experts protocol's, which is what Hydra composes before it knows the
game).

A game's ``metrics`` argument may be

* ``None`` or ``"default"``: the protocol's defaults;
* a set's name (``"oco"``) or one metric's name (``"instant_regret"``);
* a list mixing both, and metric instances (``["regret", "instant_regret"]``,
  ``["oco", "sketch_error"]``): their union, in order, a metric listed twice being an error as
  before;
* a mapping ``{name: params}`` (what the command line composes).

Examples
--------
>>> sorted(metric_set_names())[:3]
['boosting', 'boosting_protocol', 'default']
>>> metric_set("regret")
{'regret': {}}
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena.errors import ArenaError, ConfigError, UnknownComponentError

#: The name that always means the game's protocol's own default metrics.
DEFAULT_SET = "default"


def config_dir() -> Path:
    """Return the folder holding ``run.yaml`` and the config groups (``metrics/``, ``player/``...).

    A wheel ships them inside the package as ``arena/conf``; a checkout (or an editable install)
    has them beside the package, as ``configs/``.
    """
    here = Path(__file__).resolve().parent  # the arena package
    for candidate in (here / "conf", here.parent / "configs"):
        if (candidate / "run.yaml").is_file():
            return candidate
    raise ArenaError(f"cannot find the arena configs next to {here}")


def metric_set_names() -> set[str]:
    """Return the names of the metric sets (the YAML files of the ``metrics/`` config group)."""
    return {path.stem for path in (config_dir() / "metrics").glob("*.yaml")}


@functools.cache
def _read_set(path: Path, mtime_ns: int) -> dict[str, Any]:
    import yaml  # PyYAML, installed with hydra-core's omegaconf

    node = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(node, Mapping):
        raise ArenaError(f"{path}: a metric set must be a mapping {{metric: params}}")
    return {str(name): params for name, params in node.items()}


def metric_set(name: str) -> dict[str, Any]:
    """Return the metric set ``name`` as a new mapping ``{metric name: parameters}``.

    Raises :class:`~arena.errors.ConfigError` on ``metrics`` naming the sets there are.
    """
    path = config_dir() / "metrics" / f"{name}.yaml"
    if name not in metric_set_names():
        raise ConfigError(
            "metrics", name, f"no metric set of that name (sets: {', '.join(sorted_sets())})"
        )
    entries = _read_set(path, path.stat().st_mtime_ns)
    return {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in entries.items()}


def sorted_sets() -> list[str]:
    """The metric sets' names, sorted (for messages and ``arena list metrics``)."""
    return sorted(metric_set_names())


def expand_metric_names(metrics: Any, default: Mapping[str, Any]) -> Any:
    """Turn set names in a game's ``metrics`` argument into the metrics they stand for.

    ``metrics`` as :func:`arena.game.resolve_metrics` receives it; ``default`` is the protocol's
    default set, which ``None`` and ``"default"`` stand for. A string names a set or one metric;
    in a list, every string that names a set is replaced by the set's entries (as a mapping's
    items, ``(name, params)`` pairs), everything else is kept. Mappings pass through unchanged.

    Returns a mapping, or a list of metric names, ``(name, params)`` pairs and instances.
    """
    if metrics is None:
        return default
    if isinstance(metrics, str):
        metrics = [metrics]
    if isinstance(metrics, Mapping) or not isinstance(metrics, list | tuple):
        return metrics
    sets = metric_set_names()
    out: list[Any] = []
    from_sets: dict[str, Any] = {}  # two sets naming one metric alike name it once

    def extend(entries: Mapping[str, Any]) -> None:
        for name, params in entries.items():
            if name in from_sets and from_sets[name] == params:
                continue
            from_sets[name] = params
            out.append((name, params))

    for item in metrics:
        if item == DEFAULT_SET:
            extend(default)
        elif isinstance(item, str) and item in sets:
            extend(metric_set(item))
        else:
            if isinstance(item, str):
                _check_metric_name(item, sets)
            out.append(item)
    return out


def metric_names(registry) -> set[str]:
    """The registered metrics' names, without the protocol suffix of a protocol's own metric
    (the entry point ``loss.oco`` is the metric ``loss`` of OCO games)."""
    return {key.partition(".")[0] for key in registry.available("metric")}


def _check_metric_name(name: str, sets: set[str]) -> None:
    """Refuse a string that names neither a metric set nor a registered metric, suggesting the
    closest of both."""
    from arena import registry

    metrics = metric_names(registry)
    if name in metrics:
        return
    close = difflib.get_close_matches(name, sorted(metrics | sets | {DEFAULT_SET}), n=3)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise UnknownComponentError(
        f"unknown metric {name!r}{hint} (neither a metric nor a metric set: the sets are "
        f"{', '.join(sorted(sets | {DEFAULT_SET}))}; `arena list metrics` lists the metrics)"
    )
