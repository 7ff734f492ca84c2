"""How the report writes numbers, intervals, p-values and metric names in its tables and text."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

PARAM_SYMBOL = {
    "quantile_regret": "ε",
    "subset_quantile_regret": "ε",
    "shifting_regret": "k",
    "sa_regret": "τ",
}


def num(x, digits: int = 4) -> str:
    """A number in ``digits`` significant digits, scientific outside [1e-3, 1e5).

    Examples
    --------
    >>> num(0.123456), num(123456.0), num(float("nan")), num(float("-inf")), num("x")
    ('0.1235', '1.235e+05', 'n/a', '−∞', 'x')
    """
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if not math.isfinite(v):
        return "n/a" if math.isnan(v) else ("∞" if v > 0 else "−∞")
    if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
        return f"{v:.{digits - 1}e}"
    return f"{v:.{digits}g}"


def ci(lo, hi) -> str:
    """An interval ``[lo, hi]``, or ``n/a`` when an end is not finite."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "n/a"
    return f"[{num(lo)}, {num(hi)}]"


def p_value(p) -> str:
    """A p-value in two significant digits, ``<1e-4`` below that, ``n/a`` when missing."""
    if p is None or not np.isfinite(p):
        return "n/a"
    return "<1e-4" if p < 1e-4 else f"{p:.2g}"


def param_text(metric: str, param) -> str:
    """A metric's name with its parameter, if any.

    Examples
    --------
    >>> param_text("shifting_regret", 2.0), param_text("regret", float("nan"))
    ('shifting_regret (k = 2)', 'regret')
    """
    if param is None or (isinstance(param, float) and math.isnan(param)):
        return metric
    return f"{metric} ({PARAM_SYMBOL.get(metric, 'param')} = {float(param):g})"


def int_range(values: pd.Series) -> str:
    """The range of integer ``values``, one number when they are all equal."""
    lo, hi = int(values.min()), int(values.max())
    return str(lo) if lo == hi else f"{lo}–{hi}"


def plural(n: int, word: str) -> str:
    """``n word`` or ``n words``."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def first_line(text) -> str:
    """The first non-blank line of ``text`` (``""`` for ``None``)."""
    text = "" if text is None else str(text)
    return next((line for line in text.splitlines() if line.strip()), "")
