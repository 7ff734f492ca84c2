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
The chunk buffers are kept across chunks. A player whose ``p_t`` are point masses and that
declares ``plays_arms`` plays such a chunk as its arms instead: no action uniforms, one kernel
that checks the arms and advances the totals, a chunk's ``p_t`` built only when read
(:mod:`arena.bandit.point_masses`). Against an adaptive adversary a chunk is a per-round
loop batched over replicates in which ``update`` receives the observed losses alone.
:mod:`arena.bandit.reference` is the literal per-round loop this protocol must reproduce to 1e-12.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, ClassVar

import numpy as np

from arena.bandit.components import BanditPlayer
from arena.bandit.point_masses import (
    PointMassBlock,
    first_bad_arm,
    plays_arms,
    point_mass_advance,
    point_mass_advance_segments,
)
from arena.components import Adversary
from arena.errors import ConfigError, GameError
from arena.experts.game import (
    ExpertsProtocol,
    ExpertsStepper,
    _oblivious_losses,
    _regret_increments,
)
from arena.protocol import PreparedGame
from arena.validation import Who, call_component, describe, readonly

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


def _fills_out(player_class: type) -> bool:
    """Whether the class's ``play_block`` writes ``p_t`` into an ``out`` buffer it is handed (it
    declares ``play_block_out`` and its ``play_block`` takes ``out``)."""
    return bool(getattr(player_class, "play_block_out", False)) and _takes_out(
        player_class.play_block
    )


@functools.lru_cache(maxsize=256)
def _takes_out(play_block: Any) -> bool:
    """Whether a ``play_block`` function has an ``out`` parameter: one signature per function
    (a class whose ``play_block`` is replaced is asked again), read in tens of µs."""
    return "out" in inspect.signature(play_block).parameters


class BanditStepper(ExpertsStepper):
    """Plays a bandit game chunk by chunk: the experts stepper (same losses, uniforms, totals and
    block), with the bandit player's information model — its ``play_block`` gets the uniforms
    the arena draws ``I_t`` from, and its ``update`` only ``I_t``, ``l_{t,I_t}`` and ``p_t``."""

    def __init__(self, game: PreparedGame):
        super().__init__(game)
        # a player that declares it fills ``out`` writes p_t into the stepper's buffer (unless a
        # subclass overrode play_block without the parameter)
        self._fills_out = _fills_out(type(self.player))
        # a point-mass player plays its oblivious chunks as arms (the span path too)
        self._plays_arms = plays_arms(type(self.player))
        self._replicate_rows = np.arange(self.n_rep)

    def _oblivious_play(self, t0, n, losses=None):
        if not self._plays_arms:
            return super()._oblivious_play(t0, n, losses)
        n_rep, n_act, ids = self.n_rep, self.n_act, self.ids
        if losses is None:
            losses = _oblivious_losses(self.adversary, t0, n, n_rep, n_act, self.lo, self.hi, ids)
        out = self._buffers.get("arms", (n_rep, n), np.int64)
        shown = readonly(losses)  # as p_t players are shown them: a write fails, naming it
        arms = _block_arms(
            self.player, lambda: self.player.play_arms(shown, out=out), (n_rep, n), t0, ids, n_act
        )
        return arms, losses, None

    def _oblivious_advance(self, t0, n, probs, losses, uniforms, means_of, outputs):
        if not self._plays_arms:
            return super()._oblivious_advance(t0, n, probs, losses, uniforms, means_of, outputs)
        arms, core = probs, self.core
        expected, realized, actions, increments = outputs
        ok = point_mass_advance(
            arms,
            losses,
            core.cum_losses,
            core.learner,
            core.realized,
            core.sum_min,
            expected,
            realized,
            actions,
        )
        if not ok:
            self._raise_bad_play(arms, t0)
        means = None if means_of is None else means_of()
        if increments is not None:
            _regret_increments(losses, expected, increments)
        core.t = t0 + n - 1
        core.last_probs = self._last_probs(arms, outputs, n - 1)
        return PointMassBlock(
            None, losses, expected, realized, actions, means, t0, None, increments
        )

    def _advance_segments(self, probs, losses, uniforms, outputs, bounds, snap_cum, snap_totals):
        if not self._plays_arms:
            return super()._advance_segments(
                probs, losses, uniforms, outputs, bounds, snap_cum, snap_totals
            )
        core = self.core
        expected, realized, actions, _ = outputs
        return point_mass_advance_segments(
            probs,
            losses,
            core.cum_losses,
            core.learner,
            core.realized,
            core.sum_min,
            expected,
            realized,
            actions,
            bounds,
            snap_cum,
            snap_totals,
        )

    def _last_probs(self, probs, outputs, j):
        if not self._plays_arms:
            return super()._last_probs(probs, outputs, j)
        # the point mass on round j's arm, as the p_t path copies p_t (fresh: a metric may keep
        # it), by numpy: a kernel call per checkpoint cost a one-replicate game 40 ns a round at
        # T = 10⁴
        last = np.zeros((self.n_rep, self.n_act))
        last[self._replicate_rows, outputs[2][:, j]] = 1.0
        return last

    def _raise_bad_play(self, probs, t0):
        if not self._plays_arms:
            super()._raise_bad_play(probs, t0)
        raise _bad_arm(self.player, probs, t0, self.ids, self.n_act)

    def play_oblivious(self, losses, uniforms):
        if not self._fills_out:
            return self.player.play_block(losses, uniforms)
        out = self._buffers.get("probs", losses.shape)
        return self.player.play_block(losses, uniforms, out=out)

    def play_block(self, losses, confidences, uniforms):
        return self.player.play_block(losses, uniforms)

    def feedback(self, losses_t, actions, probs_t, confidences_t) -> None:
        played = probs_t.copy()
        played.flags.writeable = False
        # the feedback is all the player gets: I_t, l_{t,I_t} and the p_t it played
        observed = losses_t[np.arange(self.n_rep), actions]
        self.player.update(actions.copy(), observed, played)


