"""The example player: the conformance suite, games by its registry name, the docs' code."""

import re
from pathlib import Path

import numpy as np
import pytest
from arena_leader import Leader

from arena import ConfigError, play, registry
from arena.testing import parametrize_with_checks

HERE = Path(__file__).resolve().parents[1]


@parametrize_with_checks([Leader(), Leader(ties="first")])
def test_conformance(component, check):
    check(component)


@pytest.mark.parametrize(("ties", "builtin"), [("uniform", "uniform"), ("first", "lowest")])
def test_plays_like_the_builtin_follow_the_leader(ties, builtin):
    game = {"n_actions": 2, "horizon": 100, "replicates": 2, "metrics": {"regret": {}}}
    mine = play("leader", "ftl_killer", player_params={"ties": ties}, **game)
    ftl = play("ftl", "ftl_killer", player_params={"tie_break": builtin}, **game)
    np.testing.assert_array_equal(mine.value.to_numpy(), ftl.value.to_numpy())
    # Follow the Leader's exact regret on ftl_killer: T/2 − 1/4 (uniform ties), T/2 (first)
    assert mine.value.iloc[-1] == (50.0 if ties == "first" else 49.75)


def test_registered_by_its_entry_point_and_validated_by_its_declaration():
    assert Leader.registry_name() == "leader"
    with pytest.raises(ConfigError, match="player leader: parameter 'ties': must be one of"):
        registry.make("player", "leader", ties="last")


def test_the_walkthrough_shows_the_module_verbatim():
    doc = (HERE.parents[1] / "docs" / "plugins.md").read_text()
    section = doc.split(". A player\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert (HERE / "arena_leader.py").read_text() in blocks
