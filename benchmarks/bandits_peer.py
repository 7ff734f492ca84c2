"""The SMPyBandits side of ``bench_bandits.py``: run by the peer's own Python (its benchmark-only
environment, SMPyBandits 0.9.7), never imported by the project.

It holds the matched peer policies: a few SMPyBandits policies used as they are, and small
subclasses where SMPyBandits has no option for what our player does (each says what it changes
and why), and four modes, chosen by a job's ``mode`` (one JSON job as the argument, or
``serve``: one job per line of stdin, one JSON answer per line of stdout):

* ``time``: the bare loop (``choice`` → a Bernoulli draw → ``getReward``) for ``runs`` runs of
  ``horizon`` rounds; prints the seconds spent in the loops.
* ``regret``: the same loop; prints each run's pseudo-regret ``Σ_t (μ* − μ_{I_t})``.
* ``table``: plays the pre-drawn reward tables of an ``.npy`` file (n, T, K) and writes the arm
  sequences (n, T) to another ``.npy`` file.
* ``tsallis_bug``: the stock ``TsallisInf`` with its weights' sum recorded before it renormalizes.
"""

# SMPyBandits draws from numpy's global generator (``numpy.random``), so its subclasses here do
# too, and each run seeds it: the legacy API is the peer's, not a choice.
# ruff: noqa: NPY002

from __future__ import annotations

import json
import math
import random
import sys
import time
import warnings

import numpy as np
import numpy.random as rn
import scipy.optimize as opt
from SMPyBandits import Policies
from SMPyBandits.Policies.BasePolicy import BasePolicy
from SMPyBandits.Policies.with_proba import with_proba

warnings.filterwarnings("ignore")


class LowestIndexTies:
    """Index policies break ties at the lowest arm index, as ours do (SMPyBandits draws one of the
    tied arms uniformly, ``np.random.choice(np.nonzero(index == max))``): unplayed arms (index
    +inf) go first in arm order, and exact ties of the index go to the lower arm."""

    def choice(self):
        self.computeAllIndex()
        return int(np.argmax(self.index))  # the first maximum


class UCBMatched(LowestIndexTies, Policies.UCB):
    """SMPyBandits' ``UCB`` (``mean + sqrt(2 ln t / N_k)``, t the rounds played), ties matched."""


class MOSSHMatched(LowestIndexTies, Policies.MOSSH):
    """SMPyBandits' ``MOSSH`` (horizon-T MOSS; its ``MOSS`` is the anytime index), ties matched."""


class KLUCBMatched(LowestIndexTies, Policies.klUCB):
    """SMPyBandits' ``klUCB`` (``c log t / N_k``, bisection to ``tolerance``), ties matched."""


class EpsilonGreedyMatched(Policies.EpsilonGreedy):
    """ε-greedy as ours plays it: ``ε_t = min(1, c K / (d² t))`` for round t (SMPyBandits has no
    such schedule), exploitation on the empirical *means* with unplayed arms first (the stock
    policy exploits the arm of the largest *sum* of rewards), and exploration over all K arms (the
    stock policy draws ``randint(0, K − 1)``, which never explores the last arm)."""

    def __init__(self, nbArms, c=5.0, d=0.1):
        super().__init__(nbArms, epsilon=1.0)
        self.c, self.d = c, d

    @property
    def epsilon(self):
        return min(1.0, self.c * self.nbArms / (self.d * self.d * (self.t + 1)))

    def choice(self):
        if with_proba(self.epsilon):
            return rn.randint(0, self.nbArms)
        means = np.where(self.pulls > 0, self.rewards / np.maximum(self.pulls, 1), np.inf)
        return int(np.argmax(means))


