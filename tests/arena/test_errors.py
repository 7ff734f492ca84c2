"""The arena's errors survive pickling: a process pool or Dask worker sends a failed cell's error
back to the parent pickled, which must rebuild the same message and fields (their ``__init__``
takes the component, parameter and round, not the message the default pickling passes)."""

from __future__ import annotations

import pickle

import pytest

from arena.errors import (
    ArenaError,
    ConfigError,
    GameError,
    ReportPathError,
    UndeclaredDistributionError,
    UnknownComponentError,
    mark_failure,
)

ERRORS = [
    ArenaError("plain"),
    ConfigError("player hedge", "eta", "must be > 0, got -1"),
    ConfigError("arena run", "horizon", "must be an integer", noun="key"),
    GameError("player Hedge()", "p_t has NaN", round=7, replicate=3),
    GameError("adversary X()", "losses_block raised", round=1, last_round=64),
    UndeclaredDistributionError("adversary A()", "read history.probs", round=2),
    ReportPathError("report name '../x' is not a plain name"),
    UnknownComponentError("no player 'hedg' (did you mean hedge?)"),
]


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
def test_an_error_survives_pickling(error):
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error) and vars(copy) == vars(error)


def test_a_marked_failure_keeps_where_it_was_raised():
    error = mark_failure(GameError("player P()", "bad", round=5), offset=2, replicate=1)
    copy = pickle.loads(pickle.dumps(error))
    assert vars(copy) == vars(error) and str(copy) == str(error)
