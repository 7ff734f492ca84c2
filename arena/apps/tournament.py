"""Tournaments: the cross product of players × adversaries × game sizes, one Parquet part per cell.

A tournament directory holds

* ``manifest.json`` — the resolved configuration (and its digest), versions, git revision;
* ``parts/results-<cell>.parquet`` — the tidy rows of one finished cell (exact results schema);
* ``parts/manifest-<cell>.json`` — that cell's manifest (written after its Parquet: its presence
  marks the cell finished);
* ``failures.parquet`` — the cells that raised, with error and traceback.

Every file is written atomically by the coordinating process, so a kill at any moment loses only
the cells in flight and never leaves a corrupt part; re-running the same command skips finished
cells and retries failed ones, and a different configuration in the same directory is refused.
Executors: ``serial`` (in process), ``local`` (worker processes, all cores by default) and
``dask`` (a scheduler address, or a ``LocalCluster``); rows do not depend on the executor because
seeds come from the cell, never from execution order (architecture: seeding; architecture:
tournaments and reports).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from arena.base import canonical_json
from arena.errors import ArenaError, ConfigError
from arena.interrupts import handle_sigint
from arena.results import (
    folder_lock,
    git_revision,
    is_plain_name,
    manifest,
    orphan_temporaries,
    package_versions,
    read_manifest,
    refuse_symlinks,
    write_json_atomic,
    write_parquet_atomic,
    write_table_atomic,
)

EXECUTORS = ("serial", "local", "dask")

GRID = "players × adversaries × n_actions"
"""What a refusal of the tournament's size names: the cross product of its three lists."""

MAX_CELLS = 20_000
"""Most cells a tournament may have: each is prepared before the first runs and leaves two files,
and the gallery's largest has 156. A larger grid is refused with its count before anything is
expanded, prepared or written; split it into several tournaments."""

FAILURE_COLUMNS = [
    "cell",
    "player",
    "player_params",
    "adversary",
    "adversary_params",
    "n_actions",
    "horizon",
    "error",
    "traceback",
]


@dataclass(frozen=True)
class Cell:
    """One unit of work: a player against an adversary at one game size, all replicates.

    Attributes
    ----------
    player, adversary : str
        Registry names.
    player_params, adversary_params : dict
        Constructor parameters.
    n_actions : int or None
        N (None: the adversary's choice).
    """

    player: str
    player_params: Mapping[str, Any]
    adversary: str
    adversary_params: Mapping[str, Any]
    n_actions: int | None

    @property
    def key(self) -> str:
        """Canonical JSON of the cell (sorted keys)."""
        return canonical_json(
            {
                "player": self.player,
                "player_params": dict(self.player_params),
                "adversary": self.adversary,
                "adversary_params": dict(self.adversary_params),
                "n_actions": self.n_actions,
            }
        )

    @property
    def id(self) -> str:
        """Short digest of :attr:`key`, used in file names."""
        return hashlib.sha256(self.key.encode()).hexdigest()[:12]

    def label(self) -> str:
        """Readable description for progress bars and failure lists."""

        def fmt(name: str, params: Mapping[str, Any]) -> str:
            inner = ", ".join(f"{k}={v}" for k, v in sorted(params.items()))
            return f"{name}({inner})" if inner else name

        n = "" if self.n_actions is None else f" N={self.n_actions}"
        player = fmt(self.player, self.player_params)
        return f"{player} vs {fmt(self.adversary, self.adversary_params)}{n}"


