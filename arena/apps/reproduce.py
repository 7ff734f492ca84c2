"""``arena reproduce``: regenerate every report of the gallery (``configs/reproduce.yaml``).

The list file names, per report, the tournaments it is built from and its leaderboard metrics
(the format is described at the top of ``configs/reproduce.yaml`` and in docs/tournaments.md).
:func:`load_gallery` reads and checks it; :func:`reproduce` counts the cells of every tournament
first, runs the unfinished ones under a single progress bar (resumably: each tournament folder
keeps its finished cells, :class:`arena.apps.tournament.Tournament`), then writes each report.

Examples
--------
>>> gallery = load_gallery(default_list())
>>> [report.name for report in gallery][:2]
['demo', 'scale-invariance']
>>> gallery[1].metrics
('mistakes', 'loss', 'comparator_regret')
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from arena.apps.hydra_support import config_dir
from arena.apps.yaml_guard import check_yaml_file
from arena.errors import ArenaError

REPORT_KEYS = ("name", "tournaments", "results", "metrics", "attacks")
DATA_OUTPUTS = "outputs/real-data/tournaments"
"""The tournaments' folder of ``arena reproduce --data-dir`` (apart from the gallery's: the
same tournament on other data is another tournament)."""
DATA_REPORTS = "outputs/real-data/reports"
"""The reports' folder of ``arena reproduce --data-dir`` (never the committed ``reports/``)."""
DATA_TABLE = "data.md"
"""The file beside a report of ``--data-dir`` saying which data each game played."""
TOURNAMENT_KEYS = ("config", "file", "out")


@dataclass(frozen=True)
class GalleryTournament:
    """One tournament of a report: its configuration file and its folder under the outputs.

    Attributes
    ----------
    source : Path
        The tournament file (``configs/tournament/NAME.yaml`` or a file of the user's).
    out : str
        Its folder, relative to the outputs folder.
    """

    source: Path
    out: str
    where: str = ""
    """Where it is listed (``gallery list FILE, report 'NAME'``), named in its errors."""

    def config(self, data_dir: str | Path | None = None):
        """The :class:`~arena.apps.tournament.TournamentConfig` the file describes, as ``arena
        tournament`` composes it (the file's keys, ``name`` defaulting to the file's stem); with
        ``data_dir``, its stand-ins swapped for the sources' sets present there
        (:func:`arena.apps.real_data.real_data_config`)."""
        node = self.mapping()
        if data_dir is not None:
            from arena.apps.real_data import real_data_config

            node, _ = real_data_config(node, data_dir)
        return self.config_of(node)

    def config_of(self, node: dict[str, Any]):
        """The :class:`~arena.apps.tournament.TournamentConfig` of a mapping of this file's
        keys (:meth:`mapping`, perhaps changed), an unknown key named with the file."""
        from arena.apps.tournament import TournamentConfig

        try:
            return TournamentConfig.from_mapping(node)
        except ArenaError as exc:  # an unknown key: name the file it is in, and the list
            listed = f"{self.where}: " if self.where else ""
            raise ArenaError(f"{listed}tournament file {self.source}: {exc}") from None

    def mapping(self) -> dict[str, Any]:
        """The file's keys as a plain mapping, ``name`` defaulting to the file's stem."""
        from omegaconf import OmegaConf

        check_yaml_file(self.source, f"tournament file {self.source}")
        try:
            node = OmegaConf.to_container(OmegaConf.load(self.source), resolve=True)
        except Exception as exc:  # YAML syntax, encoding: one line naming the file
            first = next(iter(str(exc).splitlines()), "")
            raise ArenaError(
                f"tournament file {self.source}: not a readable YAML file ({first})"
            ) from None
        if not isinstance(node, dict):
            raise ArenaError(f"tournament file {self.source}: must be a mapping of tournament keys")
        node.setdefault("name", self.source.stem)
        return node


