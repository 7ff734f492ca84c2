"""Parametrized families of oblivious loss sequences for the worst-case search.

Each family maps a real parameter vector ``x`` (what CMA-ES moves) to a T×N loss sequence in
``[0, 1]``; :meth:`Family.decode` maps a whole population ``(P, dim)`` to ``(P, T, N)`` at once, so
that the population is played as the replicates of one batched game
(:func:`arena.attack.search.search`). Decoding is deterministic: a family that needs randomness
(the Markov chain's transitions) draws it once from its own seed, so the objective carries no
sampling noise and a resumed search replays exactly.

Families
--------
``switching``
    Piecewise-constant sequences: K segments with free lengths and one loss vector each.
``markov``
    A Markov chain over M loss vectors, driven by fixed uniforms (common random numbers).
``mixture``
    Per-segment convex combinations of a library of sequences (the catalog adversaries' plays);
    a one-hot weight reproduces a library sequence exactly.
``basis``
    An open-loop sequence ``clip(base + Φ c, 0, 1)`` with Φ the first K cosine functions of time;
    ``c = 0`` reproduces ``base`` (the worst catalog sequence, or ½ everywhere).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from arena.errors import ConfigError

__all__ = [
    "FAMILIES",
    "BasisFamily",
    "Family",
    "MarkovFamily",
    "MixtureFamily",
    "SwitchingFamily",
    "make_family",
]


def _positive_int(who: str, name: str, value, *, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ConfigError(who, name, f"must be an integer ≥ {low}, got {value!r}")
    return int(value)


def _segment_index(horizon: int, n_segments: int) -> np.ndarray:
    """Return the segment (0..K-1) of every round for K equal segments, shape (T,)."""
    return np.minimum(np.arange(horizon) * n_segments // horizon, n_segments - 1)


class Family:
    """A parametrized family of T×N loss sequences in ``[0, 1]``.

    Parameters
    ----------
    n_actions, horizon : int
        N and T of the game.

    Attributes
    ----------
    name : str
        Registry key in :data:`FAMILIES`.
    sigma0 : float
        CMA-ES initial step size suited to the parametrization.
    """

    name: ClassVar[str] = ""
    sigma0: ClassVar[float] = 0.5

    def __init__(self, n_actions: int, horizon: int):
        self.n_actions = _positive_int(self.name, "n_actions", n_actions, low=2)
        self.horizon = _positive_int(self.name, "horizon", horizon)

    @property
    def dim(self) -> int:
        """Number of real parameters."""
        raise NotImplementedError

    def x0(self) -> np.ndarray:
        """Return the starting parameter vector, shape (dim,)."""
        raise NotImplementedError

    def decode(self, x: np.ndarray) -> np.ndarray:
        """Return the loss sequences of a population, (P, T, N), from ``x`` of shape (P, dim)."""
        raise NotImplementedError

    def params(self) -> dict:
        """Return the family's own parameters (for provenance and resume checks)."""
        return {}

    def _check(self, x: np.ndarray) -> np.ndarray:
        x = np.atleast_2d(np.asarray(x, dtype=np.float64))
        if x.shape[1] != self.dim:
            raise ValueError(
                f"{self.name}: expected parameters of length {self.dim}, got {x.shape}"
            )
        return x


