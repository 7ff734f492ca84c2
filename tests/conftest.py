"""Fixtures shared by the test suite (helpers that are not fixtures live in :mod:`tests.helpers`).

The tree mirrors the code: ``tests/players/test_<module>.py`` for ``arena/players/<module>.py``,
``tests/adversaries/test_<module>.py`` for ``arena/adversaries/<module>.py``, ``tests/arena/...``
for the library and ``tests/benchmarks/`` for the benchmark scripts (a ``_<aspect>`` suffix names a
second file of one module). Every folder is a package, so test files import helpers as
``from tests.helpers... import ...``.
"""

from __future__ import annotations

import pytest
from threadpoolctl import threadpool_limits


def pytest_configure(config):
    """Cap BLAS/LAPACK at one thread in every test process (each pytest-xdist worker too).

    Games already run with one thread (:func:`arena.resources.blas_threads`), but the tests'
    own reference loops, brute-force checks and solvers call LAPACK directly: with one process
    per core, OpenBLAS's default of a thread per core oversubscribes the machine, and a busy
    thread pool makes a 100×100 QR 0.7 s instead of 3 ms. Tests of the thread setting set their
    own limits inside this one.
    """
    import numpy  # noqa: F401  (threadpoolctl caps the libraries loaded when it is called)
    import scipy.linalg  # noqa: F401  (SciPy's own OpenBLAS, used by numba's LAPACK calls too)

    config._blas_limit = threadpool_limits(limits=1, user_api="blas")


def pytest_collection_modifyitems(items):
    """Run the tests marked ``slow`` first (a stable sort: each group keeps its order).

    pytest-xdist hands tests out in collection order, so long tests collected last (the gallery's
    replays, 20-45 s each) would finish alone on one worker while the other idles; started first,
    the short tests fill in around them.
    """
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


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
