"""The bandit wrapper: the Exp3 identity, every registered experts player wrapped, long runs,
the estimators' expectations and the error paths (inner player refused or producing bad q_t)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena import registry
from arena.bandit.checks import check_estimate_unbiased, drive
from arena.errors import ConfigError, GameError
from arena.experts.components import ExpertsPlayer
from arena.game import run_game
from arena.players.bandit_wrapper import BanditWrapper, inner_loss_bound
from arena.players.exp3 import Exp3
from arena.players.hedge import Hedge
from arena.spec import GameSpec
from tests.helpers.bandit import run_block

SIMPLEX_TOL = 1e-9


def _losses(seed, n_rep=3, horizon=300, k=5):
    rng = np.random.default_rng(seed)
    losses, uniforms = rng.random((n_rep, horizon, k)), rng.random((n_rep, horizon))
    losses[..., 1] = np.round(losses[..., 1])  # exact zeros and ones
    return losses, uniforms


def _exp3_loop(player, losses, uniforms):
    """Exp3's readable path (its ``predict`` / ``update``), driven as the arena drives it."""
    n_rep, n, k = losses.shape
    player.reset(GameSpec("bandit", k, n, (0.0, 1.0), n_replicates=n_rep),
                 [np.random.default_rng(r) for r in range(n_rep)])  # fmt: skip
    return player, drive(player, losses, uniforms)[0]


@pytest.mark.parametrize("eta", [0.05, 0.3, 1.0])
def test_wrapped_hedge_without_mixing_is_exp3(eta):
    """γ = 0, fixed η, "iw": Hedge on ℓ̂ = 1{I = i} ℓ / p_I is loss-based Exp3, round for round.

    Against Exp3's readable path the identity is exact over 300 rounds. Against its compiled
    kernel (scalar ``exp`` in numba where the readable path uses numpy's vectorized ``np.exp``,
    one ulp apart) it holds to 1e-12 over the 30 rounds the conformance suite compares blocks
    on; over hundreds of rounds the ulps are amplified by ``1/p`` of rarely drawn arms (5e-9 after
    300 rounds at η = 0.3), a property of importance weighting, not of the wrapper."""
    losses, uniforms = _losses(1)
    exp3, want = _exp3_loop(Exp3(eta=eta), losses, uniforms)
    wrapper, got = run_block(BanditWrapper("hedge", {"eta": eta}, gamma=0.0), losses, uniforms)
    assert float(np.abs(got - want).max()) <= 1e-12
    assert np.allclose(wrapper.estimates(), exp3.estimates(), rtol=1e-12, atol=0)
    assert wrapper.is_exp3() and wrapper.inner_loss_range() == (0.0, 1.0)
    _, kernel = run_block(Exp3(eta=eta), losses[:, :30], uniforms[:, :30])
    assert float(np.abs(got[:, :30] - kernel).max()) <= 1e-12


@pytest.mark.parametrize(("eta", "gamma"), [(0.5, 0.1), (2.0, 0.3)])
def test_wrapped_hedge_with_mixing_is_exp3_at_the_rescaled_rate(eta, gamma):
    """γ > 0: the inner range is (0, K/γ), so Hedge at rate η is Exp3 at ``η γ / K``, same γ."""
    losses, uniforms = _losses(2)
    k = losses.shape[2]
    _, want = _exp3_loop(Exp3(eta=eta * gamma / k, gamma=gamma), losses, uniforms)
    wrapper, got = run_block(BanditWrapper(Hedge(eta=eta), gamma=gamma), losses, uniforms)
    assert float(np.abs(got - want).max()) <= 1e-12
    assert wrapper.inner_loss_range() == (0.0, k / gamma)
    assert wrapper.exp3_rate() == pytest.approx(eta * gamma / k, rel=1e-15)


