"""The ``online_to_batch`` metric (Shalev-Shwartz 2007, Appendix B.3): equal to a brute-force loop
over the trace, Theorems 9-10 with Jensen's inequality checked on the mean over replicates of an
i.i.d. stream, its refusals, and the metric from the CLI, in a tournament and in a report."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from arena.game import prepare_game, run_game
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.oco.metrics import OCORecord
from arena.oco.online_to_batch import OnlineToBatch, online_to_batch_bruteforce
from arena.spec import GameSpec
from tests.helpers import CLT_Z, assert_below
from tests.helpers.contract import run_in_process

EXACT = 1e-12  # the same float64 sums in another order, over ≤ 120 rounds and 170 test examples
PREFIX = "online_to_batch:"


def trace_arrays(path, dim):
    """``w`` (R, T, d) and the learner's ``f_t(w_t)`` (R, T) from an OCO trace."""
    tr = pq.read_table(path).to_pandas().sort_values(["replicate", "t"])
    n_rep = tr.replicate.nunique()
    return np.stack(tr.w.to_numpy()).reshape(n_rep, -1, dim), tr.value.to_numpy().reshape(n_rep, -1)


class _Split:
    """An adversary holding only a test split (what the metric's reference reads from it)."""

    def __init__(self, test):
        self._test = test

    def test_split(self):
        return self._test


def brute_force(spec, w, values, test, r, t):
    """The metric's rows after round t for replicate r: its reference (plain loops over the trace
    and the test split, :func:`arena.oco.online_to_batch.online_to_batch_bruteforce`)."""
    record = OCORecord(
        t=t, replicate=r, spec=spec, adversary=_Split(test), w=w[r, :t], values=values[r, :t],
        grads=np.empty((t, 0)), data=RoundData(),
    )  # fmt: skip
    return online_to_batch_bruteforce(record)


def test_metric_equals_the_brute_force_loop(tmp_path):
    adversary = ("dataset_stream", {"test_fraction": 0.3, "domain": "ball", "radius": 5.0})
    checkpoints = [1, 7, 40, 120]
    for player, params in (("ogd", {"eta": 0.3}), ("primal_dual", {"schedule": "sqrt", "c": 2.0})):
        kw = dict(
            player_params=params,
            adversary_params=adversary[1],
            horizon=120,
            replicates=2,
            seed=3,
            checkpoints=checkpoints,
            metrics=["online_to_batch", "bound"],
        )
        game = prepare_game(player, adversary[0], **kw)
        test = game.adversary.test_split()
        path = tmp_path / f"{player}.parquet"
        rows = run_game(player, adversary[0], trace_path=path, chunk_elements=50, **kw).rows
        w, values = trace_arrays(path, 30)
        for r in range(2):
            for t in checkpoints:
                want = brute_force(game.spec, w, values, test, r, t)
                got = rows[(rows.replicate == r) & (rows.t == t)].set_index("metric").value
                for name, value in want.items():
                    assert abs(got[PREFIX + name] - value) <= EXACT, (player, r, t, name)
        # both declare a regret bound on the ball: the excess-risk bound is B_t/t
        wide = rows.pivot_table(index=["replicate", "t"], columns="metric", values="value")
        t = wide.index.get_level_values("t").to_numpy()
        bound = wide[PREFIX + "excess_risk_bound"].to_numpy()
        np.testing.assert_allclose(bound, wide["bound:regret"].to_numpy() / t, rtol=1e-15)


