"""dataset_stream: scikit-learn's bundled datasets, reshuffled every epoch per replicate."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from arena.adversaries import dataset_stream as ds
from arena.adversaries.dataset_stream import DatasetStream, load_dataset
from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.params import validate_params
from tests.helpers import rngs
from tests.helpers.oco_adversaries import (
    assert_replicate_determinism,
    assert_split_invariant,
    blocks,
    gradient_norms,
    spec_for,
)

# sizes of scikit-learn's bundled copies (WDBC 569×30, diabetes
# 442×10); digits 1797×64 with 183 threes and 174 eights (sklearn's load_digits)
SIZES = {"breast_cancer": (569, 30), "digits": (1797, 64), "diabetes": (442, 10)}


def test_datasets_shapes_labels_and_protocols():
    for name, (n, d) in SIZES.items():
        adv = DatasetStream(name)
        assert adv.resolve_dim(None) == d
        X, y = load_dataset(name, (0,), True, False)
        assert X.shape == (n, d) and y.shape == (n,)
        assert not X.flags.writeable
        want = "regression" if name == "diabetes" else "classification"
        assert adv.tags.protocol == want
        assert adv.declared_loss() == ("squared" if name == "diabetes" else "hinge")
    _, y = load_dataset("breast_cancer", (0,), True, False)
    assert (y == 1).sum() == 357 and (y == -1).sum() == 212  # 357 benign, 212 malignant
    X, y = load_dataset("digits", (3, 8), False, True)
    assert X.shape == (183 + 174, 65) and (y == 1).sum() == 183
    np.testing.assert_array_equal(X[:, -1], 1.0)  # the intercept feature
    _, y = load_dataset("digits", (7,), True, False)
    assert y.size == 1797 and (y == 1).sum() == 179
    assert DatasetStream.tags.protocol == "classification"  # the class-level default


def test_standardization_is_on_the_whole_dataset():
    X, y = load_dataset("diabetes", (0,), True, False)
    np.testing.assert_allclose(X.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(X.std(axis=0), 1.0, rtol=1e-12)
    assert abs(y.mean()) < 1e-12 and y.std() == pytest.approx(1.0, rel=1e-12)
    raw_x, raw_y = load_dataset("diabetes", (0,), False, False)
    assert raw_y.min() == 25.0 and raw_y.max() == 346.0  # raw targets without standardize
    np.testing.assert_allclose(np.linalg.norm(raw_x, axis=0), 1.0, rtol=1e-6)  # sklearn's scaling
    Xd, _ = load_dataset("digits", (0,), True, False)
    sd = Xd.std(axis=0)
    assert np.all((np.abs(sd - 1) < 1e-12) | (sd == 0))  # constant pixels stay 0
    assert np.all(Xd[:, sd == 0] == 0)


def _row_ids(x: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Index in X of each row of x (rows matched exactly; asserts each is found once)."""
    lookup = {row.tobytes(): i for i, row in enumerate(X)}
    assert len(lookup) == X.shape[0]
    return np.array([lookup[row.tobytes()] for row in x])


def test_epochs_are_fresh_permutations_per_replicate():
    adv = DatasetStream("diabetes")
    n = 442
    spec = spec_for(adv, n_rep=3, horizon=2 * n + 100)
    rd = blocks(adv, spec, [300, 2 * n + 100 - 300])
    X, y = load_dataset("diabetes", (0,), True, False)
    orders = []
    for r in range(3):
        ids = _row_ids(rd.x[r], X)
        np.testing.assert_array_equal(rd.y[r], y[ids])
        first, second, third = ids[:n], ids[n : 2 * n], ids[2 * n :]
        np.testing.assert_array_equal(np.sort(first), np.arange(n))  # each epoch: a permutation
        np.testing.assert_array_equal(np.sort(second), np.arange(n))
        assert np.unique(third).size == third.size
        assert not np.array_equal(first, second)  # a fresh permutation each epoch
        orders.append(first)
    assert not np.array_equal(orders[0], orders[1])  # replicates differ
    # the permutation is the replicate stream's first rng.permutation(n)
    np.testing.assert_array_equal(orders[0], rngs(0, 3)[0].permutation(n))


