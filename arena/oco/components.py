"""Component bases of online convex optimization, online (multiclass) classification and regression.

One round t of the ``oco`` protocol, for R replicates at once (architecture: the shape):

1. in ``classification`` / ``regression`` the adversary first shows the features ``x_t``;
2. the player commits ``w_t`` in the game's :class:`~arena.oco.domains.Domain` (``predict(x)``;
   its prediction is ``ŷ_t = ⟨w_t, x_t⟩``);
3. the adversary reveals the round's convex loss (:class:`~arena.oco.losses.RoundData`: a linear
   ``g_t``, or the label ``y_t`` of an example), possibly after looking at ``w_t`` (adaptive);
4. the arena evaluates ``f_t(w_t)`` and a subgradient and hands them to ``update``
   (:class:`~arena.oco.losses.Feedback`).

**contract — games played through predictions.** A sparse game (``spec.sparse``: a stream of
:class:`~arena.oco.losses.SparseRows` and a player tagged ``sparse_input``) need not cost O(d) a
round: the losses, mistakes, the subgradient bound and every built-in metric but
``online_to_batch`` read only ``⟨w_t, x_t⟩``, the label and ``x_t``. A player that can play a
block without writing its points says so after ``reset`` (:meth:`OCOPlayer.plays_predictions`)
and implements :meth:`OCOPlayer.play_predictions` (the predictions ``⟨w_t, x_t⟩`` (R, n) of
the rounds it played) and :meth:`OCOPlayer.point` (its next point ``w_{t+1}``, exact: a lazy
scale applied). The engine then plays an oblivious sparse game with σ = 0 through predictions
when no active metric reads points (:attr:`arena.oco.metrics.OCOMetric.reads_points`) and no
trace is written: it evaluates ``f_t`` and ``ℓ'`` from the predictions (O(R·n)), checks them
finite and the gradient bound as ``|ℓ'|·‖x_t‖`` (O(nnz)), checks the player's next point
(finite, in the domain) once a chunk (O(R·d) a chunk, not a round), and gives the metrics
``OCOBlock.w = None`` and ``OCOCore.last_w = None``. Any other game, or a player that does not
declare it, plays :meth:`OCOPlayer.play_block` exactly as before. The conformance check
``check_predictions_match_points`` proves a player's predictions equal ``⟨w_t, x_t⟩`` of the
points ``play_block`` returns on the same data, and ``point()`` the next point it plays.

OCO players are deterministic: there is no action draw. Classification-native players
(Perceptron, Winnow, PA) are players of the same protocol whose ``w_t`` is a linear classifier;
OCO players run in classification through the surrogate loss the adversary declares.

The ``multiclass`` protocol is the same game through the Kesler construction (Duda, Hart & Stork
2001, §5.12.1; Shalev-Shwartz 2007, §5.3.2): with k labels and features ``x_t ∈ ℝ^{d'}``, the
player's point ``w_t ∈ ℝ^{k·d'}`` is the row-major flattening of ``W_t ∈ ℝ^{k×d'}``, label r scores
``⟨w_r, x_t⟩ = ⟨w_t, φ(x_t, r)⟩`` with ``φ(x, r) = e_r ⊗ x``, and the labels are the integers
``0 .. k−1``. The adversary declares k (:meth:`OCOAdversary.declared_classes`); players opt in by
listing ``multiclass`` in their tags (the OCO players of :data:`OCO_PROTOCOLS` do not).

The ``label_ranking`` protocol (Shalev-Shwartz 2007, Ch. 8) is the same Kesler game with another
feedback: the answer of round t is a relevant set ``Y_t ⊆ {0 .. k−1}``, carried by ``y_t`` as the
integer-valued float ``Σ_{r∈Y_t} 2^r`` (so k ≤ 52, the integers float64 holds exactly), and the
loss is the max-pair hinge (:func:`arena.oco.losses.label_ranking_hinge`).

The ``instance_ranking`` protocol (Shalev-Shwartz 2007, §5.3.4) asks to rank k instances: the
question is the matrix ``X_t ∈ ℝ^{k×d}`` (``x_t`` its k rows flattened, ``k·d`` coordinates), the
answer the target scores ``y_t ∈ ℝ^k`` (``y`` has a trailing axis of k), the point is
``w ∈ ℝ^d`` and the loss a pair hinge over ``E_t = {(i, j) : y_{t,i} > y_{t,j}}``
(:func:`arena.oco.losses.instance_ranking`). The adversary declares k
(:meth:`OCOAdversary.declared_classes`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from arena.components import Adversary, Player, declares_nothing
from arena.errors import mark_failure
from arena.oco.domains import Domain
from arena.oco.losses import Feedback, RoundData, feedback
from arena.spec import AdversaryTags, GameSpec, PlayerTags

OCO_PROTOCOLS = frozenset({"oco", "classification", "regression"})
"""Protocols played by :class:`OCOPlayer` by default (its tags)."""

MULTICLASS = "multiclass"
"""The multiclass classification protocol (Kesler construction; see the module docstring)."""

LABEL_RANKING = "label_ranking"
"""The online label ranking protocol (Kesler construction, relevant sets; module docstring)."""

KESLER = frozenset({MULTICLASS, LABEL_RANKING})
"""The protocols whose ``w_t`` is the flattened ``W ∈ ℝ^{k×d'}`` (k declared labels)."""

INSTANCE_RANKING = "instance_ranking"
"""The instance ranking protocol (k instances a round, target scores; module docstring)."""

OCO_FAMILY = OCO_PROTOCOLS | KESLER | {INSTANCE_RANKING}
"""Every protocol of :class:`OCOAdversary` that the OCO engine plays."""


class OCOPlayer(Player):
    """Online convex optimization player: commits ``w_t`` (R, d), then sees ``f_t``'s subgradient.

    Subclasses implement :meth:`reset`, :meth:`predict` and :meth:`update`. ``reset`` reads
    ``spec.dim``, ``spec.domain`` (keep every ``w_t`` inside it), ``spec.loss``, ``spec.sigma``
    and ``spec.horizon``. A fast player may override :meth:`play_block` with a numba kernel that
    reproduces the predict/update loop to 1e-12.
    """

    tags: ClassVar[PlayerTags] = PlayerTags(protocols=OCO_PROTOCOLS, randomized=False)

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        """Return ``w_t`` of every replicate, shape (R, d). Pure: it never changes state.

        ``x`` (R, d) are the round's features in ``classification`` / ``regression`` (shown
        before predicting; scale-invariant learners use them), None in plain ``oco``; a
        :class:`~arena.oco.losses.SparseRows` of shape (R, d) for a player tagged
        ``sparse_input`` on a sparse stream.
        """
        raise NotImplementedError

    def update(self, fb: Feedback) -> None:
        """Observe round t: ``fb.w`` (what was played), ``fb.value``, ``fb.grad`` and the data.

        On a sparse stream (players tagged ``sparse_input`` only) ``fb.data.x`` is
        :class:`~arena.oco.losses.SparseRows` and the gradient's sparse form is
        ``fb.dloss[r]·x_r`` (plus ``σ(w − z)`` when ``spec.sigma > 0``); ``fb.grad`` densifies it.
        """
        raise NotImplementedError

    def play_block(self, data: RoundData, spec: GameSpec) -> np.ndarray:
        """Play n rounds against known data (arrays with a round axis: (R, n, d), (R, n)).

        Returns the committed points, shape (R, n, d). Only called when the adversary is oblivious.
        ``data.x`` is :class:`~arena.oco.losses.SparseRows` (R, n, d) on a sparse stream for a
        player tagged ``sparse_input``.
        The default is the readable per-round loop; the feedback is computed by
        :func:`arena.oco.losses.feedback`, exactly as the engine does.
        """
        n = _block_rounds(data)
        n_rep, dim = spec.n_replicates, spec.dim
        out = np.empty((n_rep, n, dim))
        for j in range(n):
            try:
                rd = data.round(j)
                w = np.asarray(self.predict(rd.x), dtype=np.float64)
                if w.shape != (n_rep, dim):
                    raise ValueError(
                        f"predict returned shape {w.shape}, expected {(n_rep, dim)} "
                        f"(round {j + 1} of the block)"
                    )
                out[:, j] = w
                self.update(feedback(spec.loss, spec.sigma, w, rd))
            except Exception as exc:  # the game's error names this round, not the block's first
                mark_failure(exc, offset=j)
                raise
        return out

    def plays_predictions(self) -> bool:
        """Return whether this game (after ``reset``) can be played through
        :meth:`play_predictions` and :meth:`point`, without writing ``w_t`` every round
        (module docstring: games played through predictions). Default False.
        """
        return False

    def play_predictions(self, data: RoundData, spec: GameSpec) -> np.ndarray:
        """Play n rounds of sparse rows as :meth:`play_block` does, but return the predictions
        ``⟨w_t, x_t⟩`` (R, n) instead of the points (R, n, d).

        Called only when :meth:`plays_predictions` is True, on oblivious sparse games with
        σ = 0 (``data.x`` is :class:`~arena.oco.losses.SparseRows` (R, n, d)). The state after
        the call is the state :meth:`play_block` leaves on the same data; each prediction adds
        the row's products in increasing column order, as
        :meth:`~arena.oco.losses.SparseRows.dot` does, so the losses equal those of the
        points path to rounding.
        """
        raise NotImplementedError(
            f"{type(self).__name__} declares plays_predictions() but not play_predictions"
        )

    def point(self) -> np.ndarray:
        """Return the point ``w_{t+1}`` the player would play next, shape (R, d), exactly (a
        lazy scale or any deferred operation applied; a copy). Called once a chunk in a game
        played through predictions, O(R·d)."""
        raise NotImplementedError(
            f"{type(self).__name__} declares plays_predictions() but not point"
        )

    @declares_nothing
    def bounds(self, t: int) -> dict[tuple[str, float], Any]:
        """Return proven upper bounds on metrics after round ``t`` (``{(metric, param): value}``).

        Logged as ``bound:<metric>``. Declare only bounds that hold on every sequence satisfying
        the assumptions the player checked in ``reset`` (e.g. ``‖g_t‖ ≤ G`` declared by the
        adversary through ``spec``). The default declares none.
        """
        return {}


def _block_rounds(data: RoundData) -> int:
    for a in (data.g, data.x, data.y):
        if a is not None:
            return int(a.shape[1] if hasattr(a, "shape") else np.shape(a)[1])
    raise ValueError("empty round data")


class OCOAdversary(Adversary):
    """Base of OCO / classification / regression adversaries.

    Subclasses set ``tags = AdversaryTags(protocol="oco" | "classification" | "regression" |
    "multiclass", oblivious=...)`` and implement :meth:`reset` and either :meth:`data_block`
    (oblivious) or :meth:`features` and :meth:`reveal` (adaptive). Game constants come from
    :meth:`declared_domain`, :meth:`declared_loss`, :meth:`declared_sigma`, :meth:`resolve_dim`,
    :meth:`declared_classes` (multiclass)
    and :meth:`gradient_bound` (named so that hyperparameters called ``domain``, ``loss`` or
    ``sigma`` do not shadow them).
    """

    tags: ClassVar[AdversaryTags] = AdversaryTags(protocol="oco")

    def resolve_dim(self, requested: int | None, horizon: int | None = None) -> int:
        """Return d for this game; ``requested`` is the user's ``n_actions`` (None: the default,
        10 here). ``horizon`` is T, for constructions whose dimension grows with it."""
        return 10 if requested is None else int(requested)

    def declared_domain(self) -> Domain:
        """The feasible set of ``w_t`` (and of the ``regret`` comparator). Default: ``ℝ^d``."""
        return Domain("unconstrained")

    def declared_loss(self) -> str:
        """The loss family (:data:`arena.oco.losses.LOSS_KINDS`)."""
        return "linear"

    def declared_sigma(self) -> float:
        """Weight ``σ`` of the strongly convex term ``(σ/2)‖w − z_t‖²`` (default 0)."""
        return 0.0

    def declared_classes(self) -> int | None:
        """The number of labels k of a ``multiclass`` or ``label_ranking`` game (≥ 2; ≤ 52 in
        ``label_ranking``); None in the other protocols.

        ``resolve_dim`` then returns ``k·d'`` (the dimension of ``w_t``), a multiple of k.
        """
        return None

    def sparse_features(self) -> bool:
        """Whether :meth:`data_block` emits the features ``x`` as
        :class:`~arena.oco.losses.SparseRows` (classification and regression with an example
        loss; oblivious streams). Default False.

        The declaration comes before round 1, so that the engine can shape the game: players
        tagged ``sparse_input`` receive the rows as they are, the others densified rows when
        ``R·n·d·8`` bytes per chunk of n rounds fit in memory, and a refusal naming the player,
        the stream and that memory otherwise. A stream that declares it may still emit dense
        blocks; one that does not may not emit sparse ones.
        """
        return False

    def gradient_bound(self) -> float | None:
        """A bound ``G ≥ ‖∇f_t(w)‖₂`` for every round and every ``w`` in the domain, if known.

        The engine passes it to players as ``spec.gradient_bound`` (for step sizes tuned from G)
        and stops the game if a subgradient it computes exceeds it.
        """
        return None

    def stream_identity(self) -> tuple[str, dict]:
        """Return the ``(name, params)`` that seed this adversary's data stream.

        By default the adversary's own registry name and parameters (architecture: seeding): common
        random numbers for every player facing it. A wrapper that transforms another adversary's
        data (``rescaled``) returns its base's identity, so the base and all its transformations see
        the same underlying examples replicate by replicate: exact paired comparisons.
        """
        return type(self).registry_name(), self.get_params()

    comparator_moves: ClassVar[bool] = False
    """True when :meth:`comparator` depends on the play so far (lower-bound constructions whose
    comparator is built from the player's answers): ``comparator_regret`` then re-reads it at each
    checkpoint and evaluates it on the whole history (stored examples), instead of streaming
    ``F_t(c·u*)`` for a ``u*`` fixed after ``reset``."""

    def comparator(self) -> np.ndarray:
        """Return the declared comparator direction ``u*`` of every replicate, shape (R, d).

        Only for adversaries whose tags declare the oracle ``"comparator"`` (e.g. the planted
        separator); ``comparator_regret`` evaluates ``c·u*``. With ``comparator_moves`` it is the
        comparator as of the rounds played so far.
        """
        raise KeyError(f"{self!r} declares no comparator")

    def data_block(self, t0: int, n: int) -> RoundData:
        """Return the data of rounds ``t0 .. t0+n-1`` (oblivious adversaries), arrays (R, n, ...).

        Consecutive calls must give the same sequence however the rounds are split into blocks.
        """
        raise NotImplementedError

    def features(self, t: int) -> np.ndarray | None:
        """Return ``x_t`` (R, d) shown before the player predicts (classification/regression)."""
        raise NotImplementedError

    def reveal(self, t: int, w: np.ndarray) -> RoundData:
        """Return round ``t``'s loss after seeing the committed ``w_t`` (R, d) (adaptive)."""
        raise NotImplementedError


class ObliviousOCOAdversary(OCOAdversary):
    """An OCO adversary fixed in advance: it emits data in blocks (:meth:`data_block`)."""

    tags: ClassVar[AdversaryTags] = AdversaryTags(protocol="oco", oblivious=True)

    def features(self, t: int) -> np.ndarray | None:
        self._pending = self.data_block(t, 1)
        return None if self._pending.x is None else self._pending.round(0).x

    def reveal(self, t: int, w: np.ndarray) -> RoundData:
        pending = getattr(self, "_pending", None)
        self._pending = None
        if pending is None:
            pending = self.data_block(t, 1)
        return pending.round(0)


class AdaptiveOCOAdversary(OCOAdversary):
    """An OCO adversary that picks round t's loss after seeing ``w_t`` (and its own past)."""

    tags: ClassVar[AdversaryTags] = AdversaryTags(protocol="oco", oblivious=False)

    def features(self, t: int) -> np.ndarray | None:
        return None


def resolve_dim(adversary: OCOAdversary, requested: int | None, horizon: int | None) -> int:
    """Call ``adversary.resolve_dim``, passing ``horizon`` only if its signature takes it (a
    plugin may implement the one-argument form)."""
    import inspect

    if "horizon" in inspect.signature(adversary.resolve_dim).parameters:
        return int(adversary.resolve_dim(requested, horizon=horizon))
    return int(adversary.resolve_dim(requested))


def game_dim(spec: GameSpec) -> int:
    """Return d of an OCO game: ``spec.dim``, else ``spec.n_actions`` (a spec built by hand)."""
    return int(spec.dim if spec.dim is not None else spec.n_actions)


def feature_dim(spec: GameSpec) -> int:
    """Return the dimension of the features ``x_t``: ``dim/k`` in ``multiclass`` and
    ``label_ranking``, ``k·dim`` in ``instance_ranking`` (the k rows of ``X_t``), else ``dim``.

    Examples
    --------
    >>> feature_dim(GameSpec("multiclass", 12, 5, dim=12, n_classes=3))
    4
    """
    dim = game_dim(spec)
    if spec.protocol == INSTANCE_RANKING:
        return dim * int(spec.n_classes)
    return dim // int(spec.n_classes) if spec.protocol in KESLER else dim


def game_domain(spec: GameSpec) -> Domain:
    """Return the game's domain, ``ℝ^d`` when the spec names none.

    The engine has checked it already: it is the adversary's declaration, validated (and matched
    against the player's ``tags.domains``) before any component is reset.
    """
    return spec.domain if spec.domain is not None else Domain("unconstrained")
