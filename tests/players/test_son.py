"""SON (Luo 2016, Alg. 11–14): literal references, FD = full below rank m, invariance, bounds."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena.apps.tournament import Tournament, TournamentConfig
from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData, feedback
from arena.players.son import SON
from arena.spec import GameSpec


def stream(seed, n, d, rank=None):
    """Gaussian examples (optionally in a random ``rank``-dim subspace) labelled by a random θ."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    if rank is not None:
        x = x[:, :rank] @ rng.normal(size=(rank, d))
    y = np.where(x @ rng.normal(size=d) >= 0, 1.0, -1.0)
    return x, y


def play(player, x, y, loss="logistic", adaptive=False, seed=0):
    """Run ``player`` on one replicate; returns the played points ``w_t`` and the labels used.

    ``adaptive``: the label is chosen after seeing ``w_t``, against the prediction's sign.
    """
    n, d = x.shape
    player.reset(
        GameSpec("classification", d, n, dim=d, domain=Domain(), loss=loss),
        [np.random.default_rng(seed)],
    )
    ws, ys = np.empty((n, d)), y.copy()
    for t in range(n):
        w = player.predict(x[t : t + 1])
        if adaptive:
            ys[t] = -1.0 if float(w[0] @ x[t]) >= 0 else 1.0
        ws[t] = w[0]
        rd = RoundData(x=x[t : t + 1], y=ys[t : t + 1])
        player.update(feedback(loss, 0.0, w, rd))
    return ws, ys


def dloss(loss, p, y):
    """ℓ'(p) of the arena's losses (squared ½(p − y)², logistic log(1 + e^{−yp}), hinge)."""
    if loss == "squared":
        return p - y
    if loss == "logistic":
        return -y / (1.0 + math.exp(y * p))
    return -y if y * p < 1.0 else 0.0


def loss_value(loss, p, y):
    if loss == "squared":
        return 0.5 * (p - y) ** 2
    if loss == "logistic":
        return math.log1p(math.exp(-y * p))
    return max(1.0 - y * p, 0.0)


def reference_son(
    x, y, sketch, m, alpha, c, eta0, sigma=0.0, loss="logistic", seed=0, a0=None, diagonal=False
):
    """Literal transcription of Luo 2016, Algorithm 11 with SketchInit/SketchUpdate of Alg. 12–14.

    Independent of the player where it can be: ``full`` keeps ``A_t`` itself and solves with it;
    the sketches recompute ``H = (αI + SSᵀ)^{-1}`` by inversion; FD eigendecomposes the d×d
    ``SᵀS = VᵀΣV`` as printed; Oja orthonormalizes by classical Gram–Schmidt loops. RP draws
    ``r_t ~ N(0, I/m)`` from ``default_rng(seed)`` in the player's order. ``a0`` replaces
    ``A_0 = αI`` of the full version (for the invariance test). ``diagonal``: §4.6.2, the
    algorithm sees ``x_t/√D_t`` with ``D_t = 0.1 + Σ_{s<t} g_s²`` and plays ``w̃_t/√D_t``.
    """
    n, d = x.shape
    rng = np.random.default_rng(seed)
    u = [0.0] * d
    a_full = alpha * np.eye(d) if a0 is None else np.array(a0, dtype=float)
    s = np.zeros((m, d))
    v = np.eye(m, d)
    lam = np.zeros(m)
    ws = []
    dsum = [0.1] * d

    def a_inv_times(vec):
        if sketch == "full":
            return np.linalg.solve(a_full, vec)
        h = np.linalg.inv(alpha * np.eye(m) + s @ s.T)
        return (vec - s.T @ h @ s @ vec) / alpha

    for t in range(1, n + 1):
        root = [math.sqrt(dsum[i]) if diagonal else 1.0 for i in range(d)]
        xt = np.array([x[t - 1][i] / root[i] for i in range(d)])
        ux = sum(u[i] * xt[i] for i in range(d))
        shift = math.copysign(max(abs(ux) - c, 0.0), ux)
        ax = a_inv_times(xt)
        den = sum(xt[i] * ax[i] for i in range(d))
        coef = shift / den if shift != 0.0 else 0.0
        w = [u[i] - coef * ax[i] for i in range(d)]
        ws.append([w[i] / root[i] for i in range(d)])
        p = sum(w[i] * xt[i] for i in range(d))
        g = np.array([dloss(loss, p, y[t - 1]) * xt[i] for i in range(d)])
        for i in range(d):
            dsum[i] += (dloss(loss, p, y[t - 1]) * x[t - 1][i]) ** 2
        gh = math.sqrt(sigma + eta0 / math.sqrt(t)) * g
        if sketch == "full":
            a_full = a_full + np.outer(gh, gh)
        elif sketch == "rp":
            r = rng.normal(0.0, 1.0 / math.sqrt(m), m)
            s = s + np.outer(r, gh)
        elif sketch == "fd":
            s[m - 1] = gh
            sig, vecs = np.linalg.eigh(s.T @ s)  # SᵀS = VᵀΣV, thin: the top m
            order = np.argsort(sig)[::-1][:m]
            sig, vt = np.maximum(sig[order], 0.0), vecs[:, order].T
            rho = sig[m - 1]
            s = np.sqrt(np.maximum(sig - rho, 0.0))[:, None] * vt
        else:
            gamma = 1.0 / t
            vg = v @ gh
            lam = (1.0 - gamma) * lam + gamma * vg**2
            raw = v + gamma * np.outer(vg, gh)
            rows = []
            for i in range(m):
                row = raw[i].copy()
                for q in rows:
                    row = row - (raw[i] @ q) * q
                rows.append(row / np.linalg.norm(row))
            v = np.array(rows)
            s = np.sqrt(t * lam)[:, None] * v
        step = a_inv_times(g)
        u = [w[i] - step[i] for i in range(d)]
    return np.array(ws)


