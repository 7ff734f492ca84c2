"""``arena report``: a comparison report built from results files only.

:func:`build_report` (:mod:`arena.reporting.build`) reads a tournament directory, a Hydra
multirun directory or a single run folder (:mod:`arena.reporting.load`), computes the statistics
(:mod:`arena.reporting.stats`), draws the figures (:mod:`arena.reporting.figures`), builds each
section of the report (:mod:`arena.reporting.sections`) and writes, into ``out_dir``:

* ``index.html`` — self-contained (CSS inline, figures embedded as base64 PNG), works offline;
* ``report.md`` — the same content in Markdown, linking the PNG files
  (:mod:`arena.reporting.render`);
* ``figures/<name>.png`` and ``figures/<name>.svg``;
* ``tables/<name>.csv`` — every table shown (and the per-row bound violations);
* ``report-files.json`` — the files above, the only ones a rebuild replaces or deletes
  (:func:`check_report_folder` refuses a non-empty folder that has no such record).

The build holds the folder's lock (a second build into it is refused), writes into a staging
folder inside it and moves the files into place once all are written, so a failed, killed or
disk-full build leaves the previous report (or a folder the next build accepts); a folder or file
of the report that is a symbolic link is refused, never written through.

Every name, parameter, path and error message is escaped in both renderings: a result file cannot
inject markup, HTML or links into the report.

It never re-simulates: the numbers come from the tidy rows and the manifests.

:func:`variant_labels` labels the player variants of any tidy table the way the report's legends
and tables do (:mod:`arena.reporting.labels`), for users' own plots.
"""

from arena.reporting.build import build_report, check_report_folder, check_report_name
from arena.reporting.figures import player_styles
from arena.reporting.labels import variant_labels
from arena.reporting.load import Source, component_labels, load_source

__all__ = [
    "Source",
    "build_report",
    "check_report_folder",
    "check_report_name",
    "component_labels",
    "load_source",
    "player_styles",
    "variant_labels",
]
