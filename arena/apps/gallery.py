"""The reproduction gallery: one row per checked result, its verdict computed by a stated rule.

``configs/gallery.yaml`` lists the rows. Each row names the published result, what it shows, our
setup and what differs, the source's number, the **rule** it claims (:data:`RULES`) with the
**tests** that decide it, the verdict those tests give (pinned), and the **quantities** behind
our number: where each is read in a committed report's CSV tables (``reports/<report>/tables/``),
the value it is pinned to, and the tolerance of that pin. The tolerance is the quantity's 95%
confidence half-width when its table has an interval (a mean over ``k`` independent rows
combines their half-widths as ``sqrt(Σ hᵢ²)/k``); otherwise the row states a tolerance and why,
and the tolerance stands in for the interval.

A row's verdict is computed, never declared (:func:`verdict`): the claimed rule when every one
of its tests passes (:func:`run_test`), *differs* otherwise.

* *reproduced*: the source's number lies in our 95% interval (``contains``; with ``rel_tol``,
  our interval may instead lie within that relative distance of it);
* *bound holds*: a measured/bound ratio, the largest over the replicates, is at most 1
  (``at_most``); for a bound on an expectation (a randomized player's, e.g. Luo 2016,
  Theorem 21), where one replicate above it is no violation, the upper end of the mean ratio's
  95% interval;
* *by construction* / *sanity*: the agreement follows from the setup (the row says why in
  ``reason``); the tests still check that it does;
* *qualitative*: a stated pattern, checked by its tests: an ordering whose intervals do not
  overlap (``ordered``), a value within a stated range (``within``), an interval above a
  threshold (``above``), two values equal (``equal``), a value at most a bound (``at_most``).

Rows about results outside the sources (classical results the lab checks) carry
``table: classical`` and are rendered in a table of their own.

Four things use the rows:

* :func:`render_table` writes the two tables into ``reports/README.md`` (between the markers
  :data:`START` and :data:`END`) from the committed CSVs; ``arena reproduce`` calls it after it
  has rebuilt reports, and ``arena reproduce --table`` alone.
* :func:`check_pins` compares each quantity with its pin and names the rows that moved.
* :func:`check_verdicts` names the rows whose computed verdict is not the pinned one.
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
>>> rows[0].rule, [t.kind for t in rows[0].tests]
('by construction', ['contains', 'at_most'])
"""

from __future__ import annotations

import itertools
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

RULES = ("reproduced", "bound holds", "by construction", "sanity", "qualitative")
"""The verdicts a row may claim; each is granted only when the row's tests pass."""
VERDICTS = (*RULES, "differs")
TABLES = ("sources", "classical")
"""``sources``: the results of the sources; ``classical``: classical results the lab checks."""
TESTS = ("contains", "at_most", "within", "above", "ordered", "equal")
RULE_TESTS = {"reproduced": ("contains",), "bound holds": ("at_most",)}
"""The tests a rule is restricted to (the others take any)."""
ROW_KEYS = (
    "id",
    "report",
    "table",
    "source",
    "shows",
    "setup",
    "theirs",
    "ours",
    "rule",
    "reason",
    "tests",
    "verdict",
    "why",
    "quantities",
    "rerun",
)
OPTIONAL_KEYS = ("table", "reason", "rerun")
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
class RuleTest:
    """One test of a row's rule, over some of its quantities.

    Attributes
    ----------
    kind : str
        One of :data:`TESTS`:

        * ``contains``: ``value`` (the source's number) lies in the quantity's 95% interval, or,
          with ``rel_tol``, the interval lies within ``rel_tol·|value|`` of it;
        * ``at_most``: the quantity's value is at most ``value`` (for *bound holds*, a
          measured/bound ratio read as the largest over the replicates, or the upper end of
          the mean ratio's 95% interval for a bound on an expectation, and ``value`` = 1);
        * ``within``: each quantity's value lies in ``[low, high]``;
        * ``above``: each quantity's whole interval lies above ``value``;
        * ``ordered``: each quantity's interval lies above the next one's (its low end exceeds
          ``factor`` times the next's high end): a decreasing order, intervals apart;
        * ``equal``: the quantities' values are equal (to 1e-12 relative).
    quantities : tuple of str
        The quantities tested, in order.
    value, low, high, rel_tol : float or None
        The test's numbers (see ``kind``).
    factor : float
        ``ordered``'s factor (1: plain non-overlap).
    """

    kind: str
    quantities: tuple[str, ...]
    value: float | None = None
    low: float | None = None
    high: float | None = None
    rel_tol: float | None = None
    factor: float = 1.0


