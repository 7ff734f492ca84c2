"""The "Flags" section: values above a declared bound, means below a reference lower bound."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from arena.reporting import stats
from arena.reporting.render import Block, Heading, Para, Table, code
from arena.reporting.sections.context import ReportContext, Section, Verdict, item_name
from arena.reporting.sections.formatting import num, param_text

# Past this many flagged checkpoints the page shows the first ones only; the CSV has them all.
MAX_BELOW_SHOWN = 200


@dataclass
class BoundChecks:
    """The results of the bound checks: the overview counts them, the flags section lists them.

    ``violations`` has every row above its declared bound, ``summary`` one line per group of
    them, ``below`` the checkpoints whose mean is below a reference lower bound, ``above`` the
    checkpoints whose mean is above a bound that holds in expectation (bandit players).
    """

    violations: pd.DataFrame
    summary: pd.DataFrame
    below: pd.DataFrame
    above: pd.DataFrame


def check_bounds(ctx: ReportContext) -> BoundChecks:
    """The bound checks of every metric against its ``bound:`` and ``lower_bound:`` rows.

    Their three tables are written as CSV.
    """
    viol = stats.bound_violations(ctx.rows)
    checks = BoundChecks(
        viol,
        stats.summarize_violations(viol),
        stats.lower_bound_violations(ctx.rows),
        stats.expected_bound_violations(ctx.rows),
    )
    ctx.write_csv("bound violations (every row)", checks.violations, "bound_violations.csv")
    ctx.write_csv("bound violations (summary)", checks.summary, "bound_violations_summary.csv")
    ctx.write_csv("below reference lower bound", checks.below, "below_lower_bound.csv")
    if any(stats.in_expectation(ctx.rows)):
        ctx.write_csv("above a bound in expectation", checks.above, "above_expected_bound.csv")
    return checks


def flags(ctx: ReportContext, checks: BoundChecks) -> Section:
    """The flags section: bound violations, then means below a reference lower bound."""
    blocks: list[Block] = [
        Para(
            f"A row violates its bound when {code('value > bound + 1e-9·max(1, |bound|)')}, "
            f"comparing each metric with the player's {code('bound:<metric>')} row of the same "
            "cell, seed, replicate, round and parameter. Bandit players' bounds hold in "
            "expectation over the arena's draws, so their rows are checked on the mean instead "
            "(below)."
        )
    ]
    viol_sum = checks.summary
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
                        param_text(r.metric, r.param),
                        str(r.rows),
                        r.replicates,
                        str(r.first_t),
                        num(r.excess),
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
    if any(stats.in_expectation(ctx.rows)):
        blocks += _above_in_expectation(checks.above)
    blocks.append(Heading("Below reference lower bound", 3, "below-lower-bound"))
    blocks.append(
        Para(
            "A checkpoint is flagged when a player's mean is below the adversary's reference lower "
            f"bound ({code('lower_bound:<metric>')}, averaged over replicates) by more than a "
            f"CLT margin {code('q · s/√n')} (plus 1e-9 relative), q the one-sided t quantile at "
            f"1 − {1 - stats.LOWER_BOUND_LEVEL:g}/K with K the cell's checkpoints (Bonferroni: "
            "a cell at its bound is wrongly flagged with probability ≤ "
            f"{1 - stats.LOWER_BOUND_LEVEL:g}); at least two replicates are needed."
        )
    )
    below = checks.below
    if len(below):
        shown = below.head(MAX_BELOW_SHOWN)
        blocks.append(
            Table(
                ["game", "player", "cell", "metric", "t", "mean", "lower bound", "margin", "n"],
                [
                    [
                        r.game,
                        r.player,
                        r.cell,
                        param_text(r.metric, r.param),
                        str(int(r.t)),
                        num(r.mean),
                        num(r.lower_bound),
                        num(r.margin),
                        str(int(r.n)),
                    ]
                    for r in shown.itertuples()
                ],
                caption="Below reference lower bound"
                + (
                    f" (first {MAX_BELOW_SHOWN} of {len(below)})"
                    if len(below) > MAX_BELOW_SHOWN
                    else ""
                ),
                bad_rows=set(range(len(shown))),
                text_columns={0, 1, 2, 3},
            )
        )
    elif any(m.startswith("lower_bound:") for m in ctx.logged):
        blocks.append(Para("None.", ok=True))
    else:
        blocks.append(Para("No adversary declared a lower bound.", note=True))
    return Section("Flags: bound violations", "flags", blocks, verdicts=verdicts(ctx, checks))


def verdicts(ctx: ReportContext, checks: BoundChecks) -> list[Verdict]:
    """The summary's lines of the bound checks: per (game, player, metric, param) with a
    declared (or reference) bound, whether any of its rows or checkpoints was flagged."""
    rows, expect = ctx.rows, stats.in_expectation(ctx.rows)
    keys = ["game_label", "player_label", "metric", "param"]
    # the groups once (the rows may be millions); a group's rows share their protocol
    groups = rows[keys].assign(_e=expect).drop_duplicates()
    expect_g = groups.pop("_e").to_numpy()
    lines = [
        (
            "Declared bounds, every round and replicate",
            "flags",
            checks.summary,
            ~expect_g,
            "bound:",
        ),
        (
            "Bounds in expectation (bandit players), mean at every checkpoint",
            "above-expected-bound",
            checks.above,
            expect_g,
            "bound:",
        ),
        (
            "Reference lower bounds, mean at every checkpoint",
            "below-lower-bound",
            checks.below,
            np.ones(len(groups), dtype=bool),
            "lower_bound:",
        ),
    ]
    out = []
    for label, anchor, flagged, mask, prefix in lines:
        total = _checked(groups.loc[mask], prefix)
        if total:  # a check with nothing to check says nothing
            out.append(Verdict(label, anchor, _flagged(flagged), total=total))
    return out


def _flagged(table: pd.DataFrame) -> list[str]:
    """The (game, player, metric, param) groups of a table of flagged rows, in its order."""
    keys = table[["game", "player", "metric", "param"]].itertuples(index=False, name=None)
    return list(dict.fromkeys(item_name(g, p, param_text(m, q)) for g, p, m, q in keys))


def _checked(groups: pd.DataFrame, prefix: str) -> int:
    """How many of the distinct (game, player, metric, param) ``groups`` of the rows have
    ``<prefix><metric>`` rows beside rows of the metric itself: the groups a check covers."""
    names = groups["metric"].astype(str)
    ref = names.str.startswith(prefix).to_numpy()
    keys = ["game_label", "player_label", "param"]
    measured = groups.loc[~ref, keys].assign(metric=names[~ref].to_numpy())
    declared = groups.loc[ref, keys].assign(metric=names[ref].str.removeprefix(prefix).to_numpy())
    return len(declared.merge(measured, on=[*keys, "metric"], how="inner"))


def _above_in_expectation(above: pd.DataFrame) -> list[Block]:
    """The subsection of the bounds that hold in expectation: means above them."""
    blocks: list[Block] = [
        Heading("Above a bound in expectation", 3, "above-expected-bound"),
        Para(
            "A bandit player's declared bound holds for the expectation of its metric. A "
            "checkpoint is flagged when the mean over replicates exceeds the bound (averaged "
            f"over replicates) by more than a CLT margin {code('q · s/√n')} (plus 1e-9 "
            f"relative), q the one-sided t quantile at 1 − {1 - stats.LOWER_BOUND_LEVEL:g}/K "
            "with K the cell's checkpoints (a player whose expectation sits at its bound is "
            f"wrongly flagged with probability ≤ {1 - stats.LOWER_BOUND_LEVEL:g} per cell); "
            "single replicates may exceed it."
        ),
    ]
    if not len(above):
        blocks.append(Para("None.", ok=True))
        return blocks
    shown = above.head(MAX_BELOW_SHOWN)
    blocks.append(
        Table(
            ["game", "player", "cell", "metric", "t", "mean", "bound", "margin", "n"],
            [
                [
                    r.game,
                    r.player,
                    r.cell,
                    param_text(r.metric, r.param),
                    str(int(r.t)),
                    num(r.mean),
                    num(r.bound),
                    num(r.margin),
                    str(int(r.n)),
                ]
                for r in shown.itertuples()
            ],
            caption="Above a bound in expectation",
            bad_rows=set(range(len(shown))),
            text_columns={0, 1, 2, 3},
        )
    )
    return blocks
