"""The worst-case search: families, catalog comparison, replay files, resume, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from arena.attack.families import FAMILIES, make_family
from arena.attack.search import (
    catalog_worst,
    comparison_table,
    evaluate,
    progress_table,
    search,
    write_replay,
)
from arena.errors import ConfigError
from arena.game import run_game

N, T = 4, 200
SMALL_CATALOG = ["ftl_killer", "fair_coin", "comb"]


@pytest.fixture(scope="module")
def catalog():
    return catalog_worst("hedge", N, T, replicates=2, adversaries=SMALL_CATALOG)


def test_families_decode_into_the_unit_cube():
    rng = np.random.default_rng(0)
    lib = rng.random((3, T, N))
    for name in FAMILIES:
        params = {"library": lib} if name == "mixture" else {}
        fam = make_family(name, N, T, **params)
        x = np.vstack([fam.x0(), 3 * rng.standard_normal((4, fam.dim))])
        seqs = fam.decode(x)
        assert seqs.shape == (5, T, N), name
        assert seqs.min() >= 0.0 and seqs.max() <= 1.0, name


def test_mixture_and_basis_contain_the_start_sequence():
    rng = np.random.default_rng(1)
    lib = rng.random((3, T, N))
    mix = make_family("mixture", N, T, library=lib, start_index=2)
    np.testing.assert_array_equal(mix.decode(mix.x0())[0], lib[2])
    basis = make_family("basis", N, T, base=lib[1])
    np.testing.assert_array_equal(basis.decode(basis.x0())[0], lib[1])


def test_switching_start_has_one_good_expert_per_segment():
    fam = make_family("switching", N, 8, n_segments=2)
    seq = fam.decode(fam.x0())[0]
    np.testing.assert_array_equal(seq[:4], np.tile([0.0, 1.0, 1.0, 1.0], (4, 1)))
    np.testing.assert_array_equal(seq[4:], np.tile([1.0, 0.0, 1.0, 1.0], (4, 1)))


def test_population_is_one_batched_game_with_per_replicate_regret(catalog):
    # the batched evaluation equals playing each sequence alone
    seqs = catalog.sequences[:2]
    both = evaluate("hedge", seqs)
    for j in range(2):
        alone = evaluate("hedge", seqs[j : j + 1])
        assert both.regret[j] == pytest.approx(alone.regret[0], abs=1e-12)
    assert np.all(both.bound == pytest.approx(np.sqrt(T / 2 * np.log(N))))


def test_search_reaches_the_best_catalog_adversary_and_replays(catalog, tmp_path):
    name, cat_value = catalog.best
    assert name == "ftl_killer"  # the alternation is the worst of the three for tuned Hedge
    res = search("hedge", n_actions=N, horizon=T, family="basis", budget=2, catalog=catalog)
    assert res.value >= cat_value - 1e-9
    assert res.value <= res.bound  # tuned Hedge's bound is a theorem
    npy = write_replay(res, tmp_path)
    prov = json.loads(npy.with_suffix(".json").read_text())
    assert prov["value"] == res.value and prov["family"] == "basis" and prov["n_actions"] == N
    assert {"player", "bound", "seed", "budget", "date", "package_version"} <= set(prov)
    run = run_game(
        "hedge",
        "replay",
        adversary_params={"path": str(npy)},
        horizon=T,
        seed=prov["seed"],
        metrics={"regret": {}},
        checkpoints=[T],
    )
    replayed = float(run.rows.query("metric == 'regret' and t == @T").value.iloc[0])
    assert replayed == pytest.approx(res.value, abs=1e-9)
    table = comparison_table([res], catalog)
    assert table.loc[0, "catalog_adversary"] == "ftl_killer"
    assert table.loc[0, "ratio"] == pytest.approx(res.value / res.bound)
    prog = progress_table(res)
    assert list(prog.generation) == [0, 1, 2]
    assert np.all(np.diff(prog.best) >= 0)


def test_resume_continues_to_the_uninterrupted_result(tmp_path):
    kw = {"n_actions": N, "horizon": 50, "family": "switching", "popsize": 4, "seed": 3}
    full = search("hedge", budget=3, progress=False, **kw)
    search("hedge", budget=1, out_dir=tmp_path, progress=False, **kw)
    resumed = search("hedge", budget=3, out_dir=tmp_path, resume=True, progress=False, **kw)
    assert resumed.value == full.value
    np.testing.assert_array_equal(resumed.losses, full.losses)
    strip = ["wall_s"]
    assert (
        progress_table(resumed).drop(columns=strip).equals(progress_table(full).drop(columns=strip))
    )
    with pytest.raises(ConfigError, match="popsize"):
        search(
            "hedge", budget=3, out_dir=tmp_path, resume=True, progress=False, **kw | {"popsize": 5}
        )


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"budget": 0}, "budget"),
        ({"popsize": 1}, "popsize"),
        ({"sigma0": -1.0}, "sigma0"),
        ({"seed": -2}, "seed"),
        ({"family": "spiral"}, "family"),
        ({"family": "switching", "family_params": {"n_segments": 0}}, "n_segments"),
        ({"family": "markov", "family_params": {"n_states": 2.5}}, "n_states"),
        ({"family": "switching", "family_params": {"bogus": 1}}, "bogus"),
        ({"horizon": 0}, "horizon"),
        ({"n_actions": 1}, "n_actions"),
        ({"resume": True}, "resume"),
    ],
)
def test_bad_parameters_name_the_parameter(kwargs, param):
    args = {"n_actions": N, "horizon": 20, "family": "switching", "progress": False} | kwargs
    with pytest.raises(ConfigError, match=f"'{param}'"):
        search("hedge", **args)


@pytest.mark.slow
def test_markov_search_beats_the_catalog_on_tuned_hedge(catalog):
    res = search("hedge", n_actions=N, horizon=T, family="markov", budget=30, progress=False)
    assert res.value > catalog.best[1] + 0.5
