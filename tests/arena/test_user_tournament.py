"""Issue 15: a researcher's own tournament file, kept outside the repository, with plugins.

From a temporary folder (not the repository), the example of docs/tournaments.md (two Hedge
variants, a grid, the plugin player `leader`, the plugin adversaries `rotating_best` (oblivious)
and `spoiler` (adaptive), the examples of docs/plugins.md) runs with
``arena tournament --config FILE``, its metric set replaces the built-in defaults, the manifests
record the plugin's distribution and version, and the report labels every component by its
registry name.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import yaml

from tests.helpers.cli import arena
from tests.helpers.contract import assert_refused, run_in_process

DOC = Path(__file__).resolve().parents[2] / "docs" / "tournaments.md"


def doc_example() -> dict:
    """The YAML example of docs/tournaments.md, shrunk to a game that runs in seconds."""
    block = re.search(r"```yaml\n(.*?)```", DOC.read_text(), re.S)
    assert block, "docs/tournaments.md lost its example"
    config = yaml.safe_load(block.group(1))
    assert config["horizon"] == 5000 and config["n_actions"] == [10, 100]  # what the doc says
    return {**config, "horizon": 60, "replicates": 2, "n_actions": [3]}


def test_a_tournament_file_outside_the_repository_runs_with_plugins_and_reports(tmp_path):
    config = doc_example()
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(config))
    done = arena(
        "tournament", "--config", "mine.yaml", "executor=serial", "out=results", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    # 2 hedge + 2 fixed_share (grid) + leader = 5 players, × 3 adversaries × 1 N
    assert "tournament mine: 15 cell(s) run, 0 already done, 0 failed" in done.stdout
    rows = pd.concat(pd.read_parquet(p) for p in (tmp_path / "results" / "parts").glob("*.parquet"))
    # the file's metrics are the whole set: no default metric merged in
    assert {m for m in set(rows.metric) if not m.startswith("bound:")} == {
        "regret",
        "shifting_regret",
    }
    assert {"hedge", "fixed_share", "leader"} == set(rows.player)
    manifests = [
        json.loads(p.read_text()) for p in (tmp_path / "results" / "parts").glob("manifest-*")
    ]
    plugin = [m["components"]["player"] for m in manifests if m["config"]["player"] == "leader"]
    assert plugin and plugin[0]["distribution"] == "arena-plugin-rotating"
    assert plugin[0]["version"] == "0.1.0"
    report = arena("report", "results", "--name", "mine", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    md = (tmp_path / "outputs" / "reports" / "mine" / "report.md").read_text()
    for label in ("leader", "spoiler", "rotating\\_best", "bernoulli", "fixed\\_share"):
        assert label in md, label
    for cls in ("Leader(", "Spoiler(", "RotatingBest("):  # registry names, never class reprs
        assert cls not in md, cls
    adversaries = {
        m["components"]["adversary"]["name"]: m["components"]["adversary"] for m in manifests
    }
    assert adversaries["spoiler"]["distribution"] == "arena-plugin-rotating"
    assert adversaries["rotating_best"]["entry_point"] == "arena_rotating:RotatingBest"
    # the same command again resumes: nothing to run
    again = arena(
        "tournament", "--config", "mine.yaml", "executor=serial", "out=results", cwd=tmp_path
    )
    assert again.returncode == 0 and "0 cell(s) run, 15 already done" in again.stdout


def test_a_config_dir_adds_tournaments_by_name(tmp_path):
    (tmp_path / "configs" / "tournament").mkdir(parents=True)
    config = {**doc_example(), "players": ["hedge"], "adversaries": ["fair_coin"]}
    (tmp_path / "configs" / "tournament" / "small.yaml").write_text(yaml.safe_dump(config))
    args = ["tournament", "--config-dir", "configs", "executor=serial", "progress=false"]
    done = run_in_process([*args, "tournament=small", "out=results"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "tournament mine: 1 cell(s) run" in done.stdout
    typo = run_in_process([*args, "tournament=smal", "out=other"], tmp_path)
    assert_refused(typo, "'smal'", "did you mean 'small'", "--config FILE")


def test_a_file_with_unknown_keys_is_refused_naming_each(tmp_path):
    (tmp_path / "bad.yaml").write_text(
        "players: [hedge]\nadversaries: [fair_coin]\nhorizn: 5\nmetric: {regret: {}}\n"
    )
    result = run_in_process(["tournament", "--config", "bad.yaml", "out=x"], tmp_path)
    line = assert_refused(result, "bad.yaml", "'horizn'", "'horizon'", "'metric'", "'metrics'")
    assert "the keys are name, players" in line
    assert not (tmp_path / "x").exists()


def test_file_errors_are_one_line(tmp_path):
    (tmp_path / "list.yaml").write_text("[1, 2]\n")
    (tmp_path / "broken.yaml").write_text("players: [hedge\n")
    (tmp_path / "empty.yaml").write_text("adversaries: [fair_coin]\n")
    for argv, needles in [
        (["--config", "missing.yaml"], ("--config", "no such file")),
        (["--config", "list.yaml"], ("list.yaml", "mapping")),
        (["--config", "broken.yaml"], ("broken.yaml", "YAML")),
        (["--config", "empty.yaml"], ("empty.yaml", "'players' is required")),
        (["--config"], ("--config", "needs a path")),
        (["--config", "list.yaml", "--config", "list.yaml"], ("takes one file",)),
        (["--config", "list.yaml", "tournament=demo"], ("drop tournament=NAME",)),
        (["--config-dir", "nowhere", "tournament=demo"], ("nowhere", "not a folder")),
    ]:
        assert_refused(run_in_process(["tournament", *argv], tmp_path), *needles)


def test_tournament_help_lists_plugins_by_protocol(tmp_path):
    result = run_in_process(["tournament", "--help"], tmp_path)
    assert result.returncode == 0
    assert "leader (arena-plugin-rotating)" in result.stdout
    assert "rotating_best (arena-plugin-rotating)" in result.stdout
    players = result.stdout.split("players (")[1].split("adversaries (")[0]
    experts = players.split("  experts: ")[1].split("\n  oco")[0]
    assert "hedge," in experts and "leader (arena-plugin-rotating)" in experts
    bandit = players.split("  bandit: ")[1].split("\n  classification")[0]
    assert "exp3," in bandit and "ucb1" in bandit and "hedge" not in bandit
    assert "docs/tournaments.md" in result.stdout


def test_arena_list_groups_by_protocol(tmp_path):
    result = run_in_process(["list", "players"], tmp_path)
    text = result.stdout
    assert text.index(" [bandit]") < text.index("  exp3 ") < text.index(" [experts]")
    assert text.index(" [experts]") < text.index("  hedge ")
    assert " [classification, oco, regression]" in text


def test_a_new_user_from_the_docs_alone(tmp_path):
    """The issue's path, from the docs alone: the three modules of docs/plugins.md (an oblivious
    adversary, an adaptive one, a player), written as a research project's own distribution
    under names of its own, played in a tournament file outside the repository, and reported."""
    from tests.arena.test_plugins import fake_distribution

    guide = (DOC.parent / "plugins.md").read_text()
    sections = {}
    for part in re.split(r"(?m)^## \d\. ", guide)[1:]:
        heading, _, body = part.partition("\n")
        if heading in ("An adversary", "An adaptive adversary", "A player"):
            sections[heading] = re.search(r"```python\n(.*?)```", body, re.S).group(1)
    assert len(sections) == 3, sorted(sections)
    site = tmp_path / "site"
    site.mkdir()
    modules = {
        "An adversary": "my_drift",
        "An adaptive adversary": "my_spite",
        "A player": "my_lead",
    }
    classes = {}
    for heading, module in modules.items():
        (site / f"{module}.py").write_text(sections[heading])
        classes[module] = re.search(r"(?m)^class (\w+)\(", sections[heading]).group(1)
    fake_distribution(
        site,
        "my-research",
        "arena.adversaries",
        {"drift": f"my_drift:{classes['my_drift']}", "spite": f"my_spite:{classes['my_spite']}"},
    )
    info = next(site.glob("*.dist-info"))  # one distribution declares players and adversaries
    with open(info / "entry_points.txt", "a") as fh:
        fh.write(f"[arena.players]\nlead = my_lead:{classes['my_lead']}\n")
    (tmp_path / "study.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "study",
                "players": ["hedge", "lead"],
                "adversaries": [{"name": "drift", "params": {"period": 10}}, "spite"],
                "n_actions": [3],
                "horizon": 60,
                "replicates": 2,
                "metrics": {"regret": {}},
            }
        )
    )
    done = arena(
        "tournament", "--config", "study.yaml", "executor=serial", cwd=tmp_path, extra_path=site
    )
    assert done.returncode == 0, done.stderr
    assert "tournament study: 4 cell(s) run, 0 already done, 0 failed" in done.stdout
    report = arena(
        "report", "outputs/tournaments/study", "--name", "study", cwd=tmp_path, extra_path=site
    )
    assert report.returncode == 0, report.stderr
    md = (tmp_path / "outputs" / "reports" / "study" / "report.md").read_text()
    for label in ("lead", "drift", "spite", "hedge"):
        assert re.search(rf"\b{label}\b", md), label
    for cls in classes.values():
        assert f"{cls}(" not in md, cls
    sources = {
        (c["name"], c["distribution"])
        for path in (tmp_path / "outputs").rglob("manifest-*.json")
        for c in json.loads(path.read_text())["components"].values()
    }
    assert {("lead", "my-research"), ("drift", "my-research"), ("spite", "my-research")} <= sources
