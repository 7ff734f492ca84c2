"""Tree experts: the edges of a binary template tree as sleeping experts (best-pruning problem)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import ClassVar

import numpy as np

from arena.errors import ConfigError
from arena.experts.components import ObliviousAdversary
from arena.metrics.tree import heap_parents
from arena.params import Interval, IsNone, OneOf
from arena.spec import AdversaryTags, GameSpec

LOSSES = ("absolute", "squared")
AWAKE = ("path", "all")
MAX_DEPTH = 16
"""At most 2^17 − 2 = 131070 edges: the (R, n, N) loss blocks stay a few hundred MB at most."""


class _TagsByAwake:
    """Class attribute ``tags``: the path mode announces confidences, ``awake="all"`` does not."""

    path = AdversaryTags(oblivious=True, emits_confidences=True, oracle=frozenset({"reached"}))
    all = replace(path, emits_confidences=False)

    def __get__(self, obj, owner=None) -> AdversaryTags:
        if obj is not None and getattr(obj, "awake", None) == "all":
            return self.all
        return self.path


def draw_structure(
    rng: np.random.Generator, depth: int, n_leaves: int | None, node_noise: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw a hidden pruning, its leaf values and every node's prediction.

    The hidden pruning starts from the root's two children and splits a leaf of depth < D chosen
    uniformly until it has ``m`` leaves (``n_leaves``, or uniform on ``2..2^D`` when None). Each
    hidden leaf u gets a value ``a_u ~ U[0, 1]``, which it predicts; a node below u predicts a
    noisy copy ``clip(a_u + node_noise·(2w − 1), 0, 1)`` with ``w ~ U[0, 1]``; a node above the
    hidden leaves predicts a constant ``~ U[0, 1]``.

    Returns
    -------
    hidden_leaves : ndarray of bool, shape (N,)
        Per edge (heap layout), whether its child node is a leaf of the hidden pruning.
    predictions : ndarray, shape (N,)
        ``c_v`` of the child node of each edge.
    target_means : ndarray, shape (2^D,)
        The hidden pruning's prediction on each template leaf (``x`` read as a binary number,
        ``x_1`` its most significant bit).

    Examples
    --------
    >>> hidden, pred, target = draw_structure(np.random.default_rng(0), 2, 3, 0.0)
    >>> int(hidden.sum()), pred.shape, target.shape
    (3, (6,), (4,))
    """
    n_nodes = 2 ** (depth + 1) - 1
    first_deepest = 2**depth - 1  # nodes first_deepest .. n_nodes − 1 are the template leaves
    m = int(rng.integers(2, 2**depth + 1)) if n_leaves is None else int(n_leaves)
    leaves = [1, 2]
    while len(leaves) < m:
        splittable = [v for v in leaves if v < first_deepest]
        v = splittable[int(rng.integers(len(splittable)))]
        leaves.remove(v)
        leaves.extend((2 * v + 1, 2 * v + 2))
    is_leaf = np.zeros(n_nodes, dtype=bool)
    is_leaf[leaves] = True
    values, jitter, free = rng.random((3, n_nodes))
    owner = np.full(n_nodes, -1, dtype=np.int64)
    predictions = np.empty(n_nodes)
    for v in range(1, n_nodes):
        above = owner[(v - 1) // 2]
        if above >= 0:  # below a hidden leaf: a noisy copy of its value
            owner[v] = above
            predictions[v] = min(1.0, max(0.0, values[above] + node_noise * (2 * jitter[v] - 1)))
        elif is_leaf[v]:
            owner[v] = v
            predictions[v] = values[v]
        else:
            predictions[v] = free[v]
    target_means = values[owner[first_deepest:]]
    return is_leaf[1:], predictions[1:], target_means


class TreeExperts(ObliviousAdversary):
    """Tree experts (the best-pruning problem): the N = 2^{D+1} − 2 edges of a complete binary
    template tree of depth D are sleeping experts, awake when ``x_t`` traverses them.

    Each round ``x_t ∈ {0,1}^D`` has i.i.d. bits with ``P(x_{t,k} = 1) = bias``; the node at depth
    k − 1 sends ``x_t`` to its left child if ``x_{t,k} = 0``, to its right child otherwise, so
    ``x_t`` traverses D edges, one per level. Every non-root node v predicts a constant
    ``c_v ∈ [0, 1]`` (drawn by :func:`draw_structure`: the hidden pruning's leaves predict their
    values ``a_u``, the nodes below them noisy copies, the nodes above them random constants).
    The target is the hidden pruning's prediction plus noise,
    ``y*_t = clip(a_{u(x_t)} + noise·(2v_t − 1), 0, 1)`` with ``v_t ~ U[0, 1]``, and edge e, into
    node v, loses ``ℓ_{t,e} = f_t(c_v)`` with ``f_t(y) = |y − y*_t|`` (``loss="absolute"``) or
    ``(y − y*_t)²`` (``"squared"``), both in [0, 1]. The hidden leaf's value is a median of
    ``y*_t`` on its cell, so the hidden pruning minimizes the expected absolute loss.

    Parameters
    ----------
    depth : int
        D ≥ 1, the template's depth (N = 2^{D+1} − 2 experts; at most 16).
    bias : float
        ``P(x_{t,k} = 1)`` in [0, 1].
    n_leaves : int, optional
        m, the number of leaves of the hidden pruning (2 ≤ m ≤ 2^D); None (default): uniform
        on ``2..2^D``.
    noise : float
        Half-width of the uniform noise added to the target, in [0, 1].
    node_noise : float
        Half-width of the uniform noise of the copies below the hidden leaves, in [0, 1].
    loss : {"absolute", "squared"}
        ``f_t``.
    awake : {"path", "all"}
        ``"path"`` (default): the sleeping protocol, ``I_{t,e} = 1`` exactly on the D edges of
        ``x_t``'s path (Freund et al. 1997's reduction). ``"all"``: no confidences, every edge
        is an always-awake expert predicting its constant, so any experts player (Hedge over all
        nodes) can play; the losses and ``tree_regret`` are defined as in ``"path"`` mode, but
        the mode is part of the game's identity, so the two modes draw different streams
        (compare them over replicates, not round by round).
    tree_seed : int, optional
        None (default): each replicate draws its own hidden pruning and predictions from its
        stream. An integer: every replicate uses the structure drawn from
        ``default_rng(tree_seed)`` (only ``x_t`` and the noise differ).

    Notes
    -----
    **Layout.** Edges are numbered in heap order: expert e is the edge into node ``e + 1``, node
    v's children are nodes ``2v + 1`` (bit 0) and ``2v + 2`` (bit 1). :meth:`tree_parents`
    exposes the template (``arena.metrics.tree.heap_parents``) for ``tree_regret``;
    ``pruning_hedge`` assumes the same layout; :meth:`hidden_leaves`, :meth:`node_predictions`
    expose the drawn structure, and the oracle ``reached`` gives the 0/1 indicators of the edges
    ``x_t`` traverses (in both modes).

    **AdaNormalHedge on the edges (Luo 2016, §2.3.4).** In ``"path"`` mode ``ada_normal_hedge``
    is Luo's algorithm: sleeping AdaNormalHedge with the uniform prior over the N edges outputs
    ``p_t`` on the awake edges; Luo predicts ``y_t = Σ_e p_{t,e} c_{v(e)}`` and suffers
    ``f_t(y_t)``, while the arena charges ``ℓ̂_t = p_t·ℓ_t = Σ_e p_{t,e} f_t(c_{v(e)})``, the
    expected loss of predicting ``c_{v(e)}`` with probability ``p_{t,e}``; by convexity
    ``f_t(y_t) ≤ ℓ̂_t``, so a bound on the arena's tree regret bounds Luo's ``R_G``. Let P* be a
    best pruning with m leaves, S* its terminal edges, and u uniform on S*. Exactly one edge of
    S* is awake per round, so ``R_G = Σ_{e∈S*} R_{T,e} = m·R(u)`` with
    ``R_{T,e} = Σ_t I_{t,e}(ℓ̂_t − ℓ_{t,e})``. AdaNormalHedge's sleeping bound (Theorem 6, via
    Lemma 4) ``[R_{T,e}]_+ ≤ sqrt(3 C_{T,e} ln(B_T/q_e))`` with ``q_e = 1/N`` and
    ``C_{T,e} = Σ_t I_{t,e}|ℓ̂_t − ℓ_{t,e}|`` gives, by Cauchy–Schwarz,

        ``R_G ≤ Σ_{e∈S*} sqrt(3 C_{T,e} ln(N B_T)) ≤ sqrt(3 m ln(N B_T) Σ_t |ℓ̂_t − f_t(P*(x_t))|)``,

    since ``Σ_{e∈S*} C_{T,e} = Σ_t |ℓ̂_t − f_t(P*(x_t))|`` — the explicit form of Luo's
    ``Ô(sqrt(m Σ_t |ℓ̂_t − f_t(P*(x_t))| ln(N_T/m)))`` (with ``ln(N B_T)`` in place of
    ``ln(N_T/m)``: the prior is normalized over all N edges, not over the ``N_T`` seen ones).
    ``B_T = 1 + (3/2) Σ_e q_e(1 + ln(1 + C_{T,e}))`` is AdaNormalHedge's potential budget.

    **Streams.** Each replicate's generator is split with ``rng.spawn(2)``: the first child draws
    the structure (unless ``tree_seed`` is set), the second ``D + 1`` uniforms per round in
    round order (the D bits, then the target noise), so any split of the rounds into blocks
    gives the same rounds. The losses, confidences and ``reached`` of a block are drawn once and
    served to whichever of them is asked first; rounds are asked in order.

    Examples
    --------
    >>> from arena import play
    >>> df = play("ada_normal_hedge", TreeExperts(depth=3, n_leaves=3), horizon=500,
    ...           metrics={"tree_regret": {}})
    >>> bool(df.value.iloc[-1] < 0.1 * 500)
    True

    References
    ----------
    Luo 2016, §2.3.4 and Table 2.4. Helmbold & Schapire 1997. Freund, Schapire, Singer & Warmuth
    1997 (the reduction to sleeping experts).
    """

    tags = _TagsByAwake()
    parameter_constraints: ClassVar = {
        "depth": [Interval(1, MAX_DEPTH, integer=True)],
        "bias": [Interval(0, 1)],
        "n_leaves": [Interval(2, 2**MAX_DEPTH, integer=True), IsNone()],
        "noise": [Interval(0, 1)],
        "node_noise": [Interval(0, 1)],
        "loss": [OneOf(*LOSSES)],
        "awake": [OneOf(*AWAKE)],
        "tree_seed": [Interval(0, 2**63 - 1, integer=True), IsNone()],
    }

    def __init__(
        self,
        depth: int = 4,
        bias: float = 0.5,
        n_leaves: int | None = None,
        noise: float = 0.1,
        node_noise: float = 0.25,
        loss: str = "absolute",
        awake: str = "path",
        tree_seed: int | None = None,
    ):
        self.depth = depth
        self.bias = bias
        self.n_leaves = n_leaves
        self.noise = noise
        self.node_noise = node_noise
        self.loss = loss
        self.awake = awake
        self.tree_seed = tree_seed

    # -- the game --------------------------------------------------------------------------------

    def declared_range(self) -> tuple[float, float]:
        return (0.0, 1.0)

    def resolve_n_actions(self, requested: int | None) -> int:
        n = 2 ** (int(self.depth) + 1) - 2
        if requested is not None and int(requested) != n:
            raise ConfigError(
                self.label(),
                "n_actions",
                f"a template tree of depth {self.depth} has {n} edges, but n_actions = "
                f"{requested} was requested (omit n_actions or set n_actions={n})",
            )
        return n

    def tree_parents(self) -> np.ndarray:
        """Return the template: ``parents[e]``, the edge above edge e (−1 below the root)."""
        return heap_parents(self.resolve_n_actions(None))

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        depth = int(self.depth)
        if self.n_leaves is not None and int(self.n_leaves) > 2**depth:
            message = f"a tree of depth {depth} has at most {2**depth} leaves, got {self.n_leaves}"
            raise ConfigError(self.label(), "n_leaves", message)
        children = [rng.spawn(2) for rng in rngs]
        self._round_rngs = [c[1] for c in children]
        m = None if self.n_leaves is None else int(self.n_leaves)
        noise = float(self.node_noise)
        if self.tree_seed is None:
            drawn = [draw_structure(c[0], depth, m, noise) for c in children]
        else:
            drawn = [draw_structure(np.random.default_rng(int(self.tree_seed)), depth, m, noise)]
            drawn = drawn * len(rngs)
        self._hidden = np.stack([d[0] for d in drawn])
        self._predictions = np.stack([d[1] for d in drawn])
        self._target_means = np.stack([d[2] for d in drawn])
        self._n_rep, self._n_act, self._depth = len(rngs), spec.n_actions, depth
        self._next = 1  # the first round not drawn yet
        self._block: tuple[int, np.ndarray, np.ndarray] | None = None

    def hidden_leaves(self) -> np.ndarray:
        """Per replicate and edge, whether the edge ends at a leaf of the hidden pruning, (R, N)."""
        return self._hidden.copy()

    def node_predictions(self) -> np.ndarray:
        """Per replicate and edge, the prediction ``c_v`` of the edge's child node, (R, N)."""
        return self._predictions.copy()

    def _rounds(self, t0: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Return the losses and the reached indicators of rounds ``t0 .. t0+n-1``, (R, n, N).

        Drawn when ``t0`` is the first round not drawn yet, else served from the last block drawn.
        """
        block = self._block
        if block is not None and block[0] <= t0 and t0 + n <= block[0] + block[1].shape[1]:
            a = t0 - block[0]
            return block[1][:, a : a + n], block[2][:, a : a + n]
        if t0 != self._next:
            raise ValueError(
                f"rounds are drawn in order: round {self._next} comes next, rounds {t0}.."
                f"{t0 + n - 1} were asked"
            )
        depth, n_act = self._depth, self._n_act
        weights = 2 ** np.arange(depth - 1, -1, -1)
        levels = np.arange(1, depth + 1)
        losses = np.empty((self._n_rep, n, n_act))
        reached = np.zeros((self._n_rep, n, n_act))
        for r, rng in enumerate(self._round_rngs):
            u = rng.random((n, depth + 1))
            bits = (u[:, :depth] < self.bias).astype(np.int64)
            leaf = bits @ weights
            target = np.clip(
                self._target_means[r, leaf] + self.noise * (2.0 * u[:, depth] - 1.0), 0.0, 1.0
            )
            gap = self._predictions[r][None, :] - target[:, None]
            losses[r] = np.abs(gap) if self.loss == "absolute" else gap * gap
            # the node at depth k on x's path is 2^k − 1 + (x's first k bits), its edge one less
            edges = (2**levels - 2)[None, :] + (leaf[:, None] >> (depth - levels)[None, :])
            reached[r, np.arange(n)[:, None], edges] = 1.0
        self._block = (t0, losses, reached)
        self._next = t0 + n
        return losses, reached

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        return self._rounds(t0, n)[0].copy()

    def confidences_block(self, t0: int, n: int) -> np.ndarray:
        if self.awake == "all":
            raise NotImplementedError("awake='all' announces no confidences")
        return self._rounds(t0, n)[1].copy()

    def oracle(self, key: str, t0: int, n: int) -> np.ndarray:
        if key != "reached":
            return super().oracle(key, t0, n)
        return self._rounds(t0, n)[1].copy()

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"depth": 1}
        yield {"depth": 3, "n_leaves": 8, "bias": 0.3, "loss": "squared", "tree_seed": 7}
        yield {"depth": 2, "awake": "all", "noise": 0.0}
