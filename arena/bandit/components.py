"""Component bases of the bandit protocol: players that commit ``p_t`` and see one loss.

Round t (Bubeck & Cesa-Bianchi 2012, §3; Lattimore & Szepesvári 2020, §4.1), for R replicates at
once: the player commits ``p_t`` over the K arms (a deterministic player commits a point mass);
the arena draws ``I_t ~ p_t`` from the replicate's action stream; the player observes only
``l_{t,I_t}``, with ``I_t`` and the ``p_t`` it played. The adversaries are those of the experts
protocol, unchanged (:class:`arena.experts.components.ObliviousAdversary`,
:class:`~arena.experts.components.AdaptiveAdversary`): the arena still knows the whole ``l_t``.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from arena.components import Player, declares_nothing
from arena.errors import mark_failure
from arena.sampling import sample_action
from arena.spec import PlayerTags


class BanditPlayer(Player):
    """Bandit player: commits ``p_t ∈ Δ_K``, then sees only the loss of the arm the arena drew.

    Subclasses implement :meth:`reset`, :meth:`predict` and :meth:`update`; they may override
    :meth:`play_block` with a compiled kernel (tag ``block_kernel``) that reproduces the
    predict / draw / update loop to 1e-12 and reads, of the loss block it is handed, only the
    entries ``l_{t,I_t}`` of the arms it draws (the conformance suite hands it a block whose other
    entries are NaN).

    Losses arrive in the adversary's declared range ``[lo, hi]`` (``spec.loss_range``); players
    map them to [0, 1] with ``(l − lo) / (hi − lo)``.
    """

    tags: ClassVar[PlayerTags] = PlayerTags(protocols=frozenset({"bandit"}))
    play_block_out: ClassVar[bool] = False
    """True when :meth:`play_block` takes ``out=``, a C-contiguous float64 (R, n, K) array that it
    fills with ``p_t`` and returns. The driver then hands it the same buffer every chunk (it has
    read the previous chunk's ``p_t`` by then) instead of the player allocating one per chunk."""

    plays_arms: ClassVar[bool] = False
    """True when every ``p_t`` the player commits is a point mass and :meth:`play_arms` plays a
    chunk as its arms. The driver then plays an oblivious chunk through :meth:`play_arms`, draws
    no action uniforms (a point mass is drawn to its arm whatever the uniform) and builds ``p_t``
    rows only where a metric or the trace reads them (:mod:`arena.bandit.point_masses`); the
    conformance suite checks the arms against :meth:`play_block`'s point masses. A subclass
    that replaces ``play_block`` (or the chunk kernel of a player built on empirical means) is
    played through it until it declares ``plays_arms`` itself."""

    def predict(self) -> np.ndarray:
        """Return ``p_t`` of every replicate, shape (R, K). Pure: it never changes state."""
        raise NotImplementedError

    def update(self, actions: np.ndarray, losses: np.ndarray, probs: np.ndarray) -> None:
        """Observe round t's feedback: everything the player may know of it.

        Parameters
        ----------
        actions : ndarray of int, shape (R,)
            The arms ``I_t`` the arena drew (0-based).
        losses : ndarray, shape (R,)
            Their losses ``l_{t,I_t}`` (never the other arms' losses).
        probs : ndarray, shape (R, K)
            The distribution ``p_t`` that ``I_t`` was drawn from: importance weights divide by
            ``probs[r, I_t]``, the probability actually used, never one recomputed after the update.
        """
        raise NotImplementedError

    def play_block(self, losses: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        """Play n rounds of an oblivious game; return the (R, n, K) distributions ``p_t``.

        ``losses`` (R, n, K) holds every arm's loss so that a kernel can run the chunk without a
        Python call per round, but the player may read only ``losses[r, j, I]`` of the arm
        ``I = sample_action(p, uniforms[r, j])`` it draws (:func:`arena.sampling.sample_action`,
        the arena's own draw, so both agree). The default is the readable per-round loop.
        """
        n_rep, n, n_act = losses.shape
        probs = np.empty((n_rep, n, n_act))
        actions = np.empty(n_rep, dtype=np.int64)
        observed = np.empty(n_rep)
        rows = np.arange(n_rep)
        for j in range(n):
            try:
                p = np.ascontiguousarray(self.predict(), dtype=np.float64)
                if p.shape != (n_rep, n_act):
                    raise ValueError(
                        f"predict returned shape {p.shape}, expected {(n_rep, n_act)} "
                        f"(round {j + 1} of the block)"
                    )
                probs[:, j] = p
                for r in range(n_rep):
                    actions[r] = sample_action(p[r], uniforms[r, j])
                observed[:] = losses[rows, j, actions]
                self.update(actions.copy(), observed.copy(), p)
            except Exception as exc:  # the game's error names this round, not the block's first
                mark_failure(exc, offset=j)
                raise
        return probs

    def play_arms(self, losses: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Play n rounds of an oblivious game as point masses; return the arms ``I_t``, (R, n).

        The same game as :meth:`play_block`, whose ``p_t`` are then the point masses on these
        arms, for a player that declares :attr:`plays_arms`; it reads only ``losses[r, j, I_t]``
        and, given ``out`` (a C-contiguous int64 (R, n) array), fills and returns it. The
        default has no arms to play.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not play arms (its plays_arms is {self.plays_arms})"
        )

    @declares_nothing
    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray | float]:
        """Return proven upper bounds on the *expectation* of metrics after round ``t``.

        Keys are ``(metric, param)``; the engine logs them as ``bound:<metric>``. In the bandit
        protocol a metric such as ``regret`` is random through the arena's draws, and a bound
        holds for its expectation (the mean over replicates estimates it); the suite checks it
        with a one-sided test. The default declares none.
        """
        return {}

    def estimates(self) -> np.ndarray | None:
        """Return the cumulative loss estimates ``L̂_{t,i}`` the player keeps (R, K), or None.

        Players built on importance-weighted estimates return a copy of their running sums, so
        that the conformance suite can test the estimate added at each update against its
        declared expectation (:meth:`estimate_expectation`). The default (no estimates) is None.
        """
        return None

    def estimate_expectation(self, losses: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """Return ``E[ℓ̂_t | p_t, l_t]``, the expectation of one round's estimate (R, K).

        ``losses`` (R, K) are the round's whole (normalized, [0, 1]) losses and ``probs`` the
        ``p_t`` the arm is drawn from. The default is ``losses``: an unbiased estimator. Players
        whose estimator is biased by design (implicit exploration) override it.
        """
        return np.asarray(losses, dtype=np.float64)
