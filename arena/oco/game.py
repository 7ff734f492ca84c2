"""The OCO, classification, multiclass and regression protocols, played by the driver
(:mod:`arena.game`).

Round t (see :mod:`arena.oco.components`): features ``x_t`` (prediction protocols), the player's
``w_t ∈ K``, the adversary's loss (possibly reacting to ``w_t``), then the arena evaluates
``f_t(w_t)`` and a subgradient (:func:`arena.oco.losses.feedback`) and the player updates.

Against an oblivious adversary a chunk is one ``data_block`` call and one ``play_block`` call
(numba kernels for the fast players); against an adaptive one a per-round loop batched over
replicates fills the same buffers. The metrics then consume the chunk. Every chunk is validated
(finite data, labels in {−1, +1} in classification and in {0, …, k−1} in multiclass, features of
dimension ``dim/k`` in multiclass, subgradients within the declared bound, points
inside the domain) and a bad value stops the game with a :class:`~arena.errors.GameError` naming
the component, the round and the replicate; results are written only after the last round.
:mod:`arena.oco.reference` is the literal per-round loop this protocol must reproduce to 1e-12.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from arena.errors import ConfigError, GameError
from arena.metric import EVERY_PROTOCOL
from arena.oco.components import (
    INSTANCE_RANKING,
    KESLER,
    LABEL_RANKING,
    MULTICLASS,
    OCO_FAMILY,
    OCOAdversary,
    OCOPlayer,
    feature_dim,
    resolve_dim,
)
from arena.oco.domains import MEMBERSHIP_TOL, Domain
from arena.oco.losses import (
    EXAMPLE_LOSSES,
    INSTANCE_RANKING_LOSSES,
    LABEL_RANKING_LOSSES,
    LOSS_KINDS,
    MAX_RANKING_LABELS,
    MULTICLASS_LOSSES,
    RoundData,
    dense_features,
    evaluate,
    feedback,
    is_sparse,
    prediction_loss,
    sparse_gradient_norms,
)
from arena.oco.metrics import OCO_DEFAULT_METRICS, OCOBlock, OCOCore
from arena.protocol import GameProtocol, PreparedGame, Stepper
from arena.resources import available_memory, size_text, state_bytes
from arena.results import TraceWriter, list_column
from arena.spec import GameSpec
from arena.validation import call_component as _call
from arena.validation import describe, real_array
from arena.validation import first_offender as _first
from arena.validation import readonly as _readonly

MIN_CHUNK_ROUNDS = 16
"""Fewest rounds per chunk (unless ``chunk_elements`` is smaller): memory O(16·R·d) per buffer."""

GRADIENT_TOL = 1e-9
"""Relative slack on the declared gradient bound G (float64 norms are exact to ~1e-15)."""


class OCOProtocol(GameProtocol):
    """The ``oco``, ``classification``, ``multiclass`` and ``regression`` protocols for the driver.

    ``n_actions`` is the dimension d of ``w_t`` (the tidy column ``n_actions`` holds d; in
    ``multiclass`` d = k·d' for k labels and d' features). Its metrics are the registered ones
    that declare its protocol (:func:`arena.metric.metric_for`): ``loss``, ``regret`` and
    ``dynamic_regret`` name the OCO classes of :mod:`arena.oco.metrics` here, the experts ones in
    an experts game; ``bound`` and ``lower_bound`` serve every protocol.

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.oco.testing import ConstantLinear, ZeroPlayer
    >>> run = run_game(ZeroPlayer(), ConstantLinear(), n_actions=2, horizon=10,
    ...                metrics=["loss", "regret"])
    >>> run.rows.groupby("metric").value.last().to_dict()  # regret = ‖Σ g‖ on the unit ball
    {'loss': 0.0, 'regret': 10.0}
    """

    default_metrics: ClassVar[dict[str, Any]] = OCO_DEFAULT_METRICS
    # adversaries and players pay Python overhead per chunk (and per replicate), which would
    # dominate at large R·d with fewer rounds per chunk
    min_chunk_rounds: ClassVar[int] = MIN_CHUNK_ROUNDS
    reference_loop: ClassVar[str] = "arena.oco.reference:reference_play_oco"
    conformance_checks: ClassVar[str] = "arena.oco.checks:CHECKS"

    def check_pair(self, player: Any, adversary: Any) -> None:
        protocol = self.name
        if not isinstance(adversary, OCOAdversary) or protocol not in OCO_FAMILY:
            raise ConfigError(
                describe("adversary", adversary),
                "protocol",
                f"must be an OCOAdversary of a protocol in {sorted(OCO_FAMILY)}",
            )
        if not isinstance(player, OCOPlayer):
            raise ConfigError(
                describe("player", player),
                "protocol",
                f"adversary {type(adversary).registry_name()} plays the {protocol} protocol; "
                f"this player plays the {'/'.join(sorted(player.tags.protocols))} protocol",
            )
        if protocol not in player.tags.protocols:
            raise ConfigError(
                describe("player", player),
                "protocol",
                f"plays {sorted(player.tags.protocols)}, not {protocol} "
                f"(adversary {type(adversary).registry_name()})",
            )

    def make_spec(
        self, player: Any, adversary: Any, *, horizon: int, n_actions: int | None, ids: np.ndarray
    ) -> tuple[GameSpec, dict[str, Any]]:
        protocol = self.name
        who_adv = describe("adversary", adversary)
        dim = resolve_dim(adversary, n_actions, horizon)
        domain = adversary.declared_domain()
        loss = adversary.declared_loss()
        sigma = float(adversary.declared_sigma())
        bound = adversary.gradient_bound()
        if dim < 1:
            raise ConfigError(who_adv, "n_actions", f"dimension must be ≥ 1, got {dim}")
        if not isinstance(domain, Domain):
            raise ConfigError(
                who_adv, "domain", f"declared_domain() must return a Domain, got {domain!r}"
            )
        domain.validate(who_adv)
        if loss not in LOSS_KINDS:
            raise ConfigError(who_adv, "loss", f"must be one of {LOSS_KINDS}, got {loss!r}")
        n_classes = _classes(adversary, protocol, dim, loss, sigma)
        if protocol not in ("oco", *KESLER, INSTANCE_RANKING) and loss not in EXAMPLE_LOSSES:
            raise ConfigError(who_adv, "loss", f"the {protocol} protocol needs an example loss")
        if not (math.isfinite(sigma) and sigma >= 0):
            raise ConfigError(who_adv, "sigma", f"must be finite and ≥ 0, got {sigma}")
        if bound is not None and not (math.isfinite(float(bound)) and float(bound) > 0):
            raise ConfigError(who_adv, "gradient_bound", f"must be finite and > 0, got {bound}")
        who_player = describe("player", player)
        if domain.kind not in player.tags.domains:
            raise ConfigError(
                who_player,
                "domain",
                f"keeps w_t in {sorted(player.tags.domains)}, but adversary "
                f"{type(adversary).registry_name()} declares the domain {domain.kind}",
            )
        if loss not in player.tags.losses:
            raise ConfigError(
                who_player, "loss", f"accepts {sorted(player.tags.losses)} losses, not {loss}"
            )
        sparse = sparse_stream_check(player, adversary, protocol, dim, loss, ids.size)
        spec = GameSpec(
            protocol,
            dim,
            horizon,
            (0.0, math.inf if bound is None else float(bound)),
            n_replicates=int(ids.size),
            dim=dim,
            replicate_ids=tuple(ids.tolist()),
            domain=domain,
            loss=loss,
            sigma=sigma,
            gradient_bound=None if bound is None else float(bound),
            n_classes=n_classes,
            sparse=sparse and bool(player.tags.sparse_input),
        )
        config = {
            "dim": dim,
            "domain": domain.as_dict(),
            "loss": loss,
            "sigma": sigma,
            "gradient_bound": spec.gradient_bound,
        }
        if n_classes is not None:
            config["n_classes"] = n_classes
        if sparse:  # only for sparse streams, so that every other game keeps its run id
            config["sparse"] = True
        return spec, config

    def identity(self, player: Any, adversary: Any, spec: GameSpec) -> tuple[dict, dict]:
        return stream_game_identity(adversary, spec.dim, spec.protocol)

    def start(self, game: PreparedGame) -> OCOStepper:
        return OCOStepper(game)

    def trace_writer(self, path: Path, game: PreparedGame) -> OCOTraceWriter:
        return OCOTraceWriter(path, game.ids, game.spec)


def stream_game_identity(adversary: Any, dim: int, protocol: str) -> tuple[dict, dict]:
    """Return the game key and the cell fields of a game on an OCO adversary's stream.

    The game key is what fixes the examples (the stream's identity, d and the data protocol), so
    every player of any protocol that plays this stream — an OCO learner, a booster — sees the
    same examples replicate by replicate; the cell fields name the adversary and the parameters
    that can change its game (:meth:`arena.components.Adversary.cell_params`).
    """
    stream_name, stream_params = adversary.stream_identity()
    game = {
        "adversary": stream_name,
        "params": stream_params,
        "n_actions": dim,
        "protocol": protocol,
    }
    cell = {
        "adversary": type(adversary).registry_name(),
        "adversary_params": adversary.cell_params(),
    }
    return game, cell


def sparse_stream_check(
    player: Any, adversary: Any, protocol: str, dim: int, loss: str, n_rep: int
) -> bool:
    """Return whether the adversary emits sparse rows; refuse what cannot play them.

    Sparse features need an oblivious stream of the classification or regression protocol with
    an example loss. A player without the tag ``sparse_input`` (a booster, in the boosting
    protocol that hosts these streams) is shown densified rows: the game
    is refused, naming the player, the stream and the memory, when its state
    (:func:`~arena.resources.state_bytes`) and one densified chunk (``R·n·d·8`` bytes, n =
    :data:`MIN_CHUNK_ROUNDS`) do not fit in the memory available.
    """
    if not bool(adversary.sparse_features()):
        return False
    who_adv = describe("adversary", adversary)
    stream = type(adversary).registry_name()
    if protocol not in ("classification", "regression") or loss not in EXAMPLE_LOSSES:
        raise ConfigError(
            who_adv,
            "sparse",
            f"sparse features need the classification or regression protocol with an example "
            f"loss {EXAMPLE_LOSSES}, not {protocol} with {loss}",
        )
    if not adversary.tags.oblivious:
        raise ConfigError(who_adv, "sparse", "sparse features need an oblivious stream")
    if player.tags.sparse_input:
        return True
    dense = n_rep * MIN_CHUNK_ROUNDS * dim * 8
    need = state_bytes(n_rep, dim, MIN_CHUNK_ROUNDS) + dense
    have = available_memory()
    if have is not None and need > have:
        raise ConfigError(
            describe("player", player),
            "sparse_input",
            f"reads dense features only; the sparse stream {stream} (d = {dim}, R = {n_rep}) "
            f"densified needs {size_text(dense)} per chunk of {MIN_CHUNK_ROUNDS} rounds, "
            f"{size_text(need)} with the game's state, and {size_text(have)} are available: "
            "use a player tagged sparse_input, or lower replicates",
        )
    return True


def check_sparse_rows(
    adversary: Any, x: Any, shape: tuple[int, ...], t0: int, ids: np.ndarray
) -> Any:
    """Return a chunk's sparse features after checking them, O(nnz): declared by the adversary
    (``sparse_features()``), of the dense ``shape`` (R, n, d), canonical CSR
    (:meth:`~arena.oco.losses.SparseRows.check`) and finite; else stop the game naming the
    adversary (and the round and replicate of a non-finite value)."""
    problem = None
    if not adversary.sparse_features():
        problem = "returned sparse features but does not declare sparse_features()"
    elif x.shape != shape:
        problem = f"returned x of shape {x.shape}, expected {shape}"
    elif (why := x.check()) is not None:
        problem = f"returned malformed sparse features: {why}"
    if problem:  # described only on failure: a component's repr costs more than the check
        raise GameError(describe("adversary", adversary), problem, round=t0)
    lo, hi = int(x.indptr[0]), int(x.indptr[-1])
    bad = ~np.isfinite(x.values[lo:hi])
    if bad.any():
        row = int(np.searchsorted(x.indptr, lo + int(np.argmax(bad)), side="right")) - 1
        r, j = divmod(row, shape[1])
        raise GameError(
            describe("adversary", adversary),
            "returned a non-finite x",
            round=int(t0 + j),
            replicate=int(ids[r]),
        )
    return x


def _classes(adversary: Any, protocol: str, dim: int, loss: str, sigma: float) -> int | None:
    """Return k of a ``multiclass``, ``label_ranking`` or ``instance_ranking`` game (validated
    against d and the loss); None otherwise."""
    who = describe("adversary", adversary)
    own = {
        MULTICLASS: MULTICLASS_LOSSES,
        LABEL_RANKING: LABEL_RANKING_LOSSES,
        INSTANCE_RANKING: INSTANCE_RANKING_LOSSES,
    }
    if protocol not in own:
        for name, losses in own.items():
            if loss in losses:
                raise ConfigError(who, "loss", f"{loss} is a loss of the {name} protocol only")
        return None
    raw = adversary.declared_classes()
    if isinstance(raw, bool) or not isinstance(raw, int | np.integer) or raw < 2:
        raise ConfigError(
            who, "n_classes", f"declared_classes() must return an integer ≥ 2, got {raw!r}"
        )
    k = int(raw)
    if protocol == LABEL_RANKING and k > MAX_RANKING_LABELS:
        raise ConfigError(
            who, "n_classes", f"label ranking encodes Y_t in a float: k ≤ {MAX_RANKING_LABELS}"
        )
    if dim % k and protocol in KESLER:
        raise ConfigError(
            who, "n_actions", f"the dimension {dim} of w_t is not a multiple of k = {k} labels"
        )
    if loss not in own[protocol]:
        raise ConfigError(who, "loss", f"the {protocol} protocol needs one of {own[protocol]}")
    if sigma:
        raise ConfigError(who, "sigma", f"{protocol} games have σ = 0")
    return k


class OCOStepper(Stepper):
    """Plays an OCO game chunk by chunk: the data, ``w_t``, the losses and the shared totals."""

    def __init__(self, game: PreparedGame):
        self.player, self.adversary, self.spec = game.player, game.adversary, game.spec
        self.core = OCOCore(self.spec.n_replicates, self.spec.dim)
        self.oblivious = bool(self.adversary.tags.oblivious) and _overrides(
            self.adversary, "data_block"
        )
        self.checker = _Checker(self.player, self.adversary, self.spec, game.ids)
        self.predictions = self.oblivious and plays_predictions(self.player, self.spec, game)
        if self.predictions:
            self.core.last_w = None
            self.round_elements = min(self.spec.dim, PREDICTION_ROUND_ELEMENTS)

    def will_trace(self) -> None:
        """The trace records ``w_t``: play through points."""
        if self.predictions:
            self.predictions = False
            self.round_elements = None
            self.core.last_w = np.zeros((self.spec.n_replicates, self.spec.dim))

    def step(self, t0: int, n: int) -> OCOBlock:
        if self.predictions:
            chunk = _prediction_chunk
        else:
            chunk = _oblivious_chunk if self.oblivious else _adaptive_chunk
        block = chunk(self.player, self.adversary, self.spec, self.checker, t0, n)
        core = self.core
        core.learner += block.values.sum(axis=1)
        if self.spec.protocol == "classification":
            margins = block.data.y * block.predictions
            core.mistakes += (margins <= 0.0).sum(axis=1)
        elif self.spec.protocol in KESLER:  # a wrong label, or a ranking mistake (prediction −1)
            core.mistakes += (block.predictions != block.data.y).sum(axis=1)
        core.t = t0 + n - 1
        if block.w is not None:
            core.last_w = block.w[:, -1].copy()
        return block


PREDICTION_ROUND_ELEMENTS = 64
"""Chunk width per round of a game played through predictions (the driver's chunks then hold
``chunk_elements // (R·64)`` rounds: a sparse row's entries, not d, fill the buffers)."""


def plays_predictions(player: Any, spec: GameSpec, game: PreparedGame) -> bool:
    """Return whether an oblivious game is played through predictions (module docstring of
    :mod:`arena.oco.components`): a sparse game with σ = 0 and an example loss, a player that
    declares it after ``reset``, and no active metric that reads points (an OCO metric reads
    them unless it says otherwise; a protocol-generic one, such as the declared bounds, reads no
    block). The driver turns it off when it writes a trace (:meth:`OCOStepper.will_trace`)."""
    if not spec.sparse or spec.sigma or spec.loss not in EXAMPLE_LOSSES:
        return False
    for m in game.metrics:
        generic = getattr(m, "protocols", None) is EVERY_PROTOCOL
        if getattr(m, "reads_points", not generic):
            return False
    return bool(player.plays_predictions())


def _overrides(adversary: OCOAdversary, method: str) -> bool:
    return getattr(type(adversary), method) is not getattr(OCOAdversary, method)


class _Checker:
    """Validates the data, points and subgradients of a chunk; raises :class:`GameError`."""

    def __init__(self, player, adversary, spec: GameSpec, ids: np.ndarray):
        self.player, self.adversary, self.spec, self.ids = player, adversary, spec, ids
        # described once: a component's repr reads its signature (about 0.5 ms), and the checks
        # run every chunk; the parameters do not change during a game
        self.who_adversary = describe("adversary", adversary)
        self.who_player = describe("player", player)

    def _fail(self, kind: str, comp: Any, what: str, t: int, r: int) -> None:
        raise GameError(describe(kind, comp), what, round=int(t), replicate=int(self.ids[r]))

    def data(self, data: RoundData, t0: int, n: int) -> RoundData:
        spec, adv = self.spec, self.adversary
        n_rep, dim = spec.n_replicates, spec.dim
        n_features = feature_dim(spec)
        need = ("g",) if spec.loss == "linear" else ("x", "y")
        fixed = {}
        for name in ("g", "x", "y", "z"):
            arr = getattr(data, name)
            if arr is None:
                if name in need:
                    raise GameError(
                        describe("adversary", adv),
                        f"returned no {name!r} for a {spec.loss} loss",
                        round=t0,
                    )
                fixed[name] = None
                continue
            if name == "x" and is_sparse(arr):
                fixed[name] = self.sparse_rows(arr, (n_rep, n, n_features), t0)
                continue
            arr = real_array(arr, self.who_adversary, f"{name} of its round data", round=t0)
            shape = {"y": (n_rep, n), "x": (n_rep, n, n_features)}.get(name, (n_rep, n, dim))
            if name == "y" and spec.protocol == INSTANCE_RANKING:  # k target scores a round
                shape = (n_rep, n, int(spec.n_classes))
            if arr.shape != shape:
                raise GameError(
                    describe("adversary", adv),
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
        elif spec.protocol == MULTICLASS:
            k = int(spec.n_classes)
            bad = (out.y != np.floor(out.y)) | (out.y < 0) | (out.y > k - 1)
            if bad.any():
                r, j = _first(bad)
                self._fail(
                    "adversary",
                    adv,
                    f"label {float(out.y[r, j])!r} is not in {{0, …, {k - 1}}}",
                    t0 + j,
                    r,
                )
        elif spec.protocol == LABEL_RANKING:
            top = 2.0 ** int(spec.n_classes)
            bad = (out.y != np.floor(out.y)) | (out.y < 0) | (out.y >= top)
            if bad.any():
                r, j = _first(bad)
                self._fail(
                    "adversary",
                    adv,
                    f"relevant set {float(out.y[r, j])!r} is not a code Σ_(r∈Y) 2^r in "
                    f"[0, 2^{int(spec.n_classes)})",
                    t0 + j,
                    r,
                )
        return out

    def sparse_rows(self, x: Any, shape: tuple[int, ...], t0: int) -> Any:
        """Validate sparse features (declared, canonical CSR of the expected shape, finite)."""
        return check_sparse_rows(self.adversary, x, shape, t0, self.ids)

    def predictions(self, pred: Any, t0: int, n: int) -> np.ndarray:
        """Check the predictions (R, n) a player returned from ``play_predictions``: shape and
        finite values (O(R·n))."""
        pred = real_array(pred, self.who_player, "predictions", round=t0)
        shape = (self.spec.n_replicates, n)
        if pred.shape != shape:
            raise GameError(
                describe("player", self.player),
                f"returned predictions of shape {pred.shape}, expected {shape}",
                round=t0,
            )
        bad = ~np.isfinite(pred)
        if bad.any():
            r, j = _first(bad)
            self._fail("player", self.player, "returned a non-finite prediction", t0 + j, r)
        return pred

    def points(self, w: np.ndarray, t0: int) -> np.ndarray:
        spec, player = self.spec, self.player
        w = real_array(w, self.who_player, "points", round=t0)
        n = w.shape[1] if w.ndim == 3 else 0
        shape = (spec.n_replicates, n, spec.dim)
        if w.ndim != 3 or w.shape != shape:
            raise GameError(
                describe("player", player),
                f"returned points of shape {w.shape}, expected {shape}",
                round=t0,
            )
        # one pass, no (R, n, d) mask: a sum of finite values is finite unless it overflows,
        # and only then (or on a real inf/nan) is the elementwise scan run
        with np.errstate(over="ignore", invalid="ignore"):
            suspect = not math.isfinite(float(np.add.reduce(w, axis=None)))
        if suspect:
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

    def finite_losses(self, values: np.ndarray, grads: np.ndarray, t0: int) -> None:
        """Stop the game at the first round whose loss ``f_t(w_t)`` or subgradient overflowed.

        Data and points are finite (checked before), yet ``⟨w_t, x_t⟩`` or its square can
        exceed float64: the arena computed that loss, so the game stops there instead of writing
        inf losses, regrets and a player's update from them. ``values`` (R, n), ``grads``
        (R, n, d).
        """
        bad = ~np.isfinite(values) | ~np.isfinite(grads).all(axis=-1)
        if bad.any():
            r, j = _first(bad)
            value = float(values[r, j])
            what = f"= {value!r}" if not math.isfinite(value) else "has a non-finite subgradient"
            self._fail(
                "adversary",
                self.adversary,
                f"the loss f_t(w_t) of player {type(self.player).registry_name()} {what}: "
                "its data and w_t overflow float64 (rescale the data, or bound the domain)",
                t0 + j,
                r,
            )

    def gradients(self, grads: np.ndarray, t0: int) -> None:
        if self.spec.gradient_bound is not None:
            self.gradient_norms(np.linalg.norm(grads, axis=-1), t0)

    def gradient_norms(self, norms: np.ndarray, t0: int) -> None:
        """Stop the game at the first subgradient norm (R, n) above the declared bound."""
        g_bound = self.spec.gradient_bound
        if g_bound is None:
            return
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


def _evaluate_block(spec: GameSpec, checker: _Checker, w: np.ndarray, data: RoundData, t0: int):
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
        values, grads, predictions, dloss = evaluate(spec.loss, spec.sigma, w, data)
    if grads is None:  # sparse features: the subgradients dloss·x (+ σ(w − z)) stay implicit
        norms = sparse_gradient_norms(dloss, data, spec.sigma, w)
        checker.finite_losses(values, norms[..., None], t0)
        checker.gradient_norms(norms, t0)
        return OCOBlock(w, values, None, data, predictions, t0, dloss)
    checker.finite_losses(values, grads, t0)
    checker.gradients(grads, t0)
    return OCOBlock(w, values, grads, data, predictions, t0, dloss)


def shown_data(data: RoundData, spec: GameSpec) -> RoundData:
    """Return a chunk's data as the player sees it: read-only, and with dense features unless
    the player reads sparse rows (``spec.sparse``)."""
    x = data.x
    if is_sparse(x):
        x = x.readonly() if spec.sparse else x.densify()
    fields = data._replace(x=x)
    return RoundData(*(None if a is None else a if is_sparse(a) else _readonly(a) for a in fields))


def _oblivious_chunk(player, adversary, spec, checker, t0, n) -> OCOBlock:
    raw = _call("adversary", adversary, "data_block", t0, adversary.data_block, t0, n, rounds=n)
    data = checker.data(raw, t0, n)
    shown = shown_data(data, spec)
    w = _call("player", player, "play_block", t0, player.play_block, shown, spec, rounds=n)
    w = checker.points(w, t0)
    return _evaluate_block(spec, checker, w, data, t0)


def _prediction_chunk(player, adversary, spec, checker, t0, n) -> OCOBlock:
    """A chunk of a game played through predictions: the player returns ``⟨w_t, x_t⟩`` (R, n),
    the arena evaluates the losses from them, and the player's next point is checked once."""
    raw = _call("adversary", adversary, "data_block", t0, adversary.data_block, t0, n, rounds=n)
    data = checker.data(raw, t0, n)
    shown = shown_data(data, spec)
    pred = _call(
        "player", player, "play_predictions", t0, player.play_predictions, shown, spec, rounds=n
    )
    pred = checker.predictions(pred, t0, n)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
        values, dloss = prediction_loss(spec.loss, pred, data.y)
    norms = np.abs(dloss) * np.sqrt(data.x.row_norms_sq())
    checker.finite_losses(values, norms[..., None], t0)
    checker.gradient_norms(norms, t0)
    point = _call("player", player, "point", t0 + n, player.point)
    checker.points(np.asarray(point)[:, None, :], t0 + n)  # w_{t0+n}: finite, in the domain
    return OCOBlock(None, values, None, data, pred, t0, dloss)


def _adaptive_chunk(player, adversary, spec, checker, t0, n) -> OCOBlock:
    n_rep, dim, n_features = spec.n_replicates, spec.dim, feature_dim(spec)
    w_all = np.empty((n_rep, n, dim))
    parts: dict[str, list] = {"g": [], "x": [], "y": [], "z": []}
    for j in range(n):
        t = t0 + j
        x = _call("adversary", adversary, "features", t, adversary.features, t)
        if x is not None:
            x = real_array(x, describe("adversary", adversary), "features", round=t)
            if x.shape != (n_rep, n_features):
                raise GameError(
                    describe("adversary", adversary),
                    f"features returned shape {x.shape}, expected {(n_rep, n_features)}",
                    round=t,
                )
            x = _readonly(x.copy())
        w = _call("player", player, "predict", t, player.predict, x)
        w = real_array(w, describe("player", player), "predict", round=t)
        w = checker.points(w[:, None, :], t)[:, 0]
        rd = _call("adversary", adversary, "reveal", t, adversary.reveal, t, _readonly(w.copy()))
        block_rd = RoundData(*(None if a is None else np.asarray(a)[:, None] for a in rd))
        if x is not None and rd.x is None:
            block_rd = block_rd._replace(x=x[:, None])
        data = checker.data(block_rd, t, 1)
        if x is not None and not np.array_equal(data.x[:, 0], x):
            raise GameError(
                describe("adversary", adversary),
                "reveal returned features that differ from those shown before predicting",
                round=t,
            )
        rd = data.round(0)
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
            fb = feedback(
                spec.loss,
                spec.sigma,
                w,
                RoundData(*(None if a is None else _readonly(a) for a in rd)),
            )
        checker.finite_losses(np.asarray(fb.value)[:, None], fb.grad[:, None], t)
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


class OCOTraceWriter(TraceWriter):
    """Streams per-round ``w_t``, ``f_t(w_t)`` and the round's data to a Parquet file."""

    def __init__(self, path: Path, replicate_ids: np.ndarray, spec: GameSpec):
        fields = [
            ("replicate", pa.int64()),
            ("t", pa.int64()),
            ("value", pa.float64()),
            ("w", pa.list_(pa.float64())),
        ]
        if spec.loss == "linear":
            fields.append(("g", pa.list_(pa.float64())))
        else:
            scores = spec.protocol == INSTANCE_RANKING  # y_t ∈ ℝ^k: a list per round
            fields += [("x", pa.list_(pa.float64()))]
            fields += [("y", pa.list_(pa.float64()) if scores else pa.float64())]
            fields.append(("prediction", pa.float64()))
        super().__init__(path, pa.schema(fields))
        self._ids = replicate_ids

    def columns(self, block: OCOBlock) -> list[pa.Array]:
        n_rep, n, _ = block.w.shape
        cols = [
            pa.array(np.repeat(self._ids, n)),
            pa.array(np.tile(np.arange(block.t0, block.t0 + n, dtype=np.int64), n_rep)),
            pa.array(block.values.reshape(-1)),
            list_column(block.w),
        ]
        if block.data.g is not None and "g" in self.schema.names:
            cols.append(list_column(block.data.g))
        else:
            cols += [
                list_column(dense_features(block.data.x)),
                list_column(block.data.y)
                if block.data.y.ndim == 3
                else pa.array(block.data.y.reshape(-1)),
                pa.array(block.predictions.reshape(-1)),
            ]
        return cols
