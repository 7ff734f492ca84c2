"""The ``arena`` command line: ``arena run`` (Hydra), ``list``, ``demo``, ``check``, ``tournament``,
``report``, ``reproduce`` and ``attack``.

Examples
--------
``arena run player=hedge adversary=fair_coin n_actions=10 horizon=10000 replicates=64 seed=1``
``arena run player.eta=0.1 metrics.shifting_regret.k=[0,1,3] ~metrics.sa_regret``
``arena run hydra.run.dir=out/hedge-vs-greedy adversary=greedy trace=true``
``arena list``
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from arena.errors import ArenaError, ConfigError

USAGE = """usage: arena <command> [args]

commands:
  run [KEY=VALUE ...]   play one game (Hydra overrides; `arena run --help` lists the config)
  list [KIND]           registered players, adversaries, metrics and weak learners with their
                        parameters
  demo                  the default tournament (configs/tournament/demo.yaml) and its report,
                        under outputs/
  check MODULE:CLASS    run the conformance suite on a player, adversary or weak learner
  tournament [KEY=VALUE ...]
                        run configs/tournament/NAME.yaml (`tournament=NAME`), resumably
  report DIR --name NAME [--partial] [--attacks DIR]
                        write reports/NAME/ (HTML, Markdown, figures, tables) from results in DIR
                        (--partial: of a tournament still running, saying so; --attacks: the
                        worst cases arena attack found, default DIR/attacks)
  reproduce [--only NAME] [--fresh] [--table]
                        regenerate the gallery's reports (configs/reproduce.yaml) resumably and
                        the gallery table of reports/README.md (configs/gallery.yaml)
  attack player=NAME horizon=T [n_actions=N] [losses=[0,0.5,1]] [player.KEY=VALUE ...]
                        a player's exact worst-case regret on a small experts game and a loss
                        sequence attaining it, written under outputs/attacks/ (docs/attack.md)