@dataclass
class TournamentConfig:
    """A tournament: what to cross, how long, how many replicates, which metrics.

    ``players`` and ``adversaries`` are lists whose entries are a registry name, or a mapping with
    ``name``, optional ``params`` (fixed overrides) and optional ``grid`` (``{param: [values]}``,
    expanded as a cross product).
    """

    name: str
    players: list[Any]
    adversaries: list[Any]
    n_actions: list[int | None] = field(default_factory=lambda: [None])
    horizon: int = 1000
    replicates: int = 32
    seed: int = 0
    metrics: Mapping[str, Any] | None = None
    per_decade: int = 10
    checkpoints: list[int] | str | None = None

    @classmethod
    def from_mapping(cls, cfg: Mapping[str, Any]) -> TournamentConfig:
        """Build from a plain mapping (e.g. a resolved Hydra node), refusing unknown keys."""
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(cfg) - known
        if unknown:
            raise ConfigError(
                "tournament", sorted(unknown)[0], f"unknown key (known: {sorted(known)})"
            )
        data = dict(cfg)
        n = data.get("n_actions", [None])
        data["n_actions"] = list(n) if isinstance(n, list | tuple) else [n]
        return cls(**data)

    def as_dict(self) -> dict[str, Any]:
        out = {f: getattr(self, f) for f in self.__dataclass_fields__}
        if out["checkpoints"] is None:
            # absent rather than null: tournaments written before the key existed keep their digest
            del out["checkpoints"]
        return out

    def digest(self) -> str:
        return hashlib.sha256(canonical_json(self.as_dict()).encode()).hexdigest()[:16]

    def validate(self) -> None:
        """Raise :class:`~arena.errors.ArenaError` unless every cell of the tournament can start.

        Each cell is prepared as it would be played (:func:`arena.game.prepare_game`: component
        names and parameter constraints, horizon, replicates, seed, N, checkpoint grid, metric
        names and parameters, the adversary's declarations, ``reset``), without playing a round.
        The first cell that cannot start is named, with the parameter and what is allowed; a
        configuration error therefore stops the whole tournament before anything is written,
        instead of becoming one recorded failure per cell. Errors that are not configuration
        errors (:class:`~arena.errors.ArenaError`) are left to the cell's run, which records them.
        """
        from arena.game import prepare_game
        from arena.resources import OPS_PER_SECOND

        for key in ("players", "adversaries", "n_actions"):
            value = getattr(self, key)
            if not isinstance(value, list | tuple) or not value:
                raise ConfigError("tournament", key, f"must be a non-empty list, got {value!r}")
        if self.metrics is not None and not isinstance(self.metrics, Mapping):
            raise ConfigError(
                "tournament", "metrics", f"must be a mapping {{name: params}}, got {self.metrics!r}"
            )
        self._check_size()
        seconds = 0.0
        for cell in self.cells():
            try:
                game = prepare_game(
                    cell.player,
                    cell.adversary,
                    player_params=dict(cell.player_params),
                    adversary_params=dict(cell.adversary_params),
                    n_actions=cell.n_actions,
                    horizon=self.horizon,
                    replicates=self.replicates,
                    seed=self.seed,
                    metrics=self.metrics,
                    per_decade=self.per_decade,
                    checkpoints=self.checkpoints,
                )
            except ArenaError as exc:
                raise ArenaError(f"tournament {self.name}, cell {cell.label()}: {exc}") from exc
            except Exception:  # not a configuration error: the cell's run records it
                continue
            seconds += game.footprint.seconds(self.horizon, OPS_PER_SECOND)
        self._check_time(seconds)

    def _check_size(self) -> None:
        """Refuse a grid of more than :data:`MAX_CELLS` cells, with its count, before any cell
        is built (a grid of 10⁶ cells would otherwise be expanded and prepared for hours)."""
        players = sum(_grid_size("player", entry) for entry in self.players)
        adversaries = sum(_grid_size("adversary", entry) for entry in self.adversaries)
        count = players * adversaries * len(self.n_actions)
        if count > MAX_CELLS:
            raise ConfigError(
                f"tournament {self.name}",
                GRID,
                f"{players} × {adversaries} × {len(self.n_actions)} make {count:,} cells, more "
                f"than {MAX_CELLS:,}: split the grid into several tournaments (they can share "
                "one report folder)",
                noun="grid",
            )

    def _check_time(self, seconds: float) -> None:
        """Refuse a tournament whose cells' estimated time, spread over every core of this
        machine, is beyond the time limit of a game (:func:`arena.resources.max_hours`)."""
        from arena.resources import OPS_PER_SECOND, duration_text, max_hours

        cores = os.cpu_count() or 1
        limit = max_hours()
        if seconds / cores > limit * 3600:
            raise ConfigError(
                f"tournament {self.name}",
                GRID,
                f"{len(self.cells()):,} cells are estimated at {duration_text(seconds)} of "
                "computing "
                f"(at {OPS_PER_SECOND:.0e} operations/s), {duration_text(seconds / cores)} on this "
                f"machine's {cores} cores, over the limit of {limit:g} h: thin the grids, lower "
                "horizon or replicates, or raise the limit (ARENA_MAX_HOURS=HOURS)",
                noun="grid",
            )

    def cells(self) -> list[Cell]:
        """The cross product, without duplicates, in a stable order."""
        players = [p for entry in self.players for p in _expand("player", entry)]
        adversaries = [a for entry in self.adversaries for a in _expand("adversary", entry)]
        out: dict[str, Cell] = {}
        for (pn, pp), (an, ap), n in itertools.product(players, adversaries, self.n_actions):
            cell = Cell(pn, pp, an, ap, n)
            out.setdefault(cell.id, cell)
        return list(out.values())


