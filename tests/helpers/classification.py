"""Helpers of the linear-classifier tests (perceptron, aggressive_perceptron, passive_aggressive,
pnorm_perceptron, winnow, primal_dual): specs, drivers and the few streams the mistake-bound and
transcription tests need (Shalev-Shwartz 2007, Theorem 4 and §5.1.2; separable data for Srebro,
Lecture 16). The registered adversaries are tested in ``tests/adversaries/``.
"""

from __future__ import annotations

import numpy as np

from arena.oco.domains import Domain
from arena.oco.losses import RoundData, feedback
from tests.helpers.oco import make_spec, play_loop, play_split, reset

drive = play_loop
"""Play a block of data round by round via predict/update (:func:`tests.helpers.oco.play_loop`)."""

drive_blocks = play_split
"""Play a block of data through ``play_block`` in consecutive blocks ending at the given rounds
(:func:`tests.helpers.oco.play_split`)."""


def spec_for(
    d,
    T,
    R=1,
    protocol="classification",
    domain=None,
    loss="hinge",
    gradient_bound=None,
    sigma=0.0,
):
    """The GameSpec of a game the tests drive by hand (:func:`tests.helpers.oco.make_spec` with
    the defaults of classification: hinge loss, unconstrained)."""
    domain = Domain() if domain is None else domain
    return make_spec(d, T, R, domain, loss, sigma, gradient_bound, protocol)


def fresh(player, spec):
    """Clone and reset ``player`` for ``spec``; return it."""
    return reset(player.clone(), spec)


def random_stream(rng, R, T, d, ternary=False, scale=1.0):
    """Random features (Gaussian, or in {−1, 0, 1}) and random ±1 labels."""
    if ternary:
        x = rng.integers(-1, 2, size=(R, T, d)).astype(np.float64)
    else:
        x = scale * rng.standard_normal((R, T, d))
    y = rng.choice([-1.0, 1.0], size=(R, T))
    return RoundData(x=x, y=y)


def separable_stream(rng, R, T, d, gamma=0.2, radius=1.0, flip=0.0):
    """Features in the ball of radius ``radius`` with margin ≥ γ·radius to a planted unit u.

    Returns ``(data, u)``: u (R, d) unit vectors and labels ``sign⟨u, x_t⟩`` (a fraction ``flip``
    of them flipped: label noise). ``x = s·a·u + v`` with ``a ~ U[γ·radius, radius]``, a random
    sign s and ``v ⊥ u`` of norm at most ``√(radius² − a²)``.
    """
    u = rng.standard_normal((R, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    a = rng.uniform(gamma * radius, radius, size=(R, T))
    s = rng.choice([-1.0, 1.0], size=(R, T))
    v = rng.standard_normal((R, T, d))
    v -= np.einsum("rtd,rd->rt", v, u)[..., None] * u[:, None, :]
    v /= np.linalg.norm(v, axis=2, keepdims=True)
    v *= (rng.uniform(0.0, 1.0, size=(R, T)) * np.sqrt(radius**2 - a**2))[..., None]
    x = (s * a)[..., None] * u[:, None, :] + v
    y = s.copy()
    if flip:
        y = np.where(rng.random((R, T)) < flip, -y, y)
    return RoundData(x=x, y=y), u


def r_of_k_stream(rng, R, T, n, r, k, flip=0.0):
    """Boolean r-of-k targets on {0, 1}^{n−1} with a last constant −1 feature (Shalev-Shwartz 2007,
    §5.1.2).

    Returns ``(data, relevant)``; labels are +1 iff at least r of the k relevant bits are on.
    """
    relevant = np.stack([rng.choice(n - 1, size=k, replace=False) for _ in range(R)])
    x = np.zeros((R, T, n))
    # relevant bits on with probability r/k so both labels are frequent; others sparse
    bits = rng.random((R, T, n - 1)) < 0.1
    for i in range(R):
        bits[i][:, relevant[i]] = rng.random((T, k)) < r / k
    x[..., : n - 1] = bits
    x[..., n - 1] = -1.0
    on = np.stack([x[i][:, relevant[i]].sum(axis=1) for i in range(R)])
    y = np.where(on >= r, 1.0, -1.0)
    if flip:
        y = np.where(rng.random((R, T)) < flip, -y, y)
    return RoundData(x=x, y=y), relevant


def r_of_k_comparator(n, r, k, relevant):
    """The simplex comparator of Shalev-Shwartz 2007, §5.1.2 and its margin γ = ½/(r + k − ½)."""
    u = np.zeros(n)
    u[relevant] = 1.0 / (r + k - 0.5)
    u[n - 1] = (r - 0.5) / (r + k - 0.5)
    return u, 0.5 / (r + k - 0.5)


def hinge_sum(data: RoundData, u, gamma=1.0, rounds=None):
    """``Σ_t [γ − y_t⟨u, x_t⟩]₊`` per replicate over ``rounds`` (bool mask (R, T); None: all)."""
    u = np.asarray(u, dtype=np.float64)
    if u.ndim == 1:
        u = np.broadcast_to(u, (data.x.shape[0], u.size))
    h = np.maximum(gamma - data.y * np.einsum("rtd,rd->rt", data.x, u), 0.0)
    if rounds is not None:
        h = np.where(rounds, h, 0.0)
    return h.sum(axis=1)


def mistakes_of(W, data: RoundData):
    """Mistake mask (R, T): ``y_t⟨w_t, x_t⟩ ≤ 0``."""
    return data.y * np.einsum("rtd,rtd->rt", W, data.x) <= 0.0


def orthogonal_adversary(player, T):
    """Shalev-Shwartz 2007, proof of Theorem 4 (one replicate): ``x_t = e_t`` in d = T, ``y_t = −1``
    iff ``w_{t,t} ≥ 0``.

    Returns ``(mistakes, labels)`` of the run.
    """
    spec = spec_for(T, T)
    p = fresh(player, spec)
    labels = np.empty(T)
    mistakes = 0
    for t in range(T):
        x = np.zeros((1, T))
        x[0, t] = 1.0
        w = p.predict(x)
        y = -1.0 if w[0, t] >= 0.0 else 1.0
        labels[t] = y
        fb = feedback("hinge", 0.0, w, RoundData(x=x, y=np.array([y])))
        mistakes += int(y * fb.prediction[0] <= 0.0)
        p.update(fb)
    return mistakes, labels
