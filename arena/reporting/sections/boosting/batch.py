"""Boosting as a game: batch boosting played as an experts game against ``boosting_oracle``.

Rows ``vote_train_error`` / ``vote_test_error`` / ``zero_weight_frac`` / ``margin_frac``: per
dataset and player, at the horizon, the majority vote's training and held-out error, the share of
zero-weight examples, the mean edge and the wall time per round — the analogue of Luo 2016,
Table 2.2 (AdaBoost = Hedge, NH-Boost = NormalHedge, NH-Boost.DT = NormalHedge.DT), with the
thesis's OCR-49 row beside the digits 4 vs 9 stand-in (:func:`game_table`). Then Figure 2.2's
analogue: the fraction of zero-weight examples against the round, per dataset and player, with a
summary (:func:`zero_weight_summary`: is NH-Boost.DT's fraction above NH-Boost's, does each grow);
and Figure 2.3's: the cumulative margin distribution at T (``margin_frac`` on a grid of θ) as a
figure, a table at θ ∈ {0, 0.1, 0.2, 0.3} and a summary (:func:`margin_summary`: at how many θ
each player's curve lies below all the others').
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from arena.reporting import stats
from arena.reporting.figures import FigureOut, line_with_band
from arena.reporting.render import Block, Para, Table, code
from arena.reporting.sections.boosting.rows import by_game_player, final_means, registry_names
from arena.reporting.sections.context import ReportContext
from arena.reporting.sections.formatting import ci, num

THESIS_TABLE_2_2_OCR49 = {
    "hedge": {"zeros": 0.0, "train": 1.7, "test": 5.5, "time_s": 5.1},
    "normal_hedge": {"zeros": 17.1, "train": 1.7, "test": 5.9, "time_s": 4.7},
    "normal_hedge_dt": {"zeros": 42.0, "train": 2.4, "test": 5.8, "time_s": 3.0},
}
"""Luo 2016, Table 2.2, row ocr49 (errors and zeros in %; AdaBoost, NH-Boost, NH-Boost.DT)."""


THESIS_NAMES = {"hedge": "AdaBoost", "normal_hedge": "NH-Boost", "normal_hedge_dt": "NH-Boost.DT"}
"""Registry name → the booster it is against ``boosting_oracle`` (Luo 2016, §2.2)."""


ZERO_WEIGHT_MIN_T = 10
"""The first round of the zero-weight comparison of :func:`zero_weight_summary`: both
NormalHedge variants start from uniform weights and reach their first zeros after a few rounds,
at different rounds, which is not the steady ordering Luo 2016, Figure 2.2 is about."""


MARGIN_TABLE_THETAS = (0.0, 0.1, 0.2, 0.3)
"""The θ of the margin table (the figure shows every logged θ)."""


THEOREM_ADVERSARIES = ("edge_boosting_oracle",)
"""Batch-boosting adversaries of :mod:`.theorems` (a weak learner of known edge on examples without
features), left out of the Table 2.2 and Figures 2.2–2.3 analogues."""


def _boosting_games(ctx: ReportContext) -> list[str]:
    """The batch-boosting games (those logging ``vote_train_error``) of the Table 2.2 analogue,
    in report order (not those of :data:`THEOREM_ADVERSARIES`)."""
    rows = ctx.rows
    mask = (rows["metric"] == "vote_train_error").to_numpy() & ~rows["adversary"].astype(str).isin(
        THEOREM_ADVERSARIES
    ).to_numpy()
    logged = set(map(str, rows.loc[mask, "game_label"]))
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
    summary = zero_weight_summary(curves, registry_names(ctx))
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
    sentence = margin_sentence(summary, registry_names(ctx))
    if sentence:
        blocks.append(Para(sentence))
    return blocks


def game_table(ctx: ReportContext) -> list[Block]:
    """The Table 2.2 analogue and the margin table (batch boosting as an experts game)."""
    games = set(_boosting_games(ctx))
    train = {
        k: v
        for k, v in by_game_player(final_means(ctx, "vote_train_error")).items()
        if k[0] in games
    }
    if not train:
        return []
    test = by_game_player(final_means(ctx, "vote_test_error"))
    zeros = by_game_player(final_means(ctx, "zero_weight_frac"))
    edge = by_game_player(final_means(ctx, "mean_edge"))
    cells = ctx.src.cells
    timing: dict[tuple[str, str], float] = {}
    for r in cells.itertuples(index=False):
        rounds = float(r.horizon) * float(r.replicates)
        key = (str(r.game_label), str(r.player_label))
        timing[key] = 1e6 * float(r.wall_time_s) / rounds if rounds else math.nan
    names = registry_names(ctx)

    def pct(cell):
        return "—" if cell is None else f"{100 * cell[0]:.2f}"

    body, source_rows, frame, run_rows = [], [], [], []
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
            }
        )
        run_rows.append([game, player, timing.get(key, math.nan)])
        body.append(
            [
                game,
                player,
                pct(train.get(key)),
                pct(test.get(key)),
                pct(zeros.get(key)),
                num(edge[key][0]) if key in edge else "—",
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
    # the wall time changes from run to run: it goes to the build's record, not the report
    ctx.write_run_csv(
        pd.DataFrame(run_rows, columns=["game_label", "player_label", "us_per_round"]),
        "boosting_timing.csv",
    )
    ctx.run_blocks.append(
        Table(
            ["game", "player", "µs / round"],
            [[game, player, num(us)] for game, player, us in run_rows],
            caption="Batch boosting (Table 2.2's time column): the cell's wall time per round "
            "and replicate.",
            text_columns={0, 1},
        )
    )
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
            ],
            body,
            caption="The majority vote at T (mean over replicates), the share of training "
            'examples with weight 0 at T (its average over the rounds, Table 2.2\'s "Zeros", '
            "is in the zero-weight summary below) and the mean edge (1/T) Σ γ_t; the wall time "
            "per round, which a rerun changes, is in the build's record (run/report.md).",
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
