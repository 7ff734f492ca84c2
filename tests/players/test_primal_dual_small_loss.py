"""The primal-dual player's ``small_loss`` schedule (Shalev-Shwartz 2007, §3.5, Theorem 2 and
Corollary 4): a literal transcription of Figure 3.2 with ``c_t = β₂√(β₁ + Σ_{i<t} g_i(w_i))``,
Theorem 2 / Corollary 4 checked one-sidedly for several comparators on oblivious and adaptive
games, the declared certificate through the engine, and the refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena import play
from arena.adversaries.contrarian import Contrarian
from arena.errors import ConfigError
from arena.oco import hindsight
from arena.oco.domains import Domain
from arena.oco.literal import scalar_loss
from arena.oco.losses import RoundData, feedback, prediction_loss
from arena.params import validate_params
from arena.players.primal_dual import PrimalDual
from tests.helpers import assert_below, check_declared
from tests.helpers.classification import drive, drive_blocks, fresh, separable_stream, spec_for

ATOL = 1e-12  # the same float64 formulas in another order, over ≤ 300 rounds: round-off only
KAPPA = {"squared": 1.0, "logistic": 0.5}


def literal_small_loss(x, y, loss, c, beta1, U=None, radius=None):
    """Shalev-Shwartz 2007, Figure 3.2 with f = ½‖w‖² (on ℝ^d, or the ball of ``radius``: the
    link is the projection), the conservative rule (λ_t = the loss's subgradient at w_t) and
    Theorem 2's ``c_t = β₂√(β₁ + Σ_{i<t} g_i(w_i))``; ``c = "tuned"``: Corollary 4's
    ``β₂ = 8^{1/4}√(L/U)`` with ``L = κ max_{i≤t}‖x_i‖²``. One game, plain Python."""
    T, d = len(y), len(x[0])
    theta, cum, big_x, out = [0.0] * d, 0.0, 0.0, []
    for t in range(T):
        xt, yt = [float(v) for v in x[t]], float(y[t])
        big_x = max(big_x, math.sqrt(sum(v * v for v in xt)))
        if c == "tuned":
            beta2 = 8.0**0.25 * math.sqrt(KAPPA[loss] * big_x * big_x / U)
        else:
            beta2 = c
        ct = beta2 * math.sqrt(beta1 + cum)
        w = [th / ct for th in theta]
        norm = math.sqrt(sum(v * v for v in w))
        if radius is not None and norm > radius:
            w = [v * radius / norm for v in w]
        out.append(w)
        value, dl = scalar_loss(loss, sum(a * b for a, b in zip(w, xt, strict=True)), yt)
        theta = [th - dl * a for th, a in zip(theta, xt, strict=True)]
        cum += value
    return np.array(out)


TRANSCRIPTIONS = [
    ("regression", "squared", None, 0.7, 1.0, None),
    ("regression", "squared", 2.0, "tuned", 3.0, None),
    ("classification", "logistic", None, "tuned", 1.0, 3.0),
    ("classification", "logistic", 3.0, 1.3, 2.5, None),
]


@pytest.mark.parametrize("case", range(len(TRANSCRIPTIONS)))
def test_small_loss_schedule_equals_the_literal_figure_3_2(case):
    protocol, loss, radius, c, beta1, U = TRANSCRIPTIONS[case]
    rng = np.random.default_rng(40 + case)
    R, T, d = 2, 150, 4
    x = rng.standard_normal((R, T, d)) * rng.uniform(0.2, 1.5, size=(R, T, 1))
    y = rng.choice([-1.0, 1.0], size=(R, T)) if loss == "logistic" else rng.normal(size=(R, T))
    data = RoundData(x=x, y=y)
    domain = Domain() if radius is None else Domain("ball", radius)
    spec = spec_for(d, T, R, protocol=protocol, domain=domain, loss=loss)
    player = PrimalDual(schedule="small_loss", c=c, beta1=beta1, U=U)
    got = drive(fresh(player, spec), spec, data)
    u_bound = U if U is not None else (None if radius is None else 0.5 * radius**2)
    for r in range(R):
        want = literal_small_loss(x[r], y[r], loss, c, beta1, u_bound, radius)
        np.testing.assert_allclose(got[r], want, rtol=0, atol=ATOL)
    np.testing.assert_allclose(drive_blocks(fresh(player, spec), spec, data, [1, 40]), got, atol=0)


# ----------------------------------------------------------------------------------------------
# Theorem 2 and Corollary 4, one-sided, for several comparators


def per_round(loss, data, us):
    """``g_t(u)`` (R, T) for one comparator per replicate (R, d)."""
    return prediction_loss(loss, np.einsum("rtd,rd->rt", data.x, us), data.y)[0]


def comparator_losses(loss, data, us):
    """``Σ_t g_t(u)`` (R,) for one comparator per replicate (R, d)."""
    return per_round(loss, data, us).sum(axis=1)


def run_small_loss(player, spec, data):
    """Play the data; return the player, its total loss (R,) and its margins y⟨w_t, x_t⟩."""
    p = fresh(player, spec)
    pred = np.einsum("rtd,rtd->rt", data.x, drive(p, spec, data))
    return p, prediction_loss(spec.loss, pred, data.y)[0].sum(axis=1), data.y * pred


def test_theorem2_on_separable_data_stays_bounded_where_sqrt_bounds_grow():
    # Clean separable data, logistic loss, ℝ^d: u = s·u*/γ has Σ g_t(u) ≤ T ln(1 + e^{−s}), so
    # Theorem 2's bound hardly grows with T, unlike Corollary 2's 2(f(u)/√U + √U)√(LT).
    rng = np.random.default_rng(31)
    R, T, d, gamma = 3, 2000, 5, 0.5
    data, u_star = separable_stream(rng, R, T, d, gamma=gamma)
    spec = spec_for(d, T, R, loss="logistic")
    scales = (0.0, 1.0, 4.0, 8.0)
    cum = {s: np.cumsum(per_round("logistic", data, s * u_star / gamma), axis=1) for s in scales}
    quarter = {}

    def at_quarter(j, player, fb):
        if j + 1 == T // 4:
            quarter["bound"] = player.small_loss_bound(2 * 8.0**2, cum[8.0][:, j])

    p = fresh(PrimalDual(schedule="small_loss", c=0.1), spec)
    margins = data.y * np.einsum("rtd,rtd->rt", data.x, drive(p, spec, data, after=at_quarter))
    learner = prediction_loss("logistic", margins, 1.0)[0].sum(axis=1)
    for s in scales:
        fu = 0.5 * s * s / gamma**2
        assert_below(learner - cum[s][:, -1], p.small_loss_bound(fu, cum[s][:, -1]), f"s = {s}")
    # s = 8: Σ g_t(u) ≤ 2000 ln(1 + e^{−8}) = 0.67; from T/4 to T the bound grows by < 2% where
    # a √T bound doubles
    final = p.small_loss_bound(2 * 8.0**2, cum[8.0][:, -1])
    assert np.all(final <= 1.02 * quarter["bound"]), (final, quarter["bound"])
    # the relative mistake bound through the loss's value at a zero margin (ln 2)
    np.testing.assert_array_equal((margins <= 0).sum(axis=1), p.mistakes)
    assert_below(p.mistakes, p.mistake_bound(2 * 4.0**2, cum[4.0][:, -1]), "mistakes")


def test_theorem2_and_corollary4_against_the_best_comparator_on_a_ball():
    # noisy separable data, squared loss on the ball of radius 3, Corollary 4's tuning with
    # β₁ = ½(3·1 + 1)² = 8 ≥ max_{w∈K} g_t(w) (‖x‖ ≤ 1, |y| = 1)
    rng = np.random.default_rng(32)
    R, T, d, radius = 3, 1500, 4, 3.0
    data, u_star = separable_stream(rng, R, T, d, gamma=0.2, flip=0.1)
    spec = spec_for(d, T, R, loss="squared", domain=Domain("ball", radius))
    player = PrimalDual(schedule="small_loss", c="tuned", beta1=8.0)
    p, learner, _ = run_small_loss(player, spec, data)
    U = 0.5 * radius**2
    best, u_best = hindsight.best_examples(
        "squared", data.x, data.y, Domain("ball", radius), return_argmin=True
    )
    comparators = [np.zeros((R, d)), u_star, radius * u_star, u_best]
    for u in comparators:
        fu = 0.5 * np.einsum("rd,rd->r", u, u)
        h = comparator_losses("squared", data, u)
        assert_below(learner - h, p.small_loss_bound(fu, h), "Theorem 2")
        cor4 = p.corollary4_bound(fu, h)
        assert np.all(np.isfinite(cor4))  # its conditions hold: max_t g_t(w_t) ≤ β₁, f(u) ≤ U
        assert_below(learner - h, cor4, "Corollary 4")
    # Theorem 2 is the tighter of the two (same constants, G ≤ 2√2), within Corollary 4
    assert_below(p.small_loss_bound(U, best), p.corollary4_bound(U, best), "Thm 2 ≤ Cor 4")
    assert np.all(p.corollary4_bound(U + 1.0, best) == np.inf)  # f(u) > U: not applicable


def test_theorem2_against_the_adaptive_contrarian():
    # the contrarian reveals the label opposite to the prediction (d = 1, squared loss)
    T = 400
    spec = spec_for(1, T, 1, loss="squared")
    adversary = Contrarian("squared")
    adversary.reset(spec, [np.random.default_rng(0)])
    p = fresh(PrimalDual(schedule="small_loss", c=0.5, beta1=2.0), spec)
    xs, ys, learner = [], [], 0.0
    for t in range(1, T + 1):
        x = adversary.features(t)
        w = p.predict(x)
        rd = adversary.reveal(t, w)
        fb = feedback("squared", 0.0, w, rd)
        learner += float(fb.value[0])
        p.update(fb)
        xs.append(rd.x[0])
        ys.append(float(rd.y[0]))
    data = RoundData(x=np.array(xs)[None], y=np.array(ys)[None])
    k = ys.count(1.0)
    for u in (0.0, 0.5, -1.0, (2 * k - T) / T):  # the last: the best constant, 2km/T
        h = comparator_losses("squared", data, np.array([[u]]))
        assert_below(learner - h, p.small_loss_bound(0.5 * u * u, h), f"u = {u}")
    assert p.mistakes[0] == T  # every round is a mistake, and Theorem 2 still holds


def test_declared_certificate_holds_through_the_engine():
    cases = [
        ("dataset_stream", {"dataset": "diabetes", "domain": "ball", "radius": 2.0}, None),
        ("separable_stream", {"loss": "logistic", "domain": "ball", "radius": 4.0}, 5),
    ]
    for adversary, params, dim in cases:
        df = play(
            PrimalDual(schedule="small_loss", c="tuned", beta1=4.0),
            adversary,
            adversary_params=params,
            n_actions=dim,
            horizon=300,
            replicates=2,
            metrics={"regret": {}, "bound": {}},
        )
        assert check_declared(df, adversary) > 0


# ----------------------------------------------------------------------------------------------
# where the schedule does not apply


def test_small_loss_is_refused_where_theorem_2_does_not_apply():
    ball = Domain("ball", 1.0)
    refused = [
        (PrimalDual(schedule="small_loss"), spec_for(3, 5, protocol="oco", loss="linear"), "oco"),
        (PrimalDual(schedule="small_loss"), spec_for(3, 5, loss="hinge"), "hinge loss"),
        (
            PrimalDual(schedule="small_loss"),
            spec_for(3, 5, protocol="regression", loss="absolute"),
            "self-bounded",
        ),
        (PrimalDual(schedule="small_loss"), spec_for(3, 5, loss="squared", sigma=0.5), "σ > 0"),
        (PrimalDual(schedule="small_loss", rule="aggressive"), spec_for(3, 5, loss="logistic"), ""),
        (
            PrimalDual(schedule="small_loss", mistake_driven=True),
            spec_for(3, 5, loss="squared"),
            "",
        ),
        (PrimalDual(schedule="small_loss", c="tuned"), spec_for(3, 5, loss="logistic"), "U"),
    ]
    for player, spec, needle in refused:
        validate_params(player)
        with pytest.raises(ConfigError, match="player primal_dual") as info:
            fresh(player, spec)
        assert needle in str(info.value)
    with pytest.raises(ConfigError, match="parameter 'beta1'"):
        validate_params(PrimalDual(schedule="small_loss", beta1=0.5))  # Theorem 2: β₁ ≥ 1
    with pytest.raises(ValueError, match="small_loss"):
        fresh(PrimalDual(), spec_for(3, 5, domain=ball)).small_loss_bound(0.5, 1.0)
    assert fresh(PrimalDual(schedule="small_loss"), spec_for(3, 5, loss="logistic")).bounds(1) == {}
