"""The experts protocol: prediction with expert advice (full information, sleeping experts).

:mod:`arena.experts.game` is the protocol the driver plays, :mod:`arena.experts.reference` its
literal per-round loop, and :mod:`arena.experts.checks` its conformance checks. The component
bases (:class:`~arena.protocols.ExpertsPlayer`, the adversaries) live in :mod:`arena.protocols`.
"""
