"""Game metrics: the duality gap of the average and of the current strategies in a zero-sum
matrix game."""

from __future__ import annotations

import numpy as np

from arena.metrics.base import Block, Core, ExpertsMetric, ExpertsRecord
from arena.metrics.instant import _add_rows_in_round_order
from arena.spec import GameSpec


def duality_gap_bruteforce(a: np.ndarray, p: list[float], q: list[float]) -> float:
    """Return ``max_j Σ_i p_i A_ij − min_i Σ_j A_ij q_j`` of one pair by plain loops.

    Examples
    --------
    >>> duality_gap_bruteforce(np.array([[-1.0, 1.0], [1.0, -1.0]]), [1.0, 0.0], [0.5, 0.5])
    1.0
    """
    n_rows, n_cols = a.shape
    column_values = [sum(p[i] * float(a[i, j]) for i in range(n_rows)) for j in range(n_cols)]
    row_values = [sum(float(a[i, j]) * q[j] for j in range(n_cols)) for i in range(n_rows)]
    return max(column_values) - min(row_values)


def duality_gap(a: np.ndarray, p_bar: np.ndarray, q_bar: np.ndarray) -> np.ndarray:
    """Return ``max_j (p̄ᵀA)_j − min_i (A q̄)_i`` row-wise (p̄: (R, N), q̄: (R, M), A: (N, M)).

    Any pair of strategies may be passed: the averages (``duality_gap``) or the current ones
    (``last_iterate_gap``).

    Examples
    --------
    >>> a = np.array([[-1.0, 1.0], [1.0, -1.0]])
    >>> duality_gap(a, np.array([[0.5, 0.5], [1.0, 0.0]]), np.array([[0.5, 0.5], [0.5, 0.5]]))
    array([0., 1.])
    """
    # einsum rather than BLAS matmul: a row's value must not depend on the batch size
    col = np.einsum("rn,nm->rm", p_bar, a)
    row = np.einsum("rm,nm->rn", q_bar, a)
    return col.max(axis=1) - row.min(axis=1)


class DualityGap(ExpertsMetric):
    """Duality gap ``max_j (p̄_tᵀA)_j − min_i (A q̄_t)_i`` of the average strategies.

    A is the row player's loss matrix, ``p̄_t`` our player's average distribution over the
    rounds so far (accumulated here, block by block) and ``q̄_t`` the column player's, read
    from the adversary. The gap is ≥ 0, is 0 exactly at a saddle point, and equals
    ``(a_max − a_min)(R^row_t + R^col_t)/t`` for the rescaled losses of
    :class:`arena.adversaries.matrix_game.MatrixGame`, so it → 0 when both players have no regret
    (Freund & Schapire 1999). In the units of A. Logged only against an adversary with
    ``game_matrix()`` and ``column_average()`` methods (``matrix_game``).

    Examples
    --------
    >>> from arena import play
    >>> from arena.adversaries.matrix_game import MatrixGame
    >>> df = play("hedge", MatrixGame(game="matching_pennies"), horizon=1000,
    ...           metrics=[DualityGap()])
    >>> bool(df.value.iloc[-1] < 0.1)
    True
    """

    name = "duality_gap"

    def applicable(self, player, adversary) -> str | None:
        ok = all(callable(getattr(adversary, m, None)) for m in ("game_matrix", "column_average"))
        return None if ok else "the adversary is not a matrix game (no game_matrix/column_average)"

    def attach(self, player, adversary) -> None:
        self._source = adversary

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._p_sum = np.zeros((spec.n_replicates, spec.n_actions))

    def advance(self, block: Block, core: Core) -> None:
        # round by round, not numpy's pairwise sum over the chunk: the same bits for every chunk
        # size (seeding contract), which a game split over threads relies on (arena.parallel)
        _add_rows_in_round_order(block.probs, self._p_sum)

    def values(self, core: Core) -> np.ndarray:
        p_bar = self._p_sum / max(core.t, 1)
        q_bar = np.asarray(self._source.column_average())
        return duality_gap(np.asarray(self._source.game_matrix()), p_bar, q_bar)[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """:func:`duality_gap_bruteforce` of ``p̄_t``, averaged round by round from the record,
        and of the opponent's ``q̄_t``, which only the adversary knows (its declaration)."""
        t, n_act = record.probs.shape
        p_bar = [sum(float(record.probs[s, i]) for s in range(t)) / t for i in range(n_act)]
        q_bar = np.asarray(record.adversary.column_average())[record.replicate].tolist()
        return duality_gap_bruteforce(np.asarray(record.adversary.game_matrix()), p_bar, q_bar)


class LastIterateGap(ExpertsMetric):
    """Duality gap ``max_j (p_tᵀA)_j − min_i (A q_t)_i`` of the current strategies.

    The same gap as :class:`DualityGap`, of the distributions ``p_t`` and ``q_t`` played in the
    round of the checkpoint (the last iterate) instead of the averages: ≥ 0, and 0 exactly when
    ``(p_t, q_t)`` is a saddle point. Average iterates of no-regret dynamics converge; the last
    iterate need not: Hedge with a constant step moves away from an interior equilibrium (Bailey
    & Piliouras 2018), while the optimistic dynamics (Optimistic Hedge, i.e. optimistic
    multiplicative weights, and optimistic gradient descent) converge in the last iterate
    (Daskalakis & Panageas 2019; Wei, Lee, Zhang & Luo 2021). In the units of A. Logged only
    against an adversary with ``game_matrix()`` and ``column_strategy()`` methods
    (``matrix_game``).

    Examples
    --------
    >>> from arena import play
    >>> from arena.adversaries.matrix_game import MatrixGame
    >>> game = MatrixGame(game="biased_rock_paper_scissors", opponent="self")
    >>> df = play("optimistic_gd", game, player_params={"eta": 0.5}, horizon=1000,
    ...           checkpoints=[100, 1000], metrics=[LastIterateGap()])
    >>> bool(df.value.iloc[-1] < 1e-6 * df.value.iloc[0])
    True

    References
    ----------
    Bailey & Piliouras (2018), "Multiplicative weights update in zero-sum games", EC.
    Daskalakis & Panageas (2019), "Last-iterate convergence: zero-sum games and constrained
    min-max optimization", ITCS. Wei, Lee, Zhang & Luo (2021), "Linear last-iterate convergence
    in constrained saddle-point optimization", ICLR.
    """

    name = "last_iterate_gap"

    def applicable(self, player, adversary) -> str | None:
        ok = all(callable(getattr(adversary, m, None)) for m in ("game_matrix", "column_strategy"))
        return None if ok else "the adversary is not a matrix game (no game_matrix/column_strategy)"

    def attach(self, player, adversary) -> None:
        self._source = adversary

    def values(self, core: Core) -> np.ndarray:
        q = np.asarray(self._source.column_strategy())
        return duality_gap(np.asarray(self._source.game_matrix()), core.last_probs, q)[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """:func:`duality_gap_bruteforce` of the record's last ``p_t`` and the opponent's
        ``q_t`` (the adversary's declaration)."""
        q = np.asarray(record.adversary.column_strategy())[record.replicate].tolist()
        p = [float(v) for v in record.probs[-1]]
        return duality_gap_bruteforce(np.asarray(record.adversary.game_matrix()), p, q)
