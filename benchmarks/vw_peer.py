"""Vowpal Wabbit as a peer: its benchmark-only environment, a stream exporter and a runner.

Vowpal Wabbit (VW) is never a dependency of the project. :func:`ensure_vw` installs the pinned
``vowpalwabbit`` wheel into ``benchmarks/results/vw-venv``; :func:`run_vw` runs VW's own C++
driver there (``pyvw.Workspace("-d FILE ...").run_parser()``: VW parses the text file and learns,
the way VW users run it) in a child process, and reads back its progressive predictions (``-p``:
each example's prediction is made before VW learns from it).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from peer_env import RESULTS, ensure_venv

VW_REQUIREMENTS = ["vowpalwabbit==9.11.9"]
VW_VENV = "vw-venv"

VW_CHILD = r"""
import json, sys, time
import vowpalwabbit
from vowpalwabbit import pyvw
data, options, predictions = sys.argv[1:4]
started = time.perf_counter()
ws = pyvw.Workspace(f"-d {data} -p {predictions} --quiet {options}")
ws.run_parser()
seconds = time.perf_counter() - started
record = {"seconds": seconds, "examples": ws.get_weighted_examples(),
          "average_loss": ws.get_sum_loss() / max(ws.get_weighted_examples(), 1.0),
          "version": vowpalwabbit.__version__}
ws.finish()
print(json.dumps(record))
"""


def ensure_vw() -> Path:
    """Create the benchmark-only Vowpal Wabbit environment once; return its Python."""
    return ensure_venv(VW_VENV, VW_REQUIREMENTS)


def vw_line(x: np.ndarray, y: float) -> str:
    """Return one example in VW's text format: ``label | 1:x_1 2:x_2 …`` (features 1..d).

    Feature j + 1 holds ``x[j]``; zeros are left out (VW's sparse format), values are written
    with 17 significant digits so that VW reads the float64 value rounded once to its float32.
    With numeric names in the default namespace VW's hash of feature "j" is j itself, so
    feature j + 1 is weight slot j + 1 (what ``--random_init false`` of ``--OjaNewton`` relies on).

    Examples
    --------
    >>> vw_line(np.array([0.5, 0.0, -2.0]), -1.0)
    '-1 | 1:0.5 3:-2'
    """
    parts = [f"{j + 1}:{float(v):.17g}" for j, v in enumerate(np.asarray(x)) if v != 0.0]
    return f"{float(y):g} | " + " ".join(parts)


def write_vw_text(x: np.ndarray, y: np.ndarray, path: str | Path) -> Path:
    """Write the examples ``x`` (T, d) with labels ``y`` (T,) to ``path``, one line each."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as out:
        for row, label in zip(np.asarray(x), np.asarray(y), strict=True):
            out.write(vw_line(row, label) + "\n")
    return path


def export_stream(
    adversary: str,
    adversary_params: Mapping,
    *,
    horizon: int,
    replicates: int,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Return the ``x`` (R, T, d) and ``y`` (R, T) that ``arena.run_game`` shows any player.

    The engine seeds the adversary from the game alone (adversary, parameters, N, seed,
    replicate: common random numbers), so the stream prepared here with a placeholder player is
    the one every classification player meets in ``run_game(..., seed=seed, replicates=R)``.
    """
    from arena.game import prepare_game

    game = prepare_game(
        "ogd",
        adversary,
        player_params={"eta": 1.0},
        adversary_params=dict(adversary_params),
        horizon=horizon,
        replicates=replicates,
        seed=seed,
        metrics={"mistakes": {}},
    )
    data = game.adversary.data_block(1, horizon)
    return np.asarray(data.x, dtype=np.float64), np.asarray(data.y, dtype=np.float64)


def run_vw(python: Path, data: Path, options: str, predictions: Path | None = None) -> dict:
    """Run VW's driver on the text file ``data`` with ``options``; return timing and predictions.

    The record holds ``seconds`` (workspace creation, parsing and learning, all examples),
    ``examples``, VW's ``average_loss``, ``version`` and ``predictions`` (T,), VW's progressive
    predictions read from its ``-p`` file.
    """
    predictions = predictions or data.with_suffix(".pred")
    out = subprocess.run(
        [str(python), "-c", VW_CHILD, str(data), options, str(predictions)],
        capture_output=True,
        text=True,
        check=True,
    )
    record = json.loads(out.stdout.strip().splitlines()[-1])
    record["predictions"] = np.loadtxt(predictions, usecols=0, ndmin=1)
    return record


def progressive_error(y: np.ndarray, predictions: np.ndarray) -> float:
    """Return the fraction of rounds with ``y·p ≤ 0`` (the arena's ``mistakes``: 0 is a mistake).

    Examples
    --------
    >>> progressive_error(np.array([1.0, -1.0, 1.0, 1.0]), np.array([0.3, 0.2, 0.0, 2.0]))
    0.5
    """
    return float(np.mean(np.asarray(y) * np.asarray(predictions) <= 0.0))


WORK = RESULTS / "vw-work"
"""Scratch folder of the exported streams and VW's prediction files (ignored by git)."""
