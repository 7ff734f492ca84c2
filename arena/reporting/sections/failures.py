"""The "Failures" section: cells that raised, with their errors and tracebacks, and results files
that could not be read."""

from __future__ import annotations

import pandas as pd

from arena.reporting.render import Block, Details, Para, Table
from arena.reporting.sections.context import ReportContext, Section, Verdict, item_name
from arena.reporting.sections.formatting import first_line, plural


def failures(ctx: ReportContext) -> Section:
    """The failures section: a red table of the failed cells and their tracebacks, if any."""
    fail = ctx.src.failures
    ctx.write_csv("failures", fail, "failures.csv")
    blocks: list[Block] = []
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
                        first_line(r.error),
                    ]
                    for r in fail.itertuples()
                ],
                caption=plural(len(fail), "failed cell"),
                bad_rows=set(range(len(fail))),
                text_columns={0, 1, 2, 5},
                anchor="failures-table",
            )
        )
        for r in fail.itertuples():
            blocks.append(
                Details(
                    f"{r.cell}: {r.player_label} vs {r.adversary_label} — {first_line(r.error)}",
                    f"{r.error}\n\n{r.traceback or ''}".rstrip(),
                    bad=True,
                )
            )
    else:
        blocks.append(Para("No cell failed.", ok=True))
    skipped = ctx.src.unreadable
    if skipped:
        blocks.append(
            Table(
                ["file", "why it was skipped"],
                [[str(path.relative_to(ctx.src.root)), why] for path, why in skipped],
                caption=plural(len(skipped), "results file")
                + " skipped; the report shows the rest",
                bad_rows=set(range(len(skipped))),
                text_columns={0, 1},
                anchor="unreadable-files",
            )
        )
    verdicts = [
        Verdict(
            "Failed cells",
            "failures",
            [
                item_name(r.cell, f"{r.player_label} vs {r.adversary_label}")
                for r in fail.itertuples()
            ],
        )
    ]
    if skipped:
        verdicts.append(
            Verdict(
                "Results files skipped",
                "failures",
                [str(path.relative_to(ctx.src.root)) for path, _ in skipped],
            )
        )
    return Section("Failures", "failures", blocks, verdicts=verdicts)
