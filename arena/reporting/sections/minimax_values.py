"""The "Minimax values" section: each player's mean regret against the game's exact value.

Some lower-bound constructions force a regret that does not depend on the player at all. Against
fair coins (i.i.d. Bernoulli(½) losses) and against COMB (the randomized comb), every
expert's loss is 1 with probability ½ whatever happened before, so every non-anticipating
player has ``E[p_t·l_t | past] = ½`` and

    ``E[R_T] = T/2 − E[min_i L_{T,i}]``,

a number fixed by the adversary: ``LB(T, N) = T/2 − Σ_{k=1}^{T} P(Bin(T, ½) ≥ k)^N`` for fair
coins (Cesa-Bianchi et al. 1997; Cesa-Bianchi & Lugosi 2006, Theorem 3.7), Cover's
``V_T = ½ Σ_{j ≤ ⌊(T−1)/2⌋} C(2j, j)/4^j`` for COMB with two experts (Cover 1965), and the exact
dynamic program of :func:`arena.adversaries.lower_bound.comb_values` for COMB with K ≥ 3 (this
project's own computation; Gravin, Peres & Sivan 2016 prove the K = 3 value asymptotically
``√(8T/(9π))``). An
adversary says which of its declared lower bounds are such exact values with
:meth:`arena.components.Adversary.exact_values`; this section is shown when some game of the
results has ``lower_bound:<metric>`` rows of one of them.

For every such game, player and checkpoint it compares the mean of the metric over replicates
(with its t interval) with the declared value: the ratio measured / exact with its interval, and
whether the interval covers the value. Every player's expectation *is* the value, so about
``level`` of the checkpoints are covered; a mean significantly below it reveals a player that saw
``l_t`` before committing ``p_t``, one above it a regret computed wrongly. The table also shows
the worst replicate at T beside the player's own declared bound: Cover's minimax player
(``cover2``) has regret exactly ``V_T`` on every sequence of COMB with two experts, and at most
``V_T`` on every binary sequence.

References
----------
Cover (1965), "Behavior of sequential predictors of binary sequences". Cesa-Bianchi, Freund,
Haussler, Helmbold, Schapire & Warmuth (1997), "How to use expert advice", JACM. Gravin, Peres &
Sivan (2016), "Towards optimal algorithms for prediction with expert advice", SODA.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from arena.reporting import stats
from arena.reporting.figures import (
    OKABE_ITO,
    RC,
    FigureOut,
    Style,
    _plt,
    _read_colors,
    line_with_band,
)
from arena.reporting.render import Block, Para, Table, code
from arena.reporting.sections.context import ReportContext, Section, Verdict, item_name
from arena.reporting.sections.formatting import ci, num

COLUMNS = [
    "game",
    "adversary",
    "n_actions",
    "horizon",
    "player",
    "metric",
    "param",
    "t",
    "n",
    "mean",
    "ci_low",
    "ci_high",
    "exact",
    "ratio",
    "ratio_low",
    "ratio_high",
    "covered",
    "worst",
    "bound",
]
"""The columns of ``minimax_values.csv``: one row per game, player, metric, param and checkpoint.

