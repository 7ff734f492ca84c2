"""Batch boosting as an experts game: the weak-learning oracle returns the best decision stump."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, NamedTuple

import numpy as np

from arena.adversaries import _file_data as files
from arena.adversaries.dataset_stream import held_out_split, load_dataset
from arena.base import Footprint, shape_text
from arena.data.catalog import CATALOG
from arena.data.files import take_rows
from arena.errors import ConfigError
from arena.experts.components import AdaptiveAdversary
from arena.params import Boolean, Interval, ListOf, OneOf
from arena.spec import AdversaryTags, GameSpec, History

DATASETS = ("breast_cancer", "digits")
"""The bundled binary classification datasets the oracle boosts on."""

FILE_PARAMETERS = ("path", "data_dir", "label_column", "positive", "negative", "check_shape")
"""The parameters of a file or a catalog dataset (the bundled sets ignore them)."""


class SortedFeatures(NamedTuple):
    """The training examples of R replicates presorted along every feature, for stump search.

    Attributes
    ----------
    order : ndarray of int, shape (R, d, N)
        ``order[r, j]`` lists replicate r's training examples by increasing feature j.
    valid : ndarray of bool, shape (R, d, N + 1)
        ``valid[r, j, k]``: a threshold can put exactly the first k examples of that order on the
        ``−`` side (k = 0 and k = N always; else the k-th and (k+1)-th values differ).
    thresholds : ndarray, shape (R, d, N + 1)
        That threshold: the midpoint of the two values, ``−inf`` for k = 0, ``+inf`` for k = N.
    """

    order: np.ndarray
    valid: np.ndarray
    thresholds: np.ndarray


def presort(x: np.ndarray) -> SortedFeatures:
    """Sort the examples ``x`` (R, N, d) along every feature once (O(R d N log N)).

    Examples
    --------
    >>> s = presort(np.array([[[2.0], [1.0], [1.0]]]))
    >>> s.order[0, 0].tolist(), s.valid[0, 0].tolist(), s.thresholds[0, 0].tolist()
    ([1, 2, 0], [True, False, True, True], [-inf, 1.0, 1.5, inf])
    """
    xt = np.ascontiguousarray(np.swapaxes(x, 1, 2))  # (R, d, N)
    order = np.argsort(xt, axis=2, kind="stable")
    vals = np.take_along_axis(xt, order, axis=2)
    n_rep, d, n = vals.shape
    valid = np.ones((n_rep, d, n + 1), dtype=bool)
    valid[:, :, 1:n] = vals[:, :, :-1] < vals[:, :, 1:]
    thresholds = np.empty((n_rep, d, n + 1))
    thresholds[:, :, 0], thresholds[:, :, n] = -np.inf, np.inf
    thresholds[:, :, 1:n] = 0.5 * (vals[:, :, :-1] + vals[:, :, 1:])
    return SortedFeatures(order, valid, thresholds)


def stump_predict(x: np.ndarray, feature: np.ndarray, threshold: np.ndarray, sign: np.ndarray):
    """Return ``h(x) = sign · (+1 if x_j > θ else −1)`` per replicate: x (R, M, d) → (R, M).

    Examples
    --------
    >>> x = np.array([[[0.0], [2.0]]])
    >>> stump_predict(x, np.array([0]), np.array([1.0]), np.array([-1.0])).tolist()
    [[1.0, -1.0]]
    """
    col = np.take_along_axis(x, feature[:, None, None], axis=2)[:, :, 0]
    return sign[:, None] * np.where(col > threshold[:, None], 1.0, -1.0)


def best_stump(
    sorted_features: SortedFeatures, p: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the decision stump of largest weighted edge under ``p``, per replicate.

    Over every feature j, threshold θ between two consecutive distinct values (or below / above
    all of them, the constant stumps) and sign s, maximize ``Σ_i p_i y_i h(x_i)`` for
    ``h(x) = s · (+1 if x_j > θ else −1)``. With the examples sorted by feature j and ``c_k`` the
    prefix sums of ``p_i y_i`` in that order, the stump with the first k examples on the ``−``
    side has ``Σ_i p_i y_i h(x_i) = s (c_N − 2 c_k)``, so one cumulative sum per feature scores
    every threshold: O(R d N) per call after :func:`presort`. Ties go to the smallest
    (feature, k), then to ``s = +1``.

    Parameters
    ----------
    sorted_features : SortedFeatures
        The training examples presorted by :func:`presort`.
    p, y : ndarray, shape (R, N)
        The distribution over the examples and their labels ±1.

    Returns
    -------
    feature : ndarray of int, shape (R,)
    threshold, sign : ndarray, shape (R,)

    Examples
    --------
    >>> x = np.array([[[0.0], [1.0], [2.0], [3.0]]])
    >>> y = np.array([[-1.0, -1.0, 1.0, 1.0]])
    >>> j, th, s = best_stump(presort(x), np.full((1, 4), 0.25), y)
    >>> int(j[0]), float(th[0]), float(s[0])
    (0, 1.5, 1.0)
    """
    order, valid, thresholds = sorted_features
    n_rep, d, n = order.shape
    weighted = (p * y)[:, None, :]
    prefix = np.zeros((n_rep, d, n + 1))
    np.cumsum(
        np.take_along_axis(np.broadcast_to(weighted, order.shape), order, axis=2),
        axis=2,
        out=prefix[:, :, 1:],
    )
    score = prefix[:, :, n:] - 2.0 * prefix  # Σ p y h of the s = +1 stump, (R, d, N + 1)
    magnitude = np.where(valid, np.abs(score), -1.0).reshape(n_rep, -1)
    best = magnitude.argmax(axis=1)
    feature, k = np.divmod(best, n + 1)
    rows = np.arange(n_rep)
    sign = np.where(score[rows, feature, k] >= 0.0, 1.0, -1.0)
    return feature, thresholds[rows, feature, k], sign


