"""A player's worst case: exact on small experts games, searched for on large ones (issue 33).

:func:`exact_worst_case` answers "what is this player's actual worst-case regret, and which loss
sequence attains it?" by a dynamic program over the player's distinct states, every ``p_t``
computed by the player's own code; :func:`brute_force` enumerates every sequence (the check).
The supported players and what makes their state finite are in :mod:`arena.attack.adapters`;
``docs/attack.md`` gives the mathematics and the measured limits. :func:`search` looks for a bad
sequence on games too large for that, by CMA-ES over parametrized adversary families
(:mod:`arena.attack.families`), a whole population played as the replicates of one game, against
the worst of the catalog's adversaries (:func:`catalog_worst`); :func:`write_replay` writes what
it found as a file the ``replay`` adversary plays (``docs/attack-search.md``).
"""

from arena.attack.adapters import ADAPTERS, Adapter
from arena.attack.exact import WorstCase, brute_force, exact_worst_case, loss_grid
from arena.attack.search import (
    SearchResult,
    catalog_worst,
    comparison_table,
    progress_table,
    search,
    write_replay,
)

__all__ = [
    "ADAPTERS",
    "Adapter",
    "SearchResult",
    "WorstCase",
    "brute_force",
    "catalog_worst",
    "comparison_table",
    "exact_worst_case",
    "loss_grid",
    "progress_table",
    "search",
    "write_replay",
]
