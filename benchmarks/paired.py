"""Paired-round ratios on a shared machine: their median, its interval and a target's verdict.

On a shared host the same timing moves by tens of percent within the hour (a neighbour's load
slows each vCPU unevenly, for minutes at a time). Each side's best time, taken on its own, picks
each side's luckiest window, and the ratio of two such bests moved from 1.50× to 1.88× within
an hour on one row. The benchmarks that judge a ratio against a target therefore time both sides
in **rounds** (each round times every side once, seconds apart, so a slow spell hits all of
them) and read the **median of the rounds' ratios**, with a bootstrap 95 % interval of that
median. The verdict applies the target to the interval, not to the point: a row is **met** when
all of its interval clears the target, **not met** when none of it does, and **within noise**
otherwise, where more rounds or a quieter machine would be needed to tell.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

BOOTSTRAP = 2000
"""Resamples of the bootstrap interval of a median paired ratio."""


def median_interval(ratios: ArrayLike, seed: int = 0) -> tuple[float, float, float]:
    """Return the median of paired ratios and a bootstrap 95 % interval of that median.

    Examples
    --------
    >>> mid, low, high = median_interval([1.0, 2.0, 3.0])
    >>> mid, low <= mid <= high
    (2.0, True)
    """
    values = np.asarray(ratios, dtype=np.float64)
    resampled = np.random.default_rng(seed).choice(values, (BOOTSTRAP, values.size))
    low, high = np.percentile(np.median(resampled, axis=1), [2.5, 97.5])
    return float(np.median(values)), float(low), float(high)


def interval_verdict(low: float, high: float, target: float, *, at_most: bool = False) -> str:
    """``met`` when all of the interval ``[low, high]`` meets ``target`` (``≥`` it, or ``≤`` it
    with ``at_most``), ``not met`` when none of it does, ``within noise`` otherwise.

    Examples
    --------
    >>> interval_verdict(31.0, 40.0, 30.0), interval_verdict(20.0, 29.0, 30.0)
    ('met', 'not met')
    >>> interval_verdict(25.0, 35.0, 30.0)
    'within noise'
    >>> interval_verdict(1.2, 1.4, 1.5, at_most=True), interval_verdict(1.4, 1.6, 1.5, at_most=True)
    ('met', 'within noise')
    """
    if at_most:
        meets_all, meets_none = high <= target, low > target
    else:
        meets_all, meets_none = low >= target, high < target
    if meets_all:
        return "met"
    if meets_none:
        return "not met"
    return "within noise"


class Judgement(NamedTuple):
    """A row's paired ratios judged: their median, its 95 % interval and the verdict."""

    median: float
    low: float
    high: float
    verdict: str


def judge(ratios: ArrayLike, target: float, *, at_most: bool = False) -> Judgement:
    """:func:`median_interval` of the rounds' ratios and :func:`interval_verdict` of its interval.

    Examples
    --------
    >>> judge([1.2, 1.3, 1.25], 1.5, at_most=True).verdict
    'met'
    """
    mid, low, high = median_interval(ratios)
    return Judgement(mid, low, high, interval_verdict(low, high, target, at_most=at_most))