@dataclass(frozen=True)
class Outcome:
    """A test's result: whether it passed, and the comparison in words (``31 ∈ [30.8, 32.8]``)."""

    test: RuleTest
    passed: bool
    text: str


@dataclass(frozen=True)
class GalleryRow:
    """One checked result: the source's claim, ours, the rule and its tests, how ours is measured.

    ``verdict`` is the pinned outcome of the tests (:func:`verdict` computes it). ``ours`` is a
    format string over the quantities: ``{NAME}`` is the value and ``{NAME_lo}``,
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
    rule: str
    tests: tuple[RuleTest, ...]
    verdict: str
    why: str
    quantities: Mapping[str, Quantity]
    rerun: Mapping[str, Mapping[str, tuple[Any, ...]]] = field(default_factory=dict)
    table: str = "sources"
    reason: str = ""

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
        a duplicate id, an unknown rule, verdict, table or report, a rule without tests (or with
        a test it does not allow), a *by construction* or *sanity* row without its reason, a
        test naming an unknown quantity, a quantity without pin, or without interval and stated
        tolerance, or an ``ours`` that names an unknown quantity.
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
        missing = [k for k in ROW_KEYS if k not in entry and k not in OPTIONAL_KEYS]
        if unknown or missing:
            bad = unknown[0] if unknown else missing[0]
            what = "unknown" if unknown else "missing"
            raise ArenaError(f"{where}: {what} key {bad!r} (keys: {', '.join(ROW_KEYS)})")
        if any(r.id == entry["id"] for r in rows):
            raise ArenaError(f"{where}: listed twice")
        if entry["rule"] not in RULES:
            raise ArenaError(f"{where}: rule must be one of {RULES}, got {entry['rule']!r}")
        if entry["verdict"] not in VERDICTS:
            got = entry["verdict"]
            raise ArenaError(f"{where}: verdict must be one of {VERDICTS}, got {got!r}")
        if entry["verdict"] not in (entry["rule"], "differs"):
            raise ArenaError(
                f"{where}: verdict {entry['verdict']!r} is neither its rule "
                f"{entry['rule']!r} nor 'differs'"
            )
        table = entry.get("table", "sources")
        if table not in TABLES:
            raise ArenaError(f"{where}: table must be one of {TABLES}, got {table!r}")
        if entry["rule"] in ("by construction", "sanity") and not entry.get("reason"):
            raise ArenaError(f"{where}: a {entry['rule']!r} row states its reason")
        if reports is not None and entry["report"] not in reports:
            raise ArenaError(f"{where}: unknown report {entry['report']!r}")
        quantities = entry["quantities"]
        if not isinstance(quantities, dict) or not quantities:
            raise ArenaError(f"{where}: quantities must be a non-empty mapping")
        parsed = {str(k): _quantity(where, str(k), v) for k, v in quantities.items()}
        _check_format(where, str(entry["ours"]), parsed)
        tests = _tests(where, entry["rule"], entry["tests"], parsed)
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
                rule=str(entry["rule"]),
                tests=tests,
                verdict=str(entry["verdict"]),
                why=str(entry["why"]),
                quantities=parsed,
                table=str(table),
                reason=str(entry.get("reason") or ""),
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


def _tests(
    where: str, rule: str, entries: Any, quantities: Mapping[str, Quantity]
) -> tuple[RuleTest, ...]:
    """Check a row's tests: a non-empty list of ``{KIND: {quantity | quantities, ...}}``."""
    if not isinstance(entries, list) or not entries:
        raise ArenaError(f"{where}: tests must be a non-empty list (rule {rule!r})")
    allowed = {
        "contains": {"value", "rel_tol"},
        "at_most": {"value"},
        "within": {"low", "high"},
        "above": {"value"},
        "ordered": {"factor"},
        "equal": set(),
    }
    out = []
    for entry in entries:
        if not isinstance(entry, dict) or len(entry) != 1:
            raise ArenaError(f"{where}: a test is a mapping {{KIND: {{...}}}}, got {entry!r}")
        kind, spec = next(iter(entry.items()))
        if kind not in TESTS:
            raise ArenaError(f"{where}: test must be one of {TESTS}, got {kind!r}")
        if kind not in RULE_TESTS.get(rule, TESTS):
            raise ArenaError(f"{where}: rule {rule!r} is decided by {RULE_TESTS[rule]} tests")
        spec = dict(spec or {})
        names = spec.pop("quantities", None) or [spec.pop("quantity", None)]
        unknown = sorted(set(spec) - allowed[kind])
        needed = sorted(allowed[kind] - {"rel_tol", "factor"} - set(spec))
        if unknown or needed:
            bad = f"unknown key {unknown[0]!r}" if unknown else f"missing key {needed[0]!r}"
            raise ArenaError(f"{where}: test {kind}: {bad}")
        for name in names:
            if name not in quantities:
                raise ArenaError(f"{where}: test {kind} names {name!r}, which is not a quantity")
        if kind in ("ordered", "equal") and len(names) < 2:
            raise ArenaError(f"{where}: test {kind} compares two quantities or more")
        if kind == "contains" and len(names) != 1:
            raise ArenaError(f"{where}: test contains reads one quantity")
        if rule == "bound holds" and spec.get("value") != 1:
            raise ArenaError(f"{where}: rule 'bound holds' tests a ratio at most 1")
        out.append(
            RuleTest(
                kind,
                tuple(map(str, names)),
                **{k: float(v) for k, v in spec.items()},
            )
        )
    return tuple(out)


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
# verdicts


