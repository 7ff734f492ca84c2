"""The exact worst-case regret of an experts player on a small game, by dynamic programming.

For a deterministic player (``p_t`` a function of the past losses), a horizon T, N experts and a
finite set ``V ⊂ [0, 1]`` of loss values, :func:`exact_worst_case` computes

    ``max over l_1 … l_T ∈ V^N of  Σ_t p_t·l_t − min_i L_{T,i}``

and a sequence attaining it, where every ``p_t`` is the player's own ``predict`` (see
``docs/attack.md`` for the mathematics and the measured limits).

The search is a forward dynamic program (Viterbi) over the distinct states of the player. A
state at round t is the canonical cumulative loss vector ``x = L_t − min_i L_{t,i}`` (integers in
units of the grid's step) together with the player's declared extra state
(:mod:`arena.attack.adapters`); all states of one round live in **one batched player**, one
replicate per state, so the player's own vectorized code computes every ``p_t`` of the round at
once. Writing ``G`` for the regret accumulated so far, ``Σ_{s≤t} p_s·l_s − min_i L_{t,i}``, a move
``l`` from state ``x`` gains ``p·l − min_i (x + l)_i`` and leads to ``x + l − min_i (x + l)_i``;
since the future of a state does not depend on how it was reached, only the largest ``G`` of
each state is kept (with a back pointer), and the worst-case regret after t rounds is the largest
``G`` of round t. Sound pruning: from any state the all-zero move gains 0, so the largest ``G`` of
a round is a lower bound on the optimum, and a state whose ``G`` plus ``(T − t)·(max V − min V)``
(the most a round can add) falls below it is dropped; this never drops a round's maximum.
``reduce=True`` also merges shifted moves and states equal up to a permutation of the experts
(exact up to rounding).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import product
from typing import Any

import numpy as np
import pandas as pd

from arena import registry
from arena.attack.adapters import (
    adapter_for,
    fork,
    permute,
    registry_name,
    state_key_of,
    symmetric_of,
)
from arena.errors import ConfigError
from arena.spec import GameSpec

PRUNE_SLACK = 1e-9
"""A state is pruned only if its best completion falls short of the lower bound by more than this
(rounding in ``G`` must never prune a state that ties the optimum)."""

MAX_GRID_DENOMINATOR = 1000
"""The grid's values must be multiples of ``1/q`` for some integer ``q`` up to this."""


