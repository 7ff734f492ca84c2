"""Messages (issue 28, class 6): each error names what is at fault, in the arena's own words.

A block that fails at its last round names that round (and the replicate, where the per-round
loop knows it), never the block's first; ``arena check`` names a wrong output shape itself, checks
weak learners, and shows which check runs; a warning never precedes an error line; a file that
is not a tournament file is named without being echoed; a list file's unknown key names the
file; ``reproduce --table`` and ``report /`` refuse in one line.
"""

from __future__ import annotations

import io
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from arena.errors import ArenaError, GameError
from arena.game import run_game
from tests.helpers.contract import assert_refused, run_in_process

# ----------------------------------------------------------------------------------------------
# the round and replicate of a block's error

PLUGINS = textwrap.dedent(
    '''
    import numpy as np

    from arena import ExpertsPlayer, ObliviousAdversary
    from arena.experts.components import SingleGameExpertsPlayer
    from arena.oco.components import OCOPlayer


    class FailsAt(ExpertsPlayer):
        """Uniform; its update raises at round `at`."""

        def __init__(self, at: int = 1000):
            self.at = at

        def reset(self, spec, rngs):
            self._shape, self._t = (spec.n_replicates, spec.n_actions), 0

        def predict(self, confidences=None):
            return np.full(self._shape, 1.0 / self._shape[1])

        def update(self, losses, actions=None):
            self._t += 1
            if self._t == self.at:
                raise ValueError(f"cannot learn from round {self._t}")


    class LiftedFailsAt(SingleGameExpertsPlayer):
        """Uniform; the replicate whose stream draws 2 first raises at round `at`."""

        def __init__(self, at: int = 1000):
            self.at = at

        def reset_one(self, spec, rng):
            self._n, self._t, self._draw = spec.n_actions, 0, int(rng.integers(3))

        def predict_one(self):
            return np.full(self._n, 1.0 / self._n)

        def update_one(self, losses):
            self._t += 1
            if self._t == self.at and self._draw == 2:
                raise ValueError("this replicate cannot learn")


    class OCOFailsAt(OCOPlayer):
        """The origin; its update raises at round `at`."""

        def __init__(self, at: int = 1000):
            self.at = at

        def reset(self, spec, rngs):
            self._shape, self._t = (spec.n_replicates, spec.dim), 0

        def predict(self, x=None):
            return np.zeros(self._shape)

        def update(self, fb):
            self._t += 1
            if self._t == self.at:
                raise ValueError("cannot learn")


    class BlockFails(ObliviousAdversary):
        """Raises in losses_block from round `at` on, without saying which round."""

        def __init__(self, at: int = 1000):
            self.at = at

        def reset(self, spec, rngs):
            self._rngs, self._n = list(rngs), spec.n_actions

        def losses_block(self, t0, n):
            if t0 + n - 1 >= self.at:
                raise ValueError("no losses today")
            return np.stack([rng.random((n, self._n)) for rng in self._rngs])
    '''
)


@pytest.fixture(scope="module")
def plugins(tmp_path_factory):
    import importlib

    folder = tmp_path_factory.mktemp("plugins")
    (folder / "h28_block_plugins.py").write_text(PLUGINS)
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module("h28_block_plugins")
    finally:
        sys.path.remove(str(folder))


def test_a_failure_at_the_last_round_of_a_block_names_that_round(plugins):
    with pytest.raises(GameError) as caught:
        run_game(plugins.FailsAt(1000), "fair_coin", n_actions=4, horizon=1000, replicates=3)
    message = str(caught.value)
    assert "(round 1000, replicate 0)" in message, message
    assert "cannot learn from round 1000" in message
    assert caught.value.round == 1000


def test_a_lifted_player_names_the_replicate_that_failed(plugins):
    draws: list[int] = []
    cls = plugins.LiftedFailsAt
    real = cls.reset_one

    def reset_one(self, spec, rng):
        real(self, spec, rng)
        draws.append(self._draw)

    cls.reset_one = reset_one
    try:
        with pytest.raises(GameError) as caught:
            run_game(cls(700), "fair_coin", n_actions=4, horizon=1000, replicates=6)
    finally:
        cls.reset_one = real
    first = draws.index(2)
    assert f"(round 700, replicate {first})" in str(caught.value), (draws, str(caught.value))


def test_an_oco_block_names_its_failing_round(plugins):
    with pytest.raises(GameError) as caught:
        run_game(plugins.OCOFailsAt(500), "random_linear", horizon=500, replicates=2)
    assert "(round 500," in str(caught.value), str(caught.value)


def test_a_block_call_that_does_not_say_its_round_names_all_its_rounds(plugins):
    with pytest.raises(GameError) as caught:
        run_game("hedge", plugins.BlockFails(1000), n_actions=4, horizon=1000, replicates=2)
    message = str(caught.value)
    t0 = caught.value.round
    assert t0 < 1000 and f"(rounds {t0}..1000," in message, message
    assert f"(round {t0}," not in message


