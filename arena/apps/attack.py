"""``arena attack``: a player's exact worst case on a small experts game, from the command line.

``arena attack player=hedge n_actions=2 horizon=200`` runs
:func:`arena.attack.exact_worst_case` and prints its one-line summary (the worst-case regret,
the player's declared bound and their ratio, or where a limit stopped it), then writes the
attaining sequence where the ``replay`` adversary plays it (``worst.npy``, T × N), its
provenance (``worst.json``: player and parameters, game, loss values, value, bound, limits,
package version and date, and the certificate of :func:`arena.attack.certificate.certify` when
the search reached T) and the value after every round (``worst_by_round.csv``), into
``outputs/attacks/<player>-N<n>-T<horizon>/`` unless ``out=DIR`` says otherwise. Every file is
written atomically, under the folder's lock, never through a symbolic link.

Keys: ``player`` (required), ``n_actions`` (default 2), ``horizon`` (required), ``losses``
(``binary`` or a list of values in [0, 1] such as ``[0,0.5,1]``), ``player.NAME=VALUE`` (the
player's parameters), ``time_limit`` (seconds), ``max_states``, ``reduce`` (``true``: merge
moves and states equal up to a shift or a relabelling of the experts, exact to 1e-12 but not
bitwise), ``out``.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

import numpy as np

from arena.errors import ConfigError

KEYS = ("player", "n_actions", "horizon", "losses", "time_limit", "max_states", "reduce", "out")


def parse_attack_args(args: list[str]) -> dict[str, Any]:
    """Parse ``KEY=VALUE`` tokens into the attack's options (``player.X=V`` into its params).

    Examples
    --------
    >>> opts = parse_attack_args(["player=hedge", "horizon=20", "player.eta=0.5", "losses=[0,1]"])
    >>> opts["player"], opts["horizon"], opts["params"], opts["losses"]
    ('hedge', 20, {'eta': 0.5}, [0, 1])
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    opts: dict[str, Any] = {"n_actions": 2, "losses": "binary", "params": {}, "reduce": False}
    parser = OverridesParser.create()
    for token in args:
        # values read as in `arena run` (Hydra's grammar: numbers, lists, true/false, strings)
        try:
            (override,) = parser.parse_overrides([token])
        except HydraException:
            raise ConfigError(
                "arena attack", token, "expected KEY=VALUE (e.g. player=hedge)"
            ) from None
        key = override.key_or_group
        if override.is_sweep_override():
            raise ConfigError("arena attack", key, f"takes one value, got {token!r}")
        value = override.value()
        if key.startswith("player."):
            opts["params"][key.removeprefix("player.")] = value
        elif key in KEYS:
            opts[key] = value
        else:
            import difflib

            close = difflib.get_close_matches(key, [*KEYS, "player.NAME"], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError("arena attack", key, f"unknown key{hint}; keys: {', '.join(KEYS)}")
    for key in ("player", "horizon"):
        if key not in opts:
            raise ConfigError("arena attack", key, "is required (e.g. player=hedge horizon=200)")
    for key in ("n_actions", "horizon", "max_states"):
        if key in opts and not (isinstance(opts[key], int) and not isinstance(opts[key], bool)):
            raise ConfigError("arena attack", key, f"must be an integer, got {opts[key]!r}")
    if opts["reduce"] not in (True, False):
        raise ConfigError(
            "arena attack", "reduce", f"must be true or false, got {opts['reduce']!r}"
        )
    return opts


def run_attack(args: list[str]) -> int:
    """The ``arena attack`` command: print the worst case and write its files; return 0."""
    from arena.attack import exact_worst_case
    from arena.results import refuse_symlinks

    opts = parse_attack_args(args)
    name = str(opts["player"])
    out = Path(
        opts.get("out")
        or Path("outputs") / "attacks" / f"{name}-N{opts['n_actions']}-T{opts['horizon']}"
    )
    files = ("worst.npy", "worst.json", "worst_by_round.csv")
    refuse_symlinks(out, *files)
    kwargs = {k: opts[k] for k in ("time_limit", "max_states") if k in opts}
    result = exact_worst_case(
        name,
        opts["n_actions"],
        opts["horizon"],
        opts["losses"],
        params=opts["params"],
        reduce=opts["reduce"],
        **kwargs,
    )
    print(result.summary())
    write_exact(result, out, name, opts["params"], reduce=opts["reduce"])
    print(f"sequence: {out / 'worst.npy'} (adversary=replay adversary.path=...)")
    print(f"provenance: {out / 'worst.json'}")
    return 0


def write_exact(
    result: Any, out: Path, name: str, params: dict[str, Any], *, reduce: bool = False
) -> None:
    """Write an exact worst case (:class:`arena.attack.WorstCase`) into ``out``: ``worst.npy``,
    ``worst_by_round.csv`` and ``worst.json`` (provenance and certificate), atomically, under the
    folder's lock."""
    from arena.attack.certificate import certify
    from arena.results import (
        folder_lock,
        package_versions,
        refuse_symlinks,
        write_json_atomic,
        write_npy_atomic,
        write_text_atomic,
    )

    files = ("worst.npy", "worst.json", "worst_by_round.csv")
    refuse_symlinks(out, *files)
    with folder_lock(out, "arena attack") as held:
        held.refuse_links(*files)
        write_npy_atomic(result.losses.astype(np.float64), out / "worst.npy")
        # the sequence replayed by the lab: what the replay adversary declares as a lower bound
        certificate = (
            certify(name, params, out / "worst.npy", result.horizon) if result.complete else None
        )
        write_text_atomic(result.table.to_csv(index=False), out / "worst_by_round.csv")
        provenance = {
            "method": "exact dynamic programming (arena.attack.exact_worst_case)",
            "player": name,
            "player_params": params,
            "n_actions": result.n_actions,
            "horizon": result.horizon,
            "loss_values": list(result.loss_values),
            "value": result.value,
            "metric": "regret",
            "bound": result.bound,
            "ratio": result.ratio,
            "complete": result.complete,
            "rounds": result.rounds,
            "stopped": result.stopped,
            "seconds": result.seconds,
            "states": result.states,
            "reduce": reduce,
            "arena_version": package_versions()["regret-arena"],
            "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "replay": {"adversary": "replay", "path": "worst.npy"},
            "certificate": certificate,
        }
        write_json_atomic(provenance, out / "worst.json")


SPEC_KEYS = (
    "player",
    "params",
    "n_actions",
    "horizons",
    "method",
    "reduce",
    "time_limit",
    "max_states",
    "family",
    "budget",
    "popsize",
    "seed",
)
"""The keys of one entry of a gallery report's ``attacks`` (``configs/reproduce.yaml``)."""


def check_attack_spec(where: str, entry: Any) -> dict[str, Any]:
    """Return a gallery report's attack entry with its defaults, or raise a one-line error.

    An entry names a player (``player``, ``params``), ``n_actions`` (default 2), the
    ``horizons`` to attack and the ``method``: ``exact`` (the default; ``reduce``,
    ``time_limit``, ``max_states``) or ``search`` (``family``, ``budget``, ``popsize``,
    ``seed``; :func:`arena.attack.search`).

    Examples
    --------
    >>> check_attack_spec("x", {"player": "ftl", "horizons": [4]})["method"]
    'exact'
    """
    from arena.errors import ArenaError

    if not isinstance(entry, dict) or "player" not in entry or "horizons" not in entry:
        raise ArenaError(f"{where}: an attack must be a mapping with a player and horizons")
    unknown = sorted(set(entry) - set(SPEC_KEYS))
    if unknown:
        raise ArenaError(
            f"{where}: unknown attack key {unknown[0]!r} (keys: {', '.join(SPEC_KEYS)})"
        )
    spec = {"params": {}, "n_actions": 2, "method": "exact", **entry}
    horizons = spec["horizons"]
    if (
        not isinstance(horizons, list)
        or not horizons
        or not all(isinstance(t, int) and not isinstance(t, bool) and t >= 1 for t in horizons)
    ):
        raise ArenaError(f"{where}: horizons must be a non-empty list of positive integers")
    if spec["method"] not in ("exact", "search"):
        raise ArenaError(f"{where}: method must be exact or search, got {spec['method']!r}")
    return spec


def attack_folder_name(spec: dict[str, Any], horizon: int) -> str:
    """``<player>-N<n>-T<T>``, as ``arena attack`` names it, with ``-search`` for a search."""
    tail = "-search" if spec["method"] == "search" else ""
    return f"{spec['player']}-N{spec['n_actions']}-T{horizon}{tail}"


def run_attack_specs(specs: list[dict[str, Any]], folder: Path, echo=print) -> list[Path]:
    """Run the attacks of a gallery report into ``folder`` (one subfolder per player and T),
    skipping those already written (their ``worst.json`` exists); return the folders."""
    from arena.attack import exact_worst_case, search, write_replay

    done = []
    for spec in specs:
        for horizon in spec["horizons"]:
            out = folder / attack_folder_name(spec, horizon)
            done.append(out)
            if (out / "worst.json").is_file():
                continue
            params = dict(spec["params"])
            if spec["method"] == "exact":
                limits = {k: spec[k] for k in ("time_limit", "max_states") if k in spec}
                result = exact_worst_case(
                    spec["player"],
                    spec["n_actions"],
                    horizon,
                    params=params,
                    reduce=bool(spec.get("reduce", False)),
                    **limits,
                )
                write_exact(result, out, spec["player"], params, reduce=bool(spec.get("reduce")))
                echo(result.summary())
            else:
                kw = {k: spec[k] for k in ("family", "budget", "popsize", "seed") if k in spec}
                found = search(
                    spec["player"],
                    n_actions=spec["n_actions"],
                    horizon=horizon,
                    player_params=params,
                    progress=False,
                    **kw,
                )
                write_replay(found, out)
                echo(f"{out.name}: searched worst regret {found.value:.6f}")
    return done
