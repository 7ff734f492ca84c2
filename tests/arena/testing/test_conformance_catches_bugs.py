"""The conformance suite is itself tested: each deliberately broken component fails its check.

Every fixture below breaks exactly one contract; the matching check must raise an
``AssertionError`` whose message names the check and the fault (scikit-learn's
``test_estimator_checks.py`` pattern), so the suite cannot silently become vacuous.
"""

from __future__ import annotations

import random
from typing import ClassVar

import numpy as np
import pytest

from arena.adversaries.stochastic import Bernoulli
from arena.bandit.testing import SimpleExp3
from arena.boosting.testing import MajorityVote
from arena.experts.components import AdaptiveAdversary, ObliviousAdversary
from arena.oco.losses import RoundData
from arena.oco.testing import AntiGradient, GaussianData, ProjectedGradient
from arena.params import Interval
from arena.players.hedge import Hedge
from arena.spec import AdversaryTags, PlayerTags
from arena.testing import SkipCheck, check_component, parametrize_with_checks, yield_checks

# ----------------------------------------------------------------------------------------------
# broken players


class MutatingPredictHedge(Hedge):
    """predict() advances a counter."""

    def predict(self, confidences=None):
        self._calls = getattr(self, "_calls", 0) + 1
        return super().predict()


class GlobalRNGPlayer(Hedge):
    """Perturbs its weights with the global numpy RNG."""

    tags = PlayerTags(block_kernel=False)

    def predict(self, confidences=None):
        p = super().predict() + 1e-3 * np.random.random(self._cum.shape)  # noqa: NPY002
        return p / p.sum(axis=1, keepdims=True)

    def play_block(self, losses, confidences=None, uniforms=None):
        return super(Hedge, self).play_block(losses)


class AliasingUpdatePlayer(Hedge):
    """Keeps the last loss array it was given and reads it at predict time."""

    tags = PlayerTags(block_kernel=False)

    def update(self, losses, actions=None):
        self._last = losses  # aliasing: no copy
        super().update(losses)

    def predict(self, confidences=None):
        base = super().predict()
        if getattr(self, "_last", None) is None:
            return base
        w = base * np.exp(-0.1 * self._last)
        return w / w.sum(axis=1, keepdims=True)

    def play_block(self, losses, confidences=None, uniforms=None):
        return super(Hedge, self).play_block(losses)


class LossWritingPlayer(Hedge):
    """Normalizes the loss array it is given in place (``losses -= min``) before learning from it:
    in a game the metrics read that same array, and its regret would drift towards 0."""

    tags = PlayerTags(block_kernel=False)

    def update(self, losses, actions=None):
        losses -= losses.min(axis=-1, keepdims=True)
        super().update(losses)

    def play_block(self, losses, confidences=None, uniforms=None):
        return super(Hedge, self).play_block(losses)


class BlockLossZeroingPlayer(Hedge):
    """Plays its block with the kernel, then zeroes the losses it was shown: regret 0.0."""

    def play_block(self, losses, confidences=None, uniforms=None):
        probs = super().play_block(losses)
        losses[...] = 0.0
        return probs


class ObservedLossWritingBandit(SimpleExp3):
    """Clips the observed losses in place before estimating."""

    def update(self, actions, losses, probs):
        np.clip(losses, 0.0, 1.0, out=losses)
        super().update(actions, losses, probs)


class WorkInInitPlayer(Hedge):
    """Derives a value in __init__."""

    def __init__(self, eta=0.5):
        super().__init__(eta=eta)
        self.eta_squared = eta * eta


class BlockPathDriftPlayer(Hedge):
    """Its block path drifts from its per-round loop by 1e-9."""

    def play_block(self, losses, confidences=None, uniforms=None):
        probs = super().play_block(losses)
        probs[..., 0] += 1e-9
        probs[..., 1] -= 1e-9
        return probs


class ChunkSummingPlayer(Hedge):
    """Adds a block's losses to its totals as running sums from the block's start (``start +
    cumsum``), not one round after the other: the same game to 1e-15, other last bits for
    every chunking (Hedge with a fixed η, losses in [0, 1])."""

    def play_block(self, losses, confidences=None, uniforms=None):
        start, running = self._cum.copy(), np.cumsum(losses, axis=1)
        probs = np.empty(losses.shape)
        for j in range(losses.shape[1]):
            probs[:, j] = self.predict()
            self._rounds += 1
            self._cum = start + running[:, j]
        return probs