class Exp3Matched(Policies.Exp3):
    """Loss-based Exp3 as ours plays it: fixed rate η (given), no γ mixing, no forced initial pulls,
    the estimate ``ℓ/p_{I_t}`` (or ``ℓ/(p_{I_t} + ix_gamma)``, Exp3-IX) of the loss ``1 − r``.

    SMPyBandits' ``Exp3`` is reward-based, uses its γ both as the uniform mixing and as the rate
    (η = γ/K), and plays each arm once first (in a random order), dividing those forced pulls'
    rewards by a probability they were not drawn with. The update keeps the stock code's form
    (multiply the pulled arm's weight, renormalize; ``trusts`` with γ = 0)."""

    def __init__(self, nbArms, eta, ix_gamma=0.0):
        super().__init__(nbArms, gamma=1.0)
        self._gamma = 0.0  # no mixing (the constructor refuses γ = 0)
        self.eta = eta
        self.ix_gamma = ix_gamma

    def choice(self):
        return rn.choice(self.nbArms, p=self.trusts)

    def getReward(self, arm, reward):
        p = self.trusts[arm]
        BasePolicy.getReward(self, arm, reward)
        loss = 1.0 - (reward - self.lower) / self.amplitude
        self.weights[arm] *= np.exp(-self.eta * loss / (p + self.ix_gamma))
        self.weights /= np.sum(self.weights)


class Exp3PlusPlusMatched(Policies.Exp3PlusPlus):
    """EXP3++ as ours plays it (Seldin & Lugosi 2017, Algorithm 1, c = 18): the gap estimate
    ``min(1, (L̃(a) − min L̃)/t)`` and ``ε_t(a) = min(1/(2K), β_t, ξ_t(a))``, rate ``β_t`` at round
    t, no forced initial pulls, and the importance weight the arm was drawn with.

    SMPyBandits' ``Exp3PlusPlus`` (Seldin & Slivkins 2014's LCB gap estimate) mixes its weights
    with the scalar η_t, not with the per-arm ``ε_t(a)`` (``trusts`` adds ``self.eta`` where it
    means ``self.epsilon``), so its gap estimate never acts; and it divides the loss by ``trusts``
    recomputed after ``t`` advanced, not by the probability the arm was drawn with."""

    def __init__(self, nbArms, c=18.0):
        super().__init__(nbArms)
        self.c = c
        self._p = None

    def choice(self):
        t, k = self.t + 1, self.nbArms
        beta = 0.5 * math.sqrt(math.log(k) / (t * k))
        gap_raw = self.losses - self.losses.min()
        w = np.exp(-beta * gap_raw)
        rho = w / w.sum()
        gap = np.minimum(1.0, gap_raw / t)
        x = t * gap * gap
        safe = np.where(x > 1.0, x, math.e)
        xi = np.where(x > 1.0, self.c * np.log(safe) / safe, np.inf)
        eps = np.minimum(min(0.5 / k, beta), xi)
        self._p = (1.0 - eps.sum()) * rho + eps
        return rn.choice(k, p=self._p)

    def getReward(self, arm, reward):
        BasePolicy.getReward(self, arm, reward)
        loss = 1.0 - (reward - self.lower) / self.amplitude
        self.losses[arm] += loss / self._p[arm]


class TsallisInfCounting(Policies.TsallisInf):
    """The stock ``TsallisInf`` update, recording ``Σ_i w_i`` before it renormalizes and whether
    the multiplier x landed at or above ``min_i L̂_i`` (the wrong branch of the root)."""

    def startGame(self):
        super().startGame()
        self.cumulative_losses.fill(0.0)
        self.sums, self.wrong = [], []

    def getReward(self, arm, reward):
        Policies.Exp3.getReward(self, arm, reward)
        reward = (reward - self.lower) / self.amplitude
        self.cumulative_losses[arm] += (1.0 - reward) / self.weights[arm]
        eta_t = self.eta
        losses, power = self.cumulative_losses, self.inverse_exponent

        def objective_function(x):
            return (np.sum((eta_t * (losses - x)) ** power) - 1) ** 2

        x = opt.minimize_scalar(objective_function).x
        new_weights = (eta_t * (losses - x)) ** power
        if not np.all(np.isfinite(new_weights)):
            new_weights[~np.isfinite(new_weights)] = 0
        self.sums.append(float(np.sum(new_weights)))
        self.wrong.append(bool(x >= losses.min()))
        if np.isclose(np.sum(new_weights), 0):
            new_weights[:] = 1.0
        self.weights = new_weights / np.sum(new_weights)


