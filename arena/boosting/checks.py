"""The boosting protocol's conformance checks: boosters and weak learners, and their partners.

Boosters are driven as the arena drives them (``predict`` on ``x_t``, then ``update`` with
``y_t``) on the partner streams of :mod:`arena.boosting.testing`; weak learners are driven lane by
lane. The checks of every component (:data:`arena.testing.common.COMMON_CHECKS`: parameters,
clone and repr, seed determinism, batch invariance, no global RNG) apply to both through the
partner games of :func:`_pair`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.boosting.components import Booster, WeakLearner, WeakSpec
from arena.boosting.testing import LinearTargetStream, MajorityVote, ThresholdStream
from arena.errors import GameError
from arena.spec import GameSpec
from arena.testing.common import (
    BLOCK_ATOL,
    REPLICATES,
    ProtocolChecks,
    fail,
    rngs,
    same_state,
    state_copy,
)

HORIZON = 60
"""Rounds of the small games the checks play."""

DIM = 3
"""Features d of the checks' games."""

LANES = 4
"""Lanes L of the weak learners the checks drive."""


def _task(component: Any) -> str:
    return "classification" if "classification" in type(component).tasks else "regression"


def _stream(task: str):
    return ThresholdStream() if task == "classification" else LinearTargetStream()


def _data(task: str, n: int, seed: int, n_rep: int = REPLICATES):
    stream = _stream(task)
    stream.reset(GameSpec(task, DIM, n, dim=DIM), rngs(seed, n_rep))
    data = stream.data_block(1, n)
    return data.x, data.y


def _game_spec(task: str, n_rep: int = REPLICATES) -> GameSpec:
    loss = "logistic" if task == "classification" else "squared"
    return GameSpec("boosting", DIM, HORIZON, n_replicates=n_rep, dim=DIM, loss=loss, task=task)


def _reset_booster(booster: Booster, task: str, seed: int) -> Booster:
    b = booster.clone()
    b.reset(_game_spec(task), rngs(seed))
    return b


# ----------------------------------------------------------------------------------------------
# boosters


def check_booster_block_matches_loop(booster: Booster) -> None:
    """``play_block`` reproduces the per-round ``predict`` / ``update`` loop to 1e-12."""
    for task in sorted(type(booster).tasks):
        x, y = _data(task, HORIZON, 3)
        loop, block = _reset_booster(booster, task, 5), _reset_booster(booster, task, 5)
        expected = np.empty(y.shape)
        for j in range(HORIZON):
            expected[:, j] = loop.predict(x[:, j].copy())
            loop.update(x[:, j].copy(), y[:, j].copy())
        got = np.asarray(block.play_block(x.copy(), y.copy()), dtype=np.float64)
        if got.shape != y.shape or not np.allclose(got, expected, atol=BLOCK_ATOL, rtol=0):
            fail("check_booster_block_matches_loop", booster, f"{task}: block ≠ loop")


def check_booster_predict_is_pure(booster: Booster) -> None:
    """``predict`` returns (R,) finite values and changes no state; twice gives the same."""
    for task in sorted(type(booster).tasks):
        x, y = _data(task, 20, 4)
        b = _reset_booster(booster, task, 6)
        for j in range(20):
            before = state_copy(b)
            first = np.asarray(b.predict(x[:, j].copy()), dtype=np.float64)
            if not same_state(before, state_copy(b)):
                fail("check_booster_predict_is_pure", booster, f"predict changed state ({task})")
            second = np.asarray(b.predict(x[:, j].copy()), dtype=np.float64)
            if first.shape != (REPLICATES,) or not np.isfinite(first).all():
                fail(
                    "check_booster_predict_is_pure",
                    booster,
                    f"predict returned shape {first.shape} or non-finite values",
                )
            if not np.array_equal(first, second):
                fail("check_booster_predict_is_pure", booster, "two predicts differ")
            b.update(x[:, j].copy(), y[:, j].copy())


