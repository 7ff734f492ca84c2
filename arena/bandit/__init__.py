"""The bandit protocol: the player commits ``p_t`` and observes only ``l_{t,I_t}``.

:mod:`arena.bandit.components` holds its component base (``BanditPlayer``; the adversaries are the
experts protocol's, unchanged), :mod:`arena.bandit.game` the protocol the driver plays,
:mod:`arena.bandit.reference` its literal per-round loop, :mod:`arena.bandit.checks` its
conformance checks and :mod:`arena.bandit.testing` the partners the suite plays players against.
"""
