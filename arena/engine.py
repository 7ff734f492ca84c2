"""The game engine: R replicates per call, streaming metrics, tidy rows.

Round protocol of the experts game (design §2, seed 000 L301): the player commits ``p_t``; the
adversary (which may read ``p_t`` if it declares ``sees_distribution``) reveals
``l_t ∈ [lo, hi]^N``;
the learner suffers the expected loss ``p_t·l_t`` and the realized loss ``l_{t,I_t}`` with
``I_t ~ p_t`` drawn by the arena from the replicate's own action stream (inverse CDF of a
pre-drawn uniform).

Rounds are processed in chunks that end on every checkpoint. Against an oblivious adversary a
chunk is one ``losses_block`` call and one ``play_block`` call (a numba kernel for fast players);
against an adaptive one it is a per-round loop, batched over replicates, that fills the same
buffers. Either way the metrics then consume the chunk in numba kernels, so memory is
O(R·N·chunk + metric state), never O(T). :mod:`arena.reference` is the plain per-round loop this
engine must reproduce to 1e-12.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numba import njit

from arena import registry
from arena.base import canonical_json
from arena.checkpoints import log_grid
from arena.errors import ArenaError, ConfigError, GameError
from arena.metrics.base import Block, Core, Metric
from arena.metrics.builtin import DEFAULT_METRICS
from arena.protocols import Adversary, ExpertsPlayer, ObliviousAdversary
from arena.sampling import sample_action, sample_actions
from arena.seeding import replicate_streams
from arena.spec import GameSpec, History

SCHEMA = [
    "run_id",
    "cell",
    "player",
    "player_params",
    "adversary",
    "adversary_params",
    "protocol",
    "n_actions",
    "horizon",
    "replicate",
    "seed",
    "t",
    "metric",
    "param",
    "value",
]
"""Column order of ``results.parquet`` (design §4, contract)."""

PROB_SUM_TOL = 1e-9
"""A player's ``p_t`` must sum to 1 within this tolerance (float64 softmax errors are ~1e-15)."""

PROB_NEG_TOL = 1e-12
"""Entries of ``p_t`` may be negative by at most this much (rounding in subtractive updates)."""

MAX_HORIZON = 2**31 - 1

DEFAULT_CHUNK_ELEMENTS = 2**18
"""Default bound on R·n·N (R·n·d in OCO games) per chunk buffer: 2 MiB of float64. Large enough
that the per-chunk Python cost is small against the kernels, small enough to stay in cache."""


# ----------------------------------------------------------------------------------------------
# kernels


@njit(cache=True)
def _core_advance(
    probs,
    losses,
    uniforms,
    cum_losses,
    learner,
    realized,
    sum_min,
    expected_out,
    realized_out,
    actions,
):
    """Advance the shared totals over a chunk and fill the per-round learner losses and actions."""
    n_rep, n, n_act = probs.shape
    for r in range(n_rep):
        for j in range(n):
            s = 0.0
            m = np.inf
            for i in range(n_act):
                li = losses[r, j, i]
                s += probs[r, j, i] * li
                if li < m:
                    m = li
                cum_losses[r, i] += li
            a = sample_action(probs[r, j], uniforms[r, j])
            actions[r, j] = a
            lr = losses[r, j, a]
            expected_out[r, j] = s
            realized_out[r, j] = lr
            learner[r] += s
            realized[r] += lr
            sum_min[r] += m


@njit(cache=True)
def _regret_increments(losses, expected, out):
    """Fill ``out[j, r, i] = expected[r, j] − losses[r, j, i]``, the round-major layout of
    :class:`~arena.metrics.base.Block`'s ``increments``.

    Tiles of 16 rounds: a plain loop in either order strides through one of the two arrays by
    whole rounds or replicates and runs at half this speed.
    """
    n_rep, n, n_act = losses.shape
    for j0 in range(0, n, 16):
        j1 = min(n, j0 + 16)
        for r in range(n_rep):
            for j in range(j0, j1):
                h = expected[r, j]
                for i in range(n_act):
                    out[j, r, i] = h - losses[r, j, i]


@njit(cache=True)
def _count_outside(flat, lo, hi):
    """Count the entries of a 1-d array that are not finite or lie outside ``[lo, hi]``.

    A branch-free integer count, so that the common case, valid data, costs one vectorized pass
    (NaN fails both comparisons; ``v − v`` is NaN for ±inf).
    """
    bad = 0
    for k in range(flat.size):
        v = flat[k]
        bad += not ((v >= lo) & (v <= hi) & (v - v == 0.0))
    return bad


