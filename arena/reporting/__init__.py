"""``arena report``: a comparison report built from results files only (design §7).

:func:`build_report` reads a tournament directory, a Hydra multirun directory or a single run
folder (:mod:`arena.reporting.load`), computes the statistics (:mod:`arena.reporting.stats`),
draws the figures (:mod:`arena.reporting.figures`) and writes, into ``out_dir``:

* ``index.html`` — self-contained (CSS inline, figures embedded as base64 PNG), works offline;
* ``report.md`` — the same content in Markdown, linking the PNG files;
* ``figures/<name>.png`` and ``figures/<name>.svg``;
* ``tables/<name>.csv`` — every table shown (and the per-row bound violations).

It never re-simulates: the numbers come from the tidy rows and the manifests.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from arena.reporting import stats
from arena.reporting.figures import (
    FigureOut,
    curves_figure,
    player_styles,
    save_figure,
    sweep_figure,
)
from arena.reporting.load import Source, component_labels, load_source
from arena.reporting.render import (
    Block,
    Details,
    Figure,
    Heading,
    Links,
    Para,
    Table,
    render_html,
    render_markdown,
)

__all__ = [
    "Source",
    "build_report",
    "component_labels",
    "load_source",
    "player_styles",
]

PARAM_SYMBOL = {"quantile_regret": "ε", "shifting_regret": "k", "sa_regret": "τ"}

CURVES = [
    # metric, figure name, y label, caption
    (
        "regret",
        "regret_curves",
        "expected regret (loss units)",
        "Expected regret vs round t (log-log), mean over replicates with 95% t-interval bands; "
        "dashed: each player's declared bound (`bound:regret`), dotted grey: the adversary's "
        "reference lower bound (`lower_bound:regret`).",
    ),
    (
        "adaptive_regret",
        "adaptive_regret_curves",
        "adaptive regret (loss units)",
        "Adaptive regret (max regret over intervals [s, e] ⊆ [1, t]) vs round t, mean with 95% "
        "t-interval bands.",
    ),
]

SWEEPS = [
    (
        "quantile_regret",
        "quantile_regret_vs_eps",
        "ε (fraction of experts)",
        "ε-quantile regret at T (loss units)",
        "ε-quantile regret at the horizon vs ε (regret to the ⌈εN⌉-th best expert), mean ± 95% "
        "t-interval.",
    ),
    (
        "shifting_regret",
        "shifting_regret_vs_k",
        "comparator switches k",
        "shifting regret at T (loss units)",
        "Shifting regret at the horizon vs the comparator's switch budget k, mean ± 95% "
        "t-interval.",
    ),
    (
        "sa_regret",
        "sa_regret_vs_tau",
        "interval length τ (rounds)",
        "SA regret at T (loss units)",
        "Strongly adaptive regret at the horizon (max regret over intervals of length ≤ τ) vs τ, "
        "mean ± 95% t-interval.",
    ),
]


# ----------------------------------------------------------------------------------------------
# formatting


def _num(x, digits: int = 4) -> str:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if not math.isfinite(v):
        return "n/a" if math.isnan(v) else ("∞" if v > 0 else "−∞")
    if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
        return f"{v:.{digits - 1}e}"
    return f"{v:.{digits}g}"


def _ci(lo, hi) -> str:
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "n/a"
    return f"[{_num(lo)}, {_num(hi)}]"


def _p(p) -> str:
    if p is None or not np.isfinite(p):
        return "n/a"
    return "<1e-4" if p < 1e-4 else f"{p:.2g}"


def _param_text(metric: str, param) -> str:
    if param is None or (isinstance(param, float) and math.isnan(param)):
        return metric
    return f"{metric} ({PARAM_SYMBOL.get(metric, 'param')} = {float(param):g})"


def _range(values: pd.Series) -> str:
    lo, hi = int(values.min()), int(values.max())
    return str(lo) if lo == hi else f"{lo}–{hi}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _first_line(text) -> str:
    text = "" if text is None else str(text)
    return next((line for line in text.splitlines() if line.strip()), "")


# ----------------------------------------------------------------------------------------------
# output files


def _clean(directory: Path, patterns: Sequence[str]) -> None:
    """Remove this report's own stale outputs (figures/tables of an earlier build)."""
    if directory.is_dir():
        for pattern in patterns:
            for p in directory.glob(pattern):
                p.unlink()
    directory.mkdir(parents=True, exist_ok=True)


