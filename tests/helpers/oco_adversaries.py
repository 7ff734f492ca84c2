"""Helpers of the OCO adversary tests.

Data adversaries (random_linear, separable_stream, ill_conditioned, strongly_convex,
dataset_stream, rescaled): the spec the engine builds, block splits and the per-round path,
replicate determinism, a literal player-against-adversary loop.

Adaptive lower-bound constructions (contrarian, orthogonal_hinge, threshold_search,
scale_lower_bound): a literal per-round driver recording every round and the declared lower
bounds, and small deterministic players written here, independent of ``arena/players/``: the zero
learner, unconstrained OGD, the Perceptron, a learner with pseudo-random signs (it tries to foil
an adversary that would guess its sign), the Halving learner for thresholds, and the direction
``A_t^†θ_{t−1}`` of Kotłowski 2017's SI-FULL (whose prediction is a positive multiple of it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arena.oco.components import OCOPlayer
from arena.oco.losses import RoundData, evaluate, feedback
from arena.spec import GameSpec
from tests.helpers import rngs
from tests.helpers.oco import stack_rounds

# ----------------------------------------------------------------------------------------------
# specs


def game_spec(adversary, dim: int, horizon: int | None, n_rep: int = 1) -> GameSpec:
    """The spec the engine builds for an OCO adversary at dimension ``dim`` (protocol, domain,
    loss, σ and gradient bound from the adversary)."""
    return GameSpec(
        adversary.tags.protocol,
        dim,
        horizon,
        n_replicates=n_rep,
        dim=dim,
        domain=adversary.declared_domain(),
        loss=adversary.declared_loss(),
        sigma=float(adversary.declared_sigma()),
        gradient_bound=adversary.gradient_bound(),
    )


def spec_for(adversary, n_rep: int = 2, horizon: int = 50, dim: int | None = None) -> GameSpec:
    """:func:`game_spec` at the dimension the adversary resolves ``dim`` to (None: its default)."""
    return game_spec(adversary, adversary.resolve_dim(dim), horizon, n_rep)


# ----------------------------------------------------------------------------------------------
# data adversaries


def fresh(adversary, spec: GameSpec, seed: int = 0, streams=None):
    """A reset clone driven by ``rngs(seed, R)`` (or the given streams)."""
    adv = adversary.clone()
    adv.reset(spec, rngs(seed, spec.n_replicates) if streams is None else streams)
    return adv


def blocks(adversary, spec: GameSpec, splits: Sequence[int], seed: int = 0) -> RoundData:
    """Concatenate ``data_block`` over consecutive blocks of the given sizes."""
    adv = fresh(adversary, spec, seed)
    parts, t0 = [], 1
    for n in splits:
        parts.append(adv.data_block(t0, n))
        t0 += n
    return RoundData(
        *(
            None if parts[0][k] is None else np.concatenate([p[k] for p in parts], axis=1)
            for k in range(4)
        )
    )


def per_round(adversary, spec: GameSpec, n: int, seed: int = 0) -> RoundData:
    """The data of the engine's per-round path: ``features(t)`` then ``reveal(t, w = 0)``."""
    adv = fresh(adversary, spec, seed)
    rounds = []
    for t in range(1, n + 1):
        x = adv.features(t)
        rd = adv.reveal(t, np.zeros((spec.n_replicates, spec.dim)))
        if x is not None:
            np.testing.assert_array_equal(rd.x, x)
        rounds.append(rd)
    return stack_rounds(rounds)


def assert_same(a: RoundData, b: RoundData) -> None:
    for name in RoundData._fields:
        u, v = getattr(a, name), getattr(b, name)
        assert (u is None) == (v is None), name
        if u is not None:
            np.testing.assert_array_equal(u, v, err_msg=name)


