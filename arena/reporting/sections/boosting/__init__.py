"""The "Boosting" section: batch boosting as an experts game, and online boosting.

Shown when the results hold rows of either kind:

* **Boosting as a game** (rows ``vote_train_error`` / ``vote_test_error`` / ``zero_weight_frac``
  of games against ``boosting_oracle``): per dataset and player, at the horizon, the majority
  vote's training and held-out error, the share of zero-weight examples, the mean edge and the
  wall time per round — the analogue of Luo 2016, Table 2.2 (AdaBoost = Hedge, NH-Boost =
  NormalHedge, NH-Boost.DT = NormalHedge.DT), with the thesis's OCR-49 row beside the digits 4 vs 9
  stand-in. Then Figure 2.2's analogue: the fraction of zero-weight examples against the round,
  per dataset and player, with a summary (:func:`zero_weight_summary`: is NH-Boost.DT's fraction
  above NH-Boost's, does each grow); and Figure 2.3's: the cumulative margin distribution at T
  (``margin_frac`` on a grid of θ) as a figure, a table at θ ∈ {0, 0.1, 0.2, 0.3} and a summary
  (:func:`margin_summary`: at how many θ each player's curve lies below all the others').
* **Online boosting** (rows ``mistakes`` with ``base_mistakes`` or ``base_loss`` of boosting
  games): per stream and booster, the progressive error (or loss) of the booster and of its base
  learner, the relative improvement ``100·(base − booster)/base`` with its interval, the
  held-out error, and the Bayes error (or risk) of streams drawn from a known law (an adversary
  with a ``bayes_risk()`` method, e.g. ``dataset_stream``'s generated datasets); then the mean
  and median improvement per booster over the streams, the statistic of Luo 2016, Tables 3.2–3.3
  (Beygelzimer, Kale & Luo 2015; Beygelzimer, Hazan, Kale & Luo 2015, §6), beside the sources'
  numbers where the booster is one of theirs.
* **How many weak learners** (rows ``mistakes`` of ``online_bbm`` / ``adaboost_ol`` over
  ``oracle`` weak learners against ``edge_oracle``): the analogue of Luo 2016, Table 3.1 — per
  edge and ε, the smallest N whose measured error rate is ≤ ε beside the exact binomial answer
  and Theorems 9 and 12's sufficient counts, the majority error at N = 51 beside its exact value
  and Hoeffding's bound, and a figure of the error rate against N.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from arena.reporting import stats
from arena.reporting.figures import FigureOut, line_with_band
from arena.reporting.render import Block, Para, Table, code
from arena.reporting.sections.context import ReportContext, Section
from arena.reporting.sections.formatting import ci, num

THESIS_TABLE_2_2_OCR49 = {
    "hedge": {"zeros": 0.0, "train": 1.7, "test": 5.5, "time_s": 5.1},
    "normal_hedge": {"zeros": 17.1, "train": 1.7, "test": 5.9, "time_s": 4.7},
    "normal_hedge_dt": {"zeros": 42.0, "train": 2.4, "test": 5.8, "time_s": 3.0},
}
"""Luo 2016, Table 2.2, row ocr49 (errors and zeros in %; AdaBoost, NH-Boost, NH-Boost.DT)."""

SOURCE_MEAN_IMPROVEMENT = {
    "online_bbm": 5.14,
    "adaboost_ol": 2.57,
    "adaboost_ol_s": 2.67,
}
"""Luo 2016, §3.1.5 (text under Table 3.2): average improvement (%) over the VW baseline."""

SOURCE_OGB_IMPROVEMENT = {
    ("ogb_span", "linear"): (1.65, 0.03),
    ("ogb_hull", "linear"): (1.33, 0.29),
    ("ogb_span", "stump"): (20.22, 10.45),
    ("ogb_hull", "stump"): (15.90, 13.69),
    ("ogb_span", "neural"): (7.88, 0.72),
    ("ogb_hull", "neural"): (0.72, 0.33),
}
"""Luo 2016, Table 3.3 (= Beygelzimer et al. 2015, §6): (mean, median) improvement (%) of
Algorithm 9 (span) and 10 (hull) over the base learner: VW's linear learner, regression stumps,
a one-hidden-layer network."""


def _final_means(ctx: ReportContext, metric: str) -> pd.DataFrame:
    final = stats.final_rows(ctx.rows, metric)
    if final.empty:
        return pd.DataFrame(columns=["game_label", "player_label", "mean", "ci_low", "ci_high"])
    return stats.grouped_mean_ci(final, ["game_label", "player_label"], level=ctx.level)


def _lookup(frame: pd.DataFrame) -> dict[tuple[str, str], tuple[float, float, float]]:
    return {
        (str(r.game_label), str(r.player_label)): (r.mean, r.ci_low, r.ci_high)
        for r in frame.itertuples(index=False)
    }


def _registry_names(ctx: ReportContext) -> dict[str, str]:
    """player label → registry name, from the rows."""
    pairs = ctx.rows[["player_label", "player"]].drop_duplicates()
    return {str(a): str(b) for a, b in zip(pairs.player_label, pairs.player, strict=True)}


def _weak_learner(ctx: ReportContext) -> dict[str, str]:
    """player label → the weak learner it boosts (from ``player_params``), or ''."""
    import json

    out = {}
    pairs = ctx.rows[["player_label", "player_params"]].drop_duplicates()
    for label, params in zip(pairs.player_label, pairs.player_params, strict=True):
        try:
            value = json.loads(params).get("weak_learner", "")
        except (TypeError, ValueError):
            value = ""
        out[str(label)] = value.get("name", "") if isinstance(value, dict) else str(value or "")
    return out


def bayes_risks(ctx: ReportContext) -> dict[str, float]:
    """game label → the Bayes risk its adversary declares, for the games that declare one.

    The adversary is rebuilt from its registry name and recorded parameters; one with a
    ``bayes_risk()`` method returning a number (the 0-1 Bayes error of a classification law, the
    expected declared loss of the regression function) is listed. Adversaries not installed here,
    without the method, or returning None are left out.
    """
    import json

    from arena import registry

    out = {}
    games = ctx.src.games
    for name, params, label in zip(
        games.adversary, games.adversary_params, games.game_label, strict=True
    ):
        try:
            adversary = registry.make("adversary", str(name), **json.loads(params))
            risk = adversary.bayes_risk() if hasattr(adversary, "bayes_risk") else None
        except Exception:  # not installed here or not buildable: the report shows no Bayes risk
            continue
        if risk is not None:
            out[str(label)] = float(risk)
    return out


THESIS_NAMES = {"hedge": "AdaBoost", "normal_hedge": "NH-Boost", "normal_hedge_dt": "NH-Boost.DT"}
"""Registry name → the booster it is against ``boosting_oracle`` (Luo 2016, §2.2)."""

ZERO_WEIGHT_MIN_T = 10
"""The first round of the zero-weight comparison of :func:`zero_weight_summary`: both
NormalHedge variants start from uniform weights and reach their first zeros after a few rounds,
at different rounds, which is not the steady ordering Luo 2016, Figure 2.2 is about."""

MARGIN_TABLE_THETAS = (0.0, 0.1, 0.2, 0.3)
"""The θ of the margin table (the figure shows every logged θ)."""


def _boosting_games(ctx: ReportContext) -> list[str]:
    """The batch-boosting games (those logging ``vote_train_error``), in report order."""
    rows = ctx.rows
    logged = set(
        map(str, rows.loc[(rows["metric"] == "vote_train_error").to_numpy(), "game_label"])
    )
    return [g for g in ctx.games if g in logged]


def round_average(ts: np.ndarray, values: np.ndarray, first: int, last: int) -> float:
    """Return the mean over the rounds ``first..last`` of a curve logged at the rounds ``ts``.

    Round s takes the value of the first checkpoint ``≥ s`` (the value logged at t stands for
    the rounds since the previous checkpoint), so the mean is exact when every round is a
    checkpoint. NaN when no round of ``first..last`` is covered by a checkpoint.

    Examples
    --------
    >>> round_average(np.array([1, 2, 4]), np.array([0.0, 1.0, 3.0]), 1, 4)  # 0, 1, 3, 3
    1.75
    >>> round_average(np.array([1, 2, 4]), np.array([0.0, 1.0, 3.0]), 3, 4)
    3.0
    """
    order = np.argsort(ts)
    ts, values = np.asarray(ts)[order], np.asarray(values, dtype=float)[order]
    rounds = np.arange(max(int(first), 1), min(int(last), int(ts[-1])) + 1)
    if rounds.size == 0:
        return math.nan
    return float(values[np.searchsorted(ts, rounds, side="left")].mean())


def zero_weight_curves(ctx: ReportContext) -> pd.DataFrame:
    """Per batch-boosting game, player and checkpoint t: the mean fraction of zero-weight
    examples ``zero_weight_frac`` over replicates with its t-interval (``game, player, t, mean,
    ci_low, ci_high``) — Luo 2016, Figure 2.2's curves."""
    columns = ["game", "player", "t", "mean", "ci_low", "ci_high"]
    curves = stats.curve_summary(ctx.rows, "zero_weight_frac", level=ctx.level)
    curves = curves[curves["game"].isin(_boosting_games(ctx))]
    return curves[columns].sort_values(["game", "player", "t"]).reset_index(drop=True)


