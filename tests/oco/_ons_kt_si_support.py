"""Shared drivers for the ONS, KT and scale-invariant player tests (tests/oco/test_{ons,kt,...})."""

from __future__ import annotations

import itertools
from typing import ClassVar

import numpy as np

from arena.oco.domains import Domain
from arena.oco.losses import RoundData, feedback
from arena.oco.protocol import ObliviousOCOAdversary
from arena.spec import AdversaryTags, GameSpec


def make_spec(
    dim,
    horizon,
    n_rep=1,
    domain=None,
    loss="linear",
    sigma=0.0,
    gradient_bound=1.0,
    protocol="oco",
):
    """Return the GameSpec of an OCO / classification game (the guide's recipe)."""
    return GameSpec(
        protocol,
        dim,
        horizon,
        n_replicates=n_rep,
        dim=dim,
        domain=Domain("unconstrained") if domain is None else domain,
        loss=loss,
        sigma=sigma,
        gradient_bound=gradient_bound,
    )


def reset(player, spec):
    """Reset ``player`` for ``spec`` with fresh generators; return it."""
    player.reset(spec, [np.random.default_rng(1000 + r) for r in range(spec.n_replicates)])
    return player


def play_loop(player, spec, data: RoundData) -> np.ndarray:
    """Drive predict/update over a block of data (arrays with a round axis); return (R, n, d).

    Checks along the way that ``predict`` is pure (two calls agree and do not move the state).
    """
    n = next(a for a in (data.g, data.x, data.y) if a is not None).shape[1]
    out = np.empty((spec.n_replicates, n, spec.dim))
    for j in range(n):
        rd = data.round(j)
        w = np.array(player.predict(rd.x), dtype=np.float64)
        again = player.predict(rd.x)
        np.testing.assert_array_equal(w, again)  # predict is pure
        out[:, j] = w
        player.update(feedback(spec.loss, spec.sigma, w, rd))
    return out


def play_split(player, spec, data: RoundData, cuts) -> np.ndarray:
    """Call ``play_block`` on consecutive chunks ending at ``cuts`` (then the rest); (R, n, d)."""
    n = next(a for a in (data.g, data.x, data.y) if a is not None).shape[1]
    edges = [0, *[c for c in cuts if 0 < c < n], n]
    parts = []
    for a, b in itertools.pairwise(edges):
        chunk = RoundData(*(None if v is None else v[:, a:b] for v in data))
        parts.append(player.play_block(chunk, spec))
    return np.concatenate(parts, axis=1)


def play_adaptive(player, spec, reveal, horizon, features=None):
    """Play ``horizon`` rounds against an adaptive rule ``reveal(t, w) -> RoundData`` (one round).

    ``features(t)`` gives ``x_t`` (R, d) shown before predicting (None: no features). Returns the
    committed points (R, T, d) and the list of round data.
    """
    ws, rounds = [], []
    for t in range(horizon):
        x = None if features is None else features(t)
        w = np.array(player.predict(x), dtype=np.float64)
        rd = reveal(t, w)
        ws.append(w)
        rounds.append(rd)
        player.update(feedback(spec.loss, spec.sigma, w, rd))
    return np.stack(ws, axis=1), rounds


def stack_rounds(rounds) -> RoundData:
    """Stack a list of one-round RoundData into a block (round axis 1)."""
    fields = []
    for k in range(4):
        vals = [r[k] for r in rounds]
        fields.append(None if vals[0] is None else np.stack(vals, axis=1))
    return RoundData(*fields)


def assert_below(lhs, rhs, what=""):
    """Tolerance convention: ``lhs ≤ rhs + 1e-9·max(1, |rhs|)`` elementwise."""
    lhs, rhs = np.asarray(lhs, dtype=np.float64), np.asarray(rhs, dtype=np.float64)
    slack = rhs + 1e-9 * np.maximum(1.0, np.abs(rhs)) - lhs
    assert np.all(slack >= 0), f"{what}: max excess {float(-slack.min())}"


class LinearStream(ObliviousOCOAdversary):
    """Oblivious linear losses ``g_t`` uniform in the ball of radius ``G`` (plus ``(σ/2)‖w‖²``),
    on a chosen domain; declares its gradient bound and a unit comparator ``u*`` (for the
    engine end-to-end tests of ONS and KT)."""

    name = "okh_linear_stream"
    tags: ClassVar[AdversaryTags] = AdversaryTags(
        protocol="oco", oblivious=True, oracle=frozenset({"comparator"})
    )

    def __init__(self, G=1.0, domain="ball", radius=1.0, sigma=0.0, drift=0.5):
        self.G = G
        self.domain = domain
        self.radius = radius
        self.sigma = sigma
        self.drift = drift

    def declared_domain(self) -> Domain:
        return Domain(self.domain, float(self.radius))

    def declared_sigma(self) -> float:
        return float(self.sigma)

    def gradient_bound(self) -> float:
        return float(self.G) + float(self.sigma) * float(self.radius)

    def reset(self, spec, rngs):
        self._rngs = list(rngs)
        self._dim = spec.dim
        u = np.stack([rng.standard_normal(spec.dim) for rng in self._rngs])
        self._u = u / np.linalg.norm(u, axis=1, keepdims=True)

    def data_block(self, t0, n):
        out = []
        for r, rng in enumerate(self._rngs):
            v = rng.standard_normal((n, self._dim))
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            rad = rng.uniform(0, 1, (n, 1)) ** (1.0 / self._dim)
            g = (1 - self.drift) * v * rad - self.drift * self._u[r]  # rewards point along u*
            out.append(float(self.G) * g)
        return RoundData(g=np.stack(out))

    def comparator(self):
        return self._u.copy()


def read_trace(path, dim):
    """Return (w, g) arrays (R, T, d) from an engine trace of a linear game."""
    import pyarrow.parquet as pq

    tr = pq.read_table(path).to_pandas().sort_values(["replicate", "t"])
    n_rep = tr.replicate.nunique()
    w = np.stack(tr.w.to_numpy()).reshape(n_rep, -1, dim)
    g = np.stack(tr.g.to_numpy()).reshape(n_rep, -1, dim)
    return w, g
