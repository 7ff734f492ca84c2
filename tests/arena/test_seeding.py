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


def test_the_action_streams_are_made_when_first_read_and_are_the_same_then():
    eager = game_streams(5, "g", "c", [0, 3])
    lazy = game_streams(5, "g", "c", [0, 3])
    assert not lazy.actions_made
    first = [g.random() for g in lazy.adversary] + [g.random() for g in lazy.player]
    assert first == [g.random() for g in eager.adversary] + [g.random() for g in eager.player]
    assert not lazy.actions_made  # reading the other roles makes none
    assert [g.random() for g in lazy.actions] == [s[1].random() for s in eager]
    assert lazy.actions_made and lazy[1][1] is lazy.actions[1]
    assert [len(t) for t in lazy[:]] == [3, 3]


def test_replicate_streams_is_one_replicate_of_game_streams():
    one = replicate_streams(3, "g", "c", 4)
    many = game_streams(3, "g", "c", [2, 4])[1]
    assert [g.random() for g in one] == [g.random() for g in many]
    # the three streams differ from each other, and from another replicate's
    firsts = [g.random() for g in replicate_streams(3, "g", "c", 4)]
    assert len(set(firsts)) == 3
    assert firsts != [g.random() for g in replicate_streams(3, "g", "c", 5)]


def test_the_compiled_mixing_is_numpys_on_random_seeds_and_keys():
    """:func:`arena.seeding._words_of` against NumPy's ``SeedSequence`` on 400 random seeds
    (one to three 32-bit words) and replicate indices (one or two words), by rows and by
    columns (more than four replicates, all below 2³²)."""
    from arena.seeding import _words_of

    rng = np.random.default_rng(2026)
    for trial in range(400):
        seed = int(rng.integers(0, 2**63)) >> int(rng.integers(0, 63))
        if trial % 10 == 0:
            seed = seed * 2**32 + 7  # three words: beyond MAX_SEED, still NumPy's mixing
        wide = trial % 4 == 0
        ids = [int(rng.integers(0, 2**40 if wide else 1000)) for _ in range(1 + trial % 7)]
        game, cell = (int(k) for k in rng.integers(0, 2**32, size=2))
        keys = (
            [(game, r, 0) for r in ids] + [(game, r, 1) for r in ids] + [(cell, r, 1) for r in ids]
        )
        words = _words_of(seed, keys, game, cell, ids)
        for key, got in zip(keys, words, strict=True):
            want = np.random.SeedSequence(seed, spawn_key=key).generate_state(4, np.uint64)
            assert got.tolist() == want.tolist(), (seed, key)


def test_a_preset_sequence_is_a_seed_sequence_in_every_use():
    """What a component may ask of its generator's ``seed_seq`` is NumPy's answer: the type,
    entropy, key, state, repr, other states, children (counted), and a pickle round trip."""
    import pickle

    from arena.seeding import PresetSeedSequence, _words_of

    key = (stable_key("c"), 3, 1)
    seq = PresetSeedSequence(5, key, _words_of(5, [key], 0, 0, [3])[0])
    rng = np.random.Generator(np.random.PCG64(seq))
    ref = np.random.SeedSequence(5, spawn_key=key)
    assert rng.bit_generator.state == np.random.PCG64(ref).state
    assert isinstance(seq, PresetSeedSequence) and isinstance(seq, np.random.SeedSequence)
    assert (seq.entropy, seq.spawn_key) == (ref.entropy, ref.spawn_key)
    assert seq.generate_state(3).tolist() == ref.generate_state(3).tolist()
    assert seq.generate_state(4, np.uint64).tolist() == ref.generate_state(4, np.uint64).tolist()
    assert repr(seq) == repr(ref) and seq.pool.tolist() == ref.pool.tolist()
    assert [c.state for c in seq.spawn(2)] == [c.state for c in ref.spawn(2)]
    assert seq.n_children_spawned == 2 and seq.state == ref.state
    assert (
        rng.spawn(1)[0].random() == np.random.Generator(np.random.PCG64(ref.spawn(1)[0])).random()
    )
    again = pickle.loads(pickle.dumps(rng))
    assert again.bit_generator.state == rng.bit_generator.state
    assert again.bit_generator.seed_seq.state == seq.state
    assert again.random() == rng.random()


def test_a_negative_seed_or_replicate_is_refused_as_numpy_refuses_it():
    for seed, replicate in ((-1, 0), (0, -3)):
        with pytest.raises(ValueError, match="non-negative"):
            replicate_streams(seed, "g", "c", replicate)
        with pytest.raises(ValueError, match="non-negative"):
            np.random.SeedSequence(seed, spawn_key=(1, replicate))
