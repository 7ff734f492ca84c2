"""Writers never remove what another process holds, never follow a link out of their folder, and a
killed or disk-full report leaves a folder its rerun replaces (issue 28, classes 1, 2 and 5).

Races are played with :func:`arena.results.folder_lock` held by the test itself, as a running
writer holds it; links point at a sentinel folder hashed before and after
(:func:`tests.helpers.contract.snapshot`). Commands run in-process (``run_in_process``), except
the report killed with SIGKILL, which needs a process of its own.
"""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
import shutil
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

import arena
from arena.reporting import build_report, check_report_folder
from arena.reporting.build import MANIFEST
from arena.results import LOCK_NAME, folder_lock, write_run
from tests.helpers.contract import assert_refused, assert_untouched, run_in_process, snapshot

RUN = ["run", "player=hedge", "adversary=fair_coin", "horizon=20", "replicates=2", "seed=1"]

TINY = """\
name: tiny
players: [hedge]
adversaries: [fair_coin]
n_actions: [3]
horizon: 20
replicates: 2
seed: 1
metrics: {regret: {}}
"""


def _victim(parent: Path) -> Path:
    """A sentinel folder outside every output folder: a link points into it, nothing may change."""
    victim = parent / "victim"
    (victim / "tables").mkdir(parents=True)
    (victim / "precious.csv").write_text("a,b\n1,2\n")
    (victim / "tables" / "leaderboards.csv").write_text("mine\n")
    return victim


def _tournament_file(folder: Path, text: str = TINY) -> Path:
    path = folder / "tiny.yaml"
    path.write_text(text)
    return path


def _gallery(folder: Path) -> list[str]:
    """A gallery of one report whose tournament lies inside the folder the report reads
    (``grp/tiny`` inside ``grp``, as the committed gallery nests them); the reproduce options."""
    _tournament_file(folder)
    listing = folder / "gallery.yaml"
    listing.write_text(
        "reports:\n"
        "  - {name: tiny-report, results: grp, tournaments: [{file: tiny.yaml, out: grp/tiny}]}\n"
    )
    return [
        "reproduce",
        "--list",
        str(listing),
        "--reports",
        str(folder / "reports"),
        "--outputs",
        str(folder / "out"),
        "executor=serial",
        "--progress",
        "false",
    ]


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """A run folder to report on (one cell: the report builds in about a second)."""
    folder = tmp_path_factory.mktemp("source") / "run"
    run = arena.run_game(
        "hedge",
        "fair_coin",
        n_actions=3,
        horizon=30,
        replicates=2,
        seed=1,
        metrics={"regret": {}},
    )
    write_run(run, folder)
    return folder


@pytest.fixture(scope="module")
def built(source, tmp_path_factory) -> Path:
    """A report of ``source``, built once; tests work on copies of it."""
    out = tmp_path_factory.mktemp("built") / "r"
    build_report(source, out, name="r")
    return out


def _copy(report: Path, parent: Path) -> Path:
    out = parent / "reports" / report.name
    shutil.copytree(report, out, symlinks=True)
    return out


# ----------------------------------------------------------------------------------------------
# 1. a refused or --fresh writer never removes what another process holds


@pytest.mark.parametrize("extra", [[], ["trace=true"]], ids=["run", "trace"])
def test_a_run_refused_by_a_busy_folder_leaves_the_holders_folder(tmp_path, extra):
    out = tmp_path / "run"
    args = [*RUN, f"hydra.run.dir={out}", *extra]
    with folder_lock(out, "the first run") as held:
        for _ in range(2):  # the second run, then a third, are refused; the folder stays held
            refused = run_in_process(args, tmp_path)
            assert_refused(refused, "is in use by the first run (pid")
            assert (out / LOCK_NAME).is_file()
            held.check()  # the path still names the folder the first run locked
    assert not (out / LOCK_NAME).exists()  # its holder took the lock file with it
    done = run_in_process(args, tmp_path)  # released: the same command runs
    assert done.returncode == 0, done.stderr
    assert (out / "results.parquet").is_file()
    assert (out / "trace.parquet").is_file() == bool(extra)


