"""One game on every core: a game's replicates split into blocks, each played in its own thread.

Replicate r's rows depend only on (seed, game, cell, r) (architecture: seeding), not on the
replicates beside it; so :func:`arena.game.run_game` can split the
replicates of a game into contiguous blocks, check the whole game once on the calling thread
(:func:`arena.game.check_game`: every check, the config, the run id and the rows' constants,
without resetting its components), prepare each block in its thread as a game of its own (its
own clones, reset on its own replicates' streams), play the blocks, and assemble the rows of all
blocks as the one-thread run assembles them: the rows, the config and the manifest are
bit-identical to ``n_jobs=1`` (tested in ``tests/arena/engine/test_parallel_replicates.py``).
Each block plays the whole game's chunk boundaries, so that even a component or metric whose
arithmetic depends on the chunk size gives the same rows: ``duality_gap`` and the OCO family's
``loss``, ``regret`` and ``path_length`` do, in the last bits, against the seeding contract. A
protocol whose rows are chunk-free declares :attr:`arena.protocol.GameProtocol.chunk_invariant`,
and its blocks size their chunks for their own replicates instead (the chunk bound is then per
thread): a 2-block split plays half as many chunks per block, so half the Python per round under
the GIL. The experts protocol declares it (and so the bandit protocol, which plays the experts
game); the OCO family does not.

The threads run at the same time because the hot path releases the GIL: the numba kernels are
compiled with ``nogil=True`` and numpy's array calls release it themselves. What stays under the
GIL is the Python of each chunk (the per-replicate stream calls of an oblivious adversary and of
the action uniforms, the validation, one call per metric), which is why a game is split only
where there is work to share (:data:`AUTO_MIN_ELEMENTS`).

``n_jobs`` is not part of a game's identity: it changes neither the run id, the cell key, the
config nor any row. The knob, :func:`check_n_jobs`: ``None`` (default) or ``"auto"`` reads
:data:`N_JOBS_VARIABLE` and otherwise uses the cores this process may run on, for a game large
enough to gain; a positive integer is the most threads (one block each); ``-1`` every core. A
tournament's cells are played with the cores their worker owns (``arena.apps.tournament``:
one thread per cell when the cells already run in parallel processes).

One thread, whatever ``n_jobs`` says (:func:`plan_blocks` returns the reason):

* one replicate (nothing to split: the work of a replicate is a chain over rounds), or fewer
  than two blocks of :data:`MIN_BLOCK` replicates (R = 2 or 3);
* a per-round trace (``trace_path``): its rows are written chunk by chunk in the one-thread
  order, replicate-major within each chunk, which blocks could only reproduce by holding each
  other's chunks;
* ``n_jobs`` or the machine giving one core; under ``"auto"``, a game whose R·N·T is below
  :data:`AUTO_MIN_ELEMENTS` (the threads' start and the blocks' preparation would cost more than
  they save) or whose components' setup outweighs its rounds (a pilot simulation in ``reset``,
  which every block would repeat).

A block that fails stops the others at their next chunk, and the game is played again on one
thread up to the failure, so that the error raised is the one-thread run's (same round, same
replicate, same message).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arena.errors import ConfigError

N_JOBS_VARIABLE = "ARENA_N_JOBS"
"""Environment variable: the threads of a game whose ``n_jobs`` is None or ``"auto"`` (a positive
integer, ``-1`` or ``auto``). A process pool of the user's own that plays games in parallel sets
it to 1 in its workers, as the tournament's executors do through ``n_jobs``."""

AUTO_MIN_ELEMENTS = 2**24
"""Least R·N·T (replicates × actions or dimension × rounds) that ``n_jobs="auto"`` splits: about
0.2 s of one core at the experts kernels' 10⁸ element-rounds per second, against what a split
adds: the threads, each block's own preparation and the whole game's checks (measured 25–35 ms
at N = 10–1000, R = 64 on a busy 2-core machine when the whole game was also reset; explicit
``n_jobs=2`` on a 0.03 s game doubled its time)."""


MIN_BLOCK = 2
"""Fewest replicates in a block. A replicate alone can take other numpy loops than in a batch
(a length-1 axis is collapsed): ``passive_aggressive`` against ``hull_lower_bound`` gives
``loss``, ``comparator_regret`` and ``dynamic_regret`` that differ in the last bits (≤ 1e-12)
at R = 1 from the same replicate in a batch, against the seeding contract (a known bug,
``test_a_replicate_alone_matches_its_batch`` in ``tests/arena/engine/test_parallel_replicates.py``).
Blocks of at least two replicates keep the split bit-identical there too."""