class BlockDriftBandit(SimpleExp3):
    """Its block path (the engine's, against an oblivious adversary) tilts ``p_t`` by 1e-9 from
    what its per-round ``predict`` commits: played one round at a time it is another player."""

    tags = PlayerTags(protocols=frozenset({"bandit"}), block_kernel=True)

    def play_block(self, losses, uniforms):
        probs = super().play_block(losses, uniforms)
        probs[..., 0] += 1e-9
        probs[..., 1] -= 1e-9
        return probs


class LabelPeekingBooster(MajorityVote):
    """Its block path answers the labels it is handed with the block: no mistakes in the engine,
    its own vote's mistakes one round at a time."""

    def play_block(self, x, y):
        super().play_block(x, y)
        return np.array(y, dtype=np.float64)


class IgnoresRangePlayer(Hedge):
    """Uses raw losses whatever the declared range."""

    def update(self, losses, actions=None):
        self._cum += losses
        self._rounds += 1

    def play_block(self, losses, confidences=None, uniforms=None):
        return super(Hedge, self).play_block(losses)


class GrowingMemoryPlayer(Hedge):
    """Stores every loss vector it sees."""

    tags = PlayerTags(block_kernel=False)

    def reset(self, spec, rngs):
        super().reset(spec, rngs)
        self._seen = []

    def update(self, losses, actions=None):
        self._seen.append(np.array(losses))
        super().update(losses)

    def play_block(self, losses, confidences=None, uniforms=None):
        return super(Hedge, self).play_block(losses)


class LyingBoundPlayer(Hedge):
    """Declares a bound a tenth of the true one."""

    def bounds(self, t):
        return {("regret", float("nan")): 0.1 * self.regret_bound(t)}


# ----------------------------------------------------------------------------------------------
# broken adversaries


class FakeObliviousAdversary(ObliviousAdversary):
    """Tagged oblivious, but its losses change with every game it is reset for."""

    tags = AdversaryTags(oblivious=True)
    games = 0

    def __init__(self):
        pass

    def reset(self, spec, rngs):
        type(self).games += 1
        self._n = spec.n_replicates, spec.n_actions
        self._shift = type(self).games % 2

    def losses_block(self, t0, n):
        t = np.arange(t0, t0 + n)
        col = ((t + self._shift) % 2).astype(float)
        out = np.zeros((self._n[0], n, self._n[1]))
        out[:, :, 0] = col
        return out


class OutOfRangeAdversary(Bernoulli):
    """Declares [0, 1] but emits 1.5 at round 3."""

    def losses_block(self, t0, n):
        out = super().losses_block(t0, n)
        t = np.arange(t0, t0 + n)
        out[:, t == 3, 0] = 1.5
        return out


class SplitSensitiveAdversary(Bernoulli):
    """Draws one uniform per block instead of per round: block splits change the losses."""

    def losses_block(self, t0, n):
        out = np.empty((len(self._rngs), n, self._n_act))
        for r, rng in enumerate(self._rngs):
            out[r] = rng.random(self._n_act) < self._mu
        return out


class HistoryWritingAdversary(AdaptiveAdversary):
    """Tries to rewrite the cumulative losses it is shown."""

    tags = AdversaryTags(oblivious=False)

    def __init__(self):
        pass

    def reset(self, spec, rngs):
        self._shape = (spec.n_replicates, spec.n_actions)

    def losses(self, t, history):
        history.cum_losses[:] = 0.0
        return np.zeros(self._shape)


class _HeaviestHit(AdaptiveAdversary):
    """Loss 1 on the experts holding the most weight in ``p_t``: reads ``history.probs``."""

    def __init__(self):
        pass

    def reset(self, spec, rngs):
        self._shape = (spec.n_replicates, spec.n_actions)

    def losses(self, t, history):
        p = history.probs
        return (p >= p.max(axis=1, keepdims=True)).astype(float)


class AdaptiveTaggedOblivious(_HeaviestHit):
    """An AdaptiveAdversary whose tags say oblivious=True on purpose: a contradiction."""

    tags = AdversaryTags(oblivious=True, sees_distribution=True)


class ObliviousTaggedAdaptive(Bernoulli):
    """An ObliviousAdversary whose tags say oblivious=False: its losses_block is never played."""

    tags = AdversaryTags(oblivious=False)