@pytest.mark.parametrize(
    "params",
    [{"dataset": "diabetes"}, {"dataset": "digits", "digits": [1, 7], "intercept": True}],
)
def test_split_invariance_across_epochs_and_determinism(params):
    adv = DatasetStream(**params)
    n = load_dataset(
        params["dataset"], tuple(params.get("digits", (0,))), True, params.get("intercept", False)
    )[0].shape[0]
    spec = spec_for(adv, n_rep=2, horizon=n + 37)
    assert_split_invariant(adv, spec)
    assert_replicate_determinism(adv, spec)
    a = adv.clone()
    a.reset(spec, rngs(0, 2))
    whole = blocks(adv, spec, [n + 37]).x
    parts = [a.data_block(1, n - 1).x, a.data_block(n, 1).x, a.data_block(n + 1, 37).x]
    np.testing.assert_array_equal(np.concatenate(parts, axis=1), whole)


@pytest.mark.parametrize(
    ("params", "exact"),
    [
        ({"dataset": "breast_cancer"}, True),
        ({"dataset": "digits", "loss": "logistic", "domain": "ball"}, True),
        ({"dataset": "diabetes", "domain": "ball", "radius": 2.0}, True),
        ({"dataset": "diabetes", "domain": "box", "radius": 0.5}, True),
        ({"dataset": "breast_cancer", "loss": "squared", "domain": "simplex"}, False),
        ({"dataset": "diabetes"}, None),
    ],
)
def test_gradient_bound_is_exact_over_the_dataset(params, exact):
    adv = DatasetStream(**params)
    bound = adv.gradient_bound()
    if exact is None:
        assert bound is None  # squared loss on ℝ^d
        return
    X, _ = adv._data()
    spec = spec_for(adv, n_rep=1, horizon=X.shape[0])
    rd = blocks(adv, spec, [X.shape[0]])
    dom = spec.domain
    x = rd.x
    # the maximizing points: w along −sign(y)·x (ball), −sign(y)·sign(x) (box), and for the
    # margin losses w = 0 (|ℓ'| = 1 for hinge/absolute)
    if dom.kind == "ball":
        w = -np.sign(rd.y)[..., None] * dom.radius * x / np.linalg.norm(x, axis=-1, keepdims=True)
    elif dom.kind == "box":
        w = -np.sign(rd.y)[..., None] * dom.radius * np.sign(x)
    elif dom.kind == "simplex":
        w = np.zeros_like(x)
        w[..., 0] = 1.0
    else:
        w = np.zeros_like(x)
    norms = gradient_norms(spec, rd, w)
    assert np.all(norms <= bound * (1 + 1e-12))
    if exact and adv.declared_loss() != "logistic":
        assert norms.max() == pytest.approx(bound, rel=1e-12)


@pytest.mark.parametrize(
    ("params", "parameter"),
    [
        ({"dataset": "iris"}, "dataset"),
        ({"dataset": "digits", "digits": [3, 3]}, "digits"),
        ({"dataset": "digits", "digits": [10]}, "digits"),
        ({"dataset": "digits", "digits": []}, "digits"),
        ({"dataset": "diabetes", "loss": "hinge"}, "loss"),
        ({"standardize": "yes"}, "standardize"),
        ({"domain": "disc"}, "domain"),
    ],
)
def test_invalid_parameters(params, parameter):
    adv = DatasetStream(**params)
    with pytest.raises(ConfigError) as err:
        validate_params(adv)  # the declared constraints first, as the driver checks them
        adv.reset(spec_for(DatasetStream(), n_rep=1), rngs(0, 1))  # then what depends on the game
    assert err.value.parameter == parameter and err.value.component == "adversary dataset_stream"


def test_dimension_is_fixed_by_the_dataset():
    with pytest.raises(ConfigError) as err:
        DatasetStream().resolve_dim(5)
    assert err.value.parameter == "n_actions"
    assert DatasetStream(intercept=True).resolve_dim(31) == 31


def test_missing_scikit_learn_is_a_config_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    ds.load_dataset.cache_clear()
    try:
        with pytest.raises(ConfigError, match="scikit-learn"):
            DatasetStream("diabetes").resolve_dim(None)
    finally:
        ds.load_dataset.cache_clear()


def test_end_to_end_through_the_engine():
    from arena import play
    from arena.oco.testing import ProjectedGradient

    df = play(
        ProjectedGradient(eta=0.1),
        DatasetStream("breast_cancer", domain="ball", radius=5.0),
        horizon=600,
        replicates=2,
        metrics=["loss", "mistakes"],
    )
    assert set(df.n_actions) == {30}
    mistakes = df[(df.metric == "mistakes") & (df.t == 600)].value.to_numpy()
    assert np.all(mistakes < 120)  # a linear classifier learns WDBC quickly (≈ 97% accuracy)
    reg = play(
        ProjectedGradient(eta=0.05),
        DatasetStream("diabetes", domain="ball", radius=3.0),
        horizon=100,
        replicates=1,
        metrics=["loss"],
    )
    assert set(reg.protocol) == {"regression"}
    assert (
        Domain("ball", 3.0)
        == DatasetStream("diabetes", domain="ball", radius=3.0).declared_domain()
    )


