"""The reproduction gallery: one row per reproduced result of the sources, pinned and rendered.

``configs/gallery.yaml`` lists the rows. Each row names the source's result, what it shows, our
setup and what differs, the source's number, a verdict, and the **quantities** behind our number:
where each is read in a committed report's CSV tables (``reports/<report>/tables/``), the value
it is pinned to, and the tolerance of that pin. The tolerance is the quantity's 95% confidence
half-width when its table has an interval (a mean over ``k`` independent rows combines their
half-widths as ``sqrt(Σ hᵢ²)/k``); otherwise the row states a tolerance and why.

Three things use the rows:

* :func:`render_table` writes the gallery table into ``reports/README.md`` (between the markers
  :data:`START` and :data:`END`) from the committed CSVs; ``arena reproduce`` calls it after it
  has rebuilt reports, and ``arena reproduce --table`` alone.
* :func:`check_pins` compares each quantity with its pin and names the rows that moved.
* :func:`rerun` plays a row's cells alone (``rerun`` in the row: which players and adversaries of
  which tournament make the number), builds the report over them, and returns the tables folder;
  the slow tests measure the rows there, so that a change of the code that moves a reproduced
  result fails CI and says which row moved.

Examples
--------
>>> rows = load_rows(default_rows())
>>> rows[0].id, rows[0].report
('bbm-learners', 'boosting')
>>> sorted(rows[0].quantities)[:1]
['bbm']
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from arena.apps.hydra_support import config_dir
from arena.errors import ArenaError

START = "<!-- gallery table: written by `arena reproduce --table` from configs/gallery.yaml -->"
END = "<!-- end of gallery table -->"

VERDICTS = ("reproduced", "qualitative", "differs")
ROW_KEYS = (
    "id",
    "report",
    "source",
    "shows",
    "setup",
    "theirs",
    "ours",
    "verdict",
    "why",
    "quantities",
    "rerun",
)
QUANTITY_KEYS = ("table", "where", "column", "agg", "ci", "pin", "tol", "tol_why")
AGGREGATES = ("mean", "max", "min")


@dataclass(frozen=True)
class Quantity:
    """One number behind a gallery row: where it is read, its pin and the pin's tolerance.

    Attributes
    ----------
    name : str
        Its name in the row's ``ours`` format string.
    table : str
        A CSV file of the report's ``tables/`` folder.
    where : mapping
        ``column: value`` filters; a string value may use ``*`` for any characters, ``null``
        selects empty cells, numbers compare to 1e-9 relative.
    column : str
        The column read.
    agg : {None, "mean", "max", "min"}
        How several selected rows become one number (``None``: exactly one row must match).
    ci : (str, str) or None
        The columns of the 95% interval of ``column``, when the table has one.
    pin : float
        The value the quantity is pinned to.
    tol : float or None
        The stated tolerance, required when ``ci`` is absent (then ``tol_why`` says why).
    tol_why : str or None
    """

    name: str
    table: str
    where: Mapping[str, Any]
    column: str
    pin: float
    agg: str | None = None
    ci: tuple[str, str] | None = None
    tol: float | None = None
    tol_why: str | None = None


@dataclass(frozen=True)
class Measurement:
    """A quantity read from a tables folder: its value and, with an interval, the half-width."""

    value: float
    low: float = math.nan
    high: float = math.nan

    @property
    def half_width(self) -> float:
        return max(self.value - self.low, self.high - self.value)


@dataclass(frozen=True)
class GalleryRow:
    """One reproduced result: the source's claim, ours, the verdict, and how ours is measured.

    ``ours`` is a format string over the quantities: ``{NAME}`` is the value and ``{NAME_lo}``,
    ``{NAME_hi}``, ``{NAME_hw}`` its interval and half-width (for a quantity without interval,
    value ± its stated tolerance; ``str.format`` specs apply: ``{bbm:.1f}``). ``rerun`` maps a
    tournament of the report (its configuration's name) to the ``players`` and ``adversaries``
    whose cells make the row's numbers.
    """

    id: str
    report: str
    source: str
    shows: str
    setup: str
    theirs: str
    ours: str
    verdict: str
    why: str
    quantities: Mapping[str, Quantity]
    rerun: Mapping[str, Mapping[str, tuple[Any, ...]]] = field(default_factory=dict)

    def link(self) -> str:
        """The markdown link to the row's report, relative to ``reports/README.md``."""
        return f"[{self.report}]({self.report}/report.md)"


def default_rows() -> Path:
    """The gallery's rows shipped with the arena (``configs/gallery.yaml``)."""
    return config_dir() / "gallery.yaml"


def load_rows(path: str | Path, reports: Sequence[str] | None = None) -> list[GalleryRow]:
    """Read and check the gallery's rows; ``reports`` (names) restricts the allowed reports.

    Raises
    ------
    ArenaError
        Naming the file, the row and the key, for an unreadable file, an unknown or missing key,
        a duplicate id, an unknown verdict or report, a quantity without pin, or without interval
        and stated tolerance, or an ``ours`` that names an unknown quantity.
    """
    import yaml

    path = Path(path)
    who = f"gallery rows {path}"
    try:
        node = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        first = next(iter(str(exc).splitlines()), "")
        raise ArenaError(f"{who}: not a readable YAML file ({first})") from None
    if not isinstance(node, dict) or not isinstance(node.get("rows"), list):
        raise ArenaError(f"{who}: must be a mapping with the key rows: a list of rows")
    rows: list[GalleryRow] = []
    for i, entry in enumerate(node["rows"]):
        where = f"{who}, row #{i + 1}"
        if not isinstance(entry, dict) or "id" not in entry:
            raise ArenaError(f"{where}: must be a mapping with an id")
        where = f"{who}, row {entry['id']!r}"
        unknown = sorted(set(entry) - set(ROW_KEYS))
        missing = [k for k in ROW_KEYS if k not in entry and k != "rerun"]
        if unknown or missing:
            bad = unknown[0] if unknown else missing[0]
            what = "unknown" if unknown else "missing"
            raise ArenaError(f"{where}: {what} key {bad!r} (keys: {', '.join(ROW_KEYS)})")
        if any(r.id == entry["id"] for r in rows):
            raise ArenaError(f"{where}: listed twice")
        if entry["verdict"] not in VERDICTS:
            got = entry["verdict"]
            raise ArenaError(f"{where}: verdict must be one of {VERDICTS}, got {got!r}")
        if reports is not None and entry["report"] not in reports:
            raise ArenaError(f"{where}: unknown report {entry['report']!r}")
        quantities = entry["quantities"]
        if not isinstance(quantities, dict) or not quantities:
            raise ArenaError(f"{where}: quantities must be a non-empty mapping")
        parsed = {str(k): _quantity(where, str(k), v) for k, v in quantities.items()}
        _check_format(where, str(entry["ours"]), parsed)
        rerun = entry.get("rerun") or {}
        if not isinstance(rerun, dict) or not all(
            isinstance(v, dict) and set(v) <= {"players", "adversaries"} for v in rerun.values()
        ):
            raise ArenaError(
                f"{where}: rerun must map tournament names to {{players: [...], adversaries: "
                "[...]}}"
            )
        rows.append(
            GalleryRow(
                id=str(entry["id"]),
                report=str(entry["report"]),
                source=str(entry["source"]),
                shows=str(entry["shows"]),
                setup=str(entry["setup"]),
                theirs=str(entry["theirs"]),
                ours=str(entry["ours"]),
                verdict=str(entry["verdict"]),
                why=str(entry["why"]),
                quantities=parsed,
                rerun={
                    str(k): {key: tuple(v.get(key) or ()) for key in ("players", "adversaries")}
                    for k, v in rerun.items()
                },
            )
        )
    return rows


def _quantity(where: str, name: str, entry: Any) -> Quantity:
    """Check one quantity of a row."""
    where = f"{where}, quantity {name!r}"
    if not isinstance(entry, dict):
        raise ArenaError(f"{where}: must be a mapping")
    unknown = sorted(set(entry) - set(QUANTITY_KEYS))
    if unknown:
        raise ArenaError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(QUANTITY_KEYS)})")
    for key in ("table", "column", "pin"):
        if key not in entry:
            raise ArenaError(f"{where}: missing key {key!r}")
    agg = entry.get("agg")
    if agg is not None and agg not in AGGREGATES:
        raise ArenaError(f"{where}: agg must be one of {AGGREGATES} or absent, got {agg!r}")
    ci = entry.get("ci")
    if ci is not None and (not isinstance(ci, list) or len(ci) != 2):
        raise ArenaError(f"{where}: ci must be the two columns [low, high] of the interval")
    tol = entry.get("tol")
    if ci is None and (tol is None or not entry.get("tol_why")):
        raise ArenaError(
            f"{where}: a quantity without an interval (ci) needs a stated tol and tol_why"
        )
    if tol is not None and not (isinstance(tol, int | float) and tol > 0):
        raise ArenaError(f"{where}: tol must be a positive number, got {tol!r}")
    return Quantity(
        name=name,
        table=str(entry["table"]),
        where=dict(entry.get("where") or {}),
        column=str(entry["column"]),
        pin=float(entry["pin"]),
        agg=agg,
        ci=tuple(ci) if ci is not None else None,
        tol=float(tol) if tol is not None else None,
        tol_why=entry.get("tol_why"),
    )


