"""Tree experts: template trees over the experts, the best pruning in hindsight, ``tree_regret``.

In the tree expert problem (Luo 2016, §2.3.4; Helmbold & Schapire 1997) the experts are the
edges of a *template tree*: each round the side information ``x_t`` traverses one root-to-leaf
path, only the edges of that path are awake, and edge ``e`` predicts what its child node predicts.
A *pruning* replaces zero or more subtrees by leaves (the root, which makes no prediction, always
keeps its children); it predicts on ``x_t`` with the leaf ``x_t`` reaches, so its loss in round t
is the loss of the one terminal edge that is awake. The *tree regret* compares the learner with
the best pruning in hindsight:

    ``R_G(t) = Σ_{s≤t} p_s·ℓ_s − min_P Σ_{s≤t} ℓ_{s, e_P(x_s)}``.

A template tree is described by ``parents``: ``parents[e]`` is the expert (edge) above expert e,
or −1 for the root's edges, with ``parents[e] < e`` (parents before children). The heap layout
(:func:`heap_parents`) numbers the edges of a binary tree level by level: expert e is the edge
into node ``e + 1``, node v's children are nodes ``2v + 1`` and ``2v + 2``; ``tree_experts``
(:class:`arena.adversaries.tree_experts.TreeExperts`) uses it and ``pruning_hedge``
(:class:`arena.players.pruning_hedge.PruningHedge`) assumes it.
"""

from __future__ import annotations

import itertools
import math
from typing import ClassVar

import numpy as np
from numba import njit

from arena.errors import ConfigError
from arena.metrics.base import Block, Core, ExpertsMetric, ExpertsRecord
from arena.metrics.literal import check_history, learner_losses, required
from arena.spec import GameSpec


def heap_parents(n_experts: int) -> np.ndarray:
    """Return the ``parents`` array of the heap-ordered binary template tree with N edges.

    Expert e is the edge into node ``e + 1`` (node 0 is the root); node v's parent is node
    ``(v − 1) // 2``. With ``N = 2^{D+1} − 2`` it is the complete binary tree of depth D.

    Examples
    --------
    >>> heap_parents(6).tolist()  # depth 2: edges 0, 1 below the root; 2, 3 below 0; 4, 5 below 1
    [-1, -1, 0, 0, 1, 1]
    """
    nodes = np.arange(1, int(n_experts) + 1, dtype=np.int64)
    return (nodes - 1) // 2 - 1


def has_children(parents: np.ndarray) -> np.ndarray:
    """Return, per expert, whether its child node is an inner node of the template (not a leaf).

    Examples
    --------
    >>> has_children(heap_parents(6)).tolist()
    [True, True, False, False, False, False]
    """
    parents = np.asarray(parents, dtype=np.int64)
    out = np.zeros(parents.size, dtype=bool)
    out[parents[parents >= 0]] = True
    return out


def check_parents(parents: np.ndarray, n_experts: int, who: str) -> np.ndarray:
    """Return ``parents`` as an int64 array after checking it describes a template tree.

    ``who`` names the component that supplied it in the ``ConfigError``.
    """
    parents = np.ascontiguousarray(parents, dtype=np.int64)
    if parents.shape != (n_experts,):
        message = f"has shape {parents.shape}, expected ({n_experts},)"
        raise ConfigError(who, "tree_parents", message)
    index = np.arange(n_experts)
    if not ((parents >= -1) & (parents < index)).all():
        raise ConfigError(who, "tree_parents", "every parent must be −1 or an earlier expert")
    if n_experts and not (parents == -1).any():
        raise ConfigError(who, "tree_parents", "the root has no edge")
    return parents


def best_pruning(parents: np.ndarray, node_losses: np.ndarray) -> tuple[float, np.ndarray]:
    """Return the least loss of a pruning and the terminal edges of one pruning attaining it.

    ``node_losses[e]`` is ``A_e``, the loss edge e's prediction accumulated over the rounds it
    was awake. Bottom-up (Luo 2016, §2.3.4; Helmbold & Schapire 1997):
    ``best(e) = A_e`` for an edge into a template leaf, ``best(e) = min(A_e, Σ_{c child of e}
    best(c))`` otherwise, and the best pruning's loss is ``Σ_{e below the root} best(e)``. The
    pruning is read back top-down, ending an edge (a leaf of the pruning) when ``A_e ≤`` the sum
    below it, so ties keep the smaller pruning. O(N).

    Examples
    --------
    >>> loss, leaves = best_pruning(heap_parents(6), np.array([5.0, 1.0, 1.0, 2.0, 0.5, 0.5]))
    >>> loss, np.flatnonzero(leaves).tolist()  # split edge 0 (1 + 2 < 5), keep edge 1 (1 ≤ 1)
    (4.0, [1, 2, 3])
    """
    parents = np.asarray(parents, dtype=np.int64)
    node_losses = np.asarray(node_losses, dtype=np.float64)
    n = parents.size
    below = np.zeros(n)
    best = np.empty(n)
    inner = has_children(parents)
    total = 0.0
    for e in range(n - 1, -1, -1):
        best[e] = min(node_losses[e], below[e]) if inner[e] else node_losses[e]
        if parents[e] >= 0:
            below[parents[e]] += best[e]
        else:
            total += best[e]
    leaves = np.zeros(n, dtype=bool)
    kept = parents == -1
    for e in range(n):  # parents come first, so kept[e] is final when e is read
        if not kept[e]:
            continue
        if inner[e] and below[e] < node_losses[e]:
            kept[np.flatnonzero(parents == e)] = True
        else:
            leaves[e] = True
    return float(total), leaves