class ObliviousSeeingDistribution(Bernoulli):
    """Oblivious, yet declares it reads ``p_t``, which an oblivious adversary is never shown."""

    tags = AdversaryTags(sees_distribution=True)


class UndeclaredDistributionAdversary(_HeaviestHit):
    """Reads ``history.probs`` but forgot ``sees_distribution=True``."""


class HistoryWritingSeer(AdaptiveAdversary):
    """The natural tags (only ``sees_distribution``) on an adversary that writes the history."""

    tags = AdversaryTags(sees_distribution=True)

    def __init__(self):
        pass

    def reset(self, spec, rngs):
        self._shape = (spec.n_replicates, spec.n_actions)

    def losses(self, t, history):
        history.probs[:] = 0.0
        return np.zeros(self._shape)


class UndeclaredOracleAdversary(Bernoulli):
    """Declares means it cannot serve."""

    def oracle(self, key, t0, n):
        raise KeyError(key)


class ForgetfulOracleAdversary(Bernoulli):
    """Serves its means oracle for the chunk drawn last, but only once: each answer replaces
    what it still knows by the rounds asked (drifting_means's walk cache had this bug), so a
    chunk's means asked segment by segment fail after the first segment."""

    def losses_block(self, t0, n):
        self._known = (t0, t0 + n)
        return super().losses_block(t0, n)

    def reset(self, spec, rngs):
        super().reset(spec, rngs)
        self._known = None

    def oracle(self, key, t0, n):
        if self._known is None:  # nothing drawn yet: nothing to forget
            return super().oracle(key, t0, n)
        start, stop = self._known
        if not start <= t0 < t0 + n <= stop:
            raise ValueError(f"rounds {t0}..{t0 + n - 1} are not in the last chunk")
        self._known = (t0, t0 + n)
        return super().oracle(key, t0, n)


class GlobalRNGAdversary(Bernoulli):
    """Draws its losses from the global numpy RNG."""

    def losses_block(self, t0, n):
        return (np.random.random((len(self._rngs), n, self._n_act)) < 0.5).astype(float)  # noqa: NPY002


# ----------------------------------------------------------------------------------------------
# broken OCO components


class LeavesTheBall(ProjectedGradient):
    """Skips the projection: steps out of the ball."""

    def update(self, fb):
        self._w = self._w - 5.0 * fb.grad


class MutatingPredictOCO(ProjectedGradient):
    """predict() counts its calls."""

    def predict(self, x=None):
        self._calls = getattr(self, "_calls", 0) + 1
        return super().predict(x)


class BlockDriftOCO(ProjectedGradient):
    """play_block shifts every point a little."""

    def play_block(self, data, spec):
        return super().play_block(data, spec) * (1.0 - 1e-6)


class GlobalRNGOCOPlayer(ProjectedGradient):
    """Starts each round from a point perturbed by the global numpy RNG."""

    def predict(self, x=None):
        w = super().predict(x)
        return self._domain.project(w + 1e-3 * np.random.standard_normal(w.shape))  # noqa: NPY002


class PythonRandomOCOPlayer(ProjectedGradient):
    """Draws its step size from Python's global ``random`` module."""

    def update(self, fb):
        self._w = self._domain.project(self._w - random.random() * fb.grad)


class GrowingMemoryOCO(ProjectedGradient):
    """Keeps every gradient it has seen."""

    def update(self, fb):
        self._seen = [*getattr(self, "_seen", []), fb.grad.copy()]
        super().update(fb)


class LyingBoundOCO(ProjectedGradient):
    """Declares a regret bound of zero."""

    def bounds(self, t):
        return {("regret", float("nan")): 0.0}


class SplitSensitiveOCO(GaussianData):
    """Restarts its stream at every block: the data depend on how rounds are split."""

    def data_block(self, t0, n):
        self._rngs = [np.random.default_rng(r) for r in range(len(self._rngs))]
        return super().data_block(t0, n)


class PeekingOCO(AntiGradient):
    """Tagged oblivious, but the gradient is e_2 once the player's first coordinate is negative."""

    tags = AdversaryTags(protocol="oco", oblivious=True)

    def reveal(self, t, w):
        g = np.zeros_like(w)
        g[:, 0] = w[:, 0] >= 0
        g[:, 1] = w[:, 0] < 0
        return RoundData(g=g)


class ObliviousOCOTaggedAdaptive(GaussianData):
    """An ObliviousOCOAdversary whose tags say oblivious=False."""

    tags = AdversaryTags(oblivious=False)


