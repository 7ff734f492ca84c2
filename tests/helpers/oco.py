"""Helpers of the OCO player tests (first-order: ogd, dual_averaging, ftrl, eg, adagrad; second
order and parameter-free: ons, kt, scale_invariant; primal_dual's OCO instances).

Specs, literal single-game building blocks written with plain Python loops (projections,
subgradients), data streams (oblivious and adaptive), drivers of predict/update and play_block, the
best comparator in hindsight in closed form (computed here independently of the arena's metrics),
and two small test adversaries.
"""

from __future__ import annotations

import itertools
import math
from typing import ClassVar, NamedTuple

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from arena.game import run_game
from arena.oco.components import ObliviousOCOAdversary
from arena.oco.domains import Domain
from arena.oco.losses import RoundData, feedback
from arena.oco.reference import reference_play_oco
from arena.spec import AdversaryTags, GameSpec
from tests.helpers import assert_below

ITERATE_ATOL = 1e-10
"""Transcription tolerance (the issue's 1e-10): both sides are float64 evaluations of the same
formulas in a different order, so they agree to ~1e-14 on the short streams used."""

DOMAINS = {
    "ball": Domain("ball", 2.0),
    "box": Domain("box", 0.5),
    "simplex": Domain("simplex"),
    "unconstrained": Domain("unconstrained"),
}


def make_spec(dim, horizon, n_rep=1, domain=None, loss="linear", sigma=0.0, G=None, protocol="oco"):
    """Return the GameSpec of an OCO game (the guide's recipe): unconstrained unless ``domain``,
    gradient bound ``G`` (None: not known)."""
    return GameSpec(
        protocol,
        dim,
        horizon,
        n_replicates=n_rep,
        dim=dim,
        domain=Domain("unconstrained") if domain is None else domain,
        loss=loss,
        sigma=sigma,
        gradient_bound=G,
    )


def bounded_spec(
    dim, horizon, n_rep=1, domain=None, loss="linear", sigma=0.0, gradient_bound=1.0, protocol="oco"
):
    """:func:`make_spec` with a unit gradient bound unless told otherwise (ONS, KT and the
    scale-invariant learner read it; the keyword is the GameSpec field's name)."""
    return make_spec(dim, horizon, n_rep, domain, loss, sigma, gradient_bound, protocol)


def n_rounds(data: RoundData) -> int:
    """The number of rounds of a block of data (its round axis)."""
    return next(a for a in (data.g, data.x, data.y) if a is not None).shape[1]


def reset(player, spec):
    """Reset ``player`` for ``spec`` with fresh generators; return it."""
    player.reset(spec, [np.random.default_rng(500 + r) for r in range(spec.n_replicates)])
    return player


# ----------------------------------------------------------------------------------------------
# literal single-game pieces (plain Python)


def literal_project(domain: Domain, v):
    """Euclidean projection of a list onto the domain by plain loops.

    Simplex: bisection on the threshold θ of ``Σ max(v_i − θ, 0) = 1`` (a different algorithm
    from the arena's sort-based Fig 7.1), run to float resolution.
    """
    v = [float(a) for a in v]
    if domain.kind == "ball":
        n = math.sqrt(sum(a * a for a in v))
        return v if n <= domain.radius else [a * domain.radius / n for a in v]
    if domain.kind == "box":
        return [min(max(a, -domain.radius), domain.radius) for a in v]
    if domain.kind == "simplex":
        lo, hi = min(v) - 1.0, max(v)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if sum(max(a - mid, 0.0) for a in v) > 1.0:
                lo = mid
            else:
                hi = mid
        theta = 0.5 * (lo + hi)
        return [max(a - theta, 0.0) for a in v]
    return v


def literal_grad(loss, sigma, w, g=None, x=None, y=None, z=None):
    """The subgradient of ``f_t`` at ``w`` by the textbook formulas (one game, lists)."""
    d = len(w)
    if loss == "linear":
        out = [float(g[i]) for i in range(d)]
    else:
        p = sum(float(x[i]) * w[i] for i in range(d))
        if loss == "squared":
            dl = p - y
        elif loss == "absolute":
            dl = 1.0 if p > y else (-1.0 if p < y else 0.0)
        elif loss == "hinge":
            dl = -y if y * p < 1.0 else 0.0
        elif loss == "logistic":
            dl = -y / (1.0 + math.exp(y * p))
        else:
            raise ValueError(loss)
        out = [dl * float(x[i]) for i in range(d)]
    if sigma:
        out = [out[i] + sigma * (w[i] - (0.0 if z is None else float(z[i]))) for i in range(d)]
    return out


