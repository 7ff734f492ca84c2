"""Vowpal Wabbit's default linear learner beside ``normalized_linear``, prediction by prediction.

VW 9.11.9 (benchmark-only environment, :mod:`vw_peer`) learns a stream one example at a time
through ``pyvw`` (``ws.learn(ex)``), and each example's raw score ``θ·x̃`` made before the update
(``ex.get_partial_prediction()``: float32, unclipped) is read back; ``normalized_linear`` (one
lane, float64) plays the same examples, labels and importance weights. Streams: the golden
stream of ``tests/weak_learners/test_normalized.py`` (40 weighted examples, whose VW scores that
test pins) and replicates 0–1 of the boosting table's streams (``bench_vw_boosting.STREAMS``,
T = 2,000, weight 1).

Run::

    .venv/bin/python benchmarks/vw_learner_check.py            # prints the largest differences
    .venv/bin/python benchmarks/vw_learner_check.py --golden   # prints the test's golden scores
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from vw_peer import WORK, ensure_vw, export_stream, vw_line

VW_DRIVE = r"""
import json, sys
from vowpalwabbit import pyvw
data, options = sys.argv[1:3]
ws = pyvw.Workspace(f"--quiet {options}")
scores = []
for line in open(data):
    ex = ws.parse(line.rstrip("\n"))
    ws.learn(ex)
    scores.append(ex.get_partial_prediction())
    ws.finish_example(ex)
ws.finish()
print(json.dumps(scores))
"""


def vw_scores(x: np.ndarray, y: np.ndarray, weight: np.ndarray, name: str) -> np.ndarray:
    """VW's raw scores (T,) on the examples ``x`` (T, d), labels ``y`` and importance weights."""
    path = WORK / f"learner-{name}.vw"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as out:
        for row, label, w in zip(x, y, weight, strict=True):
            head, features = vw_line(row, label).split(" |", 1)
            out.write(f"{head} {float(w):.17g} |{features}\n")
    done = subprocess.run(
        [str(ensure_vw()), "-c", VW_DRIVE, str(path), ""],
        capture_output=True,
        text=True,
        check=True,
    )
    return np.asarray(json.loads(done.stdout.strip().splitlines()[-1]), dtype=np.float64)


def our_scores(x: np.ndarray, y: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``normalized_linear``'s raw scores on the same stream, one lane, before each update."""
    from arena.boosting.components import WeakSpec
    from arena.weak_learners.normalized import NormalizedLinear

    wl = NormalizedLinear()
    wl.reset(WeakSpec("classification", x.shape[1], 1), [[None]])
    out = np.empty(len(y))
    for t in range(len(y)):
        theta = wl.kernel_state()[0][0, 0]  # the readable update replaces its arrays
        out[t] = theta[:-1] @ x[t] + theta[-1]
        wl.update(x[t][None], np.array([[y[t]]]), np.array([[weight[t]]]))
    return out


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the golden stream's test
    from bench_vw_boosting import STREAMS

    from tests.weak_learners.test_normalized import golden_stream

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--golden", action="store_true", help="print the golden stream's scores")
    ns = parser.parse_args()
    x, y, w = golden_stream()
    vw = vw_scores(x, y, w, "golden")
    if ns.golden:
        print(json.dumps([float(v) for v in vw]))
    ours = our_scores(x, y, w)
    print(f"golden stream: largest |ours - VW| = {np.abs(ours - vw).max():.3g}")
    for name, stream in STREAMS.items():
        xs, ys = export_stream(*stream, horizon=2_000, replicates=2)
        for r in range(2):
            ones = np.ones(len(ys[r]))
            vw = vw_scores(xs[r], ys[r], ones, f"{name}-{r}")
            ours = our_scores(xs[r], ys[r], ones)
            gap = np.abs(ours - vw)
            print(
                f"{name} replicate {r}: largest |ours - VW| = {gap.max():.3g}, "
                f"relative {(gap / np.maximum(np.abs(vw), 1e-3)).max():.3g}, "
                f"signs equal {np.mean(np.sign(ours) == np.sign(vw)):.4f}"
            )


if __name__ == "__main__":
    main()
