"""The "Bandit feedback" section: growth shapes, the price of bandit feedback, estimator bias.

Shown when some player of the results plays the bandit protocol. Three parts:

* **Growth of regret.** Best-of-both-worlds players (Zimmert & Seldin 2021) have regret growing
  like ``ln t`` on stochastic games and like ``√t`` on adversarial ones. Each mean regret curve is
  fitted by ``a + b·ln t``, ``a + b·√t`` and ``a + b·t`` over the upper half of its log-t range
  (:func:`arena.reporting.stats.growth_models`); the table names the closest shape, with the
  growth exponent of the Regret curves section beside it.
* **Price of bandit feedback.** A bandit game is keyed like the experts game of the same adversary,
  so a bandit player and an experts player in one game see the same losses replicate by
  replicate (common random numbers); the price is the paired difference of their regret at the
  horizon. The counterpart of ``bandit_wrapper`` is the experts player it wraps; that of any
  other bandit player is the game's best experts player (lowest mean regret at T).
* **Estimator bias.** For players that keep importance-weighted loss estimates, the metric
  ``estimate_bias`` logs ``L̂_{t,i} − L_{t,i}``; its mean over replicates per round estimates
  the estimator's bias, which is 0 for an unbiased estimator (Exp3, Tsallis-INF) and negative
  for implicit exploration (Exp3-IX, Neu 2015).
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

WRAPPER = "bandit_wrapper"
"""The bandit player that runs an experts player on estimates: its counterpart is that player."""


def bandit_feedback(ctx: ReportContext) -> Section | None:
    """The bandit section; ``None`` when no player of the results plays the bandit protocol."""
    protocol = _protocol_of(ctx.rows)
    bandit = [p for p in ctx.src.player_labels if protocol.get(p) == "bandit"]
    if not bandit:
        return None
    experts = [p for p in ctx.src.player_labels if protocol.get(p) == "experts"]
    blocks: list[Block] = []
    if "regret" in ctx.logged or "pseudo_regret" in ctx.logged:
        blocks += _growth(ctx, bandit)
    if "regret" in ctx.logged and experts:
        blocks += _price(ctx, bandit, experts)
    blocks += _bias(ctx, bandit)
    if not blocks:
        return None
    return Section("Bandit feedback", "bandit", blocks)


def _protocol_of(rows: pd.DataFrame) -> dict[str, str]:
    pairs = rows[["player_label", "protocol"]].drop_duplicates()
    return {str(p): str(q) for p, q in pairs.itertuples(index=False)}


def _growth(ctx: ReportContext, players: list[str]) -> list[Block]:
    rows = ctx.rows.loc[ctx.rows["player_label"].isin(players).to_numpy()]
    metric_of = _growth_metric(rows)
    parts = []
    for metric in sorted(set(metric_of.values())):
        games = [g for g, m in metric_of.items() if m == metric]
        sub = rows.loc[rows["game_label"].isin(games).to_numpy()]
        fits = stats.growth_model_table(sub, metric)
        exps = stats.growth_table(sub, metric, ctx.level).set_index(["player", "game"])
        fits.insert(2, "metric", metric)
        fits["exponent"] = [
            exps["exponent"].get((p, g), math.nan)
            for p, g in zip(fits["player"], fits["game"], strict=True)
        ]
        parts.append(fits)
    fits = pd.concat(parts, ignore_index=True)
    ctx.write_csv("bandit regret growth models", fits, "bandit_growth_models.csv")
    f = fits.set_index(["player", "game"])
    games = [g for g in ctx.games if g in metric_of]
    table = Table(
        ["player", *(f"{g} ({metric_of[g]})" for g in games)],
        [
            [p, *(_growth_cell(f.loc[(p, g)]) if (p, g) in f.index else "—" for g in games)]
            for p in players
        ],
        caption="Shape of the mean regret curve: the closest of a + b·ln t, a + b·√t, a + b·t "
        "(b in loss units; α the growth exponent)",
        anchor="bandit-growth",
    )
    note = Para(
        "Each mean curve (over replicates) is fitted by least squares with each of the three "
        "shapes over the checkpoints in the upper half of the log-t range; the closest shape "
        "has the smallest root-mean-square residual relative to the curve's size there (all "
        f"misfits are in the CSV). Games whose adversary declares unequal means are read on "
        f"{code('pseudo_regret')} (regret to the best mean, free of the √t noise of the "
        f"realized best arm), the others on {code('regret')}. A best-of-both-worlds player "
        "shows ln t on stochastic games and √t on adversarial ones; a stochastic-only player "
        "(UCB1, Thompson sampling) can show t on adversarial ones.",
        note=True,
    )
    return [table, note]


def _growth_metric(rows: pd.DataFrame) -> dict[str, str]:
    """Game label → the metric its growth is read on: ``pseudo_regret`` if logged, else regret."""
    out: dict[str, str] = {}
    for metric in ("regret", "pseudo_regret"):
        sub = rows.loc[(rows["metric"] == metric).to_numpy()]
        # equal means (no gap) make the pseudo-regret 0 up to rounding: nothing to fit
        size = sub["value"].abs().groupby(sub["game_label"], observed=True).max()
        span = sub["t"].groupby(sub["game_label"], observed=True).max()
        for game in size.index:
            if metric == "regret" or size[game] > 1e-9 * span[game]:
                out[str(game)] = metric
    return out


def _growth_cell(r: pd.Series) -> str:
    if r["best"] == "n/a":
        return "n/a"
    b = r[f"b_{r['best']}"]
    alpha = "" if not np.isfinite(r["exponent"]) else f", α = {r['exponent']:.2f}"
    return f"{r['best']} (b = {num(b, 3)}{alpha})"


def _price(ctx: ReportContext, bandit: list[str], experts: list[str]) -> list[Block]:
    rows = ctx.rows
    final = stats.final_rows(rows, "regret")
    final = final.loc[final["param"].isna().to_numpy()]
    means = final.groupby(["game_label", "player_label"], observed=True)["value"].mean()
    wrapped = _wrapped_players(ctx, experts)
    out, body = [], []
    for game in ctx.games:
        present = {str(p) for (g, p) in means.index if str(g) == game}
        ex = [e for e in experts if e in present]
        if not ex:
            continue
        best = min(ex, key=lambda e: means[(game, e)])
        for b in bandit:
            if b not in present:
                continue
            counterpart = wrapped.get(b)
            if counterpart not in ex:
                counterpart = best
            d = stats.paired_difference(rows, game, b, counterpart, "regret", ctx.level)
            mb, me = float(means[(game, b)]), float(means[(game, counterpart)])
            ratio = mb / me if me > 0 else math.nan
            out.append(
                {
                    "game": game,
                    "bandit_player": b,
                    "bandit_regret": mb,
                    "experts_player": counterpart,
                    "experts_regret": me,
                    "price": d["mean"],
                    "ci_low": d["ci_low"],
                    "ci_high": d["ci_high"],
                    "n": d["n"],
                    "ratio": ratio,
                }
            )
            body.append(
                [
                    game,
                    b,
                    num(mb),
                    counterpart,
                    num(me),
                    f"{num(d['mean'])} {ci(d['ci_low'], d['ci_high'])}",
                    num(ratio, 3),
                ]
            )
    if not out:
        return []
    ctx.write_csv("price of bandit feedback", pd.DataFrame(out), "bandit_price.csv")
    return [
        Table(
            ["game", "bandit player", "regret", "experts player", "regret", "price", "ratio"],
            body,
            caption=f"Price of bandit feedback: regret at T with one loss seen per round minus "
            f"regret with every loss seen, paired on replicates ({ctx.pct} CI)",
            text_columns={0, 1, 3},
            anchor="bandit-price",
        ),
        Para(
            "Against an oblivious adversary both players of a row face the same losses in "
            "every replicate (common random numbers across the two protocols), so the price is "
            "a paired difference with the variance of the losses removed; an adaptive adversary "
            "answers each player differently, and the interval is then that of a difference of "
            f"independent means. The experts player is the one {code(WRAPPER)} wraps, else the "
            "game's best experts player. Regret is measured against the best arm in hindsight, "
            "so it can be negative where the losses change over time (corruptions, drifts).",
            note=True,
        ),
    ]


def _wrapped_players(ctx: ReportContext, experts: list[str]) -> dict[str, str]:
    """Label of each ``bandit_wrapper`` player → the label of the experts player it wraps."""
    cells = ctx.src.cells
    by_spec: dict[tuple[str, str], str] = {}
    for c in cells.itertuples(index=False):
        if str(c.player_label) in experts:
            by_spec[(str(c.player), _canonical(str(c.player_params)))] = str(c.player_label)
    out: dict[str, str] = {}
    for c in cells.itertuples(index=False):
        if str(c.player) != WRAPPER:
            continue
        params = json.loads(str(c.player_params) or "{}")
        inner = params.get("player")
        if not isinstance(inner, str):
            continue
        inner_params = params.get("player_params") or params.get("params") or {}
        label = by_spec.get((inner, _canonical(json.dumps(inner_params))))
        if label is None:  # the wrapped player's defaults may be spelled out in one cell only
            same = [lab for (name, _), lab in by_spec.items() if name == inner]
            label = same[0] if len(set(same)) == 1 else None
        if label is not None:
            out[str(c.player_label)] = label
    return out


def _canonical(text: str) -> str:
    try:
        return json.dumps(json.loads(text or "{}"), sort_keys=True)
    except ValueError:
        return text


def _bias(ctx: ReportContext, players: list[str]) -> list[Block]:
    if "estimate_bias" not in ctx.logged:
        return []
    table = estimate_bias_table(ctx.rows, ctx.level)
    order = {g: i for i, g in enumerate(ctx.games)}
    table = table.loc[table["player"].isin(players)]
    table = table.sort_values(
        ["game", "player"], key=lambda c: c.map(order) if c.name == "game" else c
    )
    if table.empty:
        return []
    ctx.write_csv("estimator bias", table, "estimator_bias.csv")
    body = [
        [
            r.game,
            r.player,
            f"{num(r.bias, 3)} {ci(r.ci_low, r.ci_high)}",
            num(r.median, 3),
            f"{r.under:.0%}",
            num(r.max_abs_z, 3),
            str(int(r.n)),
        ]
        for r in table.itertuples(index=False)
    ]
    return [
        Table(
            [
                "game",
                "player",
                "bias per round",
                "median",
                "underestimates",
                "max |z| over arms",
                "replicates",
            ],
            body,
            caption=f"Estimator bias: (L̂_T − L_T)/T averaged over arms, mean over replicates "
            f"({ctx.pct} CI), losses normalized to [0, 1]",
            text_columns={0, 1},
            anchor="bandit-bias",
        ),
        Para(
            f"{code('estimate_bias')} logs, per arm, the player's cumulative loss estimate "
            "minus the true cumulative loss. Divided by T and averaged over arms, its mean "
            "over replicates estimates the per-round bias of the estimator; 'median' is the "
            "median over replicates of the same, 'underestimates' the share of (replicate, "
            "arm) pairs with L̂ < L, and 'max |z|' the largest per-arm z statistic against 0. "
            "Implicit exploration (Exp3-IX, "
            f"{code(WRAPPER)} with estimator ix) is biased downwards by design, by "
            "γ_t ℓ_{t,i}/(p_{t,i} + γ_t) per round (Neu 2015). Importance weighting with the "
            "probability the arm was drawn with is unbiased, but without uniform mixing (Exp3 "
            "with γ = 0, EXP3++ late in a game, the drifting-game player) its estimates are "
            "heavy-tailed: once an arm's probability has fallen to p, its estimate jumps by ℓ/p "
            "in the rare rounds it is drawn, so the mean is carried by events that a few dozen "
            "replicates seldom see. The typical replicate then underestimates (median below 0, "
            "underestimates above 50%) and the z statistics are not normal, without any bias. "
            f"Mixing (γ > 0, as in {code(WRAPPER)}) bounds the estimates by K/γ, and the "
            "measured bias is then within its interval (|z| below about 3.5). The unbiasedness "
            "of every player is tested exactly, one round at a time, by the conformance suite "
            f"({code('check_estimate_unbiased')}).",
            note=True,
        ),
    ]


def estimate_bias_table(rows: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per (game, player): the estimator's measured per-round bias at the horizon.

    ``bias`` is ``(L̂_T − L_T)/T`` averaged over arms, with a t interval over units, ``median``
    its median over units, ``under`` the share of (unit, arm) pairs with ``L̂_{T,i} < L_{T,i}``
    and ``max_abs_z`` the largest per-arm z statistic of ``(L̂_{T,i} − L_{T,i})/T`` against 0.
    """
    final = stats.final_rows(rows, "estimate_bias")
    out = []
    for (game, player), part in final.groupby(["game_label", "player_label"], observed=True):
        horizon = float(part["horizon"].iloc[0])
        wide = part.pivot_table(index=stats.UNIT, columns="param", values="value") / horizon
        per_unit = wide.mean(axis=1).to_numpy()
        r = stats.mean_ci(per_unit, level)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (wide.mean() / (wide.std(ddof=1) / np.sqrt(wide.count()))).to_numpy(float)
        z = z[np.isfinite(z)]
        out.append(
            {
                "game": str(game),
                "player": str(player),
                "bias": r["mean"],
                "ci_low": r["ci_low"],
                "ci_high": r["ci_high"],
                "median": float(np.median(per_unit)),
                "under": float(np.mean(wide.to_numpy() < 0)),
                "max_abs_z": float(np.abs(z).max()) if z.size else math.nan,
                "n": r["n"],
            }
        )
    cols = ["game", "player", "bias", "ci_low", "ci_high", "median", "under", "max_abs_z", "n"]
    return pd.DataFrame(out, columns=cols)
