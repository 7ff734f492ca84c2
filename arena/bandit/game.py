"""The bandit protocol: the experts game under partial information, played by the driver.

Round t (Bubeck & Cesa-Bianchi 2012, §3): the player commits ``p_t ∈ Δ_K``; the adversary (an
experts adversary, unchanged; an adaptive one may read ``p_t`` if it declares
``sees_distribution``) fixes ``l_t ∈ [lo, hi]^K``; the arena draws ``I_t ~ p_t`` by inverse CDF
from a uniform of the replicate's action stream, exactly as the experts protocol draws its
realized action; the player observes ``I_t``, ``l_{t,I_t}`` and ``p_t`` only.

A game is a bandit game when its player plays the bandit protocol and its adversary the experts
one (:func:`arena.protocol.game_protocol`, :attr:`BanditProtocol.hosts`). The game key is the
experts game's (adversary, parameters, K), so the losses and the action uniforms are those the same
adversary and replicate give an experts player: common random numbers across the two protocols,
and the price of bandit feedback is a paired comparison. The arena knows ``l_t``, so every experts
metric that reads ``p_t·l_t`` is exact (same block, same core kernel); the bandit metrics
(:mod:`arena.bandit.metrics`) add arm pulls and the pseudo-regret per arm.

Against an oblivious adversary a chunk is one ``losses_block`` call, one numba call that draws
the action uniforms from the replicates' streams, one ``play_block`` call (a numba kernel for
fast players, which draws ``I_t`` with the arena's own :func:`~arena.sampling.sample_action` and
reads only ``l_{t,I_t}``; it fills the stepper's ``p_t`` buffer when it takes ``out``) and one
kernel that checks ``p_t``, draws ``I_t`` and advances the shared totals in the same pass
(:func:`_checked_advance`; a bad ``p_t`` is then named by the experts protocol's check, as before).
The chunk buffers are kept across chunks. Against an adaptive adversary a chunk is a per-round
loop batched over replicates in which ``update`` receives the observed losses alone.
:mod:`arena.bandit.reference` is the literal per-round loop this protocol must reproduce to 1e-12.
"""

from __future__ import annotations

import inspect
import math
from typing import Any, ClassVar

import numpy as np
from numba import njit

from arena.bandit.components import BanditPlayer
from arena.bandit.streams import generator_handles, jit_disabled, stream
from arena.components import Adversary
from arena.errors import ConfigError
from arena.experts.components import PROB_NEG_TOL, PROB_SUM_TOL
from arena.experts.game import (
    ExpertsProtocol,
    ExpertsStepper,
    _block_probs,
    _check_probs,
    _oblivious_losses,
    _regret_increments,
)
from arena.metrics.base import Block
from arena.protocol import PreparedGame
from arena.validation import Who, describe, readonly, real_array

HOSTED = frozenset({"experts"})
"""The adversaries' protocols a bandit game accepts: every experts adversary is a bandit one."""