@pytest.mark.parametrize("busy", ["grp/tiny", "grp/mine"], ids=["listed", "inside-results"])
def test_fresh_never_removes_a_tournament_folder_in_use(tmp_path, busy):
    """``--fresh`` empties the report's folders under their locks: a tournament running in one
    of them (listed, or one of the user's inside the results folder) is refused, never removed."""
    options = _gallery(tmp_path)
    held_folder = tmp_path / "out" / busy
    (held_folder / "parts").mkdir(parents=True)
    (held_folder / "parts" / "results-abc.parquet").write_bytes(b"a finished cell")
    with folder_lock(held_folder, "arena tournament tiny"):
        before = snapshot(held_folder)
        refused = run_in_process([*options, "--fresh"], tmp_path)
        assert_refused(refused, f"{held_folder} is in use by arena tournament tiny")
        assert_untouched(before, held_folder)
    assert not (tmp_path / "reports").exists()  # refused before any report was written


def test_a_report_into_a_busy_folder_is_refused(source, tmp_path):
    reports = tmp_path / "reports"
    with folder_lock(reports / "r", "arena report r"):
        before = snapshot(reports)
        refused = run_in_process(
            ["report", str(source), "--name", "r", "--reports", str(reports)], tmp_path
        )
        assert_refused(refused, "is in use by arena report r")
        assert_untouched(before, reports)


# ----------------------------------------------------------------------------------------------
# 2. no symbolic link is followed out of an output folder


def _tournament_command(tmp_path: Path, out: Path) -> list[str]:
    config = _tournament_file(tmp_path)
    return [
        "tournament",
        "--config",
        str(config),
        f"out={out}",
        "executor=serial",
        "progress=false",
    ]


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
@pytest.mark.parametrize("command", ["run", "tournament"])
def test_a_planted_lock_file_never_truncates_its_target(tmp_path, command, kind):
    victim = _victim(tmp_path)
    before = snapshot(victim)
    out = tmp_path / "out"
    out.mkdir()
    if kind == "symlink":
        (out / LOCK_NAME).symlink_to(Path("..") / "victim" / "precious.csv")
    else:
        os.link(victim / "precious.csv", out / LOCK_NAME)
    args = (
        [*RUN, f"hydra.run.dir={out}"] if command == "run" else _tournament_command(tmp_path, out)
    )
    sandbox = snapshot(tmp_path)
    refused = run_in_process(args, tmp_path)
    assert_refused(refused, LOCK_NAME, "remove it or choose another directory")
    assert_untouched(before, victim)
    assert_untouched(sandbox, tmp_path)  # the planted file too: a refused command changes nothing


@pytest.mark.parametrize("command", ["run", "tournament", "fresh"])
def test_a_linked_output_folder_is_refused(tmp_path, command):
    victim = _victim(tmp_path)
    if command == "fresh":  # the target holds a tournament's folder; --fresh must not reuse it
        options = _gallery(tmp_path)
        (tmp_path / "out").mkdir()
        (tmp_path / "out" / "grp").symlink_to(victim)
        (victim / "tiny" / "parts").mkdir(parents=True)
        (victim / "tiny" / "parts" / "results-abc.parquet").write_bytes(b"a finished cell")
        args = [*options, "--fresh"]
    else:
        link = tmp_path / "link"
        link.symlink_to(victim)
        args = (
            [*RUN, f"hydra.run.dir={link}"]
            if command == "run"
            else _tournament_command(tmp_path, link)
        )
    before = snapshot(victim)
    refused = run_in_process(args, tmp_path)
    assert_refused(refused, "is a symbolic link")
    assert_untouched(before, victim)


@pytest.mark.parametrize("name", [".hydra", "trace.parquet"])
def test_a_linked_file_or_folder_in_a_run_folder_is_refused(tmp_path, name):
    victim = _victim(tmp_path)
    before = snapshot(victim)
    out = tmp_path / "out"
    out.mkdir()
    (out / name).symlink_to(victim if name == ".hydra" else victim / "precious.csv")
    sandbox = snapshot(tmp_path)
    refused = run_in_process([*RUN, f"hydra.run.dir={out}", "trace=true"], tmp_path)
    assert_refused(refused, f"{out / name} is a symbolic link")
    assert_untouched(before, victim)
    assert_untouched(sandbox, tmp_path)  # the user's link stays, and nothing else is written


