"""Online gradient descent (greedy projected): fixed, 1/√t and 1/(σt) step sizes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.errors import ConfigError
from arena.oco.components import OCO_PROTOCOLS, OCOPlayer, game_dim, game_domain
from arena.oco.domains import KIND_CODES, project_row
from arena.oco.losses import (
    LOSS_CODES,
    Feedback,
    RoundData,
    is_sparse,
    kernel_data,
    prediction_loss_scalar,
    round_gradient,
)
from arena.params import POSITIVE, IsNone, OneOf
from arena.players._projections import l1_ball_row, project_l1_ball
from arena.spec import GameSpec, PlayerTags
from arena.validation import readonly_contiguous

SCHEDULES = ("fixed", "sqrt", "strongly_convex")

FIXED, SQRT, STRONG = 0, 1, 2
"""Kernel codes of the step-size schedules."""


@njit(cache=True, nogil=True)
def _step_size(mode, scale, t):
    """η_t of the schedule: ``scale`` (FIXED), ``scale/√t`` (SQRT), ``1/(scale·t)`` (STRONG)."""
    if mode == SQRT:
        return scale / math.sqrt(t)
    if mode == STRONG:
        return 1.0 / (scale * t)
    return scale


@njit(cache=True, nogil=True)
def _ogd_play_block(
    loss_code,
    sigma,
    kind_code,
    radius,
    l1_radius,
    g,
    x,
    y,
    z,
    has_z,
    mode,
    scale,
    rounds_done,
    w,
    acc,
    out,
):
    """Play a block: ``out[r, j]`` is ``w`` at round ``rounds_done + j + 1``; ``w`` and ``acc``
    (``Σ η_t ‖g_t‖²``) advance in place. ``l1_radius > 0`` projects onto that ℓ1 ball instead
    of the domain."""
    n_rep, d = w.shape
    n = out.shape[1]
    grad = np.empty(d)
    v = np.empty(d)
    for r in range(n_rep):
        for j in range(n):
            t = rounds_done + j + 1
            for i in range(d):
                out[r, j, i] = w[r, i]
            round_gradient(loss_code, sigma, w[r], g, x, y, z, has_z, r, j, grad)
            eta = _step_size(mode, scale, t)
            sq = 0.0
            for i in range(d):
                sq += grad[i] * grad[i]
                v[i] = w[r, i] - eta * grad[i]
            acc[r] += eta * sq
            if l1_radius > 0.0:
                l1_ball_row(v, l1_radius, w[r])
            else:
                project_row(kind_code, radius, v, w[r])


@njit(cache=True, nogil=True)
def _ogd_sparse_block(
    loss_code,
    ball,
    radius,
    indptr,
    indices,
    values,
    y,
    mode,
    scale,
    rounds_done,
    w,
    acc,
    out,
    record,
    pred,
):
    """Play a block of sparse rows (CSR, row ``r·n + j``) in O(nnz) arithmetic a round.

    ``w[r]`` holds ``v`` with ``w_t = a·v`` during the block (the lazy scale of sparse SGD): a
    step touches the row's coordinates only, ``‖v‖²`` is kept up to date from them, and the
    projection onto the ball multiplies ``a``. Unconstrained, ``a`` stays 1 and every operation
    is the dense kernel's on the same coordinates (bitwise equal); on the ball the incremental
    norm rounds differently (relative 1e-15 a round). Writing ``out[r, j] = a·v`` — the point
    the protocol records — is the one O(d) pass a round, skipped when ``record`` is False (a
    game played through predictions: ``pred[r, j] = ⟨w_t, x_t⟩`` only, and the O(d) passes are
    once a block: ``‖v‖²`` at its start and folding ``a`` into ``v`` at its end).
    """
    n_rep, d = w.shape
    n = pred.shape[1]
    for r in range(n_rep):
        v = w[r]
        a = 1.0
        sq = 0.0
        if ball:
            for i in range(d):
                sq += v[i] * v[i]
        for j in range(n):
            t = rounds_done + j + 1
            if record:
                for i in range(d):
                    out[r, j, i] = a * v[i]
            k = r * n + j
            p = 0.0
            for q in range(indptr[k], indptr[k + 1]):
                p += values[q] * (a * v[indices[q]])
            pred[r, j] = p
            _, dl = prediction_loss_scalar(loss_code, p, y[r, j])
            eta = _step_size(mode, scale, t)
            gsq = 0.0
            for q in range(indptr[k], indptr[k + 1]):
                i = indices[q]
                g = dl * values[q]
                gsq += g * g
                old = v[i]
                new = (a * old - eta * g) / a
                if ball:
                    sq += new * new - old * old
                v[i] = new
            acc[r] += eta * gsq
            if ball:
                nrm = a * math.sqrt(max(sq, 0.0))
                if nrm > radius:
                    a *= radius / nrm
                if a < 1e-100:  # fold the scale into v before it underflows (O(d), rare)
                    sq = 0.0
                    for i in range(d):
                        v[i] *= a
                        sq += v[i] * v[i]
                    a = 1.0
        if a != 1.0:  # fold the scale in: w holds the exact point w_{t+1} between blocks
            for i in range(d):
                v[i] = a * v[i]


class OGD(OCOPlayer):
    """Online gradient descent, greedy projected: ``w_{t+1} = Π_K(w_t − η_t g_t)``.

    ``w_1 = Π_K(0)`` (the centre of a ball or box, the uniform point of the simplex) and ``g_t`` is
    the arena's subgradient of ``f_t`` at ``w_t``.

    Sparse rows (tag ``sparse_input``): with σ = 0 on ℝ^d or a ball, a step costs O(nnz) (the
    ball's projection through a lazy scale ``w = a·v`` and a running ``‖v‖²``, as in sparse SGD;
    Bottou 2012, §5.1); other games densify the block.

    Parameters
    ----------
    schedule : {"sqrt", "fixed", "strongly_convex"}
        ``"fixed"``: ``η_t = η``; ``"sqrt"``: ``η_t = η/√t``; ``"strongly_convex"``:
        ``η_t = 1/(σ t)`` for σ-strongly convex losses.
    eta : float or None
        The step ``η`` (``"fixed"``) or its scale (``"sqrt"``). None tunes it from the game:
        ``η = D/(G√T)`` (``"fixed"``, needs the horizon) and ``η_t = D/(G√t)`` (``"sqrt"``), with
        ``D`` the domain's diameter and ``G = spec.gradient_bound`` (both must be finite). Not used
        by ``"strongly_convex"``.
    sigma : float or None
        σ of the ``"strongly_convex"`` schedule; None uses the game's ``spec.sigma`` (which must
        then be > 0). Not used by the other schedules.
    l1_radius : float or None
        Play on the ℓ1 ball ``{‖w‖₁ ≤ l1_radius}`` instead of the game's domain K: every step is
        projected onto it (Euclidean, by sorting: Shalev-Shwartz 2007, §7.1.2, Figure 7.2;
        Duchi et al. 2008), which gives sparse iterates. K must contain that ball (ℝ^d, or a
        ball or box of radius ≥ ``l1_radius``). None (the default) projects onto K.

    Notes
    -----
    Guarantees, for every sequence of convex losses (adaptive adversaries included), ``D`` the
    Euclidean diameter of a bounded domain and ``S_t = Σ_{s≤t} η_s ‖g_s‖²``:

    * ``"fixed"`` and ``"sqrt"`` (any non-increasing ``η_t``; Zinkevich 2003):
      ``R_T ≤ D²/(2η_T) + S_T/2``. With ``‖g_t‖ ≤ G`` this is ``≤ D²/(2η) + ηG²T/2`` for a fixed
      η (``GD√T`` at ``η = D/(G√T)``), and with ``η_t = D/(G√t)`` it is
      ``≤ (3/2)GD√T − GD/2`` (``Σ_{t≤T} 1/√t ≤ 2√T − 1``), the (3/2)GD√T of Hazan 2016, Thm 3.1.
    * ``"strongly_convex"``, every ``f_t`` σ'-strongly convex with ``σ' ≥ σ`` (the game's
      ``(σ'/2)‖w − z_t‖²`` term, so ``σ ≤ spec.sigma`` is checked), any closed convex domain,
      bounded or not: ``R_T ≤ S_T/2 = Σ_t ‖g_t‖²/(2σt)``. With ``½‖g_t‖² ≤ L`` this is
      Shalev-Shwartz 2007, Theorem 5's ``(L/σ)(1 + ln T)``, i.e. ``(G²/(2σ))(1 + ln T)`` (the
      constant convention is ``L = G²/2``, not G²; Hazan, Agarwal & Kale 2007).

    With ``l1_radius = ρ`` the same bounds hold against every comparator of the ℓ1 ball, with
    ``D = 2ρ`` (its Euclidean diameter) (:meth:`regret_bound`); ``bounds`` declares them only
    where that ball is the game's comparator set (d = 1, K the segment ``[−ρ, ρ]``).

    ``bounds`` declares the data-dependent forms (the run's own ``S_T``), which hold on every
    sequence and imply the closed forms; no bound is declared on an unbounded domain for the first
    two schedules, nor for ``"strongly_convex"`` when ``σ > spec.sigma``. The first-order
    analysis bounds the linearized regret ``Σ⟨g_t, w_t − u⟩``, so the bounds hold for every
    loss family.

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import feedback
    >>> spec = GameSpec("oco", 2, 10, dim=2, domain=Domain("ball", 1.0), loss="linear",
    ...                 gradient_bound=1.0)
    >>> p = OGD(schedule="fixed", eta=0.5)
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> p.update(feedback("linear", 0.0, p.predict(), RoundData(g=np.array([[1.0, 0.0]]))))
    >>> p.predict().tolist()
    [[-0.5, 0.0]]

    References
    ----------
    Zinkevich (2003), "Online convex programming and generalized infinitesimal gradient ascent".
    Shalev-Shwartz 2007, Chapter 4: Figure 4.1 (§4.1), Example 1 (§4.2: the Euclidean instance is
    projected OGD), Lemma 5 and Theorem 5 (§4.3). Hazan (2016), *Introduction to Online Convex
    Optimization*, Theorems 3.1 and 3.3. Bottou (2012), "Stochastic gradient descent tricks",
    *Neural Networks: Tricks of the Trade*, §5.1 (sparse updates with a scaled weight vector).
    """

    tags = PlayerTags(
        protocols=OCO_PROTOCOLS, randomized=False, block_kernel=True, sparse_input=True
    )
    parameter_constraints: ClassVar = {
        "schedule": [OneOf(*SCHEDULES)],
        "eta": [POSITIVE, IsNone()],
        "sigma": [POSITIVE, IsNone()],
        "l1_radius": [POSITIVE, IsNone()],
    }

    def __init__(
        self,
        schedule: str = "sqrt",
        eta: float | None = None,
        sigma: float | None = None,
        l1_radius: float | None = None,
    ):
        self.schedule = schedule
        self.eta = eta
        self.sigma = sigma
        self.l1_radius = l1_radius

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        dim = game_dim(spec)
        domain = game_domain(spec)
        eta = None if self.eta is None else float(self.eta)
        sigma = None if self.sigma is None else float(self.sigma)
        diameter = domain.diameter(dim)
        l1 = 0.0 if self.l1_radius is None else float(self.l1_radius)
        if l1 > 0.0:
            _check_holds_l1_ball(domain, l1, who)
            diameter = 2.0 * l1
        # The ℓ1 ball is the comparator set of the regret metric only as the segment [−ρ, ρ].
        l1_is_domain = dim == 1 and domain.kind in ("ball", "box") and domain.radius == l1
        G = spec.gradient_bound
        self._mode = {"fixed": FIXED, "sqrt": SQRT, "strongly_convex": STRONG}[self.schedule]
        self._bounded = self._mode != STRONG and math.isfinite(diameter)
        if self._mode == STRONG:
            if eta is not None:
                raise ConfigError(
                    who, "eta", "is not used by schedule 'strongly_convex' (use sigma)"
                )
            game_sigma = float(spec.sigma or 0.0)
            if sigma is None:
                if game_sigma <= 0:
                    raise ConfigError(
                        who, "sigma", "schedule 'strongly_convex' needs sigma > 0 or spec.sigma > 0"
                    )
                sigma = game_sigma
            scale = sigma
            self._bounded = sigma <= game_sigma and (l1 == 0.0 or l1_is_domain)
        else:
            if sigma is not None:
                raise ConfigError(who, "sigma", "is only used by schedule 'strongly_convex'")
            if eta is None:
                if not math.isfinite(diameter) or G is None or not G > 0:
                    raise ConfigError(
                        who,
                        "eta",
                        "null (tuned to D/G) needs a bounded domain and spec.gradient_bound > 0; "
                        "give eta",
                    )
                if self._mode == FIXED:
                    if spec.horizon is None:
                        raise ConfigError(
                            who, "eta", "null with schedule 'fixed' needs the horizon"
                        )
                    eta = diameter / (G * math.sqrt(spec.horizon))
                else:
                    eta = diameter / G
                eta = eta if eta > 0 else 1.0  # a one-point domain (d = 1 simplex): any step
            scale = eta
        self._scale = float(scale)
        self._diameter = diameter
        self._l1 = l1
        if l1 > 0.0 and not l1_is_domain:
            self._bounded = False
        self._domain = domain
        self._loss = spec.loss or "linear"
        self._sigma_game = float(spec.sigma or 0.0)
        n_rep = spec.n_replicates
        self._w = np.zeros((n_rep, dim)) if l1 > 0.0 else domain.project(np.zeros((n_rep, dim)))
        self._acc = np.zeros(n_rep)
        self._rounds = 0
        self._sparse_game = (
            bool(spec.sparse)
            and not self._sigma_game
            and not l1
            and domain.kind in ("unconstrained", "ball")
        )

    def step_size(self, t: int) -> float:
        """Return ``η_t``, the step taken after round ``t``."""
        return float(_step_size(self._mode, self._scale, t))

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return self._w.copy()

    def update(self, fb: Feedback) -> None:
        t = self._rounds + 1
        eta = self.step_size(t)
        g = np.asarray(fb.grad, dtype=np.float64)
        self._acc += eta * np.einsum("ri,ri->r", g, g)
        if self._l1 > 0.0:
            self._w = project_l1_ball(self._w - eta * g, self._l1)
        else:
            self._w = self._domain.project(self._w - eta * g)
        self._rounds = t

    def play_block(self, data: RoundData, spec: GameSpec) -> np.ndarray:
        if self._sparse_path(data):
            return self._play_sparse(data)
        code, g, x, y, z, has_z = kernel_data(data, self._loss)
        n = next(a.shape[1] for a in (data.g, data.x, data.y) if a is not None)
        out = np.empty((self._w.shape[0], n, self._w.shape[1]))
        _ogd_play_block(
            code,
            self._sigma_game,
            KIND_CODES[self._domain.kind],
            float(self._domain.radius),
            self._l1,
            g,
            x,
            y,
            z,
            has_z,
            self._mode,
            self._scale,
            self._rounds,
            self._w,
            self._acc,
            out,
        )
        self._rounds += n
        return out

    def _sparse_path(self, data: RoundData) -> bool:
        """Sparse rows, σ = 0, and a domain whose projection a lazy scale can do (ℝ^d, ball);
        the other games densify the block for the dense kernel."""
        return (
            is_sparse(data.x)
            and not self._sigma_game
            and not self._l1
            and self._domain.kind in ("unconstrained", "ball")
        )

    def plays_predictions(self) -> bool:
        """A sparse game with σ = 0 on ℝ^d or a ball (the O(nnz) kernel's games)."""
        return bool(self._sparse_game)

    def play_predictions(self, data: RoundData, spec: GameSpec) -> np.ndarray:
        """The sparse kernel without the record of ``w_t``: O(nnz) a round, the lazy scale
        folded into ``w`` once at the end of the block."""
        return self._play_sparse(data, record=False)

    def point(self) -> np.ndarray:
        """``w_{t+1}``: the kernel leaves the exact point in ``_w`` (the scale folded in)."""
        return self._w.copy()

    def _play_sparse(self, data: RoundData, record: bool = True) -> np.ndarray:
        x = data.x
        n_rep, n, d = x.shape
        out = np.empty((n_rep, n, d) if record else (0, 0, 0))
        pred = np.empty((n_rep, n))
        _ogd_sparse_block(
            LOSS_CODES[self._loss],
            self._domain.kind == "ball",
            float(self._domain.radius),
            x.indptr,
            x.indices,
            x.values,
            readonly_contiguous(data.y, np.float64),
            self._mode,
            self._scale,
            self._rounds,
            self._w,
            self._acc,
            out,
            record,
            pred,
        )
        self._rounds += n
        return out if record else pred

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare the data-dependent regret bound of the Notes after ``t`` rounds."""
        if not self._bounded:
            return {}
        return {("regret", math.nan): self.regret_bound(t)}

    def regret_bound(self, t: int) -> np.ndarray:
        """Return the Notes' bound ``D²/(2η_t) + S_t/2`` (or ``S_t/2``), shape (R,).

        With ``l1_radius`` it bounds the regret against the ℓ1 ball (``D = 2·l1_radius``)."""
        half = 0.5 * self._acc
        if self._mode == STRONG or t == 0:
            return half
        return self._diameter**2 / (2.0 * self.step_size(t)) + half

    @classmethod
    def _unit_test_params(cls):
        yield {"eta": 0.5}
        yield {"schedule": "fixed", "eta": 0.1}
        yield {"schedule": "strongly_convex", "sigma": 1.0}
        yield {"eta": 0.5, "l1_radius": 1.0}


def _check_holds_l1_ball(domain, l1_radius: float, who: str) -> None:
    """Refuse an ℓ1 ball the game's domain does not contain (``‖w‖_∞ ≤ ‖w‖₂ ≤ ‖w‖₁``)."""
    if domain.kind == "unconstrained":
        return
    if domain.kind == "simplex":
        raise ConfigError(who, "l1_radius", "the ℓ1 ball does not lie in the simplex")
    if domain.radius < l1_radius:
        raise ConfigError(
            who,
            "l1_radius",
            f"{l1_radius} exceeds the {domain.kind}'s radius {domain.radius}: the ℓ1 ball must "
            "lie in the game's domain",
        )
