"""Oracle tests of Follow the Leader (``arena.players.ftl``), played through the engine.

Every number asserted here comes from a closed form or an exact identity (no external file is
read at test time); FTL's sums are exact on the data used, so its distributions are compared
bitwise. The reduction of Hedge to FTL (η → ∞) is in ``test_hedge.py``.
"""

from __future__ import annotations

import pytest

from arena import play
from arena.players.ftl import FollowTheLeader
from tests.helpers import assert_below, metric_table
from tests.helpers.experts import (
    check_affine_rescale,
    check_permutation_equivariance,
    check_shift_invariance,
)

P_ATOL = 1e-12
"""FTL's point masses do not depend on the rescaling up to rounding of the cumulative losses."""

# ----------------------------------------------------------------------------------------------
# FTL exact values (the FTL killer; greedy adversary)


def test_ftl_on_ftl_killer_exact():
    # the FTL killer: FTL regret is exactly T/2 − ¼ with uniform tie-break and exactly T/2
    # with the lowest-index rule. All losses are multiples of ¼, so the float sums are exact.
    checkpoints = [*range(1, 51), 1000]
    for tie_break, offset in [("uniform", 0.25), ("lowest", 0.0)]:
        rows = play(
            FollowTheLeader(tie_break=tie_break),
            "ftl_killer",
            n_actions=2,
            horizon=1000,
            checkpoints=checkpoints,
            metrics={"regret": {}},
        )
        ts, regret = metric_table(rows, "regret")
        assert ts.tolist() == checkpoints
        assert regret[0].tolist() == (ts / 2.0 - offset).tolist(), tie_break


@pytest.mark.parametrize("ties", ["random", "all"])
@pytest.mark.parametrize("n_act", [2, 5])
def test_ftl_lowest_against_greedy_loses_every_round(ties, n_act):
    # greedy adversary: a deterministic pure player gets loss 1 every round from the greedy
    # adversary, so its loss is exactly T and its regret ≥ T(1 − 1/N) (pigeonhole).
    horizon = 500
    rows = play(
        FollowTheLeader(tie_break="lowest"),
        "greedy",
        adversary_params={"ties": ties},
        n_actions=n_act,
        horizon=horizon,
        replicates=3,
        metrics={"loss": {}, "regret": {}},
    )
    loss = rows[rows.metric == "loss"]
    assert (loss.value.to_numpy() == loss.t.to_numpy().astype(float)).all()
    regret = rows[rows.metric == "regret"]
    assert_below(
        regret.t.to_numpy() * (1 - 1 / n_act), regret.value.to_numpy(), "FTL greedy regret"
    )


# ----------------------------------------------------------------------------------------------
# invariances (Hedge's: tests/players/test_hedge.py)

FTLS = {
    "ftl_uniform": FollowTheLeader(),
    "ftl_lowest": FollowTheLeader(tie_break="lowest"),
}


def test_affine_rescale_into_declared_range(tmp_path):
    # FTL's argmin is affine invariant: l' = lo + (hi − lo)·l with the declared range [lo, hi]
    # gives the same p as l on [0, 1], and the regret scales by hi − lo (metamorphic tests)
    check_affine_rescale(FollowTheLeader(), tmp_path, atol=P_ATOL)


@pytest.mark.parametrize("player_id", list(FTLS))
def test_per_round_shift_invariance(player_id, tmp_path):
    # invariance: l_t → l_t + c_t·1 leaves p_{1:T} and the regret unchanged. Dyadic losses and
    # shifts (≤ ½ each) keep every sum exact, so FTL ties survive: p agrees bitwise.
    check_shift_invariance(FTLS[player_id], tmp_path, exact=True)


@pytest.mark.parametrize("player_id", list(FTLS))
def test_permutation_equivariance(player_id, tmp_path):
    # invariance: permuting the experts permutes p. FTL uniform is checked on dyadic data full of
    # ties; lowest-index tie-breaking is label-dependent, so it is checked on continuous data,
    # whose only tie is the all-zero start (its round-1 point mass on expert 0 is skipped).
    uniform = player_id == "ftl_uniform"
    check_permutation_equivariance(
        FTLS[player_id], tmp_path, dyadic=uniform, skip_first_round=not uniform, atol=P_ATOL
    )