"""


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``arena`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    command, rest = argv[0], argv[1:]
    commands = {
        "run": _run,
        "list": _list,
        "demo": _demo,
        "check": _check,
        "tournament": _tournament,
        "report": _report,
        "reproduce": _reproduce,
        "attack": _attack,
    }
    if command not in commands:
        import difflib

        close = difflib.get_close_matches(command, list(commands), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        print(
            f"arena: error: unknown command {command!r} ({hint}commands: {', '.join(commands)}; "
            "`arena --help` describes them)",
            file=sys.stderr,
        )
        return 2
    return _guarded(commands[command], rest, what=f"arena {command}")


INTERRUPTED = 130
"""Exit code of a command stopped by Ctrl-C (SIGINT): 128 + 2, as a shell reports it."""


def _guarded(command, *args, what: str = "arena") -> int:
    """Run ``command(*args)`` and turn every error into one line on stderr and an exit code.

    ``ArenaError`` (bad input, found by the arena) and ``OSError`` (a disk full, a folder not
    writable) exit with 2; anything else is a bug of the arena or of a plugin and exits with 1,
    its traceback shown only with ``ARENA_DEBUG=1``. Ctrl-C (``KeyboardInterrupt``) exits with
    130 and one line, ``arena: interrupted: …``, saying what was kept: the message a command
    gave its ``KeyboardInterrupt``, else that ``what`` stopped. Warnings (a numpy
    ``RuntimeWarning`` of a diverging game) are shown after a command that succeeded and dropped
    after one that failed, whose one line says what went wrong. Hydra's tasks are guarded too,
    since Hydra would otherwise print a traceback of its own.
    """
    import warnings

    from arena.interrupts import sigint_noted

    with warnings.catch_warnings(record=True) as caught, sigint_noted():
        code = _exit_code(command, args, what)
    if code == 0:
        for w in caught:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)
    return code


def _exit_code(command, args: tuple, what: str) -> int:
    """Run ``command(*args)``; return its exit code, printing the one line of an error."""
    try:
        return command(*args)
    except KeyboardInterrupt as exc:
        return _interrupted(exc, what)
    except Exception as exc:
        # A library may wrap a Ctrl-C that came while it ran (Hydra composing a config wraps
        # what its loaders raise): it is still an interruption, never bad input or a bug
        cause = _interruption_in(exc)
        if cause is not None:
            return _interrupted(cause, what)
        return _error_exit_code(exc)


def _interrupted(exc: KeyboardInterrupt, what: str) -> int:
    """Print the one line of a Ctrl-C (what the command kept, if it said); return 130."""
    detail = str(exc.args[0]) if exc.args else f"{what} stopped before it finished"
    print(f"arena: interrupted: {detail}", file=sys.stderr)
    return INTERRUPTED


def _interruption_in(exc: BaseException) -> KeyboardInterrupt | None:
    """Return the ``KeyboardInterrupt`` that ``exc`` was raised from or while handling, if any.

    Examples
    --------
    >>> try:
    ...     try:
    ...         raise KeyboardInterrupt
    ...     except KeyboardInterrupt:
    ...         raise ValueError("composing failed")
    ... except ValueError as exc:
    ...     type(_interruption_in(exc)).__name__
    'KeyboardInterrupt'
    >>> _interruption_in(ValueError("no Ctrl-C here")) is None
    True
    """
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt):
            return link
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return None


def _error_exit_code(exc: Exception) -> int:
    """Print the one line of the error that stopped a command; return its exit code."""
    import os

    if isinstance(exc, ArenaError):
        print(f"arena: error: {exc}", file=sys.stderr)
        return 2
    if isinstance(exc, BrokenPipeError):  # `arena list | head`
        sys.stderr.close()
        return 0
    if isinstance(exc, OSError):
        where = f" {exc.filename}" if exc.filename else ""
        print(f"arena: error: cannot access{where}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if isinstance(exc, MemoryError):
        # an allocation that no component declared (a plugin's state): the machine's limit
        print(
            "arena: error: out of memory: the game needs more memory than this machine has "
            "(fewer replicates, experts or rounds, or smaller parameters, need less)",
            file=sys.stderr,
        )
        return 2
    if os.environ.get("ARENA_DEBUG"):
        raise exc
    first = next(iter(str(exc).splitlines()), "")
    print(
        f"arena: internal error: {type(exc).__name__}: {first} "
        "(a bug; ARENA_DEBUG=1 shows the traceback)",
        file=sys.stderr,
    )
    return 1


# ----------------------------------------------------------------------------------------------
# arena run


def _precheck_names(overrides: list[str]) -> None:
    """Refuse unknown player/adversary names with close matches before Hydra composes anything."""
    from arena import registry

    for item in overrides:
        key, sep, value = item.partition("=")
        key = key.lstrip("+~")
        if sep and key in ("player", "adversary", "weak_learner") and "," not in value and value:
            registry.load(key, value)  # unknown (with close matches), conflicting or broken


def _run(overrides: list[str]) -> int:
    import hydra

    from arena.apps.hydra_support import (
        check_command_line,
        config_dir,
        register_generated_nodes,
        selected_options,
    )

    _precheck_names(overrides)
    register_generated_nodes(selected_options(overrides))
    jobs = check_command_line("run", "run", overrides)
    # Hydra makes the run folder (and its dated parents) before the job starts, and writes a
    # sweep's multirun.yaml before its first job: every job's game is checked first, so that a
    # refused run or sweep creates nothing
    for cfg in jobs:
        _check_job(cfg)

    @hydra.main(version_base=None, config_path=str(config_dir()), config_name="run")
    def task(cfg) -> None:
        code = _guarded(_run_job, cfg, what="arena run")
        if code:
            sys.exit(code)

    return _hydra_main(task, "arena run", overrides, jobs)


def _check_job(cfg) -> None:
    """Check one job of ``arena run`` (or of a ``--multirun`` sweep) as its run would, playing no
    round.

    ``cfg`` is the job's configuration composed with Hydra's
    (:func:`arena.apps.hydra_support.check_command_line`). Raises the
    :class:`~arena.errors.ArenaError` the job's run would stop with before its first round: a
    bad option value, a weak learner given to a player that takes none, an invalid game or
    component parameter (:func:`arena.game.prepare_game`).
    """
    from omegaconf import OmegaConf

    from arena.game import prepare_game

    choices = cfg.hydra.runtime.choices
    job = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"])
    container = OmegaConf.to_container(job, resolve=True)
    _flag("run", "trace", container["trace"])
    _flag("run", "progress", container["progress"], auto=True)
    _run_n_jobs(container)
    player_params = {k: v for k, v in container["player"].items() if k != "_target_"}
    adversary_params = {k: v for k, v in container["adversary"].items() if k != "_target_"}
    weak = container.get("weak_learner")
    if weak is not None:
        if "weak_learner" not in player_params:
            raise ConfigError(
                f"player {choices['player']}",
                "weak_learner",
                "takes no weak learner (only boosters do)",
            )
        player_params["weak_learner"] = choices["weak_learner"]
        player_params["weak_learner_params"] = {k: v for k, v in weak.items() if k != "_target_"}
    prepare_game(
        choices["player"],
        choices["adversary"],
        horizon=container["horizon"],
        n_actions=container["n_actions"],
        replicates=container["replicates"],
        seed=container["seed"],
        metrics=container.get("metrics") or {},
        per_decade=container["per_decade"],
        checkpoints=container.get("checkpoints"),
        player_params=player_params,
        adversary_params=adversary_params,
    )


def _run_n_jobs(container: dict) -> int | str | None:
    """The ``n_jobs`` option of ``arena run`` (absent in a config written before it: auto),
    checked as :func:`arena.game.run_game` checks it."""
    from arena.parallel import check_n_jobs

    value = container.get("n_jobs", "auto")
    check_n_jobs(value)
    return value


def _run_job(cfg) -> int:
    """One job of ``arena run`` (:func:`_run_task`); Ctrl-C names the folder left unchanged.

    A run writes its results after its last round, so an interrupted job wrote nothing; in a
    sweep, the jobs before it keep theirs. A finished run removes the temporary of a trace whose
    writer was killed (:meth:`arena.results.TraceWriter.remove_orphans`).
    """
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf

    from arena.results import TraceWriter

    hc = HydraConfig.get()
    try:
        code = _run_task(cfg)
    except KeyboardInterrupt:
        out_dir = Path(hc.runtime.output_dir)
        # Ctrl-C may come before the game's writer can abort its trace: this process is done
        TraceWriter.remove_orphans(out_dir / "trace.parquet", ours=True)
        _remove_if_empty(out_dir)
        before = ""
        num = OmegaConf.select(hc, "job.num", default=None)
        if isinstance(num, int) and num > 0:
            before = f"; the {num} job(s) before it in {hc.sweep.dir} keep theirs"
        raise KeyboardInterrupt(
            f"arena run wrote no results into {out_dir} (a run writes them after its last "
            f"round){before}"
        ) from None
    if code == 0:  # also when this run wrote no trace: a killed one's temporary goes now
        TraceWriter.remove_orphans(Path(hc.runtime.output_dir) / "trace.parquet")
    return code


def _run_task(cfg) -> int:
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf

    from arena.game import prepare_game, run_game
    from arena.results import (
        check_run_folder,
        folder_lock,
        format_summary,
        refuse_symlinks,
        summarize,
        write_run,
    )

    hc = HydraConfig.get()
    out_dir = Path(hc.runtime.output_dir)
    choices = hc.runtime.choices
    container = OmegaConf.to_container(cfg, resolve=True)
    player_params = {k: v for k, v in container["player"].items() if k != "_target_"}
    adversary_params = {k: v for k, v in container["adversary"].items() if k != "_target_"}
    weak = container.get("weak_learner")
    if weak is not None:
        # the group weak_learner=NAME (with weak_learner.param=…) sets a booster's weak learner
        if "weak_learner" not in player_params:
            print(
                f"arena: error: weak_learner: player {choices['player']} takes no weak learner "
                "(only boosters do)",
                file=sys.stderr,
            )
            _remove_if_empty(out_dir)
            return 2
        player_params["weak_learner"] = choices["weak_learner"]
        player_params["weak_learner_params"] = {k: v for k, v in weak.items() if k != "_target_"}
    game_kwargs = dict(
        horizon=cfg.horizon,
        n_actions=cfg.n_actions,
        replicates=cfg.replicates,
        seed=cfg.seed,
        metrics=container.get("metrics") or {},
        per_decade=cfg.per_decade,
        checkpoints=container.get("checkpoints"),
        player_params=player_params,
        adversary_params=adversary_params,
    )
    try:
        # YAML/Hydra hand over `trace=maybe` as a string, which Python would take as true
        trace = _flag("run", "trace", container["trace"])
        progress = _flag("run", "progress", container["progress"], auto=True)
        n_jobs = _run_n_jobs(container)
        game = prepare_game(choices["player"], choices["adversary"], **game_kwargs)
        # refused before the lock too, so that a refused run touches nothing in the folder; no
        # file of the run is written through a link out of the folder
        written = ("trace.parquet", *(f".hydra/{name}" for name in HYDRA_RECORD))
        check_run_folder(out_dir, game.config["run_id"])
        refuse_symlinks(out_dir, *written)
        # one writer per folder: a second run into it is refused, naming the first; only the
        # holder writes, replaces or removes anything in it
        with folder_lock(out_dir, "arena run") as held:
            check_run_folder(out_dir, game.config["run_id"])  # before any round is played
            held.refuse_links(*written)
            run = run_game(
                choices["player"],
                choices["adversary"],
                trace_path=out_dir / "trace.parquet" if trace else None,
                progress=bool(progress),
                n_jobs=n_jobs,
                **game_kwargs,
            )
            path = write_run(
                run,
                out_dir,
                extra={
                    "command": "arena run " + " ".join(hc.overrides.task),
                    "hydra_config": container,
                },
            )
            _write_hydra_record(held, cfg, hc)
    except ArenaError as exc:
        print(f"arena: error: {exc}", file=sys.stderr)
        _remove_if_empty(out_dir)
        return 2
    print(format_summary(summarize(run.rows)))
    other = [n for n, why in run.skipped_metrics.items() if why.startswith("defined for the")]
    for name, why in run.skipped_metrics.items():
        if name not in other:
            print(f"(skipped {name}: {why})")
    if other:
        protocol = run.config.get("protocol", "experts")
        print(
            f"(skipped {len(other)} metrics of other protocols than {protocol}: {', '.join(other)})"
        )
    print(f"\nresults: {path}")
    print(f"manifest: {out_dir / 'manifest.json'}")
    if trace:
        print(f"trace: {out_dir / 'trace.parquet'}")
    return 0


HYDRA_RECORD = ("config.yaml", "hydra.yaml", "overrides.yaml")
"""The files of Hydra's record of a run, under ``.hydra/`` in its folder."""


