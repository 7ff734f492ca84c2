"""Sparse examples end to end: the CSR rows, the losses, the protocol, the players, the metrics.

Every comparison plays the same examples twice, as :class:`SparseRows` and as dense arrays
(``sparse_stream``'s ``representation``; its seed ignores it), and asks for equal rows. The
tolerances: sparse and dense sums of ``⟨w, x⟩`` add the same non-zero products in the same
column order, so unconstrained and box players are bitwise equal (``atol=0``); the ball's lazy
scale (OGD) and BLAS-reduced norms round differently, by about 1e-16 relative a round, so those
compare at 1e-12 relative; the reference loop's textbook sums at 1e-12 (its contract).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena import registry
from arena.adversaries.sparse_stream import SparseStream
from arena.errors import ConfigError, GameError
from arena.game import run_game
from arena.oco import game as oco_game
from arena.oco.losses import (
    EXAMPLE_LOSSES,
    Feedback,
    RoundData,
    SparseRows,
    dense_gradient,
    evaluate,
    feedback,
)
from arena.oco.reference import reference_play_oco
from arena.spec import AdversaryTags, GameSpec

SPARSE_PLAYERS = [
    ("ogd", {"eta": 0.5}, {}, 0.0),
    ("ogd", {"schedule": "fixed", "eta": 0.3}, {"domain": "ball", "radius": 0.4}, 1e-12),
    ("adagrad", {"eta": 0.5}, {}, 0.0),
    ("adagrad", {"eta": 0.5}, {"domain": "box", "radius": 0.05}, 0.0),
    ("adagrad", {"eta": 0.5, "variant": "norm"}, {"loss": "logistic"}, 0.0),
    ("adagrad", {"eta": 0.5}, {"domain": "ball", "radius": 0.3}, 0.0),  # densified block
    ("perceptron", {}, {}, 0.0),
    ("passive_aggressive", {"variant": "pa1", "C": 0.5}, {"noise": 0.1}, 0.0),
    ("passive_aggressive", {"variant": "pa"}, {}, 0.0),
    ("passive_aggressive", {"variant": "pa2", "epsilon": 0.05}, {"task": "regression"}, 0.0),
    # the logistic loss: SON's projection puts |⟨w, x⟩| = C = 1 on the hinge's kink
    ("son", {"sketch": "oja", "m": 3, "sparse": True, "eta": 0.5}, {"loss": "logistic"}, 1e-12),
    (
        "son",
        {"sketch": "oja", "m": 3, "sparse": True, "eta": 0.5, "diagonal": True},
        {"loss": "logistic"},
        1e-12,
    ),
    ("son", {"sketch": "fd", "m": 3, "eta": 0.5}, {"loss": "logistic"}, 1e-12),  # densified
]
METRICS = ["loss", "mistakes", "regret"]


def _game(player, pp, ap, representation, **kw):
    params = {"nnz": 6, "noise": 0.05, **ap, "representation": representation}
    base = dict(n_actions=300, horizon=60, replicates=2, metrics=METRICS, seed=3)
    return dict(base | kw, player_params=pp, adversary_params=params)


def _values(rows: pd.DataFrame) -> np.ndarray:
    return rows.sort_values(["replicate", "t", "metric", "param"]).value.to_numpy()


# ---------------------------------------------------------------------------------------------
# the representation


def _random_dense(rng, shape, density=0.2):
    a = rng.standard_normal(shape)
    return np.where(rng.random(shape) < density, a, 0.0)


def test_sparse_rows_round_trip_and_slices():
    rng = np.random.default_rng(0)
    dense = _random_dense(rng, (3, 5, 7))
    x = SparseRows.from_dense(dense)
    assert x.check() is None
    assert x.nnz == int((dense != 0).sum())
    np.testing.assert_array_equal(x.densify(), dense)
    for j in range(5):
        np.testing.assert_array_equal(x.round(j).densify(), dense[:, j])
    np.testing.assert_array_equal(x.rounds(1, 4).densify(), dense[:, 1:4])
    joined = SparseRows.concat_rounds([x.rounds(0, 2), x.rounds(2, 5)])
    np.testing.assert_array_equal(joined.densify(), dense)
    np.testing.assert_array_equal(x.to_scipy().toarray(), dense.reshape(15, 7))
    back = SparseRows.from_scipy(x.to_scipy(), x.shape)
    np.testing.assert_array_equal(back.densify(), dense)
    w = rng.standard_normal((3, 7))
    np.testing.assert_allclose(x.dot(w), np.einsum("rnd,rd->rn", dense, w), rtol=1e-14)
    np.testing.assert_allclose(x.row_norms_sq(), (dense**2).sum(axis=-1), rtol=1e-14)


@pytest.mark.parametrize(
    ("rows", "problem"),
    [
        (SparseRows([0, 2], [1, 1], [1.0, 2.0], (1, 1, 3)), "strictly increasing"),
        (SparseRows([0, 1], [3], [1.0], (1, 1, 3)), "outside [0, 3)"),
        (SparseRows([0, 1], [0], [1.0], (1, 2, 3)), "indptr of shape"),
        (SparseRows([0, 2], [0, 1], [1.0], (1, 1, 3)), "2 indices but 1 values"),
    ],
)
def test_sparse_rows_check_names_the_problem(rows, problem):
    assert problem in rows.check()


# ---------------------------------------------------------------------------------------------
# the losses


@pytest.mark.parametrize("kind", EXAMPLE_LOSSES)
@pytest.mark.parametrize("sigma", [0.0, 0.5])
def test_losses_sparse_equal_dense(kind, sigma):
    rng = np.random.default_rng(1)
    dense = _random_dense(rng, (4, 9))
    y = np.where(rng.random(4) < 0.5, -1.0, 1.0)
    z = rng.standard_normal((4, 9)) if sigma else None
    w = rng.standard_normal((4, 9))
    sparse_data = RoundData(x=SparseRows.from_dense(dense), y=y, z=z)
    v, g, p, dl = evaluate(kind, sigma, w, RoundData(x=dense, y=y, z=z))
    vs, gs, ps, dls = evaluate(kind, sigma, w, sparse_data)
    assert gs is None  # the sparse form: dloss·x (+ σ(w − z)), never a dense (R, d) array
    np.testing.assert_allclose(vs, v, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(ps, p, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(dls, dl)
    np.testing.assert_allclose(dense_gradient(dls, sparse_data, sigma, w), g, atol=1e-15)
    fb = feedback(kind, sigma, w, sparse_data)
    assert fb.sparse and fb._grad is None
    np.testing.assert_allclose(fb.grad, g, atol=1e-15)  # formed on first access
    assert fb._grad is not None


def test_feedback_keeps_a_given_gradient():
    g = np.ones((1, 2))
    fb = Feedback(np.zeros((1, 2)), np.zeros(1), g, RoundData(g=g))
    assert fb.grad is g and not fb.sparse


# ---------------------------------------------------------------------------------------------
# the stream


def test_stream_representations_carry_the_same_examples_whatever_the_blocks():
    spec = GameSpec("classification", 500, 40, dim=500, n_replicates=2)
    sparse, dense = SparseStream(nnz=8), SparseStream(nnz=8, representation="dense")
    assert sparse.stream_identity() == dense.stream_identity()
    for adv in (sparse, dense):
        adv.reset(spec, [np.random.default_rng(s) for s in (5, 6)])
    a = sparse.data_block(1, 40)
    b = [dense.data_block(1, 15), dense.data_block(16, 25)]
    np.testing.assert_array_equal(a.x.densify(), np.concatenate([p.x for p in b], axis=1))
    np.testing.assert_array_equal(a.y, np.concatenate([p.y for p in b], axis=1))
    assert a.x.check() is None
    np.testing.assert_allclose(a.x.row_norms_sq(), 1.0, rtol=1e-14)
    assert set(np.unique(a.y)) <= {-1.0, 1.0}
    counts = np.diff(a.x.indptr)
    assert counts.max() <= 8 and counts.mean() > 7.5  # repeats among 8 of 500 are rare


# ---------------------------------------------------------------------------------------------
# players: sparse == dense, and the literal reference loop on sparse rows


@pytest.mark.parametrize(("player", "pp", "ap", "rtol"), SPARSE_PLAYERS)
def test_player_sparse_equals_dense(player, pp, ap, rtol):
    sparse = run_game(player, "sparse_stream", **_game(player, pp, ap, "sparse")).rows
    dense = run_game(player, "sparse_stream", **_game(player, pp, ap, "dense")).rows
    assert len(sparse) == len(dense) > 0
    np.testing.assert_allclose(_values(sparse), _values(dense), rtol=rtol, atol=rtol)


@pytest.mark.parametrize(("player", "pp", "ap", "rtol"), SPARSE_PLAYERS)
def test_reference_loop_on_sparse_rows(player, pp, ap, rtol):
    kw = _game(player, pp, ap, "sparse", horizon=25)
    driver = run_game(player, "sparse_stream", **kw).rows
    ref = reference_play_oco(player, "sparse_stream", **kw)
    pd.testing.assert_frame_equal(ref, driver, atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("diagonal", [False, True])
def test_sparse_rp_son_block_equals_dense(diagonal):
    """RP-SON draws its sketch from the player's streams, which a game derives from the cell
    (the ``representation`` parameter included), so its two representations are compared on
    the same streams here, block by block."""
    from dataclasses import replace

    from arena.oco.domains import Domain
    from arena.players.son import SON

    adv = SparseStream(nnz=6, loss="logistic")
    spec = GameSpec(
        "classification", 200, 40, n_replicates=2, dim=200, domain=Domain(), loss="logistic"
    )
    adv.reset(spec, [np.random.default_rng(s) for s in (1, 2)])
    blocks = [adv.data_block(1, 15), adv.data_block(16, 25)]
    points = {}
    for sparse in (True, False):
        player = SON(sketch="rp", m=3, sparse=True, eta=0.5, diagonal=diagonal)
        game = replace(spec, sparse=sparse)
        player.reset(game, [np.random.default_rng(s) for s in (5, 6)])
        shown = [b if sparse else b.densified() for b in blocks]
        points[sparse] = np.concatenate([player.play_block(b, game) for b in shown], axis=1)
    np.testing.assert_allclose(points[True], points[False], rtol=1e-12, atol=1e-12)


def test_sparse_players_are_tagged_and_see_sparse_rows():
    for name in ("ogd", "adagrad", "perceptron", "passive_aggressive", "son"):
        assert registry.load("player", name).tags.sparse_input, name
    assert not registry.load("player", "ons").tags.sparse_input
    seen = {}

    class Spy(registry.load("player", "perceptron")):
        def play_block(self, data, spec):
            seen["x"], seen["sparse"] = data.x, spec.sparse
            return super().play_block(data, spec)

    run_game(Spy(), SparseStream(nnz=3), n_actions=50, horizon=5, metrics=["loss"])
    assert isinstance(seen["x"], SparseRows) and seen["sparse"]


# ---------------------------------------------------------------------------------------------
# the protocol: dense-only players densified within the memory estimate, or refused


def test_dense_only_player_gets_densified_rows_equal_to_dense():
    kw = dict(n_actions=40, horizon=30, replicates=2, metrics=["loss", "mistakes"])
    sparse = run_game("ons", SparseStream(nnz=4, domain="ball"), **kw).rows
    dense = run_game("ons", SparseStream(nnz=4, domain="ball", representation="dense"), **kw)
    np.testing.assert_allclose(_values(sparse), _values(dense.rows), rtol=1e-12)


def test_dense_only_player_over_the_memory_estimate_is_refused(monkeypatch):
    monkeypatch.setattr(oco_game, "available_memory", lambda: 10 * 2**20)  # 10 MiB
    with pytest.raises(ConfigError) as err:
        run_game("ons", SparseStream(domain="ball"), n_actions=10**5, horizon=5, metrics=["loss"])
    msg = str(err.value)
    assert "player ons" in msg and "sparse_stream" in msg and "12.2 MiB" in msg
    assert "\n" not in msg
    # the same game with a player that reads sparse rows needs no densified copy
    run_game("perceptron", SparseStream(), n_actions=10**5, horizon=5, metrics=["loss"])


def test_undeclared_sparse_rows_stop_the_game():
    class Undeclared(SparseStream):
        def sparse_features(self):
            return False

    with pytest.raises(GameError, match="does not declare sparse_features"):
        run_game("perceptron", Undeclared(), n_actions=20, horizon=3, metrics=["loss"])


def test_sparse_features_need_an_example_protocol():
    class PlainOCO(SparseStream):  # an example loss, but the oco protocol
        def _instance_tags(self):
            return AdversaryTags(protocol="oco", oblivious=True)

    with pytest.raises(ConfigError, match="sparse features need the classification"):
        run_game("ogd", PlainOCO(), n_actions=20, horizon=3, metrics=["loss"])


# ---------------------------------------------------------------------------------------------
# metrics that read the features


@pytest.mark.parametrize(
    ("player", "pp", "ap"),
    [
        ("ogd", {"eta": 0.5}, {"domain": "ball", "radius": 2.0, "loss": "hinge"}),
        ("ogd", {"eta": 0.5}, {"domain": "ball", "radius": 2.0, "task": "regression"}),
        ("adagrad", {"eta": 0.5}, {"domain": "box", "radius": 0.5}),
    ],
)
def test_default_metrics_on_sparse_streams_equal_dense(player, pp, ap):
    kw = dict(n_actions=30, horizon=40, replicates=2, metrics=None, player_params=pp)
    sparse = run_game(player, "sparse_stream", **kw, adversary_params={"nnz": 4, **ap}).rows
    dense = run_game(
        player,
        "sparse_stream",
        **kw,
        adversary_params={"nnz": 4, **ap, "representation": "dense"},
    ).rows
    assert {"regret", "dynamic_regret"} <= set(sparse.metric)
    np.testing.assert_allclose(_values(sparse), _values(dense), rtol=1e-9, atol=1e-9)


def test_the_sparse_player_of_the_plugin_guide_passes_the_suite():
    """docs/plugins.md, "Sparse rows", as written: its player passes the conformance suite (the
    sparse == dense check included) and plays a sparse stream as it plays the same rows dense."""
    import re
    from pathlib import Path

    from arena.oco.components import ObliviousOCOAdversary, OCOPlayer
    from arena.spec import PlayerTags
    from arena.testing import check_component

    guide = (Path(__file__).resolve().parents[3] / "docs" / "plugins.md").read_text()
    part = guide.split("### Sparse rows")[1].split("## 7.")[0]
    blocks = re.findall(r"```python\n(.*?)```", part, re.S)
    namespace = {
        "np": np,
        "OCOPlayer": OCOPlayer,
        "ObliviousOCOAdversary": ObliviousOCOAdversary,
        "AdversaryTags": AdversaryTags,
        "PlayerTags": PlayerTags,
    }
    exec(blocks[0] + blocks[1], namespace)
    player = namespace["SparseSGD"](eta=0.3)
    assert check_component(player) == {}

    class Broken(namespace["SparseSGD"]):  # its sparse branch steps the wrong way
        def update(self, fb):
            if not fb.sparse:
                return super().update(fb)
            self._w += self.eta * fb.grad

    from arena.oco.checks import check_oco_sparse_matches_dense

    with pytest.raises(AssertionError, match="sparse rows through"):
        check_oco_sparse_matches_dense(Broken(eta=0.3))
    kw = dict(n_actions=80, horizon=40, replicates=2, metrics=["loss", "mistakes"])
    sparse = run_game(player, SparseStream(nnz=4), **kw).rows
    dense = run_game(player, SparseStream(nnz=4, representation="dense"), **kw).rows
    np.testing.assert_allclose(_values(sparse), _values(dense), rtol=1e-13)


# ---------------------------------------------------------------------------------------------
# the boosting protocol hosts sparse streams: boosters tagged sparse_input (online_bbm,
# adaboost_ol) read the CSR rows, the others are shown densified rows


def test_boosting_on_a_sparse_stream_equals_dense_and_its_reference():
    from arena.game import reference_play

    kw = dict(n_actions=50, horizon=40, replicates=2, metrics=["mistakes", "loss"])
    pp = {"n_learners": 4}
    rows = {
        rep: run_game(
            "online_bbm",
            "sparse_stream",
            **kw,
            player_params=pp,
            adversary_params={"nnz": 5, "noise": 0.05, "representation": rep},
        ).rows
        for rep in ("sparse", "dense")
    }
    np.testing.assert_array_equal(_values(rows["sparse"]), _values(rows["dense"]))
    ref = reference_play(
        "online_bbm",
        "sparse_stream",
        **kw,
        player_params=pp,
        adversary_params={"nnz": 5, "noise": 0.05},
    )
    pd.testing.assert_frame_equal(ref, rows["sparse"], atol=1e-12, rtol=1e-12)


def test_a_booster_over_the_memory_estimate_is_refused(monkeypatch):
    from arena.boosting.testing import MajorityVote

    monkeypatch.setattr(oco_game, "available_memory", lambda: 10 * 2**20)
    with pytest.raises(ConfigError, match=r"player .*majority.*sparse stream sparse_stream"):
        run_game(MajorityVote(), SparseStream(), n_actions=10**5, horizon=5, metrics=["mistakes"])


def test_online_to_batch_reads_a_sparse_test_split():
    kw = dict(
        n_actions=60,
        horizon=30,
        replicates=2,
        metrics=["online_to_batch", "loss"],
        player_params={"eta": 0.5},
    )
    params = {"nnz": 4, "noise": 0.1, "test_size": 25}
    rows = {
        rep: run_game(
            "ogd", "sparse_stream", **kw, adversary_params={**params, "representation": rep}
        ).rows
        for rep in ("sparse", "dense")
    }
    assert rows["sparse"].metric.str.startswith("online_to_batch:avg_risk").any()
    np.testing.assert_allclose(_values(rows["sparse"]), _values(rows["dense"]), rtol=1e-13)
    ref = reference_play_oco("ogd", "sparse_stream", **kw, adversary_params=params)
    pd.testing.assert_frame_equal(ref, rows["sparse"], atol=1e-12, rtol=1e-12)