def check_tournament_name(name: Any) -> str:
    """Return a tournament's ``name`` if it is a plain name, as a report name must be.

    The name becomes a folder (the default ``out``, ``outputs/tournaments/<name>``) and the default
    name of its report, so ``../../escape`` or ``/tmp/x`` would put both elsewhere; it is refused
    like a report name (:func:`arena.reporting.check_report_name`).

    Raises
    ------
    ConfigError
        Naming the key ``name`` and what a plain name is.

    Examples
    --------
    >>> check_tournament_name("demo")
    'demo'
    >>> check_tournament_name("../../escape")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    arena.errors.ConfigError: tournament: parameter 'name': '../../escape' is not a plain name...
    """
    if isinstance(name, str) and is_plain_name(name):
        return name
    raise ConfigError(
        "tournament",
        "name",
        f"{name!r} is not a plain name (one folder name, without '/', '\\', '..', a leading "
        "'.' or a drive): it names the output folder and the report",
    )


def _grid_size(kind: str, entry: Any) -> int:
    """Return how many variants an entry of ``players`` / ``adversaries`` expands to."""
    if isinstance(entry, str):
        return 1
    _check_entry(kind, entry)
    grid = dict(entry.get("grid") or {})
    return math.prod(len(v) if isinstance(v, list | tuple) else 1 for v in grid.values())


def _check_entry(kind: str, entry: Any) -> None:
    """Refuse an entry that is neither a name nor a mapping of name, params and grid."""
    if not isinstance(entry, Mapping) or "name" not in entry:
        raise ConfigError("tournament", f"{kind}s", f"entry {entry!r} needs a registry name")
    unknown = set(entry) - {"name", "params", "grid"}
    if unknown:
        raise ConfigError("tournament", f"{kind}s", f"entry {entry!r}: unknown keys {unknown}")
    for key in ("params", "grid"):
        if not isinstance(entry.get(key) or {}, Mapping):
            raise ConfigError(
                "tournament", f"{kind}s", f"entry {entry!r}: {key} must be a mapping of parameters"
            )


def _expand(kind: str, entry: Any) -> list[tuple[str, dict[str, Any]]]:
    if isinstance(entry, str):
        return [(entry, {})]
    _check_entry(kind, entry)
    base = dict(entry.get("params") or {})
    grid = dict(entry.get("grid") or {})
    if not grid:
        return [(str(entry["name"]), base)]
    names = sorted(grid)
    values = [list(grid[n]) if isinstance(grid[n], list | tuple) else [grid[n]] for n in names]
    for name, vals in zip(names, values, strict=True):
        if not vals:  # the cross product would silently have no cell at all
            raise ConfigError(
                f"tournament {kind} {entry['name']}",
                f"grid.{name}",
                "is an empty list, so the grid has no cells; give at least one value (or leave "
                "the parameter out of the grid)",
            )
    return [
        (str(entry["name"]), {**base, **dict(zip(names, combo, strict=True))})
        for combo in itertools.product(*values)
    ]


# ----------------------------------------------------------------------------------------------
# one cell, run anywhere


def run_cell(
    cell: Cell,
    config: TournamentConfig,
    progress: bool = False,
    n_jobs: int | None = None,
    executor: str = "serial",
) -> dict[str, Any]:
    """Play one cell and return its rows and manifest, or its error (never raises).

    Runs in the coordinating process or in a worker (process pool, Dask); the coordinator writes
    the files, so workers need no shared file system. ``n_jobs`` is the threads the cell's game
    may use (:mod:`arena.parallel`; None: the game's default), which the executors set from the
    cores each worker owns (:meth:`Tournament.cell_threads`); it changes no row. The manifest
    records where the cell ran (:func:`where_it_ran`: the executor, host, process and, under
    Dask, the worker's address).
    """
    from arena.game import run_game

    started = time.perf_counter()
    try:
        run = run_game(
            cell.player,
            cell.adversary,
            player_params=dict(cell.player_params),
            adversary_params=dict(cell.adversary_params),
            n_actions=cell.n_actions,
            horizon=config.horizon,
            replicates=config.replicates,
            seed=config.seed,
            metrics=config.metrics,
            per_decade=config.per_decade,
            checkpoints=config.checkpoints,
            progress=progress,
            n_jobs=n_jobs,
        )
    except Exception as exc:  # a failing cell must not stop the tournament
        return {
            "ok": False,
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc(),
            "wall_time_s": time.perf_counter() - started,
        }
    ran = {"tournament_cell": cell.id, "executor": where_it_ran(executor, n_jobs)}
    return {"ok": True, "rows": run.rows, "manifest": manifest(run, ran)}


