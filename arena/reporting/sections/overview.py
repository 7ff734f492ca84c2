"""The "Overview" section: what was read (the verdicts are the report's summary, above it)."""

from __future__ import annotations

import numpy as np

from arena.reporting import stats
from arena.reporting.render import Block, Para, code
from arena.reporting.sections.context import ReportContext, Section, Verdict
from arena.reporting.sections.formatting import int_range


def overview(ctx: ReportContext) -> Section:
    """The overview section: the source's size, players, games, metrics logged and missing."""
    src, rows, games = ctx.src, ctx.rows, ctx.games
    n_units = rows.groupby(["game_label", *stats.UNIT], observed=True).ngroups
    total_wall = float(np.nansum(src.cells["wall_time_s"].to_numpy(float)))
    ctx.run_blocks.append(
        Para(f"Total cell wall time: {total_wall:.1f} s ({len(src.cells)} cells).")
    )
    horizon = sorted(set(src.games.horizon.tolist()))
    n_actions = sorted(set(src.games.n_actions.tolist()))
    blocks: list[Block] = [
        Para(
            f"Partial report: {p.describe()}. The tables and figures below show the finished "
            "cells only.",
            bad=True,
        )
        for p in src.incomplete
    ]
    blocks += [
        Para(
            f"Source: {code(src.root)} — {len(src.cells)} cells "
            f"({len(src.player_labels)} players × {len(games)} games), "
            f"{int_range(src.cells['replicates'])} replicates per cell "
            f"({n_units} (game, seed, replicate) units), horizon T = "
            f"{', '.join(map(str, horizon))}, N = {', '.join(map(str, n_actions))}; "
            f"{rows['t'].nunique()} checkpoints; {len(rows):,} rows from {len(src.files)} "
            "results files."
        ),
        Para(
            f"Players: {', '.join(src.player_labels)}. Games: {', '.join(games)}. Metrics logged: "
            f"{', '.join(sorted(ctx.logged))}."
        ),
    ]
    missing = [m for m in ctx.metrics if m not in ctx.logged]
    if missing:
        blocks.append(
            Para(f"Requested metrics not in the results: {', '.join(missing)}.", note=True)
        )
    if not any(m.startswith("bound:") for m in ctx.logged):
        blocks.append(
            Para(f"No player declared a bound (no {code('bound:<metric>')} rows).", note=True)
        )
    unfinished = [p.describe() for p in src.incomplete]
    verdicts = [Verdict("Unfinished tournaments", "overview", unfinished)] if unfinished else []
    return Section("Overview", "overview", blocks, verdicts=verdicts)
