"""ill_conditioned: the Luo 2016 §4.6.1 recipe (with its ambiguities resolved as in the adversary)
and its κ-invariance."""

from __future__ import annotations

import numpy as np
import pytest

from arena.adversaries.ill_conditioned import IllConditioned, ill_conditioned_spectrum
from arena.errors import ConfigError
from arena.params import validate_params
from tests.helpers import rngs
from tests.helpers.oco_adversaries import (
    assert_replicate_determinism,
    assert_split_invariant,
    blocks,
    fresh,
    spec_for,
)


def test_spectrum_follows_the_resolved_recipe():
    # "increase linearly to κ": λ_{90+j} = 1 + j(κ−1)/10, j = 1..10, so λ_100 = κ
    lam = ill_conditioned_spectrum(100, 200.0)
    np.testing.assert_array_equal(lam[:90], 1.0)
    np.testing.assert_allclose(lam[90:], 1 + np.arange(1, 11) * 19.9, rtol=1e-15)
    assert lam[-1] == 200.0 and lam[90] == pytest.approx(20.9)
    alt = ill_conditioned_spectrum(100, 200.0, spectrum="linspace")  # the alternative reading
    np.testing.assert_allclose(alt[90:], np.linspace(1, 200, 10))
    assert IllConditioned().resolve_dim(None) == 100


def recipe(seed_rng: np.random.Generator, horizon: int, d: int, kappa: float, k: int):
    """The generator of Luo 2016, §4.6.1, as we read it, drawn in the streaming order the adversary
    documents: V (Haar: QR with the column-sign fix), θ₀, then the rows of Z."""
    q, r = np.linalg.qr(seed_rng.standard_normal((d, d)))
    v = q * np.sign(np.diag(r))
    theta0 = seed_rng.standard_normal(d)
    z = seed_rng.standard_normal((horizon, d))
    lam = np.ones(d)
    lam[d - k :] = 1 + np.arange(1, k + 1) * (kappa - 1) / k
    x = z @ np.diag(np.sqrt(lam)) @ v.T
    return x, np.sign(z @ theta0)


