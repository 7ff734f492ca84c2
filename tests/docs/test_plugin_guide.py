"""The players of docs/plugins.md's "Losses come in the declared range" and "A bandit player", as
written: they pass the conformance suite and play exactly as the built-ins they restate."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from arena import play
from arena.testing import check_component

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"


def python_block(title: str) -> str:
    """Return the first python block of the guide's subsection ``### title``."""
    part = GUIDE.read_text().split(f"\n### {title}\n", 1)[1]
    part = re.split(r"\n##+ ", part, maxsplit=1)[0]
    return re.search(r"```python\n(.*?)```", part, re.DOTALL).group(1)


def build(title: str, name: str, **params):
    namespace: dict = {"__name__": "guide_example"}
    exec(python_block(title), namespace)
    return namespace[name](**params)


@pytest.mark.parametrize(
    ("title", "name", "params", "builtin", "adversaries", "n_actions"),
    [
        (
            "Losses come in the declared range",
            "TunedHedge",
            {},
            "hedge",
            ("ftl_killer", "greedy"),
            3,
        ),
        ("A bandit player", "TunedExp3", {"gamma": 0.0}, "exp3", ("bernoulli",), 4),
    ],
    ids=["experts", "bandit"],
)
def test_the_guides_player_passes_the_suite_and_plays_as_the_builtin(
    title, name, params, builtin, adversaries, n_actions
):
    player = build(title, name, **params)
    assert check_component(player) == {}
    game = {"n_actions": n_actions, "horizon": 300, "replicates": 2, "metrics": {"regret": {}}}
    for adversary in adversaries:
        mine = play(player, adversary, **game).value.to_numpy()
        np.testing.assert_allclose(mine, play(builtin, adversary, **game).value, atol=1e-9, rtol=0)
