"""The datasets of the sources, by name: their published shapes and where to get them.

The table holds every dataset whose shape the sources publish: the 23 of Luo 2016, thesis,
Appendix D, Table D.1 (examples, average non-zero features, features; the sets of §4.6 and part
of Chapter 3) and the 14 of Beygelzimer, Hazan, Kale & Luo 2015, "Online Gradient Boosting",
Appendix B (the sets of their §6 and of Luo 2016, §3.2.5 and Table D.2: instances, features,
features per example, task and label range), 32 in all (a9a, adult, census, covtype and letter
are in both, with the same counts). Where each set is published is our attribution: the sources
name only the collections (Luo 2016, §D.1: the UCI repository, the LIBSVM data sets and the HCRC
Map Task Corpus; Beygelzimer et al. 2015: UCI and KDD Cup).

A stream finds the user's copy in a data folder (:func:`find_dataset`) and checks it against the
table (:func:`shape_problem`); nothing is downloaded.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from arena.data.files import COMPRESSIONS, DataFileError, Examples

DATA_DIR_VARIABLE = "ARENA_DATA_DIR"
"""The environment variable naming the data folders (``os.pathsep``-separated) searched when a
stream's ``data_dir`` is not given."""

LIBSVM_BINARY = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary.html"
LIBSVM_MULTICLASS = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass.html"
LIBSVM_REGRESSION = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/regression.html"
UCI = "https://archive.ics.uci.edu/"

LUO = "Luo 2016, Table D.1"
OGB = "Beygelzimer et al. 2015, Appendix B"


@dataclass(frozen=True)
class CatalogEntry:
    """One dataset of the sources.

    Attributes
    ----------
    name : str
        The name a stream takes (``dataset=a9a``), as the sources print it (lower case; a space or
        parenthesis becomes ``_``).
    examples : int
        The number of examples the sources report.
    features : int
        The number of features they report; a copy may use fewer (a split file whose largest
        index is smaller) but not more.
    nonzeros : float
        The average number of non-zero features per example they report.
    task : {"classification", "regression"}
        The task the sources run on it (classification: binary, with labels ±1 or 0/1).
    labels : str
        The labels or the label range as published ("" where the sources give none).
    published : str
        Where the set is published (our attribution; the sources name only the collections).
    url : str
        The collection's page.
    cited : tuple of str
        The tables giving its shape.
    files : tuple of str
        File names (before a suffix) it is looked for under, beyond ``name``.
    """

    name: str
    examples: int
    features: int
    nonzeros: float
    task: str
    labels: str
    published: str
    url: str
    cited: tuple[str, ...]
    files: tuple[str, ...] = ()

    def describe(self) -> str:
        """Return the entry as a refusal states it.

        Examples
        --------
        >>> CATALOG["a9a"].describe()
        'a9a: 48,841 examples, ≤ 123 features, classification, labels {-1, +1} (Luo 2016, ...'
        """
        labels = f", labels {self.labels}" if self.labels else ""
        return (
            f"{self.name}: {self.examples:,} examples, ≤ {self.features:,} features, "
            f"{self.task}{labels} ({'; '.join(self.cited)}); published in {self.published}, "
            f"{self.url}"
        )


def _entry(name, examples, features, nonzeros, task, labels, published, url, cited, files=()):
    return CatalogEntry(
        name, examples, features, nonzeros, task, labels, published, url, cited, files
    )


