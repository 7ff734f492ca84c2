"""What the example streams share to read a user's file or a source's dataset by name.

``dataset_stream``, ``multiclass_dataset_stream`` and ``boosting_oracle`` take ``dataset=file``
with ``path=FILE``, or a name of the sources' catalog (:mod:`arena.data.catalog`, e.g. ``a9a``)
found in ``data_dir`` (or ``ARENA_DATA_DIR``) or read from ``path``, checked against its
published shape. The file is read once per process (:func:`arena.data.files.read_examples`) and
its preprocessed features once per set of options (:func:`prepared`), so replicates and games
share one copy; a sparse file's blocks of rounds are emitted as
:class:`~arena.oco.losses.SparseRows` (:func:`sparse_block`, O(nnz) per block), a dense file's
as arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from arena.base import Footprint, shape_text
from arena.data.catalog import CATALOG, CatalogEntry, find_dataset, shape_problem
from arena.data.files import (
    DataFileError,
    Examples,
    binary_labels,
    class_labels,
    examples_digest,
    file_identity,
    read_examples,
    standardized,
    stored_bytes,
    take_sparse_rows,
    with_intercept,
)
from arena.errors import ConfigError
from arena.oco.losses import SparseRows
from arena.params import Boolean, InstanceOf, Interval, IsNone, ListOf, OneOf

FILE = "file"
"""The ``dataset`` value of a user's file named by ``path``."""

TASKS = ("classification", "regression")

FILE_CONSTRAINTS: dict[str, list] = {
    "path": [InstanceOf(str, "the path of a data file"), IsNone()],
    "data_dir": [InstanceOf(str, "a folder"), IsNone()],
    "label_column": [
        InstanceOf(str, "a column name"),
        Interval(None, None, integer=True),
        IsNone(),
    ],
    "positive": [ListOf(Interval()), IsNone()],
    "negative": [ListOf(Interval()), IsNone()],
    "classes": [ListOf(Interval()), IsNone()],
    "task": [OneOf(*TASKS), IsNone()],
    "check_shape": [Boolean()],
}
"""The declared constraints of the file parameters (each stream takes those it uses)."""

FILE_DEFAULTS: dict[str, Any] = {
    "path": None,
    "data_dir": None,
    "label_column": None,
    "positive": None,
    "negative": None,
    "classes": None,
    "task": None,
    "check_shape": True,
}
"""Their defaults: a stream that keeps them plays the stream (and has the keys) it had before
they existed."""

LOCATION = frozenset({"path", "data_dir"})
"""Where the file is, which the content digest of ``data_identity`` stands for in the keys."""


def is_file_data(dataset: str) -> bool:
    """Whether ``dataset`` reads a file: ``file`` or a catalog name."""
    return dataset == FILE or dataset in CATALOG


def keyed_params(component, params: dict[str, Any]) -> dict[str, Any]:
    """Drop from ``params`` the file parameters at their defaults (so that the keys of bundled
    and generated streams stay what they were) and the file's location (the digest of
    :func:`data_identity` identifies the data, so a copy in another folder is the same game)."""
    out = {}
    for k, v in params.items():
        if k in LOCATION:
            continue
        if k in FILE_DEFAULTS and _same(v, FILE_DEFAULTS[k]):
            continue
        out[k] = v
    return out


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    return a == b


def catalog_entry(component) -> CatalogEntry | None:
    """The catalog entry a component's ``dataset`` names (None for ``file``)."""
    return CATALOG.get(component.dataset)


def file_path(component) -> str:
    """Return the file a component reads: ``path``, or the catalog set found in its data folder.

    Raises
    ------
    ConfigError
        ``dataset=file`` without ``path``; a catalog set not found (where it is published, where
        it was looked for).
    """
    who = component.label()
    if component.path is not None:
        return str(Path(component.path).expanduser())
    if component.dataset == FILE:
        raise ConfigError(who, "path", "dataset=file reads the file named by path=FILE")
    try:
        return str(find_dataset(component.dataset, component.data_dir))
    except DataFileError as exc:
        raise ConfigError(who, "dataset", str(exc)) from exc


def check_location(component, bundled: Sequence[str]) -> None:
    """Refuse ``path`` or ``data_dir`` given with a bundled dataset (they would be ignored)."""
    if component.dataset in bundled:
        for name in ("path", "data_dir"):
            if getattr(component, name) is not None:
                raise ConfigError(
                    component.label(),
                    name,
                    f"dataset={component.dataset} is bundled; a file is read with dataset=file "
                    "and path=FILE, or a catalog name (e.g. a9a) with data_dir=DIR or path=FILE",
                )


