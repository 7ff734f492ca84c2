"""The experts protocol: prediction with expert advice (full information, sleeping experts).

:mod:`arena.experts.components` holds its component bases (``ExpertsPlayer``,
``SingleGameExpertsPlayer``, ``ObliviousAdversary``, ``AdaptiveAdversary``),
:mod:`arena.experts.game` the protocol the driver plays, :mod:`arena.experts.reference` its literal
per-round loop, :mod:`arena.experts.checks` its conformance checks and
:mod:`arena.experts.testing` the partners the suite plays components against.
"""
