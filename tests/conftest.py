"""Fixtures shared by the test suite (helpers that are not fixtures live in :mod:`tests.helpers`).

The tree mirrors the code: ``tests/players/test_<module>.py`` for ``players/<module>.py``,
``tests/adversaries/test_<module>.py`` for ``adversaries/<module>.py``, ``tests/arena/...`` for
the library and ``tests/benchmarks/`` for the benchmark scripts (a ``_<aspect>`` suffix names a
second file of one module). Every folder is a package, so test files import helpers as
``from tests.helpers... import ...``.
"""

from __future__ import annotations

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(scope="module")
def matrix_dir(tmp_path_factory):
    """A folder shared by a module's tests for the loss files they replay."""
    return tmp_path_factory.mktemp("matrices")


@pytest.fixture
def single_threaded_blas():
    """Run single-threaded BLAS: a multi-threaded OpenBLAS on a loaded 2-core machine makes
    thousands of tiny dense solves ~100× slower (test_hindsight.py: 17 s → 50 s)."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield
