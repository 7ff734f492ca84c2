"""invariant_regret (Luo 2016, §4.1, Eq. 4.1; Theorems 16 and 18): the solver, the bound rows,
the theorems' bounds holding on every replicate, and the games it refuses."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import LinearConstraint, minimize

from arena import play
from arena.oco.domains import Domain
from arena.oco.sketch import InvariantRegret, best_in_slab
from arena.spec import GameSpec


def generic_best(x: np.ndarray, y: np.ndarray, c: float) -> float:
    """The same minimum by a generic constrained solver (scipy's trust-constr), as a check."""
    res = minimize(
        lambda w: 0.5 * float((x @ w - y) @ (x @ w - y)),
        np.zeros(x.shape[1]),
        jac=lambda w: x.T @ (x @ w - y),
        hess=lambda w: x.T @ x,
        constraints=[LinearConstraint(x, -c, c)],
        method="trust-constr",
        options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 5000},
    )
    assert np.max(np.abs(x @ res.x)) <= c * (1 + 1e-8)
    return float(res.fun)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("t,d", [(30, 4), (3, 6)])
def test_best_in_slab_is_feasible_and_matches_a_generic_solver(seed, t, d):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(t, d)) * rng.uniform(0.1, 10.0, size=d)
    y = np.sign(rng.normal(size=t)) * rng.uniform(0.5, 3.0, size=t)
    w, best = best_in_slab(x, y, 1.0)
    assert np.max(np.abs(x @ w)) <= 1.0 + 1e-12  # in K (every iterate is strictly inside)
    assert best == pytest.approx(0.5 * float((x @ w - y) @ (x @ w - y)), rel=1e-12)
    # ours is feasible, so never below the minimum; it must not be above the generic solver's
    # (beyond SLAB_GAP = 1e-9 of ½‖y‖²), and the two agree to that solver's accuracy (it stops
    # about 2e-6 relative above ours on the rank-deficient problems)
    other = generic_best(x, y, 1.0)
    assert best <= other + 1e-9 * max(1.0, 0.5 * float(y @ y))
    assert best == pytest.approx(other, rel=1e-5)
    if t < d:  # rank deficient: the minimum-norm minimizer lies in the row space of X
        null = np.linalg.svd(x)[2][t:]
        assert np.max(np.abs(null @ w)) <= 1e-9 * max(1.0, float(np.linalg.norm(w)))


def test_best_in_slab_is_the_unconstrained_least_squares_when_it_fits():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(40, 3))
    y = x @ np.array([0.1, -0.05, 0.02])  # |predictions| well below C = 1
    w, best = best_in_slab(x, y, 1.0)
    assert np.allclose(w, [0.1, -0.05, 0.02], atol=1e-6)
    assert best <= 1e-8


def run(sketch, adversary="separable_stream", adv=None, horizon=300, **params):
    player = {"sketch": sketch, "C": 1.0, "sigma": 0.125, "eta": 0.0, "alpha": 1.0, **params}
    return play(
        "son",
        adversary,
        n_actions=8,
        horizon=horizon,
        replicates=4,
        player_params=player,
        adversary_params=adv or {"loss": "squared", "noise": 0.1},
        metrics={"invariant_regret": {}},
    )


@pytest.mark.parametrize(
    "sketch,m", [("full", 10), ("fd", 4), ("fd", 1), ("fd_epoch", 2), ("fd_epoch", 4)]
)
@pytest.mark.parametrize("scaled", [False, True])
def test_theorems_16_and_18_bound_the_invariant_regret_on_every_replicate(sketch, m, scaled):
    adv = {
        "base": "separable_stream",
        "base_params": {"loss": "squared", "noise": 0.1},
        "mode": "diagonal",
        "scale_range": [0.1, 10.0],
    }
    df = run(sketch, "rescaled", adv, m=m) if scaled else run(sketch, m=m)
    wide = df.pivot_table(index=["replicate", "t"], columns="metric", values="value")
    assert (wide["invariant_regret"] <= wide["bound:invariant_regret"]).all()
    final = wide.xs(300, level="t")
    assert (final["invariant_regret"] > 0).any()  # the learner pays: not an empty check


def test_the_regret_is_to_the_best_comparator_of_k():
    # any comparator of K (random directions rescaled into K) does no better than the solver's
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 5))
    y = np.sign(x @ rng.normal(size=5))
    _, best = best_in_slab(x, y, 1.0)
    for _ in range(20):
        u = rng.normal(size=5)
        u /= np.max(np.abs(x @ u))
        assert best <= 0.5 * float((x @ u - y) @ (x @ u - y)) + 1e-9


def test_no_bound_rows_for_sketches_without_a_theorem_and_refusals():
    df = run("oja", m=2)
    assert set(df["metric"]) == {"invariant_regret"}
    assert np.isfinite(df["value"]).all()
    metric = InvariantRegret()
    assert "no C" in metric.applicable(type("P", (), {"C": None})(), None)
    hinge = GameSpec("classification", 3, 5, dim=3, domain=Domain(), loss="hinge")
    assert "squared loss" in metric.game_reason(hinge)
    assert math.isnan(metric.row_keys(hinge)[0][1])


def test_theorem_18_sketching_term_is_its_least_over_k():
    from arena.players.son import fd_sketching_term

    rng = np.random.default_rng(4)
    for m, d in [(3, 8), (5, 5), (9, 4)]:
        spectra = rng.exponential(size=(6, d)) ** 3
        got = fd_sketching_term(spectra, m)
        for r, lam in enumerate(np.sort(spectra, axis=1)[:, ::-1]):
            tail = [lam[k:].sum() if k < d else 0.0 for k in range(m)]  # Ω_k = Σ_{i>k} λ_i
            want = min(m * tail[k] / (m - k) for k in range(m))
            assert got[r] == pytest.approx(want, rel=1e-12)
            assert got[r] <= lam.sum() * (1 + 1e-12)  # never above k = 0's Ω_0
    # fewer than m nonzero eigenvalues: Frequent Directions is exact, no sketching error
    assert fd_sketching_term(np.array([[4.0, 1.0, 0.0, 0.0]]), 3).tolist() == [0.0]
