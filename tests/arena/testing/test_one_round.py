"""The one-round API (:mod:`arena.rounds`): every registered component plays the engine's game.

``check_one_round_matches_engine`` runs here once per registered name (the first parameter set of
``_unit_test_params``), not in ``test_conformance.py``'s product of every parameter set with every
check; the broken components it must catch are in ``test_conformance_catches_bugs.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena import play, registry
from arena.experts.reference import ExpertsLoop, ExpertsOutcome
from arena.rounds import loop_class, start
from arena.testing.common import SkipCheck, check_one_round_matches_engine

SLOW = {"boosting_oracle"}
"""Names whose check takes over a second of CPU warm (measured; docs/one-round.md)."""


def one_per_name():
    for kind in ("player", "adversary", "weak_learner"):
        for name in registry.available(kind):
            cls = registry.load(kind, name)
            params = next(iter(cls._unit_test_params()))
            marks = (pytest.mark.slow,) if name in SLOW else ()
            yield pytest.param(cls(**params), id=f"{kind}-{name}", marks=marks)


@pytest.mark.parametrize("component", list(one_per_name()))
def test_one_round_matches_engine(component):
    try:
        check_one_round_matches_engine(component)
    except SkipCheck as exc:
        pytest.skip(str(exc))


KW = dict(n_actions=3, horizon=12, replicates=2, seed=3, metrics=["loss", "regret"])


def test_a_plain_hand_loop_gives_the_engines_rows():
    session = start("hedge", "bernoulli", **KW)
    assert isinstance(session, ExpertsLoop)
    hedge = session.player
    for t in session.rounds():
        assert session.round == t
        p = hedge.predict()
        seen = session.respond(p)
        assert isinstance(seen, ExpertsOutcome) and seen.losses.shape == (2, 3)
        assert not seen.losses.flags.writeable
        hedge.update(seen.losses)
    assert session.played == 12
    pd.testing.assert_frame_equal(
        session.rows(), play("hedge", "bernoulli", **KW), check_exact=False, rtol=0, atol=1e-12
    )


def test_rows_hold_the_checkpoints_reached_so_far():
    session = start("hedge", "bernoulli", **{**KW, "checkpoints": [4, 8]})
    for _ in range(5):
        session.play_round(session.round)
    assert sorted(session.rows().t.unique()) == [4]
    full = start("hedge", "bernoulli", **{**KW, "checkpoints": [4, 8]}).play()
    assert sorted(full.t.unique()) == [4, 8, 12]
    pd.testing.assert_frame_equal(session.rows(), full[full.t == 4].reset_index(drop=True))


def test_the_context_is_fetched_once_a_round():
    session = start("ada_normal_hedge", "sleeping", **KW)
    first = session.context()
    assert first.shape == (2, 3)
    assert session.context() is first  # the adversary's stream is not drawn twice
    session.update(session.respond(session.predict()))
    assert session.round == 2 and session.context() is not first


def test_a_round_the_body_does_not_play_is_refused():
    session = start("hedge", "bernoulli", **KW)
    with pytest.raises(RuntimeError, match="round 1 ended unplayed"):
        for _ in session.rounds():
            session.player.predict()


def test_a_round_out_of_turn_is_refused():
    session = start("hedge", "bernoulli", **KW)
    with pytest.raises(ValueError, match="round 2 played out of turn: round 1 is next"):
        session.play_round(2)


def test_a_wrong_shape_names_the_round():
    session = start("hedge", "bernoulli", **KW)
    with pytest.raises(ValueError, match=r"player.predict returned shape \(2, 2\) at round 1"):
        session.respond(np.full((2, 2), 0.5))


def test_a_protocol_without_a_loop_class_has_no_one_round_api():
    class NoLoop:
        name = "nowhere"
        reference_loop = "math:sqrt"

        def reference_loop_target(self):
            import math

            return math.sqrt

    with pytest.raises(NotImplementedError, match="no one-round API"):
        loop_class(NoLoop())
