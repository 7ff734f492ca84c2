"""The "Online-to-batch" section: held-out risk of the averaged and the last iterate.

Shown when the results hold rows of the ``online_to_batch`` metric (games whose adversary holds
out a test split). One table per game: each player's mean, over replicates, at the horizon T of
the test 0-1 error and the test risk of the averaged iterate ``w̄_T`` and of the last one
``w_T``, the online average loss ``M_T``, and the excess-risk bound ``B_T/T`` when the player
declares a regret bound B (Shalev-Shwartz 2007, Appendix B.3: Theorem 10 with Jensen's
inequality, ``E risk(w̄_T) ≤ risk(h*) + E B_T/T``). Intervals are in the CSV.

On clean separable streams (``separable_stream`` with ``noise = 0`` and the hinge loss) the best
hinge risk in the ball of radius ``B = 1/γ`` is 0 (the planted ``u*/γ`` has margin 1 on every
example), so the held-out risk is the excess risk itself; a second table sets it against the
excess-risk bound ``√(32G²B²/T)`` of Srebro, Lecture 16 (:func:`lecture_bound_ratios`).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from arena.reporting import stats
from arena.reporting.render import Block, Para, Table, code
from arena.reporting.sections.context import ReportContext, Section
from arena.reporting.sections.formatting import ci, num

PREFIX = "online_to_batch:"

COLUMNS = [
    ("avg_error", "error of w̄_T"),
    ("last_error", "error of w_T"),
    ("avg_risk", "risk of w̄_T"),
    ("last_risk", "risk of w_T"),
    ("val_risk", "risk of h_o (validation)"),
    ("online_loss", "M_T"),
    ("excess_risk_bound", "B_T/T"),
]
"""The quantities shown, in order, with their column headers."""


def online_to_batch(ctx: ReportContext) -> Section | None:
    """The online-to-batch section; ``None`` when no ``online_to_batch`` rows were logged."""
    names = sorted(m for m in ctx.logged if m.startswith(PREFIX))
    if not names:
        return None
    parts = [stats.final_rows(ctx.rows, m) for m in names]
    final = pd.concat(parts, ignore_index=True)
    keys = ["game_label", "player_label", "metric"]
    nan = final["param"].isna().to_numpy()
    # groupby drops NaN keys: the rows without a param are grouped without that column
    summ = pd.concat(
        [
            stats.grouped_mean_ci(final.loc[nan], keys, level=ctx.level).assign(param=math.nan),
            stats.grouped_mean_ci(final.loc[~nan], [*keys, "param"], level=ctx.level),
        ],
        ignore_index=True,
    )
    summ = summ.rename(columns={"game_label": "game", "player_label": "player"})
    for col in ("game", "player", "metric"):
        summ[col] = summ[col].astype(str)
    ctx.write_csv("online-to-batch risks at T", summ, "online_to_batch.csv")
    # the bound against the game's own domain (param NaN); other comparator sets are in the CSV
    main = summ[summ["param"].isna()]
    columns = (main["game"], main["player"], main["metric"], main["mean"])
    means = {(g, p, m.removeprefix(PREFIX)): v for g, p, m, v in zip(*columns, strict=True)}
    blocks: list[Block] = []
    for game in ctx.games:
        players = sorted({p for (g, p, _) in means if g == game})
        if not players:
            continue
        shown = [(k, h) for k, h in COLUMNS if any((game, p, k) in means for p in players)]
        rows = [[p, *(num(means.get((game, p, k), math.nan)) for k, _ in shown)] for p in players]
        blocks.append(
            Table(
                ["player", *(h for _, h in shown)],
                rows,
                caption=f"{game}: held-out test error and risk at T, mean over replicates",
                anchor=None,
            )
        )
    if not blocks:
        return None
    blocks += _lecture_blocks(ctx)
    blocks.append(
        Para(
            f"Rows {code('online_to_batch:*')} of the metric {code('online_to_batch')}, on the "
            "test split the adversary holds out (never streamed). w̄_T = (1/T) Σ_t w_t is the "
            "averaged iterate, w_T the point played at round T; the error counts y⟨w, x⟩ ≤ 0 "
            "(classification), the risk is the game's loss. M_T = (1/T) Σ_t f_t(w_t) estimates "
            "the ensemble's mean risk without bias on i.i.d. data (Shalev-Shwartz 2007, "
            "Theorem 9), and for a convex loss E risk(w̄_T) ≤ E M_T (Jensen). B_T/T is the "
            "player's declared regret bound over T: E risk(w̄_T) exceeds the best risk in the "
            "comparator set (the game's domain) by at most E B_T/T (Theorem 10), a statement "
            "about the mean over replicates, not each one. The CSV has "
            f"{ctx.pct} intervals and the bounds for other comparator sets.",
            note=True,
        )
    )
    return Section("Online-to-batch", "online-to-batch", blocks)


LECTURE_COLUMNS = [
    "game",
    "player",
    "iterate",
    "t",
    "n",
    "risk",
    "risk_ci_low",
    "risk_ci_high",
    "G",
    "B",
    "bound",
    "ratio_mean",
    "ratio_ci_low",
    "ratio_ci_high",
    "ratio_max",
]
"""The columns of :func:`lecture_bound_ratios` (and of ``online_to_batch_lecture.csv``)."""

ITERATES = {"avg_risk": "averaged", "last_risk": "last"}


def _clean_hinge_stream(name: str, params: str) -> tuple[float, float] | None:
    """``(G, B)`` of a clean hinge ``separable_stream`` (``G = R``, ``B = 1/γ``), else None."""
    if name != "separable_stream":
        return None
    p = json.loads(params)
    if p.get("noise", 0.0) != 0.0 or p.get("loss", "hinge") != "hinge":
        return None
    return float(p.get("feature_radius", 1.0)), 1.0 / float(p.get("margin", 0.1))


def _lecture_ftrl(player: str, params: str, big_g: float, big_b: float) -> bool:
    """Whether the player is the lecture's: ℓ2 FTRL on linearized losses with the √t schedule
    and the step ``η = B/(2√2 G)`` (``λ_t = √(2G²/(B²t))``, i.e. ``η_t = η/√t``)."""
    if player != "ftrl":
        return False
    p = json.loads(params)
    eta = p.get("eta")
    return (
        p.get("regularizer", "l2") == "l2"
        and p.get("schedule", "sqrt") == "sqrt"
        and eta is not None
        and math.isclose(float(eta), big_b / (2.0 * math.sqrt(2.0) * big_g), rel_tol=1e-9)
    )


def lecture_bound_ratios(rows: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per (game, player, iterate): held-out excess risk at T over ``√(32G²B²/T)``.

    Srebro, Lecture 16 (slides "FTRL for Linear Problems" and "Linearized FTRL"): FTRL with
    ``λ_t = √(2G²/(B²t))`` has average regret at most ``√(32G²B²/m)`` against ``{‖u‖ ≤ B}`` for
    G-Lipschitz losses; by the online-to-batch conversion (Shalev-Shwartz 2007, Appendix B.3,
    Theorem 10 and Jensen's inequality) the averaged iterate's expected excess risk obeys the same
    bound. Only games of a clean hinge ``separable_stream`` are read, where ``G = R`` (the feature
    radius), ``B = 1/γ`` and the best risk in the ball is 0, so the excess risk is the test
    risk ``online_to_batch:avg_risk`` (and ``last_risk``, for which the lecture states no
    bound), and only the lecture's player (``ftrl``, ℓ2, √t schedule, ``η = B/(2√2 G)``): the
    bound covers no other. Per group: the risk's mean and t interval, the bound, and the
    per-replicate ratio's mean, t interval and maximum. Returns :data:`LECTURE_COLUMNS`.

    Examples
    --------
    >>> rows = pd.DataFrame({
    ...     "metric": "online_to_batch:avg_risk", "param": np.nan, "t": 200, "horizon": 200,
    ...     "replicate": [0, 1], "game_label": "g", "player_label": "p",
    ...     "adversary": "separable_stream", "adversary_params": '{"margin": 0.5, "noise": 0.0}',
    ...     "player": "ftrl", "player_params": '{"eta": 0.7071067811865476}',  # B/(2√2 G)
    ...     "value": [0.1, 0.3]})
    >>> r = lecture_bound_ratios(rows).iloc[0]  # √(32·1·4/200) = 0.8
    >>> round(float(r.bound), 6), round(float(r.ratio_max), 6)
    (0.8, 0.375)
    """
    out = []
    for metric, iterate in ITERATES.items():
        final = stats.final_rows(rows, f"{PREFIX}{metric}")
        final = final.loc[final["param"].isna().to_numpy()]
        if final.empty:
            continue
        groups = final.groupby(
            ["game_label", "player_label", "adversary", "adversary_params", "player",
             "player_params"],
            observed=True,
            sort=True,
        )  # fmt: skip
        for (game, player, adversary, params, name, player_params), part in groups:
            gb = _clean_hinge_stream(str(adversary), str(params))
            if gb is None:
                continue
            big_g, big_b = gb
            if not _lecture_ftrl(str(name), str(player_params), big_g, big_b):
                continue
            t = int(part["t"].max())
            bound = math.sqrt(32.0 * big_g**2 * big_b**2 / t)
            risk = part["value"].to_numpy(dtype=np.float64)
            v = stats.mean_ci(risk, level)
            r = stats.mean_ci(risk / bound, level)
            out.append(
                {
                    "game": str(game),
                    "player": str(player),
                    "iterate": iterate,
                    "t": t,
                    "n": v["n"],
                    "risk": v["mean"],
                    "risk_ci_low": v["ci_low"],
                    "risk_ci_high": v["ci_high"],
                    "G": big_g,
                    "B": big_b,
                    "bound": bound,
                    "ratio_mean": r["mean"],
                    "ratio_ci_low": r["ci_low"],
                    "ratio_ci_high": r["ci_high"],
                    "ratio_max": float(np.max(risk / bound)),
                }
            )
    if not out:
        return pd.DataFrame(columns=LECTURE_COLUMNS)
    return pd.DataFrame(out)[LECTURE_COLUMNS].sort_values(["game", "player", "iterate"])