_PM = "{-1, +1}"
_01 = "{0, 1}"
CATALOG: dict[str, CatalogEntry] = {
    e.name: e
    for e in (
        # Luo 2016, Table D.1 (and, for a9a, adult, census, covtype, letter, Beygelzimer et al.
        # 2015, Appendix B, which agrees on the counts)
        _entry("20news", 18845, 101631, 93.9, "classification", "",
               "the LIBSVM data sets (multiclass: news20, 20 Newsgroups)", LIBSVM_MULTICLASS,
               (LUO,), ("news20",)),
        _entry("a9a", 48841, 123, 13.9, "classification", _PM,
               "the LIBSVM data sets (binary: a9a, UCI Adult)", LIBSVM_BINARY, (LUO, OGB)),
        _entry("acoustic", 78823, 50, 50.0, "classification", "",
               "the LIBSVM data sets (multiclass: acoustic, SensIT Vehicle)", LIBSVM_MULTICLASS,
               (LUO,), ("acoustic_scale",)),
        _entry("adult", 48842, 105, 12.0, "classification", _01,
               "the UCI repository (Adult)", UCI, (LUO, OGB)),
        _entry("australian", 690, 14, 11.2, "classification", "",
               "the LIBSVM data sets (binary: australian, UCI Statlog Australian credit)",
               LIBSVM_BINARY, (LUO,), ("australian_scale",)),
        _entry("breast-cancer", 683, 10, 10.0, "classification", "",
               "the LIBSVM data sets (binary: breast-cancer, UCI original Wisconsin; not "
               "scikit-learn's breast_cancer, which is WDBC)", LIBSVM_BINARY, (LUO,),
               ("breast-cancer_scale",)),
        _entry("census", 299284, 401, 32.0, "classification", _PM,
               "the UCI repository (Census-Income (KDD))", UCI, (LUO, OGB)),
        _entry("cod-rna", 271617, 8, 8.0, "classification", "",
               "the LIBSVM data sets (binary: cod-rna)", LIBSVM_BINARY, (LUO,)),
        _entry("covtype", 581011, 54, 11.9, "classification", _PM,
               "the LIBSVM data sets (binary: covtype.binary, UCI Covertype)", LIBSVM_BINARY,
               (LUO, OGB), ("covtype.binary", "covtype.libsvm.binary",
                            "covtype.libsvm.binary.scale")),
        _entry("pima_diabetes", 768, 8, 7.0, "classification", "",
               "the LIBSVM data sets (binary: diabetes, Pima Indians; printed 'diabetes' in "
               "Table D.1, renamed here because dataset_stream's diabetes is scikit-learn's "
               "regression set)", LIBSVM_BINARY, (LUO,), ("diabetes", "diabetes_scale")),
        _entry("gisette", 1000, 5000, 4971.0, "classification", "",
               "the LIBSVM data sets (binary: gisette)", LIBSVM_BINARY, (LUO,),
               ("gisette_scale",)),
        _entry("heart", 270, 13, 9.8, "classification", "",
               "the LIBSVM data sets (binary: heart, UCI Statlog Heart)", LIBSVM_BINARY, (LUO,),
               ("heart_scale",)),
        _entry("ijcnn1", 91701, 22, 13.0, "classification", "",
               "the LIBSVM data sets (binary: ijcnn1)", LIBSVM_BINARY, (LUO,)),
        _entry("ionosphere", 351, 34, 30.1, "classification", "",
               "the LIBSVM data sets (binary: ionosphere, UCI Ionosphere)", LIBSVM_BINARY,
               (LUO,), ("ionosphere_scale",)),
        _entry("letter", 20000, 16, 15.6, "classification", _PM,
               "the UCI repository (Letter Recognition; LIBSVM multiclass: letter)", UCI,
               (LUO, OGB), ("letter.scale",)),
        _entry("magic04", 19020, 10, 10.0, "classification", "",
               "the UCI repository (MAGIC Gamma Telescope)", UCI, (LUO,)),
        _entry("mnist", 11791, 780, 142.4, "classification", "",
               "the LIBSVM data sets (multiclass: mnist; the thesis's 11,791 examples are a "
               "two-class subset)", LIBSVM_MULTICLASS, (LUO,)),
        _entry("mushrooms", 8124, 112, 21.0, "classification", "",
               "the LIBSVM data sets (binary: mushrooms, UCI Mushroom)", LIBSVM_BINARY, (LUO,)),
        _entry("rcv1", 781265, 43001, 75.7, "classification", "",
               "the LIBSVM data sets (binary: rcv1.binary, Reuters RCV1-v2)", LIBSVM_BINARY,
               (LUO,), ("rcv1.binary",)),
        _entry("real-sim", 72309, 20958, 51.3, "classification", "",
               "the LIBSVM data sets (binary: real-sim)", LIBSVM_BINARY, (LUO,)),
        _entry("splice", 1000, 60, 60.0, "classification", "",
               "the LIBSVM data sets (binary: splice)", LIBSVM_BINARY, (LUO,),
               ("splice_scale",)),
        _entry("w1a", 2477, 300, 11.5, "classification", "",
               "the LIBSVM data sets (binary: w1a)", LIBSVM_BINARY, (LUO,)),
        _entry("w8a", 49749, 300, 11.7, "classification", "",
               "the LIBSVM data sets (binary: w8a)", LIBSVM_BINARY, (LUO,)),
        # Beygelzimer et al. 2015, Appendix B only
        _entry("abalone", 4177, 10, 9.0, "regression", "[1, 29]",
               "the UCI repository (Abalone; LIBSVM regression: abalone)", UCI, (OGB,),
               ("abalone_scale",)),
        _entry("activity", 165632, 20, 18.5, "classification", _PM,
               "the UCI repository or a KDD Cup (the paper names only the collections)", UCI,
               (OGB,)),
        _entry("bank", 45211, 45, 15.0, "classification", _PM,
               "the UCI repository (Bank Marketing, bank-full)", UCI, (OGB,), ("bank-full",)),
        _entry("cal_housing", 20640, 9, 9.0, "regression", "[0, 1]",
               "StatLib (California housing; LIBSVM regression: cadata)", LIBSVM_REGRESSION,
               (OGB,), ("cadata",)),
        _entry("casp", 45730, 10, 10.0, "regression", "[0, 1]",
               "the UCI repository (Physicochemical Properties of Protein Tertiary Structure)",
               UCI, (OGB,)),
        _entry("kddcup04_phy", 50000, 74, 32.0, "classification", _01,
               "the KDD Cup 2004 (quantum physics task; printed 'kddcup04 (phy)')",
               "https://osmot.cs.cornell.edu/kddcup/", (OGB,)),
        _entry("shuttle", 43500, 9, 8.0, "classification", _PM,
               "the UCI repository (Statlog (Shuttle); LIBSVM multiclass: shuttle)", UCI, (OGB,),
               ("shuttle.scale",)),
        _entry("slice", 53500, 385, 135.0, "regression", "[0, 1]",
               "the UCI repository (Relative location of CT slices on axial axis)", UCI, (OGB,)),
        _entry("year", 463715, 90, 90.0, "regression", "[0, 1]",
               "the UCI repository (YearPredictionMSD; LIBSVM regression: YearPredictionMSD)",
               UCI, (OGB,), ("YearPredictionMSD",)),
    )
}  # fmt: skip
"""The sources' datasets by name (module docstring)."""

