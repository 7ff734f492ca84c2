"""Public conformance suite: the checks every player and adversary must pass, plugins included.

Use it in a plugin's own tests::

    from arena.testing import parametrize_with_checks
    from my_plugin import MyAdversary

    @parametrize_with_checks([MyAdversary(), MyAdversary(rate=0.5)])
    def test_conformance(component, check):
        check(component)

or from the command line: ``arena check my_plugin:MyAdversary``. A component that is known to fail
a check lists ``(check name, reason)`` in its tags' ``expected_failed_checks``; the check then
becomes a strict xfail (it must keep failing, so a fix is noticed). A check that does not apply
(the block path of an adaptive adversary, the bounds of a player that declares none) raises
:class:`SkipCheck` with the reason: pytest reports it as skipped, ``arena check`` prints
``skipped: <reason>``.

The checks every component passes live in :mod:`arena.testing.common`; each protocol adds its own
(:mod:`arena.experts.checks`, :mod:`arena.oco.checks`, or a plugin protocol's) through
:meth:`arena.protocol.GameProtocol.conformance`, and :func:`yield_checks` chains them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from arena.testing.common import COMMON_CHECKS, Check, ProtocolChecks, SkipCheck, yield_checks

__all__ = [
    "COMMON_CHECKS",
    "Check",
    "ProtocolChecks",
    "SkipCheck",
    "check_adversary",
    "check_component",
    "check_player",
    "expected_failures",
    "parametrize_with_checks",
    "yield_checks",
]


def expected_failures(component: Any) -> dict[str, str]:
    """Return ``{check name: reason}`` the component declares it fails."""
    # a component without tags (a weak learner) declares none
    return dict(getattr(getattr(component, "tags", None), "expected_failed_checks", ()))


def check_component(component: Any) -> dict[str, str]:
    """Run every applicable check; raise on the first unexpected failure.

    Returns the declared expected failures that did fail (name -> reason). A declared failure that
    passes raises too, so stale declarations are noticed. A check that raises :class:`SkipCheck`
    did not apply: it neither passes nor fails, declared or not.
    """
    expected = expected_failures(component)
    failed_as_expected = {}
    for check in yield_checks(component):
        name = check.__name__
        try:
            check(component)
        except SkipCheck:
            continue
        except AssertionError:
            if name in expected:
                failed_as_expected[name] = expected[name]
                continue
            raise
        if name in expected:
            raise AssertionError(
                f"{name} passed for {component!r} but is declared as an expected failure "
                f"({expected[name]}); remove the declaration"
            )
    return failed_as_expected


def check_player(player: Any) -> dict[str, str]:
    """Run every player check on ``player`` (see :func:`check_component`)."""
    return check_component(player)


def check_adversary(adversary: Any) -> dict[str, str]:
    """Run every adversary check on ``adversary`` (see :func:`check_component`)."""
    return check_component(adversary)


def parametrize_with_checks(components: Iterable[Any], *, exclude: Iterable[str] = ()):
    """Return a ``pytest.mark.parametrize("component, check", ...)`` over components × checks.

    Test ids read ``Hedge(eta=0.3)-check_predict_is_pure``; expected failures become
    ``xfail(strict=True)`` with their reason, and a check that does not apply is reported as
    skipped with its reason (:class:`SkipCheck`). ``exclude`` names checks to leave out (a test
    suite that runs them apart, on other parameters).
    """
    import pytest

    excluded = frozenset(exclude)
    params = []
    for component in components:
        expected = expected_failures(component)
        for check in yield_checks(component):
            name = check.__name__
            if name in excluded:
                continue
            marks = ()
            if name in expected:
                marks = (pytest.mark.xfail(strict=True, reason=expected[name]),)
            params.append(pytest.param(component, check, id=f"{component!r}-{name}", marks=marks))
    return pytest.mark.parametrize(("component", "check"), params)