class BanditProtocol(ExpertsProtocol):
    """The bandit protocol for the driver: experts adversaries, players that see ``l_{t,I_t}``.

    Examples
    --------
    >>> from arena.game import run_game
    >>> run = run_game("exp3", "bernoulli", n_actions=3, horizon=100, replicates=2,
    ...                metrics=["regret", "arm_pulls"])
    >>> run.config["protocol"], sorted(run.rows.metric.unique())
    ('bandit', ['arm_pulls', 'regret'])

    Notes
    -----
    The game description, the identity (the experts game's key: the same losses and action
    uniforms as an experts player's), the default metrics and the trace writer are the experts
    protocol's; what differs is who may play, which metrics apply, and the stepper's feedback.
    """

    hosts: ClassVar[frozenset[str]] = HOSTED
    reference_loop: ClassVar[str] = "arena.bandit.reference:reference_play"
    conformance_checks: ClassVar[str] = "arena.bandit.checks:CHECKS"

    def check_pair(self, player: Any, adversary: Any) -> None:
        if not isinstance(adversary, Adversary) or adversary.tags.protocol not in HOSTED | {
            "bandit"
        }:
            raise ConfigError(
                describe("adversary", adversary),
                "protocol",
                f"plays the {adversary.tags.protocol} protocol; the bandit protocol plays experts "
                "adversaries",
            )
        if not isinstance(player, BanditPlayer):
            raise ConfigError(
                describe("player", player),
                "protocol",
                f"the bandit protocol needs a bandit player; this one plays "
                f"{sorted(player.tags.protocols)}",
            )
        if adversary.tags.emits_confidences:
            raise ConfigError(
                describe("adversary", adversary),
                "emits_confidences",
                "sleeping / confidence-rated adversaries are not played in the bandit protocol",
            )

    def start(self, game: PreparedGame) -> BanditStepper:
        return BanditStepper(game)


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

    Per round it computes what :func:`arena.experts.game._first_bad_probs` tests (every entry
    finite and ``≥ −neg_tol``, the sequential sum within ``sum_tol`` of 1),
    :func:`arena.sampling.sample_action` returns (the first i whose running sum exceeds the
    uniform, else the last positive entry) and :func:`arena.experts.game._core_advance` adds,
    with the same sums in the same order, so everything agrees to the last bit. The draw is kept
    as selects over all K entries instead of an early exit: its exit point is random, and the
    mispredicted branches cost as much as the rest of the round. On False the caller names the
    earliest bad row with the unfused check; the totals, half advanced, die with the game.
    """
    n_rep, n, n_act = probs.shape
    for r in range(n_rep):
        for j in range(n):
            u = uniforms[r, j]
            s = 0.0
            m = np.inf
            c = 0.0
            bad = 0
            found = n_act  # none yet: the first i with u < p_1 + … + p_i
            last = 0  # the last i with p_i > 0
            for i in range(n_act):
                p = probs[r, j, i]
                li = losses[r, j, i]
                # the test of _count_outside: NaN fails it, and p − p is NaN for ±inf
                bad += not ((p >= -neg_tol) & (p - p == 0.0))
                s += p * li
                m = li if li < m else m
                cum_losses[r, i] += li
                last = i if p > 0.0 else last
                c += p
                found = i if (u < c) & (found == n_act) else found
            if bad or abs(c - 1.0) > sum_tol:
                return False
            a = found if found < n_act else last
            actions[r, j] = a
            lr = losses[r, j, a]
            expected_out[r, j] = s
            realized_out[r, j] = lr
            learner[r] += s
            realized[r] += lr
            sum_min[r] += m
    return True


@njit(cache=True, nogil=True)
def _fill_uniforms(handles, rngs, out):
    """Fill row r of ``out`` (R, n) with the next n uniforms of replicate r's action stream.

    The draws are ``Generator.random``'s, bit for bit (the same ``next_double`` of the same bit
    generator, :mod:`arena.bandit.streams`), and advance the generators' states in place; one call
    per chunk replaces R Python calls of ``random(out=...)``, a few microseconds each.
    """
    n_rep, n = out.shape
    for r in range(n_rep):
        rng = stream(handles, rngs, r)
        for j in range(n):
            out[r, j] = rng.random()


class _Buffers:
    """Chunk buffers kept across the chunks of one game: each role's flat array, grown to the
    largest chunk, handed out as C-contiguous views of the chunk's shape.

    Allocating them afresh per chunk costs page faults each time the allocator gives the memory
    back; the blocks the metrics read hold views that the next chunk overwrites, which the driver
    allows (a block is consumed, metrics and trace, before the next chunk is played).
    """

    def __init__(self) -> None:
        self._flat: dict[str, np.ndarray] = {}

    def get(self, role: str, shape: tuple[int, ...], dtype=np.float64) -> np.ndarray:
        size = math.prod(shape)
        flat = self._flat.get(role)
        if flat is None or flat.size < size:
            flat = self._flat[role] = np.empty(size, dtype=dtype)
        return flat[:size].reshape(shape)


class BanditStepper(ExpertsStepper):
    """Plays a bandit game chunk by chunk: the experts stepper (same losses, uniforms, totals and
    block), with the bandit player's information model — its ``play_block`` gets the uniforms
    the arena draws ``I_t`` from, and its ``update`` only ``I_t``, ``l_{t,I_t}`` and ``p_t``."""

    def __init__(self, game: PreparedGame):
        super().__init__(game)
        self._buffers = _Buffers()
        # a player that declares it fills ``out`` writes p_t into the stepper's buffer (unless a
        # subclass overrode play_block without the parameter)
        self._fills_out = bool(getattr(type(self.player), "play_block_out", False)) and (
            "out" in inspect.signature(self.player.play_block).parameters
        )
        # the action streams' interface for _fill_uniforms: pointers into self.action_rngs,
        # which live as long as this stepper
        self._handles = generator_handles(self.action_rngs)
        self._rngs = self.action_rngs if jit_disabled() else None

    def step(self, t0: int, n: int) -> Block:
        if not self.oblivious:
            return super().step(t0, n)
        # the oblivious chunk of ExpertsStepper.play_chunk and .advance (no confidences: the
        # protocol refuses sleeping adversaries), on buffers kept across chunks, with the check
        # of p_t fused into the core kernel
        n_rep, n_act, ids, buffers = self.n_rep, self.n_act, self.ids, self._buffers
        losses = _oblivious_losses(self.adversary, t0, n, n_rep, n_act, self.lo, self.hi, ids)
        uniforms = buffers.get("uniforms", (n_rep, n))
        _fill_uniforms(self._handles, self._rngs, uniforms)
        shown_uniforms = readonly(uniforms)
        shown_losses = readonly(losses)
        player = self.player
        if self._fills_out:
            out = buffers.get("probs", (n_rep, n, n_act))

            def play():
                return player.play_block(shown_losses, shown_uniforms, out=out)

        else:

            def play():
                return player.play_block(shown_losses, shown_uniforms)

        probs = _block_probs(player, play, losses.shape, t0, ids)
        core = self.core
        expected = buffers.get("expected", (n_rep, n))
        realized = buffers.get("realized", (n_rep, n))
        actions = buffers.get("actions", (n_rep, n), np.int64)
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
            _check_probs(player, probs, t0, ids)  # names the earliest bad p_t and raises
            raise AssertionError("the fused check of p_t and the full check disagree")
        means = None
        if self.want_means:
            adversary = self.adversary
            means = np.broadcast_to(
                real_array(
                    adversary.oracle("means", t0, n),
                    Who("adversary", adversary),
                    'oracle("means")',
                    round=t0,
                ),
                (n_rep, n, n_act),
            )
        increments = None
        if self.want_increments:
            increments = buffers.get("increments", (n, n_rep, n_act))
            _regret_increments(losses, expected, increments)
        core.t = t0 + n - 1
        core.last_probs = probs[:, -1].copy()
        return Block(probs, losses, expected, realized, actions, means, t0, None, increments)

    def play_block(self, losses, confidences, uniforms):
        return self.player.play_block(losses, uniforms)

    def feedback(self, losses_t, actions, probs_t, confidences_t) -> None:
        played = probs_t.copy()
        played.flags.writeable = False
        # the feedback is all the player gets: I_t, l_{t,I_t} and the p_t it played
        observed = losses_t[np.arange(self.n_rep), actions]
        self.player.update(actions.copy(), observed, played)
