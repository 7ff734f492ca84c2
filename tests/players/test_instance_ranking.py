"""The instance-ranking player P0 / P0′ (Shalev-Shwartz 2007, Fig 3.1 / 3.2 on §5.3.4's losses)
against a literal transcription."""

from __future__ import annotations

import numpy as np
import pytest

from arena.oco.domains import Domain
from arena.oco.literal import instance_ranking_round
from arena.oco.losses import RoundData
from arena.players.instance_ranking import InstanceRanking
from arena.spec import GameSpec
from tests.helpers.oco import play_loop, reset


def literal_p0(x, y, kind, schedule, c, k):
    """Fig 3.1 / 3.2 with f = ½‖w‖², CONS: θ = 0; w_t = θ/c_t; θ −= λ'_t, by loops."""
    T, kd = x.shape
    d = kd // k
    theta = [0.0] * d
    lip_sq = 0.0
    out = np.empty((T, d))
    for t in range(T):
        rows = [x[t, i * d : (i + 1) * d] for i in range(k)]
        g_now = max(float(np.sum((a - b) ** 2)) for a in rows for b in rows)
        lip_sq = max(lip_sq, g_now)
        c_t = c if schedule == "fixed" else (((t + 1) * 0.5 * lip_sq / c) ** 0.5 or np.inf)
        w = np.array([v / c_t for v in theta])
        out[t] = w
        _, grad, _ = instance_ranking_round(kind, w, x[t], list(y[t]))
        theta = [theta[i] - grad[i] for i in range(d)]
    return out


@pytest.mark.parametrize(("kind", "schedule", "c"), [("ranking_avg", "fixed", 2.0),
                                                     ("ranking_max", "sqrt_t", 0.5)])  # fmt: skip
def test_player_equals_the_transcription(kind, schedule, c):
    rng = np.random.default_rng(1)
    R, T, k, d = 2, 30, 3, 2
    data = RoundData(x=rng.standard_normal((R, T, k * d)), y=rng.standard_normal((R, T, k)))
    spec = GameSpec("instance_ranking", d, T, n_replicates=R, dim=d, domain=Domain(), loss=kind,
                    n_classes=k)  # fmt: skip
    got = play_loop(reset(InstanceRanking(schedule, c), spec), spec, data)
    want = np.stack([literal_p0(data.x[r], data.y[r], kind, schedule, c, k) for r in range(R)])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
