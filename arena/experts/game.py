"""The experts protocol: full-information prediction with expert advice, played by the driver.

Round t (Luo 2016, §2.1.2): the player commits ``p_t ∈ Δ_N``; the adversary (which may
read ``p_t`` if it declares ``sees_distribution``) reveals ``l_t ∈ [lo, hi]^N``; the learner
suffers the expected loss ``p_t·l_t`` and the realized loss ``l_{t,I_t}`` with ``I_t ~ p_t`` drawn
by the arena from the replicate's own action stream (inverse CDF of a pre-drawn uniform). In the
sleeping / confidence-rated variant the adversary first announces confidences ``I_t ∈ [0, 1]^N``.

Against an oblivious adversary a chunk is one ``losses_block`` call and one ``play_block`` call
(a numba kernel for fast players); against an adaptive one it is a per-round loop, batched over
replicates, that fills the same buffers. Either way :func:`_core_advance` then advances the shared
totals (:class:`~arena.metrics.base.Core`) and the metrics consume the chunk in numba kernels.
:mod:`arena.experts.reference` is the plain per-round loop this protocol must reproduce to 1e-12.
"""

from __future__ import annotations

import math
from functools import cached_property, partial
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
from numba import njit

from arena.errors import ConfigError, GameError
from arena.experts.components import (
    PROB_NEG_TOL,
    PROB_SUM_TOL,
    ExpertsPlayer,
    ObliviousAdversary,
    draws_zero_one_losses,
)
from arena.metrics.base import Block, Core, close_round, keep_replicate_totals
from arena.metrics.defaults import DEFAULT_METRICS
from arena.protocol import CoreSnapshots, GameProtocol, PreparedGame, Stepper
from arena.results import TraceWriter, list_column
from arena.sampling import sample_actions
from arena.spec import GameSpec, History
from arena.streams import generator_handles, jit_disabled, pcg64_fill, pcg64_streams, stream
from arena.validation import Who, call_component, describe, readonly, real_array

# ----------------------------------------------------------------------------------------------
# kernels


@njit(cache=True, nogil=True)
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
    """Advance the shared totals over a chunk and fill the per-round learner losses and actions.

    One pass over each round's ``p_t`` and ``l_t``. The action is the inverse-CDF draw of
    :func:`~arena.sampling.sample_action` (the first i with ``p_1 + … + p_i > u``, else the
    last positive one), taken without a branch: the loop already visits every expert for the
    totals, and an early exit at a random position costs a mispredicted branch a round, as much
    as the rest of the round.
    """
    n_rep, n, n_act = probs.shape
    for r in range(n_rep):
        totals = (learner[r], realized[r], sum_min[r])
        for j in range(n):
            s = 0.0
            m = np.inf
            c = 0.0
            u = uniforms[r, j]
            a = n_act  # no draw yet
            last = 0
            for i in range(n_act):
                li = losses[r, j, i]
                pi = probs[r, j, i]
                s += pi * li
                m = li if li < m else m
                cum_losses[r, i] += li
                last = i if pi > 0.0 else last
                c += pi
                a = i if (u < c) & (a == n_act) else a
            a = last if a == n_act else a
            totals = close_round(losses, expected_out, realized_out, actions, r, j, a, s, m, totals)
        learner[r], realized[r], sum_min[r] = totals


@njit(cache=True, nogil=True, inline="always")
def _checked_rounds(
    probs,
    losses,
    uniforms,
    cum_losses,
    expected_out,
    realized_out,
    actions,
    neg_tol,
    sum_tol,
    r,
    j0,
    j1,
    totals,
):
    """Rounds ``j0 .. j1-1`` of replicate r as :func:`_checked_advance` plays them, the totals
    ``(Σ p_t·l_t, Σ l_{t,I_t}, Σ_t min_i l_{t,i})`` in registers (handed in and returned: written
    to the arrays, they are reloaded after every store); return the first round whose ``p_t``
    fails the check (its totals not added), else ``j1``, and the totals.

    The rounds are counted unsigned: indices that are provably not negative are not checked for
    wraparound, which costs a loop from an offset about 1 ns a round.
    """
    n_act = probs.shape[2]
    for j in range(np.uint64(j0), np.uint64(j1)):
        u = uniforms[r, j]
        s = 0.0
        m = np.inf
        c = 0.0
        low = np.inf  # the least entry
        below = 0  # running sums ≤ u
        for i in range(n_act):
            p = probs[r, j, i]
            li = losses[r, j, i]
            low = p if p < low else low
            s += p * li
            m = li if li < m else m
            cum_losses[r, i] += li
            c += p
            below += c <= u
        if not ((low >= -neg_tol) & (abs(c - 1.0) <= sum_tol)):
            return np.int64(j), totals
        if (low < 0.0) | (below == n_act):
            c = 0.0
            found = n_act  # none yet: the first i with u < p_1 + … + p_i
            last = 0  # the last i with p_i > 0
            for i in range(n_act):
                p = probs[r, j, i]
                last = i if p > 0.0 else last
                c += p
                found = i if (u < c) & (found == n_act) else found
            a = found if found < n_act else last
        else:
            a = below
        totals = close_round(losses, expected_out, realized_out, actions, r, j, a, s, m, totals)
    return np.int64(j1), totals


