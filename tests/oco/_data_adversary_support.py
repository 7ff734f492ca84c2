"""Shared helpers of the data-adversary tests (random_linear, separable_stream, ill_conditioned,
strongly_convex, dataset_stream, rescaled): specs, streams, block splits, CLT bands, loops."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from arena.oco.losses import RoundData, feedback
from arena.spec import GameSpec

CLT_Z = 4.0
"""Expectation statements are asserted within 4 standard errors."""


def rngs(seed: int, n: int) -> list[np.random.Generator]:
    return [np.random.default_rng([seed, r]) for r in range(n)]


def spec_for(adversary, n_rep: int = 2, horizon: int = 50, dim: int | None = None) -> GameSpec:
    """The GameSpec the engine would build for ``adversary`` (declared constants)."""
    d = adversary.resolve_dim(dim)
    return GameSpec(
        adversary.tags.protocol,
        d,
        horizon,
        n_replicates=n_rep,
        dim=d,
        domain=adversary.declared_domain(),
        loss=adversary.declared_loss(),
        sigma=float(adversary.declared_sigma()),
        gradient_bound=adversary.gradient_bound(),
    )


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
    return RoundData(
        *(
            None if rounds[0][k] is None else np.stack([r[k] for r in rounds], axis=1)
            for k in range(4)
        )
    )


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
    from arena.oco.losses import evaluate

    _, grads, _, _ = evaluate(spec.loss, spec.sigma, w, data)
    return np.linalg.norm(grads, axis=-1)


def clt_band(values) -> tuple[float, float]:
    """Return the mean and the half-width ``4·sd/√M`` of the CLT band."""
    v = np.asarray(values, dtype=np.float64)
    return float(v.mean()), CLT_Z * float(v.std(ddof=1)) / np.sqrt(v.size)


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
    data = RoundData(
        *(
            None if rounds[0][k] is None else np.stack([r[k] for r in rounds], axis=1)
            for k in range(4)
        )
    )
    predictions = None if preds[0] is None else np.stack(preds, axis=1)
    return np.stack(ws, axis=1), predictions, data