def assert_split_invariant(adversary, spec: GameSpec, seed: int = 0) -> RoundData:
    """Every split into blocks, and the per-round path, give bitwise the same data."""
    horizon = spec.horizon
    whole = blocks(adversary, spec, [horizon], seed)
    for splits in (
        [1] * horizon,
        [1, 2, horizon - 3],
        [horizon // 2, horizon - horizon // 2],
        [7, horizon - 7],
    ):
        assert_same(blocks(adversary, spec, splits, seed), whole)
    assert_same(per_round(adversary, spec, horizon, seed), whole)
    return whole


def assert_replicate_determinism(adversary, spec: GameSpec, seed: int = 0) -> None:
    """Replicate r's data depend only on its own stream (not on the batch), and differ across r."""
    streams = rngs(seed, spec.n_replicates)
    batch = fresh(adversary, spec, streams=streams).data_block(1, spec.horizon)
    again = blocks(adversary, spec, [spec.horizon], seed)
    assert_same(batch, again)
    last = spec.n_replicates - 1
    alone_spec = GameSpec(
        spec.protocol,
        spec.n_actions,
        spec.horizon,
        n_replicates=1,
        dim=spec.dim,
        domain=spec.domain,
        loss=spec.loss,
        sigma=spec.sigma,
        gradient_bound=spec.gradient_bound,
    )
    alone = fresh(adversary, alone_spec, streams=[rngs(seed, spec.n_replicates)[last]])
    one = alone.data_block(1, spec.horizon)
    for name in RoundData._fields:
        a, b = getattr(batch, name), getattr(one, name)
        if a is not None:
            np.testing.assert_array_equal(a[last], b[0], err_msg=name)
    if spec.n_replicates > 1:
        main = next(a for a in (batch.x, batch.z, batch.g) if a is not None)
        assert not np.array_equal(main[0], main[1])


def gradient_norms(spec: GameSpec, data: RoundData, w: np.ndarray) -> np.ndarray:
    """Subgradient norms the arena computes at points ``w`` (R, n, d) for a block of data."""
    _, grads, _, _ = evaluate(spec.loss, spec.sigma, w, data)
    return np.linalg.norm(grads, axis=-1)


def run_loop(player, adversary, spec: GameSpec, seed: int = 0, player_seed: int = 1):
    """Drive a player against an adversary round by round (features, predict, reveal, update).

    Returns the points (R, T, d), the predictions (R, T) (None for linear losses) and the data.
    """
    adv = fresh(adversary, spec, seed)
    p = player.clone()
    p.reset(spec, rngs(player_seed, spec.n_replicates))
    ws, preds, rounds = [], [], []
    for t in range(1, spec.horizon + 1):
        x = adv.features(t)
        w = np.array(p.predict(x), dtype=np.float64)
        rd = adv.reveal(t, w)
        fb = feedback(spec.loss, spec.sigma, w, rd)
        p.update(fb)
        ws.append(w)
        preds.append(fb.prediction)
        rounds.append(rd)
    data = stack_rounds(rounds)
    predictions = None if preds[0] is None else np.stack(preds, axis=1)
    return np.stack(ws, axis=1), predictions, data


# ----------------------------------------------------------------------------------------------
# adaptive lower-bound constructions


def drive(player, adversary, dim: int, horizon: int, n_rep: int = 1, seed: int = 0) -> dict:
    """Play a game with a literal per-round loop; return every round's quantities.

    Returns arrays with a round axis at position 1: ``w``, ``x`` (R, T, d), ``g`` (R, T, d) or
    None, ``y``, ``value``, ``prediction`` (R, T), ``comparator`` (R, T, d) after each round,
    and ``lower_bounds``, a list (one per round) of the declared dicts.
    """
    spec = game_spec(adversary, dim, horizon, n_rep)
    adversary.reset(spec, rngs(seed, n_rep))
    player.reset(spec, rngs(seed + 1, n_rep))
    out: dict[str, Any] = {k: [] for k in ("w", "x", "g", "y", "value", "prediction", "comp")}
    out["lower_bounds"] = []
    for t in range(1, horizon + 1):
        x = adversary.features(t)
        w = np.array(player.predict(x), dtype=np.float64)
        rd = adversary.reveal(t, w.copy())
        fb = feedback(spec.loss, spec.sigma, w, rd)
        player.update(fb)
        x_used = rd.x if rd.x is not None else x
        out["w"].append(w)
        out["x"].append(np.array(x_used))
        out["g"].append(None if rd.g is None else np.array(rd.g))
        out["y"].append(None if rd.y is None else np.array(rd.y))
        out["value"].append(np.array(fb.value))
        out["prediction"].append(np.einsum("ri,ri->r", x_used, w))
        if "comparator" in adversary.tags.oracle:
            out["comp"].append(np.array(adversary.comparator()))
        out["lower_bounds"].append(adversary.lower_bounds(t, player))
    res = {}
    for k in ("w", "x", "g", "y", "value", "prediction", "comp"):
        vals = out[k]
        res[k] = None if not vals or vals[0] is None else np.stack(vals, axis=1)
    res["lower_bounds"] = out["lower_bounds"]
    res["spec"] = spec
    return res


def declared(res: dict, key: tuple, n_rep: int) -> np.ndarray:
    """The declared lower bound ``key`` at every round, shape (R, T)."""
    return np.stack(
        [
            np.broadcast_to(np.asarray(lb[key], dtype=np.float64), (n_rep,))
            for lb in res["lower_bounds"]
        ],
        axis=1,
    )


class Zero(OCOPlayer):
    """``w_t = 0`` every round."""

    def __init__(self):
        pass

    def reset(self, spec, rngs):
        self._shape = (spec.n_replicates, spec.dim)

    def predict(self, x=None):
        return np.zeros(self._shape)

    def update(self, fb):
        pass


class OGD(OCOPlayer):
    """Unconstrained OGD ``w_{t+1} = w_t − η ∇f_t(w_t)`` from ``w_1 = w0`` (η: scalar or (R,))."""

    def __init__(self, eta=0.1, w0=0.0):
        self.eta = eta
        self.w0 = w0

    def reset(self, spec, rngs):
        self._w = np.full((spec.n_replicates, spec.dim), 0.0) + np.asarray(self.w0)
        self._eta = np.broadcast_to(np.asarray(self.eta, dtype=np.float64), (spec.n_replicates,))

    def predict(self, x=None):
        return self._w.copy()

    def update(self, fb):
        self._w = self._w - self._eta[:, None] * fb.grad


class Perceptron(OCOPlayer):
    """``w_1 = 0``; ``w_{t+1} = w_t + y_t x_t`` when ``y_t⟨w_t, x_t⟩ ≤ 0``."""

    def __init__(self):
        pass

    def reset(self, spec, rngs):
        self._w = np.zeros((spec.n_replicates, spec.dim))

    def predict(self, x=None):
        return self._w.copy()

    def update(self, fb):
        y, x = fb.data.y, fb.data.x
        mistake = y * np.einsum("ri,ri->r", x, fb.w) <= 0
        self._w = self._w + (mistake * y)[:, None] * x


class SignFoil(OCOPlayer):
    """Predicts ``ŷ_t = ±scale`` with pseudo-random signs from its own stream: ``w = ±x/‖x‖²``."""

    def __init__(self, scale=1.0):
        self.scale = scale

    def reset(self, spec, rngs):
        self._rngs = list(rngs)
        self._signs = np.array([rng.choice([-1.0, 1.0]) for rng in self._rngs])

    def predict(self, x=None):
        nrm = np.einsum("ri,ri->r", x, x)
        return (self.scale * self._signs / np.where(nrm > 0, nrm, 1.0))[:, None] * x

    def update(self, fb):
        self._signs = np.array([rng.choice([-1.0, 1.0]) for rng in self._rngs])


class Halving(OCOPlayer):
    """The Halving learner for thresholds on ``[n]``: majority vote of the consistent thresholds.

    Decodes the point from the features (``thermometer`` or ``one_hot``), keeps the consistent
    interval ``[l, r]`` and predicts +1 iff more consistent thresholds say +1 (``i ≥ x``) than
    −1; ``w = ±φ(x)/‖φ(x)‖²`` realizes that prediction.
    """

    def __init__(self, embedding="thermometer"):
        self.embedding = embedding

    def reset(self, spec, rngs):
        self._n = spec.dim
        self._l = np.ones(spec.n_replicates, dtype=np.int64)
        self._r = np.full(spec.n_replicates, spec.dim, dtype=np.int64)

    def _decode(self, x):
        if self.embedding == "thermometer":
            return self._n - np.rint(x.sum(axis=1)).astype(np.int64) + 1
        return np.argmax(x, axis=1) + 1

    def predict(self, x=None):
        q = self._decode(x)
        plus = np.clip(self._r - np.maximum(q, self._l) + 1, 0, None)
        minus = np.clip(np.minimum(q - 1, self._r) - self._l + 1, 0, None)
        sign = np.where(plus > minus, 1.0, -1.0)
        return (sign / np.einsum("ri,ri->r", x, x))[:, None] * x

    def update(self, fb):
        q = self._decode(fb.data.x)
        y = fb.data.y
        self._r = np.where(y < 0, np.minimum(self._r, q - 1), self._r)
        self._l = np.where(y > 0, np.maximum(self._l, q), self._l)


class SIDirection(OCOPlayer):
    """``w_t = κ·A_t^†θ_{t−1}`` with ``A_t = Σ_{s≤t} x_s x_sᵀ`` (``x_t`` included, as SI-FULL).

    ``θ_{t−1} = −Σ_{s<t} ∇f_s`` (linear losses in the prediction: ``∇f_s = ℓ'_s x_s``). SI-FULL
    (Kotłowski 2017, Algorithm 2) predicts a positive multiple ``E_t/α`` of this ``w_t``; so does
    the learner that predicts with the sign of ``x_tᵀA^{-1}θ`` to foil the exact variant (§2.6(A)).
    """

    def __init__(self, kappa=1.0):
        self.kappa = kappa

    def reset(self, spec, rngs):
        self._a = np.zeros((spec.n_replicates, spec.dim, spec.dim))
        self._theta = np.zeros((spec.n_replicates, spec.dim))

    def predict(self, x=None):
        a = self._a + x[:, :, None] * x[:, None, :]
        return self.kappa * np.einsum("rij,rj->ri", np.linalg.pinv(a, hermitian=True), self._theta)

    def update(self, fb):
        x = fb.data.x
        self._a = self._a + x[:, :, None] * x[:, None, :]
        self._theta = self._theta - fb.grad
