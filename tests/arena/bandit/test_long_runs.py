"""Numerical robustness of every registered bandit player over 10⁷ rounds.

Each bandit player of the registry (enumerated by protocol, so a player registered later is
included without editing this file) plays 10⁷ rounds, one replicate, K = 3 arms (or the fewest
it allows) against ``bernoulli``, logging only ``regret``. The engine validates every ``p_t`` of
every chunk (finite, non-negative, summing to 1 within 1e-9) and stops the game with a
``GameError`` otherwise; the test adds that the regret stays finite and sublinear enough to show
the player still learns (below the uniform player's ``T · gap · (K − 1)/K``).

Seconds per player at 10⁷ rounds, measured on the development machine (one core, shared with
other jobs): epsilon_greedy 0.4, ucb1 0.5, exp3 0.6, exp3_ix 0.6, moss 0.6, dg_bandit 0.6,
exp3pp 1.1, tsallis_inf 1.1, thompson 2.3, kl_ucb 17.5 (a bracketed KL-index solve per arm and
round); bandit_wrapper 13 s at 10⁶ rounds (:data:`PYTHON_LOOP_HORIZON`). The whole file: about
40 s.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena import registry
from arena.bandit.components import BanditPlayer
from arena.game import run_game

HORIZON = 10_000_000
"""The issue's horizon: float32-style accumulation, exponentials of large estimates and
overflowing counts all show by then."""

SHORTER: dict[str, tuple[int, str]] = {}
"""Players run for fewer rounds, with the reason (they would need more than a minute at 10⁷)."""

PYTHON_LOOP_HORIZON = 1_000_000
"""Rounds for players without a compiled block kernel (``tags.block_kernel`` False): their
per-round Python loop costs ~13 µs a round, so 10⁷ rounds would take over 2 minutes
(``bandit_wrapper`` runs any experts player's Python ``predict`` / ``update`` each round); 10⁶
rounds still accumulate sums of 10⁶ estimates, where the overflows and cancellations show."""


def _bandit_players():
    for name in registry.available("player"):
        cls = registry.load("player", name)
        if issubclass(cls, BanditPlayer) or "bandit" in cls.tags.protocols:
            yield name


def _game(name: str) -> tuple[int, int, str]:
    cls = registry.load("player", name)
    tags = cls.tags
    k = max(3, tags.min_actions)
    if tags.max_actions is not None:
        k = min(k, tags.max_actions)
    if name in SHORTER:
        horizon, why = SHORTER[name]
    elif not tags.block_kernel:
        horizon, why = PYTHON_LOOP_HORIZON, "no compiled block kernel: a Python loop per round"
    else:
        horizon, why = HORIZON, ""
    return k, horizon, why


@pytest.mark.slow
@pytest.mark.parametrize("name", list(_bandit_players()))
def test_ten_million_rounds_stay_finite(name):
    k, horizon, why = _game(name)
    rows = run_game(name, "bernoulli", n_actions=k, horizon=horizon, replicates=1, seed=0,
                    metrics=["regret"]).rows  # fmt: skip
    regret = rows.value.to_numpy()
    assert np.isfinite(regret).all(), f"{name}: non-finite regret ({why or 'at 10^7 rounds'})"
    assert rows.t.max() == horizon
    gap = 0.1  # bernoulli's default
    uniform = horizon * gap * (k - 1) / k
    assert regret[-1] < uniform, f"{name}: regret {regret[-1]:.4g} at T = {horizon}"
    assert regret[-1] > -10 * math.sqrt(horizon)  # the best arm in hindsight is lucky by O(√T)