def literal_round_grad(spec: GameSpec, rd: RoundData, r: int, w):
    """:func:`literal_grad` of replicate ``r`` of one round's data ``rd`` at ``w``."""
    return literal_grad(
        spec.loss,
        spec.sigma,
        w,
        None if rd.g is None else rd.g[r],
        None if rd.x is None else rd.x[r],
        None if rd.y is None else float(rd.y[r]),
        None if rd.z is None else rd.z[r],
    )


def literal_run(step, w1, spec: GameSpec, data: RoundData, r: int):
    """Run one game (replicate ``r``) with ``w_{t+1} = step(t, w_t, g_t, state)``; return (T, d).

    ``step`` is the literal update (a closure over its own state); ``g_t`` is
    :func:`literal_grad` at ``w_t``.
    """
    n = n_rounds(data)
    w = list(w1)
    out = []
    for j in range(n):
        out.append(list(w))
        rd = data.round(j)
        grad = literal_round_grad(spec, rd, r, w)
        w = step(j + 1, w, grad)
    return np.array(out)


# ----------------------------------------------------------------------------------------------
# streams


def linear_data(rng, n_rep, horizon, dim, kind="gaussian", G=1.0, sigma=0.0) -> RoundData:
    """Oblivious linear losses: ``gaussian``, ``sphere`` (norm G), ``box`` (‖g‖ ≤ G uniform in a
    cube), ``alternating`` (±G e_1), ``sparse`` (G on one random coordinate, random sign)."""
    shape = (n_rep, horizon, dim)
    if kind == "gaussian":
        g = rng.standard_normal(shape)
    elif kind == "sphere":
        g = rng.standard_normal(shape)
        g *= G / np.linalg.norm(g, axis=-1, keepdims=True)
    elif kind == "box":
        g = rng.uniform(-1.0, 1.0, shape) * G / math.sqrt(dim)
    elif kind == "alternating":
        g = np.zeros(shape)
        g[:, :, 0] = G * np.where(np.arange(horizon) % 2 == 0, 1.0, -1.0)
    elif kind == "sparse":
        g = np.zeros(shape)
        idx = rng.integers(0, dim, size=(n_rep, horizon))
        sign = rng.choice([-1.0, 1.0], size=(n_rep, horizon))
        np.put_along_axis(g, idx[..., None], (G * sign)[..., None], axis=-1)
    else:
        raise ValueError(kind)
    z = 0.3 * rng.standard_normal(shape) if sigma else None
    return RoundData(g=g, z=z)


def example_data(rng, n_rep, horizon, dim, loss, sigma=0.0) -> RoundData:
    """Oblivious examples with ``‖x_t‖ ≤ 1``: ±1 labels from a noisy planted separator
    (hinge, logistic) or real targets (squared, absolute)."""
    x = rng.standard_normal((n_rep, horizon, dim))
    x /= np.maximum(1.0, np.linalg.norm(x, axis=-1, keepdims=True))
    u = rng.standard_normal((n_rep, dim))
    score = np.einsum("rnd,rd->rn", x, u) + 0.3 * rng.standard_normal((n_rep, horizon))
    y = np.where(score >= 0, 1.0, -1.0) if loss in ("hinge", "logistic") else score
    z = 0.3 * rng.standard_normal((n_rep, horizon, dim)) if sigma else None
    return RoundData(x=x, y=y, z=z)


def anti_gradient(G):
    """Adaptive ``g_t = −G w_t/‖w_t‖`` (``G e_1`` at ``w_t = 0``; Srebro, Lecture 16 lab generator
    (i))."""

    def reveal(t, w):
        norms = np.linalg.norm(w, axis=1, keepdims=True)
        e1 = np.zeros_like(w)
        e1[:, 0] = 1.0
        return RoundData(g=G * np.where(norms > 0, -w / np.where(norms > 0, norms, 1.0), e1))

    return reveal


def heaviest_coordinate(G):
    """Adaptive ``g_t = G e_i`` on the coordinate with the largest ``w_{t,i}`` (the simplex
    analogue of the heavier-half adversary)."""

    def reveal(t, w):
        g = np.zeros_like(w)
        np.put_along_axis(g, np.argmax(w, axis=1)[:, None], G, axis=1)
        return RoundData(g=g)

    return reveal