def measured(row: GalleryRow, reports_dir: str | Path) -> dict[str, Measurement]:
    """Each quantity of ``row`` read in ``reports_dir`` (its report's ``tables/`` there, or
    ``reports_dir`` itself when it is a ``tables`` folder, as :func:`rerun` returns); a quantity
    without an interval gets its stated tolerance as one (value ± tol)."""
    tables = Path(reports_dir)
    if tables.name != "tables":
        tables = tables / row.report / "tables"
    out = {}
    for name, quantity in row.quantities.items():
        m = measure(quantity, tables)
        if quantity.ci is None:  # no interval: the stated tolerance stands in for it
            m = Measurement(m.value, m.value - quantity.tol, m.value + quantity.tol)
        out[name] = m
    return out


def _g(x: float) -> str:
    """A number in a test's text: four significant digits, a typographic minus."""
    return f"{x:.4g}".replace("-", "−")


def _interval(m: Measurement) -> str:
    return f"[{_g(m.low)}, {_g(m.high)}]"


def run_test(test: RuleTest, values: Mapping[str, Measurement]) -> Outcome:
    """Apply ``test`` to the measured quantities ``values`` (by name).

    Examples
    --------
    >>> m = {"a": Measurement(1.0, 0.5, 1.5), "b": Measurement(3.0, 2.0, 4.0)}
    >>> run_test(RuleTest("contains", ("a",), value=1.2), m).passed
    True
    >>> o = run_test(RuleTest("ordered", ("b", "a")), m)
    >>> o.passed, o.text
    (True, 'b [2, 4] > a [0.5, 1.5]')
    >>> run_test(RuleTest("ordered", ("b", "a"), factor=2.0), m).passed  # 2 > 2 × 1.5 fails
    False
    """
    q = [values[name] for name in test.quantities]
    names = test.quantities
    if test.kind == "contains":
        (m,) = q
        x = float(test.value)
        inside = m.low <= x <= m.high
        text = f"{_g(x)} {'∈' if inside else '∉'} {names[0]} {_interval(m)}"
        if not inside and test.rel_tol is not None:
            inside = max(abs(m.low - x), abs(m.high - x)) <= test.rel_tol * abs(x)
            text += f"; {'within' if inside else 'not within'} {test.rel_tol:.0%} of it"
        return Outcome(test, bool(inside), text)
    if test.kind == "at_most":
        ok = [m.value <= test.value for m in q]
        text = "; ".join(
            f"{n} {_g(m.value)} {'≤' if o else '>'} {_g(test.value)}"
            for n, m, o in zip(names, q, ok, strict=True)
        )
        return Outcome(test, all(ok), text)
    if test.kind == "within":
        ok = [test.low <= m.value <= test.high for m in q]
        text = "; ".join(
            f"{n} {_g(m.value)} {'∈' if o else '∉'} [{_g(test.low)}, {_g(test.high)}]"
            for n, m, o in zip(names, q, ok, strict=True)
        )
        return Outcome(test, all(ok), text)
    if test.kind == "above":
        ok = [m.low > test.value for m in q]
        text = "; ".join(
            f"{n} {_interval(m)} {'>' if o else '≯'} {_g(test.value)}"
            for n, m, o in zip(names, q, ok, strict=True)
        )
        return Outcome(test, all(ok), text)
    if test.kind == "ordered":
        ok = [a.low > test.factor * b.high for a, b in itertools.pairwise(q)]
        times = "" if test.factor == 1 else f"{_g(test.factor)} × "
        parts = [f"{names[0]} {_interval(q[0])}"]
        for name, m, o in zip(names[1:], q[1:], ok, strict=True):
            parts.append(f"{'>' if o else '≯'} {times}{name} {_interval(m)}")
        return Outcome(test, all(ok), " ".join(parts))
    if test.kind == "equal":
        first = q[0].value
        ok = all(math.isclose(m.value, first, rel_tol=1e-12, abs_tol=0.0) for m in q)
        text = f" {'=' if ok else '≠'} ".join(
            f"{n} {_g(m.value)}" for n, m in zip(names, q, strict=True)
        )
        return Outcome(test, ok, text)
    raise ArenaError(f"unknown test {test.kind!r}")


