"""``arena reproduce --data-dir``: the gallery's stand-ins are swapped for the sources' sets found
in the folder (checked against the catalog's shapes), kept otherwise, and each report says which
one every game played; without the sets, or without ``--data-dir``, nothing changes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from arena.apps.cli import main
from arena.apps.hydra_support import config_dir
from arena.apps.real_data import STAND_INS, real_data_config
from arena.apps.reproduce import DATA_TABLE, GalleryTournament, default_list, load_gallery
from arena.data import CATALOG
from arena.data.files import save_examples

REPO = Path(__file__).resolve().parents[2]
TOURNAMENTS = config_dir() / "tournament"


def _gallery_tournaments() -> list[GalleryTournament]:
    return [t for report in load_gallery(default_list()) for t in report.tournaments]


def test_every_pair_names_a_gallery_stand_in_and_a_catalog_set_of_its_task():
    listed = {t.source.stem for t in _gallery_tournaments()}
    for stand_in in STAND_INS:
        assert stand_in.tournament in listed, stand_in
        node = yaml.safe_load((TOURNAMENTS / f"{stand_in.tournament}.yaml").read_text())
        targets = []
        for adv in node["adversaries"]:
            params = adv.get("params", {})
            targets.append(params.get("base_params", params))
        # the stand-in is one of the tournament's games
        assert any(all(t.get(k) == v for k, v in stand_in.params.items()) for t in targets)
        if stand_in.dataset is not None:
            entry = CATALOG[stand_in.dataset]
            regression = stand_in.params["dataset"] == "diabetes"
            assert entry.task == ("regression" if regression else "classification")


def test_without_the_sets_every_gallery_tournament_is_unchanged(tmp_path):
    for entry in _gallery_tournaments():
        node = entry.mapping()
        out, uses = real_data_config(node, tmp_path)
        assert out == node
        assert entry.config(tmp_path).digest() == entry.config().digest()
        assert all(u.path is None and "stand-in" in u.used() for u in uses)


def _breast_cancer(path: Path, n: int) -> Path:
    """A file of the shape of LIBSVM's breast-cancer (683 × 10, labels 2 and 4), generated."""
    rng = np.random.default_rng(0)
    X = rng.integers(1, 11, size=(n, 10)).astype(float)
    y = np.where(X[:, 0] + rng.normal(0, 2, n) > 5.5, 4.0, 2.0)
    return save_examples(path, X, y)


def _listing(tmp_path: Path) -> Path:
    """A gallery of one report over the gallery's two Table D.3 tournaments, with some of their
    games (the stand-ins) as committed (wdbc: the plain and the rescaled; digits: the plain) and
    one player, one replicate."""
    for name, games in (("second_order_wdbc", [0, 2]), ("second_order_digits", [0])):
        node = yaml.safe_load((TOURNAMENTS / f"{name}.yaml").read_text())
        node.update(players=[{"name": "adagrad", "params": {"eta": 0.125}}], replicates=1)
        node["adversaries"] = [node["adversaries"][i] for i in games]
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(node))
    listing = tmp_path / "gallery.yaml"
    listing.write_text(
        "reports:\n"
        "  - name: d3\n"
        "    results: d3\n"
        "    tournaments:\n"
        "      - {file: second_order_wdbc.yaml, out: d3/wdbc}\n"
        "      - {file: second_order_digits.yaml, out: d3/digits}\n"
        "    metrics: [mistakes]\n"
    )
    return listing


def _args(tmp_path: Path, listing: Path, data: Path) -> list[str]:
    return [
        "reproduce",
        "--list",
        str(listing),
        "--data-dir",
        str(data),
        "--outputs",
        str(tmp_path / "out"),
        "--reports",
        str(tmp_path / "reports"),
        "executor=serial",
        "--progress",
        "false",
    ]


def test_reproduce_plays_the_present_set_and_the_stand_in_of_the_absent_one(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    copy = _breast_cancer(data / "breast-cancer", CATALOG["breast-cancer"].examples)
    assert main(_args(tmp_path, _listing(tmp_path), data)) == 0
    table = (tmp_path / "reports" / "d3" / DATA_TABLE).read_text()
    rows = [line for line in table.splitlines() if line.startswith("| second_order")]
    assert len(rows) == 3  # wdbc's two games, digits's one
    sha = hashlib.sha256(copy.read_bytes()).hexdigest()[:16]
    assert "rescaled" in rows[1]  # the stand-in as the base of rescaled is swapped too
    for row in rows[:2]:  # the copy played, named with its SHA-256 and the examples' digest
        assert "`breast-cancer`" in row and f"sha256 {sha}" in row and "683 × 10" in row
    for row in rows[2:]:  # mnist is not there: the stand-in played, saying so
        assert "stand-in digits [8] (mnist is not in the data folder)" in row
    # one pass over the copy: T = its 683 examples; the digits games keep T = 1797
    wdbc = json.loads((tmp_path / "out" / "d3" / "wdbc" / "manifest.json").read_text())
    digits = json.loads((tmp_path / "out" / "d3" / "digits" / "manifest.json").read_text())
    assert wdbc["config"]["horizon"] == 683 and digits["config"]["horizon"] == 1797
    report = (tmp_path / "reports" / "d3" / "report.md").read_text()
    assert "dataset=breast-cancer" in report and "T=683" in report
    assert "data played" in capsys.readouterr().out


def test_a_copy_of_another_shape_is_refused_before_anything_runs(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    _breast_cancer(data / "breast-cancer", 600)
    assert main(_args(tmp_path, _listing(tmp_path), data)) == 2
    err = capsys.readouterr().err
    assert "has 600 examples, not 683" in err and "breast-cancer: 683 examples" in err
    assert not (tmp_path / "out").exists() and not (tmp_path / "reports").exists()


@pytest.mark.parametrize("reports", ["committed", "gallery-like"])
def test_data_dir_never_writes_into_the_committed_reports(tmp_path, capsys, reports):
    data = tmp_path / "data"
    data.mkdir()
    if reports == "committed":
        folder = REPO / "reports"
    else:  # a folder holding a gallery table
        folder = tmp_path / "gallery"
        folder.mkdir()
        (folder / "README.md").write_text("# gallery\n")
    args = _args(tmp_path, _listing(tmp_path), data)
    args[args.index("--reports") + 1] = str(folder)
    assert main(args) == 2
    assert "never into the committed gallery" in capsys.readouterr().err
    assert main(["reproduce", "--data-dir", str(data), "--table"]) == 2
    assert "not with --data-dir" in capsys.readouterr().err
    args = _args(tmp_path, _listing(tmp_path), tmp_path / "missing")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--data-dir" in err and "missing: not a folder" in err
