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

Where every generator is NumPy's ``PCG64`` (:func:`pcg64_streams`), a kernel may instead step
the generator itself: :func:`pcg64_load` reads its 128-bit state into registers,
:func:`pcg64_next` steps it and returns ``next_double``'s number, bit for bit, and
:func:`pcg64_save` writes the state back (:func:`pcg64_fill` steps four rows side by side). No
call through a function pointer per draw: 1.4 ns a uniform against 2.0.

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
from llvmlite import ir
from numba import njit, types
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
    if rngs and not _capsule_checked:
        _capsule_checked = True
        if _handles_by_capsule(rngs[0]) != _handles_by_ctypes(rngs[0]):
            _row = _handles_by_ctypes
    # one conversion of every row (a numpy row assignment each cost a third of a row's 1.2 µs)
    return np.array([_row(rng) for rng in rngs], dtype=np.uint64).reshape(len(rngs), 6)


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


# ----------------------------------------------------------------------------------------------
# PCG64 stepped inside the kernel

PCG64_MULTIPLIER = (2549297995355413924 << 64) + 4865540595714422341
"""PCG's default 128-bit LCG multiplier, NumPy's ``PCG64``'s (``PCG_DEFAULT_MULTIPLIER_128``)."""


def _word(k: int) -> ir.Constant:
    """The index of the k-th 64-bit word of a ``pcg64_random_t``."""
    return ir.Constant(ir.IntType(32), k)


def _pcg64_words(context, builder, arr_type, arr_value, r):
    """Code for a pointer to row r's ``pcg64_random_t`` as 64-bit words: row r's ``bitgen_t``
    state (:func:`generator_handles`, column 0) points at a ``pcg64_state``, whose first field
    points at it."""
    i64 = ir.IntType(64)
    arr = context.make_array(arr_type)(context, builder, arr_value)
    index = [r, context.get_constant(types.intp, 0)]
    state_address = builder.load(cgutils.get_item_pointer(context, builder, arr_type, arr, index))
    inner = builder.load(builder.inttoptr(state_address, i64.as_pointer()), align=8)
    return builder.inttoptr(inner, i64.as_pointer())


@intrinsic
def _pcg64_load(typingctx, handles, r):
    """Row r's PCG64 state and increment as ``(state_lo, state_hi, inc_lo, inc_hi)``.

    NumPy's ``bitgen_t.state`` points at a ``pcg64_state`` whose first field points at the
    ``pcg64_random_t``: the 128-bit state, then the 128-bit increment, each a native
    ``__uint128_t`` (low word first on a little-endian machine). :func:`pcg64_streams` checks that
    layout before any kernel relies on it.
    """
    words = types.UniTuple(types.uint64, 4)

    def codegen(context, builder, sig, args):
        base = _pcg64_words(context, builder, sig.args[0], args[0], args[1])
        values = [builder.load(builder.gep(base, [_word(k)]), align=8) for k in range(4)]
        return context.make_tuple(builder, words, values)

    return words(handles, types.intp), codegen


@intrinsic
def _pcg64_save(typingctx, handles, r, words):
    """Write a state of :func:`pcg64_next` back into row r's generator (its increment stays)."""

    def codegen(context, builder, sig, args):
        base = _pcg64_words(context, builder, sig.args[0], args[0], args[1])
        for k in range(2):
            builder.store(builder.extract_value(args[2], k), builder.gep(base, [_word(k)]), align=8)
        return context.get_dummy_value()

    return types.void(handles, types.intp, words), codegen


@intrinsic
def _pcg64_step(typingctx, words):
    """``(next words, next double)``: one step of NumPy's ``PCG64`` on a state in registers.

    The LCG ``s ← s·M + inc`` (mod 2¹²⁸), the XSL-RR output of the new state
    ``rotr64(hi ⊕ lo, s >> 122)``, and ``next_double``'s ``(x >> 11) · 2⁻⁵³``: NumPy's
    ``pcg64_next_double``, bit for bit, with the state kept in registers instead of reloaded
    from the generator and stored back through a function pointer at every draw.
    """
    out = types.Tuple([types.UniTuple(types.uint64, 4), types.float64])

    def codegen(context, builder, sig, args):
        i64, i128 = ir.IntType(64), ir.IntType(128)
        lo, hi, inc_lo, inc_hi = (builder.extract_value(args[0], k) for k in range(4))

        def wide(low, high):
            return builder.or_(
                builder.zext(low, i128),
                builder.shl(builder.zext(high, i128), ir.Constant(i128, 64)),
            )

        state = builder.add(
            builder.mul(wide(lo, hi), ir.Constant(i128, PCG64_MULTIPLIER)), wide(inc_lo, inc_hi)
        )
        new_lo = builder.trunc(state, i64)
        new_hi = builder.trunc(builder.lshr(state, ir.Constant(i128, 64)), i64)
        mixed = builder.xor(new_hi, new_lo)
        rot = builder.trunc(builder.lshr(state, ir.Constant(i128, 122)), i64)
        back = builder.and_(builder.neg(rot), ir.Constant(i64, 63))
        rotated = builder.or_(builder.lshr(mixed, rot), builder.shl(mixed, back))
        top = builder.uitofp(builder.lshr(rotated, ir.Constant(i64, 11)), ir.DoubleType())
        u = builder.fmul(top, ir.Constant(ir.DoubleType(), 1.0 / 9007199254740992.0))
        words = context.make_tuple(
            builder, sig.return_type.types[0], [new_lo, new_hi, inc_lo, inc_hi]
        )
        return context.make_tuple(builder, sig.return_type, [words, u])

    return out(words), codegen