def test_theorems_9_and_10_hold_on_the_mean_over_replicates(tmp_path):
    # i.i.d. separable data with 10% label noise, hinge loss on the ball of radius 1/γ = 5,
    # dual averaging with c_t ∝ √t (it declares its Lemma 2 certificate B_t); 1000 held-out
    # examples per replicate.
    R, T, m = 40, 300, 1000
    kw = dict(
        player_params={"schedule": "sqrt"},
        adversary_params={"margin": 0.2, "noise": 0.1, "test_size": m, "domain": "ball"},
        n_actions=5,
        horizon=T,
        replicates=R,
        seed=11,
        checkpoints=[T],
        metrics=["online_to_batch", "bound"],
    )
    game = prepare_game("dual_averaging", "separable_stream", **kw)
    test, u = game.adversary.test_split(), game.adversary.comparator()
    path = tmp_path / "trace.parquet"
    rows = run_game("dual_averaging", "separable_stream", trace_path=path, **kw).rows
    wide = rows.pivot_table(index="replicate", columns="metric", values="value")
    avg_risk = wide[PREFIX + "avg_risk"].to_numpy()

    def at_most(lhs, rhs, what):  # E lhs ≤ E rhs, within CLT_Z standard errors of the difference
        diff = lhs - rhs
        assert diff.mean() <= CLT_Z * diff.std(ddof=1) / math.sqrt(R), (what, diff.mean())

    # Jensen and Theorem 9: E risk(w̄_T) ≤ E (1/T) Σ_t risk(w_t) = E M_T
    at_most(avg_risk, wide[PREFIX + "online_loss"].to_numpy(), "E risk(w̄) ≤ E M_T")
    # Theorem 10: E risk(w̄_T) ≤ risk(h*) + E B_T/T ≤ risk(u*/γ) + E B_T/T, u*/γ (the planted
    # separator, in the ball) being one hypothesis of the class; its risk on the test split
    risk_u = np.maximum(1.0 - test.y * np.einsum("rmd,rd->rm", test.x, u), 0.0).mean(axis=1)
    at_most(avg_risk, risk_u + wide[PREFIX + "excess_risk_bound"].to_numpy(), "Theorem 10")
    # Theorem 9 as an equality: the ensemble's mean held-out risk against M_T, two-sided
    w, _ = trace_arrays(path, 5)
    margins = test.y[:, None, :] * np.einsum("rtd,rmd->rtm", w, test.x)
    ensemble = np.maximum(1.0 - margins, 0.0).mean(axis=(1, 2))
    diff = ensemble - wide[PREFIX + "online_loss"].to_numpy()
    assert abs(diff.mean()) <= CLT_Z * diff.std(ddof=1) / math.sqrt(R), diff.mean()
    # deterministic, row by row: Jensen on the test split itself, and 0-1 error ≤ hinge risk
    assert_below(avg_risk, ensemble, "risk(w̄) ≤ mean risk(w_t) on the test split")
    assert_below(wide[PREFIX + "avg_error"], avg_risk, "error ≤ hinge risk")
    assert_below(wide[PREFIX + "last_error"], wide[PREFIX + "last_risk"], "error ≤ hinge risk")


def test_where_the_metric_is_not_computed():
    metrics = ["loss", "online_to_batch"]
    run = run_game("hedge", "bernoulli", horizon=5, metrics=["regret", "online_to_batch"])
    assert "classification/regression protocols only" in run.skipped_metrics["online_to_batch"]
    run = run_game("perceptron", "separable_stream", n_actions=3, horizon=5, metrics=metrics)
    assert run.skipped_metrics["online_to_batch"] == "adversary exposes no test_split"
    spec = GameSpec("classification", 3, 5, dim=3, domain=Domain(), loss="hinge", sigma=0.5)
    assert "σ > 0" in OnlineToBatch().game_reason(spec)
    regression = run_game(
        "ogd",
        "dataset_stream",
        player_params={"eta": 0.1},
        adversary_params={"dataset": "diabetes", "test_fraction": 0.25},
        horizon=30,
        metrics=metrics,
    ).rows
    names = {m.removeprefix(PREFIX) for m in regression.metric if m.startswith(PREFIX)}
    assert names == {"avg_risk", "last_risk", "online_loss"}  # no 0-1 error in regression


