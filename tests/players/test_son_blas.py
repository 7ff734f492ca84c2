"""A game runs with one BLAS thread unless ARENA_BLAS_THREADS says otherwise, and restores the
caller's setting afterwards (dense sketches make a LAPACK call a round: a thread pool per call
oversubscribes a tournament's workers)."""

from __future__ import annotations

import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from arena.errors import ConfigError
from arena.game import run_game
from arena.players.son import SON
from arena.resources import BLAS_THREADS_VARIABLE, blas_thread_limit


def blas_threads_now() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def play_and_spy(monkeypatch) -> list[list[int]]:
    """Run a dense Oja-SON game; return the BLAS thread counts seen inside each play_block."""
    seen: list[list[int]] = []
    original = SON.play_block

    def spy(self, data, spec):
        seen.append(blas_threads_now())
        return original(self, data, spec)

    monkeypatch.setattr(SON, "play_block", spy)
    run_game(
        "son",
        "ill_conditioned",
        player_params={"sketch": "oja", "m": 2},
        n_actions=12,
        horizon=30,
        metrics=["loss"],
    )
    return seen


@pytest.fixture
def two_threads():
    import scipy.linalg  # noqa: F401  (numba's LAPACK: loaded before the caller's limit is set)

    if not blas_threads_now():
        pytest.skip("no BLAS library found by threadpoolctl")
    with threadpool_limits(limits=2, user_api="blas"):  # the caller's setting, not 1
        yield


def test_game_uses_one_blas_thread_and_restores(monkeypatch, two_threads):
    monkeypatch.delenv(BLAS_THREADS_VARIABLE, raising=False)
    before = blas_threads_now()
    assert max(before) == 2
    seen = play_and_spy(monkeypatch)
    assert seen and all(counts and max(counts) == 1 for counts in seen)
    assert blas_threads_now() == before


def test_knob_changes_the_limit(monkeypatch, two_threads):
    monkeypatch.setenv(BLAS_THREADS_VARIABLE, "all")
    seen = play_and_spy(monkeypatch)
    assert all(max(counts) == 2 for counts in seen)  # left as the caller set it
    monkeypatch.setenv(BLAS_THREADS_VARIABLE, "1")
    assert all(max(counts) == 1 for counts in play_and_spy(monkeypatch))


def test_bad_knob_is_refused(monkeypatch):
    monkeypatch.setenv(BLAS_THREADS_VARIABLE, "many")
    with pytest.raises(ConfigError, match=BLAS_THREADS_VARIABLE):
        blas_thread_limit()


def test_nested_cap_is_free_and_the_outer_one_restores(monkeypatch, two_threads):
    """A game caps once for its resets and rounds: a nested cap over the same libraries is a
    no-op (threadpoolctl's limits are per process), and leaving it keeps the outer cap."""
    import contextlib

    from arena.resources import blas_threads

    monkeypatch.delenv(BLAS_THREADS_VARIABLE, raising=False)
    with blas_threads():
        inner = blas_threads()
        assert isinstance(inner, contextlib.nullcontext)
        with inner:
            assert max(blas_threads_now()) == 1
        assert max(blas_threads_now()) == 1
        # another cap is applied again, and restores this one
        with blas_threads(2):
            assert max(blas_threads_now()) == 2
        assert max(blas_threads_now()) == 1
    assert max(blas_threads_now()) == 2