def check_booster_learner_totals(booster: Booster) -> None:
    """Reported per-learner totals have shape (R, N), weights ≥ 0, ``|edge| ≤ weight``."""
    if type(booster).learner_totals is Booster.learner_totals:
        from arena.testing.common import SkipCheck

        raise SkipCheck("the booster reports no learner_totals")
    task = _task(booster)
    x, y = _data(task, 30, 7)
    b = _reset_booster(booster, task, 8)
    b.play_block(x, y)
    totals = b.learner_totals()
    if totals is None:
        from arena.testing.common import SkipCheck

        raise SkipCheck("learner_totals() returned None: the booster reports no per-learner totals")
    shape = (REPLICATES, int(booster.n_learners))
    for key in ("weight", "calls") + (("edge",) if task == "classification" else ()):
        arr = np.asarray(totals.get(key))
        if arr.shape != shape:
            fail("check_booster_learner_totals", booster, f"{key} has shape {arr.shape}")
    if (np.asarray(totals["weight"]) < 0).any() or (np.asarray(totals["calls"]) < 0).any():
        fail("check_booster_learner_totals", booster, "a negative weight or call count")
    if (
        task == "classification"
        and (np.abs(totals["edge"]) > np.asarray(totals["weight"]) * (1 + 1e-12) + 1e-12).any()
    ):
        fail("check_booster_learner_totals", booster, "|Σ w z| exceeds Σ w")


def check_booster_reads_label_after_predicting(booster: Booster) -> None:
    """Predictions do not depend on the label of the round being predicted."""
    for task in sorted(type(booster).tasks):
        x, y = _data(task, HORIZON, 9)
        flipped = y.copy()
        flipped[:, -1] = -y[:, -1] if task == "classification" else y[:, -1] + 0.5
        a = _reset_booster(booster, task, 10).play_block(x.copy(), y)
        b = _reset_booster(booster, task, 10).play_block(x.copy(), flipped)
        if not np.array_equal(np.asarray(a), np.asarray(b)):
            fail(
                "check_booster_reads_label_after_predicting",
                booster,
                f"changing the last label changed the predictions ({task})",
            )


# ----------------------------------------------------------------------------------------------
# weak learners


def _lane_rngs(seed: int, n_rep: int, lanes: list[int]):
    return [[np.random.default_rng([seed, r, i]) for i in lanes] for r in range(n_rep)]


def _reset_weak(learner: WeakLearner, task: str, lanes: list[int], seed: int) -> WeakLearner:
    w = learner.clone()
    spec = WeakSpec(task, DIM, len(lanes), REPLICATES, HORIZON, lane_ids=tuple(lanes))
    w.reset(spec, _lane_rngs(seed, REPLICATES, lanes))
    return w


def _weights(seed: int, n: int) -> np.ndarray:
    u = np.random.default_rng([seed, 99]).random((REPLICATES, n, LANES))
    return np.where(u < 0.3, 0.0, u)  # exact zeros (skipped lanes) among importance weights


def check_weak_output_range(learner: WeakLearner) -> None:
    """Outputs have shape (R, L): ±1 in classification (in ``[−1, 1]`` for a learner whose
    ``answers_labels()`` is False), within ``[−D, D]`` in regression."""
    for task in sorted(type(learner).tasks):
        x, y = _data(task, 40, 11)
        w = _reset_weak(learner, task, list(range(LANES)), 12)
        weights = _weights(13, 40)
        for j in range(40):
            try:  # the base class validates every prediction (check_weak_outputs) as games do
                out = np.asarray(w.predict(x[:, j].copy()), dtype=np.float64)
            except GameError as exc:
                fail("check_weak_output_range", learner, f"{task}: {exc}")
            if out.shape != (REPLICATES, LANES):
                fail(
                    "check_weak_output_range",
                    learner,
                    f"predict returned shape {out.shape} at round {j + 1}, expected "
                    f"{(REPLICATES, LANES)} (replicates, lanes)",
                )
            labels = learner.answers_labels()
            if task == "classification" and labels and not np.isin(out, (-1.0, 1.0)).all():
                fail("check_weak_output_range", learner, "a classification output is not ±1")
            if task == "classification" and not (np.abs(out) <= 1.0).all():
                fail(
                    "check_weak_output_range", learner, "a classification output is not in [−1, 1]"
                )
            if task == "regression" and not (np.abs(out) <= 1.0 + 1e-12).all():
                fail("check_weak_output_range", learner, "a regression output exceeds D = 1")
            w.update(x[:, j].copy(), np.repeat(y[:, j, None], LANES, axis=1), weights[:, j])