def _write_csv(frame: pd.DataFrame, path: Path, index: bool = False) -> str:
    frame.to_csv(path, index=index, float_format="%.10g")
    return f"tables/{path.name}"


# ----------------------------------------------------------------------------------------------
# the report


def build_report(
    source_dir: str | Path,
    out_dir: str | Path,
    *,
    name: str,
    metrics: Sequence[str] = ("regret",),
    level: float = 0.95,
) -> Path:
    """Write the report of the results under ``source_dir`` into ``out_dir``; return index.html.

    Parameters
    ----------
    source_dir : path
        A tournament directory, a Hydra multirun directory or one run folder.
    out_dir : path
        Where to write (created; this report's earlier figures and tables there are replaced).
    name : str
        Title of the report.
    metrics : sequence of str
        Metrics that get a leaderboard (``regret`` always does); one per logged parameter value.
    level : float
        Confidence level of every interval (default 95%).
    """
    started = time.perf_counter()
    src = load_source(source_dir)
    out = Path(out_dir)
    fig_dir, tab_dir = out / "figures", out / "tables"
    _clean(fig_dir, ("*.png", "*.svg"))
    _clean(tab_dir, ("*.csv",))

    rows = src.rows
    logged = set(map(str, rows["metric"].unique()))
    wanted = list(dict.fromkeys(["regret", *metrics]))
    board_metrics = [m for m in wanted if m in logged]
    missing = [m for m in wanted if m not in logged]
    games = src.game_labels
    styles = player_styles(src.player_labels)
    pct = f"{level:.0%}"

    board, pairs = stats.leaderboards(rows, board_metrics, level, games=games)
    growth = stats.growth_table(rows, "regret", level) if "regret" in logged else None
    viol = stats.bound_violations(rows)
    viol_sum = stats.summarize_violations(viol)
    below = stats.lower_bound_violations(rows)

    csv: dict[str, str] = {}
    csv["leaderboards"] = _write_csv(board, tab_dir / "leaderboards.csv")
    csv["pairwise"] = _write_csv(pairs, tab_dir / "pairwise.csv")
    csv["bound violations (every row)"] = _write_csv(viol, tab_dir / "bound_violations.csv")
    csv["bound violations (summary)"] = _write_csv(
        viol_sum, tab_dir / "bound_violations_summary.csv"
    )
    csv["below reference lower bound"] = _write_csv(below, tab_dir / "below_lower_bound.csv")

    blocks: list[Block] = []
    nav: list[tuple[str, str]] = []

    def section(title: str, anchor: str) -> None:
        nav.append((title, anchor))
        blocks.append(Heading(title, 2, anchor))

    # -- overview --------------------------------------------------------------------------------
    n_units = rows.groupby(["game_label", *stats.UNIT], observed=True).ngroups
    reps = src.cells["replicates"]
    total_wall = float(np.nansum(src.cells["wall_time_s"].to_numpy(float)))
    horizon = sorted(set(src.games.horizon.tolist()))
    n_actions = sorted(set(src.games.n_actions.tolist()))
    section("Overview", "overview")
    blocks.append(
        Para(
            f"Source: `{src.root}` — {len(src.cells)} cells ({len(src.player_labels)} players × "
            f"{len(games)} games), {_range(reps)} replicates per cell "
            f"({n_units} (game, seed, replicate) units), horizon T = "
            f"{', '.join(map(str, horizon))}, N = {', '.join(map(str, n_actions))}; "
            f"{rows['t'].nunique()} checkpoints; {len(rows):,} rows from {len(src.files)} "
            f"results files; total cell wall time {total_wall:.1f} s."
        )
    )
    blocks.append(
        Para(
            f"Players: {', '.join(src.player_labels)}. Games: {', '.join(games)}. Metrics logged: "
            f"{', '.join(sorted(logged))}."
        )
    )
    if missing:
        blocks.append(
            Para(f"Requested metrics not in the results: {', '.join(missing)}.", note=True)
        )
    n_viol_cells = len(viol_sum)
    if n_viol_cells:
        blocks.append(
            Para(
                f"{len(viol):,} rows exceed a declared bound, in {n_viol_cells} "
                "(game, player, metric) groups — see Flags.",
                bad=True,
            )
        )
    elif any(m.startswith("bound:") for m in logged):
        blocks.append(Para("No value exceeds its player's declared bound.", ok=True))
    else:
        blocks.append(Para("No player declared a bound (no `bound:<metric>` rows).", note=True))
    if len(below):
        blocks.append(
            Para(
                f"{len(below)} checkpoints have a mean below the adversary's reference lower "
                "bound — see Flags.",
                bad=True,
            )
        )
    if len(src.failures):
        blocks.append(
            Para(f"{_plural(len(src.failures), 'cell')} failed — see Failures.", bad=True)
        )

    # -- flags -------------------------------------------------------------------------------
    section("Flags: bound violations", "flags")
    blocks.append(
        Para(
            "A row violates its bound when `value > bound + 1e-9·max(1, |bound|)`, comparing each "
            "metric with the player's `bound:<metric>` row of the same cell, seed, replicate, "
            "round and parameter."
        )
    )
    if len(viol_sum):
        blocks.append(
            Table(
                [
                    "game",
                    "player",
                    "cell",
                    "metric",
                    "rows",
                    "replicates",
                    "first t",
                    "largest excess",
                ],
                [
                    [
                        r.game,
                        r.player,
                        r.cell,
                        _param_text(r.metric, r.param),
                        str(r.rows),
                        r.replicates,
                        str(r.first_t),
                        _num(r.excess),
                    ]
                    for r in viol_sum.itertuples()
                ],
                caption="Bound violations",
                bad_rows=set(range(len(viol_sum))),
                text_columns={0, 1, 2, 3, 5},
                anchor="bound-violations",
            )
        )
    else:
        blocks.append(Para("None.", ok=True))
    blocks.append(Heading("Below reference lower bound", 3, "below-lower-bound"))
    blocks.append(
        Para(
            "A checkpoint is flagged when a player's mean is below the adversary's reference lower "
            "bound (`lower_bound:<metric>`, averaged over replicates) by more than a CLT margin "
            "`q · s/√n` (plus 1e-9 relative), q the one-sided t quantile at "
            f"1 − {1 - stats.LOWER_BOUND_LEVEL:g}/K with K the cell's checkpoints (Bonferroni: "
            "a cell at its bound is wrongly flagged with probability ≤ "
            f"{1 - stats.LOWER_BOUND_LEVEL:g}); at least two replicates are needed."
        )
    )
    if len(below):
        shown = below.head(200)
        blocks.append(
            Table(
                ["game", "player", "cell", "metric", "t", "mean", "lower bound", "margin", "n"],
                [
                    [
                        r.game,
                        r.player,
                        r.cell,
                        _param_text(r.metric, r.param),
                        str(int(r.t)),
                        _num(r.mean),
                        _num(r.lower_bound),
                        _num(r.margin),
                        str(int(r.n)),
                    ]
                    for r in shown.itertuples()
                ],
                caption="Below reference lower bound"
                + (f" (first 200 of {len(below)})" if len(below) > 200 else ""),
                bad_rows=set(range(len(shown))),
                text_columns={0, 1, 2, 3},
            )
        )
    elif any(m.startswith("lower_bound:") for m in logged):
        blocks.append(Para("None.", ok=True))
    else:
        blocks.append(Para("No adversary declared a lower bound.", note=True))

    # -- leaderboards --------------------------------------------------------------------------
    section("Leaderboards", "leaderboards")
    blocks.append(
        Para(
            f"Final value at t = T per game. Mean and {pct} t-interval over replicates; rank by "
            "mean (1 = lowest). Δ is the paired difference to the leader over the same "
            f"(seed, replicate) units (same losses), with its {pct} t-interval; p is the paired "
            "t-test's p-value after Holm–Bonferroni correction over all pairs of players of the "
            "game and metric; 'signif. worse' = yes when that p ≤ 0.05."
        )
    )
    for (metric, param), mboard in board.groupby(["metric", "param"], sort=False, dropna=False):
        title = _param_text(metric, param)
        blocks.append(Heading(f"Leaderboard: {title}", 3, f"lb-{metric}-{param}"))
        for game in games:
            gb = mboard[mboard.game == game]
            if gb.empty:
                continue
            blocks.append(
                Table(
                    [
                        "rank",
                        "player",
                        "mean",
                        f"{pct} CI",
                        "n",
                        "Δ vs leader",
                        "Δ CI",
                        "p (Holm)",
                        "signif. worse",
                    ],
                    [
                        [
                            "" if r.rank is None or pd.isna(r.rank) else str(int(r.rank)),
                            r.player,
                            _num(r.mean),
                            _ci(r.ci_low, r.ci_high),
                            str(int(r.n)),
                            "—" if pd.isna(r.delta) else _num(r.delta),
                            "—" if pd.isna(r.delta) else _ci(r.delta_ci_low, r.delta_ci_high),
                            "—" if pd.isna(r.delta) else _p(r.p_holm),
                            "—" if pd.isna(r.delta) else ("yes" if r.significant else "no"),
                        ]
                        for r in gb.itertuples()
                    ],
                    caption=f"{title} — {game}",
                    text_columns={1},
                    css_class="leaderboard",
                )
            )
    n_players = len(src.player_labels)
    if len(pairs) and n_players <= 8:
        blocks.append(Heading("Pairwise paired comparisons (regret)", 3, "pairwise"))
        reg = pairs[(pairs.metric == "regret")]
        blocks.append(
            Table(
                [
                    "game",
                    "player a",
                    "player b",
                    "n",
                    "mean a − b",
                    f"{pct} CI",
                    "p",
                    "p (Holm)",
                    "significant",
                ],
                [
                    [
                        r.game,
                        r.player_a,
                        r.player_b,
                        str(int(r.n_pairs)),
                        _num(r.mean_diff),
                        _ci(r.ci_low, r.ci_high),
                        _p(r.p),
                        _p(r.p_holm),
                        "yes" if r.significant else "no",
                    ]
                    for r in reg.itertuples()
                ],
                caption="Paired differences of final regret",
                text_columns={0, 1, 2},
            )
        )
    blocks.append(
        Links(
            [("pairwise.csv", csv["pairwise"]), ("leaderboards.csv", csv["leaderboards"])],
            "All pairs, every metric: ",
        )
    )

    # -- overall -------------------------------------------------------------------------------
    if "regret" in logged:
        norm = stats.normalized_table(rows, src.games)
        win, win_n = stats.win_matrix(rows)
        csv["normalized regret"] = _write_csv(norm, tab_dir / "normalized_regret.csv", index=True)
        csv["win matrix"] = _write_csv(win, tab_dir / "win_matrix.csv", index=True)
        csv["win counts"] = _write_csv(win_n, tab_dir / "win_counts.csv", index=True)
        section("Overall", "overall")
        blocks.append(
            Table(
                ["player", *norm.columns],
                [[p, *(_num(v, 3) for v in row)] for p, row in norm.iterrows()],
                caption="Normalized regret: mean final regret / sqrt(T ln N) (n/a for N = 1)",
                anchor="normalized",
            )
        )
        blocks.append(
            Table(
                ["row beats column", *win.columns],
                [
                    [p, *("—" if p == b else _num(win.loc[p, b], 2) for b in win.columns)]
                    for p in win.index
                ],
                caption="Win matrix: fraction of (game, seed, replicate) units where the row "
                "player's final regret is strictly below the column player's",
                anchor="win-matrix",
            )
        )

    # -- curves --------------------------------------------------------------------------------
    figures: list[FigureOut] = []

    def bounded_curves(metric: str, ylabel: str, caption: str) -> None:
        """Curves of ``metric`` with its ``bound:`` and ``lower_bound:`` rows, table and figure."""
        curves = stats.curve_summary(rows, metric, level)
        csv[f"{metric} curves"] = _write_csv(curves, tab_dir / f"curves_{metric}.csv")
        bnd = stats.curve_summary(rows, f"bound:{metric}", level)
        lb = stats.curve_summary(rows, f"lower_bound:{metric}", level)
        if len(lb):
            lb = lb.groupby(["game", "t"], as_index=False)["mean"].mean()
        fig = save_figure(
            curves_figure(
                f"{metric}_curves",
                curves,
                games,
                styles,
                ylabel=ylabel,
                caption=caption,
                bounds=bnd if len(bnd) else None,
                lower=lb if len(lb) else None,
            ),
            fig_dir,
        )
        figures.append(fig)
        blocks.append(_figure_block(fig))

    if "regret" in logged:
        section("Regret curves", "curves")
        bounded_curves("regret", CURVES[0][2], CURVES[0][3].replace("95%", pct))
        if growth is not None:
            csv["growth exponents"] = _write_csv(growth, tab_dir / "growth_exponent.csv")
            g = growth.set_index(["player", "game"])
            players = src.player_labels
            blocks.append(
                Table(
                    ["player", *games],
                    [
                        [
                            p,
                            *(
                                _growth_cell(g.loc[(p, gm)]) if (p, gm) in g.index else "—"
                                for gm in games
                            ),
                        ]
                        for p in players
                    ],
                    caption=f"Empirical growth exponent α of regret ≈ c·t^α ({pct} CI)",
                    anchor="growth",
                )
            )
            blocks.append(
                Para(
                    "α is estimated per replicate as the least-squares slope of log regret on "
                    "log t over the checkpoints in the upper half of the log-t range "
                    "(log t ≥ (log t₁ + log T)/2), then averaged over replicates with a t-interval "
                    "over replicates. Replicates whose regret is ≤ 0 somewhere in that window "
                    "have no slope and are left out; 'k/n' shows how many were used when some "
                    "were. √t growth gives α ≈ 0.5, bounded regret α ≈ 0, linear regret α ≈ 1.",
                    note=True,
                )
            )

    # -- curves of the other leaderboard metrics (mistakes, loss, ... of OCO / classification) --
    extra_curves = [
        m
        for m in board_metrics
        if m not in {c[0] for c in CURVES} and rows.loc[rows["metric"] == m, "param"].isna().all()
    ]
    if extra_curves:
        section("Curves of the leaderboard metrics", "metric-curves")
    for metric in extra_curves:
        bounded_curves(
            metric,
            metric,
            f"`{metric}` vs round t (log-log), mean over replicates with {pct} t-interval bands; "
            f"dashed: declared bounds (`bound:{metric}`), dotted grey: reference lower bounds "
            f"(`lower_bound:{metric}`), where any.",
        )

    # -- other metrics -------------------------------------------------------------------------
    others: list[Block] = []
    for metric, fname, xlabel, ylabel, caption in SWEEPS:
        if metric not in logged:
            continue
        caption = caption.replace("95%", pct)
        final = stats.final_rows(rows, metric)
        summ = stats.grouped_mean_ci(final, ["game_label", "player_label", "param"], level=level)
        summ = summ.rename(columns={"game_label": "game", "player_label": "player"})
        summ["game"] = summ["game"].astype(str)
        summ["player"] = summ["player"].astype(str)
        csv[f"{metric} vs {PARAM_SYMBOL[metric]}"] = _write_csv(summ, tab_dir / f"{fname}.csv")
        fig = save_figure(
            sweep_figure(fname, summ, games, styles, xlabel=xlabel, ylabel=ylabel, caption=caption),
            fig_dir,
        )
        figures.append(fig)
        others.append(_figure_block(fig))
    metric, fname, ylabel, caption = CURVES[1]
    if metric in logged:
        ad = stats.curve_summary(rows, metric, level)
        csv["adaptive regret curves"] = _write_csv(ad, tab_dir / "curves_adaptive_regret.csv")
        fig = save_figure(
            curves_figure(
                fname, ad, games, styles, ylabel=ylabel, caption=caption.replace("95%", pct)
            ),
            fig_dir,
        )
        figures.append(fig)
        others.append(_figure_block(fig))
    if others:
        section("Other regret notions", "other")
        blocks += others

    # -- failures ------------------------------------------------------------------------------
    section("Failures", "failures")
    fail = src.failures
    csv["failures"] = _write_csv(fail, tab_dir / "failures.csv")
    if len(fail):
        blocks.append(
            Table(
                ["cell", "player", "adversary", "N", "T", "error"],
                [
                    [
                        str(r.cell),
                        str(r.player_label),
                        str(r.adversary_label),
                        "" if pd.isna(r.n_actions) else str(int(r.n_actions)),
                        "" if pd.isna(r.horizon) else str(int(r.horizon)),
                        _first_line(r.error),
                    ]
                    for r in fail.itertuples()
                ],
                caption=_plural(len(fail), "failed cell"),
                bad_rows=set(range(len(fail))),
                text_columns={0, 1, 2, 5},
                anchor="failures-table",
            )
        )
        for r in fail.itertuples():
            blocks.append(
                Details(
                    f"{r.cell}: {r.player_label} vs {r.adversary_label} — {_first_line(r.error)}",
                    f"{r.error}\n\n{r.traceback or ''}".rstrip(),
                    bad=True,
                )
            )
    else:
        blocks.append(Para("No cell failed.", ok=True))

    # -- provenance ----------------------------------------------------------------------------
    section("Provenance", "provenance")
    blocks += _provenance(src, tab_dir, csv)

    # -- methods and files ---------------------------------------------------------------------
    section("Methods", "methods")
    blocks.append(Para(_methods(level)))
    section("Files", "files")
    blocks.append(Links(sorted(csv.items()), "Tables (CSV): "))
    blocks.append(
        Links(
            [(f"{f.name}.{k}", f"figures/{f.name}.{k}") for f in figures for k in ("png", "svg")],
            "Figures: ",
        )
    )
    elapsed = time.perf_counter() - started
    blocks.append(Para(f"Report built in {elapsed:.1f} s by regret-arena.", note=True))

    title = f"regret-arena report: {name}"
    (out / "report.md").write_text(render_markdown(title, blocks), encoding="utf-8")
    index = out / "index.html"
    index.write_text(render_html(title, blocks, nav), encoding="utf-8")
    return index