def zero_weight_summary(
    curves: pd.DataFrame,
    names: dict[str, str],
    min_t: int = ZERO_WEIGHT_MIN_T,
    reference: str = "normal_hedge",
) -> pd.DataFrame:
    """Per game and player: the zero-weight fraction at T, averaged over the rounds and over
    their first and last quarters, whether it grows, and how often it is above the reference's.

    Luo 2016 (§2.2, Figure 2.2) says that both NormalHedge boosters' fractions of zero-weight
    examples grow over the rounds and that NH-Boost.DT's is consistently higher than NH-Boost's;
    Table 2.2's "Zeros (%)" is the fraction averaged over the rounds. From the curves of
    :func:`zero_weight_curves` (``game, player, t, mean, ci_low, ci_high``) and the players'
    registry names (label → name), each row holds:

    * ``at_T``, ``at_T_ci_low``, ``at_T_ci_high``: the mean at the last checkpoint T and its
      interval;
    * ``mean_over_rounds``, ``first_quarter``, ``last_quarter``: :func:`round_average` of the
      mean curve over the rounds 1..T, 1..⌊T/4⌋ and T−⌊T/4⌋+1..T (exact when every round is
      logged); ``grows``: ``last_quarter > first_quarter``;
    * ``reference``: the label of the game's one player named ``reference`` (empty when there is
      none or several); ``above_reference``: at how many of the ``checkpoints_compared``
      checkpoints ``t ≥ min_t`` the player's mean is strictly above the reference's, and
      ``above_reference_share``, their ratio (NaN for the reference itself, without one, and
      without checkpoints ``t ≥ min_t``).

    Examples
    --------
    >>> curves = pd.DataFrame({"game": "g", "player": ["a"] * 4 + ["b"] * 4,
    ...     "t": [1, 2, 3, 4] * 2, "mean": [0, 0.1, 0.2, 0.4, 0, 0.2, 0.1, 0.3],
    ...     "ci_low": 0.0, "ci_high": 0.5})
    >>> s = zero_weight_summary(curves, {"a": "normal_hedge", "b": "normal_hedge_dt"}, min_t=2)
    >>> s[["player", "first_quarter", "last_quarter", "grows", "above_reference"]].values.tolist()
    [['a', 0.0, 0.4, True, nan], ['b', 0.0, 0.3, True, 1.0]]
    """
    out = []
    for game, part in curves.groupby("game", sort=True):
        wide = part.pivot(index="t", columns="player", values="mean").sort_index()
        ts = wide.index.to_numpy()
        horizon = int(ts.max())
        quarter = max(horizon // 4, 1)
        refs = [p for p in wide.columns if names.get(str(p)) == reference]
        ref = str(refs[0]) if len(refs) == 1 else ""
        late = wide[ts >= min_t]
        final = part[part["t"] == horizon].set_index("player")
        for player in wide.columns:
            values = wide[player].to_numpy(float)
            first = round_average(ts, values, 1, quarter)
            last = round_average(ts, values, horizon - quarter + 1, horizon)
            compared = len(late)
            comparable = bool(ref) and ref != player and compared > 0
            above = int((late[player] > late[ref]).sum()) if comparable else math.nan
            out.append(
                {
                    "game": str(game),
                    "player": str(player),
                    "player_name": names.get(str(player), ""),
                    "T": horizon,
                    "at_T": float(final.loc[player, "mean"]),
                    "at_T_ci_low": float(final.loc[player, "ci_low"]),
                    "at_T_ci_high": float(final.loc[player, "ci_high"]),
                    "mean_over_rounds": round_average(ts, values, 1, horizon),
                    "first_quarter": first,
                    "last_quarter": last,
                    "grows": bool(last > first),
                    "reference": ref,
                    "above_reference": above,
                    "checkpoints_compared": compared,
                    "above_reference_share": above / compared if comparable else math.nan,
                }
            )
    return pd.DataFrame(out)


def _thesis(name: str, label: str) -> str:
    return THESIS_NAMES.get(name, label)


def zero_weight_rows(summary: pd.DataFrame, min_t: int = ZERO_WEIGHT_MIN_T) -> list[list[str]]:
    """The zero-weight summary table's rows (the report's, and what tests compare it with)."""
    rows = []
    for r in summary.itertuples(index=False):
        above = (
            "—"
            if pd.isna(r.above_reference)
            else f"{int(r.above_reference)} / {int(r.checkpoints_compared)} "
            f"({100 * r.above_reference_share:.0f} %)"
        )
        rows.append(
            [
                str(r.game),
                str(r.player),
                f"{100 * r.at_T:.2f}",
                ci(100 * r.at_T_ci_low, 100 * r.at_T_ci_high),
                f"{100 * r.mean_over_rounds:.2f}",
                f"{100 * r.first_quarter:.2f}",
                f"{100 * r.last_quarter:.2f}",
                "yes" if r.grows else "no",
                above,
            ]
        )
    return rows


def zero_weight_sentence(summary: pd.DataFrame, min_t: int = ZERO_WEIGHT_MIN_T) -> str:
    """One sentence per game on Figure 2.2's claims, computed from :func:`zero_weight_summary`:
    how often NH-Boost.DT's fraction is above NH-Boost's, and whether each fraction grows."""
    parts = []
    for game, part in summary.groupby("game", sort=True):
        named = {str(r.player_name): r for r in part.itertuples(index=False)}
        dt, nh = named.get("normal_hedge_dt"), named.get("normal_hedge")
        if dt is None or nh is None or pd.isna(dt.above_reference):
            continue

        def trend(r) -> str:
            verb = "grows" if r.grows else "does not grow"
            return f"{verb} from {100 * r.first_quarter:.1f} % to {100 * r.last_quarter:.1f} %"

        parts.append(
            f"on {game}, NH-Boost.DT's fraction is above NH-Boost's at "
            f"{int(dt.above_reference)} of {int(dt.checkpoints_compared)} checkpoints t ≥ {min_t} "
            f"({100 * dt.above_reference_share:.0f} %); from the first to the last quarter of the "
            f"rounds NH-Boost.DT's {trend(dt)} and NH-Boost's {trend(nh)}"
        )
    if not parts:
        return ""
    return "Figure 2.2's claims, measured: " + "; ".join(parts) + "."


def margin_distribution(ctx: ReportContext) -> pd.DataFrame:
    """Per batch-boosting game, player and θ: the fraction of training examples with normalized
    margin ≤ θ at T (``margin_frac``), mean over replicates with its t-interval (``game, player,
    theta, mean, ci_low, ci_high``) — Luo 2016, Figure 2.3's cumulative margin distribution."""
    columns = ["game", "player", "theta", "mean", "ci_low", "ci_high"]
    final = stats.final_rows(ctx.rows, "margin_frac")
    final = final[final["game_label"].astype(str).isin(_boosting_games(ctx))]
    if final.empty:
        return pd.DataFrame(columns=columns)
    out = stats.grouped_mean_ci(final, ["game_label", "player_label", "param"], level=ctx.level)
    out = out.rename(columns={"game_label": "game", "player_label": "player", "param": "theta"})
    out = out.astype({"game": str, "player": str, "theta": float})
    return out[columns].sort_values(["game", "player", "theta"]).reset_index(drop=True)


def margin_summary(distribution: pd.DataFrame) -> pd.DataFrame:
    """Per game and player: at how many θ its cumulative margin curve lies strictly below every
    other player's (Luo 2016, §2.2: NH-Boost.DT's curve "lies below the other two most of the
    time", i.e. it gives larger margins).

    Only the θ at which every player of the game has a value count (``theta_points``);
    ``below_others`` of them have the player's mean fraction with margin ≤ θ strictly below all
    the others' means, ``below_others_share`` is their ratio. ``tied`` counts the θ where all the
    players' means are equal (e.g. every curve at 0 below the smallest margin, or at 1 above the
    largest), where no curve can be below, and ``below_others_share_untied`` is the share among
    the other θ. Games with fewer than two players are left out.

    Examples
    --------
    >>> d = pd.DataFrame({"game": "g", "player": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
    ...     "theta": [0.0, 0.2, 0.4, 0.6] * 3,
    ...     "mean": [0, 0.1, 0.5, 1, 0, 0.2, 0.6, 1, 0, 0.1, 0.7, 1]})
    >>> margin_summary(d)[["player", "below_others", "tied", "below_others_share_untied"]]
      player  below_others  tied  below_others_share_untied
    0      a             1     2                        0.5
    1      b             0     2                        0.0
    2      c             0     2                        0.0
    """
    out = []
    for game, part in distribution.groupby("game", sort=True):
        wide = part.pivot(index="theta", columns="player", values="mean").dropna()
        if wide.shape[1] < 2:
            continue
        values = wide.to_numpy(float)
        tied = int((values.max(axis=1) == values.min(axis=1)).sum())
        for k, player in enumerate(wide.columns):
            others = np.delete(values, k, axis=1)
            below = int((values[:, k] < others.min(axis=1)).sum())
            points, untied = len(wide), len(wide) - tied
            out.append(
                {
                    "game": str(game),
                    "player": str(player),
                    "theta_points": points,
                    "below_others": below,
                    "tied": tied,
                    "below_others_share": below / points if points else math.nan,
                    "below_others_share_untied": below / untied if untied else math.nan,
                }
            )
    return pd.DataFrame(out)


def margin_rows(summary: pd.DataFrame) -> list[list[str]]:
    """The margin summary table's rows (the report's, and what tests compare it with)."""
    return [
        [
            str(r.game),
            str(r.player),
            f"{int(r.below_others)} / {int(r.theta_points)}",
            f"{100 * r.below_others_share:.0f}",
            str(int(r.tied)),
            "—"
            if pd.isna(r.below_others_share_untied)
            else f"{100 * r.below_others_share_untied:.0f}",
        ]
        for r in summary.itertuples(index=False)
    ]


def margin_sentence(summary: pd.DataFrame, names: dict[str, str]) -> str:
    """One clause per game on Figure 2.3's claim, computed from :func:`margin_summary`: at how
    many θ NH-Boost.DT's cumulative margin curve is below both others'."""
    parts = []
    for r in summary.itertuples(index=False):
        if names.get(str(r.player)) != "normal_hedge_dt":
            continue
        untied = int(r.theta_points) - int(r.tied)
        parts.append(
            f"on {r.game}, at {int(r.below_others)} of {int(r.theta_points)} θ "
            f"({100 * r.below_others_share:.0f} %; {int(r.below_others)} of the {untied} where "
            f"the curves are not all equal)"
        )
    if not parts:
        return ""
    return (
        "Figure 2.3's claim, measured: NH-Boost.DT's curve is strictly below both others' "
        + "; ".join(parts)
        + "."
    )


def _panels_figure(
    name: str,
    frame: pd.DataFrame,
    x: str,
    games: list[str],
    ctx: ReportContext,
    *,
    xlabel: str,
    ylabel: str,
    caption: str,
) -> FigureOut:
    """Mean curves with their interval bands on linear axes, y in [0, 1], one panel per game,
    one line per player in the report's styles."""
    from arena.reporting.figures import RC, _grid, _legend, _plt, _read_colors, _titles

    plt = _plt()
    players = sorted(set(frame["player"]))
    heads = _titles(games, ctx.panel_titles)
    lines = max((h.count("\n") + 1 for h in heads.values()), default=1)
    with plt.rc_context(RC):
        fig, axes, per_row = _grid(len(games), players, lines, ctx.suptitle)
        for ax, game in zip(axes, games, strict=True):
            part = frame[frame["game"] == game]
            for player, c in part.groupby("player", sort=True):
                st = ctx.styles[player]
                c = c.sort_values(x)
                xs = c[x].to_numpy(float)
                band = (c["ci_low"].to_numpy(float), c["ci_high"].to_numpy(float))
                line_with_band(ax, xs, c["mean"].to_numpy(float), band, st, player)
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(heads[game])
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
        _legend(fig, ctx.styles, players, [], per_row)
    return FigureOut(name, caption, fig, _read_colors(fig))


def zero_weight_blocks(ctx: ReportContext) -> list[Block]:
    """Figure 2.2's analogue: the zero-weight curves, their CSV, the summary table and sentence."""
    curves = zero_weight_curves(ctx)
    if curves.empty:
        return []
    ctx.write_csv("zero-weight fraction per round (Figure 2.2)", curves, "zero_weight_curves.csv")
    summary = zero_weight_summary(curves, _registry_names(ctx))
    ctx.write_csv("zero-weight summary (Figure 2.2)", summary, "zero_weight_summary.csv")
    games = [g for g in _boosting_games(ctx) if g in set(curves["game"])]
    figure = _panels_figure(
        "zero_weight_curves",
        curves,
        "t",
        games,
        ctx,
        xlabel="round t",
        ylabel="zero-weight fraction",
        caption=f"Figure 2.2 analogue (Luo 2016): the fraction of training examples with weight "
        f"exactly 0 in p_t against the round t, mean over replicates with its {ctx.pct} "
        f"t-interval (AdaBoost = hedge never sets a weight to 0).",
    )
    blocks: list[Block] = [
        ctx.add_figure(figure),
        Table(
            [
                "game",
                "player",
                "zero-weight % at T",
                "CI",
                "mean over rounds %",
                "first quarter %",
                "last quarter %",
                "grows",
                f"above {code('normal_hedge')} (t ≥ {ZERO_WEIGHT_MIN_T})",
            ],
            zero_weight_rows(summary),
            caption=f"The zero-weight fraction at T (mean over replicates, {ctx.pct} "
            f't-interval), averaged over the rounds 1..T (Table 2.2\'s "Zeros (%)"), over the '
            f"first and the last quarter of the rounds, whether it grows (last quarter above "
            f"the first), and at how many checkpoints t ≥ {ZERO_WEIGHT_MIN_T} its mean is "
            f"strictly above NH-Boost's ({code('normal_hedge')}).",
            text_columns={0, 1},
        ),
    ]
    sentence = zero_weight_sentence(summary)
    if sentence:
        blocks.append(Para(sentence))
    return blocks


def margin_blocks(ctx: ReportContext) -> list[Block]:
    """Figure 2.3's analogue: the margin table at a few θ, the cumulative margin distribution's
    figure and CSV, the summary table and sentence."""
    distribution = margin_distribution(ctx)
    if distribution.empty:
        return []
    thetas = sorted(distribution["theta"].unique())
    shown = [th for th in thetas if any(math.isclose(th, x) for x in MARGIN_TABLE_THETAS)]
    shown = shown or thetas[:8]
    means = distribution.set_index(["game", "player", "theta"])["mean"]
    rows = []
    for (game, player), part in means.groupby(level=[0, 1], sort=True):
        values = part.droplevel([0, 1])
        rows.append([game, player, *(f"{100 * values.get(th, math.nan):.1f}" for th in shown)])
    blocks: list[Block] = [
        Table(
            ["game", "player", *(f"margin ≤ {th:g} (%)" for th in shown)],
            rows,
            caption="Margin distribution at T (Figure 2.3's statistic): the share of "
            "training examples whose normalized margin y·Σ_t h_t(x)/T is at most θ.",
            text_columns={0, 1},
        )
    ]
    if len(thetas) < 3:
        return blocks
    ctx.write_csv(
        "cumulative margin distribution at T (Figure 2.3)", distribution, "margin_distribution.csv"
    )
    summary = margin_summary(distribution)
    games = [g for g in _boosting_games(ctx) if g in set(distribution["game"])]
    figure = _panels_figure(
        "margin_distribution",
        distribution,
        "theta",
        games,
        ctx,
        xlabel="θ",
        ylabel="fraction with margin ≤ θ",
        caption=f"Figure 2.3 analogue (Luo 2016): the cumulative distribution of the "
        f"normalized margins y·Σ_t h_t(x)/T of the training examples at T, on the logged grid "
        f"of θ (mean over replicates with its {ctx.pct} t-interval). A curve further right "
        f"means larger margins.",
    )
    blocks.append(ctx.add_figure(figure))
    if summary.empty:
        return blocks
    ctx.write_csv("margin summary (Figure 2.3)", summary, "margin_summary.csv")
    blocks += [
        Table(
            [
                "game",
                "player",
                "below all others (θ)",
                "share %",
                "all equal (θ)",
                "share of the rest %",
            ],
            margin_rows(summary),
            caption="At how many θ of the grid the player's mean fraction with margin ≤ θ is "
            "strictly below every other player's; the θ where all the curves are equal (all "
            "0 or all 1) are counted, then left out of the last share.",
            text_columns={0, 1},
        ),
    ]
    sentence = margin_sentence(summary, _registry_names(ctx))
    if sentence:
        blocks.append(Para(sentence))
    return blocks


def game_table(ctx: ReportContext) -> list[Block]:
    """The Table 2.2 analogue and the margin table (batch boosting as an experts game)."""
    train = _lookup(_final_means(ctx, "vote_train_error"))
    if not train:
        return []
    test = _lookup(_final_means(ctx, "vote_test_error"))
    zeros = _lookup(_final_means(ctx, "zero_weight_frac"))
    edge = _lookup(_final_means(ctx, "mean_edge"))
    cells = ctx.src.cells
    timing: dict[tuple[str, str], float] = {}
    for r in cells.itertuples(index=False):
        rounds = float(r.horizon) * float(r.replicates)
        key = (str(r.game_label), str(r.player_label))
        timing[key] = 1e6 * float(r.wall_time_s) / rounds if rounds else math.nan
    names = _registry_names(ctx)

    def pct(cell):
        return "—" if cell is None else f"{100 * cell[0]:.2f}"

    body, source_rows, frame = [], [], []
    for game, player in sorted(train):
        key = (game, player)
        frame.append(
            {
                "game_label": game,
                "player_label": player,
                "player": names.get(player, ""),
                "train_error": train[key][0],
                "test_error": test.get(key, (math.nan,))[0],
                "zero_weight_frac": zeros.get(key, (math.nan,))[0],
                "mean_edge": edge.get(key, (math.nan,))[0],
                "us_per_round": timing.get(key, math.nan),
            }
        )
        body.append(
            [
                game,
                player,
                pct(train.get(key)),
                pct(test.get(key)),
                pct(zeros.get(key)),
                num(edge[key][0]) if key in edge else "—",
                num(timing.get(key, math.nan)),
            ]
        )
        source = THESIS_TABLE_2_2_OCR49.get(names.get(player, ""))
        if source and "digits" in game:
            source_rows.append(
                [
                    player,
                    pct(train.get(key)),
                    f"{source['train']:.1f}",
                    pct(test.get(key)),
                    f"{source['test']:.1f}",
                    pct(zeros.get(key)),
                    f"{source['zeros']:.1f}",
                ]
            )
    ctx.write_csv("batch boosting at T (Table 2.2)", pd.DataFrame(frame), "boosting_game.csv")
    blocks: list[Block] = [
        Para(
            f"Batch boosting as an experts game (Luo 2016, §2.2): the experts are the training "
            f"examples and {code('boosting_oracle')} answers each round with the exhaustive best "
            f"decision stump under the player's p_t (losses 1{{h_t(x_i) = y_i}}), so Hedge is "
            f"AdaBoost with a constant step, NormalHedge is NH-Boost (Algorithm 5) and "
            f"NormalHedge.DT is NH-Boost.DT (Algorithm 4). The vote is sign(Σ_t h_t)."
        ),
        Table(
            [
                "game",
                "player",
                "train error %",
                "test error %",
                "zero-weight %",
                "mean edge",
                "µs / round",
            ],
            body,
            caption="The majority vote at T (mean over replicates), the share of training "
            'examples with weight 0 at T (its average over the rounds, Table 2.2\'s "Zeros", '
            "is in the zero-weight summary below), the mean edge (1/T) Σ γ_t, and the cell's "
            "wall time per round and replicate.",
            text_columns={0, 1},
        ),
    ]
    if source_rows:
        blocks.append(
            Table(
                ["player", "train %", "thesis", "test %", "thesis", "zeros %", "thesis"],
                source_rows,
                caption="Digits 4 vs 9 (scikit-learn's 8×8 digits) beside the thesis's OCR-49 "
                "row of Table 2.2 (different data and features: the comparison is of the "
                "pattern — similar errors, many more zero-weight examples for NH-Boost.DT). Our "
                "zeros are at T, the thesis's averaged over the rounds.",
                text_columns={0},
            )
        )
    return blocks + zero_weight_blocks(ctx) + margin_blocks(ctx)


def improvement_table(ctx: ReportContext) -> pd.DataFrame:
    """Per stream and booster at T: the booster's and base learner's progressive error (or loss
    per round), the improvement % with its t-interval, the held-out error and the stream's Bayes
    error or risk (:func:`bayes_risks`; NaN if none)."""
    imp = stats.final_rows(ctx.rows, "improvement")
    if imp.empty:
        return pd.DataFrame()
    out = stats.grouped_mean_ci(imp, ["game_label", "player_label"], level=ctx.level)
    horizon = imp.groupby(["game_label", "player_label"], observed=True)["t"].max()
    out = out.merge(horizon.rename("T").reset_index(), on=["game_label", "player_label"])
    for metric, column in (
        ("mistakes", "error"),
        ("base_mistakes", "base_error"),
        ("loss", "loss"),
        ("base_loss", "base_loss"),
        ("test_error", "test_error"),
    ):
        lookup = _lookup(_final_means(ctx, metric))
        out[column] = [
            lookup.get((str(g), str(p)), (math.nan,))[0]
            for g, p in zip(out.game_label, out.player_label, strict=True)
        ]
    for column in ("error", "base_error", "loss", "base_loss"):
        out[column] = out[column] / out["T"]
    risks = bayes_risks(ctx)
    out["bayes"] = [risks.get(str(g), math.nan) for g in out.game_label]
    return out


def bayes_cell(risk: float, classification: bool) -> str:
    """The Bayes column's cell: a percentage in classification, a loss in regression.

    Examples
    --------
    >>> bayes_cell(0.110126, True), bayes_cell(0.0199, False), bayes_cell(math.nan, True)
    ('11.01 %', '0.0199', '—')
    """
    if not np.isfinite(risk):
        return "—"
    return f"{100 * risk:.2f} %" if classification else num(risk)


def online_table(ctx: ReportContext) -> list[Block]:
    """The online-boosting tables: per stream, and the mean / median improvement per booster."""
    table = improvement_table(ctx)
    if table.empty:
        return []
    ctx.write_csv("online boosting at T", table, "online_boosting.csv")
    body = []
    for r in table.sort_values(["game_label", "player_label"]).itertuples(index=False):
        classification = np.isfinite(r.error)
        body.append(
            [
                str(r.game_label),
                str(r.player_label),
                f"{100 * r.error:.2f} %" if classification else num(r.loss),
                f"{100 * r.base_error:.2f} %" if classification else num(r.base_loss),
                num(r.mean),
                ci(r.ci_low, r.ci_high),
                num(r.test_error) if np.isfinite(r.test_error) else "—",
                bayes_cell(r.bayes, classification),
            ]
        )
    blocks: list[Block] = [
        Table(
            [
                "stream",
                "booster",
                "booster",
                "base learner",
                "improvement %",
                "CI",
                "test error",
                "Bayes",
            ],
            body,
            caption=f"Progressive (online) error rate in classification, loss per round in "
            f"regression, of the booster and of its base learner (one weak learner fed every "
            f"example), at T; improvement = 100·(base − booster)/base, mean over replicates "
            f"with its {ctx.pct} t-interval. Bayes: the error rate (or loss per round) of the "
            f"best predictor of the law a generated stream was drawn from, in the units of the "
            f"two error columns, '—' for real data; the law's, not the fixed dataset's, so a "
            f"measured error may dip below it by sampling noise.",
            text_columns={0, 1},
        )
    ]
    names, learners = _registry_names(ctx), _weak_learner(ctx)
    per_stream = table.groupby("player_label", observed=True)["mean"]
    summary = []
    order = sorted(
        per_stream.groups,
        key=lambda p: (names.get(str(p), ""), learners.get(str(p), ""), str(p)),
    )
    for player in order:
        values = per_stream.get_group(player)
        name = names.get(str(player), "")
        # Table 3.2 boosts VW's linear learner: its numbers sit beside the linear rows only
        linear = learners.get(str(player), "") == "linear"
        source = SOURCE_MEAN_IMPROVEMENT.get(name) if linear else None
        ogb = SOURCE_OGB_IMPROVEMENT.get((name, learners.get(str(player), "")))
        mean_src = source if source is not None else (ogb[0] if ogb else None)
        median_src = ogb[1] if ogb else None
        summary.append(
            [
                str(player),
                str(values.size),
                num(values.mean()),
                "—" if mean_src is None else f"{mean_src:.2f}",
                num(values.median()),
                "—" if median_src is None else f"{median_src:.2f}",
            ]
        )
    blocks.append(
        Table(
            ["booster", "streams", "mean improvement %", "source", "median %", "source"],
            summary,
            caption="Mean and median over the streams of the improvement over the base learner "
            "(Luo 2016, Tables 3.2–3.3: improvement over VW's learner on 13 / 14 real data sets; "
            "ours: the bundled scikit-learn stand-ins, so the comparison is of the size and sign, "
            "not of the value). Ours is always the improvement in progressive error (loss); "
            "Table 3.2's is in held-out test error, Table 3.3's in progressive loss as here.",
            text_columns={0},
        )
    )
    return blocks


SCALING_EPSILONS = (0.1, 0.05, 0.01)
"""The target error rates ε of the Table 3.1 analogue."""

SCALING_BOOSTERS = ("online_bbm", "adaboost_ol")
"""The boosters whose weak-learner count the Table 3.1 analogue measures (Online BBM, Theorem 9;
AdaBoost.OL, Theorem 12)."""

SOURCE_MAJORITY_51 = {0.2: (1.364e-3, 1.691e-2)}
"""Luo 2016, proof of Theorem 10: the majority of N = 51 independent learners correct with
probability ½ + 2γ (γ = 0.1, i.e. edge 0.2) errs with probability P[Bin(51, 0.7) ≤ 25] = 1.364e-3
exactly, which Hoeffding bounds by exp(−8Nγ²) = 1.691e-2."""


def exact_majority_error(n: int | np.ndarray, edge: float) -> np.ndarray | float:
    """Return the error ``P[Bin(N, ½ + edge) ≤ ⌊N/2⌋]`` of a majority vote of N (odd)
    independent learners, each correct with probability ``½ + edge``.

    This is the per-round error of Online BBM over N oracle weak learners on ``edge_oracle``
    (Luo 2016, proof of Theorem 10), and the Bayes error given their N votes.

    Examples
    --------
    >>> round(float(exact_majority_error(51, 0.2)), 6)
    0.001364
    """
    from scipy.stats import binom

    n = np.asarray(n)
    return binom.cdf((n - 1) // 2, n, 0.5 + float(edge))


def hoeffding_majority_bound(n: int | np.ndarray, edge: float) -> np.ndarray | float:
    """Return Hoeffding's bound ``exp(−2N·edge²)`` on :func:`exact_majority_error`
    (``exp(−8Nγ²)`` in the thesis's ``edge = 2γ``; ``exp(−Nγ_BBM²/2)`` with ``γ_BBM = 2·edge``,
    Luo 2016, Theorem 9).

    Examples
    --------
    >>> round(float(hoeffding_majority_bound(51, 0.2)), 6)
    0.016907
    """
    return np.exp(-2.0 * np.asarray(n, dtype=np.float64) * float(edge) ** 2)


def exact_smallest_odd_n(edge: float, eps: float, n_max: int = 100_001) -> int:
    """Return the smallest odd N whose majority error :func:`exact_majority_error` is ≤ ε.

    The error of odd N decreases with N, so this is the exact learner count Online BBM needs on
    Theorem 10's construction; ``n_max`` caps the search (a ``ValueError`` beyond it).

    Examples
    --------
    >>> exact_smallest_odd_n(0.2, 0.01), exact_smallest_odd_n(0.1, 0.05)
    (31, 67)
    """
    odd = np.arange(1, n_max + 1, 2)
    hits = np.flatnonzero(exact_majority_error(odd, edge) <= eps)
    if hits.size == 0:
        raise ValueError(f"no odd N ≤ {n_max} reaches ε = {eps} at edge {edge}")
    return int(odd[hits[0]])


def theorem9_learners(edge: float, eps: float) -> float:
    """Return Online BBM's sufficient count ``(2/γ²)·ln(1/ε)`` with ``γ = 2·edge`` (Luo 2016,
    Theorem 9).

    Examples
    --------
    >>> round(theorem9_learners(0.2, 0.01), 2)
    57.56
    """
    gamma = 2.0 * float(edge)
    return 2.0 / gamma**2 * math.log(1.0 / eps)


def theorem12_learners(edge: float, eps: float) -> float:
    """Return AdaBoost.OL's sufficient count ``8/(εγ²)`` with ``γ = 2·edge`` (Luo 2016,
    Theorem 12).

    Examples
    --------
    >>> round(theorem12_learners(0.2, 0.1), 9)
    500.0
    """
    gamma = 2.0 * float(edge)
    return 8.0 / (eps * gamma**2)


def smallest_n(ns: np.ndarray, errors: np.ndarray, eps: float) -> tuple[float, float]:
    """Return ``(first, interpolated)``: the first grid N whose measured error is ≤ ε, and the N
    where the error crosses ε between that point and the grid point before it (linear
    interpolation of ``ln(error)`` in N, as the error decays about exponentially in N; linear in
    the error where the later point measured 0). NaN for both when no grid point reaches ε;
    ``interpolated = first`` when the first grid point already does.

    Examples
    --------
    >>> smallest_n(np.array([1, 3, 5]), np.array([0.3, 0.2, 0.05]), 0.1)
    (5.0, 4.0)
    >>> smallest_n(np.array([1, 3]), np.array([0.3, 0.2]), 0.1)
    (nan, nan)
    """
    order = np.argsort(ns)
    ns, errors = np.asarray(ns, dtype=float)[order], np.asarray(errors, dtype=float)[order]
    hits = np.flatnonzero(errors <= eps)
    if hits.size == 0:
        return math.nan, math.nan
    k = int(hits[0])
    if k == 0:
        return float(ns[0]), float(ns[0])
    (n0, n1), (e0, e1) = ns[k - 1 : k + 1], errors[k - 1 : k + 1]
    if e1 > 0:
        frac = (math.log(e0) - math.log(eps)) / (math.log(e0) - math.log(e1))
    else:
        frac = (e0 - eps) / e0
    return float(ns[k]), float(n0 + frac * (n1 - n0))


def _param(params: str, key: str) -> object:
    import json

    try:
        return json.loads(params).get(key)
    except (TypeError, ValueError, AttributeError):
        return None


def scaling_rates(ctx: ReportContext) -> pd.DataFrame:
    """Per booster (of :data:`SCALING_BOOSTERS`), edge and N: the error rate mistakes/T at T on
    ``edge_oracle`` with oracle weak learners, mean over replicates with its t-interval."""
    columns = ["booster", "edge", "n_learners", "T", "mean", "ci_low", "ci_high", "replicates"]
    final = stats.final_rows(ctx.rows, "mistakes")
    if final.empty:
        return pd.DataFrame(columns=columns)
    final = final.astype(
        {"player": str, "adversary": str, "player_params": str, "adversary_params": str}
    )
    final = final[(final.adversary == "edge_oracle") & final.player.isin(SCALING_BOOSTERS)]
    final = final[final.player_params.map(lambda p: _param(p, "weak_learner") == "oracle")]
    if final.empty:
        return pd.DataFrame(columns=columns)
    final = final.assign(
        booster=final.player.astype(str),
        edge=final.adversary_params.map(lambda p: float(_param(p, "edge"))),
        n_learners=final.player_params.map(lambda p: int(_param(p, "n_learners"))),
        rate=final.value / final.t,
    )
    out = []
    for (booster, edge, n), part in final.groupby(["booster", "edge", "n_learners"]):
        summary = stats.mean_ci(part.rate.to_numpy(float), level=ctx.level)
        out.append(
            [
                booster,
                edge,
                n,
                int(part.t.max()),
                summary["mean"],
                summary["ci_low"],
                summary["ci_high"],
                len(part),
            ]
        )
    return pd.DataFrame(out, columns=columns)


def scaling_table(rates: pd.DataFrame, epsilons=SCALING_EPSILONS) -> pd.DataFrame:
    """Per edge and ε: each booster's smallest N (first grid point and interpolated), the exact
    smallest odd N of a majority vote, and Theorems 9 and 12's sufficient counts."""
    rows = []
    for edge, part in rates.groupby("edge"):
        for eps in epsilons:
            row = {
                "edge": edge,
                "gamma": 2 * edge,
                "eps": eps,
                "exact_odd_n": exact_smallest_odd_n(edge, eps),
                "theorem9_n": theorem9_learners(edge, eps),
                "theorem12_n": theorem12_learners(edge, eps),
            }
            for booster in SCALING_BOOSTERS:
                mine = part[part.booster == booster]
                first, interp = (
                    smallest_n(mine.n_learners.to_numpy(), mine["mean"].to_numpy(), eps)
                    if len(mine)
                    else (math.nan, math.nan)
                )
                grid_max = float(mine.n_learners.max()) if len(mine) else math.nan
                row |= {
                    f"{booster}_first": first,
                    f"{booster}_interp": interp,
                    f"{booster}_grid_max": grid_max,
                }
            rows.append(row)
    return pd.DataFrame(rows)


def _n_cell(first: float, interp: float, grid_max: float) -> str:
    if math.isnan(grid_max):
        return "—"
    if math.isnan(first):
        return f"> {grid_max:.0f}"
    return f"{first:.0f} ({interp:.1f})"


def scaling_figure(rates: pd.DataFrame, ctx: ReportContext) -> FigureOut:
    """Error rate vs N, log y, one panel per edge: the measured boosters with their intervals,
    the exact majority error of odd N and Hoeffding's bound."""
    from arena.reporting.figures import RC, _plt

    plt = _plt()
    edges = sorted(rates.edge.unique())
    with plt.rc_context(RC):
        fig, axes = plt.subplots(
            1, len(edges), figsize=(3.6 * len(edges) + 0.4, 3.4), squeeze=False
        )
        n_max = int(rates.n_learners.max())
        odd = np.arange(1, n_max + 1, 2)
        for ax, edge in zip(axes[0], edges, strict=True):
            part = rates[rates.edge == edge]
            for k, (booster, mine) in enumerate(part.groupby("booster", sort=True)):
                mine = mine.sort_values("n_learners")
                shown = mine[mine["mean"] > 0]
                y = shown["mean"].to_numpy(float)
                low = np.maximum(shown.ci_low.to_numpy(float), y * 1e-3)
                err = np.vstack([y - low, shown.ci_high.to_numpy(float) - y])
                ax.errorbar(
                    shown.n_learners,
                    y,
                    yerr=np.where(np.isfinite(err), err, 0.0),
                    marker="os"[k % 2],
                    ms=3.5,
                    lw=1.3,
                    capsize=2,
                    label=booster,
                    gid=f"player:{booster}",
                )
            ax.plot(
                odd,
                exact_majority_error(odd, edge),
                color="black",
                lw=1.0,
                label="exact majority error (binomial)",
            )
            ax.plot(
                odd,
                hoeffding_majority_bound(odd, edge),
                color="gray",
                ls="--",
                lw=1.0,
                label="Hoeffding exp(−2N·edge²)",
            )
            for eps in SCALING_EPSILONS:
                ax.axhline(eps, color="lightgray", lw=0.7, ls=":")
            ax.set_yscale("log")
            ax.set_ylim(bottom=1e-4, top=1.0)
            ax.set_xlabel("weak learners N")
            ax.set_ylabel("error rate mistakes/T")
            ax.set_title(f"edge_oracle(edge={edge:g}), γ = {2 * edge:g}")
        axes[0][0].legend(fontsize=7, loc="lower left")
        fig.tight_layout()
    return FigureOut(
        "boosting_error_vs_n",
        "Table 3.1 analogue: error rate at T of each booster over N oracle weak learners (mean "
        f"± {ctx.pct} t-interval; a mean of 0 is not drawn on the log axis), the exact error "
        "of a majority of N independent learners (odd N) and Hoeffding's bound; dotted: "
        "ε = 0.1, 0.05, 0.01.",
        fig,
    )


def scaling_blocks(ctx: ReportContext) -> list[Block]:
    """The Table 3.1 analogue: smallest N per ε, the N = 51 majority error, and the figure."""
    rates = scaling_rates(ctx)
    if rates.empty:
        return []
    ctx.write_csv("error rate vs N (edge_oracle)", rates, "boosting_scaling_rates.csv")
    table = scaling_table(rates)
    ctx.write_csv("smallest N per ε (Table 3.1 analogue)", table, "boosting_scaling.csv")
    body = []
    for r in table.itertuples(index=False):
        body.append(
            [
                f"{r.edge:g}",
                f"{r.gamma:g}",
                f"{r.eps:g}",
                _n_cell(r.online_bbm_first, r.online_bbm_interp, r.online_bbm_grid_max),
                str(r.exact_odd_n),
                f"{r.theorem9_n:.1f}",
                _n_cell(r.adaboost_ol_first, r.adaboost_ol_interp, r.adaboost_ol_grid_max),
                f"{r.theorem12_n:.0f}",
            ]
        )
    blocks: list[Block] = [
        Para(
            f"Table 3.1 of Luo 2016 measured: how many weak learners a booster needs for error "
            f"rate ε. {code('edge_oracle')} is Theorem 10's construction — y_t a fair sign and "
            f"independent bits equal to y_t with probability ½ + edge — and the "
            f"{code('oracle')} weak learner's lane i reads bit i, so N lanes are N independent "
            f"weak learners with γ = 2·edge in the weak-learning assumption (3.1) (the thesis's "
            f"own γ in ½ + 2γ is edge/2). Online BBM is then a majority vote, whose error is "
            f"exactly P[Bin(N, ½ + edge) ≤ ⌊N/2⌋] for odd N; Theorem 9 asks for "
            f"(2/γ²)·ln(1/ε) learners (a Hoeffding bound), Theorem 12 for 8/(εγ²) for "
            f"AdaBoost.OL, which learns its weights online instead of being told γ."
        ),
        Table(
            [
                "edge",
                "γ",
                "ε",
                "online_bbm N",
                "exact odd N",
                "Thm 9 (2/γ²)ln(1/ε)",
                "adaboost_ol N",
                "Thm 12 8/(εγ²)",
            ],
            body,
            caption="Smallest N whose measured error rate (mistakes/T at T, mean over "
            "replicates) is ≤ ε: the first grid point reaching ε, and in parentheses the N "
            "where ln(error) interpolated linearly between the two bracketing grid points "
            "crosses ε; '> n' when no grid point up to n reaches it. Exact odd N: the smallest "
            "odd N with P[Bin(N, ½ + edge) ≤ ⌊N/2⌋] ≤ ε (scipy). The theorems' counts are "
            "sufficient conditions (upper bounds), not predictions.",
            text_columns=set(),
        ),
    ]
    at51 = rates[rates.n_learners == 51]
    rows51 = []
    for r in at51.sort_values(["edge", "booster"]).itertuples(index=False):
        source = SOURCE_MAJORITY_51.get(round(float(r.edge), 10))
        rows51.append(
            [
                f"{r.edge:g}",
                str(r.booster),
                f"{r.mean:.3e}",
                ci(r.ci_low, r.ci_high),
                f"{float(exact_majority_error(51, r.edge)):.3e}",
                f"{float(hoeffding_majority_bound(51, r.edge)):.3e}",
                "—" if source is None else f"{source[0]:.3e} / {source[1]:.3e}",
            ]
        )
    if rows51:
        blocks.append(
            Table(
                [
                    "edge",
                    "booster",
                    "error rate at N = 51",
                    "CI",
                    "exact binomial",
                    "Hoeffding exp(−2N·edge²)",
                    "source (exact / Hoeffding)",
                ],
                rows51,
                caption="The majority error at N = 51: measured, exact, and Hoeffding's bound "
                "exp(−8Nγ²) in the thesis's γ = edge/2 (Luo 2016, proof of Theorem 10: γ = 0.1 "
                "gives 1.364e-3 exactly against 1.691e-2).",
                text_columns={1},
            )
        )
    blocks.append(ctx.add_figure(scaling_figure(rates, ctx)))
    return blocks


def boosting(ctx: ReportContext) -> Section | None:
    """The boosting section; ``None`` without rows of either kind."""
    blocks = game_table(ctx) + scaling_blocks(ctx) + online_table(ctx)
    if not blocks:
        return None
    return Section("Boosting", "boosting", blocks)
