"""Online decision stumps (classification) and regression stumps (SGD on each feature)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import numpy as np

from arena.base import Footprint, shape_text
from arena.boosting.components import WeakLearner, WeakSpec
from arena.oco.losses import is_sparse
from arena.params import POSITIVE, Interval
from arena.weak_learners import _sparse_stump
from arena.weak_learners._lanes import active_lanes, with_bias


class Stump(WeakLearner):
    """Online stumps: the best single-feature rule so far, per lane.

    **Classification** (targets ±1). A stump is ``h_{j,c,s}(x) = s`` if ``x_j ≥ c`` else ``−s``
    (feature j, threshold c, sign ``s = ±1``). The candidate thresholds of feature j are the
    values ``x_j`` of the lane's first K examples with a positive weight (the learner stores these
    K examples). For every candidate it keeps the exact importance-weighted error over *all* the
    lane's examples so far, ``E_{j,k,+} = Σ_t w_t·[h_{j,c_k,+}(x_t) ≠ y_t]`` (a candidate added at
    the lane's k-th example first sums its error over the k − 1 stored earlier ones), and
    ``E_{j,k,−} = W − E_{j,k,+}`` with ``W = Σ_t w_t``. It predicts with the stump of least error,
    the first in the order (j, k, s = + before −) on ties; before any example it predicts +1.
    (Batch stumps place thresholds at the data too; taking the first K examples' values keeps
    every candidate's error exact without storing the stream.)

    **Regression** (Beygelzimer, Hazan, Kale & Luo 2015, §6; Luo 2016, §3.2.5: "SGD on each
    feature separately, predicting with the best-performing non-zero valued feature in the
    current example"). With ``x̃ = (x, 1)`` (the bias is a feature of its own, as in Vowpal
    Wabbit, where the experiments ran), feature j's model is ``f_j(x) = clip(θ_j·x̃_j, −D, D)``,
    ``θ_1 = 0``. An update with target y and weight w > 0 charges every model its loss and takes
    an SGD step on it: ``Λ_j ← Λ_j + w·½(f_j(x) − y)²`` and ``θ_j ← θ_j − η·w·(f_j(x) − y)·x̃_j``.
    The output is ``f_{j*}(x)`` with ``j*`` the feature of least cumulative weighted squared loss
    ``Λ_j`` among those with ``x̃_j ≠ 0`` (the bias always qualifies; ties: the lowest j). "Best
    performing" is not defined in the sources: the least cumulative loss so far is our reading.

    Parameters
    ----------
    n_thresholds : int
        K, candidate thresholds per feature (classification).
    rate : float
        SGD step size η > 0 (regression).

    **Sparse rows.** :meth:`predict` and :meth:`update` also take a round's rows as
    :class:`~arena.oco.losses.SparseRows` of shape (R, d) (:attr:`sparse_rows`; the boosters'
    per-round loops pass them so). A classification round on them costs O(nnz·(K + log d)) per
    lane instead of O(d·K): the errors are held as lazy per-group offsets plus two segment trees
    of the least and largest error (:mod:`arena.weak_learners._sparse_stump`), the dense path's sums
    reassociated, so the two give the same stumps wherever the sums are exact (0/1 or other
    dyadic weights) and the same to rounding otherwise; a lane's first K examples, which become
    its candidates, cost O(d·K) each either way. A regression round densifies the rows.

    Notes
    -----
    No guarantee is claimed: a stump class is weak on purpose (Luo 2016, §3.2.5 finds boosting
    helps stumps most). The classification stump is the follow-the-leader learner over the
    2·d·K candidate stumps; a weight of exactly 0 leaves a lane untouched (its candidates are
    drawn only from examples with a positive weight).

    Examples
    --------
    >>> wl = Stump(n_thresholds=2)
    >>> wl.reset(WeakSpec("classification", n_features=2, n_lanes=1), [[np.random.default_rng(0)]])
    >>> for x, y in [([0.0, 5.0], -1.0), ([1.0, -5.0], 1.0), ([2.0, 5.0], 1.0)]:
    ...     wl.update(np.array([x]), np.array([[y]]), np.ones((1, 1)))
    >>> # thresholds 0 and 1 on x_1, 5 and −5 on x_2; "+1 iff x_1 ≥ 1" makes no error:
    >>> wl.predict(np.array([[0.5, 0.0]])).tolist(), wl.predict(np.array([[3.0, 0.0]])).tolist()
    ([[-1.0]], [[1.0]])

    References
    ----------
    Beygelzimer, Hazan, Kale & Luo 2015, §6 (regression stumps as base learners of online
    gradient boosting); Luo 2016, §3.1.5 and §3.2.5 (the experiments' weak learners).
    """

    parameter_constraints: ClassVar = {
        "n_thresholds": [Interval(1, None, integer=True)],
        "rate": [POSITIVE],
    }
    sparse_rows: ClassVar[bool] = True
    """:meth:`predict` and :meth:`update` take a round's rows as ``SparseRows`` (R, d) too."""

    def __init__(self, n_thresholds: int = 16, rate: float = 0.1):
        self.n_thresholds = n_thresholds
        self.rate = rate

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {"n_thresholds": 4, "rate": 0.2}

    def footprint(self, spec: WeakSpec) -> Footprint:
        """Classification: per lane, thresholds and errors (d × K) and the first K examples."""
        n_rep, lanes, d = int(spec.n_replicates), int(spec.n_lanes), int(spec.n_features)
        if spec.task != "classification":
            return super().footprint(spec)
        k = int(self.n_thresholds)
        # on sparse rows, also the lazy errors (d × K) and four trees of 2·D ≤ 4d entries a group
        return Footprint(
            memory=8 * n_rep * lanes * (4 * d * k + 2 * k + 4 + 32 * d),
            work=4 * n_rep * lanes * d * k,
            parameter="n_thresholds",
            what=f"n_thresholds={k}: {lanes} lanes of {shape_text(n_rep, d, k)} thresholds",
        )

    def reset(self, spec: WeakSpec, rngs: Sequence[Sequence[np.random.Generator]]) -> None:
        self._spec = spec
        n_rep, lanes, d = spec.n_replicates, spec.n_lanes, spec.n_features
        if spec.task == "classification":
            k = int(self.n_thresholds)
            self._seen = np.zeros((n_rep, lanes), dtype=np.int64)  # examples with weight > 0
            self._thresholds = np.zeros((n_rep, lanes, d, k))
            self._errors = np.zeros((n_rep, lanes, d, k))  # E_{j,k,+}
            self._total = np.zeros((n_rep, lanes))  # W
            self._kept_x = np.zeros((n_rep, lanes, k, d))  # the first K examples
            self._kept_y = np.zeros((n_rep, lanes, k))
            self._kept_w = np.zeros((n_rep, lanes, k))
            self._lazy: dict[str, np.ndarray] | None = None  # the sparse rows' state
        else:
            self._theta = np.zeros((n_rep, lanes, d + 1))
            self._losses = np.zeros((n_rep, lanes, d + 1))  # Λ_j

    # ------------------------------------------------------------------------------------------
    # classification

    def _best_stump(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Feature, candidate index and sign of every lane's least-error stump, each (R, L)."""
        k = self._thresholds.shape[3]
        plus = self._errors
        minus = self._total[:, :, None, None] - plus
        valid = (np.arange(k) < np.minimum(self._seen, k)[:, :, None])[:, :, None, :, None]
        errors = np.where(valid, np.stack([plus, minus], axis=-1), np.inf)
        best = errors.reshape(*errors.shape[:2], -1).argmin(axis=2)
        return best // (2 * k), (best // 2) % k, np.where(best % 2 == 0, 1.0, -1.0)

    def _classify(self, x: np.ndarray) -> np.ndarray:
        feature, cand, sign = self._best_stump()
        r, lane = np.indices(feature.shape)
        above = x[r, feature] >= self._thresholds[r, lane, feature, cand]
        return np.where(self._seen == 0, 1.0, np.where(above, sign, -sign))

    def _learn_stumps(self, x: np.ndarray, y: np.ndarray, w: np.ndarray, active) -> None:
        k = self._thresholds.shape[3]
        rr, ll = np.nonzero(active & (self._seen < k))
        if rr.size:  # the example becomes candidate number seen + 1
            slot = self._seen[rr, ll]
            self._thresholds[rr, ll, :, slot] = x[rr]
            self._kept_x[rr, ll, slot], self._kept_y[rr, ll, slot] = x[rr], y[rr, ll]
            self._kept_w[rr, ll, slot] = w[rr, ll]
            new = np.zeros((rr.size, x.shape[1]))
            for s in range(k - 1):  # its error on the stored earlier examples, in their order
                h = np.where(self._kept_x[rr, ll, s] >= x[rr], 1.0, -1.0)
                missed = self._kept_w[rr, ll, s, None] * (h != self._kept_y[rr, ll, s, None])
                new = np.where((s < slot)[:, None], new + missed, new)
            self._errors[rr, ll, :, slot] = new
        seen = np.where(active, self._seen + 1, self._seen)
        valid = (np.arange(k) < np.minimum(seen, k)[:, :, None])[:, :, None, :]
        h = np.where(x[:, None, :, None] >= self._thresholds, 1.0, -1.0)
        missed = w[:, :, None, None] * (h != y[:, :, None, None])
        self._errors = np.where(
            active[:, :, None, None] & valid, self._errors + missed, self._errors
        )
        self._total = np.where(active, self._total + w, self._total)
        self._seen = seen

    def _to_lazy(self) -> dict[str, np.ndarray]:
        """The sparse rows' state: ``base`` = the errors (offsets 0) and the lanes' trees."""
        if self._lazy is None:
            n_rep, lanes, d, _ = self._thresholds.shape
            size = 2 * _sparse_stump.tree_size(d)
            lazy = {
                "base": self._errors.copy(),
                "off": np.zeros((n_rep, lanes, 2)),
                "tmin_v": np.empty((n_rep, lanes, 2, size)),
                "tmin_i": np.empty((n_rep, lanes, 2, size), dtype=np.int64),
                "tmax_v": np.empty((n_rep, lanes, 2, size)),
                "tmax_i": np.empty((n_rep, lanes, 2, size), dtype=np.int64),
            }
            _sparse_stump.rebuild_all(
                self._thresholds, lazy["base"], self._seen, *self._trees(lazy)
            )
            self._lazy = lazy
        return self._lazy

    def _to_dense(self) -> None:
        """Back to the dense errors: ``E = base + G`` of each candidate's group."""
        if self._lazy is not None:
            off = self._lazy["off"][:, :, None, None, :]
            group = np.where(0.0 >= self._thresholds, off[..., 0], off[..., 1])
            self._errors = self._lazy["base"] + group
            self._lazy = None

    @staticmethod
    def _trees(lazy: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
        return lazy["tmin_v"], lazy["tmin_i"], lazy["tmax_v"], lazy["tmax_i"]

    def _classify_sparse(self, x: Any) -> np.ndarray:
        lazy = self._to_lazy()
        out = np.empty(self._seen.shape)
        _sparse_stump.predict(
            x.indptr, x.indices, x.values, self._seen, self._total, self._thresholds,
            lazy["off"], *self._trees(lazy), out,
        )  # fmt: skip
        return out

    def _learn_sparse(self, x: Any, y: np.ndarray, w: np.ndarray, active: np.ndarray) -> None:
        lazy = self._to_lazy()
        _sparse_stump.update(
            x.indptr, x.indices, x.values, np.ascontiguousarray(y), np.ascontiguousarray(w),
            np.ascontiguousarray(active), self._seen, self._total, self._thresholds,
            lazy["base"], lazy["off"], self._kept_x, self._kept_y, self._kept_w,
            *self._trees(lazy),
        )  # fmt: skip

    # ------------------------------------------------------------------------------------------
    # regression

    def _feature_outputs(self, xt: np.ndarray) -> np.ndarray:
        bound = self._spec.bound
        return np.clip(self._theta * xt[:, None, :], -bound, bound)

    def _regress(self, x: np.ndarray) -> np.ndarray:
        xt = with_bias(x)
        candidates = np.where((xt != 0.0)[:, None, :], self._losses, np.inf)
        best = candidates.argmin(axis=2)
        return np.take_along_axis(self._feature_outputs(xt), best[:, :, None], axis=2)[:, :, 0]

    def _learn_features(self, x: np.ndarray, y: np.ndarray, w: np.ndarray, active) -> None:
        xt = with_bias(x)
        residual = self._feature_outputs(xt) - y[:, :, None]
        w3, moves = w[:, :, None], active[:, :, None]
        self._losses = np.where(moves, self._losses + w3 * 0.5 * residual**2, self._losses)
        step = self.rate * w3 * residual * xt[:, None, :]
        self._theta = np.where(moves, self._theta - step, self._theta)

    # ------------------------------------------------------------------------------------------

    def _rows(self, x: Any) -> Any:
        """``x`` as the path reads it: a ``SparseRows`` of the round's R rows for the sparse
        classification path, else a dense (R, d) array (the sparse state folded back first)."""
        if is_sparse(x):
            if x.shape != (self._spec.n_replicates, self._spec.n_features):
                raise ValueError(
                    f"{self.label()}: sparse rows of shape {x.shape}, expected one round's "
                    f"{(self._spec.n_replicates, self._spec.n_features)}"
                )
            if self._spec.task == "classification":
                return x
            return x.densify()
        if self._spec.task == "classification":
            self._to_dense()
        return np.asarray(x, dtype=np.float64)

    def predict(self, x: Any) -> np.ndarray:
        x = self._rows(x)
        if self._spec.task == "classification":
            return self._classify_sparse(x) if is_sparse(x) else self._classify(x)
        return self._regress(x)

    def update(self, x: Any, target: np.ndarray, weight: np.ndarray) -> None:
        x = self._rows(x)
        target = np.asarray(target, dtype=np.float64)
        weight = np.asarray(weight, dtype=np.float64)
        shape = (self._spec.n_replicates, self._spec.n_lanes)
        active = active_lanes(weight, shape, self.label())
        if self._spec.task == "classification":
            if is_sparse(x):
                self._learn_sparse(x, target, weight, active)
            else:
                self._learn_stumps(x, target, weight, active)
        else:
            self._learn_features(x, target, weight, active)
