"""Ctrl-C that a library swallowed: noted when it comes, raised again between chunks.

Python raises ``KeyboardInterrupt`` wherever the main thread is when SIGINT arrives. When that
is a ``__del__`` method (llvmlite frees its compiler's strings in one while numba compiles a
kernel), Python prints "Exception ignored in ..." and goes on: the command would play its game to
the end and write its results as if no Ctrl-C had come. The command line therefore notes every
SIGINT (:func:`sigint_noted`), and the driver raises a noted one at its next chunk
(:func:`raise_if_noted`), so a Ctrl-C always stops the command.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

_NOTED = [False]


def _note_and_raise(signum: int, frame: Any) -> None:
    _NOTED[0] = True
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigint_noted() -> Iterator[None]:
    """Inside the block (main thread only), SIGINT raises ``KeyboardInterrupt`` as Python's own
    handler does and is also noted for :func:`raise_if_noted`; the note is cleared on entry and
    on exit.

    Examples
    --------
    >>> with sigint_noted():
    ...     signal.getsignal(signal.SIGINT) is _note_and_raise
    True
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, _note_and_raise)
    _NOTED[0] = False
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _NOTED[0] = False


def raise_if_noted() -> None:
    """Raise ``KeyboardInterrupt`` if a SIGINT was noted (one that was swallowed on its way).

    Examples
    --------
    >>> raise_if_noted()  # nothing noted
    """
    if _NOTED[0]:
        raise KeyboardInterrupt
