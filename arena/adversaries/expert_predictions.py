"""Experts as fixed forecasters of a real time series; loss = clipped prediction error."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np

from arena.base import file_digest
from arena.errors import ConfigError
from arena.experts.components import ObliviousAdversary
from arena.params import InstanceOf, Interval, IsNone, ListOf, OneOf
from arena.spec import AdversaryTags, GameSpec

SERIES = ("goog", "synthetic")
LOSSES = ("absolute", "squared")


def goog_prices() -> np.ndarray:
    """Return Google's daily adjusted closing prices, 2004-08-19 to 2008-10-14 (1047 days).

    The file ``goog.npz`` ships with matplotlib's sample data (Yahoo! Finance), so it is
    available offline wherever the arena is installed.
    """
    from matplotlib import cbook

    path = cbook.get_sample_data("goog.npz", asfileobj=False)
    with np.load(path) as data:
        return np.asarray(data["price_data"]["adj_close"], dtype=np.float64)


def synthetic_series(length: int, seed: int = 0) -> np.ndarray:
    """Return a documented synthetic series in [0, 1] of the given length.

    ``y_t = clip(½ + 0.25 sin(2πt/250) + 0.1 sin(2πt/1000) + e_t, 0, 1)`` with the AR(1) noise
    ``e_t = 0.9 e_{t−1} + 0.03 ξ_t``, ``ξ_t ~ N(0, 1)`` from ``default_rng(seed)``, ``e_0 = 0``. The
    normals are drawn in order, so a longer series extends a shorter one (same prefix).

    Examples
    --------
    >>> a, b = synthetic_series(50), synthetic_series(80)
    >>> bool(np.array_equal(a, b[:50]) and a.min() >= 0 and a.max() <= 1)
    True
    """
    xi = np.random.default_rng(seed).standard_normal(length)
    e = np.empty(length)
    prev = 0.0
    for i in range(length):
        prev = 0.9 * prev + 0.03 * xi[i]
        e[i] = prev
    t = np.arange(length, dtype=np.float64)
    y = 0.5 + 0.25 * np.sin(2 * math.pi * t / 250) + 0.1 * np.sin(2 * math.pi * t / 1000) + e
    return np.clip(y, 0.0, 1.0)


def load_series(path: str | Path, column: str | int | None) -> np.ndarray:
    """Load a 1-D series from ``.npy`` (1-D) or ``.csv`` (a named or indexed numeric column).

    Raises ``ValueError`` naming the file and what is wrong (:class:`ExpertPredictions` reports
    it as a :class:`~arena.errors.ConfigError` on ``path``).
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    try:
        if path.suffix.lower() == ".npy":
            y = np.asarray(np.load(path, allow_pickle=False), dtype=np.float64)
            if y.ndim == 2 and 1 in y.shape:
                y = y.ravel()
        elif path.suffix.lower() == ".csv":
            import pandas as pd

            frame = pd.read_csv(path, header=None)
            if pd.to_numeric(frame.iloc[0], errors="coerce").isna().any():
                frame = pd.read_csv(path)  # the first row is a header of column names
            numeric = frame.select_dtypes("number")
            if column is None:
                if numeric.shape[1] == 0:
                    raise ValueError("no numeric column")
                y = numeric.iloc[:, 0].to_numpy(dtype=np.float64)
            elif isinstance(column, int) and column not in frame.columns:
                y = frame.iloc[:, column].to_numpy(dtype=np.float64)
            else:
                y = frame[column].to_numpy(dtype=np.float64)
        else:
            raise ValueError("use a .npy or .csv file")
    except (ValueError, OSError, KeyError, IndexError) as exc:
        raise ValueError(f"{path}: cannot read a numeric series ({exc})") from exc
    if y.ndim != 1 or y.size < 3 or not np.isfinite(y).all():
        raise ValueError(f"{path}: need a finite 1-D series of length ≥ 3")
    return y


def min_max(y: np.ndarray) -> np.ndarray:
    """Map a series affinely onto [0, 1] (a constant series becomes ½)."""
    lo, hi = float(y.min()), float(y.max())
    if hi == lo:
        return np.full_like(y, 0.5)
    return (y - lo) / (hi - lo)


