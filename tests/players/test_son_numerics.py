"""SON numerics: the numba kernel equals the readable path, extreme scales stay finite, the α = 0
pseudo-inverse variant (Luo 2016, App. C), and resumed son tournaments equal uninterrupted ones."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from arena.apps.tournament import Tournament, TournamentConfig
from arena.errors import ConfigError
from arena.game import run_game
from arena.oco.components import OCOPlayer
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.players.son import SON
from arena.spec import GameSpec
from tests.players.test_son import dloss, margins, play, stream


def blocks(player, x, y, loss, cuts, seed=3):
    """Play R replicates with ``play_block`` over the given splits (the kernel for dense SON)."""
    n_rep, n, d = x.shape
    spec = GameSpec("classification", d, n, dim=d, domain=Domain(), loss=loss, n_replicates=n_rep)
    player.reset(spec, [np.random.default_rng(seed + r) for r in range(n_rep)])
    edges = [0, *cuts, n]
    return np.concatenate(
        [
            player.play_block(RoundData(x=x[:, a:b], y=y[:, a:b]), spec)
            for a, b in itertools.pairwise(edges)
        ],
        axis=1,
    )


@pytest.mark.parametrize("sketch", ["full", "rp", "fd", "oja", "fd_epoch"])
def test_kernel_equals_the_readable_predict_update_loop(sketch):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 80, 6))
    y = np.where(rng.normal(size=(2, 80)) >= 0, 1.0, -1.0)
    for diagonal in (False, True):
        kw = {"sketch": sketch, "m": 3, "alpha": 0.5, "C": 1.5, "eta": 0.7, "sigma": 0.1}
        fast = SON(**kw, diagonal=diagonal)
        got = blocks(fast, x, y, "logistic", cuts=[7, 30])
        slow = SON(**kw, diagonal=diagonal)
        spec = GameSpec(
            "classification", 6, 80, dim=6, domain=Domain(), loss="logistic", n_replicates=2
        )
        slow.reset(spec, [np.random.default_rng(3 + r) for r in range(2)])
        # the readable loop: SON.predict / SON.update round by round
        want = OCOPlayer.play_block(slow, RoundData(x=x, y=y), spec)
        # Same operations in another summation order (loops against BLAS, numba's LAPACK
        # against numpy's): observed ≤ 3e-14 on O(1) weights over 80 rounds.
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
        np.testing.assert_allclose(fast._u, slow._u, rtol=0, atol=1e-12)
        assert fast._t == slow._t == 80 and math.isclose(fast._eta_sum, slow._eta_sum)
        assert np.abs(got).max() > 0.1  # the game moved


ILL = {"kappa": 1e6, "n_large": 5}


def ill_conditioned_game(sketch, diagonal, scale, horizon=2000, alpha=1.0):
    adversary, params = "ill_conditioned", ILL
    if scale != 1.0:
        adversary = "rescaled"
        params = {"base": "ill_conditioned", "base_params": ILL, "scale_range": [scale, scale]}
    rows = run_game(
        "son", adversary, horizon=horizon, n_actions=10, replicates=1, seed=0,
        metrics={"mistakes": {}, "loss": {}}, adversary_params=params,
        player_params={"sketch": sketch, "m": 5, "diagonal": diagonal, "alpha": alpha},
    ).rows  # fmt: skip
    assert np.isfinite(rows.value).all()  # the engine also refuses a non-finite w_t
    last = rows[rows.t == horizon]
    return float(last[last.metric == "mistakes"].value.iloc[0]) / horizon


@pytest.mark.slow  # 14 s without numba (24 games of 2000 rounds), 1.4 s with it
@pytest.mark.parametrize("scale", [1e6, 1e-6])
def test_condition_number_1e6_and_extreme_feature_scales_stay_finite(scale):
    # κ = 10⁶ and every feature multiplied by 10^±6. Before the guards (Potter's square root
    # for full, RP's SVD fallback, ℓ' clipped to L) full and RP overflowed within 10 rounds at
    # 10⁶. Errors measured at T = 2000: full 0.13 at 10⁶ (0.12 unscaled), diagonal variants
    # 0.27–0.29; FD/RP/Oja without diagonal adaptation sit near chance (0.53–0.57) at 10⁶,
    # where α = 1 is 10¹² too small for the features.
    for sketch in ("full", "fd", "rp", "oja"):
        for diagonal in (False, True):
            error = ill_conditioned_game(sketch, diagonal, scale)
            assert error < 0.6
            if diagonal or sketch == "full":
                assert error < 0.35, (sketch, diagonal, error)
    # α ↦ s²α with x ↦ sx is the invariant tuning (Luo 2016, §4.3.2): FD at 10⁶ or 10⁻⁶
    # then learns as FD at scale 1 does (0.449 at T = 3000 for both).
    assert ill_conditioned_game("fd", False, scale, 600, alpha=scale**2) == pytest.approx(
        ill_conditioned_game("fd", False, 1.0, 600), abs=0.01
    )


# -- α = 0: the pseudo-inverse variant (Luo 2016, Appendix C) -----------------------------------


def reference_pinv_son(x, y, c, eta0, sigma=0.0, loss="logistic"):
    """Literal transcription of Luo 2016, Eq. C.1 with the projection of Lemma 15 (App. C.1).

    ``A_t = Σ_{s≤t} ĝ_sĝ_sᵀ`` kept as a matrix, ``numpy.linalg.pinv`` with its own cutoff, and
    ``x ∈ range(A)`` decided by the residual ``(I − A^†A)x`` (generic data: either ~0 or O(‖x‖)).
    """
    n, d = x.shape
    a = np.zeros((d, d))
    u = np.zeros(d)
    ws = []
    for t in range(1, n + 1):
        xt = x[t - 1]
        pinv = np.linalg.pinv(a, rcond=1e-10, hermitian=True)
        ux = float(u @ xt)
        shift = math.copysign(max(abs(ux) - c, 0.0), ux)
        w = u.copy()
        if shift != 0.0:
            outside = (np.eye(d) - pinv @ a) @ xt
            if np.linalg.norm(outside) > 1e-6 * np.linalg.norm(xt):
                w = u - shift / float(xt @ outside) * outside
            else:
                w = u - shift / float(xt @ pinv @ xt) * (pinv @ xt)
        ws.append(w)
        g = dloss(loss, float(w @ xt), y[t - 1]) * xt
        gh = math.sqrt(sigma + eta0 / math.sqrt(t)) * g
        a = a + np.outer(gh, gh)
        u = w - np.linalg.pinv(a, rcond=1e-10, hermitian=True) @ g
    return np.array(ws)


def test_alpha_zero_equals_the_literal_pseudo_inverse_algorithm():
    x, y = stream(11, 40, 5)
    ws, _ = play(SON(sketch="full", alpha=0.0, C=1.0, eta=0.5, sigma=0.1), x, y)
    ref = reference_pinv_son(x, y, 1.0, 0.5, sigma=0.1)
    # eigh-based against SVD-based pseudo-inverses: 1e-10 on O(1) weights (observed ~1e-13)
    np.testing.assert_allclose(ws, ref, rtol=0, atol=1e-10)
    assert np.abs(margins(ws, x)).max() > 0.5


def test_alpha_zero_is_rotation_invariant_but_not_invariant_to_general_maps():
    # Luo 2016, App. C.2 claims invariance to every invertible M; it holds for M = sQ (A' = s²QAQᵀ
    # keeps the range decisions), but while A_t is rank deficient a general M changes which
    # point of the A-projection's solution set Lemma 15 picks, and the trajectories part.
    x, y = stream(12, 40, 6)
    rng = np.random.default_rng(13)
    q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    kw = {"sketch": "full", "alpha": 0.0, "C": 1.0, "eta": 0.5}
    ws, _ = play(SON(**kw), x, y)
    for mat in (q, 1e3 * q):
        wm, _ = play(SON(**kw), x @ mat.T, y)
        # rotation/scaling only reorders rounding: 1e-9 on O(1) margins
        np.testing.assert_allclose(margins(wm, x @ mat.T), margins(ws, x), rtol=0, atol=1e-9)
    general = rng.normal(size=(6, 6))
    wg, _ = play(SON(**kw), x @ general.T, y)
    assert np.abs(margins(wg, x @ general.T) - margins(ws, x)).max() > 1e-3


def test_alpha_zero_needs_the_full_sketch_and_declares_no_bound():
    spec = GameSpec("classification", 3, 5, dim=3, domain=Domain(), loss="hinge")
    with pytest.raises(ConfigError, match="alpha = 0"):
        SON(sketch="fd", m=2, alpha=0.0).reset(spec, [np.random.default_rng(0)])
    x, y = stream(1, 10, 3)
    p = SON(sketch="full", alpha=0.0, C=1.0)
    play(p, x, y)
    assert p.regret_bound(0.0) is None
    assert (p.sketch_eigenvalues(3) >= 0).all()


# -- resume ----------------------------------------------------------------------------------------


def test_a_resumed_son_tournament_equals_an_uninterrupted_one(tmp_path, monkeypatch):
    config = TournamentConfig.from_mapping(
        {
            "name": "son_resume",
            "players": [
                {"name": "son", "params": {"sketch": "full"}},
                {"name": "son", "params": {"sketch": "rp", "m": 3}},
            ],
            "adversaries": [{"name": "ill_conditioned", "params": {"kappa": 100.0, "n_large": 2}}],
            "n_actions": [5],
            "horizon": 60,
            "replicates": 2,
            "seed": 4,
            "metrics": {"loss": {}, "mistakes": {}},
        }
    )
    whole = Tournament(config, tmp_path / "whole", executor="serial").run()
    assert len(whole.finished) == 2 and not whole.failed

    # The interruption: the RP cell dies in flight (serial executor: the patch reaches it), so
    # only the full cell's part is written; the rerun skips that one and plays the RP cell.
    original = SON.play_block

    def dies(self, data, spec):
        if self.sketch == "rp":
            raise KeyboardInterrupt
        return original(self, data, spec)

    monkeypatch.setattr(SON, "play_block", dies)
    with pytest.raises(KeyboardInterrupt):
        Tournament(config, tmp_path / "resumed", executor="serial").run()
    parts = tmp_path / "resumed" / "parts"
    assert len(list(parts.glob("results-*.parquet"))) == 1
    monkeypatch.setattr(SON, "play_block", original)
    resumed = Tournament(config, tmp_path / "resumed", executor="serial").run()
    assert len(resumed.skipped) == 1 and len(resumed.finished) == 1
    for path in sorted((tmp_path / "whole" / "parts").glob("results-*.parquet")):
        assert (parts / path.name).read_bytes() == path.read_bytes()