@njit(cache=True, nogil=True)
def _pruning_dp(parents, inner, node_losses, penalty, below, out):
    """``out[r] = min_P Σ_{e leaf of P} A_{r,e} + penalty·c(P)`` for every replicate r.

    ``c(P)`` counts the edges of P into inner template nodes (each is a coin flip of Helmbold &
    Schapire's prior, made a leaf or split); ``penalty = 0`` is :func:`best_pruning`'s loss.
    ``below`` is scratch of length N. Children are added in decreasing index order.
    """
    n_rep, n = node_losses.shape
    for r in range(n_rep):
        for e in range(n):
            below[e] = 0.0
        total = 0.0
        for e in range(n - 1, -1, -1):
            v = node_losses[r, e]
            if inner[e]:
                if below[e] < v:
                    v = below[e]
                v += penalty
            p = parents[e]
            if p >= 0:
                below[p] += v
            else:
                total += v
        out[r] = total


def pruning_values(parents: np.ndarray, node_losses: np.ndarray, penalty: float = 0.0):
    """Return ``min_P [Σ_{e leaf of P} A_{r,e} + penalty·c(P)]`` per row of ``node_losses``.

    ``c(P)`` is the number of P's edges into inner template nodes (see :func:`_pruning_dp`).
    With ``penalty = 0`` this is the best pruning's loss of :func:`best_pruning`, row by row.

    Examples
    --------
    >>> a = np.array([[5.0, 1.0, 1.0, 2.0, 0.5, 0.5]])
    >>> parents = heap_parents(6)
    >>> pruning_values(parents, a).tolist(), pruning_values(parents, a, 1.0).tolist()
    ([4.0], [6.0])
    """
    parents = np.ascontiguousarray(parents, dtype=np.int64)
    node_losses = np.ascontiguousarray(np.atleast_2d(node_losses), dtype=np.float64)
    out = np.empty(node_losses.shape[0])
    inner = has_children(parents)
    _pruning_dp(parents, inner, node_losses, float(penalty), np.empty(parents.size), out)
    return out


@njit(cache=True, nogil=True)
def _accumulate_awake(reached, losses, node_losses):
    """``A_{r,e} += reached·ℓ`` round by round (the same sums however the rounds are chunked)."""
    n_rep, n, n_act = losses.shape
    for r in range(n_rep):
        for j in range(n):
            for e in range(n_act):
                if reached[r, j, e] != 0.0:
                    node_losses[r, e] += losses[r, j, e]


# ----------------------------------------------------------------------------------------------
# brute force: every pruning enumerated (tree_regret's reference)


def tree_prunings(parents: np.ndarray) -> list[frozenset[int]]:
    """Every pruning of a template tree, as the set of its terminal edges, by enumeration.

    ``parents[e]`` is the edge above edge e (−1 below the root; see the module notes).
    An edge either ends the pruning (a leaf) or, if its child node is an inner template node, is
    split, and then each edge below it is pruned independently; the root always keeps its edges
    (Luo 2016, §2.3.4). The count grows doubly exponentially with the depth (25 prunings at
    depth 3, 676 at depth 4).

    Examples
    --------
    >>> sorted(sorted(p) for p in tree_prunings(np.array([-1, -1, 0, 0, 1, 1])))
    [[0, 1], [0, 4, 5], [1, 2, 3], [2, 3, 4, 5]]
    """
    parents = [int(v) for v in parents]

    def below(e: int) -> list[int]:
        return [c for c, p in enumerate(parents) if p == e]

    def options(e: int) -> list[frozenset[int]]:
        out = [frozenset({e})]
        kids = below(e)
        if kids:
            for parts in itertools.product(*(options(c) for c in kids)):
                out.append(frozenset().union(*parts))
        return out

    return [
        frozenset().union(*parts) for parts in itertools.product(*(options(c) for c in below(-1)))
    ]


def pruning_coins(parents: np.ndarray, pruning: frozenset[int]) -> int:
    """``c(P)``: the edges of pruning P into inner template nodes, each a fair coin of Helmbold &
    Schapire's prior ``2^{−c(P)}`` (made a leaf or split; the root always splits).

    The edges of P are its terminal edges and every edge above one of them.

    Examples
    --------
    >>> parents = np.array([-1, -1, 0, 0, 1, 1])
    >>> pruning_coins(parents, frozenset({0, 1})), pruning_coins(parents, frozenset({2, 3, 1}))
    (2, 2)
    """
    inner = {int(p) for p in parents if p >= 0}
    edges = set()
    for e in pruning:
        while e >= 0:
            edges.add(e)
            e = int(parents[e])
    return sum(1 for e in edges if e in inner)


