"""Researchers' data: example files read once (:mod:`arena.data.files`) and the sources' datasets
by name (:mod:`arena.data.catalog`).

Nothing here downloads anything: a dataset is a file the user already has.
"""

from arena.data.catalog import CATALOG, CatalogEntry, find_dataset
from arena.data.files import Examples, read_examples, save_examples, take_rows

__all__ = [
    "CATALOG",
    "CatalogEntry",
    "Examples",
    "find_dataset",
    "read_examples",
    "save_examples",
    "take_rows",
]
