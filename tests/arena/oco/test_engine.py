"""The OCO engine: equal to the literal reference loop, batching invariance, errors, trace."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from arena import play
from arena.errors import ConfigError, GameError
from arena.game import run_game
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.oco.reference import reference_play_oco
from arena.oco.testing import AntiGradient, ConstantLinear, ZeroPlayer
from tests.arena.oco._engine_support import (
    Contrary,
    GaussianClassification,
    GaussianRegression,
    GaussianStream,
    TinyOGD,
)

# Every metric of the engine is computed from the same float64 quantities as the reference loop,
# summed in a different order: 1e-12 absolute covers the rounding of a few hundred additions.
EXACT = 1e-12

GAMES = [
    pytest.param(
        GaussianStream("linear", "ball", 2.0),
        ["loss", "regret", "dynamic_regret", "path_length", "comparator_regret"],
        id="linear-ball",
    ),
    pytest.param(
        GaussianStream("linear", "box", 0.5),
        ["loss", "regret", "dynamic_regret", "path_length"],
        id="linear-box",
    ),
    pytest.param(
        GaussianStream("linear", "simplex"),
        ["loss", "regret", "dynamic_regret", "path_length"],
        id="linear-simplex",
    ),
    pytest.param(
        GaussianStream("linear", "ball", 1.0, sigma=0.5),
        ["loss", "regret", "dynamic_regret", "comparator_regret"],
        id="linear-sigma",
    ),
    pytest.param(
        GaussianClassification("hinge"),
        ["loss", "mistakes", "comparator_regret", "dynamic_regret"],
        id="hinge-free",
    ),
    pytest.param(
        GaussianClassification("logistic", "ball", 3.0),
        ["loss", "mistakes", "regret", "dynamic_regret", "path_length"],
        id="logistic-ball",
    ),
    pytest.param(
        GaussianClassification("hinge", "box", 1.0), ["loss", "mistakes", "regret"], id="hinge-box"
    ),
    pytest.param(
        GaussianRegression("absolute", "ball", 1.0),
        ["loss", "regret", "dynamic_regret"],
        id="absolute-ball",
    ),
    pytest.param(Contrary(), ["loss", "mistakes"], id="adaptive-contrary"),
    pytest.param(
        AntiGradient(G=2.0, radius=1.5),
        ["loss", "regret", "dynamic_regret", "path_length"],
        id="adaptive-linear",
    ),
]


@pytest.mark.parametrize(("adversary", "metrics"), GAMES)
def test_engine_equals_reference_loop(adversary, metrics):
    kw = dict(n_actions=3, horizon=40, replicates=3, seed=7, metrics=metrics, per_decade=4)
    fast = run_game(TinyOGD(), adversary, chunk_elements=17, **kw).rows
    ref = reference_play_oco(TinyOGD(), adversary, **kw)
    pd.testing.assert_frame_equal(fast, ref, atol=EXACT, rtol=0)


def test_squared_loss_statistics_equal_the_direct_solve():
    # regret of the squared loss streams Σxxᵀ, Σyx, Σy² (engine) and solves over the stored
    # examples (reference): two exact solvers of the same quadratic, equal to solver accuracy.
    kw = dict(n_actions=3, horizon=30, replicates=2, metrics=["regret"], per_decade=3)
    for domain in ("ball", "unconstrained"):
        adv = GaussianRegression("squared", domain, 0.7)
        fast = run_game(TinyOGD(), adv, **kw).rows
        ref = reference_play_oco(TinyOGD(), adv, **kw)
        np.testing.assert_allclose(fast.value, ref.value, rtol=1e-7, atol=1e-8)


def test_regret_radius_parameter_and_mistakes():
    df = play(
        TinyOGD(),
        GaussianClassification("hinge"),
        n_actions=2,
        horizon=50,
        replicates=2,
        metrics={"regret": {"radius": [1.0, 4.0]}, "mistakes": {}},
    )
    last = df[df.t == 50]
    r1 = last[(last.metric == "regret") & (last.param == 1.0)].value.to_numpy()
    r4 = last[(last.metric == "regret") & (last.param == 4.0)].value.to_numpy()
    assert (r4 >= r1 - 1e-9).all()  # a larger comparator ball can only lower the best loss
    assert set(last.metric) == {"regret", "mistakes"}


def test_contrarian_forces_a_mistake_every_round():
    df = play(TinyOGD(), Contrary(), n_actions=2, horizon=30, replicates=4, metrics=["mistakes"])
    assert (df.value.to_numpy() == df.t.to_numpy()).all()


def test_replicate_rows_do_not_depend_on_the_batch():
    kw = dict(n_actions=3, horizon=60, seed=3, metrics=["loss", "regret"])
    adv = GaussianStream("linear", "ball")
    batch = play(TinyOGD(), adv, replicates=5, **kw)
    alone = play(TinyOGD(), adv, replicates=[3], **kw)
    split = pd.concat(
        [
            play(TinyOGD(), adv, replicates=[0, 1], **kw),
            play(TinyOGD(), adv, replicates=[2, 3, 4], **kw),
        ]
    )
    cols = ["replicate", "t", "metric", "param", "value"]
    key = ["replicate", "t", "metric"]
    pd.testing.assert_frame_equal(
        batch[batch.replicate == 3][cols].reset_index(drop=True), alone[cols].reset_index(drop=True)
    )
    pd.testing.assert_frame_equal(
        batch[cols].sort_values(key).reset_index(drop=True),
        split[cols].sort_values(key).reset_index(drop=True),
    )


def test_common_random_numbers_across_players():
    # every player facing the same adversary and replicate sees the same data
    adv = GaussianStream("linear", "ball")
    a = run_game(ZeroPlayer(), adv, n_actions=2, horizon=20, replicates=2, metrics=["regret"])
    b = run_game(TinyOGD(), adv, n_actions=2, horizon=20, replicates=2, metrics=["regret"])
    # ZeroPlayer's regret is −min ⟨G, u⟩ = ‖G‖: same G for both players ⇒ b − a = loss of OGD
    loss_b = run_game(TinyOGD(), adv, n_actions=2, horizon=20, replicates=2, metrics=["loss"])
    np.testing.assert_allclose(b.rows.value - a.rows.value, loss_b.rows.value, atol=EXACT)


def test_zero_player_regret_is_the_norm_of_the_gradient_sum():
    df = play(
        ZeroPlayer(),
        ConstantLinear(G=2.0, radius=3.0),
        n_actions=4,
        horizon=10,
        metrics=["regret", "loss"],
    )
    final = df[df.t == 10].set_index("metric").value
    assert final["loss"] == 0.0
    assert final["regret"] == pytest.approx(3.0 * 2.0 * 10, abs=EXACT)


def test_trace_holds_points_values_and_data(tmp_path):
    path = tmp_path / "trace.parquet"
    run_game(
        TinyOGD(),
        GaussianClassification("hinge"),
        n_actions=2,
        horizon=12,
        replicates=2,
        metrics=["loss"],
        trace_path=path,
    )
    trace = pq.read_table(path).to_pandas()
    assert len(trace) == 24 and set(trace.columns) >= {"w", "x", "y", "value", "prediction"}
    pred = np.array([np.dot(w, x) for w, x in zip(trace.w, trace.x, strict=True)])
    np.testing.assert_allclose(pred, trace.prediction, atol=EXACT)
    hinge = np.maximum(1 - trace.y * pred, 0)
    np.testing.assert_allclose(hinge, trace.value, atol=EXACT)


# ------------------------------------------------------------------------------------------------
# bad input and bad component output


class _Bad(GaussianStream):
    name = "bad_stream"

    def __init__(self, what="nan", at=5):
        super().__init__("linear", "ball", 1.0, 0.0)
        self.what = what
        self.at = at

    def gradient_bound(self):
        return 10.0 if self.what == "bound" else None

    def data_block(self, t0, n):
        data = super().data_block(t0, n)
        g = data.g.copy()
        j = self.at - t0
        if 0 <= j < n:
            g[1, j, 0] = np.nan if self.what == "nan" else 100.0
        return RoundData(g=g)


class _Escaping(TinyOGD):
    name = "escaping"

    def predict(self, x=None):
        return self._w + 5.0


def test_nan_data_names_adversary_round_and_replicate():
    with pytest.raises(
        GameError, match=r"adversary bad_stream.*non-finite g.*round 5, replicate 1"
    ):
        play(TinyOGD(), _Bad("nan", 5), n_actions=2, horizon=20, replicates=3, metrics=["loss"])


def test_gradient_bound_is_enforced():
    with pytest.raises(GameError, match=r"exceeds the declared bound.*round 7, replicate 1"):
        play(TinyOGD(), _Bad("bound", 7), n_actions=2, horizon=20, replicates=3, metrics=["loss"])


def test_points_outside_the_domain_are_refused():
    with pytest.raises(GameError, match=r"player escaping.*outside the ball.*round 1, replicate 0"):
        play(_Escaping(), GaussianStream(), n_actions=2, horizon=5, metrics=["loss"])


def test_protocol_domain_and_loss_mismatches_are_config_errors():
    from arena.players.hedge import Hedge

    with pytest.raises(ConfigError, match="experts protocol"):
        play(Hedge(), GaussianStream(), n_actions=2, horizon=5)
    with pytest.raises(ConfigError, match="protocol"):
        play(TinyOGD(), "fair_coin", n_actions=2, horizon=5)

    class SimplexOnly(TinyOGD):
        name = "simplex_only"
        tags = TinyOGD.tags.__class__(
            protocols=TinyOGD.tags.protocols, randomized=False, domains=frozenset({"simplex"})
        )

    with pytest.raises(ConfigError, match="domain"):
        play(SimplexOnly(), GaussianStream("linear", "ball"), n_actions=2, horizon=5)
    with pytest.raises(ConfigError, match="radius"):
        play(TinyOGD(), GaussianStream("linear", "ball", -1.0), n_actions=2, horizon=5)


def test_unbounded_comparator_problems_are_skipped_with_a_reason():
    run = run_game(
        TinyOGD(),
        GaussianStream("linear", "unconstrained"),
        n_actions=2,
        horizon=5,
        metrics=["loss", "regret", "dynamic_regret"],
    )
    assert "unbounded" in run.skipped_metrics["regret"]
    assert "dynamic_regret" in run.skipped_metrics
    run = run_game(
        TinyOGD(),
        GaussianStream("linear", "unconstrained"),
        n_actions=2,
        horizon=5,
        metrics={"regret": {"radius": [1.0]}},
    )
    assert run.rows.metric.unique().tolist() == ["regret"]


def test_experts_only_metrics_are_skipped_and_defaults_apply():
    run = run_game(
        TinyOGD(),
        GaussianClassification("hinge", "ball"),
        n_actions=2,
        horizon=20,
        metrics={"regret": {}, "quantile_regret": {"eps": [0.1]}},
    )
    assert run.skipped_metrics == {
        "quantile_regret": "defined for the bandit/experts protocols only, not classification"
    }
    run = run_game(TinyOGD(), GaussianClassification("hinge", "ball"), n_actions=2, horizon=20)
    assert {"loss", "mistakes", "regret", "comparator_regret", "dynamic_regret"} <= set(
        run.rows.metric
    )
    assert math.isnan(run.rows[run.rows.metric == "loss"].param.iloc[0])


def test_domain_helpers():
    dom = Domain("simplex")
    w = dom.project(np.array([[0.2, 0.9, -3.0]]))
    assert dom.contains(w).all() and abs(w.sum() - 1) < 1e-15
    value, u = Domain("box", 2.0).min_linear(np.array([[1.0, -3.0]]))
    assert value[0] == -8.0 and u.tolist() == [[-2.0, 2.0]]
