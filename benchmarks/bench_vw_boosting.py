"""Online boosting in Vowpal Wabbit (``--boosting N --alg BBM|logistic|adaptive``) on our streams.

Vowpal Wabbit (VW) 9.11.9 implements the online boosters of Beygelzimer, Kale & Luo (2015),
"Optimal and adaptive algorithms for online boosting", ICML (Luo 2016, Chapter 3: Online BBM,
Algorithm 7; AdaBoost.OL, Algorithm 8) in ``vowpalwabbit/core/src/reductions/boosting.cc``, over
N copies of its default linear learner (normalized adaptive gradient descent, squared loss, a
bias feature). This script runs them on the streams of our ``dataset_stream`` adversary
(scikit-learn's breast cancer, 569 × 30, and digits 4 against 9, 363 × 64, standardized,
reshuffled every epoch), replicates 0..9 of seed 0 (``--replicates``), exported through
``arena.game.prepare_game`` (the exact examples ``run_game`` shows a classification player)
and written in VW's text format. It records VW's progressive error (the fraction of rounds
with ``y_t·p_t ≤ 0``, ``p_t`` VW's ``-p`` prediction made before learning from example t: the
arena's ``mistakes`` / T) and its examples per second (VW's C++ driver on the text file,
parsing and workspace creation included, fastest of the repeats), for N = 10 and 100, and
VW's plain linear learner as the baseline.

Our side (:func:`ours_progressive_error`) runs the registered boosters on the same game (same
seed and replicates, so the same examples): ``online_bbm`` (γ = 2 × VW's ``--gamma``) beside
``--alg BBM``, ``adaboost_ol`` and ``adaboost_ol_s`` beside ``--alg adaptive``, over N
``normalized_linear`` weak learners (VW's own default learner, answering its clipped score as
VW's do; Online BBM feeding VW's unnormalized weights, ``mode="potential"``) and over N
``linear`` weak learners (AdaGrad on the logistic loss, answering ±1, importance weights
``w/W_i``), and each learner alone beside VW's linear learner. Two ablation rows replace
``linear`` by :class:`RealValuedLinear`, an AdaGrad squared-loss regressor answering real
values. Each of our rows records the paired difference ours − VW over the replicates
(:func:`paired_gap`; the tables give means ± 95% t-interval half-widths, :func:`half_width`).

``--speed-only`` times one stream (R = 1, T = 20,000) instead: ``online_bbm`` and
``adaboost_ol`` over ``normalized_linear`` against ``vw --boosting N`` (N = 10, 100), the
contenders alternated in one run (:func:`speed_rows`), in µs per example.

Conventions that differ between VW and the thesis (Luo 2016, §3.1.2; BKL 2015):

* **γ**: VW's weights are ``C(N−i, k)(½ + γ)^k(½ − γ)^{N−i−k}``; the thesis's are
  ``½ C(N−i, k)(½ + γ/2)^k(½ − γ/2)^{N−i−k}``. VW's ``--gamma g`` is the thesis's γ = 2g (VW's
  default 0.1 is the thesis's 0.2), and VW's weights are twice the thesis's (no ½).
* **importance weights vs sampling**: VW passes every example to every weak learner with
  importance weight ``w`` (times the example's own weight), never normalized by the a-priori bound
  on ``‖w^i‖∞`` that the analysis's sampling probability ``w/‖w^i‖∞`` uses (BKL 2015 report that
  importance weights did better in their experiments). ``--alg adaptive`` is not the sampling
  variant AdaBoost.OL.S either: it also uses importance weights (next item).
* **the adaptive random stopping point**: ``--alg adaptive`` (AdaBoost.OL) predicts with the
  first i weak learners, i drawn per example from VW's ``v`` weights (a uniform from VW's seeded
  generator, ``--random_seed``, compared with the running sum of ``v``; ``v_i`` shrinks by
  ``e^{-1}`` after each mistake of the partial vote); ``--alg logistic`` (AdaBoost.OL.W) always
  predicts with all N. Both use ``w = 1/(1 + e^{s})``, ``η_t = 4/√t`` and ``α_i`` clipped to
  ``[−2, 2]``, as Algorithm 8.
* **real-valued weak predictions**: VW's weak learners are regressors; ``s`` accumulates
  ``y·h_i(x)`` with ``h_i`` real (clipped to the label range), and BBM's ``k = ⌊(N − i − s)/2⌋``
  takes the floor of a real number. The thesis's weak learners answer ±1.
* **tie rule**: VW's output is the real vote ``Σ_i α_i h_i(x)`` (``α ≡ 1`` for BBM); ``--binary``
  would map 0 to −1. We count ``y·p ≤ 0`` as a mistake (the arena's rule, and the thesis's
  ``1{s_N ≤ 0}``), so a zero vote (every weak learner at 0 before its first update) is a mistake.
* **the weak learners**: VW's is its default linear learner (normalized adaptive,
  importance-aware gradient descent on the squared loss, float32), which ``normalized_linear``
  is (its scores equal VW's to float32 rounding, ``vw_learner_check.py``); ``linear`` is AdaGrad
  on the logistic loss, answering ±1.
* **the normalization by** ``W_i``: ``online_bbm`` passes ``w^i/W_i`` (``mode="importance"``)
  where VW passes ``2w^i`` (``mode="potential"``). For the AdaGrad learner the two are the same:
  scaling every weight of a lane by one constant ``c > 0`` scales its gradients and ``√G`` by c,
  and leaves its steps unchanged; VW's learner is not invariant to it (its invariant step depends
  on ``η·w``), so the rows over it use ``mode="potential"``.

Run::

    .venv/bin/python benchmarks/bench_vw_boosting.py               # errors, ~4 min (+ install)
    .venv/bin/python benchmarks/bench_vw_boosting.py --speed-only  # speed, ~3 min
    .venv/bin/python benchmarks/bench_vw_boosting.py --quick       # a smoke test

Results go to ``benchmarks/results/vw_boosting.json`` / ``.md`` and ``vw_boosting_speed.json``
/ ``.md``.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import ClassVar

import numpy as np
from peer_env import RESULTS
from vw_peer import WORK, ensure_vw, export_stream, progressive_error, run_vw, write_vw_text

from arena.boosting.components import WeakLearner
from arena.params import POSITIVE
from arena.weak_learners._lanes import active_lanes, with_bias

STREAMS = {
    "breast_cancer": ("dataset_stream", {"dataset": "breast_cancer"}),
    "digits_4_vs_9": ("dataset_stream", {"dataset": "digits", "digits": [4, 9]}),
}
N_LEARNERS = (10, 100)
VW_GAMMA = 0.1  # VW's default; the thesis's γ = 0.2


def vw_configs(n_learners: tuple[int, ...]) -> list[tuple[str, int | None, str]]:
    """``(algorithm, N, VW options)`` of every VW run: the baseline, then each booster and N."""
    configs: list[tuple[str, int | None, str]] = [("linear (no boosting)", None, "")]
    for n in n_learners:
        configs += [
            ("BBM", n, f"--boosting {n} --alg BBM --gamma {VW_GAMMA}"),
            ("BBM", n, f"--boosting {n} --alg BBM --gamma {VW_GAMMA / 2}"),
            ("logistic", n, f"--boosting {n} --alg logistic"),
            ("adaptive", n, f"--boosting {n} --alg adaptive"),
        ]
    return configs


class RealValuedLinear(WeakLearner):
    """A VW-like weak learner for the comparison only: a linear *regressor* on the ±1 labels.

    Per lane, AdaGrad (diagonal, rate η) on the importance-weighted squared loss
    ``½·w·(clip(θ·x̃, −1, 1) − y)²`` with ``x̃ = (x, 1)``, answering the real ``clip(θ·x̃, −1, 1)``
    instead of a sign, as Vowpal Wabbit's weak learners do (its boosting reduction sums their real
    outputs). It breaks the protocol's classification contract (outputs ±1) on purpose, so it is
    not registered; it isolates the "real-valued weak predictions" convention.

    Examples
    --------
    >>> from arena.boosting.components import WeakSpec
    >>> wl = RealValuedLinear()
    >>> wl.reset(WeakSpec("classification", n_features=1, n_lanes=2), [[None, None]])
    >>> wl.update(np.array([[1.0]]), np.array([[1.0, 1.0]]), np.array([[1.0, 0.0]]))
    >>> wl.predict(np.array([[1.0]])).round(3).tolist()  # lane 0: θ = (0.5, 0.5); lane 1 untouched
    [[1.0, 0.0]]
    """

    tasks: ClassVar[frozenset[str]] = frozenset({"classification"})
    parameter_constraints: ClassVar = {"rate": [POSITIVE]}

    def __init__(self, rate: float = 0.5):
        self.rate = rate

    def reset(self, spec, rngs) -> None:
        shape = (spec.n_replicates, spec.n_lanes, spec.n_features + 1)
        self._theta = np.zeros(shape)
        self._sq_grads = np.zeros(shape)

    def _outputs(self, xt: np.ndarray) -> np.ndarray:
        return np.clip(np.einsum("rlk,rk->rl", self._theta, xt), -1.0, 1.0)

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self._outputs(with_bias(x))

    def update(self, x: np.ndarray, target: np.ndarray, weight: np.ndarray) -> None:
        xt = with_bias(x)
        moves = active_lanes(weight, self._theta.shape[:2], self.label())[:, :, None]
        residual = np.asarray(weight) * (self._outputs(xt) - np.asarray(target))
        grad = residual[:, :, None] * xt[:, None]
        sq_grads = np.where(moves, self._sq_grads + grad * grad, self._sq_grads)
        with np.errstate(divide="ignore", invalid="ignore"):
            stepped = self._theta - self.rate * grad / np.sqrt(sq_grads)
        self._theta = np.where(moves & (sq_grads > 0.0), stepped, self._theta)
        self._sq_grads = sq_grads


def ours_configs(n_learners: tuple[int, ...]) -> list[tuple[str, str, dict, str]]:
    """``(label, registry name, parameters, VW options of the counterpart)`` of our runs.

    online_bbm's γ is the thesis's, twice VW's ``--gamma`` (see the module docstring). VW has no
    sampling variant, so AdaBoost.OL.S is set beside ``--alg adaptive`` too. The first rows are
    the weak learners alone (Online BBM with N = 1 feeds its one learner every example with
    weight ``w/W_1 = 1``, or ``2w = 1`` in mode ``potential``, and predicts its sign) beside VW's
    linear learner; the rows "…, VW's learner" run over ``normalized_linear`` (VW's default
    learner, answering its clipped score as VW's weak learners do) with Online BBM feeding VW's
    weights (``mode="potential"``); the rows marked "real-valued" replace ``linear`` by
    :class:`RealValuedLinear`.
    """
    linear = {"weak_learner": "linear"}
    vw_learner = {"weak_learner": "normalized_linear"}
    configs = [
        ("linear alone", "online_bbm", {"n_learners": 1, "gamma": 0.2, **linear}, ""),
        (
            "normalized_linear alone",
            "online_bbm",
            {"n_learners": 1, "gamma": 0.2, "mode": "potential", **vw_learner},
            "",
        ),
    ]
    for n in n_learners:
        for gamma in (VW_GAMMA, VW_GAMMA / 2):
            bbm = {"n_learners": n, "gamma": 2.0 * gamma, "mode": "potential"}
            configs.append(
                (
                    "online_bbm, VW's learner",
                    "online_bbm",
                    {**bbm, **vw_learner},
                    f"--boosting {n} --alg BBM --gamma {gamma}",
                )
            )
        for name in ("adaboost_ol", "adaboost_ol_s"):
            configs.append(
                (
                    f"{name}, VW's learner",
                    name,
                    {"n_learners": n, **vw_learner},
                    f"--boosting {n} --alg adaptive",
                )
            )
    for n in n_learners:
        for gamma in (VW_GAMMA, VW_GAMMA / 2):
            bbm = {"n_learners": n, "gamma": 2.0 * gamma}
            configs.append(
                (
                    "online_bbm",
                    "online_bbm",
                    {**bbm, **linear},
                    f"--boosting {n} --alg BBM --gamma {gamma}",
                )
            )
        for name in ("adaboost_ol", "adaboost_ol_s"):
            configs.append(
                (name, name, {"n_learners": n, **linear}, f"--boosting {n} --alg adaptive")
            )
        real = {"weak_learner": RealValuedLinear()}
        configs += [
            (
                "online_bbm, real-valued",
                "online_bbm",
                {"n_learners": n, "gamma": 2.0 * VW_GAMMA, **real},
                f"--boosting {n} --alg BBM --gamma {VW_GAMMA}",
            ),
            (
                "adaboost_ol, real-valued",
                "adaboost_ol",
                {"n_learners": n, **real},
                f"--boosting {n} --alg adaptive",
            ),
        ]
    return configs


def half_width(values: list[float]) -> float:
    """The 95% t-interval's half-width of the mean of ``values`` (replicates: i.i.d. shuffles).

    Examples
    --------
    >>> round(half_width([0.1, 0.2, 0.3]), 4)  # t_{0.975, 2} = 4.303, s.e. 0.0577
    0.2484
    """
    from scipy.stats import t

    v = np.asarray(values, dtype=np.float64)
    return float(t.ppf(0.975, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size))


def paired_gap(ours: list[float], vw: list[float]) -> tuple[float, float]:
    """Mean and standard error of the per-replicate differences ``ours − VW``.

    Examples
    --------
    >>> [round(v, 4) for v in paired_gap([0.1, 0.2, 0.3], [0.1, 0.1, 0.1])]
    [0.1, 0.0577]
    """
    gap = np.asarray(ours, dtype=np.float64) - np.asarray(vw, dtype=np.float64)
    se = float(gap.std(ddof=1) / np.sqrt(gap.size)) if gap.size > 1 else float("nan")
    return float(gap.mean()), se


def ours_progressive_error(
    name: str, params: dict, stream: tuple, horizon: int, replicates: int
) -> dict | None:
    """Progressive error per replicate and examples/s of the registered player ``name``.

    Returns None (and prints why) when ``name`` is not registered or refuses the game.
    """
    from arena.errors import ArenaError, UnknownComponentError
    from arena.game import run_game

    try:
        started = time.perf_counter()
        run = run_game(
            name,
            stream[0],
            adversary_params=stream[1],
            player_params=params,
            horizon=horizon,
            replicates=replicates,
            metrics={"mistakes": {}},
        )
        seconds = time.perf_counter() - started
    except UnknownComponentError:
        print(f"{name}: not yet available (not registered)")
        return None
    except ArenaError as exc:
        print(f"{name}: not runnable with {params}: {exc}")
        return None
    rows = run.rows
    last = rows[(rows.metric == "mistakes") & (rows.t == horizon)].sort_values("replicate")
    errors = (last["value"].to_numpy() / horizon).tolist()
    return {"error": errors, "examples_per_s": horizon * replicates / seconds}


SPEED_PAIRS = (
    (
        "online_bbm",
        "BBM",
        lambda n: {"n_learners": n, "gamma": 2.0 * VW_GAMMA, "mode": "potential"},
    ),
    ("adaboost_ol", "adaptive", lambda n: {"n_learners": n}),
)
"""Our booster, VW's ``--alg`` and our parameters, for the speed rows (over VW's learner)."""


def time_ours(name: str, params: dict, stream: tuple, horizon: int) -> float:
    """Wall seconds of ``run_game`` (R = 1, the ``mistakes`` metric, setup included)."""
    from arena.game import run_game

    started = time.perf_counter()
    run_game(
        name,
        stream[0],
        adversary_params=stream[1],
        player_params={**params, "weak_learner": "normalized_linear"},
        horizon=horizon,
        replicates=1,
        metrics={"mistakes": {}},
    )
    return time.perf_counter() - started


def speed_rows(python, horizon: int, repeats: int, n_learners: tuple[int, ...]) -> list[dict]:
    """µs per example of our boosters and ``vw --boosting N`` on one stream (replicate 0).

    The same T examples go to both: VW's driver reads them from the text file (workspace creation
    and parsing included, timed inside its process), ours is ``run_game`` with R = 1 (setup and
    the data adversary included). The contenders alternate within each repeat (VW, then ours,
    for each configuration), so both see the same load; each keeps its fastest repeat. Our
    kernels are compiled (and cached) by one untimed run first.
    """
    rows = []
    for stream_name, stream in STREAMS.items():
        x, y = export_stream(*stream, horizon=horizon, replicates=1)
        path = write_vw_text(x[0], y[0], WORK / f"speed-{stream_name}.vw")
        configs = [(name, alg, n, make(n)) for n in n_learners for name, alg, make in SPEED_PAIRS]
        for name, _, _, params in configs:
            time_ours(name, params, stream, 50)  # compile / load the kernels, untimed
        best = {}
        for _ in range(repeats):
            for name, alg, n, params in configs:
                options = f"--boosting {n} --alg {alg}" + (
                    f" --gamma {VW_GAMMA}" if alg == "BBM" else ""
                )
                vw = run_vw(python, path, options)["seconds"]
                ours = time_ours(name, params, stream, horizon)
                key = (name, n, options)
                old = best.get(key, (np.inf, np.inf))
                best[key] = (min(old[0], ours), min(old[1], vw))
        for (name, n, options), (ours, vw) in best.items():
            rows.append(
                {
                    "stream": stream_name,
                    "ours": name,
                    "n_learners": n,
                    "vw_options": options,
                    "horizon": horizon,
                    "ours_us_per_example": 1e6 * ours / horizon,
                    "vw_us_per_example": 1e6 * vw / horizon,
                    "vw_over_ours": vw / ours,
                }
            )
    return rows


def speed_table(rows: list[dict]) -> str:
    """Markdown table of the speed rows: µs per example and VW's time over ours."""
    lines = [
        "| stream | ours (over `normalized_linear`) | N | VW options | T | ours µs/example "
        "| VW µs/example | VW / ours |",
        "| :--- | :--- | ---: | :--- | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['stream']} | {r['ours']} | {r['n_learners']} | `{r['vw_options']}` "
            f"| {r['horizon']:,} | {r['ours_us_per_example']:.1f} | {r['vw_us_per_example']:.1f} "
            f"| {r['vw_over_ours']:.2f}× |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small runs (a smoke test)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--replicates", type=int, default=10)
    parser.add_argument("--speed-horizon", type=int, default=20_000, help="T of the speed rows")
    parser.add_argument("--speed-repeats", type=int, default=3)
    parser.add_argument("--speed-only", action="store_true", help="only the speed rows")
    ns = parser.parse_args()
    if ns.speed_only:
        python = ensure_vw()
        WORK.mkdir(parents=True, exist_ok=True)
        horizon = 2_000 if ns.quick else ns.speed_horizon
        rows = speed_rows(python, horizon, ns.speed_repeats, (10,) if ns.quick else N_LEARNERS)
        table = speed_table(rows)
        print(table)
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "vw_boosting_speed.json").write_text(
            json.dumps({"repeats": ns.speed_repeats, "rows": rows}, indent=2) + "\n"
        )
        (RESULTS / "vw_boosting_speed.md").write_text(table)
        return
    horizon = 300 if ns.quick else 2_000
    replicates = 2 if ns.quick else ns.replicates
    n_learners = (10,) if ns.quick else N_LEARNERS
    python = ensure_vw()
    WORK.mkdir(parents=True, exist_ok=True)
    rows, version = [], None
    for stream_name, stream in STREAMS.items():
        x, y = export_stream(*stream, horizon=horizon, replicates=replicates)
        files = [
            write_vw_text(x[r], y[r], WORK / f"boost-{stream_name}-{r}.vw")
            for r in range(replicates)
        ]
        vw_errors = {}
        for alg, n, options in vw_configs(n_learners):
            errors, zeros, best = [], 0, float("inf")
            for repeat in range(ns.repeats):
                runs = [run_vw(python, f, options) for f in files]
                best = min(best, sum(run["seconds"] for run in runs))
                if repeat == 0:
                    version = runs[0]["version"]
                    errors = [
                        progressive_error(y[r], runs[r]["predictions"]) for r in range(replicates)
                    ]
                    zeros = int(sum(np.sum(run["predictions"] == 0.0) for run in runs))
            vw_errors[options] = errors
            rows.append(
                {
                    "stream": stream_name,
                    "side": "VW",
                    "algorithm": alg,
                    "n_learners": n,
                    "options": options,
                    "error": errors,
                    "error_mean": float(np.mean(errors)),
                    "error_se": float(np.std(errors, ddof=1) / np.sqrt(len(errors))),
                    "error_hw95": half_width(errors),
                    "zero_votes": zeros,
                    "examples_per_s": horizon * replicates / best,
                }
            )
        for label, name, params, vw_options in ours_configs(n_learners):
            result = ours_progressive_error(name, params, stream, horizon, replicates)
            row = {
                "stream": stream_name,
                "side": "arena",
                "algorithm": label,
                "n_learners": params["n_learners"],
                "options": {k: str(v) if k == "weak_learner" else v for k, v in params.items()},
                "vw_counterpart": vw_options,
                "error": None,
                "error_mean": None,
                "error_se": None,
                "gap_vs_vw": None,
                "gap_se": None,
                "examples_per_s": None,
            }
            if result is not None:
                errors = result["error"]
                gap, gap_se = paired_gap(errors, vw_errors[vw_options])
                diffs = np.asarray(errors) - np.asarray(vw_errors[vw_options])
                row.update(
                    error=errors,
                    error_mean=float(np.mean(errors)),
                    error_se=float(np.std(errors, ddof=1) / np.sqrt(len(errors))),
                    error_hw95=half_width(errors),
                    gap_vs_vw=gap,
                    gap_se=gap_se,
                    gap_hw95=half_width(diffs.tolist()),
                    examples_per_s=result["examples_per_s"],
                )
            rows.append(row)
    table = vw_table(rows) + "\n" + comparison_table(rows)
    print(table)
    record = {
        "horizon": horizon,
        "replicates": replicates,
        "repeats": ns.repeats,
        "vw_version": version,
        "rows": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "vw_boosting.json").write_text(json.dumps(record, indent=2) + "\n")
    (RESULTS / "vw_boosting.md").write_text(table)


