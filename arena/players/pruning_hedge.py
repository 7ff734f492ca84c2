"""Exponential weights over the prunings of a template tree (Helmbold & Schapire 1997)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.errors import ConfigError
from arena.experts.components import ExpertsPlayer
from arena.metrics.tree import has_children, heap_parents, pruning_values
from arena.params import Interval, IsNone, OneOf
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

LN2 = math.log(2.0)
LOG_HALF = -LN2


@njit(cache=True, nogil=True)
def _log_add(a, b):
    """``ln(e^a + e^b)`` without overflow."""
    if a < b:
        a, b = b, a
    if b == -np.inf:
        return a
    return a + math.log1p(math.exp(b - a))


def route(awake: np.ndarray | None, n_experts: int) -> list[int]:
    """Return the edges of the path that the awake edges trace from the root (heap layout).

    From node 0, step into the first awake child until a template leaf; ``awake=None`` (no
    confidences: every edge awake) gives the leftmost path. In a tree game the awake edges are
    exactly one root-to-leaf path, which this returns.

    Examples
    --------
    >>> route(np.array([0, 1, 0, 0, 1, 0.0]), 6), route(None, 6)
    ([1, 4], [0, 2])
    """
    path: list[int] = []
    node = 0
    while 2 * node + 1 <= n_experts:
        kids = [c for c in (2 * node + 1, 2 * node + 2) if c <= n_experts]
        awake_kids = [c for c in kids if awake is None or awake[c - 1] > 0.0]
        if not awake_kids:
            raise ValueError(
                f"no edge below node {node} is awake: the awake experts do not form a "
                "root-to-leaf path of the template tree (pruning_hedge plays tree games)"
            )
        node = awake_kids[0]
        path.append(node - 1)
    return path


def _children(e: int, n_experts: int) -> list[int]:
    """The edges below edge e (heap layout: edge e enters node e + 1)."""
    return [c for c in (2 * e + 2, 2 * e + 3) if c < n_experts]


def path_probs(path: list[int], cum: np.ndarray, log_w: np.ndarray, eta: float) -> np.ndarray:
    """Return the pruning mixture's distribution over the edges of ``path`` (zero elsewhere).

    ``p_e`` is the posterior probability that the pruning's leaf on the path is edge e's child:
    the product over the path's earlier inner edges of the probability of being split,
    ``½ Π_c W_c / W_e``, times the probability of being a leaf, ``½ e^{−η L_e} / W_e`` (1 at a
    template leaf). ``log_w`` holds ``ln W_e`` (see :class:`PruningHedge`).
    """
    n = cum.size
    p = np.zeros(n)
    reach = 1.0  # the posterior mass of the prunings that split every earlier edge of the path
    for e in path:
        kids = _children(e, n)
        if kids:
            split = LOG_HALF
            for c in kids:
                split += log_w[c]
            p[e] = reach * math.exp(LOG_HALF - eta * cum[e] - log_w[e])
            reach *= math.exp(split - log_w[e])
        else:
            p[e] = reach
    return p / p.sum()


def path_update(
    path: list[int], unit_losses: np.ndarray, cum: np.ndarray, log_w: np.ndarray, eta: float
) -> None:
    """Add the round's losses to the path's edges and recompute ``ln W`` bottom-up along it."""
    n = cum.size
    for e in path:
        cum[e] += unit_losses[e]
    for e in reversed(path):
        kids = _children(e, n)
        if kids:
            split = LOG_HALF
            for c in kids:
                split += log_w[c]
            log_w[e] = _log_add(LOG_HALF - eta * cum[e], split)
        else:
            log_w[e] = -eta * cum[e]


@njit(cache=True, nogil=True)
def _pruning_play_block(losses, confidences, has_conf, cum, log_w, eta, lo, scale, probs, path):
    """Play a chunk; ``probs[r, j]`` is p at the chunk's round j; ``cum``, ``log_w`` advance.

    The same computation as :func:`route`, :func:`path_probs` and :func:`path_update`, round by
    round; ``path`` is scratch for the edges of a round's path.
    """
    n_rep, n, n_act = losses.shape
    for r in range(n_rep):
        for j in range(n):
            length = 0
            node = 0
            while 2 * node + 1 <= n_act:
                nxt = -1
                for c in (2 * node + 1, 2 * node + 2):
                    if nxt < 0 and c <= n_act and (not has_conf or confidences[r, j, c - 1] > 0.0):
                        nxt = c
                if nxt < 0:
                    raise ValueError("the awake experts do not form a root-to-leaf path")
                node = nxt
                path[length] = node - 1
                length += 1
            for i in range(n_act):
                probs[r, j, i] = 0.0
            reach = 1.0
            total = 0.0
            for k in range(length):
                e = path[k]
                if 2 * e + 2 < n_act:
                    split = LOG_HALF
                    for c in (2 * e + 2, 2 * e + 3):
                        if c < n_act:
                            split += log_w[r, c]
                    v = reach * math.exp(LOG_HALF - eta * cum[r, e] - log_w[r, e])
                    reach *= math.exp(split - log_w[r, e])
                else:
                    v = reach
                probs[r, j, e] = v
                total += v
            for k in range(length):
                probs[r, j, path[k]] /= total
            for k in range(length):
                e = path[k]
                cum[r, e] += (losses[r, j, e] - lo) / scale
            for k in range(length - 1, -1, -1):
                e = path[k]
                if 2 * e + 2 < n_act:
                    split = LOG_HALF
                    for c in (2 * e + 2, 2 * e + 3):
                        if c < n_act:
                            split += log_w[r, c]
                    log_w[r, e] = _log_add(LOG_HALF - eta * cum[r, e], split)
                else:
                    log_w[r, e] = -eta * cum[r, e]


class PruningHedge(ExpertsPlayer):
    """Exponential weights over the prunings of a binary template tree, by dynamic programming
    (Helmbold & Schapire 1997): the tree experts baseline of Luo 2016, Table 2.4.

    The experts are the edges of the template tree in heap layout (expert e enters node
    ``e + 1``; node v's children are nodes ``2v + 1``, ``2v + 2``), the layout of
    ``tree_experts``; the awake edges of a round are the path ``x_t`` traverses. Every pruning P
    (zero or more subtrees replaced by leaves; the root always keeps its children) is an expert
    of exponential weights with prior ``π(P) = 2^{−c(P)}``, where ``c(P)`` counts P's edges into
    inner template nodes: Helmbold & Schapire's prior, one fair coin per such node (leaf or
    split), normalized over all prunings, with the root's coin removed because in Luo's setting
    the root makes no prediction. Its weight after round t − 1 is
    ``π(P) exp(−η L_{t−1}(P))``, with ``L(P)`` P's loss (unit-range losses).

    Parameters
    ----------
    eta : float or "tuned"
        The learning rate η > 0; ``"tuned"`` (default) is ``η = sqrt(8 c ln 2 / T)`` with c the
        coin count below (needs the horizon).
    leaves : int, optional
        m ≥ 2, the number of leaves of the pruning the tuned rate is aimed at: ``c = min(2m − 1,
        c_max)``, an upper bound of ``c(P)`` for a pruning with m leaves (``2m − 2`` in a complete
        binary tree); None (default): ``c = c_max``, the number of edges into inner nodes (every
        pruning has ``c(P) ≤ c_max``). At least 1.

    Notes
    -----
    **The dynamic program (Helmbold & Schapire 1997; Willems, Shtarkov & Tjalkens 1995).** For
    edge e let ``L_e`` be its loss summed over the rounds it was awake and
    ``W_e = e^{−η L_e}`` at a template leaf, ``W_e = ½ e^{−η L_e} + ½ Π_{c below e} W_c``
    otherwise: ``W_e`` is the prior-weighted sum of ``e^{−η L}`` over the sub-prunings hanging
    from e, so ``Σ_P π(P) e^{−η L(P)} = Π_{e below the root} W_e``, and the posterior factorizes
    along the tree. Round t's path ``e_1, …, e_D`` gets

        ``p_{t,e_k} = Π_{j<k} (½ Π_{c below e_j} W_c / W_{e_j}) · ½ e^{−η L_{e_k}} / W_{e_k}``

    (the last factor is 1 at a template leaf), the posterior probability that the pruning's leaf
    on ``x_t``'s path is ``e_k``'s child, and 0 off the path. After the losses, ``L`` and
    ``ln W`` change on the path only, bottom-up: O(dD) time per round for d = 2 children per
    node (Luo's ``O(d‖x_t‖_G)``), O(N) memory, ``ln W`` kept in the log domain.

    **What the arena's loss is.** The arena charges ``p_t·ℓ_t = Σ_P posterior_t(P) ℓ_t(P)``: the
    expected loss of a pruning drawn from the posterior, i.e. exponential weights (Hedge) over
    the prunings as experts — the quantity the guarantee below is about. Helmbold & Schapire
    predict the weighted average of the path's predictions (passed through Vovk's function for
    binary outcomes); for a convex loss that prediction's loss is at most ``p_t·ℓ_t``, so the
    guarantee covers it too.

    **Guarantee (declared as ``bound:tree_regret`` in games that announce awake sets).** Hedge
    with prior π and losses in [0, 1] (Cesa-Bianchi & Lugosi 2006, Theorem 2.2, whose proof
    with initial weights π gives ``Ĥ_t ≤ −(1/η) ln Σ_P π(P) e^{−η L_t(P)} + ηt/8``) ensures
    ``Ĥ_t − L_t(P) ≤ c(P) ln 2/η + ηt/8`` for every P, hence

        ``tree_regret_t ≤ min_P [L_t(P) + c(P) ln 2/η] − min_P L_t(P) + ηt/8``

    (both minima by the pruning DP), at most ``c(P*) ln 2/η + ηt/8`` for a best pruning P* with
    m leaves, and ``sqrt((c/2) T ln 2) ≤ sqrt((m − ½) T ln 2)`` with the tuned rate when
    ``c(P*) ≤ c``: Table 2.4's ``O(sqrt(m T))`` for known m and T (its ``O(sqrt(m L*))`` tunes
    η with L* instead). In units of the loss range.

    Outside a tree game (no confidences) there is no ``x_t``: the player routes every round down
    the leftmost path and declares no bound (:meth:`bounds_reason` says so, and ``bound`` is
    skipped). Confidences are read as awake (> 0) or asleep; an
    awake set that is not a root-to-leaf path stops the game with an error.

    Examples
    --------
    >>> from arena import play
    >>> df = play(PruningHedge(), "tree_experts", horizon=1000,
    ...           metrics={"tree_regret": {}, "bound": {}})
    >>> last = df[df.t == 1000].set_index("metric").value
    >>> bool(last["tree_regret"] <= last["bound:tree_regret"])
    True

    References
    ----------
    Helmbold & Schapire 1997. Luo 2016, §2.3.4 and Table 2.4. Willems, Shtarkov & Tjalkens 1995
    (the context-tree weighting recursion). Cesa-Bianchi & Lugosi 2006, Theorem 2.2 and §5.3.
    """

    tags = PlayerTags(
        protocols=frozenset({"experts"}), block_kernel=True, supports_confidences=True
    )
    parameter_constraints: ClassVar = {
        "eta": [Interval(0, None, closed="neither"), OneOf("tuned")],
        "leaves": [Interval(2, None, integer=True), IsNone()],
    }

    def __init__(self, eta: float | str = "tuned", leaves: int | None = None):
        self.eta = eta
        self.leaves = leaves

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        n = spec.n_actions
        self._parents = heap_parents(n)
        coins = int(has_children(self._parents).sum())
        self._coins = max(1, coins if self.leaves is None else min(2 * int(self.leaves) - 1, coins))
        if self.eta == "tuned":
            if spec.horizon is None:
                raise ConfigError(self.label(), "eta", "'tuned' needs the horizon; give a rate")
            self._eta = math.sqrt(8.0 * self._coins * LN2 / spec.horizon)
        else:
            self._eta = float(self.eta)
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._cum = np.zeros((spec.n_replicates, n))
        self._log_w = np.zeros((spec.n_replicates, n))  # W_e = 1 before any loss
        self._tree_game = False
        self._rounds = 0

    @property
    def learning_rate(self) -> float:
        """η of the game."""
        return self._eta

    # -- readable path ------------------------------------------------------------------------

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        n_rep, n = self._cum.shape
        out = np.empty((n_rep, n))
        for r in range(n_rep):
            path = route(None if confidences is None else confidences[r], n)
            out[r] = path_probs(path, self._cum[r], self._log_w[r], self._eta)
        return out

    def update(
        self,
        losses: np.ndarray,
        actions: np.ndarray | None = None,
        confidences: np.ndarray | None = None,
    ) -> None:
        unit = (np.asarray(losses, dtype=np.float64) - self._lo) / self._scale
        n = self._cum.shape[1]
        for r in range(self._cum.shape[0]):
            path = route(None if confidences is None else confidences[r], n)
            path_update(path, unit[r], self._cum[r], self._log_w[r], self._eta)
        self._tree_game |= confidences is not None
        self._rounds += 1

    # -- fast path ----------------------------------------------------------------------------

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        losses = np.ascontiguousarray(losses, dtype=np.float64)
        probs = np.empty_like(losses)
        has_conf = confidences is not None
        conf = (
            np.ascontiguousarray(confidences, dtype=np.float64) if has_conf else np.ones((1, 1, 1))
        )
        _pruning_play_block(
            losses,
            conf,
            has_conf,
            self._cum,
            self._log_w,
            self._eta,
            float(self._lo),
            float(self._scale),
            probs,
            np.empty(64, dtype=np.int64),
        )
        self._tree_game |= has_conf
        self._rounds += losses.shape[1]
        return probs

    # -- state and guarantees -----------------------------------------------------------------

    @property
    def node_losses(self) -> np.ndarray:
        """``L_e``: each edge's unit-range loss summed over the rounds it was awake, (R, N)."""
        return self._cum.copy()

    def log_partition(self) -> np.ndarray:
        """``ln Σ_P π(P) e^{−η L(P)} = Σ_{e below the root} ln W_e`` per replicate, (R,)."""
        return self._log_w[:, self._parents == -1].sum(axis=1)

    def bounds_reason(self, adversary) -> str | None:
        """Why no bound is declared against ``adversary``: only tree games announce awake paths."""
        if adversary.tags.emits_confidences:
            return None
        return "pruning_hedge declares its bound in tree games only (awake paths announced)"

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare ``bound:tree_regret`` (class notes) once the game has announced awake sets."""
        if not self._tree_game:
            return {}
        penalized = pruning_values(self._parents, self._cum, LN2 / self._eta)
        best = pruning_values(self._parents, self._cum)
        return {("tree_regret", math.nan): self._scale * (penalized - best + self._eta * t / 8.0)}

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"eta": 0.5}
        yield {"leaves": 3}
