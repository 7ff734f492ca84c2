"""Online-to-batch conversion: the held-out risk of the averaged, the last and a validated iterate.

An online learner run on i.i.d. examples ``Z_1, …, Z_T ~ Q`` plays hypotheses ``w_1, …, w_T``
(``w_t`` depends on ``Z_1 … Z_{t−1}`` only). Shalev-Shwartz 2007, Appendix B.3, turns its regret
into a risk bound for one batch hypothesis, with ``risk(w) = E_{Z~Q} ℓ(w, Z)`` (Eq. B.1) and the
online average loss ``M_T = (1/T) Σ_t ℓ(w_t, Z_t)`` (Eq. B.3):

* Theorem 9: ``E[(1/T) Σ_t risk(w_t)] = E[M_T]`` (the online loss is an unbiased estimate of the
  ensemble's mean risk);
* Theorem 10: if the regret to every ``h`` of the class is at most ``B(T)`` (Eq. B.5), then
  ``E[(1/T) Σ_t risk(w_t)] ≤ risk(h*) + B(T)/T`` with ``h*`` the best hypothesis of the class;
* "Validation" (§B.3.3, Theorem 12): split the T rounds into s blocks, draw one hypothesis
  uniformly at random from each block, and output the one ``h_o`` of least loss on a fresh
  validation set (:func:`validation_candidates`, :class:`OnlineToBatch`'s
  ``validation_blocks``);
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
from arena.params import Interval, IsNone
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


VALIDATION_SEED = 0x0B2B
"""Seed of the draw of the validation conversion's candidate rounds: fixed, so the draw is
independent of the examples (what Theorem 12 needs) and the same in every replicate and run."""


def validation_candidates(horizon: int, blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the candidate rounds of the validation conversion and the last round of each block.

    Block i (0-based) holds the rounds ``⌊iT/s⌋ + 1 … ⌊(i+1)T/s⌋``; its candidate is drawn
    uniformly from them (Shalev-Shwartz 2007, §B.3.3, Theorem 12; the printed block indices
    ``h_{is+1} … h_{is+s}`` are a slip for block i of length T/s) by a generator seeded with
    :data:`VALIDATION_SEED`, ``blocks`` and ``horizon``.

    Examples
    --------
    >>> rounds, ends = validation_candidates(10, 3)
    >>> ends.tolist(), all(e - 3 <= r <= e for r, e in zip(rounds, ends))
    ([3, 6, 10], True)
    """
    rng = np.random.default_rng([VALIDATION_SEED, blocks, horizon])
    edges = [i * horizon // blocks for i in range(blocks + 1)]
    rounds = np.array([edges[i] + 1 + rng.integers(edges[i + 1] - edges[i]) for i in range(blocks)])
    return rounds.astype(np.int64), np.array(edges[1:], dtype=np.int64)


def validation_split(m: int) -> int:
    """Return how many of the m test examples form the validation set: the first ``⌈m/2⌉``; the
    others estimate the chosen hypothesis's risk."""
    return (m + 1) // 2


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
    * ``val_risk``, ``val_error`` — with ``validation_blocks = s``: the validation conversion
      (Shalev-Shwartz 2007, §B.3.3, Theorem 12). The horizon T is cut into s blocks and one round
      ``r_i`` of each is drawn uniformly, independently of the data
      (:func:`validation_candidates`); at checkpoint t the candidates are the points
      ``w_{r_i}`` of the blocks completed by t, ``h_o`` is the one of least mean loss on the
      first ``⌈m/2⌉`` test examples (the validation set, :func:`validation_split`; the first on
      ties), and the rows are its mean test loss and 0-1 error on the other ``⌊m/2⌋``. NaN
      before the first block is complete;
    * ``excess_risk_bound`` — ``B_t/t`` for each regret bound ``B_t`` the player declares
      (``bound:regret``, param = its comparator set K': NaN the game's domain, r the ball of
      radius r): by Theorem 10 and Jensen's inequality ``E[risk(w̄_t)] ≤ min_{u∈K'} risk(u) +
      E[B_t]/t``, so it bounds the mean ``avg_risk`` minus the best risk in K'. Absent when the
      player declares no regret bound. The best risk itself is a property of the data law, not of
      the run: it is not logged (on a test split it is a convex program, e.g.
      :func:`arena.oco.hindsight.best_examples`; any fixed u of K' gives an upper bound).

    Parameters
    ----------
    validation_blocks : int or None
        s, the number of blocks of the validation conversion (at most the horizon, and the test
        split needs m ≥ 2 examples); None (the default) logs no ``val_*`` rows.

    Notes
    -----
    Guarantee of the validation conversion. Each candidate ``w_{r_i}`` depends on the examples
    before ``r_i`` only, and ``r_i`` is uniform on its block independently of them, so
    (Theorem 9 on the block) ``E[risk(w_{r_i})] = E[(1/k) Σ_{t∈block i} ℓ(w_t, Z_t)]``, the
    online loss of the block; with a regret bound ``B`` on each block this is at most
    ``risk(h*) + E[B(T/s)]/(T/s)``, and Markov's inequality makes one of the s independent
    candidates ``h_g`` have ``risk(h_g) ≤ risk(h*) + e·s·B(T/s)/T`` with probability
    ``≥ 1 − e^{−s}`` (Theorem 12). The choice on m' validation examples adds the finite-class
    term ``C(√(risk(h_g)(log s·log m' + ln(1/δ))/m') + (log s·log m' + ln(1/δ))/m')``. The
    thesis restarts the learner at each block, which makes the blocks' regrets ``B(T/s)`` and
    the candidates independent; the arena plays the player once over T rounds, so the
    per-candidate equality holds as stated but a block's regret is the player's regret on an
    interval (its adaptive regret), and the candidates are dependent: the ``1 − e^{−s}``
    amplification is a guide here, not a guarantee.

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
    parameter_constraints: ClassVar = {
        "validation_blocks": [Interval(1, None, integer=True), IsNone()]
    }

    def __init__(self, validation_blocks: int | None = None):
        self.validation_blocks = validation_blocks

    def game_reason(self, spec: GameSpec) -> str | None:
        if spec.sigma:
            return "a game with a strongly convex term (σ > 0): its centres z_t have no test split"
        s = self.validation_blocks
        if s is not None and (spec.horizon is None or int(s) > spec.horizon):
            return f"validation_blocks = {s} needs a horizon of at least {s} rounds"
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
        self._rounds = 0
        if self.validation_blocks is not None:
            m = y.shape[1]
            if m < 2:
                raise ValueError(
                    f"{self.name}: validation_blocks needs a test split of ≥ 2 examples"
                )
            s = int(self.validation_blocks)
            self._cand_rounds, self._block_ends = validation_candidates(spec.horizon, s)
            self._candidates = np.zeros((n_rep, s, dim))
            v = validation_split(m)
            self._validation = RoundData(x=_take(x, 0, v), y=y[:, :v])
            self._evaluation = RoundData(x=_take(x, v, m), y=y[:, v:])
        self._classification = spec.protocol == "classification"
        self._bound_keys: list[float] | None = None

    def advance(self, block: OCOBlock, core: OCOCore) -> None:
        w = np.ascontiguousarray(block.w)
        _add_points_in_round_order(w, self._sum)
        first, n = self._rounds, w.shape[1]
        if self.validation_blocks is not None:
            for i, r in enumerate(self._cand_rounds):
                if first < r <= first + n:
                    self._candidates[:, i] = w[:, r - first - 1]
        self._rounds = first + n

    def _validated(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Mean loss and 0-1 error, on the evaluation half, of the validated candidate ``h_o``."""
        kind, n_rep = self._spec.loss, self._spec.n_replicates
        done = int(np.searchsorted(self._block_ends, t, side="right"))
        if done == 0:
            nan = np.full(n_rep, math.nan)
            return nan, nan
        val = np.stack(
            [held_out_risk(kind, self._candidates[:, i], self._validation)[0] for i in range(done)],
            axis=1,
        )
        chosen = self._candidates[np.arange(n_rep), np.argmin(val, axis=1)]
        return held_out_risk(kind, chosen, self._evaluation)

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
        if self.validation_blocks is not None:
            val_risk, val_error = self._validated(t)
            cols += [val_risk, val_error] if self._classification else [val_risk]
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
        if self.validation_blocks is not None:
            names += (
                ["val_risk", "val_error"] if spec.protocol == "classification" else ["val_risk"]
            )
        keys = [(f"{PREFIX}:{n}", math.nan) for n in names]
        keys += [(f"{PREFIX}:excess_risk_bound", p) for p in self._bound_keys or []]
        return keys

    def reference_rows(self, records) -> list[tuple[str, float, list[float]]]:
        """:func:`online_to_batch_bruteforce` of every record, then ``B_t/t`` for each regret
        bound ``B_t`` the player declares after round t (its declaration)."""
        values = [online_to_batch_bruteforce(rec, self.validation_blocks) for rec in records]
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


def online_to_batch_bruteforce(
    record: OCORecord, validation_blocks: int | None = None
) -> dict[str, float]:
    """Return the metric's rows of one replicate after round t (but the declared bounds'), by
    plain loops over the record and the adversary's test split; with ``validation_blocks``,
    the validation conversion's rows too (:func:`validation_bruteforce`)."""
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
    if validation_blocks is not None:
        risk, error = validation_bruteforce(record, x, y, int(validation_blocks))
        out["val_risk"] = risk
        if record.spec.protocol == "classification":
            out["val_error"] = error
    return out


def validation_bruteforce(record: OCORecord, x, y, blocks: int) -> tuple[float, float]:
    """The validation conversion after round t by plain loops: the candidate of each block
    completed by t, the first of least validation loss, and its held-out loss and error."""
    t = record.w.shape[0]
    rounds, ends = validation_candidates(record.spec.horizon, blocks)
    v = validation_split(len(y))
    best, chosen = math.inf, None
    for r, end in zip(rounds, ends, strict=True):
        if end > t:
            break
        loss = held_out_bruteforce(record.spec.loss, record.w[r - 1], x[:v], y[:v])[0]
        if loss < best:
            best, chosen = loss, record.w[r - 1]
    if chosen is None:
        return math.nan, math.nan
    return held_out_bruteforce(record.spec.loss, chosen, x[v:], y[v:])


def _labels(params: list[float]) -> list[float | None]:
    """Params comparable with ``==`` (NaN, which never equals itself, becomes None)."""
    return [None if p != p else p for p in params]


def _take(x, start: int, stop: int):
    """Examples ``start:stop`` of every replicate's test split, dense or sparse."""
    if is_sparse(x):
        return x.rounds(start, stop)
    return np.ascontiguousarray(x[:, start:stop])