def _growth_cell(r) -> str:
    if not np.isfinite(r["exponent"]):
        return "n/a"
    if not np.isfinite(r["ci_low"]):
        return f"{r['exponent']:.3f} (one replicate)"
    used = "" if r["n_used"] == r["n"] else f" ({int(r['n_used'])}/{int(r['n'])})"
    return f"{r['exponent']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]{used}"


def _figure_block(fig: FigureOut) -> Figure:
    return Figure(
        fig.name, fig.caption, fig.png, f"figures/{fig.name}.png", f"figures/{fig.name}.svg"
    )


def _provenance(src: Source, tab_dir: Path, csv: dict[str, str]) -> list[Block]:
    blocks: list[Block] = []
    cells = src.cells
    cols = [
        "cell",
        "tournament_cell",
        "player_label",
        "game_label",
        "seed",
        "replicates",
        "wall_time_s",
        "run_id",
        "git_revision",
        "manifest",
    ]
    csv["cells"] = _write_csv(cells, tab_dir / "cells.csv")
    if src.tournament is not None:
        t = src.tournament
        blocks.append(
            Para(
                f"Tournament `{t.get('name', '?')}` (config digest "
                f"`{t.get('config_digest', 'n/a')}`, git revision "
                f"`{t.get('git_revision') or 'unknown'}`)."
            )
        )
        blocks.append(
            Details(
                "Tournament configuration (manifest.json → config)",
                json.dumps(t.get("config"), indent=2, sort_keys=True, default=str),
            )
        )
    if src.multirun_config is not None:
        blocks.append(Details("Hydra multirun.yaml", src.multirun_config))
    if src.tournament is None:
        configs = sorted({c for c in cells["config"].dropna()})
        if configs:
            text = "\n\n".join(json.dumps(json.loads(c), indent=2, sort_keys=True) for c in configs)
            blocks.append(Details(f"Resolved configuration of each run ({len(configs)})", text))
    versions = [v for v in cells["versions"].dropna().unique()]
    if versions:
        sets = [json.loads(v) for v in versions]
        packages = sorted({k for s in sets for k in s})
        header = (
            ["package", *(f"set {i + 1}" for i in range(len(sets)))]
            if len(sets) > 1
            else [
                "package",
                "version",
            ]
        )
        blocks.append(
            Table(
                header,
                [[p, *(str(s.get(p, "—")) for s in sets)] for p in packages],
                caption="Package versions recorded in the cell manifests",
            )
        )
        if len(sets) > 1:
            blocks.append(
                Para(
                    f"The cells were produced with {len(sets)} different sets of package versions; "
                    "see cells.csv for which is which.",
                    note=True,
                )
            )
    else:
        blocks.append(Para("No cell manifest found: versions unknown.", note=True))
    revs = cells["git_revision"].fillna("unknown").value_counts()
    blocks.append(
        Para(
            "Git revision: "
            + "; ".join(f"`{r}` ({n} cells)" for r, n in revs.items())
            + ("." if len(revs) == 1 else " — results from different revisions.")
        )
    )
    shown = cells[cols]
    blocks.append(
        Table(
            [
                "cell",
                "player",
                "game",
                "seed",
                "replicates",
                "wall time (s)",
                "run_id",
                "git revision",
            ],
            [
                [
                    str(r.cell)
                    + (
                        f" (part {r.tournament_cell})"
                        if isinstance(r.tournament_cell, str) and r.tournament_cell != r.cell
                        else ""
                    ),
                    str(r.player_label),
                    str(r.game_label),
                    str(int(r.seed)),
                    str(int(r.replicates)),
                    _num(r.wall_time_s),
                    str(r.run_id),
                    str(r.git_revision or "unknown"),
                ]
                for r in shown.itertuples()
            ],
            caption="Cells: wall time per cell (from its manifest; replicate blocks summed)",
            text_columns={0, 1, 2, 6, 7},
            anchor="cells",
        )
    )
    return blocks


def _methods(level: float) -> str:
    pct = f"{level:.0%}"
    return (
        f"All intervals are two-sided {pct} Student t intervals over replicates, mean ± "
        "t_(n−1) · s/√n with the sample standard deviation. A unit is one (seed, replicate) of a "
        "game (adversary, its parameters, N, T): every player meets the same losses in a unit "
        "against an oblivious adversary (common random numbers), so players are compared on "
        "paired per-unit differences (paired t interval and two-sided paired t-test; Holm–"
        "Bonferroni over all pairs of players within a game and metric). Normalized regret is "
        "the mean final regret divided by sqrt(T ln N). The win matrix counts, over all units "
        "both players share, how often the row player's final regret is strictly smaller. "
        "Figures: Okabe–Ito colours, one colour per player in every figure (assigned from the "
        "sorted player labels)."
    )
