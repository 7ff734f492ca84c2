"""Labels of players and games for tables and figures, read from the tidy ``*_params`` columns.

:func:`variant_labels` is public: it names each player variant of a tidy table the way the
report's legends and tables do, so a user's own plots match the report.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterable
from functools import cache
from typing import Any

import pandas as pd

from arena.base import canonical_json


@cache
def registered_defaults(kind: str, name: str) -> dict[str, str] | None:
    """Canonical JSON of each constructor default of a registered component, or None.

    None when the component is not installed here, broken, or not a Component: labels then fall
    back to what the results themselves say.
    """
    from arena import registry

    try:
        defaults = registry.load(kind, name).param_defaults()
    except Exception:  # not installed here, broken, or not a Component: defaults unknown
        return None
    return {k: canonical_json(v) for k, v in defaults.items() if v is not inspect.Parameter.empty}


def format_value(value: Any) -> str:
    """A parameter value as a label shows it: ``0.1``, ``tuned``, ``[1,2]``.

    Examples
    --------
    >>> format_value(0.10), format_value("tuned"), format_value([1, 2]), format_value(None)
    ('0.1', 'tuned', '[1,2]', 'None')
    """
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):
        return value
    if isinstance(value, list | dict):
        return canonical_json(value)
    return str(value)


def parse_params(params: str) -> dict[str, Any]:
    """The parameters of a ``*_params`` cell (canonical JSON) as a dict.

    Text that is not a JSON object (a damaged or foreign file) becomes ``{"params": text}``, so
    that it still shows in a label instead of failing the report.

    Examples
    --------
    >>> parse_params('{"eta":0.1}'), parse_params(""), parse_params("oops")
    ({'eta': 0.1}, {}, {'params': 'oops'})
    """
    try:
        value = json.loads(params) if params else {}
    except (TypeError, ValueError):
        return {"params": params}
    return value if isinstance(value, dict) else {"params": value}


def _call(name: str, params: dict[str, Any]) -> str:
    inner = ", ".join(f"{k}={format_value(v)}" for k, v in sorted(params.items()))
    return f"{name}({inner})" if inner else name


def variant_label_map(
    pairs: Iterable[tuple[str, str]], kind: str = "player"
) -> dict[tuple[str, str], str]:
    """Labels of distinct ``(name, params JSON)`` pairs; see :func:`variant_labels` for the rule.

    Examples
    --------
    >>> m = variant_label_map([("hedge", '{"eta":"tuned"}'), ("hedge", '{"eta":0.1}'),
    ...                        ("ftl", '{"tie_break":"uniform"}')])
    >>> sorted(m.values())
    ['ftl', 'hedge(eta=0.1)', 'hedge(eta=tuned)']
    """
    parsed = {pair: parse_params(pair[1]) for pair in dict.fromkeys(pairs)}
    by_name: dict[str, list[tuple[str, str]]] = {}
    for pair in parsed:
        by_name.setdefault(pair[0], []).append(pair)
    out: dict[tuple[str, str], str] = {}
    for name, variants in by_name.items():
        if len(variants) > 1:
            # a key absent from some variant's JSON is a difference too (None stands for it)
            keys = {k for v in variants for k in parsed[v]}
            shown = {
                k for k in keys if len({canonical_json(parsed[v].get(k)) for v in variants}) > 1
            }
            for v in variants:
                out[v] = _call(name, {k: x for k, x in parsed[v].items() if k in shown})
        else:
            (v,) = variants
            defaults = registered_defaults(kind, name) or {}
            # one variant: the short name means "the registered defaults", so only departures
            # from them are shown (a component not installed here shows its short name)
            out[v] = _call(
                name,
                {
                    k: x
                    for k, x in parsed[v].items()
                    if k in defaults and canonical_json(x) != defaults[k]
                },
            )
    # two variants rendered alike (params that are not JSON objects): show everything
    seen: dict[str, list[tuple[str, str]]] = {}
    for pair, label in out.items():
        seen.setdefault(label, []).append(pair)
    for same in seen.values():
        if len(same) > 1:
            for pair in same:
                out[pair] = f"{pair[0]}{pair[1]}"
    return out


def variant_labels(frame: pd.DataFrame, kind: str = "player") -> pd.Series:
    """Label of each row's player (or adversary) variant, as the report's legends show it.

    A variant is a distinct ``(name, params)`` pair of the tidy table. When several variants
    share a name, each label shows exactly the parameters that differ among them
    (``hedge(eta=0.1)``, ``hedge(eta=tuned)``); a name with one variant keeps its short name,
    followed by the parameters it sets away from the registered defaults, if any.

    Parameters
    ----------
    frame : DataFrame
        Tidy rows (e.g. from :func:`arena.play` or :func:`arena.results.load_results`) with the
        columns ``<kind>`` and ``<kind>_params`` (canonical JSON).
    kind : {"player", "adversary"}
        Which component to label.

    Returns
    -------
    Series
        One string per row, indexed like ``frame``, named ``<kind>_label``.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"player": ["hedge", "hedge", "ftl"],
    ...                      "player_params": ['{"eta":0.1}', '{"eta":"tuned"}',
    ...                                        '{"tie_break":"uniform"}']})
    >>> variant_labels(rows).tolist()
    ['hedge(eta=0.1)', 'hedge(eta=tuned)', 'ftl']
    """
    names = frame[kind].astype(str)
    params = frame[f"{kind}_params"].astype(str)
    # label each distinct pair once: tidy tables repeat a variant on thousands of rows
    pairs = pd.MultiIndex.from_arrays([names, params])
    codes, uniques = pairs.factorize()
    labels = variant_label_map(list(uniques), kind)
    mapped = [labels[pair] for pair in uniques]
    return pd.Series(
        [mapped[c] for c in codes], index=frame.index, name=f"{kind}_label", dtype=object
    )


def game_title(adversary: str, params: str, n_actions: int, horizon: int | None = None) -> str:
    """The panel title of a game: the adversary with every parameter it was given, N (and T).

    Parameters whose value is ``None`` (not given: derived in ``reset``) are left out; the rest
    are shown even at their defaults, since a reader of one panel should not need the registry.

    Examples
    --------
    >>> game_title("bernoulli", '{"best":0,"gap":0.1,"means":null}', 10)
    'bernoulli(best=0, gap=0.1), N=10'
    >>> game_title("fair_coin", "{}", 100, 5000)
    'fair_coin, N=100, T=5000'
    """
    given = {k: v for k, v in parse_params(params).items() if v is not None}
    return ", ".join(
        [_call(adversary, given), f"N={n_actions}", *([f"T={horizon}"] if horizon else [])]
    )
