"""Example files as researchers have them: svmlight/LIBSVM text, CSV, Parquet and ``.npz``.

One reader, :func:`read_examples`, turns a file into :class:`Examples`: the features (a SciPy CSR
matrix when the file is sparse — svmlight text, a sparse ``.npz` — a read-only ndarray when it is
dense) and the raw labels, read once and cached per (path, size, modification time, label
column), so every replicate, every game of a tournament in this process and every stream that
names the file share one copy. A bad file is refused with one line naming the file, the line (or
row) and the problem (:class:`DataFileError`); where the fast reader fails without saying where,
a careful line-by-line scan finds the first bad line. Nothing is ever downloaded.

Formats, by the file name's suffix (after a compression suffix ``.gz``, ``.bz2`` or ``.xz``):

- ``.csv``: one example per line, numeric fields only; a header row is recognized by a field that
  is not a number. The label is the column ``label_column`` (None: the first).
- ``.parquet`` / ``.pq`` (not compressed outside Parquet's own codecs): numeric columns, no nulls;
  the label is the column ``label_column`` (None: the first).
- ``.npz`` (not compressed outside): **dense** — arrays ``X`` (n, d) and ``y`` (n,), as
  ``numpy.savez(path, X=X, y=y)`` writes them (``X`` is memory-mapped when stored uncompressed,
  float64 and C-ordered); **sparse** — the arrays ``scipy.sparse.save_npz`` writes (``format``,
  ``shape``, ``data``, ``indices``, ``indptr``) plus ``y``. :func:`save_examples` writes both.
- anything else (``.svm``, ``.svmlight``, ``.libsvm``, ``.txt``, ``.t``, none): svmlight/LIBSVM
  text, ``label index:value ...`` with indices starting at 1 and ascending, ``#`` comments and
  ``qid:`` tokens allowed (read by scikit-learn's ``load_svmlight_file``).
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
import math
import os
import zipfile
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numba import njit

COMPRESSIONS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
"""Compression suffixes of text files and the openers that decompress them."""

CSV_SUFFIXES = (".csv",)
PARQUET_SUFFIXES = (".parquet", ".pq")
NPZ_SUFFIXES = (".npz",)
SPARSE_NPZ_KEYS = frozenset({"format", "shape", "data", "indices", "indptr"})
"""The arrays ``scipy.sparse.save_npz`` writes."""

CACHE_SIZE = 4
"""Files kept in memory at once (the most recently read ones)."""


class DataFileError(ValueError):
    """A file that cannot be read as examples: the message is one line naming the file, the line
    (or row) and the problem; a stream reports it as a :class:`~arena.errors.ConfigError` on its
    ``path`` (or ``dataset``) parameter."""


@dataclass(frozen=True, eq=False)
class Examples:
    """The examples of one file: features, raw labels and where they came from.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix or ndarray, shape (n, d)
        The features, float64, read-only: CSR when the file is sparse (svmlight, sparse ``.npz``),
        an ndarray (memory-mapped where possible) when it is dense.
    y : ndarray, shape (n,)
        The labels as the file writes them (float64, read-only).
    path : str
        The file.
    format : {"svmlight", "csv", "parquet", "npz"}
    header : int
        Lines before the first example that are not examples (a CSV header: 1).

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "toy.svm"
    >>> _ = p.write_text("1 1:0.5 3:2\\n-1 2:1\\n")
    >>> ex = read_examples(p)
    >>> ex.X.shape, ex.sparse, ex.y.tolist(), ex.X.toarray()[0].tolist()
    ((2, 3), True, [1.0, -1.0], [0.5, 0.0, 2.0])
    """

    X: Any
    y: np.ndarray
    path: str
    format: str
    header: int = 0

    @property
    def sparse(self) -> bool:
        """Whether the features are held as a sparse matrix."""
        return sp.issparse(self.X)

    @property
    def n_examples(self) -> int:
        """The number of examples n."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """The number of features d (svmlight: the largest index in the file)."""
        return int(self.X.shape[1])

    @property
    def nbytes(self) -> int:
        """Bytes the stored examples take (a memory-mapped array counts in full)."""
        return int(stored_bytes(self.X) + self.y.nbytes)

    def where(self, row: int) -> str:
        """Return ``"FILE line L"`` (text files) or ``"FILE row R"`` of example ``row`` (0-based).

        Examples
        --------
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "toy.svm"
        >>> _ = p.write_text("# a comment\\n1 1:1\\n\\n-1 1:2\\n")
        >>> read_examples(p).where(1)
        '... line 4'
        """
        if self.format in ("parquet", "npz"):
            return f"{self.path} row {row + 1}"
        return f"{self.path} line {_line_of_example(self.path, self.format, row, self.header)}"


def stored_bytes(X: Any) -> int:
    """Return the bytes a feature matrix holds: CSR's three arrays, or the dense array's.

    Examples
    --------
    >>> stored_bytes(sp.csr_matrix(np.eye(3)))  # 3 values, 3 int32 indices, 4 int32 pointers
    52
    """
    if sp.issparse(X):
        return int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)
    return int(X.nbytes)


# ----------------------------------------------------------------------------------------------
# reading


_CACHE: OrderedDict[tuple, Examples] = OrderedDict()


def file_format(path: str | Path) -> str:
    """Return the format a file name says: ``svmlight``, ``csv``, ``parquet`` or ``npz``.

    Examples
    --------
    >>> [file_format(n) for n in ("a9a.txt.bz2", "x.csv.gz", "x.npz", "a9a")]
    ['svmlight', 'csv', 'npz', 'svmlight']
    """
    name = Path(path).name.lower()
    for suffix in COMPRESSIONS:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(NPZ_SUFFIXES):
        return "npz"
    return "svmlight"


def _compression(path: str | Path) -> str | None:
    suffix = Path(path).suffix.lower()
    return suffix if suffix in COMPRESSIONS else None


def open_binary(path: str | Path):
    """Open a file for reading bytes, decompressing ``.gz``, ``.bz2`` and ``.xz``."""
    opener = COMPRESSIONS.get(_compression(path) or "", open)
    return opener(path, "rb")


def read_examples(path: str | Path, label_column: str | int | None = None) -> Examples:
    """Return the examples of a file, read once and cached per (path, size, mtime, label column).

    Parameters
    ----------
    path : str or Path
        The file (format from its name: see the module's docstring).
    label_column : str, int or None
        CSV and Parquet only: the label's column, by header name or 0-based index (negative:
        from the end); None: the first column.

    Raises
    ------
    DataFileError
        One line naming the file, the line or row, and the problem.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "toy.csv"
    >>> _ = p.write_text("x1,x2,y\\n0.5,1,1\\n2,3,0\\n")
    >>> ex = read_examples(p, label_column="y")
    >>> ex.X.tolist(), ex.y.tolist(), ex.sparse
    ([[0.5, 1.0], [2.0, 3.0]], [1.0, 0.0], False)
    """
    path = str(path)
    try:
        stat = os.stat(path)
    except OSError as exc:
        raise DataFileError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    if not Path(path).is_file():
        raise DataFileError(f"{path}: not a file")
    fmt = file_format(path)
    key = (os.path.realpath(path), stat.st_size, stat.st_mtime_ns, fmt, label_column)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    if fmt != "csv" and fmt != "svmlight" and _compression(path):
        raise DataFileError(
            f"{path}: a {fmt} file is read as it is (compression is inside the format); "
            "decompress it first"
        )
    if fmt in ("svmlight", "npz") and label_column is not None:
        raise DataFileError(
            f"{path}: label_column applies to CSV and Parquet files; a {fmt} file names its "
            "labels itself"
        )
    reader = {"svmlight": _read_svmlight, "csv": _read_csv, "parquet": _read_parquet}
    if fmt == "npz":
        examples = _read_npz(path)
    else:
        examples = reader[fmt](path, label_column) if fmt != "svmlight" else _read_svmlight(path)
    if examples.n_examples == 0:
        raise DataFileError(f"{path}: holds no example")
    _freeze(examples.X)
    examples.y.flags.writeable = False
    _CACHE[key] = examples
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return examples


def _freeze(X: Any) -> None:
    if sp.issparse(X):
        for a in (X.data, X.indices, X.indptr):
            a.flags.writeable = False
    elif X.flags.writeable:
        X.flags.writeable = False


# svmlight ---------------------------------------------------------------------------------------


def _read_svmlight(path: str) -> Examples:
    from sklearn.datasets import load_svmlight_file

    try:
        with open_binary(path) as fh:
            X, y = load_svmlight_file(fh, dtype=np.float64, zero_based=False)
    except (ValueError, OSError, EOFError, lzma.LZMAError) as exc:
        raise DataFileError(svmlight_problem(path) or f"{path}: {exc}") from exc
    if not (np.isfinite(X.data).all() and np.isfinite(y).all()):
        raise DataFileError(svmlight_problem(path) or f"{path}: holds a value that is not finite")
    X = sp.csr_matrix(X)
    X.sort_indices()
    return Examples(X=X, y=np.ascontiguousarray(y, dtype=np.float64), path=path, format="svmlight")


def _text_lines(path: str):
    """Yield ``(line number, bytes)`` of a (possibly compressed) text file."""
    with open_binary(path) as fh:
        yield from enumerate(fh, 1)


def svmlight_problem(path: str | Path) -> str | None:
    """Return ``"FILE line L: problem"`` for the first bad line of an svmlight file, or None.

    A careful line-by-line scan (the fast reader does not say where it failed): the label must
    be a finite number, every other token ``index:value`` (or ``qid:n``) with an integer index
    ≥ 1, indices strictly ascending, values finite numbers.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "a9a.txt"
    >>> _ = p.write_text("1 1:1 2:1\\n-1 0:1\\n")
    >>> svmlight_problem(p)
    '...a9a.txt line 2: feature index 0 (svmlight indices start at 1)'
    """
    path = str(path)
    try:
        for lineno, raw in _text_lines(path):
            problem = _svmlight_line_problem(raw)
            if problem:
                return f"{path} line {lineno}: {problem}"
    except UnicodeDecodeError:  # pragma: no cover - bytes are never decoded as a whole
        return None
    except (OSError, EOFError, lzma.LZMAError) as exc:
        return f"{path}: cannot decompress it ({exc})"
    return None


def _number(token: bytes) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def _show(token: bytes) -> str:
    return repr(token.decode("utf-8", "replace"))


def _svmlight_line_problem(raw: bytes) -> str | None:
    text = raw.split(b"#", 1)[0].strip()
    if not text:
        return None
    tokens = text.split()
    label = _number(tokens[0])
    if label is None:
        return f"label {_show(tokens[0])} is not a number"
    if not math.isfinite(label):
        return f"label {_show(tokens[0])} is not finite"
    previous = 0
    for token in tokens[1:]:
        index, sep, value = token.partition(b":")
        if not sep:
            return f"{_show(token)} is not index:value"
        if index == b"qid":
            if not value.strip().lstrip(b"-").isdigit():
                return f"qid {_show(value)} is not an integer"
            continue
        try:
            i = int(index)
        except ValueError:
            return f"feature index {_show(index)} is not an integer"
        if i == 0:
            return "feature index 0 (svmlight indices start at 1)"
        if i < 0:
            return f"feature index {i} is negative (svmlight indices start at 1)"
        if i == previous:
            return f"duplicate feature index {i}"
        if i < previous:
            return f"feature index {i} after {previous} (indices must ascend)"
        previous = i
        v = _number(value)
        if v is None:
            return f"value {_show(value)} of feature {i} is not a number"
        if not math.isfinite(v):
            return f"value {_show(value)} of feature {i} is not finite"
    return None


# CSV --------------------------------------------------------------------------------------------


def _text_rows(path: str):
    """Yield ``(line number, fields)`` of a CSV file, blank lines skipped."""
    with open_binary(path) as fh:
        text = io.TextIOWrapper(fh, encoding="utf-8", errors="replace", newline="")
        reader = csv.reader(text)
        for row in reader:
            if row and any(f.strip() for f in row):
                yield reader.line_num, row


def _is_header(fields: Sequence[str]) -> bool:
    return any(_number(f.strip().encode()) is None for f in fields if f.strip())


def csv_problem(path: str | Path) -> str | None:
    """Return ``"FILE line L: problem"`` for the first bad line of a CSV file, or None.

    Every line must have as many fields as the first (the header, if its fields are not all
    numbers), and every field of an example must be a finite number.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "d.csv"
    >>> _ = p.write_text("a,b,y\\n1,2,1\\n3,4\\n")
    >>> csv_problem(p)
    '...d.csv line 3: 2 fields, expected 3 (as in line 1)'
    """
    path = str(path)
    expected = first = None
    try:
        for lineno, fields in _text_rows(path):
            if expected is None:
                expected, first = len(fields), lineno
                if _is_header(fields):
                    continue
            if len(fields) != expected:
                fields_text = f"{len(fields)} fields, expected {expected} (as in line {first})"
                return f"{path} line {lineno}: {fields_text}"
            for col, field in enumerate(fields):
                value = field.strip()
                if not value:
                    return f"{path} line {lineno}: column {col} is empty (a missing value)"
                v = _number(value.encode())
                if v is None:
                    return f"{path} line {lineno}: {value!r} in column {col} is not a number"
                if not math.isfinite(v):
                    return f"{path} line {lineno}: {value!r} in column {col} is not finite"
    except (OSError, EOFError, lzma.LZMAError, csv.Error) as exc:
        return f"{path}: cannot read it as CSV ({exc})"
    return None


def _label_index(path: str, columns: Sequence[Any], label_column: str | int | None, named: bool):
    """The 0-based position of the label column among ``columns``."""
    if label_column is None:
        return 0
    if isinstance(label_column, bool):
        raise DataFileError(f"{path}: label_column must be a column name or index")
    if isinstance(label_column, int | np.integer):
        k = int(label_column)
        if not -len(columns) <= k < len(columns):
            raise DataFileError(
                f"{path}: label_column {k} is out of range: the file has {len(columns)} columns"
            )
        return k % len(columns)
    if not named:
        raise DataFileError(
            f"{path}: label_column {label_column!r} names a column, but the file has no header "
            "row (give the column's 0-based index)"
        )
    names = [str(c) for c in columns]
    if str(label_column) not in names:
        shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
        raise DataFileError(f"{path}: no column {label_column!r} (columns: {shown})")
    return names.index(str(label_column))


def _read_csv(path: str, label_column: str | int | None) -> Examples:
    import pandas as pd

    header = False
    for _, fields in _text_rows(path):
        header = _is_header(fields)
        break
    try:
        frame = pd.read_csv(
            path, header=0 if header else None, skip_blank_lines=True, compression="infer"
        )
    except (ValueError, OSError, EOFError, lzma.LZMAError, pd.errors.ParserError) as exc:
        raise DataFileError(csv_problem(path) or f"{path}: {exc}") from exc
    numeric = all(pd.api.types.is_numeric_dtype(t) and t.kind != "b" for t in frame.dtypes)
    values = frame.to_numpy(dtype=np.float64) if numeric else None
    if values is None or not np.isfinite(values).all():
        raise DataFileError(csv_problem(path) or f"{path}: holds a value that is not a number")
    if values.shape[1] < 2:
        raise DataFileError(f"{path}: needs a label column and at least one feature column")
    k = _label_index(path, list(frame.columns), label_column, header)
    y = np.ascontiguousarray(values[:, k])
    X = np.ascontiguousarray(np.delete(values, k, axis=1))
    return Examples(X=X, y=y, path=path, format="csv", header=int(header))


def _line_of_example(path: str, fmt: str, row: int, header: int) -> int:
    """The line number of example ``row`` (0-based): blank and comment lines are not examples."""
    seen = -1
    if fmt == "csv":
        for lineno, _ in _text_rows(path):
            seen += 1
            if seen == row + header:
                return lineno
        return -1
    for lineno, raw in _text_lines(path):
        if raw.split(b"#", 1)[0].strip():
            seen += 1
            if seen == row:
                return lineno
    return -1


# Parquet ----------------------------------------------------------------------------------------


def _read_parquet(path: str, label_column: str | int | None) -> Examples:
    import pandas as pd

    try:
        frame = pd.read_parquet(path)
    except (ValueError, OSError, ImportError) as exc:
        raise DataFileError(f"{path}: cannot read it as Parquet ({exc})") from exc
    for col, dtype in zip(frame.columns, frame.dtypes, strict=True):
        if not pd.api.types.is_numeric_dtype(dtype) or dtype.kind == "b":
            raise DataFileError(f"{path}: column {col!r} holds {dtype} values, not numbers")
    values = frame.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(values)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        what = "null" if np.isnan(values[r, c]) else f"{values[r, c]}, not finite"
        raise DataFileError(f"{path} row {r + 1}: column {frame.columns[c]!r} is {what}")
    if values.shape[1] < 2:
        raise DataFileError(f"{path}: needs a label column and at least one feature column")
    k = _label_index(path, list(frame.columns), label_column, True)
    y = np.ascontiguousarray(values[:, k])
    X = np.ascontiguousarray(np.delete(values, k, axis=1))
    return Examples(X=X, y=y, path=path, format="parquet")


# npz --------------------------------------------------------------------------------------------


def _npz_memmap(path: str, name: str) -> np.ndarray | None:
    """Memory-map member ``name`` of an uncompressed ``.npz`` (float64, C order), else None."""
    try:
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo(f"{name}.npy")
        if info.compress_type != zipfile.ZIP_STORED:
            return None
        with open(path, "rb") as fh:
            fh.seek(info.header_offset)
            local = fh.read(30)
            n_name = int.from_bytes(local[26:28], "little")
            n_extra = int.from_bytes(local[28:30], "little")
            fh.seek(info.header_offset + 30 + n_name + n_extra)
            version = np.lib.format.read_magic(fh)
            reader = {
                (1, 0): np.lib.format.read_array_header_1_0,
                (2, 0): np.lib.format.read_array_header_2_0,
            }.get(version)
            if reader is None:
                return None
            shape, fortran, dtype = reader(fh)
            offset = fh.tell()
        if fortran or dtype != np.float64 or len(shape) != 2 or 0 in shape:
            return None
        return np.memmap(path, dtype=np.float64, mode="r", offset=offset, shape=shape)
    except (KeyError, OSError, ValueError, zipfile.BadZipFile):
        return None


def _read_npz(path: str) -> Examples:
    try:
        with np.load(path, allow_pickle=False) as archive:
            keys = set(archive.files)
            if "y" not in keys:
                raise DataFileError(_npz_layout(path, keys))
            y = np.asarray(archive["y"])
            if SPARSE_NPZ_KEYS <= keys:
                X = sp.load_npz(path).tocsr().astype(np.float64)
                X.sum_duplicates()
            elif "X" in keys:
                X = _npz_memmap(path, "X")
                if X is None:
                    X = np.asarray(archive["X"])
            else:
                raise DataFileError(_npz_layout(path, keys))
    except DataFileError:
        raise
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
        raise DataFileError(f"{path}: cannot read it as .npz ({exc})") from exc
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise DataFileError(f"{path}: X must be (n, d) and y (n,), got X {X.shape} and y {y.shape}")
    for name, a in (("X", X.data if sp.issparse(X) else X), ("y", y)):
        if a.dtype.kind not in "iuf":
            raise DataFileError(f"{path}: {name} holds {a.dtype} values, not real numbers")
    if not sp.issparse(X) and not isinstance(X, np.memmap):
        X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    finite = np.isfinite(X.data if sp.issparse(X) else X)
    if not finite.all():
        if sp.issparse(X):
            k = int(np.argmin(finite))
            r = int(np.searchsorted(X.indptr, k, side="right") - 1)
            where, value = f"column {int(X.indices[k])}", X.data[k]
        else:
            r, c = (int(v) for v in np.argwhere(~finite)[0])
            where, value = f"column {c}", X[r, c]
        raise DataFileError(f"{path} row {r + 1}: X {where} is {value}, not finite")
    if not np.isfinite(y).all():
        r = int(np.argmin(np.isfinite(y)))
        raise DataFileError(f"{path} row {r + 1}: label {y[r]} is not finite")
    return Examples(X=X, y=y, path=path, format="npz")


def _npz_layout(path: str, keys: set[str]) -> str:
    return (
        f"{path}: holds arrays {sorted(keys)}; expected X and y (dense examples) or the arrays "
        "of scipy.sparse.save_npz and y (sparse examples; arena.data.save_examples writes both)"
    )


# ----------------------------------------------------------------------------------------------
# writing (tests, conversions)


def save_examples(path: str | Path, X: Any, y: Any, *, compress: bool = False) -> Path:
    """Write examples in the format the file name says (the layouts :func:`read_examples` reads).

    svmlight (indices from 1, compressed by a ``.gz``/``.bz2``/``.xz`` suffix), CSV (header
    ``label,x1,...,xd``, the label first), Parquet (columns ``label, x1, ...``) or ``.npz``
    (dense ``X``, ``y``; or sparse: scipy's arrays and ``y``; ``compress``: zip-deflated, which
    cannot be memory-mapped).

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> X, y = sp.csr_matrix([[0.0, 1.5], [2.0, 0.0]]), np.array([1.0, -1.0])
    >>> same = [read_examples(save_examples(folder / n, X, y)) for n in ("a.svm.gz", "a.npz")]
    >>> [bool((e.X != X).nnz == 0) and e.y.tolist() == [1.0, -1.0] for e in same]
    [True, True]
    """
    path = Path(path)
    y = np.asarray(y, dtype=np.float64)
    fmt = file_format(path)
    if fmt == "npz":
        save = np.savez_compressed if compress else np.savez
        if sp.issparse(X):
            m = sp.csr_matrix(X)
            arrays = {
                "format": np.array(b"csr"),
                "shape": np.array(m.shape),
                "data": m.data,
                "indices": m.indices,
                "indptr": m.indptr,
            }
            save(path, y=y, **arrays)
        else:
            save(path, X=np.ascontiguousarray(X, dtype=np.float64), y=y)
        return path
    dense = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    if fmt in ("csv", "parquet"):
        import pandas as pd

        columns = {"label": y, **{f"x{j + 1}": dense[:, j] for j in range(dense.shape[1])}}
        frame = pd.DataFrame(columns)
        if fmt == "csv":
            frame.to_csv(path, index=False, float_format="%.17g")
        else:
            frame.to_parquet(path, index=False)
        return path
    from sklearn.datasets import dump_svmlight_file

    buffer = io.BytesIO()
    dump_svmlight_file(sp.csr_matrix(X), y, buffer, zero_based=False)
    opener = COMPRESSIONS.get(_compression(path) or "", open)
    with opener(path, "wb") as fh:
        fh.write(buffer.getvalue())
    return path


# ----------------------------------------------------------------------------------------------
# what a stream does with them


def take_rows(X: Any, idx: np.ndarray) -> np.ndarray:
    """Return the rows ``X[idx]`` as a dense float64 array of shape ``idx.shape + (d,)``.

    Sparse features are densified here only, for the rows asked: a stream holds its data
    sparse and densifies one block of rounds at a time.

    Examples
    --------
    >>> X = sp.csr_matrix([[0.0, 1.0], [2.0, 0.0]])
    >>> take_rows(X, np.array([[1, 0, 1]])).tolist()
    [[[2.0, 0.0], [0.0, 1.0], [2.0, 0.0]]]
    """
    idx = np.asarray(idx)
    if sp.issparse(X):
        d = X.shape[1]
        return X[idx.ravel()].toarray().reshape(*idx.shape, d)
    return np.asarray(X[idx], dtype=np.float64)


def take_sparse_rows(X: Any, idx: np.ndarray) -> sp.csr_matrix:
    """Return the rows ``X[idx]`` of a sparse matrix as CSR, one row per index in ``idx``'s
    C order (``idx.size`` rows): a block of rounds kept sparse, for consumers that work in
    O(nnz). Row ``k`` of the result is example ``idx.flat[k]``.

    Examples
    --------
    >>> X = sp.csr_matrix([[0.0, 1.0], [2.0, 0.0]])
    >>> take_sparse_rows(X, np.array([[1, 0]])).toarray().tolist()
    [[2.0, 0.0], [0.0, 1.0]]
    """
    return sp.csr_matrix(X)[np.asarray(idx).ravel()]


# The statistics below add the terms of a row (or a column) one at a time, in coordinate (or
# row) order, skipping zeros: adding 0.0 is exact, so a dense array and a sparse matrix of the
# same values give bitwise the same norms, bounds and scales, and the same file in any format
# plays the same game.


@njit(cache=True, nogil=True)
def _dense_row_sums(X, square):
    out = np.zeros(X.shape[0])
    for i in range(X.shape[0]):
        s = 0.0
        for j in range(X.shape[1]):
            v = X[i, j]
            if v != 0.0:
                s += v * v if square else abs(v)
        out[i] = s
    return out


@njit(cache=True, nogil=True)
def _csr_row_sums(indptr, data, square):
    n = indptr.shape[0] - 1
    out = np.zeros(n)
    for i in range(n):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            v = data[k]
            if v != 0.0:
                s += v * v if square else abs(v)
        out[i] = s
    return out


@njit(cache=True, nogil=True)
def _dense_column_moments(X):
    s1 = np.zeros(X.shape[1])
    s2 = np.zeros(X.shape[1])
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            v = X[i, j]
            if v != 0.0:
                s1[j] += v
                s2[j] += v * v
    return s1, s2


@njit(cache=True, nogil=True)
def _csr_column_moments(indptr, indices, data, d):
    s1 = np.zeros(d)
    s2 = np.zeros(d)
    for i in range(indptr.shape[0] - 1):
        for k in range(indptr[i], indptr[i + 1]):
            v = data[k]
            if v != 0.0:
                s1[indices[k]] += v
                s2[indices[k]] += v * v
    return s1, s2


def _row_sums(X: Any, square: bool) -> np.ndarray:
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        return _csr_row_sums(X.indptr, np.asarray(X.data, dtype=np.float64), square)
    return _dense_row_sums(np.asarray(X, dtype=np.float64), square)


def row_norms(X: Any) -> np.ndarray:
    """Return ``‖x_i‖₂`` of every row, bitwise the same for a dense and a sparse copy.

    Examples
    --------
    >>> row_norms(sp.csr_matrix([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [5.0, 0.0]
    """
    return np.sqrt(_row_sums(X, True))


def row_abs_sums(X: Any) -> np.ndarray:
    """Return ``‖x_i‖₁`` of every row, bitwise the same for a dense and a sparse copy.

    Examples
    --------
    >>> row_abs_sums(np.array([[3.0, -4.0]])).tolist()
    [7.0]
    """
    return _row_sums(X, False)


def row_abs_max(X: Any) -> np.ndarray:
    """Return ``‖x_i‖_∞`` of every row (dense or sparse).

    Examples
    --------
    >>> row_abs_max(sp.csr_matrix([[3.0, -4.0]])).tolist()
    [4.0]
    """
    if sp.issparse(X):
        return abs(X).max(axis=1).toarray().ravel()
    return np.abs(X).max(axis=1)


def column_scales(X: Any) -> np.ndarray:
    """Return each column's population standard deviation (1 for a constant column), computed
    bitwise alike for a dense and a sparse copy.

    Examples
    --------
    >>> column_scales(np.array([[2.0, 5.0], [0.0, 5.0]])).tolist()
    [1.0, 1.0]
    """
    n, d = X.shape
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        s1, s2 = _csr_column_moments(X.indptr, X.indices, np.asarray(X.data, np.float64), d)
    else:
        s1, s2 = _dense_column_moments(np.asarray(X, dtype=np.float64))
    mean = s1 / n
    sd = np.sqrt(np.maximum(s2 / n - mean * mean, 0.0))
    return np.where(sd > 0, sd, 1.0)


def standardized(X: Any) -> Any:
    """Return a file's features with every column divided by its standard deviation
    (:func:`column_scales`), **not centred**: centring would fill every zero of a sparse file,
    and one rule for every format makes the same examples the same game whatever the file.

    Examples
    --------
    >>> standardized(sp.csr_matrix([[2.0], [0.0]])).toarray().ravel().tolist()  # sd 1
    [2.0, 0.0]
    >>> standardized(np.array([[4.0], [0.0]])).ravel().tolist()  # sd 2
    [2.0, 0.0]
    """
    scale = 1.0 / column_scales(X)
    if sp.issparse(X):
        X = sp.csr_matrix(X, copy=True)
        X.data = X.data * scale[X.indices]
        return X
    return np.asarray(X, dtype=np.float64) * scale


def with_intercept(X: Any) -> Any:
    """Return the features with a constant last column 1 (sparse stays sparse)."""
    n = X.shape[0]
    if sp.issparse(X):
        return sp.hstack([X, np.ones((n, 1))], format="csr")
    return np.concatenate([np.asarray(X, dtype=np.float64), np.ones((n, 1))], axis=1)


def binary_labels(
    examples: Examples, positive: Sequence[float] | None, negative: Sequence[float] | None
) -> np.ndarray:
    """Return the labels mapped to ±1: ``positive`` → +1, ``negative`` → −1.

    ``positive`` None: the file must hold exactly two labels, the larger becomes +1 (−1/+1,
    0/1, 1/2 and 2/4 files read as expected). ``negative`` None: every label not in
    ``positive`` is −1; given, a label in neither list is refused naming its line.

    Examples
    --------
    >>> ex = Examples(np.zeros((3, 1)), np.array([2.0, 4.0, 2.0]), "f.csv", "npz")
    >>> binary_labels(ex, None, None).tolist(), binary_labels(ex, [2], None).tolist()
    ([-1.0, 1.0, -1.0], [1.0, -1.0, 1.0])
    """
    y = examples.y
    if positive is None:
        values = np.unique(y)
        if values.size != 2:
            shown = ", ".join(f"{v:g}" for v in values[:10]) + (", ..." if values.size > 10 else "")
            raise DataFileError(
                f"{examples.path}: holds {values.size} distinct labels ({shown}); a binary stream "
                "needs two, or positive=[...] naming the labels that become +1"
            )
        return np.where(y == values[1], 1.0, -1.0)
    pos = np.isin(y, np.asarray(list(positive), dtype=np.float64))
    if negative is not None:
        neg = np.isin(y, np.asarray(list(negative), dtype=np.float64))
        both = pos & neg
        if both.any():
            r = int(np.argmax(both))
            raise DataFileError(f"{examples.path}: label {y[r]:g} is in both positive and negative")
        neither = ~(pos | neg)
        if neither.any():
            r = int(np.argmax(neither))
            raise DataFileError(
                f"{examples.where(r)}: label {y[r]:g} is not in the mapping "
                f"(positive {_values(positive)}, negative {_values(negative)})"
            )
    return np.where(pos, 1.0, -1.0)


def _values(values: Sequence[float]) -> str:
    """Labels as messages show them: ``[4, 2.5]``."""
    return "[" + ", ".join(f"{float(v):g}" for v in values) + "]"


def class_labels(examples: Examples, classes: Sequence[float] | None) -> tuple[np.ndarray, int]:
    """Return the labels as class indices ``0 .. k−1`` and k: label ``classes[i]`` is class i
    (None: the file's distinct labels in increasing order); a label not in ``classes`` is
    refused naming its line.

    Examples
    --------
    >>> ex = Examples(np.zeros((3, 1)), np.array([7.0, 3.0, 7.0]), "f.csv", "npz")
    >>> class_labels(ex, None)[0].tolist(), class_labels(ex, [7, 3])[0].tolist()
    ([1.0, 0.0, 1.0], [0.0, 1.0, 0.0])
    """
    y = examples.y
    if classes is None:
        order = np.unique(y)
    else:
        order = np.asarray(list(classes), dtype=np.float64)
        if np.unique(order).size != order.size:
            raise DataFileError(f"classes {_values(classes)} lists a label twice")
    if order.size < 2:
        raise DataFileError(f"{examples.path}: a multiclass stream needs two labels or more")
    sorter = np.argsort(order, kind="stable")
    pos = np.searchsorted(order, y, sorter=sorter)
    pos = np.minimum(pos, order.size - 1)
    found = order[sorter[pos]] == y
    if not found.all():
        r = int(np.argmin(found))
        raise DataFileError(
            f"{examples.where(r)}: label {y[r]:g} is not in classes {_values(order)}"
        )
    return sorter[pos].astype(np.float64), int(order.size)


DIGEST_ROWS = 4096
"""Rows hashed at a time by :func:`examples_digest` (part of the digest's definition)."""


def examples_digest(examples: Examples) -> str:
    """Return the first 16 hex digits of a SHA-256 of the examples themselves, whatever the file
    format: the shape, then each block of :data:`DIGEST_ROWS` rows as CSR without explicit
    zeros (row lengths, column indices as int64, values as float64), then the labels.

    The same examples written as svmlight, CSV, Parquet or ``.npz`` have the same digest, so
    they play the same game; it is cached with the examples.

    Examples
    --------
    >>> a = Examples(np.array([[0.0, 2.0]]), np.array([1.0]), "a.csv", "csv")
    >>> b = Examples(sp.csr_matrix([[0.0, 2.0]]), np.array([1.0]), "a.svm", "svmlight")
    >>> examples_digest(a) == examples_digest(b)
    True
    """
    import hashlib

    cached = _EXAMPLE_DIGESTS.get(id(examples))
    if cached is not None and cached[0] is examples:
        return cached[1]
    h = hashlib.sha256()
    X = examples.X
    h.update(np.array(X.shape, dtype=np.int64).tobytes())
    for lo in range(0, X.shape[0], DIGEST_ROWS):
        block = sp.csr_matrix(X[lo : lo + DIGEST_ROWS], dtype=np.float64, copy=True)
        block.eliminate_zeros()
        block.sort_indices()
        h.update(np.diff(block.indptr).astype(np.int64).tobytes())
        h.update(block.indices.astype(np.int64).tobytes())
        h.update(block.data.astype(np.float64).tobytes())
    h.update(np.ascontiguousarray(examples.y, dtype=np.float64).tobytes())
    digest = h.hexdigest()[:16]
    _EXAMPLE_DIGESTS[id(examples)] = (examples, digest)
    while len(_EXAMPLE_DIGESTS) > CACHE_SIZE:
        _EXAMPLE_DIGESTS.pop(next(iter(_EXAMPLE_DIGESTS)))
    return digest


_EXAMPLE_DIGESTS: dict[int, tuple[Examples, str]] = {}


def file_identity(path: str | Path) -> str:
    """Return ``"PATH (N bytes, sha256 HEX16)"``: what a run's provenance records of a file
    (the digest is cached per path, size and modification time).

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "f.csv"
    >>> _ = p.write_text("0,1")
    >>> file_identity(p).endswith("(3 bytes, sha256 83b97b859aa5f81b)")
    True
    """
    from arena.base import file_digest

    stat = os.stat(path)
    key = (os.path.realpath(path), stat.st_size, stat.st_mtime_ns)
    digest = _DIGESTS.get(key)
    if digest is None:
        digest = _DIGESTS[key] = file_digest(path)
    return f"{path} ({stat.st_size} bytes, sha256 {digest})"


_DIGESTS: dict[tuple, str] = {}
