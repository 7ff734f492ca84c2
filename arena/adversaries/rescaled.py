"""The scale-invariance attack: any data adversary with its features rescaled by a fixed map."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from arena.adversaries._oco_stream import InstanceTags, haar_orthogonal
from arena.errors import ConfigError
from arena.oco.components import OCOAdversary
from arena.oco.domains import Domain
from arena.oco.losses import RoundData, dense_features
from arena.params import POSITIVE, InstanceOf, Interval, IsNone, ListOf, OneOf
from arena.spec import AdversaryTags, GameSpec

MODES = ("diagonal", "linear")


class Rescaled(OCOAdversary):
    """Wrap a data adversary and show ``x ↦ C x`` (diagonal) or ``x ↦ M x`` (invertible linear).

    Parameters
    ----------
    base : str or OCOAdversary
        The wrapped adversary: a registry name (built with
        ``arena.registry.make("adversary", base, **base_params)``) or an instance (cloned, with
        ``base_params`` as overrides). Oblivious and adaptive bases are both accepted.
    base_params : dict or None
        Parameters of the base.
    mode : {"diagonal", "linear"}
        ``diagonal``: a fixed diagonal ``C = diag(c)`` whose magnitudes are
        ``geomspace(lo, hi, d)`` in a random order, with random signs; ``linear``: a fixed random
        ``M = U diag(s) Vᵀ`` with ``U, V`` Haar-orthogonal and singular values
        ``s = geomspace(lo, hi, d)``, so its condition number is exactly ``hi/lo`` (d ≥ 2).
    scale_range : list of float
        ``[lo, hi]``, ``0 < lo ≤ hi`` (e.g. ``[1e-6, 1e6]`` for an extreme attack; the default
        spans 10⁶).
    seed_offset : int
        Chooses an independent rescaling stream for the same data (see Notes).

    Notes
    -----
    The base's data are transformed round by round: features ``x_t ↦ M x_t`` (and linear
    losses ``g_t ↦ M g_t``), labels unchanged. Predictions of a linear predictor are preserved
    under the covariant map of comparators ``u ↦ M^{-T}u`` (diagonal: ``u ↦ C^{-1}u``):
    ``⟨M^{-T}u, M x⟩ = ⟨u, x⟩``, so the declared comparator (oracle ``comparator``, kept when the
    base declares one) is the base's, transformed, and has the same losses. A coordinate-wise
    scale-invariant learner predicts the same on the base and on the ``diagonal`` rescaling, a
    fully invariant one also under ``linear`` rescaling (Kotłowski 2017, §3 and §4; Luo 2016,
    §4.2), whereas OGD's predictions change (its iterates live in the original geometry): this is
    the scale-invariance attack.

    An adaptive base sees the player's point mapped back to its own coordinates, ``Mᵀw_t``
    (``⟨w_t, M x⟩ = ⟨Mᵀw_t, x⟩``), so it reacts to the same predictions.

    The map is drawn at reset from the adversary's own stream without consuming it: replicate
    r's matrix comes from a generator at ``rngs[r]`` jumped ahead by ``(1 + seed_offset)·2¹²⁸``
    draws (PCG64 ``jumped``), and the base is reset with the untouched ``rngs``. Driven with the
    same generators, the base alone and its rescaling therefore produce the same underlying data;
    :meth:`stream_identity` makes the engine seed the rescaled game with the base's stream, so
    through :func:`arena.play` too, replicate r of ``rescaled`` shows exactly replicate r's
    examples of the base, transformed. Draw order: ``diagonal``: a permutation of the d magnitudes,
    then d uniforms for the signs (``−`` iff ``U < ½``); ``linear``: ``U``, then ``V``.

    The domain, loss and horizon are the base's; the σ-term ``(σ/2)‖w − z‖²`` is not
    rescaling-covariant, so bases with σ > 0 are refused. With a bounded domain the rescaled game
    is a different game (the feasible set is not transformed); the attack is meant for
    unconstrained learners. Declared gradient bound: ``hi·G_base`` for linear losses,
    ``hi·X_base`` for hinge, absolute and logistic losses when the base declares a feature bound
    ``X_base`` (``feature_bound()``), none otherwise.

    Examples
    --------
    >>> from arena.adversaries.separable_stream import SeparableStream
    >>> base, adv = SeparableStream(), Rescaled(SeparableStream(), mode="linear")
    >>> spec = GameSpec("classification", 4, 5, dim=4)
    >>> base.reset(spec, [np.random.default_rng(0)]); adv.reset(spec, [np.random.default_rng(0)])
    >>> x0, x1 = base.data_block(1, 5).x[0], adv.data_block(1, 5).x[0]
    >>> np.allclose(x0 @ base.comparator()[0], x1 @ adv.comparator()[0])  # ⟨u, x⟩ preserved
    True
    >>> np.allclose(x0, x1)
    False

    References
    ----------
    Kotłowski 2017 (scale-invariant unconstrained online learning); Kempka, Kotłowski & Warmuth
    (2019); Luo 2016, invariance under ``x ↦ Mx`` (§4.2 and Appendix C.2).
    """

    tags = InstanceTags(
        AdversaryTags(protocol="classification", oblivious=True, oracle=frozenset({"comparator"}))
    )
    parameter_constraints: ClassVar = {
        "base": [
            InstanceOf(str, "a data adversary's registry name"),
            InstanceOf(OCOAdversary, "an OCO adversary"),
        ],
        "base_params": [InstanceOf(Mapping, "a mapping of the base's parameters"), IsNone()],
        "mode": [OneOf(*MODES)],
        "scale_range": [ListOf(POSITIVE)],
        "seed_offset": [Interval(0, None, integer=True)],
    }

    def __init__(
        self,
        base: Any = "separable_stream",
        base_params: dict | None = None,
        mode: str = "diagonal",
        scale_range: Sequence[float] = (1e-3, 1e3),
        seed_offset: int = 0,
    ):
        self.base = base
        self.base_params = base_params
        self.mode = mode
        self.scale_range = scale_range
        self.seed_offset = seed_offset

    # -- the base ----------------------------------------------------------------------------

    def _make_base(self) -> OCOAdversary:
        params = dict(self.base_params or {})
        if isinstance(self.base, str):
            from arena import registry

            obj = registry.make("adversary", self.base, **params)
        else:
            obj = self.base.clone(**params)
        if not isinstance(obj, OCOAdversary):  # a registry name of an experts adversary
            raise ConfigError(
                self.label(), "base", f"{self.base!r} is not an OCO / classification adversary"
            )
        return obj

    def _base(self) -> OCOAdversary:
        obj = self.__dict__.get("_base_obj")
        if obj is None:
            obj = self._make_base()
            self._base_obj = obj
        return obj

    def data_identity(self) -> dict[str, str]:
        return self._base().data_identity()

    def data_provenance(self) -> dict[str, str]:
        return self._base().data_provenance()

    def stream_identity(self) -> tuple[str, dict]:
        """The base's identity: the base and every rescaling of it share the data stream, so the
        engine pairs them replicate by replicate (the rescaling map has its own jumped stream)."""
        return self._base().stream_identity()

    def _instance_tags(self) -> AdversaryTags:
        bt = self._base().tags
        return AdversaryTags(
            protocol=bt.protocol,
            oblivious=bt.oblivious,
            oracle=frozenset(bt.oracle) & {"comparator"},
            needs_horizon=bt.needs_horizon,
        )

    def _range(self) -> tuple[float, float]:
        # each scale is declared positive; that they are a pair [lo, hi] with lo ≤ hi is not
        sr = list(self.scale_range)
        if len(sr) != 2 or sr[0] > sr[1]:
            message = f"must be [lo, hi] with lo ≤ hi, got {sr!r}"
            raise ConfigError(self.label(), "scale_range", message)
        return float(sr[0]), float(sr[1])

    # -- game constants: the base's ----------------------------------------------------------

    def resolve_dim(self, requested: int | None) -> int:
        return self._base().resolve_dim(requested)

    def declared_domain(self) -> Domain:
        return self._base().declared_domain()

    def declared_loss(self) -> str:
        return self._base().declared_loss()

    def declared_sigma(self) -> float:
        return self._base().declared_sigma()

    def gradient_bound(self) -> float | None:
        _, hi = self._range()
        base = self._base()
        loss = base.declared_loss()
        if loss == "linear":
            g = base.gradient_bound()
            return None if g is None or base.declared_sigma() else hi * float(g)
        if loss in ("hinge", "absolute", "logistic"):
            fb = getattr(base, "feature_bound", None)
            x_max = fb() if callable(fb) else None
            return None if x_max is None else hi * float(x_max)
        return None

    # -- reset ---------------------------------------------------------------------------------

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        lo, hi = self._range()
        off = self.seed_offset
        base = self._base()
        if base.declared_sigma():
            raise ConfigError(
                self.label(),
                "base",
                "the σ-term (σ/2)‖w − z‖² is not rescaling-covariant (σ must be 0)",
            )
        d = int(spec.dim)
        mags = np.geomspace(lo, hi, d)
        n_rep = len(rngs)
        if self.mode == "diagonal":
            self._c = np.empty((n_rep, d))
        else:
            self._m = np.empty((n_rep, d, d))
            self._m_inv_t = np.empty((n_rep, d, d))
        for r, rng in enumerate(rngs):
            child = _side_stream(rng, int(off))
            if self.mode == "diagonal":
                perm = child.permutation(d)
                signs = np.where(child.random(d) < 0.5, -1.0, 1.0)
                self._c[r] = signs * mags[perm]
            else:
                u, v = haar_orthogonal(child, d), haar_orthogonal(child, d)
                self._m[r] = (u * mags) @ v.T
                self._m_inv_t[r] = (u / mags) @ v.T
        self._shown: tuple[int, np.ndarray, np.ndarray] | None = None
        base.reset(spec, rngs)

    # -- transforms ------------------------------------------------------------------------------

    def _forward(self, a: np.ndarray) -> np.ndarray:
        """``a ↦ M a`` on the last axis; ``a`` is (R, d) or (R, n, d) (a sparse base's rows are
        densified: the rescaled rows are dense, and this stream declares no sparse features)."""
        a = np.asarray(dense_features(a), dtype=np.float64)
        if self.mode == "diagonal":
            return a * (self._c if a.ndim == 2 else self._c[:, None, :])
        # (M a)_i = Σ_j M_ij a_j summed in j order: bitwise the same whatever the block size
        m = self._m if a.ndim == 2 else self._m[:, None]
        out = a[..., 0, None] * m[..., 0]
        for j in range(1, a.shape[-1]):
            out += a[..., j, None] * m[..., j]
        return out

    def _back(self, w: np.ndarray) -> np.ndarray:
        """``w ↦ Mᵀ w`` (the base-coordinates point with the same predictions)."""
        w = np.asarray(w, dtype=np.float64)
        if self.mode == "diagonal":
            return w * self._c
        return np.einsum("rj,rji->ri", w, self._m)

    def _transform(self, rd: RoundData) -> RoundData:
        if rd.z is not None:
            raise ValueError("the base returned σ-term centres z; rescaling needs σ = 0")
        return RoundData(
            g=None if rd.g is None else self._forward(rd.g),
            x=None if rd.x is None else self._forward(rd.x),
            y=None if rd.y is None else np.asarray(rd.y, dtype=np.float64).copy(),
            z=None,
        )

    def comparator(self) -> np.ndarray:
        u = np.asarray(self._base().comparator(), dtype=np.float64)
        if self.mode == "diagonal":
            return u / self._c
        return np.einsum("rij,rj->ri", self._m_inv_t, u)

    # -- rounds ----------------------------------------------------------------------------------

    def data_block(self, t0: int, n: int) -> RoundData:
        return self._transform(self._base().data_block(t0, n))

    def features(self, t: int) -> np.ndarray | None:
        raw = self._base().features(t)
        if raw is None:
            self._shown = None
            return None
        raw = np.asarray(dense_features(raw), dtype=np.float64).copy()
        shown = self._forward(raw)
        self._shown = (int(t), raw, shown)
        return shown.copy()

    def reveal(self, t: int, w: np.ndarray) -> RoundData:
        rd = self._base().reveal(t, self._back(w))
        out = self._transform(rd)
        shown = self._shown
        if (
            shown is not None
            and shown[0] == int(t)
            and rd.x is not None
            and np.array_equal(np.asarray(dense_features(rd.x), dtype=np.float64), shown[1])
        ):
            out = out._replace(x=shown[2].copy())  # exactly the features shown before predicting
        self._shown = None
        return out

    @classmethod
    def _unit_test_params(cls):
        # registry names, so that ``eval(repr(...))`` round-trips (the conformance suite runs
        # once the bases are registered)
        yield {}
        yield {"base_params": {"margin": 0.2}, "mode": "linear"}
        yield {
            "base": "random_linear",
            "base_params": {"domain": "unconstrained"},
            "scale_range": [0.1, 10.0],
            "seed_offset": 1,
        }


def _side_stream(rng: np.random.Generator, offset: int) -> np.random.Generator:
    """A generator independent of ``rng``'s future draws, derived from its state, not drawn."""
    bg = rng.bit_generator
    if hasattr(bg, "jumped"):
        return np.random.Generator(bg.jumped(1 + offset))
    # bit generators without jumps (SFC64): seed from a copy, leaving ``rng`` untouched
    seed = copy.deepcopy(rng).integers(2**63, size=2)
    return np.random.default_rng([offset, *seed.tolist()])
