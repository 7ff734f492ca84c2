"""Shared drivers of the weak-learner tests: lane-by-lane references and a small boosting game."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from arena.adversaries.dataset_stream import DatasetStream
from arena.boosting.components import WeakLearner, WeakSpec
from arena.boosting.testing import MajorityVote
from arena.game import run_game

TOL = 1e-12
"""Agreement of a vectorized learner with its per-lane transcription: both do the same float
operations per lane, only the order of a few sums differs (einsum against a Python loop), which
moves results by a few ulps of values of order 1-100."""


def lane_rng(seed: int, r: int, i: int) -> np.random.Generator:
    """Lane i of replicate r's stream in these tests (the reference draws from the same one)."""
    return np.random.default_rng([seed, r, i])


def random_feed(task: str, n_rep: int, n: int, d: int, lanes: int, seed: int):
    """Features (R, n, d), per-lane targets and weights (R, n, L), a third of the weights 0."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_rep, n, d))
    if task == "classification":
        target = np.where(rng.random((n_rep, n, lanes)) < 0.5, -1.0, 1.0)
    else:
        target = rng.uniform(-1.5, 1.5, (n_rep, n, lanes))
    weight = rng.exponential(1.0, (n_rep, n, lanes))
    weight[rng.random((n_rep, n, lanes)) < 1 / 3] = 0.0
    return x, target, weight


def assert_matches_reference(
    learner: WeakLearner,
    reference: Callable[[WeakSpec, np.random.Generator], object],
    task: str,
    *,
    n_rep: int = 2,
    lanes: int = 3,
    n: int = 60,
    d: int = 3,
    bound: float = 1.0,
    seed: int = 0,
) -> None:
    """Drive ``learner`` and one reference object per (replicate, lane) on the same feed; every
    prediction agrees to :data:`TOL`. A reference has ``predict(x: list) -> float`` and
    ``update(x: list, target: float, weight: float)``."""
    spec = WeakSpec(task, d, lanes, n_rep, n, bound)
    learner = learner.clone()
    learner.reset(spec, [[lane_rng(seed, r, i) for i in range(lanes)] for r in range(n_rep)])
    refs = [[reference(spec, lane_rng(seed, r, i)) for i in range(lanes)] for r in range(n_rep)]
    x, target, weight = random_feed(task, n_rep, n, d, lanes, seed + 1)
    for j in range(n):
        got = learner.predict(x[:, j])
        expected = [
            [refs[r][i].predict(x[r, j].tolist()) for i in range(lanes)] for r in range(n_rep)
        ]
        np.testing.assert_allclose(got, expected, atol=TOL, rtol=0, err_msg=f"round {j + 1}")
        learner.update(x[:, j], target[:, j], weight[:, j])
        for r in range(n_rep):
            for i in range(lanes):
                refs[r][i].update(x[r, j].tolist(), float(target[r, j, i]), float(weight[r, j, i]))


def sanity_game(learner: WeakLearner, dataset: str, *, n_learners: int = 3, replicates: int = 2):
    """One pass of ``dataset`` through a :class:`MajorityVote` of ``learner``: return the mean
    over replicates of the vote's final ``mistakes`` (classification) or ``loss`` (regression)
    per round, and the same for the best constant predictor in hindsight."""
    stream = DatasetStream(dataset)
    task = "classification" if dataset != "diabetes" else "regression"
    metric = "mistakes" if task == "classification" else "loss"
    horizon = int(stream._data()[1].shape[0])
    rows = run_game(
        MajorityVote(n_learners=n_learners, weak_learner=learner),
        stream,
        horizon=horizon,
        replicates=replicates,
        metrics=[metric],
        seed=3,
    ).rows
    final = rows[(rows.metric == metric) & (rows.t == horizon)].value.mean() / horizon
    y = stream._data()[1]
    if task == "classification":
        constant = min(np.mean(y > 0), np.mean(y < 0))  # the majority label's error rate
    else:
        constant = 0.5 * np.mean((y - y.mean()) ** 2)  # the squared loss ½(p − y)² of the mean
    return final, constant