def where_it_ran(executor: str, n_jobs: int | None) -> dict[str, Any]:
    """Where a cell was played: ``{"kind", "host", "pid", "threads", "worker"}``.

    ``kind`` is the tournament's executor (``serial``, ``local``, ``dask``); ``worker`` the Dask
    worker's address when the cell ran in one, else None. A manifest carries it so that a cell
    whose numbers look odd can be traced to the machine that computed it.

    Examples
    --------
    >>> sorted(where_it_ran("serial", 1))
    ['host', 'kind', 'pid', 'threads', 'worker']
    """
    import socket

    worker = None
    if executor == "dask":
        try:
            from distributed import get_worker

            worker = str(get_worker().address)
        except (ImportError, ValueError):  # not inside a Dask worker (e.g. the coordinator)
            worker = None
    return {
        "kind": executor,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "threads": n_jobs,
        "worker": worker,
    }


# ----------------------------------------------------------------------------------------------
# the coordinator


@dataclass
class TournamentResult:
    """What a tournament run did: cells finished now, skipped (already done), failed."""

    directory: Path
    finished: list[str]
    skipped: list[str]
    failed: list[str]
    wall_time_s: float


class Tournament:
    """Runs a :class:`TournamentConfig` into a directory, resumably.

    Parameters
    ----------
    config : TournamentConfig
    directory : path
        Output directory (created if needed).
    executor : {"serial", "local", "dask"}
    n_jobs : int, optional
        Worker processes (local, LocalCluster); default: all cores.
    scheduler : str, optional
        Dask scheduler address; without one a ``LocalCluster`` is started.
    progress : bool
        Show a progress bar over cells (and over rounds for a single serial cell).
    on_cell : callable, optional
        Called as ``on_cell(cell, ok)`` after each cell played now (finished or failed), so that a
        caller running several tournaments can keep one progress bar over all of them
        (:mod:`arena.apps.reproduce`).
    """

    def __init__(
        self,
        config: TournamentConfig,
        directory: str | Path,
        *,
        executor: str = "local",
        n_jobs: int | None = None,
        scheduler: str | None = None,
        progress: bool = False,
        on_cell: Callable[[Cell, bool], None] | None = None,
    ):
        if executor not in EXECUTORS:
            raise ConfigError(
                "tournament", "executor", f"must be one of {EXECUTORS}, got {executor!r}"
            )
        if n_jobs is not None:
            from arena.validation import check_int

            n_jobs = check_int("tournament", "n_jobs", n_jobs, 1)
        check_tournament_name(config.name)
        self.config = config
        self.directory = Path(directory)
        self.executor = executor
        self.n_jobs = int(n_jobs) if n_jobs is not None else (os.cpu_count() or 1)
        self.scheduler = scheduler
        self.progress = progress
        self.on_cell = on_cell

    def cell_threads(self, workers: int) -> int | None:
        """Threads each cell's game may use when ``workers`` cells run at once (``n_jobs`` of
        :func:`arena.game.run_game`): the cores left to each worker, so that cells played in
        parallel processes never oversubscribe the machine (one thread each when there are at
        least as many cells as cores); None (the game's default, every core) for the serial
        executor, whose cells run one at a time in this process.
        """
        if self.executor == "serial":
            return None
        return max(1, self.n_jobs // max(1, workers))

    # -- files ----------------------------------------------------------------------------------

    @property
    def parts(self) -> Path:
        return self.directory / "parts"

    def _claim_directory(self) -> None:
        if self._check_directory():
            return
        self.parts.mkdir(parents=True, exist_ok=True)
        write_json_atomic(
            {
                "name": self.config.name,
                "config": self.config.as_dict(),
                "config_digest": self.config.digest(),
                "cells": [{"id": c.id, **json.loads(c.key)} for c in self.config.cells()],
                "versions": package_versions(),
                "git_revision": git_revision(),
                "schema": "arena tournament v1",
            },
            self.directory / "manifest.json",
        )

    def _check_directory(self) -> bool:
        """Whether the directory holds this tournament already; refuse one that holds another,
        an unreadable manifest, or a symbolic link where the tournament writes (the folder, its
        manifest, ``parts/``, ``failures.parquet``): nothing is written through a link."""
        if self.directory.is_symlink():
            raise ArenaError(
                f"{self.directory} is a symbolic link; a tournament writes only into a real folder "
                "(give the folder it points to, or another one)"
            )
        refuse_symlinks(self.directory, "manifest.json", "parts", "failures.parquet")
        path = self.directory / "manifest.json"
        digest = self.config.digest()
        if path.is_file():
            old = read_manifest(path)
            if old.get("config_digest") != digest:
                diff = sorted(
                    k
                    for k in set(old.get("config", {})) | set(self.config.as_dict())
                    if canonical_json(old.get("config", {}).get(k))
                    != canonical_json(self.config.as_dict().get(k))
                )
                raise ArenaError(
                    f"{self.directory} already holds a different tournament (its configuration "
                    f"differs in {', '.join(diff) or 'its digest'}); choose another directory"
                )
            return True
        return False

    def finished_cells(self) -> set[str]:
        """Cells whose manifest part (written after their Parquet part) is a readable manifest of
        the cell beside its Parquet part; a damaged part is played again and replaced."""
        if not self.parts.is_dir():
            return set()
        done = set()
        for path in self.parts.glob("manifest-*.json"):
            cell = path.stem.removeprefix("manifest-")
            if not (self.parts / f"results-{cell}.parquet").is_file():
                continue
            try:
                read_manifest(path)
            except ArenaError:
                continue
            done.add(cell)
        return done

    def _check_data_identity(self, cells: list[Cell], done: set[str]) -> None:
        """Refuse to resume when the data a finished cell read has changed since it was played.

        A cell's manifest records the digests of the files (and dataset versions) its adversary
        read (``config.data``, :meth:`arena.components.Adversary.data_identity`), as ``arena
        run``'s does. Playing the other cells over the edited file would mix two experiments in
        one tournament, so the resume stops before any cell, naming the file: restore it, or play
        into another directory. One digest per distinct adversary, read once.
        """
        from arena.validation import resolve_component

        now: dict[str, dict[str, str]] = {}
        for cell in cells:
            if cell.id not in done:
                continue
            try:
                recorded = read_manifest(self.parts / f"manifest-{cell.id}.json")
            except ArenaError:
                continue
            before = (recorded.get("config") or {}).get("data") or {}
            key = canonical_json([cell.adversary, dict(cell.adversary_params)])
            if key not in now:
                try:
                    adversary = resolve_component(
                        "adversary", cell.adversary, dict(cell.adversary_params)
                    )
                    now[key] = adversary.data_identity()
                except Exception:  # validate() has refused bad ones; nothing to compare against
                    now[key] = before
            current = now[key]
            if before == current:
                continue
            name = sorted(set(before) | set(current))
            what = next((k for k in name if before.get(k) != current.get(k)), name[0])
            target = dict(cell.adversary_params).get(what, what)
            raise ArenaError(
                f"tournament {self.config.name} in {self.directory}: the data of adversary "
                f"{cell.adversary} ({what} {target}) changed since its finished cells were "
                f"played ({before.get(what, 'absent')} then, {current.get(what, 'absent')} now); "
                "restore it, or play the tournament into another directory"
            )

    def _write_cell(self, cell: Cell, out: dict[str, Any]) -> None:
        write_parquet_atomic(out["rows"], self.parts / f"results-{cell.id}.parquet")
        write_json_atomic(out["manifest"], self.parts / f"manifest-{cell.id}.json")

    def _write_failures(self, failures: dict[str, dict[str, Any]]) -> None:
        rows = list(failures.values())
        frame = pd.DataFrame(rows, columns=FAILURE_COLUMNS)
        path = self.directory / "failures.parquet"
        if frame.empty:
            path.unlink(missing_ok=True)
            return
        import pyarrow as pa

        frame["n_actions"] = frame["n_actions"].astype("Int64")
        # a temporary of its own (never a fixed name, which a planted link could redirect)
        write_table_atomic(pa.Table.from_pandas(frame, preserve_index=False), path)

    def _clean_stale_temporaries(self) -> None:
        # only the leftovers of killed writers: a concurrent writer's file names a live owner
        for p in orphan_temporaries(self.parts) + orphan_temporaries(self.directory):
            p.unlink(missing_ok=True)

    # -- running --------------------------------------------------------------------------------

    def run(self) -> TournamentResult:
        """Run every unfinished cell; return what happened."""
        started = time.perf_counter()
        # before the directory is claimed: a refused configuration leaves nothing behind, so the
        # corrected command can use the same directory
        self.config.validate()
        self._check_directory()  # a refused folder is not touched, not even by the lock
        # one tournament per folder at a time; the second is refused in one line naming the first
        with folder_lock(self.directory, f"arena tournament {self.config.name}"):
            return self._run_unlocked(started)

    def _run_unlocked(self, started: float) -> TournamentResult:
        self._claim_directory()  # checks the folder again, under the lock
        self._clean_stale_temporaries()
        cells = self.config.cells()
        done = self.finished_cells()
        self._check_data_identity(cells, done)
        todo = [c for c in cells if c.id not in done]
        skipped = [c.id for c in cells if c.id in done]
        failures = self._load_failures(exclude=set(c.id for c in todo))
        finished: list[str] = []
        bar = self._bar(len(cells), len(skipped))
        outcomes = self._execute(todo)
        try:
            for cell, out in outcomes:
                if out["ok"]:
                    self._write_cell(cell, out)
                    finished.append(cell.id)
                else:
                    failures[cell.id] = {
                        "cell": cell.id,
                        "player": cell.player,
                        "player_params": canonical_json(dict(cell.player_params)),
                        "adversary": cell.adversary,
                        "adversary_params": canonical_json(dict(cell.adversary_params)),
                        "n_actions": cell.n_actions,
                        "horizon": self.config.horizon,
                        "error": out["error"],
                        "traceback": out["traceback"],
                    }
                    self._write_failures(failures)
                if bar is not None:
                    bar.set_postfix_str(cell.label()[:40])
                    bar.update(1)
                if self.on_cell is not None:
                    self.on_cell(cell, bool(out["ok"]))
        finally:
            outcomes.close()  # on every way out: the executor ends its workers, gives Ctrl-C back
            if bar is not None:
                bar.close()
        self._write_failures(failures)
        return TournamentResult(
            self.directory, finished, skipped, sorted(failures), time.perf_counter() - started
        )

    def _load_failures(self, exclude: set[str]) -> dict[str, dict[str, Any]]:
        path = self.directory / "failures.parquet"
        if not path.is_file():
            return {}
        frame = pd.read_parquet(path)
        # a cell about to be retried loses its old failure record
        return {r["cell"]: r for r in frame.to_dict("records") if r["cell"] not in exclude}

    def _bar(self, total: int, initial: int):
        if not self.progress:
            return None
        from tqdm.auto import tqdm

        return tqdm(total=total, initial=initial, unit="cell", desc=self.config.name)

    def _execute(self, todo: list[Cell]) -> Iterable[tuple[Cell, dict[str, Any]]]:
        """Yield ``(cell, outcome)`` as cells finish; Ctrl-C waits while the caller writes one.

        The caller writes a finished cell's files between two steps of this generator. A Ctrl-C
        (SIGINT) that arrives then is held until the files are written and raised at the next
        step, so an interrupted tournament keeps every cell it finished, whole; one that arrives
        while cells are computed stops them at once (``KeyboardInterrupt``; a process pool's
        coordinator raises it within :data:`INTERRUPT_POLL_S`, outside the pool's code), and
        the executors end their workers before it propagates.
        """
        if not todo:
            return
        gate = _InterruptGate()
        if self.executor == "serial" or (self.executor == "local" and self.n_jobs == 1):
            single = self.progress and len(todo) == 1
            threads = self.cell_threads(1)
            cells = (
                (cell, run_cell(cell, self.config, single, threads, self.executor)) for cell in todo
            )
        elif self.executor == "local":
            cells = self._execute_processes(todo, gate)
        else:
            cells = self._execute_dask(todo)
        with gate:
            try:
                for item in cells:
                    with gate.held():
                        yield item
            finally:
                close = getattr(cells, "close", None)
                if close is not None:
                    close()  # the executors' own cleanup ends their workers now

    def _execute_processes(self, todo: list[Cell], gate: _InterruptGate):
        import multiprocessing

        # spawn: workers start clean (no inherited numba/threads state), on every platform
        context = multiprocessing.get_context("spawn")
        workers = min(self.n_jobs, len(todo))
        threads = self.cell_threads(workers)
        pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=_exit_with_parent,
            initargs=(os.getpid(),),
        )
        try:
            # the workers are started by submit(): they inherit an ignored SIGINT, so that a
            # terminal's Ctrl-C (sent to the whole process group) reaches the coordinator only
            with _sigint_ignored():
                pending = {
                    pool.submit(run_cell, cell, self.config, False, threads, "local"): cell
                    for cell in todo
                }
            while pending:
                # A Ctrl-C raised inside wait() or result() can leave a future's lock taken (one
                # interrupted tournament in 40 here): the pool's manager thread, marking that
                # future failed at shutdown, then waits for it forever. So it is held while the
                # coordinator is inside the pool's code and raised between two short waits.
                with gate.held():
                    done, _ = wait(pending, timeout=INTERRUPT_POLL_S, return_when=FIRST_COMPLETED)
                    finished = []
                    for fut in done:
                        cell = pending.pop(fut)
                        try:
                            out = fut.result()
                        except Exception as exc:  # the worker itself died
                            out = _worker_failure(exc)
                        finished.append((cell, out))
                yield from finished
        except BaseException:
            # interrupted (or the caller stopped): the cells in flight are lost anyway, so end
            # their workers now rather than wait for them in shutdown()
            _terminate_workers(pool)
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _execute_dask(self, todo: list[Cell]):
        try:
            from dask.distributed import Client, LocalCluster, as_completed
        except ImportError as exc:
            raise ArenaError(
                "executor=dask needs the optional extra: pip install 'regret-arena[dask]'"
            ) from exc
        cluster = None
        # a remote cluster's workers may run several cells each: one thread per cell there
        threads = 1 if self.scheduler else self.cell_threads(min(self.n_jobs, len(todo)))
        # the local cluster's processes inherit an ignored SIGINT (see _execute_processes)
        with _sigint_ignored():
            if self.scheduler:
                client = Client(self.scheduler)
            else:
                cluster = LocalCluster(
                    n_workers=min(self.n_jobs, len(todo)),
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                )
                client = Client(cluster)
        try:
            futures = {
                client.submit(
                    run_cell,
                    cell,
                    self.config,
                    False,
                    threads,
                    "dask",
                    pure=False,
                    key=f"cell-{cell.id}",
                ): cell
                for cell in todo
            }
            for fut in as_completed(list(futures)):
                cell = futures[fut]
                try:
                    out = fut.result()
                except Exception as exc:
                    out = _worker_failure(exc)
                yield cell, out
        except BaseException:
            if cluster is not None:  # our own workers: their log lines of the cells cancelled
                with _sigint_ignored(), _quiet_dask():
                    client.run(_silence_dask_logs)
            raise
        finally:
            # an interrupt must not be interrupted again by the cluster's shutdown, nor leave its
            # log lines (workers lost, tasks cancelled) after the command's own last line
            with _sigint_ignored(), _quiet_dask():
                client.close()
                if cluster is not None:
                    cluster.close()


