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
    from arena.attack.certificate import certify
    from arena.results import (
        folder_lock,
        package_versions,
        refuse_symlinks,
        write_json_atomic,
        write_npy_atomic,
        write_text_atomic,
    )

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
    with folder_lock(out, "arena attack") as held:
        held.refuse_links(*files)
        write_npy_atomic(result.losses.astype(np.float64), out / "worst.npy")
        # the sequence replayed by the lab: what the replay adversary declares as a lower bound
        certificate = (
            certify(name, opts["params"], out / "worst.npy", opts["horizon"])
            if result.complete
            else None
        )
        write_text_atomic(result.table.to_csv(index=False), out / "worst_by_round.csv")
        provenance = {
            "method": "exact dynamic programming (arena.attack.exact_worst_case)",
            "player": name,
            "player_params": opts["params"],
            "n_actions": opts["n_actions"],
            "horizon": opts["horizon"],
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
            "reduce": opts["reduce"],
            "arena_version": package_versions()["regret-arena"],
            "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "replay": {"adversary": "replay", "path": "worst.npy"},
            "certificate": certificate,
        }
        write_json_atomic(provenance, out / "worst.json")
    print(f"sequence: {out / 'worst.npy'} (adversary=replay adversary.path=...)")
    print(f"provenance: {out / 'worst.json'}")
    return 0