def tree_regret_bruteforce(
    probs: np.ndarray, losses: np.ndarray, reached: np.ndarray, parents: np.ndarray
) -> float:
    """Tree regret ``Σ_t p_t·l_t − min_P Σ_t l_{t, e_P(x_t)}`` over every pruning, enumerated.

    ``reached`` (T, N) marks the edges ``x_t`` traverses; a pruning's loss in round t is the loss
    of its one terminal edge on that path (Luo 2016, §2.3.4). Each pruning is scored round by
    round, without the dynamic program of :func:`best_pruning`.

    Examples
    --------
    >>> parents = np.array([-1, -1, 0, 0, 1, 1])
    >>> reached = np.array([[1, 0, 1, 0, 0, 0], [0, 1, 0, 0, 0, 1.0]])
    >>> losses = np.array([[0.5, 0, 0, 1, 1, 1], [1, 1, 1, 1, 1, 0.0]])
    >>> probs = np.array([[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0.0]])
    >>> tree_regret_bruteforce(probs, losses, reached, parents)
    1.5
    """
    probs, losses = check_history(probs, losses)
    learner = float(learner_losses(probs, losses).sum())
    best = math.inf
    for pruning in tree_prunings(parents):
        total = 0.0
        for t in range(losses.shape[0]):
            (leaf,) = [e for e in pruning if reached[t, e] != 0.0]  # exactly one per round
            total += losses[t, leaf]
        best = min(best, total)
    return float(learner - best)


class TreeRegret(ExpertsMetric):
    """Tree regret: the learner's loss minus the best pruning's, ``Ĥ_t − min_P L_t(P)``.

    ``L_t(P) = Σ_{s≤t} ℓ_{s, e_P(x_s)}`` is the loss of pruning P, the loss of its one terminal
    edge on ``x_s``'s path each round; its minimum over the exponentially many prunings is the
    O(N) dynamic program of :func:`best_pruning` on ``A_{t,e}``, the loss of edge e summed over
    the rounds it was reached (kept in O(N) per round, the DP run at the checkpoints).
    ``Ĥ_t = Σ_s p_s·ℓ_s`` is the learner's expected loss, the loss of the mixture of the
    awake edges' predictions: for a convex loss it is at least the loss of the averaged
    prediction ``f_t(Σ_e p_{t,e} y_{t,e})``, so this is at least Luo's ``R_G`` (2016, §2.3.4)
    of the averaged prediction. A depth-1 template has one pruning (the root's edges), one edge
    awake per round, and every player's tree regret is 0.

    Logged only against an adversary exposing a template tree: a ``tree_parents()`` method
    (see the module notes) and the ``reached`` oracle, the 0/1 indicators of the edges ``x_t``
    traverses (``tree_experts``). Experts protocol only.

    Examples
    --------
    >>> from arena import play
    >>> df = play("ada_normal_hedge", "tree_experts", horizon=200,
    ...           metrics={"tree_regret": {}, "loss": {}})
    >>> v = df[df.t == 200].set_index("metric").value
    >>> bool(0.0 < v["loss"] - v["tree_regret"] <= v["loss"])  # the best pruning's loss
    True

    References
    ----------
    Luo 2016, §2.3.4 (Table 2.4). Helmbold & Schapire 1997. Cesa-Bianchi & Lugosi 2006, §5.3
    (tree experts).
    """

    name = "tree_regret"
    requires = frozenset({"reached"})
    protocols: ClassVar[frozenset[str]] = frozenset({"experts"})

    def applicable(self, player, adversary) -> str | None:
        has_tree = callable(getattr(adversary, "tree_parents", None))
        if has_tree and "reached" in adversary.tags.oracle:
            return None
        return "the adversary exposes no template tree (tree_parents() and the 'reached' oracle)"

    def attach(self, player, adversary) -> None:
        self._source = adversary

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        who = f"adversary {type(self._source).registry_name()}"
        self._parents = check_parents(self._source.tree_parents(), spec.n_actions, who)
        self._inner = has_children(self._parents)
        self._node_losses = np.zeros((spec.n_replicates, spec.n_actions))

    def advance(self, block: Block, core: Core) -> None:
        n = block.losses.shape[1]
        reached = np.ascontiguousarray(self._source.oracle("reached", block.t0, n), dtype=float)
        _accumulate_awake(reached, block.losses, self._node_losses)

    def values(self, core: Core) -> np.ndarray:
        best = np.empty(self._node_losses.shape[0])
        scratch = np.empty(self._parents.size)
        _pruning_dp(self._parents, self._inner, self._node_losses, 0.0, scratch, best)
        return (core.learner - best)[:, None]

    def reference(self, record: ExpertsRecord, param: float) -> float:
        """The brute-force definition: :func:`tree_regret_bruteforce`, every pruning enumerated."""
        reached = required(record, "reached", self.name)
        parents = required(record, "parents", self.name)
        return tree_regret_bruteforce(record.probs, record.losses, reached, parents)
