"""self_confirming: adaptive linear losses that reward the learner's current lean (Luo 2016,
Appendix A.3 allows the OCO adversary to see w_t; Theorem 22 holds against it)."""

from __future__ import annotations

import numpy as np
import pytest

from arena import play
from arena.adversaries.self_confirming import SelfConfirming
from arena.errors import ConfigError
from arena.params import validate_params
from arena.players.continuous_exp_weights import ContinuousExpWeights


def test_the_gradient_points_against_the_lean_with_norm_g_and_a_fixed_tie_rule():
    adv = SelfConfirming(G=3.0)
    w = np.array([[0.6, -0.8], [0.0, 0.0], [-2.0, 0.0]])
    g = adv.reveal(1, w).g
    np.testing.assert_allclose(np.linalg.norm(g, axis=1), 3.0, rtol=1e-15)
    np.testing.assert_allclose(g, [[-1.8, 2.4], [-3.0, 0.0], [3.0, 0.0]], rtol=1e-15)
    # the learner's loss ⟨g_t, w_t⟩ = −G‖w_t‖: the round rewards its lean
    np.testing.assert_allclose((g * w).sum(axis=1), -3.0 * np.linalg.norm(w, axis=1))


def test_declarations_follow_the_parameters():
    adv = SelfConfirming(G=0.5, domain="box", radius=2.0)
    dom = adv.declared_domain()
    assert (dom.kind, float(dom.radius)) == ("box", 2.0)
    assert adv.gradient_bound() == 0.5 and adv.declared_loss() == "linear"
    assert not SelfConfirming.tags.oblivious
    with pytest.raises(ConfigError, match="domain"):
        validate_params(SelfConfirming(domain="simplex"))


def test_continuous_exp_weights_stays_below_theorem_22_against_it():
    # T = 400 on [−1, 1]: the adaptive adversary forces a positive regret (the mean of the
    # exponential-weights density stays inside the segment, the best point is an end) that
    # the declared bound of Luo 2016, Theorem 22, still covers
    df = play(ContinuousExpWeights(panels=16), SelfConfirming(), n_actions=1, horizon=400,
              replicates=2, metrics={"regret": {}, "bound": {}})  # fmt: skip
    last = df[df.t == 400].groupby("metric").value
    regret, bound = last.max()["regret"], last.min()["bound:regret"]
    assert 0.0 < regret <= bound
    # deterministic player, deterministic adversary: identical replicates
    assert last.nunique()["regret"] == 1
