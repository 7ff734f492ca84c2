"""The "Provenance" section: where the results came from.

What a rerun of the same configuration changes (each cell's wall time, the git revision it ran at)
goes to the build's record (``run/report.md``, ``run/cells.csv``) rather than into the report, so
that rebuilding unchanged results on an unchanged tree rewrites the report byte for byte.
"""

from __future__ import annotations

import json

from arena.reporting.load import source_revision
from arena.reporting.render import Block, Details, Para, Table, code
from arena.reporting.sections.context import RUN_DIR, ReportContext, Section
from arena.reporting.sections.formatting import num

RUN_COLUMNS = ["cell", "run_id", "wall_time_s", "git_revision"]
"""The columns of ``cells.csv`` that a rerun changes: they go to ``run/cells.csv``."""
CELL_COLUMNS = [
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


def provenance(ctx: ReportContext) -> Section:
    """The provenance section: configuration, package versions, one line per cell; the git
    revisions and wall times in the build's record.

    The configuration is the tournament's (or each run's), the versions those the cell manifests
    record. ``cells.csv`` holds every column of the cells but :data:`RUN_COLUMNS`' last two,
    which ``run/cells.csv`` holds with the cells' ids.
    """
    src = ctx.src
    cells = src.cells
    ctx.write_csv("cells", cells.drop(columns=RUN_COLUMNS[2:]), "cells.csv")
    run_csv = ctx.write_run_csv(cells[RUN_COLUMNS], "cells.csv")
    blocks: list[Block] = [
        Para(
            f"The git revision each cell ran at and its wall time are in the build's record, "
            f"{RUN_DIR}/report.md and {run_csv}: a rerun changes them and nothing else here."
        )
    ]
    for t in src.tournaments or ([src.tournament] if src.tournament is not None else []):
        blocks.append(
            Para(
                f"Tournament {code(t.get('name', '?'))} (config digest "
                f"{code(t.get('config_digest', 'n/a'))})."
            )
        )
        ctx.run_blocks.append(
            Para(
                f"Tournament {code(t.get('name', '?'))}: git revision "
                f"{code(source_revision(t) or 'unknown')}."
            )
        )
        blocks.append(
            Details(
                f"Tournament configuration of {t.get('name', '?')} (manifest.json → config)",
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
            else ["package", "version"]
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
    ctx.run_blocks.append(
        Para(
            "Git revision: "
            + "; ".join(f"{code(r)} ({n} cells)" for r, n in revs.items())
            + ("." if len(revs) == 1 else " — results from different revisions.")
        )
    )

    def label(r) -> str:
        part = isinstance(r.tournament_cell, str) and r.tournament_cell != r.cell
        return str(r.cell) + (f" (part {r.tournament_cell})" if part else "")

    rows = list(cells[CELL_COLUMNS].itertuples())
    blocks.append(
        Table(
            ["cell", "player", "game", "seed", "replicates", "run_id"],
            [
                [
                    label(r),
                    str(r.player_label),
                    str(r.game_label),
                    str(int(r.seed)),
                    str(int(r.replicates)),
                    str(r.run_id),
                ]
                for r in rows
            ],
            caption="Cells (from their manifests)",
            text_columns={0, 1, 2, 5},
            anchor="cells",
        )
    )
    ctx.run_blocks.append(
        Table(
            ["cell", "player", "game", "wall time (s)", "git revision"],
            [
                [
                    label(r),
                    str(r.player_label),
                    str(r.game_label),
                    num(r.wall_time_s),
                    str(r.git_revision or "unknown"),
                ]
                for r in rows
            ],
            caption="Cells: wall time per cell (from its manifest; replicate blocks summed)",
            text_columns={0, 1, 2, 4},
        )
    )
    return Section("Provenance", "provenance", blocks)
