"""Sparse examples with a planted linear model: rows of about ``nnz`` non-zeros out of d."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.adversaries._oco_stream import (
    DOMAIN,
    InstanceTags,
    StreamAdversary,
    example_gradient_bound,
    make_domain,
    uniforms_from_normals,
    unit_vector,
)
from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import EXAMPLE_LOSSES, RoundData, SparseRows
from arena.params import NON_NEGATIVE, POSITIVE, Interval, IsNone, OneOf
from arena.spec import AdversaryTags, GameSpec

TASKS = ("classification", "regression")
REPRESENTATIONS = ("sparse", "dense")


class SparseStream(StreamAdversary):
    """Sparse examples: ``x_t`` has about ``nnz`` random non-zero coordinates and ``‖x_t‖₂ = 1``.

    The stand-in for the sparse LIBSVM sets of the sources (text, ``rcv1``, ``news20``: tens of
    thousands of features, tens to hundreds of non-zeros a row, rows normalized) until a user's
    file is read: it emits :class:`~arena.oco.losses.SparseRows`, so players tagged
    ``sparse_input`` run in O(nnz) a round, and with ``representation="dense"`` the very same
    examples as dense arrays (the stream's seed ignores ``representation``), for sparse-against-
    dense comparisons of a player, replicate by replicate.

    Parameters
    ----------
    nnz : int
        Coordinates drawn per row (≥ 1), uniformly with replacement; repeats are dropped, so a
        row has at most ``nnz`` non-zeros (exactly ``nnz`` with probability about
        ``1 − nnz²/(2d)``).
    task : {"classification", "regression"}
        Labels ``sign⟨u*, x_t⟩`` (0 counts as +1), each flipped with probability ``noise``; or
        ``⟨u*, x_t⟩ + noise·ξ_t`` with ``ξ_t`` standard normal.
    noise : float
        Flip probability in [0, 1] (classification) or the noise's standard deviation ≥ 0.
    loss : {"hinge", "logistic", "absolute", "squared"} or None
        The loss charged; None: hinge (classification) or squared (regression).
    domain : {"unconstrained", "ball", "box", "simplex"}
        The feasible set of ``w_t``.
    radius : float
        Radius of a ball or half-width of a box domain.
    representation : {"sparse", "dense"}
        How the features are emitted (the examples do not change).
    test_size : int
        Number m ≥ 0 of i.i.d. examples of the same law held out per replicate (oracle
        ``test_split``, read by the ``online_to_batch`` metric), drawn at reset after ``u*``, in
        the stream's representation; the stream never shows them.

    Notes
    -----
    Per replicate a planted unit vector ``u*`` (uniform on the sphere of ℝ^d) is drawn at reset.
    Round t consumes ``2·nnz + 2`` standard normals ``z`` of the replicate's stream, whatever the
    task and noise: the coordinates ``⌊d·Φ(z_k)⌋`` and the values ``z_{nnz+k}`` (k < nnz), sorted
    by coordinate with repeats after the first dropped, then the row divided by its norm; the
    label's uniform ``Φ(z_{2nnz})`` and normal ``z_{2nnz+1}``. So a split of the rounds into
    blocks never changes the data, and the features do not depend on the task or the noise. The
    declared gradient bound is that of rows of norm 1 (:func:`example_gradient_bound`).

    Examples
    --------
    >>> adv = SparseStream(nnz=3)
    >>> adv.reset(GameSpec("classification", 1000, 5, dim=1000), [np.random.default_rng(0)])
    >>> x = adv.data_block(1, 5).x
    >>> x.shape, x.nnz, np.allclose(x.row_norms_sq(), 1.0)
    ((1, 5, 1000), 15, True)
    """

    parameter_constraints: ClassVar = {
        "nnz": [Interval(1, None, integer=True)],
        "task": [OneOf(*TASKS)],
        "noise": [NON_NEGATIVE],
        "loss": [OneOf(*EXAMPLE_LOSSES), IsNone()],
        "domain": DOMAIN,
        "radius": [POSITIVE],
        "representation": [OneOf(*REPRESENTATIONS)],
        "test_size": [Interval(0, None, integer=True)],
    }
    tags = InstanceTags(AdversaryTags(protocol="classification", oblivious=True))

    def __init__(
        self,
        nnz: int = 50,
        task: str = "classification",
        noise: float = 0.0,
        loss: str | None = None,
        domain: str = "unconstrained",
        radius: float = 1.0,
        representation: str = "sparse",
        test_size: int = 0,
    ):
        self.nnz = nnz
        self.task = task
        self.noise = noise
        self.loss = loss
        self.domain = domain
        self.radius = radius
        self.representation = representation
        self.test_size = test_size

    def _instance_tags(self) -> AdversaryTags:
        oracle = frozenset({"test_split"}) if self.test_size else frozenset()
        return AdversaryTags(protocol=self.task, oblivious=True, oracle=oracle)

    def stream_identity(self) -> tuple[str, dict]:
        """The seed ignores ``representation``: both emit the same examples."""
        name, params = super().stream_identity()
        return name, {k: v for k, v in params.items() if k != "representation"}

    def sparse_features(self) -> bool:
        return self.representation == "sparse"

    def declared_domain(self) -> Domain:
        return make_domain(self.domain, self.radius)

    def declared_loss(self) -> str:
        if self.loss is not None:
            return self.loss
        return "hinge" if self.task == "classification" else "squared"

    def feature_bound(self) -> float:
        return 1.0

    def gradient_bound(self) -> float | None:
        """``|ℓ'|·‖x‖`` with ``‖x‖ = 1``: labels ±1, or ``|y| = |⟨u*, x⟩| ≤ 1`` in noiseless
        regression (hinge and logistic then have ``|ℓ'| ≤ |y| ≤ 1``); with regression noise
        only the absolute loss stays bounded (``|ℓ'| ≤ 1``)."""
        loss = self.declared_loss()
        if self.task == "regression" and self.noise:
            return 1.0 if loss == "absolute" else None
        return example_gradient_bound(loss, self.declared_domain(), 1.0, 1.0)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        if self.task == "classification" and self.noise > 1:
            raise ConfigError(
                self.label(), "noise", f"is a probability in classification, got {self.noise}"
            )
        self._dim = int(spec.dim)
        self._rngs = list(rngs)
        self._u = np.stack([unit_vector(rng, self._dim) for rng in self._rngs])
        self._test = self._generate(int(self.test_size)) if self.test_size else None
        self._start_stream()

    def _generate(self, n: int) -> RoundData:
        k, d, n_rep = int(self.nnz), self._dim, len(self._rngs)
        indptrs, indices, values = [np.zeros(1, dtype=np.int64)], [], []
        y = np.empty((n_rep, n))
        offset = 0
        for r, rng in enumerate(self._rngs):
            z = rng.standard_normal((n, 2 * k + 2))
            cols = np.minimum((uniforms_from_normals(z[:, :k]) * d).astype(np.int64), d - 1)
            order = np.argsort(cols, axis=1, kind="stable")
            cols = np.take_along_axis(cols, order, axis=1)
            vals = np.take_along_axis(z[:, k : 2 * k], order, axis=1)
            keep = np.ones((n, k), dtype=bool)
            keep[:, 1:] = cols[:, 1:] != cols[:, :-1]
            vals = np.where(keep, vals, 0.0)
            norms = np.sqrt(np.einsum("nk,nk->n", vals, vals))
            vals /= np.where(norms > 0, norms, 1.0)[:, None]
            margin = np.einsum("nk,nk->n", vals, self._u[r][cols])
            if self.task == "classification":
                sign = np.where(margin >= 0.0, 1.0, -1.0)
                y[r] = np.where(uniforms_from_normals(z[:, 2 * k]) < self.noise, -sign, sign)
            else:
                y[r] = margin + float(self.noise) * z[:, 2 * k + 1]
            counts = keep.sum(axis=1)
            indptrs.append(offset + np.cumsum(counts))
            offset += int(counts.sum())
            indices.append(cols[keep])
            values.append(vals[keep])
        x = SparseRows(
            np.concatenate(indptrs), np.concatenate(indices), np.concatenate(values), (n_rep, n, d)
        )
        return RoundData(x=x if self.representation == "sparse" else x.densify(), y=y)

    @classmethod
    def _unit_test_params(cls):
        yield {"nnz": 3}
        yield {"nnz": 2, "task": "regression", "noise": 0.1, "representation": "dense"}
        yield {"nnz": 4, "noise": 0.1, "loss": "logistic", "domain": "ball"}
        yield {"nnz": 3, "test_size": 20}
