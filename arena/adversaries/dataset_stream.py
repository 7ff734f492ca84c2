"""Datasets as online streams: scikit-learn's bundled sets (breast cancer, digits, diabetes), two
generated sets whose Bayes risk is known (Friedman's #1 regression and two Gaussian classes), a
user's file, and the sources' datasets by name (docs/data.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from arena.adversaries import _file_data as files
from arena.adversaries._oco_stream import (
    DOMAIN,
    EXAMPLE_LOSS,
    InstanceTags,
    StreamAdversary,
    make_domain,
)
from arena.base import Footprint
from arena.data.catalog import CATALOG
from arena.data.files import row_abs_max, row_abs_sums, row_norms, take_rows
from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData, SparseRows
from arena.params import POSITIVE, Boolean, Interval, IsNone, ListOf, OneOf
from arena.spec import AdversaryTags, GameSpec

DATASETS = {
    "breast_cancer": "classification",
    "digits": "classification",
    "diabetes": "regression",
    "friedman1": "regression",
    "gaussian_classes": "classification",
}
"""The bundled and generated datasets and their protocols (a file's is its ``task``)."""

DATASET_NAMES = (*DATASETS, files.FILE, *CATALOG)
"""Every value of ``dataset``: the bundled and generated sets, ``file`` and the catalog's names."""

FILE_PARAMETERS = (
    "path",
    "data_dir",
    "task",
    "label_column",
    "positive",
    "negative",
    "check_shape",
)
"""The parameters of a file or a catalog dataset (the others ignore them)."""

GENERATED = ("friedman1", "gaussian_classes")
"""The datasets drawn once from a known law (fixed by ``data_seed``); the others are bundled."""

GENERATION_PARAMETERS = {
    "friedman1": ("n_samples", "n_features", "noise", "data_seed"),
    "gaussian_classes": (
        "n_samples",
        "n_features",
        "n_informative",
        "separation",
        "flip",
        "data_seed",
    ),
}
"""The parameters each generated dataset is drawn from (the others do not change it)."""

GENERATION_NAMES = frozenset(name for names in GENERATION_PARAMETERS.values() for name in names)
"""Every generation parameter (a bundled dataset uses none)."""

REGRESSION_LOSSES = ("absolute", "squared")
"""The example losses of a regression dataset (hinge and logistic need labels ±1)."""


def _require_sklearn():
    try:
        import sklearn.datasets as skd
    except ImportError as exc:  # pragma: no cover - exercised only without scikit-learn
        raise ImportError(
            "needs scikit-learn (pip install scikit-learn); its bundled datasets load offline"
        ) from exc
    return skd


def gaussian_classes_law(
    n_informative: int, separation: float, data_seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Return the class mean ``μ`` and the shared covariance ``Σ`` of the informative features.

    ``Σ = BBᵀ/k + ½·I`` with ``B`` a standard normal k × k matrix, and ``μ = c·u`` with ``u``
    standard normal and ``c`` chosen so that the Mahalanobis distance between the class means
    ``±μ`` is exactly ``Δ = separation``: ``2·sqrt(μᵀΣ⁻¹μ) = Δ``. Both are the first draws of
    ``numpy.random.default_rng(data_seed)``.

    Examples
    --------
    >>> mu, cov = gaussian_classes_law(3, 2.0, 0)
    >>> round(float(2 * np.sqrt(mu @ np.linalg.solve(cov, mu))), 12)
    2.0
    """
    return _draw_law(np.random.default_rng(int(data_seed)), int(n_informative), separation)


def _draw_law(rng: np.random.Generator, k: int, separation: float) -> tuple[np.ndarray, np.ndarray]:
    b = rng.standard_normal((k, k))
    cov = b @ b.T / k + 0.5 * np.eye(k)  # ½·I keeps Σ well conditioned for small k
    u = rng.standard_normal(k)
    mu = u * (0.5 * float(separation) / np.sqrt(u @ np.linalg.solve(cov, u)))
    return mu, cov


def gaussian_classes_bayes_error(separation: float, flip: float) -> float:
    """Return the Bayes error ``flip + (1 − 2·flip)·Φ(−Δ/2)`` of two Gaussian classes.

    With equal priors, ``x | y ~ N(y·μ, Σ)`` and Mahalanobis distance ``Δ = 2·sqrt(μᵀΣ⁻¹μ)``
    between the means, the Bayes classifier is ``sign(xᵀΣ⁻¹μ)`` (linear discriminant analysis)
    and errs with probability ``Φ(−Δ/2)`` (``xᵀΣ⁻¹μ`` given y is normal with mean ``y·Δ²/4`` and
    standard deviation ``Δ/2``). Flipping the label independently with probability ``flip < ½``
    maps the posterior ``η`` to ``flip + (1 − 2·flip)·η``, an increasing map fixing ½, so the
    Bayes classifier is unchanged and errs when exactly one of (it errs on the clean label, the
    label is flipped) happens: ``Φ(−Δ/2)(1 − flip) + (1 − Φ(−Δ/2))·flip``.

    Examples
    --------
    >>> round(gaussian_classes_bayes_error(3.0, 0.05), 6)  # 0.05 + 0.9·Φ(−1.5)
    0.110126

    References
    ----------
    Hastie, Tibshirani & Friedman 2009, §4.3 (linear discriminant analysis, equal covariances).
    """
    clean = 0.5 * math.erfc(0.5 * float(separation) / math.sqrt(2.0))  # Φ(−Δ/2)
    return float(flip) + (1.0 - 2.0 * float(flip)) * clean


def generate_dataset(
    dataset: str,
    n_samples: int,
    n_features: int,
    n_informative: int,
    noise: float,
    separation: float,
    flip: float,
    data_seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Return the raw ``(X, y)`` of a generated dataset, drawn once from ``data_seed``.

    ``friedman1`` is scikit-learn's ``make_friedman1(n_samples, n_features, noise,
    random_state=data_seed)``: ``x ~ U[0, 1]^d`` and ``y = f(x) + noise·ε``, ``ε ~ N(0, 1)``,
    ``f(x) = 10 sin(π x₁x₂) + 20(x₃ − ½)² + 10x₄ + 5x₅`` (the other features are noise).
    ``gaussian_classes``: labels ±1 with equal probability, the first ``n_informative`` features
    ``y·μ + N(0, Σ)`` (:func:`gaussian_classes_law`), the other ``n_features − n_informative``
    independent ``N(0, 1)`` in both classes, then each label flipped with probability ``flip``;
    drawn from ``default_rng(data_seed)`` after the law.

    Examples
    --------
    >>> X, y = generate_dataset("gaussian_classes", 5, 4, 2, 1.0, 3.0, 0.0, 0)
    >>> X.shape, sorted(set(y.tolist())) <= [-1.0, 1.0]
    ((5, 4), True)
    """
    n, d = int(n_samples), int(n_features)
    if dataset == "friedman1":
        return _require_sklearn().make_friedman1(
            n_samples=n, n_features=d, noise=float(noise), random_state=int(data_seed)
        )
    if dataset != "gaussian_classes":
        raise ValueError(f"unknown generated dataset {dataset!r}")
    k = int(n_informative)
    rng = np.random.default_rng(int(data_seed))
    mu, cov = _draw_law(rng, k, separation)  # the law first, then the sample from the same stream
    clean = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    informative = clean[:, None] * mu + rng.standard_normal((n, k)) @ np.linalg.cholesky(cov).T
    X = np.concatenate([informative, rng.standard_normal((n, d - k))], axis=1)
    y = np.where(rng.random(n) < float(flip), -clean, clean)
    return X, y


def held_out_split(component, n: int, fraction: float) -> tuple[int, int]:
    """Return ``(n − m, m)`` with ``m = ⌊f·n⌋`` computed exactly (``0.3 · 10`` is 3, not 2);
    refuse a nonzero fraction that leaves no example on either side, naming ``component``'s
    ``test_fraction``.

    Examples
    --------
    >>> held_out_split(None, 569, 0.3)
    (399, 170)
    """
    m = math.floor(Fraction(repr(float(fraction))) * n)
    if fraction and not 1 <= m <= n - 1:
        message = f"leaves {m} of the {n} examples for the test split; need 1 to {n - 1}"
        raise ConfigError(component.label(), "test_fraction", message)
    return n - m, m


def epoch_indices(
    perm: np.ndarray, pos: int, rngs: Sequence[np.random.Generator], n: int
) -> tuple[np.ndarray, int]:
    """Return the next ``n`` example indices per replicate and the new position in the epoch.

    Examples are read in epochs: each replicate's permutation ``perm[r]`` (reshuffled in place
    from ``rngs[r]`` whenever an epoch ends, ``pos == n_samples``) is read from ``pos`` on, so
    any split of the rounds into blocks gives the same stream.

    Examples
    --------
    >>> perm = np.zeros((1, 3), dtype=np.int64)
    >>> idx, pos = epoch_indices(perm, 3, [np.random.default_rng(0)], 5)
    >>> sorted(idx[0, :3].tolist()), pos
    ([0, 1, 2], 2)
    """
    n_rep, n_samples = perm.shape
    idx = np.empty((n_rep, n), dtype=np.int64)
    k = 0
    while k < n:
        if pos == n_samples:
            for r, rng in enumerate(rngs):
                perm[r] = rng.permutation(n_samples)
            pos = 0
        m = min(n - k, n_samples - pos)
        idx[:, k : k + m] = perm[:, pos : pos + m]
        k += m
        pos += m
    return idx, pos


@lru_cache(maxsize=32)
def load_dataset(
    dataset: str,
    digits: tuple[int, ...] = (0,),
    standardize: bool = True,
    intercept: bool = False,
    *,
    n_samples: int = 2000,
    n_features: int = 10,
    n_informative: int = 5,
    noise: float = 1.0,
    separation: float = 3.0,
    flip: float = 0.05,
    data_seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Return the preprocessed ``(X, y)`` of a dataset (read-only arrays, cached).

    See :class:`DatasetStream` for the labels, the standardization, the intercept and the
    generated datasets' parameters (keyword-only; the bundled datasets ignore them).

    Examples
    --------
    >>> X, y = load_dataset("breast_cancer")
    >>> X.shape, sorted(set(y.tolist()))
    ((569, 30), [-1.0, 1.0])
    """
    skd = _require_sklearn()
    if dataset == "breast_cancer":
        bunch = skd.load_breast_cancer()
        X = np.asarray(bunch.data, dtype=np.float64)
        y = np.where(bunch.target == 1, 1.0, -1.0)  # 1 = benign → +1, 0 = malignant → −1
    elif dataset == "digits":
        bunch = skd.load_digits()
        X = np.asarray(bunch.data, dtype=np.float64)
        target = np.asarray(bunch.target)
        if len(digits) == 1:
            y = np.where(target == digits[0], 1.0, -1.0)
        else:
            keep = (target == digits[0]) | (target == digits[1])
            X, y = X[keep], np.where(target[keep] == digits[0], 1.0, -1.0)
    elif dataset == "diabetes":
        bunch = skd.load_diabetes()
        X = np.asarray(bunch.data, dtype=np.float64)
        y = np.asarray(bunch.target, dtype=np.float64)
    elif dataset in GENERATED:
        generation = (n_samples, n_features, n_informative, noise, separation, flip, data_seed)
        X, y = generate_dataset(dataset, *generation)
    else:
        raise ValueError(f"unknown dataset {dataset!r}")
    if standardize:
        X = _zscore(X)
        if DATASETS[dataset] == "regression":
            y = _zscore(y[:, None])[:, 0]
    if intercept:
        X = np.concatenate([X, np.ones((X.shape[0], 1))], axis=1)
    X, y = np.ascontiguousarray(X), np.ascontiguousarray(y)
    X.flags.writeable = False
    y.flags.writeable = False
    return X, y


def _zscore(a: np.ndarray) -> np.ndarray:
    """Centre each column and divide it by its population standard deviation (constant: 0)."""
    centred = a - a.mean(axis=0)
    sd = a.std(axis=0)
    return centred / np.where(sd > 0, sd, 1.0)


class DatasetStream(StreamAdversary):
    """A fixed dataset shown one example per round, reshuffled every epoch: scikit-learn's bundled
    sets, or one drawn once from a law whose Bayes risk is known.

    Parameters
    ----------
    dataset : {"breast_cancer", "digits", "diabetes", "friedman1", "gaussian_classes"}
        ``breast_cancer``: Wisconsin diagnostic (569 × 30), label +1 benign / −1 malignant;
        ``digits``: 8×8 handwritten digits (1797 × 64) as a binary task (``digits``);
        ``diabetes``: 442 × 10 regression (the protocol is then ``regression``);
        ``friedman1``: scikit-learn's ``make_friedman1`` (Friedman 1991), regression;
        ``gaussian_classes``: two Gaussian classes with a shared covariance and label noise,
        binary classification (see Notes for both generated sets).
    digits : list of int
        ``digits`` only: ``[a]`` labels digit a +1 and every other digit −1 (all 1797 examples);
        ``[a, b]`` keeps the examples of a (+1) and b (−1).
    standardize : bool
        Centre every feature and divide it by its standard deviation (constant features, such as
        the digits' border pixels, become 0), and for ``diabetes`` standardize the target alike.
        The statistics are computed once on the **whole** dataset, so they use examples the
        learner has not seen yet; they do not depend on the replicate. Without it the features
        are scikit-learn's as loaded (``diabetes``: already centred and scaled to unit column
        norm by scikit-learn) and the diabetes target is raw (25 to 346).
    intercept : bool
        Append a constant feature 1 (after standardization), so linear predictors get a bias.
    loss : str or None
        The convex loss charged;
        None: ``hinge`` in classification, ``squared`` in regression (where only ``squared`` and
        ``absolute`` are accepted).
    domain : {"unconstrained", "ball", "box", "simplex"}
        The feasible set of ``w_t``.
    radius : float
        Radius of a ball or box domain.
    test_fraction : float
        Fraction in [0, 1) of the examples held out as a test split the stream never shows
        (oracle ``test_split``, read by the ``online_to_batch`` metric): ``m = ⌊f·n⌋`` examples,
        drawn per replicate (0: no split, every example is streamed).
    n_samples : int
        Generated datasets only: the number of examples drawn.
    n_features : int
        Generated datasets only: d (``friedman1`` needs d ≥ 5; features 6 … d are noise).
    n_informative : int
        ``gaussian_classes`` only: the first k ≤ d features carry the class; the others are
        independent N(0, 1) noise in both classes.
    noise : float
        ``friedman1`` only: the standard deviation σ of the Gaussian noise added to the target.
    separation : float
        ``gaussian_classes`` only: the Mahalanobis distance Δ between the two class means.
    flip : float
        ``gaussian_classes`` only: the probability in [0, ½) that a label is flipped.
    data_seed : int
        Generated datasets only: the seed the dataset is drawn from, once. It is a parameter of
        the data, not of the game: every replicate (and every game seed) reshuffles and splits
        the same examples.
    path : str or None
        ``dataset=file``: the file to read (svmlight/LIBSVM text, plain or ``.gz``/``.bz2``/
        ``.xz``; CSV; Parquet; ``.npz``: see docs/data.md); with a catalog name, that set's copy
        (checked against its published shape).
    data_dir : str or None
        A catalog name without ``path``: the folder holding the copy (None: the folders of the
        environment variable ``ARENA_DATA_DIR``); the file names tried are in docs/data.md.
    task : {"classification", "regression"} or None
        What a file is: labels mapped to ±1, or a real target taken as is (None: the catalog's
        task, or classification).
    label_column : str, int or None
        CSV and Parquet: the label's column, by header name or 0-based index (None: the first).
    positive : list of float or None
        Classification from a file: the labels that become +1 (None: the file must hold two
        labels, and the larger becomes +1).
    negative : list of float or None
        With ``positive``: the labels that become −1 (None: every other label); a label in
        neither list is refused, naming its line.
    check_shape : bool
        A catalog name: refuse a copy whose examples, features or labels differ from the
        published table (false: use it as it is; its identity is still recorded).

    Notes
    -----
    Round t shows example ``π_e((t−1) mod n)`` of epoch ``e = ⌊(t−1)/n⌋`` (n examples): each
    replicate draws a fresh permutation ``π_e = rng.permutation(n)`` from its own stream when an
    epoch starts, so each epoch shows every example exactly once and replicates see different
    orders. The permutations are drawn in round order, so any split into blocks gives the same
    stream. The datasets load offline (scikit-learn ships them); scikit-learn is imported only
    when a dataset is first needed. The declared gradient bound is exact over the dataset:
    ``max_i ‖x_i‖`` for hinge, absolute and logistic losses; for the squared loss
    ``max_i ‖x_i‖(max_{w∈K}|⟨w, x_i⟩| + |y_i|)`` on a bounded domain, none on ℝ^d.

    With ``test_fraction`` each replicate first draws its split from its own stream
    (``rng.permutation(n)``: the first m indices are the test split, in dataset order), then its
    epochs are permutations of the ``n − m`` training examples only (n above is then ``n − m``).
    The standardization statistics still come from the whole dataset, test split included.

    **A user's file or a source's dataset** (``dataset=file`` or a catalog name, docs/data.md):
    the file is read once per process and shared by every replicate and game (never copied per
    replicate); sparse files (svmlight, sparse ``.npz``) stay sparse in memory and the stream
    declares :meth:`sparse_features`: each block of rounds, and the test split, is emitted as
    :class:`~arena.oco.losses.SparseRows` taken in O(nnz) from the one CSR copy
    (:func:`arena.adversaries._file_data.sparse_block`), so players tagged ``sparse_input`` read the
    rows as they are and the others are shown them densified by the engine (within its memory
    estimate). The footprint counts the data once plus those blocks by their entries.
    ``standardize`` on a file divides each feature by its standard deviation **without centring
    it**, whatever the format (centring would fill every zero of a sparse file, and one rule
    makes the same examples the same game in every format; ``intercept`` gives a linear
    predictor the offset centring would remove); a regression target is centred and scaled as
    ``diabetes``'s. The data's identity (the file's name, size and SHA-256) enters the game key
    and the manifest; the folder does not, so the same file in
    another folder plays the same game.

    These are stand-ins, not the thesis datasets: scikit-learn's breast cancer is WDBC, not the
    LIBSVM breast-cancer set (683×10), and its diabetes is a 442×10 regression set, not Pima
    (768×8); the thesis's datasets are listed in Luo 2016, Appendix D, Table D.1.

    **Generated datasets and their Bayes risk** (:meth:`bayes_risk`). ``friedman1``:
    ``x ~ U[0, 1]^d``, ``y = 10 sin(π x₁x₂) + 20(x₃ − ½)² + 10x₄ + 5x₅ + σ·ε`` (Friedman 1991;
    Breiman 1996). The best predictor is the regression function, whose risk under the
    squared loss ½(ŷ − y)² is ``½σ²``; on the standardized target (the default) ``½σ²/s_y²`` with
    ``s_y`` the standard deviation of the drawn targets, under the absolute loss ``σ·sqrt(2/π)``
    (divided by ``s_y`` when standardized). ``gaussian_classes``: equal priors,
    ``x_{1:k} | y ~ N(y·μ, Σ)`` with one Σ for both classes, drawn from ``data_seed``
    (:func:`gaussian_classes_law`), labels flipped with probability ``flip``: the Bayes error
    (0-1, the units of ``mistakes`` and ``test_error``) is ``flip + (1 − 2·flip)·Φ(−Δ/2)``
    (:func:`gaussian_classes_bayes_error`); an invertible affine map of the features, such as
    the standardization, does not change it.
    scikit-learn's ``make_classification`` is not used because each of its clusters gets its own
    random covariance (and ``flip_y`` relabels at random), so its Bayes error has no closed form.

    These are risks of the **law**, not of the finite dataset drawn from it, so the stream does
    not declare them as ``lower_bound`` rows. Over the data seed, every classifier's expected
    held-out error is at least the Bayes error (a test label is independent of everything else
    given its features, the feature standardization included), and so is its expected
    progressive error rate over the first epoch (a reshuffled i.i.d. sample is i.i.d.); but for
    one fixed dataset, which is what a game's replicates reshuffle, the realized labels can be
    kinder than the law (by about ``sqrt(p(1 − p)/n)``), and after the first epoch a learner can
    memorize examples it has seen. The reports show the Bayes risk beside the measured errors
    instead (the boosting section's "Bayes" column).

    Examples
    --------
    >>> adv = DatasetStream("digits", digits=[3, 8])
    >>> adv.tags.protocol, adv.resolve_dim(None), adv.declared_loss()
    ('classification', 64, 'hinge')
    >>> adv.reset(GameSpec("classification", 64, 10, dim=64), [np.random.default_rng(0)])
    >>> adv.data_block(1, 4).x.shape
    (1, 4, 64)

    >>> round(DatasetStream("gaussian_classes").bayes_risk(), 4)  # 0.05 + 0.9·Φ(−1.5)
    0.1101

    References
    ----------
    scikit-learn's ``sklearn.datasets.load_breast_cancer``, ``load_digits``, ``load_diabetes``,
    ``make_friedman1``; Luo 2016, Appendix D (the datasets these stand in for); Friedman 1991
    and Breiman 1996 (the Friedman #1 function); Hastie, Tibshirani & Friedman 2009, §4.3
    (the Bayes rule of Gaussian classes with a shared covariance).
    """

    tags = InstanceTags(AdversaryTags(protocol="classification", oblivious=True))
    parameter_constraints: ClassVar = {
        "dataset": [OneOf(*DATASET_NAMES)],
        "digits": [ListOf(Interval(0, 9, integer=True)), IsNone()],
        "standardize": [Boolean()],
        "intercept": [Boolean()],
        "loss": [*EXAMPLE_LOSS, IsNone()],
        "domain": DOMAIN,
        "radius": [POSITIVE],
        "test_fraction": [Interval(0, 1, closed="left")],
        "n_samples": [Interval(2, None, integer=True)],
        "n_features": [Interval(1, None, integer=True)],
        "n_informative": [Interval(1, None, integer=True)],
        "noise": [Interval(0, None)],
        "separation": [Interval(0, None)],
        "flip": [Interval(0, 0.5, closed="left")],
        "data_seed": [Interval(0, None, integer=True)],
        **{k: files.FILE_CONSTRAINTS[k] for k in FILE_PARAMETERS},
    }

    def __init__(
        self,
        dataset: str = "breast_cancer",
        digits: Sequence[int] = (0,),
        standardize: bool = True,
        intercept: bool = False,
        loss: str | None = None,
        domain: str = "unconstrained",
        radius: float = 1.0,
        test_fraction: float = 0.0,
        n_samples: int = 2000,
        n_features: int = 10,
        n_informative: int = 5,
        noise: float = 1.0,
        separation: float = 3.0,
        flip: float = 0.05,
        data_seed: int = 0,
        path: str | None = None,
        data_dir: str | None = None,
        task: str | None = None,
        label_column: str | int | None = None,
        positive: Sequence[float] | None = None,
        negative: Sequence[float] | None = None,
        check_shape: bool = True,
    ):
        self.dataset = dataset
        self.digits = digits
        self.standardize = standardize
        self.intercept = intercept
        self.loss = loss
        self.domain = domain
        self.radius = radius
        self.test_fraction = test_fraction
        self.n_samples = n_samples
        self.n_features = n_features
        self.n_informative = n_informative
        self.noise = noise
        self.separation = separation
        self.flip = flip
        self.data_seed = data_seed
        self.path = path
        self.data_dir = data_dir
        self.task = task
        self.label_column = label_column
        self.positive = positive
        self.negative = negative
        self.check_shape = check_shape

    def _protocol(self) -> str:
        """The protocol the data play: the bundled or generated set's, else ``task`` (default:
        the catalog's task, or classification)."""
        if self.dataset in DATASETS:
            return DATASETS[self.dataset]
        entry = CATALOG.get(self.dataset)
        return self.task or (entry.task if entry else "classification")

    def _instance_tags(self) -> AdversaryTags:
        oracle = frozenset({"test_split"}) if self.test_fraction else frozenset()
        return AdversaryTags(protocol=self._protocol(), oblivious=True, oracle=oracle)

    def split_sizes(self) -> tuple[int, int]:
        """Return ``(n − m, m)``: the streamed and the held-out examples, ``m = ⌊f·n⌋`` exactly.

        Examples
        --------
        >>> DatasetStream("breast_cancer", test_fraction=0.3).split_sizes()  # ⌊0.3 · 569⌋
        (399, 170)
        """
        return held_out_split(self, int(self._data()[0].shape[0]), self.test_fraction)

    def sparse_features(self) -> bool:
        """Whether the rounds' features are :class:`~arena.oco.losses.SparseRows`: a user's file
        or a catalog set stored sparse (svmlight, sparse ``.npz``).

        Examples
        --------
        >>> DatasetStream("breast_cancer").sparse_features()
        False
        """
        return files.is_file_data(self.dataset) and sp.issparse(self._data()[0])

    def _data(self) -> tuple[np.ndarray, np.ndarray]:
        files.check_location(self, tuple(DATASETS))
        if files.is_file_data(self.dataset):
            standardize, intercept = bool(self.standardize), bool(self.intercept)
            return files.binary_or_regression(self, self._protocol(), standardize, intercept)
        digits = tuple(int(v) for v in self.digits or ())
        if self.dataset == "digits":
            # one digit against the rest, or one against another: a fact about the whole list
            if len(digits) not in (1, 2) or len(set(digits)) != len(digits):
                message = "must be one digit or two distinct digits 0-9"
                raise ConfigError(self.label(), "digits", message)
        else:
            digits = (0,)  # unused
        if self.dataset == "friedman1" and int(self.n_features) < 5:
            message = f"friedman1 needs at least 5 features, got {self.n_features}"
            raise ConfigError(self.label(), "n_features", message)
        if self.dataset == "gaussian_classes" and int(self.n_informative) > int(self.n_features):
            message = f"must be at most n_features = {self.n_features}, got {self.n_informative}"
            raise ConfigError(self.label(), "n_informative", message)
        try:
            return load_dataset(
                self.dataset,
                digits,
                bool(self.standardize),
                bool(self.intercept),
                **self._generation(),
            )
        except ImportError as exc:
            raise ConfigError(self.label(), "dataset", str(exc)) from exc

    def _generation(self) -> dict[str, int | float]:
        """The generated datasets' parameters as load_dataset takes them (defaults if bundled, so
        a bundled dataset is cached once whatever they are)."""
        if self.dataset not in GENERATED:
            return {}
        return {
            "n_samples": int(self.n_samples),
            "n_features": int(self.n_features),
            "n_informative": int(self.n_informative),
            "noise": float(self.noise),
            "separation": float(self.separation),
            "flip": float(self.flip),
            "data_seed": int(self.data_seed),
        }

    def stream_identity(self) -> tuple[str, dict]:
        """The registry name and parameters that seed the stream, with only the generation
        parameters the dataset is drawn from: a bundled dataset keeps the stream (and the
        published numbers) it had before the generated datasets existed."""
        name, params = super().stream_identity()
        used = GENERATION_PARAMETERS.get(self.dataset, ())
        params = {k: v for k, v in params.items() if k not in GENERATION_NAMES or k in used}
        return name, files.keyed_params(self, params)

    def cell_params(self) -> dict[str, Any]:
        """Every parameter but the generation parameters the dataset does not use: the cells (and
        the players' streams) of the bundled datasets are those they had before the generated
        datasets existed."""
        used = GENERATION_PARAMETERS.get(self.dataset, ())
        params = self.get_params().items()
        kept = {k: v for k, v in params if k not in GENERATION_NAMES or k in used}
        return files.keyed_params(self, kept)

    def data_provenance(self) -> dict[str, str]:
        """The file read (path, size, SHA-256), for the manifest; nothing for a bundled set."""
        return files.data_provenance(self) if files.is_file_data(self.dataset) else {}

    def data_identity(self) -> dict[str, str]:
        # the bundled datasets ship with scikit-learn: its version pins their contents; the
        # generated ones are pinned by their parameters and the generators' versions
        import sklearn

        if files.is_file_data(self.dataset):
            return files.data_identity(self)
        if self.dataset not in GENERATED:
            return {"dataset": f"{self.dataset} (scikit-learn {sklearn.__version__})"}
        used = GENERATION_PARAMETERS[self.dataset]
        params = ", ".join(f"{k}={v}" for k, v in self._generation().items() if k in used)
        versions = f"scikit-learn {sklearn.__version__}, numpy {np.__version__}"
        return {"dataset": f"{self.dataset}({params}) ({versions})"}

    def bayes_risk(self) -> float | None:
        """Return the Bayes risk of a generated dataset's law, in the units the arena reports.

        Classification: the Bayes error, the 0-1 error of the best classifier (the units of
        ``mistakes`` per round and ``test_error``); regression: the expected declared loss
        (squared ½(ŷ − y)² or absolute) of the regression function, on the standardized target
        when ``standardize``. None for the bundled datasets, whose law is unknown. A risk of the
        law, not a bound on one fixed dataset's stream (class Notes).

        Examples
        --------
        >>> DatasetStream("friedman1", standardize=False, noise=2.0).bayes_risk()  # ½σ²
        2.0
        >>> DatasetStream("diabetes").bayes_risk() is None
        True
        """
        if self.dataset == "gaussian_classes":
            return gaussian_classes_bayes_error(float(self.separation), float(self.flip))
        if self.dataset != "friedman1":
            return None
        sigma = float(self.noise)
        if self.standardize:
            raw = load_dataset(self.dataset, (0,), False, False, **self._generation())[1]
            sigma /= float(raw.std())  # the standardization divides by the drawn targets' sd
        if self.declared_loss() == "absolute":
            return sigma * math.sqrt(2.0 / math.pi)
        return 0.5 * sigma**2

    def resolve_dim(self, requested: int | None) -> int:
        d = int(self._data()[0].shape[1])
        if requested is not None and int(requested) != d:
            raise ConfigError(
                self.label(),
                "n_actions",
                f"dataset {self.dataset} has d = {d} features but n_actions = {requested}",
            )
        return d

    def declared_domain(self) -> Domain:
        return make_domain(self.domain, self.radius)

    def declared_loss(self) -> str:
        regression = self._protocol() == "regression"
        if self.loss is None:
            return "squared" if regression else "hinge"
        if regression and self.loss not in REGRESSION_LOSSES:  # depends on the dataset too
            message = f"must be one of {REGRESSION_LOSSES} (regression data), got {self.loss!r}"
            raise ConfigError(self.label(), "loss", message)
        return self.loss

    def feature_bound(self) -> float:
        return float(row_norms(self._data()[0]).max())

    def gradient_bound(self) -> float | None:
        X, y = self._data()
        norms = row_norms(X)
        if self.declared_loss() != "squared":
            return float(norms.max())
        dom = self.declared_domain()
        if dom.kind == "unconstrained":
            return None
        if dom.kind == "ball":
            reach = dom.radius * norms
        elif dom.kind == "box":
            reach = dom.radius * row_abs_sums(X)
        else:  # simplex: ⟨w, x⟩ is a convex combination of the coordinates
            reach = row_abs_max(X)
        return float((norms * (reach + np.abs(y))).max())

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        X, y = self._data()
        self.declared_loss()
        if int(spec.dim) != X.shape[1]:
            raise ConfigError(self.label(), "n_actions", f"the dataset has d = {X.shape[1]}")
        self._X, self._y = X, y
        self._sparse = sp.issparse(X)
        self._rngs = list(rngs)
        n_rep, (n_train, m) = len(self._rngs), self.split_sizes()
        self._train = np.broadcast_to(np.arange(n_train), (n_rep, n_train))
        self._test = None
        if m:
            splits = np.stack([rng.permutation(X.shape[0]) for rng in self._rngs])
            test, self._train = np.sort(splits[:, :m], axis=1), np.sort(splits[:, m:], axis=1)
            self._test = RoundData(x=self.rows(test), y=y[test])
        n_samples = self._train.shape[1]
        self._perm = np.empty((n_rep, n_samples), dtype=np.int64)
        self._pos = n_samples  # position in the current epoch (n: a new epoch starts)
        self._start_stream()

    def _generate(self, n: int) -> RoundData:
        idx, self._pos = epoch_indices(self._perm, self._pos, self._rngs, n)
        idx = np.take_along_axis(self._train, idx, axis=1)  # the identity without a split
        return RoundData(x=self.rows(idx), y=self._y[idx])

    def rows(self, idx: np.ndarray) -> np.ndarray | SparseRows:
        """Return the features of examples ``idx`` (R, n) as a block of dense shape (R, n, d):
        :class:`~arena.oco.losses.SparseRows` in O(nnz) for a sparse file, an array otherwise
        (valid after ``reset``)."""
        if self._sparse:
            return files.sparse_block(self._X, idx)
        return take_rows(self._X, idx)

    def footprint(self, spec: GameSpec) -> Footprint:
        """A file's examples once (shared by the replicates), the permutations and two blocks of
        rounds, sparse ones counted by their entries
        (:func:`arena.adversaries._file_data.stream_footprint`); bundled sets are negligible."""
        if not files.is_file_data(self.dataset):
            return super().footprint(spec)
        X, y = self._data()
        n_train, m = self.split_sizes()
        n_rep = int(spec.n_replicates)
        return files.stream_footprint(self, X, y, n_rep, n_train, m, 16, sp.issparse(X))

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"dataset": "digits", "digits": [3, 8], "intercept": True}
        yield {"dataset": "diabetes"}
        yield {"dataset": "diabetes", "loss": "absolute", "domain": "ball"}
        yield {"test_fraction": 0.3, "domain": "ball", "radius": 5.0}
        yield {"dataset": "friedman1", "n_samples": 200, "noise": 0.5, "domain": "ball"}
        yield {"dataset": "gaussian_classes", "n_samples": 300, "flip": 0.1, "test_fraction": 0.2}
        yield {"dataset": "file", "path": str(_example_file()), "test_fraction": 0.2}
        yield {"dataset": "file", "path": str(_example_file()), "task": "regression"}


def _example_file():
    """A small sparse svmlight file (200 × 30, labels ±1), written once to a temporary folder,
    for the conformance tests' parameter sets."""
    import os
    import tempfile
    from pathlib import Path

    from arena.data.files import save_examples

    path = Path(tempfile.gettempdir()) / "regret-arena-dataset-stream-test" / "sparse.svm"
    if not path.exists():
        import scipy.sparse as sp

        path.parent.mkdir(exist_ok=True)
        rng = np.random.default_rng(0)
        X = sp.random(200, 30, density=0.1, random_state=rng, format="csr")
        y = np.where(X @ rng.standard_normal(30) > 0, 1.0, -1.0)
        part = path.with_name(f"sparse.{os.getpid()}.svm")  # concurrent test workers
        save_examples(part, X, y)
        part.replace(path)
    return path