def test_from_the_cli_in_a_tournament_and_in_a_report(tmp_path):
    from arena.apps.tournament import Tournament, TournamentConfig
    from arena.reporting import build_report

    out = tmp_path / "run"
    result = run_in_process(
        [
            "run",
            "player=perceptron",
            "adversary=dataset_stream",
            "adversary.test_fraction=0.3",
            "horizon=50",
            "replicates=2",
            "metrics=oco",
            f"hydra.run.dir={out}",
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    cli = pd.read_parquet(out / "results.parquet")
    assert {PREFIX + "avg_error", PREFIX + "last_error"} <= set(cli.metric)
    config = TournamentConfig.from_mapping(
        {
            "name": "o2b",
            "players": [
                {"name": "ogd", "params": {"eta": 0.3}},
                {"name": "primal_dual", "params": {"schedule": "small_loss", "c": "tuned"}},
            ],
            "adversaries": [
                {
                    "name": "dataset_stream",
                    "params": {"test_fraction": 0.3, "loss": "logistic", "domain": "ball"},
                }
            ],
            "horizon": 60,
            "replicates": 2,
            "seed": 1,
            "metrics": {"online_to_batch": {}},
        }
    )
    done = Tournament(config, tmp_path / "t", executor="serial").run()
    assert len(done.finished) == 2 and not done.failed
    index = build_report(tmp_path / "t", tmp_path / "report", name="o2b", metrics=())
    text = (index.parent / "report.md").read_text()
    assert "## Online-to-batch" in text and "error of w̄" in text
    table = pd.read_csv(index.parent / "tables" / "online_to_batch.csv")
    assert {p.split("(")[0] for p in table.player} == {"ogd", "primal_dual"}
    assert (table.metric == PREFIX + "excess_risk_bound").sum() == 2  # both declare a bound


def literal_validation(w, test, loss, horizon, s, t):
    """The validation conversion (Shalev-Shwartz 2007, §B.3.3, Theorem 12) written out: block i
    holds rounds ⌊iT/s⌋+1 … ⌊(i+1)T/s⌋, its candidate is the point of its drawn round; among
    the blocks completed by t, keep the first of least mean loss on the first ⌈m/2⌉ test
    examples; return its mean loss and 0-1 error on the others (one replicate, plain floats)."""
    from arena.oco.literal import scalar_loss
    from arena.oco.online_to_batch import validation_candidates

    x, y = test
    m = len(y)
    v = (m + 1) // 2
    rounds, _ = validation_candidates(horizon, s)

    def mean_loss(point, lo, hi):
        total, errors = 0.0, 0
        for i in range(lo, hi):
            p = sum(float(point[k]) * float(x[i][k]) for k in range(len(point)))
            total += scalar_loss(loss, p, float(y[i]))[0]
            errors += float(y[i]) * p <= 0.0
        return total / (hi - lo), errors / (hi - lo)

    best, chosen = math.inf, None
    for i in range(s):
        start, end = i * horizon // s, (i + 1) * horizon // s
        if end > t:
            break
        r = int(rounds[i])
        assert start < r <= end
        score = mean_loss(w[r - 1], 0, v)[0]
        if score < best:
            best, chosen = score, w[r - 1]
    return (math.nan, math.nan) if chosen is None else mean_loss(chosen, v, m)


def test_validation_conversion_equals_its_literal_transcription(tmp_path):
    from arena.game import reference_play

    T, s = 60, 4
    checkpoints = [5, 15, 31, 60]
    kw = dict(
        player_params={"eta": 0.3},
        adversary_params={"test_size": 41, "noise": 0.1},
        n_actions=3,
        horizon=T,
        replicates=2,
        seed=5,
        checkpoints=checkpoints,
        metrics={"online_to_batch": {"validation_blocks": s}},
    )
    game = prepare_game("ogd", "separable_stream", **kw)
    test = game.adversary.test_split()
    path = tmp_path / "trace.parquet"
    rows = run_game("ogd", "separable_stream", trace_path=path, chunk_elements=7, **kw).rows
    w, _ = trace_arrays(path, 3)
    for r in range(2):
        for t in checkpoints:
            got = rows[(rows.replicate == r) & (rows.t == t)].set_index("metric").value
            risk, error = literal_validation(w[r], (test.x[r], test.y[r]), "hinge", T, s, t)
            if t < T // s:  # no block complete yet
                assert math.isnan(got[PREFIX + "val_risk"]) and math.isnan(risk)
                continue
            assert abs(got[PREFIX + "val_risk"] - risk) <= EXACT, (r, t)
            assert abs(got[PREFIX + "val_error"] - error) <= EXACT, (r, t)
    ref = reference_play("ogd", "separable_stream", **kw)
    pd.testing.assert_frame_equal(ref, rows, atol=1e-12)
    # without the parameter the metric logs no validation rows (earlier results unchanged)
    plain = run_game("ogd", "separable_stream", **{**kw, "metrics": ["online_to_batch"]}).rows
    assert not plain.metric.str.startswith(PREFIX + "val_").any()
    cols = ["replicate", "t", "metric", "param", "value"]
    pd.testing.assert_frame_equal(
        plain[cols].reset_index(drop=True),
        rows.loc[~rows.metric.str.startswith(PREFIX + "val_"), cols].reset_index(drop=True),
    )


def test_validation_blocks_are_checked():
    spec = GameSpec("classification", 3, 5, dim=3, domain=Domain(), loss="hinge")
    assert "at least 6 rounds" in OnlineToBatch(validation_blocks=6).game_reason(spec)
    assert OnlineToBatch(validation_blocks=5).game_reason(spec) is None