# ----------------------------------------------------------------------------------------------
# arena check

WRONG_SHAPES = textwrap.dedent(
    '''
    import numpy as np

    from arena import AdaptiveAdversary, ObliviousAdversary
    from arena.bandit.components import BanditPlayer
    from arena.boosting.components import WeakLearner


    class OneExpertTooMany(ObliviousAdversary):
        """Losses of N + 1 experts."""

        def reset(self, spec, rngs):
            self._rngs, self._n = list(rngs), spec.n_actions

        def losses_block(self, t0, n):
            return np.stack([rng.random((n, self._n + 1)) for rng in self._rngs])


    class AdaptiveTooMany(AdaptiveAdversary):
        """Losses of N + 1 experts, round by round."""

        def reset(self, spec, rngs):
            self._shape = (spec.n_replicates, spec.n_actions + 1)

        def losses(self, t, history):
            return np.zeros(self._shape)


    class OneArmTooMany(BanditPlayer):
        """A distribution over K + 1 arms."""

        def reset(self, spec, rngs):
            self._shape = (spec.n_replicates, spec.n_actions + 1)

        def predict(self):
            return np.full(self._shape, 1.0 / self._shape[1])

        def update(self, actions, observed, probs):
            pass


    class OneLaneTooFew(WeakLearner):
        """Outputs of L − 1 lanes."""

        tasks = frozenset({"classification"})

        def __init__(self):
            pass

        def reset(self, spec, rngs):
            self._shape = (spec.n_replicates, max(spec.n_lanes - 1, 0))

        def predict(self, x):
            return np.ones(self._shape)

        def update(self, x, target, weight):
            pass
    '''
)

NUMPY_WORDS = ("broadcast", "out of bounds", "could not", "remapped")


