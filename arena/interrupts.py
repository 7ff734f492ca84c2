"""Ctrl-C during a compilation: noted when it comes, raised between chunks.

Python raises ``KeyboardInterrupt`` wherever the main thread is when SIGINT arrives. While numba
compiles a kernel that can be a ``__del__`` method (llvmlite freeing a compiler string), where
Python prints "Exception ignored in ..." and goes on, so the command played its game to the end
and wrote its results; or a ctypes callback of LLVM's object cache, after which the process died
of a segmentation fault. Both were seen in fresh-clone CI runs, whose first games compile their
kernels. The command line therefore installs :func:`sigint_noted`: a SIGINT that comes while
numba or llvmlite code runs is only noted, and the driver raises it at its next chunk
(:func:`raise_if_noted`); anywhere else it raises at once, as Python's own handler does.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

_NOTED = [False]  # whether a SIGINT came since sigint_noted was entered

_DEFERRING = ("numba", "llvmlite")
"""Packages inside which a SIGINT is only noted (their compiler's state must not be unwound)."""


def handle_sigint(signum: int, frame: Any) -> None:
    """The SIGINT handler of :func:`sigint_noted` (and of the tournament's gate outside the
    writes it holds a Ctrl-C over): note it; raise ``KeyboardInterrupt`` unless ``frame`` is in
    numba or llvmlite code."""
    _NOTED[0] = True
    if not _inside(frame, _DEFERRING):
        raise KeyboardInterrupt


def _inside(frame: Any, packages: tuple[str, ...]) -> bool:
    """Whether ``frame`` or one of its callers runs code of one of ``packages``."""
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.partition(".")[0] in packages:
            return True
        frame = frame.f_back
    return False


@contextlib.contextmanager
def sigint_noted() -> Iterator[None]:
    """Inside the block (main thread only), SIGINT is noted for :func:`raise_if_noted`, and
    raises ``KeyboardInterrupt`` at once unless numba or llvmlite code is running; the note is
    cleared on entry and on exit.

    Examples
    --------
    >>> with sigint_noted():
    ...     signal.getsignal(signal.SIGINT) is handle_sigint
    True
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, handle_sigint)
    _NOTED[0] = False
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _NOTED[0] = False


def raise_if_noted() -> None:
    """Raise ``KeyboardInterrupt`` if a SIGINT was noted (one deferred, or one swallowed on its
    way by a ``__del__``).

    Examples
    --------
    >>> raise_if_noted()  # nothing noted
    """
    if _NOTED[0]:
        raise KeyboardInterrupt