TEXT_SUFFIXES = ("", ".txt", ".svm", ".svmlight", ".libsvm", ".csv")
"""Suffixes of text files looked for, each also compressed (``.gz``, ``.bz2``, ``.xz``)."""

BINARY_SUFFIXES = (".parquet", ".pq", ".npz")
"""Suffixes of binary files looked for (never compressed outside their format)."""


def candidate_names(entry: CatalogEntry) -> list[str]:
    """Return the file names a dataset is looked for under, in the order they are tried.

    Each base name (the entry's name, then its ``files``) with each suffix of
    :data:`TEXT_SUFFIXES` (uncompressed, then ``.gz``, ``.bz2``, ``.xz``), then each of
    :data:`BINARY_SUFFIXES`.

    Examples
    --------
    >>> candidate_names(CATALOG["a9a"])[:6]
    ['a9a', 'a9a.gz', 'a9a.bz2', 'a9a.xz', 'a9a.txt', 'a9a.txt.gz']
    """
    names = []
    for base in (entry.name, *entry.files):
        for suffix in TEXT_SUFFIXES:
            names += [base + suffix + c for c in ("", *COMPRESSIONS)]
        names += [base + suffix for suffix in BINARY_SUFFIXES]
    return names


def data_dirs(data_dir: str | None) -> list[Path]:
    """Return the folders searched: ``data_dir`` if given, else those of ``ARENA_DATA_DIR``."""
    if data_dir:
        return [Path(data_dir).expanduser()]
    raw = os.environ.get(DATA_DIR_VARIABLE, "")
    return [Path(p).expanduser() for p in raw.split(os.pathsep) if p.strip()]


def find_dataset(name: str, data_dir: str | None = None) -> Path:
    """Return the user's copy of a catalog dataset: the first file of :func:`candidate_names`
    present in the first folder of :func:`data_dirs` that holds one.

    Raises
    ------
    DataFileError
        One line: where the set is published and where it was looked for.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "heart_scale").write_text("1 1:0.5\\n")
    >>> find_dataset("heart", str(folder)).name
    'heart_scale'
    >>> find_dataset("a9a", str(folder))
    Traceback (most recent call last):
    ...
    arena.data.files.DataFileError: a9a is not in .../...: looked for a9a, a9a.gz, ..., a9a.npz; ...
    """
    entry = CATALOG[name]
    folders = data_dirs(data_dir)
    names = candidate_names(entry)
    for folder in folders:
        for candidate in names:
            path = folder / candidate
            if path.is_file():
                return path
    where = f"a copy of {entry.published}, {entry.url}; nothing is downloaded"
    if not folders:
        raise DataFileError(
            f"{name} needs a data folder: give data_dir=DIR or set {DATA_DIR_VARIABLE}=DIR "
            f"holding {where}"
        )
    shown = ", ".join(names[:3]) + ", ..., " + names[-1]
    raise DataFileError(
        f"{name} is not in {os.pathsep.join(str(f) for f in folders)}: looked for {shown}; "
        f"put there {where}"
    )


def shape_problem(entry: CatalogEntry, examples: Examples, n_labels: int | None) -> str | None:
    """Return why a copy does not match the published shape, or None.

    The copy must have the published number of examples, at most the published number of
    features, and, for a classification set, two distinct labels (``n_labels``: None when a
    label mapping was given, which decides the classes itself). The label values are not
    compared: the sources' label conventions (±1 or 0/1) differ from the files' (1/2, 2/4, the
    classes of a multiclass original) by a mapping the stream's ``positive`` states.

    Examples
    --------
    >>> import numpy as np
    >>> ex = Examples(np.zeros((270, 13)), np.ones(270), "heart", "npz")
    >>> shape_problem(CATALOG["heart"], ex, 2) is None
    True
    >>> shape_problem(CATALOG["heart"], ex, 1)
    'has 1 distinct label; heart is binary classification'
    """
    problems = []
    if examples.n_examples != entry.examples:
        problems.append(f"has {examples.n_examples:,} examples, not {entry.examples:,}")
    if examples.n_features > entry.features:
        problems.append(f"has {examples.n_features:,} features, more than {entry.features:,}")
    if entry.task == "classification" and n_labels is not None and n_labels != 2:
        plural = "" if n_labels == 1 else "s"
        problems.append(
            f"has {n_labels} distinct label{plural}; {entry.name} is binary classification"
        )
    return "; ".join(problems) or None