@dataclass(frozen=True)
class GalleryReport:
    """One report of the gallery: its name (its folder under reports/), tournaments and metrics."""

    name: str
    tournaments: tuple[GalleryTournament, ...]
    results: str
    metrics: tuple[str, ...] = ("regret",)
    attacks: tuple[dict[str, Any], ...] = ()
    """Worst-case searches run before the tournaments into ``<results>/attacks/``
    (:func:`arena.apps.attack.run_attack_specs`), which the report's "Worst cases found" shows."""


@dataclass
class ReportOutcome:
    """What :func:`reproduce` did for one report."""

    name: str
    cells: int
    run: int = 0
    done: int = 0
    failed: int = 0
    wall_time_s: float = 0.0
    index: Path | None = None
    failures: list[Path] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    """The report's files (relative, the build's record ``run/`` left out) whose bytes differ
    from the report's before this build, new ones and removed ones included."""

    def summary(self) -> str:
        """One line: cells run, already done, failed, seconds, where the report is, and whether
        its files changed."""
        failed = f", {self.failed} failed" if self.failed else ""
        if not self.changed:
            change = "unchanged"
        else:
            shown = ", ".join(self.changed[:4])
            more = f" and {len(self.changed) - 4} more" if len(self.changed) > 4 else ""
            change = f"{len(self.changed)} file(s) changed: {shown}{more}"
        return (
            f"{self.name}: {self.cells} cells ({self.run} run, {self.done} already done{failed}), "
            f"{self.wall_time_s:.0f} s -> {self.index.parent if self.index else '-'} ({change})"
        )


def report_digest(folder: Path) -> dict[str, str]:
    """The SHA-256 of every file of the report in ``folder`` (relative path → digest), the
    build's record (``run/``) and the build's own bookkeeping left out: what a rebuild that
    reproduces the report leaves byte for byte. Empty when ``folder`` does not exist.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "report.md").write_text("x")
    >>> (d / "run").mkdir(); _ = (d / "run" / "report.md").write_text("12 s")
    >>> list(report_digest(d))
    ['report.md']
    """
    import hashlib

    from arena.reporting.sections.context import RUN_DIR
    from arena.results import LOCK_NAME

    if not folder.is_dir():
        return {}
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if not path.is_file() or path.is_symlink() or rel.split("/")[0] in (RUN_DIR, LOCK_NAME):
            continue
        out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def default_list() -> Path:
    """The gallery's list file shipped with the arena (``configs/reproduce.yaml``)."""
    return config_dir() / "reproduce.yaml"


def load_gallery(path: str | Path) -> list[GalleryReport]:
    """Read and check a gallery list file; return its reports in order.

    Raises
    ------
    ArenaError
        For an unreadable file, an unknown key, a missing or duplicate name, an unknown
        tournament, a missing tournament file or an output folder outside the outputs folder;
        the message names the file and the report.
    """
    from omegaconf import OmegaConf

    from arena.reporting import check_report_name

    path = Path(path)
    who = f"gallery list {path}"
    if not path.is_file():
        raise ArenaError(f"{who}: no such file")
    check_yaml_file(path, who)
    try:
        node = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    except Exception as exc:
        first = next(iter(str(exc).splitlines()), "")
        raise ArenaError(f"{who}: not a readable YAML file ({first})") from None
    if (
        not isinstance(node, dict)
        or set(node) != {"reports"}
        or not isinstance(node["reports"], list)
    ):
        raise ArenaError(f"{who}: must be a mapping with one key, reports: a list of reports")
    reports: list[GalleryReport] = []
    for i, entry in enumerate(node["reports"]):
        if not isinstance(entry, dict) or "name" not in entry:
            raise ArenaError(f"{who}: report #{i + 1} must be a mapping with a name")
        name = str(entry["name"])
        where = f"{who}, report {name!r}"
        unknown = sorted(set(entry) - set(REPORT_KEYS))
        if unknown:
            raise ArenaError(
                f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(REPORT_KEYS)})"
            )
        try:
            check_report_name(name)
        except ArenaError as exc:
            raise ArenaError(f"{where}: {exc}") from None
        if any(r.name == name for r in reports):
            raise ArenaError(f"{where}: listed twice")
        tournaments = entry.get("tournaments")
        if not isinstance(tournaments, list) or not tournaments:
            raise ArenaError(f"{where}: tournaments must be a non-empty list")
        parsed = tuple(_tournament(where, path.parent, t) for t in tournaments)
        outs = [t.out for t in parsed]
        if len(set(outs)) != len(outs):
            raise ArenaError(f"{where}: two tournaments share an output folder")
        results = entry.get("results")
        if results is None:
            if len(parsed) > 1:
                raise ArenaError(f"{where}: several tournaments need `results`, the folder read")
            results = parsed[0].out
        results = _relative(where, "results", results)
        metrics = entry.get("metrics", ["regret"])
        if (
            not isinstance(metrics, list)
            or not metrics
            or not all(isinstance(m, str) and m for m in metrics)
        ):
            raise ArenaError(f"{where}: metrics must be a non-empty list of metric names")
        from arena.apps.attack import check_attack_spec

        attacks = entry.get("attacks", [])
        if not isinstance(attacks, list):
            raise ArenaError(f"{where}: attacks must be a list")
        specs = tuple(check_attack_spec(where, a) for a in attacks)
        reports.append(GalleryReport(name, parsed, results, tuple(metrics), specs))
    if not reports:
        raise ArenaError(f"{who}: lists no report")
    return reports


