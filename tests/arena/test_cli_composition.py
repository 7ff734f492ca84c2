"""``arena run`` and ``arena tournament`` compose a command line once: the check's composition is
the one Hydra runs, and it is exactly what Hydra would have composed itself."""

from __future__ import annotations

import pytest
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra.core.hydra_config import HydraConfig
from omegaconf import OmegaConf

from arena.apps import cli
from arena.apps.hydra_support import run_overrides
from tests.helpers.contract import run_in_process


def _record(monkeypatch, task_name: str):
    """Replace the command's task by one that records what Hydra hands it (its config and Hydra's
    config) and count Hydra's compositions."""
    seen: list[tuple[str, str]] = []
    compositions: list[list[str]] = []

    def task(cfg):
        hydra = OmegaConf.to_yaml(HydraConfig.get())
        seen.append((OmegaConf.to_yaml(cfg), hydra))
        return 0

    load = ConfigLoaderImpl.load_configuration

    def counted(self, config_name, overrides, *args, **kwargs):
        compositions.append(list(overrides))
        return load(self, config_name, overrides, *args, **kwargs)

    monkeypatch.setattr(cli, task_name, task)
    monkeypatch.setattr(ConfigLoaderImpl, "load_configuration", counted)
    return seen, compositions


def _hydra_composes(monkeypatch) -> None:
    """Run the command as Hydra alone would: nothing checked handed over."""
    hydra_main = cli._hydra_main
    monkeypatch.setattr(
        cli,
        "_hydra_main",
        lambda task, prog, overrides, checked=None: hydra_main(task, prog, overrides),
    )


@pytest.mark.parametrize(
    "extra",
    [[], ["hydra.mode=RUN"], ["player.eta=0.25", "+hydra.job.env_set.ARENA_X=1"]],
    ids=["plain", "mode-given", "with-params"],
)
def test_a_run_is_composed_once_and_gets_hydras_own_composition(tmp_path, monkeypatch, extra):
    argv = ["run", "player=hedge", "adversary=fair_coin", "horizon=20", "replicates=2", *extra]
    seen, compositions = _record(monkeypatch, "_run_job")
    code = run_in_process([*argv, f"hydra.run.dir={tmp_path / 'out'}"], tmp_path)
    assert code.returncode == 0, code.stderr
    assert len(compositions) == 1  # the check's, handed to Hydra
    assert compositions[0] == run_overrides([*argv[1:], f"hydra.run.dir={tmp_path / 'out'}"])
    reused = seen.pop()

    _hydra_composes(monkeypatch)
    compositions.clear()
    code = run_in_process([*argv, f"hydra.run.dir={tmp_path / 'out'}"], tmp_path)
    assert code.returncode == 0, code.stderr
    assert len(compositions) == 3  # the check's, Hydra's for the mode, Hydra's for the run
    assert seen.pop() == reused  # the job's config and Hydra's, every key


def test_a_sweep_is_composed_by_hydra(tmp_path, monkeypatch):
    argv = ["run", "--multirun", "player=hedge,ftl", "adversary=fair_coin", "horizon=20"]
    seen, compositions = _record(monkeypatch, "_run_job")
    code = run_in_process([*argv, f"hydra.sweep.dir={tmp_path / 'sweep'}"], tmp_path)
    assert code.returncode == 0, code.stderr
    assert len(seen) == 2
    assert [OmegaConf.create(s[1]).job.num for s in seen] == [0, 1]
    # the two jobs checked, then Hydra's own: the sweep's, and each job's by its sweeper
    assert [c[0] for c in compositions[:2]] == ["player=hedge", "player=ftl"]
    assert len(compositions) >= 5
    assert all("hydra.mode=MULTIRUN" in c for c in compositions[2:])


def test_a_tournament_is_composed_once_and_gets_hydras_own_composition(tmp_path, monkeypatch):
    argv = [
        "tournament",
        "tournament.players=[hedge,ftl]",
        "tournament.adversaries=[fair_coin]",
        "tournament.horizon=20",
        f"out={tmp_path / 't'}",
    ]
    seen, compositions = _record(monkeypatch, "_tournament_task")
    assert run_in_process(argv, tmp_path).returncode == 0
    assert len(compositions) == 1
    reused = seen.pop()
    _hydra_composes(monkeypatch)
    assert run_in_process(argv, tmp_path).returncode == 0
    assert seen.pop() == reused


def test_a_run_generates_the_nodes_of_the_options_it_names_only():
    """Generating a node imports its component: a run generates those it can compose (the
    defaults and what it names), a glob sweep or Hydra's help every one."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from hydra.core.config_store import ConfigStore\n"
        "from arena.apps.hydra_support import register_generated_nodes, selected_options\n"
        "register_generated_nodes(selected_options(sys.argv[1:]))\n"
        "names = ConfigStore.instance().list('player')\n"
        "print(' '.join(sorted(n.removesuffix('.yaml') for n in names)))\n"
    )

    def players(*overrides: str) -> set[str]:
        out = subprocess.run(
            [sys.executable, "-c", script, *overrides], capture_output=True, text=True, check=True
        )
        return set(out.stdout.split())

    assert players("player=ftl,normal_hedge", "adversary=fair_coin") == {
        "ftl",
        "hedge",
        "normal_hedge",
    }
    assert {"ftl", "hedge", "normal_hedge", "squint"} <= players("player=glob(*)")


def test_a_missing_option_is_named_with_every_option_available(tmp_path):
    """Only the named options were generated: the error still lists every registered one."""
    from arena import registry

    code = run_in_process(
        ["run", "--multirun", "player=hedge,no_such_player", f"hydra.sweep.dir={tmp_path / 's'}"],
        tmp_path,
    )
    assert code.returncode == 2
    assert "no_such_player" in code.stderr
    for name in ("squint", "normal_hedge", "ftl"):
        assert name in registry.available("player")
        assert name in code.stderr, code.stderr