class TsallisInfFixed(Policies.TsallisInf):
    """SMPyBandits' ``TsallisInf`` (½-Tsallis, importance-weighted estimates) with three changes:

    * the root: x solves ``Σ_i (η (L̂_i − x))^{−2} = 1`` by ``scipy.optimize.brentq`` on the
      bracket ``[min L̂ − √K/η, min L̂ − 1/η]``, where the sum goes from ≤ 1 to ≥ 1 (the stock
      code minimizes ``(Σ − 1)²`` by an unbracketed ``minimize_scalar``, which can land on
      ``x > min L̂``, where the weights sum far from 1 before it renormalizes them);
    * no forced initial pulls (inherited from ``Exp3``: each arm once in a random order, whose
      losses are divided by weights they were not drawn with);
    * the rate of round t is ``1/√t`` (Zimmert & Seldin 2021, ``4 (η_t (L̂ − x))^{−2}`` with
      ``η_t = 2/√t``); the stock code uses ``1/√(t − 1)``.

    The update still goes through ``Exp3.getReward`` first, as the stock one does: it multiplies
    the pulled arm's weight by ``exp(γ r/(K w))`` before the Tsallis step reads that weight, which
    changes nothing for rewards in {0, 1} (r = 0: factor 1; r = 1: loss 0)."""

    def choice(self):
        return rn.choice(self.nbArms, p=self.weights)

    def getReward(self, arm, reward):
        Policies.Exp3.getReward(self, arm, reward)
        reward = (reward - self.lower) / self.amplitude
        self.cumulative_losses[arm] += (1.0 - reward) / self.weights[arm]
        eta = 1.0 / math.sqrt(self.t + 1)
        losses = self.cumulative_losses
        low = losses.min()

        def excess(x):
            return np.sum((eta * (losses - x)) ** -2.0) - 1.0

        x = opt.brentq(excess, low - math.sqrt(self.nbArms) / eta, low - 1.0 / eta, xtol=1e-13)
        new_weights = (eta * (losses - x)) ** -2.0
        self.weights = new_weights / np.sum(new_weights)


def make(name, kwargs, n_arms):
    cls = globals().get(name) or getattr(Policies, name)
    return cls(n_arms, **kwargs)


def seed_all(seed):
    rn.seed(seed)
    random.seed(seed)


def run(job):
    """Run one job; return its JSON-able answer."""
    mode, means = job["mode"], np.array(job.get("means", []), dtype=float)
    if mode == "table":
        tables = np.load(job["path"])
        arms = np.empty(tables.shape[:2], dtype=np.int64)
        for n, table in enumerate(tables):
            seed_all(n)
            p = make(job["policy"], job["kwargs"], table.shape[1])
            p.startGame()
            for t in range(table.shape[0]):
                a = p.choice()
                arms[n, t] = a
                p.getReward(a, float(table[t, a]))
        np.save(job["out"], arms)
        return {"ok": True}
    horizon, runs, seed = job["horizon"], job["runs"], job.get("seed", 0)
    best = float(means.max())
    if mode == "time":  # an untimed warm-up (caches, lazy imports)
        seed_all(seed)
        warm, warm_draws = make(job["policy"], job["kwargs"], len(means)), np.random.default_rng()
        warm.startGame()
        for _ in range(min(horizon, 300)):
            arm = warm.choice()
            warm.getReward(arm, float(warm_draws.random() < means[arm]))
    out = {"seconds": 0.0, "steps": horizon * runs, "pseudo_regret": [], "sums": [], "wrong": []}
    for run in range(runs):
        seed_all(seed + run)
        draws = np.random.default_rng(seed + run)
        p = make(job["policy"], job["kwargs"], len(means))
        p.startGame()
        gap = 0.0
        start = time.perf_counter()
        if mode == "time":
            for _ in range(horizon):
                arm = p.choice()
                p.getReward(arm, float(draws.random() < means[arm]))
        else:
            for _ in range(horizon):
                arm = p.choice()
                p.getReward(arm, float(draws.random() < means[arm]))
                gap += best - means[arm]
        out["seconds"] += time.perf_counter() - start
        out["pseudo_regret"].append(gap)
        if mode == "tsallis_bug":
            out["sums"].append(p.sums)
            out["wrong"].append(p.wrong)
    return out


def main():
    """One job from the command line, or (``serve``) one job per line of stdin, each answered by
    one line of JSON on stdout, so that the benchmark starts the peer's interpreter once."""
    if sys.argv[1] != "serve":
        print(json.dumps(run(json.loads(sys.argv[1]))))
        return
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        print(json.dumps(run(json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