def check_weak_predict_is_pure(learner: WeakLearner) -> None:
    """``predict`` changes no state."""
    for task in sorted(type(learner).tasks):
        x, y = _data(task, 10, 14)
        w = _reset_weak(learner, task, list(range(LANES)), 15)
        for j in range(10):
            before = state_copy(w)
            w.predict(x[:, j].copy())
            if not same_state(before, state_copy(w)):
                fail("check_weak_predict_is_pure", learner, f"predict changed the state ({task})")
            w.update(x[:, j].copy(), np.repeat(y[:, j, None], LANES, axis=1), np.ones((3, LANES)))


def check_weak_lanes_independent(learner: WeakLearner) -> None:
    """Lane i of an L-lane learner equals a one-lane learner fed lane i's examples and stream;
    a weight of exactly 0 leaves a lane as if the round had not happened."""
    for task in sorted(type(learner).tasks):
        n = 40
        x, y = _data(task, n, 16)
        probe, _ = _data(task, 8, 17)
        weights = _weights(18, n)
        rng = np.random.default_rng(19)
        targets = np.repeat(y[:, :, None], LANES, axis=2)
        if task == "regression":
            targets = np.clip(targets + 0.3 * rng.standard_normal(targets.shape), -1, 1)
        multi = _reset_weak(learner, task, list(range(LANES)), 20)
        singles = [_reset_weak(learner, task, [i], 20) for i in range(LANES)]
        for j in range(n):
            multi.update(x[:, j].copy(), targets[:, j].copy(), weights[:, j].copy())
            for i, single in enumerate(singles):
                if (weights[:, j, i] > 0).any():
                    single.update(
                        x[:, j].copy(), targets[:, j, i, None].copy(), weights[:, j, i, None].copy()
                    )
        for k in range(probe.shape[1]):
            got = np.asarray(multi.predict(probe[:, k].copy()))
            for i, single in enumerate(singles):
                alone = np.asarray(single.predict(probe[:, k].copy()))[:, 0]
                if not np.allclose(got[:, i], alone, atol=BLOCK_ATOL, rtol=0):
                    fail(
                        "check_weak_lanes_independent",
                        learner,
                        f"lane {i} differs from a learner fed lane {i}'s examples alone ({task})",
                    )


# ----------------------------------------------------------------------------------------------
# partners


def _pair(component: Any) -> tuple[Any, Any, dict[str, Any]]:
    game = {"horizon": HORIZON, "replicates": REPLICATES, "n_actions": DIM}
    task = _task(component)
    metrics = ["mistakes", "loss"] if task == "classification" else ["loss"]
    if isinstance(component, Booster):
        return component, _stream(task), {**game, "metrics": metrics}
    booster = MajorityVote(n_learners=3, weak_learner=component)
    return booster, _stream(task), {**game, "metrics": [*metrics, "base_loss"]}


def _is_booster(component: Any) -> bool:
    return isinstance(component, Booster)


CHECKS = ProtocolChecks(
    player_checks=(
        check_booster_block_matches_loop,
        check_booster_predict_is_pure,
        check_booster_reads_label_after_predicting,
        check_booster_learner_totals,
    ),
    adversary_checks=(),
    is_player=_is_booster,
    pair=_pair,
    owned_checks=(
        check_weak_output_range,
        check_weak_predict_is_pure,
        check_weak_lanes_independent,
    ),
    owns=lambda component: isinstance(component, WeakLearner),
)
"""The boosting protocol's part of the conformance suite (:meth:`BoostingProtocol.conformance`).

Its adversaries are the classification and regression streams, checked by the OCO protocol's
suite; its own other components are the weak learners (:func:`arena.testing.common.
protocol_names` sends a :class:`~arena.boosting.components.WeakLearner` here through its
``conformance_protocol``)."""
