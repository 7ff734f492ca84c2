"""The mistake_bound metric: a player's relative mistake bound at the adversary's comparator."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena import play
from arena.adversaries.orthogonal_hinge import OrthogonalHinge
from arena.adversaries.r_of_k import ROfK
from arena.adversaries.separable_stream import SeparableStream
from arena.oco.mistake_bound import MistakeBound
from arena.players.ogd import OGD
from arena.players.perceptron import Perceptron
from arena.players.pnorm_perceptron import PNormPerceptron
from arena.players.winnow import Winnow

T = 600


def _final(df, metric):
    fin = df[df.t == df.t.max()]
    return fin[fin.metric == metric].sort_values("replicate").value.to_numpy()


@pytest.mark.parametrize(
    ("player", "adversary", "dim"),
    [
        (Perceptron(), SeparableStream(margin=0.1, noise=0.1), 8),
        (PNormPerceptron(p=4.0), SeparableStream(margin=0.1, noise=0.1), 8),
        (Winnow(variant="self_tuned", signed=True), SeparableStream(margin=0.1, noise=0.1), 8),
        (Winnow(variant="self_tuned"), ROfK(r=2, k=3, noise=0.1), 30),
        (Winnow(c=50.0), ROfK(r=1, k=2, noise=0.05), 30),
    ],
)
def test_bound_is_the_players_own_at_the_comparator_and_holds(player, adversary, dim):
    # the bound holds and is finite on noisy data (test_metric_walker checks the streamed H
    # against its round-by-round reference)
    df = play(
        player,
        adversary,
        n_actions=dim,
        horizon=T,
        replicates=3,
        metrics=["mistakes", "mistake_bound"],
    )
    mistakes, bound = _final(df, "mistakes"), _final(df, "bound:mistakes")
    assert np.all(np.isfinite(bound)) and np.all(mistakes <= bound)
    assert np.all(mistakes > 0)  # noisy data: the bound's hinge term is exercised


def test_perceptron_bound_equals_corollary_5_on_separable_data():
    # clean data, comparator u*/γ: H = 0 and Cor 5 is X²‖u‖² with X the largest mistake norm
    adv = SeparableStream(margin=0.2)
    p = Perceptron()
    df = play(p, adv, n_actions=5, horizon=T, replicates=2, metrics=["mistakes", "mistake_bound"])
    bound = _final(df, "bound:mistakes")
    assert np.all(bound <= (1 / 0.2) ** 2 * (1 + 1e-12))  # X ≤ R = 1, ‖u‖ = 1/γ
    assert np.all(_final(df, "mistakes") <= bound)


def test_winnow_outside_its_comparator_set_has_no_bound():
    # unsigned Winnow's bound needs u ≥ 0; a planted u* of mixed signs gives inf
    w = Winnow(variant="self_tuned")
    u = np.array([[1.0, -2.0, 0.5], [1.0, 2.0, 0.5]])
    from arena.oco.domains import Domain
    from arena.spec import GameSpec

    w.reset(
        GameSpec("classification", 3, 5, n_replicates=2, dim=3, domain=Domain(), loss="hinge"),
        [np.random.default_rng(0)] * 2,
    )
    b = w.comparator_mistake_bound(u, np.array([1.0, 1.0]))
    assert math.isinf(b[0]) and math.isfinite(b[1])
    # the second: u/‖u‖₁ with γ = 1/3.5 and H_γ = γ·1; before any round X = 0, so Cor 6 is
    # H_γ/γ = 1
    assert b[1] == pytest.approx(1.0, rel=1e-12)


def test_not_applicable_without_a_fixed_comparator_or_a_player_bound():
    m = MistakeBound()
    assert "built from the play" in m.applicable(Perceptron(), OrthogonalHinge())
    assert "comparator_mistake_bound" in m.applicable(OGD(), SeparableStream())
    assert m.applicable(Perceptron(), ROfK()) is None