def test_exp3_identity_through_the_engine_and_its_bound():
    game = {"n_actions": 4, "horizon": 400, "replicates": 3, "seed": 5}
    metrics = ["regret", "realized_regret", "estimate_bias"]
    wrapper = BanditWrapper("hedge", {"eta": 0.1}, gamma=0.0)
    a = run_game(wrapper, "bernoulli", metrics=metrics, **game).rows
    b = run_game(Exp3(eta=0.1), "bernoulli", metrics=metrics, **game).rows
    cols = ["replicate", "t", "metric", "param"]
    a, b = a.sort_values(cols).reset_index(drop=True), b.sort_values(cols).reset_index(drop=True)
    assert a[cols].equals(b[cols])
    assert np.allclose(a.value, b.value, rtol=1e-9, atol=1e-9)
    exp3, spec = Exp3(eta=0.1, gamma=0.2), GameSpec("bandit", 4, 400, (0.0, 2.0))
    exp3.reset(spec, [np.random.default_rng(0)])
    w = BanditWrapper("hedge", {"eta": 0.1 * 4 / 0.2}, gamma=0.2)
    w.reset(spec, [np.random.default_rng(0)])
    assert w.exp3_regret_bound(400) == pytest.approx(exp3.regret_bound(400), rel=1e-14)


def test_no_bound_is_declared():
    """Inner full-information bounds do not carry over: the ``bound`` metric is skipped."""
    for wrapper in (BanditWrapper("normal_hedge"), BanditWrapper("hedge", {"eta": 0.1})):
        run = run_game(wrapper, "bernoulli", n_actions=3, horizon=50, metrics=["regret", "bound"])
        assert set(run.rows.metric) == {"regret"}
        assert "declares no bound" in run.skipped_metrics["bound"]
    w = BanditWrapper("hedge", {"eta": 0.1}, estimator="ix", ix_gamma=0.1)
    w.reset(GameSpec("bandit", 3, 50, (0.0, 1.0)), [np.random.default_rng(0)])
    assert not w.is_exp3() and math.isnan(w.exp3_regret_bound(50))


def _wrappable():
    """Every registered experts player, with the reason when a bandit game cannot host it."""
    for name in registry.available("player"):
        cls = registry.load("player", name)
        if not issubclass(cls, ExpertsPlayer):
            continue
        tags, reason = cls.tags, None
        if tags.binary_losses:
            reason = "accepts only binary losses; importance-weighted estimates are not binary"
        elif tags.max_actions is not None and tags.max_actions < 2:
            reason = "plays a single expert"
        yield pytest.param(name, reason, id=name)


@pytest.mark.parametrize("gamma", [0.1, 0.0])
@pytest.mark.parametrize(("name", "reason"), list(_wrappable()))
def test_every_experts_player_wrapped_plays_valid_distributions(name, reason, gamma, tmp_path):
    if reason:
        pytest.skip(f"{name} {reason}")
    tags = registry.load("player", name).tags
    k = max(3, tags.min_actions)
    if tags.max_actions is not None:
        k = min(k, tags.max_actions)
    trace = tmp_path / "trace.parquet"
    wrapper = BanditWrapper(name, gamma=gamma)
    try:
        run = run_game(wrapper, "bernoulli", n_actions=k, horizon=500, replicates=2, seed=3,
                       metrics=["regret"], trace_path=trace)  # fmt: skip
    except GameError as exc:
        # γ = 0 hands the inner player estimates beyond its declared range (documented): an
        # inner player may then break, but only with the wrapper's own error naming everything
        assert gamma == 0.0, exc
        assert "bandit_wrapper" in str(exc) and f"inner player {name}" in str(exc)
        assert "round" in str(exc) and "replicate" in str(exc)
        pytest.xfail(f"{name} breaks on unbounded estimates (γ = 0): {exc}")
    probs = np.stack(pd.read_parquet(trace).probs.to_numpy())
    assert probs.shape == (1000, k)
    assert np.isfinite(probs).all() and (probs >= 0).all() and (probs <= 1).all()
    assert np.abs(probs.sum(axis=1) - 1).max() <= SIMPLEX_TOL
    assert np.isfinite(run.rows.value).all()


@pytest.mark.slow
@pytest.mark.parametrize("gamma", [0.1, 0.0])
@pytest.mark.parametrize("name", ["hedge", "normal_hedge", "ada_normal_hedge"])
def test_long_runs_stay_finite(name, gamma):
    """10⁵ rounds (γ = 0: estimates up to 1/p, far outside the inner range): finite, and still
    learning: regret below the uniform player's ``T · gap · (K − 1)/K`` (gap 0.1, K = 3; wrapped
    Hedge at γ = 0.1 learns slowly, its tuned rate acting on ``ℓ̂ / (K/γ)``).
    2.5 to 15 s each."""
    rows = run_game(BanditWrapper(name, gamma=gamma), "bernoulli", n_actions=3, horizon=100_000,
                    replicates=1, metrics=["regret", "estimate_bias"]).rows  # fmt: skip
    assert np.isfinite(rows.value).all()
    regret = rows[rows.metric == "regret"].value
    assert regret.iloc[-1] < 100_000 * 0.1 * 2 / 3


