"""preconditioned_ogd: OGD in a fixed Q-norm (Srebro, Lecture 16, the Q-norm instance)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import sqrtm
from scipy.optimize import minimize

from arena import play, registry
from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData, feedback
from arena.players.ogd import OGD
from arena.players.preconditioned_ogd import PreconditionedOGD, q_matrix
from arena.spec import GameSpec
from tests.helpers import check_declared, rngs

Q_FULL = [[2.0, 0.5, 0.0], [0.5, 1.0, -0.3], [0.0, -0.3, 0.5]]


def spec_of(domain: Domain, n_rep: int = 2, dim: int = 3, horizon: int = 40) -> GameSpec:
    return GameSpec(
        "oco", dim, horizon, n_replicates=n_rep, dim=dim, domain=domain, loss="linear",
        gradient_bound=3.0,
    )  # fmt: skip


def gradients(n_rep: int, horizon: int, dim: int = 3, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n_rep, horizon, dim))


def play_player(player, spec: GameSpec, g: np.ndarray) -> np.ndarray:
    """The points ``w_1..w_T`` the player commits against the linear losses ``g`` (R, T, d)."""
    player.reset(spec, rngs(0, spec.n_replicates))
    out = []
    for t in range(g.shape[1]):
        w = player.predict()
        out.append(w)
        player.update(feedback("linear", 0.0, w, RoundData(g=g[:, t])))
    return np.stack(out, axis=1)


def lecture_points(q, g, lam: float) -> np.ndarray:
    """Srebro, Lecture 16, Q-norm LFTRL with λ_t = λ/t, written from the slide, one round at a
    time: w_{t+1} = ((t−1)λ_{t−1}/(tλ_t))·w_t − (1/(tλ_t))·Q⁻¹∇ℓ(w_t, z_t), w_1 = 0."""
    q = np.asarray(q, dtype=float)
    n_rep, horizon, dim = g.shape
    out = np.empty_like(g)
    for r in range(n_rep):
        w = np.zeros(dim)
        for t in range(1, horizon + 1):
            out[r, t - 1] = w
            lam_t = lam / t
            carry = 1.0 if t == 1 else (t - 1) * (lam / (t - 1)) / (t * lam_t)
            w = carry * w - (1.0 / (t * lam_t)) * np.linalg.solve(q, g[r, t - 1])
    return out


@pytest.mark.parametrize("Q", [None, 2.0, [1.0, 4.0, 0.25], Q_FULL])
def test_unconstrained_equals_the_lecture_update(Q):
    g = gradients(2, 40)
    spec = spec_of(Domain("unconstrained"))
    got = play_player(PreconditionedOGD(Q=Q, schedule="fixed", eta=0.5), spec, g)
    want = lecture_points(q_matrix(Q, 3), g, lam=2.0)  # η = 1/λ
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def test_is_euclidean_ogd_after_the_change_of_variables():
    # Srebro, Lecture 16 (digest test oracle 6): Q-norm OGD on (w, g) is Euclidean OGD on
    # (Q^{1/2}w, Q^{−1/2}g)
    g = gradients(2, 40)
    half = np.real(sqrtm(np.array(Q_FULL)))
    inv_half = np.linalg.inv(half)
    spec = spec_of(Domain("unconstrained"))
    got = play_player(PreconditionedOGD(Q=Q_FULL, schedule="sqrt", eta=0.7), spec, g)
    euclid = play_player(OGD(schedule="sqrt", eta=0.7), spec, g @ inv_half)
    np.testing.assert_allclose(got @ half, euclid, rtol=1e-10, atol=1e-12)


def literal_ball(q, g, eta: float, radius: float, schedule: str) -> np.ndarray:
    """Greedy projection in Q's norm, the projection by a generic constrained solver."""
    q = np.asarray(q, dtype=float)
    n_rep, horizon, dim = g.shape
    out = np.empty_like(g)
    for r in range(n_rep):
        w = np.zeros(dim)
        for t in range(1, horizon + 1):
            out[r, t - 1] = w
            eta_t = eta if schedule == "fixed" else eta / math.sqrt(t)
            v = w - eta_t * np.linalg.solve(q, g[r, t - 1])
            if v @ v <= radius**2:
                w = v
                continue
            res = minimize(
                lambda x, v=v: (x - v) @ q @ (x - v),
                v * radius / np.linalg.norm(v),
                jac=lambda x, v=v: 2 * q @ (x - v),
                constraints=[{"type": "ineq", "fun": lambda x: radius**2 - x @ x}],
                method="SLSQP",
                options={"ftol": 1e-15, "maxiter": 500},
            )
            w = res.x
    return out


