"""Reading example files (arena.data.files): every format gives the same examples, sparse stays
sparse, and a bad file is refused in one line naming the file, the line and the problem."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from arena.data import files
from arena.data.files import DataFileError, read_examples, save_examples

FORMATS = (
    "d.svm",
    "d.txt.gz",
    "d.svm.bz2",
    "d.libsvm.xz",
    "d",
    "d.csv",
    "d.csv.gz",
    "d.parquet",
    "d.npz",
    "d_sparse.npz",
)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = sp.random(60, 9, density=0.3, random_state=rng, format="csr")
    X.data = np.round(X.data * 8 - 4, 3)  # some negative values, exact in text
    y = rng.choice([-1.0, 1.0], size=60)
    return X, y


def write(folder, name, X, y):
    sparse = name.endswith(("_sparse.npz",)) or files.file_format(name) == "svmlight"
    return save_examples(folder / name, X if sparse else X.toarray(), y)


@pytest.mark.parametrize("name", FORMATS)
def test_every_format_reads_the_same_examples(tmp_path, data, name):
    X, y = data
    ex = read_examples(write(tmp_path, name, X, y))
    dense = ex.X.toarray() if ex.sparse else np.asarray(ex.X)
    np.testing.assert_array_equal(dense, X.toarray())
    np.testing.assert_array_equal(ex.y, y)
    assert ex.sparse == (files.file_format(name) == "svmlight" or name.endswith("_sparse.npz"))
    arrays = (ex.X.data, ex.X.indices, ex.X.indptr) if ex.sparse else (ex.X,)
    assert not any(a.flags.writeable for a in (*arrays, ex.y))


def test_a_dense_npz_is_memory_mapped_unless_compressed(tmp_path, data):
    X, y = data
    mapped = read_examples(save_examples(tmp_path / "m.npz", X.toarray(), y))
    packed = read_examples(save_examples(tmp_path / "p.npz", X.toarray(), y, compress=True))
    assert isinstance(mapped.X, np.memmap) and not isinstance(packed.X, np.memmap)
    np.testing.assert_array_equal(np.asarray(mapped.X), packed.X)


def test_a_file_is_read_once_and_reread_when_it_changes(tmp_path, data):
    X, y = data
    path = write(tmp_path, "c.svm", X, y)
    first = read_examples(path)
    assert read_examples(path) is first
    save_examples(path, X[:10], y[:10])
    os.utime(path, ns=(first_ns := os.stat(path).st_mtime_ns + 10**9, first_ns))
    again = read_examples(path)
    assert again is not first and again.n_examples == 10


BAD_SVMLIGHT = [
    ("1 1:1\n-1 0:1\n", "line 2: feature index 0 (svmlight indices start at 1)"),
    ("1 1:1\n-1 2:x\n", "line 2: value 'x' of feature 2 is not a number"),
    ("1 1:1 2:2 2:3\n", "line 1: duplicate feature index 2"),
    ("1 3:1 2:2\n", "line 1: feature index 2 after 3 (indices must ascend)"),
    ("# head\n\nyes 1:1\n", "line 3: label 'yes' is not a number"),
    ("1 1:1\n1 7\n", "line 2: '7' is not index:value"),
    ("1 1:1\n1 1:nan\n", "line 2: value 'nan' of feature 1 is not finite"),
    ("1 a:1\n", "line 1: feature index 'a' is not an integer"),
]


@pytest.mark.parametrize(("text", "problem"), BAD_SVMLIGHT)
@pytest.mark.parametrize("name", ["a9a.txt", "a9a.gz"])
def test_a_bad_svmlight_line_is_named(tmp_path, text, problem, name):
    path = tmp_path / name
    opener = files.COMPRESSIONS.get(path.suffix, open)
    with opener(path, "wb") as fh:
        fh.write(text.encode())
    with pytest.raises(DataFileError) as err:
        read_examples(path)
    assert str(err.value) == f"{path} {problem}"
    assert "\n" not in str(err.value)


BAD_CSV = [
    ("a,b,y\n1,2,1\n3,4\n", "line 3: 2 fields, expected 3 (as in line 1)"),
    ("1,2,1\n3,4,5,6\n", "line 2: 4 fields, expected 3 (as in line 1)"),
    ("a,b,y\n1,2,1\n\n3,oops,1\n", "line 4: 'oops' in column 1 is not a number"),
    ("1,2,1\n3,,1\n", "line 2: column 1 is empty (a missing value)"),
    ("1,2,1\n3,inf,1\n", "line 2: 'inf' in column 1 is not finite"),
]


@pytest.mark.parametrize(("text", "problem"), BAD_CSV)
def test_a_bad_csv_line_is_named(tmp_path, text, problem):
    path = tmp_path / "d.csv"
    path.write_text(text)
    with pytest.raises(DataFileError) as err:
        read_examples(path)
    assert str(err.value) == f"{path} {problem}"


def test_the_label_column_by_name_or_index(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("x1,y,x2\n1,5,2\n3,6,4\n")
    by_name, by_index = read_examples(path, "y"), read_examples(path, 1)
    assert by_name.y.tolist() == by_index.y.tolist() == [5.0, 6.0]
    assert np.asarray(by_name.X).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert read_examples(path, -1).y.tolist() == [2.0, 4.0]
    with pytest.raises(DataFileError, match=r"no column 'label' \(columns: x1, y, x2\)"):
        read_examples(path, "label")
    bare = tmp_path / "bare.csv"
    bare.write_text("1,2\n3,4\n")
    with pytest.raises(DataFileError, match="has no header row"):
        read_examples(bare, "y")
    with pytest.raises(DataFileError, match="label_column 5 is out of range"):
        read_examples(bare, 5)


def test_bad_parquet_and_npz_files_name_the_row(tmp_path):
    path = tmp_path / "d.parquet"
    pd.DataFrame({"label": [1.0, -1.0, 1.0], "x": [0.5, None, 2.0]}).to_parquet(path)
    with pytest.raises(DataFileError, match=r"d.parquet row 2: column 'x' is null"):
        read_examples(path)
    pd.DataFrame({"label": [1.0], "x": ["a"]}).to_parquet(path)
    with pytest.raises(DataFileError, match=r"column 'x' holds (object|str) values, not numbers"):
        read_examples(path)
    npz = tmp_path / "d.npz"
    np.savez(npz, X=np.array([[1.0, 2.0], [np.inf, 0.0]]), y=np.array([1.0, 2.0]))
    with pytest.raises(DataFileError, match=r"d.npz row 2: X column 0 is inf, not finite"):
        read_examples(npz)
    np.savez(npz, features=np.ones((2, 2)))
    with pytest.raises(DataFileError, match=r"holds arrays \['features'\]; expected X and y"):
        read_examples(npz)
    np.savez(npz, X=np.ones((2, 2)), y=np.ones(3))
    with pytest.raises(DataFileError, match=r"X must be \(n, d\) and y \(n,\)"):
        read_examples(npz)


def test_a_compressed_binary_format_and_a_missing_file_are_refused(tmp_path):
    with pytest.raises(DataFileError, match="decompress it first"):
        (tmp_path / "d.npz.gz").write_bytes(b"x")
        read_examples(tmp_path / "d.npz.gz")
    with pytest.raises(DataFileError, match="cannot read it"):
        read_examples(tmp_path / "absent.svm")
    with pytest.raises(DataFileError, match="holds no example"):
        (tmp_path / "empty.svm").write_text("# nothing\n")
        read_examples(tmp_path / "empty.svm")


def test_binary_labels_map_and_name_the_line_of_an_unmapped_label(tmp_path):
    path = tmp_path / "d.svm"
    path.write_text("# comment\n2 1:1\n4 1:2\n\n3 1:3\n")
    ex = read_examples(path)
    assert files.binary_labels(ex, [4], None).tolist() == [-1.0, 1.0, -1.0]
    assert files.binary_labels(ex, [4, 3], [2]).tolist() == [-1.0, 1.0, 1.0]
    with pytest.raises(DataFileError) as err:
        files.binary_labels(ex, [4], [2])
    assert (
        str(err.value)
        == f"{path} line 5: label 3 is not in the mapping (positive [4], negative [2])"
    )
    with pytest.raises(DataFileError, match=r"holds 3 distinct labels \(2, 3, 4\)"):
        files.binary_labels(ex, None, None)


def test_class_labels_follow_the_given_order_and_name_an_unlisted_label(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("y,x\n7,1\n3,2\n\n9,3\n")
    ex = read_examples(path, "y")
    y, k = files.class_labels(ex, None)
    assert y.tolist() == [1.0, 0.0, 2.0] and k == 3
    y, k = files.class_labels(ex, [9, 7, 3])
    assert y.tolist() == [1.0, 2.0, 0.0] and k == 3
    with pytest.raises(DataFileError) as err:
        files.class_labels(ex, [7, 3])
    assert str(err.value) == f"{path} line 5: label 9 is not in classes [7, 3]"


def test_standardization_scales_without_centring_alike_in_every_format():
    X = sp.csr_matrix(np.array([[0.0, 2.0], [4.0, 0.0], [0.0, 2.0], [0.0, 0.0]]))
    Z = files.standardized(X)
    assert sp.issparse(Z) and Z.nnz == X.nnz  # no zero filled in
    np.testing.assert_allclose(Z.toarray().std(axis=0), [1.0, 1.0])
    np.testing.assert_allclose(Z.toarray() * X.toarray().std(axis=0), X.toarray())
    np.testing.assert_array_equal(files.standardized(X.toarray()), Z.toarray())
    np.testing.assert_array_equal(files.column_scales(np.ones((3, 2))), [1.0, 1.0])


def test_take_rows_densifies_only_the_rows_asked(data):
    X, _ = data
    idx = np.array([[3, 3, 59], [0, 1, 2]])
    block = files.take_rows(X, idx)
    assert block.shape == (2, 3, 9)
    np.testing.assert_array_equal(block, X.toarray()[idx])
    dense = X.toarray()
    for stat in (files.row_norms, files.row_abs_sums, files.row_abs_max):  # bitwise alike
        np.testing.assert_array_equal(stat(X), stat(dense))
    np.testing.assert_allclose(files.row_norms(X), np.linalg.norm(dense, axis=1), rtol=1e-15)
    np.testing.assert_allclose(files.row_abs_sums(X), np.abs(dense).sum(axis=1), rtol=1e-15)
