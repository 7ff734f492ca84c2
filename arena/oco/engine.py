"""The engine of the OCO, classification and regression protocols: R replicates per call.

Round t (see :mod:`arena.oco.protocol`): features ``x_t`` (prediction protocols), the player's
``w_t ∈ K``, the adversary's loss (possibly reacting to ``w_t``), then the arena evaluates
``f_t(w_t)`` and a subgradient (:func:`arena.oco.losses.feedback`) and the player updates.

Against an oblivious adversary a chunk is one ``data_block`` call and one ``play_block`` call
(numba kernels for the fast players); against an adaptive one a per-round loop batched over
replicates fills the same buffers. The metrics then consume the chunk. Every chunk is validated
(finite data, labels in {−1, +1} in classification, subgradients within the declared bound, points
inside the domain) and a bad value stops the game with a :class:`~arena.errors.GameError` naming
the component, the round and the replicate; results are written only after the last round.
:mod:`arena.oco.reference` is the literal per-round loop this engine must reproduce to 1e-12.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from arena import registry
from arena.base import canonical_json
from arena.engine import (
    DEFAULT_CHUNK_ELEMENTS,
    MAX_HORIZON,
    GameRun,
    PreparedGame,
    _assemble,
    _check_int,
    _describe,
    _digest,
    _replicate_ids,
    adversary_name_of,
    checkpoint_grid,
    resolve_component,
)
from arena.errors import ArenaError, ConfigError, GameError
from arena.metrics.base import Metric
from arena.metrics.builtin import Bound, LowerBound
from arena.metrics.oco import OCO_DEFAULT_METRICS, OCO_METRICS, OCOBlock, OCOCore, OCOMetric
from arena.oco.domains import MEMBERSHIP_TOL, Domain
from arena.oco.losses import EXAMPLE_LOSSES, LOSS_KINDS, RoundData, evaluate, feedback
from arena.oco.protocol import OCO_PROTOCOLS, OCOAdversary, OCOPlayer, resolve_dim
from arena.seeding import replicate_streams
from arena.spec import GameSpec

MIN_CHUNK_ROUNDS = 16
"""Fewest rounds per chunk (unless ``chunk_elements`` is smaller): memory O(16·R·d) per buffer."""

GRADIENT_TOL = 1e-9
"""Relative slack on the declared gradient bound G (float64 norms are exact to ~1e-15)."""


def resolve_oco_metrics(metrics: Any) -> tuple[list[Metric], dict[str, str]]:
    """Build the metrics of an OCO game; return them and those skipped (with the reason).

    Names in :data:`arena.metrics.oco.OCO_METRICS` take the OCO implementation (``loss``,
    ``regret`` and ``dynamic_regret`` share their names with the experts metrics); ``bound`` and
    ``lower_bound`` are shared; other registered metrics run only if they are OCO metrics.
    """
    if metrics is None:
        metrics = OCO_DEFAULT_METRICS
    out: list[Metric] = []
    skipped: dict[str, str] = {}

    def add(name: str, params: dict) -> None:
        if name in OCO_METRICS:
            cls = OCO_METRICS[name]
        elif name in ("bound", "lower_bound"):
            cls = Bound if name == "bound" else LowerBound
        else:
            cls = registry.load("metric", name)
            if not issubclass(cls, OCOMetric):
                skipped[name] = "defined for the experts protocol only"
                return
        try:
            out.append(cls(**params))
        except TypeError as exc:
            raise ConfigError(f"metric {name}", "params", str(exc)) from exc

    if isinstance(metrics, Mapping):
        for name, params in metrics.items():
            if params is None or params is False:
                continue
            params = dict(params) if params is not True else {}
            if not params.pop("enabled", True):
                continue
            add(str(name), params)
    else:
        for m in metrics:
            if isinstance(m, str):
                add(m, {})
            elif isinstance(m, OCOMetric | Bound | LowerBound):
                out.append(m)
            elif m.name in OCO_METRICS:
                add(m.name, {})
            else:
                skipped[m.name] = "defined for the experts protocol only"
    names = [m.name for m in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ConfigError("metrics", sorted(dup)[0], "listed twice")
    return out, skipped


def prepare_oco_game(
    player: OCOPlayer | str,
    adversary: OCOAdversary | str,
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
    """Validate an OCO game, derive the seeds, clone and reset the components.

    ``n_actions`` is the dimension d (the tidy column ``n_actions`` holds d). Every invalid input
    raises :class:`~arena.errors.ConfigError` here, before any round runs.
    """
    player = resolve_component("player", player, player_params)
    adversary = resolve_component("adversary", adversary, adversary_params)
    if not isinstance(adversary, OCOAdversary) or adversary.tags.protocol not in OCO_PROTOCOLS:
        raise ConfigError(
            _describe("adversary", adversary),
            "protocol",
            f"must be an OCOAdversary of a protocol in {sorted(OCO_PROTOCOLS)}",
        )
    protocol = adversary.tags.protocol
    if not isinstance(player, OCOPlayer):
        raise ConfigError(
            _describe("player", player),
            "protocol",
            f"adversary {adversary_name_of(adversary)} plays the {protocol} protocol; "
            "this player plays the experts protocol",
        )
    if protocol not in player.tags.protocols:
        raise ConfigError(
            _describe("player", player),
            "protocol",
            f"plays {sorted(player.tags.protocols)}, not {protocol} "
            f"(adversary {adversary_name_of(adversary)})",
        )
    horizon = _check_int("game", "horizon", horizon, 1)
    if horizon > MAX_HORIZON:
        raise ConfigError("game", "horizon", f"must be ≤ {MAX_HORIZON}")
    seed = _check_int("game", "seed", seed, 0)
    ids = _replicate_ids(replicates)
    if n_actions is not None:
        n_actions = _check_int("game", "n_actions", n_actions, 1)
    player, adversary = player.clone(), adversary.clone()
    who_adv = _describe("adversary", adversary)
    try:
        dim = resolve_dim(adversary, n_actions, horizon)
        domain = adversary.declared_domain()
        loss = adversary.declared_loss()
        sigma = float(adversary.declared_sigma())
        bound = adversary.gradient_bound()
    except ArenaError:
        raise
    except (ValueError, TypeError) as exc:
        raise ConfigError(who_adv, "parameters", str(exc)) from exc
    if dim < 1:
        raise ConfigError(who_adv, "n_actions", f"dimension must be ≥ 1, got {dim}")
    if not isinstance(domain, Domain):
        raise ConfigError(
            who_adv, "domain", f"declared_domain() must return a Domain, got {domain!r}"
        )
    domain.validate(who_adv)
    if loss not in LOSS_KINDS:
        raise ConfigError(who_adv, "loss", f"must be one of {LOSS_KINDS}, got {loss!r}")
    if protocol != "oco" and loss not in EXAMPLE_LOSSES:
        raise ConfigError(who_adv, "loss", f"the {protocol} protocol needs an example loss")
    if not (math.isfinite(sigma) and sigma >= 0):
        raise ConfigError(who_adv, "sigma", f"must be finite and ≥ 0, got {sigma}")
    if bound is not None and not (math.isfinite(float(bound)) and float(bound) > 0):
        raise ConfigError(who_adv, "gradient_bound", f"must be finite and > 0, got {bound}")
    who_player = _describe("player", player)
    if domain.kind not in player.tags.domains:
        raise ConfigError(
            who_player,
            "domain",
            f"keeps w_t in {sorted(player.tags.domains)}, but adversary "
            f"{adversary_name_of(adversary)} declares the domain {domain.kind}",
        )
    if loss not in player.tags.losses:
        raise ConfigError(
            who_player, "loss", f"accepts {sorted(player.tags.losses)} losses, not {loss}"
        )
    n_rep = int(ids.size)
    spec = GameSpec(
        protocol,
        dim,
        horizon,
        (0.0, math.inf if bound is None else float(bound)),
        n_replicates=n_rep,
        dim=dim,
        replicate_ids=tuple(ids.tolist()),
        domain=domain,
        loss=loss,
        sigma=sigma,
        gradient_bound=None if bound is None else float(bound),
    )

    metric_objs, skipped = resolve_oco_metrics(metrics)
    active: list[Metric] = []
    for m in metric_objs:
        reason = m.applicable(player, adversary)
        if reason is None and isinstance(m, OCOMetric):
            m.param_values(spec)
            reason = m.game_reason(spec)
        if reason:
            skipped[m.name] = reason
            continue
        m.param_values(spec)
        active.append(m)
    if not active:
        raise ConfigError("metrics", "metrics", "no metric left to compute")

    grid = checkpoint_grid(horizon, checkpoints, per_decade)

    player_name, adversary_name = type(player).registry_name(), type(adversary).registry_name()
    stream_name, stream_params = adversary.stream_identity()
    game_key = canonical_json(
        {
            "adversary": stream_name,
            "params": stream_params,
            "n_actions": dim,
            "protocol": protocol,
        }
    )
    cell_key = canonical_json(
        {
            "player": player_name,
            "player_params": player.get_params(),
            "game": game_key,
            "adversary": adversary_name,
            "adversary_params": adversary.get_params(),
            "horizon": horizon,
            "protocol": protocol,
        }
    )
    config = {
        "cell_key": cell_key,
        "player": player_name,
        "player_params": player.get_params(),
        "adversary": adversary_name,
        "adversary_params": adversary.get_params(),
        "protocol": protocol,
        "n_actions": dim,
        "dim": dim,
        "domain": domain.as_dict(),
        "loss": loss,
        "sigma": sigma,
        "gradient_bound": spec.gradient_bound,
        "horizon": horizon,
        "seed": seed,
        "replicates": ids.tolist(),
        "metrics": {m.name: m.get_params() for m in active},
        "checkpoints": grid.tolist(),
    }
    run_id = _digest(canonical_json({k: v for k, v in config.items() if k != "replicates"}), 16)
    cell_id = _digest(cell_key, 12)
    config["run_id"], config["cell"] = run_id, cell_id

    streams = [replicate_streams(seed, game_key, cell_key, int(r)) for r in ids]
    for kind, comp, rngs in (
        ("adversary", adversary, [s[0] for s in streams]),
        ("player", player, [s[2] for s in streams]),
    ):
        if getattr(comp.tags, "needs_horizon", False) and spec.horizon is None:
            raise ConfigError(_describe(kind, comp), "horizon", "this component needs the horizon")
        try:
            comp.reset(spec, rngs)
        except ArenaError:
            raise
        except (ValueError, TypeError, KeyError) as exc:
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
        "protocol": protocol,
        "n_actions": dim,
        "horizon": horizon,
        "seed": seed,
    }
    return PreparedGame(player, adversary, spec, active, skipped, grid, ids, [], config, constants)


def run_oco_game(
    player: OCOPlayer | str,
    adversary: OCOAdversary | str,
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
    """Play R replicates of an OCO / classification / regression game; return the tidy rows.

    The arguments are those of :func:`arena.engine.run_game` (which dispatches here when the
    adversary plays an OCO protocol); ``n_actions`` is the dimension d, ``metrics`` defaults to
    :data:`arena.metrics.oco.OCO_DEFAULT_METRICS`, and ``trace_path`` streams the per-round
    ``w_t``, ``f_t(w_t)`` and data to Parquet.

    Examples
    --------
    >>> from arena.oco.testing import ConstantLinear, ZeroPlayer
    >>> run = run_oco_game(ZeroPlayer(), ConstantLinear(), n_actions=2, horizon=10,
    ...                    metrics=["loss", "regret"])
    >>> run.rows.groupby("metric").value.last().to_dict()  # regret = ‖Σ g‖ on the unit ball
    {'loss': 0.0, 'regret': 10.0}
    """
    started = time.perf_counter()
    game = prepare_oco_game(
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
    grid, ids = game.grid, game.ids
    n_rep, dim, horizon = spec.n_replicates, spec.dim, spec.horizon
    for m in active:
        m.start(spec)
    core = OCOCore(n_rep, dim)
    oblivious = bool(adversary.tags.oblivious) and _overrides(adversary, "data_block")
    # at least MIN_CHUNK_ROUNDS rounds per chunk: adversaries and players pay Python overhead per
    # chunk (and per replicate), which would dominate at large R·d
    max_chunk = max(min(MIN_CHUNK_ROUNDS, chunk_elements), chunk_elements // (n_rep * dim))
    checkpoint_set = set(grid.tolist())
    snap_t: list[int] = []
    snap_vals: list[list[np.ndarray]] = []
    trace = _OCOTraceWriter(Path(trace_path), ids, spec) if trace_path is not None else None
    checker = _Checker(player, adversary, spec, ids)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(
            total=horizon,
            unit="round",
            desc=f"{game.constants['player']} vs {game.constants['adversary']}",
        )
    try:
        t0 = 1
        for stop in grid.tolist():
            while t0 <= stop:
                n = min(max_chunk, stop - t0 + 1)
                if oblivious:
                    block = _oblivious_chunk(player, adversary, spec, checker, t0, n)
                else:
                    block = _adaptive_chunk(player, adversary, spec, checker, t0, n)
                core.learner += block.values.sum(axis=1)
                if spec.protocol == "classification":
                    margins = block.data.y * block.predictions
                    core.mistakes += (margins <= 0.0).sum(axis=1)
                core.t = t0 + n - 1
                core.last_w = block.w[:, -1].copy()
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


def _overrides(adversary: OCOAdversary, method: str) -> bool:
    return getattr(type(adversary), method) is not getattr(OCOAdversary, method)


class _Checker:
    """Validates the data, points and subgradients of a chunk; raises :class:`GameError`."""

    def __init__(self, player, adversary, spec: GameSpec, ids: np.ndarray):
        self.player, self.adversary, self.spec, self.ids = player, adversary, spec, ids

    def _fail(self, kind: str, comp: Any, what: str, t: int, r: int) -> None:
        raise GameError(_describe(kind, comp), what, round=int(t), replicate=int(self.ids[r]))

    def data(self, data: RoundData, t0: int, n: int) -> RoundData:
        spec, adv = self.spec, self.adversary
        n_rep, dim = spec.n_replicates, spec.dim
        need = ("g",) if spec.loss == "linear" else ("x", "y")
        fixed = {}
        for name in ("g", "x", "y", "z"):
            arr = getattr(data, name)
            if arr is None:
                if name in need:
                    raise GameError(
                        _describe("adversary", adv),
                        f"returned no {name!r} for a {spec.loss} loss",
                        round=t0,
                    )
                fixed[name] = None
                continue
            arr = np.asarray(arr, dtype=np.float64)
            shape = (n_rep, n) if name == "y" else (n_rep, n, dim)
            if arr.shape != shape:
                raise GameError(
                    _describe("adversary", adv),
                    f"returned {name} of shape {arr.shape}, expected {shape}",
                    round=t0,
                )
            bad = ~np.isfinite(arr)
            if bad.any():
                r, j = _first(bad)
                self._fail("adversary", adv, f"returned a non-finite {name}", t0 + j, r)
            fixed[name] = arr
        out = RoundData(**fixed)
        if spec.protocol == "classification":
            bad = (out.y != 1.0) & (out.y != -1.0)
            if bad.any():
                r, j = _first(bad)
                self._fail("adversary", adv, f"label {out.y[r, j]!r} is not ±1", t0 + j, r)
        return out

    def points(self, w: np.ndarray, t0: int) -> np.ndarray:
        spec, player = self.spec, self.player
        w = np.asarray(w, dtype=np.float64)
        n = w.shape[1] if w.ndim == 3 else 0
        shape = (spec.n_replicates, n, spec.dim)
        if w.ndim != 3 or w.shape != shape:
            raise GameError(
                _describe("player", player),
                f"returned points of shape {w.shape}, expected {shape}",
                round=t0,
            )
        bad = ~np.isfinite(w)
        if bad.any():
            r, j = _first(bad)
            self._fail("player", player, "returned a non-finite w_t", t0 + j, r)
        dom = spec.domain
        if dom.bounded:
            scale = max(1.0, dom.radius if dom.kind != "simplex" else 1.0)
            bad = dom.violation(w) > MEMBERSHIP_TOL * scale
            if bad.any():
                r, j = _first(bad)
                self._fail(
                    "player",
                    player,
                    f"played w_t outside the {dom.kind} domain (radius {dom.radius}) by "
                    f"{float(dom.violation(w)[r, j]):.3g}",
                    t0 + j,
                    r,
                )
        return w

    def gradients(self, grads: np.ndarray, t0: int) -> None:
        g_bound = self.spec.gradient_bound
        if g_bound is None:
            return
        norms = np.linalg.norm(grads, axis=-1)
        bad = norms > g_bound * (1.0 + GRADIENT_TOL) + 1e-12
        if bad.any():
            r, j = _first(bad)
            self._fail(
                "adversary",
                self.adversary,
                f"subgradient norm {float(norms[r, j]):.6g} exceeds the declared bound "
                f"gradient_bound={g_bound}",
                t0 + j,
                r,
            )


def _first(mask: np.ndarray) -> tuple[int, int]:
    """Return (replicate, round) of the earliest True: least round, then least replicate."""
    flat = mask.reshape(mask.shape[0], mask.shape[1], -1).any(axis=2)
    rounds = flat.any(axis=0)
    j = int(np.argmax(rounds))
    r = int(np.argmax(flat[:, j]))
    return r, j


def _call(kind: str, comp: Any, what: str, t0: int, fn, *args):
    try:
        return fn(*args)
    except ArenaError:
        raise
    except Exception as exc:
        raise GameError(
            _describe(kind, comp), f"{what} failed: {type(exc).__name__}: {exc}", round=t0
        ) from exc


def _evaluate_block(spec: GameSpec, checker: _Checker, w: np.ndarray, data: RoundData, t0: int):
    values, grads, predictions, _ = evaluate(spec.loss, spec.sigma, w, data)
    checker.gradients(grads, t0)
    return OCOBlock(w, values, grads, data, predictions, t0)


def _oblivious_chunk(player, adversary, spec, checker, t0, n) -> OCOBlock:
    raw = _call("adversary", adversary, "data_block", t0, adversary.data_block, t0, n)
    data = checker.data(raw, t0, n)
    shown = RoundData(*(None if a is None else _readonly(a) for a in data))
    w = _call("player", player, "play_block", t0, player.play_block, shown, spec)
    w = checker.points(w, t0)
    return _evaluate_block(spec, checker, w, data, t0)


def _adaptive_chunk(player, adversary, spec, checker, t0, n) -> OCOBlock:
    n_rep, dim = spec.n_replicates, spec.dim
    w_all = np.empty((n_rep, n, dim))
    parts: dict[str, list] = {"g": [], "x": [], "y": [], "z": []}
    for j in range(n):
        t = t0 + j
        x = _call("adversary", adversary, "features", t, adversary.features, t)
        if x is not None:
            x = np.asarray(x, dtype=np.float64)
            if x.shape != (n_rep, dim):
                raise GameError(
                    _describe("adversary", adversary),
                    f"features returned shape {x.shape}, expected {(n_rep, dim)}",
                    round=t,
                )
            x = _readonly(x.copy())
        w = _call("player", player, "predict", t, player.predict, x)
        w = checker.points(np.asarray(w, dtype=np.float64)[:, None, :], t)[:, 0]
        rd = _call("adversary", adversary, "reveal", t, adversary.reveal, t, _readonly(w.copy()))
        block_rd = RoundData(*(None if a is None else np.asarray(a)[:, None] for a in rd))
        if x is not None and rd.x is None:
            block_rd = block_rd._replace(x=x[:, None])
        data = checker.data(block_rd, t, 1)
        if x is not None and not np.array_equal(data.x[:, 0], x):
            raise GameError(
                _describe("adversary", adversary),
                "reveal returned features that differ from those shown before predicting",
                round=t,
            )
        rd = data.round(0)
        fb = feedback(
            spec.loss, spec.sigma, w, RoundData(*(None if a is None else _readonly(a) for a in rd))
        )
        checker.gradients(fb.grad[:, None], t)
        _call("player", player, "update", t, player.update, fb)
        w_all[:, j] = w
        for name in parts:
            parts[name].append(getattr(rd, name))
    stacked = {
        k: (None if any(a is None for a in v) else np.stack(v, axis=1)) for k, v in parts.items()
    }
    data = RoundData(**stacked)
    return _evaluate_block(spec, checker, w_all, data, t0)


def _readonly(a: np.ndarray) -> np.ndarray:
    v = np.asarray(a).view()
    v.flags.writeable = False
    return v


class _OCOTraceWriter:
    """Streams per-round ``w_t``, ``f_t(w_t)`` and the round's data to a Parquet file."""

    def __init__(self, path: Path, replicate_ids: np.ndarray, spec: GameSpec):
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._pa = pa
        self.path = Path(path)
        self.tmp = self.path.with_name(f".{self.path.name}.tmp")
        fields = [
            ("replicate", pa.int64()),
            ("t", pa.int64()),
            ("value", pa.float64()),
            ("w", pa.list_(pa.float64())),
        ]
        if spec.loss == "linear":
            fields.append(("g", pa.list_(pa.float64())))
        else:
            fields += [("x", pa.list_(pa.float64())), ("y", pa.float64())]
            fields.append(("prediction", pa.float64()))
        self._schema = pa.schema(fields)
        self._writer = pq.ParquetWriter(self.tmp, self._schema)
        self._ids = replicate_ids

    def _lists(self, arr: np.ndarray):
        pa = self._pa
        n_rep, n, dim = arr.shape
        offsets = np.arange(0, n_rep * n * dim + 1, dim, dtype=np.int32)
        return pa.ListArray.from_arrays(offsets, np.ascontiguousarray(arr).reshape(-1))

    def write(self, block: OCOBlock) -> None:
        pa = self._pa
        n_rep, n, _ = block.w.shape
        cols = [
            pa.array(np.repeat(self._ids, n)),
            pa.array(np.tile(np.arange(block.t0, block.t0 + n, dtype=np.int64), n_rep)),
            pa.array(block.values.reshape(-1)),
            self._lists(block.w),
        ]
        if block.data.g is not None and "g" in self._schema.names:
            cols.append(self._lists(block.data.g))
        else:
            cols += [
                self._lists(block.data.x),
                pa.array(block.data.y.reshape(-1)),
                pa.array(block.predictions.reshape(-1)),
            ]
        self._writer.write_table(pa.Table.from_arrays(cols, schema=self._schema))

    def commit(self) -> None:
        self._writer.close()
        self.tmp.replace(self.path)

    def abort(self) -> None:
        self._writer.close()
        self.tmp.unlink(missing_ok=True)