def next_valid(valid: np.ndarray) -> np.ndarray:
    """Return ``nv[..., k]``, the smallest ``k' ≥ k`` with ``valid[..., k']`` (the last index is
    always valid, so every entry is defined).

    Examples
    --------
    >>> next_valid(np.array([True, False, False, True, True])).tolist()
    [0, 3, 3, 3, 4]
    """
    n = valid.shape[-1]
    idx = np.where(valid, np.arange(n), n)
    return np.minimum.accumulate(idx[..., ::-1], axis=-1)[..., ::-1]


def best_stump_skipping(
    sorted_features: SortedFeatures, next_valid_k: np.ndarray, p: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return :func:`best_stump`'s stump, scanning only the examples of positive weight.

    An example with ``p_i = 0`` adds nothing to any prefix sum ``c_k``, so the thresholds between
    two consecutive examples of positive weight (in a feature's order) all score the same; the
    search scores one cut per such run, ``n₊ + 1`` per feature instead of ``N + 1``, and maps the
    best run back to the smallest valid threshold in it (``next_valid_k``, from
    :func:`next_valid`). The prefix sums add the same nonzero terms in the same order (a float
    sum is unchanged by adding zeros), so the scores are bitwise those of :func:`best_stump` and
    so is the stump, ties included (smallest feature, then smallest k, then ``s = +1``).
    Filtering the presorted orders still reads ``d·N`` weights; the prefix sums and the scored
    candidates, the search proper, cost ``d·(n₊ + 1)`` per replicate.

    Returns
    -------
    feature : ndarray of int, shape (R,)
    threshold, sign : ndarray, shape (R,)
    scanned : ndarray of int, shape (R,)
        The prefix-sum terms computed, ``d·n₊`` per replicate (:func:`best_stump`: ``d·N``).

    Examples
    --------
    >>> x = np.array([[[0.0], [1.0], [2.0], [3.0]]])
    >>> y = np.array([[-1.0, -1.0, 1.0, 1.0]])
    >>> sf = presort(x)
    >>> j, th, s, n = best_stump_skipping(sf, next_valid(sf.valid), np.array([[0.5, 0, 0, 0.5]]), y)
    >>> int(j[0]), float(th[0]), float(s[0]), int(n[0])  # the cut at k = 1: the first run
    (0, 0.5, 1.0, 2)
    """
    order, _, thresholds = sorted_features
    n_rep, d, n = order.shape
    feature = np.empty(n_rep, dtype=np.int64)
    threshold = np.empty(n_rep)
    sign = np.empty(n_rep)
    scanned = np.empty(n_rep, dtype=np.int64)
    for r in range(n_rep):
        keep = p[r][order[r]] > 0.0  # (d, N): the same n₊ examples in every feature's order
        n_pos = int(keep[0].sum())
        pos = np.nonzero(keep)[1].reshape(d, n_pos)  # their places in the full orders
        weighted = (p[r] * y[r])[order[r][keep].reshape(d, n_pos)]
        prefix = np.zeros((d, n_pos + 1))
        np.cumsum(weighted, axis=1, out=prefix[:, 1:])
        score = prefix[:, n_pos:] - 2.0 * prefix  # one score per run of equal cuts
        lo = np.concatenate([np.zeros((d, 1), dtype=np.int64), pos + 1], axis=1)
        hi = np.concatenate([pos, np.full((d, 1), n, dtype=np.int64)], axis=1)
        k = np.take_along_axis(next_valid_k[r], lo, axis=1)  # the run's first valid cut
        magnitude = np.where(k <= hi, np.abs(score), -1.0).reshape(-1)
        best = int(magnitude.argmax())
        j, c = divmod(best, n_pos + 1)
        feature[r] = j
        threshold[r] = thresholds[r, j, k[j, c]]
        sign[r] = 1.0 if score[j, c] >= 0.0 else -1.0
        scanned[r] = d * n_pos
    return feature, threshold, sign, scanned


class BoostingOracle(AdaptiveAdversary):
    """Batch boosting as an experts game: the examples are the experts, the oracle a stump learner.

    Parameters
    ----------
    dataset : {"breast_cancer", "digits", "file"} or a catalog name
        A scikit-learn bundled binary dataset: ``breast_cancer`` (569 × 30, +1 benign) or
        ``digits`` restricted to two digits (the thesis's OCR-49 stand-in with the default
        ``[4, 9]``: 361 × 64 pixel intensities 0-16, +1 for the first digit); ``file``: the
        file ``path``; a name of the sources' catalog (e.g. ``heart``): its copy, checked
        against the published shape (docs/data.md). Raw features: stumps do not change under
        monotone rescaling of a feature.
    digits : list of int
        ``digits`` only: the two digits kept, the first labelled +1.
    test_fraction : float
        Fraction in [0, 1) of the examples held out as a test split: ``m = ⌊f·n⌋`` examples,
        drawn per replicate from its stream (``rng.permutation(n)``, the first m), so the split
        is a fixed function of the seed, the cell and the replicate, common to every player.
        The other ``N = n − m`` examples are the experts.
    path : str or None
        The file to read (svmlight/LIBSVM text, plain or compressed; CSV; Parquet; ``.npz``).
    data_dir : str or None
        A catalog name without ``path``: the folder holding the copy (None: ``ARENA_DATA_DIR``).
    label_column : str, int or None
        CSV and Parquet: the label's column, by header name or 0-based index (None: the first).
    positive, negative : list of float or None
        The labels that become +1 and −1 (None: two labels in the file, the larger +1; every
        label not positive is −1).
    check_shape : bool
        A catalog name: refuse a copy whose shape differs from the published table.
    skip_zero_weights : bool
        Let the weak learner skip the examples of weight 0 (:func:`best_stump_skipping`): the
        same stumps, bitwise, from a search over the ``n₊`` examples of positive weight. Off by
        default; it cannot change the game, so it is not part of the cell key.
        :meth:`stump_search_work` counts the prefix-sum terms either way.

    Notes
    -----
    The reduction of Freund & Schapire (1997) as Luo (2016, §2.2) writes it. Each training
    example ``(x_i, y_i)``, ``y_i ∈ {±1}``, is an expert. Round t: the player commits ``p_t``
    (read through ``history.probs``, tag ``sees_distribution``); the weak learner returns the
    exhaustive best decision stump ``h_t`` under ``p_t`` (:func:`best_stump`, over every
    feature, threshold and sign), whose edge is ``γ_t = ½ Σ_i p_{t,i} y_i h_t(x_i) ≥ 0`` (a stump
    and its negation are both candidates); the losses are ``ℓ_{t,i} = 1{h_t(x_i) = y_i}``: the
    examples the stump gets right are "lost", so the weight moves to the hard ones. Then
    ``ℓ_{t,i} − p_t·ℓ_t = ½ y_i h_t(x_i) − γ_t``: the regret of expert i is
    ``R_{T,i} = Σ_t γ_t − ½ Σ_t y_i h_t(x_i)`` (the negated chip ``−s_{T,i}`` of Luo's
    Algorithms 4 and 5), so any experts player becomes a booster: Hedge an AdaBoost with a
    constant step (Freund & Schapire 1997, §4), ``normal_hedge_dt`` NH-Boost.DT (Luo 2016,
    Algorithm 4), ``normal_hedge`` NH-Boost (Algorithm 5). The thesis's prose states the loss as
    ``1{h_t(x_i) ≠ y_i}``; its update ``s ← s + ½ y h − γ`` and its Eq. (2.4) need ``1{h = y}``,
    which this follows.

    The final hypothesis is the unweighted majority vote ``H(x) = sign(Σ_t h_t(x))``, and the
    (normalized) margin of example i is ``(1/t) Σ_{s≤t} y_i h_s(x_i) ∈ [−1, 1]`` (Luo 2016,
    §2.2). An example misclassified by the vote has ``Σ_s y_i h_s(x_i) ≤ 0`` (a tie counts as an
    error), hence regret ``R_{t,i} ≥ Σ_s γ_s``: the training error is at most the fraction of
    experts whose regret reaches ``Σ_s γ_s``, which a player's ε-quantile regret bound controls
    (Luo 2016, Theorem 3). The vote's running sums on the training and test examples
    (:meth:`train_votes`, :meth:`test_votes`), the edges (:meth:`edges`) and the stumps
    (:meth:`stumps`) are what the ``vote_train_error``, ``vote_test_error``, ``margin_frac`` and
    ``mean_edge`` metrics read. The weak learner scans all examples every round unless
    ``skip_zero_weights``: NormalHedge's weights are exactly 0 on the examples whose regret is
    not positive, which is why Luo 2016 (Table 2.2) finds NH-Boost.DT the fastest
    booster; skipping them returns the same stump with less work (:meth:`stump_search_work`).
    The stumps and edges are kept for the whole game (the hypothesis ``H`` is its T stumps), so
    the state grows by O(R) per round: conformance's ``check_bounded_memory`` is declared to fail.

    A file's examples are read once (sparse files stay sparse there) and each replicate's
    training and test examples are densified at ``reset``, as the exhaustive stump search reads
    every feature of every example; the footprint counts them and the presorted features.

    Examples
    --------
    >>> from arena import play
    >>> from arena.metrics.boosting import VoteTrainError
    >>> df = play("normal_hedge_dt", BoostingOracle(), horizon=50, metrics=[VoteTrainError()])
    >>> bool(df.value.iloc[-1] < 0.1)
    True

    References
    ----------
    Freund & Schapire (1997), "A decision-theoretic generalization of on-line learning and an
    application to boosting", JCSS 55, §4; Luo (2016), PhD thesis, §2.2, Algorithms 4 and 5,
    Theorem 3; Schapire & Freund (2012), "Boosting: foundations and algorithms", §1.2 (decision
    stumps).
    """

    tags = AdversaryTags(
        oblivious=False,
        sees_distribution=True,
        expected_failed_checks=(
            (
                "check_bounded_memory",
                "it keeps the boosted hypothesis: one stump (3 numbers) and one edge per round "
                "and replicate, O(T·R) beside the O(R·N) vote sums",
            ),
        ),
    )
    parameter_constraints: ClassVar = {
        "dataset": [OneOf(*DATASETS, files.FILE, *CATALOG)],
        "digits": [ListOf(Interval(0, 9, integer=True))],
        "test_fraction": [Interval(0, 1, closed="left")],
        **{k: files.FILE_CONSTRAINTS[k] for k in FILE_PARAMETERS},
        "skip_zero_weights": [Boolean()],
    }

    def __init__(
        self,
        dataset: str = "breast_cancer",
        digits: Sequence[int] = (4, 9),
        test_fraction: float = 0.3,
        path: str | None = None,
        data_dir: str | None = None,
        label_column: str | int | None = None,
        positive: Sequence[float] | None = None,
        negative: Sequence[float] | None = None,
        check_shape: bool = True,
        skip_zero_weights: bool = False,
    ):
        self.dataset = dataset
        self.digits = digits
        self.test_fraction = test_fraction
        self.path = path
        self.data_dir = data_dir
        self.label_column = label_column
        self.positive = positive
        self.negative = negative
        self.check_shape = check_shape
        self.skip_zero_weights = skip_zero_weights

    # ------------------------------------------------------------------------------------------
    # the data

    def _data(self) -> tuple[np.ndarray, np.ndarray]:
        files.check_location(self, DATASETS)
        if files.is_file_data(self.dataset):
            return files.binary_or_regression(self, "classification", False, False)
        digits = tuple(int(v) for v in self.digits or ())
        if self.dataset == "digits":
            if len(digits) != 2 or digits[0] == digits[1]:
                raise ConfigError(self.label(), "digits", "must be two distinct digits 0-9")
        else:
            digits = (0,)  # unused
        try:
            return load_dataset(self.dataset, digits, False, False)
        except ImportError as exc:
            raise ConfigError(self.label(), "dataset", str(exc)) from exc

    def cell_params(self) -> dict:
        """Every parameter but the file parameters at their defaults (the bundled sets keep the
        keys, seeds and published numbers they had before those existed) and the file's folder
        (the digest of :meth:`data_identity` identifies the data), nor ``skip_zero_weights``
        (the same stumps: it cannot change the game)."""
        params = {k: v for k, v in self.get_params().items() if k != "skip_zero_weights"}
        return files.keyed_params(self, params)

    def footprint(self, spec: GameSpec) -> Footprint:
        """A file's examples once, and per replicate its densified training and test examples
        with their presorted features (about 33 bytes per training value: the values, the order,
        the thresholds and their validity); bundled sets are negligible."""
        if not files.is_file_data(self.dataset):
            return super().footprint(spec)
        X, y = self._data()
        n_train, m = self.split_sizes()
        n_rep, d = int(spec.n_replicates), int(X.shape[1])
        stored = files.stream_footprint(self, X, y, n_rep, n_train, m, 0).memory
        dense = n_rep * d * (33 * n_train + 8 * m) + 16 * n_rep * (n_train + m)
        return Footprint(
            memory=float(stored + dense),
            work=float(6 * n_rep * d * n_train),
            setup=float(n_rep * d * n_train * max(np.log2(max(n_train, 2)), 1.0)),
            parameter="path" if self.path is not None else "dataset",
            what=f"{n_rep} replicates' densified, presorted training examples "
            f"{shape_text(n_rep, n_train, d)} of {self.dataset}",
        )

    def data_provenance(self) -> dict[str, str]:
        """The file read (path, size, SHA-256), for the manifest; nothing for a bundled set."""
        return files.data_provenance(self) if files.is_file_data(self.dataset) else {}

    def data_identity(self) -> dict[str, str]:
        if files.is_file_data(self.dataset):
            return files.data_identity(self)
        import sklearn

        return {"dataset": f"{self.dataset} (scikit-learn {sklearn.__version__})"}

    def split_sizes(self) -> tuple[int, int]:
        """Return ``(N, m)``: the training examples (the experts) and the held-out ones.

        Examples
        --------
        >>> BoostingOracle("breast_cancer", test_fraction=0.3).split_sizes()  # m = ⌊0.3 · 569⌋
        (399, 170)
        """
        return held_out_split(self, int(self._data()[0].shape[0]), self.test_fraction)

    def resolve_n_actions(self, requested: int | None) -> int:
        n_train = self.split_sizes()[0]
        if requested is not None and int(requested) != n_train:
            raise ConfigError(
                self.label(),
                "n_actions",
                f"the experts are the {n_train} training examples but n_actions = {requested} "
                f"(omit n_actions or set n_actions={n_train})",
            )
        return n_train

    # ------------------------------------------------------------------------------------------
    # game state

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        X, y = self._data()
        n_train, m = self.split_sizes()
        if spec.n_actions != n_train:
            raise ConfigError(self.label(), "n_actions", f"the game has {n_train} experts")
        n_rep = spec.n_replicates
        if m:
            perm = np.stack([rng.permutation(X.shape[0]) for rng in rngs])
            test, train = np.sort(perm[:, :m], axis=1), np.sort(perm[:, m:], axis=1)
        else:
            train = np.broadcast_to(np.arange(n_train), (n_rep, n_train))
            test = np.zeros((n_rep, 0), dtype=np.int64)
        self._train_idx, self._test_idx = train, test
        self._x_train, self._y_train = take_rows(X, train), y[train]
        self._x_test, self._y_test = take_rows(X, test), y[test]
        self._sorted = presort(self._x_train)
        self._next_valid = next_valid(self._sorted.valid) if self.skip_zero_weights else None
        self._work = np.zeros(n_rep, dtype=np.int64)
        self._train_votes = np.zeros((n_rep, n_train))
        self._test_votes = np.zeros((n_rep, m))
        self._stumps: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._edges: list[np.ndarray] = []

    def losses(self, t: int, history: History) -> np.ndarray:
        p = np.asarray(history.probs, dtype=np.float64)
        if self._next_valid is None:
            feature, threshold, sign = best_stump(self._sorted, p, self._y_train)
            self._work += self._sorted.order.shape[1] * self._sorted.order.shape[2]
        else:
            feature, threshold, sign, scanned = best_stump_skipping(
                self._sorted, self._next_valid, p, self._y_train
            )
            self._work += scanned
        h = stump_predict(self._x_train, feature, threshold, sign)
        correct = h * self._y_train  # y_i h_t(x_i) ∈ {±1}
        self._edges.append(0.5 * np.einsum("rn,rn->r", p, correct))
        self._stumps.append((feature, threshold, sign))
        self._train_votes += correct
        if self._test_votes.shape[1]:
            self._test_votes += stump_predict(self._x_test, feature, threshold, sign) * self._y_test
        return (correct > 0).astype(np.float64)

    # ------------------------------------------------------------------------------------------
    # what the boosting metrics read

    def train_votes(self) -> np.ndarray:
        """Return ``Σ_{s≤t} y_i h_s(x_i)`` for every training example, shape (R, N)."""
        return self._train_votes.copy()

    def test_votes(self) -> np.ndarray:
        """Return ``Σ_{s≤t} y_i h_s(x_i)`` for every held-out example, shape (R, m)."""
        return self._test_votes.copy()

    def stump_search_work(self) -> np.ndarray:
        """Return the prefix-sum terms the stump searches have computed so far, (R,): ``d·N`` a
        round, or ``d·n₊`` (the examples of positive weight) with ``skip_zero_weights``."""
        return self._work.copy()

    def edges(self) -> np.ndarray:
        """Return the edges ``γ_s = ½ Σ_i p_{s,i} y_i h_s(x_i)`` of rounds 1..t, shape (R, t)."""
        n_rep = self._train_votes.shape[0]
        return np.stack(self._edges, axis=1) if self._edges else np.zeros((n_rep, 0))

    def stumps(self) -> dict[str, np.ndarray]:
        """Return the stumps of rounds 1..t: ``feature``, ``threshold``, ``sign``, each (R, t)."""
        n_rep = self._train_votes.shape[0]
        keys = ("feature", "threshold", "sign")
        if not self._stumps:
            return {k: np.zeros((n_rep, 0)) for k in keys}
        columns = zip(*self._stumps, strict=True)
        return {k: np.stack(col, axis=1) for k, col in zip(keys, columns, strict=True)}

    def test_examples(self) -> tuple[np.ndarray, np.ndarray]:
        """Return the held-out examples ``x`` (R, m, d) and labels ``y`` (R, m), never shown to the
        player or to the weak learner (for the metrics' brute-force definitions)."""
        return self._x_test.copy(), self._y_test.copy()

    def split(self) -> dict[str, np.ndarray]:
        """Return replicate r's split as dataset row indices: ``train`` (R, N), ``test`` (R, m)."""
        return {"train": self._train_idx.copy(), "test": self._test_idx.copy()}

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"dataset": "digits", "test_fraction": 0.5}
        yield {"test_fraction": 0.0}
        yield {"dataset": "file", "path": str(_example_file()), "test_fraction": 0.25}
        yield {"skip_zero_weights": True}


def _example_file():
    """The small sparse svmlight file of ``dataset_stream``'s conformance parameters."""
    from arena.adversaries.dataset_stream import _example_file as example

    return example()