def _worker_failure(exc: Exception) -> dict[str, Any]:
    """The outcome of a cell whose worker died (a pool process, a Dask worker) while in an
    ``except`` block: recorded as a failed cell with its error and traceback, as
    :func:`run_cell` records its own."""
    return {
        "ok": False,
        "error": f"{type(exc).__name__}: {exc}",
        "traceback": traceback.format_exc(),
    }


INTERRUPT_POLL_S = 0.25
"""How long the coordinator of a process pool waits for a cell before it looks for a Ctrl-C: the
longest an interrupt waits to be raised."""


class _InterruptGate:
    """Hold Ctrl-C (SIGINT) while the coordinator writes a finished cell, raise it afterwards.

    Installed only in the main thread (the only one that receives signals); elsewhere it does
    nothing. Outside :meth:`held`, SIGINT raises ``KeyboardInterrupt`` at once, as Python's own
    handler does.
    """

    def __init__(self) -> None:
        self._holding = False
        self._pending = False
        self._previous: Any = None

    def __enter__(self) -> _InterruptGate:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        import signal

        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def _handle(self, signum: int, frame: Any) -> None:
        if self._holding:
            self._pending = True
        else:  # at once, unless numba is compiling (then at the game's next chunk)
            handle_sigint(signum, frame)

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold SIGINT inside the block; raise ``KeyboardInterrupt`` at its end if one came."""
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
        if self._pending:
            self._pending = False
            raise KeyboardInterrupt


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT inside the block (main thread only), for the processes started in it.

    Processes started in the block (pool workers, a local Dask cluster's nannies and workers)
    inherit the ignored signal, so a terminal's Ctrl-C, sent to the whole process group, reaches
    the coordinator alone, which then ends them itself. Only ``SIG_IGN`` survives their ``exec``
    (a Python handler does not, and a blocked mask is undone by Dask's workers, whose asyncio
    runner then prints a traceback of its own), so a Ctrl-C that comes while they start (a
    fraction of a second for a pool, a few seconds for a Dask cluster) is not seen: the user
    presses it again once they run.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


_DASK_LOGGERS = ("distributed", "tornado", "asyncio")


@contextmanager
def _quiet_dask() -> Iterator[None]:
    """Silence distributed's loggers while a cluster is shut down after an interrupt."""
    import logging

    loggers = [logging.getLogger(name) for name in _DASK_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _silence_dask_logs() -> None:
    """Run on the workers of an interrupted tournament's own cluster, which are about to be shut
    down: the cells they lose are the coordinator's to report, in its one line."""
    import logging

    for name in _DASK_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def _terminate_workers(pool: ProcessPoolExecutor) -> None:
    """End a process pool's workers now (the cells they compute are lost, as a kill loses them)."""
    # the pool has no public way to stop running calls; its process table is stable since 3.8
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=5)
    # A worker ended while it wrote its result leaves half a message in the result pipe: the
    # pool's manager thread then waits in recv() for the rest, and shutdown(), which joins it,
    # waits forever (1 interrupted tournament in 25 here, with cells of ~100 kB of rows).
    # The coordinator's own copy of the pipe's write end is never written to; closed, with the
    # workers' copies gone, it ends that read with EOFError, which the manager takes for a
    # broken pool and shuts down.
    result_queue = getattr(pool, "_result_queue", None)
    if result_queue is not None:
        result_queue._writer.close()


