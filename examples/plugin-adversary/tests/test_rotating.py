"""The plugin passes regret-arena's public conformance suite."""

from arena_rotating import RotatingBest

from arena.testing import parametrize_with_checks


@parametrize_with_checks([RotatingBest(), RotatingBest(period=3, level=0.5)])
def test_conformance(component, check):
    check(component)