@pytest.mark.parametrize("rel", ["index.html", "tables/leaderboards.csv"])
def test_a_report_file_replaced_by_a_link_is_never_written_through(built, source, tmp_path, rel):
    victim = _victim(tmp_path)
    out = _copy(built, tmp_path)
    (out / rel).unlink()
    (out / rel).symlink_to(victim / rel.replace("index.html", "precious.csv"))
    before = snapshot(victim)
    refused = run_in_process(
        ["report", str(source), "--name", out.name, "--reports", str(out.parent)], tmp_path
    )
    assert_refused(refused, f"{out / rel} is a symbolic link")
    assert_untouched(before, victim)


def test_a_tournament_name_that_is_a_path_is_refused(tmp_path):
    """``name`` makes the default folder (``outputs/tournaments/<name>``) and the report's name."""
    cwd = tmp_path / "a" / "b"
    cwd.mkdir(parents=True)
    config = _tournament_file(cwd, TINY.replace("name: tiny", "name: ../../escape"))
    before = snapshot(tmp_path)
    refused = run_in_process(
        ["tournament", "--config", str(config), "executor=serial", "progress=false"], cwd
    )
    assert_refused(refused, "tournament: parameter 'name': '../../escape' is not a plain name")
    assert_untouched(before, tmp_path)


# ----------------------------------------------------------------------------------------------
# 5. a killed or disk-full report leaves no folder that its rerun refuses

KILL_AT_PROVENANCE = """
import os, signal, sys
from pathlib import Path
import arena.reporting.build as build

def killed(ctx):  # late in the build: most figures and tables are written by then
    os.kill(os.getpid(), signal.SIGKILL)

build.provenance = killed
build.build_report(Path(sys.argv[1]), Path(sys.argv[2]), name="r")
"""


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_a_killed_report_leaves_a_folder_its_rerun_replaces(source, tmp_path):
    out = tmp_path / "reports" / "r"
    killed = subprocess.run(
        [sys.executable, "-c", KILL_AT_PROVENANCE, str(source), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert out.is_dir() and any(out.rglob("*.csv"))  # it was killed while writing
    check_report_folder(out)  # not refused
    build_report(source, out, name="r")
    record = json.loads((out / MANIFEST).read_text())["files"]
    # nothing of the killed build is left: every file is the new report's and is listed
    assert _files(out) == {*record, MANIFEST}
    assert "index.html" in record and "tables/leaderboards.csv" in record


class _Filling:
    """A file opened for writing on a disk that fills up: past the budget, writes fail."""

    def __init__(self, handle, budget: list[int]):
        self._handle = handle
        self._budget = budget

    def write(self, data):
        self._budget[0] -= len(data)
        if self._budget[0] < 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return self._handle.write(data)

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __iter__(self):
        return iter(self._handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._handle.close()


@contextmanager
def _disk_full_after(n_bytes: int, monkeypatch):
    """Every file Python opens for writing shares ``n_bytes`` of free space (open, io.open,
    pathlib, os.fdopen, pandas and matplotlib all go through them)."""
    real_open = builtins.open
    budget = [n_bytes]

    def filling_open(file, mode="r", *args, **kwargs):
        handle = real_open(file, mode, *args, **kwargs)
        return _Filling(handle, budget) if set(mode) & set("wax+") else handle

    with monkeypatch.context() as patch:
        patch.setattr(builtins, "open", filling_open)
        patch.setattr(io, "open", filling_open)
        yield


@pytest.mark.parametrize("earlier", [False, True], ids=["first-build", "rebuild"])
def test_a_report_that_runs_out_of_disk_leaves_the_previous_folder(
    built, source, tmp_path, monkeypatch, earlier
):
    out = _copy(built, tmp_path) if earlier else tmp_path / "reports" / "r"
    out.parent.mkdir(exist_ok=True)
    before = snapshot(tmp_path)
    with _disk_full_after(20_000, monkeypatch), pytest.raises(OSError, match="No space left"):
        build_report(source, out, name="r")
    # the earlier report is whole, or the folder made for the failed build is gone
    assert_untouched(before, tmp_path)
    check_report_folder(out)  # and the rerun is not refused
