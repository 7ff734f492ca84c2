"""The "Methods" section: how the intervals, tests and tables are computed."""

from __future__ import annotations

from arena.reporting.render import Para, code
from arena.reporting.sections.context import ReportContext, Section


def methods(ctx: ReportContext) -> Section:
    """The methods section: one paragraph on the statistics behind every table and figure."""
    text = (
        f"All intervals are two-sided {ctx.pct} Student t intervals over replicates, mean ± "
        "t_(n−1) · s/√n with the sample standard deviation. A unit is one (seed, replicate) of a "
        "game (adversary, its parameters, N, T): every player meets the same losses in a unit "
        "against an oblivious adversary (common random numbers), so players are compared on "
        "paired per-unit differences (paired t interval and two-sided paired t-test; Holm–"
        "Bonferroni over all pairs of players within a game and metric). Normalized regret is "
        "the mean final regret divided by sqrt(T ln N). The win matrix counts, over all units "
        "both players share, how often the row player's final regret is strictly smaller. "
        "Figures: Okabe–Ito colours, one style per player in every figure (assigned from the "
        "sorted player labels; past six players line styles and markers tell apart the players "
        "that share a colour; black is the reference lower bound's). A player's label shows the "
        "parameters that tell apart the variants of its name "
        f"({code('arena.reporting.variant_labels')}); a panel's title names the adversary with "
        "every parameter given and N."
    )
    return Section("Methods", "methods", [Para(text)])
