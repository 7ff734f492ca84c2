"""The documentation site's generated pages (docs/_ext/arena_components.py), without a Sphinx
build: one page per registered component holding its parameters, the tidy schema from the code,
the gallery with no link left dangling; and the tutorials' frame (executed by `make docs`)."""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path

import pytest

from arena import registry
from arena.params import describe_constraints
from arena.results import SCHEMA

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _generator():
    path = DOCS / "_ext" / "arena_components.py"
    spec = importlib.util.spec_from_file_location("arena_components", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    gen = _generator()
    out = tmp_path_factory.mktemp("generated")
    written = gen.write_pages(out)
    return gen, out, written


def test_every_registered_component_has_a_page_with_its_parameters(pages):
    gen, out, _ = pages
    for kind in gen.KIND_TITLES:
        index = (out / "components" / kind / "index.md").read_text(encoding="utf-8")
        for name in registry.available(kind):
            page = out / "components" / kind / f"{name}.md"
            assert page.exists(), f"{kind} {name} has no page"
            text = page.read_text(encoding="utf-8")
            assert text.startswith(f"---\norphan: true\n---\n\n# `{name}`"), page
            assert registry.entry(kind, name).entry_point.value.replace(":", ".") in text
            assert f"[`{name}`]({name}.md)" in index, f"{kind} index lacks {name}"
            cls = registry.load(kind, name)
            if not hasattr(cls, "param_defaults"):
                continue
            defaults = cls.param_defaults()
            allowed = describe_constraints(cls)
            lines = text.splitlines()
            for param, default in defaults.items():
                row = next((ln for ln in lines if ln.startswith(f"| `{param}` |")), None)
                assert row is not None, f"{kind} {name}: no row for parameter {param}"
                if default is not inspect.Parameter.empty:
                    assert f"`{default!r}`".replace("|", "\\|") in row, (name, param, row)
                if param in allowed:
                    assert " ".join(allowed[param].split()).replace("|", "\\|") in row
            if not defaults:
                assert "## Parameters\n\nNone." in text


def test_a_page_shows_the_bound_tags_and_references_of_its_docstring(pages):
    _, out, _ = pages
    hedge = (out / "components" / "player" / "hedge.md").read_text(encoding="utf-8")
    assert "## Declared bounds" in hedge and "`regret_bound`" in hedge
    assert "| `block_kernel` | True |" in hedge
    assert "## References" in hedge and "- Freund & Schapire (1997)" in hedge
    ftl = (out / "components" / "player" / "ftl.md").read_text(encoding="utf-8")
    fair = (out / "components" / "adversary" / "fair_coin.md").read_text(encoding="utf-8")
    assert "declares no bound" in ftl or "declares upper bounds" in ftl
    assert "declares lower bounds" in fair


def test_the_schema_page_lists_the_code_columns_in_order(pages):
    _, out, _ = pages
    text = (out / "schema.md").read_text(encoding="utf-8")
    columns = re.findall(r"^\| `(\w+)` \|", text, flags=re.MULTILINE)
    assert columns == SCHEMA


def test_the_gallery_page_keeps_the_table_and_leaves_no_relative_link(pages):
    gen, out, _ = pages
    text = (out / "gallery.md").read_text(encoding="utf-8")
    assert "<!-- gallery table" in text and "| source |" in text
    assert not re.search(r"\]\((?!https?://|#)[^)]*\)", text), "a relative link is left"
    assert "(`reports/minimax-values/report.md`)" in text
    url = "https://example.org/r/blob/main"
    linked = gen.gallery_page(DOCS.parent / "reports" / "README.md", url)
    assert f"]({url}/reports/bandits/report.md)" in linked


def test_a_second_write_rewrites_nothing_and_drops_stale_pages(pages):
    gen, out, written = pages
    stale = out / "components" / "player" / "gone.md"
    stale.write_text("# gone\n", encoding="utf-8")
    before = {p: p.stat().st_mtime_ns for p in written}
    assert gen.write_pages(out) == written
    assert not stale.exists()
    assert {p: p.stat().st_mtime_ns for p in written} == before


def test_docstring_sections():
    gen = _generator()
    doc = (
        "Thing.\n\n    Long.\n\n    References\n    ----------\n    A (2000), x\n      y.\n    B.\n"
    )
    sections = gen.docstring_sections(doc)
    assert sections[""] == "Thing.\n\nLong."
    assert gen._reference_items(sections["References"]) == ["A (2000), x y.", "B."]


TUTORIALS = ("01-first-experiment", "04-own-tournament", "05-reproduce-a-result")


@pytest.mark.parametrize("name", TUTORIALS)
def test_the_newcomer_route_has_its_executed_tutorials(name):
    """Python, your own tournament, Dask and the gallery each have a tutorial the build executes
    (a failing cell fails `make docs`, which CI runs)."""
    text = (DOCS / "tutorials" / f"{name}.md").read_text(encoding="utf-8")
    assert text.startswith("---\njupytext:") and "name: python3" in text
    assert text.count("```{code-cell} ipython3") >= 3
    assert "tutorials/*" in (DOCS / "index.md").read_text(encoding="utf-8")
    conf = (DOCS / "conf.py").read_text(encoding="utf-8")
    assert 'nb_execution_mode = "force"' in conf and "nb_execution_raise_on_error = True" in conf


def test_the_dask_tutorial_compares_the_rows_with_the_serial_run():
    text = (DOCS / "tutorials" / "04-own-tournament.md").read_text(encoding="utf-8")
    assert "LocalCluster(n_workers=2, threads_per_worker=1" in text
    assert "executor=dask" in text and "assert_frame_equal(a, b)" in text