def verdict(row: GalleryRow, reports_dir: str | Path) -> tuple[str, list[Outcome]]:
    """The verdict the row's tests give in ``reports_dir``: its rule when every test passes,
    ``differs`` otherwise; with the tests' outcomes."""
    values = measured(row, reports_dir)
    outcomes = [run_test(test, values) for test in row.tests]
    return (row.rule if all(o.passed for o in outcomes) else "differs"), outcomes


@dataclass(frozen=True)
class Flipped:
    """A row whose computed verdict is not its pinned one."""

    row: GalleryRow
    computed: str
    outcomes: list[Outcome]

    def line(self) -> str:
        """One line naming the row, both verdicts and the tests that decided."""
        failed = "; ".join(o.text for o in self.outcomes if not o.passed) or "every test passes"
        return (
            f"gallery row {self.row.id!r} ({self.row.source}): verdict {self.computed!r}, "
            f"pinned {self.row.verdict!r} (rule {self.row.rule!r}; {failed})"
        )


def check_verdicts(rows: Sequence[GalleryRow], reports_dir: str | Path) -> list[Flipped]:
    """The rows whose verdict computed in ``reports_dir`` differs from their pinned ``verdict``."""
    out = []
    for row in rows:
        computed, outcomes = verdict(row, reports_dir)
        if computed != row.verdict:
            out.append(Flipped(row, computed, outcomes))
    return out


# ----------------------------------------------------------------------------------------------
# rendering


def format_ours(row: GalleryRow, reports_dir: str | Path) -> str:
    """The row's ``ours`` text with its quantities measured in ``reports_dir``."""
    fields: dict[str, float] = {}
    for name, m in measured(row, reports_dir).items():
        fields |= {name: m.value, f"{name}_lo": m.low, f"{name}_hi": m.high}
        fields[f"{name}_hw"] = m.half_width
    # typographic minus for negative numbers only (not in names, not in exponents)
    return re.sub(r"(?<![\w.])-(?=\d)", "−", row.ours.format(**fields))


