"""A game's cell key and run id hold each component's parameters serialized once.

``check_game`` serializes the player's and the adversary's parameters once and splices the text
into the cell key, the run id and the rows (``arena.base.canonical_json_with``). The keys must be
those of serializing the whole mapping, character for character, and a field that a protocol
puts in its place must win, as it did before the splice.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from arena.base import canonical_json, canonical_json_with
from arena.experts.game import ExpertsProtocol
from arena.game import check_game


def test_canonical_json_with_is_canonical_json():
    fields = {"b": [1.5, float("nan")], "a": {"z": (1, 2)}, 3: "x", "c": np.float64(0.1)}
    for keys in ([], ["a"], ["a", "b", 3]):
        encoded = {k: canonical_json(fields[k]) for k in keys}
        assert canonical_json_with(fields, encoded) == canonical_json(fields)


def test_the_keys_are_the_whole_mappings_serialized():
    game = check_game("hedge", "bernoulli", n_actions=4, horizon=50, player_params={"eta": 0.5})
    config = {k: v for k, v in game.config.items() if k not in ("replicates", "run_id", "cell")}
    assert json.loads(game.config["cell_key"])["player_params"] == {"eta": 0.5}
    assert canonical_json(json.loads(game.config["cell_key"])) == game.config["cell_key"]
    assert game.constants["player_params"] == canonical_json(game.player.get_params())
    assert game.constants["adversary_params"] == canonical_json(game.adversary.get_params())
    assert game.config["run_id"] == hashlib.sha256(canonical_json(config).encode()).hexdigest()[:16]


def test_a_protocols_cell_field_wins_over_the_players_parameters(monkeypatch):
    identity = ExpertsProtocol.identity

    def with_cell_field(self, player, adversary, spec):
        game_fields, cell_fields = identity(self, player, adversary, spec)
        return game_fields, {**cell_fields, "player_params": {"eta": "normalized"}}

    monkeypatch.setattr(ExpertsProtocol, "identity", with_cell_field)
    game = check_game("hedge", "bernoulli", n_actions=4, horizon=50, player_params={"eta": 0.5})
    assert json.loads(game.config["cell_key"])["player_params"] == {"eta": "normalized"}
