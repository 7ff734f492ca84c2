"""Game description, typed capability tags and the read-only history adaptive adversaries see."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, Self, TypeVar

import numpy as np

from arena.errors import UndeclaredDistributionError

Protocol = Literal[
    "experts",
    "experts_confidence",
    "bandit",
    "oco",
    "classification",
    "regression",
    "multiclass",
    "boosting",
    "structured",
]


@dataclass(frozen=True)
class GameSpec:
    """What a player and an adversary agree on before round 1.

    Parameters
    ----------
    protocol : str
        Feedback model, one of :data:`Protocol`.
    n_actions : int
        Number of experts N (actions K for bandits).
    horizon : int or None
        Number of rounds T; ``None`` means unknown, and anytime players must cope.
    loss_range : tuple of float
        Declared range ``(lo, hi)`` of every loss; the arena refuses losses outside it.
    n_replicates : int
        Number of replicates R in the batch that the state arrays carry on their first axis.
    dim : int or None
        Dimension d for ``oco`` and ``classification`` (unused by the experts protocol).
    replicate_ids : tuple of int
        Global indices of the replicates in the batch (row r of every state array is replicate
        ``replicate_ids[r]``); empty means ``0 .. n_replicates-1``.
    domain : arena.oco.domains.Domain or None
        Feasible set of ``w_t`` in the ``oco`` / ``classification`` / ``regression`` protocols.
    loss : str or None
        Loss family of those protocols (:data:`arena.oco.losses.LOSS_KINDS`).
    sigma : float
        Strong-convexity weight of the ``(σ/2)‖w − z_t‖²`` term added to every loss (0: none).
    gradient_bound : float or None
        A bound G on every subgradient norm ``‖∇f_t(w_t)‖₂`` declared by the OCO adversary.
    n_classes : int or None
        Number of labels k of the ``multiclass`` protocol: ``w_t ∈ ℝ^{k·d'}`` is the row-major
        flattening of ``W ∈ ℝ^{k×d'}`` (``dim = k·d'``) and the features are ``x_t ∈ ℝ^{d'}``
        (the Kesler construction); None in every other protocol.
    task : str or None
        The hosted data protocol of a ``boosting`` game (``classification`` or ``regression``:
        what the booster predicts and which losses apply); None in every other protocol.
    sparse : bool
        The OCO-family stream emits its features as :class:`arena.oco.losses.SparseRows`
        (:meth:`arena.oco.components.OCOAdversary.sparse_features`) and the player reads them so
        (its tag ``sparse_input``); False when the player is shown densified rows.
    structure : object or None
        The label structure of a ``structured`` game (``arena.structured.chain.ChainStructure``:
        the feature map φ, the cost ρ and the inference the player, the stream and the metrics
        share), declared by the stream; None elsewhere.
    """

    protocol: Protocol
    n_actions: int
    horizon: int | None
    loss_range: tuple[float, float] = (0.0, 1.0)
    n_replicates: int = 1
    dim: int | None = None
    replicate_ids: tuple[int, ...] = ()
    domain: Any = None
    loss: str | None = None
    sigma: float = 0.0
    gradient_bound: float | None = None
    n_classes: int | None = None
    task: str | None = None
    sparse: bool = False
    structure: Any = None

    def replicates(self) -> tuple[int, ...]:
        """Global replicate indices of the batch rows."""
        return self.replicate_ids or tuple(range(self.n_replicates))

    @property
    def loss_scale(self) -> float:
        """Width ``hi - lo`` of the declared loss range."""
        return float(self.loss_range[1] - self.loss_range[0])


class InheritableTags:
    """Base of the tags dataclasses: tags that remember which fields they were given.

    A component class states in ``tags`` only what differs from its base class; every field it
    does not give is taken from the base's tags when the class is created
    (:meth:`arena.base.Component.__init_subclass__` calls :meth:`inherit`). Without this, a subclass
    of ``AdaptiveAdversary`` writing ``tags = AdversaryTags(sees_distribution=True)`` would get the
    dataclass default ``oblivious=True`` and be checked and played as an oblivious adversary.

    Examples
    --------
    >>> base = AdversaryTags(oblivious=False)
    >>> AdversaryTags(sees_distribution=True).inherit(base).oblivious
    False
    >>> AdversaryTags(oblivious=True).inherit(base).oblivious  # given on purpose: kept
    True
    >>> sorted(AdversaryTags(sees_distribution=True).given)
    ['sees_distribution']
    """

    given: frozenset[str]
    """The fields passed to the constructor (all of them for tags built by ``replace``)."""

    def inherit(self, base: Self) -> Self:
        """Return these tags with every field they were not given taken from ``base``."""
        merged = replace(base, **{name: getattr(self, name) for name in self.given})
        # the merged tags were given what either level gave, so a further subclass inherits them
        object.__setattr__(merged, "given", base.given | self.given)
        return merged


_T = TypeVar("_T", bound=type)


def _records_given(cls: _T) -> _T:
    """Wrap a frozen tags dataclass's ``__init__`` so each instance records the fields it got."""
    init = cls.__init__
    names = [f.name for f in fields(cls) if f.init]

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        # not a dataclass field: it takes no part in ==, repr or hashing, only in inheritance
        object.__setattr__(self, "given", frozenset(names[: len(args)]) | frozenset(kwargs))

    cls.__init__ = __init__
    return cls


@_records_given
@dataclass(frozen=True)
class PlayerTags(InheritableTags):
    """Capabilities of a player, read by the engine, the tests and the reports.

    On a component class, the fields not given are inherited from the base class's tags
    (:class:`InheritableTags`): an ``OCOPlayer`` subclass writing ``PlayerTags(randomized=False)``
    still plays ``oco``.

    Parameters
    ----------
    protocols : frozenset of str
        Protocols the player can play.
    randomized : bool
        The player's action is drawn from its distribution (all experts players are).
    needs_horizon : bool
        The player must know T (e.g. horizon-tuned learning rates).
    block_kernel : bool
        The player overrides ``play_block`` with a compiled kernel (oblivious fast path).
    supports_confidences : bool
        The player accepts per-round confidences ``I_t`` (sleeping experts).
    observes_action : bool
        The player's update reads its own realized action ``I_t`` (randomized-play state, e.g.
        NormalHedge.DT with ``state="realized"``): the engine passes ``actions`` to ``update`` and
        the action uniforms to ``play_block``.
    min_actions, max_actions : int, int or None
        The numbers of experts the player supports (e.g. 2 and 2 for Cover's learner).
    binary_losses : bool
        The player accepts only loss vectors in {0, 1}^N (the conformance suite feeds it those).
    expected_failed_checks : tuple of (str, str)
        Conformance checks this player is known to fail, with the reason (e.g. an exact algorithm
        whose memory grows with t fails ``check_bounded_memory``); they become strict xfails.
    domains : frozenset of str
        OCO domains (:data:`arena.oco.domains.DOMAIN_KINDS`) the player can keep ``w_t`` in.
    losses : frozenset of str
        OCO loss families (:data:`arena.oco.losses.LOSS_KINDS`) the player accepts.
    sparse_input : bool
        The player reads sparse features (:class:`arena.oco.losses.SparseRows`) as they are, in
        ``predict``, ``update`` (``fb.data.x`` with ``fb.dloss``) and ``play_block``. The other
        players of a sparse stream receive densified rows, within the memory estimate
        (:meth:`arena.oco.game.OCOProtocol.make_spec` refuses the game otherwise).
    """

    protocols: frozenset[str] = frozenset({"experts"})
    randomized: bool = True
    needs_horizon: bool = False
    block_kernel: bool = False
    supports_confidences: bool = False
    observes_action: bool = False
    min_actions: int = 1
    max_actions: int | None = None
    binary_losses: bool = False
    expected_failed_checks: tuple[tuple[str, str], ...] = ()
    domains: frozenset[str] = frozenset({"unconstrained", "ball", "box", "simplex"})
    losses: frozenset[str] = frozenset({"linear", "absolute", "squared", "hinge", "logistic"})
    sparse_input: bool = False


@_records_given
@dataclass(frozen=True)
class AdversaryTags(InheritableTags):
    """Capabilities of an adversary.

    On a component class, the fields not given are inherited from the base class's tags
    (:class:`InheritableTags`): a subclass of ``AdaptiveAdversary`` is ``oblivious=False`` and one
    of ``ObliviousAdversary`` is ``oblivious=True`` unless it says otherwise, and the conformance
    suite fails a class that says otherwise (``check_tags_match_class``).

    Parameters
    ----------
    protocol : str
        The protocol it plays.
    oblivious : bool
        Its losses do not depend on the player; then it implements ``losses_block``.
    sees_distribution : bool
        An adaptive adversary that reads the player's current distribution ``p_t`` through
        ``history.probs``; reading it without this tag stops the game with a ``GameError``.
    oracle : frozenset of str
        Extra quantities it exposes, e.g. ``{"means"}`` for ``pseudo_regret``.
    needs_horizon : bool
        It needs T to build its loss sequence (e.g. evenly spaced change points).
    emits_confidences : bool
        It announces per-round confidences ``I_t ∈ [0, 1]^N`` before the player predicts
        (sleeping / confidence-rated experts); only players with ``supports_confidences`` play it.
    expected_failed_checks : tuple of (str, str)
        Conformance checks it is known to fail, with the reason (strict xfails).
    """

    protocol: str = "experts"
    oblivious: bool = True
    sees_distribution: bool = False
    oracle: frozenset[str] = field(default_factory=frozenset)
    needs_horizon: bool = False
    emits_confidences: bool = False
    expected_failed_checks: tuple[tuple[str, str], ...] = ()


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


class History:
    """Read-only running summary of the game so far, handed to adaptive adversaries.

    Memory is O(R·N): the arena keeps sufficient statistics, not the past. An adversary that needs
    more keeps its own state. Every array is a read-only view; writing to it raises ``ValueError``.

    Attributes
    ----------
    t : int
        Number of completed rounds (the adversary is choosing round ``t + 1``).
    cum_losses : ndarray, shape (R, N)
        Cumulative expert losses ``L_{t,i}``.
    learner_loss : ndarray, shape (R,)
        Cumulative expected learner loss ``Σ_s p_s·l_s``.
    last_losses : ndarray, shape (R, N)
        The loss vector of round ``t`` (zeros before round 1).
    last_actions : ndarray, shape (R,)
        The actions drawn at round ``t`` (-1 before round 1).
    probs : ndarray, shape (R, N) or None
        The player's distribution ``p_{t+1}`` for the round being chosen, only when the adversary
        declares ``sees_distribution`` (None before the player has committed it, e.g. in a sleeping
        adversary's ``confidences``). Reading it without the tag raises
        :class:`~arena.errors.UndeclaredDistributionError` naming the adversary and the round.

    Parameters
    ----------
    n_replicates, n_actions : int
        R and N.
    sees_distribution : bool
        Whether the adversary declared ``sees_distribution`` (then ``probs`` is shown).
    owner : object
        The adversary, as error messages name it (a string or :class:`arena.validation.Who`).

    Examples
    --------
    >>> h = History(1, 2, sees_distribution=False, owner="adversary spy")
    >>> try:
    ...     h.probs
    ... except UndeclaredDistributionError as exc:
    ...     print(exc.component, "| round", exc.round)
    adversary spy | round 1
    """

    def __init__(
        self,
        n_replicates: int,
        n_actions: int,
        sees_distribution: bool,
        owner: object = "adversary",
    ):
        self.t = 0
        self._owner = owner
        self._cum = np.zeros((n_replicates, n_actions))
        self._learner = np.zeros(n_replicates)
        self._last = np.zeros((n_replicates, n_actions))
        self._actions = np.full(n_replicates, -1, dtype=np.int64)
        self._sees = sees_distribution
        self._probs: np.ndarray | None = None

    @property
    def cum_losses(self) -> np.ndarray:
        return _readonly(self._cum)

    @property
    def learner_loss(self) -> np.ndarray:
        return _readonly(self._learner)

    @property
    def last_losses(self) -> np.ndarray:
        return _readonly(self._last)

    @property
    def last_actions(self) -> np.ndarray:
        return _readonly(self._actions)

    @property
    def probs(self) -> np.ndarray | None:
        if not self._sees:
            # the arena hides p_t from adversaries that did not declare it; say so at the read,
            # instead of handing out None for numpy to fail on far from the cause
            raise UndeclaredDistributionError(
                str(self._owner),
                "reads history.probs but does not declare sees_distribution=True "
                "(tags = AdversaryTags(sees_distribution=True))",
                round=self.t + 1,
            )
        return None if self._probs is None else _readonly(self._probs)

    def _show(self, probs: np.ndarray) -> None:
        self._probs = probs if self._sees else None

    def _record(self, probs: np.ndarray, losses: np.ndarray, actions: np.ndarray) -> None:
        self.t += 1
        self._cum += losses
        self._learner += np.einsum("rn,rn->r", probs, losses)
        self._last[...] = losses
        self._actions[...] = actions
        self._probs = None
