"""What a game costs, and the refusals of a game that would not fit this machine.

Every size is checked before it is allocated (architecture: bad input): the replicates' indices
and streams (:func:`check_replicates`), the game's (R, N) state (:func:`check_memory`), the tidy
rows of the checkpoint grid (:func:`check_rows`), then what every part declares
(:func:`game_footprints`: the game's own state and rows, and each component's
:meth:`~arena.base.Component.footprint`), added up by :func:`check_resources` against the memory
available now (:func:`available_memory`) and the time limit (:func:`max_hours`). Each refusal is
a :class:`~arena.errors.ConfigError` naming the component and parameter at fault and the numbers.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Iterator, Sequence
from typing import Any

from arena.base import GIB, NEGLIGIBLE, Footprint, declared_footprint
from arena.errors import ConfigError
from arena.metric import Metric
from arena.spec import GameSpec

STATE_ARRAYS = 6
"""Arrays of shape (replicates, n_actions) a game holds at least (the player's state, the round's
distribution and losses, the metrics' running totals): the memory estimate's multiplier."""

STREAM_BYTES = 3000
"""Bytes of the three random streams of one replicate (measured: about 2.8 kB)."""

ROW_BYTES = 224
"""Bytes one tidy row takes in memory (measured: T = 10⁴ rounds × 32 replicates of one metric,
320,000 rows, 224 bytes each), for refusing a checkpoint grid whose rows cannot fit."""

OPS_PER_SECOND = 2e9
"""Elementary operations per second (a flop, a float64 read or written) that the time estimate
assumes: one core of a current machine in compiled loops. Measured: SON's FD sketch (about 10·m³
operations per round and replicate, an m×m eigendecomposition) at m = 400 runs at 1–3·10⁹ on
the development machine, the experts kernels at a few 10⁹ per element and round."""

MAX_HOURS = 12.0
"""The longest estimated game (one ``arena run``, one tournament cell) the driver starts:
beyond it a game is refused before round 1, naming the parameter that makes it long. The
environment variable :data:`MAX_HOURS_VARIABLE` changes it (``inf``: no limit)."""

MAX_HOURS_VARIABLE = "ARENA_MAX_HOURS"


def check_replicates(count: int) -> None:
    """Refuse ``count`` replicates whose indices and random streams alone cannot fit in memory.

    Checked before any game state exists (before the indices are allocated), so that a count
    such as ``replicates=1e11`` is one line, not a ``MemoryError``.
    """
    need = count * (8 + STREAM_BYTES)
    have = available_memory()
    if have is not None and need > have:
        raise ConfigError(
            "game",
            "replicates",
            f"replicates={count} need at least {size_text(need)} of memory for their "
            f"indices and random streams alone, and {size_text(have)} are available; lower "
            "replicates, or split them over several runs of the same experiment "
            "(replicates=[0,1,...], merged in one folder)",
        )


def state_bytes(replicates: int, n_actions: int, chunk_rounds: int = 1) -> int:
    """Bytes of a game's own state: ``R·N·8·(STATE_ARRAYS + chunk_rounds) + R·STREAM_BYTES``.

    A lower bound on what any player needs, the estimate of :func:`check_memory` and the game's
    part in :func:`game_footprints`.

    Examples
    --------
    >>> state_bytes(2, 3)
    6336
    """
    return replicates * n_actions * 8 * (STATE_ARRAYS + chunk_rounds) + replicates * STREAM_BYTES


def check_memory(replicates: int, n_actions: int, chunk_rounds: int = 1) -> int:
    """Refuse a game whose state cannot fit in this machine's memory; return the estimate.

    The estimate is :func:`state_bytes`: a lower bound on what any player needs, so a refused game
    could not have run, and it is refused before anything is allocated rather than after minutes
    of swapping. It runs apart from :func:`check_resources`, and before the metrics are built, so
    that the sizes the user chose are named: with the default metrics, a game of
    ``n_actions=10**7`` would otherwise be refused naming ``sa_regret``'s ``tau``, whose windows
    grow with N and are the largest part.

    Raises
    ------
    ConfigError
        Naming both sizes, the memory needed and the memory available.

    Examples
    --------
    >>> check_memory(64, 1000) < 10**7
    True
    >>> check_memory(10**8, 10**5)
    Traceback (most recent call last):
    ...
    arena.errors.ConfigError: game: parameter 'replicates': replicates=100000000 × n_actions=...
    """
    need = state_bytes(replicates, n_actions, chunk_rounds)
    have = available_memory()
    if have is not None and need > have:
        raise ConfigError(
            "game",
            "n_actions" if n_actions > replicates else "replicates",  # the larger is named
            f"replicates={replicates} × n_actions={n_actions} need at least {need / 2**30:.3g} GiB "
            f"of memory for the game's state, and {have / 2**30:.3g} GiB are available; lower "
            "replicates or n_actions, or split the replicates over several runs of the same "
            "experiment (replicates=[0,1,...], merged in one folder)",
        )
    return need


def check_rows(n_checkpoints: int, replicates: int, n_values: int) -> None:
    """Refuse a checkpoint grid whose tidy rows (checkpoints × replicates × metric values, about
    :data:`ROW_BYTES` each) cannot fit in the memory available, before any round is played."""
    need = n_checkpoints * replicates * n_values * ROW_BYTES
    have = available_memory()
    if have is not None and need > have:
        raise ConfigError(
            "game",
            "checkpoints",
            f"{n_checkpoints} checkpoints × {replicates} replicates × {n_values} metric values "
            f"make {n_checkpoints * replicates * n_values:.3g} rows, about {need / 2**30:.3g} GiB; "
            f"{have / 2**30:.3g} GiB are available: log fewer rounds (per_decade, a list) or "
            "fewer metrics",
        )


MEMORY_READING_TTL = 0.25
"""Seconds a reading of :func:`available_memory` is reused: a game checks its sizes against it
four times (streams, state, rows, parts), and one reading of ``/proc/meminfo`` costs 30-60 µs,
a tenth of a short game's fixed cost."""

