"""The replicates' own generators inside a numba kernel, for one call per chunk.

Numba unboxes a ``numpy.random.Generator`` argument through ctypes at every call (three
``ctypes.cast`` calls and a dozen attribute reads: tens of microseconds), so a kernel called once
per replicate and chunk with the replicate's generator spends more on the calls than on the rounds
when R is large. A typed list of generators is passed cheaply but compiles its own methods in every
process (seconds). Instead, :func:`generator_handles` reads each generator's bit-generator
interface (state and the ``next_uint64`` / ``next_uint32`` / ``next_double`` function pointers)
once into an integer array, and :func:`stream` rebuilds numba's ``Generator`` value from a row
inside the kernel: the same pointers numba's own unboxing stores, so every draw is the
generator's own, bit for bit, and advances its state in place (the generator seen from Python
continues where the kernel stopped).

The handles hold raw pointers into the generators' bit generators: they are valid while those
objects live, and never outlive them (a player keeps its generators beside its handles, and
builds the handles again after a copy or unpickling). Without JIT (``NUMBA_DISABLE_JIT=1``)
:func:`stream` returns the generator itself from the list it is also given.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence

import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

_GENERATOR = types.NumPyRandomGeneratorType("generator")
_BIT_GENERATOR = types.NumPyRandomBitGeneratorType("bit_generator")


def jit_disabled() -> bool:
    """True when numba's JIT is off (kernels run as Python: :func:`stream` reads the list)."""
    return os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")


def _handles_by_ctypes(rng: np.random.Generator) -> list[int]:
    """One generator's row of :func:`generator_handles` read through ``bit_generator.ctypes``
    (the fields numba's own unboxing reads)."""
    ct = rng.bit_generator.ctypes
    return [
        ct.state_address,
        ct.state.value,
        ctypes.cast(ct.next_uint64, ctypes.c_void_p).value,
        ctypes.cast(ct.next_uint32, ctypes.c_void_p).value,
        ctypes.cast(ct.next_double, ctypes.c_void_p).value,
        ct.bit_generator.value,
    ]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_BITGEN_WORDS = ctypes.c_uint64 * 4
_capsule_checked = False
"""Whether this process has seen :func:`_handles_by_capsule` agree with the ctypes path."""


def _handles_by_capsule(rng: np.random.Generator) -> list[int]:
    """One generator's row of :func:`generator_handles` read from its ``bitgen_t`` struct.

    ``bit_generator.capsule`` holds the address of NumPy's ``bitgen_t`` (``numpy/random/
    bitgen.h``: the state pointer, then the ``next_uint64``, ``next_uint32`` and ``next_double``
    function pointers), the very values ``bit_generator.ctypes`` wraps; reading them directly
    costs about 1.6 µs of CPU a generator instead of 6–15 µs through a fresh generator's
    ``ctypes`` (which builds its ctypes function objects): 1–3 ms of a 100-replicate game,
    whose adversary and action streams are 200 generators.
    """
    address = _capsule_pointer(rng.bit_generator.capsule, b"BitGenerator")
    words = _BITGEN_WORDS.from_address(address)
    return [words[0], words[0], words[1], words[2], words[3], address]


def generator_handles(rngs: Sequence[np.random.Generator]) -> np.ndarray:
    """Return the (R, 6) uint64 interface of each generator's bit generator: state address,
    state, the ``next_uint64``, ``next_uint32`` and ``next_double`` function pointers, and the
    bit generator's address (as numba's unboxing reads them).

    The rows are read from each bit generator's ``bitgen_t`` struct; the first call in a process
    checks that read against ``bit_generator.ctypes`` (the documented interface) and, should
    they ever differ, every call reads through ``ctypes`` instead.
    """
    global _capsule_checked, _row
    out = np.zeros((len(rngs), 6), dtype=np.uint64)
    if rngs and not _capsule_checked:
        _capsule_checked = True
        if _handles_by_capsule(rngs[0]) != _handles_by_ctypes(rngs[0]):
            _row = _handles_by_ctypes
    for r, rng in enumerate(rngs):
        out[r] = _row(rng)
    return out


_row = _handles_by_capsule
"""How :func:`generator_handles` reads a row (the ctypes path if the capsule's disagreed)."""


@intrinsic
def _generator_at(typingctx, handles, r):
    """Numba's ``Generator`` value of row r of :func:`generator_handles` (no parent object, no
    reference count: the Python generator owns the state)."""

    def codegen(context, builder, sig, args):
        arr_type = sig.args[0]
        arr = context.make_array(arr_type)(context, builder, args[0])

        def field(k):
            index = [args[1], context.get_constant(types.intp, k)]
            ptr = cgutils.get_item_pointer(context, builder, arr_type, arr, index)
            return builder.load(ptr)

        bit = cgutils.create_struct_proxy(_BIT_GENERATOR)(context, builder)
        bit.state_address = field(0)
        bit.state = field(1)
        bit.fnptr_next_uint64 = field(2)
        bit.fnptr_next_uint32 = field(3)
        bit.fnptr_next_double = field(4)
        bit.bit_generator = field(5)
        gen = cgutils.create_struct_proxy(_GENERATOR)(context, builder)
        gen.bit_generator = bit._getvalue()
        return gen._getvalue()

    return _GENERATOR(handles, types.intp), codegen


def stream(handles, rngs, r):
    """Replicate r's generator inside a kernel: from ``handles`` (JIT; ``rngs`` is None) or
    ``rngs[r]`` (without JIT)."""
    return rngs[r]


@overload(stream)
def _stream_jit(handles, rngs, r):
    def impl(handles, rngs, r):
        return _generator_at(handles, r)

    return impl
