"""``make demo``: the default tournament (``configs/tournament/demo.yaml``) and its report.

Equivalent to ``arena tournament tournament=demo`` followed by
``arena report outputs/tournaments/demo --name demo``; kept as one command so the quickstart is a
single ``make demo``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.apps.hydra_support import config_dir


def demo_config(**overrides: Any):
    """Return the demo :class:`~arena.apps.tournament.TournamentConfig`, with optional overrides."""
    from omegaconf import OmegaConf

    from arena.apps.tournament import TournamentConfig

    node = OmegaConf.to_container(OmegaConf.load(config_dir() / "tournament" / "demo.yaml"))
    node.update(overrides)
    return TournamentConfig.from_mapping(node)


def run_demo(
    results: Path, report: Path, *, executor: str = "local", progress: bool = False, **overrides
) -> Path:
    """Run (or resume) the demo tournament into ``results`` and write its report into ``report``.

    Returns the path of the report's ``index.html``.
    """
    from arena.apps.tournament import Tournament, describe
    from arena.reporting import build_report, check_report_folder

    check_report_folder(report)  # before the tournament's minutes, not after them
    config = demo_config(**overrides)
    result = Tournament(config, results, executor=executor, progress=progress).run()
    print(describe(result, config))
    index = build_report(results, report, name=report.name)
    print(f"report: {index}\n        {report / 'report.md'}")
    return index
