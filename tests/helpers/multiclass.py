"""Helpers of the multiclass tests (multiclass_perceptron, multiclass_pa, the multiclass streams,
the multiclass hinge and its hindsight solver): specs, streams with a planted multiclass linear
target (Shalev-Shwartz 2007, §5.3.2), and the comparator quantities of the mistake bounds,
written here with plain numpy independently of :mod:`arena.oco.losses`.
"""

from __future__ import annotations

import numpy as np

from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.spec import GameSpec
from tests.helpers.oco import play_loop, play_split, reset

drive = play_loop
drive_blocks = play_split


def mc_spec(k: int, d: int, T: int, R: int = 1) -> GameSpec:
    """The GameSpec of a multiclass game with k labels and d features (w ∈ ℝ^{k·d})."""
    return GameSpec(
        "multiclass",
        k * d,
        T,
        n_replicates=R,
        dim=k * d,
        domain=Domain(),
        loss="multiclass_hinge",
        n_classes=k,
    )


def fresh(player, spec):
    """Clone and reset ``player`` for ``spec``; return it."""
    return reset(player.clone(), spec)


def random_stream(rng, R, T, d, k, scale=1.0):
    """Gaussian features and uniformly random labels 0 .. k−1."""
    x = scale * rng.standard_normal((R, T, d))
    y = rng.integers(0, k, size=(R, T)).astype(np.float64)
    return RoundData(x=x, y=y)


def separable_stream(rng, R, T, d, k, radius=1.0, flip=0.0):
    """Gaussian directions scaled into the ball of ``radius``, labelled by a planted U (R, k, d).

    Returns ``(data, U, gamma)``: ``U`` has unit Frobenius norm, labels are ``argmax_r ⟨u_r, x⟩``
    (a fraction ``flip`` replaced by another label) and ``gamma`` (R,) is the smallest clean
    margin ``⟨u_y − u_r, x⟩`` over the stream.
    """
    U = rng.standard_normal((R, k, d))
    U /= np.linalg.norm(U, axis=(1, 2), keepdims=True)
    x = rng.standard_normal((R, T, d))
    x *= (radius * rng.uniform(0.2, 1.0, size=(R, T)) / np.linalg.norm(x, axis=2))[..., None]
    scores = np.einsum("rkd,rtd->rtk", U, x)
    y = np.argmax(scores, axis=2)
    top2 = np.sort(scores, axis=2)[..., -2:]
    gamma = (top2[..., 1] - top2[..., 0]).min(axis=1)
    if flip:
        swap = rng.random((R, T)) < flip
        y = np.where(swap, (y + rng.integers(1, k, size=(R, T))) % k, y)
    return RoundData(x=x, y=y.astype(np.float64)), U, gamma


def margins(data: RoundData, U) -> np.ndarray:
    """Multiclass margins ``⟨u_y − u_s, x_t⟩`` (R, T) of U (R, k, d) against its top wrong label."""
    scores = np.einsum("rkd,rtd->rtk", np.asarray(U), data.x)
    labels = data.y.astype(int)
    own = np.take_along_axis(scores, labels[..., None], axis=2)[..., 0]
    wrong = np.where(np.arange(scores.shape[2]) == labels[..., None], -np.inf, scores)
    return own - wrong.max(axis=2)


def hinge_sum(data: RoundData, U, rounds=None, power=1) -> np.ndarray:
    """``Σ_t max_{r≠y_t}[1 − ⟨u_{y_t} − u_r, x_t⟩]₊^power`` per replicate over ``rounds``."""
    h = np.maximum(1.0 - margins(data, U), 0.0) ** power
    if rounds is not None:
        h = np.where(rounds, h, 0.0)
    return h.sum(axis=1)


def mistakes_of(W, data: RoundData) -> np.ndarray:
    """Mistake mask (R, T) of the played ``W_t`` (R, T, k·d): a tie for the top score counts."""
    R, T, _ = W.shape
    d = data.x.shape[2]
    scores = np.einsum("rtkd,rtd->rtk", W.reshape(R, T, -1, d), data.x)
    labels = data.y.astype(int)
    own = np.take_along_axis(scores, labels[..., None], axis=2)[..., 0]
    wrong = np.where(np.arange(scores.shape[2]) == labels[..., None], -np.inf, scores)
    return own <= wrong.max(axis=2)