def test_stream_equals_the_thesis_recipe():
    adv = IllConditioned(kappa=40.0, n_large=4)
    spec = spec_for(adv, n_rep=2, horizon=300, dim=12)
    rd = blocks(adv, spec, [100, 200], seed=9)
    for r, g in enumerate(rngs(9, 2)):
        x, y = recipe(g, 300, 12, 40.0, 4)
        # different summation orders (BLAS vs coordinate order): agreement to rounding
        np.testing.assert_allclose(rd.x[r], x, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(rd.y[r], y)


def test_split_invariance_and_determinism():
    adv = IllConditioned(kappa=50.0, n_large=3)
    spec = spec_for(adv, n_rep=3, horizon=40, dim=8)
    assert_split_invariant(adv, spec)
    assert_replicate_determinism(adv, spec)


def test_labels_are_separated_by_the_comparator():
    adv = IllConditioned(kappa=100.0, n_large=5)
    spec = spec_for(adv, n_rep=2, horizon=2000, dim=20)
    a = fresh(adv, spec)
    rd = a.data_block(1, 2000)
    scores = np.einsum("rnd,rd->rn", rd.x, a.comparator())
    np.testing.assert_array_equal(rd.y, np.where(scores >= 0, 1.0, -1.0))
    # ⟨u*, x⟩ = ⟨θ₀, z⟩/‖θ₀‖ ~ N(0, 1): sample variance within 4 standard errors (√(2/n))
    assert abs(scores.var() - 1.0) <= 4 * np.sqrt(2 / scores.size)


def test_feature_covariance_has_the_declared_spectrum():
    adv = IllConditioned(kappa=30.0, n_large=4)
    n = 40000
    x = blocks(adv, spec_for(adv, n_rep=1, horizon=n, dim=12), [n], seed=2).x[0]
    eig = np.sort(np.linalg.eigvalsh(x.T @ x / n))
    want = np.sort(ill_conditioned_spectrum(12, 30.0, 4))
    # sample eigenvalues of a Wishart(n) matrix: relative spread ~ a few √(d/n) ≈ 0.02
    np.testing.assert_allclose(eig, want, rtol=0.08)


def _invariant_predictions(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least squares on the past, predicting 0 until the Gram matrix has full rank (t > d):
    ŷ_t = ⟨(Σ_{s<t} x_s x_sᵀ)⁻¹ Σ_{s<t} y_s x_s, x_t⟩, exactly invariant under x ↦ Mx."""
    n, d = x.shape
    out = np.zeros(n)
    gram, moment = np.zeros((d, d)), np.zeros(d)
    for t in range(n):
        if t > d:
            out[t] = np.linalg.solve(gram, moment) @ x[t]
        gram += np.outer(x[t], x[t])
        moment += y[t] * x[t]
    return out


def _ogd_predictions(x: np.ndarray, y: np.ndarray, eta: float = 0.01) -> np.ndarray:
    """Plain OGD on the squared loss: not invariant under x ↦ Mx."""
    w = np.zeros(x.shape[1])
    out = np.empty(x.shape[0])
    for t in range(x.shape[0]):
        out[t] = w @ x[t]
        w -= eta * (out[t] - y[t]) * x[t]
    return out


def test_the_kappa_family_is_one_problem_under_invertible_maps():
    # "same Z, V and labels y" (Luo 2016, §4.6.1): same Z, V, θ₀ and labels for every κ
    spec_kw = {"n_rep": 2, "horizon": 200, "dim": 10}
    low, high = IllConditioned(kappa=10.0, n_large=3), IllConditioned(kappa=200.0, n_large=3)
    a, b = (
        fresh(low, spec_for(low, **spec_kw), seed=4),
        fresh(high, spec_for(high, **spec_kw), seed=4),
    )
    ra, rb = a.data_block(1, 200), b.data_block(1, 200)
    np.testing.assert_array_equal(ra.y, rb.y)
    sa = np.einsum("rnd,rd->rn", ra.x, a.comparator())
    sb = np.einsum("rnd,rd->rn", rb.x, b.comparator())
    np.testing.assert_allclose(sa, sb, rtol=1e-10, atol=1e-12)
    assert not np.allclose(ra.x, rb.x)
    for r in range(2):
        inv_a = _invariant_predictions(ra.x[r], ra.y[r])
        inv_b = _invariant_predictions(rb.x[r], rb.y[r])
        # condition numbers ≤ ~10⁴ here: 1e-7 leaves a wide margin over rounding
        np.testing.assert_allclose(inv_a, inv_b, rtol=1e-7, atol=1e-7)
        ogd_a = _ogd_predictions(ra.x[r], ra.y[r])
        ogd_b = _ogd_predictions(rb.x[r], rb.y[r])
        assert np.abs(ogd_a - ogd_b).max() > 0.1


@pytest.mark.parametrize(
    ("params", "parameter"),
    [
        ({"kappa": 0.5}, "kappa"),
        ({"n_large": 11}, "n_large"),
        ({"n_large": -1}, "n_large"),
        ({"spectrum": "log"}, "spectrum"),
        ({"loss": "linear"}, "loss"),
    ],
)
def test_invalid_parameters(params, parameter):
    adv = IllConditioned(**params)
    with pytest.raises(ConfigError) as err:
        validate_params(adv)  # the declared constraints first, as the driver checks them
        spec = spec_for(IllConditioned(), n_rep=1, dim=10)
        adv.reset(spec, rngs(0, 1))  # then what depends on the game
    assert err.value.parameter == parameter and err.value.component == "adversary ill_conditioned"


def test_game_constants_and_end_to_end():
    from arena import play
    from arena.oco.testing import ProjectedGradient

    adv = IllConditioned()
    assert adv.tags.protocol == "classification" and "comparator" in adv.tags.oracle
    assert adv.declared_loss() == "squared" and adv.gradient_bound() is None
    df = play(
        ProjectedGradient(eta=0.002),
        IllConditioned(kappa=20.0),
        horizon=200,
        replicates=2,
        metrics={"loss": {}, "mistakes": {}, "comparator_regret": {"c": [1.0]}},
    )
    assert set(df.n_actions) == {100}
    mistakes = df[(df.metric == "mistakes") & (df.t == 200)].value.to_numpy()
    assert np.all((mistakes > 0) & (mistakes < 200))