@njit(cache=True)
def _first_bad_losses(losses, lo, hi):
    """Return (code, r, j, i) of the earliest loss that is not finite (1) or out of range (2).

    "Earliest" is the least round j, then the least replicate r; ``losses`` is C-contiguous. A
    vectorized count rules out the common case, valid data; otherwise the scan runs replicate by
    replicate and only looks at rounds before the best found so far.
    """
    if _count_outside(losses.reshape(-1), lo, hi) == 0:
        return 0, 0, 0, 0
    n_rep, n, n_act = losses.shape
    found_code, found_r, found_j, found_i = 0, 0, n, 0
    for r in range(n_rep):
        for j in range(found_j):
            bad = 0
            for i in range(n_act):
                v = losses[r, j, i]
                if not np.isfinite(v):
                    bad = 1
                elif v < lo or v > hi:
                    bad = 2
                if bad:
                    found_code, found_r, found_j, found_i = bad, r, j, i
                    break
            if bad:
                break
    if found_code == 0:
        return 0, 0, 0, 0
    return found_code, found_r, found_j, found_i


@njit(cache=True)
def _probs_valid(probs, neg_tol, sum_tol):
    """True when every row of the C-contiguous ``probs`` is finite, ≥ −neg_tol, sums to 1 ± tol."""
    if _count_outside(probs.reshape(-1), -neg_tol, np.inf) != 0:
        return False
    n_rep, n, n_act = probs.shape
    bad = 0
    for r in range(n_rep):
        for j in range(n):
            s = 0.0
            for i in range(n_act):
                s += probs[r, j, i]
            bad += abs(s - 1.0) > sum_tol
    return bad == 0


@njit(cache=True)
def _first_bad_probs(probs, neg_tol, sum_tol):
    """Return (code, r, j, i) of the earliest bad distribution: non-finite/negative (1), sum (2)."""
    if _probs_valid(probs, neg_tol, sum_tol):
        return 0, 0, 0, 0
    n_rep, n, n_act = probs.shape
    found_code, found_r, found_j, found_i = 0, 0, n, 0
    for r in range(n_rep):
        for j in range(found_j):
            bad = 0
            s = 0.0
            for i in range(n_act):
                v = probs[r, j, i]
                if not np.isfinite(v) or v < -neg_tol:
                    bad = 1
                    found_i = i
                    break
                s += v
            if not bad and abs(s - 1.0) > sum_tol:
                bad = 2
                found_i = 0
            if bad:
                found_code, found_r, found_j = bad, r, j
                break
    if found_code == 0:
        return 0, 0, 0, 0
    return found_code, found_r, found_j, found_i


# ----------------------------------------------------------------------------------------------
# configuration helpers


def resolve_component(kind: str, obj: Any, params: Mapping[str, Any] | None = None):
    """Return a component instance from an instance or a registry name (plus parameters)."""
    if isinstance(obj, str):
        return registry.make(kind, obj, **dict(params or {}))
    if params:
        return obj.clone(**dict(params))
    return obj