@dataclass
class WorstCase:
    """The exact worst case of one player on one game, and how it was found.

    Attributes
    ----------
    player : str
        The player's label (registry name and parameters).
    n_actions, horizon : int
        N and T of the game (the player is reset for horizon T).
    loss_values : tuple of float
        The loss values each expert may take each round.
    value : float
        The largest regret ``Σ_t p_t·l_t − min_i L_{t,i}`` after ``rounds`` rounds over all
        sequences (the worst case at T when ``complete``).
    losses : numpy.ndarray
        A sequence attaining ``value``, shape (rounds, N).
    regret : numpy.ndarray
        The regret after each round of ``losses``, replayed through a fresh copy of the player
        (its last entry equals ``value`` to rounding).
    bound : float or None
        The player's declared ``bound:regret`` after ``rounds`` rounds (None if it declares none).
    ratio : float or None
        ``value / bound``.
    complete : bool
        Whether the search reached T (else it stopped at a limit, see ``stopped``).
    rounds : int
        The rounds searched (T when complete).
    stopped : str or None
        Why the search stopped early (state or time limit), None when complete.
    seconds : float
        Wall-clock time of the search (the replay excluded).
    states : int
        Distinct states kept over all rounds.
    max_frontier : int
        The most states of one round.
    pruned : int
        States dropped by the bound over all rounds.
    engine : str
        ``"shift-invariant"`` (states are ``(t, L − min L)``), ``"path-state"`` (the player's
        declared state, deduplicated exactly) or ``"clones"`` (deep copies of an undeclared player).
    played : str
        What computed ``p_t`` (the player itself, or hedge for ftpl's expectation).
    limits : dict
        The limits the search ran under (``max_states``, ``time_limit``).
    key_check : float or None
        With ``verify=True``: the largest difference between ``p`` of two merged replicates.
    table : pandas.DataFrame
        One row per round t: ``t``, ``value`` (worst-case regret after t rounds), ``path_regret``
        (the regret of ``losses`` after t rounds), ``bound``, ``ratio``, ``states``, ``pruned``,
        ``seconds`` (cumulative).
    """

    player: str
    n_actions: int
    horizon: int
    loss_values: tuple[float, ...]
    value: float
    losses: np.ndarray
    regret: np.ndarray
    bound: float | None
    ratio: float | None
    complete: bool
    rounds: int
    stopped: str | None
    seconds: float
    states: int
    max_frontier: int
    pruned: int
    engine: str
    played: str
    limits: dict[str, Any] = field(default_factory=dict)
    key_check: float | None = None
    table: pd.DataFrame = field(default_factory=pd.DataFrame)

    def to_dict(self) -> dict[str, Any]:
        """Return the result as plain JSON-able values (the table as a list of row dicts).

        Examples
        --------
        >>> d = exact_worst_case("ftl", 2, 4).to_dict()
        >>> d["value"], d["losses"][0], len(d["table"])
        (1.0, [0.0, 1.0], 4)
        """
        out = {k: v for k, v in vars(self).items() if k != "table"}
        out["losses"] = self.losses.tolist()
        out["regret"] = self.regret.tolist()
        out["loss_values"] = list(self.loss_values)
        table = self.table.astype(object).where(self.table.notna(), None)
        out["table"] = table.to_dict("records")
        return out

    def summary(self) -> str:
        """Return one line: the player, the game, the value, the bound and the limits reached."""
        ratio = "" if self.ratio is None else f", worst/bound {self.ratio:.4f}"
        status = "exact" if self.complete else f"stopped at t = {self.rounds} ({self.stopped})"
        return (
            f"{self.player}: N = {self.n_actions}, T = {self.horizon}, losses "
            f"{list(self.loss_values)}: worst-case regret {self.value:.10g}{ratio}; {status}, "
            f"{self.states} states (max {self.max_frontier}/round), {self.seconds:.2f} s"
        )


# -- the loss grid ----------------------------------------------------------------------------


def loss_grid(losses: str | Sequence[float]) -> tuple[np.ndarray, int]:
    """Return the sorted loss values and the integer q making every value a multiple of 1/q.

    Examples
    --------
    >>> values, q = loss_grid([0, 0.5, 1])
    >>> values.tolist(), q
    ([0.0, 0.5, 1.0], 2)
    """
    if isinstance(losses, str):
        if losses != "binary":
            raise ConfigError("attack", "losses", f"'binary' or a list of values, got {losses!r}")
        values: list[float] = [0.0, 1.0]
    else:
        values = sorted({float(v) for v in losses})
    if len(values) < 2 or not all(0.0 <= v <= 1.0 and math.isfinite(v) for v in values):
        raise ConfigError("attack", "losses", f"need ≥ 2 distinct values in [0, 1], got {values}")
    fractions = [Fraction(v).limit_denominator(MAX_GRID_DENOMINATOR) for v in values]
    if any(abs(float(f) - v) > 1e-12 for f, v in zip(fractions, values, strict=True)):
        raise ConfigError(
            "attack", "losses", f"values must be multiples of 1/q, q ≤ {MAX_GRID_DENOMINATOR}"
        )
    q = math.lcm(*(f.denominator for f in fractions))
    return np.asarray(values), q


# -- the batched states -----------------------------------------------------------------------


class _Batch:
    """One batched player whose replicates are the search states of a round."""

    engine = "path-state"

    def __init__(self, player, fields: tuple[str, ...], key) -> None:
        self.player, self.fields, self.key_fn = player, fields, key

    def predict(self) -> np.ndarray:
        return np.asarray(self.player.predict(), dtype=np.float64)

    def fork(self, rows: np.ndarray) -> None:
        fork(self.player, self.fields, rows)

    def update(self, losses: np.ndarray) -> None:
        self.player.update(losses)

    def permute(self, perm: np.ndarray) -> None:
        permute(self.player, self.fields, perm)

    def key(self) -> np.ndarray | None:
        return None if self.key_fn is None else self.key_fn(self.player)