@pytest.mark.parametrize(
    "sketch,m,loss,diagonal",
    [
        ("full", 1, "logistic", False),
        ("rp", 3, "squared", False),
        ("fd", 3, "hinge", False),
        ("oja", 3, "logistic", False),
        ("oja", 3, "squared", True),
        ("fd", 2, "logistic", True),
    ],
)
def test_player_equals_literal_algorithm(sketch, m, loss, diagonal):
    x, y = stream(1, 60, 6)
    # C = 1.5: a projected prediction lands exactly on ±C, so C = 1 would put it on the hinge's
    # kink y·p = 1, where rounding decides the subgradient.
    kw = {"sketch": sketch, "m": m, "alpha": 0.5, "C": 1.5, "eta": 0.7, "sigma": 0.1}
    ws, _ = play(SON(**kw, diagonal=diagonal), x, y, loss=loss, seed=3)
    ref = reference_son(
        x, y, sketch, m, 0.5, 1.5, 0.7, sigma=0.1, loss=loss, seed=3, diagonal=diagonal
    )
    # Same arithmetic up to reassociation (Sherman–Morrison / Woodbury against solve and
    # inversion; Gram vs covariance eigendecomposition): 1e-10 absolute on O(1) weights.
    np.testing.assert_allclose(ws, ref, rtol=0, atol=1e-10)
    assert np.any(np.abs(ws @ np.ones(6)) > 0)  # the game moved


def test_fd_equals_full_son_below_rank_m():
    # rank(G_T) ≤ 3 < m = 4: the smallest Gram eigenvalue is 0, ρ_t = 0, the sketch is exact
    # (Luo 2016, remark after Thm 18). Agreement to 1e-12 on O(1) weights (float rounding only).
    x, y = stream(2, 80, 8, rank=3)
    full, _ = play(SON(sketch="full", alpha=0.3, C=1.0, eta=0.5), x, y)
    fd, _ = play(SON(sketch="fd", m=4, alpha=0.3, C=1.0, eta=0.5), x, y)
    np.testing.assert_allclose(fd, full, rtol=0, atol=1e-12)
    # with a full-rank stream the sketch is lossy and the two really differ
    x2, y2 = stream(2, 80, 8)
    full2, _ = play(SON(sketch="full", alpha=0.3, C=1.0, eta=0.5), x2, y2)
    fd2, _ = play(SON(sketch="fd", m=4, alpha=0.3, C=1.0, eta=0.5), x2, y2)
    assert np.max(np.abs(fd2 - full2)) > 1e-3


def margins(ws, x):
    return np.einsum("td,td->t", ws, x)


@pytest.mark.parametrize("sketch", ["full", "rp", "fd", "fd_epoch"])
def test_invariance_to_scaled_rotations_with_alpha_scaled(sketch):
    # x ↦ sQx and α ↦ s²α give A' = M A Mᵀ, so w' = M^{-T} w and identical margins (Luo 2016,
    # §4.3.2); RP with the same draws r_t, FD because S'S'ᵀ = s² SSᵀ.
    x, y = stream(4, 50, 5)
    q, _ = np.linalg.qr(np.random.default_rng(5).normal(size=(5, 5)))
    scale = 7.0
    xm = x @ (scale * q).T
    ws, _ = play(SON(sketch=sketch, m=3, alpha=0.2, C=1.0, eta=0.5), x, y, seed=1)
    wm, _ = play(SON(sketch=sketch, m=3, alpha=0.2 * scale**2, C=1.0, eta=0.5), xm, y, seed=1)
    np.testing.assert_allclose(margins(wm, xm), margins(ws, x), rtol=0, atol=1e-10)


