"""The multi-dual-variable updates of ``primal_dual`` (Shalev-Shwartz 2007, §5.2.2, Eq. (5.18)):
literal transcriptions of the row-action and (5.18) updates, regularized FTL = FTRL on the full
hinge losses (scipy on the primal), ``window=1`` = the single-variable update (5.15), dual gain at
least (5.15)'s, Theorem 6 and the declared regret certificate on the catalog's classification
streams, and the declared memory growth of ``ftrl``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq, minimize

from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import feedback
from arena.params import validate_params
from arena.players.primal_dual import PrimalDual
from arena.spec import GameSpec
from arena.testing.common import state_bytes
from tests.helpers.classification import (
    drive,
    fresh,
    hinge_sum,
    mistakes_of,
    random_stream,
    separable_stream,
    spec_for,
)


def pd(**kw):
    return PrimalDual(rule="aggressive", **kw)


# ----------------------------------------------------------------------------------------------
# literal transcriptions (one game, plain loops)


def _c_of(schedule, c0, big_x, m, U):
    """``c_t``: fixed, or Fig 5.3 / (5.17) ``X_t √((M + 1)/U)``."""
    return c0 if schedule == "fixed" else big_x * math.sqrt((m + 1) / U)


def _link(regularizer, z):
    if regularizer == "l2":
        return list(z)
    top = max(z)
    e = [math.exp(v - top) for v in z]
    return [v / sum(e) for v in e]


def literal_row_action(x, y, regularizer, schedule, c0, U, gamma, window, passes):
    """Shalev-Shwartz 2007, §5.2.2, second scheme, with the self-tuned frame of Fig 5.3:
    ``α̂⁰ = αᵗ``; for ``j = 1..k_t``, ``α̂ʲ = argmax D_t(α)`` s.t. ``α̂ʲ_p = α̂ʲ⁻¹_p`` for
    ``p ≠ i_j``; ``α^{t+1} = α̂^{k_t}``. Indices: ``i_1 = t, t−1, …`` over the last ``window``
    rounds, ``passes`` times. ``D_t(α) = γ Σ α_i − c_t f*((1/c_t) Σ α_i y_i x_i)``; the 1-D
    maximization is (7.11) for ``½‖w‖²`` (written as the argmax over a with the others fixed) and
    the root of the derivative ``γ − y_i⟨∇f*(·), x_i⟩`` by brentq for the entropy (§7.2)."""
    T, d = x.shape
    alpha = [0.0] * T
    big_x, m = 0.0, 0
    out = np.empty((T, d))

    def theta_of(skip, t):  # Σ_{i ≤ t, i ≠ skip} α_i y_i x_i (α_i = 0 for i > t)
        return [sum(alpha[i] * y[i] * x[i, k] for i in range(t + 1) if i != skip) for k in range(d)]

    for t in range(T):
        norm = math.sqrt(sum(v * v for v in x[t])) if regularizer == "l2" else max(abs(x[t]))
        big_x = max(norm, big_x)
        c = _c_of(schedule, c0, big_x, m, U)
        w = _link(regularizer, [v / c for v in theta_of(None, t)])
        out[t] = w
        if y[t] * sum(w[k] * x[t, k] for k in range(d)) <= 0:
            m += 1
        order = [t - o for o in range(min(window, t + 1))] * passes
        for i in order:
            th = theta_of(i, t)  # the others fixed
            v = [y[i] * x[i, k] for k in range(d)]
            if regularizer == "l2":
                sq = sum(e * e for e in v)
                a = min(1.0, max(c * gamma - sum(th[k] * v[k] for k in range(d)), 0.0) / sq)
            else:

                def slope(a, th=th, v=v, c=c):
                    w = _link("entropic", [(th[k] + a * v[k]) / c for k in range(d)])
                    return gamma - sum(w[k] * v[k] for k in range(d))

                if slope(0.0) <= 0:
                    a = 0.0
                elif slope(1.0) >= 0:
                    a = 1.0
                else:
                    a = brentq(slope, 0.0, 1.0, xtol=1e-15, rtol=1e-15)
            alpha[i] = a
    return out


def literal_518(x, y, c, gamma, window):
    """(5.18) with ``½‖w‖²`` on ℝ^d and a fixed c: each round, scipy's L-BFGS-B maximizes
    ``D(α) = γ Σ α_i − ½‖Σ α_i y_i x_i‖²/c`` over ``α_i ∈ [0, 1]``, i in the last ``window``
    rounds (None: every round, ``I_t = [t]``), the other α fixed; ``w_t = (1/c) Σ α_i y_i x_i``."""
    T, d = x.shape
    alpha = np.zeros(T)
    v = y[:, None] * x
    out = np.empty((T, d))
    for t in range(T):
        out[t] = alpha @ v / c
        idx = np.arange(t + 1) if window is None else np.arange(max(0, t + 1 - window), t + 1)
        fixed = alpha @ v - alpha[idx] @ v[idx]

        def neg_dual(a, idx=idx, fixed=fixed):
            th = fixed + a @ v[idx]
            return 0.5 * th @ th / c - gamma * a.sum(), v[idx] @ th / c - gamma

        res = minimize(
            neg_dual,
            alpha[idx],
            jac=True,
            method="L-BFGS-B",
            bounds=[(0.0, 1.0)] * idx.size,
            options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10_000},
        )
        alpha[idx] = res.x
    return out


def test_row_action_equals_its_transcription():
    rng = np.random.default_rng(31)
    R, T, d, U, gamma = 2, 24, 4, 4.0, 1.0
    data, _ = separable_stream(rng, R, T, d, gamma=0.05, flip=0.15)
    spec = spec_for(d, T, R)
    for regularizer, schedule, c0 in (("l2", "mistakes", 1.0), ("entropic", "fixed", 0.5)):
        kw = {"dual_update": "row_action", "window": 3, "passes": 2, "gamma": gamma}
        p = pd(regularizer=regularizer, schedule=schedule, c=c0, U=U, **kw)
        want = np.stack(
            [
                literal_row_action(data.x[r], data.y[r], regularizer, schedule, c0, U, gamma, 3, 2)
                for r in range(R)
            ]
        )
        # l2: the same arithmetic up to summation order; entropic: regula falsi vs brentq, both
        # to 1e-15 on each mini-step
        np.testing.assert_allclose(drive(fresh(p, spec), spec, data), want, atol=1e-10)


@pytest.mark.parametrize("window", [2, 5, None])
def test_window_and_ftrl_solve_518(window):
    rng = np.random.default_rng(32)
    R, T, d, c, gamma = 2, 30, 3, 0.7, 1.0
    data, _ = separable_stream(rng, R, T, d, gamma=0.05, flip=0.2)
    spec = spec_for(d, T, R)
    mode = (
        {"dual_update": "ftrl"} if window is None else {"dual_update": "window", "window": window}
    )
    got = drive(fresh(pd(c=c, gamma=gamma, **mode), spec), spec, data)
    want = np.stack([literal_518(data.x[r], data.y[r], c, gamma, window) for r in range(R)])
    # two solvers of the same concave QP: coordinate ascent to 1e-8 in α, L-BFGS-B to 1e-12
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_regularized_ftl_is_ftrl_on_the_full_hinge_losses():
    """Strong duality (§5.2.2, [derived]): with a fixed c, ``ftrl`` plays ``w_{t+1} = argmin_{w∈S}
    c f(w) + Σ_{i≤t} [γ − y_i⟨w, x_i⟩]₊``; scipy's SLSQP solves this primal with slack variables
    (½‖w‖² on ℝ^d) or on the simplex (the relative entropy)."""
    rng = np.random.default_rng(33)
    T, d, c, gamma = 20, 3, 0.8, 0.5
    data = random_stream(rng, 1, T, d)
    spec = spec_for(d, T)
    for regularizer in ("l2", "entropic"):
        W = drive(fresh(pd(regularizer=regularizer, c=c, gamma=gamma, dual_update="ftrl"), spec),
                  spec, data)[0]  # fmt: skip
        for t in (4, T - 1):  # w_{t+1} from the first t examples (W[t], 0-based)
            x, y = data.x[0, :t], data.y[0, :t]

            def primal(z, x=x, y=y, regularizer=regularizer):
                w, xi = z[:d], z[d:]
                f = (
                    0.5 * w @ w
                    if regularizer == "l2"
                    else np.sum(w * np.log(np.maximum(w, 1e-300) * d))
                )
                return c * f + xi.sum()

            cons = [
                {"type": "ineq", "fun": lambda z, x=x, y=y: z[d:] - gamma + y * (x @ z[:d])},
                {"type": "ineq", "fun": lambda z: z[d:]},
            ]
            bounds = [(None, None)] * (d + t)
            if regularizer == "entropic":
                cons.append({"type": "eq", "fun": lambda z: z[:d].sum() - 1.0})
                bounds = [(1e-12, 1.0)] * d + [(None, None)] * t
            z0 = np.concatenate([np.full(d, 1.0 / d), np.full(t, gamma)])
            res = minimize(primal, z0, method="SLSQP", constraints=cons, bounds=bounds,
                           options={"ftol": 1e-12, "maxiter": 1000})  # fmt: skip
            ours = np.concatenate([W[t], np.maximum(gamma - y * (x @ W[t]), 0.0)])
            assert primal(ours) <= res.fun + 1e-7  # as good as scipy's point (DUAL_TOL)
            # c f is c-strongly convex: the minimizer is unique, scipy's is near it
            np.testing.assert_allclose(W[t], res.x[:d], atol=2e-5)


@pytest.mark.parametrize("regularizer", ["l2", "entropic", "pnorm"])
def test_window_one_is_the_single_variable_update(regularizer):
    rng = np.random.default_rng(34)
    R, T, d = 2, 60, 5
    data = random_stream(rng, R, T, d, ternary=regularizer == "entropic")
    data.x[:, :, 0] = np.where(data.x[:, :, 0] == 0, 1.0, data.x[:, :, 0])
    spec = spec_for(d, T, R)
    kw = {"regularizer": regularizer, "p": 3.0, "schedule": "mistakes", "U": 3.0, "gamma": 0.6}
    want = drive(fresh(pd(**kw), spec), spec, data)
    got = drive(fresh(pd(dual_update="window", window=1, **kw), spec), spec, data)
    if regularizer == "l2":  # the compiled kernel sums ⟨θ, v⟩ in another order than einsum
        np.testing.assert_allclose(got, want, rtol=0.0, atol=1e-12)
    else:  # the same numpy calls on the same rows
        np.testing.assert_array_equal(got, want)


# ----------------------------------------------------------------------------------------------
# the dual: monotone, and each round's gain at least that of the single-variable update


@pytest.mark.parametrize(
    "player",
    [
        pd(dual_update="ftrl", schedule="mistakes", U=2.0),
        pd(dual_update="window", window=4, c=0.5),
        pd(dual_update="ftrl", c=0.5, mistake_driven=True),
        pd(dual_update="row_action", window=6, schedule="lipschitz", U=2.0),
        pd(regularizer="entropic", dual_update="window", window=3, gamma=0.3, c=0.4),
        pd(regularizer="pnorm", p=3.0, dual_update="row_action", window=3, passes=2, c=0.5),
    ],
    ids=repr,
)
def test_dual_gain_at_least_single_variable(player):
    rng = np.random.default_rng(35)
    R, T, d = 2, 25, 4
    data, _ = separable_stream(rng, R, T, d, gamma=0.05, flip=0.2)
    spec = spec_for(d, T, R)
    p = fresh(player, spec)
    before = np.zeros(R)
    for j in range(T):
        rd = data.round(j)
        c = p._safe(p.trade_off(rd.x))
        w = p.predict(rd.x)
        # D_t after the (5.15) step from the same state: γ(Σα + a) − c f*((θ + a v)/c)
        v = rd.y[:, None] * rd.x
        a = p._aggressive_alpha(v, c)
        fed_before = p.fed_rounds
        p_neg_conj = p._neg_conj.copy()
        theta = p.theta
        p.update(feedback(spec.loss, spec.sigma, w, rd))
        a = np.where(p.fed_rounds > fed_before, a, 0.0)  # mistake-driven: only fed rounds step
        theta += a[:, None] * v
        single = p_neg_conj + p._gamma * a - c * p._reg.conjugate(theta / c[:, None])
        after = p.dual_value()
        assert np.all(after >= single - 1e-9 * np.maximum(1.0, np.abs(single)))
        assert np.all(after >= before - 1e-9 * np.maximum(1.0, np.abs(before)))  # Δ_t ≥ 0
        before = after


# ----------------------------------------------------------------------------------------------
# Theorem 6 (the bound of P9, kept by (5.18)) on the catalog's classification streams


def _play(player, adversary, d, T, R, seed):
    """Drive a registered adversary round by round (features, predict, reveal, update)."""
    spec = GameSpec(
        "classification", d, T, n_replicates=R, dim=d, domain=adversary.declared_domain(),
        loss=adversary.declared_loss(), gradient_bound=adversary.gradient_bound(),
    )  # fmt: skip
    rngs = [np.random.default_rng([seed, r]) for r in range(R)]
    adversary.reset(spec, rngs)
    p = fresh(player, spec)
    xs, ys, ws = [], [], []
    for t in range(1, T + 1):
        x = adversary.features(t)
        w = p.predict(x)
        rd = adversary.reveal(t, w)
        rd = rd._replace(x=x) if rd.x is None else rd
        p.update(feedback(spec.loss, spec.sigma, w, rd))
        xs.append(rd.x), ys.append(rd.y), ws.append(w)
    from arena.oco.losses import RoundData

    data = RoundData(x=np.stack(xs, 1), y=np.stack(ys, 1))
    return p, data, np.stack(ws, 1), adversary.comparator()


def test_thm6_on_catalog_streams_many_seeds():
    from arena.adversaries.contrarian import Contrarian
    from arena.adversaries.orthogonal_hinge import OrthogonalHinge
    from arena.adversaries.separable_stream import SeparableStream

    R, T = 8, 40
    cases = [  # (adversary, d, U ≥ f(u) of its comparator)
        (SeparableStream(margin=0.25), 4, 8.0),  # separable: f(u*/γ) = 8
        (SeparableStream(margin=0.25, noise=0.15), 4, 8.0),
        (Contrarian(), 2, 0.5),  # adaptive: every round a mistake
        (OrthogonalHinge(), T, T / 2),  # adaptive, Theorem 4
    ]
    modes = [
        {"dual_update": "ftrl"},
        {"dual_update": "window", "window": 3},
        {"dual_update": "row_action", "window": 5, "passes": 2},
    ]
    for k, (adversary, d, U) in enumerate(cases):
        for mode in modes:
            player = pd(schedule="mistakes", U=U, **mode)
            p, data, W, u = _play(player, adversary.clone(), d, T, R, seed=k)
            m = mistakes_of(W, data).sum(axis=1)
            np.testing.assert_array_equal(m, p.mistakes)
            for r in range(R):
                fu = float(p.regularizer_value(u[r]))
                assert fu <= U * (1 + 1e-12)
                h = hinge_sum(data, u[r])
                bound = p.mistake_bound(fu, h)[r]
                assert m[r] <= bound * (1 + 1e-9)
                if k == 0:  # separable: Σ g_t(u) = 0, so |M| ≤ 4X²U/γ² (X ≤ 1, γ = 1)
                    assert h[r] <= 1e-12 and bound <= 4 * U * (1 + 1e-12)


@pytest.mark.slow  # conformance's check_oco_declared_bounds_hold covers row_action in CI
def test_declared_regret_certificate_holds_in_the_engine():
    from arena import play
    from arena.adversaries.separable_stream import SeparableStream

    # on the ball every mini-step is a line search (the generic path): short games
    for mode, horizon in (
        ({"dual_update": "window", "window": 2}, 50),
        ({"dual_update": "ftrl"}, 25),
    ):
        df = play(
            pd(c=2.0, **mode),
            SeparableStream(margin=0.25, noise=0.2, domain="ball", radius=2.0),
            n_actions=3,
            horizon=horizon,
            replicates=2,
            metrics=["regret", "bound"],
        )
        wide = df.pivot_table(index=["replicate", "t"], columns="metric", values="value")
        assert np.all(np.isfinite(wide["bound:regret"]))
        assert np.all(wide["regret"] <= wide["bound:regret"] * (1 + 1e-9))


# ----------------------------------------------------------------------------------------------
# validation and memory


def test_validation_and_declared_memory():
    oco = spec_for(3, 5, protocol="oco", domain=Domain("ball", 1.0), loss="linear")
    for player in (pd(dual_update="window"), PrimalDual(dual_update="ftrl")):
        validate_params(player)
    with pytest.raises(ConfigError, match="dual_update"):
        fresh(pd(dual_update="window"), oco)
    with pytest.raises(ConfigError, match="rule='aggressive'"):
        fresh(PrimalDual(dual_update="row_action"), spec_for(3, 5))
    with pytest.raises(ConfigError, match="dual_update"):  # small_loss feeds the arena's loss
        PrimalDual(dual_update="window", schedule="small_loss").reset(
            spec_for(3, 5, loss="logistic"), [np.random.default_rng(0)]
        )
    for player, parameter in (
        (pd(dual_update="all"), "dual_update"),
        (pd(window=0), "window"),
        (pd(window=2.5), "window"),
        (pd(passes=0), "passes"),
    ):
        with pytest.raises(ConfigError, match=f"player primal_dual: parameter {parameter!r}"):
            validate_params(player)
    # ftrl keeps every fed example (declared); window and row_action keep `window` of them
    assert dict(pd(dual_update="ftrl").tags.expected_failed_checks) == {
        "check_oco_bounded_memory": pd(dual_update="ftrl").tags.expected_failed_checks[0][1]
    }
    assert pd(dual_update="window").tags.expected_failed_checks == ()
    assert PrimalDual.tags.expected_failed_checks == ()
    rng = np.random.default_rng(36)
    data = random_stream(rng, 1, 80, 3)
    spec = spec_for(3, 80)
    for mode, grows in (("ftrl", True), ("window", False), ("row_action", False)):
        p = fresh(pd(dual_update=mode, window=3), spec)
        sizes = []
        for j in range(80):
            rd = data.round(j)
            p.update(feedback(spec.loss, spec.sigma, p.predict(rd.x), rd))
            if j in (19, 79):
                sizes.append(state_bytes(p))
        assert (sizes[1] > sizes[0]) == grows