def verdict_cell(row: GalleryRow, reports_dir: str | Path) -> str:
    """The verdict column: the computed verdict, the rule claimed when it failed, the tests'
    comparisons (✗ before a failed one), the reason (by construction, sanity) and the why."""
    computed, outcomes = verdict(row, reports_dir)
    head = f"**{computed}**"
    if computed != row.rule:
        head += f" (claimed: {row.rule})"
    tests = "; ".join(("" if o.passed else "✗ ") + o.text for o in outcomes)
    reason = f" Why it must agree: {row.reason}" if row.reason else ""
    return f"{head}. Test: {tests}.{reason} {row.why}"


def table_markdown(
    rows: Sequence[GalleryRow], reports_dir: str | Path, source_column: str = "source's number"
) -> str:
    """A gallery table: one line per row, our numbers measured in ``reports_dir``."""
    head = [
        "| source | what it shows | our setup, and what differs | "
        f"{source_column} | ours (95% interval) | verdict: rule and test | report |",
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
            verdict_cell(row, reports_dir),
            row.link(),
        ]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(head + lines)


def counts(rows: Sequence[GalleryRow]) -> dict[str, int]:
    """How many rows have each (pinned) verdict."""
    return {v: sum(r.verdict == v for r in rows) for v in VERDICTS}


def summary(rows: Sequence[GalleryRow]) -> str:
    """The line counting each verdict.

    Examples
    --------
    >>> summary([])
    '0 rows: 0 reproduced, 0 bound holds, 0 by construction, 0 sanity, 0 qualitative, 0 differ.'
    """
    c = counts(rows)
    kinds = ", ".join(f"{c[v]} {'differ' if v == 'differs' else v}" for v in VERDICTS)
    return f"{len(rows)} rows: {kinds}."


def render_table(rows: Sequence[GalleryRow], readme: str | Path) -> bool:
    """Write the gallery's two tables into ``readme`` between :data:`START` and :data:`END`.

    The reports are read from the folder holding ``readme``; the verdicts shown are computed
    (:func:`verdict`). Returns whether the file changed; the write is atomic (a temporary file,
    then a rename).

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
    sources = [r for r in rows if r.table == "sources"]
    classical = [r for r in rows if r.table == "classical"]
    body = [
        f"{summary(rows)[:-1]} ({len(sources)} results of the sources, {len(classical)} "
        "classical results).",
        "",
        f"### Results of the sources\n\n{summary(sources)}",
        "",
        table_markdown(sources, readme.parent),
        "",
        "### Classical results the lab checks\n\n"
        "Results outside the sources, checked on the same machinery. "
        f"{summary(classical)}",
        "",
        table_markdown(classical, readme.parent, "the result's number"),
    ]
    new = f"{before}{START}\n" + "\n".join(body) + f"\n{END}{after}"
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
    if getattr(report, "attacks", ()):  # the worst cases the report shows are found again too
        from arena.apps.attack import run_attack_specs

        run_attack_specs(list(report.attacks), results / "attacks", echo=lambda line: None)
    build_report(results, workdir / "report", name=report.name, metrics=report.metrics)
    return workdir / "report" / "tables"


__all__ = [
    "END",
    "RULES",
    "START",
    "TESTS",
    "VERDICTS",
    "Flipped",
    "GalleryRow",
    "Measurement",
    "Moved",
    "Outcome",
    "Quantity",
    "RuleTest",
    "check_pins",
    "check_verdicts",
    "counts",
    "default_rows",
    "format_ours",
    "load_rows",
    "measure",
    "measured",
    "render_table",
    "rerun",
    "rerun_config",
    "run_test",
    "select_rows",
    "summary",
    "table_markdown",
    "tolerance",
    "verdict",
    "verdict_cell",
]
