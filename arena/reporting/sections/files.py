"""The "Files" section: links to every table and figure the other sections wrote."""

from __future__ import annotations

import time

from arena.reporting.render import Block, Links, Para
from arena.reporting.sections.context import ReportContext, Section


def files(ctx: ReportContext) -> Section:
    """The files section: links to every CSV table and figure file, and the build time.

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
    elapsed = time.perf_counter() - ctx.started
    blocks.append(Para(f"Report built in {elapsed:.1f} s by regret-arena.", note=True))
    return Section("Files", "files", blocks)
