"""The results contract and its files: the tidy schema, row assembly, Parquet, manifests, traces.

:data:`SCHEMA` is the contract every protocol's rows follow (architecture: results);
:func:`assemble_rows` builds them from a game's checkpoint snapshots. Every file is written to a
temporary name in the same directory and renamed into place, so a reader (or a resumed tournament)
sees either the whole file or none of it. Nothing is pickled.
"""

from __future__ import annotations

import functools
import glob
import io
import json
import math
import os
import platform
import socket
import stat
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
from pandas.api.internals import create_dataframe_from_blocks

if TYPE_CHECKING:
    from arena.metric import Metric
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
    per_metric = [m.row_keys(spec) for m in metrics]
    keys = [key for metric_keys in per_metric for key in metric_keys]
    n_cols, n_snap = len(keys), len(snap_t)
    n_rows = n_snap * n_cols * n_rep
    # the numeric columns are written in place through (snapshot, column, replicate) views of
    # their blocks: numpy's tile and repeat over a small game's rows cost more than the rows
    floats = np.empty((len(FLOAT_COLUMNS), n_snap, n_cols, n_rep))  # param, value
    values = floats[1]
    first = 0
    for m, metric_keys in enumerate(per_metric if n_snap else []):
        # (n_snap, R, the metric's columns): one concatenation (np.stack's checks per array cost
        # 15 µs over a small game's 38 checkpoints, against 5)
        parts = [vals[m] for vals in snap_vals]
        shapes = {part.shape for part in parts}
        if len(shapes) != 1:
            raise ValueError(
                f"metric {metrics[m].name}: values change shape between checkpoints: "
                f"{sorted(shapes)}"
            )
        block = np.concatenate(parts).reshape(n_snap, *parts[0].shape)
        if block.shape[1:] != (n_rep, len(metric_keys)):
            # a column left unfilled would be written as whatever the buffer held
            raise ValueError(
                f"metric {metrics[m].name}: values have shape {block.shape[1:]}, expected "
                f"{(n_rep, len(metric_keys))} (replicates, row_keys)"
            )
        values[:, first : first + len(metric_keys)] = block.transpose(0, 2, 1)
        first += len(metric_keys)
    floats[0] = np.array([k[1] for k in keys], dtype=np.float64)[:, None]
    names = [k[0] for k in keys]
    # the frame is handed its blocks as pandas stores them (one 2-D block per numeric dtype,
    # one Arrow array per string column): the dict constructor's inference and consolidation
    # were most of a small game's assembly (340 of 410 µs)
    ints = np.empty((len(INT_COLUMNS), n_snap, n_cols, n_rep), dtype=np.int64)
    for k, col in enumerate(INT_COLUMNS):
        if col == "replicate":
            ints[k] = ids
        elif col == "t":
            ints[k] = np.asarray(snap_t, dtype=np.int64)[:, None, None]
        else:
            ints[k] = constants[col]
    ints = ints.reshape(len(INT_COLUMNS), n_rows)
    floats = floats.reshape(len(FLOAT_COLUMNS), n_rows)
    blocks: list[tuple[Any, np.ndarray]] = [(ints, _INT_PLACES), (floats, _FLOAT_PLACES)]
    for place, col in _STR_PLACES:
        if col == "metric":
            labels = _tiled_strings(names, n_rep, n_snap)
        else:
            labels = _repeated_string(constants[col], n_rows)
        blocks.append((labels, np.array([place])))
    return create_dataframe_from_blocks(
        blocks,
        index=pd.RangeIndex(n_rows),
        columns=_COLUMNS.view(),  # a frame's own labels
    )


_COLUMNS = pd.Index(SCHEMA)
_INT_PLACES = np.array([SCHEMA.index(c) for c in INT_COLUMNS])
_FLOAT_PLACES = np.array([SCHEMA.index(c) for c in FLOAT_COLUMNS])
_STR_PLACES = [
    (place, col)
    for place, col in enumerate(SCHEMA)
    if col not in INT_COLUMNS and col not in FLOAT_COLUMNS
]
assert FLOAT_COLUMNS == ("param", "value")  # the order assemble_rows stacks them in
_STR_DTYPE = pd.StringDtype(storage="pyarrow", na_value=np.nan)
"""pandas' default ``str`` dtype: the dtype of every string column of the tidy rows."""