``exact`` is the declared exact value (``lower_bound:<metric>``, averaged over replicates),
``ratio*`` the mean and its interval divided by it, ``covered`` whether the interval contains it
(empty with fewer than two replicates), ``worst`` the largest value over replicates and ``bound``
the player's own declared bound (``bound:<metric>``, averaged over replicates; empty if none).
"""

FIGURE = "minimax_ratio"
KEYS = ["game", "player", "param", "t"]
NO_PARAM = -np.inf  # stands for "no parameter" (NaN) in group keys


def exact_games(games: pd.DataFrame) -> dict[str, frozenset[str]]:
    """Game label → the metrics whose declared lower bound its adversary says is exact.

    Each adversary is rebuilt from its registry name and recorded parameters and asked
    :meth:`~arena.components.Adversary.exact_values` for the game's N and T; an adversary not
    installed here, not buildable from its parameters, or naming nothing is left out.

    Examples
    --------
    >>> games = pd.DataFrame({"game_label": ["a", "b", "c"],
    ...                       "adversary": ["fair_coin", "comb", "bernoulli"],
    ...                       "adversary_params": ["{}", "{}", "{}"],
    ...                       "n_actions": [10, 5, 2], "horizon": [1000, 400, 50]})
    >>> exact_games(games)  # COMB with K = 5 is exact only up to t = 109
    {'a': frozenset({'regret'})}
    """
    from arena import registry

    out: dict[str, frozenset[str]] = {}
    for g in games.itertuples(index=False):
        try:
            adversary = registry.make(
                "adversary", str(g.adversary), **json.loads(g.adversary_params)
            )
            metrics = frozenset(adversary.exact_values(int(g.n_actions), int(g.horizon)))
        except Exception:  # not installed here or not buildable: nothing is claimed exact
            continue
        if metrics:
            out[str(g.game_label)] = metrics
    return out


def value_table(
    rows: pd.DataFrame, exact: Mapping[str, frozenset[str]], level: float = 0.95
) -> pd.DataFrame:
    """Per game, player, metric, param and checkpoint: the mean against the exact value.

    ``rows`` are tidy rows (``game_label, player_label, metric, param, t, value`` and the
    ``seed, replicate`` of each unit); ``exact`` maps a game label to the metrics whose
    ``lower_bound:<metric>`` rows hold exact values (:func:`exact_games`). Returns the columns
    :data:`COLUMNS` (``adversary, n_actions, horizon`` taken from the rows when present).
    Checkpoints without a declared value are left out.

    Examples
    --------
    >>> rows = pd.DataFrame({
    ...     "game_label": "g", "player_label": "p", "param": np.nan, "t": 4,
    ...     "metric": ["regret"] * 3 + ["lower_bound:regret"] * 3,
    ...     "value": [1.0, 2.0, 3.0, 2.0, 2.0, 2.0], "seed": 0, "replicate": [0, 1, 2] * 2})
    >>> r = value_table(rows, {"g": frozenset({"regret"})}).iloc[0]
    >>> [float(r[c]) for c in ("mean", "exact", "ratio", "worst")], bool(r["covered"])
    ([2.0, 2.0, 1.0, 3.0], True)
    """
    parts = []
    metric_col = rows["metric"]
    for metric in sorted(set().union(*exact.values())) if exact else []:
        games = [g for g, metrics in exact.items() if metric in metrics]
        in_games = rows["game_label"].isin(games).to_numpy()
        value = _summary(rows.loc[in_games & (metric_col == metric).to_numpy()], level)
        ref = rows.loc[in_games & (metric_col == f"lower_bound:{metric}").to_numpy()]
        bound = rows.loc[in_games & (metric_col == f"bound:{metric}").to_numpy()]
        if value.empty or ref.empty:
            continue
        m = value.merge(_mean_of(ref, "exact"), on=KEYS, how="inner")
        m = m.merge(_mean_of(bound, "bound"), on=KEYS, how="left")
        parts.append(m.assign(metric=metric))
    if not parts:
        return pd.DataFrame(columns=COLUMNS)
    out = pd.concat(parts, ignore_index=True)
    exact_value = out["exact"].to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(exact_value != 0, 1.0 / exact_value, np.nan)
    for col, src in (("ratio", "mean"), ("ratio_low", "ci_low"), ("ratio_high", "ci_high")):
        out[col] = out[src].to_numpy(float) * scale
    tol = stats.BOUND_RTOL * np.maximum(1.0, np.abs(exact_value))
    inside = (out["ci_low"] - tol <= exact_value) & (exact_value <= out["ci_high"] + tol)
    known = (out["n"] >= 2) & np.isfinite(out["ci_low"]) & np.isfinite(out["ci_high"])
    out["covered"] = pd.array(np.where(known, inside, False), dtype="boolean")
    out.loc[~known.to_numpy(), "covered"] = pd.NA
    out["param"] = out["param"].replace(NO_PARAM, np.nan)
    meta = _game_meta(rows)
    for col in ("adversary", "n_actions", "horizon"):
        out[col] = out["game"].map(meta[col]) if col in meta else np.nan
    return out[COLUMNS].sort_values(["game", "player", "metric", "param", "t"], ignore_index=True)


def _keyed(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame``'s key columns under short names (labels stay categorical: the rows are many)."""
    return pd.DataFrame(
        {
            "game": frame["game_label"].astype("category").array,
            "player": frame["player_label"].astype("category").array,
            "param": frame["param"].astype(float).fillna(NO_PARAM).to_numpy(),
            "t": frame["t"].to_numpy(),
            "value": frame["value"].to_numpy(float),
        }
    )