def _check_format(where: str, text: str, quantities: Mapping[str, Quantity]) -> None:
    """Refuse an ``ours`` format string naming a field that is not a quantity's."""
    allowed = {f"{n}{s}" for n in quantities for s in ("", "_lo", "_hi", "_hw")}
    for _, field_name, _, _ in string.Formatter().parse(text):
        if field_name is not None and field_name not in allowed:
            raise ArenaError(f"{where}: ours names {{{field_name}}}, which is not a quantity")


# ----------------------------------------------------------------------------------------------
# measuring


def _pattern(value: str) -> re.Pattern[str]:
    """``*`` is any characters; everything else (brackets included) is literal."""
    return re.compile("^" + ".*".join(re.escape(part) for part in value.split("*")) + "$")


def select_rows(table: pd.DataFrame, where: Mapping[str, Any]) -> pd.DataFrame:
    """The rows of ``table`` matching every ``column: value`` filter of ``where``.

    Examples
    --------
    >>> t = pd.DataFrame({"player": ["hedge(eta=1)", "ftl"], "n": [1.0, float("nan")]})
    >>> select_rows(t, {"player": "hedge*"}).player.tolist()
    ['hedge(eta=1)']
    >>> select_rows(t, {"n": None}).player.tolist()
    ['ftl']
    """
    keep = np.ones(len(table), dtype=bool)
    for column, value in where.items():
        if column not in table.columns:
            known = ", ".join(map(str, table.columns))
            raise ArenaError(f"no column {column!r} (columns: {known})")
        col = table[column]
        if value is None:
            keep &= col.isna().to_numpy()
        elif isinstance(value, bool) or not isinstance(value, int | float):
            text = col.astype(str)
            if isinstance(value, str) and "*" in value:
                keep &= text.str.match(_pattern(value)).to_numpy()
            else:
                keep &= (text == str(value)).to_numpy()
        else:
            numeric = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
            keep &= np.isclose(numeric, float(value), rtol=1e-9, atol=0.0)
    return table[keep]