class _Clones:
    """The fallback for an undeclared player: one deep copy (R = 1) per state.

    Two copies are one state when every numeric attribute (arrays and numbers) is bitwise equal:
    exact but slow, for small games only.
    """

    engine = "clones"

    def __init__(self, player) -> None:
        self.copies = [player]

    def predict(self) -> np.ndarray:
        return np.concatenate([np.asarray(c.predict(), dtype=np.float64) for c in self.copies])

    def fork(self, rows: np.ndarray) -> None:
        src = self.copies
        self.copies = [copy.deepcopy(src[r]) for r in rows]

    def update(self, losses: np.ndarray) -> None:
        for c, row in zip(self.copies, losses, strict=True):
            c.update(row[None, :])

    def key(self) -> np.ndarray:
        return np.array([_state_bytes(c) for c in self.copies], dtype=object)


def _state_bytes(player) -> bytes:
    parts = []
    for name, value in sorted(vars(player).items()):
        if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
            # + 0 maps −0.0 to 0.0 (equal numbers, equal bytes)
            data = (value + 0.0).tobytes() if value.dtype.kind == "f" else value.tobytes()
            parts.append(name.encode() + b"=" + data)
        elif isinstance(value, bool | int | float | np.number):
            parts.append(f"{name}={value!r}".encode())
    return b"\x00".join(parts)


def _row_keys(*columns: np.ndarray) -> np.ndarray:
    """Return one opaque key per row of the horizontally stacked float columns."""
    # + 0.0 maps −0.0 to 0.0: equal numbers must give equal bytes
    block = np.ascontiguousarray(np.hstack([c.astype(np.float64) for c in columns]) + 0.0)
    return block.view(np.dtype((np.void, block.shape[1] * 8))).ravel()


def _lattice_keys(xc: np.ndarray, base: int) -> np.ndarray:
    """Return one int64 per row of the canonical losses ``xc`` (entries in ``[0, base)``), or
    the opaque row keys when ``base^N`` does not fit in 63 bits."""
    n_actions = xc.shape[1]
    if n_actions * math.log2(base) >= 62:
        return _row_keys(xc)
    key = np.zeros(len(xc), dtype=np.int64)
    for i in range(n_actions):
        key = key * base + xc[:, i]
    return key


