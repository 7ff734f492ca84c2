"""The structured protocol's conformance checks catch deliberately broken components."""

from __future__ import annotations

import numpy as np
import pytest

from arena.players.structured_self_tuned import StructuredSelfTuned
from arena.structured.testing import RandomStrings, StringPerceptron
from arena.testing import yield_checks


class MutatingPredictStrings(StringPerceptron):
    """predict() nudges θ."""

    def predict(self, x):
        self.theta += 1e-3
        return super().predict(x)


class ChunkSensitiveStrings(RandomStrings):
    """Reseeds each call from ``t0``: the examples depend on the chunking."""

    def examples(self, t0, n):
        self._rngs = [np.random.default_rng(t0 + r) for r in range(len(self._rngs))]
        return super().examples(t0, n)


BROKEN = [
    (MutatingPredictStrings(), "check_structured_predict_is_pure", "predict changed state"),
    (ChunkSensitiveStrings(), "check_structured_examples_chunk_free", "depend on the chunks"),
]


@pytest.mark.parametrize(("component", "check_name", "message"), BROKEN)
def test_broken_component_fails_its_check(component, check_name, message):
    (check,) = [c for c in yield_checks(component) if c.__name__ == check_name]
    with pytest.raises(AssertionError, match=check_name) as info:
        check(component)
    assert message in str(info.value)


def test_sound_components_pass_the_protocol_checks():
    for component in (StructuredSelfTuned(), RandomStrings()):
        names = {c.__name__ for c in yield_checks(component)}
        assert {"check_structured_block_matches_loop", "check_structured_tags_match_class"} <= names
