"""Every streaming metric kernel equals its brute-force definition (their definitions).

The kernels of the experts-block metric modules (:mod:`arena.metrics.regret`, ``instant``,
``weights``, ``quantile``, ``pseudo``, ``shifting``, ``adaptive``) are driven two ways: directly,
with hand-built :class:`~arena.metrics.base.Block` chunks of random histories split at random
points, and through the engine, with the ``replay`` adversary playing random loss matrices from
``.npy`` files. Their snapshots are compared with each metric's own brute-force definition (its
``reference``) on the stored history, at every checkpoint, for every replicate and every parameter
value. Instances are small (T ≤ 60, N ≤ 6) and include ties: integer {0, 1} losses, repeated
columns, and distributions with exact zeros. These are brute-force oracles and the consistency
checks between the notions.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.errors import UnknownComponentError
from arena.game import run_game
from arena.metrics.adaptive import AdaptiveRegret, StronglyAdaptiveRegret, sa_regret
from arena.metrics.base import Block, Core, exact_quantile_rank
from arena.metrics.instant import InstantLeaderRegret
from arena.metrics.pseudo import PseudoRegret
from arena.metrics.quantile import QuantileRegret, SubsetQuantileRegret, quantile_regret
from arena.metrics.regret import DynamicRegret, Loss, RealizedLoss, RealizedRegret, Regret, regret
from arena.metrics.shifting import ShiftingRegret, exhaustive_shifting_opt, shifting_opt
from arena.metrics.weights import Entropy, ZeroWeightFraction
from arena.spec import GameSpec
from tests.helpers.experts import reference_value

ATOL = 1e-12
"""Absolute tolerance. Every value is a sum of at most 60 terms in [0, 1] (plus one subtraction),
so it is at most 60 in magnitude and a float64 ulp there is 7e-15; a different summation order
(sequential in the kernels, pairwise or prefix-difference in the brute force) moves the result by
at most a few tens of ulps, about 1e-13 in the worst case."""

KINDS = ("uniform", "binary", "repeated", "grid")
"""Loss families: U[0, 1]; integer {0, 1} (ties everywhere); {0, 1} with duplicated columns (tied
experts); values on the grid {0, ¼, ½, ¾, 1} (ties in sums of fractions)."""


# ----------------------------------------------------------------------------------------------
# random histories and a hand-driven metric loop


def random_losses(rng: np.random.Generator, n_rep: int, horizon: int, n_act: int, kind: str):
    shape = (n_rep, horizon, n_act)
    if kind == "uniform":
        return rng.random(shape)
    if kind == "binary":
        return rng.integers(0, 2, shape).astype(np.float64)
    if kind == "repeated":
        base = rng.integers(0, 2, (n_rep, horizon, max(1, n_act // 2))).astype(np.float64)
        return base[:, :, rng.integers(0, base.shape[2], n_act)]
    if kind == "grid":
        return rng.integers(0, 5, shape) / 4.0
    raise ValueError(kind)


def random_history(rng: np.random.Generator, n_rep: int, horizon: int, n_act: int, kind: str):
    """Return probs, losses, actions, means of ``n_rep`` replicates; probs have exact zeros."""
    losses = random_losses(rng, n_rep, horizon, n_act, kind)
    probs = rng.dirichlet(np.full(n_act, 0.7), size=(n_rep, horizon))
    zero = rng.random(probs.shape) < 0.3
    zero[..., 0] &= ~zero[..., 1:].all(axis=-1)  # keep at least one positive weight
    probs[zero] = 0.0
    one_hot = rng.random((n_rep, horizon)) < 0.1
    probs[one_hot] = np.eye(n_act)[rng.integers(0, n_act, one_hot.sum())]
    probs /= probs.sum(axis=-1, keepdims=True)
    actions = np.empty((n_rep, horizon), dtype=np.int64)
    for r in range(n_rep):
        for t in range(horizon):
            actions[r, t] = rng.choice(n_act, p=probs[r, t])
    means = rng.random((n_rep, horizon, n_act))
    return probs, losses, actions, means


def drive(metrics, probs, losses, actions, means, ends):
    """Feed the history to the metrics in chunks ending at ``ends``; return their snapshots.

    The shared totals of :class:`Core` are computed here with plain numpy (not the engine's
    kernel), so only the metric kernels are under test. Returns ``{t: [values (R, n_params)]}``.
    """
    n_rep, horizon, n_act = losses.shape
    spec = GameSpec("experts", n_act, horizon, n_replicates=n_rep)
    for m in metrics:
        m.start(spec)
    core = Core(n_rep, n_act)
    snaps = {}
    t0 = 1
    for end in ends:
        sl = slice(t0 - 1, end)
        p = np.ascontiguousarray(probs[:, sl])
        lo = np.ascontiguousarray(losses[:, sl])
        a = np.ascontiguousarray(actions[:, sl])
        mu = np.ascontiguousarray(means[:, sl])
        expected = (p * lo).sum(axis=2)
        realized = np.take_along_axis(lo, a[:, :, None], axis=2)[:, :, 0]
        core.cum_losses += lo.sum(axis=1)
        core.learner += expected.sum(axis=1)
        core.realized += realized.sum(axis=1)
        core.sum_min += lo.min(axis=2).sum(axis=1)
        core.t = end
        core.last_probs = p[:, -1].copy()
        block = Block(p, lo, expected, realized, a, mu, t0)
        for m in metrics:
            m.advance(block, core)
        snaps[end] = [np.asarray(m.values(core), dtype=np.float64) for m in metrics]
        t0 = end + 1
    return snaps, spec


def all_metrics(eps, ks, taus):
    return [
        Loss(),
        RealizedLoss(),
        Regret(),
        RealizedRegret(),
        QuantileRegret(eps=eps),
        SubsetQuantileRegret(eps=eps),
        InstantLeaderRegret(),
        ShiftingRegret(k=ks),
        AdaptiveRegret(),
        StronglyAdaptiveRegret(tau=taus),
        DynamicRegret(),
        PseudoRegret(),
        ZeroWeightFraction(),
        Entropy(),
    ]


def random_params(rng, horizon, n_act):
    eps = sorted({1.0 / n_act, 0.5 / n_act, 1.0, *np.round(rng.random(3), 3).clip(1e-3, 1)})
    ks = sorted({0, 1, 2, 3, int(rng.integers(0, horizon + 2)), horizon - 1, horizon + 3})
    taus = sorted({1, 2, 3, int(rng.integers(1, horizon + 1)), max(1, horizon - 1), horizon})
    return eps, ks, [*taus, horizon + 5]


def random_ends(rng, horizon):
    """Chunk ends: random cut points (some chunks of one round), always ending at T."""
    n_cuts = int(rng.integers(0, min(horizon, 8)))
    cuts = rng.choice(np.arange(1, horizon + 1), size=n_cuts, replace=False)
    return sorted({*cuts.tolist(), horizon})


def check_against_bruteforce(metrics, snaps, spec, probs, losses, actions, means):
    for t, values in snaps.items():
        for m, vals in zip(metrics, values, strict=True):
            pv = m.param_values(spec)
            assert vals.shape == (losses.shape[0], len(pv)), m.name
            for q, param in enumerate(pv):
                for r in range(losses.shape[0]):
                    want = reference_value(
                        m, param, probs[r, :t], losses[r, :t], actions[r, :t], means[r, :t]
                    )
                    got = vals[r, q]
                    assert abs(got - want) <= ATOL, (m.name, param, t, r, got, want)


instances = st.tuples(
    st.integers(0, 2**32 - 1),  # seed
    st.integers(1, 60),  # T
    st.integers(1, 6),  # N
    st.integers(1, 3),  # R
    st.sampled_from(KINDS),
)


# ----------------------------------------------------------------------------------------------
# kernels == brute force


@settings(max_examples=60, deadline=None)
@given(instances)
def test_kernels_equal_bruteforce(instance):
    seed, horizon, n_act, n_rep, kind = instance
    rng = np.random.default_rng(seed)
    probs, losses, actions, means = random_history(rng, n_rep, horizon, n_act, kind)
    metrics = all_metrics(*random_params(rng, horizon, n_act))
    snaps, spec = drive(metrics, probs, losses, actions, means, random_ends(rng, horizon))
    check_against_bruteforce(metrics, snaps, spec, probs, losses, actions, means)


def test_quantile_rank_is_exact_through_the_kernel():
    """ε = 0.07 with N = 100 is rank 7, not the float ``ceil(0.07·100) = 8`` (floats get ⌈εN⌉
    wrong)."""
    rng = np.random.default_rng(7)
    probs, losses, actions, means = random_history(rng, 2, 5, 100, "uniform")
    metrics = [QuantileRegret(eps=[0.07, 0.01, 0.29, 0.57])]
    snaps, spec = drive(metrics, probs, losses, actions, means, [2, 5])
    assert exact_quantile_rank(0.07, 100) == 7 != math.ceil(0.07 * 100)
    check_against_bruteforce(metrics, snaps, spec, probs, losses, actions, means)
    learner = (probs * losses).sum(axis=(1, 2))
    seventh = np.sort(losses.sum(axis=1), axis=1)[:, 6]
    np.testing.assert_allclose(snaps[5][0][:, 0], learner - seventh, atol=ATOL, rtol=0)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [0, 1])
def test_kernels_through_the_engine_with_replay(tmp_path, kind, seed):
    """The engine's own core totals and chunking, on replayed random matrices, match brute force.

    The trace gives the ``p_t`` and ``I_t`` the player and the arena produced.
    """
    rng = np.random.default_rng(100 + seed)
    horizon, n_act, n_rep = 45, 5, 3
    losses = random_losses(rng, n_rep, horizon, n_act, kind)
    path = tmp_path / "losses.npy"
    np.save(path, losses if seed else losses[0])  # an R×T×N and a T×N file
    eps, ks, taus = random_params(rng, horizon, n_act)
    cfg = {
        "loss": {},
        "realized_loss": {},
        "regret": {},
        "realized_regret": {},
        "quantile_regret": {"eps": eps},
        "shifting_regret": {"k": ks},
        "adaptive_regret": {},
        "sa_regret": {"tau": taus},
        "dynamic_regret": {},
        "zero_weight_frac": {},
        "entropy": {},
    }
    for player in ("hedge", "ftl"):
        trace = tmp_path / f"{player}.parquet"
        run = run_game(
            player,
            "replay",
            adversary_params={"path": str(path)},
            horizon=horizon,
            replicates=n_rep,
            metrics=cfg,
            chunk_elements=int(rng.integers(1, 200)),
            trace_path=trace,
        )
        tr = pq.read_table(trace).to_pandas().sort_values(["replicate", "t"])
        probs = np.stack(tr.probs.to_numpy()).reshape(n_rep, horizon, n_act)
        seen = np.stack(tr.losses.to_numpy()).reshape(n_rep, horizon, n_act)
        actions = tr.action.to_numpy().reshape(n_rep, horizon)
        np.testing.assert_array_equal(
            seen, losses if seed else np.broadcast_to(losses[0], seen.shape)
        )
        rows = run.rows
        assert len(rows) > 0
        for row in rows.itertuples():
            t, r = int(row.t), int(row.replicate)
            want = reference_value(row.metric, row.param, probs[r, :t], seen[r, :t], actions[r, :t])
            assert abs(row.value - want) <= ATOL, (player, row.metric, row.param, t, r)


# ----------------------------------------------------------------------------------------------
# boundary parameters


@settings(max_examples=40, deadline=None)
@given(instances)
def test_boundary_params(instance):
    """k = 0, ⌈εN⌉ = 1 and τ ≥ t reduce to the simpler notions; so do k ≥ t−1 and ε = 1."""
    seed, horizon, n_act, n_rep, kind = instance
    rng = np.random.default_rng(seed)
    probs, losses, actions, means = random_history(rng, n_rep, horizon, n_act, kind)
    ends = random_ends(rng, horizon)
    big = [horizon - 1, horizon, horizon + 1, 10 * horizon]
    metrics = [
        Regret(),
        AdaptiveRegret(),
        DynamicRegret(),
        Loss(),
        QuantileRegret(eps=[1.0 / n_act, 0.5 / n_act, 1e-9, 1.0]),
        ShiftingRegret(k=[0, *[max(0, k) for k in big]]),
        StronglyAdaptiveRegret(tau=sorted({max(1, k) for k in big})),
    ]
    snaps, spec = drive(metrics, probs, losses, actions, means, ends)
    taus = metrics[-1].param_values(spec)
    for t, (reg, ada, dyn, lss, quant, shift, sa) in snaps.items():
        reg, ada, dyn, lss = reg[:, 0], ada[:, 0], dyn[:, 0], lss[:, 0]
        for q in range(3):  # ⌈εN⌉ = 1: external regret (oracle for the evaluation code)
            np.testing.assert_allclose(quant[:, q], reg, atol=ATOL, rtol=0)
        # ε = 1: Ĥ − max_i L_{t,i} (oracle for the evaluation code, k = N)
        worst = lss - losses[:, :t].sum(axis=1).max(axis=1)
        np.testing.assert_allclose(quant[:, 3], worst, atol=ATOL, rtol=0)
        # k = 0: external regret; k ≥ t − 1: dynamic regret (our own check)
        np.testing.assert_allclose(shift[:, 0], reg, atol=ATOL, rtol=0)
        for q in range(1, shift.shape[1]):
            np.testing.assert_allclose(shift[:, q], dyn, atol=ATOL, rtol=0)
        # τ ≥ t: adaptive regret (SA_≤(T) = AR_T, Daniely et al. 2015)
        for q, tau in enumerate(taus):
            if tau >= t:
                np.testing.assert_allclose(sa[:, q], ada, atol=ATOL, rtol=0)


# ----------------------------------------------------------------------------------------------
# the shifting DP against exhaustive path enumeration


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(1, 7),
    st.integers(1, 3),
    st.sampled_from(KINDS),
)
def test_shifting_dp_equals_exhaustive_enumeration(seed, horizon, n_act, kind):
    """Both the segment DP and the kernel equal the min over all N^T paths (oracle for the
    evaluation code)."""
    rng = np.random.default_rng(seed)
    probs, losses, actions, means = random_history(rng, 1, horizon, n_act, kind)
    ks = list(range(horizon + 1))
    exhaustive = [exhaustive_shifting_opt(losses[0], k) for k in ks]
    segment = [shifting_opt(losses[0], k) for k in ks]
    np.testing.assert_allclose(segment, exhaustive, atol=ATOL, rtol=0)
    metrics = [ShiftingRegret(k=ks), Loss()]
    snaps, _ = drive(metrics, probs, losses, actions, means, random_ends(rng, horizon))
    shift, learner = snaps[horizon]
    np.testing.assert_allclose(learner[0, 0] - shift[0], exhaustive, atol=ATOL, rtol=0)


def test_exhaustive_enumeration_on_a_known_case():
    """Hand-checked: best fixed expert loses 2, one switch 1, two switches 0."""
    losses = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    assert [exhaustive_shifting_opt(losses, k) for k in range(5)] == [2, 1, 1, 0, 0]
    assert [shifting_opt(losses, k) for k in range(5)] == [2, 1, 1, 0, 0]


# ----------------------------------------------------------------------------------------------
# relations between the notions (our own check)


@settings(max_examples=40, deadline=None)
@given(instances)
def test_metric_relations(instance):
    seed, horizon, n_act, n_rep, kind = instance
    rng = np.random.default_rng(seed)
    probs, losses, actions, means = random_history(rng, n_rep, horizon, n_act, kind)
    eps, ks, taus = random_params(rng, horizon, n_act)

    def metrics():
        return [
            Regret(),
            AdaptiveRegret(),
            QuantileRegret(eps=eps),
            ShiftingRegret(k=ks),
            StronglyAdaptiveRegret(tau=taus),
        ]

    ends = random_ends(rng, horizon)
    snaps, _ = drive(metrics(), probs, losses, actions, means, ends)
    # translation invariance: adding c_t to every l_{t,i} adds c_t to h_t and changes nothing
    shifted = losses + rng.random((n_rep, horizon, 1))
    snaps_shifted, _ = drive(metrics(), probs, shifted, actions, means, ends)
    r_inst = (probs * losses).sum(axis=2)[:, :, None] - losses  # r_{t,i}
    for t, (reg, ada, quant, shift, sa) in snaps.items():
        reg, ada = reg[:, 0], ada[:, 0]
        assert np.all(reg <= ada + ATOL)  # external ≤ AR
        assert np.all(r_inst[:, :t].max(axis=(1, 2)) <= ada + ATOL)  # max r_{t,i} ≤ AR
        assert np.all(np.diff(quant, axis=1) <= ATOL)  # non-increasing in ε (eps sorted)
        assert np.all(np.diff(shift, axis=1) >= -ATOL)  # non-decreasing in k (ks sorted)
        assert np.all(np.diff(sa, axis=1) >= -ATOL)  # non-decreasing in τ (taus sorted)
        ks_arr = np.asarray(ks, dtype=np.float64)
        assert np.all(shift <= (ks_arr + 1) * ada[:, None] + ATOL)  # R^(k) ≤ (k+1)·AR
        assert np.all(sa <= ada[:, None] + ATOL)
        np.testing.assert_allclose(sa[:, 0], r_inst[:, :t].max(axis=(1, 2)), atol=ATOL, rtol=0)
        for a, b in zip(snaps[t], snaps_shifted[t], strict=True):
            np.testing.assert_allclose(a, b, atol=ATOL, rtol=0)


def test_bruteforce_rejects_bad_input():
    p = np.full((3, 2), 0.5)
    with pytest.raises(ValueError):
        regret(p, np.zeros((3, 3)))
    with pytest.raises(ValueError):
        quantile_regret(p, p, 0.0)
    with pytest.raises(ValueError):
        sa_regret(p, p, 0)
    with pytest.raises(ValueError):
        shifting_opt(p, -1)
    with pytest.raises(UnknownComponentError):
        reference_value("no_such_metric", math.nan, p, p, np.zeros(3, dtype=int))
