"""``arena check`` reaches a verdict on every check, whatever the component does.

A component whose fault raises something other than ``AssertionError`` (a ``GameError`` from a NaN
loss, a crash) gets an ``ERROR`` for that check alone; the command runs every other check and
ends with its summary. A target that is not a player or adversary is refused in one line.
"""

from __future__ import annotations

import textwrap

from arena.experts.checks import CHECKS
from arena.testing import COMMON_CHECKS
from tests.helpers.cli import arena

NAN_ADVERSARY = textwrap.dedent(
    '''
    import numpy as np

    from arena import ObliviousAdversary


    class NaNAtRound(ObliviousAdversary):
        """Uniform losses, but NaN from round 3 on."""

        def reset(self, spec, rngs):
            self._rngs, self._n = list(rngs), spec.n_actions

        def losses_block(self, t0, n):
            out = np.stack([rng.random((n, self._n)) for rng in self._rngs])
            rounds = np.arange(t0, t0 + n)
            out[:, rounds >= 3, :] = np.nan
            return out
    '''
)


def test_a_component_that_breaks_games_gets_a_verdict_on_every_check(tmp_path):
    (tmp_path / "nan_plugin.py").write_text(NAN_ADVERSARY)
    done = arena("check", "nan_plugin:NaNAtRound", cwd=tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr + done.stdout
    lines = [line for line in done.stdout.splitlines() if line.startswith("NaNAtRound()")]
    # every check of an experts adversary is reported, the failing ones among them
    assert len(lines) == len(COMMON_CHECKS) + len(CHECKS.adversary_checks), done.stdout
    assert any("check_losses_valid" in line and "FAIL" in line for line in lines)
    assert any("ERROR: GameError" in line for line in lines)
    assert any(line.rstrip().endswith(" ok") for line in lines)  # e.g. clone and repr
    # a NaN is the business of the checks above, not a determinism failure
    assert any("check_adversary_seed_determinism" in line and "ok" in line for line in lines)
    assert any("check_block_matches_stream" in line and "ok" in line for line in lines)
    assert "FAILED:" in done.stdout and "unexpected result(s)" in done.stdout


def test_a_correct_component_passes_with_a_summary(tmp_path):
    done = arena("check", "arena.players.ftl:FollowTheLeader", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passed: 0 unexpected result(s)" in done.stdout
    assert "ok" in done.stdout.splitlines()[-2]


def test_a_target_that_is_not_a_component_is_refused_in_one_line(tmp_path):
    done = arena("check", "json:loads", cwd=tmp_path)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "json:loads is not a player or adversary class" in done.stderr


ADAPTIVE_PLUGIN = textwrap.dedent(
    '''
    import numpy as np

    from arena import AdaptiveAdversary
    from arena.spec import AdversaryTags


    class Heaviest(AdaptiveAdversary):
        """Loss 1 on the experts holding the most weight in p_t."""

        tags = AdversaryTags(sees_distribution=True)

        def __init__(self):
            pass

        def reset(self, spec, rngs):
            self._n = spec.n_actions

        def losses(self, t, history):
            p = history.probs
            return (p >= p.max(axis=1, keepdims=True)).astype(float)


    class SaysOblivious(Heaviest):
        tags = AdversaryTags(oblivious=True, sees_distribution=True)


    class Forgot(Heaviest):
        tags = AdversaryTags(sees_distribution=False)
    '''
)


def _lines(done, name: str) -> dict[str, str]:
    """``{check: verdict}`` of one component's lines in ``arena check``'s output."""
    out = {}
    for line in done.stdout.splitlines():
        if line.startswith(f"{name}()"):
            check, _, verdict = line[len(f"{name}()") :].strip().partition(" ")
            out[check] = verdict.strip()
    return out


def test_skipped_checks_are_printed_as_skipped_with_their_reason(tmp_path):
    (tmp_path / "adaptive_plugin.py").write_text(ADAPTIVE_PLUGIN)
    done = arena("check", "adaptive_plugin:Heaviest", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    verdicts = _lines(done, "Heaviest")
    assert verdicts["check_tags_match_class"] == "ok"
    assert verdicts["check_history_is_read_only"] == "ok"  # no longer skipped by a wrong tag
    assert verdicts["check_block_matches_stream"] == (
        "skipped: not an ObliviousAdversary: it has no losses_block"
    )
    assert verdicts["check_oblivious_is_oblivious"].startswith("skipped: tagged oblivious=False")
    n_skipped = sum(v.startswith("skipped") for v in verdicts.values())
    n_ok = sum(v == "ok" for v in verdicts.values())
    assert n_skipped == 3 and n_ok == len(verdicts) - 3
    assert f"{n_ok} ok, {n_skipped} skipped\n" in done.stdout


def test_a_contradiction_between_class_and_tags_fails_with_what_to_change(tmp_path):
    (tmp_path / "adaptive_plugin.py").write_text(ADAPTIVE_PLUGIN)
    done = arena("check", "adaptive_plugin:SaysOblivious", cwd=tmp_path)
    assert done.returncode == 1
    verdicts = _lines(done, "SaysOblivious")
    assert verdicts["check_tags_match_class"].startswith("FAIL: ")
    assert "remove oblivious=True from its tags" in verdicts["check_tags_match_class"]
    # the check the wrong tag turns off says so instead of "ok"
    assert verdicts["check_history_is_read_only"] == (
        "skipped: tagged oblivious=True: the arena shows it no history"
    )


def test_a_missing_sees_distribution_fails_with_the_tag_to_add(tmp_path):
    (tmp_path / "adaptive_plugin.py").write_text(ADAPTIVE_PLUGIN)
    done = arena("check", "adaptive_plugin:Forgot", cwd=tmp_path)
    assert done.returncode == 1
    assert "AxisError" not in done.stdout + done.stderr
    verdicts = _lines(done, "Forgot")
    assert verdicts["check_tags_match_class"].startswith("FAIL: ")
    assert "tags = AdversaryTags(sees_distribution=True)" in verdicts["check_tags_match_class"]
    # the whole-game checks stop at the read, naming the adversary and the round
    assert verdicts["check_seed_determinism"] == (
        "ERROR: UndeclaredDistributionError: adversary Forgot Forgot(): reads history.probs but "
        "does not declare sees_distribution=True (tags = AdversaryTags(sees_distribution=True)) "
        "(round 1, all replicates)"
    )


PYTEST_PLUGIN_TESTS = textwrap.dedent(
    """
    import pytest

    from adaptive_plugin import Heaviest
    from arena.testing import parametrize_with_checks, yield_checks


    @parametrize_with_checks([Heaviest()])
    def test_conformance(component, check):
        check(component)


    @pytest.mark.parametrize("check", list(yield_checks(Heaviest())), ids=lambda c: c.__name__)
    def test_by_hand(check):
        check(Heaviest())
    """
)


def test_pytest_reports_a_check_that_does_not_apply_as_skipped_with_its_reason(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "adaptive_plugin.py").write_text(ADAPTIVE_PLUGIN)
    (tmp_path / "test_plugin.py").write_text(PYTEST_PLUGIN_TESTS)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "test_plugin.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "24 passed, 6 skipped" in done.stdout  # 15 checks each of 2 adversaries
    assert "not an ObliviousAdversary: it has no losses_block" in done.stdout
