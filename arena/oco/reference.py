"""The reference loop of the OCO protocols: one round at a time, metrics from the stored history.

:func:`reference_play_oco` is the specification the driver (:func:`arena.game.run_game` playing
:class:`arena.oco.game.OCOProtocol`) must reproduce to 1e-12. It shares only the setup
(:func:`arena.game.prepare_game`: validation, seeding, cloning and ``reset``). Each round it asks
the adversary for ``x_t`` (``features``), the player for ``w_t`` (``predict``), the adversary for
the loss (``reveal``; an oblivious adversary answers from ``data_block(t, 1)``), evaluates the loss
and its subgradient with plain scalar formulas written out here, and calls ``update``. Metrics are
recomputed from the whole stored history at each checkpoint: the best comparator in hindsight
over all stored examples (for the squared loss too, where the driver streams sufficient
statistics), the per-round minimizers round by round.

Memory and time grow with T: a test oracle for small games, not a way to run experiments.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from arena.game import declared_rows, prepare_game
from arena.oco import hindsight
from arena.oco.domains import Domain
from arena.oco.losses import Feedback, RoundData
from arena.results import reference_rows, tidy_frame


def scalar_loss(kind: str, p: float, y: float) -> tuple[float, float]:
    """Return ``(ℓ(p, y), ℓ'(p, y))`` by the textbook formulas (one example).

    Examples
    --------
    >>> scalar_loss("squared", 3.0, 1.0), scalar_loss("hinge", 0.25, -1.0)
    ((2.0, 2.0), (1.25, 1.0))
    """
    if kind == "absolute":
        return abs(p - y), (1.0 if p > y else -1.0 if p < y else 0.0)
    if kind == "squared":
        return 0.5 * (p - y) ** 2, p - y
    if kind == "hinge":
        return (1.0 - y * p, -y) if y * p < 1.0 else (0.0, 0.0)
    if kind == "logistic":
        m = y * p
        value = math.log1p(math.exp(-m)) if m >= 0 else -m + math.log1p(math.exp(m))
        return value, -y / (1.0 + math.exp(m)) if m > -700 else -y
    raise ValueError(kind)


def multiclass_round(w: np.ndarray, x: np.ndarray, y: float) -> tuple[float, list, float]:
    """Return the multiclass hinge ``(value, subgradient, predicted label)`` by plain loops.

    Shalev-Shwartz 2007, Eq. (5.19) with γ = 1: scores ``⟨w_r, x⟩`` of the rows of W
    (row-major in ``w``), ``s`` the first highest-scoring wrong label, margin
    ``m = ⟨w_y − w_s, x⟩``; subgradient ``φ(x, s) − φ(x, y)`` when ``m < 1``; prediction y if
    ``m > 0``, else s.

    Examples
    --------
    >>> multiclass_round(np.array([1.0, 0.0, 0.0, 2.0]), np.array([3.0, 1.0]), 1.0)
    (2.0, [3.0, 1.0, -3.0, -1.0], 0.0)
    """
    d = x.shape[0]
    k = w.shape[0] // d
    scores = [sum(float(w[r * d + i]) * float(x[i]) for i in range(d)) for r in range(k)]
    label = int(y)
    runner = -1
    for r in range(k):
        if r != label and (runner < 0 or scores[r] > scores[runner]):
            runner = r
    margin = scores[label] - scores[runner]
    grad = [0.0] * (k * d)
    if margin < 1.0:
        for i in range(d):
            grad[runner * d + i] += float(x[i])
            grad[label * d + i] -= float(x[i])
    return max(0.0, 1.0 - margin), grad, float(label if margin > 0.0 else runner)


def round_loss(kind: str, sigma: float, w: np.ndarray, data: RoundData, r: int):
    """Return ``(f_t(w), subgradient, prediction)`` of replicate ``r`` by plain loops."""
    d = w.shape[0]
    if kind == "multiclass_hinge":
        value, grad, prediction = multiclass_round(w, data.x[r], float(data.y[r]))
    elif kind == "linear":
        g = data.g[r]
        value = sum(float(g[i]) * float(w[i]) for i in range(d))
        grad = [float(g[i]) for i in range(d)]
        prediction = None
    else:
        x = data.x[r]
        prediction = sum(float(x[i]) * float(w[i]) for i in range(d))
        value, dl = scalar_loss(kind, prediction, float(data.y[r]))
        grad = [dl * float(x[i]) for i in range(d)]
    if sigma:
        z = np.zeros(d) if data.z is None else data.z[r]
        value += 0.5 * sigma * sum((float(w[i]) - float(z[i])) ** 2 for i in range(d))
        grad = [grad[i] + sigma * (float(w[i]) - float(z[i])) for i in range(d)]
    return value, np.array(grad), prediction


def reference_play_oco(player: Any, adversary: Any, **kwargs: Any) -> pd.DataFrame:
    """Play an OCO game with the literal per-round loop; return the engine's tidy rows.

    Parameters
    ----------
    player, adversary : component or registry name
    **kwargs
        The keyword arguments of :func:`arena.game.prepare_game`.

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.oco.testing import AntiGradient, ZeroPlayer
    >>> kw = dict(n_actions=2, horizon=8, replicates=2, metrics=["loss", "regret"])
    >>> ref = reference_play_oco(ZeroPlayer(), AntiGradient(), **kw)
    >>> pd.testing.assert_frame_equal(
    ...     ref, run_game(ZeroPlayer(), AntiGradient(), **kw).rows, atol=1e-12)
    """
    game = prepare_game(player, adversary, **kwargs)
    player, adversary, spec = game.player, game.adversary, game.spec
    n_rep, dim, kind, sigma = spec.n_replicates, spec.dim, spec.loss, spec.sigma
    checkpoints = set(game.grid.tolist())
    params = {m.name: m.param_values(spec) for m in game.metrics}

    history: list[tuple[np.ndarray, RoundData, np.ndarray]] = []  # (w_t, data_t, f_t(w_t))
    grads_seen: list[np.ndarray] = []  # g_t, each (R, d): sketch_error's vectors
    mistakes = np.zeros(n_rep)
    rows: list[dict[str, Any]] = []
    for t in range(1, spec.horizon + 1):
        x = adversary.features(t)
        x = None if x is None else np.array(x, dtype=np.float64)
        w = np.array(player.predict(x), dtype=np.float64)
        if w.shape != (n_rep, dim):
            raise ValueError(f"player.predict returned shape {w.shape} at round {t}")
        rd = adversary.reveal(t, w.copy())
        rd = RoundData(*(None if a is None else np.array(a, dtype=np.float64) for a in rd))
        if rd.x is None and x is not None:
            rd = rd._replace(x=x)
        values = np.empty(n_rep)
        grads = np.empty((n_rep, dim))
        predictions = np.empty(n_rep) if kind != "linear" else None
        for r in range(n_rep):
            values[r], grads[r], pred = round_loss(kind, sigma, w[r], rd, r)
            if predictions is not None:
                predictions[r] = pred
                if spec.protocol == "classification" and rd.y[r] * pred <= 0.0:
                    mistakes[r] += 1
                if spec.protocol == "multiclass" and pred != rd.y[r]:
                    mistakes[r] += 1
        dloss = None
        if predictions is not None and kind != "multiclass_hinge":
            dloss = np.array([scalar_loss(kind, predictions[r], rd.y[r])[1] for r in range(n_rep)])
        player.update(Feedback(w.copy(), values.copy(), grads.copy(), rd, predictions, dloss))
        history.append((w, rd, values))
        grads_seen.append(grads.copy())
        if t not in checkpoints:
            continue
        learner = np.array([sum(h[2][r] for h in history) for r in range(n_rep)])
        for m in game.metrics:
            if m.name in ("bound", "lower_bound"):
                labelled = declared_rows(m.name, player, adversary, t, n_rep)
            elif m.name in ("dg_volume", "volume_quantile_regret"):
                labelled = _grid_rows(m, spec, history, params[m.name])
            elif m.name == "sketch_error":
                labelled = _sketch_rows(player, grads_seen, params[m.name])
            else:
                labelled = [
                    (
                        m.name,
                        float(p),
                        _metric(m.name, p, spec, history, learner, mistakes, adversary),
                    )
                    for p in params[m.name]
                ]
            rows.extend(reference_rows(game.constants, game.ids, t, labelled))
    return tidy_frame(rows)


def _sketch_rows(player, grads_seen: list[np.ndarray], ks: list) -> list:
    """``sketch_error`` from its definition: ``Σ_s w_s² g_s g_sᵀ`` summed round by round, its
    exact top eigenvalues against the player's estimate, with the metric's round-off floor."""
    from arena.oco.sketch import relative_eigen_errors

    n_rep, dim = grads_seen[0].shape
    kmax = int(max(ks))
    estimate = np.asarray(player.sketch_eigenvalues(kmax), dtype=np.float64)
    out = {int(k): [] for k in ks}
    for r in range(n_rep):
        gram = np.zeros((dim, dim))
        for s, g in enumerate(grads_seen, start=1):
            v = player.sketch_weight(s) * g[r]
            gram += np.outer(v, v)
        exact = np.linalg.eigvalsh(gram)[::-1]
        floor = dim * np.finfo(np.float64).eps * exact[0]
        exact = np.where(exact > floor, exact, 0.0)
        padded = np.zeros(kmax)
        padded[: min(kmax, dim)] = exact[: min(kmax, dim)]
        errors = relative_eigen_errors(np.where(estimate[r] > floor, estimate[r], 0.0), padded)
        for k in out:
            out[k].append(float(errors[:k].max()))
    return [("sketch_error", float(k), out[int(k)]) for k in ks]


def _stack(history, name: str) -> np.ndarray | None:
    arrays = [getattr(h[1], name) for h in history]
    if any(a is None for a in arrays):
        return None
    return np.stack(arrays, axis=1)


def _grid_rows(metric, spec, history, params) -> list:
    """``dg_volume`` / ``volume_quantile_regret`` from the regrets at every grid point, each
    summed round by round from the stored history (a plain loop, slow: small grids only)."""
    from arena.metrics.base import exact_quantile_rank
    from arena.metrics.drifting import TIE_TOL
    from arena.oco.drifting import domain_grid, grid_regrets_bruteforce

    points = domain_grid(spec.domain, spec.dim, metric.grid_cells(spec))
    regrets = []
    for r in range(spec.n_replicates):
        w = [h[0][r] for h in history]
        one = RoundData(*(None if a is None else [h[1][i][r] for h in history]
                          for i, a in enumerate(history[0][1])))  # fmt: skip
        regrets.append(np.array(grid_regrets_bruteforce(spec, points, w, one)[1]))
    rows = []
    for p in params:
        if metric.name == "dg_volume":
            cut = p - TIE_TOL * max(1.0, abs(p))
            values = [float(np.mean(reg >= cut)) for reg in regrets]
        else:
            k = exact_quantile_rank(p, len(points))
            values = [float(sorted(reg, reverse=True)[k - 1]) for reg in regrets]
        rows.append((metric.name, float(p), values))
    return rows


def _metric(name, param, spec, history, learner, mistakes, adversary) -> np.ndarray:
    n_rep, kind, sigma = spec.n_replicates, spec.loss, spec.sigma
    if name == "loss":
        return learner
    if name == "mistakes":
        return mistakes.copy()
    t = len(history)
    g, x, y, z = (_stack(history, k) for k in ("g", "x", "y", "z"))
    if name == "comparator_regret":
        # the comparator as of round t (it may be built from the play so far)
        comparator = np.asarray(adversary.comparator(), dtype=np.float64)
        out = np.empty(n_rep)
        for r in range(n_rep):
            u = param * comparator[r]
            total = sum(round_loss(kind, sigma, u, h[1], r)[0] for h in history)
            out[r] = learner[r] - total
        return out
    if name == "regret":
        dom = spec.domain if math.isnan(param) else Domain("ball", float(param))
        if math.isinf(param):
            dom = Domain("unconstrained")
        if kind == "multiclass_hinge":
            return learner - hindsight.best_multiclass(x, y, spec.n_classes, dom)
        if kind == "linear":
            g_sum = g.sum(axis=1)
            if not sigma:
                best = dom.min_linear(g_sum)[0]
            else:
                z_sum = np.zeros_like(g_sum) if z is None else z.sum(axis=1)
                z_sq = np.zeros(n_rep) if z is None else (z * z).sum(axis=(1, 2))
                best = hindsight.best_quadratic(
                    None,
                    sigma * z_sum - g_sum,
                    0.5 * sigma * z_sq,
                    dom,
                    isotropic=np.full(n_rep, sigma * t),
                )
            return learner - best
        z_sum = None if (z is None or not sigma) else z.sum(axis=1)
        z_sq = None if (z is None or not sigma) else (z * z).sum(axis=(1, 2))
        if sigma and z is None:
            z_sum, z_sq = np.zeros((n_rep, spec.dim)), np.zeros(n_rep)
        best = hindsight.best_examples(kind, x, y, dom, sigma=sigma, z_sum=z_sum, z_sqsum=z_sq, t=t)
        return learner - best
    if name in ("dynamic_regret", "path_length"):
        total = np.zeros(n_rep)
        path = np.zeros(n_rep)
        last = None
        for h in history:
            rd = h[1]
            source = rd.g if kind == "linear" else rd.x
            best, argmin = hindsight.per_round_best(
                kind,
                spec.domain,
                source[:, None],
                None if rd.y is None else rd.y[:, None],
                sigma,
                None if rd.z is None else rd.z[:, None],
                spec.n_classes,
            )
            total += best[:, 0]
            if last is not None:
                path += np.linalg.norm(argmin[:, 0] - last, axis=-1)
            last = argmin[:, 0]
        return learner - total if name == "dynamic_regret" else path
    raise KeyError(f"the reference loop has no brute force for metric {name!r}")