def _tournament(where: str, base: Path, entry: Any) -> GalleryTournament:
    """Check one ``tournaments`` entry of a report and return it."""
    if not isinstance(entry, dict):
        raise ArenaError(f"{where}: tournament entry {entry!r} must be a mapping {{config: NAME}}")
    unknown = sorted(set(entry) - set(TOURNAMENT_KEYS))
    if unknown:
        raise ArenaError(
            f"{where}: tournament entry: unknown key {unknown[0]!r} "
            f"(keys: {', '.join(TOURNAMENT_KEYS)})"
        )
    if ("config" in entry) == ("file" in entry):
        raise ArenaError(f"{where}: a tournament entry needs one of config: NAME or file: PATH")
    if "config" in entry:
        name = str(entry["config"])
        folder = config_dir() / "tournament"
        source = folder / f"{name}.yaml"
        if "/" in name or not source.is_file():
            import difflib

            options = sorted(p.stem for p in folder.glob("*.yaml"))
            close = difflib.get_close_matches(name, options, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ArenaError(f"{where}: unknown tournament {name!r}{hint}")
    else:
        source = (base / str(entry["file"])).expanduser()
        if not source.is_file():
            raise ArenaError(f"{where}: no such tournament file: {source}")
    out = _relative(where, "out", entry.get("out", source.stem))
    return GalleryTournament(source, out, where)


def _relative(where: str, key: str, value: Any) -> str:
    """Refuse a folder that is not a plain relative path (it would leave the outputs folder,
    which ``--fresh`` empties)."""
    text = str(value)
    parts = PurePosixPath(text).parts
    if not text or text.startswith(("/", "~")) or "\\" in text or ".." in parts or "." in parts:
        raise ArenaError(
            f"{where}: {key} must be a relative folder under the outputs folder, got {text!r}"
        )
    return text


def select(reports: Sequence[GalleryReport], only: Sequence[str]) -> list[GalleryReport]:
    """The reports named in ``only`` (all of them when empty), refusing unknown names."""
    if not only:
        return list(reports)
    names = [r.name for r in reports]
    for name in only:
        if name not in names:
            import difflib

            close = difflib.get_close_matches(name, names, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ArenaError(f"unknown report {name!r} ({hint}reports: {', '.join(names)})")
    return [r for r in reports if r.name in only]


def reproduce(
    reports: Sequence[GalleryReport],
    *,
    outputs: str | Path | None = None,
    reports_dir: str | Path | None = None,
    fresh: bool = False,
    executor: str = "local",
    n_jobs: int | None = None,
    scheduler: str | None = None,
    progress: bool = False,
    echo: Callable[[str], None] = print,
    warn: Callable[[str], None] | None = None,
    data_dir: str | Path | None = None,
) -> list[ReportOutcome]:
    """Run the tournaments of ``reports`` and write each report into ``reports_dir/<name>``.

    Every configuration is checked and every cell counted before anything runs; one progress bar
    (tqdm, with its estimate of the remaining time) covers the cells of all tournaments. Finished
    cells are kept and skipped (the tournament folders' resume) unless ``fresh``, which first
    empties and removes the tournament folders of ``reports`` (and their ``results`` folders),
    each under its lock (:func:`clear_folders`): a folder in use by a running tournament, or a
    symbolic link among them, is refused before anything is removed.

    With ``data_dir`` (``arena reproduce --data-dir DIR``), each tournament's stand-ins are
    swapped for the sources' sets present in ``data_dir`` and kept otherwise
    (:func:`arena.apps.real_data.real_data_config`, checked against the catalog's shapes when the
    tournaments are validated, before anything runs), and each report gets a ``data.md`` beside
    it saying which one every such game played (:func:`arena.apps.real_data.data_table`; a
    report without such a game gets none). The committed reports folder is refused
    (:func:`refuse_committed_reports`): these reports are not the gallery's.

    Returns
    -------
    list of ReportOutcome
        Per report: cells, cells run now, already done, failed, wall time, report index, and
        the report's files that changed (:func:`report_digest`; the build's record ``run/``,
        which every build rewrites, left out).
    """
    from arena.apps.tournament import Tournament
    from arena.reporting import build_report, check_report_folder
    from arena.results import refuse_symlinks

    outputs = Path(outputs or (DATA_OUTPUTS if data_dir is not None else "outputs/tournaments"))
    reports_dir = Path(reports_dir or (DATA_REPORTS if data_dir is not None else "reports"))
    if data_dir is not None:
        refuse_committed_reports(reports_dir)
    folders = sorted({f for r in reports for f in (r.results, *(t.out for t in r.tournaments))})
    refuse_symlinks(outputs, *folders)  # no tournament reads or writes through a link
    plan: list[tuple[GalleryReport, list[tuple[Tournament, int]]]] = []
    played: dict[str, list] = {}  # report → what its dataset games play (with data_dir)
    total = done = 0

    def tick(cell, ok: bool) -> None:
        if bar is not None:
            bar.update(1)

    bar = None
    for report in reports:
        check_report_folder(reports_dir / report.name)  # before the minutes, not after them
        runs = []
        for entry in report.tournaments:
            if data_dir is None:
                config = entry.config()
                config.validate()
            else:
                from arena.apps.real_data import identify, real_data_config

                node, uses = real_data_config(entry.mapping(), data_dir)
                config = entry.config_of(node)
                config.validate()  # reads the sets' copies and checks their shapes
                played.setdefault(report.name, []).extend(identify(uses, config))
            tournament = Tournament(
                config,
                outputs / entry.out,
                executor=executor,
                n_jobs=n_jobs,
                scheduler=scheduler,
                on_cell=tick,
            )
            cells = {c.id for c in config.cells()}
            finished = 0 if fresh else len(cells & tournament.finished_cells())
            if not fresh:
                tournament._check_directory()  # another tournament in the folder: refused now
            runs.append((tournament, finished))
            total += len(cells)
            done += finished
        plan.append((report, runs))
    if fresh:
        clear_folders(outputs, folders, "arena reproduce --fresh")
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, initial=done, unit="cell", desc="gallery", dynamic_ncols=True)

    outcomes: list[ReportOutcome] = []
    try:
        for report, runs in plan:
            started = time.perf_counter()
            outcome = ReportOutcome(report.name, cells=0)
            if report.attacks:  # after --fresh's clearing, which removes the results folder
                from arena.apps.attack import run_attack_specs

                run_attack_specs(list(report.attacks), outputs / report.results / "attacks", echo)
            for tournament, _ in runs:
                if bar is not None:
                    bar.set_description(f"{report.name}: {tournament.config.name}")
                result = tournament.run()
                outcome.cells += len(result.finished) + len(result.skipped) + len(result.failed)
                outcome.run += len(result.finished)
                outcome.done += len(result.skipped)
                outcome.failed += len(result.failed)
                if result.failed:
                    outcome.failures.append(tournament.directory / "failures.parquet")
            before = report_digest(reports_dir / report.name)
            outcome.index = build_report(
                outputs / report.results,
                reports_dir / report.name,
                name=report.name,
                metrics=report.metrics,
                warn=warn,
            )
            if played.get(report.name):
                from arena.apps.real_data import data_table
                from arena.results import write_text_atomic

                write_text_atomic(
                    data_table(played[report.name], data_dir),
                    reports_dir / report.name / DATA_TABLE,
                )
            after = report_digest(reports_dir / report.name)
            outcome.changed = sorted(
                rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel)
            )
            outcome.wall_time_s = time.perf_counter() - started
            outcomes.append(outcome)
            if bar is not None:
                bar.write(outcome.summary(), file=sys.stderr)
            else:
                echo(outcome.summary())
    finally:
        if bar is not None:
            bar.close()
    return outcomes