def _canonical_order(xc: np.ndarray, extra: np.ndarray | None) -> np.ndarray:
    """Return, per row, the permutation sorting the experts by ``(x_i, extra blocks at i)``.

    ``extra`` holds k blocks of N columns (one per declared per-expert quantity); ties between
    experts equal in every column are broken by position (stable), which leaves the state equal.
    """
    n = xc.shape[1]
    blocks = (
        [] if extra is None else [extra[:, b * n : (b + 1) * n] for b in range(extra.shape[1] // n)]
    )
    # np.lexsort sorts by its last key first: x, then the blocks in order
    return np.lexsort([*blocks[::-1], xc], axis=1)


def _permute_blocks(extra: np.ndarray, perm: np.ndarray) -> np.ndarray:
    n = perm.shape[1]
    return np.hstack(
        [
            np.take_along_axis(extra[:, b * n : (b + 1) * n], perm, axis=1)
            for b in range(extra.shape[1] // n)
        ]
    )


def _dedupe(keys: np.ndarray, gains: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(reps, group)``: one index per distinct key (the one of largest gain) and the
    group of every index (its representative's position in ``reps``)."""
    if keys.dtype == np.int64:
        order = np.lexsort((-gains, keys))  # by key, the largest gain first within a key
        sorted_keys = keys[order]
        new = np.empty(len(order), dtype=bool)
        new[:1] = True
        np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=new[1:])
        group = np.empty(len(order), dtype=np.int64)
        group[order] = np.cumsum(new) - 1
        return order[new], group
    order = np.argsort(-gains, kind="stable")
    # np.unique with return_index sorts stably: the first of each key in ``order`` has the
    # largest gain
    _, first, inverse = np.unique(keys[order], return_index=True, return_inverse=True)
    group = np.empty_like(inverse)
    group[order] = inverse.ravel()
    return order[first], group


# -- the search -------------------------------------------------------------------------------


def _describe(player, name: str | None) -> str:
    """Return ``name(param=value, …)`` of a player (its hyperparameters as given)."""
    params = ", ".join(f"{k}={v!r}" for k, v in player.get_params().items())
    return f"{name or type(player).__name__}({params})"


def _resolve(player: Any, params: Mapping[str, Any] | None):
    if isinstance(player, str):
        return registry.make("player", player, **dict(params or {}))
    if params:
        return player.clone(**dict(params))
    return player.clone()


def exact_worst_case(
    player: Any,
    n_actions: int,
    horizon: int,
    losses: str | Sequence[float] = "binary",
    *,
    params: Mapping[str, Any] | None = None,
    max_states: int = 5_000_000,
    time_limit: float | None = None,
    prune: bool = True,
    verify: bool = False,
    allow_clones: bool = True,
    reduce: bool = False,
) -> WorstCase:
    """Return the exact worst-case regret of ``player`` over all loss sequences, and a worst one.

    Parameters
    ----------
    player : str or ExpertsPlayer
        A registry name (with ``params``) or an instance (cloned, never mutated).
    n_actions : int
        N, the number of experts.
    horizon : int
        T; the player is reset for this horizon (a tuned player is tuned for it).
    losses : "binary" or sequence of float
        Each expert's loss each round ranges over ``{0, 1}`` or over these values in [0, 1]
        (e.g. ``[0, 0.5, 1]``); the search covers all ``|V|^{N T}`` sequences.
    params : mapping, optional
        Hyperparameters of the player.
    max_states : int
        Stop when a round has more distinct states than this (the result is then the exact
        worst case after the rounds searched, ``complete=False``).
    time_limit : float, optional
        Stop after this many seconds (same).
    prune : bool
        Drop states that cannot beat the best regret so far (sound; see the module notes).
    verify : bool
        Also check that merged replicates have equal next ``p`` (the sufficiency of the declared
        state) and report the largest difference as ``key_check``; costs one more ``predict``
        on every child state.
    allow_clones : bool
        Search an undeclared player by deep copies (exact but slow); else refuse it.
    reduce : bool
        Use two symmetries of the declared players, exact in exact arithmetic and equal to the
        full search up to rounding (≤ 1e-12 in the tests): a move ``l`` and ``l + c·1`` are one
        move (only moves with ``min_i l_i = min V`` are tried), and, for players symmetric in
        the experts, states equal up to a permutation of the experts are one state. Up to
        ``N!`` times fewer states and ``|V|^N / (|V|^N − (|V| − 1)^N)`` times fewer moves.

    Returns
    -------
    WorstCase

    Examples
    --------
    >>> res = exact_worst_case("ftl", 2, 10, params={"tie_break": "lowest"})
    >>> res.value, res.losses.shape  # FTL's leader loses every round: T/2
    (5.0, (10, 2))
    """
    horizon, n_actions = int(horizon), int(n_actions)
    if horizon < 1 or n_actions < 1:
        raise ConfigError("attack", "horizon", "need T ≥ 1 and N ≥ 1")
    values, q = loss_grid(losses)
    binary = values.tolist() == [0.0, 1.0]
    original = _resolve(player, params)
    name = registry_name(original)
    label = _describe(original, name)
    adapter = adapter_for(original)
    if adapter is not None and adapter.refuse is not None:
        reason = adapter.refuse(original, n_actions, binary)
        if reason:
            raise ConfigError(label, "attack", reason)
    played = original
    if name == "ftpl":
        played = registry.make("player", "hedge", eta=original.eta)
        adapter = adapter_for(played)
    if adapter is None and not allow_clones:
        raise ConfigError(label, "attack", "no declared state (arena.attack.adapters.ADAPTERS)")

    spec = GameSpec("experts", n_actions, horizon, (0.0, 1.0), n_replicates=1)
    live = played.clone()
    live.reset(spec, [np.random.default_rng(0)])
    if adapter is not None:
        key_fn = state_key_of(live)
        batch: _Batch | _Clones = _Batch(live, adapter.fields, key_fn)
        engine = "shift-invariant" if key_fn is None else "path-state"
    else:
        batch, key_fn, engine = _Clones(live), None, "clones"
        if reduce:
            raise ConfigError(label, "reduce", "needs a declared state (arena.attack.adapters)")
    shift_only = engine == "shift-invariant"
    sym = reduce and symmetric_of(live)

    idx_all = np.array(list(product(range(len(values)), repeat=n_actions)), dtype=np.int64)
    moves_all = values[idx_all]  # (K, N) every loss vector, in product order
    radix = len(values) ** np.arange(n_actions - 1, -1, -1)  # value indices → move index
    # reduce: l and l + c·1 are one move for every declared player; keep those with min l = min V
    idx = idx_all[idx_all.min(axis=1) == 0] if reduce else idx_all
    moves_f = values[idx]
    moves_i = np.rint(moves_f * q).astype(np.int64)  # the same in units of 1/q
    n_moves = len(idx)
    step_max = float(values[-1] - values[0])  # the most one round adds to the regret
    base = q * horizon + 1  # x − min x lies in [0, qT]

    x = np.zeros((1, n_actions), dtype=np.int64)
    g = np.zeros(1)
    frame = np.arange(n_actions)[None, :]  # frame[s, j]: the expert at position j of state s
    parents: list[np.ndarray] = []
    moves: list[np.ndarray] = []
    rows: list[dict[str, Any]] = []
    total_states = max_frontier = total_pruned = 0
    key_check = 0.0 if verify else None
    stopped = None
    start = time.perf_counter()
    for t in range(horizon):
        p = batch.predict()
        n_states = len(g)
        y = x[:, None, :] + moves_i[None, :, :]  # (S, K, N)
        low = y.min(axis=2)  # (S, K) the growth of min L, in units
        gain = p @ moves_f.T - low / q
        xc = (y - low[:, :, None]).reshape(-1, n_actions)
        gc = (g[:, None] + gain).ravel()
        par = np.repeat(np.arange(n_states), n_moves)
        mv = np.tile(np.arange(n_moves), n_states)
        best = float(gc.max())
        pruned = 0
        if prune:
            keep = gc + (horizon - t - 1) * step_max >= best - PRUNE_SLACK
            pruned = int(keep.size - keep.sum())
            if pruned:
                xc, gc, par, mv = xc[keep], gc[keep], par[keep], mv[keep]
        perm = None
        if shift_only and not verify:
            if sym:
                perm = np.argsort(xc, axis=1, kind="stable")
                xc = np.take_along_axis(xc, perm, axis=1)
            reps, _ = _dedupe(_lattice_keys(xc, base), gc)
            batch.fork(par[reps])
            batch.update(moves_f[mv[reps]])
            if sym:
                batch.permute(perm[reps])
        else:
            batch.fork(par)
            batch.update(moves_f[mv])
            extra = batch.key()
            if sym:
                perm = _canonical_order(xc, extra)
                xc = np.take_along_axis(xc, perm, axis=1)
                if extra is not None:
                    extra = _permute_blocks(extra, perm)
            if engine == "clones":
                keys = np.array(
                    [xr.tobytes() + e for xr, e in zip(xc, extra, strict=True)], dtype=object
                )
            else:
                keys = _lattice_keys(xc, base) if extra is None else _row_keys(xc, extra)
            reps, group = _dedupe(keys, gc)
            if verify and t + 1 < horizon:
                p_next = batch.predict()
                if perm is not None:
                    p_next = np.take_along_axis(p_next, perm, axis=1)
                diff = np.abs(p_next - p_next[reps][group]).max()
                key_check = max(key_check, float(diff))
            batch.fork(reps)
            if sym:
                batch.permute(perm[reps])
        # the move in the experts' own labels: position j of the parent is expert frame[j]
        chosen = idx[mv[reps]]
        parent_frame = frame[par[reps]]
        if sym:
            own = np.empty_like(chosen)
            np.put_along_axis(own, parent_frame, chosen, axis=1)
            frame = np.take_along_axis(parent_frame, perm[reps], axis=1)
        else:
            own = chosen
            frame = parent_frame
        x, g = xc[reps], gc[reps]
        parents.append(par[reps].astype(np.int64))
        moves.append((own @ radix).astype(np.int16 if len(idx_all) < 2**15 else np.int64))
        total_states += len(reps)
        total_pruned += pruned
        max_frontier = max(max_frontier, len(reps))
        elapsed = time.perf_counter() - start
        rows.append(
            {"t": t + 1, "value": best, "states": len(reps), "pruned": pruned, "seconds": elapsed}
        )
        if t + 1 < horizon:
            if len(reps) > max_states:
                stopped = f"{len(reps)} states > max_states = {max_states}"
            elif time_limit is not None and elapsed > time_limit:
                stopped = f"{elapsed:.1f} s > time_limit = {time_limit:g} s"
            if stopped:
                break
    seconds = time.perf_counter() - start
    rounds = len(parents)

    # the attaining sequence: back pointers from the best final state
    seq = np.empty((rounds, n_actions))
    s = int(np.argmax(g))
    for t in range(rounds - 1, -1, -1):
        seq[t] = moves_all[moves[t][s]]
        s = int(parents[t][s])
    curve, bounds = _replay(played, spec, seq)
    value = float(g.max())
    table = pd.DataFrame(rows)
    table["path_regret"] = curve
    table["bound"] = bounds
    table["ratio"] = table["value"] / table["bound"]
    table = table[["t", "value", "path_regret", "bound", "ratio", "states", "pruned", "seconds"]]
    bound = None if math.isnan(bounds[-1]) else float(bounds[-1])
    return WorstCase(
        player=label,
        n_actions=n_actions,
        horizon=horizon,
        loss_values=tuple(float(v) for v in values),
        value=value,
        losses=seq,
        regret=curve,
        bound=bound,
        ratio=None if bound is None or bound == 0 else value / bound,
        complete=stopped is None,
        rounds=rounds,
        stopped=stopped,
        seconds=seconds,
        states=total_states,
        max_frontier=max_frontier,
        pruned=total_pruned,
        engine=engine,
        played=_describe(played, registry_name(played)),
        limits={"max_states": max_states, "time_limit": time_limit},
        key_check=key_check,
        table=table,
    )


def _replay(player, spec: GameSpec, seq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Play ``seq`` through a fresh copy of ``player`` (R = 1); return the regret after each
    round and the declared ``bound:regret`` after each round (NaN where none is declared)."""
    fresh = player.clone()
    fresh.reset(spec, [np.random.default_rng(0)])
    learner = 0.0
    cum = np.zeros(spec.n_actions)
    curve = np.empty(len(seq))
    bounds = np.full(len(seq), np.nan)
    for t, loss in enumerate(seq):
        p = np.asarray(fresh.predict(), dtype=np.float64)[0]
        learner += float(p @ loss)
        cum += loss
        fresh.update(loss[None, :])
        curve[t] = learner - cum.min()
        declared = fresh.bounds(t + 1) if hasattr(fresh, "bounds") else {}
        for (metric, _), b in declared.items():
            if metric == "regret":
                bounds[t] = float(np.ravel(b)[0])
    return curve, bounds


def brute_force(
    player: Any,
    n_actions: int,
    horizon: int,
    losses: str | Sequence[float] = "binary",
    *,
    params: Mapping[str, Any] | None = None,
) -> tuple[float, np.ndarray]:
    """Return the worst-case regret by enumerating all ``|V|^{N T}`` sequences, and a worst one.

    Every sequence is one replicate of one batched player (its own ``predict``/``update``), so
    this shares nothing with the search but the player: the check of item 4 of issue 33.
    """
    values, _ = loss_grid(losses)
    original = _resolve(player, params)
    if registry_name(original) == "ftpl":
        original = registry.make("player", "hedge", eta=original.eta)
    idx = np.array(list(product(range(len(values)), repeat=n_actions)), dtype=np.int64)
    moves_f = values[idx]
    n_seq = len(moves_f) ** horizon
    choice = np.array(list(product(range(len(moves_f)), repeat=horizon)), dtype=np.int64)
    spec = GameSpec("experts", n_actions, horizon, (0.0, 1.0), n_replicates=n_seq)
    original.reset(spec, [np.random.default_rng(r) for r in range(n_seq)])
    learner = np.zeros(n_seq)
    cum = np.zeros((n_seq, n_actions))
    for t in range(horizon):
        loss = moves_f[choice[:, t]]
        p = np.asarray(original.predict(), dtype=np.float64)
        learner += np.einsum("rn,rn->r", p, loss)
        cum += loss
        original.update(loss)
    regret = learner - cum.min(axis=1)
    best = int(np.argmax(regret))
    return float(regret[best]), moves_f[choice[best]]
