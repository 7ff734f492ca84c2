"""Shalev-Shwartz 2007, Table 8.1 reproduced qualitatively (slow): the tournament
``configs/tournament/label_ranking.yaml`` on a synthetic multi-label stream (the Enron data are
not available offline), its final ranking mistakes pinned, and the thesis's orderings checked on
ours by the rule :func:`table_8_1_claims`, which the thesis's own numbers satisfy too."""

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
    # Shalev-Shwartz 2007, Table 8.1 (L2121–L2131): Enron users, % of rounds with a ranking
    # mistake (the caption says "average number of online mistakes"; the magnitudes against m are
    # percentages, digest §5), columns Euclidean I, II, III, entropic I, II, III
    "beck-s": (58.5, 55.2, 51.9, 54.0, 50.2, 47.1),
    "farmer-d": (29.5, 23.3, 22.7, 27.6, 22.6, 22.0),
    "kaminski-v": (50.2, 44.5, 41.9, 46.7, 42.9, 40.0),
    "kitchen-l": (48.2, 41.9, 40.4, 41.9, 38.3, 36.0),
    "lokay-m": (24.9, 19.1, 18.4, 24.0, 18.7, 18.2),
    "sanders-r": (31.7, 28.3, 27.2, 28.3, 24.2, 23.4),
    "williams-w3": (5.0, 4.5, 4.4, 4.2, 3.4, 3.1),
}
COLUMNS = ("euc_I", "euc_II", "euc_III", "ent_I", "ent_II")
"""The five columns the lab plays (entropic update III, §7.3.2's interior point, is not
implemented), in the order of the tournament's players."""

PINS = {"euc_I": 567.5, "euc_II": 389.25, "euc_III": 357.625, "ent_I": 425.125, "ent_II": 354.75}
"""Mean ranking mistakes at T = 2000 over 8 replicates (28.4, 19.5, 17.9, 21.3 and 17.7 % of the
rounds), measured by this test's own play of the config."""


def table_8_1_claims(low: dict, high: dict, mean: dict) -> dict[str, bool]:
    """The thesis's claims (L2125) on the five columns, each strict ordering required of the 95%
    intervals (``low`` of the worse above ``high`` of the better; a table without intervals
    passes its values as all three):

    * ``III < II < I``, Euclidean; ``II < I``, entropic (aggressive updates help);
    * entropic < Euclidean for updates I and II;
    * the I → II gain exceeds the II → III gain (Euclidean; means).
    """

    def below(a, b):  # a's interval entirely below b's
        return high[a] < low[b]

    return {
        "euclidean III < II < I": below("euc_III", "euc_II") and below("euc_II", "euc_I"),
        "entropic II < I": below("ent_II", "ent_I"),
        "entropic < euclidean (I, II)": below("ent_I", "euc_I") and below("ent_II", "euc_II"),
        "gain I→II > gain II→III": mean["euc_I"] - mean["euc_II"]
        > mean["euc_II"] - mean["euc_III"],
    }


def test_the_thesis_numbers_satisfy_the_rule_but_one_tie():
    ties = []
    for user, row in TABLE_8_1.items():
        values = dict(zip(COLUMNS, row[:5], strict=True))
        claims = table_8_1_claims(values, values, values)
        ties += [(user, name) for name, ok in claims.items() if not ok]
    # beck-s, Euclidean: I→II and II→III both gain 3.3 points (digest §5: 13 of 14 pairs)
    assert ties == [("beck-s", "gain I→II > gain II→III")]


@pytest.mark.slow
def test_table_8_1_orderings_on_the_synthetic_stream():
    cfg = TournamentConfig.from_mapping(yaml.safe_load(CONFIG.read_text(encoding="utf-8")))
    cells = cfg.cells()
    assert len(cells) == len(COLUMNS)
    mean, low, high = {}, {}, {}
    for name, cell in zip(COLUMNS, cells, strict=True):
        params = cell.player_params
        assert cell.player == "label_ranking"
        assert (params["regularizer"][:3], params["variant"]) == tuple(name.split("_")), name
        out = run_cell(cell, cfg)
        rows = out["rows"]
        final = rows[(rows.t == cfg.horizon) & (rows.metric == "ranking_mistakes")].value
        n = len(final)
        half = student_t.ppf(0.975, n - 1) * final.std(ddof=1) / math.sqrt(n)
        mean[name], low[name], high[name] = final.mean(), final.mean() - half, final.mean() + half
        # deterministic given the seed; 1% leaves room for another BLAS's round-off, which can
        # break an exact tie of two scores the other way
        assert mean[name] == pytest.approx(PINS[name], rel=0.01), name
    claims = table_8_1_claims(low, high, mean)
    assert all(claims.values()), claims
    assert np.all(np.array([mean[c] for c in COLUMNS]) / cfg.horizon < 0.3)  # % of rounds
