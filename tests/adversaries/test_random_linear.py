"""random_linear: ±G linear losses and their exact expected regret (Shalev-Shwartz 2007, Thm 3)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from arena.adversaries.random_linear import RandomLinear, expected_abs_walk, expected_regret
from arena.adversaries.stochastic import fair_coin_lower_bound
from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.params import validate_params
from tests.helpers import clt_band, rngs
from tests.helpers.oco_adversaries import (
    assert_replicate_determinism,
    assert_split_invariant,
    blocks,
    spec_for,
)


def exact_abs_walk(t: int) -> Fraction:
    """E|S_t| by direct summation over the binomial law (exact rational arithmetic)."""
    return Fraction(sum(math.comb(t, k) * abs(2 * k - t) for k in range(t + 1)), 2**t)


def test_expected_abs_walk_equals_exact_sum_and_the_spec_closed_form():
    for t in [*range(1, 41), 399, 400, 1001]:
        exact = exact_abs_walk(t)
        n = t // 2
        # Shalev-Shwartz 2007, proof of Theorem 3: E|Σσ_t| = T·C(2n, n)/4ⁿ with n = ⌊T/2⌋
        assert exact == Fraction(t * math.comb(2 * n, n), 4**n)
        # gammaln evaluation: relative error ~1e-15·log-magnitude; 1e-12 leaves margin
        assert expected_abs_walk(t) == pytest.approx(float(exact), rel=1e-12)
    # T = 400: exactly 15.948
    assert round(expected_abs_walk(400), 3) == 15.948
    # the asymptote √(2T/π) (15.958 at T = 400)
    assert expected_abs_walk(10**6) == pytest.approx(math.sqrt(2e6 / math.pi), rel=1e-6)


@pytest.mark.parametrize("distribution", ["rademacher", "sphere"])
@pytest.mark.parametrize("dim", [1, 4])
def test_block_split_invariance_and_replicate_determinism(distribution, dim):
    adv = RandomLinear(distribution=distribution, G=2.0)
    spec = spec_for(adv, n_rep=3, horizon=30, dim=dim)
    data = assert_split_invariant(adv, spec)
    assert_replicate_determinism(adv, spec)
    # every g_t has norm exactly G (rounding only)
    np.testing.assert_allclose(np.linalg.norm(data.g, axis=-1), 2.0, rtol=1e-14)
    if distribution == "rademacher":
        np.testing.assert_array_equal(np.abs(data.g), 2.0 / math.sqrt(dim))


def test_game_constants():
    adv = RandomLinear(domain="box", radius=2.0, G=0.5)
    assert adv.resolve_dim(None) == 1 and adv.resolve_dim(7) == 7
    assert adv.declared_domain() == Domain("box", 2.0)
    assert adv.declared_loss() == "linear" and adv.declared_sigma() == 0.0
    assert adv.gradient_bound() == 0.5
    assert adv.tags.protocol == "oco" and adv.tags.oblivious


def test_distributions_are_centred_and_isotropic():
    # E g = 0 and E g gᵀ = (G²/d) I for both laws; CLT bands over 20,000 draws
    for distribution in ("rademacher", "sphere"):
        adv = RandomLinear(distribution=distribution, G=1.0)
        g = blocks(adv, spec_for(adv, n_rep=1, horizon=20000, dim=3), [20000]).g[0]
        for i in range(3):
            mean, half = clt_band(g[:, i])
            assert abs(mean) <= half
            m2, half2 = clt_band(g[:, i] ** 2)
            assert abs(m2 - 1 / 3) <= half2 + 1e-12  # rademacher: exactly 1/3 every draw
        cross, half = clt_band(g[:, 0] * g[:, 1])
        assert abs(cross) <= half


def _ogd_regret(adv, dim: int, horizon: int, n_rep: int, seed: int) -> np.ndarray:
    """A tiny projected OGD (η_t = D/(G√t)) against the adversary; returns each replicate's regret
    against the best fixed point of the domain (closed forms: ball −ρ‖Σg‖, box −ρ‖Σg‖₁, simplex
    min_i Σg_i)."""
    spec = spec_for(adv, n_rep=n_rep, horizon=horizon, dim=dim)
    dom = spec.domain
    a = adv.clone()
    a.reset(spec, rngs(seed, n_rep))
    g = a.data_block(1, horizon).g
    w = np.full((n_rep, dim), 1.0 / dim) if dom.kind == "simplex" else np.zeros((n_rep, dim))
    D, G = max(dom.diameter(dim), 1e-12), spec.gradient_bound
    loss = np.zeros(n_rep)
    for t in range(1, horizon + 1):
        loss += np.einsum("rd,rd->r", g[:, t - 1], w)
        w = dom.project(w - D / (G * math.sqrt(t)) * g[:, t - 1])
    best, _ = dom.min_linear(g.sum(axis=1))
    return loss - best


@pytest.mark.parametrize(
    ("params", "dim", "horizon"),
    [
        ({}, 1, 400),  # Shalev-Shwartz 2007 Thm 3: S = [−1, 1], g = ±1; E R = 15.948 at T = 400
        ({"domain": "box", "radius": 0.5, "G": 2.0}, 4, 100),
        ({"domain": "simplex"}, 3, 100),
        ({"distribution": "sphere", "radius": 2.0}, 1, 100),
    ],
)
def test_mean_regret_of_ogd_matches_the_exact_expectation(params, dim, horizon):
    adv = RandomLinear(**params)
    regrets = _ogd_regret(adv, dim, horizon, n_rep=2000, seed=3)
    dom, G = adv.declared_domain(), adv.gradient_bound()
    target = expected_regret(horizon, dim, dom, G, adv.distribution)
    mean, half = clt_band(regrets)
    assert abs(mean - target) <= half, (mean, target, half)
    if not params:
        assert target == pytest.approx(15.948, abs=5e-4)


def test_lower_bounds_declares_the_closed_forms_only():
    adv = RandomLinear(domain="simplex")
    a = adv.clone()
    a.reset(spec_for(adv, n_rep=1, dim=5), rngs(0, 1))
    value = a.lower_bounds(30)[("regret", math.nan)]
    # E max_i S_i = 2·LB(t, N) for N independent ±1 walks (LB: the fair-coin value)
    assert value == pytest.approx(2 * fair_coin_lower_bound(30, 5) / math.sqrt(5), rel=1e-12)
    # brute force E max_i S_i for d = 2 at t = 6 from the exact law of S
    pmf = {2 * k - 6: Fraction(math.comb(6, k), 64) for k in range(7)}
    e_max = sum(p * q * max(s, u) for s, p in pmf.items() for u, q in pmf.items())
    assert expected_regret(6, 2, Domain("simplex"), math.sqrt(2), "rademacher") == pytest.approx(
        float(e_max), rel=1e-12
    )
    b = RandomLinear(distribution="sphere")
    b.reset(spec_for(b, n_rep=1, dim=3), rngs(0, 1))
    assert b.lower_bounds(10) == {}  # ball with d > 1: no closed form declared
    c = RandomLinear(domain="box", radius=2.0, G=3.0)
    c.reset(spec_for(c, n_rep=1, dim=4), rngs(0, 1))
    assert c.lower_bounds(9)[("regret", math.nan)] == pytest.approx(
        2.0 * 3.0 * 2.0 * float(exact_abs_walk(9)), rel=1e-12
    )


@pytest.mark.parametrize(
    ("params", "parameter"),
    [
        ({"distribution": "gauss"}, "distribution"),
        ({"G": 0.0}, "G"),
        ({"domain": "disc"}, "domain"),
        ({"radius": -1.0}, "radius"),
    ],
)
def test_invalid_parameters(params, parameter):
    adv = RandomLinear(**params)
    with pytest.raises(ConfigError) as err:
        validate_params(adv)  # the declared constraints first, as the driver checks them
        spec = spec_for(RandomLinear(), n_rep=1, dim=2)
        adv.reset(spec, rngs(0, 1))  # then what depends on the game
    assert err.value.parameter == parameter and err.value.component == "adversary random_linear"


def test_through_the_engine_lower_bound_rows():
    from arena import play
    from arena.oco.testing import ProjectedGradient

    df = play(
        ProjectedGradient(eta=1.0),
        RandomLinear(),
        n_actions=1,
        horizon=400,
        replicates=3,
        metrics=["loss", "lower_bound"],
        checkpoints=[100, 400],
    )
    lb = df[df.metric == "lower_bound:regret"].set_index(["replicate", "t"]).value
    assert lb.loc[(0, 400)] == pytest.approx(expected_abs_walk(400), rel=1e-12)
    assert lb.loc[(2, 100)] == pytest.approx(expected_abs_walk(100), rel=1e-12)


def test_through_the_engine_regret_equals_the_direct_computation(tmp_path):
    import pyarrow.parquet as pq

    import arena.oco.hindsight  # noqa: F401
    from arena import play
    from arena.oco.testing import ZeroPlayer

    path = tmp_path / "trace.parquet"
    df = play(
        ZeroPlayer(),
        RandomLinear(domain="box"),
        n_actions=3,
        horizon=50,
        replicates=2,
        metrics=["regret", "lower_bound"],
        seed=4,
        trace_path=path,
    )
    table = pq.read_table(path).to_pandas()
    for r in (0, 1):
        g = np.stack(table[table.replicate == r].sort_values("t").g.to_numpy())
        # the zero player's regret on the unit box is max_u ⟨−Σg, u⟩ = ‖Σg‖₁
        want = np.abs(g.sum(axis=0)).sum()
        got = df[(df.metric == "regret") & (df.replicate == r) & (df.t == 50)].value.item()
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
    lb = df[(df.metric == "lower_bound:regret") & (df.t == 50)].value.to_numpy()
    np.testing.assert_allclose(lb, math.sqrt(3) * expected_abs_walk(50), rtol=1e-12)