@pytest.mark.parametrize("schedule", ["fixed", "sqrt"])
def test_ball_equals_a_generic_solver_projection(schedule):
    g = gradients(2, 30, seed=4)
    spec = spec_of(Domain("ball", 0.8), horizon=30)
    got = play_player(PreconditionedOGD(Q=Q_FULL, schedule=schedule, eta=0.6), spec, g)
    want = literal_ball(Q_FULL, g, 0.6, 0.8, schedule)
    np.testing.assert_allclose(got, want, atol=1e-6)
    assert (np.linalg.norm(got, axis=-1) <= 0.8 * (1 + 1e-12)).all()
    # the projections bind: the test exercises the constrained path
    assert np.isclose(np.linalg.norm(got, axis=-1), 0.8).sum() > 10


def test_identity_is_ogd_on_the_ball():
    g = gradients(3, 50, seed=2)
    spec = spec_of(Domain("ball", 1.0), n_rep=3, horizon=50)
    got = play_player(PreconditionedOGD(schedule="sqrt", eta=0.9), spec, g)
    want = play_player(OGD(schedule="sqrt", eta=0.9), spec, g)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("schedule", ["fixed", "sqrt"])
@pytest.mark.parametrize(
    "adversary",
    ["random_linear", "self_confirming", ("separable_stream", {"domain": "ball"}),
     ("random_linear", {"distribution": "sphere", "G": 2.0})],
)  # fmt: skip
def test_declared_bound_holds_on_catalog_adversaries(adversary, schedule):
    player = PreconditionedOGD(Q=Q_FULL, schedule=schedule)  # η tuned from D_Q and G
    if isinstance(adversary, tuple):
        adversary = registry.make("adversary", adversary[0], **adversary[1])
    rows = play(
        player, adversary, n_actions=3, horizon=300, replicates=4,
        metrics=["regret", "bound"], checkpoints=[1, 10, 100, 300],
    )  # fmt: skip
    assert check_declared(rows, f"preconditioned_ogd vs {adversary}") == 16


def test_tuned_fixed_step_meets_the_closed_form():
    # fixed η = D_Q/(G_*√T): the declared bound is at most D_Q·G_*·√T
    q = np.array(Q_FULL)
    eig = np.linalg.eigvalsh(q)
    horizon, G = 300, 1.0
    d_q, g_star = 2.0 * math.sqrt(eig.max()), G / math.sqrt(eig.min())
    rows = play(
        PreconditionedOGD(Q=Q_FULL), "random_linear", n_actions=3, horizon=horizon,
        replicates=4, metrics=["bound"], checkpoints=[horizon],
    )  # fmt: skip
    assert (rows.value <= d_q * g_star * math.sqrt(horizon) + 1e-9).all()


def test_refusals():
    spec = spec_of(Domain("box", 1.0))
    with pytest.raises(ConfigError, match="ball"):
        PreconditionedOGD(eta=1.0).reset(spec, rngs(0, 2))
    spec = spec_of(Domain("unconstrained"))
    with pytest.raises(ConfigError, match="3 entries"):
        PreconditionedOGD(Q=[1.0, 2.0], eta=1.0).reset(spec, rngs(0, 2))
    with pytest.raises(ConfigError, match="positive definite"):
        PreconditionedOGD(Q=[[1.0, 2.0, 0], [2.0, 1.0, 0], [0, 0, 1.0]], eta=1.0).reset(
            spec, rngs(0, 2)
        )
    with pytest.raises(ConfigError, match="symmetric"):
        PreconditionedOGD(Q=[[1.0, 0.2, 0], [0.0, 1.0, 0], [0, 0, 1.0]], eta=1.0).reset(
            spec, rngs(0, 2)
        )
    with pytest.raises(ConfigError, match="tuned"):
        PreconditionedOGD().reset(spec, rngs(0, 2))
