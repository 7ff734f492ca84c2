"""Self-play in a zero-sum matrix game: the adversary is itself a registered experts player."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from arena.base import file_digest
from arena.errors import ArenaError, ConfigError, GameError
from arena.experts.components import AdaptiveAdversary, ExpertsPlayer
from arena.params import InstanceOf, Interval, IsNone, OneOf
from arena.sampling import sample_actions
from arena.spec import AdversaryTags, GameSpec, History

GAMES: dict[str, list[list[float]]] = {
    # row player's LOSS matrices (the row player minimizes, the column player maximizes)
    "matching_pennies": [[-1.0, 1.0], [1.0, -1.0]],
    "rock_paper_scissors": [[0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]],
    "biased_rock_paper_scissors": [[0.0, 25.0, -50.0], [-25.0, 0.0, 5.0], [50.0, -5.0, 0.0]],
    "shapley": [[1.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.0, 1.0, 1.0]],
}
"""Built-in zero-sum games as the row player's loss matrix A (see :class:`MatrixGame`)."""

GAME_NAMES = (*GAMES, "random")

SELF = "self"
"""``opponent="self"``: the column player is the game's own player, with its parameters."""

SIMPLEX_TOL = 1e-9
"""The opponent's ``q_t`` must sum to 1 within this (the engine's tolerance for players)."""


def load_matrix(path: str | Path) -> np.ndarray:
    """Load a 2-D numeric matrix from ``.npy`` or ``.csv`` (a header row is allowed in CSV).

    Raises ``ValueError`` naming the file and what is wrong (:class:`MatrixGame` reports it as a
    :class:`~arena.errors.ConfigError` on ``matrix_path``).
    """
    path = Path(path)
    if path.suffix.lower() not in (".npy", ".csv"):
        raise ValueError(f"{path}: use a .npy or .csv file")
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    try:
        if path.suffix.lower() == ".npy":
            arr = np.load(path, allow_pickle=False)
        else:
            import pandas as pd

            frame = pd.read_csv(path, header=None)
            if frame.shape[0] and not pd.api.types.is_numeric_dtype(frame.dtypes.iloc[0]):
                frame = pd.read_csv(path)
            arr = frame.to_numpy(dtype=np.float64)
    except (ValueError, OSError) as exc:
        raise ValueError(f"{path}: cannot read a matrix ({exc})") from exc
    arr = np.asarray(arr, dtype=np.float64)
    if arr.ndim != 2 or 0 in arr.shape or not np.isfinite(arr).all():
        raise ValueError(f"{path}: expected a finite 2-D matrix, got shape {arr.shape}")
    return arr


