"""The oracle weak learner: lane i reads the sign of one feature, where the data put the edge."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.boosting.components import WeakLearner, WeakSpec


class OracleWeakLearner(WeakLearner):
    """Lane i predicts ``sign(x_{t, i mod d})`` (+1 on 0) and ignores every update.

    The lower-bound construction of Online BBM's optimality (Luo 2016, §3.1.3, proof of
    Theorem 10; Beygelzimer, Kale & Luo 2015) has each weak learner ``WL^i`` output ``y_t`` with
    probability ``½ + edge`` and ``−y_t`` otherwise, independently across learners and rounds. The
    learners' outputs are then a property of the *data*, which knows ``y_t``: the ``edge_oracle``
    adversary writes learner i's output into feature i of ``x_t`` (``x_{t,i} = y_t`` with
    probability ``½ + edge``), and this learner only reads it out. So the learner is state-free
    (nothing to learn: it is correct with probability ``½ + edge`` on every example, whatever
    weights it is fed), its lanes are independent by construction, and ``N ≤ d`` lanes are N
    independent weak learners with the prescribed edge. On other streams it is the decision stump
    ``sign(x_j)`` at threshold 0, fixed per lane.

    Lane j reads feature ``WeakSpec.lanes()[j] mod d``: the booster's learner i reads feature
    ``i mod d``, and the protocol's base learner (index ``2³² − 1``) a stump on feature
    ``(2³² − 1) mod d``.

    Examples
    --------
    >>> w = OracleWeakLearner()
    >>> w.reset(WeakSpec("classification", 3, 4, 1), [[None] * 4])
    >>> w.predict(np.array([[1.0, -2.0, 0.0]])).tolist()
    [[1.0, -1.0, 1.0, 1.0]]

    References
    ----------
    Luo 2016, §3.1.3, proof of Theorem 10; Beygelzimer, Kale & Luo 2015.
    """

    name = "oracle"
    tasks: ClassVar[frozenset[str]] = frozenset({"classification"})
    parameter_constraints: ClassVar = {}

    def __init__(self):
        pass

    def reset(self, spec: WeakSpec, rngs: Sequence[Sequence[np.random.Generator]]) -> None:
        d = int(spec.n_features)
        lanes = [i % d for i in spec.lanes()]
        self._feature = np.array([lanes] * spec.n_replicates, dtype=np.intp)

    def predict(self, x: np.ndarray) -> np.ndarray:
        values = np.take_along_axis(np.asarray(x, dtype=np.float64), self._feature, axis=1)
        return np.where(values >= 0.0, 1.0, -1.0)

    def update(self, x: np.ndarray, target: np.ndarray, weight: np.ndarray) -> None:
        """Nothing to learn: the data carry the edge (see the class docstring)."""
