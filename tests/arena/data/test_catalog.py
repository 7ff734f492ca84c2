"""The sources' datasets by name (arena.data.catalog): the published shapes, the lookup in a data
folder or ARENA_DATA_DIR, and the refusal of a copy that does not match."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from arena.adversaries.dataset_stream import DatasetStream
from arena.adversaries.multiclass_dataset_stream import MulticlassDatasetStream
from arena.data.catalog import (
    CATALOG,
    DATA_DIR_VARIABLE,
    LUO,
    OGB,
    candidate_names,
    find_dataset,
)
from arena.data.files import DataFileError, save_examples
from arena.errors import ConfigError

# Luo 2016, Table D.1: examples, features (the 23 sets of §4.6)
TABLE_D1 = {
    "20news": (18845, 101631), "a9a": (48841, 123), "acoustic": (78823, 50),
    "adult": (48842, 105), "australian": (690, 14), "breast-cancer": (683, 10),
    "census": (299284, 401), "cod-rna": (271617, 8), "covtype": (581011, 54),
    "pima_diabetes": (768, 8), "gisette": (1000, 5000), "heart": (270, 13),
    "ijcnn1": (91701, 22), "ionosphere": (351, 34), "letter": (20000, 16),
    "magic04": (19020, 10), "mnist": (11791, 780), "mushrooms": (8124, 112),
    "rcv1": (781265, 43001), "real-sim": (72309, 20958), "splice": (1000, 60),
    "w1a": (2477, 300), "w8a": (49749, 300),
}  # fmt: skip
# Beygelzimer et al. 2015, Appendix B: instances, features, task
TABLE_OGB = {
    "a9a": (48841, 123, "classification"), "abalone": (4177, 10, "regression"),
    "activity": (165632, 20, "classification"), "adult": (48842, 105, "classification"),
    "bank": (45211, 45, "classification"), "cal_housing": (20640, 9, "regression"),
    "casp": (45730, 10, "regression"), "census": (299284, 401, "classification"),
    "covtype": (581011, 54, "classification"), "kddcup04_phy": (50000, 74, "classification"),
    "letter": (20000, 16, "classification"), "shuttle": (43500, 9, "classification"),
    "slice": (53500, 385, "regression"), "year": (463715, 90, "regression"),
}  # fmt: skip


def test_the_catalog_holds_both_tables():
    assert set(CATALOG) == set(TABLE_D1) | set(TABLE_OGB) and len(CATALOG) == 32
    for name, (n, d) in TABLE_D1.items():
        entry = CATALOG[name]
        assert (entry.examples, entry.features) == (n, d) and LUO in entry.cited
    for name, (n, d, task) in TABLE_OGB.items():
        entry = CATALOG[name]
        assert (entry.examples, entry.features, entry.task) == (n, d, task)
        assert OGB in entry.cited
    assert all(e.url.startswith("https://") and e.published for e in CATALOG.values())


def heart_like(folder, name="heart", n=270, d=13, labels=(-1.0, 1.0), seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.7, random_state=rng, format="lil")
    X[0, d - 1] = 1.0  # the largest index is d
    y = rng.choice(labels, size=n)
    return save_examples(folder / name, X, y)


def test_a_set_is_found_under_its_names_and_suffixes(tmp_path):
    path = heart_like(tmp_path, "heart_scale.bz2")
    assert find_dataset("heart", str(tmp_path)) == path
    names = candidate_names(CATALOG["heart"])
    assert names.index("heart.txt") < names.index("heart.npz") < names.index("heart_scale.bz2")
    heart_like(tmp_path, "heart.svm")  # the set's own name comes first
    assert find_dataset("heart", str(tmp_path)).name == "heart.svm"


def test_the_environment_variable_names_the_folders(tmp_path, monkeypatch):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    heart_like(second)
    monkeypatch.setenv(DATA_DIR_VARIABLE, f"{first}:{second}")
    assert find_dataset("heart") == second / "heart"
    adv = DatasetStream("heart")
    assert adv.resolve_dim(None) == 13 and adv.tags.protocol == "classification"
    with pytest.raises(DataFileError, match=r"heart is not in .*/elsewhere: looked for heart,"):
        find_dataset("heart", str(tmp_path / "elsewhere"))  # data_dir wins over the variable


def test_a_missing_set_says_where_to_get_it_and_where_it_was_looked_for(tmp_path, monkeypatch):
    monkeypatch.delenv(DATA_DIR_VARIABLE, raising=False)
    with pytest.raises(ConfigError) as err:
        DatasetStream("a9a", data_dir=str(tmp_path)).resolve_dim(None)
    message = str(err.value)
    assert message.startswith("adversary dataset_stream: parameter 'dataset': a9a is not in ")
    assert str(tmp_path) in message and "a9a.txt.gz" not in message  # names shown in short
    assert "libsvmtools/datasets/binary.html" in message and "nothing is downloaded" in message
    assert "\n" not in message
    with pytest.raises(ConfigError, match=f"give data_dir=DIR or set {DATA_DIR_VARIABLE}=DIR"):
        DatasetStream("abalone").resolve_dim(None)


def test_a_copy_of_another_shape_is_refused_with_what_was_expected(tmp_path):
    heart_like(tmp_path, n=269)
    with pytest.raises(ConfigError) as err:
        DatasetStream("heart", data_dir=str(tmp_path)).resolve_dim(None)
    message = str(err.value)
    assert "has 269 examples, not 270" in message
    assert "expected heart: 270 examples, ≤ 13 features" in message and "Luo 2016" in message
    assert "libsvmtools" in message and "check_shape=false" in message
    assert DatasetStream("heart", data_dir=str(tmp_path), check_shape=False).resolve_dim(None) == 13
    (tmp_path / "w").mkdir()
    wide = heart_like(tmp_path / "w", d=14)
    with pytest.raises(ConfigError, match="has 14 features, more than 13"):
        DatasetStream("heart", path=str(wide)).resolve_dim(None)
    one = heart_like(tmp_path / "w", name="one.svm", labels=(1.0,))
    with pytest.raises(ConfigError, match="has 1 distinct label; heart is binary"):
        DatasetStream("heart", path=str(one)).resolve_dim(None)
    # a label mapping decides the classes itself: the label count is not checked then
    assert DatasetStream("heart", path=str(one), positive=[1]).resolve_dim(None) == 13


def test_a_split_file_keeps_the_published_number_of_features(tmp_path):
    rng = np.random.default_rng(1)
    X = sp.random(270, 11, density=0.5, random_state=rng, format="csr")  # largest index ≤ 11
    save_examples(tmp_path / "heart", X, rng.choice([-1.0, 1.0], size=270))
    adv = DatasetStream("heart", data_dir=str(tmp_path), standardize=False)
    assert adv.resolve_dim(None) == 13
    multi = MulticlassDatasetStream("heart", data_dir=str(tmp_path), standardize=False)
    assert multi.resolve_dim(None) == 2 * 13


def test_a_regression_set_plays_the_regression_protocol(tmp_path):
    rng = np.random.default_rng(2)
    save_examples(tmp_path / "abalone.csv", rng.random((4177, 8)), rng.integers(1, 30, 4177))
    adv = DatasetStream("abalone", data_dir=str(tmp_path))
    assert adv.tags.protocol == "regression" and adv.declared_loss() == "squared"
    assert adv.resolve_dim(None) == 8


def test_the_docs_table_is_the_catalog():
    """docs/data.md lists every entry with the published counts (the page cannot drift)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[3] / "docs" / "data.md").read_text()
    listed = {}
    for line in text.splitlines():
        if line.startswith("| `") and line.count("|") == 10:
            cells = [c.strip() for c in line.strip("|").split("|")]
            listed[cells[0].strip("`")] = (
                int(cells[1].replace(",", "")),
                int(cells[2].replace(",", "")),
            )
    assert listed == {n: (e.examples, e.features) for n, e in CATALOG.items()}