# ---- the generated datasets: friedman1 and gaussian_classes ----------------------------------


def test_generated_data_are_fixed_by_the_data_seed():
    for name in ds.GENERATED:
        X0, y0 = ds.generate_dataset(name, 300, 10, 4, 1.0, 3.0, 0.1, 7)
        X1, y1 = ds.generate_dataset(name, 300, 10, 4, 1.0, 3.0, 0.1, 7)
        np.testing.assert_array_equal(X0, X1)
        np.testing.assert_array_equal(y0, y1)
        X2, _ = ds.generate_dataset(name, 300, 10, 4, 1.0, 3.0, 0.1, 8)
        assert not np.allclose(X0, X2)  # another data seed, another dataset
    # replicates reshuffle the same examples, whatever the game's seed
    adv = DatasetStream("gaussian_classes", n_samples=200)
    spec = spec_for(adv, n_rep=2, horizon=200)
    rd = blocks(adv, spec, [200])
    X, y = adv._data()
    for r in range(2):
        ids = _row_ids(rd.x[r], X)
        np.testing.assert_array_equal(np.sort(ids), np.arange(200))
        np.testing.assert_array_equal(rd.y[r], y[ids])
    assert not np.array_equal(rd.x[0], rd.x[1])
    assert_replicate_determinism(adv, spec)
    a, b = DatasetStream("friedman1"), DatasetStream("friedman1", data_seed=1)
    assert a.data_identity() != b.data_identity()
    assert "flip" not in a.data_identity()["dataset"]  # only the parameters that change it


def test_gaussian_classes_law_and_shapes():
    X, y = load_dataset("gaussian_classes", (0,), False, False, n_features=6, n_informative=2)
    assert X.shape == (2000, 6) and set(np.unique(y)) == {-1.0, 1.0}
    mu, cov = ds.gaussian_classes_law(2, 3.0, 0)
    np.testing.assert_allclose(cov, cov.T)
    assert np.linalg.eigvalsh(cov).min() >= 0.5 - 1e-12  # BBᵀ/k + ½·I
    assert 2 * np.sqrt(mu @ np.linalg.solve(cov, mu)) == pytest.approx(3.0, rel=1e-12)
    # the noise features have the same law in both classes: their class means agree to ≈ 4σ
    for side in (1.0, -1.0):
        assert np.all(np.abs(X[y == side, 2:].mean(axis=0)) < 4 / np.sqrt((y == side).sum()))
    std, _ = load_dataset("gaussian_classes")
    np.testing.assert_allclose(std.mean(axis=0), 0.0, atol=1e-12)  # standardized by default


@pytest.mark.parametrize(("separation", "flip"), [(3.0, 0.05), (1.0, 0.0), (2.0, 0.3)])
def test_gaussian_classes_bayes_error_matches_monte_carlo(separation, flip):
    """The Bayes rule sign(xᵀΣ⁻¹μ) on 10⁵ fresh examples of the law errs at the closed form's
    rate within 4 standard errors sqrt(p(1−p)/n) ≤ 0.0016; a perturbed rule errs more."""
    n, seed = 100_000, 3
    X, y = ds.generate_dataset("gaussian_classes", n, 5, 3, 1.0, separation, flip, seed)
    mu, cov = ds.gaussian_classes_law(3, separation, seed)
    score = X[:, :3] @ np.linalg.solve(cov, mu)
    measured = float(np.mean(np.where(score > 0, 1.0, -1.0) != y))
    exact = ds.gaussian_classes_bayes_error(separation, flip)
    assert abs(measured - exact) <= 4 * np.sqrt(exact * (1 - exact) / n)
    assert DatasetStream(
        "gaussian_classes", separation=separation, flip=flip
    ).bayes_risk() == pytest.approx(exact, rel=1e-15)
    naive = float(np.mean(np.where(X[:, :3] @ mu > 0, 1.0, -1.0) != y))  # ignores Σ
    assert naive > exact - 4 * np.sqrt(exact * (1 - exact) / n)
    # the closed form itself: Φ(−Δ/2) through scipy, and the flips' mixture
    from scipy.stats import norm

    clean = norm.cdf(-separation / 2)
    assert exact == pytest.approx(clean * (1 - flip) + (1 - clean) * flip, rel=1e-12)


