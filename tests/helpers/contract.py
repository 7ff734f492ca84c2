"""The bad-input contract of the command line, and running ``arena`` in-process to check it.

A refused command exits with 2, prints exactly one line on stderr (``arena: error: …``) that
names what is at fault, prints no traceback, writes no results and touches no file: the sandbox
folder it ran in is byte-for-byte and timestamp-for-timestamp what it was before.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
from dataclasses import dataclass
from pathlib import Path

from arena.apps.cli import main


@dataclass
class Result:
    """What one ``arena`` command did."""

    returncode: int
    stdout: str
    stderr: str


def run_in_process(argv: list[str], cwd: Path) -> Result:
    """Run ``arena *argv`` in this process, in ``cwd``; return its exit code and output.

    In-process runs take ~0.2 s where a subprocess takes ~2 s (imports), which is what lets the
    corpus and the property-based test try hundreds of command lines in CI.
    """
    out, err = io.StringIO(), io.StringIO()
    here = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(argv))
            except SystemExit as exc:  # argparse exits on its own usage errors
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os.chdir(here)
    return Result(code, out.getvalue(), err.getvalue())


def snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every file and folder under ``root``: (size, mtime in ns, SHA-1 of the content).

    Python's own bytecode cache (``__pycache__``, written when a command imports a plugin module
    from the folder, unless ``PYTHONDONTWRITEBYTECODE`` is set) is not counted: the contract is
    about what the arena writes.
    """
    state = {}
    for path in sorted(root.rglob("*")):
        if "__pycache__" in path.relative_to(root).parts:
            continue
        info = path.lstat()
        digest = hashlib.sha1(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        state[str(path.relative_to(root))] = (info.st_size, info.st_mtime_ns, digest)
    return state


def assert_refused(result: Result, *needles: str) -> str:
    """Exit code 2, no traceback, one line on stderr holding every needle; return the line."""
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    assert "internal error" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, (result.returncode, result.stderr, result.stdout[-500:])
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("arena: error: "), line
    for needle in needles:
        assert needle in line, f"{needle!r} not in {line!r}"
    return line


def assert_untouched(before: dict, root: Path) -> None:
    """Nothing under ``root`` was created, changed (even rewritten identically) or removed."""
    after = snapshot(root)
    created = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    # a folder's own mtime changes when an entry is created and removed again inside it; what
    # matters is its entries, compared above
    changed = [k for k in changed if before[k][2] != "dir"]
    assert not (created or removed or changed), dict(
        created=created, removed=removed, changed=changed
    )
