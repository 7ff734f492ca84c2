"""Online-to-batch conversion: the held-out risk of the averaged and the last iterate.

An online learner run on i.i.d. examples ``Z_1, …, Z_T ~ Q`` plays hypotheses ``w_1, …, w_T``
(``w_t`` depends on ``Z_1 … Z_{t−1}`` only). Shalev-Shwartz 2007, Appendix B.3, turns its regret
into a risk bound for one batch hypothesis, with ``risk(w) = E_{Z~Q} ℓ(w, Z)`` (Eq. B.1) and the
online average loss ``M_T = (1/T) Σ_t ℓ(w_t, Z_t)`` (Eq. B.3):

* Theorem 9: ``E[(1/T) Σ_t risk(w_t)] = E[M_T]`` (the online loss is an unbiased estimate of the
  ensemble's mean risk);
* Theorem 10: if the regret to every ``h`` of the class is at most ``B(T)`` (Eq. B.5), then
  ``E[(1/T) Σ_t risk(w_t)] ≤ risk(h*) + B(T)/T`` with ``h*`` the best hypothesis of the class;
* "Averaging" (§B.3.3): for a convex loss on a convex class, Jensen's inequality gives
  ``risk(w̄_T) ≤ (1/T) Σ_t risk(w_t)`` for the averaged iterate ``w̄_T = (1/T) Σ_t w_t``, so
  ``E[risk(w̄_T)] ≤ risk(h*) + B(T)/T``; Theorem 13 gives a high-probability version. The
  thesis's B(T) is deterministic; a bound computed on the run (the players' ``bound:regret``)
  enters through its expectation, ``E[B_T]/T``.

These are statements in expectation over the sample: one replicate's held-out risk may exceed
the bound; the mean over replicates may not, beyond its sampling error.

References
----------
Shalev-Shwartz 2007, Appendix B.3 (Theorems 9, 10 and 13; the "Last" and "Averaging"
conversions of §B.3.3).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from numba import njit

from arena.oco.literal import scalar_loss
from arena.oco.losses import RoundData, dense_features, is_sparse, prediction_loss
from arena.oco.metrics import OCOBlock, OCOCore, OCOMetric, OCORecord
from arena.spec import GameSpec

PREFIX = "online_to_batch"
"""The rows of :class:`OnlineToBatch` are named ``online_to_batch:<quantity>``."""


@njit(cache=True, nogil=True)
def _add_points_in_round_order(w, sums):
    """Add the points ``w[r, j]`` (R, n, d) to ``sums[r]`` one round after the other, so the sum is
    the same to the last bit however the rounds were split into chunks."""
    n_rep, n, d = w.shape
    for r in range(n_rep):
        for j in range(n):
            for k in range(d):
                sums[r, k] += w[r, j, k]


def held_out_risk(kind: str, w: np.ndarray, test: RoundData) -> tuple[np.ndarray, np.ndarray]:
    """Return the mean test loss and the test 0-1 error of one point per replicate.

    Parameters
    ----------
    kind : str
        The example loss ``ℓ(⟨w, x⟩, y)`` (:data:`arena.oco.losses.EXAMPLE_LOSSES`).
    w : ndarray (R, d)
    test : RoundData
        ``x`` (R, m, d), dense or :class:`~arena.oco.losses.SparseRows`, and ``y`` (R, m).

    Returns
    -------
    risk, error : ndarray (R,)
        ``(1/m) Σ_i ℓ(⟨w, x_i⟩, y_i)`` and ``(1/m) #{i : y_i⟨w, x_i⟩ ≤ 0}`` (a zero margin is an
        error, as in the ``mistakes`` metric; meaningful for labels ±1).

    Examples
    --------
    >>> test = RoundData(x=np.array([[[1.0, 0.0], [0.0, 1.0]]]), y=np.array([[1.0, -1.0]]))
    >>> risk, error = held_out_risk("hinge", np.array([[0.5, 0.5]]), test)
    >>> risk.tolist(), error.tolist()  # hinge 0.5 and 1.5; the second example is an error
    ([1.0], [0.5])
    """
    if is_sparse(test.x):  # O(nnz) of the split
        predictions = test.x.dot(w)
    else:
        predictions = np.einsum("rmd,rd->rm", test.x, w)
    losses, _ = prediction_loss(kind, predictions, test.y)
    return losses.mean(axis=1), (test.y * predictions <= 0.0).mean(axis=1)


class OnlineToBatch(OCOMetric):
    """Held-out risk of the averaged iterate ``w̄_t = (1/t) Σ_{s≤t} w_s`` and of the last one.

    Needs an adversary that holds out a test split (oracle ``test_split``: ``dataset_stream``
    with ``test_fraction > 0``, ``separable_stream`` with ``test_size > 0``). At each checkpoint t
    it logs, per replicate, rows ``online_to_batch:<quantity>``:

    * ``avg_risk`` — mean test loss of ``w̄_t`` (the game's example loss ``ℓ(⟨w, x⟩, y)``);
    * ``last_risk`` — mean test loss of ``w_t``, the point played at round t;
    * ``avg_error``, ``last_error`` — their test 0-1 errors (classification only);
    * ``online_loss`` — ``M_t = (1/t) Σ_{s≤t} f_s(w_s)``, the online average loss (Theorem 9:
      an unbiased estimate of ``(1/t) Σ_s risk(w_s)``, hence in expectation an upper bound on
      ``avg_risk`` by Jensen's inequality);
    * ``excess_risk_bound`` — ``B_t/t`` for each regret bound ``B_t`` the player declares
      (``bound:regret``, param = its comparator set K': NaN the game's domain, r the ball of
      radius r): by Theorem 10 and Jensen's inequality ``E[risk(w̄_t)] ≤ min_{u∈K'} risk(u) +
      E[B_t]/t``, so it bounds the mean ``avg_risk`` minus the best risk in K'. Absent when the
      player declares no regret bound. The best risk itself is a property of the data law, not of
      the run: it is not logged (on a test split it is a convex program, e.g.
      :func:`arena.oco.hindsight.best_examples`; any fixed u of K' gives an upper bound).

    Notes
    -----
    The thesis's risk is the expectation under the data law Q; the test split estimates it
    without bias for i.i.d. streams (``separable_stream``). A dataset stream reshuffles a finite
    training split every epoch (sampling without replacement): Theorems 9-10 are then a guide,
    not a guarantee. The 0-1 error is at most the
    hinge risk (``1{m ≤ 0} ≤ [1 − m]₊``) and ``1/ln 2`` times the logistic risk. The sum of the
    points is kept (O(R·d)) and the test split is read once (O(R·m·d)); a checkpoint costs
    O(R·m·d). Games with a strongly convex term (σ > 0) are refused: its centres ``z_t`` have no
    test counterpart.

    Examples
    --------
    >>> from arena import play
    >>> df = play("ogd", "separable_stream", n_actions=3, horizon=200, replicates=2,
    ...           adversary_params={"noise": 0.1, "test_size": 100},
    ...           player_params={"eta": 0.5}, metrics=["online_to_batch"])
    >>> sorted(df.metric.unique())  # doctest: +NORMALIZE_WHITESPACE
    ['online_to_batch:avg_error', 'online_to_batch:avg_risk', 'online_to_batch:last_error',
     'online_to_batch:last_risk', 'online_to_batch:online_loss']

    References
    ----------
    Shalev-Shwartz 2007, Appendix B.3: Eqs. (B.1), (B.3), (B.5); Theorems 9, 10 and 13; the
    "Last" and "Averaging" conversions (§B.3.3).
    """

    reads_points: ClassVar[bool] = True  # the average iterate and the last one

    name = PREFIX
    protocols: ClassVar[frozenset[str]] = frozenset({"classification", "regression"})
    requires = frozenset({"test_split"})

    def game_reason(self, spec: GameSpec) -> str | None:
        if spec.sigma:
            return "a game with a strongly convex term (σ > 0): its centres z_t have no test split"
        return None

    def attach(self, player: Any, adversary: Any) -> None:
        self._player, self._adversary = player, adversary

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        n_rep, dim = spec.n_replicates, spec.dim
        test = self._adversary.test_split()
        if is_sparse(test.x):  # a sparse stream's split stays sparse
            x = test.x
            problem = x.check()
            if problem:
                raise ValueError(f"test_split() gave malformed sparse rows: {problem}")
            finite = bool(np.isfinite(x.values).all())
        else:
            x = np.ascontiguousarray(test.x, dtype=np.float64)
            finite = x.ndim == 3 and bool(np.isfinite(x).all())
        y = np.ascontiguousarray(test.y, dtype=np.float64)
        if len(x.shape) != 3 or x.shape[0] != n_rep or x.shape[2] != dim or x.shape[1] < 1:
            raise ValueError(f"test_split() gave x of shape {x.shape}, expected (R, m ≥ 1, d)")
        if y.shape != x.shape[:2] or not (finite and np.isfinite(y).all()):
            raise ValueError(f"test_split() gave y of shape {y.shape} or non-finite values")
        self._test = RoundData(x=x, y=y)
        self._sum = np.zeros((n_rep, dim))
        self._classification = spec.protocol == "classification"
        self._bound_keys: list[float] | None = None

    def advance(self, block: OCOBlock, core: OCOCore) -> None:
        _add_points_in_round_order(np.ascontiguousarray(block.w), self._sum)

    def _declared_regret(self, t: int) -> list[tuple[float, np.ndarray]]:
        """The player's declared regret bounds after round t: (comparator-set param, value)."""
        n_rep = self._spec.n_replicates
        return [
            (float(param), np.broadcast_to(np.asarray(value, dtype=np.float64), (n_rep,)))
            for (metric, param), value in self._player.bounds(t).items()
            if metric == "regret"
        ]

    def values(self, core: OCOCore) -> np.ndarray:
        t, kind = core.t, self._spec.loss
        avg_risk, avg_error = held_out_risk(kind, self._sum / t, self._test)
        last_risk, last_error = held_out_risk(kind, core.last_w, self._test)
        cols = [avg_risk, last_risk]
        if self._classification:
            cols += [avg_error, last_error]
        cols.append(core.learner / t)
        declared = self._declared_regret(t)
        keys = [p for p, _ in declared]
        if self._bound_keys is None:
            self._bound_keys = keys
        elif _labels(keys) != _labels(self._bound_keys):
            raise ValueError(
                f"{self.name}: the player's declared regret bounds changed from params "
                f"{self._bound_keys} to {keys}"
            )
        cols += [value / t for _, value in declared]
        return np.stack(cols, axis=1)

    def row_keys(self, spec: GameSpec) -> list[tuple[str, float]]:
        names = ["avg_risk", "last_risk"]
        if spec.protocol == "classification":
            names += ["avg_error", "last_error"]
        names.append("online_loss")
        keys = [(f"{PREFIX}:{n}", math.nan) for n in names]
        keys += [(f"{PREFIX}:excess_risk_bound", p) for p in self._bound_keys or []]
        return keys

    def reference_rows(self, records) -> list[tuple[str, float, list[float]]]:
        """:func:`online_to_batch_bruteforce` of every record, then ``B_t/t`` for each regret
        bound ``B_t`` the player declares after round t (its declaration)."""
        values = [online_to_batch_bruteforce(rec) for rec in records]
        rows = [(f"{PREFIX}:{q}", math.nan, [v[q] for v in values]) for q in values[0]]
        first = records[0]
        for (metric, param), bound in first.player.bounds(first.t).items():
            if metric == "regret":
                per = np.broadcast_to(np.asarray(bound, dtype=np.float64), (len(records),))
                rows.append((f"{PREFIX}:excess_risk_bound", float(param), list(per / first.t)))
        return rows


def held_out_bruteforce(kind: str, w, x, y) -> tuple[float, float]:
    """Return the mean test loss and the 0-1 error of one point by plain loops over the test
    examples (the textbook scalar losses)."""
    total, errors = 0.0, 0
    for xi, yi in zip(x, y, strict=True):
        p = sum(float(a) * float(b) for a, b in zip(w, xi, strict=True))
        total += scalar_loss(kind, p, float(yi))[0]
        errors += float(yi) * p <= 0.0
    return total / len(y), errors / len(y)


def online_to_batch_bruteforce(record: OCORecord) -> dict[str, float]:
    """Return the metric's rows of one replicate after round t (but the declared bounds'), by
    plain loops over the record and the adversary's test split."""
    test = record.adversary.test_split()
    x = np.asarray(dense_features(test.x))[record.replicate]
    y = np.asarray(test.y)[record.replicate]
    t, d = record.w.shape
    average = [sum(float(record.w[s, k]) for s in range(t)) / t for k in range(d)]
    avg_risk, avg_error = held_out_bruteforce(record.spec.loss, average, x, y)
    last_risk, last_error = held_out_bruteforce(record.spec.loss, record.w[t - 1], x, y)
    out = {"avg_risk": avg_risk, "last_risk": last_risk}
    if record.spec.protocol == "classification":
        out |= {"avg_error": avg_error, "last_error": last_error}
    out["online_loss"] = sum(float(v) for v in record.values) / t
    return out


def _labels(params: list[float]) -> list[float | None]:
    """Params comparable with ``==`` (NaN, which never equals itself, becomes None)."""
    return [None if p != p else p for p in params]
