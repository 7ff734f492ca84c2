"""Tests of FLH (arena/players/flh.py): a literal transcription of Hazan & Seshadhri (2009),
Algorithm 1 with linear losses, golden values, the declared adaptive-regret bound on several
adversaries, the gain over plain Hedge on shifting experts, memory and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena import play
from arena.errors import ConfigError
from arena.players.ada_normal_hedge_tv import cover_partition, geometric_levels
from arena.players.flh import FLH, lifetime, live_starts
from tests.helpers import check_declared
from tests.helpers.experts import spec, step_player

TOL = 1e-12


def hedge_fixed(cum, eta):
    """Hedge with a fixed rate on cumulative unit losses (the base of the transcription)."""
    w = [math.exp(-eta * (c - min(cum))) for c in cum]
    return [x / sum(w) for x in w]


def transcription(losses, eta, base_eta, starts="all"):
    """FLH from its definition for one (T, N) game, plain Python: copies of Hedge(base_eta)
    started every round, exponential weights with rate eta, newcomer weight 1/(t+1)."""
    n_rounds, n = losses.shape
    copies = {1: [0.0] * n}  # start -> cumulative losses of the copy's game
    v = {1: 1.0}
    out = []
    for t in range(1, n_rounds + 1):
        q = {a: hedge_fixed(cum, base_eta) for a, cum in copies.items()}
        p = [sum(v[a] * q[a][i] for a in copies) for i in range(n)]
        out.append(p)
        ell = losses[t - 1]
        h = {a: sum(q[a][i] * ell[i] for i in range(n)) for a in copies}
        w = {a: v[a] * math.exp(-eta * h[a]) for a in copies}
        for a in copies:
            copies[a] = [c + x for c, x in zip(copies[a], ell, strict=True)]
        if starts == "geometric":
            for a in [a for a in copies if a + (a & -a) - 1 <= t]:
                del copies[a], w[a]
        total = sum(w.values())
        if w:
            v = {a: (1 - 1 / (t + 1)) * x / total for a, x in w.items()}
            v[t + 1] = 1 / (t + 1)
        else:
            v = {t + 1: 1.0}
        copies[t + 1] = [0.0] * n
    return np.array(out)


@pytest.mark.parametrize("starts", ["all", "geometric"])
@pytest.mark.parametrize("n_act", [1, 2, 4])
def test_matches_transcription(starts, n_act):
    rng = np.random.default_rng(n_act + len(starts))
    losses = rng.random((60, n_act))
    losses[:, 0] = np.round(losses[:, 0])
    want = transcription(losses, 0.7, 0.4, starts)
    player = FLH("hedge", {"eta": 0.4}, eta=0.7, starts=starts)
    player.reset(spec(n_act, 60), [np.random.default_rng(0)])
    got = step_player(player, losses[None])[0]
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL)


def test_golden_first_rounds():
    # round 1: one copy (uniform Hedge). Round 2 after losses (0, 1): copy 1 (η_b = ln 3) plays
    # (3/4, 1/4) with weight ½ (the meta update of the only copy leaves 1, then × (1 − ½)), the
    # newborn plays (½, ½) with weight ½: p_2 = (5/8, 3/8), whatever η.
    player = FLH("hedge", {"eta": math.log(3.0)}, eta=2.0, starts="all")
    player.reset(spec(2, 5), [None])
    np.testing.assert_allclose(player.predict(), [[0.5, 0.5]], rtol=0, atol=TOL)
    player.update(np.array([[0.0, 1.0]]))
    np.testing.assert_allclose(player.predict(), [[0.625, 0.375]], rtol=0, atol=TOL)
    # round 3 after losses (1, 0): copy 1 lost 1/4·... ; check against the hand formula
    q1, q2 = np.array([0.75, 0.25]), np.array([0.5, 0.5])
    h = np.array([q1 @ [1, 0], q2 @ [1, 0]])
    w = np.array([0.5, 0.5]) * np.exp(-2.0 * h)
    v = np.append((2 / 3) * w / w.sum(), 1 / 3)
    q1n = np.array(hedge_fixed([1.0, 1.0], math.log(3.0)))
    q2n = np.array(hedge_fixed([1.0, 0.0], math.log(3.0)))
    want = v[0] * q1n + v[1] * q2n + v[2] * np.array([0.5, 0.5])
    player.update(np.array([[1.0, 0.0]]))
    np.testing.assert_allclose(player.predict()[0], want, rtol=0, atol=TOL)


def test_live_copies_are_the_covering_and_logarithmic():
    player = FLH("hedge", {"eta": 0.3}, eta=1.0, starts="geometric")
    horizon = 1100
    player.reset(spec(2, horizon), [None])
    rng = np.random.default_rng(3)
    for t in range(1, horizon + 1):
        assert player.live_copies() == live_starts(t, "geometric")
        assert player.live_copies() == sorted({a for _, a in geometric_levels(t)})
        assert len(player.live_copies()) <= t.bit_length()  # ⌊log₂ t⌋ + 1
        player.update(rng.random((1, 2)))
    assert [lifetime(a, "geometric") for a in (1, 6, 8)] == [1, 2, 8]


def test_cover_pieces_start_at_births():
    # the bound's decomposition: every piece of cover_partition starts at a copy's birth and
    # ends within its life, with distinct levels ≤ ⌊log₂ e⌋
    for s in range(1, 130):
        for e in range(s, 130):
            pieces = cover_partition(s, e)
            assert len(pieces) <= e.bit_length()
            assert len({k for *_, k in pieces}) == len(pieces)
            for a, end, _ in pieces:
                assert end <= a + lifetime(a, "geometric") - 1


ADVERSARIES = [
    ("shifting_experts", {"n_switches": 4, "gap": 0.4}),
    ("planted_windows", {}),
    ("greedy", {}),
    ("bernoulli", {"gap": 0.2}),
]
METRICS = {"regret": {}, "adaptive_regret": {}, "bound": {}}


# starts="all" runs t experts at round t (3 s a case): slow; geometric keeps every case in CI
@pytest.mark.parametrize("starts", [pytest.param("all", marks=pytest.mark.slow), "geometric"])
@pytest.mark.parametrize(("name", "params"), ADVERSARIES)
def test_declared_bound_holds(starts, name, params):
    for player in (
        FLH(starts=starts),
        FLH("hedge", {"eta": "anytime"}, eta=0.5, starts=starts),
        FLH("ada_hedge", eta=1.0, starts=starts),
    ):
        rows = play(player, name, n_actions=3, horizon=200, replicates=2, seed=4,
                    adversary_params=params, metrics=METRICS)  # fmt: skip
        assert rows.metric.eq("bound:adaptive_regret").any()
        assert check_declared(rows, f"{player!r} {name}") > 0


def test_no_bound_without_base_bound():
    rows = play(FLH("ftl", eta=1.0, starts="geometric"), "bernoulli", n_actions=2, horizon=50,
                metrics=METRICS)  # fmt: skip
    assert not rows.metric.str.startswith("bound:").any()


def test_beats_hedge_on_shifting_experts():
    # measured (T = 2000, N = 5, 8 switches, gap 0.4, 4 replicates, mean adaptive / sa τ=250):
    # hedge 105.85 / 96.25, flh 38.09 / 38.09, flh geometric 44.30 / 44.30
    kw = {"n_actions": 5, "horizon": 2000, "replicates": 4, "seed": 1,
          "adversary_params": {"n_switches": 8, "gap": 0.4},
          "metrics": {"adaptive_regret": {}, "sa_regret": {"tau": [250]}}}  # fmt: skip
    out = {}
    for label, player in (("hedge", "hedge"), ("flh", FLH()), ("flh_geo", FLH(starts="geometric"))):
        rows = play(player, "shifting_experts", **kw)
        last = rows[rows.t == 2000].groupby("metric").value.mean()
        out[label] = last
    for label in ("flh", "flh_geo"):
        assert out[label]["adaptive_regret"] < 0.5 * out["hedge"]["adaptive_regret"], out
        assert out[label]["sa_regret"] < 0.5 * out["hedge"]["sa_regret"], out


def test_errors_name_the_component():
    with pytest.raises(ConfigError, match=r"flh.*base.*exp3.*not an experts player"):
        play(FLH("exp3"), "bernoulli", n_actions=2, horizon=5)
    with pytest.raises(ConfigError, match=r"flh.*base"):
        play(FLH("no_such_player"), "bernoulli", n_actions=2, horizon=5)
    with pytest.raises(ConfigError, match=r"flh.*base_params"):
        play(FLH("hedge", {"eta": -1.0}), "bernoulli", n_actions=2, horizon=5)
    with pytest.raises(ConfigError, match=r"flh.*eta.*horizon"):
        FLH().reset(spec(2, None), [None])
