"""Sphinx configuration of the documentation site (``make docs``; docs/architecture.md, "The
documentation site")."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

project = "regret-arena"
author = "regret-arena contributors"
copyright = "2026, regret-arena contributors"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "myst_nb",
    "arena_components",
]

# the pages are Markdown (MyST); the tutorials are MyST-NB text notebooks, executed at each build
source_suffix = {".md": "myst-nb", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**/.ipynb_checkpoints"]
templates_path = ["_templates"]
root_doc = "index"

myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3

# every tutorial runs at every build, and a cell that raises fails it (a stale cache never hides
# a broken tutorial); the per-cell timeout bounds a hung cell
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_timeout = 120
nb_execution_show_tb = True
nb_merge_streams = True

# numpydoc docstrings through napoleon: the types stay text (not cross-references to numpy or
# pandas, whose inventories would need the network)
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_param = False
napoleon_use_rtype = False
napoleon_preprocess_types = False
autodoc_typehints = "none"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": False}
autosummary_generate = True

# where the gallery's links to the reports point (empty: the pages name the repository paths)
arena_source_url = ""

html_theme = "furo"
html_title = "regret-arena"
html_static_path: list[str] = []