def _lecture_blocks(ctx: ReportContext) -> list[Block]:
    """The table of :func:`lecture_bound_ratios` and its note; empty when no game qualifies."""
    table = lecture_bound_ratios(ctx.rows, ctx.level)
    if table.empty:
        return []
    ctx.write_csv("excess risk / √(32G²B²/T)", table, "online_to_batch_lecture.csv")
    body = [
        [
            r.game,
            r.player,
            r.iterate,
            str(int(r.n)),
            num(r.risk),
            ci(r.risk_ci_low, r.risk_ci_high),
            num(r.bound),
            f"{num(r.ratio_mean)} (max {num(r.ratio_max)})",
        ]
        for r in table.itertuples(index=False)
    ]
    header = ["game", "player", "iterate", "n", "excess risk", "CI", "√(32G²B²/T)", "ratio"]
    return [
        Table(
            header,
            body,
            caption="Excess held-out risk at T against Srebro, Lecture 16's √(32G²B²/T), "
            "on clean separable streams (best risk in the ball 0)",
            text_columns={0, 1, 2},
            anchor="online-to-batch-lecture",
        ),
        Para(
            "On a clean separable stream (hinge loss, no label noise) the planted u*/γ has "
            "margin 1 on every example, so the best hinge risk in the ball of radius B = 1/γ is "
            "0 and the held-out risk of w̄_T is its excess risk. Srebro, Lecture 16 (slides "
            '"FTRL for Linear Problems" and "Linearized FTRL"): FTRL with '
            "λ_t = √(2G²/(B²t)) has average regret at most √(32G²B²/m) for G-Lipschitz losses, "
            "so by the online-to-batch conversion the expected excess risk of the averaged "
            "iterate is at most that (here G = R, the feature radius). The ratio is risk / bound "
            f"per replicate (mean, {ctx.pct} interval in the CSV, and maximum); the bound is on "
            "the expectation, and the lecture states none for the last iterate.",
            note=True,
        ),
    ]
