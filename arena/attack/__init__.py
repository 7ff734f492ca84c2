"""Exact worst-case regret of experts players on small games (issue 33).

:func:`exact_worst_case` answers "what is this player's actual worst-case regret, and which loss
sequence attains it?" by a dynamic program over the player's distinct states, every ``p_t``
computed by the player's own code; :func:`brute_force` enumerates every sequence (the check).
The supported players and what makes their state finite are in :mod:`arena.attack.adapters`;
``docs/attack.md`` gives the mathematics and the measured limits.
"""

from arena.attack.adapters import ADAPTERS, Adapter
from arena.attack.exact import WorstCase, brute_force, exact_worst_case, loss_grid

__all__ = ["ADAPTERS", "Adapter", "WorstCase", "brute_force", "exact_worst_case", "loss_grid"]
