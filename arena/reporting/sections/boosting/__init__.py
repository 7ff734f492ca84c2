"""The "Boosting" section: batch boosting as an experts game, and online boosting.

Shown when the results hold rows of either kind:

* **Boosting as a game** (rows ``vote_train_error`` / ``vote_test_error`` / ``zero_weight_frac``
  of games against ``boosting_oracle``): per dataset and player, at the horizon, the majority
  vote's training and held-out error, the share of zero-weight examples, the mean edge and the
  wall time per round — the analogue of Luo 2016, Table 2.2 (AdaBoost = Hedge, NH-Boost =
  NormalHedge, NH-Boost.DT = NormalHedge.DT), with the thesis's OCR-49 row beside the digits 4 vs 9
  stand-in. Then Figure 2.2's analogue: the fraction of zero-weight examples against the round,
  per dataset and player, with a summary (:func:`zero_weight_summary`: is NH-Boost.DT's fraction
  above NH-Boost's, does each grow); and Figure 2.3's: the cumulative margin distribution at T
  (``margin_frac`` on a grid of θ) as a figure, a table at θ ∈ {0, 0.1, 0.2, 0.3} and a summary
  (:func:`margin_summary`: at how many θ each player's curve lies below all the others').
* **Online boosting** (rows ``mistakes`` with ``base_mistakes`` or ``base_loss`` of boosting
  games): per stream and booster, the progressive error (or loss) of the booster and of its base
  learner, the relative improvement ``100·(base − booster)/base`` with its interval, the
  held-out error, and the Bayes error (or risk) of streams drawn from a known law (an adversary
  with a ``bayes_risk()`` method, e.g. ``dataset_stream``'s generated datasets); then the mean
  and median improvement per booster over the streams, the statistic of Luo 2016, Tables 3.2–3.3
  (Beygelzimer, Kale & Luo 2015; Beygelzimer, Hazan, Kale & Luo 2015, §6), beside the sources'
  numbers where the booster is one of theirs.
* **How many weak learners** (rows ``mistakes`` of ``online_bbm`` / ``adaboost_ol`` over
  ``oracle`` weak learners against ``edge_oracle``): the analogue of Luo 2016, Table 3.1 — per
  edge and ε, the smallest N whose measured error rate is ≤ ε beside the exact binomial answer
  and Theorems 9 and 12's sufficient counts, the majority error at N = 51 beside its exact value
  and Hoeffding's bound, and a figure of the error rate against N.

* **The theorems beside their bounds** (:mod:`.theorems`): NH-Boost.DT's training error and
  margins against a weak learner of known edge (Luo 2016, Theorem 3), the examples a booster needs
  after an uninformative warm-up (Theorem 10's sample-complexity half), and ``ogb_hull`` on the
  lower-bound stream of Theorems 14 and 15.

One module per part, in the order the section shows them: :mod:`.batch` (boosting as a game),
:mod:`.scaling` (how many weak learners), :mod:`.online` (online boosting) and :mod:`.theorems`;
:mod:`.rows` holds what they read alike from the rows.
"""

from __future__ import annotations

from arena.reporting.sections.boosting.batch import game_table
from arena.reporting.sections.boosting.online import online_table
from arena.reporting.sections.boosting.scaling import scaling_blocks
from arena.reporting.sections.boosting.theorems import theorem_blocks
from arena.reporting.sections.context import ReportContext, Section


def boosting(ctx: ReportContext) -> Section | None:
    """The boosting section; ``None`` without rows of either kind."""
    blocks = game_table(ctx) + scaling_blocks(ctx) + online_table(ctx) + theorem_blocks(ctx)
    if not blocks:
        return None
    return Section("Boosting", "boosting", blocks)
