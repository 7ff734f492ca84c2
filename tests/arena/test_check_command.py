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
    done = arena("check", "players.ftl:FollowTheLeader", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passed: 0 unexpected result(s)" in done.stdout
    assert "ok" in done.stdout.splitlines()[-2]


def test_a_target_that_is_not_a_component_is_refused_in_one_line(tmp_path):
    done = arena("check", "json:loads", cwd=tmp_path)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "json:loads is not a player or adversary class" in done.stderr
