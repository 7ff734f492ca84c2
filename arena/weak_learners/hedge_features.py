"""Hedge over the coordinate functions ``f_j(x) = x_j``: an online linear learner.

The base learner of the lower bound of online gradient boosting (Beygelzimer, Hazan, Kale & Luo
2015, Theorem 3; Luo 2016, Theorem 15) is Hedge over a finite class F of M functions whose
values are the features of ``x_t``. By default this learner outputs the Hedge-weighted
**average** of those values instead of sampling one (the derandomization of Beygelzimer et al.
2015, §2, footnote 2: with linear losses the expected loss of the sampled function is the loss of
the average), so it is deterministic and its regret bound holds for every sequence; ``sample``
gives the theorem's randomized learner, which reveals one function value per call.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.boosting.components import WeakLearner, WeakSpec
from arena.errors import ConfigError
from arena.params import Boolean, Interval, IsNone


def hedge_regret_bound(horizon: int, n_experts: int, bound: float = 1.0) -> float:
    """Return Hedge's regret bound ``2D·√(T ln K / 2)`` on linear losses ``c·f``, ``|c| ≤ 1``.

    Each expert's loss ``c_t·f_k(x_t)`` lies in an interval of length 2D, so Hedge with the
    fixed rate ``η = √(8 ln K / T)/(2D)`` (:func:`tuned_rate`) has regret at most
    ``ln K/η + η T (2D)²/8 = 2D·√(T ln K / 2)`` against every expert (Cesa-Bianchi & Lugosi
    2006, Theorem 2.2), for every sequence of coefficients.

    Examples
    --------
    >>> round(hedge_regret_bound(100, 4), 6)  # 2·√(100·ln 4 / 2)
    16.651092
    """
    return 2.0 * bound * math.sqrt(horizon * math.log(n_experts) / 2.0)


def tuned_rate(horizon: int, n_experts: int, bound: float = 1.0) -> float:
    """Return the rate ``√(8 ln K / T)/(2D)`` of :func:`hedge_regret_bound` (0 when K = 1).

    Examples
    --------
    >>> round(tuned_rate(100, 4), 6)
    0.166511
    """
    return math.sqrt(8.0 * math.log(n_experts) / horizon) / (2.0 * bound)


class HedgeFeatures(WeakLearner):
    """Hedge over the clipped coordinate functions; predicts their weighted average.

    The class is ``F = {f_1, …, f_d}`` with ``f_j(x) = clip(x_j, −D, D)`` (and their negations
    ``−f_j`` as well when ``symmetric``, so F is closed under negation as the boosting theorems
    assume; K = d or 2d experts), D the game's output bound. Lane i keeps log-weights
    ``log w_k`` (start 0) and predicts

    ``A(x) = Σ_k p_k f_k(x)``, ``p_k = w_k / Σ_j w_j``,

    which lies in ``[−D, D]``. Fed ``(x, target, weight)`` by the protocol's regression convention
    (a gradient step on ``½·weight·(A(x) − target)²``), it reads the linear loss ``c·A(x)`` with
    ``c = weight·(A(x) − target)`` (the gradient at the current output: online gradient boosting
    passes ``target = A(x) − c``, weight 1) and charges each expert ``c·f_k(x)``:

    ``log w_k ← log w_k − η·c·f_k(x)``.

    On losses with ``|c_t| ≤ 1`` the regret against the best expert is at most
    ``2D·√(T ln K / 2)`` with the tuned rate (:func:`hedge_regret_bound`); the lanes are
    deterministic and independent.

    With ``sample`` the lane instead outputs one function ``f_{k_t}(x)``, ``k_t`` drawn from ``p``
    (from the lane's own stream, after each update; uniformly at round 1): the randomized Hedge
    of the lower bound, whose output reveals a single function value per call (the averaging
    learner reads all M features at once, so a booster over it is not limited to N bits per round
    and Theorem 3 does not constrain it). Its regret bound then holds in expectation (and with
    high probability, ``O(√(T ln(K/δ)))``), not for every draw.

    Parameters
    ----------
    rate : float or None
        The Hedge rate η > 0; None: the rate ``√(8 ln K / T)/(2D)`` tuned to the game's horizon T
        (which must then be known).
    symmetric : bool
        Also include the negated functions ``−f_j``.
    sample : bool
        Output one function drawn from the Hedge weights instead of their weighted average.

    Examples
    --------
    >>> from arena.boosting.components import WeakSpec
    >>> wl = HedgeFeatures(rate=1.0)
    >>> wl.reset(WeakSpec("regression", 2, 1), [[np.random.default_rng(0)]])
    >>> x = np.array([[1.0, -1.0]])
    >>> wl.predict(x)  # uniform weights: the mean of the two features
    array([[0.]])
    >>> wl.update(x, wl.predict(x) - 1.0, np.ones((1, 1)))  # linear loss 1·A(x): feature 2 wins
    >>> round(float(wl.predict(x)[0, 0]), 6)  # (e^{-1} − e^{1}) / (e^{-1} + e^{1})
    -0.761594

    References
    ----------
    Freund & Schapire 1997 (Hedge); Cesa-Bianchi & Lugosi 2006, Theorem 2.2; Beygelzimer, Hazan,
    Kale & Luo 2015, §2 footnote 2 and Theorem 3 (Hedge over M functions as the base learner);
    Luo 2016, Theorem 15.
    """

    name = "hedge_features"
    tasks: ClassVar[frozenset[str]] = frozenset({"regression"})
    parameter_constraints: ClassVar = {
        "rate": [Interval(0, None, closed="neither"), IsNone()],
        "symmetric": [Boolean()],
        "sample": [Boolean()],
    }

    def __init__(self, rate: float | None = None, symmetric: bool = False, sample: bool = False):
        self.rate = rate
        self.symmetric = symmetric
        self.sample = sample

    def n_experts(self, n_features: int) -> int:
        """K: the number of functions in F for ``n_features`` features."""
        return 2 * n_features if self.symmetric else n_features

    def reset(self, spec: WeakSpec, rngs: Sequence[Sequence[np.random.Generator]]) -> None:
        k = self.n_experts(spec.n_features)
        if self.rate is None:
            if spec.horizon is None:
                raise ConfigError(self.label(), "rate", "None needs a known horizon; give a rate")
            self._eta = tuned_rate(int(spec.horizon), k, spec.bound) if k > 1 else 0.0
        else:
            self._eta = float(self.rate)
        self._bound = float(spec.bound)
        self._log_w = np.zeros((spec.n_replicates, spec.n_lanes, k))
        if self.sample:
            self._rngs = [list(rep) for rep in rngs]
            self._chosen = np.array(
                [[int(lane.integers(k)) for lane in rep] for rep in self._rngs], dtype=np.int64
            ).reshape(spec.n_replicates, spec.n_lanes)

    def _values(self, x: np.ndarray) -> np.ndarray:
        f = np.clip(np.asarray(x, dtype=np.float64), -self._bound, self._bound)
        return np.concatenate([f, -f], axis=1) if self.symmetric else f

    def weights(self) -> np.ndarray:
        """Return the Hedge distributions ``p`` of every lane, shape (R, L, K)."""
        z = self._log_w - self._log_w.max(axis=2, keepdims=True)
        w = np.exp(z)
        return w / w.sum(axis=2, keepdims=True)

    def predict(self, x: np.ndarray) -> np.ndarray:
        if self.sample:
            return np.take_along_axis(self._values(x), self._chosen, axis=1)
        out = np.einsum("rlk,rk->rl", self.weights(), self._values(x))
        return np.clip(out, -self._bound, self._bound)  # rounding only: a mean of values in [−D, D]

    def update(self, x: np.ndarray, target: np.ndarray, weight: np.ndarray) -> None:
        f = self._values(x)
        coef = weight * (self.predict(x) - target)
        step = self._eta * coef[:, :, None] * f[:, None, :]
        # a lane of weight 0 is skipped exactly (the protocol's contract)
        self._log_w = np.where((weight > 0.0)[:, :, None], self._log_w - step, self._log_w)
        if self.sample:  # the next round's function, drawn from the updated weights
            cdf = np.cumsum(self.weights(), axis=2)
            for r, i in zip(*np.nonzero(weight > 0.0), strict=True):
                u = self._rngs[r][i].random()
                self._chosen[r, i] = min(
                    int(np.searchsorted(cdf[r, i], u * cdf[r, i, -1])), cdf.shape[2] - 1
                )

    @classmethod
    def _unit_test_params(cls):
        yield {"rate": 0.5}
        yield {"rate": 0.5, "symmetric": True}
        yield {"rate": 0.5, "sample": True}