def refuse_committed_reports(reports_dir: Path) -> None:
    """Refuse the committed gallery's reports folder (``reports/`` of the checkout, or of the
    working folder) as where ``arena reproduce --data-dir`` writes: the gallery stays on its
    stand-ins, and reports of the user's data go under the outputs folder."""
    committed = {Path("reports").resolve(), (config_dir().parent / "reports").resolve()}
    if reports_dir.resolve() in committed or (reports_dir / "README.md").is_file():
        raise ArenaError(
            f"reproduce: --data-dir writes its reports under the outputs folder (default "
            f"{DATA_REPORTS}), never into the committed gallery's {reports_dir}: give --reports "
            "another folder"
        )


def clear_folders(outputs: Path, folders: Sequence[str], what: str) -> None:
    """Empty and remove ``outputs/<folder>`` for each of ``folders``, as their lock's holder.

    Every folder is locked first (:func:`arena.results.folder_lock`), so one in use (a tournament
    running into it) is refused in one line before anything is removed; each is then emptied under
    its lock, a folder inside another (a tournament inside the ``results`` folder it is read from)
    before the one around it, and sub-folders are locked as they are emptied
    (:meth:`arena.results.HeldFolder.clear`). A link is removed, never followed; a missing folder
    is skipped.
    """
    from contextlib import ExitStack

    from arena.results import folder_lock

    held = {}
    stacks: dict[str, ExitStack] = {}
    try:
        for rel in sorted(folders):
            if (outputs / rel).is_dir():
                stacks[rel] = ExitStack()
                held[rel] = stacks[rel].enter_context(
                    folder_lock(outputs / rel, what, create=False)
                )
        # deepest first: an inner folder is emptied and removed (on its release) before the
        # folder around it, whose emptying locks what it removes
        for rel in sorted(held, key=lambda r: -len(PurePosixPath(r).parts)):
            held[rel].clear(what)
            held[rel].remove_if_empty = True
            stacks.pop(rel).close()
    finally:
        for stack in stacks.values():
            stack.close()