@njit(cache=True, nogil=True)
def _checked_advance(
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
    neg_tol,
    sum_tol,
):
    """Check ``p_t``, draw ``I_t`` and advance the shared totals in one branch-free pass over a
    chunk; return False at the first bad ``p_t`` (before its totals are added).

    Per round it decides what :func:`arena.experts.game._first_bad_probs` tests (every entry
    finite and ``≥ −neg_tol``, the sequential sum within ``sum_tol`` of 1),
    :func:`arena.sampling.sample_action` returns (the first i whose running sum exceeds the
    uniform, else the last positive entry) and :func:`arena.experts.game._core_advance` adds,
    with the same sums in the same order, so everything agrees to the last bit. The draw is kept
    as selects over all K entries instead of an early exit: its exit point is random, and the
    mispredicted branches cost as much as the rest of the round. On False the caller names the
    earliest bad row with the unfused check; the totals, half advanced, die with the game.

    The pass is bound by its instructions per entry, so each entry costs as few as give the same
    answers:

    * the test of every entry is the least entry ``≥ −neg_tol`` and the sum's test written
      ``not (|c − 1| ≤ sum_tol)``: a NaN or infinite entry makes the running sum NaN or infinite
      (finite entries above ``−neg_tol`` cannot cancel an infinity), which fails the sum's test,
      so the rows accepted are exactly those of the entry-by-entry test;
    * with no negative entry the running sums never fall, so the first one above ``u`` is at the
      count of those ``≤ u``: one compare and add per entry. A row with a (tolerated) negative
      entry, or whose sums never pass ``u`` (the draw falls back on the last positive entry),
      takes the rule as written, in a second loop over the row.
    """
    n_rep, n, _ = probs.shape
    for r in range(n_rep):
        stop, totals = _checked_rounds(
            probs, losses, uniforms, cum_losses, expected_out, realized_out, actions,
            neg_tol, sum_tol, r, 0, n, (learner[r], realized[r], sum_min[r]),
        )  # fmt: skip
        learner[r], realized[r], sum_min[r] = totals
        if stop < n:
            return False
    return True


@njit(cache=True, nogil=True)
def _checked_advance_segments(
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
    neg_tol,
    sum_tol,
    bounds,
    snap_cum,
    snap_totals,
):
    """:func:`_checked_advance` over the segments ``bounds[s] .. bounds[s+1]-1`` of a span, in
    order, keeping the totals at each segment's end: ``snap_cum[s]`` the cumulative losses,
    ``snap_totals[s]`` the learner's expected and realized losses and ``Σ min_i l_{t,i}``.

    Returns the number of segments advanced: all of them, or the index of the first whose
    ``p_t`` fails the check in any replicate (the totals then half advanced, as
    :func:`_checked_advance` leaves them; the snapshots of the segments before it are whole).
    One call for a span instead of one per segment: what the driver's snapshots of a game whose
    metrics read only these totals cost (:meth:`ExpertsStepper.core_snapshots`). Replicate by
    replicate, its totals in registers across the segments.
    """
    n_rep = probs.shape[0]
    done = bounds.size - 1
    for r in range(n_rep):
        totals = (learner[r], realized[r], sum_min[r])
        for s in range(done):
            stop, totals = _checked_rounds(
                probs, losses, uniforms, cum_losses, expected_out, realized_out, actions,
                neg_tol, sum_tol, r, bounds[s], bounds[s + 1], totals,
            )  # fmt: skip
            learner[r], realized[r], sum_min[r] = totals
            if stop < bounds[s + 1]:
                done = s
                break
            keep_replicate_totals(
                s, r, cum_losses, learner, realized, sum_min, snap_cum, snap_totals
            )
    return done


@njit(cache=True, nogil=True)
def _fill_uniforms(handles, rngs, out):
    """Fill row r of ``out`` (R, n) with the next n uniforms of replicate r's action stream.

    The draws are ``Generator.random``'s, bit for bit (the same ``next_double`` of the same bit
    generator, :mod:`arena.streams`), and advance the generators' states in place; one call
    per chunk replaces R Python calls of ``random(out=...)``, a few microseconds each.
    """
    n_rep, n = out.shape
    for r in range(n_rep):
        rng = stream(handles, rngs, r)
        for j in range(n):
            out[r, j] = rng.random()


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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
# the protocol


