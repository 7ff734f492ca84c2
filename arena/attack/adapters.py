"""Declared sufficient states of the players the exact search supports, keyed by registry name.

The search (:mod:`arena.attack.exact`) never computes a distribution itself: every ``p_t`` comes
from the player's own ``predict`` on a batched player with one replicate per search state. What
it needs from each player is declared here, in one :class:`Adapter` per registry name:

* ``fields``: the player's per-replicate state arrays (leading axis R), which the search copies
  row by row to **fork** a replicate into its children (one per loss vector). Everything else in
  the player is shared by the batch and advances with ``update`` (the round counter);
* ``state_key``: what identifies a state beyond the round t and the canonical cumulative losses
  ``x = L − min_i L_i``. ``None`` declares that ``p_t`` is a function of ``(t, x)`` alone (the
  player is shift invariant: it depends on ``L`` only through ``L − min L``), so two replicates
  with equal ``x`` are one state; a function returns the extra key columns, read after the
  update, for players whose state is path dependent (the NormalHedge family's regrets depend on
  their own past ``p``).

Shift invariance is a claim about the player's code, so ``tests/arena/attack/`` checks it for
every adapter whose key is ``None``: ``p`` after a sequence equals ``p`` after the same sequence
with one ``(0, …, 0)`` round replaced by ``(1, …, 1)`` (which shifts ``L`` by one), and ``p``
agrees across different paths to the same ``(t, x)``; :func:`arena.attack.exact_worst_case` with
``verify=True`` checks the second claim on every state it merges.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from arena.registry import name_of


@dataclass(frozen=True)
class Adapter:
    """What the exact search needs to know about one player: how to fork it and key its states.

    Parameters
    ----------
    fields : tuple of str
        The attributes holding per-replicate state (arrays whose first axis is the replicate).
    state_key : callable or None
        ``state_key(player) → (R, k)`` float array identifying each replicate's state beyond
        ``(t, L − min L)``; None when ``p_t`` is a function of ``(t, L − min L)`` alone.
    why : str
        The reason this key is sufficient (shown in the docs and the result).
    refuse : callable or None
        ``refuse(player, n_actions, binary) → reason or None``: a configuration the search cannot
        treat exactly (randomized state, realized actions, …).
    """

    fields: tuple[str, ...]
    state_key: Callable[[object], np.ndarray] | None
    why: str
    refuse: Callable[[object, int, bool], str | None] | None = None


def _hedge_key(player) -> np.ndarray | None:
    # the doubling trick restarts its cumulative losses at each epoch: p depends on the epoch's
    # own cumulative losses, which differ from L after the first restart
    cum = player._cum
    return cum - cum.min(axis=1, keepdims=True)


def _concat(*names: str) -> Callable[[object], np.ndarray]:
    def key(player) -> np.ndarray:
        return np.concatenate([np.asarray(getattr(player, n), dtype=np.float64) for n in names], 1)

    return key


def _refuse_cover2(player, n_actions: int, binary: bool) -> str | None:
    if n_actions != 2 or not binary:
        return "cover2 plays two experts and binary losses only"
    return None


def _refuse_nhdt(player, n_actions: int, binary: bool) -> str | None:
    if player.state != "expected":
        return "normal_hedge_dt(state='realized') updates on its random draws"
    return None


def _refuse_ftpl(player, n_actions: int, binary: bool) -> str | None:
    if player.noise != "gumbel":
        return (
            "ftpl's expected distribution has a closed form only for Gumbel noise "
            "(then it is hedge's); exponential noise has none in the lab"
        )
    return None


ADAPTERS: dict[str, Adapter] = {
    "hedge": Adapter(
        fields=("_cum",),
        state_key=None,  # resolved per instance by state_key_of (doubling is path dependent)
        why=(
            "p_t = softmax(−η_t (L − min L)) with η_t a function of t (fixed, tuned, anytime); "
            "the doubling trick also keys on its epoch's cumulative losses"
        ),
    ),
    "ftl": Adapter(
        fields=("_cum",),
        state_key=None,
        why="p_t is uniform (or lowest-index) on argmin L, a function of L − min L",
    ),
    "cover2": Adapter(
        fields=("_states", "_ids"),
        state_key=None,
        why="p_t is a function of the gap |L_0 − L_1|, the leader and t (Cover 1965)",
        refuse=_refuse_cover2,
    ),
    "ftpl": Adapter(
        fields=("_cum",),
        state_key=None,
        why=(
            "with Gumbel noise, E[p_t] = softmax(−η L) (Gumbel-max trick): the search plays "
            "hedge at ftpl's own η"
        ),
        refuse=_refuse_ftpl,
    ),
    "normal_hedge": Adapter(
        fields=("_regret",),
        state_key=_concat("_regret"),
        why="p_t is a function of the regret vector R_{t−1} (path dependent) and t",
    ),
    "normal_hedge_dt": Adapter(
        fields=("_regret",),
        state_key=_concat("_regret"),
        why="p_t is a function of the regret vector R_{t−1} (path dependent) and t",
        refuse=_refuse_nhdt,
    ),
    "ada_normal_hedge": Adapter(
        fields=("_big_r", "_big_c", "_fallbacks"),
        state_key=_concat("_big_r", "_big_c"),
        why="p_t is a function of the regrets R and magnitudes C = Σ|r| (path dependent)",
    ),
}
"""The players the exact search supports, by registry name."""


def registry_name(player) -> str | None:
    """Return the registry name of ``player``'s class, or None for an unregistered class."""
    return name_of(type(player))


def adapter_for(player) -> Adapter | None:
    """Return the adapter of ``player`` (by its registry name), or None if none is declared."""
    name = registry_name(player)
    return ADAPTERS.get(name) if name is not None else None


def state_key_of(player) -> Callable[[object], np.ndarray] | None:
    """Return the extra state key of ``player`` (None: ``p_t`` depends on ``(t, L − min L)``)."""
    name = registry_name(player)
    if name == "hedge":
        return _hedge_key if player.eta == "doubling" else None
    adapter = adapter_for(player)
    return None if adapter is None else adapter.state_key


def symmetric_of(player) -> bool:
    """Whether ``player`` treats the experts alike (``p`` of permuted losses is ``p`` permuted).

    True for every declared player whose per-replicate state is one column per expert, except
    ``ftl(tie_break="lowest")`` and ``ada_normal_hedge`` with a non-uniform prior ``q``; cover2's
    state (gap, leader, …) is not stored per expert, so it is never permuted.
    """
    name = registry_name(player)
    if name in ("hedge", "normal_hedge", "normal_hedge_dt"):
        return True
    if name == "ftl":
        return player.tie_break == "uniform"
    if name == "ada_normal_hedge":
        return player.q is None
    return False


def permute(player, fields: tuple[str, ...], perm: np.ndarray) -> None:
    """Reorder the experts of each replicate: column j of row r becomes column ``perm[r, j]``'s
    (for the per-replicate arrays with one column per expert)."""
    for name in fields:
        value = getattr(player, name)
        if value.ndim == 2 and value.shape[1] == perm.shape[1]:
            setattr(player, name, np.take_along_axis(value, perm, axis=1))


def fork(player, fields: tuple[str, ...], rows: np.ndarray) -> None:
    """Replace each per-replicate array of ``player`` by its rows ``rows`` (a new batch)."""
    for name in fields:
        setattr(player, name, np.ascontiguousarray(getattr(player, name)[rows]))