def _write_hydra_record(held, cfg, hc) -> None:
    """Write Hydra's record of the run (``.hydra/``) once its results are written.

    Hydra would write it when the job starts (``hydra.output_subdir``), i.e. also for a run that
    is then refused, overwriting the record of the results already in the folder; ``run.yaml``
    turns that off and the record is written here, after the results, atomically, by the holder
    of the folder's lock (``held``, a :class:`arena.results.HeldFolder`), never through a link.
    """
    from omegaconf import OmegaConf

    from arena.results import write_text_atomic

    texts = (
        OmegaConf.to_yaml(cfg),
        OmegaConf.to_yaml({"hydra": hc}),
        OmegaConf.to_yaml(list(hc.overrides.task)),
    )
    for name, text in zip(HYDRA_RECORD, texts, strict=True):
        write_text_atomic(text, held.target(f".hydra/{name}"))


def _flag(command: str, name: str, value: object, *, auto: bool = False) -> bool:
    """Return a boolean option's value, ``auto`` meaning "stderr is a terminal" where allowed.

    Parameters
    ----------
    command : str
        The command whose option it is (``run``, ``tournament``).
    name : str
        The option, named in the error.
    value : object
        What the configuration holds.
    auto : bool
        Whether ``"auto"`` is allowed.

    Raises
    ------
    ConfigError
        Unless ``value`` is a boolean (or ``"auto"`` where allowed).
    """
    if isinstance(value, bool):
        return value
    if auto and value == "auto":
        return sys.stderr.isatty()
    allowed = "true, false or auto" if auto else "true or false"
    raise ConfigError(command, name, f"must be {allowed}, got {value!r}")


