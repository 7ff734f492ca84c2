"""Issue 14: a corpus of bad inputs to every command, each refused by the contract.

Every case runs ``arena`` in-process in a sandbox folder prepared for it (data files, earlier
runs, corrupt folders) and must exit with 2, print one line naming what is at fault (the needles)
and what is allowed, print no traceback, and leave the sandbox exactly as it was: no results, no
``.hydra`` record, no lock file, no output folder, no file outside the output folder touched.
A case is ``(argv, needles, setup)``; ``setup`` names a function of :data:`SETUPS`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.helpers.contract import assert_refused, assert_untouched, run_in_process, snapshot

RUN = ["run", "adversary=fair_coin", "n_actions=3", "horizon=20", "replicates=2", "progress=false"]
RUN_OUT = "hydra.run.dir=out"
TOURNAMENT = [
    "tournament",
    "tournament=demo",
    "tournament.players=[hedge]",
    "tournament.adversaries=[fair_coin]",
    "tournament.n_actions=[3]",
    "tournament.horizon=20",
    "tournament.replicates=2",
    "executor=serial",
    "progress=false",
]
TOUR_OUT = "out=tour"
REPLAY = ["run", "adversary=replay", "horizon=3", "replicates=1", "progress=false", RUN_OUT]


def run_case(*overrides: str, needles=(), setup=None):
    return ([*RUN, RUN_OUT, *overrides], needles, setup)


def tour_case(*overrides: str, needles=(), setup=None):
    return ([*TOURNAMENT, TOUR_OUT, *overrides], needles, setup)


def replay_case(path: str, *needles: str, extra=()):
    return ([*REPLAY, f"adversary.path={path}", *extra], ("replay", *needles), "replay_files")


# ----------------------------------------------------------------------------------------------
# sandboxes


def _replay_files(root: Path) -> None:
    good = np.random.default_rng(0).random((10, 3))
    np.save(root / "good.npy", good)
    np.save(root / "complex.npy", good.astype(complex) + 1j)
    np.save(root / "objects.npy", np.array([{"a": 1}] * 6, dtype=object).reshape(2, 3))
    np.save(root / "strings.npy", np.array([["a", "b"], ["c", "d"], ["e", "f"]]))
    np.save(root / "bools.npy", np.ones((5, 3), dtype=bool))
    np.save(root / "vector.npy", np.zeros(5))
    np.save(root / "four_d.npy", np.zeros((1, 2, 5, 3)))
    np.save(root / "short.npy", np.zeros((2, 3)))
    np.save(root / "nan.npy", np.where(good > 0.5, np.nan, good))
    np.save(root / "inf.npy", np.where(good > 0.5, np.inf, good))
    np.save(root / "above.npy", good + 1.0)
    np.save(root / "negative.npy", good - 1.0)
    np.save(root / "empty.npy", np.zeros((0, 3)))
    np.save(root / "replicated.npy", np.zeros((1, 10, 3)))  # one replicate slice, two asked
    (root / "strings.csv").write_text("a,b\nc,d\ne,f\n")
    (root / "ragged.csv").write_text("0.1,0.2\n0.3\n0.5,0.6\n")
    (root / "empty.csv").write_text("")
    (root / "losses.txt").write_text("0.1 0.2\n")
    (root / "truncated.npy").write_bytes((root / "good.npy").read_bytes()[:60])
    (root / "not_npy.npy").write_text("hello")
    (root / "truncated.parquet").write_bytes(b"PAR1\x00\x00")
    pd.DataFrame({"a": ["x", "y", "z"], "b": ["u", "v", "w"]}).to_parquet(root / "text.parquet")
    (root / "folder.npy").mkdir()


def _results(root: Path) -> None:
    """One finished run in ``run/`` and a copy of the tiny tournament in ``tour/``."""
    shutil.copytree(_FINISHED["run"], root / "run")
    shutil.copytree(_FINISHED["tour"], root / "tour")


def _other_run(root: Path) -> None:
    shutil.copytree(_FINISHED["run"], root / "out")


def _corrupt_run(root: Path) -> None:
    shutil.copytree(_FINISHED["run"], root / "out")
    (root / "out" / "manifest.json").write_text('{"run_id": ')


def _manifest_not_object(root: Path) -> None:
    shutil.copytree(_FINISHED["run"], root / "out")
    (root / "out" / "manifest.json").write_text("[1, 2, 3]")


def _foreign_results(root: Path) -> None:
    (root / "out").mkdir()
    pd.DataFrame({"a": [1.0]}).to_parquet(root / "out" / "results.parquet")


def _corrupt_tournament(root: Path) -> None:
    shutil.copytree(_FINISHED["tour"], root / "tour")
    (root / "tour" / "manifest.json").write_text("{")


def _other_tournament(root: Path) -> None:
    shutil.copytree(_FINISHED["tour"], root / "tour")
    data = json.loads((root / "tour" / "manifest.json").read_text())
    data["config_digest"] = "0" * 16
    data["config"]["horizon"] = 999
    (root / "tour" / "manifest.json").write_text(json.dumps(data))


def _files(root: Path) -> None:
    (root / "afile").write_text("not a folder")


def _bad_results(root: Path) -> None:
    """Results folders the report cannot use: every file truncated, foreign or empty."""
    (root / "truncated").mkdir()
    (root / "truncated" / "results.parquet").write_bytes(b"PAR1 not really")
    (root / "foreign").mkdir()
    pd.DataFrame({"x": [1]}).to_parquet(root / "foreign" / "results.parquet")
    (root / "empty").mkdir()
    (root / "nothing").mkdir()
    (root / "nothing" / "notes.txt").write_text("no results here")
    shutil.copytree(_FINISHED["run"], root / "run")
    taken = root / "outputs" / "reports" / "taken"
    taken.mkdir(parents=True)
    (taken / "mine.txt").write_text("a folder the report did not write")
    (root / "reportsfile").write_text("a file where the reports folder would be")


def _modules(root: Path) -> None:
    """Python modules that ``arena check`` may be pointed at."""
    (root / "notcomp.py").write_text(
        "class Plain:\n    pass\n\nvalue = 3\n\ndef function():\n    return 1\n"
    )
    (root / "brokenparams.py").write_text(
        "from arena.experts.components import ObliviousAdversary\n"
        "class Broken(ObliviousAdversary):\n"
        "    @classmethod\n"
        "    def _unit_test_params(cls):\n"
        "        raise RuntimeError('no parameters today')\n"
    )
    (root / "badinit.py").write_text(
        "from arena.experts.components import ObliviousAdversary\n"
        "class NeedsArg(ObliviousAdversary):\n"
        "    def __init__(self, required):\n"
        "        self.required = required\n"
    )
    (root / "raises.py").write_text("raise ImportError('this module refuses to import')\n")
    (root / "syntax.py").write_text("def broken(:\n")


def _hostile(root: Path) -> None:
    """Issue 28: links out of the sandbox, a planted lock file, hostile tournament files."""
    victim = root / "victim"
    victim.mkdir()
    (victim / "victim.txt").write_text("someone else's file\n")
    (root / "linked").symlink_to(victim, target_is_directory=True)
    (root / "planted").mkdir()
    (root / "planted" / ".arena.lock").symlink_to(victim / "victim.txt")
    (root / "hardlinked").mkdir()
    (root / "hardlinked" / ".arena.lock").hardlink_to(victim / "victim.txt")
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    (root / "bomb.yaml").write_text("\n".join([*lines, "players: *a8", "adversaries: [x]"]) + "\n")
    (root / "passwd.yaml").write_text("root:x:0:0:TOPSECRET:/root:/bin/bash\n")
    (root / "escape.yaml").write_text(
        "name: ../../escape\nplayers: [hedge]\nadversaries: [fair_coin]\nhorizon: 5\n"
    )
    (root / "empty_grid.yaml").write_text(
        "players: [{name: hedge, grid: {eta: []}}]\nadversaries: [fair_coin]\nhorizon: 5\n"
    )


def _hostile_results(root: Path) -> None:
    _results(root)
    _hostile(root)


SETUPS = {
    "hostile": _hostile,
    "hostile_results": _hostile_results,
    "replay_files": _replay_files,
    "results": _results,
    "other_run": _other_run,
    "corrupt_run": _corrupt_run,
    "manifest_not_object": _manifest_not_object,
    "foreign_results": _foreign_results,
    "corrupt_tournament": _corrupt_tournament,
    "other_tournament": _other_tournament,
    "files": _files,
    "bad_results": _bad_results,
    "modules": _modules,
}

_FINISHED: dict[str, Path] = {}


@pytest.fixture(scope="module", autouse=True)
def finished(tmp_path_factory):
    """A finished run and a finished tiny tournament, copied into the sandboxes that need them."""
    root = tmp_path_factory.mktemp("finished")
    done = run_in_process([*RUN, "hydra.run.dir=run", "metrics=regret"], root)
    assert done.returncode == 0, done.stderr
    done = run_in_process([*TOURNAMENT, "out=tour", "tournament.metrics={regret:{}}"], root)
    assert done.returncode == 0, done.stderr
    _FINISHED.update(run=root / "run", tour=root / "tour")


# ----------------------------------------------------------------------------------------------
# the corpus

CASES: dict[str, tuple[list[str], tuple[str, ...], str | None]] = {}

# arena run: the game's own keys, each with values of the wrong type, sign or size
for key, values, needle in [
    ("horizon", ["0", "-5", "2.5", "abc", "[10]", "true", "null", "4294967296"], "horizon"),
    ("n_actions", ["0", "-1", "2.5", "abc", "[3]", "true"], "n_actions"),
    ("replicates", ["0", "-1", "abc", "[-1]", "[1,1]", "[]", "2.5", "{a:1}"], "replicates"),
    ("seed", ["-1", "1.5", "abc", "18446744073709551616", "9223372036854775808", "[1]"], "seed"),
    ("per_decade", ["0", "-1", "2.5", "abc", "true", "1000000"], "per_decade"),
    ("trace", ["maybe", "2", "yes_please", "[true]"], "trace"),
    ("progress", ["maybe", "3", "sometimes"], "progress"),
]:
    for value in values:
        CASES[f"run-{key}={value}"] = run_case(f"{key}={value}", needles=(f"'{needle}'",))

# arena run: memory that cannot exist
CASES["run-memory"] = run_case("replicates=100000000", "n_actions=100000", needles=("GiB",))

# arena run: components and their parameters
for override, needles in [
    ("player=hedgee", ("hedgee", "did you mean 'hedge'")),
    ("player=", ("player",)),
    ("adversary=fair_coinn", ("fair_coinn",)),
    ("adversary=no_such_thing", ("no_such_thing",)),
    ("player.eta=-1", ("player hedge", "'eta'")),
    ("player.eta=0", ("player hedge", "'eta'")),
    ("player.eta=[1,2]", ("player hedge", "'eta'")),
    ("player.eta=fast", ("player hedge", "'eta'")),
    ("player.eta=.nan", ("player hedge", "'eta'")),
    ("player.eta=.inf", ("player hedge", "'eta'")),
    ("player.eta={a:1}", ("player hedge", "'eta'")),
    ("player.etaa=1", ("player.etaa", "eta")),
    ("+player.extra=1", ("player hedge", "'extra'")),
    ("player=fixed_share player.alpha=2", ("fixed_share", "'alpha'")),
    ("player=fixed_share player.alpha=-0.1", ("fixed_share", "'alpha'")),
    ("player=normal_hedge player.prior=[1,2]", ("normal_hedge",)),
    ("adversary=bernoulli adversary.gap=0.9", ("bernoulli", "'gap'")),
    ("adversary=bernoulli adversary.gap=-1", ("bernoulli", "'gap'")),
    ("adversary=bernoulli adversary.means=[2,3,4]", ("bernoulli", "'means'")),
    ("adversary=bernoulli adversary.means=[0.5]", ("bernoulli", "means")),
    ("adversary=bernoulli adversary.best=7", ("bernoulli", "'best'")),
    ("adversary=bernoulli adversary.best=-1", ("bernoulli", "'best'")),
    ("adversary.loss_range=[1]", ("adversary.loss_range",)),
    ("adversary=shifting_experts adversary.n_shifts=-1", ("shifting_experts", "n_switches")),
    ("player=ogd", ("ogd", "fair_coin")),
    ("adversary=random_linear", ("hedge",)),
]:
    CASES[f"run-{override}"] = run_case(*override.split(" "), needles=needles)

# arena run: metrics
for override, needles in [
    ("metrics=nosuch", ("metrics", "nosuch", "default")),
    ("metrics=oco", ("regret", "'radius'", "oco", "experts game")),
    ("metrics.regret.foo=1", ("metrics.regret.foo",)),
    ("+metrics.regret.foo=1", ("metric regret", "'foo'")),
    ("+metrics.no_such_metric={}", ("no_such_metric",)),
    ("metrics.shifting_regret.k=[-1]", ("shifting_regret", "'k'")),
    ("metrics.shifting_regret.k=abc", ("shifting_regret", "'k'")),
    ("metrics.quantile_regret.eps=[2]", ("quantile_regret", "'eps'")),
    ("metrics.quantile_regret.eps=[0]", ("quantile_regret", "'eps'")),
    ("metrics.sa_regret.tau=[0]", ("sa_regret", "'tau'")),
    ("metrics.adaptive_regret.every=0", ("adaptive_regret",)),
    ("metrics=null", ("metrics",)),
]:
    CASES[f"run-{override}"] = run_case(override, needles=needles)

# arena run: the command line itself
for override, needles in [
    ("nokey=3", ("nokey", "horizon")),
    ("horizon=1,2", ("horizon", "--multirun")),
    ("horizon=[1", ("horizon",)),
    ("~horizon", ("horizon", "required")),
    ("~player", ("player", "required")),
    ("horizon=${foo}", ("horizon", "foo")),
    ("--no-such-flag", ("--no-such-flag", "KEY=VALUE")),
    ("-x", ("-x",)),
]:
    CASES[f"cli-{override}"] = run_case(override, needles=needles)
CASES["cli-sweep-bad-player"] = (
    ["run", "-m", "player=hedge,ftll", "hydra.sweep.dir=multi"],
    ("player", "ftll"),
    None,
)
CASES["cli-sweep-into-file"] = (
    ["run", "-m", "player=hedge,ftl", "hydra.sweep.dir=afile"],
    ("hydra.sweep.dir", "afile"),
    "files",
)
CASES["cli-unknown-command"] = (["runn"], ("runn", "did you mean 'run'"), None)

# arena run: where it writes
for override, setup, needles in [
    ("hydra.run.dir=afile", "files", ("hydra.run.dir", "is a file")),
    ("hydra.run.dir=afile/below", "files", ("hydra.run.dir", "is a file")),
    ("hydra.run.dir=out", "other_run", ("different experiment",)),
    ("hydra.run.dir=out", "corrupt_run", ("manifest.json", "not a readable manifest")),
    ("hydra.run.dir=out", "manifest_not_object", ("manifest.json", "JSON object")),
    ("hydra.run.dir=out", "foreign_results", ("results.parquet without a manifest",)),
]:
    CASES[f"out-{setup}-{override}"] = ([*RUN, override], needles, setup)

# arena run: replay files
for path, needles in [
    ("complex.npy", ("complex",)),
    ("objects.npy", ("path",)),
    ("strings.npy", ("path",)),
    ("bools.npy", ("path",)),
    ("vector.npy", ("path",)),
    ("four_d.npy", ("path",)),
    ("short.npy", ("path",)),
    ("nan.npy", ("path",)),
    ("inf.npy", ("path",)),
    ("above.npy", ("path",)),
    ("negative.npy", ("path",)),
    ("empty.npy", ("path",)),
    ("strings.csv", ("path",)),
    ("ragged.csv", ("path",)),
    ("empty.csv", ("path",)),
    ("losses.txt", ("path", ".npy")),
    ("truncated.npy", ("path",)),
    ("not_npy.npy", ("path",)),
    ("truncated.parquet", ("path",)),
    ("text.parquet", ("path",)),
    ("folder.npy", ("path",)),
    ("missing.npy", ("path",)),
    ("", ("path",)),
]:
    CASES[f"replay-{path or 'empty-path'}"] = replay_case(path, *needles)
CASES["replay-no-path"] = (
    ["run", "adversary=replay", "horizon=3", RUN_OUT],
    ("replay", "'path'", "required"),
    "replay_files",
)
CASES["replay-wrong-n"] = replay_case("good.npy", "n_actions", extra=["n_actions=5"])
CASES["replay-too-long"] = replay_case("good.npy", "path", extra=["horizon=11"])
CASES["replay-replicates"] = replay_case("replicated.npy", "path", extra=["replicates=2"])
for value in ("[1]", "[2,1]", "[a,b]", "[0,.inf]", "5", "[0,1,2]"):
    CASES[f"replay-loss_range={value}"] = replay_case(
        "good.npy", "'loss_range'", extra=[f"adversary.loss_range={value}"]
    )

# arena tournament
for override, needles in [
    ("tournament=dmeo", ("dmeo", "did you mean 'demo'")),
    ("tournament=../../etc/passwd", ("tournament",)),
    ("tournament.horizon=-1", ("'horizon'",)),
    ("tournament.horizon=abc", ("'horizon'",)),
    ("tournament.players=[hedgee]", ("hedgee", "hedge")),
    ("tournament.players=[]", ("players",)),
    ("tournament.players=hedge", ("players",)),
    ("tournament.players=[{name:hedge,params:{eta:-1}}]", ("hedge", "'eta'")),
    ("tournament.players=[{nam:hedge}]", ("players",)),
    ("tournament.adversaries=[fair_coinn]", ("fair_coinn",)),
    ("tournament.adversaries=[{name:bernoulli,params:{gap:0.9}}]", ("bernoulli", "'gap'")),
    ("tournament.replicates=0", ("'replicates'",)),
    ("tournament.replicates=-3", ("'replicates'",)),
    ("tournament.seed=-5", ("'seed'",)),
    ("tournament.seed=18446744073709551616", ("'seed'",)),
    ("tournament.n_actions=[0]", ("'n_actions'",)),
    ("tournament.n_actions=[abc]", ("'n_actions'",)),
    ("tournament.per_decade=0", ("'per_decade'",)),
    ("tournament.per_decade=2.5", ("'per_decade'",)),
    ("tournament.metrics.sa_regret.tau=[-1]", ("sa_regret", "'tau'")),
    ("+tournament.metrics.no_such_metric={}", ("no_such_metric",)),
    ("tournament.horizonn=3", ("tournament.horizonn", "horizon")),
    ("executor=threads", ("executor",)),
    ("n_jobs=0", ("n_jobs",)),
    ("n_jobs=-2", ("n_jobs",)),
    ("progress=maybe", ("'progress'",)),
    ("nokey=1", ("nokey",)),
    ("~out", ("out", "required")),
    ("tournament.horizon=1,2", ("horizon",)),
]:
    CASES[f"tour-{override}"] = tour_case(override, needles=needles)
for override, setup, needles in [
    ("out=afile", "files", ("'out'", "is a file")),
    ("out=afile/below", "files", ("'out'", "is a file")),
    ("out=tour", "corrupt_tournament", ("manifest.json", "not a readable manifest")),
    ("out=tour", "other_tournament", ("different tournament", "horizon")),
]:
    CASES[f"tour-{setup}-{override}"] = ([*TOURNAMENT, override], needles, setup)

# arena report
for args, needles in [
    (["run", "--name", "../victim"], ("name",)),
    (["run", "--name", "/tmp/abs"], ("name",)),
    (["run", "--name", "a/b"], ("name",)),
    (["run", "--name", ".."], ("name",)),
    (["run", "--name", "."], ("name",)),
    (["run", "--name", ""], ("name",)),
    (["run", "--name", ".hidden"], ("name",)),
    (["run", "--name", "a\\b"], ("name",)),
    (["no_such_dir", "--name", "x"], ("no_such_dir",)),
    (["afile", "--name", "x"], ("afile",)),
    (["truncated", "--name", "x"], ("no results", "truncated")),
    (["foreign", "--name", "x"], ("no results", "not an arena results file")),
    (["empty", "--name", "x"], ("no results",)),
    (["nothing", "--name", "x"], ("no results",)),
    (["run", "--name", "x", "--metric", "nosuch"], ("--metric", "nosuch", "regret")),
    (["run", "--name", "x", "--metric", "regrett"], ("--metric", "did you mean 'regret'")),
    (["run", "--name", "taken"], ("taken",)),
    (["run", "--name", "x", "--reports", "reportsfile"], ("reportsfile",)),
]:
    setup = "files" if args[0] == "afile" else "bad_results"
    CASES[f"report-{' '.join(args)}"] = (["report", *args], needles, setup)
CASES["report-tournament-metric"] = (
    ["report", "tour", "--name", "x", "--metric", "mistakes"],
    ("--metric", "mistakes"),
    "results",
)

# arena check
for target, needles in [
    ("nocolon", ("MODULE:CLASS",)),
    ("no_such_module:X", ("no_such_module",)),
    ("notcomp:Missing", ("Missing",)),
    ("notcomp:Plain", ("not a player or adversary",)),
    ("notcomp:value", ("not a player or adversary",)),
    ("notcomp:function", ("not a player or adversary",)),
    ("os:path", ("not a player or adversary",)),
    ("arena.components:Player", ("base class",)),
    ("arena.experts.components:ObliviousAdversary", ("base class",)),
    ("brokenparams:Broken", ("_unit_test_params", "no parameters today")),
    ("badinit:NeedsArg", ("NeedsArg",)),
    ("raises:X", ("refuses to import",)),
    ("syntax:X", ("syntax",)),
    (":Plain", ("MODULE:CLASS",)),
]:
    CASES[f"check-{target}"] = (["check", target], needles, "modules")

# arena reproduce (refused before any tournament runs or any report is written)
for args, needles in [
    (["--only", "nope"], ("unknown report 'nope'", "bandits")),
    (["--only", "bandit"], ("did you mean 'bandits'",)),
    (["--list", "missing.yaml"], ("missing.yaml", "no such file")),
    (["--executor", "thread"], ("--executor", "thread")),
    (["--only"], ("--only",)),
]:
    CASES[f"reproduce-{' '.join(args)}"] = (["reproduce", *args], needles, None)


# issue 28: sizes checked before they are allocated (numbers beyond any machine), links never
# followed, names that climb out, hostile files, folders that cannot exist, empty grids
for override, needles in [
    ("replicates=100000000000", ("replicates=100000000000", "GiB")),
    ("n_actions=10000000000", ("n_actions=10000000000", "GiB")),
    (
        "player=son player.m=1000 adversary=ill_conditioned n_actions=10 horizon=1000 "
        "replicates=16",
        ("player son", "'m'", "over the limit of 12 h"),
    ),
    ("hydra.run.dir=/proc/nope", ("/proc/nope",)),
]:
    CASES[f"h28-run-{override}"] = ([*RUN, *override.split(" ")], needles, None)
for folder, needles in [
    ("linked", ("linked", "link")),
    ("planted", (".arena.lock",)),
    ("hardlinked", (".arena.lock",)),
]:
    CASES[f"h28-run-into-{folder}"] = ([*RUN, f"hydra.run.dir={folder}"], needles, "hostile")
    CASES[f"h28-tour-into-{folder}"] = ([*TOURNAMENT, f"out={folder}"], needles, "hostile")
for name, needles in [
    ("bomb.yaml", ("bomb.yaml", "alias")),
    ("passwd.yaml", ("passwd.yaml",)),
    ("escape.yaml", ("'name'", "../../escape")),
    ("empty_grid.yaml", ("grid.eta", "empty")),
]:
    CASES[f"h28-tour-config-{name}"] = (
        ["tournament", "--config", name, "executor=serial", "progress=false"],
        needles,
        "hostile",
    )
CASES["h28-tour-name-escape"] = tour_case("tournament.name=../../escape", needles=("'name'",))
CASES["h28-tour-empty-grid"] = tour_case(
    "tournament.players=[{name:hedge,grid:{eta:[]}}]", needles=("grid.eta", "empty")
)
CASES["h28-tour-out-/proc"] = tour_case("out=/proc/nope", needles=("/proc/nope",))
CASES["h28-report-root"] = (["report", "/"], ("/ has no folder name", "--name"), None)
CASES["h28-report-into-linked"] = (
    ["report", "run", "--name", "linked", "--reports", "."],
    ("linked",),
    "hostile_results",
)
CASES["h28-reproduce-table-nosuch"] = (
    ["reproduce", "--table", "--reports", "nosuch"],
    ("nosuch/README.md", "--reports"),
    None,
)
CASES["h28-reproduce-list-bomb"] = (["reproduce", "--list", "bomb.yaml"], ("bomb.yaml",), "hostile")


def test_the_corpus_is_large():
    assert len(CASES) >= 150, len(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_refused_in_one_line_and_touches_nothing(case, tmp_path):
    argv, needles, setup = CASES[case]
    if setup is not None:
        SETUPS[setup](tmp_path)
    before = snapshot(tmp_path)
    result = run_in_process(argv, tmp_path)
    assert_refused(result, *needles)
    assert_untouched(before, tmp_path)
