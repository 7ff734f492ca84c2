"""strongly_convex: σ-strongly convex environments (Shalev-Shwartz 2007 §4, A8) and their gradient
bound."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from arena.adversaries.strongly_convex import StronglyConvex
from arena.errors import ConfigError
from arena.oco.components import OCOPlayer
from arena.oco.domains import Domain
from arena.oco.losses import Feedback, evaluate
from arena.params import validate_params
from arena.spec import GameSpec, PlayerTags
from tests.helpers import clt_band, rngs
from tests.helpers.oco_adversaries import (
    assert_replicate_determinism,
    assert_split_invariant,
    blocks,
    gradient_norms,
    run_loop,
    spec_for,
)

REL = 1e-12
"""Slack on exact inequalities (float64 rounding of norms and sums of ≤ 10³ terms)."""


class StronglyConvexOGD(OCOPlayer):
    """Projected OGD with η_t = 1/(σt) (Shalev-Shwartz 2007 Thm 5, §4.3; Zinkevich 2003; Hazan
    2016), test-only."""

    tags = PlayerTags(protocols=frozenset({"oco"}), randomized=False)

    def __init__(self):
        pass

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._dom, self._sigma, self._t = spec.domain, spec.sigma, 1
        self._w = np.zeros((spec.n_replicates, spec.dim))

    def predict(self, x=None):
        return self._w.copy()

    def update(self, fb: Feedback) -> None:
        self._w = self._dom.project(self._w - fb.grad / (self._sigma * self._t))
        self._t += 1


@pytest.mark.parametrize("kind", ["quadratic", "hinge"])
def test_split_invariance_and_determinism(kind):
    adv = StronglyConvex(kind=kind)
    spec = spec_for(adv, n_rep=3, horizon=40, dim=4)
    assert_split_invariant(adv, spec)
    assert_replicate_determinism(adv, spec)


def test_quadratic_kind_constants_and_gradient_bound():
    adv = StronglyConvex(sigma=2.0, radius=1.5, center_radius=0.5)
    assert adv.declared_loss() == "linear" and adv.declared_sigma() == 2.0
    assert adv.declared_domain() == Domain("ball", 1.5)
    assert adv.gradient_bound() == pytest.approx(2.0 * (1.5 + 0.5))
    # default: centres in the domain ball, so G = σ·diameter
    assert StronglyConvex(sigma=3.0, radius=2.0).gradient_bound() == 3.0 * 4.0
    spec = spec_for(adv, n_rep=2, horizon=3000, dim=3)
    rd = blocks(adv, spec, [3000])
    np.testing.assert_array_equal(rd.g, 0.0)
    norms = np.linalg.norm(rd.z, axis=-1)
    assert np.all(norms <= 0.5 * (1 + REL))
    # uniform in the ball: E‖z‖³ /ρ_z³ = d/(d+3) = 1/2 for d = 3 (‖z‖/ρ_z = U^{1/3})
    mean, half = clt_band((norms / 0.5) ** 3)
    assert abs(mean - 0.5) <= half
    # worst point of the domain: w = −ρ z/‖z‖ attains σ(ρ + ‖z‖) ≤ G
    worst = -1.5 * rd.z / norms[..., None]
    g_norms = gradient_norms(spec, rd, worst)
    assert np.all(g_norms <= adv.gradient_bound() * (1 + REL))
    assert g_norms.max() >= 0.99 * adv.gradient_bound()


def test_hinge_kind_constants_labels_and_gradient_bound():
    adv = StronglyConvex(kind="hinge", sigma=0.5, radius=2.0, feature_radius=1.5, noise=0.2)
    assert adv.declared_loss() == "hinge" and adv.declared_sigma() == 0.5
    assert adv.gradient_bound() == pytest.approx(1.5 + 0.5 * 2.0)
    spec = spec_for(adv, n_rep=2, horizon=5000, dim=4)
    rd = blocks(adv, spec, [5000])
    assert rd.z is None and np.all(np.linalg.norm(rd.x, axis=-1) <= 1.5 * (1 + REL))
    clean = blocks(StronglyConvex(kind="hinge", noise=0.0, feature_radius=1.5), spec, [5000])
    np.testing.assert_array_equal(clean.x, rd.x)
    mean, half = clt_band((clean.y != rd.y).astype(float).ravel())
    assert abs(mean - 0.2) <= half
    # worst point: w = −ρ·y x/‖x‖ (hinge active, σw aligned with −y x)
    unit = rd.x / np.linalg.norm(rd.x, axis=-1, keepdims=True)
    worst = -2.0 * rd.y[..., None] * unit
    g_norms = gradient_norms(spec, rd, worst)
    assert np.all(g_norms <= adv.gradient_bound() * (1 + REL))
    assert g_norms.max() >= 0.99 * adv.gradient_bound()


@pytest.mark.parametrize("params", [{}, {"sigma": 0.3, "radius": 3.0, "center_radius": 1.0}])
def test_log_regret_of_ogd_on_every_replicate(params):
    # Shalev-Shwartz 2007 Thm 5 / Zinkevich 2003; Hazan 2016: regret ≤ (G²/(2σ))(1 + ln t) at every
    # t, with the declared G; best in hindsight of Σ(σ/2)‖u − z_s‖² over the ball is Π(mean z)
    adv = StronglyConvex(**params)
    spec = spec_for(adv, n_rep=20, horizon=400, dim=3)
    w, _, data = run_loop(StronglyConvexOGD(), adv, spec)
    sigma, big_g, dom = spec.sigma, spec.gradient_bound, spec.domain
    values, _, _, _ = evaluate("linear", sigma, w, data)
    learner = np.cumsum(values, axis=1)
    t = np.arange(1, 401)
    zsum = np.cumsum(data.z, axis=1)
    best_u = dom.project(zsum / t[None, :, None])
    zsq = np.cumsum(np.einsum("rnd,rnd->rn", data.z, data.z), axis=1)
    # Σ_s (σ/2)‖u − z_s‖² = (σ/2)(t‖u‖² − 2⟨u, Σz⟩ + Σ‖z‖²)
    best = (
        0.5
        * sigma
        * (
            t * np.einsum("rnd,rnd->rn", best_u, best_u)
            - 2 * np.einsum("rnd,rnd->rn", best_u, zsum)
            + zsq
        )
    )
    regret = learner - best
    bound = big_g**2 / (2 * sigma) * (1 + np.log(t))
    assert np.all(regret <= bound * (1 + 1e-9) + 1e-9)
    assert regret.max() > 0


def test_hinge_kind_regret_through_the_engine():
    import arena.oco.hindsight  # noqa: F401
    from arena import play

    adv = StronglyConvex(kind="hinge", sigma=0.5, noise=0.1)
    df = play(
        StronglyConvexOGD(),
        adv,
        n_actions=3,
        horizon=300,
        replicates=3,
        metrics=["regret", "loss"],
        checkpoints=[10, 100, 300],
    )
    big_g = adv.gradient_bound()
    reg = df[df.metric == "regret"]
    # the solver's tolerance on the best comparator: 1e-6 relative
    bound = big_g**2 / (2 * 0.5) * (1 + np.log(reg.t.to_numpy()))
    assert np.all(reg.value.to_numpy() <= bound + 1e-6 * np.maximum(1, bound))


@pytest.mark.parametrize(
    ("params", "parameter"),
    [
        ({"kind": "cubic"}, "kind"),
        ({"sigma": 0.0}, "sigma"),
        ({"radius": 0.0}, "radius"),
        ({"center_radius": -1.0}, "center_radius"),
        ({"kind": "hinge", "feature_radius": 0.0}, "feature_radius"),
        ({"noise": -0.1}, "noise"),
    ],
)
def test_invalid_parameters(params, parameter):
    adv = StronglyConvex(**params)
    spec = GameSpec("oco", 2, 10, n_replicates=1, dim=2, domain=Domain("ball"), sigma=1.0)
    with pytest.raises(ConfigError) as err:
        validate_params(adv)  # the declared constraints first, as the driver checks them
        adv.reset(spec, rngs(0, 1))  # then what depends on the game
    assert err.value.parameter == parameter and err.value.component == "adversary strongly_convex"