_memory_reading: list[tuple[float, int | None]] = []  # [(time.monotonic(), bytes)]


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux ``MemAvailable``; else physical).

    A reading is reused for :data:`MEMORY_READING_TTL` seconds.
    """
    now = time.monotonic()
    reading = _memory_reading[0] if _memory_reading else None
    if reading is not None and 0.0 <= now - reading[0] < MEMORY_READING_TTL:
        return reading[1]
    have = _read_available_memory()
    _memory_reading[:] = [(now, have)]
    return have


def _read_available_memory() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def size_text(nbytes: float) -> str:
    """Return a byte count as a refusal shows it: GiB, or MiB below one GiB."""
    if nbytes >= GIB:
        return f"{nbytes / GIB:.3g} GiB"
    return f"{nbytes / 2**20:.3g} MiB"


def duration_text(seconds: float) -> str:
    """Return seconds as a refusal shows them (s, min, h or days)."""
    if seconds < 120:
        return f"{seconds:.3g} s"
    if seconds < 7200:
        return f"{seconds / 60:.3g} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.3g} h"
    return f"{seconds / 86400:.3g} days"


def max_hours() -> float:
    """Return the time limit of one game in hours: :data:`MAX_HOURS`, or ``ARENA_MAX_HOURS``.

    Raises
    ------
    ConfigError
        When the variable is set to something other than a number of hours > 0 (or ``inf``).
    """
    raw = os.environ.get(MAX_HOURS_VARIABLE, "").strip()
    if not raw:
        return MAX_HOURS
    try:
        hours = float(raw)
    except ValueError:
        hours = math.nan
    if not hours > 0:  # also refuses nan
        raise ConfigError(
            "environment",
            MAX_HOURS_VARIABLE,
            f"must be a number of hours > 0 (inf: no limit), got {raw!r}",
            noun="variable",
        )
    return hours


def game_footprints(
    player: Any,
    adversary: Any,
    metrics: Sequence[Metric],
    spec: GameSpec,
    *,
    n_checkpoints: int = 1,
    n_values: int = 1,
    chunk_rounds: int = 1,
) -> list[tuple[str, Footprint]]:
    """Return what each part of a game costs: the game's own state and rows, then every component.

    The game's parts are :func:`state_bytes` (its arrays of shape (R, N) and the replicates'
    streams, the estimate of :func:`check_memory`) and the tidy rows of the checkpoint grid; the
    components' parts are their :meth:`~arena.base.Component.footprint` declarations, labelled
    as errors label them.
    """
    n_rep, n_act = int(spec.n_replicates), int(spec.n_actions)
    state = state_bytes(n_rep, n_act, chunk_rounds)
    rows = n_checkpoints * n_rep * n_values
    parts = [
        (
            "game",
            Footprint(
                memory=state,
                work=n_rep * n_act * (STATE_ARRAYS + n_values),
                parameter="n_actions" if n_act > n_rep else "replicates",
                what=f"replicates={n_rep} × n_actions={n_act} (the game's state)",
            ),
        ),
        (
            "game",
            Footprint(
                memory=rows * ROW_BYTES,
                parameter="checkpoints",
                what=f"{n_checkpoints} checkpoints × {n_rep} replicates × {n_values} metric "
                f"values ({rows:.3g} rows)",
            ),
        ),
    ]
    for comp in (player, adversary, *metrics):
        parts.append((comp.label(), declared_footprint(comp, spec)))
    return parts


def check_resources(parts: Sequence[tuple[str, Footprint]], spec: GameSpec) -> Footprint:
    """Refuse a game whose parts cannot fit in memory or would outlast the time limit.

    The parts (:func:`game_footprints`) are added up; the refusal names the part that needs the
    most (its component and parameter), what it needs, what the whole game needs and what this
    machine has: the memory available now, or the time limit (:func:`max_hours`). Returns the
    total, which a tournament adds up over its cells.

    Raises
    ------
    ConfigError
        Before anything of the game is allocated.

    Examples
    --------
    >>> from arena.spec import GameSpec
    >>> spec = GameSpec("experts", 10, 1000, n_replicates=4)
    >>> part = Footprint(memory=2.0**80, parameter="k", what="k=[10**20]: a table")
    >>> check_resources([("metric toy", part)], spec)
    Traceback (most recent call last):
    ...
    arena.errors.ConfigError: metric toy: parameter 'k': k=[10**20]: a table needs 1.13e+15 GiB ...
    """
    total = NEGLIGIBLE
    for _, part in parts:
        total = total + part
    n_rep, n_act, horizon = int(spec.n_replicates), int(spec.n_actions), int(spec.horizon or 1)
    sizes = f"replicates={n_rep}, n_actions={n_act}"
    have = available_memory()
    if have is not None and total.memory > have:
        who, worst = max(parts, key=lambda p: p[1].memory)
        param = worst.parameter or ("n_actions" if n_act > n_rep else "replicates")
        if worst.advice:
            advice = worst.advice
        elif param in ("n_actions", "replicates"):
            advice = (
                "lower n_actions or replicates, or split the replicates over several runs of "
                "the same experiment (replicates=[0,1,...], merged in one folder)"
            )
        else:
            advice = f"lower {param}"
        raise ConfigError(
            who,
            param,
            f"{worst.what} needs {size_text(worst.memory)} of memory; the game needs "
            f"{size_text(total.memory)} in all ({sizes}) and {size_text(have)} are "
            f"available: {advice}",
        )
    limit = max_hours()
    seconds = total.seconds(horizon, OPS_PER_SECOND)
    if seconds > limit * 3600:
        who, worst = max(parts, key=lambda p: p[1].seconds(horizon, OPS_PER_SECOND))
        param = worst.parameter or "horizon"
        before = duration_text(worst.setup / OPS_PER_SECOND)
        setup = f" and {before} before round 1" if worst.setup else ""
        raise ConfigError(
            who,
            param,
            f"{worst.what} costs about {duration_text(worst.work / OPS_PER_SECOND)} a round"
            f"{setup}: "
            f"{horizon} rounds ({sizes}) would take about {duration_text(seconds)} (at "
            f"{OPS_PER_SECOND:.0e} operations/s), over the limit of {limit:g} h: "
            f"{worst.advice or f'lower {param}'}, or raise the limit ({MAX_HOURS_VARIABLE}=HOURS)",
        )
    return total


BLAS_THREADS_VARIABLE = "ARENA_BLAS_THREADS"
"""Environment variable: BLAS/LAPACK threads one game may use (default 1; ``all``: no limit)."""


def blas_thread_limit() -> int | None:
    """Return the BLAS threads a game may use: :data:`BLAS_THREADS_VARIABLE`, default 1.

    One thread per game is the default because a game's LAPACK calls are small (SON's sketches
    factor m×m or d×m matrices every round) and a tournament already runs one game per core:
    a multithreaded call per round costs far more in synchronization than it saves, and every
    process pool or Dask worker spinning all cores oversubscribes the machine (measured on
    Oja-SON at d = 1000: 10.5 ms a round on a busy machine with the default OpenBLAS threads,
    0.32 ms with one). ``all`` (or ``0``) leaves the libraries' own setting; a positive integer
    caps them there.

    Examples
    --------
    >>> import os
    >>> os.environ.pop(BLAS_THREADS_VARIABLE, None) and None
    >>> blas_thread_limit()
    1
    >>> os.environ[BLAS_THREADS_VARIABLE] = "all"
    >>> blas_thread_limit() is None
    True
    >>> del os.environ[BLAS_THREADS_VARIABLE]
    """
    raw = os.environ.get(BLAS_THREADS_VARIABLE, "1").strip().lower()
    if raw in ("all", "0", "none", ""):
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigError(
            "game", BLAS_THREADS_VARIABLE, f"a positive integer or 'all', got {raw!r}"
        )
    return value


def blas_threads(limit: int | None = None) -> Any:
    """Context manager capping BLAS/LAPACK threads (threadpoolctl) for the calls inside it.

    ``limit`` None reads :func:`blas_thread_limit`; the previous settings are restored on exit.
    Without a cap (``ARENA_BLAS_THREADS=all``) it does nothing.
    """
    cap = blas_thread_limit() if limit is None else int(limit)
    if cap is None:
        return contextlib.nullcontext()
    controller = _controller()
    try:
        top = _CAPPED[-1]  # (another thread may leave its cap between a test and a read)
    except IndexError:
        top = None
    if top is not None and top[0] is controller and top[1] == cap:
        # already capped by an enclosing call, over the same libraries (a library loaded since
        # makes a new controller, which is capped again): threadpoolctl's limits are per process
        return contextlib.nullcontext()
    return _capped(controller, cap)


_CAPPED: list = []  # the (controller, cap) of each blas_threads entered and not yet left


@contextlib.contextmanager
def _capped(controller: Any, cap: int) -> Iterator[None]:
    with controller.limit(limits=cap, user_api="blas"):
        _CAPPED.append((controller, cap))
        try:
            yield
        finally:
            _CAPPED.remove((controller, cap))


_CONTROLLER: list = []  # [(len(sys.modules) when made, ThreadpoolController)]


def _controller() -> Any:
    """A ``threadpoolctl.ThreadpoolController``, made again only after new modules were imported.

    Making one lists the process's shared libraries by reading ``/proc/self/maps`` (about 5 ms
    with numba's and LLVM's mappings, and every game enters :func:`blas_threads`: it was most of
    a short game's fixed cost). A BLAS library arrives with the extension module that links
    it (numpy's, SciPy's), so the controller is kept while ``sys.modules`` has not grown.
    """
    import sys

    from threadpoolctl import ThreadpoolController

    n_modules = len(sys.modules)
    if not _CONTROLLER or _CONTROLLER[0][0] != n_modules:
        _CONTROLLER[:] = [(n_modules, ThreadpoolController())]
    return _CONTROLLER[0][1]


ALLOCATOR_VARIABLE = "ARENA_MALLOC"
"""Environment variable: ``default`` leaves the C allocator's settings as the process has them."""