def test_friedman1_noise_and_bayes_risk():
    """The residual y − f(x) of scikit-learn's make_friedman1 is the N(0, σ²) noise: its variance
    is σ² within 4 standard errors σ²·sqrt(2/n); the Bayes risk is ½σ²/s_y² standardized."""
    noise, n = 2.0, 2000
    X, y = load_dataset("friedman1", (0,), False, False, noise=noise)
    assert X.shape == (n, 10) and X.min() >= 0 and X.max() <= 1
    f = (
        10 * np.sin(np.pi * X[:, 0] * X[:, 1])
        + 20 * (X[:, 2] - 0.5) ** 2
        + 10 * X[:, 3]
        + 5 * X[:, 4]
    )
    residual = y - f
    assert abs(residual.var() - noise**2) <= 4 * noise**2 * np.sqrt(2 / n)
    assert abs(residual.mean()) <= 4 * noise / np.sqrt(n)
    raw = DatasetStream("friedman1", noise=noise, standardize=False)
    assert raw.bayes_risk() == 0.5 * noise**2
    assert raw.clone(loss="absolute").bayes_risk() == pytest.approx(noise * np.sqrt(2 / np.pi))
    std = DatasetStream("friedman1", noise=noise)
    assert std.bayes_risk() == pytest.approx(0.5 * noise**2 / y.var(), rel=1e-12)
    _, ys = std._data()
    # the standardized regression function's empirical risk is the declared one within 4σ
    fs = (f - y.mean()) / y.std()
    empirical = 0.5 * (ys - fs) ** 2
    assert abs(empirical.mean() - std.bayes_risk()) <= 4 * empirical.std() / np.sqrt(n)
    assert std.tags.protocol == "regression" and std.declared_loss() == "squared"
    assert DatasetStream("breast_cancer").bayes_risk() is None


@pytest.mark.parametrize(
    ("params", "parameter"),
    [
        ({"dataset": "friedman1", "n_features": 4}, "n_features"),
        ({"dataset": "gaussian_classes", "n_features": 3, "n_informative": 5}, "n_informative"),
        ({"dataset": "gaussian_classes", "flip": 0.5}, "flip"),
        ({"dataset": "friedman1", "noise": -1.0}, "noise"),
        ({"dataset": "gaussian_classes", "data_seed": -1}, "data_seed"),
    ],
)
def test_invalid_generation_parameters(params, parameter):
    adv = DatasetStream(**params)
    with pytest.raises(ConfigError) as err:
        validate_params(adv)
        adv.resolve_dim(None)
    assert err.value.parameter == parameter


def test_bundled_datasets_keep_their_stream_identity():
    """The generation parameters seed only the generated datasets' streams: a bundled dataset's
    game key (hence its stream and the published numbers) is what it was before they existed."""
    name, params = DatasetStream("diabetes", noise=3.0).stream_identity()
    assert name == "dataset_stream"
    assert set(params) == {"dataset", "digits", "standardize", "intercept", "loss", "domain"} | {
        "radius"
    }
    _, params = DatasetStream("friedman1").stream_identity()
    assert {"n_samples", "n_features", "noise", "data_seed"} <= set(params)
    assert not {"n_informative", "separation", "flip"} & set(params)
    _, params = DatasetStream("gaussian_classes", test_fraction=0.2).stream_identity()
    assert {"n_informative", "separation", "flip", "test_fraction"} <= set(params)


def test_unused_generation_parameters_leave_the_cell_and_the_players_streams_alone():
    """A bundled dataset ignores the generation parameters, so they stay out of its cell key:
    the cell, the players' streams and every value are those of a game that never named them."""
    from arena.game import run_game

    assert not set(DatasetStream("breast_cancer").cell_params()) & ds.GENERATION_NAMES
    assert {"noise", "data_seed"} <= set(DatasetStream("friedman1").cell_params())
    kw = dict(horizon=40, replicates=2, metrics=["mistakes"])
    plain = run_game("perceptron", "dataset_stream", **kw)
    other = run_game(
        "perceptron", "dataset_stream", adversary_params={"n_samples": 77, "data_seed": 5}, **kw
    )
    assert plain.config["cell"] == other.config["cell"]
    assert plain.rows.value.tolist() == other.rows.value.tolist()