def _repeated_string(label: str, n: int):
    """Return a pandas string array of ``n`` copies of ``label`` (Arrow's own ``repeat``: 8 µs
    for a short constant over a small game's rows, against 20 µs for :func:`_tiled_strings`).

    The Arrow array (immutable) of a small game is kept for the next game with the same label
    and rows (the player's name and parameters over a sweep's cells): the pandas array around it
    is new each time."""
    arrow = _repeated_arrow(label, n) if n * len(label) <= _KEPT_CHARACTERS else _repeat(label, n)
    return pd.arrays.ArrowStringArray(arrow, dtype=_STR_DTYPE)


def _repeat(label: str, n: int) -> pa.Array:
    return pa.repeat(pa.scalar(label, pa.large_string()), n)


_KEPT_CHARACTERS = 2**16
"""Most characters (rows × label length) of a repeated label :func:`_repeated_string` keeps: the
128 it keeps hold 8 MiB at most."""

_repeated_arrow = functools.lru_cache(maxsize=128)(_repeat)


def _tiled_strings(labels: list[str], each: int, times: int):
    """Return a pandas string array of each label repeated ``each`` times, the whole ``times``.

    Written straight into Arrow's ``large_string`` buffers (pandas' own storage, so no cast):
    the text by bytes multiplication, the offsets by one cumulative sum. A 30-character
    constant over 10⁵ rows took 0.4–0.5 ms, against 1.0–1.2 ms for a take over codes and a cast
    to ``large_string`` (busy 2-core machine).
    """
    if len(labels) == 1:  # one metric's rows: a repeated label (8 against 12 µs, small games)
        return _repeated_string(labels[0], each * times)
    encoded = [label.encode() for label in labels]
    data = b"".join(text * each for text in encoded) * times
    lengths = np.tile(np.repeat(np.array([len(t) for t in encoded], dtype=np.int64), each), times)
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    array = pa.Array.from_buffers(
        pa.large_string(), lengths.size, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    # the class and dtype that ``pd.array(array, dtype="str")`` resolves to, built directly:
    # resolving the dtype string and re-checking the buffers took 45 of a column's 60 µs
    return pd.arrays.ArrowStringArray(array, dtype=_STR_DTYPE)


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


LOCK_NAME = ".arena.lock"
"""The lock file of an output folder (:func:`folder_lock`); it exists while a writer holds it."""

_LOCK_ATTEMPTS = 50
"""How often :func:`folder_lock` tries again when the lock file it locked was replaced meanwhile."""


def _output_error(message: str):
    from arena.errors import ConfigError

    return ConfigError("output", "dir", message)


def refuse_symlinks(folder: str | Path, *relative: str | Path) -> None:
    """Refuse (one line) a path under ``folder`` that is, or passes through, a symbolic link.

    Every file the arena writes into an output folder is written by atomic replace, which never
    follows a link at the final name; this check refuses the link anyway (the user placed it, and a
    rebuild must not silently replace it) and, above all, refuses a link among the folders on the
    way, which a replace would follow out of the output folder.

    Raises
    ------
    ConfigError
        Naming the first link found.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> (folder / "tables").symlink_to(tempfile.mkdtemp())
    >>> refuse_symlinks(folder, "report.md")
    >>> refuse_symlinks(folder, "tables/a.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    arena.errors.ConfigError: output: parameter 'dir': .../tables is a symbolic link; ...
    """
    folder = Path(folder)
    for rel in relative:
        path = folder
        for part in Path(rel).parts:
            path = path / part
            if path.is_symlink():
                raise _output_error(
                    f"{path} is a symbolic link; the arena writes only real files and folders "
                    "inside its output folder (remove the link or choose another directory)"
                )
            if not path.exists():
                break


def is_plain_name(name: str) -> bool:
    """Whether ``name`` is one plain folder name: not empty, no path separator, no leading ``.``
    (``.``, ``..``, hidden folders), not absolute, no drive, no control character.

    A report's name and a tournament's name become folders that the arena writes and cleans;
    anything else would put them (and the clean-up) elsewhere.

    Examples
    --------
    >>> is_plain_name("demo-2"), is_plain_name("../x"), is_plain_name(".hidden"), is_plain_name("")
    (True, False, False, False)
    """
    from pathlib import PurePosixPath, PureWindowsPath

    return not (
        not name.strip()
        or name.startswith(".")
        or any(sep in name for sep in ("/", "\\"))
        or any(ord(ch) < 32 for ch in name)
        or PurePosixPath(name).is_absolute()
        or bool(PureWindowsPath(name).drive)
    )


class HeldFolder:
    """An output folder whose lock this process holds: what :func:`folder_lock` yields.

    Only the holder removes or replaces what is in the folder, and it does so through this object,
    which checks first that the path still names the folder it locked.

    Attributes
    ----------
    path : Path
        The folder.
    created : bool
        Whether :func:`folder_lock` created it (a refused writer then removes it again).
    remove_if_empty : bool
        Set by the holder: remove the folder on release when nothing but the lock file is left.
    """

    def __init__(self, path: Path, dir_fd: int, created: bool):
        self.path = path
        self._dir_fd = dir_fd
        self.created = created
        self.remove_if_empty = False

    def check(self) -> None:
        """Raise unless the path still names the folder whose lock is held (not a link, not a
        folder put in its place)."""
        try:
            now = os.lstat(self.path)
        except OSError:
            now = None
        held = os.fstat(self._dir_fd)
        if now is None or (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
            raise _output_error(f"{self.path} was moved or replaced while this process wrote it")

    def target(self, relative: str | Path) -> Path:
        """Return the path of ``relative`` inside the folder, refusing a symbolic link on the way
        or at the end (:func:`refuse_symlinks`) and a folder that was replaced."""
        self.refuse_links(relative)
        return self.path / relative

    def refuse_links(self, *relative: str | Path) -> None:
        """Refuse a symbolic link on the way to, or at, any of the ``relative`` paths, and a
        folder that was replaced."""
        self.check()
        refuse_symlinks(self.path, *relative)

    def entries(self) -> list[str]:
        """The names in the folder, its lock file excepted."""
        return sorted(name for name in os.listdir(self._dir_fd) if name != LOCK_NAME)

    def clear(self, what: str) -> None:
        """Remove everything in the folder except its lock file (``--fresh``).

        A sub-folder may be another writer's output folder (a tournament inside the folder a
        report reads): each is locked as ``what`` before it is emptied and removed, so a folder in
        use is refused, never removed under its writer. Nothing is followed through a link: a link
        is removed, not its target.
        """
        self.check()
        for name in self.entries():
            info = os.stat(name, dir_fd=self._dir_fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                with folder_lock(self.path / name, what, create=False) as inner:
                    inner.clear(what)
                    inner.remove_if_empty = True
            else:
                os.unlink(name, dir_fd=self._dir_fd)


@contextmanager
def folder_lock(folder: str | Path, what: str, *, create: bool = True) -> Iterator[HeldFolder]:
    """Hold an advisory lock on an output folder while ``what`` writes into it.

    The lock is ``fcntl.flock`` on ``<folder>/.arena.lock``, which records the holder (what, pid,
    host, since when); the kernel releases it when its holder exits, even when killed, so a stale
    lock file never blocks anyone. A second writer is refused with one line naming the holder.
    Every writer (run, tournament, report, reproduce) takes it before it touches the folder, and
    only the holder removes or replaces what is in it (:class:`HeldFolder`).

    The folder and the lock file are opened without following a symbolic link, and a lock file
    with other hard links or that is not a regular file is refused, so a planted
    ``.arena.lock -> ../victim`` is never truncated. The holder unlinks the lock file when it is
    done (and may remove the folder): a process that opened the old lock file meanwhile finds,
    once it gets the lock, that the file it locked is no longer the one at the path, and starts
    again, so two processes can never each hold a lock on "the" folder.

    Parameters
    ----------
    folder : path
        The output folder, created (with its parents) unless ``create`` is false.
    what : str
        The writer, as the refusal of a second one names it (``arena run``).
    create : bool
        Whether to create a missing folder.

    Yields
    ------
    HeldFolder
        The folder, for the holder's removals.

    Raises
    ------
    ConfigError
        If the folder is in use, is a symbolic link, cannot be created or written, or holds a
        lock file that is a link, not a regular file, or has other hard links.

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
    >>> (folder / ".arena.lock").exists()  # gone with its holder
    False
    """
    import errno
    import fcntl

    folder = Path(folder)
    created = False
    for _ in range(_LOCK_ATTEMPTS):
        dir_fd, made = _open_folder(folder, create)
        created = created or made
        try:
            fd = os.open(
                LOCK_NAME,
                os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                0o644,
                dir_fd=dir_fd,
            )
        except OSError as exc:
            os.close(dir_fd)
            if exc.errno == errno.ENOENT:  # the folder was removed by its holder: start again
                continue
            if exc.errno == errno.ELOOP:
                raise _output_error(
                    f"{folder / LOCK_NAME} is a symbolic link, which the arena never follows; "
                    "remove it or choose another directory"
                ) from None
            raise _output_error(f"cannot write into {folder}: {exc.strerror}") from None
        try:
            _check_lock_file(folder, fd)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise _output_error(
                    f"{folder} is in use by {_holder(fd)}; wait for it to finish or choose "
                    "another directory"
                ) from None
            locked = _still_there(folder, dir_fd, fd)
        except BaseException:
            os.close(fd)
            os.close(dir_fd)
            raise
        if locked:
            break
        # its holder unlinked the file (or removed the folder) meanwhile: lock the new one
        os.close(fd)
        os.close(dir_fd)
    else:
        raise _output_error(f"{folder} keeps changing while it is being locked; try again")
    held = HeldFolder(folder, dir_fd, created)
    try:
        os.ftruncate(fd, 0)
        since = time.strftime("%Y-%m-%d %H:%M:%S")
        holder = f"{what} (pid {os.getpid()} on {socket.gethostname()}, since {since})"
        os.write(fd, holder.encode())
        yield held
    finally:
        _release(held, dir_fd, fd)


def _open_folder(folder: Path, create: bool) -> tuple[int, bool]:
    """Open ``folder`` (made if missing and ``create``) without following a link; return its
    descriptor and whether it was made here."""
    import errno

    created = False
    for _ in range(_LOCK_ATTEMPTS):
        if folder.is_symlink():
            break
        if create and not folder.exists():
            try:
                folder.mkdir(parents=True)
                created = True
            except FileExistsError:
                pass
            except OSError as exc:  # a file in the way, a read-only disk, no permission
                raise _output_error(f"cannot write into {folder}: {exc.strerror}") from None
        try:
            flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
            return os.open(folder, flags), created
        except OSError as exc:
            if exc.errno == errno.ENOENT and create:
                continue  # removed by its holder since: make it again
            if exc.errno in (errno.ELOOP, errno.ENOTDIR) and folder.is_symlink():
                break
            raise _output_error(f"cannot write into {folder}: {exc.strerror}") from None
    else:
        raise _output_error(f"{folder} keeps changing while it is being locked; try again")
    raise _output_error(
        f"{folder} is a symbolic link; the arena writes only into a real folder (give the "
        "folder it points to, or another one)"
    )


def _check_lock_file(folder: Path, fd: int) -> None:
    """Refuse a lock file that is not a regular file of its own (a FIFO, a hard link to a file
    elsewhere, which locking would truncate)."""
    info = os.fstat(fd)
    # no link at all is a file its holder has just unlinked: the caller finds it gone and retries
    if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
        what = "not a regular file" if not stat.S_ISREG(info.st_mode) else "has other hard links"
        raise _output_error(
            f"{folder / LOCK_NAME} {what}, so it is not the arena's lock file; remove it or "
            "choose another directory"
        )


def _still_there(folder: Path, dir_fd: int, fd: int) -> bool:
    """Whether the locked file is still ``folder/.arena.lock`` and ``folder`` still the folder
    opened: a holder that finished may have unlinked the file, or removed the folder."""
    try:
        at_path = os.stat(folder / LOCK_NAME, follow_symlinks=False)
        folder_now = os.lstat(folder)
    except OSError:
        return False
    locked, opened = os.fstat(fd), os.fstat(dir_fd)
    return (at_path.st_dev, at_path.st_ino) == (locked.st_dev, locked.st_ino) and (
        folder_now.st_dev,
        folder_now.st_ino,
    ) == (opened.st_dev, opened.st_ino)


def _holder(fd: int) -> str:
    """The holder recorded in a lock file, as one short line of text."""
    try:
        text = os.pread(fd, 400, 0).decode("utf-8", "replace")
    except OSError:
        text = ""
    line = "".join(ch if ch.isprintable() else " " for ch in text).strip()
    return line or "another process"


def _release(held: HeldFolder, dir_fd: int, fd: int) -> None:
    """Unlink the lock file (and remove the folder when asked and empty), then unlock.

    The lock file is unlinked while still locked, and only when the name still refers to it: a
    process waiting on it then sees that the file it locked is gone and starts again.
    """
    import fcntl

    from arena.errors import ArenaError

    try:
        mine = os.fstat(fd)
        at_name = os.stat(LOCK_NAME, dir_fd=dir_fd, follow_symlinks=False)
        if (at_name.st_dev, at_name.st_ino) == (mine.st_dev, mine.st_ino):
            os.ftruncate(fd, 0)
            os.unlink(LOCK_NAME, dir_fd=dir_fd)
            if held.remove_if_empty and not os.listdir(dir_fd):
                held.check()
                os.rmdir(held.path)
    except (OSError, ArenaError):
        pass  # left as it is: a later writer locks it (or a file put there) as usual
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        os.close(dir_fd)


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
    table = pa.Table.from_pandas(df[SCHEMA], schema=ARROW_SCHEMA, preserve_index=False)
    return write_table_atomic(table, path)


def write_table_atomic(table: pa.Table, path: str | Path) -> Path:
    """Write an Arrow table as Parquet to ``path``, atomically.

    The temporary file is created exclusively (never an existing name, never through a link) in
    the same folder, then renamed over ``path``, which replaces a link there instead of following
    it.
    """
    path = Path(path)
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


def write_bytes_atomic(data: bytes, path: str | Path) -> Path:
    """Write ``data`` to ``path`` atomically: a reader sees the old file or the whole new one."""
    path = Path(path)
    fd, tmp = _atomic_target(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_npy_atomic(array: np.ndarray, path: str | Path) -> Path:
    """Write ``array`` as a ``.npy`` file (no pickle) to ``path``, atomically."""
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(array), allow_pickle=False)
    return write_bytes_atomic(buffer.getvalue(), path)


def write_text_atomic(text: str, path: str | Path) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically: a reader sees the old file or the whole new
    one."""
    return write_bytes_atomic(text.encode("utf-8"), path)


def package_versions() -> dict[str, str]:
    """Return the versions of Python and of the packages that determine the numbers.

    Each version is read once per process (:func:`_distribution_version`): what a process runs
    is what it imported, and each read scans the installed distributions' metadata (~8 ms for
    the seven, in every cell's manifest of a tournament).
    """
    out = {"python": platform.python_version()}
    for dist in ("regret-arena", "numpy", "numba", "pandas", "pyarrow", "hydra-core", "scipy"):
        out[dist] = _distribution_version(dist)
    return out


@functools.cache
def git_revision() -> str | None:
    """Return the git revision of the installed source (``-dirty`` if modified), or None.

    Asked of git once per process (two ``git`` subprocesses, ~9 ms, in every cell's manifest):
    the code a process runs is the code it imported, whatever the checkout holds later.
    """
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
    versions = package_versions()
    return {
        "run_id": run.config["run_id"],
        "cell": run.config["cell"],
        "config": run.config,
        "skipped_metrics": run.skipped_metrics,
        "wall_time_s": round(run.wall_time, 6),
        "n_rows": len(run.rows),
        "versions": versions,
        "components": component_sources(run.config),
        "git_revision": git_revision(),
        # a wheel install has no git revision: the package's version says which code ran
        "arena_version": versions["regret-arena"],
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
        record["version"] = _distribution_version(reg.distribution)
        out[kind] = record
    return out


@functools.cache
def _distribution_version(distribution: str) -> str:
    """An installed distribution's version, read once per process (as the registry reads its
    entry points)."""
    try:
        return metadata.version(distribution)
    except (metadata.PackageNotFoundError, ValueError):
        return "not installed"


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
    ``results.parquet`` without one is refused, before any round is played, and so is a folder, a
    manifest or a results file that is a symbolic link (it would be read, then replaced, outside
    the folder).
    """
    out_dir = Path(out_dir)
    if out_dir.is_symlink():
        raise _folder_error(
            f"{out_dir} is a symbolic link; the arena writes only into a real folder"
        )
    refuse_symlinks(out_dir, "manifest.json", "results.parquet")
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
    """Render :func:`summarize` output as an aligned text table (one row per metric/param).

    Each game's block opens with the player, the adversary and the game's N, T and R (R: the
    replicates summarized, the ``n`` of its rows); the metric column is as wide as its longest
    name, so long names (``bound:window_pseudo_regret``) keep the columns aligned.

    Examples
    --------
    >>> summary = pd.DataFrame({"player": ["hedge"], "adversary": ["bernoulli"], "n_actions": [3],
    ...     "horizon": [50], "metric": ["regret"], "param": [math.nan], "mean": [1.5],
    ...     "ci_low": [1.0], "ci_high": [2.0], "n": [4]})
    >>> print(format_summary(summary))
    hedge vs bernoulli (N = 3, T = 50, R = 4)
    metric param   mean                        95% CI     n
    regret       1.5000  [      1.0000,       2.0000]     4
    """
    lines = []
    width = max([len("metric"), *(len(str(m)) for m in summary["metric"])])
    for (player, adversary), part in summary.groupby(["player", "adversary"], sort=False):
        game = _game_sizes(part)
        lines.append(f"{player} vs {adversary}{game}")
        mean_width = max(6, *(len(f"{m:.4f}") for m in part["mean"]))
        param_width = max(5, *(len(_param_text(p)) for p in part["param"]))
        header = (
            f"{'metric':<{width}} {'param':>{param_width}} {'mean':>{mean_width}} "
            f"{'95% CI':>29} {'n':>5}"
        )
        lines.append(header)
        for row in part.itertuples():
            ci = "" if math.isnan(row.ci_low) else f"[{row.ci_low:12.4f}, {row.ci_high:12.4f}]"
            lines.append(
                f"{row.metric:<{width}} {_param_text(row.param):>{param_width}} "
                f"{row.mean:{mean_width}.4f} {ci:>29} {row.n:5d}"
            )
    return "\n".join(lines)


def _param_text(param: float) -> str:
    return "" if math.isnan(param) else f"{param:g}"


def _game_sizes(part: pd.DataFrame) -> str:
    """`` (N = 3, T = 50, R = 4)`` for one game's summary rows (what varies shows as a range)."""

    def one(column: str) -> str | None:
        if column not in part:
            return None
        values = sorted({int(v) for v in part[column].dropna()})
        if not values:
            return None
        return str(values[0]) if len(values) == 1 else f"{values[0]}–{values[-1]}"

    sizes = [(label, one(column)) for label, column in (("N", "n_actions"), ("T", "horizon"))]
    sizes.append(("R", one("n")))
    text = ", ".join(f"{label} = {value}" for label, value in sizes if value is not None)
    return f" ({text})" if text else ""