def _summary(frame: pd.DataFrame, level: float) -> pd.DataFrame:
    """Mean, t interval, count and maximum over units per (game, player, param, t)."""
    keyed = _keyed(frame)
    if keyed.empty:
        return pd.DataFrame()
    summary = stats.grouped_mean_ci(keyed, KEYS, level=level)
    worst = keyed.groupby(KEYS, observed=True, sort=True)["value"].max()
    out = summary.merge(worst.rename("worst").reset_index(), on=KEYS)
    return out.astype({"game": str, "player": str})


def _mean_of(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """The mean value per (game, player, param, t) as column ``name``, with string labels."""
    g = _keyed(frame).groupby(KEYS, observed=True, sort=True)["value"].mean()
    return g.rename(name).reset_index().astype({"game": str, "player": str})


def _game_meta(rows: pd.DataFrame) -> dict[str, dict[str, object]]:
    cols = [c for c in ("adversary", "n_actions", "horizon") if c in rows.columns]
    if not cols:
        return {}
    first = rows.groupby("game_label", observed=True)[cols].first()
    labels = [str(g) for g in first.index]
    return {c: dict(zip(labels, first[c].tolist(), strict=True)) for c in cols}


def coverage(table: pd.DataFrame) -> tuple[int, int]:
    """(checkpoints whose interval covers the exact value, checkpoints with an interval).

    Examples
    --------
    >>> coverage(pd.DataFrame({"covered": pd.array([True, False, pd.NA, True], dtype="boolean")}))
    (2, 3)
    """
    known = table["covered"].dropna()
    return int(known.astype(bool).sum()), len(known)


# ----------------------------------------------------------------------------------------------
# the section


def minimax_values(ctx: ReportContext) -> Section | None:
    """The minimax-values section; ``None`` when no game of the results declares an exact value
    that its rows logged."""
    if not any(m.startswith("lower_bound:") for m in ctx.logged):
        return None
    exact = exact_games(ctx.src.games)
    if not exact:
        return None
    table = value_table(ctx.rows, exact, ctx.level)
    if table.empty:
        return None
    ctx.write_csv("minimax values (every checkpoint)", table, "minimax_values.csv")
    games = [g for g in ctx.games if g in set(table["game"])]
    covered, known = coverage(table)
    share = covered / known if known else math.nan
    blocks: list[Block] = [
        Para(
            "Against these games every player's expected regret is one number, fixed by the "
            "adversary: every expert's loss is 1 with probability ½ whatever happened before, so "
            "a player that commits p_t before seeing l_t has E[p_t·l_t | past] = ½ and "
            "E[R_t] = t/2 − E[min_i L_{t,i}]. Fair coins give LB(t, N) = t/2 − "
            "Σ_{k=1}^{t} P(Bin(t, ½) ≥ k)^N (Cesa-Bianchi et al. 1997), COMB with two experts "
            "Cover's V_t = ½ Σ_{j ≤ ⌊(t−1)/2⌋} C(2j, j)/4^j (Cover 1965), COMB with K ≥ 3 "
            "this project's exact dynamic program over its sorted gaps (not a published table; "
            "Gravin, Peres & Sivan 2016 prove √(8t/(9π)) asymptotically for K = 3). The "
            f"adversary declares the value ({code('lower_bound:regret')}) and says it is exact "
            f"({code('exact_values')}); each row compares a player's mean over replicates at T "
            f"with it ({ctx.pct} t interval)."
        )
    ]
    final = table[(table["t"] == table["horizon"]) & table["param"].isna()]
    for game in games:
        blocks.append(_game_table(ctx, game, final[final["game"] == game], table))
    blocks.append(
        Para(
            f"Over all players, games and checkpoints, {covered} of {known} intervals "
            f"({share:.1%}) contain the exact value; about {ctx.pct} is expected when every "
            "player's expectation equals it (the checkpoints of one curve share their "
            "replicates, so the share scatters more than that of independent trials)."
        )
    )
    attained = _attained(final)
    if attained:
        blocks.append(Para(attained, note=True))
    blocks.append(ctx.add_figure(ratio_figure(table, games, ctx)))
    blocks.append(
        Para(
            "A mean significantly below the value means the player used l_t before committing "
            "p_t (a look-ahead leak); above it, the regret is computed wrongly. The worst "
            "replicate at T is the largest regret over replicates; a player with a declared "
            f"bound ({code('bound:regret')}) is shown beside it.",
            note=True,
        )
    )
    at_t = final[final["game"].isin(games) & final["covered"].notna()]
    verdict = Verdict(
        f"Exact expected regret inside the mean's {ctx.pct} interval at T",
        "minimax",
        [
            item_name(r.game, r.player if r.metric == "regret" else f"{r.player} ({r.metric})")
            for r in at_t.itertuples(index=False)
            if not r.covered
        ],
        total=len(at_t),
        passed="contain it",
    )
    return Section("Minimax values", "minimax", blocks, verdicts=[verdict])


def _game_table(ctx: ReportContext, game: str, final: pd.DataFrame, table: pd.DataFrame) -> Table:
    """One game's table: a row per player (and per metric other than regret) at T."""
    here = table[table["game"] == game]
    body, bad = [], set()
    final = final.sort_values(
        ["metric", "player"], key=lambda c: c.ne("regret") if c.name == "metric" else c
    )
    for i, r in enumerate(final.itertuples(index=False)):
        mine = here[(here["player"] == r.player) & (here["metric"] == r.metric)]
        cov, known = coverage(mine)
        inside = "n/a" if pd.isna(r.covered) else ("yes" if r.covered else "no")
        if inside == "no":
            bad.add(i)
        body.append(
            [
                r.player if r.metric == "regret" else f"{r.player} ({r.metric})",
                f"{num(r.mean)} {ci(r.ci_low, r.ci_high)}",
                f"{num(r.ratio, 4)} {ci(r.ratio_low, r.ratio_high)}",
                inside,
                f"{cov}/{known}",
                num(r.worst),
                "—" if pd.isna(r.bound) else num(r.bound),
                str(int(r.n)),
            ]
        )
    title = ctx.panel_titles.get(game, game)
    if len(final) and "T=" not in title:
        title += f", T = {int(final['horizon'].iloc[0])}"
    regret = final[final["metric"] == "regret"]
    if len(regret):
        title += f"; exact expected regret {num(regret['exact'].iloc[0], 6)}"
    return Table(
        [
            "player",
            "mean at T",
            "measured / exact",
            "exact in CI",
            "checkpoints covered",
            "worst replicate",
            "declared bound",
            "replicates",
        ],
        body,
        caption=f"{title}; means over replicates with {ctx.pct} t intervals",
        bad_rows=bad,
        text_columns={0, 3},
        anchor=f"minimax-{_slug(game)}",
    )


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text).strip("-").lower()


