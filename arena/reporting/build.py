"""``build_report``: load the results, build each section in turn, write the two renderings."""

from __future__ import annotations

import difflib
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath, PureWindowsPath

from arena.errors import ConfigError, ReportPathError
from arena.reporting.load import check_complete, load_source
from arena.reporting.render import Block, Heading, render_html, render_markdown
from arena.reporting.sections.bandit import bandit_feedback
from arena.reporting.sections.boosting import boosting
from arena.reporting.sections.bound_ratios import bound_ratios
from arena.reporting.sections.context import ReportContext
from arena.reporting.sections.dynamics import game_dynamics
from arena.reporting.sections.failures import failures
from arena.reporting.sections.files import files
from arena.reporting.sections.flags import check_bounds, flags
from arena.reporting.sections.leaderboards import leaderboards
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

MANIFEST = "report-files.json"
"""The record, inside a report folder, of the files the report wrote there (and may delete)."""
_MANIFEST_KIND = "regret-arena report files"


def build_report(
    source_dir: str | Path,
    out_dir: str | Path,
    *,
    name: str,
    metrics: Sequence[str] = ("regret",),
    level: float = 0.95,
    warn: Callable[[str], None] | None = None,
    partial: bool = False,
) -> Path:
    """Write the report of the results under ``source_dir`` into ``out_dir``; return index.html.

    Parameters
    ----------
    source_dir : path
        A tournament directory, a Hydra multirun directory or one run folder.
    out_dir : path
        Where to write: created, or empty, or an earlier report. The files an earlier build
        listed in its ``report-files.json`` are deleted, nothing else; a non-empty folder
        without that record is refused (:class:`~arena.errors.ReportPathError`).
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

    Raises
    ------
    ConfigError
        If a metric of ``metrics`` has no rows in the results (before anything is written).
    """
    started = time.perf_counter()
    out = Path(out_dir)
    old = _earlier_files(out)  # refuse a foreign folder before reading, let alone writing
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
    fig_dir, tab_dir = out / "figures", out / "tables"
    _remove(out, old)
    for d in (fig_dir, tab_dir):
        if d.is_symlink():  # files written through it would land outside the report folder
            raise ReportPathError(f"refusing to write the report through the symlink {d}")
        d.mkdir(parents=True, exist_ok=True)
    ctx = ReportContext(
        src, list(dict.fromkeys(["regret", *metrics])), level, fig_dir, tab_dir, started
    )
    try:
        return _write(ctx, out, name)
    finally:
        # Written even when a section fails, so that the next build removes the partial files.
        _write_manifest(out, ctx.written)


def _write(ctx: ReportContext, out: Path, name: str) -> Path:
    """Build every section of ``ctx`` and write ``report.md`` and ``index.html`` into ``out``."""
    checks = check_bounds(ctx)
    sections = [
        overview(ctx, checks),
        flags(ctx, checks),
        bound_ratios(ctx),
        leaderboards(ctx),
        overall(ctx),
        regret_curves(ctx),
        minimax_values(ctx),
        metric_curves(ctx),
        other_notions(ctx),
        time_varying(ctx),
        tree_experts(ctx),
        second_order(ctx),
        online_to_batch(ctx),
        boosting(ctx),
        bandit_feedback(ctx),
        game_dynamics(ctx),
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
    ctx.written.append("report.md")
    (out / "report.md").write_text(render_markdown(title, blocks), encoding="utf-8")
    index = out / "index.html"
    ctx.written.append("index.html")
    index.write_text(render_html(title, blocks, nav), encoding="utf-8")
    return index


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
    bad = (
        not name.strip()
        or name.startswith(".")
        or any(sep in name for sep in ("/", "\\"))
        or any(ord(ch) < 32 for ch in name)
        or PurePosixPath(name).is_absolute()
        or bool(PureWindowsPath(name).drive)
    )
    if bad:
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
    existed (its ``report.md`` has our title): that one is overwritten, nothing is deleted.
    """
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise ReportPathError(f"refusing to write the report into {out}: not a folder")
    if not out.exists() or not any(out.iterdir()):
        return []
    manifest = out / MANIFEST
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


def _remove(out: Path, files: Sequence[str]) -> None:
    """Delete the listed files of an earlier build; a listed path that would leave ``out``
    (``..``, absolute, through a symlink) is skipped, since the manifest is a file anyone can
    edit."""
    root = out.resolve()
    for rel in files:
        parts = PurePosixPath(rel).parts
        if not parts or PurePosixPath(rel).is_absolute() or ".." in parts or "\\" in rel:
            continue
        path = out.joinpath(*parts)
        if path.is_symlink() or not path.is_file() or not path.resolve().is_relative_to(root):
            continue
        path.unlink()


def _write_manifest(out: Path, files: Sequence[str]) -> None:
    """Record ``files`` (relative to ``out``) as this report's own, for the next build."""
    record = {"kind": _MANIFEST_KIND, "files": sorted(dict.fromkeys(files))}
    (out / MANIFEST).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
