"""The ``arena`` command line in a subprocess, for the end-to-end tests of the CLI and plugins."""

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
