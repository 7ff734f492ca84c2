"""Online convex optimization, online classification and online regression protocols.

:mod:`arena.oco.components` (player and adversary bases), :mod:`arena.oco.losses` (loss families and
the feedback the arena computes), :mod:`arena.oco.domains` (feasible sets and projections),
:mod:`arena.oco.hindsight` (best comparators in hindsight), :mod:`arena.oco.game` (the protocol
the driver plays) and :mod:`arena.oco.reference` (the literal per-round loop it must reproduce).
"""
