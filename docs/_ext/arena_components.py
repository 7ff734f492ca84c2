"""Sphinx extension writing the site's generated pages: one per registered component, the tidy
schema and the gallery.

Connected to ``builder-inited``, it writes MyST Markdown under ``docs/_generated/`` (git-ignored)
before Sphinx reads the sources, so the pages follow the registry, :data:`arena.results.SCHEMA`
and ``reports/README.md`` and cannot drift from them:

* ``components/<kind>/<name>.md`` for every name of :data:`arena.registry.KINDS` (plugins
  installed in the environment included): the registry name, class path and distribution, the
  first paragraph of the class docstring, the parameter table (default and the allowed values
  of :func:`arena.params.describe_constraints`, the words of ``arena list``), the declared bounds,
  the tags and the docstring's Notes and References; and ``components/<kind>/index.md``, a table;
* ``schema.md``: the columns of ``results.parquet`` from :data:`arena.results.ARROW_SCHEMA`;
* ``gallery.md``: ``reports/README.md``, its links to the reports rewritten to repository paths.

:func:`write_pages` is the generator, callable without Sphinx (``tests/docs``).
"""

from __future__ import annotations

import inspect
import re
import textwrap
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

KIND_TITLES = {
    "player": "Players",
    "adversary": "Adversaries",
    "weak_learner": "Weak learners",
    "metric": "Metrics",
    "protocol": "Protocols",
}
"""Each registry kind and the title of its index page, in the order of the site's contents."""

SECTION = re.compile(r"^(\S[^\n]*)\n-{3,}\s*$", re.MULTILINE)
ROLE = re.compile(r":(?:py:)?[a-z]+:`~?([^`]+)`")

REPO = Path(__file__).resolve().parents[2]


def _markdown(text: str) -> str:
    """Docstring reST made safe for MyST: roles become code (their targets need not be on the
    site, and the build is nitpicky), and ``|`` is escaped so that text fits a table cell."""
    return ROLE.sub(lambda m: f"``{m.group(1)}``", text)


def _cell(text: str) -> str:
    """One table cell: one line, pipes escaped."""
    return " ".join(_markdown(text).split()).replace("|", "\\|")


def docstring_sections(doc: str | None) -> dict[str, str]:
    """Split a numpydoc docstring into ``{"": summary and extended text, section: body}``.

    Examples
    --------
    >>> d = "Sum.\\n\\n    More.\\n\\n    Notes\\n    -----\\n    Exact.\\n"
    >>> docstring_sections(d)
    {'': 'Sum.\\n\\nMore.', 'Notes': 'Exact.'}
    """
    text = inspect.cleandoc(doc or "")
    out: dict[str, str] = {}
    marks = list(SECTION.finditer(text))
    out[""] = text[: marks[0].start() if marks else len(text)].strip()
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        out[m.group(1).strip()] = textwrap.dedent(text[m.end() : end]).strip("\n").rstrip()
    return out


def first_paragraph(doc: str | None) -> str:
    """The first paragraph of a docstring, on one line."""
    return " ".join(docstring_sections(doc)[""].split("\n\n")[0].split())


def _reference_items(body: str) -> list[str]:
    """The entries of a References section: a line at the section's indentation starts one,
    deeper lines continue it."""
    items: list[str] = []
    for line in body.splitlines():
        if not line.strip():
            continue
        if line[:1].isspace() and items:
            items[-1] += " " + line.strip()
        else:
            items.append(line.strip())
    return items


def _value(v: Any) -> str:
    if isinstance(v, frozenset | set):
        return ", ".join(sorted(map(str, v))) or "(none)"
    return repr(v)


def _overrides(cls: type, method: str, base_attr: str | None = None) -> Any:
    """The method ``cls`` defines for ``method``, or None when it keeps its base's default."""
    found = getattr(cls, method, None)
    if found is None or getattr(found, "declares_nothing", False):
        return None
    if base_attr == "adversary":
        from arena.components import Adversary

        if found is getattr(Adversary, method, None):
            return None
    return found


def _bounds_section(kind: str, cls: type) -> list[str]:
    """What the component declares of the guarantees the ``bound`` and ``lower_bound`` metrics
    log (architecture: declared guarantees)."""
    out: list[str] = []
    if kind == "player":
        method = _overrides(cls, "bounds")
        if method is None:
            return ["The player declares no bound (the `bound` metric is skipped for it)."]
        out.append(
            "The player declares upper bounds, logged as metric `bound:<metric>` beside the "
            "metric they bound (`bound` in `metrics=`):"
        )
        for name in ("bounds", "regret_bound"):
            m = getattr(cls, name, None)
            if m is not None and m.__doc__:
                out += ["", f"- `{name}`: {_cell(first_paragraph(m.__doc__))}"]
        return out
    if kind == "adversary":
        method = _overrides(cls, "lower_bounds", "adversary")
        if method is None:
            return ["The adversary declares no lower bound."]
        out.append(
            "The adversary declares lower bounds, logged as metric `lower_bound:<metric>` "
            "(`lower_bound` in `metrics=`):"
        )
        out += ["", f"- `lower_bounds`: {_cell(first_paragraph(method.__doc__))}"]
        return out
    return []