def follow_sign(G):
    """Adaptive ``g_{t,i} = (G/√d)·sign(w_{t,i})`` (+ at 0): the learner loses ``(G/√d)‖w_t‖₁``
    every round (a box adversary)."""

    def reveal(t, w):
        return RoundData(g=np.where(w < 0, 1.0, -1.0) * (-G / math.sqrt(w.shape[1])))

    return reveal


# ----------------------------------------------------------------------------------------------
# drivers


class Run(NamedTuple):
    """What :func:`drive` records: points, subgradients, values, declared bounds and the data."""

    w: np.ndarray
    grads: np.ndarray
    values: np.ndarray
    bound: np.ndarray
    data: RoundData


def drive(player, spec, data: RoundData | None = None, reveal=None, horizon=None) -> Run:
    """Drive predict/update (oblivious ``data`` or adaptive ``reveal(t, w)``); check purity.

    Records ``w`` (R, T, d), the subgradients (R, T, d), ``f_t(w_t)`` (R, T), the declared
    ``("regret", nan)`` bound after each round (R, T; NaN when none is declared) and the data
    (the revealed rounds stacked for an adaptive game).
    """
    if data is not None:
        horizon = n_rounds(data)
    n_rep, dim = spec.n_replicates, spec.dim
    ws = np.empty((n_rep, horizon, dim))
    grads = np.empty((n_rep, horizon, dim))
    values = np.empty((n_rep, horizon))
    bound = np.full((n_rep, horizon), np.nan)
    revealed = []
    for j in range(horizon):
        rd = data.round(j) if data is not None else None
        x = None if rd is None else rd.x
        w = np.array(player.predict(x), dtype=np.float64)
        if j % 25 == 0:  # purity, checked every 25 rounds (predict can be the costly part)
            np.testing.assert_array_equal(player.predict(x), w)
            w_mut = player.predict(x)
            w_mut += 1.0  # mutating the returned array must not move the player
            np.testing.assert_array_equal(player.predict(x), w)
        if rd is None:
            rd = reveal(j + 1, w.copy())
            revealed.append(rd)
        fb = feedback(spec.loss, spec.sigma, w, rd)
        ws[:, j], grads[:, j], values[:, j] = w, fb.grad, fb.value
        player.update(fb)
        declared = player.bounds(j + 1)
        if declared:
            bound[:, j] = np.broadcast_to(declared[("regret", math.nan)], (n_rep,))
    return Run(ws, grads, values, bound, stack_rounds(revealed) if data is None else data)


def play_split(player, spec, data: RoundData, cuts) -> np.ndarray:
    """Call ``play_block`` on consecutive chunks ending at ``cuts`` (then the rest); (R, n, d)."""
    n = n_rounds(data)
    edges = [0, *[c for c in cuts if 0 < c < n], n]
    parts = []
    for a, b in itertools.pairwise(edges):
        block = RoundData(*(None if v is None else v[:, a:b] for v in data))
        parts.append(player.play_block(block, spec))
    return np.concatenate(parts, axis=1)


def play_loop(player, spec, data: RoundData, after=None) -> np.ndarray:
    """Drive predict/update over a block of data (arrays with a round axis); return (R, n, d).

    Checks along the way that ``predict`` is pure (two calls agree). ``after(j, player, fb)`` is
    called after each update (for per-round oracles; j counts from 0).
    """
    n = n_rounds(data)
    out = np.empty((spec.n_replicates, n, spec.dim))
    for j in range(n):
        rd = data.round(j)
        w = np.array(player.predict(rd.x), dtype=np.float64)
        again = player.predict(rd.x)
        np.testing.assert_array_equal(w, again)  # predict is pure
        out[:, j] = w
        fb = feedback(spec.loss, spec.sigma, w, rd)
        player.update(fb)
        if after is not None:
            after(j, player, fb)
    return out


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


# ----------------------------------------------------------------------------------------------
# best comparator in hindsight (closed forms) and bound checks


def best_linear(gsum, domain: Domain):
    """``min_{u∈K} ⟨G, u⟩`` row-wise: ball ``−ρ‖G‖₂``, box ``−ρ‖G‖₁``, simplex ``min_i G_i``."""
    if domain.kind == "ball":
        return -domain.radius * np.linalg.norm(gsum, axis=-1)
    if domain.kind == "box":
        return -domain.radius * np.abs(gsum).sum(axis=-1)
    if domain.kind == "simplex":
        return gsum.min(axis=-1)
    raise ValueError("unbounded comparator set")