class ExpertsProtocol(GameProtocol):
    """The experts protocol (and its sleeping / confidence-rated variant) for the driver.

    Examples
    --------
    >>> from arena.protocol import protocol_for
    >>> protocol_for("experts").default_metrics is DEFAULT_METRICS
    True
    """

    default_metrics: ClassVar[dict[str, Any]] = DEFAULT_METRICS
    chunk_invariant: ClassVar[bool] = True
    """The rows do not depend on the chunk size, to the last bit: the stepper and every built-in
    experts and bandit metric add rounds one after the other, and every component must (the
    conformance check ``check_rows_chunk_invariant``). A game split over threads plays each
    block in chunks sized for its own replicates: half the chunks, half the Python under the GIL
    per round with two blocks."""
    reference_loop: ClassVar[str] = "arena.experts.reference:reference_play"
    conformance_checks: ClassVar[str] = "arena.experts.checks:CHECKS"

    def check_pair(self, player: Any, adversary: Any) -> None:
        if not isinstance(player, ExpertsPlayer):
            raise ConfigError(
                describe("player", player),
                "protocol",
                f"adversary {type(adversary).registry_name()} plays the experts protocol; "
                "this player does not",
            )
        if adversary.tags.emits_confidences and not player.tags.supports_confidences:
            raise ConfigError(
                describe("player", player),
                "supports_confidences",
                f"adversary {type(adversary).registry_name()} announces confidences (sleeping "
                "experts) but this player cannot use them",
            )

    def make_spec(
        self, player: Any, adversary: Any, *, horizon: int, n_actions: int | None, ids: np.ndarray
    ) -> tuple[GameSpec, dict[str, Any]]:
        n_act = adversary.resolve_n_actions(n_actions)
        lo, hi = (float(v) for v in adversary.declared_range())
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
            raise ConfigError(
                describe("adversary", adversary), "loss_range", f"invalid ({lo}, {hi})"
            )
        spec = GameSpec(
            self.name,  # experts, or a protocol that plays the experts game (bandit)
            n_act,
            horizon,
            (lo, hi),
            n_replicates=int(ids.size),
            replicate_ids=tuple(ids.tolist()),
        )
        return spec, {"loss_range": [lo, hi]}

    def identity(self, player: Any, adversary: Any, spec: GameSpec) -> tuple[dict, dict]:
        name = type(adversary).registry_name()
        return {
            "adversary": name,
            "params": adversary.cell_params(),  # get_params, but what cannot change the game
            "n_actions": spec.n_actions,
        }, {}

    def start(self, game: PreparedGame) -> ExpertsStepper:
        return ExpertsStepper(game)

    def trace_writer(self, path: Path, game: PreparedGame) -> ExpertsTraceWriter:
        return ExpertsTraceWriter(path, game.ids)


class _Buffers:
    """Chunk buffers kept across the chunks of one game: each role's flat array, grown to the
    largest chunk, handed out as C-contiguous views of the chunk's shape.

    Allocating them afresh per chunk costs page faults each time the allocator gives the memory
    back; the blocks the metrics read hold views that the next chunk overwrites, which the driver
    allows (a block is consumed, metrics and trace, before the next chunk is played).
    """

    def __init__(self) -> None:
        self._flat: dict[str, np.ndarray] = {}
        self._views: dict[tuple[str, tuple[int, ...]], np.ndarray] = {}

    def get(self, role: str, shape: tuple[int, ...], dtype=np.float64) -> np.ndarray:
        # the same view for the same shape: a game's chunks and segments take few shapes
        view = self._views.get((role, shape))
        # (a component may have locked it; a role is asked with one dtype, checked all the same)
        if view is not None and view.flags.writeable and view.dtype == dtype:
            return view
        size = math.prod(shape)
        flat = self._flat.get(role)
        if flat is None or flat.size < size or flat.dtype != dtype:
            # at least doubled up to 2^18 values (2 MiB): the segments between checkpoints grow
            # geometrically, and a buffer grown to each one's size was allocated afresh for
            # nearly every segment; past that, as large as asked (the chunks bound it)
            grown = max(size, 1 << 12 if flat is None else min(2 * flat.size, 1 << 18))
            flat = self._flat[role] = np.empty(grown, dtype=dtype)
            self._views = {key: v for key, v in self._views.items() if key[0] != role}
        if len(self._views) >= 256:  # a grid of many different gaps: keep the cache small
            self._views.clear()
        view = self._views[role, shape] = flat[:size].reshape(shape)
        return view


def _defined_at_or_below(cls: type, name: str, other: str) -> bool:
    """Whether the class of ``cls``'s MRO that defines ``name`` is ``cls`` itself or derives from
    the one that defines ``other`` (that is, ``name`` was written with ``other`` in view)."""
    mro = cls.__mro__
    owner = next(k for k, c in enumerate(mro) if name in c.__dict__)
    other_owner = next(k for k, c in enumerate(mro) if other in c.__dict__)
    return owner <= other_owner


class _CoreAt(Core):
    """The core as it stood at the end of round ``t`` of a span played by
    :meth:`ExpertsStepper.core_snapshots`: the totals are that round's snapshots, and ``p_t`` of the
    round (a fresh array, as the running core's) is read from the span's arrays only if a metric
    asks for it, at the checkpoint, before the stepper plays on."""

    def __init__(self, t, cum_losses, totals, span):
        self.t, self.cum_losses = t, cum_losses
        self.learner, self.realized, self.sum_min = totals
        self._span = span  # (stepper, probs, outputs, the round's index in the span)
        self._last_probs = None

    @property
    def last_probs(self) -> np.ndarray:
        if self._last_probs is None:
            stepper, probs, outputs, j = self._span
            self._last_probs = stepper._last_probs(probs, outputs, j)
        return self._last_probs


