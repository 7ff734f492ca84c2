"""The ``structured`` protocol's part of the conformance suite.

Players: ``predict`` is pure and returns valid strings; a game's fast rows equal the literal loop's.
Streams: the examples do not depend on how the rounds are chunked, and are valid strings of the
declared structure.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from arena.game import reference_play, run_game
from arena.spec import GameSpec
from arena.structured.components import StructuredAdversary, StructuredPlayer
from arena.structured.testing import RandomStrings, StringPerceptron
from arena.testing.common import (
    BLOCK_ATOL,
    REPLICATES,
    ProtocolChecks,
    fail,
    rngs,
    same_state,
    state_copy,
)

HORIZON = 12
"""Rounds of the checks' games."""


def _spec(structure: Any, n_rep: int = REPLICATES) -> GameSpec:
    return GameSpec(
        "structured",
        structure.length,
        HORIZON,
        (0.0, float(structure.length)),
        n_replicates=n_rep,
        dim=structure.n_features,
        replicate_ids=tuple(range(n_rep)),
        n_classes=structure.n_labels,
        structure=structure,
    )


def _examples(seed: int) -> tuple[Any, np.ndarray, np.ndarray]:
    stream = RandomStrings()
    stream.reset(_spec(stream.structure()), rngs(seed))
    x, y = stream.examples(1, HORIZON)
    return stream.structure(), x, y


def check_structured_tags_match_class(component: Any) -> None:
    """A structured player plays ``structured``; a structured stream declares it."""
    if isinstance(component, StructuredPlayer) and "structured" not in component.tags.protocols:
        fail("check_structured_tags_match_class", component, "tags omit the structured protocol")
    if isinstance(component, StructuredAdversary) and component.tags.protocol != "structured":
        fail("check_structured_tags_match_class", component, "tags.protocol is not structured")


def check_structured_predict_is_pure(player: StructuredPlayer) -> None:
    """``predict`` returns (R, m) labels in ``0 … k−1``, changes no state; twice gives the same."""
    structure, x, y = _examples(11)
    p = player.clone()
    p.reset(_spec(structure), rngs(12))
    for j in range(HORIZON):
        before = state_copy(p)
        first = np.asarray(p.predict(x[:, j].copy()))
        if not same_state(before, state_copy(p)):
            fail(
                "check_structured_predict_is_pure", player, f"predict changed state (round {j + 1})"
            )
        second = np.asarray(p.predict(x[:, j].copy()))
        if first.shape != (REPLICATES, structure.length) or not np.array_equal(first, second):
            fail(
                "check_structured_predict_is_pure", player, "predict is not repeatable or misshapen"
            )
        if first.min() < 0 or first.max() >= structure.n_labels:
            fail("check_structured_predict_is_pure", player, "predicted labels out of range")
        p.update(x[:, j].copy(), y[:, j].copy(), first.copy())


def check_structured_block_matches_loop(component: Any) -> None:
    """``run_game``'s rows equal the literal loop's (``reference_play``) to 1e-12."""
    player, adversary, kw = _pair(component)
    fast = run_game(player, adversary, **kw).rows
    slow = reference_play(player, adversary, **kw)
    try:
        pd.testing.assert_frame_equal(fast, slow, atol=BLOCK_ATOL, rtol=0)
    except AssertionError as exc:
        fail("check_structured_block_matches_loop", component, f"rows ≠ reference: {exc}")


def check_structured_examples_chunk_free(adversary: StructuredAdversary) -> None:
    """``examples(1, n)`` equals ``examples(1, a)`` then ``examples(a+1, n−a)``, and every
    string is of the declared length and alphabet."""
    structure = adversary.structure()
    whole, split = adversary.clone(), adversary.clone()
    whole.reset(_spec(structure), rngs(21))
    split.reset(_spec(structure), rngs(21))
    x, y = whole.examples(1, 8)
    x1, y1 = split.examples(1, 3)
    x2, y2 = split.examples(4, 5)
    if not (
        np.array_equal(x, np.concatenate([x1, x2], axis=1))
        and np.array_equal(y, np.concatenate([y1, y2], axis=1))
    ):
        fail("check_structured_examples_chunk_free", adversary, "examples depend on the chunks")
    m = structure.length
    if np.shape(x) != (REPLICATES, 8, *structure.input_shape) or np.shape(y) != (REPLICATES, 8, m):
        fail("check_structured_examples_chunk_free", adversary, "examples misshapen")
    if np.min(y) < 0 or np.max(y) >= structure.n_labels or not np.isfinite(x).all():
        fail(
            "check_structured_examples_chunk_free", adversary, "labels out of range or x not finite"
        )


def _pair(component: Any) -> tuple[Any, Any, dict[str, Any]]:
    game = {"horizon": HORIZON, "replicates": REPLICATES, "metrics": ["structured_cost"]}
    if isinstance(component, StructuredPlayer):
        return component, RandomStrings(), game
    return StringPerceptron(), component, game


CHECKS = ProtocolChecks(
    player_checks=(
        check_structured_tags_match_class,
        check_structured_predict_is_pure,
        check_structured_block_matches_loop,
    ),
    adversary_checks=(
        check_structured_tags_match_class,
        check_structured_examples_chunk_free,
        check_structured_block_matches_loop,
    ),
    is_player=lambda component: isinstance(component, StructuredPlayer),
    pair=_pair,
)
