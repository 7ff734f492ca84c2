"""The bandit protocol: the experts game under partial information, played by the driver.

Round t (Bubeck & Cesa-Bianchi 2012, §3): the player commits ``p_t ∈ Δ_K``; the adversary (an
experts adversary, unchanged; an adaptive one may read ``p_t`` if it declares
``sees_distribution``) fixes ``l_t ∈ [lo, hi]^K``; the arena draws ``I_t ~ p_t`` by inverse CDF
from a uniform of the replicate's action stream, exactly as the experts protocol draws its
realized action; the player observes ``I_t``, ``l_{t,I_t}`` and ``p_t`` only.

A game is a bandit game when its player plays the bandit protocol and its adversary the experts
one (:func:`arena.game.game_protocol`, :attr:`BanditProtocol.hosts`). The game key is the experts
game's (adversary, parameters, K), so the losses and the action uniforms are those the same
adversary and replicate give an experts player: common random numbers across the two protocols,
and the price of bandit feedback is a paired comparison. The arena knows ``l_t``, so every experts
metric that reads ``p_t·l_t`` is exact (same block, same core kernel); the bandit metrics
(:mod:`arena.metrics.bandit`) add arm pulls and the pseudo-regret per arm.

Against an oblivious adversary a chunk is one ``losses_block`` call and one ``play_block`` call
(a numba kernel for fast players, which draws ``I_t`` with the arena's own
:func:`~arena.sampling.sample_action` and reads only ``l_{t,I_t}``); against an adaptive one it is
a per-round loop batched over replicates in which ``update`` receives the observed losses alone.
:mod:`arena.bandit.reference` is the literal per-round loop this protocol must reproduce to 1e-12.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from arena import registry
from arena.bandit.protocol import BanditPlayer
from arena.errors import ArenaError, ConfigError, GameError
from arena.experts.game import (
    ExpertsTraceWriter,
    _check_probs,
    _core_advance,
    _first_bad_losses,
    _oblivious_losses,
    _raise_bad_loss,
    _regret_increments,
)
from arena.experts.protocol import ObliviousAdversary
from arena.game import GameProtocol, PreparedGame, Stepper, Who, describe, real_array
from arena.metrics.base import Block, Core, Metric, protocol_reason
from arena.metrics.builtin import DEFAULT_METRICS
from arena.protocols import Adversary
from arena.sampling import sample_actions
from arena.spec import GameSpec, History

HOSTED = frozenset({"experts"})
"""The adversaries' protocols a bandit game accepts: every experts adversary is a bandit one."""


class BanditProtocol(GameProtocol):
    """The bandit protocol for the driver: experts adversaries, players that see ``l_{t,I_t}``.

    Examples
    --------
    >>> from arena.game import run_game
    >>> run = run_game("exp3", "bernoulli", n_actions=3, horizon=100, replicates=2,
    ...                metrics=["regret", "arm_pulls"])
    >>> run.config["protocol"], sorted(run.rows.metric.unique())
    ('bandit', ['arm_pulls', 'regret'])
    """

    default_metrics: ClassVar[dict[str, Any]] = DEFAULT_METRICS
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
            "bandit",
            n_act,
            horizon,
            (lo, hi),
            n_replicates=int(ids.size),
            replicate_ids=tuple(ids.tolist()),
        )
        return spec, {"loss_range": [lo, hi]}

    def metric_class(self, name: str) -> type[Metric] | str:
        cls = registry.load("metric", name)
        return protocol_reason(cls, self.name) or cls

    def accepts_metric(self, metric: Metric) -> bool:
        return protocol_reason(type(metric), self.name) is None

    def identity(self, player: Any, adversary: Any, spec: GameSpec) -> tuple[dict, dict]:
        # the experts game's key: the same losses and action uniforms as an experts player's
        return {
            "adversary": type(adversary).registry_name(),
            "params": adversary.get_params(),
            "n_actions": spec.n_actions,
        }, {}

    def start(self, game: PreparedGame) -> BanditStepper:
        return BanditStepper(game)

    def trace_writer(self, path: Path, game: PreparedGame) -> ExpertsTraceWriter:
        return ExpertsTraceWriter(path, game.ids)


