"""The results contract and its files: the tidy schema, row assembly, Parquet, manifests, traces.

:data:`SCHEMA` is the contract every protocol's rows follow (architecture: results);
:func:`assemble_rows` builds them from a game's checkpoint snapshots. Every file is written to a
temporary name in the same directory and renamed into place, so a reader (or a resumed tournament)
sees either the whole file or none of it. Nothing is pickled.
"""

from __future__ import annotations

import glob
import json
import math
import os
import platform
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

if TYPE_CHECKING:
    from arena.metrics.base import Metric
    from arena.spec import GameSpec

SCHEMA = [
    "run_id",
    "cell",
    "player",
    "player_params",
    "adversary",
    "adversary_params",
    "protocol",
    "n_actions",
    "horizon",
    "replicate",
    "seed",
    "t",
    "metric",
    "param",
    "value",
]
"""Column order of ``results.parquet`` (architecture: results, contract)."""

INT_COLUMNS = ("n_actions", "horizon", "replicate", "seed", "t")
"""Columns of the tidy rows stored as int64."""

FLOAT_COLUMNS = ("param", "value")
"""Columns of the tidy rows stored as float64; every other column is a string."""


@dataclass
class GameRun:
    """The outcome of :func:`arena.game.run_game`.

    Attributes
    ----------
    rows : pandas.DataFrame
        Tidy results, columns :data:`arena.results.SCHEMA`.
    config : dict
        The resolved game description (as stored in ``manifest.json``).
    skipped_metrics : dict
        Metrics requested but not applicable, with the reason.
    wall_time : float
        Seconds spent playing.
    """

    rows: pd.DataFrame
    config: dict
    skipped_metrics: dict[str, str] = field(default_factory=dict)
    wall_time: float = 0.0


ARROW_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("cell", pa.string()),
        ("player", pa.string()),
        ("player_params", pa.string()),
        ("adversary", pa.string()),
        ("adversary_params", pa.string()),
        ("protocol", pa.string()),
        ("n_actions", pa.int64()),
        ("horizon", pa.int64()),
        ("replicate", pa.int64()),
        ("seed", pa.int64()),
        ("t", pa.int64()),
        ("metric", pa.string()),
        ("param", pa.float64()),
        ("value", pa.float64()),
    ]
)
"""The exact Arrow schema of ``results.parquet`` (architecture: results, a contract)."""

assert ARROW_SCHEMA.names == SCHEMA


def assemble_rows(
    snap_t: list[int],
    snap_vals: list[list[np.ndarray]],
    metrics: list[Metric],
    spec: GameSpec,
    ids: np.ndarray,
    constants: dict[str, Any],
) -> pd.DataFrame:
    """Build a game's tidy rows: ordered by checkpoint, then metric and param, then replicate.

    ``snap_vals[s][m]`` is metric m's ``values`` at checkpoint ``snap_t[s]``, shape (R, params);
    ``constants`` holds the columns that are the same on every row (run id, cell, components...).
    """
    n_rep = ids.size
    keys = [key for m in metrics for key in m.row_keys(spec)]
    n_cols, n_snap = len(keys), len(snap_t)
    # values[s, c, r]: snapshot s, metric/param column c, replicate r
    values = np.stack([np.concatenate(vals, axis=1).T for vals in snap_vals]).reshape(-1)
    n_rows = values.size
    names = [k[0] for k in keys]
    params = np.array([k[1] for k in keys], dtype=np.float64)
    column = np.tile(np.repeat(np.arange(n_cols), n_rep), n_snap)
    data: dict[str, Any] = {}
    for col in SCHEMA:
        if col in constants:
            val = constants[col]
            if isinstance(val, int):
                data[col] = np.full(n_rows, val, dtype=np.int64)
            else:
                data[col] = _repeated_strings([val], np.zeros(n_rows, dtype=np.int64))
    data["replicate"] = np.tile(ids, n_snap * n_cols)
    data["t"] = np.repeat(np.asarray(snap_t, dtype=np.int64), n_cols * n_rep)
    data["metric"] = _repeated_strings(names, column)
    data["param"] = params[column]
    data["value"] = values
    return pd.DataFrame({c: data[c] for c in SCHEMA})


def _repeated_strings(labels: list[str], codes: np.ndarray):
    """Return ``labels[codes]`` as a pandas string array, built in Arrow (no Python objects)."""
    return pd.array(pa.array(labels, type=pa.string()).take(pa.array(codes)), dtype="str")


