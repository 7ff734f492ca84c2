"""The seeding contract (:mod:`arena.seeding`): a game's streams built without their parent
seed sequence are the ``spawn`` children of the contract, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from arena.seeding import game_streams, replicate_streams, stable_key


def _by_spawn(seed: int, game_key: str, cell_key: str, replicate: int) -> list:
    """The contract written out: the game sequence split in two by ``spawn``, the player's own."""
    game = np.random.SeedSequence(seed, spawn_key=(stable_key(game_key), replicate))
    player = np.random.SeedSequence(seed, spawn_key=(stable_key(cell_key), replicate, 1))
    return [np.random.Generator(np.random.PCG64(s)) for s in (*game.spawn(2), player)]


@pytest.mark.parametrize("seed", [0, 7, 2**63 - 1])
def test_game_streams_are_the_contracts_spawned_streams(seed):
    ids = [0, 1, 5, 2**40]
    made = game_streams(seed, '{"adversary": "bernoulli"}', '{"player": "ucb1"}', ids)
    assert len(made) == len(ids)
    for r, streams in zip(ids, made, strict=True):
        want = _by_spawn(seed, '{"adversary": "bernoulli"}', '{"player": "ucb1"}', r)
        for got, ref in zip(streams, want, strict=True):
            # the same seed sequence (so a component's own ``spawn`` is the same too) ...
            assert got.bit_generator.seed_seq.state == ref.bit_generator.seed_seq.state
            assert got.bit_generator.state == ref.bit_generator.state
            # ... and the same draws, children included
            assert got.spawn(1)[0].random(3).tolist() == ref.spawn(1)[0].random(3).tolist()
            assert got.random(5).tolist() == ref.random(5).tolist()


def test_replicate_streams_is_one_replicate_of_game_streams():
    one = replicate_streams(3, "g", "c", 4)
    many = game_streams(3, "g", "c", [2, 4])[1]
    assert [g.random() for g in one] == [g.random() for g in many]
    # the three streams differ from each other, and from another replicate's
    firsts = [g.random() for g in replicate_streams(3, "g", "c", 4)]
    assert len(set(firsts)) == 3
    assert firsts != [g.random() for g in replicate_streams(3, "g", "c", 5)]