def vw_table(rows: list[dict]) -> str:
    """Markdown table of VW's runs: errors per replicate, zero votes, examples/s."""
    lines = [
        "| stream | VW algorithm | N | options | progressive error (mean ± 95% half-width) "
        "| zero votes | examples/s |",
        "| :--- | :--- | ---: | :--- | ---: | ---: | ---: |",
    ]
    for r in rows:
        if r["side"] != "VW":
            continue
        n = "" if r["n_learners"] is None else r["n_learners"]
        lines.append(
            f"| {r['stream']} | {r['algorithm']} | {n} | `{r['options'] or '(default)'}` "
            f"| {r['error_mean']:.4f} ± {r['error_hw95']:.4f} | {r['zero_votes']} "
            f"| {r['examples_per_s']:,.0f} |"
        )
    return "\n".join(lines) + "\n"


def comparison_table(rows: list[dict]) -> str:
    """Markdown table of our boosters beside their VW counterparts on the same streams."""
    vw = {(r["stream"], r["options"]): r for r in rows if r["side"] == "VW"}
    lines = [
        "| stream | ours | N | our parameters | error (mean ± 95%) | VW counterpart "
        "| VW error (mean ± 95%) | ours − VW (paired, ± 95%) | ours ex/s |",
        "| :--- | :--- | ---: | :--- | ---: | :--- | ---: | ---: | ---: |",
    ]
    for r in rows:
        if r["side"] != "arena":
            continue
        peer = vw[(r["stream"], r["vw_counterpart"])]
        params = ", ".join(f"{k}={v}" for k, v in r["options"].items() if k != "n_learners")
        if r["error"] is None:
            ours, gap, speed = "not available", "", ""
        else:
            ours = f"{r['error_mean']:.4f} ± {r['error_hw95']:.4f}"
            gap = f"{r['gap_vs_vw']:+.4f} ± {r['gap_hw95']:.4f}"
            speed = f"{r['examples_per_s']:,.0f}"
        lines.append(
            f"| {r['stream']} | {r['algorithm']} | {r['n_learners']} | {params} | {ours} "
            f"| `{r['vw_counterpart'] or '(default)'}` "
            f"| {peer['error_mean']:.4f} ± {peer['error_hw95']:.4f} "
            f"| {gap} | {speed} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
