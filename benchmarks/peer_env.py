"""Benchmark-only virtual environments for peer tools (never dependencies of the project).

Each peer gets its own environment under ``benchmarks/results/<name>`` (ignored by git), created
on first use with the interpreter running the benchmark and the pinned requirements of that peer:
peers pin conflicting versions (SMPyBandits needs ``numpy<2``; Vowpal Wabbit's wheel needs no
numpy at all), so they do not share one.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def ensure_venv(name: str, requirements: list[str]) -> Path:
    """Create ``benchmarks/results/<name>`` with ``requirements`` once; return its Python.

    The environment counts as ready once the marker file ``.requirements`` holds exactly the
    requirements asked for, so a changed pin reinstalls into it instead of silently running an
    old version.
    """
    venv = RESULTS / name
    python = venv / "bin" / "python"
    marker = venv / ".requirements"
    wanted = "\n".join(requirements) + "\n"
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return python
    RESULTS.mkdir(parents=True, exist_ok=True)
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *requirements], check=True)
    marker.write_text(wanted)
    return python
