"""scikit-learn's bundled datasets as online streams: breast cancer, digits (binary), diabetes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache
from typing import ClassVar

import numpy as np

from adversaries._oco_stream import DOMAIN, EXAMPLE_LOSS, InstanceTags, StreamAdversary, make_domain
from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import POSITIVE, Boolean, Interval, IsNone, ListOf, OneOf
from arena.spec import AdversaryTags, GameSpec

DATASETS = {
    "breast_cancer": "classification",
    "digits": "classification",
    "diabetes": "regression",
}
"""The datasets and their protocols."""

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
    dataset: str, digits: tuple[int, ...] = (0,), standardize: bool = True, intercept: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Return the preprocessed ``(X, y)`` of a bundled dataset (read-only arrays, cached).

    See :class:`DatasetStream` for the labels, the standardization and the intercept.

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
    """A bundled scikit-learn dataset shown one example per round, reshuffled every epoch.

    Parameters
    ----------
    dataset : {"breast_cancer", "digits", "diabetes"}
        ``breast_cancer``: Wisconsin diagnostic (569 × 30), label +1 benign / −1 malignant;
        ``digits``: 8×8 handwritten digits (1797 × 64) as a binary task (``digits``);
        ``diabetes``: 442 × 10 regression (the protocol is then ``regression``).
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

    These are stand-ins, not the thesis datasets: scikit-learn's breast cancer is WDBC, not the
    LIBSVM breast-cancer set (683×10), and its diabetes is a 442×10 regression set, not Pima
    (768×8); the thesis's datasets are listed in Luo 2016, Appendix D, Table D.1.

    Examples
    --------
    >>> adv = DatasetStream("digits", digits=[3, 8])
    >>> adv.tags.protocol, adv.resolve_dim(None), adv.declared_loss()
    ('classification', 64, 'hinge')
    >>> adv.reset(GameSpec("classification", 64, 10, dim=64), [np.random.default_rng(0)])
    >>> adv.data_block(1, 4).x.shape
    (1, 4, 64)

    References
    ----------
    scikit-learn's ``sklearn.datasets.load_breast_cancer``, ``load_digits``, ``load_diabetes``;
    Luo 2016, Appendix D (the datasets these stand in for).
    """

    tags = InstanceTags(AdversaryTags(protocol="classification", oblivious=True))
    parameter_constraints: ClassVar = {
        "dataset": [OneOf(*DATASETS)],
        "digits": [ListOf(Interval(0, 9, integer=True)), IsNone()],
        "standardize": [Boolean()],
        "intercept": [Boolean()],
        "loss": [*EXAMPLE_LOSS, IsNone()],
        "domain": DOMAIN,
        "radius": [POSITIVE],
        "test_fraction": [Interval(0, 1, closed="left")],
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
    ):
        self.dataset = dataset
        self.digits = digits
        self.standardize = standardize
        self.intercept = intercept
        self.loss = loss
        self.domain = domain
        self.radius = radius
        self.test_fraction = test_fraction

    def _instance_tags(self) -> AdversaryTags:
        oracle = frozenset({"test_split"}) if self.test_fraction else frozenset()
        return AdversaryTags(
            protocol=DATASETS.get(self.dataset, "classification"), oblivious=True, oracle=oracle
        )

    def split_sizes(self) -> tuple[int, int]:
        """Return ``(n − m, m)``: the streamed and the held-out examples, ``m = ⌊f·n⌋`` exactly.

        Examples
        --------
        >>> DatasetStream("breast_cancer", test_fraction=0.3).split_sizes()  # ⌊0.3 · 569⌋
        (399, 170)
        """
        return held_out_split(self, int(self._data()[0].shape[0]), self.test_fraction)

    def _data(self) -> tuple[np.ndarray, np.ndarray]:
        digits = tuple(int(v) for v in self.digits or ())
        if self.dataset == "digits":
            # one digit against the rest, or one against another: a fact about the whole list
            if len(digits) not in (1, 2) or len(set(digits)) != len(digits):
                message = "must be one digit or two distinct digits 0-9"
                raise ConfigError(self.label(), "digits", message)
        else:
            digits = (0,)  # unused
        try:
            return load_dataset(self.dataset, digits, bool(self.standardize), bool(self.intercept))
        except ImportError as exc:
            raise ConfigError(self.label(), "dataset", str(exc)) from exc

    def data_identity(self) -> dict[str, str]:
        # the bundled datasets ship with scikit-learn: its version pins their contents
        import sklearn

        return {"dataset": f"{self.dataset} (scikit-learn {sklearn.__version__})"}

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
        regression = DATASETS[self.dataset] == "regression"
        if self.loss is None:
            return "squared" if regression else "hinge"
        if regression and self.loss not in REGRESSION_LOSSES:  # depends on the dataset too
            message = f"must be one of {REGRESSION_LOSSES} (regression data), got {self.loss!r}"
            raise ConfigError(self.label(), "loss", message)
        return self.loss

    def feature_bound(self) -> float:
        return float(np.linalg.norm(self._data()[0], axis=1).max())

    def gradient_bound(self) -> float | None:
        X, y = self._data()
        norms = np.linalg.norm(X, axis=1)
        if self.declared_loss() != "squared":
            return float(norms.max())
        dom = self.declared_domain()
        if dom.kind == "unconstrained":
            return None
        if dom.kind == "ball":
            reach = dom.radius * norms
        elif dom.kind == "box":
            reach = dom.radius * np.abs(X).sum(axis=1)
        else:  # simplex: ⟨w, x⟩ is a convex combination of the coordinates
            reach = np.abs(X).max(axis=1)
        return float((norms * (reach + np.abs(y))).max())

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        X, y = self._data()
        self.declared_loss()
        if int(spec.dim) != X.shape[1]:
            raise ConfigError(self.label(), "n_actions", f"the dataset has d = {X.shape[1]}")
        self._X, self._y = X, y
        self._rngs = list(rngs)
        n_rep, (n_train, m) = len(self._rngs), self.split_sizes()
        self._train = np.broadcast_to(np.arange(n_train), (n_rep, n_train))
        self._test = None
        if m:
            splits = np.stack([rng.permutation(X.shape[0]) for rng in self._rngs])
            test, self._train = np.sort(splits[:, :m], axis=1), np.sort(splits[:, m:], axis=1)
            self._test = RoundData(x=X[test], y=y[test])
        n_samples = self._train.shape[1]
        self._perm = np.empty((n_rep, n_samples), dtype=np.int64)
        self._pos = n_samples  # position in the current epoch (n: a new epoch starts)
        self._start_stream()

    def _generate(self, n: int) -> RoundData:
        idx, self._pos = epoch_indices(self._perm, self._pos, self._rngs, n)
        idx = np.take_along_axis(self._train, idx, axis=1)  # the identity without a split
        return RoundData(x=self._X[idx], y=self._y[idx])

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"dataset": "digits", "digits": [3, 8], "intercept": True}
        yield {"dataset": "diabetes"}
        yield {"dataset": "diabetes", "loss": "absolute", "domain": "ball"}
        yield {"test_fraction": 0.3, "domain": "ball", "radius": 5.0}
