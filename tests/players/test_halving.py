"""halving: the version space's majority vote, ⌊log₂ N⌋ mistakes on realizable streams."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena import play
from arena.adversaries.realizable_experts import RealizableExperts
from arena.oco.domains import Domain
from arena.oco.losses import RoundData, feedback
from arena.players.halving import Halving, halving_bound
from arena.spec import GameSpec
from tests.helpers import check_declared, rngs


def literal_halving(x: np.ndarray, y: np.ndarray) -> tuple[list[int], list[set[int]]]:
    """Halving written from the lecture, one replicate and one round at a time: V = ℋ; predict
    the majority vote of V (a tie is a mistake); V ← {h ∈ V : h(x_t) = y_t}. Returns the
    cumulative mistakes after each round and the final version space."""
    version = set(range(x.shape[1]))
    mistakes, count = [], 0
    for t in range(x.shape[0]):
        advice = {i: (1 if x[t, i] > 0 else -1 if x[t, i] < 0 else 0) for i in version}
        vote = sum(advice.values())
        count += vote * y[t] <= 0
        mistakes.append(count)
        version = {i for i in version if advice[i] == y[t]}
    return mistakes, version


@pytest.mark.parametrize(("n", "agreement"), [(1, 0.5), (3, 0.5), (64, 0.5), (64, 0.95)])
def test_engine_equals_the_literal_algorithm(n, agreement):
    adv = RealizableExperts(agreement=agreement)
    horizon, n_rep = 120, 5
    rows = play(
        Halving(), adv, n_actions=n, horizon=horizon, replicates=n_rep,
        checkpoints=list(range(1, horizon + 1)), metrics=["mistakes"],
    )  # fmt: skip
    for r in range(n_rep):
        rep = rows[rows.replicate == rows.replicate.unique()[r]].sort_values("t")
        x, y = replay_stream(adv, n, horizon, n_rep, r)
        want, _ = literal_halving(x, y)
        np.testing.assert_array_equal(rep.value.to_numpy(), want)


def replay_stream(adv, n, horizon, n_rep, r):
    """Replicate r's examples as the engine draws them (its seeding, via a recording player)."""
    rec = Recorder()
    play(rec, adv, n_actions=n, horizon=horizon, replicates=n_rep, metrics=["mistakes"])
    return Recorder.seen_x[r], Recorder.seen_y[r]


class Recorder(Halving):
    """Halving that keeps every example it is shown (a test device)."""

    seen_x: np.ndarray
    seen_y: np.ndarray

    def reset(self, spec, rngs):
        super().reset(spec, rngs)
        Recorder._xs, Recorder._ys = [], []

    def update(self, fb):
        super().update(fb)
        Recorder._xs.append(np.array(fb.data.x))
        Recorder._ys.append(np.array(fb.data.y))
        Recorder.seen_x = np.stack(Recorder._xs, axis=1)
        Recorder.seen_y = np.stack(Recorder._ys, axis=1)


def run_class(x: np.ndarray, y: np.ndarray) -> Halving:
    n_rep, horizon, n = x.shape
    spec = GameSpec(
        "classification", n, horizon, n_replicates=n_rep, dim=n,
        domain=Domain("unconstrained"), loss="hinge",
    )  # fmt: skip
    p = Halving()
    p.reset(spec, rngs(0, n_rep))
    for t in range(horizon):
        rd = RoundData(x=x[:, t], y=y[:, t])
        p.update(feedback("hinge", 0.0, p.predict(x[:, t]), rd))
    return p


def test_version_space_equals_the_literal_set():
    rng = np.random.default_rng(3)
    n_rep, horizon, n = 4, 30, 20
    x = np.where(rng.random((n_rep, horizon, n)) < 0.7, 1.0, -1.0)
    y = x[np.arange(n_rep), :, rng.integers(n, size=n_rep)]  # realizable: one expert's advice
    p = run_class(x, y)
    for r in range(n_rep):
        mistakes, version = literal_halving(x[r], y[r])
        assert set(np.flatnonzero(p.version_space()[r]).tolist()) == version
        assert p.mistakes()[r] == mistakes[-1]


@pytest.mark.parametrize("n", [2, 8, 64, 1000])
def test_the_bound_is_attained_by_splitting_ties(n):
    # each round the version space votes half +1, half −1 (a tie, a mistake) and the label keeps
    # one half: ⌊log₂ N⌋ mistakes, the bound exactly (Srebro, Lecture 16: log|ℋ|)
    alive = np.arange(n)
    xs, ys = [], []
    while alive.size > 1:
        half = alive.size // 2
        x = -np.ones(n)
        x[alive[:half]] = 1.0
        if alive.size % 2:  # an odd version space: the larger side is the −1 side, which loses
            ys.append(1.0)
            alive = alive[:half]
        else:
            ys.append(-1.0)
            alive = alive[half:]
        xs.append(x)
    x, y = np.array(xs)[None], np.array(ys)[None]
    p = run_class(x, y)
    assert p.mistakes()[0] == halving_bound(n) == math.floor(math.log2(n))
    assert p.version_space()[0].sum() == 1


@pytest.mark.parametrize("agreement", [0.5, 0.9, 0.99])
@pytest.mark.parametrize("n", [1, 2, 3, 100, 1024])
def test_declared_bound_holds_and_the_version_space_never_empties(n, agreement):
    rows = play(
        Halving(), RealizableExperts(agreement=agreement), n_actions=n, horizon=400,
        replicates=8, metrics=["mistakes", "bound"], checkpoints=[1, 10, 100, 400],
    )  # fmt: skip
    assert check_declared(rows, f"halving N={n}") == 32
    bound = rows[rows.metric == "bound:mistakes"].value
    assert (bound == halving_bound(n)).all()


def test_no_bound_on_a_stream_not_realizable_by_an_expert_and_restart():
    rows = play(
        Halving(), "separable_stream", n_actions=5, horizon=50, metrics=["mistakes", "bound"]
    )
    assert (rows.metric == "mistakes").any()
    assert not rows.metric.str.startswith("bound:").any()
    # advice that contradicts every expert empties V: it restarts from all N
    x = np.array([[[1.0, 1.0, -1.0]]])
    p = run_class(x, np.array([[0.5]]))  # a label no expert gives
    assert p.restarts().tolist() == [1] and p.version_space().all()


def test_real_valued_advice_is_read_by_sign():
    x = np.array([[[0.2, -3.0, 5.0]]])
    spec = GameSpec(
        "classification", 3, 1, n_replicates=1, dim=3, domain=Domain("unconstrained"),
        loss="hinge",
    )  # fmt: skip
    p = Halving()
    p.reset(spec, rngs(0, 1))
    w = p.predict(x[:, 0])
    assert float(w[0] @ x[0, 0]) == pytest.approx(1.0)  # the vote +1 −1 +1
