"""Build a tiny wheel that owns top-level ``players``, ``adversaries`` and ``weak_learners``.

``make test-wheel`` installs it beside the arena's wheel: generic top-level names belong to
whoever claims them first in site-packages, so the arena's wheel must install only ``arena``
(its components are ``arena.players``, ``arena.adversaries`` and ``arena.weak_learners``), and
both must keep working side by side. The wheel is written directly (a zip with a ``.dist-info``
folder, PEP 427), so that no build backend or download is needed.

Run::

    python tests/helpers/squatter.py DIST  # writes DIST/generic_names_squatter-1.0-py3-none-any.whl
"""

from __future__ import annotations

import base64
import hashlib
import sys
import zipfile
from pathlib import Path

PACKAGES = ("players", "adversaries", "weak_learners")
NAME, VERSION = "generic_names_squatter", "1.0"


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def write_squatter(folder: Path) -> Path:
    """Write the wheel into ``folder`` and return its path."""
    info = f"{NAME}-{VERSION}.dist-info"
    files = {f"{package}/__init__.py": b'OWNER = "squatter"\n' for package in PACKAGES}
    files[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {NAME.replace('_', '-')}\nVersion: {VERSION}\n".encode()
    )
    files[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: squatter\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = [_record_line(path, data) for path, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel


if __name__ == "__main__":
    print(write_squatter(Path(sys.argv[1])))