def linearized_regret(ws, grads, domain: Domain):
    """``max_{u∈K} Σ_{s≤t} ⟨g_s, w_s − u⟩`` at every t, shape (R, T); it upper-bounds the regret
    of every convex loss sequence with these subgradients, so a bound on it bounds the regret."""
    played = np.cumsum(np.einsum("rtd,rtd->rt", grads, ws), axis=1)
    return played - best_linear(np.cumsum(grads, axis=1), domain)


def strongly_convex_regret(values, data: RoundData, sigma, domain: Domain):
    """Exact regret of ``f_t(u) = ⟨g_t, u⟩ + (σ/2)‖u − z_t‖²`` at every t, shape (R, T).

    ``Σ_{s≤t} f_s(u) = (σt/2)‖u − c_t‖² + const`` with ``c_t = (σ Σz − Σg)/(σt)``, so the best
    comparator in K is ``Π_K(c_t)``; the sum is evaluated from running sums.
    """
    g, z = data.g, data.z
    horizon = g.shape[1]
    gs, zs = np.cumsum(g, axis=1), np.cumsum(z, axis=1)
    zz = np.cumsum(np.einsum("rtd,rtd->rt", z, z), axis=1)
    t = np.arange(1, horizon + 1)[None, :]
    centre = (sigma * zs - gs) / (sigma * t[..., None])
    u = np.stack([domain.project(centre[:, j]) for j in range(horizon)], axis=1)
    best = (
        np.einsum("rtd,rtd->rt", gs, u)
        + 0.5 * sigma * (t * np.einsum("rtd,rtd->rt", u, u) - 2 * np.einsum("rtd,rtd->rt", u, zs))
        + 0.5 * sigma * zz
    )
    return np.cumsum(values, axis=1) - best


class FixedStream(ObliviousOCOAdversary):
    """A test adversary replaying a stream drawn at reset from its own seeded generator:
    linear losses ``g_t`` on the sphere of radius ``G`` (or examples for an example loss), plus
    ``z_t`` when ``sigma > 0``; any block split gives the same rounds."""

    name = "fixed_stream_test"

    def __init__(self, domain="ball", radius=1.0, loss="linear", sigma=0.0, G=1.0, seed=0):
        self.domain = domain
        self.radius = radius
        self.loss = loss
        self.sigma = sigma
        self.G = G
        self.seed = seed

    def declared_domain(self):
        return Domain(self.domain, float(self.radius))

    def declared_loss(self):
        return self.loss

    def declared_sigma(self):
        return float(self.sigma)

    def gradient_bound(self):
        return None if self.sigma or self.loss != "linear" else float(self.G)

    def reset(self, spec, rngs):
        rng = np.random.default_rng(self.seed)
        n_rep, horizon, dim = spec.n_replicates, spec.horizon, spec.dim
        if self.loss == "linear":
            self._data = linear_data(rng, n_rep, horizon, dim, "sphere", self.G, self.sigma)
        else:
            self._data = example_data(rng, n_rep, horizon, dim, self.loss, self.sigma)

    def data_block(self, t0, n):
        return RoundData(*(None if a is None else a[:, t0 - 1 : t0 - 1 + n] for a in self._data))


def engine_check(player, adversary, atol=1e-12, **kw):
    """Play ``player`` against ``adversary`` with the engine (``arena.play`` dispatches here) and
    with the literal reference loop; assert they agree and that ``regret ≤ bound:regret`` at every
    checkpoint. Returns the engine's rows."""
    kw = {"metrics": ["loss", "regret", "bound"]} | kw
    rows = run_game(player, adversary, **kw).rows
    ref = reference_play_oco(player, adversary, **kw)
    pd.testing.assert_frame_equal(rows, ref, atol=atol, rtol=0)
    wide = rows.pivot_table(index=["t", "replicate"], columns="metric", values="value")
    assert "bound:regret" in wide.columns, "the player declared no bound"
    assert_below(wide["regret"].to_numpy(), wide["bound:regret"].to_numpy(), "engine regret")
    return rows


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


def read_oco_trace(path, dim):
    """Return (w, g) arrays (R, T, d) from an engine trace of a linear game."""
    tr = pq.read_table(path).to_pandas().sort_values(["replicate", "t"])
    n_rep = tr.replicate.nunique()
    w = np.stack(tr.w.to_numpy()).reshape(n_rep, -1, dim)
    g = np.stack(tr.g.to_numpy()).reshape(n_rep, -1, dim)
    return w, g