class MatrixGame(AdaptiveAdversary):
    """A zero-sum matrix game whose column player is any registered experts player.

    Our player picks rows, the opponent picks columns; A is the row player's loss matrix.

    Parameters
    ----------
    game : {"matching_pennies", "rock_paper_scissors", "biased_rock_paper_scissors", "shapley", \
"random"}, optional
        A built-in game (default ``"random"``, unless ``matrix_path`` is given).
    matrix_path : str, optional
        A ``.npy`` or ``.csv`` file holding A (rows: our actions, columns: the opponent's);
        exclusive with ``game``.
    opponent : str
        Registry name of the experts player that plays the columns, or ``"self"``: self-play,
        the game's own player with the same parameters (the arena hands the adversary a clone
        of it before reset, :meth:`~arena.components.Adversary.bind_player`; a fresh clone plays
        the columns, so the game's player and its streams are never touched).
    opponent_params : dict, optional
        Its hyperparameters (not with ``"self"``, which takes the game player's).
    n_columns : int, optional
        ``random`` only: number of columns M (default M = N).
    game_seed : int
        ``random`` only: seed of A's entries, uniform on [−1, 1] (the same A for every replicate).

    Notes
    -----
    Round t: our player commits ``p_t``; the opponent, independently, commits ``q_t`` (its own
    ``predict``). Our loss vector is the expected column loss ``l_t = (A q_t − a_min)/(a_max −
    a_min) ∈ [0, 1]^N``; the opponent then observes its loss vector ``c_t = (a_max − p_tᵀA)/(a_max −
    a_min)`` (it maximizes our loss), with the same affine rescaling, so both regrets are in the
    same units. N is the number of rows (fixed by a named game or a file). The adversary is
    adaptive and reads ``p_t`` (``sees_distribution``), never our draw. The opponent gets its own
    streams, seeded at reset from the replicate's stream; if it observes its own actions they are
    drawn from ``q_t`` with that stream too.

    Built-in games (row loss matrices): matching pennies ``[[−1, 1], [1, −1]]`` (value 0);
    rock-paper-scissors ``[[0, 1, −1], [−1, 0, 1], [1, −1, 0]]`` (value 0); biased
    rock-paper-scissors ``[[0, 25, −50], [−25, 0, 5], [50, −5, 0]]``, the negated row payoff of
    Bošanský, Lisý, Lanctot, Čermák & Winands (2016), Figure 7 (OpenSpiel's ``matrix_brps``):
    value 0, unique equilibrium ``(1, 10, 5)/16`` for both players; ``shapley``: the 3 × 3
    cyclic game of Shapley (1964) read as zero-sum — the row payoff is Shapley's row matrix U (a
    single 1 per row), the row loss ``1 − U`` (value 2/3, uniform equilibrium); ``random``.

    **Self-play** (``opponent="self"``). Both sides run the same algorithm with the same
    parameters, each on its own loss vectors. Players that start from the uniform distribution
    (Hedge, RM, Optimistic Hedge, ...) start at the equilibrium of a game whose equilibrium is
    uniform (rock-paper-scissors, matching pennies, shapley) and, their expected losses being
    equal, stay there: the gap is 0 from round 1. Biased rock-paper-scissors and random games
    start them off equilibrium, where the dynamics are seen (average-iterate convergence,
    cycling or convergence of the last iterate).

    **Average strategies and the duality gap.** With ``p̄_T``, ``q̄_T`` the averages,
    ``max_j (p̄ᵀA)_j − min_i (A q̄)_i = (a_max − a_min)(R^row_T + R^col_T)/T`` exactly (both
    regrets on the rescaled losses), so two no-regret players drive the gap to 0 and ``(p̄, q̄)``
    to an ε-equilibrium (Freund & Schapire 1999). :meth:`game_matrix` and :meth:`column_average`
    expose what the ``duality_gap`` metric needs, :meth:`column_strategy` the opponent's current
    ``q_t`` that ``last_iterate_gap`` reads, and :meth:`column_regret` the opponent's regret.

    Examples
    --------
    >>> from arena import play
    >>> from arena.metrics.games import DualityGap
    >>> df = play("hedge", MatrixGame(game="rock_paper_scissors"), horizon=2000,
    ...           metrics=[DualityGap()])
    >>> bool(df.value.iloc[-1] < 0.1)
    True

    Self-play of Regret Matching⁺ on biased rock-paper-scissors:

    >>> df = play("regret_matching", MatrixGame(game="biased_rock_paper_scissors",
    ...           opponent="self"), player_params={"variant": "rm_plus"}, horizon=2000,
    ...           checkpoints=[20, 2000], metrics=[DualityGap()])
    >>> bool(df.value.iloc[-1] < df.value.iloc[0] / 10)
    True

    References
    ----------
    Freund & Schapire (1999), "Adaptive game playing using multiplicative weights"; Shapley
    (1964), "Some topics in two-person games"; Cesa-Bianchi & Lugosi (2006), §7.2; Bošanský,
    Lisý, Lanctot, Čermák & Winands (2016), "Algorithms for computing strategies in two-player
    simultaneous move games", Artificial Intelligence 237, Figure 7.
    """

    tags = AdversaryTags(oblivious=False, sees_distribution=True)
    parameter_constraints: ClassVar = {
        "game": [OneOf(*GAME_NAMES), IsNone()],
        "matrix_path": [InstanceOf(str, "the path of a .npy or .csv file"), IsNone()],
        "opponent": [InstanceOf(str, "an experts player's registry name, or 'self'")],
        "opponent_params": [InstanceOf(Mapping, "a mapping of its parameters"), IsNone()],
        "n_columns": [Interval(1, None, integer=True), IsNone()],
        "game_seed": [Interval(0, None, integer=True)],
    }

    def __init__(
        self,
        game: str | None = None,
        matrix_path: str | None = None,
        opponent: str = "hedge",
        opponent_params: Mapping | None = None,
        n_columns: int | None = None,
        game_seed: int = 0,
    ):
        self.game = game
        self.matrix_path = matrix_path
        self.opponent = opponent
        self.opponent_params = opponent_params
        self.n_columns = n_columns
        self.game_seed = game_seed

    # ------------------------------------------------------------------------------------------
    # the matrix

    def _kind(self) -> str:
        if self.matrix_path is not None:
            if self.game is not None:
                message = "give either game or matrix_path, not both"
                raise ConfigError(self.label(), "game", message)
            return "file"
        return "random" if self.game is None else self.game

    def _fixed_matrix(self) -> np.ndarray | None:
        kind = self._kind()
        if kind == "file":
            try:
                return load_matrix(self.matrix_path)
            except ValueError as exc:
                raise ConfigError(self.label(), "matrix_path", str(exc)) from exc
        if kind in GAMES:
            return np.array(GAMES[kind], dtype=np.float64)
        return None

    def _build_matrix(self, n_rows: int) -> np.ndarray:
        fixed = self._fixed_matrix()
        if fixed is not None:
            return fixed
        m = n_rows if self.n_columns is None else int(self.n_columns)
        return np.random.default_rng(int(self.game_seed)).uniform(-1.0, 1.0, (n_rows, m))

    def bind_player(self, player: Any) -> None:
        self._bound = player

    def _opponent(self) -> Any:
        """The column player, not yet reset: a fresh clone of the game's player for ``"self"``,
        else the named registered player with ``opponent_params``."""
        from arena import registry

        who = self.label()
        if self.opponent == SELF:
            if self.opponent_params:
                message = (
                    "'self' plays the game's player with its own parameters; opponent_params "
                    "go with a named opponent"
                )
                raise ConfigError(who, "opponent_params", message)
            bound = getattr(self, "_bound", None)
            if bound is None:
                message = (
                    "'self' plays the game's player, which the arena binds before reset "
                    "(bind_player); outside a game name an opponent, e.g. opponent='hedge'"
                )
                raise ConfigError(who, "opponent", message)
            opp = bound.clone()
            if not isinstance(opp, ExpertsPlayer):
                message = f"self-play needs an experts player; the game's player is {opp!r}"
                raise ConfigError(who, "opponent", message)
            return opp
        opp = registry.make_inner(
            who, "player", self.opponent, self.opponent_params, name_param="opponent"
        )
        if not isinstance(opp, ExpertsPlayer):
            raise ConfigError(who, "opponent", f"{self.opponent!r} is not an experts player")
        return opp

    def data_identity(self) -> dict[str, str]:
        path = self.matrix_path
        return {"matrix_path": file_digest(path)} if path and Path(path).is_file() else {}

    def resolve_n_actions(self, requested: int | None) -> int:
        fixed = self._fixed_matrix()
        if fixed is None:
            return 10 if requested is None else int(requested)
        rows = fixed.shape[0]
        if requested is not None and int(requested) != rows:
            raise ConfigError(
                self.label(),
                "n_actions",
                f"the game has {rows} rows (our actions) but n_actions = {requested} was "
                f"requested (omit n_actions or set n_actions={rows})",
            )
        return rows

    # ------------------------------------------------------------------------------------------
    # game state

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        a = self._build_matrix(spec.n_actions)
        if a.shape[0] != spec.n_actions:
            raise ConfigError(who, "n_actions", f"the game has {a.shape[0]} rows")
        opp = self._opponent()
        if opp.tags.needs_horizon and spec.horizon is None:
            raise ConfigError(who, "opponent", f"{self.opponent!r} needs the horizon")
        n_rep, n_col = spec.n_replicates, a.shape[1]
        opp_spec = GameSpec(
            "experts",
            n_col,
            spec.horizon,
            (0.0, 1.0),
            n_replicates=n_rep,
            replicate_ids=spec.replicates(),
        )
        self._rngs = list(rngs)
        opp_rngs = [np.random.default_rng(int(rng.integers(2**63))) for rng in self._rngs]
        try:
            opp.reset(opp_spec, opp_rngs)
        except ArenaError as exc:
            raise ConfigError(who, "opponent_params", str(exc)) from exc
        self._opp = opp
        self._a = a
        self._lo, self._hi = float(a.min()), float(a.max())
        self._scale = self._hi - self._lo if self._hi > self._lo else 1.0
        self._ids = spec.replicates()
        self._q_sum = np.zeros((n_rep, n_col))
        self._q_last = np.full((n_rep, n_col), 1.0 / n_col)
        self._col_cum = np.zeros((n_rep, n_col))
        self._col_learner = np.zeros(n_rep)
        self._rounds = 0

    def losses(self, t: int, history: History) -> np.ndarray:
        p = np.asarray(history.probs, dtype=np.float64)
        n_rep, n_col = self._q_sum.shape
        q = np.array(self._opp.predict(), dtype=np.float64)
        if q.shape != (n_rep, n_col):
            raise GameError(
                self._who(),
                f"opponent predicted shape {q.shape}",
                round=t,
                replicate=int(self._ids[0]),
            )
        # one test per replicate: a NaN or an infinite entry makes the sum non-finite
        ok = np.abs(q.sum(axis=1) - 1.0) <= SIMPLEX_TOL
        if not ok.all():
            r = int(np.flatnonzero(~ok)[0])
            raise GameError(
                self._who(),
                f"opponent's q = {q[r].tolist()} is not a distribution",
                round=t,
                replicate=int(self._ids[r]),
            )
        # einsum, not BLAS matmul: a row's value must not depend on the batch size (replicate
        # independence), and BLAS kernels change their summation order with the shape. The
        # clipping only removes rounding: A q ∈ [a_min, a_max] exactly.
        row = (np.einsum("rm,nm->rn", q, self._a) - self._lo) / self._scale
        np.minimum(np.maximum(row, 0.0, out=row), 1.0, out=row)
        col = (self._hi - np.einsum("rn,nm->rm", p, self._a)) / self._scale
        np.minimum(np.maximum(col, 0.0, out=col), 1.0, out=col)
        if self._opp.tags.observes_action:
            actions = np.empty(n_rep, dtype=np.int64)
            uniforms = np.array([rng.random() for rng in self._rngs])
            sample_actions(np.ascontiguousarray(np.maximum(q, 0.0)), uniforms, actions)
            self._opp.update(col.copy(), actions=actions)
        else:
            self._opp.update(col.copy())
        self._q_sum += q
        self._q_last = q
        self._col_cum += col
        self._col_learner += np.einsum("rm,rm->r", q, col)
        self._rounds += 1
        return row

    def _who(self) -> str:
        return f"{self.label()} (opponent {self.opponent})"

    # ------------------------------------------------------------------------------------------
    # what the metrics and tests read

    def game_matrix(self) -> np.ndarray:
        """Return the row player's loss matrix A (original units), shape (N, M)."""
        return self._a.copy()

    def column_average(self) -> np.ndarray:
        """Return the opponent's average strategy ``q̄_t`` over the rounds played, shape (R, M)."""
        if self._rounds == 0:
            return np.full_like(self._q_sum, 1.0 / self._q_sum.shape[1])
        return self._q_sum / self._rounds

    def column_strategy(self) -> np.ndarray:
        """Return the opponent's distribution ``q_t`` of the last round played (uniform before
        round 1), shape (R, M): the last iterate, beside :meth:`column_average`."""
        return self._q_last.copy()

    def column_regret(self) -> np.ndarray:
        """Return the opponent's regret on its rescaled losses ``c_t``, shape (R,)."""
        return self._col_learner - self._col_cum.min(axis=1)

    def loss_scale(self) -> float:
        """Return ``a_max − a_min`` (1 for a constant matrix): rescaled losses times this = A."""
        return self._scale

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"game": "rock_paper_scissors", "opponent": "ftl"}
        yield {"game": "matching_pennies", "opponent_params": {"eta": 0.5}}