class SwitchingFamily(Family):
    """Piecewise-constant sequences: which experts are good in each of K segments, and for how long.

    ``x = (a_1..a_K, v_{1,1}..v_{K,N})``: segment k lasts a share ``softmax(a)_k`` of T (rounded
    to whole rounds) and plays the loss vector ``clip(½ + v_k, 0, 1)`` throughout. The start puts
    expert ``k mod N`` alone at loss 0 in segment k, the others at 1, with equal lengths.

    Parameters
    ----------
    n_segments : int
        K ≥ 1.
    """

    name = "switching"

    def __init__(self, n_actions: int, horizon: int, n_segments: int = 4):
        super().__init__(n_actions, horizon)
        self.n_segments = _positive_int(self.name, "n_segments", n_segments)

    @property
    def dim(self) -> int:
        return self.n_segments * (1 + self.n_actions)

    def params(self) -> dict:
        return {"n_segments": self.n_segments}

    def x0(self) -> np.ndarray:
        k, n = self.n_segments, self.n_actions
        v = np.full((k, n), 0.5)
        v[np.arange(k), np.arange(k) % n] = -0.5
        return np.concatenate([np.zeros(k), v.ravel()])

    def decode(self, x: np.ndarray) -> np.ndarray:
        x = self._check(x)
        k, n, horizon = self.n_segments, self.n_actions, self.horizon
        a = x[:, :k]
        w = np.exp(a - a.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        ends = np.rint(np.cumsum(w, axis=1) * horizon).astype(np.int64)  # (P, K), last = T
        ends[:, -1] = horizon
        t = np.arange(horizon)
        seg = (t[None, :, None] >= ends[:, None, :]).sum(axis=2)  # (P, T) segment of round t
        seg = np.minimum(seg, k - 1)
        v = np.clip(0.5 + x[:, k:].reshape(-1, k, n), 0.0, 1.0)
        return np.take_along_axis(v, seg[:, :, None], axis=1)


class MarkovFamily(Family):
    """A Markov chain over M loss vectors, driven by fixed uniforms (common random numbers).

    ``x = (A_{1,1}..A_{M,M}, v_{1,1}..v_{M,N})``: from state s the chain moves to state j with
    probability ``softmax(A_s)_j``; state s plays ``clip(½ + v_s, 0, 1)``. The chain starts in
    state 0 and draws its moves by inversion from T uniforms fixed by ``seed``, so the sequence is a
    deterministic function of ``x``. The start: state s favours expert ``s mod N`` and the chain
    moves uniformly.

    Parameters
    ----------
    n_states : int
        M ≥ 1.
    seed : int
        Seed of the fixed uniforms.
    """

    name = "markov"

    def __init__(self, n_actions: int, horizon: int, n_states: int = 3, seed: int = 0):
        super().__init__(n_actions, horizon)
        self.n_states = _positive_int(self.name, "n_states", n_states)
        self.seed = _positive_int(self.name, "seed", seed, low=0)
        self._u = np.random.default_rng(self.seed).random(self.horizon)

    @property
    def dim(self) -> int:
        return self.n_states * (self.n_states + self.n_actions)

    def params(self) -> dict:
        return {"n_states": self.n_states, "seed": self.seed}

    def x0(self) -> np.ndarray:
        m, n = self.n_states, self.n_actions
        v = np.full((m, n), 0.5)
        v[np.arange(m), np.arange(m) % n] = -0.5
        return np.concatenate([np.zeros(m * m), v.ravel()])

    def decode(self, x: np.ndarray) -> np.ndarray:
        x = self._check(x)
        m, n, horizon = self.n_states, self.n_actions, self.horizon
        pop = x.shape[0]
        a = x[:, : m * m].reshape(pop, m, m)
        p = np.exp(a - a.max(axis=2, keepdims=True))
        cdf = np.cumsum(p / p.sum(axis=2, keepdims=True), axis=2)  # (P, M, M)
        v = np.clip(0.5 + x[:, m * m :].reshape(pop, m, n), 0.0, 1.0)
        states = np.zeros((pop, horizon), dtype=np.int64)
        s = np.zeros(pop, dtype=np.int64)
        rows = np.arange(pop)
        for t in range(1, horizon):
            # inversion; the clip guards a cdf whose last entry rounds below the uniform
            s = np.minimum((cdf[rows, s] <= self._u[t, None]).sum(axis=1), m - 1)
            states[:, t] = s
        return np.take_along_axis(v, states[:, :, None], axis=1)


class MixtureFamily(Family):
    """Per-segment convex combinations of a library of loss sequences (the catalog's plays).

    ``x = (w_{1,1}..w_{K,C})``: in segment k (K equal segments) the losses are
    ``Σ_c ω_{k,c} library_c`` with ``ω_k = max(w_k, 0) / Σ max(w_k, 0)`` (uniform if all ≤ 0). A
    one-hot ``w_k`` plays a library sequence exactly, so the family contains every catalog play;
    the start is the one-hot of ``start_index`` in every segment.

    Parameters
    ----------
    library : ndarray, shape (C, T, N)
        Sequences in ``[0, 1]`` (at least T rounds; longer ones are cut).
    n_segments : int
        K ≥ 1.
    start_index : int
        The library sequence to start from (the worst catalog play).
    """

    name = "mixture"
    sigma0 = 0.3

    def __init__(
        self,
        n_actions: int,
        horizon: int,
        library: np.ndarray | None = None,
        n_segments: int = 4,
        start_index: int = 0,
    ):
        super().__init__(n_actions, horizon)
        if library is None:
            raise ConfigError(self.name, "library", "needs a (C, T, N) array of sequences")
        lib = np.asarray(library, dtype=np.float64)
        if lib.ndim != 3 or lib.shape[1] < self.horizon or lib.shape[2] != self.n_actions:
            raise ConfigError(
                self.name,
                "library",
                f"expected shape (C, ≥{self.horizon}, {self.n_actions}), got {lib.shape}",
            )
        if not np.all((lib >= 0.0) & (lib <= 1.0)):
            raise ConfigError(self.name, "library", "entries must lie in [0, 1]")
        self.library = lib[:, : self.horizon]
        self.n_segments = _positive_int(self.name, "n_segments", n_segments)
        self.start_index = _positive_int(self.name, "start_index", start_index, low=0)
        if self.start_index >= len(lib):
            raise ConfigError(
                self.name, "start_index", f"{start_index} ≥ the library's {len(lib)} sequences"
            )

    @property
    def dim(self) -> int:
        return self.n_segments * len(self.library)

    def params(self) -> dict:
        return {
            "n_segments": self.n_segments,
            "start_index": self.start_index,
            "library_size": len(self.library),
        }

    def x0(self) -> np.ndarray:
        w = np.zeros((self.n_segments, len(self.library)))
        w[:, self.start_index] = 1.0
        return w.ravel()

    def decode(self, x: np.ndarray) -> np.ndarray:
        x = self._check(x)
        k, c = self.n_segments, len(self.library)
        w = np.maximum(x.reshape(-1, k, c), 0.0)
        tot = w.sum(axis=2, keepdims=True)
        w = np.where(tot > 0, w / np.where(tot > 0, tot, 1.0), 1.0 / c)
        seg = _segment_index(self.horizon, k)
        # (P, K, C) weights of each round's segment, contracted with the library (C, T, N)
        mixed = np.einsum("ptc,ctn->ptn", w[:, seg, :], self.library)
        return np.clip(mixed, 0.0, 1.0)  # a convex combination may round a hair past 1


class BasisFamily(Family):
    """Open-loop sequences in a low-dimensional basis of time: ``clip(base + Φ c, 0, 1)``.

    ``Φ`` (T×K) holds the first K cosine functions ``cos(π k (t − ½)/T)``, k = 0..K−1, and ``c``
    (K×N) is the parameter. ``c = 0`` plays ``base`` exactly, so starting from the worst catalog
    sequence the family contains it.

    Parameters
    ----------
    n_basis : int
        K ≥ 1.
    base : ndarray, shape (T, N), optional
        Sequence in ``[0, 1]`` to perturb; default ½ everywhere.
    """

    name = "basis"
    sigma0 = 0.3

    def __init__(
        self, n_actions: int, horizon: int, n_basis: int = 8, base: np.ndarray | None = None
    ):
        super().__init__(n_actions, horizon)
        self.n_basis = _positive_int(self.name, "n_basis", n_basis)
        if base is None:
            base = np.full((self.horizon, self.n_actions), 0.5)
        base = np.asarray(base, dtype=np.float64)
        if base.ndim != 2 or base.shape[0] < self.horizon or base.shape[1] != self.n_actions:
            raise ConfigError(
                self.name,
                "base",
                f"expected shape (≥{self.horizon}, {self.n_actions}), got {base.shape}",
            )
        if not np.all((base >= 0.0) & (base <= 1.0)):
            raise ConfigError(self.name, "base", "entries must lie in [0, 1]")
        self.base = base[: self.horizon]
        t = np.arange(self.horizon) + 0.5
        self.phi = np.cos(np.pi * np.outer(t, np.arange(self.n_basis)) / self.horizon)

    @property
    def dim(self) -> int:
        return self.n_basis * self.n_actions

    def params(self) -> dict:
        return {"n_basis": self.n_basis}

    def x0(self) -> np.ndarray:
        return np.zeros(self.dim)

    def decode(self, x: np.ndarray) -> np.ndarray:
        x = self._check(x)
        c = x.reshape(-1, self.n_basis, self.n_actions)
        return np.clip(self.base[None] + np.einsum("tk,pkn->ptn", self.phi, c), 0.0, 1.0)


FAMILIES: dict[str, type[Family]] = {
    cls.name: cls for cls in (SwitchingFamily, MarkovFamily, MixtureFamily, BasisFamily)
}
"""The families by name."""


def make_family(name: str, n_actions: int, horizon: int, **params) -> Family:
    """Build the family ``name`` for N experts and T rounds; errors name the bad parameter."""
    if name not in FAMILIES:
        raise ConfigError("search", "family", f"unknown family {name!r}; one of {sorted(FAMILIES)}")
    cls = FAMILIES[name]
    import inspect

    allowed = set(inspect.signature(cls.__init__).parameters) - {"self", "n_actions", "horizon"}
    for key in params:
        if key not in allowed:
            raise ConfigError(
                name, key, f"not a parameter of this family; one of {sorted(allowed)}"
            )
    return cls(n_actions, horizon, **params)
