"""The applications built on the core: what a user runs, not what a game is.

``cli`` (the ``arena`` command), ``tournament`` (cells, resumable tournament folders, executors),
``hydra_support`` (the config groups and the command-line checks), ``demo``, ``reproduce`` and
``gallery`` (the reproduction gallery), ``yaml_guard`` (a user's YAML sized before it is parsed).
They import the core (``arena/*.py``), the protocol folders and :mod:`arena.reporting`; nothing
below them imports them (``tests/arena/test_layers.py``).
"""