def _block_arms(player, play, shape, t0, ids, n_act) -> np.ndarray:
    """Call ``play()`` (the player's ``play_arms`` of rounds ``t0 .. t0+n-1``; ``shape`` is
    (R, n)) and return its arms as a C-contiguous int64 array, or stop the game naming the
    player: a call that raised, or arms that are not an integer array of that shape (or an
    unsigned one with an arm past int64, named before the cast would wrap it)."""
    who = Who("player", player)
    arms = call_component(
        "player", player, "play_arms", t0, play, rounds=shape[1], ids=ids, typed=False
    )
    problem = None
    # (the dtype's kind: np.issubdtype cost 1 µs of every chunk)
    if not (isinstance(arms, np.ndarray) and arms.dtype.kind in "iu"):
        got = f"a {arms.dtype} array" if isinstance(arms, np.ndarray) else type(arms).__name__
        problem = f"play_arms returned {got}, expected an integer array of arms"
    elif arms.shape != shape:
        problem = f"play_arms returned shape {arms.shape}, expected {shape}"
    if problem is not None:
        raise GameError(who, problem, round=t0, replicate=int(ids[0]))
    if arms.dtype.kind == "u" and arms.size and arms.max() > np.iinfo(np.int64).max:
        raise _bad_arm(player, arms, t0, ids, n_act)
    return np.ascontiguousarray(arms, dtype=np.int64)


def _bad_arm(player, arms, t0, ids, n_act) -> GameError:
    """The error naming the earliest arm of ``arms`` (R, n) outside ``0 … K−1``."""
    r, j = first_bad_arm(arms, n_act)
    return GameError(
        Who("player", player),
        f"play_arms pulled arm {int(arms[r, j])}, not one of the K = {n_act} arms 0 … {n_act - 1}",
        round=t0 + j,
        replicate=int(ids[r]),
    )