def resolve_metrics(metrics: Any) -> list[Metric]:
    """Build metric instances from ``{name: params or None}`` or a list of names / instances.

    A ``None`` value (or ``enabled: false``) switches a metric off.
    """
    if metrics is None:
        metrics = DEFAULT_METRICS
    out: list[Metric] = []
    if isinstance(metrics, Mapping):
        for name, params in metrics.items():
            if params is None or params is False:
                continue
            params = dict(params) if params is not True else {}
            if not params.pop("enabled", True):
                continue
            out.append(registry.make("metric", str(name), **params))
    else:
        for m in metrics:
            out.append(registry.make("metric", m) if isinstance(m, str) else m)
    names = [m.name for m in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ConfigError("metrics", sorted(dup)[0], "listed twice")
    return out


def _check_int(component: str, name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ConfigError(component, name, f"must be an integer ≥ {minimum}, got {value!r}")
    if value < minimum:
        raise ConfigError(component, name, f"must be ≥ {minimum}, got {value}")
    return int(value)


def _replicate_ids(replicates: int | Iterable[int]) -> np.ndarray:
    if isinstance(replicates, int | np.integer) and not isinstance(replicates, bool):
        count = _check_int("game", "replicates", replicates, 1)
        return np.arange(count, dtype=np.int64)
    ids = np.asarray(list(replicates), dtype=np.int64)
    if ids.size == 0 or (ids < 0).any() or np.unique(ids).size != ids.size:
        raise ConfigError("game", "replicates", "must be a count ≥ 1 or distinct indices ≥ 0")
    return ids


def checkpoint_grid(horizon: int, checkpoints: Sequence[int] | None, per_decade: int) -> np.ndarray:
    """Return the snapshot rounds: ``checkpoints`` (validated, plus T) or the log-spaced grid."""
    if checkpoints is None:
        return log_grid(horizon, per_decade)
    grid = np.unique(np.asarray(list(checkpoints), dtype=np.int64))
    if grid.size == 0 or grid[0] < 1 or grid[-1] > horizon:
        raise ConfigError("game", "checkpoints", f"must lie in [1, {horizon}]")
    return np.unique(np.append(grid, horizon))


def _digest(text: str, n: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


@dataclass
class GameRun:
    """The outcome of :func:`run_game`.

    Attributes
    ----------
    rows : pandas.DataFrame
        Tidy results, columns :data:`SCHEMA`.
    config : dict
        The resolved game description (as stored in ``manifest.json``).
    skipped_metrics : dict
        Metrics requested but not applicable, with the reason.
    wall_time : float
        Seconds spent playing.
    """

    rows: pd.DataFrame
    config: dict
    skipped_metrics: dict[str, str] = field(default_factory=dict)
    wall_time: float = 0.0


class _TraceWriter:
    """Streams per-round ``p_t``, ``l_t`` and ``I_t`` to a Parquet file in row groups."""

    def __init__(self, path: Path, replicate_ids: np.ndarray):
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._pa = pa
        self.path = Path(path)
        self.tmp = self.path.with_name(f".{self.path.name}.tmp")
        schema = pa.schema(
            [
                ("replicate", pa.int64()),
                ("t", pa.int64()),
                ("action", pa.int64()),
                ("expected_loss", pa.float64()),
                ("probs", pa.list_(pa.float64())),
                ("losses", pa.list_(pa.float64())),
            ]
        )
        self._writer = pq.ParquetWriter(self.tmp, schema)
        self._schema = schema
        self._ids = replicate_ids

    def write(self, block: Block) -> None:
        pa = self._pa
        n_rep, n, n_act = block.probs.shape
        reps = np.repeat(self._ids, n)
        ts = np.tile(np.arange(block.t0, block.t0 + n, dtype=np.int64), n_rep)
        offsets = np.arange(0, n_rep * n * n_act + 1, n_act, dtype=np.int32)
        probs = pa.ListArray.from_arrays(offsets, block.probs.reshape(-1))
        losses = pa.ListArray.from_arrays(offsets, block.losses.reshape(-1))
        table = pa.Table.from_arrays(
            [
                pa.array(reps),
                pa.array(ts),
                pa.array(block.actions.reshape(-1).astype(np.int64)),
                pa.array(block.expected.reshape(-1)),
                probs,
                losses,
            ],
            schema=self._schema,
        )
        self._writer.write_table(table)

    def commit(self) -> None:
        self._writer.close()
        self.tmp.replace(self.path)

    def abort(self) -> None:
        self._writer.close()
        self.tmp.unlink(missing_ok=True)


def _describe(kind: str, component: Any) -> str:
    return f"{kind} {type(component).registry_name()} {component!r}"


class _Who:
    """A component's description, rendered only when an error message needs it (``repr`` reads
    the ``__init__`` signature, too slow to build on every chunk)."""

    def __init__(self, kind: str, component: Any):
        self.kind, self.component = kind, component

    def __str__(self) -> str:
        return _describe(self.kind, self.component)


def adversary_name_of(adversary: Any) -> str:
    """Return an adversary's registry name (for messages)."""
    return type(adversary).registry_name()


@dataclass
class PreparedGame:
    """A game resolved and reset, ready for its first round (shared by engine and reference loop).

    Attributes
    ----------
    player, adversary : component
        Fresh clones, already ``reset`` for the batch.
    spec : GameSpec
    metrics : list of Metric
        The applicable metrics (not yet started).
    skipped : dict
        Requested metrics that do not apply, with the reason.
    grid : ndarray
        Checkpoint rounds (ending with T).
    ids : ndarray
        Global replicate indices.
    action_rngs : list of Generator
        Per-replicate streams of the action uniforms.
    config : dict
        Resolved configuration (manifest content).
    constants : dict
        Values of the constant columns of the tidy rows.
    """

    player: ExpertsPlayer
    adversary: Adversary
    spec: GameSpec
    metrics: list[Metric]
    skipped: dict[str, str]
    grid: np.ndarray
    ids: np.ndarray
    action_rngs: list[np.random.Generator]
    config: dict
    constants: dict


def prepare_game(
    player: ExpertsPlayer | str,
    adversary: Adversary | str,
    *,
    horizon: int,
    n_actions: int | None = None,
    replicates: int | Iterable[int] = 1,
    seed: int = 0,
    metrics: Any = None,
    checkpoints: Sequence[int] | None = None,
    per_decade: int = 10,
    player_params: Mapping[str, Any] | None = None,
    adversary_params: Mapping[str, Any] | None = None,
) -> PreparedGame:
    """Validate the inputs, derive the seeds, clone and reset the components (see :func:`run_game`).

    Every invalid input raises :class:`~arena.errors.ConfigError` here, before any round runs.
    An adversary of an OCO protocol hands over to :func:`arena.oco.engine.prepare_oco_game`.
    """
    adversary = resolve_component("adversary", adversary, adversary_params)
    if adversary.tags.protocol != "experts":
        from arena.oco.engine import prepare_oco_game

        return prepare_oco_game(
            player,
            adversary,
            horizon=horizon,
            n_actions=n_actions,
            replicates=replicates,
            seed=seed,
            metrics=metrics,
            checkpoints=checkpoints,
            per_decade=per_decade,
            player_params=player_params,
        )
    player = resolve_component("player", player, player_params)
    if not isinstance(player, ExpertsPlayer):
        raise ConfigError(
            _describe("player", player),
            "protocol",
            f"adversary {adversary_name_of(adversary)} plays the experts protocol; "
            "this player does not",
        )
    horizon = _check_int("game", "horizon", horizon, 1)
    if horizon > MAX_HORIZON:
        raise ConfigError("game", "horizon", f"must be ≤ {MAX_HORIZON}")
    seed = _check_int("game", "seed", seed, 0)
    ids = _replicate_ids(replicates)
    if n_actions is not None:
        n_actions = _check_int("game", "n_actions", n_actions, 1)
    player, adversary = player.clone(), adversary.clone()
    n_act = adversary.resolve_n_actions(n_actions)
    lo, hi = (float(v) for v in adversary.declared_range())
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ConfigError(_describe("adversary", adversary), "loss_range", f"invalid ({lo}, {hi})")
    n_rep = int(ids.size)
    spec = GameSpec(
        "experts", n_act, horizon, (lo, hi), n_replicates=n_rep, replicate_ids=tuple(ids.tolist())
    )

    metric_objs = resolve_metrics(metrics)
    skipped: dict[str, str] = {}
    active: list[Metric] = []
    for m in metric_objs:
        reason = m.applicable(player, adversary)
        if reason:
            skipped[m.name] = reason
            continue
        m.param_values(spec)  # validates parameters before any round
        active.append(m)
    if adversary.tags.emits_confidences and not player.tags.supports_confidences:
        raise ConfigError(
            _describe("player", player),
            "supports_confidences",
            f"adversary {adversary_name_of(adversary)} announces confidences (sleeping experts) "
            "but this player cannot use them",
        )
    if not active:
        raise ConfigError("metrics", "metrics", "no metric left to compute")

    grid = checkpoint_grid(horizon, checkpoints, per_decade)

    player_name, adversary_name = type(player).registry_name(), type(adversary).registry_name()
    game_key = canonical_json(
        {"adversary": adversary_name, "params": adversary.get_params(), "n_actions": n_act}
    )
    cell_key = canonical_json(
        {
            "player": player_name,
            "player_params": player.get_params(),
            "game": game_key,
            "horizon": horizon,
            "protocol": "experts",
        }
    )
    metric_cfg = {m.name: m.get_params() for m in active}
    config = {
        "cell_key": cell_key,
        "player": player_name,
        "player_params": player.get_params(),
        "adversary": adversary_name,
        "adversary_params": adversary.get_params(),
        "protocol": "experts",
        "n_actions": n_act,
        "horizon": horizon,
        "loss_range": [lo, hi],
        "seed": seed,
        "replicates": ids.tolist(),
        "metrics": metric_cfg,
        "checkpoints": grid.tolist(),
    }
    run_id = _digest(canonical_json({k: v for k, v in config.items() if k != "replicates"}), 16)
    cell_id = _digest(cell_key, 12)
    config["run_id"], config["cell"] = run_id, cell_id

    streams = [replicate_streams(seed, game_key, cell_key, int(r)) for r in ids]
    adversary_rngs = [s[0] for s in streams]
    action_rngs = [s[1] for s in streams]
    player_rngs = [s[2] for s in streams]
    for kind, comp, rngs in (
        ("adversary", adversary, adversary_rngs),
        ("player", player, player_rngs),
    ):
        if getattr(comp.tags, "needs_horizon", False) and spec.horizon is None:
            raise ConfigError(_describe(kind, comp), "horizon", "this component needs the horizon")
        try:
            comp.reset(spec, rngs)
        except ArenaError:
            raise
        except (ValueError, TypeError) as exc:
            raise ConfigError(_describe(kind, comp), "reset", str(exc)) from exc
    for m in active:
        m.attach(player, adversary)

    constants = {
        "run_id": run_id,
        "cell": cell_id,
        "player": player_name,
        "player_params": player.params_json(),
        "adversary": adversary_name,
        "adversary_params": adversary.params_json(),
        "protocol": "experts",
        "n_actions": n_act,
        "horizon": horizon,
        "seed": seed,
    }
    return PreparedGame(
        player, adversary, spec, active, skipped, grid, ids, action_rngs, config, constants
    )


def run_game(
    player: ExpertsPlayer | str,
    adversary: Adversary | str,
    *,
    horizon: int,
    n_actions: int | None = None,
    replicates: int | Iterable[int] = 1,
    seed: int = 0,
    metrics: Any = None,
    checkpoints: Sequence[int] | None = None,
    per_decade: int = 10,
    player_params: Mapping[str, Any] | None = None,
    adversary_params: Mapping[str, Any] | None = None,
    trace_path: str | Path | None = None,
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS,
    progress: bool = False,
) -> GameRun:
    """Play R replicates of the experts game and return the tidy metric rows.

    Parameters
    ----------
    player, adversary : component or registry name
        What plays; instances are cloned, never mutated.
    horizon : int
        Number of rounds T ≥ 1.
    n_actions : int, optional
        Number of experts N (default: the adversary's choice, 10 for most).
    replicates : int or iterable of int
        A count R (replicates 0..R-1) or explicit global replicate indices; replicate r's rows do
        not depend on which others run beside it.
    seed : int
        Root seed (design §3 seeding contract).
    metrics : mapping or list, optional
        ``{name: params}`` (``None`` switches one off) or metric instances; default
        :data:`arena.metrics.builtin.DEFAULT_METRICS`.
    checkpoints : sequence of int, optional
        Rounds to snapshot; default :func:`arena.checkpoints.log_grid` with ``per_decade``.
    trace_path : path, optional
        Also stream per-round ``p_t``, ``l_t``, ``I_t`` of every replicate to this Parquet file.
    chunk_elements : int
        Bound on R·n·N per chunk buffer (memory vs per-chunk overhead).
    progress : bool
        Show a progress bar over rounds.

    Returns
    -------
    GameRun
    """
    adversary = resolve_component("adversary", adversary, adversary_params)
    if adversary.tags.protocol != "experts":
        from arena.oco.engine import run_oco_game

        return run_oco_game(
            player,
            adversary,
            horizon=horizon,
            n_actions=n_actions,
            replicates=replicates,
            seed=seed,
            metrics=metrics,
            checkpoints=checkpoints,
            per_decade=per_decade,
            player_params=player_params,
            trace_path=trace_path,
            chunk_elements=chunk_elements,
            progress=progress,
        )
    adversary_params = None
    started = time.perf_counter()
    game = prepare_game(
        player,
        adversary,
        horizon=horizon,
        n_actions=n_actions,
        replicates=replicates,
        seed=seed,
        metrics=metrics,
        checkpoints=checkpoints,
        per_decade=per_decade,
        player_params=player_params,
        adversary_params=adversary_params,
    )
    player, adversary, spec, active = game.player, game.adversary, game.spec, game.metrics
    grid, ids, action_rngs = game.grid, game.ids, game.action_rngs
    n_rep, n_act = spec.n_replicates, spec.n_actions
    lo, hi = spec.loss_range
    horizon = spec.horizon
    player_name, adversary_name = game.constants["player"], game.constants["adversary"]
    for m in active:
        m.start(spec)
    core = Core(n_rep, n_act)
    want_means = any("means" in m.requires for m in active)
    want_increments = any(m.reads_increments for m in active)
    sleeping = adversary.tags.emits_confidences
    observes = player.tags.observes_action
    oblivious = isinstance(adversary, ObliviousAdversary) and adversary.tags.oblivious
    history = None if oblivious else History(n_rep, n_act, adversary.tags.sees_distribution)
    max_chunk = max(1, chunk_elements // (n_rep * n_act))
    checkpoint_set = set(grid.tolist())
    snap_t: list[int] = []
    snap_vals: list[list[np.ndarray]] = []
    trace = _TraceWriter(Path(trace_path), ids) if trace_path is not None else None
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=horizon, unit="round", desc=f"{player_name} vs {adversary_name}")

    try:
        t0 = 1
        for stop in grid.tolist():
            while t0 <= stop:
                n = min(max_chunk, stop - t0 + 1)
                if oblivious:
                    losses = _oblivious_losses(adversary, t0, n, n_rep, n_act, lo, hi, ids)
                    conf = None
                    if sleeping:
                        conf = _checked_confidences(
                            adversary,
                            adversary.confidences_block(t0, n),
                            (n_rep, n, n_act),
                            t0,
                            ids,
                        )
                    uniforms = np.empty((n_rep, n))
                    for r, g in enumerate(action_rngs):
                        g.random(out=uniforms[r])
                    probs = _block_probs(
                        player, losses, conf, uniforms if observes else None, t0, ids
                    )
                else:
                    probs, losses, uniforms, conf = _adaptive_chunk(
                        player, adversary, history, t0, n, n_rep, n_act, lo, hi, ids, action_rngs
                    )
                _check_probs(player, probs, t0, ids, conf)
                means = None
                if want_means:
                    # a view, not a copy: constant means broadcast with stride 0 over rounds
                    means = np.broadcast_to(
                        np.asarray(adversary.oracle("means", t0, n), dtype=np.float64),
                        (n_rep, n, n_act),
                    )
                expected = np.empty((n_rep, n))
                realized = np.empty((n_rep, n))
                actions = np.empty((n_rep, n), dtype=np.int64)
                _core_advance(
                    probs,
                    losses,
                    uniforms,
                    core.cum_losses,
                    core.learner,
                    core.realized,
                    core.sum_min,
                    expected,
                    realized,
                    actions,
                )
                increments = None
                if want_increments:
                    increments = np.empty((n, n_rep, n_act))
                    _regret_increments(losses, expected, increments)
                core.t = t0 + n - 1
                core.last_probs = probs[:, -1].copy()
                block = Block(
                    probs, losses, expected, realized, actions, means, t0, conf, increments
                )
                for m in active:
                    m.advance(block, core)
                if trace is not None:
                    trace.write(block)
                if bar is not None:
                    bar.update(n)
                t0 += n
            if stop in checkpoint_set:
                snap_t.append(stop)
                snap_vals.append([np.asarray(m.values(core), dtype=np.float64) for m in active])
    except BaseException:
        if trace is not None:
            trace.abort()
        raise
    finally:
        if bar is not None:
            bar.close()
    if trace is not None:
        trace.commit()

    rows = _assemble(snap_t, snap_vals, active, spec, ids, game.constants)
    return GameRun(rows, game.config, game.skipped, time.perf_counter() - started)


def play(player: ExpertsPlayer | str, adversary: Adversary | str, **kwargs: Any) -> pd.DataFrame:
    """Play a game and return its tidy results table (see :func:`run_game` for the arguments).

    Examples
    --------
    >>> df = play("hedge", "fair_coin", n_actions=4, horizon=100, replicates=2,
    ...           metrics={"regret": {}})
    >>> sorted(df.columns) == sorted(SCHEMA), df.replicate.nunique(), int(df.t.max())
    (True, 2, 100)
    """
    return run_game(player, adversary, **kwargs).rows


def _oblivious_losses(adversary, t0, n, n_rep, n_act, lo, hi, ids) -> np.ndarray:
    who = _Who("adversary", adversary)
    try:
        raw = adversary.losses_block(t0, n)
    except ArenaError:
        raise
    except Exception as exc:
        raise GameError(
            who,
            f"losses_block failed in rounds {t0}..{t0 + n - 1}: {exc}",
            round=t0,
            replicate=int(ids[0]),
        ) from exc
    losses = np.asarray(raw, dtype=np.float64)
    if losses.shape != (n_rep, n, n_act):
        raise GameError(
            who,
            f"losses_block returned shape {losses.shape}, expected {(n_rep, n, n_act)}",
            round=t0,
            replicate=int(ids[0]),
        )
    losses = np.ascontiguousarray(losses)
    code, r, j, i = _first_bad_losses(losses, lo, hi)
    if code:
        _raise_bad_loss(who, code, losses[r, j, i], lo, hi, t0 + j, int(ids[r]), i)
    return losses


def _raise_bad_loss(who, code, value, lo, hi, t, replicate, expert):
    what = "is not finite" if code == 1 else f"lies outside the declared range [{lo:g}, {hi:g}]"
    raise GameError(
        who, f"loss of expert {expert} = {value!r} {what}", round=t, replicate=replicate
    )


def _block_probs(player, losses, confidences, uniforms, t0, ids) -> np.ndarray:
    who = _Who("player", player)
    extra = {}
    if confidences is not None:
        extra["confidences"] = confidences
    if uniforms is not None:
        extra["uniforms"] = uniforms
    try:
        probs = player.play_block(losses, **extra)
    except ArenaError:
        raise
    except Exception as exc:
        raise GameError(
            who,
            f"play_block failed in rounds {t0}..{t0 + losses.shape[1] - 1}: {exc}",
            round=t0,
            replicate=int(ids[0]),
        ) from exc
    probs = np.asarray(probs, dtype=np.float64)
    if probs.shape != losses.shape:
        raise GameError(
            who,
            f"play_block returned shape {probs.shape}, expected {losses.shape}",
            round=t0,
            replicate=int(ids[0]),
        )
    return np.ascontiguousarray(probs)


def _checked_confidences(adversary, raw, shape, t0, ids) -> np.ndarray:
    """Return the confidences as a contiguous float array, or stop naming the first bad one."""
    who = _Who("adversary", adversary)
    conf = np.ascontiguousarray(np.asarray(raw, dtype=np.float64))
    if conf.shape != shape:
        raise GameError(
            who,
            f"confidences have shape {conf.shape}, expected {shape}",
            round=t0,
            replicate=int(ids[0]),
        )
    code, r, j, i = _first_bad_losses(conf if conf.ndim == 3 else conf[:, None], 0.0, 1.0)
    if code:
        value = float(conf.reshape(len(ids), -1, shape[-1])[r, j, i])
        raise GameError(
            who,
            f"confidence of expert {i} = {value!r} is not in [0, 1]",
            round=t0 + j,
            replicate=int(ids[r]),
        )
    return conf


def _check_probs(player, probs, t0, ids, confidences=None) -> None:
    if confidences is not None:
        conf = confidences if confidences.ndim == 3 else confidences[:, None]
        bad = np.argwhere((conf == 0.0) & (probs != 0.0))
        if bad.size:
            r, j, i = (int(v) for v in bad[0])
            raise GameError(
                _describe("player", player),
                f"p[{i}] = {float(probs[r, j, i])!r} but expert {i} is asleep (confidence 0)",
                round=t0 + j,
                replicate=int(ids[r]),
            )
    code, r, j, i = _first_bad_probs(probs, PROB_NEG_TOL, PROB_SUM_TOL)
    if code == 1:
        raise GameError(
            _describe("player", player),
            f"p[{i}] = {probs[r, j, i]!r} is not a probability",
            round=t0 + j,
            replicate=int(ids[r]),
        )
    if code == 2:
        raise GameError(
            _describe("player", player),
            f"p sums to {probs[r, j].sum()!r}, not 1",
            round=t0 + j,
            replicate=int(ids[r]),
        )


def _adaptive_chunk(player, adversary, history, t0, n, n_rep, n_act, lo, hi, ids, action_rngs):
    probs = np.empty((n_rep, n, n_act))
    losses = np.empty((n_rep, n, n_act))
    sleeping = adversary.tags.emits_confidences
    observes = player.tags.observes_action
    confs = np.empty((n_rep, n, n_act)) if sleeping else None
    uniforms = np.stack([g.random(n) for g in action_rngs])
    actions = np.empty(n_rep, dtype=np.int64)
    who_p, who_a = _Who("player", player), _Who("adversary", adversary)
    for j in range(n):
        t = t0 + j
        conf = None
        if sleeping:
            conf = _checked_confidences(
                adversary, adversary.confidences(t, history), (n_rep, n_act), t, ids
            )
            confs[:, j] = conf
        try:
            p = np.asarray(
                player.predict() if conf is None else player.predict(confidences=conf),
                dtype=np.float64,
            )
        except ArenaError:
            raise
        except Exception as exc:
            raise GameError(
                who_p, f"predict failed: {exc}", round=t, replicate=int(ids[0])
            ) from exc
        if p.shape != (n_rep, n_act):
            raise GameError(
                who_p,
                f"predict returned shape {p.shape}, expected {(n_rep, n_act)}",
                round=t,
                replicate=int(ids[0]),
            )
        p = np.ascontiguousarray(p)
        _check_probs(player, p[:, None, :], t, ids, None if conf is None else conf[:, None])
        history._show(p)
        try:
            raw = adversary.losses(t, history)
        except ArenaError:
            raise
        except Exception as exc:
            raise GameError(who_a, f"losses failed: {exc}", round=t, replicate=int(ids[0])) from exc
        lt = np.asarray(raw, dtype=np.float64)
        if lt.shape != (n_rep, n_act):
            raise GameError(
                who_a,
                f"losses returned shape {lt.shape}, expected {(n_rep, n_act)}",
                round=t,
                replicate=int(ids[0]),
            )
        code, r, _, i = _first_bad_losses(np.ascontiguousarray(lt)[:, None, :], lo, hi)
        if code:
            _raise_bad_loss(who_a, code, lt[r, i], lo, hi, t, int(ids[r]), i)
        probs[:, j] = p
        losses[:, j] = lt
        view = losses[:, j]
        view.flags.writeable = False
        sample_actions(p, uniforms[:, j].copy(), actions)
        extra: dict[str, np.ndarray] = {}
        if observes:
            extra["actions"] = actions.copy()
        if conf is not None:
            extra["confidences"] = conf
        try:
            player.update(view, **extra)
        except ArenaError:
            raise
        except Exception as exc:
            raise GameError(who_p, f"update failed: {exc}", round=t, replicate=int(ids[0])) from exc
        history._record(p, lt, actions)
    return probs, losses, uniforms, confs


def _assemble(snap_t, snap_vals, metrics, spec, ids, constants) -> pd.DataFrame:
    """Build the tidy rows: ordered by checkpoint, then metric and param, then replicate."""
    n_rep = ids.size
    keys = [key for m in metrics for key in m.row_keys(spec)]
    n_cols, n_snap = len(keys), len(snap_t)
    # values[s, c, r]: snapshot s, metric/param column c, replicate r
    values = np.stack([np.concatenate(vals, axis=1).T for vals in snap_vals]).reshape(-1)
    n_rows = values.size
    names = [k[0] for k in keys]
    params = np.array([k[1] for k in keys], dtype=np.float64)
    column = np.tile(np.repeat(np.arange(n_cols), n_rep), n_snap)
    data: dict[str, Any] = {}
    for col in SCHEMA:
        if col in constants:
            val = constants[col]
            if isinstance(val, int):
                data[col] = np.full(n_rows, val, dtype=np.int64)
            else:
                data[col] = _repeated_strings([val], np.zeros(n_rows, dtype=np.int64))
    data["replicate"] = np.tile(ids, n_snap * n_cols)
    data["t"] = np.repeat(np.asarray(snap_t, dtype=np.int64), n_cols * n_rep)
    data["metric"] = _repeated_strings(names, column)
    data["param"] = params[column]
    data["value"] = values
    return pd.DataFrame({c: data[c] for c in SCHEMA})


def _repeated_strings(labels: list[str], codes: np.ndarray):
    """Return ``labels[codes]`` as a pandas string array, built in Arrow (no Python objects)."""
    import pyarrow as pa

    return pd.array(pa.array(labels, type=pa.string()).take(pa.array(codes)), dtype="str")
