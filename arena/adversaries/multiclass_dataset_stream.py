"""Multiclass datasets as online streams: scikit-learn's bundled digits (10 classes), iris and wine,
a user's file, and the sources' datasets by name (docs/data.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import ClassVar

import numpy as np

from arena.adversaries import _file_data as files
from arena.adversaries._oco_stream import StreamAdversary
from arena.adversaries.dataset_stream import _require_sklearn, _zscore, epoch_indices
from arena.base import Footprint
from arena.data.catalog import CATALOG
from arena.data.files import row_norms, take_rows
from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import Boolean, OneOf
from arena.spec import AdversaryTags, GameSpec

MULTICLASS_DATASETS = {"digits": "load_digits", "iris": "load_iris", "wine": "load_wine"}
"""The bundled datasets and their scikit-learn loaders."""

FILE_PARAMETERS = ("path", "data_dir", "label_column", "classes", "check_shape")
"""The parameters of a file or a catalog dataset (the bundled sets ignore them)."""


@lru_cache(maxsize=16)
def load_multiclass(
    dataset: str, standardize: bool = True, intercept: bool = False
) -> tuple[np.ndarray, np.ndarray, int]:
    """Return the preprocessed ``(X, y, k)`` of a bundled dataset: labels ``0 .. k−1`` (cached).

    Examples
    --------
    >>> X, y, k = load_multiclass("digits")
    >>> X.shape, k, np.bincount(y.astype(int)).tolist()[:3]
    ((1797, 64), 10, [178, 182, 177])
    """
    skd = _require_sklearn()
    bunch = getattr(skd, MULTICLASS_DATASETS[dataset])()
    X = np.asarray(bunch.data, dtype=np.float64)
    target = np.asarray(bunch.target)
    classes = np.unique(target)
    y = np.searchsorted(classes, target).astype(np.float64)
    if standardize:
        X = _zscore(X)
    if intercept:
        X = np.concatenate([X, np.ones((X.shape[0], 1))], axis=1)
    X, y = np.ascontiguousarray(X), np.ascontiguousarray(y)
    X.flags.writeable = False
    y.flags.writeable = False
    return X, y, int(classes.size)


class MulticlassDatasetStream(StreamAdversary):
    """A multiclass dataset, one example per round, reshuffled every epoch: scikit-learn's bundled
    sets, or a user's file.

    The ``multiclass`` protocol with all the dataset's labels: ``w_t ∈ ℝ^{k·d}`` holds one row
    ``w_r`` per label (Kesler's construction), the loss is the multiclass hinge.

    Parameters
    ----------
    dataset : {"digits", "iris", "wine", "file"} or a catalog name
        ``digits``: 8×8 handwritten digits, 1797 × 64, k = 10 (every digit its own label);
        ``iris``: 150 × 4, k = 3; ``wine``: 178 × 13, k = 3; ``file``: the file ``path``; a
        name of the sources' catalog (e.g. ``letter``): its copy, checked against the published
        examples and features (docs/data.md).
    standardize : bool
        Centre every feature and divide it by its standard deviation (constant features, such as
        the digits' border pixels, become 0). The statistics are computed once on the **whole**
        dataset, so they use examples the learner has not seen yet.
    intercept : bool
        Append a constant feature 1 (after standardization): each label gets a bias.
    path : str or None
        The file to read (svmlight/LIBSVM text, plain or compressed; CSV; Parquet; ``.npz``).
    data_dir : str or None
        A catalog name without ``path``: the folder holding the copy (None: ``ARENA_DATA_DIR``).
    label_column : str, int or None
        CSV and Parquet: the label's column, by header name or 0-based index (None: the first).
    classes : list of float or None
        The class order: label ``classes[i]`` is class i, and a label not listed is refused
        naming its line (None: the file's labels in increasing order).
    check_shape : bool
        A catalog name: refuse a copy whose examples or features differ from the published
        table (false: use it as it is).

    Notes
    -----
    ``n_actions`` is ``k·d`` (640 for digits; left out, it is taken from the data). Round t shows
    example ``π_e((t−1) mod n)`` of epoch ``e = ⌊(t−1)/n⌋``: each replicate draws a fresh
    permutation ``π_e = rng.permutation(n)`` from its own stream when an epoch starts, as
    ``dataset_stream`` does, so each epoch shows every example once and any split into blocks
    gives the same stream. The declared gradient bound is exact over the dataset:
    ``√2·max_i ‖x_i‖`` (the multiclass hinge's subgradient is ``±x`` in two rows). The domain is
    ℝ^{k·d}; the regret metric needs ``radius=[inf]`` (every linear multiclass predictor).

    A file is read once per process and shared by the replicates; sparse files stay sparse and
    each block of rounds is densified alone; ``standardize`` divides a file's features by their
    standard deviation without centring them, in every format (as ``dataset_stream``, whose
    Notes say why).

    Examples
    --------
    >>> adv = MulticlassDatasetStream("digits")
    >>> adv.tags.protocol, adv.declared_classes(), adv.resolve_dim(None)
    ('multiclass', 10, 640)
    >>> adv.reset(GameSpec("multiclass", 640, 4, dim=640, n_classes=10), [np.random.default_rng(0)])
    >>> rd = adv.data_block(1, 4)
    >>> rd.x.shape, rd.y.shape
    ((1, 4, 64), (1, 4))

    References
    ----------
    scikit-learn's ``sklearn.datasets.load_digits``, ``load_iris``, ``load_wine``; Shalev-Shwartz
    2007, §5.3.2 (multiclass categorization).
    """

    tags = AdversaryTags(protocol="multiclass", oblivious=True)
    parameter_constraints: ClassVar = {
        "dataset": [OneOf(*MULTICLASS_DATASETS, files.FILE, *CATALOG)],
        "standardize": [Boolean()],
        "intercept": [Boolean()],
        **{k: files.FILE_CONSTRAINTS[k] for k in FILE_PARAMETERS},
    }

    def __init__(
        self,
        dataset: str = "digits",
        standardize: bool = True,
        intercept: bool = False,
        path: str | None = None,
        data_dir: str | None = None,
        label_column: str | int | None = None,
        classes: Sequence[float] | None = None,
        check_shape: bool = True,
    ):
        self.dataset = dataset
        self.standardize = standardize
        self.intercept = intercept
        self.path = path
        self.data_dir = data_dir
        self.label_column = label_column
        self.classes = classes
        self.check_shape = check_shape

    def _data(self) -> tuple[np.ndarray, np.ndarray, int]:
        files.check_location(self, tuple(MULTICLASS_DATASETS))
        if files.is_file_data(self.dataset):
            return files.multiclass(self, bool(self.standardize), bool(self.intercept))
        try:
            return load_multiclass(self.dataset, bool(self.standardize), bool(self.intercept))
        except ImportError as exc:
            raise ConfigError(self.label(), "dataset", str(exc)) from exc

    def stream_identity(self) -> tuple[str, dict]:
        """The registry name and parameters that seed the stream, the file parameters left out
        at their defaults (the bundled sets keep their streams) and the file's folder always
        (its digest is in :meth:`data_identity`)."""
        name, params = super().stream_identity()
        return name, files.keyed_params(self, params)

    def cell_params(self) -> dict:
        return files.keyed_params(self, self.get_params())

    def data_provenance(self) -> dict[str, str]:
        """The file read (path, size, SHA-256), for the manifest; nothing for a bundled set."""
        return files.data_provenance(self) if files.is_file_data(self.dataset) else {}

    def data_identity(self) -> dict[str, str]:
        if files.is_file_data(self.dataset):
            return files.data_identity(self)
        # the bundled datasets ship with scikit-learn: its version pins their contents
        import sklearn

        return {"dataset": f"{self.dataset} (scikit-learn {sklearn.__version__})"}

    def declared_classes(self) -> int:
        return self._data()[2]

    def declared_loss(self) -> str:
        return "multiclass_hinge"

    def declared_domain(self) -> Domain:
        return Domain("unconstrained")

    def resolve_dim(self, requested: int | None, horizon: int | None = None) -> int:
        X, _, k = self._data()
        dim = k * X.shape[1]
        if requested is not None and int(requested) != dim:
            raise ConfigError(
                self.label(),
                "n_actions",
                f"dataset {self.dataset}: w_t has k·d = {k}·{X.shape[1]} = {dim} coordinates, "
                f"but n_actions = {requested}",
            )
        return dim

    def feature_bound(self) -> float:
        return float(row_norms(self._data()[0]).max())

    def gradient_bound(self) -> float:
        return math.sqrt(2.0) * self.feature_bound()

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        X, y, k = self._data()
        if int(spec.dim) != k * X.shape[1]:
            raise ConfigError(self.label(), "n_actions", f"the dataset has k·d = {k * X.shape[1]}")
        self._X, self._y = X, y
        self._rngs = list(rngs)
        n_rep, n_samples = len(self._rngs), X.shape[0]
        self._perm = np.empty((n_rep, n_samples), dtype=np.int64)
        self._pos = n_samples  # position in the current epoch (n: a new epoch starts)
        self._start_stream()

    def _generate(self, n: int) -> RoundData:
        idx, self._pos = epoch_indices(self._perm, self._pos, self._rngs, n)
        return RoundData(x=self.rows(idx), y=self._y[idx])

    def rows(self, idx: np.ndarray) -> np.ndarray:
        """Return the features of examples ``idx`` (R, n) as a dense (R, n, d) block: the one
        place a sparse file's rows are densified (valid after ``reset``)."""
        return take_rows(self._X, idx)

    def footprint(self, spec: GameSpec) -> Footprint:
        """A file's examples once (shared by the replicates), the permutations and the densified
        blocks; bundled sets are negligible."""
        if not files.is_file_data(self.dataset):
            return super().footprint(spec)
        X, y, _ = self._data()
        return files.stream_footprint(self, X, y, int(spec.n_replicates), X.shape[0], 0, 16)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"dataset": "iris", "intercept": True}
        yield {"dataset": "wine", "standardize": False}
        yield {"dataset": "file", "path": str(_example_file()), "classes": [2, 0, 1]}


def _example_file():
    """A small sparse svmlight file (150 × 12, labels 0, 1, 2), written once to a temporary
    folder, for the conformance tests' parameter sets."""
    import os
    import tempfile
    from pathlib import Path

    import scipy.sparse as sp

    from arena.data.files import save_examples

    path = Path(tempfile.gettempdir()) / "regret-arena-multiclass-stream-test" / "sparse3.svm"
    if not path.exists():
        path.parent.mkdir(exist_ok=True)
        rng = np.random.default_rng(0)
        X = sp.random(150, 12, density=0.3, random_state=rng, format="csr")
        y = np.argmax(X @ rng.standard_normal((12, 3)), axis=1).astype(float)
        part = path.with_name(f"sparse3.{os.getpid()}.svm")  # concurrent test workers
        save_examples(part, X, y)
        part.replace(path)
    return path
