"""Small deterministic OCO players and a literal per-round driver for the adaptive lower-bound
adversaries (contrarian, orthogonal_hinge, threshold_search, scale_lower_bound).

The players are deliberately tiny and written here, independent of ``players/``: the zero
learner, unconstrained OGD, the Perceptron, a learner with pseudo-random signs (it tries to foil
an adversary that would guess its sign), the Halving learner for thresholds, and the direction
``A_t^†θ_{t−1}`` of Kotłowski 2017's SI-FULL (whose prediction is a positive multiple of it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.oco.losses import feedback
from arena.oco.protocol import OCOPlayer
from arena.spec import GameSpec


def game_spec(adversary, dim: int, horizon: int | None, n_rep: int = 1) -> GameSpec:
    """The spec the engine builds for an OCO adversary (protocol, domain, loss from it)."""
    return GameSpec(
        adversary.tags.protocol,
        dim,
        horizon,
        n_replicates=n_rep,
        dim=dim,
        domain=adversary.declared_domain(),
        loss=adversary.declared_loss(),
        sigma=adversary.declared_sigma(),
        gradient_bound=adversary.gradient_bound(),
    )


def rngs(seed: int, n: int) -> list[np.random.Generator]:
    return [np.random.default_rng([seed, r]) for r in range(n)]


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


# ----------------------------------------------------------------------------------------------
# tiny players


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