@pytest.mark.parametrize(
    "params",
    [{"gamma": 0.0}, {"gamma": 0.2}, {"estimator": "ix", "ix_gamma": 0.1},
     {"player": "normal_hedge", "estimator": "ix", "gamma": 0.05}],
)  # fmt: skip
def test_estimators_have_their_declared_expectation(params):
    check_estimate_unbiased(BanditWrapper(**params))


def test_ix_estimates_literally():
    """One round by hand: K = 2, p = (½, ½), γ_ix = 0.25, arm 1 drawn with loss 0.6 on [0, 2]."""
    w = BanditWrapper("hedge", {"eta": 1.0}, gamma=0.0, estimator="ix", ix_gamma=0.25)
    w.reset(GameSpec("bandit", 2, 10, (0.0, 2.0)), [np.random.default_rng(0)])
    assert w.inner_loss_range() == (0.0, 4.0)
    p = w.predict()
    assert p.tolist() == [[0.5, 0.5]]
    w.update(np.array([1]), np.array([0.6]), p)
    assert np.allclose(w.estimates(), [[0.0, 0.3 / 0.75]], rtol=1e-15)
    assert np.allclose(w.estimate_expectation(np.array([[1.0, 0.3]]), p), [[2 / 3, 0.2]])
    # the inner Hedge saw ℓ̂ / B: p ∝ (1, exp(−0.4 / 4))
    want = 1.0 / (1.0 + math.exp(-0.1))
    assert np.allclose(w.predict(), [[want, 1 - want]], rtol=1e-14)


def test_tuned_ix_gamma_and_loss_bound():
    w = BanditWrapper(estimator="ix")
    w.reset(GameSpec("bandit", 4, 100, (0.0, 1.0)), [np.random.default_rng(0)])
    ix = 0.5 * math.sqrt(2 * math.log(4) / (4 * 100))
    assert w.inner_loss_range()[1] == pytest.approx(1 / (0.1 / 4 + ix), rel=1e-15)
    assert inner_loss_bound(1, 0.0, 0.0) == 1.0
    with pytest.raises(ConfigError, match="ix_gamma"):
        w.reset(GameSpec("bandit", 4, None, (0.0, 1.0)), [np.random.default_rng(0)])


def test_observing_inner_player_gets_its_own_draw():
    """NormalHedge.DT with the realized state reads J_t ~ q_t: I_t itself when γ = 0, and a draw
    from the wrapper's own stream otherwise (batch-invariant: replicate 1 alone = in a batch)."""
    for gamma in (0.0, 0.2):
        w = BanditWrapper("normal_hedge_dt", {"state": "realized"}, gamma=gamma)
        game = {"n_actions": 3, "horizon": 300, "metrics": ["regret"], "seed": 2}
        batch = run_game(w, "bernoulli", replicates=3, **game).rows
        alone = run_game(w, "bernoulli", replicates=[1], **game).rows
        assert np.array_equal(batch[batch.replicate == 1].value.to_numpy(), alone.value.to_numpy())


# ----------------------------------------------------------------------------------------------
# parameters, repr, clone


def test_repr_clone_and_params_with_an_instance():
    w = BanditWrapper(Hedge(eta=0.2), gamma=0.0, estimator="ix", ix_gamma=0.1)
    want = "BanditWrapper(player=Hedge(eta=0.2), gamma=0.0, estimator='ix', ix_gamma=0.1)"
    assert repr(w) == want
    again = eval(repr(w), {"BanditWrapper": BanditWrapper, "Hedge": Hedge})
    assert again.params_json() == w.params_json()
    assert '"player":{"name":"hedge","params":{"eta":0.2}}' in w.params_json()
    c = w.clone(gamma=0.3)
    assert c.gamma == 0.3 and c.player.get_params() == {"eta": 0.2}
    # the instance given is never reset or changed by a game
    run_game(w, "bernoulli", n_actions=3, horizon=20, metrics=["regret"])
    assert vars(w.player) == {"eta": 0.2}
    by_name = BanditWrapper("hedge", {"eta": 0.2})
    assert by_name.clone().get_params() == {
        "player": "hedge",
        "player_params": {"eta": 0.2},
        "gamma": 0.1,
        "estimator": "iw",
        "ix_gamma": None,
    }