def measure(quantity: Quantity, tables: str | Path) -> Measurement:
    """Read ``quantity`` from the CSV tables in ``tables`` (a report's ``tables/`` folder).

    Raises
    ------
    ArenaError
        When the table is missing, or the filters select no row (or several, without ``agg``).
    """
    path = Path(tables) / quantity.table
    if not path.is_file():
        raise ArenaError(f"no table {path}")
    table = pd.read_csv(path)
    read = [quantity.column, *(quantity.ci or ())]
    missing = [c for c in read if c not in table.columns]
    try:
        if missing:
            raise ArenaError(f"no column {missing[0]!r} (columns: {', '.join(table.columns)})")
        rows = select_rows(table, quantity.where)
    except ArenaError as exc:
        raise ArenaError(f"{path}: {exc}") from None
    if rows.empty or (quantity.agg is None and len(rows) > 1):
        raise ArenaError(
            f"{path}: the filters {dict(quantity.where)} select {len(rows)} rows"
            + ("" if rows.empty else " (add filters or an agg)")
        )
    values = rows[quantity.column].to_numpy(dtype=float)
    if quantity.ci is None:
        low = high = np.full(len(values), np.nan)
    else:
        low = rows[quantity.ci[0]].to_numpy(dtype=float)
        high = rows[quantity.ci[1]].to_numpy(dtype=float)
    if quantity.agg is None:
        return Measurement(float(values[0]), float(low[0]), float(high[0]))
    if quantity.agg == "mean":
        # independent rows: the mean's half-width combines theirs in quadrature
        half = np.maximum(values - low, high - values)
        value = float(values.mean())
        width = float(np.sqrt(np.sum(half**2)) / len(values))
        return Measurement(value, value - width, value + width)
    pick = int(np.argmax(values) if quantity.agg == "max" else np.argmin(values))
    return Measurement(float(values[pick]), float(low[pick]), float(high[pick]))


def tolerance(quantity: Quantity, measurement: Measurement) -> float:
    """The pin's tolerance: the stated one, else the 95% half-width of the measurement."""
    if quantity.tol is not None:
        return quantity.tol
    return measurement.half_width


