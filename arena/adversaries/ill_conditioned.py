"""The synthetic ill-conditioned classification stream of Luo's thesis §4.6.1 (a κ-family)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.adversaries._oco_stream import (
    DOMAIN,
    EXAMPLE_LOSS,
    StreamAdversary,
    haar_orthogonal,
    make_domain,
    row_dot,
    rows_times,
)
from arena.base import Footprint, shape_text
from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import POSITIVE, Interval, OneOf
from arena.spec import AdversaryTags, GameSpec

SPECTRA = ("offset", "linspace")

MAX_KAPPA = 1e15
"""Largest κ accepted: below ``1/ε ≈ 4.5·10¹⁵`` of float64. Beyond it the unit eigenvalues of
the covariance are below the rounding error of its largest, so the matrices a second-order
player accumulates are singular to working precision and the game no longer has the condition
number it is named for; long before κ = 10³⁰⁰ the features ``√κ·z`` make the squared losses and
the metrics' Gram matrices overflow."""


class _Kappa(Interval):
    """κ's range, with the reason for its upper end in the message."""

    def describe(self) -> str:
        return (
            f"{super().describe()} (above {MAX_KAPPA:.0e} the covariance is singular in float64 "
            "and the losses overflow)"
        )


def ill_conditioned_spectrum(
    dim: int, kappa: float, n_large: int = 10, spectrum: str = "offset"
) -> np.ndarray:
    """Return the covariance spectrum λ of the stream: ``d − k`` ones, then k values rising to κ.

    ``offset`` (our reading of the thesis's "increase linearly to κ"): ``λ_{d−k+j} = 1 +
    j(κ−1)/k`` for ``j = 1..k``;
    ``linspace``: the last k values are ``linspace(1, κ, k)``. Both end at ``λ_d = κ``.

    Examples
    --------
    >>> ill_conditioned_spectrum(4, 5.0, 2).tolist()
    [1.0, 1.0, 3.0, 5.0]
    >>> ill_conditioned_spectrum(4, 5.0, 2, "linspace").tolist()
    [1.0, 1.0, 1.0, 5.0]
    """
    lam = np.ones(int(dim))
    k = int(n_large)
    if k == 0:
        return lam
    if spectrum == "offset":
        lam[dim - k :] = 1.0 + np.arange(1, k + 1) * (kappa - 1.0) / k
    else:
        lam[dim - k :] = np.linspace(1.0, kappa, k)
    return lam