def examples(component) -> Examples:
    """Return the raw examples of a component's file (read once, cached)."""
    path = file_path(component)
    label_column = getattr(component, "label_column", None)
    try:
        return read_examples(path, label_column)
    except DataFileError as exc:
        raise ConfigError(component.label(), _culprit(component), str(exc)) from exc


def _culprit(component) -> str:
    return "path" if component.path is not None else "dataset"


def check_catalog(component, ex: Examples, n_labels: int | None) -> None:
    """Refuse a catalog set whose copy does not match the published shape (unless
    ``check_shape=false``), naming what was expected and where the set is published."""
    entry = catalog_entry(component)
    if entry is None or not component.check_shape:
        return
    problem = shape_problem(entry, ex, n_labels)
    if problem:
        raise ConfigError(
            component.label(),
            _culprit(component),
            f"{ex.path} {problem}: expected {entry.describe()}; give check_shape=false to use "
            "this copy as it is",
        )


def with_declared_features(component, X: Any) -> Any:
    """Widen a sparse copy of a catalog set to its published number of features (a split file
    whose largest index is smaller keeps the published d); no copy of the data is made."""
    entry = catalog_entry(component)
    if entry is None or not sp.issparse(X) or X.shape[1] >= entry.features:
        return X
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], entry.features))


def data_identity(component) -> dict[str, str]:
    """Return the identity of a component's data for the game key: the dataset and the digest of
    the examples themselves (:func:`arena.data.files.examples_digest`), so the same examples in
    another folder or another format play the same game, and an edited file another one."""
    ex = examples(component)
    shape = f"{ex.n_examples} × {ex.n_features}"
    return {"dataset": f"{component.dataset}: examples sha256 {examples_digest(ex)} ({shape})"}


def data_provenance(component) -> dict[str, str]:
    """Return the file a component read, for the manifest: its path, size and SHA-256."""
    return {"path": file_identity(file_path(component))}


def _key(component) -> tuple:
    import os

    path = file_path(component)
    stat = os.stat(path) if Path(path).is_file() else None
    return (os.path.realpath(path), stat.st_size if stat else -1, stat.st_mtime_ns if stat else -1)


def _tuple(values: Sequence[float] | None) -> tuple[float, ...] | None:
    return None if values is None else tuple(float(v) for v in values)


def binary_or_regression(
    component, task: str, standardize: bool, intercept: bool
) -> tuple[Any, np.ndarray]:
    """Return the preprocessed ``(X, y)`` of a ``dataset_stream`` / ``boosting_oracle`` file:
    labels ±1 (classification, through ``positive`` / ``negative``) or the target as is
    (regression), standardized and with an intercept as asked; checked against the catalog."""
    ex = examples(component)
    positive = _tuple(getattr(component, "positive", None))
    negative = _tuple(getattr(component, "negative", None))
    n_labels = None
    if task == "classification" and positive is None:
        n_labels = int(np.unique(ex.y).size)
    check_catalog(component, ex, n_labels)
    try:
        return _prepared(
            _key(component),
            getattr(component, "label_column", None),
            task,
            positive,
            negative,
            standardize,
            intercept,
            catalog_entry(component).features if catalog_entry(component) else 0,
        )
    except DataFileError as exc:
        raise ConfigError(component.label(), _label_culprit(component), str(exc)) from exc


def _label_culprit(component) -> str:
    if getattr(component, "classes", None) is not None:
        return "classes"
    if getattr(component, "positive", None) is not None:
        return "positive"
    return _culprit(component)


@lru_cache(maxsize=4)
def _prepared(key, label_column, task, positive, negative, standardize, intercept, features):
    ex = read_examples(key[0], label_column)
    X = ex.X
    if sp.issparse(X) and X.shape[1] < features:
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], features))
    if task == "classification":
        y = binary_labels(ex, positive, negative)
    else:
        y = np.array(ex.y, dtype=np.float64)
    if standardize:
        X = standardized(X)
        if task == "regression":
            sd = y.std()
            y = (y - y.mean()) / (sd if sd > 0 else 1.0)
    if intercept:
        X = with_intercept(X)
    _freeze(X)
    y.flags.writeable = False
    return X, y


@lru_cache(maxsize=4)
def _prepared_multiclass(key, label_column, classes, standardize, intercept, features):
    ex = read_examples(key[0], label_column)
    X = ex.X
    if sp.issparse(X) and X.shape[1] < features:
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], features))
    y, k = class_labels(ex, classes)
    if standardize:
        X = standardized(X)
    if intercept:
        X = with_intercept(X)
    _freeze(X)
    y.flags.writeable = False
    return X, y, k