class ExpertPredictions(ObliviousAdversary):
    """Experts are fixed forecasters of a real time series; the loss is their clipped error.

    Parameters
    ----------
    series : {"goog", "synthetic"}, optional
        The data: Google's daily adjusted close 2004-2008 (1047 days, matplotlib's offline sample
        data; default) or the synthetic series of :func:`synthetic_series` (any length).
        Exclusive with ``path``.
    path : str, optional
        A user series: ``.npy`` (1-D) or ``.csv`` (``column`` or the first numeric column).
    column : str or int, optional
        CSV column name or position.
    loss : {"absolute", "squared"}
        ``|ŷ − y|`` or ``(ŷ − y)²`` on the series scaled to [0, 1] with predictions clipped to
        [0, 1], so every loss lies in [0, 1].
    n_constants : int
        Number of constant forecasters, on the grid ``k/(n − 1)`` (½ if n = 1).
    windows : list of int
        Moving-average forecasters: the mean of the last w values (w = 1: persistence).
    ar_coefs : list of float
        Linear AR(2) trend rules ``ŷ_t = y_{t−1} + φ (y_{t−1} − y_{t−2})``, one per φ.
    offset : {"fixed", "random"}
        Round 1 forecasts the value right after the warm-up at the start of the series, or after
        a uniform random start per replicate (drawn from its stream at reset).
    synthetic_seed : int
        Seed of the synthetic series.

    Notes
    -----
    N = ``n_constants + len(windows) + len(ar_coefs)`` (fixed by the construction). The series
    is mapped onto [0, 1] by min-max over the whole file (synthetic: already in [0, 1]); the
    forecasters only use values before the one they predict, and the first
    ``W = max(windows, 2 if AR rules)`` values are warm-up, so T ≤ len − W (goog: 1047 − W).
    The losses are deterministic given the start: the same for every player (oblivious); with
    ``offset="fixed"`` the same for every replicate too, so the replicates differ only through
    the players' randomness. Real data has no planted structure: this is a realism check for
    adaptive players (e.g. whether they track the best moving average as the regime changes),
    complementing the synthetic constructions. :meth:`expert_names` labels the experts.

    Examples
    --------
    >>> from arena import play
    >>> df = play("hedge", ExpertPredictions(), horizon=500, metrics={"regret": {}})
    >>> bool(0 <= df.value.iloc[-1] < 50)
    True

    References
    ----------
    Cesa-Bianchi & Lugosi (2006), ch. 2-3 (prediction with expert advice of a real sequence);
    matplotlib sample data ``goog.npz``.
    """

    parameter_constraints: ClassVar = {
        "series": [OneOf(*SERIES), IsNone()],
        "path": [InstanceOf(str, "the path of a .npy or .csv file"), IsNone()],
        "column": [InstanceOf(str, "a column name"), Interval(integer=True), IsNone()],
        "loss": [OneOf(*LOSSES)],
        "n_constants": [Interval(0, None, integer=True)],
        "windows": [ListOf(Interval(1, None, integer=True), allow_empty=True), IsNone()],
        "ar_coefs": [ListOf(Interval(), allow_empty=True), IsNone()],
        "offset": [OneOf("fixed", "random")],
        "synthetic_seed": [Interval(0, None, integer=True)],
    }
    tags = AdversaryTags(oblivious=True, needs_horizon=True)

    def __init__(
        self,
        series: str | None = None,
        path: str | None = None,
        column: str | int | None = None,
        loss: str = "absolute",
        n_constants: int = 5,
        windows: Sequence[int] = (1, 5, 20),
        ar_coefs: Sequence[float] = (-0.5, 0.5, 1.0),
        offset: str = "fixed",
        synthetic_seed: int = 0,
    ):
        self.series = series
        self.path = path
        self.column = column
        self.loss = loss
        self.n_constants = n_constants
        self.windows = windows
        self.ar_coefs = ar_coefs
        self.offset = offset
        self.synthetic_seed = synthetic_seed

    # ------------------------------------------------------------------------------------------
    # configuration

    def _experts(self) -> tuple[int, np.ndarray, np.ndarray]:
        k = int(self.n_constants)
        windows = [int(w) for w in self.windows or []]
        coefs = [float(c) for c in (self.ar_coefs or [])]
        if k + len(windows) + len(coefs) == 0:  # three parameters: no declaration says it
            message = "no expert: give constants, windows or AR rules"
            raise ConfigError(self.label(), "n_constants", message)
        return k, np.array(windows, dtype=np.int64), np.array(coefs)

    def _warmup(self) -> int:
        _, windows, coefs = self._experts()
        return max(int(windows.max()) if windows.size else 1, 2 if coefs.size else 1)

    def _source(self) -> str:
        if self.path is not None:
            if self.series is not None:
                raise ConfigError(self.label(), "series", "give either series or path")
            return "path"
        return "goog" if self.series is None else self.series

    def data_identity(self) -> dict[str, str]:
        path = self.path
        return {"path": file_digest(path)} if path is not None and Path(path).is_file() else {}

    def resolve_n_actions(self, requested: int | None) -> int:
        k, windows, coefs = self._experts()
        n = k + windows.size + coefs.size
        if requested is not None and int(requested) != n:
            raise ConfigError(
                self.label(),
                "n_actions",
                f"the construction has N = {n} experts ({k} constants, {windows.size} moving "
                f"averages, {coefs.size} AR rules) but n_actions = {requested} was requested",
            )
        return n

    def expert_names(self) -> list[str]:
        """Return one label per expert, in column order."""
        k, windows, coefs = self._experts()
        names = [f"constant {c:.3g}" for c in self._constants(k)]
        names += [f"moving average {w}" for w in windows]
        names += [f"AR trend phi={c:g}" for c in coefs]
        return names

    @staticmethod
    def _constants(k: int) -> np.ndarray:
        return np.array([0.5]) if k == 1 else np.linspace(0.0, 1.0, k)

    # ------------------------------------------------------------------------------------------
    # game state

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        k, windows, coefs = self._experts()
        warm, horizon = self._warmup(), int(spec.horizon)
        source = self._source()
        if source == "goog":
            y = min_max(goog_prices())
        elif source == "path":
            try:
                y = min_max(load_series(self.path, self.column))
            except ValueError as exc:
                raise ConfigError(who, "path", str(exc)) from exc
        else:
            y = synthetic_series(2 * (warm + horizon), int(self.synthetic_seed))
        room = y.size - warm - horizon  # largest start offset
        if room < 0:
            raise ConfigError(
                who,
                "horizon",
                f"the series has {y.size} values: at most T = {y.size - warm} rounds after the "
                f"{warm} warm-up values, but the horizon is {horizon}",
            )
        if self.offset == "fixed":
            offsets = np.zeros(spec.n_replicates, dtype=np.int64)
        else:
            offsets = np.array([int(rng.integers(room + 1)) for rng in rngs], dtype=np.int64)
        self._y = y
        self._cs = np.concatenate([[0.0], np.cumsum(y)])
        self._offsets = offsets
        self._warm = warm
        self._consts, self._windows, self._coefs = self._constants(k), windows, coefs

    def start_offsets(self) -> np.ndarray:
        """Return each replicate's start offset into the series (after reset)."""
        return self._offsets.copy()

    def predictions(self, t0: int, n: int) -> np.ndarray:
        """Return the experts' clipped forecasts for rounds ``t0..t0+n−1``, shape (R, n, N)."""
        idx = self._offsets[:, None] + self._warm + np.arange(t0 - 1, t0 - 1 + n)[None, :]
        y, cs = self._y, self._cs
        parts = [np.broadcast_to(self._consts, (*idx.shape, self._consts.size))]
        if self._windows.size:
            w = self._windows
            parts.append((cs[idx][..., None] - cs[idx[..., None] - w]) / w)
        if self._coefs.size:
            last, before = y[idx - 1][..., None], y[idx - 2][..., None]
            parts.append(last + self._coefs * (last - before))
        return np.clip(np.concatenate(parts, axis=-1), 0.0, 1.0)

    def targets(self, t0: int, n: int) -> np.ndarray:
        """Return the series values forecast at rounds ``t0..t0+n−1``, shape (R, n)."""
        idx = self._offsets[:, None] + self._warm + np.arange(t0 - 1, t0 - 1 + n)[None, :]
        return self._y[idx]

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        err = self.predictions(t0, n) - self.targets(t0, n)[..., None]
        out = np.abs(err) if self.loss == "absolute" else err * err
        return np.clip(out, 0.0, 1.0)

    @classmethod
    def _unit_test_params(cls):
        # goog holds 1047 values: the conformance checks play 2000 rounds, so they use the
        # synthetic series (goog is exercised in tests/adversaries/test_expert_predictions.py)
        yield {"series": "synthetic"}
        yield {"series": "synthetic", "loss": "squared", "offset": "random", "windows": [2, 7]}
