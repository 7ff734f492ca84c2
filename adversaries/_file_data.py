"""What the example streams share to read a user's file or a source's dataset by name.

``dataset_stream``, ``multiclass_dataset_stream`` and ``boosting_oracle`` take ``dataset=file``
with ``path=FILE``, or a name of the sources' catalog (:mod:`arena.data.catalog`, e.g. ``a9a``)
found in ``data_dir`` (or ``ARENA_DATA_DIR``) or read from ``path``, checked against its
published shape. The file is read once per process (:func:`arena.data.files.read_examples`) and
its preprocessed features once per set of options (:func:`prepared`), so replicates and games
share one copy; sparse features stay sparse until a block of rounds is emitted
(:func:`arena.data.files.take_rows`).
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
    with_intercept,
)
from arena.errors import ConfigError
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
    if sp.issparse(X):
        for a in (X.data, X.indices, X.indptr):
            a.flags.writeable = False
    elif X.flags.writeable:
        X.flags.writeable = False


def stream_footprint(
    component, X: Any, y: np.ndarray, n_rep: int, n_train: int, m_test: int, chunk_rounds: int
) -> Footprint:
    """Return what a file stream holds: the data once (shared by replicates and games, never
    copied per replicate; the file's examples and the preprocessed copy when ``standardize`` or
    ``intercept`` makes one), the replicates' permutations, the densified blocks of rounds (the
    kept block and the copy handed out, of ``max(chunk_rounds·R·d, 2¹⁸)`` values each) and the
    densified test split."""
    d = int(X.shape[1])
    raw = examples(component)
    data = stored_bytes(X) + y.nbytes + raw.y.nbytes  # the mapped labels and the file's
    if raw.X is not X:  # standardized or with an intercept: the file's copy is kept too
        data += stored_bytes(raw.X)
    block = 2 * 8 * max(chunk_rounds * n_rep * d, 2**18)
    perms = 8 * n_rep * n_train * (2 if m_test else 1)
    test = 8 * n_rep * m_test * (d + 1)
    kind = "sparse CSR" if sp.issparse(X) else "dense"
    what = (
        f"the examples of {component.dataset} ({X.shape[0]} × {d}, {kind}: stored once), "
        f"{n_rep} replicates' permutations and blocks of {shape_text(n_rep, chunk_rounds, d)} "
        "densified rounds"
    )
    return Footprint(
        memory=float(data + block + perms + test),
        work=float(n_rep * d * 2),
        parameter=_culprit(component),
        what=what,
    )
