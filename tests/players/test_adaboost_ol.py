"""AdaBoost.OL and AdaBoost.OL.S (Luo 2016, §3.1.4, Algorithm 8): a literal transcription, the
deterministic facts of the proof of Theorem 11, the OGD step and Lemma 10.

Tolerances: the booster and the transcription do the same floating-point operations in a
different grouping (vectorized cumulative sums against scalar loops) over at most a few hundred
rounds of quantities of size ≤ 2N, so they agree to ~1e-13; 1e-10 leaves room and still catches
any difference of rule (one changed step moves α by ≥ 4/√T·e^{−2N}/… ≫ 1e-10).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import pytest

from arena.boosting.components import WeakLearner, WeakSpec
from arena.boosting.testing import LaneSGD, ThresholdStream
from arena.errors import ConfigError
from arena.game import run_game
from arena.players.adaboost_ol import AdaBoostOL, AdaBoostOLS, ogd_alpha_step
from arena.spec import GameSpec

BOOSTERS = {"weights": AdaBoostOL, "sampling": AdaBoostOLS}


def _spec(d: int, horizon: int, n_rep: int) -> GameSpec:
    return GameSpec(
        "boosting", d, horizon, n_replicates=n_rep, dim=d, loss="logistic", task="classification"
    )


def _rngs(seed: int, n_rep: int) -> list[np.random.Generator]:
    return [np.random.default_rng([seed, r]) for r in range(n_rep)]


def _logistic(s):
    return np.logaddexp(0.0, -np.asarray(s, dtype=np.float64))


def _streams(kind: str, n_rep: int, horizon: int, d: int, seed: int):
    """Threshold data (learnable) or random data with random labels (learners at chance)."""
    if kind == "threshold":
        stream = ThresholdStream(noise=0.1)
        stream.reset(_spec(d, horizon, n_rep), _rngs(seed + 100, n_rep))
        data = stream.data_block(1, horizon)
        return data.x, data.y
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n_rep, horizon, d)), rng.choice([-1.0, 1.0], (n_rep, horizon))


# ----------------------------------------------------------------------------------------------
# the literal transcription of Algorithm 8


def transcription(sampling: bool, x, y, seed: int, n_learners: int, rate: float):
    """Algorithm 8 of Luo (2016) per replicate, per round, per learner, in plain Python.

    Streams: the booster's stream of replicate r first gives the lanes' seed, then the experts
    player's seed, then the uniform of round 1's draw; each round, the N sampling uniforms (the
    .S variant) and the uniform of the next draw. Returns the predictions and, per replicate, the
    history (s_t^{i−1}, z_t^i, α_t^i, w_t^i, the Hedge distribution) and the final α.
    """
    n_rep, horizon, d = x.shape
    out = np.empty((n_rep, horizon))
    histories = []
    for r, rng in enumerate(_rngs(seed, n_rep)):
        lane_seed = int(rng.integers(2**63))
        learners = []
        for i in range(n_learners):
            wl = LaneSGD(rate=rate)
            wl.reset(
                WeakSpec("classification", d, 1, 1, horizon),
                [[np.random.default_rng([lane_seed, i])]],
            )
            learners.append(wl)
        rng.integers(2**63)  # the experts player's stream (Hedge draws nothing)
        log_v = [0.0] * n_learners  # line 1: v^i = 1, kept as log v^i
        alpha = [0.0] * n_learners
        u = rng.random()
        hist = {"s_prev": [], "z": [], "alpha": [], "w": [], "p": []}
        for t in range(1, horizon + 1):
            xt = x[r, t - 1][None, :]
            h = [float(wl.predict(xt)[0, 0]) for wl in learners]
            votes, margin = [], 0.0
            for i in range(n_learners):  # line 5 (sign(0) = 0)
                margin += alpha[i] * h[i]
                votes.append(1.0 if margin > 0 else (-1.0 if margin < 0 else 0.0))
            top = max(log_v)
            v = [math.exp(lv - top) for lv in log_v]
            total = sum(v)
            p = [vi / total for vi in v]
            cum, pick = 0.0, n_learners - 1
            for i in range(n_learners):  # line 7: Pr[i_t = i] ∝ v^i
                cum += p[i]
                if cum > u:
                    pick = i
                    break
            out[r, t - 1] = votes[pick]  # line 8
            yt = float(y[r, t - 1])
            draws = rng.random(n_learners) if sampling else None
            s = 0.0  # line 9
            row = {k: [] for k in ("s_prev", "z", "alpha", "w")}
            for i in range(n_learners):
                z = yt * h[i]  # line 11
                w = 1.0 / (1.0 + math.exp(s))
                row["s_prev"].append(s)
                row["z"].append(z)
                row["alpha"].append(alpha[i])
                row["w"].append(w)
                s = s + alpha[i] * z  # line 12
                step = alpha[i] + (4.0 / math.sqrt(t)) * z / (1.0 + math.exp(s))
                alpha[i] = max(-2.0, min(2.0, step))  # line 13
                weight = (1.0 if draws[i] < w else 0.0) if sampling else w  # line 14
                if weight > 0.0:
                    learners[i].update(xt, np.array([[yt]]), np.array([[weight]]))
                log_v[i] -= 1.0 if yt != votes[i] else 0.0  # line 15
            for k in row:
                hist[k].append(row[k])
            hist["p"].append(p)
            u = rng.random()
        histories.append({k: np.array(val) for k, val in hist.items()} | {"final": alpha})
    return out, histories


def _play(booster, x, y, seed: int):
    n_rep, horizon, d = x.shape
    booster.reset(_spec(d, horizon, n_rep), _rngs(seed, n_rep))
    out = np.empty((n_rep, horizon))
    dists = np.empty((n_rep, horizon, booster.n_learners))
    for j in range(horizon):
        dists[:, j] = booster.expert_distribution()
        out[:, j] = booster.predict(x[:, j])
        booster.update(x[:, j], y[:, j])
    return out, dists


@pytest.mark.parametrize("mode", sorted(BOOSTERS))
@pytest.mark.parametrize("kind", ["threshold", "random"])
def test_equals_literal_transcription(mode, kind):
    x, y = _streams(kind, 3, 150, 3, seed=7)
    booster = BOOSTERS[mode](n_learners=4, weak_learner=LaneSGD(rate=0.3))
    pred, dists = _play(booster, x, y, seed=11)
    ref, hist = transcription(mode == "sampling", x, y, 11, 4, 0.3)
    np.testing.assert_array_equal(pred, ref)  # votes are exact ±1/0
    np.testing.assert_allclose(dists, np.stack([h["p"] for h in hist]), rtol=0, atol=1e-10)
    np.testing.assert_allclose(booster.alphas(), [h["final"] for h in hist], rtol=0, atol=1e-10)
    totals = booster.learner_totals()
    w = np.stack([h["w"].sum(axis=0) for h in hist])
    edge = np.stack([(h["w"] * h["z"]).sum(axis=0) for h in hist])
    np.testing.assert_allclose(totals["weight"], w, rtol=0, atol=1e-10)
    np.testing.assert_allclose(totals["edge"], edge, rtol=0, atol=1e-10)
    if mode == "weights":
        np.testing.assert_array_equal(totals["calls"], np.full((3, 4), 150.0))
    else:  # learner 1 always has w = ½: about half the rounds, learners ≥ 2 at most all
        assert (totals["calls"] < 150).all() and (totals["calls"] > 30).all()
    if kind == "threshold":
        assert (pred != 0).any() and (pred == y).mean() > 0.6


# ----------------------------------------------------------------------------------------------
# the deterministic facts of the proof of Theorem 11 (O-OL-3, O-OL-4, O-OL-5, O-OL-7)


def _golden_min(f, lo: float = -2.0, hi: float = 2.0, iters: int = 200) -> float:
    """Minimum of a convex f on [lo, hi] by golden-section search (also trying the ends)."""
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iters):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return min(fc, fd, f(lo), f(hi))


@pytest.mark.parametrize("mode", sorted(BOOSTERS))
def test_potential_inequality_and_weights_bound_mistakes(mode):
    horizon, n = 300, 5
    x, y = _streams("threshold", 2, horizon, 3, seed=3)
    booster = BOOSTERS[mode](n_learners=n, weak_learner=LaneSGD(rate=0.5))
    _, dists = _play(booster, x, y, seed=5)
    _, hist = transcription(mode == "sampling", x, y, 5, n, 0.5)
    for r, h in enumerate(hist):
        s_prev, z, alpha, w = h["s_prev"], h["z"], h["alpha"], h["w"]
        s = s_prev + alpha * z  # s_t^i, (T, N)
        regrets = []
        for i in range(n):
            played = _logistic(s[:, i]).sum()
            best = _golden_min(
                lambda a, sp=s_prev[:, i], zi=z[:, i]: float(_logistic(sp + a * zi).sum())
            )
            regrets.append(played - best)
        regrets = np.array(regrets)
        norm1 = w.sum(axis=0)
        gamma = (w * z).sum(axis=0) / (2.0 * norm1)
        lhs = _logistic(s[:, -1]).sum() + 2.0 * (gamma**2 * norm1).sum()
        # O-OL-3; the golden-section min is ≥ the true min, so the right side is ≤ the exact one
        assert lhs <= horizon * math.log(2.0) + regrets.sum() + 1e-9 * horizon
        # O-OL-5: the textbook OGD bound (diameter 4, |f'| ≤ 1, η_t = 4/√t)
        assert (regrets <= 6.0 * math.sqrt(horizon) - 2.0).all()
        # O-OL-4: 2‖w^i‖₁ ≥ M_{i−1}, M_{i−1} = #{t : s_t^{i−1} ≤ 0}, M_0 = T
        m_prev = (s_prev <= 0.0).sum(axis=0)
        assert m_prev[0] == horizon and (2.0 * norm1 >= m_prev).all()
        # O-OL-7: Hedge (η = 1) on the experts' 0/1 losses, in expectation over the draw
        losses = (s <= 0.0).astype(float)
        expected = (dists[r] * losses).sum()
        assert expected <= (losses.sum(axis=0).min() + math.log(n)) / (1.0 - math.exp(-1.0))
    totals = booster.learner_totals()
    np.testing.assert_allclose(totals["weight"][0], hist[0]["w"].sum(axis=0), atol=1e-10)


# ----------------------------------------------------------------------------------------------
# O-OL-1: invariants, and no NaN after 10⁴ mistakes


class ConstantLearner(WeakLearner):
    """Every lane always outputs +1 and learns nothing (so the labels decide every z)."""

    name = "constant_plus"
    tasks: ClassVar[frozenset[str]] = frozenset({"classification"})

    def reset(self, spec: WeakSpec, rngs: Sequence[Sequence[np.random.Generator]]) -> None:
        self._shape = (spec.n_replicates, spec.n_lanes)

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.ones(self._shape)

    def update(self, x: np.ndarray, target: np.ndarray, weight: np.ndarray) -> None:
        pass


def test_invariants_hold_after_ten_thousand_mistakes():
    """Labels chosen against expert N's vote (−1 on a tie): expert N errs every round, and every
    expert errs far beyond the ~745 mistakes where ``e^{−M}`` underflows to 0."""
    n, horizon = 3, 10_000
    booster = AdaBoostOL(n_learners=n, weak_learner=ConstantLearner())
    booster.reset(_spec(1, horizon, 1), _rngs(0, 1))
    x = np.zeros((1, 1))
    mistakes = np.zeros(n)
    for _ in range(horizon):
        margin_n = booster.alphas().sum()  # every learner votes +1
        y = np.array([-1.0 if margin_n >= 0 else 1.0])
        booster.predict(x)
        alpha_before = booster.alphas()
        booster.update(x, y)
        mistakes += y * np.cumsum(alpha_before[0]) <= 0
    p = booster.expert_distribution()
    assert mistakes[-1] == horizon and mistakes.min() > 745
    assert np.isfinite(p).all() and abs(p.sum() - 1.0) < 1e-12
    assert (np.abs(booster.alphas()) <= 2.0).all()
    totals = booster.learner_totals()
    # every w_t ∈ (0, 1): the sum over T rounds is strictly between 0 and T
    assert (totals["weight"] > 0).all() and (totals["weight"] < horizon).all()


@pytest.mark.parametrize("mode", sorted(BOOSTERS))
def test_alpha_and_weights_stay_in_range(mode):
    x, y = _streams("random", 2, 200, 2, seed=1)
    _, hist = transcription(mode == "sampling", x, y, 2, 6, 1.0)
    for h in hist:
        assert (np.abs(h["alpha"]) <= 2.0).all()
        assert ((h["w"] > 0.0) & (h["w"] < 1.0)).all()
        assert np.isfinite(h["p"]).all() and np.allclose(h["p"].sum(axis=1), 1.0, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# O-OL-2: the OGD step is projected gradient descent on f_t(α) = ℓ(s^{i−1} + αz)


def test_ogd_step_is_a_projected_gradient_step():
    rng = np.random.default_rng(0)
    alpha = rng.uniform(-2, 2, 500)
    s_prev = rng.uniform(-8, 8, 500)
    z = rng.choice([-1.0, 1.0], 500)
    t = rng.integers(1, 1000, 500)
    eps = 1e-6
    for a, sp, zz, tt in zip(alpha, s_prev, z, t, strict=True):
        f = lambda al, sp=sp, zz=zz: float(_logistic(sp + al * zz))  # noqa: E731
        slope = (f(a + eps) - f(a - eps)) / (2 * eps)  # central difference: error ~1e-11
        expected = min(2.0, max(-2.0, a - 4.0 / math.sqrt(tt) * slope))
        got = ogd_alpha_step(np.array([a]), np.array([zz]), np.array([sp + a * zz]), int(tt))
        assert abs(got[0] - expected) < 1e-8


# ----------------------------------------------------------------------------------------------
# O-OL-6: Lemma 10


def test_lemma_10_on_a_grid():
    sigma = np.linspace(0.0, 1.0, 100_001)
    with np.errstate(divide="ignore"):
        raw = 0.5 * np.log(sigma / (1.0 - sigma))
    cap = 0.5 * math.log(19.0)
    alpha = np.clip(raw, -cap, cap)
    value = sigma * np.exp(-alpha) + (1.0 - sigma) * np.exp(alpha)
    assert (np.abs(alpha) <= 2.0).all()
    assert (value <= 1.0 - 0.5 * (2.0 * sigma - 1.0) ** 2 + 1e-12).all()


# ----------------------------------------------------------------------------------------------
# the arena's game, the held-out score and refusals


def test_game_learns_and_score_is_pure():
    run = run_game(
        AdaBoostOL(n_learners=5, weak_learner=LaneSGD()),
        ThresholdStream(noise=0.0),
        n_actions=2,
        horizon=300,
        replicates=2,
        metrics=["mistakes", "learners_used", "weighted_edge"],
    )
    last = run.rows[(run.rows.t == 300) & (run.rows.metric == "mistakes")]
    assert (last.value < 100).all()
    booster = AdaBoostOL(n_learners=3, weak_learner=LaneSGD())
    x, y = _streams("threshold", 2, 50, 2, seed=4)
    _play(booster, x, y, seed=4)
    before = (booster.alphas(), booster.expert_distribution())
    held = booster.score(x)
    again = booster.score(x)
    np.testing.assert_array_equal(held, again)
    np.testing.assert_array_equal(before[0], booster.alphas())
    assert held.shape == (2, 50) and np.isin(held, (-1.0, 0.0, 1.0)).all()


def test_bad_expert_player_is_refused():
    booster = AdaBoostOL(n_learners=3, weak_learner=LaneSGD(), expert_player="ogd")
    with pytest.raises(ConfigError, match="expert_player"):
        booster.reset(_spec(2, 10, 1), _rngs(0, 1))
    booster = AdaBoostOL(n_learners=3, weak_learner=LaneSGD(), expert_player_params={"eta": -1.0})
    with pytest.raises(ConfigError, match="expert_player_params"):
        booster.reset(_spec(2, 10, 1), _rngs(0, 1))