def _tags_rows(kind: str, cls: type) -> list[tuple[str, str]]:
    """``(tag, value)`` rows: a player's or adversary's tags, a weak learner's tasks, a metric's
    protocols and parameter."""
    tags = getattr(cls, "tags", None)
    rows: list[tuple[str, str]] = []
    if tags is not None and is_dataclass(tags):
        rows += [(f.name, _value(getattr(tags, f.name))) for f in fields(tags)]
    if kind == "weak_learner" and hasattr(cls, "tasks"):
        rows.append(("tasks", _value(cls.tasks)))
    if kind == "metric":
        protocols = getattr(cls, "protocols", None)
        rows.append(("protocols", "every protocol" if protocols is None else _value(protocols)))
        rows.append(("param_name", repr(getattr(cls, "param_name", None))))
    return rows


def component_page(kind: str, name: str) -> str:
    """The MyST page of one registered component."""
    from arena import registry
    from arena.params import describe_constraints

    reg = registry.entry(kind, name)
    cls = registry.load(kind, name)
    sections = docstring_sections(cls.__doc__)
    lines = [
        # reached from its kind's index table, not from a toctree: the theme draws every
        # toctree entry into every page's sidebar, and ~200 component entries there made the
        # site's HTML writing quadratic (half of the build's time)
        "---",
        "orphan: true",
        "---",
        "",
        f"# `{name}`",
        "",
        f"{KIND_TITLES[kind][:-1] if kind != 'adversary' else 'Adversary'} `{name}`: "
        f"class `{reg.entry_point.value.replace(':', '.')}` "
        f"(distribution `{reg.distribution}`).",
        "",
        _markdown(sections[""].split("\n\n")[0]),
        "",
    ]
    if hasattr(cls, "param_defaults"):
        defaults = cls.param_defaults()
        allowed = describe_constraints(cls)
        documented = _param_docs(sections.get("Parameters", ""))
        lines += ["## Parameters", ""]
        if defaults:
            lines += ["| parameter | default | allowed values | description |", "|---|---|---|---|"]
            for p, d in defaults.items():
                default = "(required)" if d is inspect.Parameter.empty else f"`{d!r}`"
                lines.append(
                    f"| `{p}` | {_cell(default)} | {_cell(allowed.get(p, 'not declared'))} | "
                    f"{_cell(documented.get(p, ''))} |"
                )
        else:
            lines.append("None.")
        lines.append("")
    bounds = _bounds_section(kind, cls)
    if bounds:
        lines += ["## Declared bounds", "", *bounds, ""]
    tags = _tags_rows(kind, cls)
    if tags:
        lines += ["## Tags", "", "| tag | value |", "|---|---|"]
        lines += [f"| `{t}` | {_cell(v)} |" for t, v in tags]
        lines.append("")
    if sections.get("Notes"):
        lines += ["## Notes", "", _markdown(sections["Notes"]), ""]
    refs = _reference_items(sections.get("References", ""))
    if refs:
        lines += ["## References", ""]
        lines += [f"- {_markdown(r)}" for r in refs]
        lines.append("")
    return "\n".join(lines)


def _param_docs(body: str) -> dict[str, str]:
    """``{name: description}`` from a numpydoc Parameters section (``a, b : type`` names both)."""
    out: dict[str, str] = {}
    current: list[str] = []
    for line in body.splitlines():
        if line and not line[:1].isspace():
            names = line.split(" : ")[0]
            current = [n.strip() for n in names.split(",") if n.strip()]
            for n in current:
                out[n] = ""
        elif line.strip():
            for n in current:
                out[n] = (out[n] + " " + line.strip()).strip()
    return out


def kind_index(kind: str, names: list[str]) -> str:
    """The index page of one kind: a table of its names with their first docstring line."""
    from arena import registry

    lines = [
        f"# {KIND_TITLES[kind]}",
        "",
        f"Every `{registry.KINDS[kind]}` entry point installed where the site was built "
        "(plugins included), as `arena list` shows them.",
        "",
        "| name | what it is | parameters |",
        "|---|---|---|",
    ]
    for name in names:
        cls = registry.load(kind, name)
        params = ", ".join(f"`{p}`" for p in getattr(cls, "param_names", list)())
        lines.append(
            f"| [`{name}`]({name}.md) | {_cell(first_paragraph(cls.__doc__))} | {params} |"
        )
    lines.append("")
    return "\n".join(lines)