def test_full_son_invariance_mechanism_for_any_linear_map():
    # For invertible M, feeding Mx_t with A_0 = αMMᵀ gives A'_t = M A_t Mᵀ and w'_t = M^{-T}w_t:
    # the margins are those of the player on the raw data. The player's scalar αI equals αMMᵀ
    # only for M = sQ (previous test); for other maps αI is the ℓ2 part that breaks exact
    # invariance (the (α/2)‖w‖² term of Thm 16), and the margins really differ.
    x, y = stream(6, 40, 4)
    rng = np.random.default_rng(7)
    for mat in (np.diag([1e-2, 1.0, 30.0, 300.0]), rng.normal(size=(4, 4))):
        xm = x @ mat.T
        ws, _ = play(SON(sketch="full", alpha=0.5, C=1.0, eta=0.5), x, y)
        ref = reference_son(xm, y, "full", 1, 0.5, 1.0, 0.5, a0=0.5 * mat @ mat.T)
        # 1e-8: the transformed problem has condition number up to ~1e8 (the diagonal map)
        np.testing.assert_allclose(margins(ref, xm), margins(ws, x), rtol=0, atol=1e-8)
        wm, _ = play(SON(sketch="full", alpha=0.5, C=1.0, eta=0.5), xm, y)
        assert np.max(np.abs(margins(wm, xm) - margins(ws, x))) > 1e-2


@pytest.mark.parametrize("sketch", ["full", "fd", "fd_epoch"])
@pytest.mark.parametrize("loss,adaptive", [("logistic", False), ("hinge", True), ("squared", True)])
def test_declared_theorem_bound_holds_for_comparators_in_k(sketch, loss, adaptive):
    x, y = stream(8, 150, 6)
    player = SON(sketch=sketch, m=3, alpha=1.0, C=1.0)  # η by the thesis: √d/(CL)
    ws, ys = play(player, x, y, loss=loss, adaptive=adaptive)
    learner = sum(loss_value(loss, float(ws[t] @ x[t]), ys[t]) for t in range(len(ys)))
    rng = np.random.default_rng(9)
    directions = [np.zeros(6), *rng.normal(size=(20, 6))]
    slack = []
    for u in directions:
        peak = np.max(np.abs(x @ u))
        w = u / peak if peak > 0 else u  # max_t |⟨w, x_t⟩| = C = 1: w ∈ K
        regret = learner - sum(loss_value(loss, float(w @ x[t]), ys[t]) for t in range(len(ys)))
        bound = float(player.regret_bound(float(np.linalg.norm(w)))[0])
        slack.append(bound - regret)
    assert min(slack) >= 0.0
    assert player.bounds(len(ys)) == {}


def test_no_bound_for_rp_and_oja_and_refusals():
    x, y = stream(1, 5, 4)
    for sketch in ("rp", "oja"):
        p = SON(sketch=sketch, m=2, C=1.0)
        play(p, x, y)
        assert p.regret_bound(0.0) is None
    spec = GameSpec("oco", 3, 5, dim=3, domain=Domain(), loss="linear")
    with pytest.raises(ConfigError, match="plain oco"):
        SON().reset(spec, [np.random.default_rng(0)])
    spec = GameSpec("regression", 3, 5, dim=3, domain=Domain(), loss="squared")
    with pytest.raises(ConfigError, match="eta"):
        SON().reset(spec, [np.random.default_rng(0)])
    spec = GameSpec("classification", 3, 5, dim=3, domain=Domain(), loss="hinge")
    with pytest.raises(ConfigError, match="m <= d"):
        SON(sketch="oja", m=4).reset(spec, [np.random.default_rng(0)])


def test_runs_in_a_tournament_on_the_ill_conditioned_stream(tmp_path):
    config = TournamentConfig.from_mapping(
        {
            "name": "son_tiny",
            "players": [
                {"name": "son", "params": {"sketch": "full"}},
                {"name": "son", "params": {"sketch": "oja", "m": 2}},
            ],
            "adversaries": [{"name": "ill_conditioned", "params": {"kappa": 10.0, "n_large": 2}}],
            "n_actions": [5],
            "horizon": 40,
            "replicates": 2,
            "seed": 1,
            "metrics": {"mistakes": {}},
        }
    )
    result = Tournament(config, tmp_path / "t", executor="serial").run()
    assert len(result.finished) == 2 and not result.failed
    parts = sorted((tmp_path / "t" / "parts").glob("results-*.parquet"))
    rows = pd.concat([pd.read_parquet(p) for p in parts])
    final = rows[(rows.metric == "mistakes") & (rows.t == 40)]
    assert len(final) == 4 and final.value.between(0, 40).all()