def usable_cores() -> int:
    """Return the cores this process may run on (its CPU affinity where the OS tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _n_jobs_value(value: Any, where: str, parameter: str, noun: str = "parameter") -> int | None:
    """Return ``value`` as a thread count (None: auto), or raise a ConfigError naming it."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("auto", ""):
            return None
        try:
            value = int(text)
        except ValueError:
            value = text
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if value == -1:
            return usable_cores()
        if value >= 1:
            return int(value)
    raise ConfigError(
        where,
        parameter,
        f"must be a positive number of threads, -1 (every core) or 'auto', got {value!r}",
        noun=noun,
    )


def check_n_jobs(n_jobs: Any) -> int | None:
    """Validate a game's ``n_jobs``; return the thread count, or None for ``"auto"``.

    Examples
    --------
    >>> check_n_jobs(2), check_n_jobs("auto"), check_n_jobs(None), check_n_jobs(-1) >= 1
    (2, None, None, True)
    >>> check_n_jobs(0)
    Traceback (most recent call last):
    ...
    arena.errors.ConfigError: game: parameter 'n_jobs': must be a positive number of threads, -1 ...
    """
    return _n_jobs_value(n_jobs, "game", "n_jobs")


def resolve_n_jobs(n_jobs: Any) -> tuple[int, bool]:
    """Return the threads a game may use and whether they were chosen automatically.

    An explicit count is taken as it is; None or ``"auto"`` reads :data:`N_JOBS_VARIABLE`, else
    every usable core (:func:`usable_cores`).
    """
    explicit = check_n_jobs(n_jobs)
    if explicit is not None:
        return explicit, False
    env = _n_jobs_value(
        os.environ.get(N_JOBS_VARIABLE), "environment", N_JOBS_VARIABLE, noun="variable"
    )
    if env is not None:
        return env, False
    return usable_cores(), True


def plan_blocks(game: Any, n_jobs: Any, *, tracing: bool) -> tuple[list[np.ndarray], str]:
    """Split a prepared game's replicates into the blocks its threads play.

    Returns the blocks (contiguous runs of the game's replicate ids, in order, sizes differing
    by at most one, at least :data:`MIN_BLOCK` each) and, when there is a single block, why the
    game stays on one thread.
    """
    ids = game.ids
    threads, auto = resolve_n_jobs(n_jobs)
    spec = game.spec
    reason = ""
    if threads <= 1:
        reason = "n_jobs is 1 (or one core is usable)"
    elif ids.size <= 1:
        reason = "one replicate: nothing to split"
    elif ids.size < 2 * MIN_BLOCK:
        reason = f"{ids.size} replicates: fewer than two blocks of {MIN_BLOCK}"
    elif tracing:
        reason = "a per-round trace is written in the one-thread order"
    elif auto:
        elements = int(ids.size) * int(spec.n_actions) * int(spec.horizon or 1)
        footprint = game.footprint
        if elements < AUTO_MIN_ELEMENTS:
            reason = f"n_jobs=auto: R·N·T = {elements} < {AUTO_MIN_ELEMENTS} is too small to gain"
        elif footprint.setup > footprint.work * max(int(spec.horizon or 1), 1):
            reason = "n_jobs=auto: the components' setup outweighs the rounds"
    if reason:
        return [ids], reason
    n_blocks = min(threads, int(ids.size) // MIN_BLOCK)
    return [block for block in np.array_split(ids, n_blocks)], ""


class Stopped(Exception):
    """Raised inside a block when another block failed: this one stops at its next chunk."""


def run_blocks(
    blocks: Sequence[np.ndarray],
    play_block: Callable[[int, np.ndarray, threading.Event], Any],
) -> list[Any] | None:
    """Play ``play_block(index, ids, stop)`` for every block, each in its own thread.

    Returns the blocks' results in block order, or None when a block failed (the others were
    stopped): the caller then plays the game on one thread, which raises the one-thread error.
    An interrupt (Ctrl-C) of the calling thread stops every block and is raised.
    """
    from concurrent.futures import ThreadPoolExecutor

    stop = threading.Event()
    results: list[Any] = [None] * len(blocks)
    failed: list[BaseException] = []

    def work(index: int, ids: np.ndarray) -> None:
        try:
            results[index] = play_block(index, ids, stop)
        except Stopped:
            pass
        except BaseException as exc:  # replayed on one thread for the one-thread error
            failed.append(exc)
            stop.set()

    pool = ThreadPoolExecutor(max_workers=len(blocks), thread_name_prefix="arena-block")
    try:
        futures = [pool.submit(work, i, ids) for i, ids in enumerate(blocks)]
        for fut in futures:
            fut.result()
    except BaseException:
        stop.set()  # Ctrl-C: the blocks end at their next chunk
        raise
    finally:
        pool.shutdown(wait=True)
    if failed:
        return None
    return results