class MisdeclaredConstraints(Hedge):
    """Declares a constraint on a parameter it does not have."""

    parameter_constraints: ClassVar = {"rate": [Interval(0, 1)]}


class ViolatesItsConstraints(Hedge):
    """Its default violates its own declaration."""

    parameter_constraints: ClassVar = {"eta": [Interval(0, 1)]}


BROKEN = [
    (MutatingPredictHedge(), "check_predict_is_pure", "changed the state attributes"),
    (GlobalRNGPlayer(eta=0.5), "check_no_global_rng", "global RNG"),
    (AliasingUpdatePlayer(eta=0.5), "check_update_does_not_alias_input", "kept a reference"),
    (
        LossWritingPlayer(eta=0.5),
        "check_update_does_not_alias_input",
        "update writes into an input",
    ),
    (
        BlockLossZeroingPlayer(eta=0.5),
        "check_update_does_not_alias_input",
        "play_block writes into an input",
    ),
    (
        ObservedLossWritingBandit(),
        "check_update_does_not_alias_input",
        "update writes into an input",
    ),
    (WorkInInitPlayer(), "check_init_stores_params_only", "extra attributes ['eta_squared']"),
    (BlockPathDriftPlayer(eta=0.5), "check_block_matches_loop", "differs from the predict/update"),
    (IgnoresRangePlayer(eta=0.5), "check_loss_range_respected", "declared range"),
    # the one-round API plays each round through predict/update: a block path that drifts from
    # them, a stream that depends on the block split, are other games than the engine's
    (BlockPathDriftPlayer(eta=0.5), "check_one_round_matches_engine", "play different games"),
    (BlockDriftBandit(), "check_one_round_matches_engine", "play different games"),
    (BlockDriftOCO(), "check_one_round_matches_engine", "play different games"),
    (SplitSensitiveAdversary(), "check_one_round_matches_engine", "the engine's"),
    (LabelPeekingBooster(n_learners=3), "check_one_round_matches_engine", "mistakes at t=10"),
    # the experts protocol declares its rows chunk-free: a game split over threads relies on it
    (ChunkSummingPlayer(eta=0.5), "check_rows_chunk_invariant", "played one round per chunk"),
    (GrowingMemoryPlayer(eta=0.5), "check_bounded_memory", "state grew"),
    (LyingBoundPlayer(eta=0.5), "check_declared_bounds_hold", "exceeds its declared bound"),
    (FakeObliviousAdversary(), "check_oblivious_is_oblivious", "saw different losses"),
    (OutOfRangeAdversary(), "check_losses_valid", "round 3"),
    (SplitSensitiveAdversary(), "check_block_matches_stream", "differs from the per-round"),
    (HistoryWritingAdversary(), "check_history_is_read_only", "wrote to the history"),
    (UndeclaredOracleAdversary(), "check_oracle_declared", "declared but fails"),
    (ForgetfulOracleAdversary(), "check_oracle_declared", "rounds 1..3, 4..5, 6..8"),
    (GlobalRNGAdversary(), "check_no_global_rng", "global RNG"),
    (
        AdaptiveTaggedOblivious(),
        "check_tags_match_class",
        "subclasses AdaptiveAdversary but its tags declare oblivious=True; remove oblivious=True",
    ),
    (
        ObliviousTaggedAdaptive(),
        "check_tags_match_class",
        "subclasses ObliviousAdversary but its tags declare oblivious=False, so the arena plays "
        "it round by round and never calls losses_block; remove oblivious=False",
    ),
    (
        ObliviousSeeingDistribution(),
        "check_tags_match_class",
        "declare oblivious=True and sees_distribution=True",
    ),
    (
        UndeclaredDistributionAdversary(),
        "check_tags_match_class",
        "reads history.probs at round 1 but does not declare sees_distribution=True; add "
        "sees_distribution=True to its tags (tags = AdversaryTags(sees_distribution=True))",
    ),
    (HistoryWritingSeer(), "check_history_is_read_only", "wrote to the history"),
    (MisdeclaredConstraints(), "check_parameter_constraints", "['rate'], which are not"),
    (ViolatesItsConstraints(), "check_parameter_constraints", "must be a real number in [0, 1]"),
    (LeavesTheBall(), "check_oco_points_valid", "leaves the ball domain"),
    (MutatingPredictOCO(), "check_oco_predict_is_pure", "changed"),
    (BlockDriftOCO(), "check_oco_block_matches_loop", "differs"),
    (GlobalRNGOCOPlayer(), "check_no_global_rng", "global RNG"),
    (PythonRandomOCOPlayer(), "check_no_global_rng", "global RNG"),
    (GrowingMemoryOCO(), "check_oco_bounded_memory", "state grew"),
    (LyingBoundOCO(), "check_oco_declared_bounds_hold", "exceeds its bound"),
    (SplitSensitiveOCO(), "check_oco_block_matches_stream", "split"),
    (PeekingOCO(), "check_oco_oblivious_is_oblivious", "depends on the player"),
    (PeekingOCO(), "check_oco_tags_match_class", "subclasses AdaptiveOCOAdversary but its tags"),
    (ObliviousOCOTaggedAdaptive(), "check_oco_tags_match_class", "remove oblivious=False"),
]


