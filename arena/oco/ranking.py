"""Metrics of the ``label_ranking`` protocol: the ranking loss and the rounds with a ranking
mistake.

With scores ``ρ_{t,r} = ⟨w_{t,r}, x_t⟩`` and the relevant set ``Y_t`` (the bits of ``y_t``):

* ``ranking_loss``: ``Σ_{s ≤ t} |{(r, q) ∈ Y_s × Ȳ_s : ρ_{s,r} ≤ ρ_{s,q}}| / (|Y_s|·|Ȳ_s|)``, the
  fraction of relevant–irrelevant pairs a round misorders (a tie is misordered), summed over the
  rounds; a round whose Y_s is empty or full has no pair and adds 0. The normalization by
  ``|Y||Ȳ|`` is the ranking loss of Schapire & Singer (1999) (AdaBoost.MR's), also used by
  Crammer & Singer (2003, category ranking);
* ``ranking_mistakes``: ``#{s ≤ t : some r ∈ Y_s, q ∉ Y_s has ρ_{s,r} ≤ ρ_{s,q}}``, the rounds
  with a ranking mistake (Shalev-Shwartz 2007, Ch. 8: the rounds whose max-pair hinge (8.1) is
  ≥ γ; Table 8.1 reports them).

Both are computed from the points played and the features, independently of the loss's own
prediction, and their references enumerate every pair.
"""

from __future__ import annotations

import numpy as np

from arena.oco.components import LABEL_RANKING, feature_dim
from arena.oco.losses import multiclass_scores, relevant_mask
from arena.oco.metrics import OCOBlock, OCOCore, OCOMetric, OCORecord
from arena.spec import GameSpec

__all__ = ["RankingLoss", "RankingMistakes", "misordered_fraction"]


def misordered_fraction(scores: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(fraction, any)``: the share of pairs ``(r ∈ Y, q ∉ Y)`` with ``ρ_r ≤ ρ_q``, and
    whether there is one, for scores and relevant masks (..., k).

    Examples
    --------
    >>> f, m = misordered_fraction(np.array([3.0, 1.0, 2.0]), np.array([True, True, False]))
    >>> float(f), bool(m)                       # pairs (0, 2) ordered, (1, 2) misordered
    (0.5, True)
    """
    rel = mask[..., :, None] & ~mask[..., None, :]
    bad = rel & (scores[..., :, None] <= scores[..., None, :])
    pairs = rel.sum(axis=(-2, -1))
    count = bad.sum(axis=(-2, -1))
    return np.where(pairs > 0, count / np.maximum(pairs, 1), 0.0), count > 0


def _block_scores(block: OCOBlock, spec: GameSpec) -> tuple[np.ndarray, np.ndarray]:
    x = block.data.densified().x
    scores = multiclass_scores(block.w, x)
    return scores, relevant_mask(block.data.y, int(spec.n_classes))


def _record_pairs(record: OCORecord):
    """Yield, round by round, the scores and the (relevant, irrelevant) label lists, by loops."""
    spec = record.spec
    k, d = int(spec.n_classes), feature_dim(spec)
    for w, x, y in zip(record.w, record.data.x, record.data.y, strict=True):
        scores = [sum(float(w[r * d + i]) * float(x[i]) for i in range(d)) for r in range(k)]
        code = int(y)
        rel = [r for r in range(k) if (code >> r) & 1]
        irr = [q for q in range(k) if not (code >> q) & 1]
        yield scores, rel, irr


class RankingLoss(OCOMetric):
    """Cumulative ranking loss: the fraction of misordered relevant–irrelevant pairs, summed.

    ``Σ_{s≤t} |{(r, q) ∈ Y_s × Ȳ_s : ⟨w_{s,r} − w_{s,q}, x_s⟩ ≤ 0}| / (|Y_s||Ȳ_s|)`` (module
    docstring). Each round adds a value in [0, 1].

    References
    ----------
    Schapire & Singer (1999) (the ranking loss); Crammer & Singer (2003, category ranking)
    (online label ranking); Shalev-Shwartz 2007, Ch. 8.
    """

    name = "ranking_loss"
    protocols = frozenset({LABEL_RANKING})

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._total = np.zeros(spec.n_replicates)

    def advance(self, block: OCOBlock, core: OCOCore) -> None:
        scores, mask = _block_scores(block, self._spec)
        self._total += misordered_fraction(scores, mask)[0].sum(axis=1)

    def values(self, core: OCOCore) -> np.ndarray:
        return self._total[:, None].copy()

    def reference(self, record: OCORecord, param: float) -> float:
        """Every pair of every round counted by loops."""
        total = 0.0
        for scores, rel, irr in _record_pairs(record):
            if rel and irr:
                bad = sum(1 for r in rel for q in irr if scores[r] <= scores[q])
                total += bad / (len(rel) * len(irr))
        return total


class RankingMistakes(OCOMetric):
    """Number of rounds with a ranking mistake: some relevant label scores ≤ an irrelevant one.

    ``#{s ≤ t : ∃ r ∈ Y_s, q ∉ Y_s, ⟨w_{s,r} − w_{s,q}, x_s⟩ ≤ 0}`` (Shalev-Shwartz 2007, Ch. 8;
    the quantity of Table 8.1, there in percent of the rounds).

    References
    ----------
    Shalev-Shwartz 2007, Ch. 8 and Table 8.1.
    """

    name = "ranking_mistakes"
    protocols = frozenset({LABEL_RANKING})

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._count = np.zeros(spec.n_replicates)

    def advance(self, block: OCOBlock, core: OCOCore) -> None:
        scores, mask = _block_scores(block, self._spec)
        self._count += misordered_fraction(scores, mask)[1].sum(axis=1)

    def values(self, core: OCOCore) -> np.ndarray:
        return self._count[:, None].copy()

    def reference(self, record: OCORecord, param: float) -> float:
        """The rounds with a misordered pair, found by loops."""
        count = 0
        for scores, rel, irr in _record_pairs(record):
            count += any(scores[r] <= scores[q] for r in rel for q in irr)
        return float(count)
