"""Hydra glue: where the configs live and config nodes for registered names without a YAML file.

Config group = registry kind (``player``, ``adversary``, ``weak_learner``: a booster's weak
learner, null unless given), option = registry name (architecture:
parameters). A registered name gets a node generated from its ``__init__`` signature, so ``arena run
adversary=my_plugin adversary.param=1`` works right after ``pip install``, and so do the built-ins:
what each parameter may be is declared once, on the class (:mod:`arena.params`). A YAML file in
``configs/<group>/`` is kept only where it says what no declaration can (e.g. that a default is
tuned from the game's domain, so the player needs an adversary that declares one); it must repeat
the signature's defaults (``tests/arena/test_configs.py``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from arena import registry
from arena.errors import ArenaError, ConfigError
from arena.metric_sets import config_dir, metric_names

GROUPS = {"player": "player", "adversary": "adversary", "weak_learner": "weak_learner"}

JOB_NAME = "cli"
"""``hydra.job.name`` of the commands: the name ``@hydra.main`` derives from the module of their
task functions (``arena/apps/cli.py``), given to :func:`_compose` as well, so that a job composed
to be checked is the job Hydra runs (:func:`run_overrides`)."""

RUN_MODE = "hydra.mode=RUN"
"""The override Hydra adds to a command line that does not set ``hydra.mode`` before it composes
a single run (``hydra._internal.utils._run_app``)."""


def run_overrides(overrides: list[str]) -> list[str]:
    """The overrides Hydra composes a single run of ``overrides`` with: ``hydra.mode=RUN`` added
    unless the command line sets the mode.

    Examples
    --------
    >>> run_overrides(["horizon=10"])
    ['horizon=10', 'hydra.mode=RUN']
    >>> run_overrides(["hydra.mode=RUN", "horizon=10"])
    ['hydra.mode=RUN', 'horizon=10']
    """
    if any(_override_key(o) == "hydra.mode" for o in overrides):
        return list(overrides)
    return [*overrides, RUN_MODE]


def share_config_store() -> None:
    """Make a deep copy of Hydra's ``ConfigStore`` the store itself.

    Hydra 1.3 deep-copies its config repository at every composition, and with it the
    ``ConfigStore`` singleton that its structured-config source holds: every node the arena
    generates (one per registered component and metric, :func:`register_generated_nodes`), about
    0.06 s of each composition. The copy is never written to (a source loads a deep copy of the one
    node it reads), and Hydra's own later fix reads the live singleton instead of holding one
    (facebookresearch/hydra pull request 2928, not in a 1.3 release), which is what a copy that
    is the store itself gives.
    """
    from hydra.core.config_store import ConfigStore

    if "__deepcopy__" not in vars(ConfigStore):
        ConfigStore.__deepcopy__ = _the_store_itself


def _the_store_itself(store, memo):
    return store


def yaml_options(group: str) -> set[str]:
    """Registry names that have a YAML file in ``configs/<group>/``."""
    return {p.stem for p in (config_dir() / group).glob("*.yaml")}


def generated_node(kind: str, name: str) -> dict:
    """Return a config node for ``name`` built from its signature (``???`` marks a required one)."""
    cls = registry.load(kind, name)
    reg = registry.entry(kind, name)
    node: dict = {"_target_": reg.entry_point.value.replace(":", ".")}
    for pname, default in cls.param_defaults().items():
        node[pname] = "???" if default is inspect.Parameter.empty else _yamlable(default)
    return node


def _yamlable(value):
    if isinstance(value, tuple):
        return [_yamlable(v) for v in value]
    return value


def register_generated_nodes(names: Collection[str] | None = None) -> list[str]:
    """Store a generated node in Hydra's ConfigStore for registered names without a YAML.

    ``names`` limits the component groups (player, adversary, weak_learner) to those options: a
    node is built from its class's signature, so generating every one imports every component
    (0.45 s, plus 0.17 s storing them: a fifth of a small ``arena run``), where a command line
    composes the two or three it names (:func:`selected_options`). None registers them all. Every
    metric is registered either way (no import). Plugins that fail to import are skipped here
    (``arena list`` reports them). Returns the names registered so far.
    """
    from hydra.core.config_store import ConfigStore

    share_config_store()
    cs = ConfigStore.instance()
    yamls = {group: yaml_options(group) for group in GROUPS.values()} | {
        "metrics": yaml_options("metrics")
    }
    # the same registry, YAML files and store as the last call: the nodes asked for are there
    # already (composing a command line called this each time: 0.23 s of the 0.55 s a refused
    # command line costs in-process, a test of the bad-input corpus)
    key = (
        id(cs),
        tuple((kind, tuple(registry.available(kind))) for kind in GROUPS),
        tuple((group, tuple(sorted(options))) for group, options in yamls.items()),
        tuple(sorted(metric_names(registry))),
    )
    global _REGISTERED
    if _REGISTERED is None or _REGISTERED.key != key:
        _REGISTERED = state = _Registration(key)
        # one metric is a set of its own, so `metrics=instant_regret` and Hydra's multiple choice
        # `metrics=[regret,instant_regret]` work as from Python (arena.metric_sets)
        sets = yamls["metrics"]
        for name in sorted(metric_names(registry)):
            if name not in sets:
                cs.store(group="metrics", name=name, node={name: {}})
                state.stored.append(f"metrics/{name}")
    state = _REGISTERED
    if state.complete:
        return list(state.stored)
    for kind, group in GROUPS.items():
        have = yamls[group]
        for name in registry.available(kind):
            if (
                name in have
                or (kind, name) in state.tried
                or (names is not None and name not in names)
            ):
                continue
            state.tried.add((kind, name))
            try:
                node = generated_node(kind, name)
            except ArenaError:
                continue
            cs.store(group=group, name=name, node=node)
            state.stored.append(f"{group}/{name}")
    state.complete = names is None
    return list(state.stored)


@dataclass
class _Registration:
    """What :func:`register_generated_nodes` stored for one registry, set of YAML files and
    store (``key``): the nodes, the (kind, name) pairs it tried, and whether it tried all."""

    key: tuple
    stored: list[str] = field(default_factory=list)
    tried: set[tuple[str, str]] = field(default_factory=set)
    complete: bool = False


_REGISTERED: _Registration | None = None


def selected_options(overrides: list[str]) -> set[str] | None:
    """The component options a command line of ``arena run`` can compose, or None for all.

    They are the names it gives the ``player``, ``adversary`` and ``weak_learner`` groups (one,
    or a sweep's comma-separated list) and the run config's defaults. None where a group is
    chosen otherwise (``glob(...)``, ``choice(...)``, an interpolation) or Hydra is asked to print
    something (its help lists every option). A name missed here is not a wrong answer: composing
    registers every node and tries again before it reports a missing option (:func:`_compose`).

    Examples
    --------
    >>> sorted(selected_options(["player=ftl,ogd", "horizon=5"]))
    ['bernoulli', 'ftl', 'hedge', 'ogd']
    >>> selected_options(["player=glob(*)"]) is None
    True
    """
    import re

    if any(a in _HYDRA_INFO_FLAGS or a.startswith("--cfg=") for a in overrides):
        return None
    names = {option for group, option in _primary("run")[1].items() if group in GROUPS}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or key.lstrip("+~") not in GROUPS:
            continue
        for name in value.strip().removeprefix("[").removesuffix("]").split(","):
            if not re.fullmatch(r"[A-Za-z0-9_.\-]+", name.strip()):
                return None
            names.add(name.strip())
    return names


# ----------------------------------------------------------------------------------------------
# checking a command line before Hydra runs it

#: Hydra's own flags that print something and exit (no job runs, nothing to check).
_HYDRA_INFO_FLAGS = ("-h", "--help", "--hydra-help", "-c", "--cfg", "-i", "--info", "--version")
_HYDRA_INFO_FLAGS += ("-sc", "--shell-completion", "-p", "--package", "--resolve")


def check_command_line(
    command: str, config_name: str, argv: list[str], *, output_key: str | None = None
) -> list:
    """Compose every job of an ``arena run`` / ``arena tournament`` command line, or refuse it.

    Hydra reports a bad override (an unknown key, a missing config option, a sweep without
    ``--multirun``, a parse error, a missing mandatory value) with a multi-line message and exit
    code 1, and only after it has created the output folder. This composes each job the command
    would run first (the cross product of a ``--multirun`` sweep), so that a bad command line is
    refused in one line naming the key and what it may be, before anything is written; and checks
    that the output folder can be created.

    Parameters
    ----------
    command : str
        ``run`` or ``tournament`` (named in the error).
    config_name : str
        The primary config (``run``, ``tournament_run``).
    argv : list of str
        The command's arguments (overrides and Hydra flags).
    output_key : str, optional
        The key naming the output folder (default: Hydra's run or sweep folder).

    Returns
    -------
    list of DictConfig
        The composed config of each job (empty where Hydra only prints something); a single
        run's is the one Hydra would compose to run it (:func:`run_overrides`, :data:`JOB_NAME`).

    Raises
    ------
    ConfigError
        Naming the key at fault and what is allowed.
    """
    if any(a in _HYDRA_INFO_FLAGS or a.startswith("--cfg=") for a in argv):
        return []
    multirun = any(a in ("-m", "--multirun") for a in argv)
    overrides = [a for a in argv if not a.startswith("-")]
    unknown_flags = [a for a in argv if a.startswith("-") and a not in ("-m", "--multirun")]
    if unknown_flags:
        raise ConfigError(
            f"arena {command}",
            unknown_flags[0],
            noun="option",
            message="unknown option (options: --multirun/-m, --help, --cfg job, --info; everything "
            "else is KEY=VALUE)",
        )
    # a single run is composed as Hydra will compose it (cli._hydra_main then hands Hydra this
    # composition instead of letting it compose the same command line again)
    jobs = _expand_sweeps(command, overrides) if multirun else [run_overrides(overrides)]
    composed = []
    required = None
    for job in jobs:
        cfg = _compose(command, config_name, job)
        if required is None:
            required = _top_level_keys(config_name)
        _check_composed(command, cfg, required)
        composed.append(cfg)
    # the folder created first: one whose parent is a file or not writable is refused here
    key = output_key or ("hydra.sweep.dir" if multirun else "hydra.run.dir")
    _check_output_folder(command, key, _resolved_output(composed[-1], key))
    return composed


def _primary(config_name: str) -> tuple[dict, dict[str, str]]:
    """A primary config as its file says (not composed, so that a default option that cannot load
    is not needed), and the option its defaults list chooses for each group (not a null one).

    Parsed once per version of the file (its modification time and size): a command asks for it
    twice, and a process that runs many commands (a notebook, the tests) as often. Callers read
    the two mappings and never change them.
    """
    path = config_dir() / f"{config_name}.yaml"
    info = path.stat()
    return _read_primary(path, info.st_mtime_ns, info.st_size)


@functools.cache
def _read_primary(path: Path, mtime_ns: int, size: int) -> tuple[dict, dict[str, str]]:
    """:func:`_primary` of one version of the file (``mtime_ns`` and ``size`` key the cache)."""
    from omegaconf import OmegaConf

    primary = OmegaConf.to_container(OmegaConf.load(path))
    defaults = {
        str(group): str(option)
        for entry in primary.get("defaults", [])
        if isinstance(entry, dict)
        for group, option in entry.items()
        if not str(group).startswith("override ") and option is not None
    }
    return primary, defaults


def _top_level_keys(config_name: str) -> list[str]:
    """The keys the primary config defines: its own, and the groups its defaults list chooses an
    option for. A group whose default is null (``weak_learner``: only boosters take one) is
    optional."""
    primary, defaults = _primary(config_name)
    return [*defaults, *(k for k in primary if k not in ("defaults", "hydra"))]


def _expand_sweeps(command: str, overrides: list[str]) -> list[list[str]]:
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
        (batch,) = BasicSweeper.split_arguments(parsed, None)
    except HydraException as exc:
        culprit = _culprit(overrides, exc)
        raise ConfigError(f"arena {command}", culprit, _one_line(exc), noun="key") from exc
    return batch


def _compose(command: str, config_name: str, overrides: list[str]):
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    share_config_store()
    try:
        with initialize_config_dir(
            config_dir=str(config_dir()), version_base=None, job_name=JOB_NAME
        ):
            return compose(config_name, overrides=overrides, return_hydra_config=True)
    # Hydra raises ValueError/TypeError too (e.g. `metrics=null` for a config group): whatever
    # composing a command line raises is an error of that command line
    except (HydraException, OmegaConfBaseException, ValueError, TypeError, KeyError) as exc:
        if getattr(exc, "missing_cfg_file", None) and _REGISTERED and not _REGISTERED.complete:
            # only the options the command line names were generated: a missing one may be a
            # name selected_options did not see, and the error lists every option
            register_generated_nodes()
            return _compose(command, config_name, overrides)
        culprit = _culprit(overrides, exc, config_name)
        message = _one_line(exc)
        cause = exc.__cause__
        if cause is not None and "Error merging override" in str(exc):
            message = f"{message}: {_one_line(cause)}"
            parent, _, param = culprit.rpartition(".")
            found = _keys_of(config_name, overrides, culprit, parent) if parent else None
            if found is not None and found[1]:  # a component's parameter: name the component
                raise ConfigError(
                    f"{parent} {found[1]}",
                    param,
                    f"cannot take that value (its default has another shape): {_one_line(cause)}",
                ) from exc
        options = getattr(exc, "options", None)
        missing = getattr(exc, "missing_cfg_file", None)
        if missing and options is not None:  # e.g. metrics=nosuch
            group, _, name = str(missing).rpartition("/")
            culprit = group or culprit
            message = f"no option {name!r} (available: {', '.join(sorted(options))})"
        elif "Could not override" in str(exc) and "." in culprit:
            parent = culprit.rpartition(".")[0]
            found = _keys_of(config_name, overrides, culprit, parent)
            if found is not None:
                valid, choice = found
                keys = f"keys: {', '.join(valid)}" if valid else "it takes no keys"
                where = f"{parent} {choice}" if choice else parent
                message = f"no such key in {where} ({keys})"
                optional = _optional_tournament_key(culprit)
                if optional:
                    message = (
                        f"tournament {choice} leaves out the optional key {optional!r}: add it "
                        f"with +{culprit}=..."
                    )
        elif "Could not override" in str(exc):
            found = _keys_of(config_name, overrides, culprit, "")
            if found is not None:
                message = f"no such key (keys: {', '.join(found[0])})"
        raise ConfigError(f"arena {command}", culprit, message, noun="key") from exc


def _optional_tournament_key(culprit: str) -> str | None:
    """The key of ``tournament.KEY`` when KEY is a tournament key that a file may leave out."""
    from arena.apps.tournament import TournamentConfig

    parent, _, key = culprit.rpartition(".")
    return key if parent == "tournament" and key in TournamentConfig.__dataclass_fields__ else None


def _keys_of(
    config_name: str, overrides: list[str], culprit: str, node: str
) -> tuple[list[str], str | None] | None:
    """The keys of ``node`` in the config composed without the override of ``culprit``, and the
    option chosen for it where ``node`` is a config group (``adversary`` → ``shifting_experts``)."""
    from hydra import compose, initialize_config_dir
    from omegaconf import DictConfig, OmegaConf

    rest = [o for o in overrides if _override_key(o) != culprit]
    try:
        with initialize_config_dir(config_dir=str(config_dir()), version_base=None):
            cfg = compose(config_name, overrides=rest, return_hydra_config=True)
    except Exception:  # another override is bad too: the first one named is enough
        return None
    target = OmegaConf.select(cfg, node) if node else cfg
    if not isinstance(target, DictConfig):
        return None
    choice = cfg.hydra.runtime.choices.get(node) if node else None
    return [str(k) for k in target.keys() if k not in ("_target_", "hydra")], choice


def _check_composed(command: str, cfg, required: list[str]) -> None:
    """Resolve the job's config (not Hydra's): interpolations, mandatory ``???`` values, and the
    keys the command reads (``~horizon`` deletes one)."""
    from omegaconf import OmegaConf
    from omegaconf.errors import MissingMandatoryValue, OmegaConfBaseException

    for key in required:
        if key not in cfg:
            raise ConfigError(
                f"arena {command}", key, "is required and cannot be deleted", noun="key"
            )
    try:
        job = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"])
        OmegaConf.to_container(job, resolve=True, throw_on_missing=True)
    except MissingMandatoryValue as exc:
        key = str(getattr(exc, "full_key", "") or "")
        group, _, param = key.rpartition(".")
        choice = cfg.hydra.runtime.choices.get(group) if group else None
        who = f"{group} {choice}" if choice else f"arena {command}"
        raise ConfigError(
            who, param or key, f"is required: set {key}=VALUE on the command line"
        ) from exc
    except OmegaConfBaseException as exc:
        key = str(getattr(exc, "full_key", "") or "?")
        raise ConfigError(f"arena {command}", key, _one_line(exc), noun="key") from exc


def _resolved_output(cfg, key: str) -> Path | None:
    from hydra.core.utils import setup_globals
    from omegaconf import OmegaConf

    setup_globals()  # the ${now:...} resolver of the default folder names
    try:
        value = OmegaConf.select(cfg, key, throw_on_resolution_failure=True)
    except Exception:  # an interpolation only Hydra's job context resolves: Hydra will say
        return None
    return Path(str(value)) if value is not None else None


def _check_output_folder(command: str, key: str, folder: Path | None) -> None:
    """Refuse an output folder that is a file, lies below a file, or cannot be created."""
    import os

    if folder is None:
        return
    path = folder.absolute()
    if path.exists() and not path.is_dir():
        raise ConfigError(f"arena {command}", key, f"{folder} is a file, not a folder", noun="key")
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(
            f"arena {command}",
            key,
            f"cannot create {folder}: {existing} is a file, not a folder",
            noun="key",
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(
            f"arena {command}",
            key,
            f"cannot write {folder}: {existing} is not writable",
            noun="key",
        )
    if existing != path:
        _probe_folder(command, key, folder, existing)


def _probe_folder(command: str, key: str, folder: Path, existing: Path) -> None:
    """Refuse ``folder`` unless a folder can be made in ``existing``, its nearest existing parent.

    ``os.access`` does not tell: it says yes to root everywhere, and a pseudo file system such as
    ``/proc`` refuses every new entry whatever the permissions say. A folder of a name of this
    process's own is made and removed there (never one of ``folder``'s names: another process
    may be creating that one); the parent's entries are as they were.
    """
    import tempfile

    try:
        Path(tempfile.mkdtemp(prefix=".arena-probe-", dir=existing)).rmdir()
    except OSError as exc:
        raise ConfigError(
            f"arena {command}",
            key,
            f"cannot create {folder} in {existing}: {exc.strerror or exc}",
            noun="key",
        ) from None


def _override_key(override: str) -> str:
    return override.partition("=")[0].lstrip("+~")


def _culprit(overrides: list[str], exc: BaseException, config_name: str | None = None) -> str:
    """The key of the override at fault: the one that does not parse, the one the error quotes,
    else the first whose addition makes the composition fail."""
    import re

    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import OverrideParseException

    if isinstance(exc, OverrideParseException):  # the override that does not parse alone
        parser = OverridesParser.create()
        for override in overrides:
            try:
                parser.parse_overrides([override])
            except OverrideParseException:
                return _override_key(override)
    text = str(exc)
    for override in overrides:
        if override in text:
            return _override_key(override)
    for override in overrides:
        key = _override_key(override)
        if f"'{key}'" in text or f"/{key.split('.')[0]}/" in text:
            return key
    if config_name is not None:
        from hydra import compose, initialize_config_dir

        for i, override in enumerate(overrides):
            try:
                with initialize_config_dir(config_dir=str(config_dir()), version_base=None):
                    compose(config_name, overrides=overrides[: i + 1])
            except Exception:
                return _override_key(override)
    match = re.search(r"'([\w.+~/-]+)'", text)
    if match:
        return _override_key(
            match.group(1).split("/")[-1] if "/" in match.group(1) else match.group(1)
        )
    return _override_key(overrides[0]) if overrides else "?"


def _one_line(exc: BaseException) -> str:
    """Hydra's/OmegaConf's message as one line: its first sentence, options listed inline."""
    lines = [ln.strip() for ln in str(exc).splitlines()]
    keep = []
    for ln in lines:
        if not ln or ln.startswith(("full_key:", "object_type", "reference_type", "See https")):
            continue
        if ln.startswith(("Config search path", "provider=")):
            break
        keep.append(ln)
    return " ".join(keep).replace("Available options in", "; available options in")
