"""Seeding contract: one SeedSequence per (root seed, cell, replicate), never Python's ``hash()``.

The adversary's stream and the stream that draws the realized actions ``I_t`` depend only on the
game (adversary, its parameters, N), not on the player, so every player facing the same adversary
and replicate sees the same losses and the same action uniforms (common random numbers). The
player's own stream depends on the whole cell.
"""

from __future__ import annotations

import zlib

import numpy as np


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
    """
    game = np.random.SeedSequence(seed, spawn_key=(stable_key(game_key), replicate))
    adversary_ss, action_ss = game.spawn(2)
    player_ss = np.random.SeedSequence(seed, spawn_key=(stable_key(cell_key), replicate, 1))
    return (
        np.random.Generator(np.random.PCG64(adversary_ss)),
        np.random.Generator(np.random.PCG64(action_ss)),
        np.random.Generator(np.random.PCG64(player_ss)),
    )
