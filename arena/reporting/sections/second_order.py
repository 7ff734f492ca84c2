"""The "Tuned steps and sketches" section: error at each player's best step; sketch accuracy.

Shown when the results hold ``mistakes`` rows of a player run over a grid of its step parameter
(``alpha`` or ``eta``: cells that differ in that parameter only), or ``sketch_error`` rows. It is
the empirical side of Luo 2016, §4.6 (Luo, Agarwal, Cesa-Bianchi & Langford 2016), whose
experiments run every algorithm over a grid of steps and report the best:

* the progressive error rate ``mistakes/T`` (one online pass, predict then update) of each player
  at its best grid value per game, with the t-interval over replicates; the best value is chosen
  by the mean over replicates on the very stream reported (as the thesis tunes), so the figure is
  optimistic for every player alike;
* where the games of one adversary differ in one numeric parameter (the condition number κ of
  ``ill_conditioned``: Figure 4.2), that error against the parameter;
* where Sketched Online Newton ran with and without diagonal adaptation beside AdaGrad (Table
  D.3), how often each variant beats AdaGrad, beside the thesis's counts over its 23 datasets;
* with ``sketch_error`` rows, the largest relative error among a sketch's top-k eigenvalues
  against the number of examples (Figure 4.1);
* with ``invariant_regret`` rows and their ``bound:invariant_regret``, each Sketched Online
  Newton's regret on the invariant set over the bound of the theorem that gives it (Theorems 16
  and 18), with the theorem named and the constants that are ours.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from arena.base import canonical_json
from arena.reporting import stats
from arena.reporting.figures import curves_figure, player_styles, sweep_figure
from arena.reporting.labels import format_value, parse_params, variant_label_map
from arena.reporting.render import Block, Para, Table, code
from arena.reporting.sections.context import ReportContext, Section
from arena.reporting.sections.formatting import int_range, num

TUNED_PARAMS = ("alpha", "eta")
"""Step parameters a grid tunes, in order of preference: ``alpha`` (Sketched Online Newton's
``A_0 = αI``, step 1/α) and ``eta`` (a step size, e.g. AdaGrad's ``η = 1/α``)."""

SKETCH_CHECKPOINTS = (100, 500, 1000)
"""Rounds at which the sketch-accuracy table reads ``sketch_error`` (the first checkpoint at or
after each), besides T: Figure 4.1 of Luo 2016 says the error "drops quickly after seeing just
500 examples"."""

D3_COLUMNS = ("noDiag m=0", "noDiag m=10", "Diag m=0", "Diag m=10", "ADAGRAD")
"""The columns of Luo 2016, Table D.3: Oja-SON without and with diagonal adaptation, sketch size
0 and 10, and AdaGrad."""

LUO_2016_TABLE_D3 = {
    "20news": (0.121338, 0.121338, 0.049590, 0.049590, 0.068020),
    "a9a": (0.204447, 0.195203, 0.155953, 0.155953, 0.156414),
    "acoustic": (0.305824, 0.260241, 0.257894, 0.257894, 0.259493),
    "adult": (0.199763, 0.199803, 0.150830, 0.150830, 0.181582),
    "australian": (0.366667, 0.366667, 0.162319, 0.157971, 0.289855),
    "breast-cancer": (0.374817, 0.374817, 0.036603, 0.036603, 0.358712),
    "census": (0.093610, 0.062038, 0.051479, 0.051439, 0.069629),
    "cod-rna": (0.175107, 0.175107, 0.049710, 0.049643, 0.081066),
    "covtype": (0.042304, 0.042312, 0.050827, 0.050818, 0.045507),
    "diabetes": (0.433594, 0.433594, 0.329427, 0.328125, 0.391927),
    "gisette": (0.208000, 0.208000, 0.152000, 0.152000, 0.154000),
    "heart": (0.477778, 0.388889, 0.244444, 0.244444, 0.362963),
    "ijcnn1": (0.046826, 0.046826, 0.034536, 0.034645, 0.036913),
    "ionosphere": (0.188034, 0.148148, 0.182336, 0.182336, 0.190883),
    "letter": (0.306650, 0.232300, 0.233250, 0.230450, 0.237350),
    "magic04": (0.000263, 0.000263, 0.000158, 0.000158, 0.000210),
    "mnist": (0.062336, 0.062336, 0.040031, 0.039182, 0.046561),
    "mushrooms": (0.003323, 0.002339, 0.002462, 0.002462, 0.001969),
    "rcv1": (0.055976, 0.052694, 0.052764, 0.052766, 0.050938),
    "real-sim": (0.045140, 0.043577, 0.029498, 0.029498, 0.031670),
    "splice": (0.343000, 0.343000, 0.294000, 0.229000, 0.301000),
    "w1a": (0.001615, 0.001615, 0.004845, 0.004845, 0.003633),
    "w8a": (0.000101, 0.000101, 0.000422, 0.000422, 0.000221),
}
"""Progressive error rates of Luo 2016, Appendix D, Table D.3 (one pass over each of 23 LIBSVM /
UCI datasets, the best α ∈ {2^j : j = −3…6} per entry), columns as :data:`D3_COLUMNS`."""

LUO_2016_TABLE_4_1 = {
    "a9a": 0.896533,
    "australian": 0.846063,
    "breast-cancer": 5.383578,
    "diabetes": 5.128097,
    "heart": 4.360492,
    "ijcnn1": 0.569727,
    "magic04": 11.479917,
    "mushrooms": 0.910814,
    "splice": 8.226752,
    "w8a": 0.954262,
}
"""Luo 2016, Table 4.1: "largest relative error between true and estimated eigenvalues" of Oja's
sketch on real datasets (the units are not stated; values up to 11.5 suggest percent)."""


def _tuned_param(player: str, variants: list[dict[str, Any]]) -> str | None:
    """The first of :data:`TUNED_PARAMS` that takes two or more values among ``variants`` of
    ``player`` agreeing on every other parameter; None if there is none."""
    for p in TUNED_PARAMS:
        groups: dict[str, set[str]] = {}
        for params in variants:
            if p in params:
                rest = canonical_json({k: v for k, v in params.items() if k != p})
                groups.setdefault(rest, set()).add(canonical_json(params[p]))
        if any(len(values) > 1 for values in groups.values()):
            return p
    return None


def tuning_families(cells: pd.DataFrame) -> pd.DataFrame:
    """Map each tuned cell to its family: the player with its step parameter left out.

    ``cells``: one row per cell with ``player`` and ``player_params`` (canonical JSON). Returns
    ``player, player_params, family, family_params, tuned, step``: ``tuned`` the step parameter
    (:data:`TUNED_PARAMS`) that takes several values among the player's variants agreeing on
    everything else, ``step`` its value, ``family`` a label showing the parameters that tell the
    families of one player apart. Players without such a grid are left out.

    Examples
    --------
    >>> cells = pd.DataFrame({"player": ["son", "son", "son", "ftl"],
    ...     "player_params": ['{"alpha":1.0,"m":5}', '{"alpha":2.0,"m":5}',
    ...                       '{"alpha":1.0,"m":9}', '{}']})
    >>> tuning_families(cells)[["family", "tuned", "step"]].values.tolist()
    [['son(m=5)', 'alpha', 1.0], ['son(m=5)', 'alpha', 2.0], ['son(m=9)', 'alpha', 1.0]]
    """
    pairs = cells[["player", "player_params"]].astype(str).drop_duplicates()
    by_player: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for player, params in pairs.itertuples(index=False):
        by_player.setdefault(player, []).append((params, parse_params(params)))
    out = []
    for player, variants in by_player.items():
        tuned = _tuned_param(player, [v for _, v in variants])
        if tuned is None:
            continue
        for params, parsed in variants:
            if tuned not in parsed:
                continue
            rest = canonical_json({k: v for k, v in parsed.items() if k != tuned})
            out.append((player, params, rest, tuned, parsed[tuned]))
    frame = pd.DataFrame(out, columns=["player", "player_params", "family_params", "tuned", "step"])
    if frame.empty:
        return frame.assign(family=pd.Series(dtype=object))
    labels = variant_label_map(zip(frame["player"], frame["family_params"], strict=True))
    frame["family"] = [
        labels[(p, f)] for p, f in zip(frame["player"], frame["family_params"], strict=True)
    ]
    return frame[["player", "player_params", "family", "family_params", "tuned", "step"]]


def tuning_grid(rows: pd.DataFrame, families: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per game, family and grid value: mean and t-interval of the error rate ``mistakes/T``.

    Returns ``game_label, family, tuned, step, mean, sd, n, ci_low, ci_high``.

    Examples
    --------
    >>> rows = pd.DataFrame({"metric": "mistakes", "t": 10, "horizon": 10, "game_label": "g",
    ...     "player": "son", "player_params": ['{"alpha":1.0}'] * 2 + ['{"alpha":2.0}'] * 2,
    ...     "replicate": [0, 1, 0, 1], "value": [1.0, 3.0, 5.0, 5.0]})
    >>> fam = tuning_families(rows)
    >>> tuning_grid(rows, fam)[["step", "mean"]].values.tolist()
    [[1.0, 0.2], [2.0, 0.5]]
    """
    final = stats.final_rows(rows, "mistakes")
    final = final.assign(player=final["player"].astype(str)).assign(
        player_params=final["player_params"].astype(str)
    )
    final = final.merge(families, on=["player", "player_params"], how="inner")
    final = final.assign(rate=final["value"].astype(float) / final["horizon"].astype(float))
    final = final.drop(columns=["value"]).rename(columns={"rate": "error"})
    final["game_label"] = final["game_label"].astype(str)
    out = stats.grouped_mean_ci(
        final, ["game_label", "family", "tuned", "step"], value="error", level=level
    )
    return out.sort_values(["game_label", "family", "step"]).reset_index(drop=True)


def best_tuned(grid: pd.DataFrame) -> pd.DataFrame:
    """Per game and family: the grid value of least mean error (the smallest value on a tie),
    with its mean, interval, the number of values tried and whether the best lies at an end of
    the grid (``at_edge``: a wider grid might do better). A family with one value in a game
    was not tuned there and is left out.

    Examples
    --------
    >>> grid = pd.DataFrame({"game_label": "g", "family": "son", "tuned": "alpha",
    ...     "step": [1.0, 2.0, 4.0], "mean": [0.3, 0.1, 0.1], "sd": 0.0, "n": 2,
    ...     "ci_low": 0.0, "ci_high": 1.0})
    >>> r = best_tuned(grid).iloc[0]
    >>> float(r["step"]), float(r["mean"]), int(r["n_values"]), bool(r["at_edge"])
    (2.0, 0.1, 3, False)
    """
    keys = ["game_label", "family"]
    if grid.empty:
        return grid.assign(n_values=pd.Series(dtype=int), at_edge=pd.Series(dtype=bool))
    ordered = grid.sort_values([*keys, "mean", "step"], kind="mergesort")
    best = ordered.groupby(keys, sort=True).head(1).set_index(keys)
    span = grid.groupby(keys)["step"].agg(["min", "max", "count"])
    best["n_values"] = span["count"]
    best["at_edge"] = (best["step"] == span["min"]) | (best["step"] == span["max"])
    return best[best["n_values"] > 1].reset_index()


def thesis_column(player: str, params: Mapping[str, Any]) -> str | None:
    """The column of Luo 2016, Table D.3 a family stands for, or None.

    ``adagrad`` is ADAGRAD; ``son`` with Oja's sketch of size 10 is "Diag m=10" or "noDiag m=10"
    by its ``diagonal`` flag; ``son`` with m = 0, i.e. Frequent Directions with one row (which
    keeps ``S = 0``, so ``A_t = αI``: projected gradient descent with step 1/α), is "… m=0".

    Examples
    --------
    >>> thesis_column("son", {"sketch": "fd", "m": 1, "diagonal": True})
    'Diag m=0'
    >>> thesis_column("son", {"sketch": "oja", "m": 10}), thesis_column("ogd", {})
    ('noDiag m=10', None)
    """
    if player == "adagrad":
        return "ADAGRAD"
    if player != "son":
        return None
    prefix = "Diag" if params.get("diagonal") else "noDiag"
    if params.get("sketch") == "fd" and params.get("m") == 1:
        return f"{prefix} m=0"
    if params.get("sketch") == "oja" and params.get("m") == 10:
        return f"{prefix} m=10"
    return None


def wins_against(best: pd.DataFrame, baseline: str) -> dict[str, tuple[int, int]]:
    """Per family: ``(games where its tuned mean error is below the baseline's, games both
    played)``.

    Examples
    --------
    >>> best = pd.DataFrame({"game_label": ["a", "a", "b", "b"], "family": ["x", "y"] * 2,
    ...                      "mean": [0.1, 0.2, 0.3, 0.2]})
    >>> wins_against(best, "y")
    {'x': (1, 2)}
    """
    wide = best.pivot(index="game_label", columns="family", values="mean")
    if baseline not in wide:
        return {}
    out = {}
    for family in wide.columns:
        if family == baseline:
            continue
        both = wide[[family, baseline]].dropna()
        out[family] = (int((both[family] < both[baseline]).sum()), len(both))
    return out


def _thesis_d3_summary() -> dict[str, tuple[float, int]]:
    """Per Table D.3 column: the median error over the 23 datasets and the number of datasets
    where it beats ADAGRAD (ADAGRAD itself: its median and 0)."""
    table = np.array(list(LUO_2016_TABLE_D3.values()))
    ada = table[:, -1]
    return {
        column: (float(np.median(table[:, j])), int((table[:, j] < ada).sum()))
        for j, column in enumerate(D3_COLUMNS)
    }


def _power_of_two(value: float) -> str:
    """``2^j`` for an exact power of two (``2^-3``), else the value as labels show it."""
    if value > 0 and math.log2(value).is_integer():
        return f"2^{int(math.log2(value))}"
    return format_value(value)


def _game_sweeps(games: pd.DataFrame, labels: set[str]) -> list[tuple[str, str, dict[str, float]]]:
    """Adversaries whose games (among ``labels``) differ in exactly one numeric parameter, with
    three or more values: ``(adversary, parameter, {game_label: value})``."""
    out = []
    part = games[games["game_label"].astype(str).isin(labels)]
    for (adversary, _, _), g in part.groupby(
        ["adversary", "n_actions", "horizon"], observed=True, sort=True
    ):
        params = [parse_params(str(p)) for p in g["adversary_params"]]
        keys = {k for p in params for k in p}
        varying = [k for k in sorted(keys) if len({canonical_json(p.get(k)) for p in params}) > 1]
        if len(varying) != 1 or len(g) < 3:
            continue
        (key,) = varying
        values = [p.get(key) for p in params]
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            continue
        mapping = {str(lbl): float(v) for lbl, v in zip(g["game_label"], values, strict=True)}
        out.append((str(adversary), key, mapping))
    return out


def shared_parameters(families: pd.DataFrame) -> str:
    """The parameters with one value across all families of each player, as text.

    Examples
    --------
    >>> fam = pd.DataFrame({"player": ["son", "son"], "tuned": "alpha",
    ...     "family_params": ['{"C":1.0,"m":5}', '{"C":1.0,"m":9}']})
    >>> shared_parameters(fam)
    'son: C=1'
    """
    parts = []
    for player, group in families.groupby("player", sort=True):
        params = [parse_params(p) for p in group["family_params"].unique()]
        keys = sorted({k for p in params for k in p})
        same = {
            k: params[0][k]
            for k in keys
            if all(k in p for p in params) and len({canonical_json(p[k]) for p in params}) == 1
        }
        text = ", ".join(f"{k}={format_value(v)}" for k, v in same.items()) or "none"
        parts.append(f"{player}: {text}")
    return "; ".join(parts)


def _sweep_suptitle(cells: pd.DataFrame, games: list[str]) -> str:
    """The horizon(s) and replicates of the cells of ``games``, for a sweep figure's suptitle.

    Examples
    --------
    >>> cells = pd.DataFrame({"game_label": ["a", "b", "c"], "horizon": [50, 50, 9],
    ...                       "replicates": [4, 4, 2]})
    >>> _sweep_suptitle(cells, ["a", "b"])
    'T = 50; 4 replicates per cell'
    """
    part = cells[cells["game_label"].astype(str).isin(games)]
    horizons = ", ".join(str(int(h)) for h in sorted(part["horizon"].unique()))
    reps = int_range(part["replicates"])
    return f"T = {horizons}; {reps} replicate{'s' if reps != '1' else ''} per cell"


def _game_order(games: list[str], sweeps: list[tuple[str, str, dict[str, float]]]) -> list[str]:
    """``games`` in report order, except that the games of one sweep come together, sorted by
    the swept value, where the first of them was.

    Examples
    --------
    >>> _game_order(["a", "k=20", "b", "k=5"], [("adv", "k", {"k=20": 20.0, "k=5": 5.0})])
    ['a', 'k=5', 'k=20', 'b']
    """
    group = {g: i for i, (_, _, mapping) in enumerate(sweeps) for g in mapping}
    out: list[str] = []
    for game in games:
        if game not in group:
            out.append(game)
        elif game not in out:
            mapping = sweeps[group[game]][2]
            out += sorted((g for g in games if g in mapping), key=lambda g: mapping[g])
    return out


def _tuning_blocks(ctx: ReportContext) -> list[Block]:
    families = tuning_families(ctx.src.cells)
    if families.empty or "mistakes" not in ctx.logged:
        return []
    grid = tuning_grid(ctx.rows, families, ctx.level)
    # a family with one step in a game was not tuned there (a fixed-step cell of another
    # tournament, e.g. second_order_bounds, whose parameters match a tuned family's but for it)
    tried = grid.groupby(["game_label", "family"])["step"].transform("count")
    grid = grid[tried.to_numpy() > 1].reset_index(drop=True)
    if grid.empty:
        return []
    families = families[families["family"].isin(set(grid["family"]))]
    best = best_tuned(grid)
    ctx.write_csv("error rate over the step grid", grid, "tuning_grid.csv")
    ctx.write_csv("error rate at the best step", best, "tuned_error.csv")
    sweeps = _game_sweeps(ctx.src.games, set(best["game_label"]))
    swept = {g: (key, v) for _, key, mapping in sweeps for g, v in mapping.items()}
    order = _game_order([g for g in ctx.games if g in set(best["game_label"])], sweeps)
    fam_order = list(dict.fromkeys(families.sort_values(["player", "family"])["family"]))
    cell = best.set_index(["game_label", "family"])
    body, edges = [], set()
    for i, game in enumerate(order):
        shown = game
        if game in swept and f"{swept[game][0]}=" not in game:
            shown = f"{game} ({swept[game][0]}={format_value(swept[game][1])})"
        line = [shown]
        for j, family in enumerate(fam_order, start=1):
            if (game, family) not in cell.index:
                line.append("—")
                continue
            r = cell.loc[(game, family)]
            half = (r["ci_high"] - r["ci_low"]) / 2
            pm = f" ± {num(half, 2)}" if np.isfinite(half) else ""
            line.append(f"{num(r['mean'], 3)}{pm} ({r['tuned']} {_power_of_two(r['step'])})")
            if r["at_edge"]:
                edges.add((i, j))
        body.append(line)
    grids = grid.groupby("family")["step"].agg(["min", "max", "nunique"])
    grid_text = "; ".join(
        f"{code(f)}: {families[families.family == f]['tuned'].iloc[0]} from "
        f"{_power_of_two(grids.loc[f, 'min'])} to {_power_of_two(grids.loc[f, 'max'])} "
        f"({int(grids.loc[f, 'nunique'])} values)"
        for f in fam_order
    )
    blocks: list[Block] = [
        Para(
            f"Every player below ran over a grid of its step parameter; each entry is its "
            f"progressive error rate (mistakes/T over one online pass, predict then update) at "
            f"the grid value of least mean error for that game, ± the half-width of the "
            f"{ctx.pct} t-interval over replicates, with that value in brackets. The best value "
            f"is chosen on the very stream reported, as Luo 2016, §4.6, chooses its "
            f"α ∈ {{2^j : j = −3…6}}: the numbers are optimistic for every player alike. "
            f"Grids: {grid_text}. An entry in red took the best value at an end of its grid "
            f"(a wider grid might do better). Parameters every family of a player shares: "
            f"{shared_parameters(families)}."
        ),
        Table(
            ["game", *fam_order],
            body,
            caption=f"Progressive error rate at the best step per game (mean ± {ctx.pct} "
            f"half-width; the step in brackets).",
            bad_cells=edges,
        ),
    ]
    son_zero = [
        f for f in fam_order if (p := _family_params(families, f)) and _is_m0(p, families, f)
    ]
    if son_zero:
        blocks.append(
            Para(
                f"{', '.join(code(f) for f in son_zero)}: Frequent Directions with one row "
                f"shrinks every inserted gradient away (S_t = 0 after each update), so "
                f"A_t = αI and the player is projected gradient descent with step 1/α: Luo "
                f"2016's Oja-SON with m = 0."
            )
        )
    blocks += _sweep_blocks(ctx, best, fam_order)
    blocks += _d3_blocks(ctx, best, families, fam_order)
    return blocks


def _family_params(families: pd.DataFrame, family: str) -> dict[str, Any]:
    return json.loads(families[families.family == family]["family_params"].iloc[0])


def _is_m0(params: Mapping[str, Any], families: pd.DataFrame, family: str) -> bool:
    player = str(families[families.family == family]["player"].iloc[0])
    return thesis_column(player, params) in ("noDiag m=0", "Diag m=0")


def _sweep_blocks(ctx: ReportContext, best: pd.DataFrame, fam_order: list[str]) -> list[Block]:
    blocks: list[Block] = []
    styles = player_styles(fam_order)
    for adversary, key, mapping in _game_sweeps(ctx.src.games, set(best["game_label"])):
        part = best[best["game_label"].isin(list(mapping))]
        summary = pd.DataFrame(
            {
                "game": adversary,
                "player": part["family"].astype(str),
                "param": part["game_label"].map(mapping).astype(float),
                "mean": part["mean"],
                "ci_low": part["ci_low"],
                "ci_high": part["ci_high"],
            }
        )
        ctx.write_csv(
            f"tuned error rate vs {key} ({adversary})",
            summary.sort_values(["player", "param"]),
            f"tuned_error_vs_{key}_{adversary}.csv",
        )
        blocks.append(
            ctx.add_figure(
                sweep_figure(
                    f"tuned_error_vs_{key}_{adversary}",
                    summary,
                    [adversary],
                    styles,
                    xlabel=key,
                    ylabel="progressive error rate at the best step",
                    caption=f"Progressive error rate at each player's best step against "
                    f"{code(key)} of {code(adversary)}, mean ± {ctx.pct} t-interval over "
                    f"replicates (Luo 2016, Figure 4.2, plots this for κ on its synthetic "
                    f"data).",
                    titles={adversary: f"{adversary}, by {key}"},
                    suptitle=_sweep_suptitle(ctx.src.cells, list(mapping)),
                )
            )
        )
    sweeps = _game_sweeps(ctx.src.games, set(best["game_label"]))
    if any(adversary == "ill_conditioned" for adversary, _, _ in sweeps):
        blocks.append(
            Para(
                "Luo 2016, Figure 4.2 (no numbers are printed, only the plot): AdaGrad degrades "
                "as κ grows; Oja-SON with m = 0 (gradient descent) is worse than AdaGrad; m = 5 "
                'is much better and m = 10 "substantially better and hardly worsens with κ". '
                "The thesis's streams have T = 10,000 examples and its figure shows AdaGrad and "
                "Oja-SON only; the other players here (full SON, FD-SON) are ours, for "
                "comparison. A truly invariant learner would make the same mistakes at every κ "
                "(the streams are invertible linear maps of one problem)."
            )
        )
    return blocks


def _d3_blocks(
    ctx: ReportContext, best: pd.DataFrame, families: pd.DataFrame, fam_order: list[str]
) -> list[Block]:
    columns = {}
    for family in fam_order:
        player = str(families[families.family == family]["player"].iloc[0])
        column = thesis_column(player, _family_params(families, family))
        if column is not None:
            columns[family] = column
    if "ADAGRAD" not in columns.values() or not any(c.startswith("Diag") for c in columns.values()):
        return []
    baseline = next(f for f, c in columns.items() if c == "ADAGRAD")
    # the games where a diagonally adapted variant was tuned: Table D.3's kind of game
    diag = [f for f, c in columns.items() if c.startswith("Diag")]
    best = best[best["game_label"].isin(set(best.loc[best["family"].isin(diag), "game_label"]))]
    wins = wins_against(best, baseline)
    medians = best.groupby("family")["mean"].median()
    thesis = _thesis_d3_summary()
    body = []
    record = []
    for family, column in columns.items():
        med, thesis_wins = thesis[column]
        ours = wins.get(family)
        record.append(
            {
                "family": family,
                "column": column,
                "median": medians.get(family, math.nan),
                "wins": math.nan if ours is None else ours[0],
                "games": math.nan if ours is None else ours[1],
                "thesis_median": med,
                "thesis_wins": math.nan if column == "ADAGRAD" else thesis_wins,
                "thesis_datasets": len(LUO_2016_TABLE_D3),
            }
        )
        body.append(
            [
                family,
                column,
                num(medians.get(family, math.nan), 3),
                "—" if ours is None else f"{ours[0]} of {ours[1]}",
                num(med, 3),
                "—" if column == "ADAGRAD" else f"{thesis_wins} of {len(LUO_2016_TABLE_D3)}",
            ]
        )
    ctx.write_csv("Table D.3 comparison", pd.DataFrame(record), "table_d3.csv")
    return [
        Table(
            [
                "player",
                "Luo 2016 Table D.3 column",
                "median error (ours)",
                "beats AdaGrad (ours)",
                "median error (Luo 2016)",
                "beats ADAGRAD (Luo 2016)",
            ],
            body,
            caption="Oja-SON with and without diagonal adaptation against AdaGrad: the median, "
            "over the games above where a diagonally adapted variant ran, of the tuned error "
            "rate, and the games where the tuned mean is "
            "below AdaGrad's, beside the same two statistics of Luo 2016, Table D.3, over its 23 "
            "LIBSVM/UCI datasets (which do not ship with this package; our games are stand-ins).",
            text_columns={0, 1},
        )
    ]


def sketch_table(rows: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per game, player, k and reading round: mean and t-interval of ``sketch_error``.

    The reading rounds are the first checkpoints at or after :data:`SKETCH_CHECKPOINTS` and T.

    Examples
    --------
    >>> rows = pd.DataFrame({"metric": "sketch_error", "game_label": "g", "player_label": "p",
    ...     "param": 10.0, "horizon": 200, "t": [100, 100, 200, 200], "replicate": [0, 1] * 2,
    ...     "value": [0.5, 0.3, 0.2, 0.2]})
    >>> sketch_table(rows)[["t", "mean"]].values.tolist()
    [[100.0, 0.4], [200.0, 0.2]]
    """
    sub = rows.loc[(rows["metric"] == "sketch_error").to_numpy()]
    out = []
    for horizon, part in sub.groupby("horizon", observed=True):
        ts = np.unique(part["t"].to_numpy())
        reads = {int(horizon)}
        for c in SKETCH_CHECKPOINTS:
            later = ts[ts >= c]
            if len(later):
                reads.add(int(later[0]))
        out.append(part[part["t"].isin(sorted(reads))])
    if not out:
        return pd.DataFrame(columns=["game_label", "player_label", "param", "t", "mean"])
    picked = pd.concat(out)
    picked = picked.assign(
        game_label=picked["game_label"].astype(str),
        player_label=picked["player_label"].astype(str),
        value=picked["value"].astype(float).where(np.isfinite(picked["value"])),
    )
    return stats.grouped_mean_ci(
        picked, ["game_label", "player_label", "param", "t"], level=level
    ).astype({"t": float})


def _sketch_blocks(ctx: ReportContext) -> list[Block]:
    if "sketch_error" not in ctx.logged:
        return []
    table = sketch_table(ctx.rows, ctx.level)
    if table.empty:
        return []
    ctx.write_csv("sketch eigenvalue error", table, "sketch_error.csv")
    ts = sorted(set(table["t"].astype(int)))
    cell = table.set_index(["game_label", "player_label", "param", "t"])
    body = []
    for game, player, k in table[["game_label", "player_label", "param"]].drop_duplicates().values:
        line = [str(game), str(player), str(int(k))]
        for t in ts:
            if (game, player, k, float(t)) not in cell.index:
                line.append("—")
                continue
            r = cell.loc[(game, player, k, float(t))]
            half = (r["ci_high"] - r["ci_low"]) / 2
            line.append(num(r["mean"], 3) + (f" ± {num(half, 2)}" if np.isfinite(half) else ""))
        body.append(line)
    blocks: list[Block] = [
        Para(
            f"{code('sketch_error')} (k) is the largest relative error "
            f"max_(i≤k) |λ̂_i − λ_i|/λ_i among the top k eigenvalues of Σ_s ĝ_sĝ_sᵀ (the "
            f"to-sketch gradients) estimated by the player's sketch. Luo 2016, Figure 4.1, plots "
            f"it for Oja's sketch with k = 10 on its synthetic data and says it \"drops quickly "
            f'after seeing just 500 examples" (no numbers); its Table 4.1 reports, on real '
            f"datasets not available here, largest relative errors from "
            f"{min(LUO_2016_TABLE_4_1.values()):.2f} (ijcnn1) to "
            f"{max(LUO_2016_TABLE_4_1.values()):.2f} (magic04), in unstated units."
        ),
        Table(
            ["game", "player", "k", *(f"t = {t}" for t in ts)],
            body,
            caption=f"Largest relative error among the top-k eigenvalues at a few rounds (the "
            f"first checkpoints from 100, 500 and 1000 on, and T): mean over replicates ± the "
            f"half-width of its {ctx.pct} t-interval (a replicate whose error is infinite, an "
            f"eigenvalue estimated where the exact one is 0 or the reverse, is left out).",
            text_columns={0, 1},
        ),
    ]
    kmax = float(
        np.nanmax(ctx.rows.loc[(ctx.rows["metric"] == "sketch_error").to_numpy(), "param"])
    )
    curves = stats.curve_summary(ctx.rows, "sketch_error", ctx.level)
    # from t = k on: before it G_tᵀG_t has fewer than k nonzero eigenvalues, which a sketch
    # with room for them gets exactly (errors of 1e-16 that would flatten a log axis)
    keep = (curves["param"] == kmax) & np.isfinite(curves["mean"]) & (curves["t"] >= kmax)
    curves = curves[keep]
    games = [g for g in ctx.games if g in set(curves["game"])]
    if len(curves):
        blocks.append(
            ctx.add_figure(
                curves_figure(
                    "sketch_error_vs_t",
                    curves,
                    games,
                    ylabel=f"sketch_error (k = {int(kmax)})",
                    caption=f"Largest relative error among the top {int(kmax)} eigenvalues of "
                    f"the sketch against the round t ≥ {int(kmax)}, mean with {ctx.pct} t-band "
                    f"(rounds where a replicate's error is infinite are left out). Luo 2016, "
                    f"Figure 4.1.",
                    **ctx.figure_style(),
                )
            )
        )
    return blocks


THEOREMS = {
    "full": "Luo 2016, Theorem 16",
    "fd": "Luo 2016, Theorem 18 (best k < m)",
    "fd_epoch": "Luo 2016, Theorem 18 (best k < m) with 2m rows (§4.5.2)",
}
"""The result whose bound ``son`` declares, by sketch
(:meth:`arena.players.son.SON.regret_bound`)."""

THEOREM_TERMS = {
    "full": "(α/2)‖w‖² + 2(CL)²Σ_t η_t + d/(2(σ+η_T))·ln(1 + (σ+η_T)Σ_t‖g_t‖²/(dα))",
    "fd": "(α/2)‖w‖² + m/(2(σ+η_T))·ln(1 + tr(S_TᵀS_T)/(mα)) "
    "+ min_(k<m) mΩ_k/(2(m−k)(σ+η_T)α) + 2(CL)²Σ_t η_t, Ω_k = Σ_(i>k) λ_i(Σ_t ĝ_tĝ_tᵀ)",
    "fd_epoch": "the fd bound with 2m for m in the logarithmic term",
}
"""Each bound as the player evaluates it (Luo 2016, §4.3 and §4.4.2; Thm 18 holds for each
k < m, and the metric passes the spectrum of ``Σ_t ĝ_tĝ_tᵀ`` so the least of them is taken)."""


def theorem_table(ratios: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """The ``invariant_regret`` rows of a measured / bound table, with the theorem of each.

    ``ratios``: :func:`arena.reporting.stats.bound_ratios`; ``cells``: one row per cell with
    ``player_label``, ``player`` and ``player_params``. Returns ``game, player, sketch, theorem,
    n, value, bound, ratio_mean, ratio_ci_low, ratio_ci_high, ratio_max`` (``value`` and
    ``bound``: means over replicates at T).

    Examples
    --------
    >>> ratios = pd.DataFrame({"game": "g", "player": ["son(sketch=fd)", "x"],
    ...     "metric": ["invariant_regret", "regret"], "n": 2, "value": [1.0, 2.0],
    ...     "bound": 10.0, "ratio_mean": [0.1, 0.2], "ratio_ci_low": 0.0, "ratio_ci_high": 0.3,
    ...     "ratio_max": [0.15, 0.3]})
    >>> cells = pd.DataFrame({"player_label": ["son(sketch=fd)"], "player": ["son"],
    ...     "player_params": ['{"sketch":"fd"}']})
    >>> theorem_table(ratios, cells)[["sketch", "theorem", "ratio_max"]].values.tolist()
    [['fd', 'Luo 2016, Theorem 18 (best k < m)', 0.15]]
    """
    part = ratios[ratios["metric"].astype(str) == "invariant_regret"]
    sketches = {
        str(label): str(parse_params(str(params)).get("sketch"))
        for label, player, params in cells[["player_label", "player", "player_params"]].values
        if str(player) == "son"
    }
    part = part.assign(sketch=part["player"].astype(str).map(sketches))
    part = part[part["sketch"].isin(list(THEOREMS))]
    part = part.assign(theorem=part["sketch"].map(THEOREMS))
    columns = ["game", "player", "sketch", "theorem", "n", "value", "bound"]
    columns += ["ratio_mean", "ratio_ci_low", "ratio_ci_high", "ratio_max"]
    return part[columns].reset_index(drop=True)


def _theorem_blocks(ctx: ReportContext) -> list[Block]:
    if not {"invariant_regret", "bound:invariant_regret"} <= ctx.logged:
        return []
    table = theorem_table(stats.bound_ratios(ctx.rows, ctx.level), ctx.src.cells)
    if table.empty:
        return []
    ctx.write_csv("Theorems 16 and 18: measured / bound", table, "theorem_bounds.csv")
    body = [
        [
            str(r.game),
            str(r.player),
            str(r.theorem),
            num(r.value),
            num(r.bound),
            f"{num(r.ratio_mean, 3)} [{num(r.ratio_ci_low, 3)}, {num(r.ratio_ci_high, 3)}]",
            num(r.ratio_max, 3),
        ]
        for r in table.itertuples(index=False)
    ]
    terms = "; ".join(f"{code(k)}: {v}" for k, v in THEOREM_TERMS.items())
    return [
        Para(
            "Luo 2016's regret bounds for Sketched Online Newton hold for every comparator of the "
            "invariant set K = {w : |⟨w, x_t⟩| ≤ C for every t} (§4.1, Eq. 4.1) on every "
            "sequence meeting Assumptions 1 (|ℓ'_t(z)| ≤ L for |z| ≤ C) and 2 (curvature σ). "
            f"{code('invariant_regret')} is the regret to the best comparator of K (found by a "
            "log-barrier solve over the stored examples), and the bound is the theorem's at "
            f"that comparator's norm, on the run's own quantities: {terms}. The thesis has no "
            "experiment for these theorems; the streams and every constant are ours: the "
            "squared loss ½(z − y)² on ±1 labels with C = 1 gives L = C + 1 = 2 and meets "
            "Assumption 2 for any σ ≤ 1/(C + 1)² = 1/4 (our derivation; we run σ = 1/8, η = 0, "
            "the curved regime of Eq. 4.5); Theorem 18 holds for each k < m and is taken at its "
            "best k (the metric keeps Σ_t ĝ_tĝ_tᵀ for its spectrum), and its epoch version's "
            "bound (2m rows in the logarithm, the sketching term with the epoch length m) is "
            "our reading of §4.5.2's \"the exact same guarantee with "
            'the only price of doubling the sketch size". A ratio at most 1 on every '
            "replicate is what the theorems promise; a negative one means the learner did "
            "better than every comparator of K."
        ),
        Table(
            [
                "game",
                "player",
                "theorem",
                "regret (mean)",
                "bound (mean)",
                f"regret / bound (mean, {ctx.pct} CI)",
                "largest ratio",
            ],
            body,
            caption=f"Regret to the best comparator of K over the theorem's bound at T: means "
            f"over replicates, the ratio's {ctx.pct} t-interval and its largest value over the "
            f"replicates.",
            text_columns={0, 1, 2},
        ),
    ]


def second_order(ctx: ReportContext) -> Section | None:
    """The tuned-steps section; ``None`` without a tuned grid's ``mistakes``, ``sketch_error``
    or ``invariant_regret`` rows."""
    blocks = _tuning_blocks(ctx) + _sketch_blocks(ctx) + _theorem_blocks(ctx)
    if not blocks:
        return None
    return Section("Tuned steps and sketches", "tuned-steps", blocks)