def main(args: Sequence[str]) -> int:
    """``arena reproduce [--only NAME ...] [--fresh] [--list FILE] [--reports DIR] ...``."""
    ns = _parser().parse_args(list(_options(args)))
    gallery = load_gallery(ns.list or default_list())
    if ns.data_dir is not None and ns.table:
        raise ArenaError(
            "reproduce: --table rewrites the committed gallery table; not with --data-dir"
        )
    ns.outputs = ns.outputs or (DATA_OUTPUTS if ns.data_dir is not None else "outputs/tournaments")
    ns.reports = ns.reports or (DATA_REPORTS if ns.data_dir is not None else "reports")
    if ns.table:
        return _write_table(gallery, Path(ns.reports))
    reports = select(gallery, ns.only or [])
    if ns.data_dir is not None:
        reports = _real_data_reports(reports, bool(ns.only))
    progress = sys.stderr.isatty() if ns.progress == "auto" else ns.progress == "true"
    started = time.perf_counter()
    try:
        outcomes = reproduce(
            reports,
            outputs=ns.outputs,
            reports_dir=ns.reports,
            fresh=ns.fresh,
            executor=ns.executor,
            n_jobs=ns.n_jobs,
            scheduler=ns.scheduler,
            progress=progress,
            warn=lambda line: print(f"arena reproduce: {line}", file=sys.stderr),
            data_dir=ns.data_dir,
        )
    except KeyboardInterrupt:  # Ctrl-C: one line (arena.apps.cli) saying what the folders keep
        raise KeyboardInterrupt(_kept(reports, Path(ns.outputs), ns.data_dir)) from None
    if progress:  # the bar printed the per-report lines above itself; repeat them together
        for outcome in outcomes:
            print(outcome.summary())
    cells = sum(o.cells for o in outcomes)
    ran = sum(o.run for o in outcomes)
    print(
        f"gallery: {len(outcomes)} report(s), {cells} cells ({ran} run), "
        f"{time.perf_counter() - started:.0f} s in total"
    )
    if ns.data_dir is not None:
        print(f"data played: {DATA_TABLE} beside each report under {ns.reports}")
    elif ns.list is None and (Path(ns.reports) / "README.md").is_file():
        _write_table(gallery, Path(ns.reports))
    failed = [path for o in outcomes for path in o.failures]
    if failed:
        print(
            f"arena reproduce: {sum(o.failed for o in outcomes)} cell(s) failed; see "
            + ", ".join(str(p) for p in failed),
            file=sys.stderr,
        )
        return 1
    return 0


