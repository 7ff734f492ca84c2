"""Shalev-Shwartz 2007, Table 8.1 reproduced qualitatively (slow): the tournament
``configs/tournament/label_ranking.yaml`` on a synthetic multi-label stream (the Enron data are
not available offline), its final ranking mistakes pinned, and the thesis's orderings checked on
ours by the rule :func:`table_8_1_claims` (paired 95% intervals: every player sees the same
streams), which the thesis's own numbers satisfy too (but for one tie)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.stats import t as student_t

from arena.apps.tournament import TournamentConfig, run_cell

CONFIG = Path(__file__).resolve().parents[3] / "configs" / "tournament" / "label_ranking.yaml"

TABLE_8_1 = {
    # Shalev-Shwartz 2007, §8.4, Table 8.1: Enron users, % of rounds with a ranking
    # mistake (the caption says "average number of online mistakes"; the magnitudes against m are
    # percentages), columns Euclidean I, II, III, entropic I, II, III
    "beck-s": (58.5, 55.2, 51.9, 54.0, 50.2, 47.1),
    "farmer-d": (29.5, 23.3, 22.7, 27.6, 22.6, 22.0),
    "kaminski-v": (50.2, 44.5, 41.9, 46.7, 42.9, 40.0),
    "kitchen-l": (48.2, 41.9, 40.4, 41.9, 38.3, 36.0),
    "lokay-m": (24.9, 19.1, 18.4, 24.0, 18.7, 18.2),
    "sanders-r": (31.7, 28.3, 27.2, 28.3, 24.2, 23.4),
    "williams-w3": (5.0, 4.5, 4.4, 4.2, 3.4, 3.1),
}
COLUMNS = ("euc_I", "euc_II", "euc_III", "ent_I", "ent_II", "ent_III")
"""Table 8.1's six columns, in the order of the tournament's players."""

PINS = {
    "euc_I": 548.0625,
    "euc_II": 378.0625,
    "euc_III": 342.1875,
    "ent_I": 413.6875,
    "ent_II": 338.09375,
    "ent_III": 318.40625,
}
"""Mean ranking mistakes at T = 2000 over 32 replicates (27.4, 18.9, 17.1, 20.7, 16.9 and 15.9 %
of the rounds; 95% half-widths 8.9, 6.4, 6.5, 7.0, 6.9 and 6.6), measured by this test's own
play of the config."""

CLAIMS = (
    ("euc_III", "euc_II"),
    ("euc_II", "euc_I"),
    ("ent_III", "ent_II"),
    ("ent_II", "ent_I"),
    ("ent_I", "euc_I"),
    ("ent_II", "euc_II"),
    ("ent_III", "euc_III"),
)
"""Shalev-Shwartz 2007, §8.4 (beside Table 8.1): III < II < I for both regularizers, and entropic <
Euclidean for every update (each pair: (better, worse))."""


def table_8_1_claims(better_than) -> dict[str, bool]:
    """The thesis's claims (§8.4) under a comparison ``better_than(a, b)`` (a errs less than b):
    each ordering of :data:`CLAIMS`, and the I → II gain above the II → III gain for each
    regularizer (``better_than`` applied to the gains, passed as pairs of pairs)."""
    out = {f"{a} < {b}": better_than(a, b) for a, b in CLAIMS}
    for reg in ("euc", "ent"):
        out[f"{reg}: gain I→II > gain II→III"] = better_than(
            (f"{reg}_III", f"{reg}_II"), (f"{reg}_II", f"{reg}_I")
        )
    return out


def table_rule(values: dict):
    """``better_than`` on a table of numbers: a plain comparison; a gain (pair) is a difference."""

    def get(q):
        return values[q[1]] - values[q[0]] if isinstance(q, tuple) else values[q]

    return lambda a, b: get(a) < get(b)


def paired_rule(finals: dict):
    """``better_than`` on per-replicate values sharing their streams (common random numbers):
    the 95% t-interval of the paired differences ``b − a`` lies above 0."""

    def get(q):
        return finals[q[1]] - finals[q[0]] if isinstance(q, tuple) else finals[q]

    def better(a, b):
        diff = get(b) - get(a)
        half = student_t.ppf(0.975, diff.size - 1) * diff.std(ddof=1) / math.sqrt(diff.size)
        return bool(diff.mean() - half > 0.0)

    return better


def test_the_thesis_numbers_satisfy_the_rule_but_one_tie():
    failed = []
    for user, row in TABLE_8_1.items():
        claims = table_8_1_claims(table_rule(dict(zip(COLUMNS, row, strict=True))))
        failed += [(user, name) for name, ok in claims.items() if not ok]
    # beck-s, Euclidean: I→II and II→III both gain 3.3 points (13 of the table's 14 pairs)
    assert failed == [("beck-s", "euc: gain I→II > gain II→III")]


@pytest.mark.slow
def test_table_8_1_orderings_on_the_synthetic_stream():
    cfg = TournamentConfig.from_mapping(yaml.safe_load(CONFIG.read_text(encoding="utf-8")))
    cells = cfg.cells()
    assert len(cells) == len(COLUMNS)
    finals = {}
    for name, cell in zip(COLUMNS, cells, strict=True):
        params = cell.player_params
        assert cell.player == "label_ranking"
        assert (params["regularizer"][:3], params["variant"]) == tuple(name.split("_")), name
        rows = run_cell(cell, cfg)["rows"]
        final = rows[(rows.t == cfg.horizon) & (rows.metric == "ranking_mistakes")]
        finals[name] = final.sort_values("replicate").value.to_numpy()
        # deterministic given the seed; 1% leaves room for another BLAS's round-off, which can
        # break an exact tie of two scores the other way
        assert finals[name].mean() == pytest.approx(PINS[name], rel=0.01), name
    claims = table_8_1_claims(paired_rule(finals))
    # measured: all nine hold (gains I → II / II → III: 170.0 / 35.9 Euclidean, 75.6 / 19.7
    # entropic), and the seven orderings hold on the unpaired intervals too
    assert all(claims.values()), claims
    half = {k: student_t.ppf(0.975, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size)
            for k, v in finals.items()}  # fmt: skip
    assert all(finals[a].mean() + half[a] < finals[b].mean() - half[b] for a, b in CLAIMS)
    assert all(table_8_1_claims(table_rule({k: v.mean() for k, v in finals.items()})).values())
    assert np.all(np.array([finals[c].mean() for c in COLUMNS]) / cfg.horizon < 0.3)
