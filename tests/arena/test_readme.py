"""The README's Python examples run as written (against a small game), so the doc cannot drift."""

from __future__ import annotations

import ast
import contextlib
import io
import math
import re
from pathlib import Path

import pandas as pd

README = Path(__file__).resolve().parents[2] / "README.md"
SMALL = {"horizon=10_000": "horizon=300", "replicates=64": "replicates=4"}
"""The README's game, made small; each key must still be in the README (else the test fails)."""


def python_blocks() -> list[str]:
    """Every ```python block of the README, in order."""
    return re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)


def test_readme_python_examples_run_and_keep_the_rows_without_a_parameter():
    blocks = python_blocks()
    assert len(blocks) >= 2, "the README's Python examples moved"
    source = "\n".join(blocks)
    for big, small in SMALL.items():
        assert big in source, f"the README's example no longer says {big}"
        source = source.replace(big, small)
    namespace: dict = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(ast.parse(source), str(README), "exec"), namespace)
    # the grouped summary the example prints: regret (param NaN) survives the groupby
    final = namespace["final"]
    summary = final.groupby(["metric", "param"], dropna=False).value.describe()
    keys = set(summary.index)
    assert any(m == "regret" and math.isnan(p) for m, p in keys)
    assert {("shifting_regret", 1.0), ("shifting_regret", 4.0)} <= keys
    assert summary["count"].eq(4).all()
    out = printed.getvalue()
    assert "regret" in out.replace("shifting_regret", "")
    # the variant labels of the second example: one hedge variant, away from the default rate
    assert set(namespace["df"]["label"]) == {"hedge(eta=anytime)"}
    curves = namespace["curves"]
    assert isinstance(curves, pd.DataFrame) and list(curves.columns) == ["hedge(eta=anytime)"]
    assert curves.index.max() == 300
