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
