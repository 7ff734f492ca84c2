"""The state the report's sections share: their inputs, and the tables and figures they write."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from arena.reporting.figures import FigureOut, Style, player_styles, save_figure
from arena.reporting.labels import game_title
from arena.reporting.load import Source
from arena.reporting.render import Block, Figure
from arena.reporting.sections.formatting import int_range

RUN_DIR = "run"
"""The folder, inside a report's, of the build's record: what a rerun of the same results changes
(git revisions, wall times, the build's time). The gallery's reports do not commit it
(``.gitignore``), so that ``arena reproduce`` on an unchanged tree leaves the clone clean."""


# Past this many flagged items a summary line names the first ones and counts the rest.
MAX_NAMED = 8


@dataclass
class Verdict:
    """One check a section made, as the report's summary states it: how many items it covered
    and which it flagged.

    Sections compute it from the same data as their tables (never from rendered text); the
    summary at the head of the report (:func:`arena.reporting.build.summary`) is built from
    these alone.

    Parameters
    ----------
    label : str
        What was checked, e.g. ``"measured / declared bound at T"``.
    anchor : str
        The anchor of the heading that shows the details (the summary line links there).
    flagged : list of str
        The flagged items, each named so that a reader finds its row (e.g. ``game · player ·
        metric``).
    total : int or None
        How many items were checked; None when the check counts only what it flags (failed
        cells).
    passed : str
        The verb of an item that passes (``hold``, ``covered``...), used with ``total``.

    Examples
    --------
    >>> Verdict("bounds", "flags", ["a", "b"], total=72).text()
    '70 of 72 hold; 2 flagged (a; b)'
    >>> Verdict("failed cells", "failures", []).text()
    'none'
    """

    label: str
    anchor: str
    flagged: list[str]
    total: int | None = None
    passed: str = "hold"

    def text(self) -> str:
        """The summary line's text after its label: the counts, then the flagged items."""
        k = len(self.flagged)
        if self.total is None:
            head = str(k) if k else "none"
        else:
            head = f"{self.total - k} of {self.total} {self.passed}" + (
                f"; {k} flagged" if k else ""
            )
        if not k:
            return head
        more = f"; and {k - MAX_NAMED} more" if k > MAX_NAMED else ""
        return f"{head} ({'; '.join(self.flagged[:MAX_NAMED])}{more})"


def item_name(*parts: object) -> str:
    """A flagged item's name in a summary line, e.g. ``bernoulli · exp3 · regret``."""
    return " · ".join(str(p) for p in parts)


@dataclass
class Section:
    """One top-level section of the report: its title, its anchor and its blocks.

    The title goes into the page's navigation and into the section's level-2 heading.
    ``headline`` holds blocks the section gives to the report's head (the key figure, the main
    leaderboard) instead of its own body, ``verdicts`` the checks it made, which the report's
    summary counts; both are optional.
    """

    title: str
    anchor: str
    blocks: list[Block]
    verdicts: list[Verdict] = field(default_factory=list)
    headline: list[Block] = field(default_factory=list)


@dataclass
class ReportContext:
    """Inputs of every section, and the registry of the files they write.

    Parameters
    ----------
    src : Source
        The loaded results.
    metrics : list of str
        The requested leaderboard metrics, ``regret`` first, without duplicates.
    level : float
        Confidence level of every interval.
    fig_dir, tab_dir : Path
        Where figures (PNG and SVG) and tables (CSV) go.
    started : float
        :func:`time.perf_counter` when the build started (the build's record states its time).
    run_dir : Path or None
        Where the build's record goes (:data:`RUN_DIR` beside ``tables/``): what changes from one
        run to the next of the same results (git revisions, wall times, the build's time), kept
        out of the report itself so that a rerun on an unchanged tree rewrites it byte for byte.
        None: ``tab_dir``'s sibling.
    attacks : Path or None
        Where the "Worst cases found" section reads attack outputs (``arena report --attacks``);
        None: ``attacks/`` inside the results folder.

    Attributes
    ----------
    logged : set of str
        Metrics present in the rows.
    styles : dict
        Each player's colour and marker, shared by every figure.
    tables : dict
        Label → relative path of every CSV written so far (the Files section lists them).
    figures : list of FigureOut
        Every figure saved so far, in report order (the Files section lists them).
    written : list of str
        Every file written so far, relative to the report folder: the report's manifest, so
        that a rebuild deletes these files and nothing else.
    run_blocks : list of Block
        The blocks of the build's record (``run/report.md``), in the order sections add them.
    """

    src: Source
    metrics: list[str]
    level: float
    fig_dir: Path
    tab_dir: Path
    started: float
    run_dir: Path | None = None
    attacks: Path | None = None
    logged: set[str] = field(init=False)
    styles: dict[str, Style] = field(init=False)
    tables: dict[str, str] = field(default_factory=dict)
    figures: list[FigureOut] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    run_blocks: list[Block] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.logged = set(map(str, self.rows["metric"].unique()))
        self.styles = player_styles(self.src.player_labels)
        if self.run_dir is None and self.tab_dir is not None:  # a context that writes nothing
            self.run_dir = self.tab_dir.parent / RUN_DIR

    @property
    def rows(self) -> pd.DataFrame:
        """The tidy rows of every cell."""
        return self.src.rows

    @property
    def games(self) -> list[str]:
        """Game labels, in the order tables and figure panels show them."""
        return self.src.game_labels

    @property
    def panel_titles(self) -> dict[str, str]:
        """Game label → its panel title: the adversary with every parameter given, N, and T
        when the games' horizons differ (otherwise the suptitle says T once)."""
        games = self.src.games
        vary_t = games["horizon"].nunique() > 1
        return {
            str(g.game_label): game_title(
                str(g.adversary),
                str(g.adversary_params),
                int(g.n_actions),
                int(g.horizon) if vary_t else None,
            )
            for g in games.itertuples(index=False)
        }

    @property
    def suptitle(self) -> str:
        """The line heading every figure: the horizon T and the replicates per cell."""
        horizons = sorted(set(self.src.games["horizon"].tolist()))
        t = f"T = {horizons[0]}" if len(horizons) == 1 else "T in each panel's title"
        reps = self.src.cells["replicates"]
        n = int_range(reps) if len(reps) else "0"
        return f"{t}; {n} replicate{'s' if n != '1' else ''} per cell"

    def figure_style(self) -> dict[str, object]:
        """The keyword arguments every figure of the report takes: players' styles, panel
        titles and the suptitle."""
        return {"styles": self.styles, "titles": self.panel_titles, "suptitle": self.suptitle}

    @property
    def pct(self) -> str:
        """The confidence level as text, e.g. ``95%``."""
        return f"{self.level:.0%}"

    @property
    def board_metrics(self) -> list[str]:
        """The requested metrics that the rows have: each gets a leaderboard."""
        return [m for m in self.metrics if m in self.logged]

    def write_csv(self, label: str, frame: pd.DataFrame, name: str, index: bool = False) -> None:
        """Write ``frame`` as ``tables/<name>`` and list it under ``label``."""
        name = file_name(name)
        self.written.append(f"tables/{name}")
        frame.to_csv(self.tab_dir / name, index=index, float_format="%.10g")
        self.tables[label] = f"tables/{name}"

    def write_run_csv(self, frame: pd.DataFrame, name: str) -> str:
        """Write ``frame`` as ``run/<name>`` (the build's record); return its relative path."""
        name = file_name(name)
        self.run_dir.mkdir(exist_ok=True)
        self.written.append(f"{RUN_DIR}/{name}")
        frame.to_csv(self.run_dir / name, index=False, float_format="%.10g")
        return f"{RUN_DIR}/{name}"

    def add_figure(self, fig: FigureOut) -> Figure:
        """Save ``fig`` under ``figures/``, list it; return the block that shows it."""
        fig.name = file_name(fig.name)
        self.written += [f"figures/{fig.name}.png", f"figures/{fig.name}.svg"]
        saved = save_figure(fig, self.fig_dir)
        self.figures.append(saved)
        return Figure(
            saved.name,
            saved.caption,
            saved.png,
            f"figures/{saved.name}.png",
            f"figures/{saved.name}.svg",
        )


def file_name(name: str) -> str:
    """``name`` as a file name inside its folder: metric names come from results files, so a
    ``/``, a leading ``.`` or any other unusual character becomes ``_``.

    Examples
    --------
    >>> file_name("curves_quantile_regret.csv"), file_name("curves_../../x.csv"), file_name(".a")
    ('curves_quantile_regret.csv', 'curves_.._.._x.csv', '_a')
    """
    return re.sub(r"^\.|[^\w.+=-]", "_", name)
