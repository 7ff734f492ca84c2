"""``build_report``: load the results, build each section in turn, write the two renderings."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from arena.reporting.load import load_source
from arena.reporting.render import Block, Heading, render_html, render_markdown
from arena.reporting.sections.context import ReportContext
from arena.reporting.sections.failures import failures
from arena.reporting.sections.files import files
from arena.reporting.sections.flags import check_bounds, flags
from arena.reporting.sections.leaderboards import leaderboards
from arena.reporting.sections.methods import methods
from arena.reporting.sections.metric_curves import metric_curves
from arena.reporting.sections.other_notions import other_notions
from arena.reporting.sections.overall import overall
from arena.reporting.sections.overview import overview
from arena.reporting.sections.provenance import provenance
from arena.reporting.sections.regret_curves import regret_curves


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
    ctx = ReportContext(
        src, list(dict.fromkeys(["regret", *metrics])), level, fig_dir, tab_dir, started
    )
    checks = check_bounds(ctx)
    sections = [
        overview(ctx, checks),
        flags(ctx, checks),
        leaderboards(ctx),
        overall(ctx),
        regret_curves(ctx),
        metric_curves(ctx),
        other_notions(ctx),
        failures(ctx),
        provenance(ctx),
        methods(ctx),
        files(ctx),
    ]

    blocks: list[Block] = []
    nav: list[tuple[str, str]] = []
    for section in sections:
        if section is None:
            continue
        nav.append((section.title, section.anchor))
        blocks.append(Heading(section.title, 2, section.anchor))
        blocks += section.blocks
    title = f"regret-arena report: {name}"
    (out / "report.md").write_text(render_markdown(title, blocks), encoding="utf-8")
    index = out / "index.html"
    index.write_text(render_html(title, blocks, nav), encoding="utf-8")
    return index


def _clean(directory: Path, patterns: Sequence[str]) -> None:
    """Remove this report's own stale outputs (figures/tables of an earlier build)."""
    if directory.is_dir():
        for pattern in patterns:
            for p in directory.glob(pattern):
                p.unlink()
    directory.mkdir(parents=True, exist_ok=True)