@pytest.mark.parametrize(
    ("target", "needles"),
    [
        ("OneExpertTooMany", ("losses_block returned shape", "(3, 1, 11)", "(3, 1, 10)")),
        ("AdaptiveTooMany", ("losses returned shape", "(3, 11)", "(3, 10)")),
        ("OneArmTooMany", ("predict returned shape", "(3, 5)", "(3, 4)")),
        ("OneLaneTooFew", ("predict returned", "shape (3, 2)", "(3, 3)")),
    ],
)
def test_arena_check_names_a_wrong_shape_itself_not_with_numpys_words(tmp_path, target, needles):
    module = f"h28_shapes_{target.lower()}"  # one module per case: imports are cached
    (tmp_path / f"{module}.py").write_text(WRONG_SHAPES)
    done = run_in_process(["check", f"{module}:{target}"], tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    verdicts = [line for line in done.stdout.splitlines() if line.startswith(f"{target}(")]
    failing = [line for line in verdicts if " FAIL: " in line or " ERROR: " in line]
    assert failing, done.stdout
    for line in failing:
        assert not any(word in line for word in NUMPY_WORDS), line
    assert any(all(n in line for n in needles) for line in failing), done.stdout


SIGN_VOTE = textwrap.dedent(
    '''
    import numpy as np
    from arena.boosting.components import WeakLearner


    class SignVote(WeakLearner):
        """Lane i predicts ±sign(x_{i mod d}): the sign it has erred less often with, so far."""

        tasks = frozenset({"classification"})

        def __init__(self):
            pass

        def reset(self, spec, rngs):
            self._feature = np.array(spec.lanes()) % spec.n_features
            self._errors = np.zeros((spec.n_replicates, spec.n_lanes))
            self._seen = np.zeros((spec.n_replicates, spec.n_lanes))

        def _sign(self, x):
            return np.where(x[:, self._feature] >= 0.0, 1.0, -1.0)

        def predict(self, x):
            flip = self._errors > 0.5 * self._seen
            return np.where(flip, -self._sign(x), self._sign(x))

        def update(self, x, target, weight):
            self._errors += weight * (self._sign(x) != target)
            self._seen += weight
    '''
)


@pytest.mark.parametrize(
    "target",
    ["arena.weak_learners.oracle:OracleWeakLearner", "h28_sign_vote:SignVote"],
    ids=["built-in", "plugin"],
)
def test_arena_check_runs_the_weak_learner_checks(tmp_path, target):
    (tmp_path / "h28_sign_vote.py").write_text(SIGN_VOTE)  # docs/plugins.md's example
    done = run_in_process(["check", target], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    for check in (
        "check_weak_output_range",
        "check_weak_predict_is_pure",
        "check_seed_determinism",
    ):
        assert any(check in line and line.rstrip().endswith(" ok") for line in lines), check
    assert "passed: 0 unexpected result(s)" in done.stdout


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_arena_check_shows_the_check_it_runs_on_a_terminal(monkeypatch, capsys):
    from arena.apps import cli

    started: list[str] = []
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    real = cli._run_checks

    def spy(component, yield_checks, expected_failures, starting=None):
        def record(name):
            starting(name)
            started.append(terminal.getvalue())

        yield from real(component, yield_checks, expected_failures, starting=record)

    monkeypatch.setattr(cli, "_run_checks", spy)
    assert cli._check(["arena.weak_learners.oracle:OracleWeakLearner"]) == 0
    # before each check ran, the terminal's status line named it
    assert len(started) == 9  # the 6 common checks (one-round included) and the weak learner's 3
    assert "check_weak_lanes_independent ..." in started[-1]
    assert terminal.getvalue().endswith("\r\x1b[K")  # and it is cleared at the end
    assert "check_weak_lanes_independent" in capsys.readouterr().out


# ----------------------------------------------------------------------------------------------
# warnings, files, folders


def test_a_warning_is_never_printed_before_an_error_line(capsys):
    from arena.apps.cli import _guarded

    def diverging_then_refused():
        np.log(np.zeros(1))  # numpy's RuntimeWarning: divide by zero
        raise ArenaError("player x: its weights are not finite (round 3, replicate 0)")

    def diverging_then_done():
        warnings.warn("overflow encountered in exp", RuntimeWarning, stacklevel=1)
        return 0

    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        assert _guarded(diverging_then_refused) == 2
    assert shown == []  # the error's one line says what went wrong; the warning is dropped
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "arena: error: player x: its weights are not finite (round 3, replicate 0)"
    ], err
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        assert _guarded(diverging_then_done) == 0  # a run that succeeds still shows its warning
    assert [str(w.message) for w in shown] == ["overflow encountered in exp"]


def test_a_diverging_game_prints_one_line_without_numpys_warnings(tmp_path):
    def to_stderr(message, category, filename, lineno, file=None, line=None):
        # as a console shows a warning (pytest would otherwise collect it, not print it)
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = to_stderr
        done = run_in_process(
            [
                "run",
                "player=son",
                "adversary=ill_conditioned",
                "adversary.kappa=1e300",
                "horizon=20",
                f"hydra.run.dir={tmp_path / 'out'}",
            ],
            tmp_path,
        )
    assert done.returncode != 0
    assert "Warning" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.parametrize("source", ["copy", "/etc/passwd"])
def test_a_config_that_is_not_a_tournament_file_is_named_not_echoed(tmp_path, source):
    secret = (
        "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000:Alice S3cret,,,:/home/alice:/bin/sh\n"
    )
    if source == "copy":
        path = tmp_path / "passwd"
        path.write_text(secret)
    else:
        path = Path(source)
        if not path.is_file():
            pytest.skip("no /etc/passwd here")
        secret = path.read_text()
    done = run_in_process(["tournament", "--config", str(path)], tmp_path)
    line = assert_refused(done, str(path), "not a tournament file")
    for field in secret.replace("\n", ":").split(":"):
        if len(field) > 3 and field not in str(path):
            assert field not in line, (field, line)


def test_a_misspelt_key_of_a_tournament_file_is_still_named(tmp_path):
    (tmp_path / "t.yaml").write_text("name: x\nplayrs: [hedge]\nadversaries: [fair_coin]\n")
    done = run_in_process(["tournament", "--config", "t.yaml"], tmp_path)
    assert_refused(done, "t.yaml", "'playrs'", "did you mean 'players'")


def test_an_unknown_key_in_a_listed_tournament_file_names_the_file_and_the_list(tmp_path):
    (tmp_path / "t.yaml").write_text(
        "name: t\nplayers: [hedge]\nadversaries: [fair_coin]\nhorizn: 10\n"
    )
    (tmp_path / "list.yaml").write_text(
        "reports:\n  - name: mine\n    tournaments:\n      - file: t.yaml\n"
    )
    done = run_in_process(
        ["reproduce", "--list", "list.yaml", "--outputs", "o", "--reports", "r"], tmp_path
    )
    assert_refused(done, "list.yaml", "report 'mine'", "tournament file t.yaml", "'horizn'")
    assert not (tmp_path / "o").exists() and not (tmp_path / "r").exists()


def test_reproduce_table_without_a_reports_folder_is_one_line(tmp_path):
    done = run_in_process(["reproduce", "--table", "--reports", "nosuch"], tmp_path)
    assert_refused(done, "nosuch/README.md", "--reports")


def test_reproduce_table_without_the_reports_is_one_line(tmp_path):
    (tmp_path / "reps").mkdir()
    (tmp_path / "reps" / "README.md").write_text("# reports\n")
    done = run_in_process(["reproduce", "--table", "--reports", "reps"], tmp_path)
    assert_refused(done, "cannot be read under reps", "arena reproduce --only")
    assert (tmp_path / "reps" / "README.md").read_text() == "# reports\n"


def test_report_of_the_root_folder_asks_for_a_name(tmp_path):
    done = run_in_process(["report", "/"], tmp_path)
    assert_refused(done, "/ has no folder name", "--name")