class IllConditioned(StreamAdversary):
    """Gaussian features, covariance ``V diag(λ) Vᵀ`` of condition number κ, labels ``sign⟨θ₀, z⟩``.

    Parameters
    ----------
    kappa : float
        The largest eigenvalue κ ≥ 1 of the feature covariance (the thesis sweeps κ ∈ {10, 20,
        …, 200}); the condition number is κ. At most :data:`MAX_KAPPA` = 10¹⁵, where float64
        can still tell the covariance from a singular one.
    n_large : int
        Number k of eigenvalues rising above 1 (the thesis: 10; needs k ≤ d).
    spectrum : {"offset", "linspace"}
        How the k values rise to κ (:func:`ill_conditioned_spectrum`).
    loss : {"squared", "hinge", "logistic", "absolute"}
        The convex loss charged.
        Luo 2016, §4.6, does not state its loss; the default ``squared`` (on ±1 labels) is our
        choice.
    domain : {"unconstrained", "ball", "box", "simplex"}
        The feasible set of ``w_t``.
    radius : float
        Radius of a ball or box domain.

    Notes
    -----
    Recipe of Luo 2016, §4.6.1 (the data of Figure 4.2), with its ambiguities resolved as below.
    Per replicate, at reset: ``V`` a Haar-random orthogonal d×d matrix (QR of a
    Gaussian matrix with the column-sign correction), then ``θ₀ ~ N(0, I_d)``. Round t draws
    ``z_t ~ N(0, I_d)`` (d normals, in round order) and shows

    ``x_t = M_κ z_t``,  ``M_κ = V diag(λ)^{1/2}``,  ``y_t = sign⟨θ₀, z_t⟩`` (+1 at 0),

    with λ from :func:`ill_conditioned_spectrum` (default d = 100, k = 10, "offset":
    ``λ_{90+j} = 1 + j(κ−1)/10``). The labels do not depend on κ (our reading of the thesis's
    "same Z, V and labels y"), so for one seed the games of different κ share ``z_t``, ``V``,
    ``θ₀`` and the labels: they are invertible linear transforms of the same problem,
    ``x^{κ'}_t = M_{κ'} M_κ^{-1} x^κ_t``, and a truly invariant learner behaves identically on
    all of them, as §4.6.1 notes. The thesis's horizon is T = 10,000 (pass it as
    ``horizon``); the stream itself is unbounded in t.

    Comparator (oracle ``comparator``): ``u* = V diag(λ)^{-1/2} θ₀/‖θ₀‖``, for which
    ``⟨u*, x_t⟩ = ⟨θ₀, z_t⟩/‖θ₀‖ ~ N(0, 1)`` and ``y_t = sign⟨u*, x_t⟩``: the data are separable
    by ``u*`` but without a margin. The features are Gaussian, hence unbounded: no gradient bound
    is declared.

    Examples
    --------
    >>> adv = IllConditioned(kappa=50.0, n_large=2)
    >>> adv.reset(GameSpec("classification", 5, 10, dim=5), [np.random.default_rng(0)])
    >>> rd = adv.data_block(1, 10)
    >>> bool(np.all(np.sign(rd.x[0] @ adv.comparator()[0]) == rd.y[0]))
    True

    References
    ----------
    Luo 2016, §4.6.1 and Figure 4.2.
    """

    tags = AdversaryTags(
        protocol="classification", oblivious=True, oracle=frozenset({"comparator"})
    )
    parameter_constraints: ClassVar = {
        "kappa": [_Kappa(1, MAX_KAPPA)],
        "n_large": [Interval(0, None, integer=True)],
        "spectrum": [OneOf(*SPECTRA)],
        "loss": EXAMPLE_LOSS,
        "domain": DOMAIN,
        "radius": [POSITIVE],
    }

    def __init__(
        self,
        kappa: float = 10.0,
        n_large: int = 10,
        spectrum: str = "offset",
        loss: str = "squared",
        domain: str = "unconstrained",
        radius: float = 1.0,
    ):
        self.kappa = kappa
        self.n_large = n_large
        self.spectrum = spectrum
        self.loss = loss
        self.domain = domain
        self.radius = radius

    def resolve_dim(self, requested: int | None) -> int:
        return 100 if requested is None else int(requested)

    def declared_domain(self) -> Domain:
        return make_domain(self.domain, self.radius)

    def declared_loss(self) -> str:
        return self.loss

    def gradient_bound(self) -> None:
        return None

    def footprint(self, spec: GameSpec) -> Footprint:
        """A d×d matrix M per replicate (from a Haar rotation: a QR of d×d at reset, and its
        d×d temporaries), and ``x = M z`` for every example: O(d²) per round and replicate."""
        n_rep, d = int(spec.n_replicates), int(spec.dim if spec.dim is not None else 1)
        return Footprint(
            memory=8 * (n_rep + 3) * d * d,
            work=2 * n_rep * d * d,
            setup=6 * n_rep * d**3,
            parameter="n_actions",
            what=f"d={d}: a {shape_text(n_rep, d, d)} float64 mixing matrix M",
        )

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        kappa = float(self.kappa)
        d = int(spec.dim)
        k = int(self.n_large)
        if k > d:
            raise ConfigError(self.label(), "n_large", f"must be an integer in [0, d] = [0, {d}]")
        lam = ill_conditioned_spectrum(d, kappa, k, self.spectrum)
        self._rngs = list(rngs)
        self._dim = d
        self._lam = lam
        self._mt = []  # Mᵀ = diag(√λ) Vᵀ per replicate (x = M z, rows: X = Z Mᵀ)
        self._theta = []
        self._u = np.empty((len(self._rngs), d))
        for r, rng in enumerate(self._rngs):
            v = haar_orthogonal(rng, d)
            theta = rng.standard_normal(d)
            self._mt.append(np.sqrt(lam)[:, None] * v.T)
            self._theta.append(theta)
            self._u[r] = v @ (theta / np.sqrt(lam)) / np.linalg.norm(theta)
        self._start_stream()

    def comparator(self) -> np.ndarray:
        return self._u.copy()

    def _generate(self, n: int) -> RoundData:
        d, n_rep = self._dim, len(self._rngs)
        x = np.empty((n_rep, n, d))
        y = np.empty((n_rep, n))
        for r, rng in enumerate(self._rngs):
            z = rng.standard_normal((n, d))
            x[r] = rows_times(z, self._mt[r])
            y[r] = np.where(row_dot(z, self._theta[r]) >= 0.0, 1.0, -1.0)
        return RoundData(x=x, y=y)

    @classmethod
    def _unit_test_params(cls):
        yield {"n_large": 2}
        yield {"kappa": 200.0, "n_large": 3, "spectrum": "linspace", "loss": "logistic"}
