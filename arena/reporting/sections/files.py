"""The "Files" section: links to every table and figure the other sections wrote."""

from __future__ import annotations

import time

from arena.reporting.render import Block, Links, Para
from arena.reporting.sections.context import RUN_DIR, ReportContext, Section


def files(ctx: ReportContext) -> Section:
    """The files section: links to every CSV table and figure file, and to the build's record
    (whose last line is the build time).

    It must be built last, once every other section has written its files.
    """
    blocks: list[Block] = [
        Links(sorted(ctx.tables.items()), "Tables (CSV): "),
        Links(
            [
                (f"{f.name}.{k}", f"figures/{f.name}.{k}")
                for f in ctx.figures
                for k in ("png", "svg")
            ],
            "Figures: ",
        ),
    ]
    blocks.append(
        Para(
            f"This build's git revisions, wall times and build time: {RUN_DIR}/report.md "
            f"(rewritten by every build, unlike the rest when the results are the same).",
            note=True,
        )
    )
    elapsed = time.perf_counter() - ctx.started
    ctx.run_blocks.append(Para(f"Report built in {elapsed:.1f} s by regret-arena.", note=True))
    return Section("Files", "files", blocks)
