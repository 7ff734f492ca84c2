"""The example adaptive adversary: the conformance suite, games, ``arena check``, the docs' code."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from arena_spoiler import Spoiler

from arena import play
from arena.errors import GameError
from arena.spec import AdversaryTags
from arena.testing import parametrize_with_checks

HERE = Path(__file__).resolve().parents[1]


@parametrize_with_checks([Spoiler(), Spoiler(k=2)])
def test_conformance(component, check):
    check(component)


def test_tags_inherit_adaptive_from_the_base():
    assert Spoiler.tags.oblivious is False
    assert Spoiler.tags.sees_distribution is True
    assert Spoiler.registry_name() == "spoiler"


@pytest.mark.parametrize("k", [1, 2])
def test_a_leader_follower_loses_every_round(k):
    # Follow the Leader with lowest-index ties puts all its weight on the expert the spoiler hits
    rows = play(
        "ftl",
        "spoiler",
        player_params={"tie_break": "lowest"},
        adversary_params={"k": k},
        n_actions=4,
        horizon=100,
        replicates=2,
        metrics={"loss": {}, "regret": {}},
    )
    final = rows[rows.t == 100].set_index(["metric", "replicate"]).value
    assert (final["loss"] == 100.0).all()
    # k of the 4 experts are hit each round and the leader always among them: the best expert
    # ends with loss 100·k/4, so the regret is 100·(1 − k/4)
    np.testing.assert_allclose(final["regret"], 100.0 * (1 - k / 4))


def test_hedge_keeps_its_regret_sublinear():
    rows = play("hedge", "spoiler", n_actions=4, horizon=2000, replicates=2, metrics=["regret"])
    assert rows[rows.t == 2000].value.max() < 0.05 * 2000


def test_forgetting_the_tag_stops_the_game_with_the_message_the_guide_shows(monkeypatch):
    monkeypatch.setattr(Spoiler, "tags", AdversaryTags(oblivious=False))
    with pytest.raises(GameError) as info:
        play("hedge", "spoiler", n_actions=3, horizon=5)
    doc = (HERE.parents[1] / "docs" / "plugins.md").read_text()
    assert str(info.value).startswith("adversary spoiler Spoiler(): reads history.probs")
    assert f"  {info.value}\n" in doc


def test_arena_check_passes_it_from_a_subprocess():
    done = subprocess.run(
        [sys.executable, "-m", "arena.apps.cli", "check", "arena_spoiler:Spoiler"],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passed: 0 unexpected result(s)" in done.stdout
    assert re.search(r"check_tags_match_class\s+ok", done.stdout)
    assert re.search(r"check_history_is_read_only\s+ok", done.stdout)
    assert "skipped: not an ObliviousAdversary" in done.stdout
    # the guide shows this very output
    doc = (HERE.parents[1] / "docs" / "plugins.md").read_text()
    assert done.stdout.rstrip("\n") in doc


def test_the_walkthrough_shows_the_module_verbatim():
    doc = (HERE.parents[1] / "docs" / "plugins.md").read_text()
    section = doc.split(". An adaptive adversary\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert (HERE / "arena_spoiler.py").read_text() in blocks
    assert 'spoiler = "arena_spoiler:Spoiler"' in section
