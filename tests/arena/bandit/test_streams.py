"""The replicates' generators inside a kernel (:mod:`arena.streams`): numpy's draws, bit
for bit, on the generator's own state."""

from __future__ import annotations

import numpy as np
from numba import njit

from arena.streams import generator_handles, jit_disabled, stream


@njit(cache=True)
def _draws(handles, rngs, n, out):
    for r in range(out.shape[0]):
        rng = stream(handles, rngs, r)
        for k in range(n):
            out[r, 3 * k] = rng.beta(2.0, 7.0)
            out[r, 3 * k + 1] = rng.standard_normal()
            out[r, 3 * k + 2] = rng.random()


def test_kernel_draws_are_each_generators_own():
    """Each row draws from its own generator exactly what numpy draws from it, and leaves the
    generator where numpy would: Python continues the same stream after the kernel."""
    rngs = [np.random.default_rng(s) for s in (3, 1, 4)]
    copies = [np.random.default_rng(s) for s in (3, 1, 4)]
    out = np.empty((3, 30))
    _draws(generator_handles(rngs), rngs if jit_disabled() else None, 10, out)
    for r, rng in enumerate(copies):
        want = []
        for _ in range(10):
            want += [rng.beta(2.0, 7.0), rng.standard_normal(), rng.random()]
        assert out[r].tolist() == want
        assert rngs[r].bit_generator.state == rng.bit_generator.state
        assert rngs[r].random() == rng.random()


def test_handles_are_the_ctypes_interfaces_fields():
    """The rows read from each ``bitgen_t`` are the values ``bit_generator.ctypes`` gives (what
    numba's unboxing stores), for fresh generators and ones that have drawn."""
    from arena.streams import _handles_by_capsule, _handles_by_ctypes

    rngs = [np.random.default_rng(s) for s in (0, 9)] + [np.random.Generator(np.random.MT19937(2))]
    rngs[1].random(7)
    handles = generator_handles(rngs)
    for rng, row in zip(rngs, handles, strict=True):
        assert _handles_by_capsule(rng) == _handles_by_ctypes(rng) == row.tolist()


def test_pcg64_stepped_in_the_kernel_draws_numpys_uniforms():
    """:func:`arena.streams.pcg64_fill` (four generators stepped side by side, the rest one by
    one) gives each generator's ``random()`` stream, bit for bit, and leaves each where numpy
    would, including one that had drawn before (its state mid-stream, its 32-bit buffer set)."""
    import pytest

    from arena.streams import pcg64_fill, pcg64_streams

    if jit_disabled():
        pytest.skip("PCG64 is stepped in compiled kernels only")
    for n_rep in (1, 3, 4, 5, 9):
        rngs = [np.random.default_rng(100 + s) for s in range(n_rep)]
        copies = [np.random.default_rng(100 + s) for s in range(n_rep)]
        rngs[0].integers(0, 2**31, dtype=np.uint32)  # a draw that leaves half a 64-bit word
        copies[0].integers(0, 2**31, dtype=np.uint32)
        assert pcg64_streams(rngs)
        out = np.empty((n_rep, 37))
        pcg64_fill(generator_handles(rngs), out)
        for r in range(n_rep):
            assert out[r].tolist() == copies[r].random(37).tolist()
            assert rngs[r].bit_generator.state == copies[r].bit_generator.state
            assert rngs[r].random() == copies[r].random()


def test_only_pcg64_generators_are_stepped_in_the_kernel():
    from arena.streams import pcg64_streams

    pcg = [np.random.default_rng(1), np.random.default_rng(2)]
    other = [np.random.default_rng(1), np.random.Generator(np.random.Philox(2))]
    assert pcg64_streams(pcg) != jit_disabled()
    assert not pcg64_streams(other)
    assert not pcg64_streams([np.random.Generator(np.random.PCG64DXSM(3))])


def test_rows_sharing_a_generator_draw_one_after_another():
    """Two rows on one generator are not stepped side by side (both would start from the same
    state): they draw through its function pointers, the second row continuing the first."""
    from arena.experts.game import _fill_uniforms
    from arena.streams import pcg64_streams

    shared = np.random.default_rng(8)
    rngs = [shared, shared, np.random.default_rng(2), np.random.default_rng(3)]
    assert not pcg64_streams(rngs)
    out = np.empty((4, 5))
    _fill_uniforms(generator_handles(rngs), rngs if jit_disabled() else None, out)
    both = np.random.default_rng(8).random(10)
    assert out[0].tolist() == both[:5].tolist() and out[1].tolist() == both[5:].tolist()


def test_a_bernoulli_game_is_the_same_on_either_path(monkeypatch):
    """The Bernoulli adversaries' losses (fixed means and means by round) and the action uniforms
    stepped in the kernel are those drawn through each generator's function pointers: a game's
    rows, to the bit (R = 1, 6)."""
    import arena.streams as streams
    from arena.game import run_game

    kw = dict(n_actions=7, horizon=900, metrics=["regret", "realized_regret", "loss"], seed=5)
    pairs = [("hedge", "bernoulli"), ("exp3", "bernoulli"), ("hedge", "drifting_means"),
             ("ucb1", "shifting_experts")]  # fmt: skip
    games = [(p, a, r) for p, a in pairs for r in (1, 6)]
    fast = [run_game(p, a, replicates=r, **kw).rows for p, a, r in games]
    monkeypatch.setattr(streams, "_PCG64_CHECKED", [False])  # as if the layout check failed
    slow = [run_game(p, a, replicates=r, **kw).rows for p, a, r in games]
    assert not streams.pcg64_streams([np.random.default_rng(0)])
    for a, b in zip(fast, slow, strict=True):
        assert a.equals(b)


def test_pcg64_in_python_steps_as_the_kernel():
    """The Python versions of :func:`arena.streams.pcg64_load` / ``pcg64_next`` / ``pcg64_save``
    (what a kernel calls when it runs as Python) draw numpy's numbers and leave the generator
    where numpy would, five replicates (four side by side, one alone)."""
    from arena.streams import pcg64_fill

    rngs = [np.random.default_rng(40 + s) for s in range(5)]
    copies = [np.random.default_rng(40 + s) for s in range(5)]
    out = np.empty((5, 6))
    getattr(pcg64_fill, "py_func", pcg64_fill)(generator_handles(rngs), out)  # as Python
    for r in range(5):
        assert out[r].tolist() == copies[r].random(6).tolist()
        assert rngs[r].bit_generator.state == copies[r].bit_generator.state
