"""The public conformance suite applied to every registered player and adversary.

Components come from the registry (built-ins and installed plugins alike), one instance per
parameter set of ``_unit_test_params``; selection of checks follows the protocol base class.
"""

from __future__ import annotations

from arena import registry
from arena.testing import parametrize_with_checks


def registered_components():
    for kind in ("player", "adversary", "weak_learner"):
        for name in registry.available(kind):
            cls = registry.load(kind, name)
            for params in cls._unit_test_params():
                yield cls(**params)


# the one-round check plays two games per component: tests/arena/testing/test_one_round.py runs
# it once per registered name, its slow ones marked
@parametrize_with_checks(list(registered_components()), exclude=["check_one_round_matches_engine"])
def test_conformance(component, check):
    check(component)
