"""The driver's rows are pinned: the demo tournament and a sample of experts and OCO games.

Recorded before the one-driver redesign (issue 13) by ``python -m tests.arena.engine.golden_games``
(the commit is in ``data/golden_rows.json``); any change of the rows, the traces, the run ids or
the cell keys fails here. See :mod:`tests.arena.engine.golden_games` for why the comparison falls
back to the final values (relative tolerance 1e-9: a few ulps per round over at most 2000 rounds)
on a machine whose floating-point kernels round differently from the recording machine's.
"""

from __future__ import annotations

import json
import math

import pytest

from tests.arena.engine.golden_games import (
    DATA,
    final_values,
    float_probe_digest,
    golden_games,
    rows_digest,
    trace_digest,
)

RECORDED = json.loads(DATA.read_text())
GAMES = golden_games()
SAME_FLOATS = float_probe_digest() == RECORDED["float_probe"]


def test_every_recorded_game_is_still_played():
    assert sorted(GAMES) == sorted(RECORDED["games"])


@pytest.mark.parametrize("name", sorted(RECORDED["games"]))
def test_rows_equal_the_recording(name):
    want = RECORDED["games"][name]
    rows, trace = GAMES[name]()
    assert len(rows) == want["rows"]
    if SAME_FLOATS:
        assert rows_digest(rows) == want["digest"], f"{name}: rows differ from the recording"
        if "trace_digest" in want:
            assert trace is not None and trace_digest(trace) == want["trace_digest"]
        return
    got = final_values(rows)
    assert sorted(got) == sorted(want["final"])
    for key, value in want["final"].items():
        assert math.isclose(got[key], value, rel_tol=1e-9, abs_tol=1e-9), (name, key)
