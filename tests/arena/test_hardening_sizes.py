"""Every size is checked before it is allocated, with the numbers in the message (issue 28, 3).

Each case runs ``arena`` in-process and asserts the contract (one line, exit 2, nothing written)
and that the refusal came before the allocation: the traced peak of the whole command stays far
below what the refused size needs. On the arena before these checks each case ran until the
machine killed it, or ended in "internal error (a bug)". The estimate API
(:meth:`arena.base.Component.footprint`) is tested against the arrays it estimates.
"""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import arena.apps.tournament
import arena.resources
from arena import play, registry
from arena.apps.tournament import TournamentConfig
from arena.apps.yaml_guard import MAX_YAML_NODES, check_yaml_file, expanded_nodes
from arena.base import Footprint, declared_footprint
from arena.errors import ArenaError, ConfigError
from arena.game import prepare_game
from arena.resources import check_resources, game_footprints
from arena.spec import GameSpec
from tests.helpers.contract import assert_refused, assert_untouched, run_in_process, snapshot

GIB = 2**30
MACHINE = 4 * GIB
"""The memory the tests' machine has (``available_memory`` is pinned, so messages are exact)."""

PEAK = 64 * 2**20
"""Most a refused command may allocate (its configuration, not the refused arrays)."""


@pytest.fixture(scope="module", autouse=True)
def warm(tmp_path_factory):
    """Import what a command imports (Hydra, numba's cached kernels) once, untraced: the traced
    peak of a refused command is then its own, and tracing does not slow the imports."""
    run_in_process(
        ["run", "horizon=2", "replicates=1", "progress=false", "hydra.run.dir=o"],
        tmp_path_factory.mktemp("warm"),
    )


@pytest.fixture(autouse=True)
def machine(monkeypatch):
    """A machine of 4 GiB and the default time limit, whatever runs the tests."""
    monkeypatch.setattr(arena.resources, "available_memory", lambda: MACHINE)
    monkeypatch.delenv("ARENA_MAX_HOURS", raising=False)