class _StackedCores(Core):
    """Some snapshots of a span as the replicates of one core: row ``k·R + r`` is the game's
    replicate r as it stood at the end of round ``t[k·R + r]``, snapshot ``points[k]``
    (:meth:`_SpanSnapshots.stacked`).

    For metrics whose values are computed row by row (:attr:`arena.metric.Metric.rowwise_values`):
    ``t`` is each row's round, and ``last_probs`` is read from the span's arrays only if a
    metric asks for it."""

    def __init__(self, snapshots: _SpanSnapshots, points: list[int]):
        n_rep = snapshots.snap_cum.shape[1]
        ends = np.asarray([snapshots.ends[s] for s in points], dtype=np.int64)
        self.t = np.repeat(ends, n_rep)
        self.cum_losses = snapshots.snap_cum[points].reshape(len(points) * n_rep, -1)
        totals = snapshots.snap_totals[points].transpose(1, 0, 2).reshape(3, -1)
        self.learner, self.realized, self.sum_min = totals
        self._snapshots, self._points = snapshots, points
        self._last_probs = None

    @property
    def last_probs(self) -> np.ndarray:
        if self._last_probs is None:
            snaps = self._snapshots
            rows = [snaps.at(s).last_probs for s in self._points]
            self._last_probs = np.concatenate(rows).reshape(self.cum_losses.shape[0], -1)
        return self._last_probs


class _SpanSnapshots(CoreSnapshots):
    """The totals of a span's segments as :meth:`ExpertsStepper.core_snapshots` kept them:
    ``done`` segments advanced (all, or up to the first whose ``p_t`` failed its check)."""

    def __init__(
        self, stepper, t0, ends, done, bounds, probs, outputs, snap_cum, snap_totals, bad_loss
    ):
        self.stepper, self.t0, self.done, self.bounds = stepper, t0, done, bounds
        self.ends = ends[:done]
        self._all_ends = ends
        self.probs, self.outputs = probs, outputs
        self.snap_cum, self.snap_totals = snap_cum, snap_totals
        self.bad_loss = bad_loss

    def at(self, s: int) -> _CoreAt:
        end = self.ends[s]
        span = self.stepper, self.probs, self.outputs, end - self.t0
        return _CoreAt(end, self.snap_cum[s], self.snap_totals[s], span)

    def stacked(self, points: list[int]) -> _StackedCores:
        return _StackedCores(self, points)

    def finish(self) -> None:
        stepper, ends = self.stepper, self._all_ends
        if self.done < len(ends):  # names the earliest bad p_t of that segment
            a, b = int(self.bounds[self.done]), int(self.bounds[self.done + 1])
            # (a copy for R > 1: the check's kernels take C-contiguous rounds)
            stepper._raise_bad_play(np.ascontiguousarray(self.probs[:, a:b]), self.t0 + a)
        core = stepper.core  # its totals are the last segment's (the kernel advanced them)
        core.t = ends[-1]
        core.last_probs = stepper._last_probs(self.probs, self.outputs, ends[-1] - self.t0)
        if self.bad_loss is not None:
            raise self.bad_loss