def _real_data_reports(reports: Sequence[GalleryReport], named: bool) -> list[GalleryReport]:
    """The reports of ``reports`` with a real-data row (a stand-in paired with a catalog set,
    :func:`arena.apps.real_data.is_real_data`); a report named with ``--only`` without one is
    refused."""
    from arena.apps.real_data import is_real_data

    kept = []
    for report in reports:
        if any(is_real_data(t.mapping()) for t in report.tournaments):
            kept.append(report)
        elif named:
            raise ArenaError(
                f"reproduce: report {report.name!r} has no real-data row (no stand-in for a "
                "source's dataset, docs/data.md); --data-dir runs those only"
            )
    if not kept:
        raise ArenaError("reproduce: --data-dir: no report of the list has a real-data row")
    return kept


def _kept(reports: Sequence[GalleryReport], outputs: Path, data_dir: str | None = None) -> str:
    """What an interrupted ``arena reproduce`` keeps: the finished cells of its tournaments."""
    from arena.apps.tournament import Tournament

    kept = total = 0
    for report in reports:
        for entry in report.tournaments:
            try:
                tournament = Tournament(
                    entry.config(data_dir), outputs / entry.out, executor="serial"
                )
                cells = {c.id for c in tournament.config.cells()}
                kept += len(cells & tournament.finished_cells())
            except ArenaError:  # a folder that holds something else: nothing of ours in it
                continue
            total += len(cells)
    return (
        f"arena reproduce keeps {kept} of {total} finished cells under {outputs} (the same "
        "command resumes the rest, then writes the reports)"
    )