def _remove_if_empty(out_dir: Path) -> None:
    """Remove the folder of a refused run when it holds nothing but Hydra's ``.hydra`` record.

    Hydra makes the run's folder before the run starts; a refused run removes it again, so that
    the corrected command may use it. Only under the folder's lock: a folder another writer holds
    (the run that refused this one, say) is left alone, lock file included, and so is a link.
    """
    from arena.results import folder_lock

    if out_dir.is_symlink() or not out_dir.is_dir():
        return
    try:
        with folder_lock(
            out_dir, "arena run (removing the folder of a refused run)", create=False
        ) as held:
            record = out_dir / ".hydra"
            # Hydra's record, a real folder; a link there is the user's, and stays
            if set(held.entries()) <= {".hydra"} and not record.is_symlink():
                held.clear("arena run (removing the folder of a refused run)")
                held.remove_if_empty = True
    except ArenaError:
        return  # in use by another writer, or not a folder it may change: not ours to remove


# ----------------------------------------------------------------------------------------------
# arena list


def _list(args: list[str]) -> int:

    from arena import registry

    parser = argparse.ArgumentParser(prog="arena list")
    kinds = {
        "players": "player",
        "adversaries": "adversary",
        "metrics": "metric",
        "weak_learners": "weak_learner",
    }
    parser.add_argument("kind", nargs="?", choices=list(kinds))
    ns = parser.parse_args(args)
    for title, kind in kinds.items():
        if ns.kind and ns.kind != title:
            continue
        print(title)
        # players and adversaries by the protocols they play, so a game's partners read together;
        # weak learners (the boosters' `weak_learner=`) by the tasks they learn
        groups: dict[str, list[str]] = {}
        for name in registry.available(kind):
            try:
                if kind == "metric":
                    protocols = []
                elif kind == "weak_learner":
                    protocols = sorted(registry.load(kind, name).tasks)
                else:
                    protocols = _protocols_of(registry.load(kind, name))
            except ArenaError:
                protocols = ["broken"]
            groups.setdefault(", ".join(protocols), []).append(name)
        for group in sorted(groups, key=lambda g: (g == "broken", g)):
            if group:
                print(f" [{group}]")
            for name in groups[group]:
                _list_entry(kind, name)
    return 0


def _list_entry(kind: str, name: str) -> None:
    """Print one registered component: its parameters, summary, distribution and constraints."""
    import inspect

    from arena import registry
    from arena.params import describe_constraints

    try:
        reg = registry.entry(kind, name)
        cls = registry.load(kind, name)
    except ArenaError as exc:  # a broken or conflicting plugin: report it, go on
        print(f"  {name:<18} BROKEN: {exc}")
        return
    params = ", ".join(
        f"{p}" if d is inspect.Parameter.empty else f"{p}={d!r}"
        for p, d in cls.param_defaults().items()
    )
    doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
    print(f"  {name:<18} ({params})")
    print(f"  {'':<18} {doc}  [{reg.distribution}: {reg.entry_point.value}]")
    for pname, allowed in describe_constraints(cls).items():
        print(f"  {'':<18}   {pname}: {allowed}")


# ----------------------------------------------------------------------------------------------
# arena check


