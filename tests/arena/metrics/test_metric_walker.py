"""Every registered metric, in every protocol it declares, equals its own reference (issue 29).

The walker (:mod:`tests.helpers.metric_walker`) plays small random games of registered players
and adversaries the metric applies to with the driver, and recomputes each checkpoint's values
with the protocol's literal reference loop, which calls ``metric.reference`` on the game's record;
the tolerance is :data:`~tests.helpers.metric_walker.TOLERANCE`. The kernels' own brute-force
tests (``test_builtin.py``, ``test_time_varying.py``, ``test_tree.py``, ...) and the reference
equivalence of every player (``tests/arena/engine/test_reference_equivalence.py``) call the same
references; this file makes sure no registered metric is left out.
"""

from __future__ import annotations

import pytest

from arena.metric import metric_index
from tests.helpers.metric_walker import UNCOVERED, cases, check_case, reference_missing

INDEX = metric_index()
CASES = list(cases(INDEX))


def test_every_registered_metric_declares_protocols_and_a_reference():
    assert reference_missing(INDEX) == []


def test_the_uncovered_pairs_are_registered_pairs():
    assert set(UNCOVERED) <= {(c.key, c.protocol) for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_streamed_values_equal_the_metrics_reference(case):
    played = check_case(case)
    why = UNCOVERED.get((case.key, case.protocol))
    if why is None:
        assert played, f"no registered {case.protocol} game computes {case.key}"
    else:
        assert not played, f"{case.id} is played now ({played}): drop it from UNCOVERED ({why})"