@pytest.mark.parametrize(
    ("component", "check_name", "message"),
    BROKEN,
    ids=[b[1] + "-" + type(b[0]).__name__ for b in BROKEN],
)
def test_broken_component_fails_its_check(component, check_name, message):
    (check,) = [c for c in yield_checks(component) if c.__name__ == check_name]
    with pytest.raises(AssertionError, match=check_name) as info:
        check(component)
    assert message in str(info.value)
    assert type(component).__name__ in str(info.value)


def test_correct_components_pass_every_check():
    assert check_component(Hedge(eta=0.5)) == {}
    assert check_component(Bernoulli()) == {}


def test_expected_failures_are_strict():
    class DeclaredGrowing(GrowingMemoryPlayer):
        tags = PlayerTags(
            block_kernel=False,
            expected_failed_checks=(("check_bounded_memory", "stores the whole history"),),
        )

    assert check_component(DeclaredGrowing(eta=0.5)) == {
        "check_bounded_memory": "stores the whole history"
    }

    class DeclaredButFine(Hedge):
        tags = PlayerTags(
            block_kernel=True, expected_failed_checks=(("check_bounded_memory", "stale"),)
        )

    with pytest.raises(AssertionError, match="declared as an expected failure"):
        check_component(DeclaredButFine(eta=0.5))


@parametrize_with_checks([Hedge(eta=0.25), Bernoulli(gap=0.3)])
def test_parametrize_with_checks_runs_every_check(component, check):
    check(component)


# ----------------------------------------------------------------------------------------------
# checks that do not apply say so


SKIPPED = [
    (_HeaviestHit, "check_block_matches_stream", "not an ObliviousAdversary"),
    (_HeaviestHit, "check_oblivious_is_oblivious", "tagged oblivious=False"),
    (AdaptiveTaggedOblivious, "check_history_is_read_only", "tagged oblivious=True"),
    (Bernoulli, "check_history_is_read_only", "the arena shows it no history"),
    (_HeaviestHit, "check_oracle_declared", "declares no oracle"),
    (AntiGradient, "check_oco_block_matches_stream", "tagged oblivious=False"),
]


@pytest.mark.parametrize(("cls", "check_name", "reason"), SKIPPED)
def test_a_check_that_does_not_apply_raises_skip_check_with_its_reason(cls, check_name, reason):
    component = cls()
    (check,) = [c for c in yield_checks(component) if c.__name__ == check_name]
    with pytest.raises(SkipCheck, match=reason):
        check(component)


def test_the_natural_adaptive_tags_no_longer_skip_the_history_check():
    # the case: tags = AdversaryTags(sees_distribution=True) on an AdaptiveAdversary used
    # to read as oblivious=True, so the read-only-history check was skipped and reported "ok"
    component = HistoryWritingSeer()
    assert component.tags.oblivious is False
    (check,) = [c for c in yield_checks(component) if c.__name__ == "check_history_is_read_only"]
    with pytest.raises(AssertionError, match=r"check_history_is_read_only.*wrote to the history"):
        check(component)


def test_a_skipped_check_is_neither_a_pass_nor_a_failure_of_check_component():
    class DeclaredButSkipped(_HeaviestHit):
        tags = AdversaryTags(
            sees_distribution=True,
            expected_failed_checks=(("check_block_matches_stream", "has no block path"),),
        )

    # the declared check is skipped: not an unexpected pass, and not a failure as expected
    assert check_component(DeclaredButSkipped()) == {}