def schema_page() -> str:
    """The tidy schema page, from the Arrow schema ``results.parquet`` is written with."""
    from arena.results import ARROW_SCHEMA, SCHEMA

    assert ARROW_SCHEMA.names == SCHEMA
    meaning = {
        "run_id": "digest of the game's configuration: the same command gives the same id",
        "cell": "digest of the tournament cell (equal to `run_id` for `arena run`)",
        "player": "the player's registry name",
        "player_params": "its parameters, canonical JSON",
        "adversary": "the adversary's registry name",
        "adversary_params": "its parameters, canonical JSON",
        "protocol": "the protocol played (`experts`, `bandit`, `oco`, `boosting`, ...)",
        "n_actions": "N: experts, arms or dimension",
        "horizon": "T: the rounds of the game",
        "replicate": "which of the R replicates (0-based)",
        "seed": "the replicate's seed",
        "t": "the checkpoint: rounds played",
        "metric": "the metric's registry name (`bound:<m>` / `lower_bound:<m>` for declarations)",
        "param": "the metric's parameter (ε, k, τ...), NaN for a metric without one",
        "value": "the metric's value after round `t`",
    }
    lines = [
        "# The tidy schema",
        "",
        "Every game, tournament cell and `arena.play` call gives rows of these columns, in this "
        "order (`arena.results.SCHEMA`, written to `results.parquet` with "
        "`arena.results.ARROW_SCHEMA`); one row per replicate, checkpoint, metric and parameter. "
        "This table is generated from the code at each build.",
        "",
        "| column | type | meaning |",
        "|---|---|---|",
    ]
    for f in ARROW_SCHEMA:
        lines.append(f"| `{f.name}` | {f.type} | {_cell(meaning.get(f.name, ''))} |")
    lines += [
        "",
        "The contract in full: [Results (contract)](../architecture.md#results-contract).",
        "",
    ]
    return "\n".join(lines)


REPORT_LINK = re.compile(r"\]\(([\w.-]+/[^)\s]*)\)")


def gallery_page(readme: Path, source_url: str | None = None) -> str:
    """``reports/README.md`` as a page: links to the reports become repository paths, links to
    ``source_url`` (``.../blob/main``) when it is given, else code spans."""

    text = readme.read_text(encoding="utf-8")
    if source_url:
        base = source_url.rstrip("/")
        text = REPORT_LINK.sub(lambda m: f"]({base}/reports/{m.group(1)})", text)
    else:  # no repository address to link to: name the file where the report lives
        text = re.sub(r"\[([^\]]+)\]\(([\w.-]+/[^)\s]*)\)", r"\1 (`reports/\2`)", text)
    _title, _, rest = text.partition("\n")
    return "(gallery)=\n# Gallery: the reports and the reproduced results\n" + rest


def write_pages(out_dir: Path, source_url: str | None = None) -> list[Path]:
    """Write every generated page under ``out_dir``; return the pages written.

    Pages whose text is unchanged are not rewritten, so Sphinx rereads only what changed.
    """
    from arena import registry

    written: list[Path] = []

    def put(rel: str, text: str) -> None:
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.append(path)

    for kind in KIND_TITLES:
        names = registry.available(kind)
        for name in names:
            put(f"components/{kind}/{name}.md", component_page(kind, name))
        put(f"components/{kind}/index.md", kind_index(kind, names))
    put(
        "components/index.md",
        "\n".join(
            [
                "# Components",
                "",
                "One page per registered component, generated from the registry at each build.",
                "",
                "```{toctree}",
                ":maxdepth: 1",
                "",
                *(f"{kind}/index" for kind in KIND_TITLES),
                "```",
                "",
            ]
        ),
    )
    put("schema.md", schema_page())
    put("gallery.md", gallery_page(REPO / "reports" / "README.md", source_url))
    # a component that left the registry leaves no orphan page behind
    keep = set(written)
    for stale in out_dir.rglob("*.md"):
        if stale not in keep:
            stale.unlink()
    return written


def _generate(app: Any) -> None:
    write_pages(Path(app.srcdir) / "_generated", app.config.arena_source_url or None)


def setup(app: Any) -> dict[str, Any]:
    """Register the generator with Sphinx."""
    app.add_config_value("arena_source_url", "", "env")
    app.connect("builder-inited", _generate)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
