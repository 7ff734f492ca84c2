"""``build_report``: load the results, build each section in turn, write the two renderings.

A report is built in a staging folder inside its own folder, under the folder's lock
(:func:`arena.results.folder_lock`), and moved into place only once every file of it is written:
a build that fails, runs out of disk or is killed leaves the previous report as it was (a staging
folder of a killed build is removed by the next build), and a second build into the same folder
is refused while the first runs. Nothing is written or removed through a symbolic link.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from arena.errors import ConfigError, ReportPathError
from arena.reporting.load import check_complete, load_source
from arena.reporting.render import (
    Block,
    Figure,
    Heading,
    Para,
    Summary,
    render_html,
    render_markdown,
)
from arena.reporting.sections.bandit import bandit_feedback
from arena.reporting.sections.boosting import boosting
from arena.reporting.sections.boosting_exp_bound import boosting_exp_bound
from arena.reporting.sections.bound_ratios import bound_ratios
from arena.reporting.sections.context import RUN_DIR, ReportContext, Section
from arena.reporting.sections.dynamics import game_dynamics
from arena.reporting.sections.failures import failures
from arena.reporting.sections.files import files
from arena.reporting.sections.flags import check_bounds, flags
from arena.reporting.sections.leaderboards import leaderboards
from arena.reporting.sections.lower_bound_ratios import lower_bound_section
from arena.reporting.sections.luo_bounds import drifting_bounds, stochastic_gap
from arena.reporting.sections.methods import methods
from arena.reporting.sections.metric_curves import metric_curves
from arena.reporting.sections.minimax_values import minimax_values
from arena.reporting.sections.online_to_batch import online_to_batch
from arena.reporting.sections.other_notions import other_notions
from arena.reporting.sections.overall import overall
from arena.reporting.sections.overview import overview
from arena.reporting.sections.provenance import provenance
from arena.reporting.sections.regret_curves import regret_curves
from arena.reporting.sections.second_order import second_order
from arena.reporting.sections.time_varying import time_varying
from arena.reporting.sections.trees import tree_experts
from arena.reporting.sections.worst_cases import worst_cases
from arena.results import LOCK_NAME, HeldFolder, folder_lock, is_plain_name, write_text_atomic

MANIFEST = "report-files.json"
"""The record, inside a report folder, of the files the report wrote there (and may delete)."""
_MANIFEST_KIND = "regret-arena report files"
_STAGING = ".report-build~"
"""Prefix of the staging folder a build writes into, inside the report folder, before the move."""


def build_report(
    source_dir: str | Path,
    out_dir: str | Path,
    *,
    name: str,
    metrics: Sequence[str] = ("regret",),
    level: float = 0.95,
    warn: Callable[[str], None] | None = None,
    partial: bool = False,
    attacks: str | Path | None = None,
) -> Path:
    """Write the report of the results under ``source_dir`` into ``out_dir``; return index.html.

    Parameters
    ----------
    source_dir : path
        A tournament directory, a Hydra multirun directory or one run folder.
    out_dir : path
        Where to write: created, or empty, or an earlier report. The files an earlier build
        listed in its ``report-files.json`` are replaced or deleted, nothing else; a non-empty
        folder without that record is refused (:class:`~arena.errors.ReportPathError`), and so
        are a folder, or a file of the report, that is a symbolic link.
    name : str
        Title of the report.
    metrics : sequence of str
        Metrics that get a leaderboard (``regret`` always does); one per logged parameter value.
    level : float
        Confidence level of every interval (default 95%).
    warn : callable, optional
        Called with one line per results file that could not be read (the report skips it,
        says so in its Failures section, and goes on with the rest).
    partial : bool
        Report a tournament that is still running or was interrupted (its overview then says
        it is partial, N of M cells); without it such a source is refused
        (:func:`arena.reporting.load.check_complete`).
    attacks : path, optional
        The attack outputs the "Worst cases found" section shows (one ``arena attack`` folder
        or a folder of them); default: ``attacks/`` inside ``source_dir``, when it exists.

    Raises
    ------
    ConfigError
        If a metric of ``metrics`` has no rows in the results (before anything is written), or
        the folder is in use by another build (:func:`arena.results.folder_lock`).
    """
    started = time.perf_counter()
    out = Path(out_dir)
    _earlier_files(out)  # refuse a foreign folder before reading, let alone writing
    src = load_source(source_dir)
    check_complete(src, partial)
    present = sorted(str(m) for m in src.rows["metric"].cat.categories)
    for metric in metrics:
        if metric not in present:
            close = difflib.get_close_matches(metric, present, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(
                "arena report",
                "--metric",
                f"no rows of metric {metric!r} in {source_dir} ({hint}metrics there: "
                f"{', '.join(present)})",
                noun="option",
            )
    for path, why in src.unreadable:
        if warn is not None:
            warn(f"skipped {path}: {why}")
    # one build per folder; only the holder of its lock writes, replaces or removes in it
    with folder_lock(out, f"arena report {name}") as held:
        held.remove_if_empty = held.created  # a folder made for a build that fails goes again
        old = _own_files(_earlier_files(out))  # again, under the lock
        held.refuse_links(MANIFEST, "figures", "tables", RUN_DIR, "report.md", "index.html", *old)
        for stale in held.entries():  # left by a killed build: no other build can be running
            if stale.startswith(_STAGING):
                _remove_entry(held.path / stale)
        staging = held.target(
            f"{_STAGING}{socket.gethostname()}~{os.getpid()}~{uuid.uuid4().hex[:8]}"
        )
        try:
            staging.mkdir()
            fig_dir, tab_dir = staging / "figures", staging / "tables"
            for d in (fig_dir, tab_dir):
                d.mkdir()
            ctx = ReportContext(
                src, list(dict.fromkeys(["regret", *metrics])), level, fig_dir, tab_dir, started
            )
            ctx.attacks = None if attacks is None else Path(attacks)
            _write(ctx, staging, name)
            _move_into_place(held, staging, old)
        except BaseException:  # a full disk, a failing section, Ctrl-C: the previous report stays
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return out / "index.html"


def _write(ctx: ReportContext, out: Path, name: str) -> Path:
    """Build every section of ``ctx`` and write ``report.md`` and ``index.html`` into ``out``.

    The report reads as a researcher reads: the headline figure, the summary of every section's
    verdicts, the main leaderboard (the headline's blocks are given up by their sections), then
    the sections in this order (the results, then their checks, then the rest).
    """
    checks = check_bounds(ctx)
    sections = [
        overview(ctx),
        regret_curves(ctx),
        leaderboards(ctx),
        overall(ctx),
        flags(ctx, checks),
        bound_ratios(ctx),
        lower_bound_section(ctx),
        minimax_values(ctx),
        worst_cases(ctx),
        metric_curves(ctx),
        other_notions(ctx),
        time_varying(ctx),
        tree_experts(ctx),
        stochastic_gap(ctx),
        drifting_bounds(ctx),
        second_order(ctx),
        online_to_batch(ctx),
        boosting(ctx),
        boosting_exp_bound(ctx),
        bandit_feedback(ctx),
        game_dynamics(ctx),
        failures(ctx),
        provenance(ctx),
        methods(ctx),
        files(ctx),
    ]

    built = [s for s in sections if s is not None]
    blocks: list[Block] = []
    nav: list[tuple[str, str]] = []
    for section in [*head_sections(built), *built]:
        nav.append((section.title, section.anchor))
        blocks.append(Heading(section.title, 2, section.anchor))
        blocks += section.blocks
    title = f"regret-arena report: {name}"
    ctx.written.append("report.md")
    (out / "report.md").write_text(render_markdown(title, blocks), encoding="utf-8")
    index = out / "index.html"
    ctx.written.append("index.html")
    index.write_text(render_html(title, blocks, nav), encoding="utf-8")
    # the build's record: what a rerun of the same results changes (revisions, wall times)
    ctx.run_dir.mkdir(exist_ok=True)
    ctx.written.append(f"{RUN_DIR}/report.md")
    record = [
        Para(
            "What this build of the report recorded that a rerun of the same configuration "
            "changes; the report itself (../report.md) leaves it out, so that rebuilding "
            "unchanged results on an unchanged tree rewrites it byte for byte."
        ),
        *ctx.run_blocks,
    ]
    (ctx.run_dir / "report.md").write_text(
        render_markdown(f"{title}: this build", record), encoding="utf-8"
    )
    return index


def head_sections(sections: Sequence[Section]) -> list[Section]:
    """The sections that open the report: the headline figures ``sections`` give up, the summary
    of their verdicts, then the main leaderboard they give up (a leaderboard of every game runs
    to a hundred lines: the summary must not wait behind it)."""
    given = [b for s in sections for b in s.headline]
    figures = [b for b in given if isinstance(b, Figure)]
    boards = [b for b in given if not isinstance(b, Figure)]
    out = [Section("Headline", "headline", figures)] if figures else []
    out.append(summary(sections))
    if boards:
        out.append(Section("Main leaderboard", "main-leaderboard", boards))
    return out


def summary(sections: Sequence[Section]) -> Section:
    """The summary: one line per verdict of ``sections`` (counts and flagged items, computed by
    the sections from their data), each linking to the heading with the details."""
    lines = [(v.label, v.text(), v.anchor, bool(v.flagged)) for s in sections for v in s.verdicts]
    blocks: list[Block] = [
        Para(
            "What the checks below found: each line counts the items a section checked and "
            "names those it flagged (red), with a link to the details.",
            note=True,
        )
    ]
    blocks.append(Summary(lines) if lines else Para("No section made a check.", note=True))
    return Section("Summary", "summary", blocks)


def _move_into_place(held: HeldFolder, staging: Path, old: Sequence[str]) -> None:
    """Replace the earlier report's files (``old``) in the held folder by the staged build.

    The record is written first, naming the files of both builds: a build killed while it moves
    leaves a folder whose every file of ours is listed, which the next build recognizes and
    replaces. Renames within one file system need no disk space, so a full disk stops a build
    before this point, with the previous report intact.
    """
    new = sorted(
        p.relative_to(staging).as_posix()
        for p in staging.rglob("*")
        if p.is_file() and not p.is_symlink()
    )
    held.refuse_links(*new)
    _write_manifest(held, sorted({*old, *new}))
    for rel in sorted(set(old) - set(new)):
        path = held.target(rel)
        if path.is_file():  # a listed file the user removed is no error
            path.unlink()
    for rel in new:
        target = held.target(rel)
        target.parent.mkdir(exist_ok=True)
        os.replace(staging / rel, target)
    _write_manifest(held, new)
    shutil.rmtree(staging)


def _remove_entry(path: Path) -> None:
    """Remove a file, a link (not its target) or a folder (links inside it are not followed)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def check_report_name(name: str) -> str:
    """Return ``name`` if it is a plain report name (one folder under the reports folder).

    Raises :class:`~arena.errors.ReportPathError` for an empty name, a name starting with ``.``
    (``.``, ``..``, hidden folders), a path separator, an absolute or drive path, or a control
    character: any of those would put the report (and its clean-up) elsewhere.

    Examples
    --------
    >>> check_report_name("demo-2")
    'demo-2'
    >>> check_report_name("../victim")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    arena.errors.ReportPathError: invalid report name '../victim': a report name is one folder...
    """
    if not is_plain_name(name):
        raise ReportPathError(
            f"invalid report name {name!r}: a report name is one folder name, without "
            "'/', '\\', '..', a leading '.' or a drive"
        )
    return name


def check_report_folder(out_dir: str | Path) -> None:
    """Raise :class:`~arena.errors.ReportPathError` unless a report may be built into ``out_dir``.

    It may when ``out_dir`` does not exist, is empty, or holds an earlier report; callers that
    do expensive work before :func:`build_report` (the demo's tournament) check first.
    """
    _earlier_files(Path(out_dir))


def _earlier_files(out: Path) -> list[str]:
    """The files an earlier report in ``out`` wrote, from its manifest; refuse a foreign folder.

    ``[]`` when ``out`` does not exist or is empty, and for a report written before manifests
    existed (its ``report.md`` has our title): that one is overwritten, nothing is deleted. The
    lock file of a build and the staging folder of a killed one do not make a folder foreign.
    """
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise ReportPathError(f"refusing to write the report into {out}: not a folder")
    if not out.exists() or not any(
        p.name != LOCK_NAME and not p.name.startswith(_STAGING) for p in out.iterdir()
    ):
        return []
    manifest = out / MANIFEST
    if manifest.is_symlink():
        raise ReportPathError(
            f"refusing to write the report into {out}: {manifest} is a symbolic link"
        )
    try:
        record = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = None
    if isinstance(record, dict) and record.get("kind") == _MANIFEST_KIND:
        files = record.get("files")
        if isinstance(files, list) and all(isinstance(f, str) for f in files):
            return files
    if manifest.exists():
        raise ReportPathError(f"refusing to write the report into {out}: unreadable {manifest}")
    if _legacy_report(out):
        return []
    raise ReportPathError(
        f"refusing to write the report into {out}: the folder is not empty and is not a "
        f"regret-arena report (no {MANIFEST}); choose another name or an empty folder"
    )


def _legacy_report(out: Path) -> bool:
    """Whether ``out`` holds a report from before manifests (index.html, report.md, our title)."""
    try:
        with (out / "report.md").open(encoding="utf-8") as f:
            first = f.readline()
    except (OSError, UnicodeDecodeError):
        return False
    return (out / "index.html").is_file() and first.startswith("# regret-arena report: ")


def _own_files(files: Sequence[str]) -> list[str]:
    """The entries of an earlier record that name a file inside the folder: one that would
    leave it (``..``, absolute, a backslash) is dropped, since the record is a file anyone can
    edit."""
    out = []
    for rel in files:
        parts = PurePosixPath(rel).parts
        if not parts or PurePosixPath(rel).is_absolute() or ".." in parts or "\\" in rel:
            continue
        out.append(PurePosixPath(*parts).as_posix())
    return sorted(set(out))


def _write_manifest(held: HeldFolder, files: Sequence[str]) -> None:
    """Record ``files`` (relative to the held folder) as this report's own, for the next build."""
    record = {"kind": _MANIFEST_KIND, "files": sorted(dict.fromkeys(files))}
    write_text_atomic(json.dumps(record, indent=1) + "\n", held.target(MANIFEST))
