"""Theorem 7 of Shalev-Shwartz (2007) measured: Fig 5.4 on separable and noisy string streams.

Run: .venv/bin/python benchmarks/structured_theorem7.py  (the README's structured paragraph)
"""

import time

import pandas as pd

from arena.adversaries.structured_stream import StructuredStream
from arena.game import run_game
from arena.players.structured_self_tuned import StructuredSelfTuned

METRICS = ["structured_cost", "structured_cost_bound"]

for noise in (0.0, 0.2):
    t0 = time.time()
    tabs = []
    for seed in range(10):
        st = StructuredStream(
            n_labels=2, length=2, n_features=1, margin=0.5, noise=noise, transition_scale=0.0
        )
        player = StructuredSelfTuned(U=2.0)
        rows = run_game(player, st, seed=seed, horizon=600, replicates=2, metrics=METRICS).rows
        tabs.append(rows[rows.t == 600].pivot(index="replicate", columns="metric", values="value"))
    tab = pd.concat(tabs)
    cost, bound = tab["structured_cost"], tab["bound:structured_cost"]
    print(
        f"noise={noise}: 20 games T=600 m=2: cost mean {cost.mean():.1f} max {cost.max():.0f}; "
        f"Loss(u) mean {tab['structured_comparator_loss'].mean():.1f}; bound mean "
        f"{bound.mean():.1f} min {bound.min():.1f}; max cost/bound {(cost / bound).max():.3f} "
        f"({time.time() - t0:.0f}s)"
    )