def refused(tmp_path: Path, argv: list[str], *needles: str, trace: bool = False) -> str:
    """Run ``arena *argv``; assert the contract, nothing written, quickly; return the line.

    ``trace``: also assert that the command allocated less than :data:`PEAK` (traced, which
    makes a command about four times slower; for an allocation that would otherwise be quick,
    as ``np.zeros`` of a table the system hands out lazily).
    """
    before = snapshot(tmp_path)
    started = time.perf_counter()
    if trace:
        tracemalloc.start()
    try:
        result = run_in_process(argv, tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    line = assert_refused(result, *needles)
    assert_untouched(before, tmp_path)
    assert not trace or peak < PEAK, f"{peak / 2**20:.0f} MiB allocated, then: {line}"
    assert time.perf_counter() - started < 20, line  # not a game played, not a grid expanded
    return line


RUN = ["run", "progress=false", "hydra.run.dir=out"]


# ----------------------------------------------------------------------------------------------
# the cases of the issue


def test_shifting_regret_table_beyond_memory_is_refused_with_its_shape(tmp_path):
    line = refused(
        tmp_path,
        [*RUN, "metrics=regret", "+metrics.shifting_regret.k=[10000000]", "horizon=100000000"],
        "metric shifting_regret",
        "'k'",
        "(16, 10, 10000001)",
        "13.2 GiB",
        "4 GiB are available",
        trace=True,
    )
    assert "replicates=16, n_actions=10" in line


def test_shifting_regret_k_beyond_the_horizon_needs_no_table_of_k_columns():
    """k=[10**7] in a game of 1000 rounds: at most 999 switches, so the table is 1000 wide
    (not 12.8 GB) and the value of k = 10⁷ is the value of k = 999, bit for bit."""
    kw = dict(n_actions=10, horizon=1000, replicates=2, checkpoints=[10, 500])
    started = time.perf_counter()
    big = play("hedge", "bernoulli", metrics={"shifting_regret": {"k": [3, 10_000_000]}}, **kw)
    assert time.perf_counter() - started < 30
    ref = play("hedge", "bernoulli", metrics={"shifting_regret": {"k": [3, 999]}}, **kw)
    np.testing.assert_array_equal(big.value.to_numpy(), ref.value.to_numpy())
    assert sorted(big.param.unique()) == [3.0, 10_000_000.0]


def test_shifting_regret_budgets_past_the_horizon_keep_the_rows_bit_identical():
    """The columns j ≥ t − 1 agree at every round t, so capping at T − 1 changes no value."""
    kw = dict(n_actions=4, horizon=6, replicates=3, checkpoints="all")
    capped = play("hedge", "bernoulli", metrics={"shifting_regret": {"k": [0, 2, 5, 8]}}, **kw)
    full = play("hedge", "bernoulli", metrics={"shifting_regret": {"k": [0, 2, 5]}}, **kw)
    eight = capped[capped.param == 8].value.to_numpy()
    np.testing.assert_array_equal(eight, full[full.param == 5].value.to_numpy())
    for k in (0, 2, 5):
        np.testing.assert_array_equal(
            capped[capped.param == k].value.to_numpy(), full[full.param == k].value.to_numpy()
        )


def test_two_instance_pilot_beyond_memory_is_refused(tmp_path):
    refused(
        tmp_path,
        [*RUN, "player=exp3", "adversary=two_instance", "adversary.pilot_replicates=1e9"],
        "adversary two_instance",
        "'pilot_replicates'",
        "pilot_replicates=1000000000",
        "GiB of memory",
        "4 GiB are available",
    )


def test_adaboost_ol_s_with_ten_million_learners_is_refused(tmp_path):
    refused(
        tmp_path,
        [*RUN, "player=adaboost_ol_s", "player.n_learners=1e7", "adversary=separable_stream"],
        "player adaboost_ol_s",
        "'n_learners'",
        "n_learners=10000000",
        "GiB of memory",
    )


def test_son_full_sketch_in_20000_dimensions_is_refused(tmp_path):
    refused(
        tmp_path,
        [*RUN, "player=son", "player.sketch=full", "adversary=separable_stream", "n_actions=20000"],
        "player son",
        "'sketch'",
        "(16, 20000, 20000)",
        "47.7 GiB",
        "sketch=fd, rp or oja",
    )


def test_son_sketch_of_1000_rows_in_10_dimensions_is_refused_for_its_time(tmp_path):
    line = refused(
        tmp_path,
        [*RUN, "player=son", "player.m=1000", "adversary=ill_conditioned", "n_actions=10"],
        "player son",
        "'m'",
        "m=1000",
        "a round",
        "over the limit of 12 h",
        "ARENA_MAX_HOURS",
    )
    assert "no more than sketch=full" in line  # m > d: the advice says why


def test_replicates_beyond_memory_is_a_resource_error_not_a_bug(tmp_path):
    refused(
        tmp_path,
        [*RUN, "replicates=1e11"],
        "game: parameter 'replicates'",
        "replicates=100000000000",
        "GiB of memory",
    )


def test_n_actions_beyond_memory_is_a_resource_error_not_a_bug(tmp_path):
    line = refused(tmp_path, [*RUN, "n_actions=1e7"], "n_actions=10000000", "GiB", "available")
    assert "4 GiB are available" in line


def _big_grid(path: Path) -> None:
    etas = ", ".join(str(i / 100) for i in range(1, 101))
    seeds = ", ".join(str(i) for i in range(100))
    sizes = ", ".join(str(n) for n in range(2, 102))
    path.write_text(
        "name: big\n"
        f"players:\n  - {{name: hedge, grid: {{eta: [{etas}]}}}}\n"
        f"adversaries:\n  - {{name: bernoulli, grid: {{seed: [{seeds}]}}}}\n"
        f"n_actions: [{sizes}]\n"
    )


def test_a_million_cell_grid_is_refused_with_its_count_before_the_folder(tmp_path):
    _big_grid(tmp_path / "big.yaml")
    refused(
        tmp_path,
        ["tournament", "--config", "big.yaml", "out=tour", "executor=serial", "progress=false"],
        "tournament big",
        "100 × 100 × 100 make 1,000,000 cells",
        "more than 20,000",
    )
    assert not (tmp_path / "tour").exists()


BOMB = "lol: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)


def test_a_yaml_alias_bomb_in_a_config_file_is_refused_in_one_line(tmp_path):
    (tmp_path / "bomb.yaml").write_text(
        "name: bomb\nplayers: [hedge]\nadversaries: [fair_coin]\n" + BOMB
    )
    refused(
        tmp_path,
        ["tournament", "--config", "bomb.yaml", "out=tour", "executor=serial"],
        "tournament file bomb.yaml",
        "alias",
        f"{MAX_YAML_NODES:,}",
    )


def test_a_yaml_alias_bomb_in_a_config_dir_is_refused_in_one_line(tmp_path):
    (tmp_path / "mine" / "tournament").mkdir(parents=True)
    (tmp_path / "mine" / "tournament" / "bomb.yaml").write_text(
        "name: bomb\nplayers: [hedge]\nadversaries: [fair_coin]\n" + BOMB
    )
    refused(
        tmp_path,
        ["tournament", "--config-dir", "mine", "tournament=bomb", "out=tour"],
        "bomb.yaml",
        "alias",
    )


def test_a_yaml_alias_bomb_in_a_reproduce_list_is_refused(tmp_path):
    (tmp_path / "list.yaml").write_text("reports: []\n" + BOMB)
    refused(tmp_path, ["reproduce", "--list", "list.yaml"], "list.yaml", "alias")


# ----------------------------------------------------------------------------------------------
# the time limit, and tournaments' estimated time


def test_the_time_limit_is_the_environments(monkeypatch):
    kw = dict(n_actions=10, horizon=1000, replicates=1, player_params={"m": 300})
    monkeypatch.setenv("ARENA_MAX_HOURS", "0.0001")
    with pytest.raises(ConfigError, match=r"player son: parameter 'm'.*limit of 0.0001 h"):
        prepare_game("son", "ill_conditioned", **kw)
    monkeypatch.setenv("ARENA_MAX_HOURS", "inf")
    game = prepare_game("son", "ill_conditioned", **kw)
    assert game.footprint.work > 300**3  # FD decomposes a 300×300 matrix every round
    monkeypatch.setenv("ARENA_MAX_HOURS", "soon")
    with pytest.raises(ConfigError, match="variable 'ARENA_MAX_HOURS': must be a number"):
        prepare_game("hedge", "fair_coin", horizon=10)


def test_a_tournament_whose_cells_add_up_beyond_the_limit_is_refused(monkeypatch, tmp_path):
    """Each cell fits the limit; their sum, over this machine's cores, does not."""
    cfg = TournamentConfig(
        name="long",
        players=[{"name": "son", "params": {"m": 40}}],
        adversaries=["ill_conditioned"],
        n_actions=[10, 11, 12],
        horizon=2000,
        replicates=2,
        metrics={"loss": {}},
    )
    one = prepare_game(
        "son",
        "ill_conditioned",
        player_params={"m": 40},
        n_actions=12,
        horizon=2000,
        replicates=2,
        metrics={"loss": {}},
    )
    hours = one.footprint.seconds(2000, arena.resources.OPS_PER_SECOND) / 3600
    monkeypatch.setattr(arena.apps.tournament.os, "cpu_count", lambda: 1)
    monkeypatch.setenv("ARENA_MAX_HOURS", repr(hours * 1.5))  # each cell passes, 3 do not
    with pytest.raises(ConfigError, match=r"tournament long: grid .*3 cells are estimated"):
        cfg.validate()
    monkeypatch.setenv("ARENA_MAX_HOURS", repr(hours * 4))
    cfg.validate()


# ----------------------------------------------------------------------------------------------
# the estimate API against the arrays it estimates


def _spec(n_actions: int = 10, horizon: int = 1000, replicates: int = 4, **kw) -> GameSpec:
    return GameSpec(
        kw.pop("protocol", "experts"), n_actions, horizon, n_replicates=replicates, **kw
    )


def test_shifting_regret_declares_its_table_and_grows_with_k():
    metric = registry.make("metric", "shifting_regret", k=[50])
    small, large = metric.footprint(_spec()), metric.clone(k=[100]).footprint(_spec())
    assert small.parameter == "k" and large.memory > 1.9 * small.memory
    metric.start(_spec())
    held = metric._table.nbytes + metric._best.nbytes
    assert 0.9 < small.memory / held < 1.5
    # beyond T − 1 nothing grows: the table is capped at the horizon
    capped = metric.clone(k=[10**9]).footprint(_spec(horizon=1000))
    assert capped.memory == metric.clone(k=[999]).footprint(_spec(horizon=1000)).memory


def test_sa_regret_declares_its_windows():
    metric = registry.make("metric", "sa_regret", tau=[100, 300])
    declared = metric.footprint(_spec())
    metric.start(_spec())
    held = sum(getattr(metric, a).nbytes for a in ("_prefix", "_starts", "_prefix_min", "_best"))
    assert declared.parameter == "tau" and 0.9 < declared.memory / held < 1.5


@pytest.mark.parametrize("sketch", ["full", "fd", "fd_epoch", "rp", "oja"])
def test_son_declares_the_matrices_its_reset_allocates(sketch):
    player = registry.make("player", "son", sketch=sketch, m=20)
    spec = _spec(60, protocol="classification", dim=60, loss="squared")
    declared = player.footprint(spec)
    tracemalloc.start()
    try:
        player.reset(spec, [np.random.default_rng(r) for r in range(4)])
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert declared.parameter == ("sketch" if sketch == "full" else "m")
    assert 0.5 < declared.memory / held < 3, (declared.memory, held)


def test_a_booster_declares_its_lanes_and_their_streams():
    player = registry.make("player", "adaboost_ol_s", n_learners=300)
    spec = _spec(5, protocol="boosting", dim=5, task="classification")
    declared = player.footprint(spec)
    tracemalloc.start()
    try:
        player.reset(spec, [np.random.default_rng(r) for r in range(4)])
        peak = tracemalloc.get_traced_memory()[1]  # the lanes' streams exist at once in reset
    finally:
        tracemalloc.stop()
    assert declared.parameter == "n_learners"
    assert 0.4 < declared.memory / peak < 3, (declared.memory, peak)
    doubled = player.clone(n_learners=600).footprint(spec)
    assert doubled.memory == pytest.approx(2 * declared.memory)


def test_the_two_instance_pilot_is_declared_with_its_games():
    adversary = registry.make("adversary", "two_instance", player="exp3", pilot_replicates=64)
    spec = _spec(5, horizon=3000)
    declared = adversary.footprint(spec)
    tracemalloc.start()
    try:
        adversary.reset(spec, [np.random.default_rng(r) for r in range(4)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert declared.parameter == "pilot_replicates" and declared.setup > 64 * 3000 * 5
    assert 0.3 < declared.memory / peak < 3, (declared.memory, peak)


def test_the_driver_adds_every_part_and_names_the_largest():
    spec = _spec(10, replicates=16)
    parts = game_footprints(
        registry.make("player", "hedge"),
        registry.make("adversary", "fair_coin"),
        [registry.make("metric", "shifting_regret", k=[10**9])],
        spec,
    )
    assert [who for who, _ in parts][-3:] == [
        "player hedge",
        "adversary fair_coin",
        "metric shifting_regret",
    ]
    total = check_resources(parts, spec)
    assert total.memory == sum(p.memory for _, p in parts)
    too_big = [*parts, ("player toy", Footprint(memory=MACHINE, parameter="size", what="a toy"))]
    with pytest.raises(ConfigError, match=r"player toy: parameter 'size': a toy needs 4 GiB"):
        check_resources(too_big, spec)


def test_a_plugins_broken_estimate_is_named():
    class Broken(registry.load("player", "hedge")):
        name = "broken"

        def footprint(self, spec):
            return Footprint(memory=-1.0)

    with pytest.raises(ArenaError, match="player broken: footprint must return a Footprint"):
        declared_footprint(Broken(), _spec())
    with pytest.raises(ArenaError, match="player broken: footprint must return"):
        prepare_game(Broken(), "fair_coin", horizon=10)


def test_flh_with_a_copy_per_round_is_refused_for_its_quadratic_time():
    with pytest.raises(ConfigError, match=r"player flh: parameter 'starts'.*starts=geometric"):
        prepare_game("flh", "fair_coin", player_params={"starts": "all"}, horizon=10**5)
    flh = registry.make("player", "flh", starts="all")
    short, long = flh.footprint(_spec(horizon=1000)), flh.footprint(_spec(horizon=2000))
    assert long.work > 1.9 * short.work and long.memory > 1.9 * short.memory
    geometric = flh.clone(starts="geometric").footprint(_spec(horizon=10**5))
    assert geometric.work * 10**5 / arena.resources.OPS_PER_SECOND < 3600  # log₂ T copies: fine


def test_the_default_declaration_is_negligible():
    assert registry.make("player", "hedge").footprint(_spec()) == Footprint()


def test_the_shipped_tournament_files_pass_the_yaml_check():
    folder = Path(arena.resources.__file__).parents[1] / "configs" / "tournament"
    files = sorted(folder.glob("*.yaml"))
    assert files
    for path in files:
        check_yaml_file(path, str(path))  # anchors and aliases of real files are fine
    assert expanded_nodes("a: &a [1, 2]\nb: *a\n") == 9  # {a: [1, 2], b: [1, 2]}
    assert expanded_nodes("a: &a [*a]\n") == MAX_YAML_NODES + 1  # a node holding itself