def reference_rows(
    constants: dict[str, Any], ids: np.ndarray, t: int, labelled: list[tuple[str, float, Any]]
) -> list[dict[str, Any]]:
    """Return a reference loop's row dicts of round ``t``: one per (metric, param) of
    ``labelled`` (``(metric, param, values per replicate)``) and replicate, in that order."""
    return [
        {
            **constants,
            "replicate": replicate,
            "t": t,
            "metric": name,
            "param": param,
            "value": float(values[r]),
        }
        for name, param, values in labelled
        for r, replicate in enumerate(ids.tolist())
    ]


def tidy_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Return row dicts (of a reference loop) as a DataFrame with the tidy schema's dtypes."""
    frame = pd.DataFrame(rows, columns=SCHEMA)
    for col in SCHEMA:
        if col in INT_COLUMNS:
            frame[col] = frame[col].astype(np.int64)
        elif col in FLOAT_COLUMNS:
            frame[col] = frame[col].astype(np.float64)
        else:
            frame[col] = frame[col].astype(str)
    return frame


class TraceWriter:
    """Streams a game's per-round trace to ``path`` in Parquet row groups, atomically.

    A protocol subclasses it with its columns: ``schema`` (an Arrow schema) and
    :meth:`columns`, the arrays of one chunk. Rows go to a temporary file that :meth:`commit`
    renames into place and :meth:`abort` deletes, so a reader never sees a partial trace.
    """

    def __init__(self, path: str | Path, schema: pa.Schema):
        self.path = Path(path)
        self.remove_orphans(self.path)
        self.tmp = self.path.with_name(f"{temporary_prefix(self.path)}{uuid.uuid4().hex[:8]}.tmp")
        self.schema = schema
        self._writer = pq.ParquetWriter(self.tmp, schema)

    @staticmethod
    def remove_orphans(path: str | Path, *, ours: bool = False) -> list[Path]:
        """Remove the temporaries of traces of ``path`` whose writer is gone; return them.

        A trace whose writer was killed (SIGKILL, a power loss) never reached :meth:`commit` or
        :meth:`abort`; its temporary names a process that no longer exists
        (:func:`orphan_temporaries`), so removing it takes nothing from a live writer. Every new
        trace of the folder does it, and so does every run that finishes in it (``arena run``).
        ``ours`` removes this process's own temporaries of ``path`` too: those of a run that
        was interrupted before its writer could abort (``arena run`` after Ctrl-C).
        """
        path = Path(path)
        gone = [p for p in orphan_temporaries(path.parent) if p.name.startswith(f".{path.name}~")]
        if ours:
            gone += sorted(path.parent.glob(f"{glob.escape(temporary_prefix(path))}*.tmp"))
        for orphan in gone:
            orphan.unlink(missing_ok=True)
        return gone

    def columns(self, block: Any) -> list[pa.Array]:
        """Return the trace columns of one chunk, in the order of ``schema``."""
        raise NotImplementedError

    def write(self, block: Any) -> None:
        """Append one chunk of rounds."""
        self._writer.write_table(pa.Table.from_arrays(self.columns(block), schema=self.schema))

    def commit(self) -> None:
        """Close the file and rename it into place."""
        self._writer.close()
        self.tmp.replace(self.path)

    def abort(self) -> None:
        """Close and delete the temporary file (the game failed)."""
        self._writer.close()
        self.tmp.unlink(missing_ok=True)


def list_column(arr: np.ndarray) -> pa.ListArray:
    """Return an (R, n, k) array as an Arrow list column of R·n lists of length k (row-major)."""
    n_rep, n, k = arr.shape
    offsets = np.arange(0, n_rep * n * k + 1, k, dtype=np.int32)
    return pa.ListArray.from_arrays(offsets, np.ascontiguousarray(arr).reshape(-1))


def temporary_prefix(path: Path) -> str:
    """Return the prefix of this process's temporary files for ``path``: ``.<name>~<host>~<pid>~``.

    The owner is in the name, so a concurrent writer never shares a temporary file and a later
    run can tell an orphan (its writer is gone) from a file still being written
    (:func:`orphan_temporaries`).
    """
    return f".{path.name}~{socket.gethostname()}~{os.getpid()}~"