def multiclass(component, standardize: bool, intercept: bool) -> tuple[Any, np.ndarray, int]:
    """Return the preprocessed ``(X, y, k)`` of a ``multiclass_dataset_stream`` file: labels
    ``0 .. k−1`` in the order ``classes`` gives (None: increasing)."""
    ex = examples(component)
    check_catalog(component, ex, None)
    entry = catalog_entry(component)
    try:
        return _prepared_multiclass(
            _key(component),
            getattr(component, "label_column", None),
            _tuple(component.classes),
            standardize,
            intercept,
            entry.features if entry else 0,
        )
    except DataFileError as exc:
        raise ConfigError(component.label(), _label_culprit(component), str(exc)) from exc


def _freeze(X: Any) -> None:
    if sp.issparse(X) and not X.has_canonical_format:  # sorted, no duplicates: SparseRows' form
        X.sum_duplicates()  # a copy made by standardized/with_intercept or the reader's own
    if sp.issparse(X):
        for a in (X.data, X.indices, X.indptr):
            a.flags.writeable = False
    elif X.flags.writeable:
        X.flags.writeable = False


def sparse_block(X: sp.csr_matrix, idx: np.ndarray) -> SparseRows:
    """Return the examples ``idx`` (R, n) of a canonical CSR matrix as a block of sparse rows
    of dense shape (R, n, d), in O(nnz of those rows): row ``r·n + j`` is example ``idx[r, j]``.

    Examples
    --------
    >>> X = sp.csr_matrix([[0.0, 1.0], [2.0, 0.0]])
    >>> block = sparse_block(X, np.array([[1, 0, 1]]))
    >>> block.shape, block.nnz, block.densify().tolist()
    ((1, 3, 2), 3, [[[2.0, 0.0], [0.0, 1.0], [2.0, 0.0]]])
    """
    idx = np.asarray(idx)
    return SparseRows.from_scipy(take_sparse_rows(X, idx), (*idx.shape, int(X.shape[1])))


def sparse_block_bytes(X: sp.csr_matrix, rows: int) -> int:
    """Return an upper bound on the bytes of ``rows`` sparse rows of ``X`` (:func:`sparse_block`):
    ``rows`` times the largest row's entries, at 16 bytes each (int64 index, float64 value), and
    the row pointers.

    Examples
    --------
    >>> sparse_block_bytes(sp.csr_matrix([[0.0, 1.0], [2.0, 3.0]]), 10)  # 10 · 2 · 16 + 11 · 8
    408
    """
    widest = int(np.diff(X.indptr).max()) if X.shape[0] else 0
    return int(rows) * widest * 16 + 8 * (int(rows) + 1)


def stream_footprint(
    component,
    X: Any,
    y: np.ndarray,
    n_rep: int,
    n_train: int,
    m_test: int,
    chunk_rounds: int,
    sparse_rows: bool = False,
) -> Footprint:
    """Return what a file stream holds: the data once (shared by replicates and games, never
    copied per replicate; the file's examples and the preprocessed copy when ``standardize`` or
    ``intercept`` makes one), the replicates' permutations, two blocks of rounds (the kept block
    and the copy handed out) and the test split.

    With ``sparse_rows`` (a sparse file emitting :class:`~arena.oco.losses.SparseRows`) a block
    and the test split are counted by their entries (:func:`sparse_block_bytes`, the widest row
    times the rows), not ``R·n·d``: the engine counts the densified rows a player without the tag
    ``sparse_input`` is shown (:func:`arena.oco.game.sparse_stream_check`). Otherwise the blocks
    are dense, ``max(chunk_rounds·R·d, 2¹⁸)`` values each, and so is the test split.
    """
    d = int(X.shape[1])
    raw = examples(component)
    data = stored_bytes(X) + y.nbytes + raw.y.nbytes  # the mapped labels and the file's
    if raw.X is not X:  # standardized or with an intercept: the file's copy is kept too
        data += stored_bytes(raw.X)
    perms = 8 * n_rep * n_train * (2 if m_test else 1)
    if sparse_rows:
        block = 2 * sparse_block_bytes(X, chunk_rounds * n_rep)
        test = sparse_block_bytes(X, n_rep * m_test) + 8 * n_rep * m_test if m_test else 0
        rows = "sparse rows of"
    else:
        block = 2 * 8 * max(chunk_rounds * n_rep * d, 2**18)
        test = 8 * n_rep * m_test * (d + 1)
        rows = "densified"
    kind = "sparse CSR" if sp.issparse(X) else "dense"
    what = (
        f"the examples of {component.dataset} ({X.shape[0]} × {d}, {kind}: stored once), "
        f"{n_rep} replicates' permutations and blocks of {shape_text(n_rep, chunk_rounds, d)} "
        f"{rows} rounds"
    )
    work = n_rep * 2 * (sparse_block_bytes(X, 1) // 16 if sparse_rows else d)
    return Footprint(
        memory=float(data + block + perms + test),
        work=float(work),
        parameter=_culprit(component),
        what=what,
    )
