"""The game driver: one loop that plays every feedback model, R replicates per call.

The driver owns what every game has (architecture: the shape): resolving the components once,
validating the game parameters, the run id and the cell key, seeding, ``reset`` with one error
mapping, metric activation, the chunk / checkpoint / trace / progress loop, row assembly and
:class:`GameRun`. What differs between feedback models is a
:class:`~arena.protocol.GameProtocol`, looked up in the registry (entry-point group
``arena.protocols``) by the adversary's ``tags.protocol`` (or the player's protocol that hosts
it, :func:`~arena.protocol.game_protocol`): its game description (:class:`~arena.spec.GameSpec`),
its metrics, its per-chunk step (which advances the shared running totals the metrics read), its
trace columns and its literal reference loop.

Rounds are processed in chunks that end on every checkpoint: a chunk is one call of the
protocol's step (one ``losses_block`` / ``play_block`` pair against an oblivious adversary, a
per-round loop batched over replicates against an adaptive one); the metrics then consume the
chunk, so memory is O(R·N·chunk + metric state), never O(T).

Beside it in the core: the protocol interface (:mod:`arena.protocol`), the checks of the game's
parameters and of the components' calls and outputs (:mod:`arena.validation`), and what a game
costs and the refusals of one that would not fit (:mod:`arena.resources`). The driver imports no
protocol: a protocol module imports the driver, never the reverse.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import math
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from arena import registry
from arena.base import canonical_json, canonical_json_with
from arena.errors import ArenaError, ConfigError, GameError
from arena.interrupts import raise_if_noted
from arena.metric import (
    Metric,
    computes_rowwise,
    metric_problem,
    reads_block_only,
    reads_core_only,
)
from arena.metric_sets import expand_metric_names
from arena.parallel import Stopped, check_n_jobs, plan_blocks, run_blocks
from arena.params import validate_params
from arena.protocol import CoreSnapshots, GameProtocol, PreparedGame, game_protocol, protocol_for
from arena.resources import (
    blas_threads,
    check_memory,
    check_resources,
    check_rows,
    game_footprints,
    tune_allocator,
)
from arena.results import GameRun, assemble_rows
from arena.seeding import game_streams
from arena.spec import GameSpec
from arena.validation import check_int, checkpoint_grid, describe, replicate_ids, resolve_component

MAX_HORIZON = 2**31 - 1

MAX_SEED = 2**63 - 1
"""Largest root seed: the ``seed`` column of the results is int64, so a larger seed would play the
whole game and only then fail to be written."""

DEFAULT_CHUNK_ELEMENTS = 2**18
"""Default bound on R·n·N (R·n·d in OCO games) per chunk buffer: 2 MiB of float64. Large enough
that the per-chunk Python cost is small against the kernels, small enough to stay in cache."""


def _digest(text: str, n: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def resolve_metrics(protocol: GameProtocol, metrics: Any) -> tuple[list[Metric], dict[str, str]]:
    """Build a game's metrics; return them and those the protocol skips (with the reason).

    ``metrics`` is ``{name: params}`` (a ``None`` value or ``enabled: false`` switches one off),
    a metric set's name (``"oco"``; ``"default"`` or None: the protocol's defaults) or one
    metric's, or a list of names (sets or metrics) and instances: see :mod:`arena.metric_sets`.
    """
    metrics = expand_metric_names(metrics, protocol.default_metrics)
    out: list[Metric] = []
    skipped: dict[str, str] = {}

    def add(name: str, params: dict) -> None:
        cls = protocol.metric_class(name)
        if isinstance(cls, str):
            skipped[name] = cls
            return
        try:
            registry.check_param_names("metric", name, cls, params)
        except ConfigError as exc:
            raise _other_protocol_metric(protocol, name, exc) or exc from None
        try:
            metric = cls(**params)
        except TypeError as exc:
            raise ConfigError(f"metric {name}", "params", str(exc)) from exc
        validate_params(metric)
        out.append(metric)

    def add_entry(name: str, params: Any) -> None:
        if params is None or params is False:
            return
        params = dict(params) if params is not True else {}
        if params.pop("enabled", True):
            add(str(name), params)

    if isinstance(metrics, Mapping):
        for name, params in metrics.items():
            add_entry(name, params)
    else:
        for m in metrics:
            if isinstance(m, str):
                add(m, {})
            elif isinstance(m, tuple) and len(m) == 2 and isinstance(m[0], str):  # a set's entry
                add_entry(*m)
            elif getattr(type(m), "protocols", None) is None:  # no protocol can dispatch it
                raise ArenaError(str(metric_problem(m.name, type(m))))
            elif protocol.accepts_metric(m):
                out.append(m)
            else:
                add(m.name, {})
    names = [m.name for m in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ConfigError("metrics", sorted(dup)[0], "listed twice")
    return out, skipped


def _other_protocol_metric(protocol: GameProtocol, name: str, exc: ConfigError):
    """A clearer error where a metric's parameter belongs to the same-named metric of another
    protocol (``metrics=oco`` on an experts game: OCO's ``regret`` takes ``radius``)."""
    takers = []
    for other in registry.available("protocol"):
        if other == protocol.name:
            continue
        try:
            cls = protocol_for(other).metric_class(name)
        except ArenaError:
            continue
        if not isinstance(cls, str) and exc.parameter in cls.param_names():
            takers.append(other)
    if not takers:
        return None
    valid = exc.args[0].rpartition("(valid: ")[2].rstrip(")")
    article = "an" if protocol.name[:1] in "aeiou" else "a"
    return ConfigError(
        f"metric {name}",
        exc.parameter,
        f"is a parameter of {name} in {'/'.join(takers)} games, and this is {article} "
        f"{protocol.name} game: is the metric set meant for another protocol? ({name} here "
        f"takes {'no parameters' if valid in ('', '[]') else valid})",
    )


def prepare_game(
    player: Any,
    adversary: Any,
    *,
    horizon: int,
    n_actions: int | None = None,
    replicates: int | Iterable[int] = 1,
    seed: int = 0,
    metrics: Any = None,
    checkpoints: Sequence[int] | str | None = None,
    per_decade: int = 10,
    player_params: Mapping[str, Any] | None = None,
    adversary_params: Mapping[str, Any] | None = None,
) -> PreparedGame:
    """Validate the inputs, derive the seeds, clone and reset the components (see :func:`run_game`).

    :func:`check_game` then :func:`reset_game`. Every invalid input raises
    :class:`~arena.errors.ConfigError` here, before any round runs.
    """
    return reset_game(
        check_game(
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
    )


def check_game(
    player: Any,
    adversary: Any,
    *,
    horizon: int,
    n_actions: int | None = None,
    replicates: int | Iterable[int] = 1,
    seed: int = 0,
    metrics: Any = None,
    checkpoints: Sequence[int] | str | None = None,
    per_decade: int = 10,
    player_params: Mapping[str, Any] | None = None,
    adversary_params: Mapping[str, Any] | None = None,
) -> PreparedGame:
    """Validate a game without resetting its components: every check, the config and run id.

    Returns the :class:`~arena.protocol.PreparedGame` of :func:`prepare_game` before
    :func:`reset_game`: fresh clones not yet ``reset``, metrics not yet attached, no streams.
    A game split over threads is checked whole this way, once, on the calling thread (its
    config, run id and rows' constants are the whole game's), and each block then prepares and
    resets its own replicates in its thread (:mod:`arena.parallel`): the whole game's
    components are never reset. Every invalid input raises :class:`~arena.errors.ConfigError`
    here, in the order :func:`prepare_game` raises it; only the errors of ``reset`` itself
    wait for :func:`reset_game`.
    """
    player = resolve_component("player", player, player_params)
    adversary = resolve_component("adversary", adversary, adversary_params)
    validate_params(player)
    validate_params(adversary)
    protocol = protocol_for(game_protocol(player, adversary))
    protocol.check_pair(player, adversary)
    horizon = check_int("game", "horizon", horizon, 1)
    if horizon > MAX_HORIZON:
        raise ConfigError("game", "horizon", f"must be ≤ {MAX_HORIZON}")
    seed = check_int("game", "seed", seed, 0)
    if seed > MAX_SEED:
        raise ConfigError("game", "seed", f"must be ≤ 2**63 - 1 = {MAX_SEED}, got {seed}")
    ids = replicate_ids(replicates)
    # the grid is checked here, with the other game parameters, before any metric or reset work
    grid = checkpoint_grid(horizon, checkpoints, per_decade)
    if n_actions is not None:
        n_actions = check_int("game", "n_actions", n_actions, 1)
    player, adversary = player.clone(), adversary.clone()
    adversary.bind_player(player.clone())
    try:
        spec, protocol_config = protocol.make_spec(
            player, adversary, horizon=horizon, n_actions=n_actions, ids=ids
        )
    except ArenaError:
        raise
    except (ValueError, TypeError) as exc:
        raise ConfigError(describe("adversary", adversary), "parameters", str(exc)) from exc

    check_memory(len(ids), spec.n_actions, protocol.min_chunk_rounds)
    metric_objs, skipped = resolve_metrics(protocol, metrics)
    active: list[Metric] = []
    n_values = 0  # rows per checkpoint and replicate
    for m in metric_objs:
        reason = m.applicable(player, adversary)
        if reason is None:
            values = m.param_values(spec)  # validates the parameters before any round
            reason = m.game_reason(spec)
        if reason:
            skipped[m.name] = reason
            continue
        active.append(m)
        n_values += len(values)
    if not active:
        raise ConfigError("metrics", "metrics", "no metric left to compute")
    check_rows(grid.size, len(ids), n_values)
    # every part's declared size, before any reset or metric allocates it
    parts = game_footprints(
        player,
        adversary,
        active,
        spec,
        n_checkpoints=grid.size,
        n_values=n_values,
        chunk_rounds=protocol.min_chunk_rounds,
    )
    footprint = check_resources(parts, spec)

    player_name, adversary_name = type(player).registry_name(), type(adversary).registry_name()
    game_fields, cell_fields = protocol.identity(player, adversary, spec)
    data = adversary.data_identity()
    if data:  # only where there is data, so that every other game keeps its key
        game_fields = {**game_fields, "data": data}
    game_key = canonical_json(game_fields)
    # each component's parameters serialized once, for the cell key, the run id and the rows
    player_params, adversary_params = player.get_params(), adversary.get_params()
    params_json = {
        "player_params": canonical_json(player_params),
        "adversary_params": canonical_json(adversary_params),
    }
    cell = {
        "player": player_name,
        "player_params": player_params,
        "game": game_key,
        "horizon": horizon,
        "protocol": spec.protocol,
        **cell_fields,  # (an OCO cell's own adversary_params: its cell_params, not these)
    }
    # spliced only where no cell field replaced it, as for the run id below
    spliced = cell["player_params"] is player_params
    cell_key = canonical_json_with(
        cell, {"player_params": params_json["player_params"]} if spliced else {}
    )
    config = {
        "cell_key": cell_key,
        "player": player_name,
        "player_params": player_params,
        "adversary": adversary_name,
        "adversary_params": adversary_params,
        "protocol": spec.protocol,
        "n_actions": spec.n_actions,
        **protocol_config,
        **({"data": data} if data else {}),
        **({"data_files": data_files} if (data_files := adversary.data_provenance()) else {}),
        "horizon": horizon,
        "seed": seed,
        "replicates": ids.tolist(),
        "metrics": {m.name: m.get_params() for m in active},
        "checkpoints": grid.tolist(),
    }
    # (spliced only where the config still holds them: a plugin protocol's config may replace one)
    unchanged = {"player_params": player_params, "adversary_params": adversary_params}
    encoded = {k: text for k, text in params_json.items() if config[k] is unchanged[k]}
    run_id = _digest(
        canonical_json_with({k: v for k, v in config.items() if k != "replicates"}, encoded), 16
    )
    cell_id = _digest(cell_key, 12)
    config["run_id"], config["cell"] = run_id, cell_id
    constants = {
        "run_id": run_id,
        "cell": cell_id,
        "player": player_name,
        "player_params": params_json["player_params"],
        "adversary": adversary_name,
        "adversary_params": params_json["adversary_params"],
        "protocol": spec.protocol,
        "n_actions": spec.n_actions,
        "horizon": horizon,
        "seed": seed,
    }
    return PreparedGame(
        protocol,
        player,
        adversary,
        spec,
        active,
        skipped,
        grid,
        ids,
        [],
        config,
        constants,
        footprint,
        game_key,
    )


def reset_game(game: PreparedGame) -> PreparedGame:
    """Seed and reset a checked game's components and attach its metrics (:func:`check_game`).

    Returns the game ready for its first round, with its replicates' streams. A component whose
    ``reset`` refuses the game raises :class:`~arena.errors.ConfigError` naming it.
    """
    player, adversary, spec, ids = game.player, game.adversary, game.spec, game.ids
    seed, cell_key = game.config["seed"], game.config["cell_key"]
    streams = game_streams(seed, game.game_key, cell_key, ids)
    _reset_components(adversary, player, spec, streams.adversary, streams.player)
    for m in game.metrics:
        m.attach(player, adversary)
    return dataclasses.replace(game, streams=streams)


def _reset_components(adversary, player, spec, adversary_rngs, player_rngs) -> None:
    """Reset the adversary on its replicates' streams, then the player on its own; a refusal
    names the component."""
    for kind, comp, rngs in (
        ("adversary", adversary, list(adversary_rngs)),
        ("player", player, list(player_rngs)),
    ):
        try:
            # a component draws its instance here (an adversary's random rotations, a player's
            # sketch): one BLAS thread, as for the rounds (a multithreaded 100×100 QR on a busy
            # 2-core machine took 0.7 s against 3 ms with one thread); capped per component, so
            # that a BLAS library the adversary's reset loads is capped for the player's
            with blas_threads():
                comp.reset(spec, rngs)
        except ArenaError:
            raise
        except (ValueError, TypeError, KeyError) as exc:
            raise ConfigError(describe(kind, comp), "reset", str(exc)) from exc
        except Exception as exc:  # a plugin's bug: name the component, keep the cause chained
            raise ArenaError(
                f"{describe(kind, comp)}: reset failed: {type(exc).__name__}: {exc}"
            ) from exc


def run_game(
    player: Any,
    adversary: Any,
    *,
    trace_path: str | Path | None = None,
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS,
    progress: bool = False,
    n_jobs: int | str | None = None,
    **game: Any,
) -> GameRun:
    """Play R replicates of a game of any protocol and return the tidy metric rows.

    Parameters
    ----------
    player, adversary : component or registry name
        What plays; instances are cloned, never mutated. The adversary's ``tags.protocol``
        chooses the feedback model (experts, oco, classification, regression, or a plugin's).
    horizon : int
        Number of rounds T ≥ 1.
    n_actions : int, optional
        Number of experts N, or the dimension d of an OCO game (default: the adversary's).
    replicates : int or iterable of int
        A count R (replicates 0..R-1) or explicit global replicate indices; replicate r's rows do
        not depend on which others run beside it.
    seed : int
        Root seed (architecture: seeding).
    metrics : mapping or list, optional
        ``{name: params}`` (``None`` switches one off) or metric instances; default: the
        protocol's (:data:`arena.metrics.defaults.DEFAULT_METRICS` for experts games).
    checkpoints : sequence of int or "all", optional
        Rounds to snapshot (T is always added), or ``"all"`` for every round (at most
        :data:`~arena.validation.MAX_ALL_CHECKPOINTS`; about :data:`~arena.resources.ROW_BYTES`
        bytes per row in memory, and a grid whose rows cannot fit is refused); default
        :func:`arena.checkpoints.log_grid` with ``per_decade``.
    per_decade : int
        Checkpoints per decade of the default grid (10).
    player_params, adversary_params : mapping, optional
        Constructor parameters (with a registry name) or overrides (with an instance).

        These game parameters (``horizon`` to ``adversary_params``) are the keyword arguments of
        :func:`prepare_game`; the four below are the driver's own.
    trace_path : path, optional
        Also stream the per-round trace of every replicate to this Parquet file (experts:
        ``p_t``, ``l_t``, ``I_t``; OCO: ``w_t``, ``f_t(w_t)`` and the round's data).
    chunk_elements : int
        Bound on R·n·N per chunk buffer (memory vs per-chunk overhead).
    progress : bool
        Show a progress bar over rounds.
    n_jobs : int or "auto", optional
        Threads that share the replicates (:mod:`arena.parallel`): a count, ``-1`` for every
        core, or None / ``"auto"`` (default): ``ARENA_N_JOBS`` if set, else every usable core
        for a game large enough to gain. The rows, the run id and the config are the same for
        every value; a game with one replicate or a trace is played on one thread.

    Returns
    -------
    GameRun
    """
    started = time.perf_counter()
    check_n_jobs(n_jobs)  # refused before any work, as every other game parameter
    checked = check_game(player, adversary, **game)
    blocks, _ = plan_blocks(checked, n_jobs, tracing=trace_path is not None)
    if len(blocks) > 1:
        # the whole game is only checked (its config, run id and rows' constants); each block
        # resets its own components in its own thread
        played = _play_blocks(player, adversary, game, blocks, chunk_elements, progress, checked)
        if played is not None:
            return GameRun(played, checked.config, checked.skipped, time.perf_counter() - started)
        # a block failed: the game is replayed on one thread for the one-thread error (the
        # checked game's own components were never reset nor played)
    # capped once for the resets and the rounds (each caps again only if a library was loaded)
    with blas_threads():
        prepared = reset_game(checked)
        snap_t, snap_vals = _play_rounds(
            prepared, trace_path=trace_path, chunk_elements=chunk_elements, progress=progress
        )
    rows = assemble_rows(
        snap_t, snap_vals, prepared.metrics, prepared.spec, prepared.ids, prepared.constants
    )
    return GameRun(rows, prepared.config, prepared.skipped, time.perf_counter() - started)


def _play_blocks(player, adversary, game, blocks, chunk_elements, progress, whole):
    """Play a game's replicate blocks in threads (:mod:`arena.parallel`); return its rows, or
    None if a block failed.

    Each block is a game of its own (:func:`prepare_game` on its replicates), played in its
    thread in chunks sized for its own replicates where the protocol's rows do not depend on the
    chunk size (:attr:`~arena.protocol.GameProtocol.chunk_invariant`), else on the whole game's
    chunk boundaries; block 0 shows the progress bar. The rows are
    assembled from the blocks' snapshots as the one-thread run assembles them
    (:func:`~arena.results.assemble_rows`), with the whole game's constants and replicate ids.
    """

    chunk_replicates = None if whole.protocol.chunk_invariant else whole.spec.n_replicates

    def play_block(index, ids, halt):
        block = prepare_game(player, adversary, **{**game, "replicates": ids})
        snaps = _play_rounds(
            block,
            chunk_elements=chunk_elements,
            progress=progress and index == 0,
            chunk_replicates=chunk_replicates,
            halt=halt,
            limit_blas=False,
        )
        return (*snaps, block.metrics)

    with blas_threads():  # once, around every thread: threadpoolctl's limits are per process
        played = run_blocks(blocks, play_block)
    if played is None:
        return None
    snap_t, _, metrics = played[0]
    snap_vals = [
        [np.concatenate([b[1][s][m] for b in played], axis=0) for m in range(len(metrics))]
        for s in range(len(snap_t))
    ]
    return assemble_rows(snap_t, snap_vals, metrics, whole.spec, whole.ids, whole.constants)


def _play_rounds(
    game: PreparedGame,
    *,
    trace_path: str | Path | None = None,
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS,
    progress: bool = False,
    chunk_replicates: int | None = None,
    halt: Any = None,
    limit_blas: bool = True,
) -> tuple[list[int], list[list[np.ndarray]]]:
    """Play a prepared game's rounds; return the checkpoints and the metrics' values at each.

    ``chunk_replicates`` sizes the chunks for that many replicates (the block of a split game
    whose protocol is not chunk-invariant plays the whole game's chunk boundaries); ``halt``
    (a ``threading.Event``) ends the game at the next chunk once set (another block failed);
    ``limit_blas`` False leaves the BLAS threads as the caller set them (the split game caps
    them once, around all its threads).
    """
    spec, active, protocol = game.spec, game.metrics, game.protocol
    tune_allocator()
    for m in active:
        m.start(spec)
    stepper = protocol.start(game)
    core = stepper.core
    trace = protocol.trace_writer(Path(trace_path), game) if trace_path is not None else None
    if trace is not None:
        stepper.will_trace()
    width = stepper.round_elements or spec.n_actions
    max_chunk = max(
        min(protocol.min_chunk_rounds, chunk_elements),
        chunk_elements // ((chunk_replicates or spec.n_replicates) * width),
    )
    checkpoint_set = set(game.grid.tolist())
    # metrics that read only the core are read from its snapshots: no block per segment
    core_spans = (
        protocol.chunk_invariant
        and trace is None
        and stepper.plays_core_spans
        and all(map(reads_core_only, active))
    )
    spans = core_spans or (
        protocol.chunk_invariant and stepper.plays_spans and all(map(reads_block_only, active))
    )
    rowwise = [computes_rowwise(m) for m in active]
    snap_t: list[int] = []
    snap_vals: list[list[np.ndarray]] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(
            total=spec.horizon,
            unit="round",
            desc=f"{game.constants['player']} vs {game.constants['adversary']}",
        )
    try:
        with blas_threads() if limit_blas else contextlib.nullcontext():
            for t0, n, ends in _chunks(game.grid.tolist(), max_chunk, spans):
                if halt is not None and halt.is_set():
                    raise Stopped
                raise_if_noted()  # a Ctrl-C deferred while numba compiled, or swallowed
                if core_spans:  # (every metric's advance is Metric's, which does nothing)
                    snapshots = stepper.core_snapshots(t0, n, ends)
                    _read_snapshots(
                        snapshots, active, rowwise, checkpoint_set, game, snap_t, snap_vals
                    )
                    if bar is not None:
                        bar.update(snapshots.ends[-1] - t0 + 1 if snapshots.ends else 0)
                    snapshots.finish()
                    continue
                start = t0
                for end, played in stepper.step_span(t0, n, ends):
                    for m in active:
                        m.advance(played, core)
                    if trace is not None:
                        trace.write(played)
                    if bar is not None:
                        bar.update(end - start + 1)
                    start = end + 1
                    if end in checkpoint_set:
                        snap_t.append(end)
                        vals = [np.asarray(m.values(core), dtype=np.float64) for m in active]
                        _check_values(vals, active, spec, end, game.ids)
                        snap_vals.append(vals)
        raise_if_noted()  # one swallowed in the last chunk: before the trace is committed
    except BaseException:
        if trace is not None:
            trace.abort()
        raise
    finally:
        if bar is not None:
            bar.close()
    if trace is not None:
        trace.commit()
    return snap_t, snap_vals


def _read_snapshots(
    snapshots: CoreSnapshots,
    metrics: list[Metric],
    rowwise: list[bool],
    checkpoints: set[int],
    game: PreparedGame,
    snap_t: list[int],
    snap_vals: list[list[np.ndarray]],
) -> None:
    """Read the metrics at the checkpoints among a span's snapshots (:meth:`Stepper.core_snapshots`)
    and append them to ``snap_t`` and ``snap_vals``, checked checkpoint by checkpoint as a game
    played segment by segment checks them.

    A metric whose values are row by row (:func:`~arena.metric.computes_rowwise`) reads every
    snapshot of the span in one call, on the snapshots stacked as replicates (checkpoint by
    checkpoint, each the game's R replicates); another reads each checkpoint's core. One call
    instead of one per checkpoint: a checkpoint read one by one cost a one-replicate game about
    5.5 µs, 30 to 100 rounds' work.
    """
    spec, ids = game.spec, game.ids
    points = [s for s, end in enumerate(snapshots.ends) if end in checkpoints]
    if not points:
        return
    stacked = snapshots.stacked(points) if any(rowwise) else None
    by_span: list[np.ndarray | None] = []
    n_snap, n_rep = len(points), ids.size
    for m, by_row in zip(metrics, rowwise, strict=True):
        if by_row and stacked is not None:
            values = np.asarray(m.values(stacked), dtype=np.float64)
            if values.ndim != 2 or values.shape[0] != n_snap * n_rep:
                raise ValueError(
                    f"metric {m.name}: values of {n_snap} snapshots of {n_rep} replicates "
                    f"stacked as {n_snap * n_rep} replicates have shape {values.shape}, expected "
                    f"({n_snap * n_rep}, columns) (it declares rowwise_values)"
                )
            # each checkpoint's (R, columns), as its own core gives
            by_span.append(values.reshape(n_snap, n_rep, -1))
        else:
            by_span.append(None)
    if all(v is not None for v in by_span):
        # every metric read in one call: one test of the whole span; the checkpoint-by-checkpoint
        # test below names the first bad value where there is one
        if not any(
            np.isinf(v).any()
            for m, v in zip(metrics, by_span, strict=True)
            if not m.infinite_values
        ):
            for k, s in enumerate(points):
                snap_t.append(snapshots.ends[s])
                snap_vals.append([v[k] for v in by_span])
            return
    for k, s in enumerate(points):
        end = snapshots.ends[s]
        vals = [
            np.asarray(m.values(snapshots.at(s)), dtype=np.float64) if v is None else v[k]
            for m, v in zip(metrics, by_span, strict=True)
        ]
        _check_values(vals, metrics, spec, end, ids)
        snap_t.append(end)
        snap_vals.append(vals)


def _chunks(grid: list[int], max_chunk: int, spans: bool) -> Iterator[tuple[int, int, list[int]]]:
    """The chunks of a game whose checkpoints are ``grid`` (increasing, the last T): each chunk's
    first round, its number of rounds (at most ``max_chunk``) and the rounds its segments end at
    (:meth:`~arena.protocol.Stepper.step_span`).

    With ``spans`` (a chunk-invariant protocol) a chunk runs on across checkpoints, which end its
    segments; otherwise every chunk ends at the next checkpoint, as one segment.

    Examples
    --------
    >>> list(_chunks([1, 2, 5, 9], 4, spans=True))
    [(1, 4, [1, 2, 4]), (5, 4, [5, 8]), (9, 1, [9])]
    >>> list(_chunks([1, 2, 5, 9], 4, spans=False))
    [(1, 1, [1]), (2, 1, [2]), (3, 3, [5]), (6, 4, [9])]
    """
    horizon, t0, k = grid[-1], 1, 0
    while t0 <= horizon:
        if spans:
            last = min(t0 + max_chunk - 1, horizon)
        else:
            last = min(t0 + max_chunk - 1, grid[k])
        ends = []
        while k < len(grid) and grid[k] <= last:
            ends.append(grid[k])
            k += 1
        if not ends or ends[-1] != last:
            ends.append(last)
        yield t0, last - t0 + 1, ends
        t0 = last + 1


def _check_values(
    vals: list[np.ndarray], metrics: list[Metric], spec: GameSpec, t: int, ids: np.ndarray
) -> None:
    """Stop the game before a metric's infinite value at checkpoint ``t`` is written.

    NaN is a metric's "undefined here" (an edge before any weight, an improvement over a base
    learner that made no mistake) and is written; ±inf is an overflow, never a result, unless the
    metric defines it (:attr:`arena.metric.Metric.infinite_values`: ``sketch_error``). One
    ``isfinite`` over R values per metric and checkpoint, and an ``isinf`` where one is not:
    nothing against the rounds.
    """
    for m, v in zip(metrics, vals, strict=True):
        if m.infinite_values:
            continue
        # a few values are tested one by one in Python: numpy's isfinite-and-all costs 1.9 µs
        # against 0.3, at every checkpoint of every metric
        if all(map(math.isfinite, v.flat)) if v.size <= 16 else np.isfinite(v).all():
            continue
        v = v.reshape(v.shape[0], -1)
        bad = np.isinf(v)
        if bad.any():
            r, c = (int(i) for i in np.argwhere(bad)[0])
            metric, param = m.row_keys(spec)[c]
            where = "" if math.isnan(param) else f" (param {param:g})"
            raise GameError(
                f"metric {metric}{where}",
                f"value {float(v[r, c])!r} is not finite: the game's "
                "losses or the player's state overflowed float64",
                round=t,
                replicate=int(ids[r]),
            )


def play(player: Any, adversary: Any, **kwargs: Any) -> pd.DataFrame:
    """Play a game and return its tidy results table (see :func:`run_game` for the arguments).

    Examples
    --------
    >>> from arena.results import SCHEMA
    >>> df = play("hedge", "fair_coin", n_actions=4, horizon=100, replicates=2,
    ...           metrics={"regret": {}})
    >>> list(df.columns) == SCHEMA, df.replicate.nunique(), int(df.t.max())
    (True, 2, 100)
    """
    return run_game(player, adversary, **kwargs).rows


def reference_play(player: Any, adversary: Any, **kwargs: Any) -> pd.DataFrame:
    """Play a game with its protocol's literal per-round loop; return the tidy rows.

    The keyword arguments are those of :func:`prepare_game`. The rows equal
    ``run_game(...).rows`` to 1e-12: the reference loop is the specification the driver's fast
    path reproduces (architecture: fast path and reference).

    Examples
    --------
    >>> kw = dict(n_actions=3, horizon=20, replicates=2, metrics={"regret": {}})
    >>> ref = reference_play("hedge", "greedy", **kw)
    >>> pd.testing.assert_frame_equal(ref, run_game("hedge", "greedy", **kw).rows, atol=1e-12)
    """
    adv = resolve_component("adversary", adversary, kwargs.pop("adversary_params", None))
    plr = resolve_component("player", player, kwargs.pop("player_params", None))
    return protocol_for(game_protocol(plr, adv)).reference_play(plr, adv, **kwargs)