class ExpertsStepper(Stepper):
    """Plays an experts game chunk by chunk: the losses, ``p_t``, the draws, the shared totals."""

    def __init__(self, game: PreparedGame):
        self.game = game
        self.player, self.adversary, spec = game.player, game.adversary, game.spec
        self.n_rep, self.n_act = spec.n_replicates, spec.n_actions
        self.lo, self.hi = spec.loss_range
        self.ids = game.ids
        self.core = Core(self.n_rep, self.n_act)
        self.want_means = any("means" in m.requires for m in game.metrics)
        self.want_increments = any(m.reads_increments for m in game.metrics)
        self.sleeping = self.adversary.tags.emits_confidences
        self.observes = self.player.tags.observes_action
        self.oblivious = (
            isinstance(self.adversary, ObliviousAdversary) and self.adversary.tags.oblivious
        )
        self.history = (
            None
            if self.oblivious
            else History(
                self.n_rep,
                self.n_act,
                self.adversary.tags.sees_distribution,
                owner=Who("adversary", self.adversary),
            )
        )
        self._buffers = _Buffers()
        # a span of chunks across checkpoints is played in one call to the adversary and the
        # player against an oblivious adversary (and not in a subclass that plays its chunks
        # its own way)
        spannable = (
            self.oblivious
            and not self.sleeping
            and type(self).step is ExpertsStepper.step
            and type(self)._oblivious_step is ExpertsStepper._oblivious_step
        )
        # its blocks segment by segment only where the segments are views: one replicate
        self.plays_spans = spannable and self.n_rep == 1
        # its totals in one call, for metrics that read nothing else, for any number of
        # replicates: only where the class that last defines how a segment advances also
        # defines how segments do (a subclass that advances its totals its own way must
        # advance segments its own way too) and plays its spans as this class does
        self.plays_core_spans = (
            spannable
            and type(self).step_span is ExpertsStepper.step_span
            and _defined_at_or_below(type(self), "_advance_segments", "_oblivious_advance")
        )
        self._uniform_source: tuple | None = None  # (handles, rngs, pcg64), at the first draw

    @cached_property
    def action_rngs(self) -> list[np.random.Generator]:
        """The replicates' action streams, made at the first read: a game that draws no action
        uniforms (a point-mass bandit player's) never makes them."""
        return self.game.action_rngs

    def _draw_uniforms(self, uniforms: np.ndarray) -> None:
        """Fill ``uniforms`` (R, n) with the replicates' next action uniforms, in place: PCG64
        stepped in the kernel where :func:`~arena.streams.pcg64_streams` allows, else through
        each generator's own ``random`` (the same numbers)."""
        if self._uniform_source is None:
            # the action streams' interface for _fill_uniforms and pcg64_fill: pointers into
            # self.action_rngs, which live as long as this stepper
            rngs = self.action_rngs
            self._uniform_source = (
                generator_handles(rngs),
                rngs if jit_disabled() else None,
                pcg64_streams(rngs),
            )
        handles, rngs, pcg64 = self._uniform_source
        if pcg64:
            pcg64_fill(handles, uniforms)
        else:
            _fill_uniforms(handles, rngs, uniforms)

    def step(self, t0: int, n: int) -> Block:
        if self.oblivious and not self.sleeping:
            return self._oblivious_step(t0, n)
        probs, losses, uniforms, conf = self.play_chunk(t0, n)
        return self.advance(t0, n, probs, losses, uniforms, conf)

    def _span_inputs(self, t0: int, n: int, ends: list[int]):
        """A span's ``p_t``, losses and uniforms, in one call each; the ends it plays and the bad
        loss (None if none) to raise after them.

        The rounds up to the last checkpoint before a bad loss are played first, as in chunks
        ending at checkpoints (a bad ``p_t`` or metric value there is named before it).
        """
        losses, bad_loss = _oblivious_losses(
            self.adversary, t0, n, self.n_rep, self.n_act, self.lo, self.hi, self.ids, defer=True
        )
        if bad_loss is not None:
            ends = [end for end in ends if end < bad_loss.round]
            if not ends:
                raise bad_loss
            n = ends[-1] - t0 + 1
            losses = np.ascontiguousarray(losses[:, :n])  # (a copy for R > 1 only)
        probs, losses, uniforms = self._oblivious_play(t0, n, losses)
        return probs, losses, uniforms, ends, bad_loss

    def step_span(self, t0: int, n: int, ends: list[int]):
        if not self.plays_spans:
            yield from super().step_span(t0, n, ends)
            return
        # one replicate: the losses, uniforms and p_t of the whole span in one call each, the
        # totals and blocks segment by segment (views: one replicate's rounds are contiguous)
        probs, losses, uniforms, ends, bad_loss = self._span_inputs(t0, n, ends)
        n = ends[-1] - t0 + 1
        span_means = []  # the adversary's oracle answers for the chunk it just drew: asked once

        def means(a: int, b: int):
            # asked after the first segment's p_t are checked, as an unsplit chunk asks it
            if not span_means:
                span_means.append(self._means(t0, n))
            return None if span_means[0] is None else span_means[0][:, a:b]

        # the blocks' own arrays for the whole span, each segment's a view (one replicate: its
        # rounds are contiguous), instead of a buffer lookup per array and segment
        outputs = self._outputs(n)
        start = t0
        for end in ends:
            a, b = start - t0, end - t0 + 1
            yield (
                end,
                self._oblivious_advance(
                    start,
                    b - a,
                    probs[:, a:b],
                    losses[:, a:b],
                    None if uniforms is None else uniforms[:, a:b],
                    (lambda a=a, b=b: means(a, b)) if self.want_means else None,
                    _segment(outputs, a, b),
                ),
            )
            start = end + 1
        if bad_loss is not None:
            raise bad_loss

    def core_snapshots(self, t0: int, n: int, ends: list[int]) -> _SpanSnapshots:
        # metrics that read only the totals: the span's p_t, losses and uniforms in one call
        # each (as step_span), its totals in one more that keeps them at each end
        if not self.plays_core_spans:
            raise RuntimeError(f"{type(self).__name__} does not play core spans")
        probs, losses, uniforms, ends, bad_loss = self._span_inputs(t0, n, ends)
        n_seg = len(ends)
        bounds = np.empty(n_seg + 1, dtype=np.int64)
        bounds[0] = 0
        bounds[1:] = ends
        bounds[1:] -= t0 - 1
        outputs = self._outputs(ends[-1] - t0 + 1)
        snap_cum = np.empty((n_seg, self.n_rep, self.n_act))
        snap_totals = np.empty((n_seg, 3, self.n_rep))
        done = self._advance_segments(
            probs, losses, uniforms, outputs, bounds, snap_cum, snap_totals
        )
        return _SpanSnapshots(
            self, t0, ends, done, bounds, probs, outputs, snap_cum, snap_totals, bad_loss
        )

    def _advance_segments(self, probs, losses, uniforms, outputs, bounds, snap_cum, snap_totals):
        """:meth:`core_snapshots`' totals: :func:`_checked_advance_segments` (a subclass that
        advances its totals its own way, as the bandit stepper's arms, overrides it)."""
        core = self.core
        expected, realized, actions, _ = outputs
        return _checked_advance_segments(
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
            PROB_NEG_TOL,
            PROB_SUM_TOL,
            bounds,
            snap_cum,
            snap_totals,
        )

    def _last_probs(self, probs, outputs, j: int) -> np.ndarray:
        """``p_t`` of round ``j`` of a span (fresh: a metric may keep it)."""
        return probs[:, j].copy()

    def _raise_bad_play(self, probs, t0: int) -> None:
        """Name the earliest bad ``p_t`` of rounds ``t0 …`` (``probs``), which the fused check
        refused."""
        _check_probs(self.player, probs, t0, self.ids)
        raise AssertionError("the fused check of p_t and the full check disagree")

    def _oblivious_step(self, t0: int, n: int) -> Block:
        """:meth:`play_chunk` and :meth:`advance` of an oblivious chunk without confidences, on
        buffers kept across chunks: the action uniforms in one numba call, the check of ``p_t``
        fused into the core kernel. The same numbers, to the bit."""
        probs, losses, uniforms = self._oblivious_play(t0, n)
        means_of = (lambda: self._means(t0, n)) if self.want_means else None
        return self._oblivious_advance(t0, n, probs, losses, uniforms, means_of, self._outputs(n))

    def _outputs(self, n: int) -> tuple:
        """The arrays :meth:`_oblivious_advance` fills for ``n`` rounds: ``p_t·l_t``,
        ``l_{t,I_t}`` and ``I_t``, each ``(R, n)``, and the regret increments ``(n, R, N)``
        where a metric reads them (else None); :func:`_segment` takes some of their rounds."""
        buffers, n_rep = self._buffers, self.n_rep
        return (
            buffers.get("expected", (n_rep, n)),
            buffers.get("realized", (n_rep, n)),
            buffers.get("actions", (n_rep, n), np.int64),
            buffers.get("increments", (n, n_rep, self.n_act)) if self.want_increments else None,
        )

    def _oblivious_play(
        self, t0: int, n: int, losses: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """What the player played in an oblivious chunk (its ``p_t``, checked for shape here, as
        probabilities by :meth:`_oblivious_advance`), the validated losses (drawn here unless
        given) and the action uniforms (None where a subclass draws none)."""
        n_rep, n_act, ids = self.n_rep, self.n_act, self.ids
        if losses is None:
            losses = _oblivious_losses(self.adversary, t0, n, n_rep, n_act, self.lo, self.hi, ids)
        uniforms = self._buffers.get("uniforms", (n_rep, n))
        self._draw_uniforms(uniforms)
        # the player is shown read-only views: the metrics read these same arrays, so a player
        # that wrote into its losses would change its own regret (to 0 if it zeroed them); a
        # view costs nothing, the write fails and names the player
        shown_losses, shown_uniforms = readonly(losses), readonly(uniforms)
        probs = _block_probs(
            self.player,
            lambda: self.play_oblivious(shown_losses, shown_uniforms),
            losses.shape,
            t0,
            ids,
        )
        return probs, losses, uniforms

    def _oblivious_advance(self, t0, n, probs, losses, uniforms, means_of, outputs) -> Block:
        """Check rounds ``t0 .. t0+n-1``'s ``p_t``, draw their ``I_t`` and advance the totals;
        return their block (the arrays C-contiguous, ``(R, n, ·)``; ``means_of()`` gives the
        means oracle's block, after the check, None no means; ``outputs`` are
        :meth:`_outputs`' arrays for these rounds)."""
        core = self.core
        expected, realized, actions, increments = outputs
        ok = _checked_advance(
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
            PROB_NEG_TOL,
            PROB_SUM_TOL,
        )
        if not ok:
            self._raise_bad_play(probs, t0)
        means = None if means_of is None else means_of()
        if increments is not None:
            _regret_increments(losses, expected, increments)
        core.t = t0 + n - 1
        core.last_probs = self._last_probs(probs, outputs, n - 1)
        return Block(probs, losses, expected, realized, actions, means, t0, None, increments)

    def play_oblivious(self, losses, uniforms):
        """The player's ``p_t`` for an oblivious chunk without confidences (the bandit stepper
        hands its player the uniforms and, if it fills one, a buffer)."""
        return self.play_block(losses, None, uniforms)

    def _means(self, t0: int, n: int):
        """The adversary's means oracle over the chunk, (R, n, N), when a metric reads it."""
        if not self.want_means:
            return None
        adversary = self.adversary
        # a view, not a copy: constant means broadcast with stride 0 over rounds
        return np.broadcast_to(
            real_array(
                adversary.oracle("means", t0, n),
                Who("adversary", adversary),
                'oracle("means")',
                round=t0,
            ),
            (self.n_rep, n, self.n_act),
        )

    def play_chunk(self, t0: int, n: int):
        """Play rounds ``t0 .. t0+n-1``: return ``p_t``, ``l_t``, the action uniforms and the
        confidences (None unless sleeping), each ``(R, n, ·)``, validated."""
        adversary, n_rep, n_act, ids = self.adversary, self.n_rep, self.n_act, self.ids
        if self.oblivious:
            losses = _oblivious_losses(adversary, t0, n, n_rep, n_act, self.lo, self.hi, ids)
            conf = None
            if self.sleeping:
                conf = _checked_confidences(
                    adversary, adversary.confidences_block(t0, n), (n_rep, n, n_act), t0, ids
                )
            uniforms = np.empty((n_rep, n))
            self._draw_uniforms(uniforms)
            # the player is shown read-only views: the metrics read these same arrays, so a
            # player that wrote into its losses would change its own regret (to 0 if it zeroed
            # them); a view costs nothing, the write fails and names the player
            shown = (readonly(losses), None if conf is None else readonly(conf), readonly(uniforms))
            probs = _block_probs(
                self.player, lambda: self.play_block(*shown), losses.shape, t0, ids
            )
        else:
            probs, losses, uniforms, conf = _adaptive_chunk(self, t0, n)
        _check_probs(self.player, probs, t0, ids, conf)
        return probs, losses, uniforms, conf

    def play_block(self, losses, confidences, uniforms):
        """The player's ``p_t`` for a chunk against an oblivious adversary (its ``play_block``,
        handed the confidences of a sleeping game and the uniforms it asked for)."""
        extra = {}
        if confidences is not None:
            extra["confidences"] = confidences
        if self.observes:
            extra["uniforms"] = uniforms
        return self.player.play_block(losses, **extra)

    def feedback(self, losses_t, actions, probs_t, confidences_t) -> None:
        """Hand round t's feedback to the player in the per-round loop: full information,
        ``l_t`` (read-only), with ``I_t`` to a player that observes it."""
        extra: dict[str, np.ndarray] = {}
        if self.observes:
            extra["actions"] = actions.copy()
        if confidences_t is not None:
            extra["confidences"] = confidences_t
        self.player.update(losses_t, **extra)

    def advance(self, t0, n, probs, losses, uniforms, conf) -> Block:
        """Draw the actions, advance the shared totals and return the chunk's block."""
        core, n_rep, n_act = self.core, self.n_rep, self.n_act
        means = self._means(t0, n)
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
        if self.want_increments:
            increments = np.empty((n, n_rep, n_act))
            _regret_increments(losses, expected, increments)
        core.t = t0 + n - 1
        core.last_probs = probs[:, -1].copy()
        return Block(probs, losses, expected, realized, actions, means, t0, conf, increments)


class ExpertsTraceWriter(TraceWriter):
    """Streams per-round ``p_t``, ``l_t``, ``I_t`` and ``p_t·l_t`` to a Parquet file."""

    def __init__(self, path: Path, replicate_ids: np.ndarray):
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
        super().__init__(path, schema)
        self._ids = replicate_ids

    def columns(self, block: Block) -> list[pa.Array]:
        n_rep, n, _ = block.probs.shape
        return [
            pa.array(np.repeat(self._ids, n)),
            pa.array(np.tile(np.arange(block.t0, block.t0 + n, dtype=np.int64), n_rep)),
            pa.array(block.actions.reshape(-1).astype(np.int64)),
            pa.array(block.expected.reshape(-1)),
            list_column(block.probs),
            list_column(block.losses),
        ]


# ----------------------------------------------------------------------------------------------
# one chunk, validated


def _segment(outputs: tuple, a: int, b: int) -> tuple:
    """Rounds ``a .. b-1`` of :meth:`ExpertsStepper._outputs`' arrays (views; contiguous for one
    replicate)."""
    expected, realized, actions, increments = outputs
    return (
        expected[:, a:b],
        realized[:, a:b],
        actions[:, a:b],
        None if increments is None else increments[a:b],
    )


def _oblivious_losses(adversary, t0, n, n_rep, n_act, lo, hi, ids, *, defer=False):
    """An oblivious adversary's losses of rounds ``t0 .. t0+n-1``, contiguous and checked: a bad
    loss (not finite, outside ``[lo, hi]``) stops the game naming it, or with ``defer`` is
    returned beside them (``(losses, GameError or None)``, to be raised later). Losses that are
    0 or 1 by construction (:func:`~arena.experts.components.zero_one_losses`) in a range that
    holds ``[0, 1]`` are not scanned."""
    who = Who("adversary", adversary)
    raw = call_component(
        "adversary", adversary, "losses_block", t0, adversary.losses_block, t0, n, rounds=n,
        ids=ids, typed=False,
    )  # fmt: skip
    losses = real_array(raw, who, "losses_block", round=t0, replicate=int(ids[0]))
    if losses.shape != (n_rep, n, n_act):
        raise GameError(
            who,
            f"losses_block returned shape {losses.shape}, expected {(n_rep, n, n_act)}",
            round=t0,
            replicate=int(ids[0]),
        )
    losses = np.ascontiguousarray(losses)
    bad = None
    if lo <= 0.0 and hi >= 1.0 and draws_zero_one_losses(adversary):
        return (losses, bad) if defer else losses  # in range by construction
    code, r, j, i = _first_bad_losses(losses, lo, hi)
    if code:
        bad = _bad_loss(who, code, losses[r, j, i], lo, hi, t0 + j, int(ids[r]), i)
        if not defer:
            raise bad
    return (losses, bad) if defer else losses


def _bad_loss(who, code, value, lo, hi, t, replicate, expert) -> GameError:
    what = "is not finite" if code == 1 else f"lies outside the declared range [{lo:g}, {hi:g}]"
    return GameError(
        who, f"loss of expert {expert} = {float(value)!r} {what}", round=t, replicate=replicate
    )


def _block_probs(player, play, shape, t0, ids) -> np.ndarray:
    """Call ``play()`` (the player's ``play_block``) and return its ``p_t``, validated."""
    who = Who("player", player)
    probs = call_component(
        "player", player, "play_block", t0, play, rounds=shape[1], ids=ids, typed=False
    )
    probs = real_array(probs, who, "play_block", round=t0, replicate=int(ids[0]))
    if probs.shape != shape:
        raise GameError(
            who,
            f"play_block returned shape {probs.shape}, expected {shape}",
            round=t0,
            replicate=int(ids[0]),
        )
    return np.ascontiguousarray(probs)


def _checked_confidences(adversary, raw, shape, t0, ids) -> np.ndarray:
    """Return the confidences as a contiguous float array, or stop naming the first bad one."""
    who = Who("adversary", adversary)
    conf = np.ascontiguousarray(
        real_array(raw, who, "confidences", round=t0, replicate=int(ids[0]))
    )
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
                describe("player", player),
                f"p[{i}] = {float(probs[r, j, i])!r} but expert {i} is asleep (confidence 0)",
                round=t0 + j,
                replicate=int(ids[r]),
            )
    code, r, j, i = _first_bad_probs(probs, PROB_NEG_TOL, PROB_SUM_TOL)
    if code == 1:
        raise GameError(
            describe("player", player),
            f"p[{i}] = {probs[r, j, i]!r} is not a probability",
            round=t0 + j,
            replicate=int(ids[r]),
        )
    if code == 2:
        raise GameError(
            describe("player", player),
            f"p sums to {probs[r, j].sum()!r}, not 1",
            round=t0 + j,
            replicate=int(ids[r]),
        )