@dataclass(frozen=True)
class Moved:
    """A quantity out of its pin's tolerance (or unreadable), with the row it belongs to."""

    row: GalleryRow
    quantity: Quantity
    value: float
    tol: float
    error: str | None = None

    def line(self) -> str:
        """One line naming the row, the quantity, the value and the pin."""
        head = f"gallery row {self.row.id!r} ({self.row.source}: {self.row.shows})"
        if self.error is not None:
            return f"{head}: {self.quantity.name} unreadable: {self.error}"
        return (
            f"{head} moved: {self.quantity.name} = {self.value:.6g}, pinned "
            f"{self.quantity.pin:.6g} ± {self.tol:.3g}"
        )


def check_pins(rows: Sequence[GalleryRow], reports_dir: str | Path) -> list[Moved]:
    """Every quantity of ``rows`` whose value in ``reports_dir`` is not within tolerance of its
    pin (a NaN value is out; a pin within ``tol`` of the value is in)."""
    moved: list[Moved] = []
    for row in rows:
        tables = Path(reports_dir) / row.report / "tables"
        for quantity in row.quantities.values():
            try:
                m = measure(quantity, tables)
            except ArenaError as exc:
                moved.append(Moved(row, quantity, math.nan, math.nan, str(exc)))
                continue
            tol = tolerance(quantity, m)
            if not abs(m.value - quantity.pin) <= tol * (1 + 1e-12):
                moved.append(Moved(row, quantity, m.value, tol))
    return moved


# ----------------------------------------------------------------------------------------------
# rendering


def format_ours(row: GalleryRow, reports_dir: str | Path) -> str:
    """The row's ``ours`` text with its quantities measured in ``reports_dir``."""
    tables = Path(reports_dir) / row.report / "tables"
    fields: dict[str, float] = {}
    for name, quantity in row.quantities.items():
        m = measure(quantity, tables)
        if quantity.ci is None:  # no interval: the stated tolerance stands in for it
            m = Measurement(m.value, m.value - quantity.tol, m.value + quantity.tol)
        fields |= {name: m.value, f"{name}_lo": m.low, f"{name}_hi": m.high}
        fields[f"{name}_hw"] = m.half_width
    # typographic minus for negative numbers only (not in names, not in exponents)
    return re.sub(r"(?<![\w.])-(?=\d)", "−", row.ours.format(**fields))


def table_markdown(rows: Sequence[GalleryRow], reports_dir: str | Path) -> str:
    """The gallery table: one line per row, our numbers measured in ``reports_dir``."""
    head = [
        "| source | what it shows | our setup, and what differs | source's number "
        "| ours (95% interval) | verdict | report |",
        "|---|---|---|---|---|---|---|",
    ]
    lines = []
    for row in rows:
        cells = [
            row.source,
            row.shows,
            row.setup,
            row.theirs,
            format_ours(row, reports_dir),
            f"**{row.verdict}**: {row.why}",
            row.link(),
        ]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(head + lines)


def counts(rows: Sequence[GalleryRow]) -> dict[str, int]:
    """How many rows have each verdict."""
    return {v: sum(r.verdict == v for r in rows) for v in VERDICTS}


def render_table(rows: Sequence[GalleryRow], readme: str | Path) -> bool:
    """Write the gallery table into ``readme`` between :data:`START` and :data:`END`.

    The reports are read from the folder holding ``readme``. Returns whether the file changed;
    the write is atomic (a temporary file, then a rename).

    Raises
    ------
    ArenaError
        When ``readme`` lacks the two markers.
    """
    readme = Path(readme)
    text = readme.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise ArenaError(f"{readme}: no gallery markers ({START!r} ... {END!r})")
    before, rest = text.split(START, 1)
    _, after = rest.split(END, 1)
    c = counts(rows)
    summary = (
        f"{len(rows)} rows: {c['reproduced']} reproduced, {c['qualitative']} reproduced "
        f"qualitatively, {c['differs']} differ."
    )
    new = f"{before}{START}\n{summary}\n\n{table_markdown(rows, readme.parent)}\n{END}{after}"
    if new == text:
        return False
    tmp = readme.with_name(f".{readme.name}.tmp")
    tmp.write_text(new, encoding="utf-8")
    tmp.replace(readme)
    return True


# ----------------------------------------------------------------------------------------------
# re-running a row's cells


