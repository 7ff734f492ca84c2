"""A user's YAML file is sized before it is parsed: no alias bomb, no file larger than a config.

YAML aliases (``*a``) repeat an anchored node (``&a``) without writing it again, so nine lines
of nine aliases each describe 9⁹ ≈ 3.9·10⁸ strings (the "billion laughs"). PyYAML shares the
repeated node, but OmegaConf, Hydra and every walk over the result copy it, and the command
then runs until the machine kills it. :func:`check_yaml_file` composes the file's node graph
(which shares repeated nodes, so it costs the size of the text), counts the nodes the file
expands to, and refuses one over :data:`MAX_YAML_NODES` in one line, before any loader expands it.
"""

from __future__ import annotations

from pathlib import Path

from arena.errors import ArenaError

MAX_YAML_BYTES = 16 * 2**20
"""Largest configuration file read (16 MiB): the arena's largest tournament file is 3 kB."""

MAX_YAML_NODES = 1_000_000
"""Most nodes a configuration file may expand to, aliases repeated (its own text is far less)."""


def expanded_nodes(text: str, limit: int = MAX_YAML_NODES) -> int:
    """Return how many nodes ``text`` expands to with every alias repeated (at most ``limit + 1``).

    A recursive alias (a node that contains itself) expands without end and counts
    ``limit + 1``. Text that is not YAML counts 0: its parser reports the error.

    Examples
    --------
    >>> expanded_nodes("a: &a [1, 2, 3]\\nb: [*a, *a]")
    16
    >>> bomb = "a: &a [x, x, x, x, x, x, x, x, x]\\n" + "".join(
    ...     f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\\n" for p, c in zip("abcdefgh", "bcdefghi"))
    >>> expanded_nodes(bomb) > MAX_YAML_NODES
    True
    """
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return 0
    if root is None:
        return 0
    sizes: dict[int, int] = {}
    busy: set[int] = set()
    cap = limit + 1

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in busy:  # the node holds itself: no finite expansion
            return cap
        busy.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        else:
            children = []
        for child in children:
            total = min(cap, total + size(child))
            if total >= cap:
                break
        busy.discard(key)
        sizes[key] = total
        return total

    return size(root)


def check_yaml_file(path: str | Path, who: str) -> None:
    """Refuse, in one line naming ``who``, a YAML file too large to be a configuration or whose
    aliases expand it beyond :data:`MAX_YAML_NODES` nodes; read nothing else.

    A file that cannot be read or parsed passes: the loader that follows reports it as usual.

    Raises
    ------
    ArenaError
        With the file's size, or the number of nodes it expands to and the limit.
    """
    path = Path(path)
    try:
        nbytes = path.stat().st_size
    except OSError:
        return
    if nbytes > MAX_YAML_BYTES:
        raise ArenaError(
            f"{who}: {nbytes} bytes, more than a configuration file may have "
            f"({MAX_YAML_BYTES // 2**20} MiB)"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    if "*" not in text:  # no alias: the file expands to no more than its text
        return
    nodes = expanded_nodes(text)
    if nodes > MAX_YAML_NODES:
        raise ArenaError(
            f"{who}: its aliases (*name) expand it to more than {MAX_YAML_NODES:,} values "
            "(a YAML alias bomb?); write the repeated values out, or repeat fewer of them"
        )