def test_registry_and_cli_parameters():
    w = registry.make("player", "bandit_wrapper", player="squint", gamma=0.05)
    rows = run_game(w, "bernoulli", n_actions=4, horizon=100, metrics=["regret"]).rows
    assert (rows.player == "bandit_wrapper").all()
    assert '"player":"squint"' in rows.player_params.iloc[0]


# ----------------------------------------------------------------------------------------------
# error paths


@pytest.mark.parametrize(
    ("params", "parameter", "match"),
    [
        ({"player": "exp3"}, "player", "not an experts player"),
        ({"player": "ogd"}, "player", "not an experts player"),
        ({"player": "no_such_player"}, "player", "no_such_player"),
        ({"player": "cover2"}, "player", "2..2 experts"),
        ({"player": "hedge", "player_params": {"eta": -1.0}}, "player_params", "eta"),
        ({"player": "hedge", "player_params": {"nope": 1}}, "player_params", "nope"),
        ({"gamma": 1.0}, "gamma", None),
        ({"estimator": "dr"}, "estimator", None),
        ({"player": 3}, "player", None),
    ],
)
def test_bad_inner_players_and_parameters_are_refused_before_round_one(params, parameter, match):
    with pytest.raises(ConfigError, match=match) as info:
        run_game(BanditWrapper(**params), "bernoulli", n_actions=3, horizon=10, metrics=["regret"])
    assert "bandit_wrapper" in str(info.value) and parameter in str(info.value)


class BreaksAtRound(ExpertsPlayer):
    """An experts player whose q_t of one replicate turns invalid at a given round."""

    name = "breaks_at_round"

    def __init__(self, round: int = 3, replicate: int = 1, value: float = math.nan):
        self.round = round
        self.replicate = replicate
        self.value = value

    def reset(self, spec, rngs):
        self._shape, self._t = (spec.n_replicates, spec.n_actions), 0

    def predict(self, confidences=None):
        p = np.full(self._shape, 1.0 / self._shape[1])
        if self._t + 1 >= self.round:
            p[self.replicate, 0] = self.value
        return p

    def update(self, losses, actions=None):
        self._t += 1


class RaisesInUpdate(BreaksAtRound):
    name = "raises_in_update"

    def predict(self, confidences=None):
        return np.full(self._shape, 1.0 / self._shape[1])

    def update(self, losses, actions=None):
        self._t += 1
        if self._t == self.round:
            raise FloatingPointError("overflow in the potential")


@pytest.mark.parametrize(
    ("inner", "match"),
    [
        (BreaksAtRound(round=4, replicate=1), r"q_t = \[nan.*round 4, replicate 1\)"),
        (BreaksAtRound(round=2, replicate=0, value=-0.5), r"distribution.*round 2, replicate 0"),
        (RaisesInUpdate(round=3), r"update failed: FloatingPointError.*round 3"),
    ],
)  # fmt: skip
def test_invalid_inner_output_stops_the_game_naming_wrapper_inner_round_and_replicate(inner, match):
    with pytest.raises(GameError, match=match) as info:
        run_game(BanditWrapper(inner, gamma=0.1), "bernoulli", n_actions=3, horizon=10,
                 replicates=2, metrics=["regret"])  # fmt: skip
    msg = str(info.value)
    assert msg.startswith("player bandit_wrapper BanditWrapper(") and "inner player" in msg
    assert type(inner).__name__ in msg


def test_invalid_inner_output_names_the_global_replicate():
    with pytest.raises(GameError, match=r"round 5, replicate 7\)"):
        run_game(BanditWrapper(BreaksAtRound(round=5, replicate=1)), "bernoulli", n_actions=3,
                 horizon=10, replicates=[6, 7], metrics=["regret"])  # fmt: skip
