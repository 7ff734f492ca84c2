"""Seeding contract: one SeedSequence per (root seed, cell, replicate), never Python's ``hash()``.

The adversary's stream and the stream that draws the realized actions ``I_t`` depend only on the
game (adversary, its parameters, N), not on the player, so every player facing the same adversary
and replicate sees the same losses and the same action uniforms (common random numbers). The
player's own stream depends on the whole cell.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterable, Sequence

import numpy as np
from numba import njit

from arena.streams import jit_disabled


def stable_key(text: str) -> int:
    """Return a process-independent 32-bit key of ``text`` (CRC-32 of its UTF-8 bytes).

    Examples
    --------
    >>> stable_key("bernoulli")
    3203842906
    """
    return zlib.crc32(text.encode("utf-8"))


def replicate_streams(
    seed: int, game_key: str, cell_key: str, replicate: int
) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    """Return the (adversary, action-sampling, player) generators of one replicate.

    Parameters
    ----------
    seed : int
        Root seed of the run.
    game_key : str
        Canonical description of the adversary and N (no player): common random numbers.
    cell_key : str
        Canonical description of the whole cell (player included).
    replicate : int
        Global replicate index; replicate r's streams do not depend on the batch it runs in.

    Notes
    -----
    The adversary and action streams are the two children ``game.spawn(2)`` of
    ``game = SeedSequence(seed, spawn_key=(crc32(game_key), replicate))``; they are built here
    directly, as :func:`game_streams` builds them.
    """
    return game_streams(seed, game_key, cell_key, [replicate])[0]


def game_streams(seed: int, game_key: str, cell_key: str, replicates: Iterable[int]) -> GameStreams:
    """Return :func:`replicate_streams` of every replicate of a game, the keys hashed once.

    ``SeedSequence.spawn`` makes child i of a sequence as ``SeedSequence(entropy,
    spawn_key=spawn_key + (i,), pool_size=pool_size)`` (NumPy's documented construction), so the
    children of ``SeedSequence(seed, spawn_key=(g, r))`` are built here without their parent:
    the same seed sequences (entropy, spawn key, pool size, none spawned), hence the same
    generators, bit for bit.

    Each generator's ``PCG64`` is seeded from the four words its ``SeedSequence`` generates,
    computed for all of the game's streams in one compiled pass (:func:`_seed_words`, NumPy's
    mixing written out), and its ``seed_seq`` is a :class:`PresetSeedSequence`, which builds
    the NumPy sequence itself only when asked for anything else (a ``spawn``, its ``state``).
    A ``SeedSequence`` and a ``PCG64`` built from it cost about 21 µs per stream, six of the
    eight milliseconds of a 100-replicate game's fixed cost; the preset ones about 3 µs. The
    action streams are made when first read (:class:`GameStreams`).

    Examples
    --------
    >>> a = game_streams(7, "game", "cell", [3])[0]
    >>> b = np.random.SeedSequence(7, spawn_key=(stable_key("game"), 3)).spawn(2)
    >>> [g.bit_generator.seed_seq.state for g in a[:2]] == [s.state for s in b]
    True
    >>> a[0].random() == np.random.Generator(np.random.PCG64(b[0])).random()
    True
    """
    game, cell = stable_key(game_key), stable_key(cell_key)
    ids = [int(r) for r in replicates]
    keys = [(game, r, 0) for r in ids] + [(game, r, 1) for r in ids] + [(cell, r, 1) for r in ids]
    gen, bits = np.random.Generator, np.random.PCG64
    if jit_disabled():  # the mixing would run as Python, slower than NumPy's own
        seqs = [np.random.SeedSequence(seed, spawn_key=key) for key in keys]
    else:
        words = _words_of(seed, keys, game, cell, ids)
        seqs = [PresetSeedSequence(seed, key, w) for key, w in zip(keys, words, strict=True)]
    n = len(ids)
    return GameStreams(
        [gen(bits(seq)) for seq in seqs[:n]],
        seqs[n : 2 * n],
        [gen(bits(seq)) for seq in seqs[2 * n :]],
    )


class GameStreams(Sequence):
    """A game's streams: per replicate the (adversary, action-sampling, player) generators of
    :func:`replicate_streams`, as a sequence of triples, and each role's list.

    The action generators are made from their seed sequences the first time any is read
    (:attr:`actions`, or a triple): a game whose arena draws no action uniforms (a point-mass
    bandit player's, :mod:`arena.bandit.point_masses`) never makes them, nor reads their
    kernel handles. A generator and its handles cost about 4 µs each (0.4 ms of a 100-replicate
    game's fixed cost of 1.8). They are the same generators whenever they are made: each is a
    function of its seed sequence alone.

    Examples
    --------
    >>> streams = game_streams(7, "game", "cell", [0, 1])
    >>> len(streams), len(streams.adversary), streams.actions_made
    (2, 2, False)
    >>> adversary, actions, player = streams[1]
    >>> streams.actions_made, actions is streams.actions[1]
    (True, True)
    """

    def __init__(
        self,
        adversary: list[np.random.Generator],
        action_sequences: list[np.random.SeedSequence],
        player: list[np.random.Generator],
    ):
        if not len(adversary) == len(action_sequences) == len(player):
            raise ValueError("every role needs one stream per replicate")
        self.adversary, self.player = adversary, player
        self._action_sequences = action_sequences
        self._actions: list[np.random.Generator] | None = None

    @property
    def actions(self) -> list[np.random.Generator]:
        """The replicates' action-sampling generators (made at the first read)."""
        if self._actions is None:
            gen, bits = np.random.Generator, np.random.PCG64
            self._actions = [gen(bits(seq)) for seq in self._action_sequences]
        return self._actions

    @property
    def actions_made(self) -> bool:
        """Whether the action generators were made (read) yet."""
        return self._actions is not None

    def __len__(self) -> int:
        return len(self.adversary)

    def __getitem__(self, r):
        if isinstance(r, slice):
            return [self[k] for k in range(*r.indices(len(self)))]
        return self.adversary[r], self.actions[r], self.player[r]


_NUMPY_SEQUENCE_LOCK = threading.Lock()


def _numpy_attribute(name: str) -> property:
    """A :class:`PresetSeedSequence` attribute answered by its NumPy sequence."""
    return property(lambda self: getattr(self.numpy_sequence(), name))


class PresetSeedSequence(np.random.SeedSequence):
    """``SeedSequence(entropy, spawn_key=spawn_key)`` whose first ``PCG64`` seed was computed
    beforehand (:func:`game_streams`).

    It is a ``SeedSequence`` (``isinstance`` holds, so a component that reads its generator's
    ``seed_seq`` sees one) that answers ``generate_state(4, uint64)``, what ``PCG64`` asks, with
    the words it was given, and its ``entropy`` and ``spawn_key`` directly. Anything else
    (``spawn``, ``state``, ``pool``, ``n_children_spawned``, another ``generate_state``) is
    answered by the NumPy sequence of the same entropy and key, built at the first such use and
    kept, so spawned children are counted as NumPy counts them. It pickles as that sequence.
    """

    # NumPy's __init__ (the mixing, in Python-level code) is what this class avoids; its
    # attributes are the properties below, never the extension type's own slots
    def __init__(self, entropy: int, spawn_key: tuple[int, ...], words: np.ndarray):
        self._entropy, self._spawn_key, self._words = entropy, tuple(spawn_key), words
        self._numpy: np.random.SeedSequence | None = None

    def numpy_sequence(self) -> np.random.SeedSequence:
        """The NumPy ``SeedSequence`` of the same entropy and spawn key (built once, under a lock:
        two threads must not spawn from two different ones)."""
        if self._numpy is None:
            with _NUMPY_SEQUENCE_LOCK:
                if self._numpy is None:
                    self._numpy = np.random.SeedSequence(self._entropy, spawn_key=self._spawn_key)
        return self._numpy

    def generate_state(self, n_words, dtype=np.uint32):
        if self._numpy is None and n_words == 4 and np.dtype(dtype) == np.uint64:
            return self._words.copy()
        return self.numpy_sequence().generate_state(n_words, dtype)

    def spawn(self, n_children):
        return self.numpy_sequence().spawn(n_children)

    @property
    def entropy(self):
        return self._entropy

    @property
    def spawn_key(self):
        return self._spawn_key

    pool_size = _numpy_attribute("pool_size")
    n_children_spawned = _numpy_attribute("n_children_spawned")
    pool = _numpy_attribute("pool")
    state = _numpy_attribute("state")

    def __repr__(self) -> str:
        return repr(self.numpy_sequence())

    def __reduce__(self):
        return self.numpy_sequence().__reduce__()


_MASK = 0xFFFFFFFF


def _int_words(n: int) -> list[int]:
    """``n`` as 32-bit words, lowest first (NumPy's ``_int_to_uint32_array``; 0 is ``[0]``)."""
    if n < 0:
        raise ValueError(f"expected a non-negative integer, got {n}")  # as NumPy refuses it
    words = [n & _MASK] if n == 0 else []
    while n > 0:
        words.append(n & _MASK)
        n >>= 32
    return words


def _words_of(seed: int, keys: list[tuple[int, ...]], game: int, cell: int, ids: list[int]):
    """The ``generate_state(4, uint64)`` of ``SeedSequence(seed, spawn_key=key)`` per key, (n, 4);
    ``keys`` are :func:`game_streams`' (``game`` and ``cell`` keys, replicates ``ids``).

    NumPy assembles a sequence's entropy as the seed's words, padded with zeros to the pool size
    (4) when there is a spawn key, then each key entry's words. Where every replicate index is
    one word (below 2³²; the keys and the child index always are) the rows are filled by
    columns; otherwise row by row, rows of the same length mixed together in one call.
    """
    head = _int_words(int(seed))
    head += [0] * (4 - len(head))
    n, width = len(ids), len(head)
    if n > 4 and all(0 <= r <= _MASK for r in ids):  # (fewer are quicker row by row)
        entropy = np.empty((3 * n, width + 3), dtype=np.uint64)
        entropy[:, :width] = head
        entropy[:, width] = np.repeat([game, game, cell], n)
        entropy[:, width + 1] = np.tile(np.asarray(ids, dtype=np.uint64), 3)
        entropy[:, width + 2] = np.repeat([0, 1, 1], n)
        out = np.empty((3 * n, 4), dtype=np.uint64)
        _seed_words(entropy, out)
        return out
    rows = [head + [w for k in key for w in _int_words(int(k))] for key in keys]
    out = np.empty((len(rows), 4), dtype=np.uint64)
    by_length: dict[int, list[int]] = {}
    for i, row in enumerate(rows):
        by_length.setdefault(len(row), []).append(i)
    for indices in by_length.values():
        entropy = np.array([rows[i] for i in indices], dtype=np.uint64)
        words = np.empty((len(indices), 4), dtype=np.uint64)
        _seed_words(entropy, words)
        out[indices] = words
    return out


_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R = 0xCA01F9DD, 0x4973F715


@njit(cache=True)
def _hashmix(value, hash_const):
    """NumPy's ``hashmix``: the mixed value and the next hash constant (32-bit words)."""
    mask = np.uint64(_MASK)
    value ^= hash_const
    hash_const = (hash_const * np.uint64(_MULT_A)) & mask
    value = (value * hash_const) & mask
    return value ^ (value >> np.uint64(16)), hash_const


@njit(cache=True)
def _mix(x, y):
    """NumPy's ``mix``: ``(L x − R y) mod 2³²``, its high half folded in."""
    mask = np.uint64(_MASK)
    left = (np.uint64(_MIX_MULT_L) * x) & mask
    right = (np.uint64(_MIX_MULT_R) * y) & mask
    result = (left + (mask - right) + np.uint64(1)) & mask  # never below zero
    return result ^ (result >> np.uint64(16))


@njit(cache=True)
def _seed_words(entropy, out):
    """Fill ``out[s]`` with ``SeedSequence``'s ``generate_state(4, uint64)`` for the entropy
    words ``entropy[s]`` (already assembled, at least the pool's 4).

    NumPy's mixing (``numpy/random/bit_generator.pyx``: ``mix_entropy`` and ``generate_state``,
    after M. E. O'Neill's ``seed_seq`` alternative) in 32-bit words held in 64-bit integers,
    masked after each product so that nothing overflows; the eight 32-bit words of the state
    are read as four little-endian 64-bit ones. Checked against NumPy's own on 400 random seeds
    and 4,791 spawn keys (``tests/arena/test_seeding.py``).
    """
    mask = np.uint64(_MASK)
    n_streams, length = entropy.shape
    pool = np.empty(4, dtype=np.uint64)
    for s in range(n_streams):
        hash_a = np.uint64(_INIT_A)
        for i in range(4):
            pool[i], hash_a = _hashmix(entropy[s, i], hash_a)
        for i_src in range(4):  # every pool word mixed into every other
            for i_dst in range(4):
                if i_src != i_dst:
                    value, hash_a = _hashmix(pool[i_src], hash_a)
                    pool[i_dst] = _mix(pool[i_dst], value)
        for i_src in range(4, length):  # the entropy beyond the pool, into every pool word
            for i_dst in range(4):
                value, hash_a = _hashmix(entropy[s, i_src], hash_a)
                pool[i_dst] = _mix(pool[i_dst], value)
        hash_b = np.uint64(_INIT_B)
        for k in range(4):
            low = pool[(2 * k) % 4] ^ hash_b
            hash_b = (hash_b * np.uint64(_MULT_B)) & mask
            low = (low * hash_b) & mask
            low ^= low >> np.uint64(16)
            high = pool[(2 * k + 1) % 4] ^ hash_b
            hash_b = (hash_b * np.uint64(_MULT_B)) & mask
            high = (high * hash_b) & mask
            high ^= high >> np.uint64(16)
            out[s, k] = low | (high << np.uint64(32))
