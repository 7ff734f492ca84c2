"""The ``arena`` command line, for the end-to-end tests of the CLI and plugins.

:func:`arena` runs it in a fresh Python subprocess: what the tests of signals, exit codes of a
killed child and plugins installed on ``PYTHONPATH`` need. :func:`arena_in_process` calls the
console script's entry point (``arena.apps.cli:main``) in the test's own process, capturing what
it prints: the same code path from the argument list on, without paying a Python start, the
imports and the numba cache load (~4 s of CPU) per call, for the tests that check what a command
says, writes and refuses rather than how a process behaves.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ARENA = [sys.executable, "-m", "arena.apps.cli"]


def arena(*args: str, cwd: Path, extra_path: Path | None = None) -> subprocess.CompletedProcess:
    """Run ``arena *args`` in ``cwd`` (unbuffered, 300 s at most); ``extra_path`` is prepended to
    ``PYTHONPATH`` (a fake installed distribution, for the plugin tests)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(extra_path), env.get("PYTHONPATH")]))
    return subprocess.run(
        [*ARENA, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env
    )


def arena_in_process(*args: str, cwd: Path):
    """Run ``arena *args`` in ``cwd`` by calling ``arena.apps.cli:main`` here
    (:func:`tests.helpers.contract.run_in_process`); the result has the ``returncode``,
    ``stdout`` and ``stderr`` that :func:`arena` returns."""
    from tests.helpers.contract import run_in_process

    return run_in_process(list(args), cwd)