MMAP_THRESHOLD_BYTES = 64 * 2**20
"""Blocks below this size come from the heap (glibc's ``M_MMAP_THRESHOLD``), not a fresh mmap."""

TRIM_THRESHOLD_BYTES = 256 * 2**20
"""Free heap kept for reuse before glibc gives it back to the system (``M_TRIM_THRESHOLD``)."""

_ALLOCATOR: list[str] = []  # what tune_allocator did in this process, once


def tune_allocator() -> str:
    """Keep a game's chunk buffers in the heap: set glibc's mmap and trim thresholds, once.

    Every chunk of a game allocates its blocks afresh (the adversary's losses, the player's
    ``p_t``, the action uniforms: ``(R, n, N)`` arrays of up to 2 MiB at the driver's chunk
    bound), and components must return fresh arrays (a conformance check keeps them across
    calls), so the buffers cannot simply be reused. With glibc's defaults, blocks of that size are
    mapped with ``mmap`` and unmapped when freed, or the heap is trimmed back to the system after
    each chunk, and every chunk faults its pages in again: about 100,000 minor page faults in a
    game of R = 64, N = 10, T = 10⁵, a quarter to a third of its CPU time (benchmarks/README.md,
    "One game on two cores"), and page faults of two threads serialize on the process's memory
    map. Raising ``M_MMAP_THRESHOLD`` to :data:`MMAP_THRESHOLD_BYTES` and ``M_TRIM_THRESHOLD`` to
    :data:`TRIM_THRESHOLD_BYTES` lets freed blocks be reused from the heap: the same game faults
    about 3,000 times. The price is memory: a process keeps up to the trim threshold of freed
    heap per malloc arena instead of returning it at once.

    The driver calls this before a game's first round; it acts once per process, and never where
    the user chose: ``ARENA_MALLOC=default`` in the environment, or glibc's own
    ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` (which glibc read at start), leave the
    allocator alone. Other C libraries (macOS, musl, Windows) are left alone too. Results do not
    depend on it: only where freed memory goes.

    Returns
    -------
    str
        What this process's allocator got: ``"tuned"``, ``"default"`` (``ARENA_MALLOC=default``),
        ``"environment"`` (glibc's variables set), or ``"not glibc"``.

    Examples
    --------
    >>> tune_allocator() in {"tuned", "default", "environment", "not glibc"}
    True
    >>> tune_allocator() == tune_allocator()  # once per process
    True
    """
    if not _ALLOCATOR:
        _ALLOCATOR.append(_set_allocator())
    return _ALLOCATOR[0]


def _set_allocator() -> str:
    import ctypes
    import platform
    import sys

    if os.environ.get(ALLOCATOR_VARIABLE, "").strip().lower() == "default":
        return "default"
    if any(os.environ.get(v) for v in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")):
        return "environment"
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return "not glibc"
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return "not glibc"
    m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's <malloc.h>
    mallopt(m_trim_threshold, TRIM_THRESHOLD_BYTES)
    mallopt(m_mmap_threshold, MMAP_THRESHOLD_BYTES)
    return "tuned"