class BanditStepper(Stepper):
    """Plays a bandit game chunk by chunk: the losses, ``p_t``, the draws, the shared totals."""

    def __init__(self, game: PreparedGame):
        self.player, self.adversary, spec = game.player, game.adversary, game.spec
        self.n_rep, self.n_act = spec.n_replicates, spec.n_actions
        self.lo, self.hi = spec.loss_range
        self.ids, self.action_rngs = game.ids, game.action_rngs
        self.core = Core(self.n_rep, self.n_act)
        self.want_means = any("means" in m.requires for m in game.metrics)
        self.want_increments = any(m.reads_increments for m in game.metrics)
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

    def step(self, t0: int, n: int) -> Block:
        player, adversary, core = self.player, self.adversary, self.core
        n_rep, n_act, ids = self.n_rep, self.n_act, self.ids
        if self.oblivious:
            losses = _oblivious_losses(adversary, t0, n, n_rep, n_act, self.lo, self.hi, ids)
            # the experts protocol's uniforms, drawn the same way: common random numbers
            uniforms = np.empty((n_rep, n))
            for r, g in enumerate(self.action_rngs):
                g.random(out=uniforms[r])
            probs = _block_probs(player, losses, uniforms, t0, ids)
        else:
            probs, losses, uniforms = _adaptive_chunk(self, t0, n)
        _check_probs(player, probs, t0, ids)
        means = None
        if self.want_means:
            means = np.broadcast_to(
                real_array(
                    adversary.oracle("means", t0, n),
                    Who("adversary", adversary),
                    'oracle("means")',
                    round=t0,
                ),
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
        if self.want_increments:
            increments = np.empty((n, n_rep, n_act))
            _regret_increments(losses, expected, increments)
        core.t = t0 + n - 1
        core.last_probs = probs[:, -1].copy()
        return Block(probs, losses, expected, realized, actions, means, t0, None, increments)


def _block_probs(player, losses, uniforms, t0, ids) -> np.ndarray:
    who = Who("player", player)
    try:
        probs = player.play_block(losses, uniforms)
    except ArenaError:
        raise
    except Exception as exc:
        raise GameError(
            who,
            f"play_block failed in rounds {t0}..{t0 + losses.shape[1] - 1}: {exc}",
            round=t0,
            replicate=int(ids[0]),
        ) from exc
    probs = real_array(probs, who, "play_block", round=t0, replicate=int(ids[0]))
    if probs.shape != losses.shape:
        raise GameError(
            who,
            f"play_block returned shape {probs.shape}, expected {losses.shape}",
            round=t0,
            replicate=int(ids[0]),
        )
    return np.ascontiguousarray(probs)


def _adaptive_chunk(stepper: BanditStepper, t0: int, n: int):
    """One chunk against an adaptive adversary: a per-round loop batched over replicates."""
    player, adversary, history = stepper.player, stepper.adversary, stepper.history
    n_rep, n_act, ids, lo, hi = stepper.n_rep, stepper.n_act, stepper.ids, stepper.lo, stepper.hi
    probs = np.empty((n_rep, n, n_act))
    losses = np.empty((n_rep, n, n_act))
    uniforms = np.stack([g.random(n) for g in stepper.action_rngs])
    actions = np.empty(n_rep, dtype=np.int64)
    rows = np.arange(n_rep)
    who_p, who_a = Who("player", player), Who("adversary", adversary)
    for j in range(n):
        t = t0 + j
        try:
            p = player.predict()
        except ArenaError:
            raise
        except Exception as exc:
            raise GameError(
                who_p, f"predict failed: {exc}", round=t, replicate=int(ids[0])
            ) from exc
        p = real_array(p, who_p, "predict", round=t, replicate=int(ids[0]))
        if p.shape != (n_rep, n_act):
            raise GameError(
                who_p,
                f"predict returned shape {p.shape}, expected {(n_rep, n_act)}",
                round=t,
                replicate=int(ids[0]),
            )
        p = np.ascontiguousarray(p)
        _check_probs(player, p[:, None, :], t, ids)
        history._show(p)
        try:
            raw = adversary.losses(t, history)
        except ArenaError:
            raise
        except Exception as exc:
            raise GameError(who_a, f"losses failed: {exc}", round=t, replicate=int(ids[0])) from exc
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
            _raise_bad_loss(who_a, code, lt[r, i], lo, hi, t, int(ids[r]), i)
        probs[:, j] = p
        losses[:, j] = lt
        sample_actions(p, uniforms[:, j].copy(), actions)
        played = p.copy()
        played.flags.writeable = False
        try:
            # the feedback is all the player gets: I_t, l_{t,I_t} and the p_t it played
            player.update(actions.copy(), lt[rows, actions], played)
        except ArenaError:
            raise
        except Exception as exc:
            raise GameError(who_p, f"update failed: {exc}", round=t, replicate=int(ids[0])) from exc
        history._record(p, lt, actions)
    return probs, losses, uniforms