def _write_table(gallery: Sequence[GalleryReport], reports_dir: Path) -> int:
    """Rewrite the gallery table of ``reports_dir/README.md`` from the rows of
    ``configs/gallery.yaml`` and the reports' CSV tables (the verdicts computed by the rows'
    rules); name every quantity that moved off its pin (:func:`arena.apps.gallery.check_pins`)
    and every row whose verdict is not its pinned one (:func:`arena.apps.gallery.
    check_verdicts`). Returns the exit status: 1 when one moved or changed verdict."""
    from arena.apps.gallery import (
        check_pins,
        check_verdicts,
        default_rows,
        load_rows,
        render_table,
    )

    rows = load_rows(default_rows(), [r.name for r in gallery])
    readme = reports_dir / "README.md"
    if not readme.is_file():  # checked first: else every row's every number is "unreadable"
        raise ArenaError(
            f"reproduce --table: no gallery table to rewrite: {readme} is not a file (--reports "
            "DIR names the folder holding README.md and the reports)"
        )
    moved = check_pins(rows, reports_dir)
    unreadable = sorted({m.row.report for m in moved if m.error is not None})
    if unreadable:  # a report of the rows is missing here: the table cannot be written
        first = next(m for m in moved if m.error is not None)
        raise ArenaError(
            f"reproduce --table: {len(unreadable)} report(s) of the gallery table cannot be read "
            f"under {reports_dir}: {', '.join(unreadable)} (first: {first.error}); regenerate "
            f"them with arena reproduce --only NAME"
        )
    flipped = check_verdicts(rows, reports_dir)
    changed = render_table(rows, readme)
    print(f"gallery table: {len(rows)} rows -> {readme}{'' if changed else ' (unchanged)'}")
    for m in moved:
        print(f"arena reproduce: {m.line()}", file=sys.stderr)
    for f in flipped:
        print(f"arena reproduce: {f.line()}", file=sys.stderr)
    return 1 if moved or flipped else 0


def _options(args: Sequence[str]) -> list[str]:
    """Turn the tournament-style ``executor=…``, ``n_jobs=…``, ``scheduler=…`` into options."""
    out = []
    for arg in args:
        key, eq, value = arg.partition("=")
        if eq and key in ("executor", "n_jobs", "scheduler", "progress"):
            out += [f"--{key.replace('_', '-')}", value]
        else:
            out.append(arg)
    return out


def _parser():
    """The options; argparse's errors become :class:`ArenaError` (one line, exit 2)."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str):  # argparse would print the usage too: two lines
            raise ArenaError(f"reproduce: {message} (`arena reproduce --help`)")

    parser = Parser(
        prog="arena reproduce",
        description="Regenerate the gallery's reports (configs/reproduce.yaml): run every "
        "unfinished cell of their tournaments, then write reports/<name>/.",
    )
    parser.add_argument(
        "--only", action="append", metavar="NAME", help="only this report (repeatable)"
    )
    parser.add_argument(
        "--fresh", action="store_true", help="remove the tournaments' folders first (no resume)"
    )
    parser.add_argument("--list", metavar="FILE", help="gallery list (default: the shipped one)")
    parser.add_argument(
        "--table",
        action="store_true",
        help="only rewrite the gallery table of reports/README.md (configs/gallery.yaml) from "
        "the reports' tables, naming the rows whose numbers moved off their pins",
    )
    parser.add_argument(
        "--reports",
        default=None,
        metavar="DIR",
        help=f"reports folder (default: reports; with --data-dir, {DATA_REPORTS})",
    )
    parser.add_argument(
        "--outputs",
        default=None,
        metavar="DIR",
        help=f"tournaments folder (default: outputs/tournaments; with --data-dir, {DATA_OUTPUTS})",
    )
    parser.add_argument(
        "--data-dir",
        default=None,
        metavar="DIR",
        help="play the gallery's real-data rows on the sources' sets found in DIR (the "
        "stand-ins where a set is not there); reports under the outputs folder, each with "
        f"{DATA_TABLE} saying which data every game played (docs/data.md)",
    )
    parser.add_argument("--executor", default="local", choices=["serial", "local", "dask"])
    parser.add_argument("--n-jobs", type=_positive, default=None, metavar="N")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS", help="dask scheduler")
    parser.add_argument("--progress", default="auto", choices=["auto", "true", "false"])
    return parser


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


__all__ = [
    "GalleryReport",
    "GalleryTournament",
    "ReportOutcome",
    "default_list",
    "load_gallery",
    "report_digest",
    "reproduce",
    "select",
]