def _adaptive_chunk(stepper: ExpertsStepper, t0: int, n: int):
    """One chunk against an adaptive adversary: a per-round loop batched over replicates, the
    player's feedback handed by ``stepper.feedback`` (the protocol's information model)."""
    player, adversary, history = stepper.player, stepper.adversary, stepper.history
    n_rep, n_act, ids, lo, hi = stepper.n_rep, stepper.n_act, stepper.ids, stepper.lo, stepper.hi
    action_rngs = stepper.action_rngs
    probs = np.empty((n_rep, n, n_act))
    losses = np.empty((n_rep, n, n_act))
    sleeping = adversary.tags.emits_confidences
    confs = np.empty((n_rep, n, n_act)) if sleeping else None
    uniforms = np.stack([g.random(n) for g in action_rngs])
    actions = np.empty(n_rep, dtype=np.int64)
    who_p, who_a = Who("player", player), Who("adversary", adversary)
    for j in range(n):
        t = t0 + j
        conf = None
        if sleeping:
            conf = _checked_confidences(
                adversary, adversary.confidences(t, history), (n_rep, n_act), t, ids
            )
            confs[:, j] = conf
            conf = confs[:, j]
            conf.flags.writeable = False  # shared with the adversary's record and the block
        predict = player.predict if conf is None else partial(player.predict, confidences=conf)
        p = call_component("player", player, "predict", t, predict, ids=ids, typed=False)
        p = real_array(p, who_p, "predict", round=t, replicate=int(ids[0]))
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
        raw = call_component(
            "adversary", adversary, "losses", t, adversary.losses, t, history, ids=ids, typed=False
        )
        lt = real_array(raw, who_a, "losses", round=t, replicate=int(ids[0]))
        if lt.shape != (n_rep, n_act):
            raise GameError(
                who_a,
                f"losses returned shape {lt.shape}, expected {(n_rep, n_act)}",
                round=t,
                replicate=int(ids[0]),
            )
        code, r, _, i = _first_bad_losses(np.ascontiguousarray(lt)[:, None, :], lo, hi)
        if code:
            raise _bad_loss(who_a, code, lt[r, i], lo, hi, t, int(ids[r]), i)
        probs[:, j] = p
        losses[:, j] = lt
        view = losses[:, j]
        view.flags.writeable = False
        sample_actions(p, uniforms[:, j].copy(), actions)
        call_component(
            "player", player, "update", t, stepper.feedback, view, actions, p, conf, ids=ids,
            typed=False,
        )  # fmt: skip
        history._record(p, lt, actions)
    return probs, losses, uniforms, confs