def _exit_with_parent(parent_pid: int) -> None:
    """Pool-worker initializer: ignore Ctrl-C, and end the worker once the coordinator is gone.

    A terminal sends SIGINT to every process of the foreground group: the coordinator handles it
    (it keeps the finished cells and ends the workers), so a worker ignores it rather than print
    a traceback of its own. A coordinator killed with SIGKILL cannot shut its pool down, and its
    spawned workers (hundreds of MB each) would live on, re-parented. A daemon thread notices the
    new parent within half a second and exits the worker; the cells in flight are lost, as a kill
    loses them anyway.
    """
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="arena-exit-with-parent", daemon=True).start()


FAILED_SHOWN = 10
"""Failed cells named one per line in :func:`describe`; the rest are counted."""


def describe(result: TournamentResult, config: TournamentConfig) -> str:
    """A short text summary of a tournament run, naming each failed cell with its error.

    Examples
    --------
    >>> config = TournamentConfig("t", players=["hedge"], adversaries=["fair_coin"])
    >>> cell = config.cells()[0]
    >>> print(describe(TournamentResult(Path("out"), [], [], [cell.id], 0.5), config))
    tournament t: 0 cell(s) run, 0 already done, 1 failed (0.5 s)
    results: out
    failed cells (1; tracebacks in out/failures.parquet):
      hedge vs fair_coin
    """
    lines = [
        f"tournament {config.name}: {len(result.finished)} cell(s) run, "
        f"{len(result.skipped)} already done, {len(result.failed)} failed "
        f"({result.wall_time_s:.1f} s)",
        f"results: {result.directory}",
    ]
    if result.failed:
        path = result.directory / "failures.parquet"
        labels = {cell.id: cell.label() for cell in config.cells()}
        errors = _failure_errors(path)
        lines.append(f"failed cells ({len(result.failed)}; tracebacks in {path}):")
        for cell in result.failed[:FAILED_SHOWN]:
            error = next(iter(errors.get(cell, "").splitlines()), "")
            lines.append(f"  {labels.get(cell, cell)}" + (f": {error}" if error else ""))
        if len(result.failed) > FAILED_SHOWN:
            lines.append(f"  ... and {len(result.failed) - FAILED_SHOWN} more")
    return "\n".join(lines)


def _failure_errors(path: Path) -> dict[str, str]:
    """``{cell: error}`` of a failures file; empty when it cannot be read (the summary then
    names the cells without their errors)."""
    try:
        frame = pd.read_parquet(path, columns=["cell", "error"])
    except Exception:  # missing or damaged: the cells are still named
        return {}
    return {str(c): str(e) for c, e in zip(frame["cell"], frame["error"], strict=True)}
