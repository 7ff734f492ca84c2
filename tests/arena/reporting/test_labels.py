"""Player-variant labels (``arena.reporting.variant_labels``) and games' panel titles."""

from __future__ import annotations

import pandas as pd
import pytest

import arena
from arena.reporting import variant_labels
from arena.reporting.labels import game_title, variant_label_map


def _frame(pairs: list[tuple[str, str]], index=None) -> pd.DataFrame:
    return pd.DataFrame(
        {"player": [p for p, _ in pairs], "player_params": [q for _, q in pairs]}, index=index
    )


def test_variants_of_one_name_show_exactly_the_parameters_that_differ():
    rows = _frame(
        [
            ("ogd", '{"eta":1.0,"schedule":"sqrt","sigma":null}'),
            ("ogd", '{"eta":1.0,"schedule":"fixed","sigma":null}'),
            ("ogd", '{"eta":1.0,"schedule":"sqrt","sigma":null}'),
            ("hedge", '{"eta":"tuned"}'),
            ("hedge", '{"eta":0.1}'),
        ]
    )
    # eta and sigma are shared by the ogd variants, so only the schedule tells them apart
    assert variant_labels(rows).tolist() == [
        "ogd(schedule=sqrt)",
        "ogd(schedule=fixed)",
        "ogd(schedule=sqrt)",
        "hedge(eta=tuned)",
        "hedge(eta=0.1)",
    ]


def test_a_single_variant_keeps_its_short_name_unless_it_leaves_the_defaults():
    rows = _frame(
        [
            ("hedge", '{"eta":"tuned"}'),
            ("ftl", '{"tie_break":"uniform"}'),
            ("normal_hedge_dt", '{"state":"realized"}'),
        ]
    )
    assert variant_labels(rows).tolist() == ["hedge", "ftl", "normal_hedge_dt(state=realized)"]


def test_a_key_missing_from_one_variant_is_a_difference_and_unknown_components_still_label():
    rows = _frame([("mine", '{"a":1}'), ("mine", '{"a":1,"b":2}'), ("other", '{"a":1}')])
    # b tells the variants apart even though one lacks it; "other" is not installed here: its
    # defaults are unknown, so it keeps its short name
    assert variant_labels(rows).tolist() == ["mine", "mine(b=2)", "other"]


def test_labels_are_unique_per_variant_even_when_params_are_not_json():
    m = variant_label_map([("p", "not json"), ("p", "[1, 2]")])
    assert len(set(m.values())) == 2
    assert all(label.startswith("p") for label in m.values())


def test_labels_follow_the_frame_index_and_kind():
    rows = _frame([("hedge", '{"eta":0.5}'), ("hedge", '{"eta":"anytime"}')], index=[10, 3])
    labels = variant_labels(rows)
    assert labels.index.tolist() == [10, 3] and labels.name == "player_label"
    advs = pd.DataFrame(
        {"adversary": ["bernoulli", "bernoulli"], "adversary_params": ['{"gap":0.1}', "{}"]}
    )
    assert variant_labels(advs, "adversary").tolist() == ["bernoulli(gap=0.1)", "bernoulli"]


def test_variant_labels_on_the_rows_of_play():
    frames = [
        arena.play("hedge", "fair_coin", n_actions=3, horizon=20, replicates=2,
                   player_params=params, metrics={"regret": {}})
        for params in ({}, {"eta": 0.2})
    ]  # fmt: skip
    df = pd.concat(frames, ignore_index=True)
    labels = variant_labels(df)
    assert set(labels) == {"hedge(eta=tuned)", "hedge(eta=0.2)"}
    # one label per variant, on every one of its rows
    assert (labels.groupby(df["player_params"]).nunique() == 1).all()


@pytest.mark.parametrize(
    ("args", "title"),
    [
        (
            ("bernoulli", '{"best":0,"gap":0.1,"means":null}', 10),
            "bernoulli(best=0, gap=0.1), N=10",
        ),
        (("fair_coin", "{}", 100, 500), "fair_coin, N=100, T=500"),
        (("replay", '{"path":"x.npy"}', 4), "replay(path=x.npy), N=4"),
    ],
)
def test_game_title_carries_every_given_parameter_and_n(args, title):
    assert game_title(*args) == title
