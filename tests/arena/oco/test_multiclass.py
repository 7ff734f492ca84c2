"""The multiclass protocol (Kesler construction): the multiclass hinge and its subgradient, the
engine against the literal reference loop, validation, the best fixed multiclass linear predictor
in hindsight and the per-round minimizers against independent solves, the metrics against brute
force, and the command line and a tournament."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import scipy.optimize as so

from arena.adversaries.multiclass_separable_stream import MulticlassSeparableStream
from arena.errors import ConfigError, GameError
from arena.game import run_game
from arena.oco.components import AdaptiveOCOAdversary
from arena.oco.domains import Domain
from arena.oco.hindsight import best_examples, best_multiclass, per_round_best
from arena.oco.literal import multiclass_round
from arena.oco.losses import RoundData, evaluate, multiclass_hinge
from arena.oco.reference import reference_play_oco
from arena.oco.testing import GaussianMulticlass, ProjectedGradient
from arena.players.multiclass_pa import MulticlassPA
from arena.players.multiclass_perceptron import MulticlassPerceptron
from arena.spec import AdversaryTags, GameSpec
from tests.helpers.contract import run_in_process
from tests.helpers.multiclass import hinge_sum, mistakes_of


def brute_hinge(W, x, y):
    """``max_{r≠y} max(0, 1 − ⟨w_y − w_r, x⟩)`` of one example by enumeration (W: k × d)."""
    return max(max(0.0, 1.0 - float((W[int(y)] - W[r]) @ x)) for r in range(len(W)) if r != y)


def test_loss_value_subgradient_and_prediction():
    rng = np.random.default_rng(0)
    k, d = 4, 3
    for _ in range(50):
        w, x, y = rng.standard_normal(k * d), rng.standard_normal(d), float(rng.integers(k))
        value, grad, label, _ = multiclass_hinge(w, x, y)
        ref_value, ref_grad, ref_label = multiclass_round(w, x, y)
        W = w.reshape(k, d)
        assert float(value) == pytest.approx(brute_hinge(W, x, y), abs=1e-12)
        assert float(value) == pytest.approx(ref_value, abs=1e-12)
        np.testing.assert_allclose(grad, ref_grad, atol=1e-12)
        assert float(label) == ref_label
        scores = W @ x
        assert (label == y) == (scores[int(y)] > np.delete(scores, int(y)).max())
        # a subgradient: f(v) ≥ f(w) + ⟨g, v − w⟩ for any v (convexity; exact up to rounding)
        for v in rng.standard_normal((5, k * d)):
            assert brute_hinge(v.reshape(k, d), x, y) >= float(value) + grad @ (v - w) - 1e-12
    # a tie for the top score is a mistake; the kink m = 1 takes the zero subgradient
    value, grad, label, m = multiclass_hinge(np.zeros(6), np.array([1.0, 2.0]), np.array(2.0))
    assert (float(value), float(label), float(m)) == (1.0, 0.0, 0.0)
    w = np.array([0.0, 0.0, 1.0, 0.0])  # W rows (0, 0), (1, 0): margin 1 on x = e_1, y = 1
    value, grad, _, m = multiclass_hinge(w, np.array([1.0, 0.0]), np.array(1.0))
    assert float(value) == 0.0 and float(m) == 1.0 and not grad.any()


class AdaptiveLowest(AdaptiveOCOAdversary):
    """Gaussian features; after seeing W_t the label is the lowest-scoring one (first on ties)."""

    name = "adaptive_lowest"
    tags: ClassVar[AdversaryTags] = AdversaryTags(protocol="multiclass", oblivious=False)

    def declared_classes(self) -> int:
        return 3

    def declared_loss(self) -> str:
        return "multiclass_hinge"

    def resolve_dim(self, requested, horizon=None):
        return 6

    def reset(self, spec: GameSpec, rngs) -> None:
        self._rngs = list(rngs)

    def features(self, t):
        self._x = np.stack([g.standard_normal(2) for g in self._rngs])
        return self._x

    def reveal(self, t, w):
        scores = np.einsum("rkd,rd->rk", w.reshape(len(self._rngs), 3, 2), self._x)
        return RoundData(x=self._x, y=np.argmin(scores, axis=1).astype(float))


METRICS = {
    "loss": {},
    "mistakes": {},
    "regret": {"radius": [math.inf]},
    "comparator_regret": {"c": [1.0, 3.0]},
    "dynamic_regret": {},
    "path_length": {},
}


@pytest.mark.parametrize(
    ("player", "adversary"),
    [
        (MulticlassPA("pa1", C=0.5), MulticlassSeparableStream(n_classes=3, noise=0.1)),
        (MulticlassPerceptron(variant="uniform"), AdaptiveLowest()),
        (ProjectedGradient(eta=0.3), GaussianMulticlass(n_classes=3)),
    ],
)
def test_engine_equals_reference_loop(player, adversary):
    metrics = (
        METRICS
        if "comparator" in adversary.tags.oracle
        else {k: v for k, v in METRICS.items() if k != "comparator_regret"}
    )
    kw = dict(horizon=40, replicates=2, seed=3, metrics=metrics, per_decade=3)
    rows = run_game(player, adversary, **kw).rows
    ref = reference_play_oco(player, adversary, **kw)
    # the same formulas in another order (numpy vectorized against plain loops): round-off only
    pd.testing.assert_frame_equal(rows, ref, check_exact=False, atol=1e-12, rtol=0)
    assert set(rows.protocol) == {"multiclass"} and set(rows.metric) == set(metrics)


def test_metrics_against_brute_force(tmp_path):
    adv, player = MulticlassSeparableStream(n_classes=3, noise=0.2), MulticlassPA("pa")
    trace = tmp_path / "trace.parquet"
    run = run_game(player, adv, horizon=30, replicates=2, n_actions=12, metrics=METRICS,
                   checkpoints=[10, 30], trace_path=trace)  # fmt: skip
    rows, t = run.rows, pq.read_table(trace).to_pandas()
    for r in range(2):
        tr = t[t.replicate == r].sort_values("t")
        X, Y = np.stack(tr.x.to_numpy()), tr.y.to_numpy()
        W = np.stack(tr.w.to_numpy())
        data = RoundData(x=X[None], y=Y[None])
        got = rows[(rows.replicate == r) & (rows.t == 30)].set_index("metric").value
        losses = [brute_hinge(W[s].reshape(3, 4), X[s], Y[s]) for s in range(30)]
        assert got["loss"] == pytest.approx(sum(losses), abs=1e-12)
        assert got["mistakes"] == mistakes_of(W[None], data).sum()
        assert got["regret"] == pytest.approx(sum(losses) - dual_lp_min(X, Y, 3), abs=1e-8)
        assert got["dynamic_regret"] == pytest.approx(sum(losses), abs=1e-12)  # per-round min 0


def dual_lp_min(X, y, k):
    """The best multiclass hinge over ℝ^{kd} by the dual LP ``max Σβ`` s.t. ``Σ β_{s,r} z_{s,r} =
    0``, ``β ≥ 0``, ``Σ_r β_{s,r} ≤ 1``: an independent formulation (dense, dual simplex)."""
    t, d = X.shape
    cols, owner = [], []
    for s in range(t):
        for r in range(k):
            if r != y[s]:
                z = np.zeros((k, d))
                z[int(y[s])] += X[s]
                z[r] -= X[s]
                cols.append(z.ravel())
                owner.append(s)
    Z = np.array(cols).T
    A_ub = np.zeros((t, len(owner)))
    A_ub[owner, np.arange(len(owner))] = 1.0
    res = so.linprog(-np.ones(len(owner)), A_ub=A_ub, b_ub=np.ones(t), A_eq=Z,
                     b_eq=np.zeros(k * d), bounds=(0, None), method="highs-ds")  # fmt: skip
    assert res.status == 0
    return -res.fun


def test_best_multiclass_against_independent_solves():
    rng = np.random.default_rng(7)
    for trial in range(4):
        k, d, t = 3 + trial % 2, 3, 25
        X = rng.standard_normal((t, d))
        y = rng.integers(0, k, t).astype(float)
        value, W = best_multiclass(X[None], y[None], k, Domain(), return_argmin=True)
        # the value is evaluated at the returned W; LP tolerances 1e-10: 1e-8 absolute on ≤ 25
        assert value[0] == pytest.approx(hinge_sum(RoundData(x=X[None], y=y[None]),
                                                   W.reshape(1, k, d))[0], abs=1e-12)  # fmt: skip
        assert value[0] == pytest.approx(dual_lp_min(X, y, k), abs=1e-8)
        np.testing.assert_allclose(W.reshape(k, d).sum(axis=0), 0.0, atol=1e-9)  # centred
    # k = 2 is the binary hinge of u = w_1 − w_0 (a box of radius r for W: 2r for u)
    X = rng.standard_normal((1, 40, 3))
    y = rng.integers(0, 2, (1, 40)).astype(float)
    for dom, binary in [(Domain(), Domain()), (Domain("box", 0.3), Domain("box", 0.6))]:
        got = best_multiclass(X, y, 2, dom)[0]
        assert got == pytest.approx(best_examples("hinge", X, 2 * y - 1, binary)[0], rel=1e-9)
    # separable data: exactly 0; the ball is refused with the reason
    X = np.array([[[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]]])
    assert best_multiclass(X, np.array([[0.0, 1.0, 2.0]]), 3, Domain())[0] == 0.0
    with pytest.raises(NotImplementedError, match="second-order cone"):
        best_multiclass(X, np.array([[0.0, 1.0, 2.0]]), 3, Domain("ball", 1.0))


def test_per_round_best_closed_forms():
    rng = np.random.default_rng(2)
    k, d = 4, 3
    x = rng.standard_normal((2, 5, d))
    x[1, 0] = 0.0
    y = rng.integers(0, k, (2, 5)).astype(float)
    value, W = per_round_best("multiclass_hinge", Domain(), x, y, n_classes=k)
    np.testing.assert_allclose(value, np.where(np.linalg.norm(x, axis=2) > 0, 0.0, 1.0))
    v, _, _, _ = evaluate("multiclass_hinge", 0.0, W, RoundData(x=x, y=y))
    np.testing.assert_allclose(v, value, atol=1e-12)
    # minimum norm: ‖W‖ = √((k−1)/k)/‖x‖, the least norm giving every margin 1
    nx = np.linalg.norm(x, axis=2)
    want = np.where(nx > 0, math.sqrt((k - 1) / k) / np.where(nx > 0, nx, 1.0), 0.0)
    np.testing.assert_allclose(np.linalg.norm(W, axis=2), want, rtol=1e-12)
    # a small ball: the largest smallest margin r‖x‖√(k/(k−1)), checked against SLSQP
    r = 0.2
    value, W = per_round_best("multiclass_hinge", Domain("ball", r), x, y, n_classes=k)
    assert np.all(np.linalg.norm(W, axis=2) <= r * (1 + 1e-12))
    xs, ys = x[0, 2], y[0, 2]
    cons = [{"type": "ineq", "fun": lambda w: r * r - w @ w}]
    res = so.minimize(lambda w: brute_hinge(w.reshape(k, d), xs, ys), np.zeros(k * d),
                      method="SLSQP", constraints=cons)  # fmt: skip
    # SLSQP (scipy 1.17) may end a hair outside the ball: compare with its point pulled back in,
    # the best feasible point it found
    w = res.x * min(1.0, r / np.linalg.norm(res.x))
    assert value[0, 2] <= brute_hinge(w.reshape(k, d), xs, ys) + 1e-12
    assert value[0, 2] == pytest.approx(
        max(0.0, 1 - r * np.linalg.norm(xs) * math.sqrt(k / (k - 1)))
    )


def test_validation_errors():
    class BadLabels(GaussianMulticlass):
        def data_block(self, t0, n):
            rd = super().data_block(t0, n)
            y = rd.y.copy()
            if t0 <= 3 < t0 + n:
                y[1, 3 - t0] = 3.0
            return rd._replace(y=y)

    with pytest.raises(GameError, match=r"label 3\.0 is not in \{0, …, 2\}") as err:
        run_game(ProjectedGradient(), BadLabels(), horizon=10, replicates=2, metrics=["loss"])
    assert err.value.round == 3 and err.value.replicate == 1

    class WrongFeatures(GaussianMulticlass):
        def data_block(self, t0, n):
            rd = super().data_block(t0, n)
            return rd._replace(x=np.zeros((rd.x.shape[0], n, 9)))

    with pytest.raises(GameError, match="x of shape"):
        run_game(ProjectedGradient(), WrongFeatures(), horizon=5, metrics=["loss"])

    class OddDimension(GaussianMulticlass):
        def resolve_dim(self, requested, horizon=None):
            return 7

    with pytest.raises(ConfigError, match="dimension 7 of w_t is not a multiple of k = 3"):
        run_game(ProjectedGradient(), OddDimension(), horizon=5)
    with pytest.raises(ConfigError, match="multiclass protocol only"):
        from arena.oco.testing import GaussianClassification

        run_game(ProjectedGradient(), GaussianClassification(loss="multiclass_hinge"), horizon=5)
    with pytest.raises(ConfigError, match="'protocol'"):  # a binary player, a multiclass game
        run_game("perceptron", GaussianMulticlass(), horizon=5)
    with pytest.raises(ConfigError, match="'protocol'"):  # and the converse
        run_game(MulticlassPA(), "separable_stream", horizon=5)
    # the ball comparator and the default (the game's ℝ^{kd}) are skipped with their reasons
    run = run_game(MulticlassPA(), GaussianMulticlass(), horizon=5,
                   metrics={"regret": {"radius": [2.0]}, "loss": {}})  # fmt: skip
    assert "ball is not implemented" in run.skipped_metrics["regret"]
    run = run_game(MulticlassPA(), GaussianMulticlass(), horizon=5, metrics=["regret", "loss"])
    assert "radius" in run.skipped_metrics["regret"]


def test_cli_run_and_a_tournament(tmp_path):
    res = run_in_process(
        ["run", "player=multiclass_pa", "adversary=multiclass_dataset_stream",
         "adversary.dataset=iris", "horizon=60", "replicates=2", "metrics=oco",
         "metrics.regret.radius=[inf]", "hydra.run.dir=out"],
        tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    df = pq.read_table(tmp_path / "out" / "results.parquet").to_pandas()
    assert set(df.protocol) == {"multiclass"} and set(df.n_actions) == {12}
    last = df[df.t == 60].set_index(["replicate", "metric"]).value
    assert np.all(last.xs("regret", level=1) <= last.xs("loss", level=1) + 1e-9)
    res = run_in_process(
        ["tournament", "tournament=multiclass", "tournament.players=[multiclass_pa]",
         "tournament.horizon=25", "tournament.replicates=1", "executor=serial",
         "progress=false", "out=tour"],
        tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "2 cell(s) run, 0 already done, 0 failed" in res.stdout
    parts = pd.concat(pd.read_parquet(p) for p in (tmp_path / "tour" / "parts").glob("*.parquet"))
    assert set(parts.metric) == {"loss", "mistakes", "regret"}
    assert set(parts.n_actions) == {640, 100}