_MASK64 = (1 << 64) - 1


def _pcg64_words_at(handles, r):
    """The four 64-bit words of row r's ``pcg64_random_t`` (state, then increment; low first)."""
    inner = ctypes.c_uint64.from_address(int(handles[r, 0])).value
    return (ctypes.c_uint64 * 4).from_address(inner)


def pcg64_load(handles, r):
    """Return row r's PCG64 state and increment, ``(state_lo, state_hi, inc_lo, inc_hi)``, to
    step with :func:`pcg64_next` and store back with :func:`pcg64_save`.

    Compiled kernels read them in registers (:func:`_pcg64_load`); this Python version reads the
    same words through ``ctypes`` (kernels run as Python, tests).
    """
    return tuple(int(w) for w in _pcg64_words_at(handles, r))


def pcg64_save(handles, r, words):
    """Store a state stepped by :func:`pcg64_next` back into row r's generator (its increment
    stays), so that the generator continues from it."""
    target = _pcg64_words_at(handles, r)
    target[0], target[1] = int(words[0]), int(words[1])


def pcg64_next(words):
    """Return ``(next words, next uniform)``: one step of NumPy's ``PCG64`` and its
    ``next_double``, bit for bit (compiled: :func:`_pcg64_step`; here in Python integers).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(7)
    >>> words = pcg64_load(generator_handles([rng]), 0)
    >>> words, u = pcg64_next(words)
    >>> u == np.random.default_rng(7).random()
    True
    """
    lo, hi, inc_lo, inc_hi = (int(w) for w in words)
    state = ((hi << 64 | lo) * PCG64_MULTIPLIER + (inc_hi << 64 | inc_lo)) % (1 << 128)
    new_lo, new_hi = state & _MASK64, state >> 64
    mixed, rot = new_hi ^ new_lo, state >> 122
    rotated = ((mixed >> rot) | (mixed << (-rot & 63))) & _MASK64
    return (new_lo, new_hi, inc_lo, inc_hi), (rotated >> 11) * (1.0 / 9007199254740992.0)


@overload(pcg64_load)
def _pcg64_load_jit(handles, r):
    return lambda handles, r: _pcg64_load(handles, r)


@overload(pcg64_save)
def _pcg64_save_jit(handles, r, words):
    return lambda handles, r, words: _pcg64_save(handles, r, words)


@overload(pcg64_next)
def _pcg64_next_jit(words):
    return lambda words: _pcg64_step(words)


@njit(cache=True, nogil=True)
def pcg64_fill(handles, out):
    """Fill row r of ``out`` (R, n) with the next n uniforms of row r's PCG64 by
    :func:`pcg64_next`, as ``Generator.random`` would draw them, advancing each generator.

    Four rows' generators are stepped side by side: one generator's steps form a chain (each
    state is the last one times the multiplier), four independent chains keep the multiplier
    busy. Only for generators :func:`pcg64_streams` accepts.
    """
    n_rep, n = out.shape
    r = 0
    while r + 4 <= n_rep:
        a, b = pcg64_load(handles, r), pcg64_load(handles, r + 1)
        c, d = pcg64_load(handles, r + 2), pcg64_load(handles, r + 3)
        for j in range(n):
            a, out[r, j] = pcg64_next(a)
            b, out[r + 1, j] = pcg64_next(b)
            c, out[r + 2, j] = pcg64_next(c)
            d, out[r + 3, j] = pcg64_next(d)
        pcg64_save(handles, r, a)
        pcg64_save(handles, r + 1, b)
        pcg64_save(handles, r + 2, c)
        pcg64_save(handles, r + 3, d)
        r += 4
    while r < n_rep:
        words = pcg64_load(handles, r)
        for j in range(n):
            words, out[r, j] = pcg64_next(words)
        pcg64_save(handles, r, words)
        r += 1


_PCG64_CHECKED: list[bool] = []  # [whether this process's PCG64 layout passed the check]


def pcg64_streams(rngs: Sequence[np.random.Generator]) -> bool:
    """Whether kernels may step these generators with :func:`pcg64_next` (else their own
    ``random()``): JIT on, every one a NumPy ``PCG64`` of its own (no two rows on one), and this
    process's ``PCG64`` laid out as :func:`pcg64_load` reads it.

    The layout is checked once per process: two generators seeded alike, one drawn by NumPy and
    one by :func:`pcg64_next` (twice 5 numbers, the state saved between), must give the same
    numbers and then continue alike. Should it ever fail (a NumPy without native 128-bit
    integers lays the state out as two words, high first), every kernel draws through the
    generator's own function pointers, as before.
    """
    if jit_disabled() or not all(type(g.bit_generator) is np.random.PCG64 for g in rngs):
        return False
    if len({id(g.bit_generator) for g in rngs}) < len(rngs):
        # rows sharing a generator draw one after another through its function pointers; four
        # rows stepped side by side would each start from the same state
        return False
    if not _PCG64_CHECKED:
        ours, theirs = np.random.default_rng(20261130), np.random.default_rng(20261130)
        handles = generator_handles([ours])
        first, second = np.empty((1, 5)), np.empty((1, 5))
        pcg64_fill(handles, first)
        pcg64_fill(handles, second)
        got = np.concatenate([first, second], axis=1)
        same = np.array_equal(got[0], theirs.random(10)) and ours.random() == theirs.random()
        _PCG64_CHECKED.append(bool(same))
    return _PCG64_CHECKED[0]