def _attained(final: pd.DataFrame) -> str:
    """Players whose regret at T never exceeds the exact value: they attain the game's value."""
    tol = stats.BOUND_RTOL * np.maximum(1.0, np.abs(final["exact"].to_numpy(float)))
    never_above = final[final["worst"].to_numpy(float) <= final["exact"].to_numpy(float) + tol]
    if never_above.empty:
        return ""
    parts = [
        f"{r.player} on {r.game} (worst replicate {num(r.worst, 6)}, exact {num(r.exact, 6)})"
        for r in never_above.itertuples(index=False)
    ]
    return (
        "No replicate above the exact value at T: "
        + "; ".join(parts)
        + ". With an expectation equal to the value, such a player's regret is the value on "
        "(almost) every replicate: it attains the game's minimax value on every sequence, as "
        "Cover's player does against COMB with two experts."
    )


# ----------------------------------------------------------------------------------------------
# the figure

FONT_PT = 10
WIDTH_IN = 8.0  # 800 px at 100 px per inch, where 10 pt text stays legible
PANEL_H_IN = 2.35
TITLE_CHARS = 34


def ratio_figure(table: pd.DataFrame, games: Sequence[str], ctx: ReportContext) -> FigureOut:
    """Measured / exact value against t (log x), a panel per game, a line per player with its
    interval band and a horizontal line at 1; the y range is shared by every panel."""
    return draw_ratio_figure(
        table,
        games,
        ctx.styles,
        titles=ctx.panel_titles,
        suptitle=ctx.suptitle,
        caption=f"Mean regret over replicates divided by the game's exact expected regret, "
        f"against round t (log scale), with {ctx.pct} t-interval bands; dashed: 1, where every "
        "non-anticipating player's mean lies up to sampling noise.",
    )