def orphan_temporaries(folder: str | Path) -> list[Path]:
    """Return the temporary files in ``folder`` whose writer is gone.

    A temporary names its owner's host and pid (:func:`temporary_prefix`); it is an orphan when
    the owner ran on this host and that process no longer exists. A file whose owner runs on
    another host is never reported (it may still be written); one without an owner in its name was
    left by an older version of the arena and is reported.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> mine = folder / f"{temporary_prefix(folder / 'x.parquet')}ab.tmp"
    >>> dead = folder / f".x.parquet~{socket.gethostname()}~999999999~cd.tmp"
    >>> _ = mine.write_bytes(b""), dead.write_bytes(b"")
    >>> [p.name == dead.name for p in orphan_temporaries(folder)]
    [True]
    """
    out = []
    host = socket.gethostname()
    for p in sorted(Path(folder).glob(".*.tmp")):
        parts = p.name[: -len(".tmp")].rsplit("~", 3)
        if len(parts) != 4:
            out.append(p)
            continue
        _, owner_host, pid, _ = parts
        if owner_host == host and pid.isdigit() and not _process_alive(int(pid)):
            out.append(p)
    return out


@contextmanager
def folder_lock(folder: str | Path, what: str) -> Iterator[None]:
    """Hold an advisory lock on an output folder while ``what`` writes into it.

    The lock is ``fcntl.flock`` on ``<folder>/.arena.lock``, which records the holder (what, pid,
    host, since when); the kernel releases it when its holder exits, even when killed, so a stale
    lock file never blocks anyone. A second writer is refused with one line naming the holder.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> with folder_lock(folder, "arena run"):
    ...     with folder_lock(folder, "arena run"):
    ...         pass
    Traceback (most recent call last):
    ...
    arena.errors.ConfigError: output: parameter 'dir': ... is in use by arena run (pid ...
    """
    import fcntl

    from arena.errors import ConfigError

    folder = Path(folder)
    path = folder / ".arena.lock"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:  # a file in the way, a read-only disk, no permission
        raise ConfigError("output", "dir", f"cannot write into {folder}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = path.read_text().strip() or "another process"
        os.close(fd)
        raise ConfigError(
            "output",
            "dir",
            f"{folder} is in use by {holder}; wait for it to finish or choose another directory",
        ) from None
    try:
        os.ftruncate(fd, 0)
        since = time.strftime("%Y-%m-%d %H:%M:%S")
        holder = f"{what} (pid {os.getpid()} on {socket.gethostname()}, since {since})"
        os.write(fd, holder.encode())
        yield
    finally:
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True


def _atomic_target(path: Path) -> tuple[int, str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=temporary_prefix(path), suffix=".tmp", dir=path.parent)
    # mkstemp creates 0600 files; give the result the permissions an ordinary open() would
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    return fd, tmp


def write_parquet_atomic(df: pd.DataFrame, path: str | Path) -> Path:
    """Write tidy rows to ``path`` with the exact results schema, atomically.

    Examples
    --------
    >>> import tempfile, arena
    >>> df = arena.play("hedge", "fair_coin", n_actions=2, horizon=5, metrics={"regret": {}})
    >>> p = write_parquet_atomic(df, Path(tempfile.mkdtemp()) / "results.parquet")
    >>> pq.read_schema(p).names == SCHEMA
    True
    """
    path = Path(path)
    table = pa.Table.from_pandas(df[SCHEMA], schema=ARROW_SCHEMA, preserve_index=False)
    fd, tmp = _atomic_target(path)
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_json_atomic(obj: Any, path: str | Path) -> Path:
    """Write ``obj`` as indented JSON to ``path``, atomically."""
    return write_text_atomic(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n", path)


def write_text_atomic(text: str, path: str | Path) -> Path:
    """Write ``text`` to ``path`` atomically: a reader sees the old file or the whole new one."""
    path = Path(path)
    fd, tmp = _atomic_target(path)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def package_versions() -> dict[str, str]:
    """Return the versions of Python and of the packages that determine the numbers."""
    out = {"python": platform.python_version()}
    for dist in ("regret-arena", "numpy", "numba", "pandas", "pyarrow", "hydra-core", "scipy"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def git_revision() -> str | None:
    """Return the git revision of the installed source (``-dirty`` if modified), or None."""
    src = Path(__file__).resolve().parent.parent
    try:
        rev = subprocess.run(
            ["git", "-C", str(src), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(src), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return rev + ("-dirty" if dirty else "") if rev else None


def manifest(run: GameRun, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Return the ``manifest.json`` content of a run: resolved config, versions, git revision."""
    return {
        "run_id": run.config["run_id"],
        "cell": run.config["cell"],
        "config": run.config,
        "skipped_metrics": run.skipped_metrics,
        "wall_time_s": round(run.wall_time, 6),
        "n_rows": len(run.rows),
        "versions": package_versions(),
        "components": component_sources(run.config),
        "git_revision": git_revision(),
        **(extra or {}),
    }


def component_sources(config: dict[str, Any]) -> dict[str, dict[str, str]]:
    """The distribution and version that provide the run's player and adversary.

    A plugin's numbers depend on its version as much as on the arena's: the manifest records
    ``{"player": {"name", "distribution", "version", "entry_point"}, "adversary": {...}}``
    (``distribution`` is ``unregistered`` for a class passed directly, not by name).
    """
    from arena import registry

    out = {}
    for kind in ("player", "adversary"):
        name = str(config.get(kind, ""))
        record = {"name": name, "distribution": "unregistered", "version": "", "entry_point": ""}
        try:
            reg = registry.entry(kind, name)
        except Exception:  # a class passed directly (tests, notebooks) has no registration
            out[kind] = record
            continue
        record.update(distribution=reg.distribution, entry_point=reg.entry_point.value)
        try:
            record["version"] = metadata.version(reg.distribution)
        except (metadata.PackageNotFoundError, ValueError):
            record["version"] = "not installed"
        out[kind] = record
    return out


def write_run(run: GameRun, out_dir: str | Path, extra: dict[str, Any] | None = None) -> Path:
    """Write ``results.parquet`` then ``manifest.json`` into ``out_dir``; return the Parquet path.

    The manifest is written last, so its presence marks a complete run. A directory that already
    holds a different run (another ``run_id``) is refused, and so is one holding a
    ``results.parquet`` without a manifest (not a folder the arena wrote). The same experiment with
    other replicates (``replicates=[3, 4]`` after ``replicates=2``) is merged: the folder then
    holds the union, each replicate's rows from its latest run, in the order one run of all of
    them would give (replicate r's rows do not depend on the batch).
    """
    out_dir = Path(out_dir)
    existing = out_dir / "manifest.json"
    results = out_dir / "results.parquet"
    rows, config = run.rows, run.config
    old = check_run_folder(out_dir, config["run_id"])
    if old is not None:
        before = set(old.get("config", {}).get("replicates", []))
        if results.is_file() and not before <= set(config["replicates"]):
            try:
                previous = pd.read_parquet(results)
            except Exception as exc:  # truncated or foreign: never silently replaced
                raise _folder_error(f"{results} is not readable ({exc})") from None
            rows = _merge_replicates(previous, run.rows)
            config = {**config, "replicates": sorted(before | set(config["replicates"]))}
    path = write_parquet_atomic(rows, results)
    record = manifest(run, extra)
    record.update(config=config, n_rows=len(rows))
    write_json_atomic(record, existing)
    return path


def read_manifest(path: str | Path) -> dict[str, Any]:
    """Return the manifest (a JSON object) at ``path``, or raise one line saying what is wrong.

    Raises
    ------
    ConfigError
        If the file cannot be read or is not a JSON object (truncated, edited, foreign).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise _folder_error(f"{path} is not a readable manifest ({exc})") from None
    if not isinstance(data, dict):
        raise _folder_error(f"{path} is not a manifest (a JSON object)")
    return data


def check_run_folder(out_dir: str | Path, run_id: str) -> dict[str, Any] | None:
    """Check that a run of ``run_id`` may write into ``out_dir``; return the manifest there.

    A folder may hold nothing of ours (None), or an earlier run of the same experiment (its
    manifest: replicates are merged). A manifest of another run, an unreadable manifest, or a
    ``results.parquet`` without one is refused, before any round is played.
    """
    out_dir = Path(out_dir)
    existing = out_dir / "manifest.json"
    if existing.is_file():
        old = read_manifest(existing)
        if old.get("run_id") != run_id:
            raise _folder_error(
                f"{out_dir} already holds a different experiment (run_id {old.get('run_id')})"
            )
        return old
    if (out_dir / "results.parquet").exists():
        raise _folder_error(
            f"{out_dir} holds a results.parquet without a manifest, which the arena did not write"
        )
    return None


def _folder_error(what: str):
    from arena.errors import ConfigError

    return ConfigError("output", "dir", f"{what}; choose another directory")


def _merge_replicates(previous: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """Return ``previous`` rows of the replicates ``new`` lacks plus ``new``, in run order."""
    kept = previous[~previous.replicate.isin(new.replicate.unique())]
    merged = pd.concat([kept[SCHEMA], new[SCHEMA]], ignore_index=True)
    # a run orders its rows by checkpoint, then metric and param (in its metrics' order), then
    # replicate: rebuild that order so the folder reads as one run of every replicate
    column = new.metric + "|" + new.param.astype(str)
    position = {key: i for i, key in enumerate(pd.unique(column))}
    merged["_column"] = (merged.metric + "|" + merged.param.astype(str)).map(position)
    merged = merged.sort_values(["t", "_column", "replicate"], kind="stable")
    return merged.drop(columns="_column").reset_index(drop=True)


def read_trace(path: str | Path) -> dict[str, np.ndarray]:
    """Read a ``trace.parquet`` into arrays indexed ``[replicate row, t − 1, ...]``.

    Returns ``probs`` and ``losses`` of shape (R, T, N), ``expected`` (``p_t·l_t``) and
    ``actions`` (``I_t``) of shape (R, T), and ``replicates`` (the global indices of the rows,
    ascending).

    Examples
    --------
    >>> import tempfile, arena
    >>> path = Path(tempfile.mkdtemp()) / "trace.parquet"
    >>> _ = arena.run_game("hedge", "fair_coin", n_actions=3, horizon=5, replicates=2,
    ...                    metrics={"loss": {}}, trace_path=path)
    >>> tr = read_trace(path)
    >>> tr["probs"].shape, tr["actions"].shape, tr["replicates"].tolist()
    ((2, 5, 3), (2, 5), [0, 1])
    """
    table = pq.read_table(path)
    rep = table.column("replicate").to_numpy()
    t = table.column("t").to_numpy()
    order = np.lexsort((t, rep))
    replicates = np.unique(rep)
    n_rep, horizon = replicates.size, int(t.max())
    probs = table.column("probs").combine_chunks().flatten().to_numpy()
    losses = table.column("losses").combine_chunks().flatten().to_numpy()
    n_act = probs.size // rep.size
    return {
        "probs": probs.reshape(rep.size, n_act)[order].reshape(n_rep, horizon, n_act),
        "losses": losses.reshape(rep.size, n_act)[order].reshape(n_rep, horizon, n_act),
        "expected": table.column("expected_loss").to_numpy()[order].reshape(n_rep, horizon),
        "actions": table.column("action").to_numpy()[order].reshape(n_rep, horizon),
        "replicates": replicates,
    }


def load_results(paths: str | Path | Iterable[str | Path]) -> pd.DataFrame:
    """Read one results file, a directory (recursively), or several paths into one DataFrame."""
    if isinstance(paths, str | Path):
        paths = [paths]
    files: list[Path] = []
    for p in map(Path, paths):
        files.extend(sorted(p.rglob("results*.parquet")) if p.is_dir() else [p])
    if not files:
        raise FileNotFoundError(f"no results*.parquet under {paths}")
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def summarize(df: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Final-round mean and two-sided t confidence interval over replicates, per metric and param.

    Returns columns ``player, adversary, n_actions, horizon, metric, param, mean, ci_low, ci_high,
    n``. With one replicate the interval is NaN.
    """
    from scipy.special import stdtrit  # scipy.stats costs ~1.5 s to import

    last = df[df.t == df.horizon]
    keys = [
        "player",
        "player_params",
        "adversary",
        "adversary_params",
        "n_actions",
        "horizon",
        "metric",
        "param",
    ]
    g = last.groupby(keys, dropna=False, sort=False).value
    out = g.agg(["mean", "std", "count"]).reset_index()
    q = np.array([stdtrit(n - 1, 0.5 + level / 2) if n > 1 else math.nan for n in out["count"]])
    half = q * out["std"].to_numpy() / np.sqrt(out["count"].to_numpy())
    out["ci_low"] = out["mean"] - half
    out["ci_high"] = out["mean"] + half
    return out.rename(columns={"count": "n"}).drop(columns="std")


def format_summary(summary: pd.DataFrame) -> str:
    """Render :func:`summarize` output as an aligned text table (one row per metric/param)."""
    lines = []
    header = f"{'metric':<18} {'param':>8} {'mean':>14} {'95% CI':>29} {'n':>5}"
    for (player, adversary), part in summary.groupby(["player", "adversary"], sort=False):
        lines.append(f"{player} vs {adversary}")
        lines.append(header)
        for row in part.itertuples():
            param = "" if math.isnan(row.param) else f"{row.param:g}"
            ci = "" if math.isnan(row.ci_low) else f"[{row.ci_low:12.4f}, {row.ci_high:12.4f}]"
            lines.append(f"{row.metric:<18} {param:>8} {row.mean:14.4f} {ci:>29} {row.n:5d}")
    return "\n".join(lines)
