"""A Ctrl-C that a library swallows still stops the game (arena.interrupts)."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from arena.game import run_game
from arena.interrupts import raise_if_noted, sigint_noted

pytestmark = [
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.skipif(
        threading.current_thread() is not threading.main_thread(),
        reason="signals reach the main thread only",
    ),
]


class _Swallower:
    """Sends SIGINT to this process from its ``__del__``: Python raises the KeyboardInterrupt
    there, prints "Exception ignored in ..." and goes on, as when llvmlite's ``__del__`` is
    running when a terminal's Ctrl-C comes during a compilation."""

    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1.0)  # the handler runs here, inside __del__


def _swallow_one() -> None:
    _Swallower()  # dropped at once


def test_a_swallowed_ctrl_c_stops_the_game_at_its_next_chunk():
    with sigint_noted():
        _swallow_one()  # nothing raised here: the interrupt was swallowed
        with pytest.raises(KeyboardInterrupt):
            run_game("hedge", "fair_coin", horizon=1000, replicates=2)


def test_the_note_is_cleared_after_the_command():
    with sigint_noted():
        _swallow_one()
    raise_if_noted()  # the block is over: nothing left noted
    run_game("hedge", "fair_coin", horizon=100, replicates=2)


def test_a_ctrl_c_while_numba_compiles_waits_for_the_next_chunk():
    """The handler only notes a SIGINT that comes while numba or llvmlite code runs (unwinding
    their compiler's state crashed a process); the game raises it at its next chunk."""
    done = []

    def signalled():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)  # the handler runs here, called from "numba" code: it only notes it
        done.append(True)

    # a caller whose module is named as numba's are, as numba's compiler calls back into Python
    numba_like = {"__name__": "numba.core.stand_in"}
    exec(compile("def call(f):\n    f()\n", "<numba-like>", "exec"), numba_like)
    with sigint_noted():
        try:
            numba_like["call"](signalled)
        except KeyboardInterrupt:
            pytest.fail("the SIGINT was raised inside numba's code")
        assert done == [True]
        with pytest.raises(KeyboardInterrupt):
            run_game("hedge", "fair_coin", horizon=1000, replicates=2)
