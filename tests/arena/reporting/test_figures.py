"""Figures that explain themselves: full panel titles, T and replicates, variant labels, a visible
lower bound, and lines that can be told apart with more than six players (the seeds tournament's
eight)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pytest
import yaml
from matplotlib.colors import to_hex

import arena
from arena.reporting import load_source, player_styles, variant_labels
from arena.reporting import stats as rs
from arena.reporting.figures import LOWER_BOUND_COLOR, MAX_PLAIN, curves_figure, sweep_figure
from arena.results import write_parquet_atomic

CONFIGS = Path(__file__).resolve().parents[3] / "configs" / "tournament"
HORIZON, REPLICATES = 40, 2


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    """The seeds tournament's eight players against two of its adversaries (one declaring a
    lower bound), N = 10, at a tiny horizon, as a tournament folder; and its loaded source."""
    config = yaml.safe_load((CONFIGS / "seeds.yaml").read_text())
    players = [p if isinstance(p, dict) else {"name": p} for p in config["players"]]
    assert len(players) == 8 > MAX_PLAIN
    root = tmp_path_factory.mktemp("seeds")
    for p in players:
        for adversary, params in (("fair_coin", {}), ("bernoulli", {"gap": 0.1})):
            run = arena.run_game(
                p["name"],
                adversary,
                player_params=p.get("params", {}),
                adversary_params=params,
                n_actions=10,
                horizon=HORIZON,
                replicates=REPLICATES,
                seed=1,
                metrics={
                    "regret": {},
                    "shifting_regret": {"k": [1, 2]},
                    "bound": {},
                    "lower_bound": {},
                },
            )
            cell = run.config["cell"]
            write_parquet_atomic(run.rows, root / "parts" / f"results-{cell}.parquet")
    return load_source(root)


def _figures(src, **kw):
    styles = player_styles(src.player_labels)
    curves = rs.curve_summary(src.rows, "regret")
    bounds = rs.curve_summary(src.rows, "bound:regret")
    lower = rs.curve_summary(src.rows, "lower_bound:regret")
    lower = lower.groupby(["game", "t"], as_index=False)["mean"].mean()
    final = rs.final_rows(src.rows, "shifting_regret")
    sweep = rs.grouped_mean_ci(final, ["game_label", "player_label", "param"]).rename(
        columns={"game_label": "game", "player_label": "player"}
    )
    sweep["game"], sweep["player"] = sweep.game.astype(str), sweep.player.astype(str)
    games = src.game_labels
    return [
        curves_figure("c", curves, games, styles, ylabel="y", caption="", bounds=bounds,
                      lower=lower, **kw),
        sweep_figure("s", sweep, games, styles, xlabel="k", ylabel="y", caption="", **kw),
    ]  # fmt: skip


def _look(line) -> tuple[str, str, str]:
    return (to_hex(line.get_color()), str(line.get_linestyle()), str(line.get_marker()))


def test_every_line_of_the_eight_player_seeds_figures_can_be_told_apart(seeds):
    assert len(seeds.player_labels) == 8
    for out in _figures(seeds):
        for ax in out.fig.axes:
            if not ax.get_visible():
                continue
            # the drawn data lines: players' curves and bounds, and the lower bound (error-bar
            # caps are part of a player's error bars, not lines of their own)
            lines = [ln for ln in ax.lines if ln.get_gid() and ln.get_marker() != "_"]
            players = {ln.get_gid() for ln in lines if ln.get_gid().startswith("player:")}
            assert len(players) == 8, (out.name, ax.get_title())
            looks = [_look(ln) for ln in lines]
            assert len(set(looks)) == len(looks), (out.name, ax.get_title(), looks)
            # past six players colour alone is not enough: every player's line has a marker
            assert all(
                ln.get_marker() not in ("None", None, "")
                for ln in lines
                if ln.get_gid() != "lower_bound"
            )
        # the legend tells them apart too
        handles = out.fig.legends[0].legend_handles
        looks = [_look(h) for h in handles]
        assert len(set(looks)) == len(looks)
        plt.close(out.fig)


def test_lower_bound_is_drawn_black_dashed_above_every_curve(seeds):
    curves, sweep = _figures(seeds)
    plt.close(sweep.fig)
    fair = [ax for ax in curves.fig.axes if ax.get_visible() and "fair_coin" in ax.get_title()]
    assert len(fair) == 1
    (lb,) = [ln for ln in fair[0].lines if ln.get_gid() == "lower_bound"]
    assert to_hex(lb.get_color()) == LOWER_BOUND_COLOR and lb.get_linestyle() == "--"
    others = [a for a in [*fair[0].lines, *fair[0].collections] if a is not lb]
    assert others and lb.get_zorder() > max(a.get_zorder() for a in others)
    labels = [t.get_text() for t in curves.fig.legends[0].get_texts()]
    assert "lower bound" in labels
    plt.close(curves.fig)


def test_panels_name_the_game_and_figures_say_t_and_replicates(seeds):
    from arena.reporting.sections.context import ReportContext

    ctx = ReportContext(seeds, ["regret"], 0.95, Path("."), Path("."), 0.0)
    assert ctx.suptitle == f"T = {HORIZON}; {REPLICATES} replicates per cell"
    for out in _figures(seeds, **{k: v for k, v in ctx.figure_style().items() if k != "styles"}):
        titles = sorted(ax.get_title() for ax in out.fig.axes if ax.get_visible())
        # bernoulli's gap is its default, and is shown anyway: a panel names its whole game
        assert titles == ["bernoulli(best=0, gap=0.1), N=10", "fair_coin, N=10"]
        assert out.fig.get_suptitle() == ctx.suptitle
        plt.close(out.fig)


def test_legends_label_the_two_hedge_variants_by_their_rate(seeds):
    labels = set(seeds.player_labels)
    assert {"hedge(eta=tuned)", "hedge(eta=anytime)"} <= labels and "hedge" not in labels
    # the report's labels are the public helper's
    assert (seeds.rows["player_label"].astype(str) == variant_labels(seeds.rows)).all()


@pytest.mark.parametrize("n", [1, 6, 7, 8, 18, 25])
def test_player_styles_are_distinct_and_plain_up_to_six(n):
    styles = player_styles([f"p{i:02d}" for i in range(n)])
    looks = {(s.color, s.linestyle, s.marker) for s in styles.values()}
    assert len(looks) == n
    assert LOWER_BOUND_COLOR not in {s.color for s in styles.values()}
    plain = all(s.marker is None and s.linestyle == "-" for s in styles.values())
    assert plain == (n <= MAX_PLAIN)