def draw_ratio_figure(
    table: pd.DataFrame,
    games: Sequence[str],
    styles: Mapping[str, Style],
    *,
    titles: Mapping[str, str] | None = None,
    suptitle: str | None = None,
    caption: str = "",
) -> FigureOut:
    """The ratio figure of :func:`ratio_figure` from a :func:`value_table` (its regret rows).

    Up to three panels per row across :data:`WIDTH_IN` inches with :data:`FONT_PT` pt text, so
    that the PNG shown 800 px wide keeps 14 px text; one legend below the panels.
    """
    import textwrap

    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, NullFormatter

    plt = _plt()
    data = table[table["param"].isna()]
    if (data["metric"] == "regret").any():  # one metric per panel: regret when there is one
        data = data[data["metric"] == "regret"]
    players = sorted(set(data["player"]))
    n = max(1, len(games))
    ncols = min(3, n)
    nrows = math.ceil(n / ncols)
    heads = {g: "\n".join(textwrap.wrap((titles or {}).get(g, g), TITLE_CHARS)) or g for g in games}
    lines = max((h.count("\n") + 1 for h in heads.values()), default=1)
    legend_rows = math.ceil((len(players) + 1) / 4)
    top_in = 0.35 + 0.18 * lines + (0.3 if suptitle else 0.0)
    bottom_in = 0.5 + 0.25 * legend_rows
    height = nrows * PANEL_H_IN + (nrows - 1) * (0.2 + 0.18 * lines) + top_in + bottom_in
    rc = {
        **RC,
        "font.size": FONT_PT,
        "axes.titlesize": FONT_PT,
        "axes.labelsize": FONT_PT,
        "xtick.labelsize": FONT_PT - 1,
        "ytick.labelsize": FONT_PT - 1,
        "legend.fontsize": FONT_PT,
        "figure.titlesize": FONT_PT + 1,
    }
    finite = data[["ratio_low", "ratio_high", "ratio"]].to_numpy(float)
    finite = finite[np.isfinite(finite)]
    spread = float(np.max(np.abs(finite - 1.0))) if finite.size else 0.1
    half = min(max(spread * 1.08, 0.05), 1.0)
    with plt.rc_context(rc):
        fig, axes = plt.subplots(
            nrows, ncols, figsize=(WIDTH_IN, height), squeeze=False, sharey=True
        )
        fig.subplots_adjust(
            left=0.75 / WIDTH_IN,
            right=1 - 0.15 / WIDTH_IN,
            top=1 - top_in / height,
            bottom=bottom_in / height,
            wspace=0.12,
            hspace=(0.45 + 0.18 * lines) / PANEL_H_IN,
        )
        if suptitle:
            fig.suptitle(suptitle, y=1 - 0.08 / height, va="top")
        flat = list(axes.ravel())
        for ax in flat[len(games) :]:
            ax.set_visible(False)
        for i, (ax, game) in enumerate(zip(flat, games, strict=False)):
            part = data[data["game"] == game]
            ax.axhline(1.0, color=OKABE_ITO[6], ls="--", lw=1.2, zorder=5, gid="exact")
            for player, c in part.groupby("player", sort=True):
                st = styles.get(player, Style(OKABE_ITO[0], None))
                c = c.sort_values("t")
                t = c["t"].to_numpy(float)
                lo, hi = c["ratio_low"].to_numpy(float), c["ratio_high"].to_numpy(float)
                line_with_band(ax, t, c["ratio"].to_numpy(float), (lo, hi), st, player, 0.15)
            at_t = part[part["t"] == part["t"].max()]
            if len(at_t):
                ax.text(
                    0.97,
                    0.04,
                    f"exact at t = {int(at_t['t'].iloc[0])}: {float(at_t['exact'].iloc[0]):.4g}",
                    transform=ax.transAxes,
                    ha="right",
                    va="bottom",
                    fontsize=FONT_PT - 1,
                    color="#333333",
                )
            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_ylim(1 - half, 1 + half)
            ax.set_title(heads[game])
            if i // ncols == nrows - 1 or i + ncols >= len(games):
                ax.set_xlabel("round t")
            if i % ncols == 0:
                ax.set_ylabel("measured / exact")
        handles = [
            Line2D(
                [],
                [],
                color=styles.get(p, Style(OKABE_ITO[0], None)).color,
                ls=styles.get(p, Style(OKABE_ITO[0], None)).linestyle,
                marker=styles.get(p, Style(OKABE_ITO[0], None)).marker,
                lw=2,
                label=p,
            )
            for p in players
        ]
        handles.append(Line2D([], [], color=OKABE_ITO[6], ls="--", lw=1.2, label="exact value"))
        fig.legend(
            handles=handles,
            loc="lower center",
            bbox_to_anchor=(0.5, 0.0),
            ncols=min(4, len(handles)),
            frameon=False,
            handlelength=2.2,
            columnspacing=1.4,
        )
    return FigureOut(FIGURE, caption, fig, _read_colors(fig))
