"""ML-Prod: Prod with one adaptive learning rate per expert (Gaillard, Stoltz & van Erven 2014)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numba import njit

from arena.experts.components import ExpertsPlayer
from arena.kernels import normalize_log_weights
from arena.metrics.base import exact_quantile_rank
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

QUANTILES = (0.1, 0.25)
"""ε values of the declared ``quantile_regret`` bounds."""


@njit(cache=True, nogil=True)
def _ml_prod_probs_row(log_w, eta, conf, has_conf, out):
    """``p_k ∝ I_k η_k w_k``, a softmax of ``ln I_k + ln η_k + ln w_k`` (``I ≡ 1`` without
    confidences: the term is skipped, so the plain game is computed exactly as before)."""
    n = log_w.size
    if n == 1:
        if has_conf and conf[0] <= 0.0:
            raise ValueError("no expert is awake (every confidence is 0)")
        out[0] = 1.0
        return
    mx = -np.inf
    for i in range(n):
        v = math.log(eta[i]) + log_w[i]
        if has_conf:
            v = v + math.log(conf[i]) if conf[i] > 0.0 else -np.inf
        out[i] = v
        if v > mx:
            mx = v
    if mx == -np.inf:
        raise ValueError("no expert is awake (every confidence is 0)")
    normalize_log_weights(out, mx)


@njit(cache=True, nogil=True)
def _ml_prod_update_row(log_w, eta, sq, eta_sq, log_n, p, u, conf, has_conf):
    """One ML-Prod update with ``r_k = I_k(ℓ̂ − u_k)`` (``ℓ̂ = m + p·(u − m)``, m the smallest
    loss of an awake expert; ``I ≡ 1`` without confidences).

    ``Σ r²`` grows, ``η'_k = min(½, √(ln N/(1 + Σ_{s≤t} r²_{k,s})))`` and
    ``ln w_k ← (η'_k/η_k)(ln w_k + ln(1 + η_k r_k))``, then ``η_k ← η'_k``. For the declared bound,
    ``eta_sq`` accumulates ``η_k r_k²`` (old rate) and the return value is ``Σ_k (η_k/η'_k − 1)``.
    A sleeping expert (``I_k = 0``) has ``r_k = 0``: its weight and rate stay as they are.
    """
    n = u.size
    if n == 1:
        return 0.0
    m = np.inf
    for i in range(n):
        if u[i] < m and (not has_conf or conf[i] > 0.0):
            m = u[i]
    h = 0.0
    for i in range(n):
        h += p[i] * (u[i] - m)
    h += m
    excess = 0.0
    for i in range(n):
        r = h - u[i]
        if has_conf:
            r = conf[i] * r
        sq[i] += r * r
        eta_sq[i] += eta[i] * r * r
        new = min(0.5, math.sqrt(log_n / (1.0 + sq[i])))
        log_w[i] = (new / eta[i]) * (log_w[i] + math.log1p(eta[i] * r))
        excess += eta[i] / new - 1.0
        eta[i] = new
    return excess


@njit(cache=True, nogil=True)
def _ml_prod_probs(log_w, eta, conf, has_conf, out):
    for r in range(log_w.shape[0]):
        _ml_prod_probs_row(log_w[r], eta[r], conf[r if has_conf else 0], has_conf, out[r])


@njit(cache=True, nogil=True)
def _ml_prod_update(log_w, eta, sq, eta_sq, excess, log_n, unit, conf, has_conf):
    p = np.empty(log_w.shape[1])
    for r in range(log_w.shape[0]):
        c = conf[r if has_conf else 0]
        _ml_prod_probs_row(log_w[r], eta[r], c, has_conf, p)
        excess[r] += _ml_prod_update_row(
            log_w[r], eta[r], sq[r], eta_sq[r], log_n, p, unit[r], c, has_conf
        )


@njit(cache=True, nogil=True)
def _ml_prod_play_block(
    losses, conf, has_conf, log_w, eta, sq, eta_sq, excess, log_n, lo, scale, probs
):
    """Play a chunk: ``probs[r, j]`` is p at the chunk's round j; the state advances.
    ``conf`` is (R, n, N) when ``has_conf``, else a (1, 1, 1) placeholder."""
    n_rep, n, n_act = losses.shape
    u = np.empty(n_act)
    for r in range(n_rep):
        for j in range(n):
            c = conf[r, j] if has_conf else conf[0, 0]
            _ml_prod_probs_row(log_w[r], eta[r], c, has_conf, probs[r, j])
            for i in range(n_act):
                u[i] = (losses[r, j, i] - lo) / scale
            excess[r] += _ml_prod_update_row(
                log_w[r], eta[r], sq[r], eta_sq[r], log_n, probs[r, j], u, c, has_conf
            )


def _confidence_array(confidences: np.ndarray | None, ndim: int) -> tuple[np.ndarray, bool]:
    """The kernels' ``(conf, has_conf)``: a contiguous float copy, or a ones placeholder."""
    if confidences is None:
        return np.ones((1,) * ndim), False
    return np.ascontiguousarray(confidences, dtype=np.float64), True


class MLProd(ExpertsPlayer):
    """ML-Prod: Prod weights with a per-expert rate ``η_{k,t} = min{½, √(ln N/(1 + Σ r²_k))}``.

    No parameters (uniform initial weights).

    Notes
    -----
    With unit-range losses ``u_t`` (the declared range mapped to [0, 1]) and instantaneous regrets
    ``r_{k,t} = ℓ̂_t − u_{t,k}`` (``ℓ̂_t = p_t·u_t``, computed as ``min u_t + p_t·(u_t − min u_t)`` so
    that a round where all experts have the same loss gives ``r = 0`` exactly):

    * initial weights ``w_{k,0} = 1/N`` and rates ``η_{k,0} = min{½, √(ln N)} = ½`` (N ≥ 2);
    * prediction ``p_{k,t} ∝ η_{k,t−1} w_{k,t−1}``;
    * after round t: ``η_{k,t} = min{½, √(ln N / (1 + Σ_{s≤t} r²_{k,s}))}`` and
      ``w_{k,t} = (w_{k,t−1}(1 + η_{k,t−1} r_{k,t}))^{η_{k,t}/η_{k,t−1}}``, kept as logarithms
      (``1 + η r ≥ ½`` since ``η ≤ ½`` and ``|r| ≤ 1``). With N = 1, ``p ≡ 1``.

    **Confidence-rated (sleeping) experts**, used automatically when the game announces
    confidences ``I_{t,k} ∈ [0, 1]`` (adversary ``sleeping``, any mode): the generic reduction
    of Gaillard, Stoltz & van Erven (2014, the application to experts that report their
    confidences) runs ML-Prod on the losses ``ℓ̃_{t,k} = I_{t,k} u_{t,k} + (1 − I_{t,k}) ℓ̂_t``
    and plays ``p_{t,k} ∝ I_{t,k} p̃_{t,k}``. Since ``p̃_t·ℓ̃_t = ℓ̂_t``, this is ML-Prod with

    * prediction ``p_{k,t} ∝ I_{t,k} η_{k,t−1} w_{k,t−1}``;
    * instantaneous regrets ``r_{k,t} = I_{t,k}(ℓ̂_t − u_{t,k})``, the same rate and weight
      updates (a sleeping expert, ``I = 0``, keeps its weight and rate);

    here ``ℓ̂_t = m + p_t·(u_t − m)`` with m the smallest loss of an awake expert. With
    ``I ≡ 1`` every number is computed as in the plain game, so the two are equal exactly.
    Luo (2016, §2.3.2) compares this sleeping ML-Prod with AdaNormalHedge. A round with no
    expert awake is refused (ValueError), as AdaNormalHedge does.

    This is the paper's update. opera's ``R/MLprod.R`` differs:
    it starts from ``w = 1`` (not 1/N), caps η at ``1/(2 max_s |r_s|)`` instead of ½, and puts the
    *new* rate inside the logarithm, ``ln w ← (η_t/η_{t−1}) ln w + ln(1 + η_t r_t)``; its weights
    are therefore not the same numbers.

    Guarantee (derived here, self-contained; it has the form of the paper's Theorem 3 as we recall
    it, the paper itself not being readable in the stored corpora): for every loss sequence
    (adaptive adversaries included), every expert k and every t,

    ``R_{t,k} ≤ ln N/η_{k,0} + Σ_{s≤t} η_{k,s−1} r²_{k,s} + ln(B_t)/η_{k,t}``,
    ``B_t = 1 + (1/e) Σ_k Σ_{s≤t} (η_{k,s−1}/η_{k,s} − 1)``.

    Proof: (i) ``Σ_k η_{k,t−1} w_{k,t−1} r_{k,t} ∝ Σ_k p_{k,t} r_{k,t} = 0``, so
    ``Σ_k w_{k,t−1}(1 + η_{k,t−1} r_{k,t}) = W_{t−1}`` (``W = Σ_k w_k``, ``W_0 = 1``);
    (ii) ``y^β ≤ y + (1/β − 1)/e`` for ``y ≥ 0``, ``β ∈ (0, 1]`` (rates never increase), hence
    ``W_t ≤ B_t``;
    (iii) ``ln w_{k,t}/η_{k,t} = ln w_{k,0}/η_{k,0} + Σ_s ln(1 + η_{k,s−1} r_{k,s})/η_{k,s−1}`` and
    ``ln(1 + x) ≥ x − x²`` for ``x ≥ −½``; (iv) ``w_{k,t} ≤ W_t``. :meth:`bounds` declares the
    largest of these per-expert bounds on ``regret`` and their ``⌈εN⌉``-th largest on
    ``quantile_regret`` (ε = 0.1, 0.25), in raw units. The proof uses only ``p ∝ I η w``
    (step (i): ``Σ_k η_k w_k I_k(ℓ̂ − u_k) ∝ Σ_k p_k(ℓ̂ − u_k) = 0``) and ``|r| ≤ 1``, so with
    confidences it holds verbatim for the confidence-rated regret
    ``R_{t,k} = Σ_{s≤t} I_{s,k}(ℓ̂_s − u_{s,k})``, with ``r`` the confidence-rated regrets in
    ``Σ η r²`` and B: then it is declared on ``sleeping_regret`` alone (like AdaNormalHedge's).
    It is a second-order bound: with the tuned
    rates it is ``O(√((ln N + ln ln T) Σ_t r²_{t,k}) + ln N + ln ln T)`` (the paper's
    corollary). ML-Prod is invariant to per-round shifts of the losses (only ``r`` enters); not to
    scaling (η ≤ ½ is tied to the unit range).

    Examples
    --------
    >>> from arena import play
    >>> df = play(MLProd(), "bernoulli", n_actions=5, horizon=2000,
    ...           adversary_params={"gap": 0.2}, metrics={"regret": {}})
    >>> bool(df.value.iloc[-1] < 30)
    True
    >>> from arena.adversaries.sleeping import Sleeping
    >>> df = play(MLProd(), Sleeping(mode="confidence", awake_prob=0.6), n_actions=4,
    ...           horizon=300, metrics={"sleeping_regret": {}, "bound": {}})
    >>> last = df[df.t == 300].set_index("metric").value
    >>> bool(last["sleeping_regret"] <= last["bound:sleeping_regret"])
    True

    References
    ----------
    Gaillard, Stoltz & van Erven (2014), "A second-order bound with excess losses", COLT
    (ML-Prod, Algorithm 1 with the rates of its Corollary; the generic reduction for experts
    that report their confidences; where it and opera differ, the paper is followed).
    Cross-checked in structure against ``Dralliag/opera:R/MLprod.R`` (whose ``awake`` argument
    gives the same ``p ∝ I η w`` and ``r = I(ℓ̂ − ℓ)``).
    Luo (2016), thesis, §2.3.2 (confidence-rated experts; sleeping ML-Prod compared with
    AdaNormalHedge).
    """

    tags = PlayerTags(
        protocols=frozenset({"experts"}), block_kernel=True, supports_confidences=True
    )

    def __init__(self):
        pass

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        n_act = spec.n_actions
        self._log_n = math.log(n_act)
        self._eta0 = min(0.5, math.sqrt(self._log_n))
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        shape = (spec.n_replicates, n_act)
        self._log_w = np.full(shape, -self._log_n)
        self._eta = np.full(shape, self._eta0)
        self._sq = np.zeros(shape)
        self._eta_sq = np.zeros(shape)
        self._excess = np.zeros(spec.n_replicates)
        self._sleeping = False
        self._ranks = {eps: exact_quantile_rank(eps, n_act) for eps in QUANTILES}

    def learning_rates(self) -> np.ndarray:
        """Return the per-expert rates ``η_{k,t}`` of the next prediction, shape (R, N)."""
        return self._eta.copy()

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        out = np.empty_like(self._log_w)
        conf, has_conf = _confidence_array(confidences, 2)
        _ml_prod_probs(self._log_w, self._eta, conf, has_conf, out)
        return out

    def update(
        self,
        losses: np.ndarray,
        actions: np.ndarray | None = None,
        confidences: np.ndarray | None = None,
    ) -> None:
        unit = (np.asarray(losses, dtype=np.float64) - self._lo) / self._scale
        conf, has_conf = _confidence_array(confidences, 2)
        self._sleeping |= has_conf
        _ml_prod_update(
            self._log_w,
            self._eta,
            self._sq,
            self._eta_sq,
            self._excess,
            self._log_n,
            unit,
            conf,
            has_conf,
        )

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        losses = np.ascontiguousarray(losses, dtype=np.float64)
        probs = np.empty_like(losses)
        conf, has_conf = _confidence_array(confidences, 3)
        self._sleeping |= has_conf
        _ml_prod_play_block(
            losses,
            conf,
            has_conf,
            self._log_w,
            self._eta,
            self._sq,
            self._eta_sq,
            self._excess,
            self._log_n,
            self._lo,
            self._scale,
            probs,
        )
        return probs

    def expert_bounds(self) -> np.ndarray:
        """Return the per-expert regret bounds of the Notes after the rounds played, (R, N), raw
        units (zeros when N = 1, where there is no regret)."""
        if self._log_n == 0.0:
            return np.zeros_like(self._eta)
        big_b = 1.0 + self._excess / math.e
        unit = self._log_n / self._eta0 + self._eta_sq + np.log(big_b)[:, None] / self._eta
        return self._scale * unit

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare the bounds of the Notes on ``regret`` and ``quantile_regret`` (ε = 0.1, 0.25),
        or on ``sleeping_regret`` alone in a game that announces confidences."""
        per_expert = -np.sort(-self.expert_bounds(), axis=1)  # descending
        if self._sleeping:
            return {("sleeping_regret", math.nan): per_expert[:, 0].copy()}
        out = {("regret", math.nan): per_expert[:, 0].copy()}
        for eps, k in self._ranks.items():
            out[("quantile_regret", eps)] = per_expert[:, k - 1].copy()
        return out

    @classmethod
    def _unit_test_params(cls):
        yield {}