def _check(args: list[str]) -> int:
    """``arena check MODULE:CLASS``: the conformance suite on a player, adversary or weak learner.

    Each check's verdict is printed (and flushed) as soon as it is known; on a terminal the check
    running now is shown on stderr too, so a slow plugin shows where it is. Ctrl-C stops the
    suite with exit code 130, naming the check it stopped in.
    """
    import importlib

    from arena.testing import expected_failures, yield_checks

    parser = argparse.ArgumentParser(prog="arena check")
    parser.add_argument("target", help="MODULE:CLASS of a player, adversary or weak learner")
    ns = parser.parse_args(args)
    module_name, _, class_name = ns.target.partition(":")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # like `python -m`: modules of the current folder
    if not class_name:
        raise ArenaError(f"expected MODULE:CLASS, got {ns.target!r}")
    if not module_name:
        raise ArenaError(f"expected MODULE:CLASS, got {ns.target!r}")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except Exception as exc:  # a plugin module may raise anything while it is imported
        first = next(iter(str(exc).splitlines()), "")
        raise ArenaError(f"cannot import {ns.target}: {type(exc).__name__}: {first}") from exc
    from arena.boosting.components import WeakLearner
    from arena.components import Adversary, Player

    if not (isinstance(cls, type) and issubclass(cls, Player | Adversary | WeakLearner)):
        raise ArenaError(
            f"{ns.target} is not a player or adversary class, nor a weak learner (got {cls!r})"
        )
    # the shared bases (arena/components.py) and each protocol's (arena/<protocol>/components.py)
    bases = cls.__module__.endswith(".components")
    if cls.__module__.startswith("arena.") and bases:
        raise ArenaError(
            f"{ns.target} is a protocol's base class, not a component: check a subclass of it"
        )
    try:
        components = [cls(**params) for params in cls._unit_test_params()]
    except Exception as exc:  # a broken _unit_test_params or constructor: one line, no traceback
        raise ArenaError(
            f"{ns.target}: cannot build it from _unit_test_params: {type(exc).__name__}: {exc}"
        ) from exc
    tally = {"ok": 0, "skipped": 0, "xfail": 0, "FAIL": 0, "ERROR": 0, "UNEXPECTED PASS": 0}
    status_line = _StatusLine(sys.stderr)
    current = ""
    try:
        for component in components:
            label = f"{component!r:<40}"

            def starting(name: str, label: str = label) -> None:
                nonlocal current
                current = name
                status_line.show(f"{label} {name} ...")

            for name, status, detail in _run_checks(
                component, yield_checks, expected_failures, starting=starting
            ):
                status_line.clear()
                tally[status] += 1
                print(f"{label} {name:<36} {status}{': ' + detail if detail else ''}", flush=True)
    except KeyboardInterrupt:
        status_line.clear()
        done = sum(tally.values())
        raise KeyboardInterrupt(
            f"arena check {ns.target} stopped in {current or 'its first check'} after {done} "
            "check(s), whose verdicts are above"
        ) from None
    failures = tally["FAIL"] + tally["ERROR"] + tally["UNEXPECTED PASS"]
    print("\n" + ", ".join(f"{n} {status}" for status, n in tally.items() if n))
    print(f"{'FAILED' if failures else 'passed'}: {failures} unexpected result(s)")
    return 1 if failures else 0


class _StatusLine:
    """One line on a terminal that says what runs now, rewritten in place and cleared after.

    Nothing is written where ``stream`` is not a terminal (a log, a pipe): there the verdict
    lines, flushed one by one, are the progress.
    """

    def __init__(self, stream) -> None:
        self.stream = stream
        self.active = bool(getattr(stream, "isatty", lambda: False)())
        self.width = shutil.get_terminal_size().columns - 1 if self.active else 0
        self.shown = False

    def show(self, text: str) -> None:
        if self.active:
            self.stream.write("\r\x1b[K" + text[: self.width])
            self.stream.flush()
            self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def _run_checks(component, yield_checks, expected_failures, starting=None):
    """Yield ``(check, status, detail)`` for every check, each run in isolation.

    A check that raises anything but ``AssertionError`` (a ``GameError`` from a NaN loss, a plugin
    that crashes) is an ``ERROR`` of that check alone: the command goes on and ends with its
    summary, so a component with several faults gets a verdict on every check. A check that does
    not apply raises ``SkipCheck`` and is ``skipped`` with its reason, never ``ok``.
    ``starting(name)``, if given, is called as each check starts (the progress of a slow one).
    """
    from arena.testing import SkipCheck

    expected = expected_failures(component)
    try:
        checks = list(yield_checks(component))
    except Exception as exc:
        yield "yield_checks", "ERROR", f"{type(exc).__name__}: {exc}"
        return
    for check in checks:
        name = check.__name__
        if starting is not None:
            starting(name)
        try:
            check(component)
        except SkipCheck as exc:  # before Exception: it is one (unittest.SkipTest)
            yield name, "skipped", str(exc)
            continue
        except AssertionError as exc:
            if name in expected:
                yield name, "xfail", expected[name]
            else:
                yield name, "FAIL", str(exc)
            continue
        except Exception as exc:
            if name in expected:
                yield name, "xfail", expected[name]
            else:
                yield name, "ERROR", f"{type(exc).__name__}: {exc}"
            continue
        yield name, ("UNEXPECTED PASS" if name in expected else "ok"), ""


# ----------------------------------------------------------------------------------------------
# arena tournament


def _tournament(args: list[str]) -> int:
    import hydra

    from arena.apps.hydra_support import check_command_line, config_dir

    if any(a in ("-h", "--help") for a in args):
        print(_tournament_help())
        return 0
    overrides, search = _tournament_sources(args)
    for item in overrides:
        if item.startswith("tournament=") and "," not in item:
            _check_tournament_name(item.partition("=")[2], search)
    # a refused tournament is refused here, after one composition, before anything is written;
    # Hydra then runs that composition (_hydra_main)
    jobs = check_command_line("tournament", "tournament_run", overrides, output_key="out")
    for cfg in jobs:
        _check_tournament_job(cfg)

    @hydra.main(version_base=None, config_path=str(config_dir()), config_name="tournament_run")
    def task(cfg) -> None:
        code = _guarded(_tournament_task, cfg)
        if code:
            sys.exit(code)

    return _hydra_main(task, "arena tournament", overrides, jobs)


FILE_OPTION = "config_file"
"""The ``tournament`` option under which ``arena tournament --config FILE`` stores the file."""


