"""rescaled: the scale-invariance attack (diagonal and linear maps, covariant comparators)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from arena.adversaries.random_linear import RandomLinear
from arena.adversaries.rescaled import Rescaled
from arena.adversaries.separable_stream import SeparableStream
from arena.adversaries.strongly_convex import StronglyConvex
from arena.errors import ArenaError, ConfigError
from arena.oco.components import AdaptiveOCOAdversary, OCOPlayer
from arena.oco.losses import Feedback, RoundData
from arena.oco.testing import ProjectedGradient
from arena.params import validate_params
from arena.spec import AdversaryTags, GameSpec, PlayerTags
from tests.helpers import rngs
from tests.helpers.oco_adversaries import (
    assert_replicate_determinism,
    assert_split_invariant,
    fresh,
    run_loop,
    spec_for,
)


class ContraryBase(AdaptiveOCOAdversary):
    """Test-only adaptive base: x_t ~ N(0, I) from the stream, label −sign(⟨w_t, x_t⟩) (−1 at 0):
    every round is a mistake of the player (when the wrapper maps w back correctly)."""

    name = "contrary_base_test"
    tags = AdversaryTags(protocol="classification", oblivious=False)

    def __init__(self):
        pass

    def declared_loss(self):
        return "hinge"

    def reset(self, spec, rngs):
        self._rngs, self._d = list(rngs), spec.dim

    def features(self, t):
        self._x = np.stack([g.standard_normal(self._d) for g in self._rngs])
        return self._x.copy()

    def reveal(self, t, w):
        pred = np.einsum("rd,rd->r", w, self._x)
        return RoundData(x=self._x.copy(), y=np.where(pred >= 0, -1.0, 1.0))


class CoordinateInvariant(OCOPlayer):
    """Test-only coordinate-wise scale-invariant learner: OGD on features normalized by the
    running max |x_{s,i}| (including the features shown before predicting); w_t = θ/S.
    Under x ↦ c⊙x (c_i ≠ 0): S ↦ |c|⊙S, x/S ↦ sign(c)⊙x/S, θ ↦ sign(c)⊙θ, so the predictions
    ⟨θ, x_t/S⟩ are unchanged."""

    tags = PlayerTags(protocols=frozenset({"classification"}), randomized=False)

    def __init__(self, eta=0.5):
        self.eta = eta

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._theta = np.zeros((spec.n_replicates, spec.dim))
        self._s = np.zeros((spec.n_replicates, spec.dim))

    def _scale(self, x):
        s = np.maximum(self._s, np.abs(x))
        return np.where(s > 0, s, 1.0)

    def predict(self, x=None):
        return self._theta / self._scale(x)

    def update(self, fb: Feedback) -> None:
        x = fb.data.x
        s = self._scale(x)
        self._theta = self._theta - self.eta * fb.dloss[:, None] * x / s
        self._s = np.maximum(self._s, np.abs(x))


class CovariantLeastSquares(OCOPlayer):
    """Test-only fully invariant learner: w_t = (Σ_{s<t} x xᵀ)⁻¹ Σ_{s<t} y x once the Gram matrix
    has full rank (t > d), 0 before; under x ↦ Mx, w ↦ M^{-T}w and ⟨w, x⟩ is unchanged."""

    tags = PlayerTags(protocols=frozenset({"classification"}), randomized=False)

    def __init__(self):
        pass

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._gram = np.zeros((spec.n_replicates, spec.dim, spec.dim))
        self._mom = np.zeros((spec.n_replicates, spec.dim))
        self._t, self._d = 0, spec.dim

    def predict(self, x=None):
        if self._t <= self._d:
            return np.zeros_like(self._mom)
        return np.linalg.solve(self._gram, self._mom[..., None])[..., 0]

    def update(self, fb: Feedback) -> None:
        x, y = fb.data.x, fb.data.y
        self._gram = self._gram + np.einsum("ri,rj->rij", x, x)
        self._mom = self._mom + y[:, None] * x
        self._t += 1


def _pair(base, mode="diagonal", scale_range=(1e-3, 1e3), n_rep=2, horizon=50, dim=5, **kw):
    adv = Rescaled(base, mode=mode, scale_range=list(scale_range), **kw)
    spec = spec_for(adv, n_rep=n_rep, horizon=horizon, dim=dim)
    return adv, spec, fresh(base, spec, seed=3), fresh(adv, spec, seed=3)


def test_diagonal_map_magnitudes_signs_and_covariant_comparator():
    base = SeparableStream(margin=0.2)
    _, _, b, a = _pair(base, scale_range=(1e-6, 1e6), n_rep=3, horizon=100, dim=7)
    lo_hi = np.geomspace(1e-6, 1e6, 7)
    for r in range(3):
        np.testing.assert_allclose(np.sort(np.abs(a._c[r])), lo_hi, rtol=1e-15)
    assert (a._c < 0).any() and (a._c > 0).any()
    rb, ra = b.data_block(1, 100), a.data_block(1, 100)
    np.testing.assert_array_equal(ra.x, rb.x * a._c[:, None, :])  # the base's stream, untouched
    np.testing.assert_array_equal(ra.y, rb.y)
    # covariance: ⟨C⁻¹u, Cx⟩ = ⟨u, x⟩ (rounding: a few ulps of each term, 1e-12 relative)
    pb = np.einsum("rnd,rd->rn", rb.x, b.comparator())
    pa = np.einsum("rnd,rd->rn", ra.x, a.comparator())
    np.testing.assert_allclose(pa, pb, rtol=1e-12)
    np.testing.assert_allclose(a.comparator(), b.comparator() / a._c, rtol=1e-15)


def test_linear_map_condition_number_and_covariant_comparator():
    base = SeparableStream(margin=0.2)
    _, _, b, a = _pair(base, mode="linear", scale_range=(1e-2, 1e2), dim=6, horizon=80)
    for r in range(2):
        sv = np.linalg.svd(a._m[r], compute_uv=False)
        np.testing.assert_allclose(np.sort(sv), np.geomspace(1e-2, 1e2, 6), rtol=1e-10)
        np.testing.assert_allclose(a._m_inv_t[r], np.linalg.inv(a._m[r]).T, rtol=1e-8, atol=1e-10)
    rb, ra = b.data_block(1, 80), a.data_block(1, 80)
    np.testing.assert_allclose(ra.x, np.einsum("rij,rnj->rni", a._m, rb.x), rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(ra.y, rb.y)
    pb = np.einsum("rnd,rd->rn", rb.x, b.comparator())
    pa = np.einsum("rnd,rd->rn", ra.x, a.comparator())
    # cond(M) = 10⁴: ⟨M^{-T}u, Mx⟩ loses ~log10(cond) digits of 16
    np.testing.assert_allclose(pa, pb, rtol=1e-9)


@pytest.mark.parametrize("mode", ["diagonal", "linear"])
@pytest.mark.parametrize(
    "base",
    [SeparableStream(noise=0.1), RandomLinear(domain="unconstrained", distribution="sphere")],
)
def test_split_invariance_and_determinism(mode, base):
    adv = Rescaled(base, mode=mode)
    spec = spec_for(adv, n_rep=3, horizon=30, dim=4)
    assert_split_invariant(adv, spec)
    assert_replicate_determinism(adv, spec)


def test_seed_offset_changes_the_map_not_the_data():
    base = SeparableStream()
    _, spec, _, a0 = _pair(base)
    a1 = fresh(Rescaled(base, scale_range=[1e-3, 1e3], seed_offset=1), spec, seed=3)
    assert not np.array_equal(a0._c, a1._c)
    r0, r1 = a0.data_block(1, 20), a1.data_block(1, 20)
    np.testing.assert_allclose(r0.x / a0._c[:, None], r1.x / a1._c[:, None], rtol=1e-15)


def test_tags_and_game_constants_follow_the_base():
    sep = Rescaled(SeparableStream(feature_radius=2.0), scale_range=[0.5, 4.0])
    assert sep.tags.protocol == "classification" and sep.tags.oblivious
    assert sep.tags.oracle == frozenset({"comparator"})
    assert sep.gradient_bound() == 4.0 * 2.0  # hi·R for the hinge loss
    lin = Rescaled(RandomLinear(G=3.0), scale_range=[0.5, 4.0])
    assert lin.tags.protocol == "oco" and lin.tags.oracle == frozenset()
    assert lin.gradient_bound() == 12.0 and lin.declared_loss() == "linear"
    assert lin.resolve_dim(None) == 1
    sq = Rescaled(SeparableStream(loss="squared", domain="ball"))
    assert sq.gradient_bound() is None
    ada = Rescaled(ContraryBase())
    assert not ada.tags.oblivious
    assert Rescaled.tags.protocol == "classification"  # class-level default (separable base)


def test_declared_gradient_bound_holds_in_the_engine():
    from arena import play

    # the engine stops the game if any subgradient exceeds the declared bound
    for mode in ("diagonal", "linear"):
        df = play(
            ProjectedGradient(eta=1e-3),
            Rescaled(SeparableStream(), mode=mode, scale_range=[0.1, 10.0]),
            n_actions=4,
            horizon=200,
            replicates=2,
            metrics={"loss": {}, "mistakes": {}, "comparator_regret": {"c": [1.0]}},
        )
        last = df[df.t == 200]
        loss = last[last.metric == "loss"].value.to_numpy()
        comp = last[last.metric == "comparator_regret"].value.to_numpy()
        # the transformed comparator keeps zero hinge loss (up to rounding of ⟨u', x'⟩ ≥ 1)
        np.testing.assert_allclose(comp, loss, atol=1e-8)


@pytest.mark.parametrize("mode", ["diagonal", "linear"])
def test_adaptive_base_sees_the_players_point_in_its_own_coordinates(mode):
    from arena import play

    adv = Rescaled(ContraryBase(), mode=mode, scale_range=[0.1, 10.0])
    spec = spec_for(adv, n_rep=2, horizon=60, dim=3)
    _, preds, data = run_loop(ProjectedGradient(eta=0.5), adv, spec)
    # the base labels −sign(⟨Mᵀw, x⟩) = −sign(⟨w, Mx⟩): every round is a mistake
    assert np.all(data.y * preds <= 0)
    df = play(
        ProjectedGradient(eta=0.5), adv, n_actions=3, horizon=60, replicates=2, metrics=["mistakes"]
    )
    np.testing.assert_array_equal(df[df.t == 60].value.to_numpy(), 60.0)


def test_scale_invariant_learner_is_unchanged_and_ogd_is_not_diagonal():
    base = SeparableStream(margin=0.1, noise=0.05)
    adv = Rescaled(base, mode="diagonal", scale_range=[1e-6, 1e6])
    spec = spec_for(adv, n_rep=3, horizon=300, dim=6)
    _, p_base, d_base = run_loop(CoordinateInvariant(), base, spec)
    _, p_resc, d_resc = run_loop(CoordinateInvariant(), adv, spec)
    np.testing.assert_array_equal(d_resc.y, d_base.y)
    # x/S is computed from rescaled values: a few ulps per coordinate, 1e-9 leaves a wide margin
    np.testing.assert_allclose(p_resc, p_base, rtol=1e-9, atol=1e-12)
    y = d_base.y
    np.testing.assert_array_equal((p_resc * y <= 0).sum(1), (p_base * y <= 0).sum(1))
    _, o_base, _ = run_loop(ProjectedGradient(eta=0.5), base, spec)
    _, o_resc, _ = run_loop(ProjectedGradient(eta=0.5), adv, spec)
    assert np.abs(o_resc - o_base).max() > 1.0
    # OGD's mistakes change under the attack
    assert not np.array_equal((o_resc * y <= 0).sum(1), (o_base * y <= 0).sum(1))


def test_fully_invariant_learner_is_unchanged_under_a_linear_map():
    base = SeparableStream(margin=0.1)
    adv = Rescaled(base, mode="linear", scale_range=[0.1, 10.0])
    spec = spec_for(adv, n_rep=2, horizon=120, dim=5)
    _, p_base, _ = run_loop(CovariantLeastSquares(), base, spec)
    _, p_resc, _ = run_loop(CovariantLeastSquares(), adv, spec)
    # Gram matrices of condition ≲ 10⁶ after the map: 1e-6 absolute on O(1) predictions
    np.testing.assert_allclose(p_resc, p_base, rtol=1e-6, atol=1e-6)
    _, o_base, _ = run_loop(ProjectedGradient(eta=0.5), base, spec)
    _, o_resc, _ = run_loop(ProjectedGradient(eta=0.5), adv, spec)
    assert np.abs(o_resc - o_base).max() > 0.1


@pytest.mark.parametrize(
    ("params", "parameter"),
    [
        ({"base": SeparableStream(), "mode": "rotate"}, "mode"),
        ({"base": SeparableStream(), "scale_range": [2.0, 1.0]}, "scale_range"),
        ({"base": SeparableStream(), "scale_range": [0.0, 1.0]}, "scale_range"),
        ({"base": SeparableStream(), "scale_range": [1.0]}, "scale_range"),
        ({"base": SeparableStream(), "seed_offset": -1}, "seed_offset"),
        ({"base": StronglyConvex(kind="hinge")}, "base"),
        ({"base": 3.0}, "base"),
    ],
)
def test_invalid_parameters(params, parameter):
    spec, adv = GameSpec("classification", 3, 10, n_replicates=1, dim=3), Rescaled(**params)
    with pytest.raises(ConfigError) as err:
        validate_params(adv)  # the declared constraints first, as the driver checks them
        adv.reset(spec, rngs(0, 1))  # then what depends on the game
    assert err.value.parameter == parameter and err.value.component == "adversary rescaled"


def test_experts_base_and_unknown_names_are_refused():
    from arena.adversaries.stochastic import Bernoulli

    with pytest.raises(ConfigError) as err:
        Rescaled(Bernoulli()).resolve_dim(None)
    assert err.value.parameter == "base"
    with pytest.raises(ArenaError):
        Rescaled("no_such_adversary").resolve_dim(None)


def test_registry_names_as_bases():
    adv = Rescaled("separable_stream", {"margin": 0.3}, mode="linear")
    spec = spec_for(adv, n_rep=1, horizon=10, dim=3)
    a = fresh(adv, spec)
    b = fresh(SeparableStream(margin=0.3), spec)
    pa = np.einsum("rnd,rd->rn", a.data_block(1, 10).x, a.comparator())
    pb = np.einsum("rnd,rd->rn", b.data_block(1, 10).x, b.comparator())
    np.testing.assert_allclose(pa, pb, rtol=1e-10)


@pytest.mark.parametrize(
    ("variant", "mode", "scale_range"),
    [("coordinate", "diagonal", [1e-6, 1e6]), ("full", "linear", [0.1, 10.0])],
)
def test_the_registered_scale_invariant_player_resists_the_attack(variant, mode, scale_range):
    # Kotłowski 2017: the coordinate-wise algorithm is invariant to feature rescaling, the full one
    # to invertible linear maps; OGD is not (shown above)
    import arena.players.scale_invariant as si

    base = SeparableStream(margin=0.1, noise=0.05, loss="logistic")
    adv = Rescaled(base, mode=mode, scale_range=scale_range)
    spec = spec_for(adv, n_rep=2, horizon=200, dim=5)
    _, p_base, _ = run_loop(si.ScaleInvariant(variant=variant), base, spec)
    _, p_resc, _ = run_loop(si.ScaleInvariant(variant=variant), adv, spec)
    # observed agreement ~1e-14 (diagonal) and ~1e-12 (linear, condition 100); 1e-8 is generous
    np.testing.assert_allclose(p_resc, p_base, rtol=1e-8, atol=1e-8)
