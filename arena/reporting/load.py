"""Reading a results directory for the report: a tournament, a Hydra multirun, or one run.

Layouts (the report reads files only and never re-simulates):

* a tournament directory: ``manifest.json`` (the tournament: key ``config``), one
  ``parts/results-<cell>.parquet`` + ``parts/manifest-<cell>.json`` per finished cell, and
  ``failures.parquet`` (cells that raised; may be absent);
* a Hydra multirun directory: numbered job folders, each with ``results.parquet`` +
  ``manifest.json`` (and ``multirun.yaml`` at the top);
* a single run folder (``results.parquet`` + ``manifest.json``);
* a folder holding several of these (e.g. two tournaments whose games cannot share one cross
  product, reported together).

All of them are read the same way: every ``results*.parquet`` and ``manifest*.json`` below the
directory (recursively). A manifest with ``run_id`` and ``cell`` describes one cell; one with a
``config`` but no ``run_id`` is a tournament's.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from arena.base import canonical_json
from arena.reporting.labels import format_value, registered_defaults, variant_label_map

KEY_STRINGS = (
    "run_id",
    "cell",
    "player",
    "player_params",
    "adversary",
    "adversary_params",
    "protocol",
    "metric",
)
"""String columns read as dictionaries, i.e. pandas categoricals (grouping and comparing on their
integer codes is fast)."""


@dataclass
class Source:
    """Everything the report reads from a results directory.

    Attributes
    ----------
    root : Path
        The directory read.
    rows : DataFrame
        The tidy rows (exact results schema; key strings categorical) plus the categorical
        columns ``player_label`` and ``game_label``.
    cells : DataFrame
        One row per cell: ``cell, run_id, player_label, game_label, player, player_params,
        adversary, adversary_params, n_actions, horizon, seed, replicates, wall_time_s,
        git_revision, versions, config`` (JSON) and ``manifest`` (its path, relative to ``root``).
    games : DataFrame
        One row per game (``adversary, adversary_params, n_actions, horizon``) with its label.
    tournament : dict or None
        The tournament manifest, if any (the first, in path order, when there are several).
    tournaments : list of dict
        Every tournament manifest below ``root``, in path order.
    multirun_config : str or None
        The text of Hydra's ``multirun.yaml``, if any.
    failures : DataFrame
        The failed cells (columns of ``failures.parquet`` plus ``player_label``,
        ``adversary_label``), possibly empty.
    files : list of Path
        The results files read.
    unreadable : list of (Path, str)
        Results files that were skipped, with the reason (truncated, not Parquet, not the results
        schema); the report says so and goes on with the rest.
    """

    root: Path
    rows: pd.DataFrame
    cells: pd.DataFrame
    games: pd.DataFrame
    tournament: dict[str, Any] | None
    multirun_config: str | None
    failures: pd.DataFrame
    tournaments: list[dict[str, Any]] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    unreadable: list[tuple[Path, str]] = field(default_factory=list)
    progress: list[TournamentProgress] = field(default_factory=list)

    @property
    def incomplete(self) -> list[TournamentProgress]:
        """The tournaments below ``root`` with cells neither finished nor failed."""
        return [p for p in self.progress if p.missing]

    @property
    def player_labels(self) -> list[str]:
        """Sorted player labels (the order that fixes each player's colour)."""
        return sorted(self.rows["player_label"].cat.categories)

    @property
    def game_labels(self) -> list[str]:
        """Game labels in a stable order (adversary label, then N, then T)."""
        return list(self.games["game_label"])


@dataclass(frozen=True)
class TournamentProgress:
    """How far one tournament below a report's source has got.

    Attributes
    ----------
    name : str
        The tournament's name (its manifest's).
    directory : Path
        Its folder.
    expected : int
        The cells of its configuration (its manifest lists them).
    finished, failed : int
        Cells with a finished part (Parquet and manifest), and cells recorded in
        ``failures.parquet`` (and not finished since).
    running : bool
        Whether a writer holds the folder's lock now (``arena tournament`` still playing it).
    """

    name: str
    directory: Path
    expected: int
    finished: int
    failed: int
    running: bool

    @property
    def missing(self) -> int:
        """Cells not played yet (or in flight): neither finished nor failed."""
        return max(0, self.expected - self.finished - self.failed)

    def describe(self) -> str:
        """One line: ``tournament NAME (DIR): 5 of 9 cells finished, …``.

        Examples
        --------
        >>> TournamentProgress("demo", Path("out"), 9, 5, 0, True).describe()
        'tournament demo (out): 5 of 9 cells finished, 4 not yet played; still running'
        """
        failed = f", {self.failed} failed" if self.failed else ""
        state = (
            "still running"
            if self.running
            else "not running (interrupted: the same command resumes it)"
        )
        return (
            f"tournament {self.name} ({self.directory}): {self.finished} of {self.expected} "
            f"cells finished{failed}, {self.missing} not yet played; {state}"
        )


def _folder_busy(folder: Path) -> bool:
    """Whether a writer (``arena run``/``tournament``) holds ``folder``'s lock right now.

    Probes the ``flock`` of ``<folder>/.arena.lock`` (:func:`arena.results.folder_lock`) with a
    non-blocking shared lock, released at once: the report reads, it never creates, follows a
    symlink to or writes the lock file.
    """
    try:
        import fcntl
    except ImportError:  # no flock here: no writer of ours can hold it either
        return False
    try:
        fd = os.open(folder / ".arena.lock", os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def tournament_progress(root: Path) -> list[TournamentProgress]:
    """The progress of every tournament below ``root`` (its ``manifest.json`` lists its cells).

    A cell is finished when its Parquet part and its manifest part are both there (the rule a
    resumed tournament applies), failed when ``failures.parquet`` names it.
    """
    out = []
    for path in sorted(Path(root).rglob("manifest.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        cells = data.get("cells") if isinstance(data, dict) else None
        if not isinstance(cells, list) or "config" not in data or "run_id" in data:
            continue
        folder = path.parent
        ids = {str(c.get("id")) for c in cells if isinstance(c, dict)}
        parts = folder / "parts"
        finished = {
            cid
            for cid in ids
            if (parts / f"manifest-{cid}.json").is_file()
            and (parts / f"results-{cid}.parquet").is_file()
        }
        failed: set[str] = set()
        failures = folder / "failures.parquet"
        if failures.is_file():
            try:
                failed = set(pd.read_parquet(failures, columns=["cell"])["cell"].astype(str))
            except Exception:  # an unreadable list: the Failures section says so
                failed = set()
        out.append(
            TournamentProgress(
                name=str(data.get("name") or folder.name),
                directory=folder,
                expected=len(ids),
                finished=len(finished),
                failed=len((failed & ids) - finished),
                running=_folder_busy(folder),
            )
        )
    return out


def check_complete(src: Source, partial: bool) -> None:
    """Refuse (:class:`~arena.errors.ArenaError`, one line) to report an unfinished tournament.

    A report of a tournament still running (or interrupted) would show some of its cells as if
    they were all of them; ``partial=True`` (``arena report --partial``) reports them anyway,
    and the report then says in its overview that it is partial, N of M cells.
    """
    from arena.errors import ArenaError

    todo = src.incomplete
    if todo and not partial:
        more = f" (and {len(todo) - 1} more tournament(s))" if len(todo) > 1 else ""
        raise ArenaError(
            f"{todo[0].describe()}{more}: the report would show only part of it; report it "
            "when it is done, or pass --partial to report the finished cells now"
        )


# ----------------------------------------------------------------------------------------------
# labels


def component_labels(kind: str, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """Readable labels ``name(k=v, ...)`` of (name, params JSON) pairs, unique among ``pairs``.

    Parameters equal to the registered class's default are left out. When the class cannot be
    loaded here, the parameters that differ between the entries sharing the name are shown.

    Examples
    --------
    >>> labels = component_labels("player", [("hedge", '{"eta":"tuned"}'),
    ...                                      ("hedge", '{"eta":"anytime"}')])
    >>> sorted(labels.values())
    ['hedge', 'hedge(eta=anytime)']
    """
    parsed: dict[tuple[str, str], dict[str, Any]] = {}
    for name, params in pairs:
        try:
            value = json.loads(params) if params else {}
        except (TypeError, ValueError):
            value = {"params": params}
        parsed[(name, params)] = value if isinstance(value, dict) else {"params": value}
    by_name: dict[str, list[tuple[str, str]]] = {}
    for key in parsed:
        by_name.setdefault(key[0], []).append(key)
    out: dict[tuple[str, str], str] = {}
    for name, keys in by_name.items():
        defaults = registered_defaults(kind, name)
        varying = set()
        if defaults is None:
            all_keys = {k for key in keys for k in parsed[key]}
            for k in all_keys:
                if len({canonical_json(parsed[key].get(k)) for key in keys}) > 1:
                    varying.add(k)
        for key in keys:
            params = parsed[key]
            if defaults is None:
                shown = {k: v for k, v in params.items() if k in varying}
            else:
                shown = {
                    k: v
                    for k, v in params.items()
                    if k not in defaults or canonical_json(v) != defaults[k]
                }
            inner = ", ".join(f"{k}={format_value(v)}" for k, v in sorted(shown.items()))
            out[key] = f"{name}({inner})" if inner else name
    # two entries rendered alike (e.g. a non-JSON params string): show everything for those
    seen: dict[str, list[tuple[str, str]]] = {}
    for key, label in out.items():
        seen.setdefault(label, []).append(key)
    for keys in seen.values():
        if len(keys) > 1:
            for key in keys:
                out[key] = f"{key[0]}{key[1]}"
    return out


# ----------------------------------------------------------------------------------------------
# reading


def _read_rows(files: list[Path], unreadable: list[tuple[Path, str]]) -> pa.Table:
    """Concatenate the results files; a (run_id, replicate) already read is not read twice.

    A file that cannot be read as a results table (truncated, not Parquet, another schema) is
    appended to ``unreadable`` with the reason, and skipped.
    """
    from arena.results import SCHEMA

    tables = []
    seen: set[tuple[str, int]] = set()
    for f in files:
        try:
            names = pq.read_schema(f).names
            missing = [c for c in SCHEMA if c not in names]
            if missing:
                unreadable.append((f, f"not an arena results file (no column {missing[0]!r})"))
                continue
            table = pq.read_table(f, read_dictionary=[c for c in KEY_STRINGS if c in names])
        except (OSError, pa.ArrowException) as exc:
            unreadable.append((f, f"unreadable: {str(exc).splitlines()[0]}"))
            continue
        if table.num_rows == 0:
            continue
        pairs = table.group_by(["run_id", "replicate"]).aggregate([])
        here = set(zip(pairs["run_id"].to_pylist(), pairs["replicate"].to_pylist(), strict=True))
        dup = here & seen
        if dup:  # the same replicates of a run in two files (e.g. a copied run): keep the first
            fresh = [p for p in here if p not in seen]
            keep = pc.is_in(
                pc.binary_join_element_wise(
                    pc.cast(table["run_id"], pa.string()),
                    pc.cast(table["replicate"], pa.string()),
                    "\x00",
                ),
                value_set=pa.array([f"{r}\x00{k}" for r, k in fresh], pa.string()),
            )
            table = table.filter(keep)
        seen |= here
        tables.append(table)
    if not tables:
        why = f" ({len(unreadable)} unreadable: {unreadable[0][0]}: {unreadable[0][1]})"
        raise FileNotFoundError("the results files hold no rows" + (why if unreadable else ""))
    table = pa.concat_tables(tables, promote_options="default")
    for name in KEY_STRINGS:  # a column stored without dictionary: encode it (categorical)
        i = table.schema.get_field_index(name)
        if i >= 0 and not pa.types.is_dictionary(table.schema.field(i).type):
            table = table.set_column(i, name, pc.dictionary_encode(table[name]))
    return table


def _read_manifests(root: Path) -> tuple[list[tuple[Path, dict]], list[dict]]:
    cells: list[tuple[Path, dict]] = []
    tournaments: list[dict] = []
    for path in sorted(root.rglob("manifest*.json")):
        if path.name.startswith("."):
            continue
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        if "run_id" in data and "cell" in data:
            cells.append((path, data))
        elif "config" in data:
            tournaments.append(data)
    return cells, tournaments


def _read_failures(root: Path) -> pd.DataFrame:
    cols = [
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
    frames = []
    for path in sorted(root.rglob("failures*.parquet")):
        try:
            frames.append(pd.read_parquet(path))
        except Exception:  # an unreadable failure list is reported as such
            frames.append(
                pd.DataFrame(
                    [{"cell": str(path), "error": "unreadable failures file", "traceback": ""}]
                )
            )
    if not frames:
        return pd.DataFrame(columns=cols)
    out = pd.concat(frames, ignore_index=True)
    for c in cols:
        if c not in out.columns:
            out[c] = None
    return out[cols].reset_index(drop=True)


def _game_label_map(games: pd.DataFrame, adv_labels: dict) -> list[str]:
    vary_n = games["n_actions"].nunique() > 1
    vary_t = games["horizon"].nunique() > 1
    labels = []
    for g in games.itertuples(index=False):
        label = adv_labels[(g.adversary, g.adversary_params)]
        extra = ([f"N={g.n_actions}"] if vary_n else []) + ([f"T={g.horizon}"] if vary_t else [])
        labels.append(label + (" " + " ".join(extra) if extra else ""))
    return labels


def _first_of_each(df: pd.DataFrame, keys: list[str], codes: np.ndarray) -> pd.DataFrame:
    """The key values of each group code (0, 1, ...), as plain strings/ints, in code order."""
    _, first = np.unique(codes, return_index=True)
    out = df[keys].iloc[first].reset_index(drop=True)
    for c in keys:
        if not pd.api.types.is_integer_dtype(out[c]):
            out[c] = out[c].astype(str)
    return out.assign(code=np.arange(len(out)))


def load_source(source_dir: str | Path) -> Source:
    """Read a tournament, multirun or run directory (see the module docstring)."""
    root = Path(source_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a directory")
    files = sorted(p for p in root.rglob("results*.parquet") if not p.name.startswith("."))
    if not files:
        raise FileNotFoundError(f"no results*.parquet under {root}")
    unreadable: list[tuple[Path, str]] = []
    df = _read_rows(files, unreadable).to_pandas()

    # players and games: labels computed once per distinct combination, mapped through codes
    pkeys = ["player", "player_params"]
    pcodes = df.groupby(pkeys, observed=True, sort=False).ngroup().to_numpy()
    puniq = _first_of_each(df, pkeys, pcodes)
    gkeys = ["adversary", "adversary_params", "n_actions", "horizon"]
    gcodes = df.groupby(gkeys, observed=True, sort=False).ngroup().to_numpy()
    guniq = _first_of_each(df, gkeys, gcodes)

    # failures get the same labels as rows (and may introduce names absent from the rows)
    failures = _read_failures(root)
    fp = list(
        zip(failures["player"].astype(str), failures["player_params"].astype(str), strict=True)
    )
    fa = list(
        zip(
            failures["adversary"].astype(str),
            failures["adversary_params"].astype(str),
            strict=True,
        )
    )
    # players by variant (the parameters that tell variants of one name apart), as the public
    # variant_labels does, so users' own plots match the report's legends
    plabels = variant_label_map(
        list(zip(puniq.player, puniq.player_params, strict=True)) + fp, "player"
    )
    alabels = component_labels(
        "adversary", list(zip(guniq.adversary, guniq.adversary_params, strict=True)) + fa
    )
    failures["player_label"] = [plabels[k] for k in fp]
    failures["adversary_label"] = [alabels[k] for k in fa]

    player_cats = [plabels[(p, q)] for p, q in zip(puniq.player, puniq.player_params, strict=True)]
    df["player_label"] = pd.Categorical.from_codes(pcodes, categories=player_cats)
    game_cats = _game_label_map(guniq, alabels)
    if len(set(game_cats)) < len(game_cats):  # same label for different games: be explicit
        game_cats = [
            f"{lab} N={n} T={h}"
            for lab, n, h in zip(game_cats, guniq.n_actions, guniq.horizon, strict=True)
        ]
    df["game_label"] = pd.Categorical.from_codes(gcodes, categories=game_cats)
    games = guniq.drop(columns="code").assign(game_label=game_cats)
    games["adversary_label"] = [
        alabels[(a, p)] for a, p in zip(games.adversary, games.adversary_params, strict=True)
    ]
    games = games.sort_values(["adversary_label", "n_actions", "horizon"]).reset_index(drop=True)

    cell_manifests, tournaments = _read_manifests(root)
    cells = _cells_table(df, cell_manifests, root)
    multirun = root / "multirun.yaml"
    progress = tournament_progress(root)
    return Source(
        root=root,
        rows=df,
        cells=cells,
        games=games,
        tournament=tournaments[0] if tournaments else None,
        tournaments=tournaments,
        multirun_config=multirun.read_text() if multirun.is_file() else None,
        failures=failures,
        files=[f for f in files if f not in {u for u, _ in unreadable}],
        unreadable=unreadable,
        progress=progress,
    )


def _cells_table(df: pd.DataFrame, manifests: list[tuple[Path, dict]], root: Path) -> pd.DataFrame:
    keys = ["cell", "run_id", "player_label", "game_label", "seed"]
    last = df[df["t"].to_numpy() == df["horizon"].to_numpy()]
    first = last.groupby(keys, observed=True, sort=False).agg(
        player=("player", "first"),
        player_params=("player_params", "first"),
        adversary=("adversary", "first"),
        adversary_params=("adversary_params", "first"),
        n_actions=("n_actions", "first"),
        horizon=("horizon", "first"),
        replicates=("replicate", "nunique"),
    )
    cells = first.reset_index()
    for c in ("cell", "run_id", "player_label", "game_label", "player", "player_params"):
        cells[c] = cells[c].astype(str)
    for c in ("adversary", "adversary_params"):
        cells[c] = cells[c].astype(str)
    info: dict[str, dict[str, Any]] = {}
    for path, m in manifests:
        entry = info.setdefault(
            str(m["run_id"]),
            {
                "wall_time_s": 0.0,
                "git_revision": None,
                "versions": None,
                "manifest": [],
                "config": m.get("config"),
            },
        )
        wall = m.get("wall_time_s")
        if isinstance(wall, int | float) and math.isfinite(wall):
            entry["wall_time_s"] += float(wall)  # replicate blocks of one cell add up
        entry["git_revision"] = entry["git_revision"] or source_revision(m)
        entry["versions"] = entry["versions"] or m.get("versions")
        entry["manifest"].append(str(path.relative_to(root)))
        if "tournament_cell" in m:
            entry["tournament_cell"] = m["tournament_cell"]
    cells["wall_time_s"] = [info.get(r, {}).get("wall_time_s", np.nan) for r in cells.run_id]
    cells["git_revision"] = [info.get(r, {}).get("git_revision") for r in cells.run_id]
    cells["versions"] = [
        canonical_json(info[r]["versions"]) if info.get(r, {}).get("versions") else None
        for r in cells.run_id
    ]
    cells["tournament_cell"] = [info.get(r, {}).get("tournament_cell") for r in cells.run_id]
    cells["config"] = [
        canonical_json(info[r]["config"]) if info.get(r, {}).get("config") else None
        for r in cells.run_id
    ]
    cells["manifest"] = [", ".join(info.get(r, {}).get("manifest", [])) for r in cells.run_id]
    return cells.sort_values(["game_label", "player_label", "seed"]).reset_index(drop=True)


def source_revision(manifest: dict[str, Any]) -> str | None:
    """Which code computed a manifest's numbers: its git revision, or, for an installed wheel
    (no git), the package's version (``regret-arena 0.1.0``); None when it records neither.

    Examples
    --------
    >>> source_revision({"git_revision": None, "arena_version": "0.1.0"})
    'regret-arena 0.1.0'
    >>> source_revision({"git_revision": "abc123"})
    'abc123'
    """
    if manifest.get("git_revision"):
        return str(manifest["git_revision"])
    version = manifest.get("arena_version") or (manifest.get("versions") or {}).get("regret-arena")
    return f"regret-arena {version}" if version and version != "not installed" else None