def _tournament_sources(args: list[str]) -> tuple[list[str], list[Path]]:
    """Turn ``--config FILE`` and ``--config-dir DIR`` into Hydra overrides.

    ``--config FILE`` reads a tournament file kept anywhere (docs/tournaments.md), checks its
    keys, and selects it as the tournament (``tournament=config_file``); command-line overrides
    then apply on top of it, and its ``metrics`` is the whole metric set. ``--config-dir DIR``
    adds ``DIR`` to the search path, so that ``tournament=NAME`` finds ``DIR/tournament/NAME.yaml``.
    Returns the overrides and the search folders.
    """
    overrides: list[str] = []
    search: list[Path] = []
    files: list[Path] = []
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        flag, eq, value = arg.partition("=")
        if flag in ("--config", "--config-dir", "-cd"):
            if not eq:
                if not rest or rest[0].startswith("-"):
                    raise ConfigError("arena tournament", flag, "needs a path", noun="option")
                value = rest.pop(0)
            (files if flag == "--config" else search).append(Path(value).expanduser())
        else:
            overrides.append(arg)
    if len(files) > 1:
        raise ConfigError("arena tournament", "--config", "takes one file", noun="option")
    for folder in search:
        if not folder.is_dir():
            raise ConfigError(
                "arena tournament", "--config-dir", f"{folder} is not a folder", noun="option"
            )
    if search:
        paths = ",".join(f"file://{folder.resolve()}" for folder in search)
        overrides.insert(0, f"hydra.searchpath=[{paths}]")
    if files:
        if any(o.startswith("tournament=") for o in overrides):
            raise ConfigError(
                "arena tournament",
                "--config",
                "names the tournament already: drop tournament=NAME",
                noun="option",
            )
        _store_tournament_file(files[0])
        overrides.insert(0, f"tournament={FILE_OPTION}")
    return overrides, search


def _store_tournament_file(path: Path) -> None:
    """Check a tournament file's keys and store it as the ``tournament`` option ``config_file``."""
    import difflib

    from hydra.core.config_store import ConfigStore
    from omegaconf import OmegaConf

    from arena.apps.tournament import TournamentConfig
    from arena.apps.yaml_guard import check_yaml_file

    who = f"tournament file {path}"
    if not path.is_file():
        raise ConfigError("arena tournament", "--config", f"no such file: {path}", noun="option")
    check_yaml_file(path, who)  # an alias bomb is refused before OmegaConf expands it
    try:
        node = OmegaConf.to_container(OmegaConf.load(path))
    except Exception as exc:  # YAML syntax, encoding: one line naming the file
        first = next(iter(str(exc).splitlines()), "")
        raise ArenaError(f"{who}: not a readable YAML file ({first})") from None
    if not isinstance(node, dict):
        raise ArenaError(f"{who}: must be a mapping of tournament keys (see docs/tournaments.md)")
    known = list(TournamentConfig.__dataclass_fields__)
    unknown = [k for k in node if k not in known]
    if any(not _looks_like_key(k) for k in unknown):
        # not a tournament file at all (`--config /etc/passwd`): name it, never echo its content
        raise ArenaError(
            f"{who}: not a tournament file: its top level holds no tournament keys "
            f"({', '.join(known)}; see docs/tournaments.md)"
        )
    if unknown:
        hints = []
        for key in unknown:
            close = difflib.get_close_matches(str(key), known, n=1)
            hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise ArenaError(f"{who}: unknown key {', '.join(hints)}; the keys are {', '.join(known)}")
    for key in ("players", "adversaries"):
        if key not in node:
            raise ArenaError(f"{who}: {key!r} is required (a list of registry names)")
    node.setdefault("name", path.stem)
    ConfigStore.instance().store(group="tournament", name=FILE_OPTION, node=node)


def _looks_like_key(key: object) -> bool:
    """Whether ``key`` could be a misspelt tournament key (a short identifier), rather than a line
    of some other file that YAML read as a key; only the former is quoted in an error."""
    import re

    return isinstance(key, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]{0,39}", key) is not None