def _select(entry: Any, selector: Any) -> Any | None:
    """The part of a tournament ``players``/``adversaries`` entry that ``selector`` keeps, or
    None: a registry name keeps every entry of that name whole; ``{name, params, grid}`` keeps
    the entries of that name whose fixed params include ``params``, with their grid restricted
    to the values ``grid`` lists (a grid parameter it does not name keeps all its values)."""
    name = entry if isinstance(entry, str) else entry.get("name")
    if isinstance(selector, str):
        return entry if name == selector else None
    if selector.get("name") != name:
        return None
    params = {} if isinstance(entry, str) else dict(entry.get("params") or {})
    if any(params.get(k) != v for k, v in (selector.get("params") or {}).items()):
        return None
    wanted = selector.get("grid") or {}
    if not wanted:
        return entry
    grid = {} if isinstance(entry, str) else dict(entry.get("grid") or {})
    restricted = {}
    for key, values in grid.items():
        values = list(values) if isinstance(values, list | tuple) else [values]
        keep = [v for v in values if key not in wanted or v in wanted[key]]
        if not keep:
            return None
        restricted[key] = keep
    return {**entry, "grid": restricted}


def rerun_config(config: Any, selection: Mapping[str, Sequence[Any]]) -> Any:
    """``config`` (a :class:`~arena.apps.tournament.TournamentConfig`) restricted to the entries
    ``selection`` names (every entry of a kind it does not name is kept). The cells kept are
    those of the full tournament, with the same seeds (a cell's seed depends on its key only).

    Examples
    --------
    >>> from arena.apps.tournament import TournamentConfig
    >>> cfg = TournamentConfig("t", players=["ftl", {"name": "hedge", "grid": {"eta": [1, 2]}}],
    ...                        adversaries=["fair_coin"])
    >>> small = rerun_config(cfg, {"players": [{"name": "hedge", "grid": {"eta": [2]}}]})
    >>> [c.label() for c in small.cells()]
    ['hedge(eta=2) vs fair_coin']
    """
    from dataclasses import replace

    out = {}
    for kind in ("players", "adversaries"):
        selectors = selection.get(kind) or ()
        entries = list(getattr(config, kind))
        if selectors:
            kept = []
            for entry in entries:
                for selector in selectors:
                    part = _select(entry, selector)
                    if part is not None:
                        kept.append(part)
                        break
            if not kept:
                raise ArenaError(
                    f"tournament {config.name}: no {kind} entry matches {list(selectors)}"
                )
            entries = kept
        out[kind] = entries
    return replace(config, **out)


def rerun(
    rows: Sequence[GalleryRow],
    report: Any,
    workdir: str | Path,
    *,
    executor: str = "serial",
) -> Path:
    """Play the cells behind ``rows`` (all of one report) alone and build the report over them.

    ``report`` is the :class:`~arena.apps.reproduce.GalleryReport` the rows belong to. For each of
    its tournaments that a row names in ``rerun``, the union of the rows' selections is played
    into ``workdir`` (the folders keep the report's layout), then the report is built into
    ``workdir/report``. Returns its ``tables`` folder, where :func:`measure` reads the rows.
    """
    from arena.apps.tournament import Tournament
    from arena.reporting import build_report

    workdir = Path(workdir)
    wanted: dict[str, dict[str, list[Any] | None]] = {}
    for row in rows:
        if row.report != report.name:
            raise ArenaError(
                f"gallery row {row.id!r} belongs to {row.report!r}, not {report.name!r}"
            )
        for config_name, selection in row.rerun.items():
            union = wanted.setdefault(config_name, {"players": [], "adversaries": []})
            for kind in ("players", "adversaries"):
                if union[kind] is None or not selection[kind]:
                    union[kind] = None  # a row that selects none of a kind needs all of them
                    continue
                union[kind] += [s for s in selection[kind] if s not in union[kind]]
    by_name = {t.source.stem: t for t in report.tournaments}
    results = workdir / "results"
    for config_name, selection in wanted.items():
        if config_name not in by_name:
            raise ArenaError(
                f"report {report.name!r} has no tournament {config_name!r} "
                f"(it has: {', '.join(by_name)})"
            )
        entry = by_name[config_name]
        config = rerun_config(entry.config(), selection)
        try:  # keep the report's layout: its tournaments' folders under its results folder
            folder = results / Path(entry.out).relative_to(report.results)
        except ValueError:
            folder = results / entry.out
        result = Tournament(config, folder, executor=executor).run()
        if result.failed:
            raise ArenaError(f"tournament {config_name}: {len(result.failed)} cell(s) failed")
    build_report(results, workdir / "report", name=report.name, metrics=report.metrics)
    return workdir / "report" / "tables"


__all__ = [
    "END",
    "START",
    "GalleryRow",
    "Measurement",
    "Moved",
    "Quantity",
    "check_pins",
    "counts",
    "default_rows",
    "format_ours",
    "load_rows",
    "measure",
    "render_table",
    "rerun",
    "rerun_config",
    "select_rows",
    "table_markdown",
    "tolerance",
]
