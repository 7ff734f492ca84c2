"""Winnow (balanced and self-tuned): literal Fig 5.1 / Fig 5.2 transcriptions with the exp link,
softmax = exp signs, (5.7) and Cor 6 on r-of-k targets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import validate_params
from arena.players._quasi_additive import softmax
from arena.players.winnow import Winnow
from tests.helpers.classification import (
    drive,
    drive_blocks,
    fresh,
    hinge_sum,
    mistakes_of,
    r_of_k_comparator,
    r_of_k_stream,
    random_stream,
    spec_for,
)


def literal_winnow(x, y, c=None, signed=False):
    """Shalev-Shwartz 2007 Fig 5.1 with Link_i(θ) = exp(θ_i) (c given) or Fig 5.2 (c None), one
    game.

    Returns the normalized weights w_t/Σw_t (n = d, or 2d on (x, −x) when signed, folded into
    w⁺ − w⁻) and the literal predictions sign⟨exp link, x⟩.
    """
    T, d = x.shape
    if signed:
        x = np.concatenate([x, -x], axis=1)
    n = x.shape[1]
    theta = [0.0] * n
    big_x, m = 0.0, 0
    out = np.empty((T, d))
    for t in range(T):
        if c is None:  # Fig 5.2, Shalev-Shwartz 2007, §5.1.3
            big_x = max(max(abs(v) for v in x[t]), big_x)
            ct = big_x * math.sqrt((m + 1) / math.log(n))
            w = [math.exp(theta[i] / ct) for i in range(n)]
        else:  # Fig 5.1 with (5.4)
            w = [math.exp(theta[i]) for i in range(n)]
        s = sum(w)
        wn = [v / s for v in w]
        out[t] = [wn[i] - wn[i + d] for i in range(d)] if signed else wn
        if signed:  # ⟨w', x'⟩ grouped as ⟨w⁺ − w⁻, x⟩, so that exact ties stay exact zeros
            score = sum((w[i] - w[i + d]) * x[t, i] for i in range(d))
        else:
            score = sum(w[i] * x[t, i] for i in range(n))
        if y[t] * score <= 0:
            step = 1.0 if c is None else 1.0 / c
            theta = [theta[i] + step * y[t] * x[t, i] for i in range(n)]
            m += 1
    return out


CASES = [
    ({"variant": "balanced", "c": 1.0}, {"c": 1.0}),
    ({"variant": "balanced", "c": 0.5}, {"c": 0.5}),
    ({"variant": "self_tuned"}, {"c": None}),
    ({"variant": "balanced", "c": 2.0, "signed": True}, {"c": 2.0, "signed": True}),
    ({"variant": "self_tuned", "signed": True}, {"c": None, "signed": True}),
]


@pytest.mark.parametrize(("params", "lit"), CASES)
@pytest.mark.parametrize("ternary", [False, True])
def test_transcription(params, lit, ternary):
    if ternary and lit.get("signed"):
        # signed + {−1, 0, 1} features: exact ties ⟨w⁺ − w⁻, x⟩ = 0 occur, and their float sign
        # depends on summation order (exp vs normalized weights), not on the algorithm
        pytest.skip("ties are decided by rounding")
    rng = np.random.default_rng(7 + ternary)
    R, T, d = 3, 150, 5
    data = random_stream(rng, R, T, d, ternary=ternary)
    spec = spec_for(d, T, R)
    want = np.stack([literal_winnow(data.x[r], data.y[r], **lit) for r in range(R)])
    # softmax (shifted) vs exp/Σexp of the literal: equal to a few ulps
    np.testing.assert_allclose(drive(fresh(Winnow(**params), spec), spec, data), want, atol=1e-12)
    got = drive_blocks(fresh(Winnow(**params), spec), spec, data, [1, 60, 61])
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_exp_link_and_softmax_have_the_same_signs():
    rng = np.random.default_rng(0)
    theta = 5 * rng.standard_normal((2000, 6))
    x = rng.standard_normal((2000, 6))
    a = np.einsum("rd,rd->r", np.exp(theta), x)
    b = np.einsum("rd,rd->r", softmax(theta), x)
    np.testing.assert_array_equal(np.sign(a), np.sign(b))


def test_predictions_depend_on_c_and_conservative():
    rng = np.random.default_rng(3)
    data = random_stream(rng, 2, 300, 6)
    spec = spec_for(6, 300, 2)
    ws = {c: drive(fresh(Winnow(c=c), spec), spec, data) for c in (0.2, 5.0)}
    assert not np.array_equal(mistakes_of(ws[0.2], data), mistakes_of(ws[5.0], data))
    for w in ws.values():
        moved = np.any(w[:, 1:] != w[:, :-1], axis=2)
        assert np.all(moved <= mistakes_of(w, data)[:, :-1])
        np.testing.assert_allclose(w.sum(axis=2), 1.0, atol=1e-12)  # on the simplex
        assert np.all(w >= 0)


def test_r_of_k_noise_free_cor6_and_5_7():
    rng = np.random.default_rng(17)
    R, T, n, r, k = 3, 2000, 60, 2, 4
    data, relevant = r_of_k_stream(rng, R, T, n, r, k)
    spec = spec_for(n, T, R)
    st = fresh(Winnow("self_tuned"), spec)
    drive(st, spec, data)
    # noise-free: H = 0 with the Shalev-Shwartz 2007, §5.1.2 comparator, Cor 6 gives 16 (r + k − ½)²
    # ln n
    assert np.all(st.mistakes <= 16 * (r + k - 0.5) ** 2 * math.log(n))
    for i in range(R):
        u, gamma = r_of_k_comparator(n, r, k, relevant[i])
        margins = data.y[i] * (data.x[i] @ u)
        assert margins.min() >= gamma - 1e-12  # the construction's margin
    for c in (0.05, 0.3, 2.0):
        bal = fresh(Winnow(c=c), spec)
        W = drive(bal, spec, data)
        mist = mistakes_of(W, data)
        for i in range(R):
            u, gamma = r_of_k_comparator(n, r, k, relevant[i])
            h = hinge_sum(data, u, gamma, rounds=mist)[i]
            assert bal.mistakes[i] <= bal.mistake_bound(h, gamma)[i] * (1 + 1e-9)


@pytest.mark.parametrize("flip", [0.05, 0.2])
def test_cor6_on_noisy_r_of_k_for_many_comparators_and_margins(flip):
    rng = np.random.default_rng(int(100 * flip))
    R, T, n, r, k = 3, 2000, 40, 2, 3
    data, relevant = r_of_k_stream(rng, R, T, n, r, k, flip=flip)
    spec = spec_for(n, T, R)
    st = fresh(Winnow("self_tuned"), spec)
    W = drive(st, spec, data)
    mist = mistakes_of(W, data)
    np.testing.assert_array_equal(st.mistakes, mist.sum(axis=1))
    comps = [np.full(n, 1.0 / n), np.eye(n)[0], np.eye(n)[n - 1]]
    comps += [rng.dirichlet(np.ones(n)) for _ in range(3)]
    for i in range(R):
        u0, g0 = r_of_k_comparator(n, r, k, relevant[i])
        for u in [u0, *comps]:
            for gamma in (g0, 0.05, 0.5, 1.0):
                h = hinge_sum(data, u, gamma, rounds=mist)[i]
                assert st.mistakes[i] <= st.mistake_bound(h, gamma)[i] * (1 + 1e-9)


def test_signed_plays_in_the_l1_ball_and_learns_negative_weights():
    rng = np.random.default_rng(5)
    R, T, d = 2, 1500, 8
    u = np.zeros(d)
    u[0], u[1], u[2] = 0.4, -0.35, 0.25  # on {±1}^d: |⟨u, x⟩| ≥ 0.2, feature 1 weighs negatively
    x = rng.choice([-1.0, 1.0], size=(R, T, d))
    y = np.where(x @ u >= 0, 1.0, -1.0)
    data = RoundData(x=x, y=y)
    spec = spec_for(d, T, R)
    p = fresh(Winnow("self_tuned", signed=True), spec)
    W = drive(p, spec, data)
    assert np.all(np.abs(W).sum(axis=2) <= 1 + 1e-12)
    assert np.all(W[:, -1, 1] < 0)  # the negatively weighted feature got a negative weight
    # Cor 6 on 2d weights with the comparator (u⁺, u⁻), ‖u‖₁ = 1; margin 0.2
    mist = mistakes_of(W, data)
    for gamma in (0.05, 0.2, 0.5):
        h = hinge_sum(data, u, gamma, rounds=mist)
        assert np.all(p.mistakes <= p.mistake_bound(h, gamma) * (1 + 1e-9))


def test_domain_and_parameter_validation():
    for dom in (Domain("ball", 0.5), Domain("box", 0.9)):
        with pytest.raises(ConfigError):
            fresh(Winnow(), spec_for(3, 5, domain=dom))
    with pytest.raises(ConfigError):
        fresh(Winnow(signed=True), spec_for(3, 5, domain=Domain("simplex")))
    with pytest.raises(ConfigError, match="player winnow: parameter 'variant': must be one of"):
        validate_params(Winnow("adaptive"))
    with pytest.raises(ConfigError, match="player winnow: parameter 'signed': must be a boolean"):
        validate_params(Winnow(signed="yes"))
    with pytest.raises(ConfigError):
        fresh(Winnow("self_tuned"), spec_for(1, 5))
    for params in Winnow._unit_test_params():
        w = fresh(Winnow(**params), spec_for(3, 5, 2, domain=Domain("ball", 1.0))).predict()
        assert w.shape == (2, 3)
