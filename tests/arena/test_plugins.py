"""Plugins through entry points: the example plugin works end to end; broken or conflicting
plugins are reported and break nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena import registry
from tests.helpers.cli import arena


def fake_distribution(folder: Path, name: str, group: str, entries: dict[str, str]) -> Path:
    """Write a minimal installed distribution (a .dist-info folder) declaring entry points."""
    info = folder / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    lines = [f"[{group}]"] + [f"{k} = {v}" for k, v in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return folder


def test_example_plugin_is_installed_listed_and_runs(tmp_path):
    assert "rotating_best" in registry.available("adversary"), (
        "make test installs examples/plugin-adversary"
    )
    assert registry.entry("adversary", "rotating_best").distribution == "arena-plugin-rotating"
    listed = arena("list", "adversaries", cwd=tmp_path)
    assert listed.returncode == 0 and "rotating_best" in listed.stdout
    out = tmp_path / "run"
    res = arena(
        "run",
        "adversary=rotating_best",
        "adversary.period=5",
        "n_actions=3",
        "horizon=60",
        "replicates=2",
        f"hydra.run.dir={out}",
        "metrics=regret",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert (out / "results.parquet").is_file()
    assert '"period":5' in (out / "manifest.json").read_text().replace(" ", "")


def test_broken_plugin_is_reported_and_breaks_nothing_else(tmp_path):
    site = fake_distribution(
        tmp_path / "site", "broken-plugin", "arena.adversaries", {"broken": "no_such_module:Nope"}
    )
    listed = arena("list", cwd=tmp_path, extra_path=site)
    assert listed.returncode == 0, listed.stderr
    line = next(ln for ln in listed.stdout.splitlines() if ln.strip().startswith("broken"))
    assert "BROKEN" in line and "broken-plugin" in line and "no_such_module" in line
    assert "bernoulli" in listed.stdout and "hedge" in listed.stdout
    res = arena(
        "run",
        "adversary=fair_coin",
        "horizon=30",
        "replicates=1",
        "metrics=regret",
        f"hydra.run.dir={tmp_path / 'ok'}",
        cwd=tmp_path,
        extra_path=site,
    )
    assert res.returncode == 0, res.stderr
    bad = arena(
        "run",
        "adversary=broken",
        "horizon=30",
        f"hydra.run.dir={tmp_path / 'bad'}",
        cwd=tmp_path,
        extra_path=site,
    )
    assert bad.returncode != 0 and "failed to import" in bad.stderr


def test_two_distributions_claiming_one_name_is_an_error_naming_both(tmp_path):
    site = fake_distribution(
        tmp_path / "site",
        "copycat",
        "arena.players",
        {"hedge": "arena.players.ftl:FollowTheLeader"},
    )
    res = arena(
        "run",
        "player=hedge",
        "horizon=30",
        f"hydra.run.dir={tmp_path / 'x'}",
        cwd=tmp_path,
        extra_path=site,
    )
    assert res.returncode != 0
    assert "regret-arena" in res.stderr and "copycat" in res.stderr
    assert "claimed by more than one distribution" in res.stderr
    other = arena(
        "run",
        "player=ftl",
        "horizon=30",
        "metrics=regret",
        f"hydra.run.dir={tmp_path / 'y'}",
        cwd=tmp_path,
        extra_path=site,
    )
    assert other.returncode == 0, other.stderr


@pytest.mark.parametrize(
    "target", ["arena.adversaries.adaptive:Greedy", "arena_rotating:RotatingBest"]
)
def test_arena_check_passes_good_components(tmp_path, target):
    res = arena("check", target, cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "passed: 0 unexpected" in res.stdout


def test_arena_check_fails_a_broken_component(tmp_path):
    (tmp_path / "broken_mod.py").write_text(
        "from arena.players.hedge import Hedge\n"
        "class Eager(Hedge):\n"
        "    def __init__(self, eta=0.5):\n"
        "        super().__init__(eta)\n"
        "        self.cache = {}\n"
    )
    res = arena("check", "broken_mod:Eager", cwd=tmp_path)
    assert res.returncode == 1
    assert (
        "check_init_stores_params_only" in res.stdout and "extra attributes ['cache']" in res.stdout
    )


def test_load_reads_the_class_from_its_module_each_time(monkeypatch):
    """``registry.load`` returns what ``EntryPoint.load`` would: the module's attribute now, so a
    class patched in its module is the one loaded, and a missing attribute names the plugin."""
    import arena.players.hedge as hedge_module

    assert registry.load("player", "hedge") is hedge_module.Hedge
    assert registry.load("player", "hedge") is registry.entry("player", "hedge").entry_point.load()

    class Patched(hedge_module.Hedge):
        pass

    monkeypatch.setattr(hedge_module, "Hedge", Patched)
    assert registry.load("player", "hedge") is Patched
    monkeypatch.delattr(hedge_module, "Hedge")
    with pytest.raises(registry.ArenaError, match=r"player 'hedge' .* failed to import"):
        registry.load("player", "hedge")