def _check_tournament_name(name: str, search: list[Path]) -> None:
    """Refuse ``tournament=NAME`` unless a tournament file of that name exists, with close
    matches among the built-in ones and those of the search folders."""
    import difflib

    from arena.apps.hydra_support import config_dir
    from arena.apps.yaml_guard import check_yaml_file

    if name == FILE_OPTION:
        return
    folders = [config_dir() / "tournament", *(folder / "tournament" for folder in search)]
    found = [folder / f"{name}.yaml" for folder in folders if (folder / f"{name}.yaml").is_file()]
    for path in found:  # a file of --config-dir is the user's: sized before Hydra expands it
        check_yaml_file(path, f"tournament file {path}")
    if found:
        return
    options = sorted({p.stem for folder in folders for p in folder.glob("*.yaml")})
    close = difflib.get_close_matches(name, options, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ArenaError(
        f"unknown tournament {name!r}{hint} (available: {options}; a file of your own: "
        "arena tournament --config FILE)"
    )


def _tournament_help() -> str:
    """``arena tournament --help``: the file format, the tournaments and every registered name."""
    from arena.apps.hydra_support import config_dir

    tournaments = sorted(p.stem for p in (config_dir() / "tournament").glob("*.yaml"))
    lines = [
        "usage: arena tournament [tournament=NAME | --config FILE] [--config-dir DIR] "
        "[KEY=VALUE ...]",
        "",
        "Runs the cross product players × adversaries × n_actions of a tournament file into",
        "`out` (default outputs/tournaments/NAME), resumably. The file format (every key, its",
        "type and default) is in docs/tournaments.md.",
        "",
        f"built-in tournaments: {', '.join(tournaments)}",
        "options: --config FILE (a tournament file anywhere), --config-dir DIR",
        "  (tournament=NAME finds DIR/tournament/NAME.yaml)",
        "keys: tournament.<key>=..., executor=serial|local|dask, n_jobs=N, scheduler=ADDRESS,",
        "  out=DIR, progress=true|false|auto",
        "",
    ]
    for kind, title in (("player", "players"), ("adversary", "adversaries")):
        lines.append(f"{title} (registered names, plugins included):")
        lines += _names_by_protocol(kind)
        lines.append("")
    return "\n".join(lines).rstrip()


def _names_by_protocol(kind: str) -> list[str]:
    """``  protocol: name, name (distribution), ...`` lines for every registered ``kind``."""
    from arena import registry

    groups: dict[str, list[str]] = {}
    for name in registry.available(kind):
        try:
            cls = registry.load(kind, name)
            dist = registry.entry(kind, name).distribution
        except ArenaError:
            groups.setdefault("broken", []).append(name)
            continue
        label = name if dist == "regret-arena" else f"{name} ({dist})"
        for protocol in _protocols_of(cls):
            groups.setdefault(protocol, []).append(label)
    out = []
    for protocol in sorted(groups):
        # wrap between names only: a label such as "leader (arena-plugin-rotating)" stays whole
        line = f"  {protocol}:"
        for i, label in enumerate(groups[protocol]):
            item = label + ("," if i < len(groups[protocol]) - 1 else "")
            if len(line) + 1 + len(item) > 98 and not line.endswith(":"):
                out.append(line)
                line = "   "
            line += " " + item
        out.append(line)
    return out


def _protocols_of(cls) -> list[str]:
    """The protocols a registered class plays: an adversary's one, a player's every one."""
    tags = getattr(cls, "tags", None)
    if hasattr(tags, "protocols"):
        return sorted(tags.protocols) or ["experts"]
    return [getattr(tags, "protocol", "experts")]


def _hydra_main(task, prog: str, overrides: list[str], checked: list | None = None) -> int:
    """Run a ``@hydra.main`` task on ``overrides``; return its exit code (Hydra exits with it).

    ``checked`` are the jobs :func:`~arena.apps.hydra_support.check_command_line` composed from
    the same command line. Hydra would compose it again, once to read ``hydra.mode`` and once more
    to run a single job (0.1–0.3 s each, a third of a small ``arena run``): the mode is read from
    the checked jobs, and a single run is handed the composition it was checked with, which is
    Hydra's own (the same overrides, ``hydra.mode=RUN`` included, and job name). Any other
    composition (a sweep's) is Hydra's.
    """
    from hydra._internal.hydra import Hydra
    from hydra.types import RunMode

    from arena.apps.hydra_support import run_overrides

    saved, get_mode, compose_config = sys.argv, Hydra.get_mode, Hydra.compose_config
    sys.argv = [prog, *overrides]
    ready: dict = {}
    if checked:
        single = len(checked) == 1 and not any(a in ("-m", "--multirun") for a in overrides)
        composed_with = run_overrides(overrides) if single else overrides
        # Hydra's mode is the command line's (None unless it sets one), not the one the check
        # added
        added = len(composed_with) > len(overrides)
        mode = None if added else checked[0].hydra.get("mode")
        Hydra.get_mode = lambda self, *args, **kwargs: mode
        if single:
            ready[tuple(composed_with)] = checked[0]

        def reuse(self, config_name, overrides, run_mode, with_log_configuration=False, **kw):
            cfg = ready.pop(tuple(overrides), None) if run_mode == RunMode.RUN else None
            if cfg is None:
                return compose_config(
                    self, config_name, overrides, run_mode, with_log_configuration, **kw
                )
            if with_log_configuration:  # what Hydra's compose_config does after composing
                from hydra.core.utils import configure_log

                configure_log(cfg.hydra.hydra_logging, cfg.hydra.verbose)
            return cfg

        Hydra.compose_config = reuse
    try:
        task()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = saved
        Hydra.get_mode, Hydra.compose_config = get_mode, compose_config
    return 0


def _check_tournament_job(cfg) -> None:
    """Check one job of ``arena tournament`` as its run would, playing no cell.

    ``cfg`` is the job's configuration composed with Hydra's
    (:func:`arena.apps.hydra_support.check_command_line`). Raises the
    :class:`~arena.errors.ArenaError` the tournament would stop with before its first cell: a bad
    option, a bad tournament key, a cell that cannot start
    (:meth:`arena.apps.tournament.TournamentConfig.validate`).
    """
    from omegaconf import OmegaConf

    from arena.apps.tournament import Tournament, TournamentConfig

    job = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"])
    container = OmegaConf.to_container(job, resolve=True)
    _flag("tournament", "progress", container["progress"], auto=True)
    config = TournamentConfig.from_mapping(container["tournament"])
    Tournament(
        config,
        container["out"],
        executor=container["executor"],
        n_jobs=container["n_jobs"],
        scheduler=container["scheduler"],
    )
    config.validate()


def _tournament_task(cfg) -> int:
    """Run the composed tournament; exit 0, 1 when a cell failed, 2 on bad input, 130 on Ctrl-C.

    A failed cell does not stop the others: the summary names it with its error, and the exit
    code (1) tells a script that the tournament is not complete (docs/tournaments.md). Ctrl-C
    keeps every finished cell and names how many the folder holds.
    """
    from omegaconf import OmegaConf

    from arena.apps.tournament import Tournament, TournamentConfig, describe

    container = OmegaConf.to_container(cfg, resolve=True)
    tournament = None
    try:
        progress = _flag("tournament", "progress", container["progress"], auto=True)
        config = TournamentConfig.from_mapping(container["tournament"])
        tournament = Tournament(
            config,
            container["out"],
            executor=container["executor"],
            n_jobs=container["n_jobs"],
            scheduler=container["scheduler"],
            progress=bool(progress),
        )
        result = tournament.run()
    except ArenaError as exc:
        print(f"arena: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if tournament is None:
            raise KeyboardInterrupt("arena tournament stopped before it started") from None
        raise KeyboardInterrupt(_kept_cells(tournament)) from None
    print(describe(result, config))
    if result.failed:
        total = len(result.failed) + len(result.finished) + len(result.skipped)
        print(
            f"arena tournament: {len(result.failed)} of {total} cell(s) failed (named above; "
            f"tracebacks in {result.directory / 'failures.parquet'})",
            file=sys.stderr,
        )
        return 1
    return 0


def _kept_cells(tournament) -> str:
    """What an interrupted tournament keeps: its finished cells, and how to resume the rest."""
    cells = {cell.id for cell in tournament.config.cells()}
    kept = len(cells & tournament.finished_cells())
    return (
        f"tournament {tournament.config.name} keeps {kept} of {len(cells)} cells in "
        f"{tournament.directory} (the same command resumes the rest)"
    )


# ----------------------------------------------------------------------------------------------
# arena report


def _attack(args: list[str]) -> int:
    if args and args[0] in ("-h", "--help"):
        from arena.apps import attack

        print(attack.__doc__)
        return 0
    from arena.apps.attack import run_attack

    return run_attack(args)


def _report(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="arena report")
    parser.add_argument("source", help="a tournament directory, a multirun directory or a run")
    parser.add_argument("--name", default=None, help="report name (default: the folder's name)")
    parser.add_argument(
        "--reports",
        default="outputs/reports",
        help="parent folder of the report (default: outputs/reports; reports/ is the gallery's)",
    )
    parser.add_argument(
        "--metric", action="append", default=None, help="leaderboard metric (repeatable)"
    )
    parser.add_argument(
        "--partial",
        action="store_true",
        help="report a tournament that is still running or was interrupted (says so)",
    )
    parser.add_argument(
        "--attacks",
        default=None,
        help="attack outputs to show (an arena attack folder or a folder of them, e.g. "
        "outputs/attacks; default: attacks/ inside the results folder)",
    )
    ns = parser.parse_args(args)
    from arena.reporting import build_report, check_report_name

    source = Path(ns.source)
    if ns.name is None and not source.resolve().name:  # `arena report /`: no name to take
        raise ArenaError(f"{source} has no folder name to name the report after: give --name NAME")
    # The name becomes a folder that the report writes and cleans: check it before anything.
    name = check_report_name(ns.name if ns.name is not None else source.resolve().name)
    if not source.exists():
        raise ArenaError(f"no such results directory: {source}")
    try:
        out = build_report(
            source,
            Path(ns.reports) / name,
            name=name,
            metrics=tuple(ns.metric or ["regret"]),
            warn=lambda line: print(f"arena report: {line}", file=sys.stderr),
            partial=ns.partial,
            attacks=ns.attacks,
        )
    except FileNotFoundError as exc:
        raise ArenaError(f"no results to report: {exc}") from exc
    print(f"report: {out}")
    return 0


# ----------------------------------------------------------------------------------------------
# arena reproduce


def _reproduce(args: list[str]) -> int:
    from arena.apps.reproduce import main as reproduce_main

    return reproduce_main(args)


# ----------------------------------------------------------------------------------------------
# arena demo


def _demo(args: list[str]) -> int:
    from arena.apps.demo import run_demo

    parser = argparse.ArgumentParser(prog="arena demo")
    parser.add_argument("--results", default="outputs/tournaments/demo", help="tournament folder")
    parser.add_argument("--report", default="outputs/reports/demo", help="report folder")
    parser.add_argument("--horizon", type=int, default=None, help="override the config's T")
    parser.add_argument("--replicates", type=int, default=None, help="override the config's R")
    parser.add_argument("--executor", default="local", choices=["serial", "local", "dask"])
    ns = parser.parse_args(args)
    overrides = {
        k: v for k, v in (("horizon", ns.horizon), ("replicates", ns.replicates)) if v is not None
    }
    run_demo(
        Path(ns.results),
        Path(ns.report),
        executor=ns.executor,
        progress=sys.stderr.isatty(),
        **overrides,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
