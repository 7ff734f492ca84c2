"""The boosting protocol: online boosters and their weak learners, played by the driver.

Round t (:mod:`arena.boosting.components`): the data adversary shows ``x_t``, the booster predicts
``ŷ_t`` from its weak learners, the arena reveals ``y_t`` and charges ``ℓ(ŷ_t, y_t)``, and the
booster feeds its learners. A game is a boosting game when its player plays the boosting
protocol and its adversary a ``classification`` or ``regression`` stream
(:attr:`BoostingProtocol.hosts`, :func:`arena.protocol.game_protocol`), so every stream adversary of
those protocols is a boosting adversary, and ``arena run player=online_bbm
adversary=dataset_stream`` needs no new option.

The game key is the hosted game's (the stream's identity, d and the hosted protocol): a booster
sees the examples an OCO learner sees on the same adversary and replicate, so a report pairs it
with a linear learner on common random numbers. Beside the booster, the stepper trains the
protocol's own **base learner**: a one-lane copy of the booster's weak learner fed every example
with weight 1, on its own stream, when a metric reads it (``base_mistakes``, ``base_loss``,
``improvement``: the relative improvement the sources report, Luo 2016, Tables 3.2–3.3).

Losses: ``mistakes`` counts ``y_t·ŷ_t ≤ 0`` (classification); ``loss`` is the adversary's declared
example loss of the prediction (:func:`arena.oco.losses.prediction_loss`: logistic, hinge or
squared of the margin in classification, squared or absolute in regression). Boosting games need
an oblivious stream (the adversary serves ``data_block``); every chunk is validated (finite data,
labels ±1 in classification, predictions finite and, in classification, in [−1, 1] when the
booster declares labels) and a bad value stops the game with a :class:`~arena.errors.GameError`
naming the component, the round and the replicate. :mod:`arena.boosting.reference` is the literal
per-round loop this protocol must reproduce to 1e-12.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
from numba import njit

from arena.boosting.components import TASKS, Booster, check_task
from arena.boosting.metrics import BoostingBlock, BoostingCore
from arena.errors import ConfigError, GameError
from arena.oco.components import OCOAdversary, resolve_dim
from arena.oco.game import check_sparse_rows, sparse_stream_check, stream_game_identity
from arena.oco.losses import EXAMPLE_LOSSES, RoundData, is_sparse, prediction_loss
from arena.protocol import GameProtocol, PreparedGame, Stepper
from arena.results import TraceWriter, list_column
from arena.spec import GameSpec
from arena.validation import Who, describe, real_array
from arena.validation import call_component as _call
from arena.validation import first_offender as _first
from arena.validation import readonly as _readonly

MIN_CHUNK_ROUNDS = 16
"""Fewest rounds per chunk: the booster and its learners pay Python overhead per round anyway."""

BOOSTING_DEFAULT_METRICS: dict[str, Any] = {
    "mistakes": {},
    "loss": {},
    "base_mistakes": {},
    "base_loss": {},
    "improvement": {},
    "learners_used": {},
    "weighted_edge": {},
    "test_error": {},
    "bound": {},
    "lower_bound": {},
}
"""The metrics of a boosting game that names none (each skipped where it does not apply)."""


class BoostingProtocol(GameProtocol):
    """The ``boosting`` protocol for the driver: boosters on classification / regression streams.

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.boosting.testing import MajorityVote, ThresholdStream
    >>> run = run_game(MajorityVote(n_learners=3), ThresholdStream(), n_actions=2,
    ...                horizon=50, metrics=["mistakes", "base_mistakes"])
    >>> run.config["protocol"], run.config["task"]
    ('boosting', 'classification')
    """

    default_metrics: ClassVar[dict[str, Any]] = BOOSTING_DEFAULT_METRICS
    hosts: ClassVar[frozenset[str]] = frozenset(TASKS)
    min_chunk_rounds: ClassVar[int] = MIN_CHUNK_ROUNDS
    reference_loop: ClassVar[str] = "arena.boosting.reference:reference_play_boosting"
    conformance_checks: ClassVar[str] = "arena.boosting.checks:CHECKS"

    def check_pair(self, player: Any, adversary: Any) -> None:
        if not isinstance(adversary, OCOAdversary) or adversary.tags.protocol not in TASKS:
            raise ConfigError(
                describe("adversary", adversary),
                "protocol",
                f"plays the {adversary.tags.protocol} protocol; the boosting protocol plays "
                f"{'/'.join(TASKS)} streams",
            )
        if not isinstance(player, Booster):
            raise ConfigError(
                describe("player", player),
                "protocol",
                f"the boosting protocol needs a booster; this one plays "
                f"{sorted(player.tags.protocols)}",
            )
        if not (adversary.tags.oblivious and _serves_blocks(adversary)):
            raise ConfigError(
                describe("adversary", adversary),
                "protocol",
                "boosting games need an oblivious stream that serves data_block",
            )
        task = adversary.tags.protocol
        if task not in type(player).tasks:
            raise ConfigError(
                describe("player", player),
                "protocol",
                f"boosts {'/'.join(sorted(type(player).tasks))} learners, not {task} "
                f"(adversary {type(adversary).registry_name()})",
            )

    def make_spec(
        self, player: Any, adversary: Any, *, horizon: int, n_actions: int | None, ids: np.ndarray
    ) -> tuple[GameSpec, dict[str, Any]]:
        who = describe("adversary", adversary)
        dim = resolve_dim(adversary, n_actions, horizon)
        if dim < 1:
            raise ConfigError(who, "n_actions", f"dimension must be ≥ 1, got {dim}")
        loss = adversary.declared_loss()
        if loss not in EXAMPLE_LOSSES:
            raise ConfigError(who, "loss", f"boosting needs an example loss {EXAMPLE_LOSSES}")
        task = adversary.tags.protocol
        spec = GameSpec(
            "boosting",
            dim,
            horizon,
            (0.0, math.inf),
            n_replicates=int(ids.size),
            dim=dim,
            replicate_ids=tuple(ids.tolist()),
            domain=adversary.declared_domain(),
            loss=loss,
            task=task,
        )
        check_task(player, spec)
        config = {"dim": dim, "loss": loss, "task": task}
        # a booster tagged sparse_input reads the chunks' CSR rows (its compiled lanes in
        # O(nnz)); any other sees each chunk densified (or the game is refused when that does
        # not fit in memory)
        if sparse_stream_check(player, adversary, task, dim, loss, int(ids.size)):
            config["sparse"] = True
        return spec, config

    def identity(self, player: Any, adversary: Any, spec: GameSpec) -> tuple[dict, dict]:
        # the hosted game's key: the examples an OCO learner sees on this adversary
        return stream_game_identity(adversary, spec.dim, spec.task)

    def start(self, game: PreparedGame) -> BoostingStepper:
        return BoostingStepper(game)

    def trace_writer(self, path: Path, game: PreparedGame) -> BoostingTraceWriter:
        return BoostingTraceWriter(path, game.ids)


@njit(cache=True, nogil=True)
def _add_by_round(total, values):
    """``total[r] += values[r, j]`` for j = 0, 1, … in order: the per-round sums, compiled."""
    for r in range(values.shape[0]):
        acc = total[r]
        for j in range(values.shape[1]):
            acc += values[r, j]
        total[r] = acc


def _serves_blocks(adversary: OCOAdversary) -> bool:
    return type(adversary).data_block is not OCOAdversary.data_block


class BoostingStepper(Stepper):
    """Plays a boosting game chunk by chunk: the data, the booster's block, the base learner."""

    def __init__(self, game: PreparedGame):
        self.player, self.adversary, self.spec, self.ids = (
            game.player,
            game.adversary,
            game.spec,
            game.ids,
        )
        self.core = BoostingCore(self.spec.n_replicates)
        self.base = None
        if any(getattr(m, "reads_base", False) for m in game.metrics):
            self.base = _call(
                "player",
                self.player,
                "base_learner",
                1,
                self.player.base_learner,
                self.spec,
            )

    def _fail(self, kind: str, comp: Any, what: str, t: int, r: int) -> None:
        raise GameError(describe(kind, comp), what, round=int(t), replicate=int(self.ids[r]))

    def data(self, t0: int, n: int) -> tuple[Any, np.ndarray]:
        """The chunk's validated examples ``x`` (R, n, d) and labels ``y`` (R, n); a sparse
        chunk stays :class:`~arena.oco.losses.SparseRows` for a booster tagged
        ``sparse_input``."""
        adv, spec = self.adversary, self.spec
        raw = _call("adversary", adv, "data_block", t0, adv.data_block, t0, n, rounds=n)
        if not isinstance(raw, RoundData) or raw.x is None or raw.y is None:
            raise GameError(describe("adversary", adv), "returned no examples (x, y)", round=t0)
        x = raw.x
        sparse = None
        if is_sparse(x):  # checked in O(nnz); densified for a booster without sparse_input
            x = check_sparse_rows(adv, x, (spec.n_replicates, n, spec.dim), t0, self.ids)
            if self.player.tags.sparse_input:
                sparse, x = x, np.zeros((spec.n_replicates, n, 0))
            else:
                x = x.densify()
        who = Who("adversary", adv)  # rendered only in an error: a repr costs ~1 ms a chunk
        x = real_array(x, who, "x of its round data", round=t0)
        y = real_array(raw.y, who, "y of its round data", round=t0)
        n_rep, dim = spec.n_replicates, spec.dim
        x_shape = (n_rep, n, dim) if sparse is None else (n_rep, n, 0)
        for name, arr, shape in (("x", x, x_shape), ("y", y, (n_rep, n))):
            if arr.shape != shape:
                raise GameError(
                    describe("adversary", adv),
                    f"returned {name} of shape {arr.shape}, expected {shape}",
                    round=t0,
                )
        bad = ~np.isfinite(x).all(axis=2) | ~np.isfinite(y)
        if bad.any():
            r, j = _first(bad)
            self._fail("adversary", adv, "returned a non-finite example", t0 + j, r)
        if spec.task == "classification":
            bad = (y != 1.0) & (y != -1.0)
            if bad.any():
                r, j = _first(bad)
                self._fail("adversary", adv, f"label {float(y[r, j])!r} is not ±1", t0 + j, r)
        return (x if sparse is None else sparse), y

    def predictions(self, raw: Any, t0: int, n: int) -> np.ndarray:
        """The booster's validated predictions (R, n)."""
        player = self.player
        pred = real_array(raw, Who("player", player), "play_block", round=t0)
        shape = (self.spec.n_replicates, n)
        if pred.shape != shape:
            raise GameError(
                describe("player", player),
                f"returned predictions of shape {pred.shape}, expected {shape}",
                round=t0,
            )
        bad = ~np.isfinite(pred)
        if bad.any():
            r, j = _first(bad)
            self._fail("player", player, "predicted a non-finite ŷ_t", t0 + j, r)
        return pred

    def losses(self, who: Any, pred: np.ndarray, y: np.ndarray, t0: int) -> np.ndarray:
        """The example losses ``ℓ(ŷ_t, y_t)`` (R, n) of finite predictions, or stop the game at
        the first that overflowed (a squared loss of ŷ_t ≈ 1e155), naming who predicted it."""
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
            values, _ = prediction_loss(self.spec.loss, pred, y)
        bad = ~np.isfinite(values)
        if bad.any():
            r, j = _first(bad)
            kind = "player" if who is self.player else "weak learner"
            self._fail(
                kind,
                who,
                f"the {self.spec.loss} loss of its prediction {float(pred[r, j])!r} is "
                f"{float(values[r, j])!r}, not finite",
                t0 + j,
                r,
            )
        return values

    def base_block(self, x: np.ndarray, y: np.ndarray, t0: int) -> np.ndarray:
        """Train the base learner on the chunk, predicting before each update; (R, n)."""
        base, n_rep, n = self.base, y.shape[0], y.shape[1]
        out = np.empty((n_rep, n))
        ones = np.ones((n_rep, 1))
        who = f"weak learner {base.registry_name()} (the base learner of {self.player.label()})"
        for j in range(n):
            p = real_array(base.predict(x[:, j]), who, "predict", round=t0 + j)
            if p.shape != (n_rep, 1) or not np.isfinite(p).all():
                raise GameError(who, f"predict returned {p.shape} or non-finite", round=t0 + j)
            out[:, j] = p[:, 0]
            base.update(x[:, j], y[:, j, None], ones)
        return out

    def step(self, t0: int, n: int) -> BoostingBlock:
        x, y = self.data(t0, n)
        x, y = (x.readonly() if is_sparse(x) else _readonly(x)), _readonly(y)
        raw = _call("player", self.player, "play_block", t0, self.player.play_block, x, y, rounds=n)
        pred = self.predictions(raw, t0, n)
        values = self.losses(self.player, pred, y, t0)
        base_pred = base_values = None
        if self.base is not None and is_sparse(x):  # the base learner reads dense rows
            x = _readonly(x.densify())
        if self.base is not None:
            base_pred = self.base_block(x, y, t0)
            base_values = self.losses(self.base, base_pred, y, t0)
        core = self.core
        # round by round, so the totals are the same to the last bit however rounds are chunked
        _add_by_round(core.loss, values)
        if base_values is not None:
            _add_by_round(core.base_loss, base_values)
        if self.spec.task == "classification":
            core.mistakes += (y * pred <= 0.0).sum(axis=1)
            if base_pred is not None:
                core.base_mistakes += (y * base_pred <= 0.0).sum(axis=1)
        core.t = t0 + n - 1
        return BoostingBlock(x, y, pred, values, base_pred, base_values, t0)


class BoostingTraceWriter(TraceWriter):
    """Streams per-round ``x_t``, ``y_t``, ``ŷ_t`` and ``ℓ(ŷ_t, y_t)`` to a Parquet file."""

    def __init__(self, path: Path, replicate_ids: np.ndarray):
        fields = [
            ("replicate", pa.int64()),
            ("t", pa.int64()),
            ("x", pa.list_(pa.float64())),
            ("y", pa.float64()),
            ("prediction", pa.float64()),
            ("value", pa.float64()),
        ]
        super().__init__(path, pa.schema(fields))
        self._ids = replicate_ids

    def columns(self, block: BoostingBlock) -> list[pa.Array]:
        n_rep, n = block.y.shape
        return [
            pa.array(np.repeat(self._ids, n)),
            pa.array(np.tile(np.arange(block.t0, block.t0 + n, dtype=np.int64), n_rep)),
            list_column(block.x.densify() if is_sparse(block.x) else block.x),
            pa.array(block.y.reshape(-1)),
            pa.array(block.predictions.reshape(-1)),
            pa.array(block.values.reshape(-1)),
        ]
