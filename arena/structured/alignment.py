"""Event-to-frame alignment as structured output (Shalev-Shwartz 2007, Chapter 9).

An input is a sequence of F frames ``x̄ = (x_0 … x_{F−1})``, ``x_f ∈ ℝ^d``, with the sequence of
m events ``ē = (e_0 … e_{m−1})`` over P event types (phonemes, notes); the answer is the start
frame of every event, ``ȳ = (y_0 … y_{m−1})`` with ``y_0 = 0 < y_1 < … < y_{m−1} < F`` and every
event lasting at most L frames (``y_m = F``). The hypothesis is ``argmax_ȳ ⟨w, φ(x̄, ē, ȳ)⟩``
(9.2) over these monotone alignments, and the cost is (9.1)'s count of the events whose start
is off by more than ε frames, ``ρ(ȳ, ȳ′) = |{i : |y_i − y′_i| > ε}|`` (the thesis scales it by
``10/|ȳ|`` and floors it; the count keeps the range ``{0} ∪ [1, ∞)`` of Fig 5.4).

The features are a synthetic analogue of the speech base functions (9.4)–(9.7), each a sum over
events, with ``dur_i = y_{i+1} − y_i``:

* emissions (P·d): ``Σ_i Σ_{y_i ≤ f < y_{i+1}} x_f ⊗ e_{e_i}`` (the frame-wise event scores,
  here learned rather than read from a trained frame classifier);
* boundary change (1): ``Σ_{i≥1} ‖x_{y_i} − x_{y_i − 1}‖`` (the spectral change at a boundary,
  d(x_{y_i−1}, x_{y_i}) of (9.4) with j = 1);
* duration (1): ``Σ_i dur_i² / L`` (a quadratic duration score, in place of (9.6)'s log-normal);
* speaking rate (1): ``Σ_{i≥1} (dur_i − dur_{i−1})² / L`` ((9.7)'s squared change of rate).

The speaking-rate term couples three consecutive starts, so the argmax is the dynamic program of
Fig 9.1 over pairs of consecutive starts: ``D(i, s, e)`` is the best score of events 0 … i with
event i on frames ``[s, e)``, ``D(i, s, e) = seg(i, s, e) + bnd(s) + max_{s − L ≤ s′ < s}
[D(i−1, s′, s) + rate(s′, s, e)]``, and the answer is ``max_s D(m−1, s, F)``: O(m·F·L²).

The input is packed into one array of shape ``(F, d + 1)``: ``x[:, :d]`` are the frames and
``x[:m, d]`` the event types (as floats).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from arena.structured.chain import MAX_ENUMERATED


@dataclass(frozen=True)
class AlignmentStructure:
    """Monotone alignments of m events to F frames, with the features of the module docstring.

    Parameters
    ----------
    n_frames, n_events, n_types, n_features : int
        F, m, P and d.
    max_duration : int
        L, the most frames one event lasts.
    tolerance : int
        ε, the frames a start may be off at no cost.

    Examples
    --------
    >>> s = AlignmentStructure(n_frames=6, n_events=2, n_types=2, n_features=1, max_duration=4)
    >>> x = np.zeros((6, 2)); x[:, 0] = [1, 1, 1, -1, -1, -1]; x[:2, 1] = [0, 1]
    >>> w = np.zeros(s.dim); w[:2] = [1.0, -1.0]  # type 0 likes x > 0, type 1 likes x < 0
    >>> s.argmax(w, x).tolist()
    [0, 3]
    """

    n_frames: int
    n_events: int
    n_types: int
    n_features: int
    max_duration: int
    tolerance: int = 0

    @property
    def n_labels(self) -> int:
        """The values a start may take: the F frames."""
        return self.n_frames

    @property
    def length(self) -> int:
        """The answer's length: m starts."""
        return self.n_events

    @property
    def dim(self) -> int:
        """``P·d + 3``."""
        return self.n_types * self.n_features + 3

    @property
    def input_shape(self) -> tuple[int, ...]:
        """``(F, d + 1)``: the frames, and the event types in the last column."""
        return (self.n_frames, self.n_features + 1)

    def describe(self) -> dict[str, int | str]:
        """The structure as the manifest records it."""
        return {
            "kind": "alignment",
            "n_frames": self.n_frames,
            "n_events": self.n_events,
            "n_types": self.n_types,
            "n_features": self.n_features,
            "max_duration": self.max_duration,
            "tolerance": self.tolerance,
            "cost": "starts off by more than the tolerance",
        }

    def _parts(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        frames = np.asarray(x, dtype=np.float64)[:, : self.n_features]
        events = np.asarray(x, dtype=np.float64)[: self.n_events, self.n_features].astype(np.int64)
        return frames, events

    def features(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """φ(x̄, ē, ȳ), shape (dim,), term by term as the module docstring defines it."""
        frames, events = self._parts(x)
        d, big_l = self.n_features, float(self.max_duration)
        phi = np.zeros(self.dim)
        bounds = [int(v) for v in y] + [self.n_frames]
        durs = [bounds[i + 1] - bounds[i] for i in range(self.n_events)]
        for i in range(self.n_events):
            e = int(events[i])
            phi[e * d : (e + 1) * d] += frames[bounds[i] : bounds[i + 1]].sum(axis=0)
            phi[-2] += durs[i] ** 2 / big_l
            if i >= 1:
                phi[-3] += float(np.linalg.norm(frames[bounds[i]] - frames[bounds[i] - 1]))
                phi[-1] += (durs[i] - durs[i - 1]) ** 2 / big_l
        return phi

    def cost(self, y: np.ndarray, y_other: np.ndarray) -> float:
        """ρ(ȳ, ȳ′): the events whose starts differ by more than the tolerance."""
        diff = np.abs(np.asarray(y, dtype=np.int64) - np.asarray(y_other, dtype=np.int64))
        return float(np.count_nonzero(diff > self.tolerance))

    def valid(self, y: np.ndarray) -> bool:
        """Whether ``y`` is a monotone alignment: ``y_0 = 0``, every duration in ``1 … L``."""
        bounds = [int(v) for v in y] + [self.n_frames]
        if len(y) != self.n_events or bounds[0] != 0:
            return False
        return all(
            1 <= bounds[i + 1] - bounds[i] <= self.max_duration for i in range(self.n_events)
        )

    def argmax(
        self, w: np.ndarray, x: np.ndarray, augment: np.ndarray | None = None, scale: float = 1.0
    ) -> np.ndarray:
        """The best alignment (+ ``scale·ρ(augment, ·)``) by the dynamic program of Fig 9.1.

        Ties go to the earliest previous start. Raises ``ValueError`` when no alignment exists
        (``F > m·L`` or ``F < m``).
        """
        frames, events = self._parts(x)
        w = np.asarray(w, dtype=np.float64)
        d, n_f, m, big_l = self.n_features, self.n_frames, self.n_events, self.max_duration
        emit = w[: self.n_types * d].reshape(self.n_types, d)
        w_bnd, w_dur, w_rate = w[-3], w[-2], w[-1]
        # frame scores under each event's type, summed by prefix: seg(i, s, e) in O(1)
        prefix = np.zeros((m, n_f + 1))
        for i in range(m):
            prefix[i, 1:] = np.cumsum(frames @ emit[int(events[i])])
        change = np.zeros(n_f)
        change[1:] = np.linalg.norm(frames[1:] - frames[:-1], axis=1)

        def local(i: int, s: int, e: int) -> float:
            v = prefix[i, e] - prefix[i, s] + w_dur * (e - s) ** 2 / big_l
            if i >= 1:
                v += w_bnd * change[s]
            if augment is not None and abs(s - int(augment[i])) > self.tolerance:
                v += scale
            return v

        neg = -np.inf
        score = np.full((m, n_f + 1, n_f + 1), neg)
        back = np.full((m, n_f + 1, n_f + 1), -1, dtype=np.int64)
        for e in range(1, min(big_l, n_f) + 1):
            score[0, 0, e] = local(0, 0, e)
        for i in range(1, m):
            for s in range(1, n_f):
                for e in range(s + 1, min(s + big_l, n_f) + 1):
                    best, arg = neg, -1
                    for sp in range(max(0, s - big_l), s):
                        prev = score[i - 1, sp, s]
                        if prev == neg:
                            continue
                        v = prev + w_rate * ((e - s) - (s - sp)) ** 2 / big_l
                        if v > best:
                            best, arg = v, sp
                    if arg >= 0:
                        score[i, s, e] = best + local(i, s, e)
                        back[i, s, e] = arg
        last = score[m - 1, :, n_f]
        if not np.isfinite(last).any():
            raise ValueError(f"no alignment of {m} events of ≤ {big_l} frames to {n_f} frames")
        s = int(np.argmax(last))
        y = np.empty(m, dtype=np.int64)
        e = n_f
        for i in range(m - 1, -1, -1):
            y[i] = s
            s, e = int(back[i, s, e]), s
        return y

    def max_loss(self, u: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
        """The maximal loss (5.22) by loss-augmented inference (see the chain's)."""
        y_aug = self.argmax(u, x, augment=y)
        gap = float(np.asarray(u) @ (self.features(x, y) - self.features(x, y_aug)))
        return max(self.cost(y, y_aug) - gap, 0.0)

    def enumerable(self) -> bool:
        """Whether :meth:`all_strings` lists every alignment (at most :data:`MAX_ENUMERATED`)."""
        return (self.max_duration + 1) ** (self.n_events - 1) <= MAX_ENUMERATED

    def all_strings(self) -> np.ndarray:
        """Every monotone alignment, in lexicographic order, shape (count, m)."""
        if not self.enumerable():
            raise ValueError("too many alignments to enumerate")
        out = []
        for durs in itertools.product(range(1, self.max_duration + 1), repeat=self.n_events - 1):
            y = np.concatenate([[0], np.cumsum(durs)]).astype(np.int64)
            if self.valid(y):
                out.append(y)
        return np.array(out, dtype=np.int64).reshape(-1, self.n_events)

    def all_features(self, x: np.ndarray) -> np.ndarray:
        """φ(x, ȳ) of every alignment of :meth:`all_strings`, shape (count, dim)."""
        return np.array([self.features(x, y) for y in self.all_strings()]).reshape(-1, self.dim)

    def max_difference_norm(self, x: np.ndarray, y: np.ndarray) -> float:
        """``max_{y′≠y} ‖φ(x, y′) − φ(x, y)‖`` over every alignment, by enumeration."""
        base = self.features(x, y)
        best = 0.0
        for other in self.all_strings():
            if np.any(other != y):
                best = max(best, float(np.linalg.norm(self.features(x, other) - base)))
        return best


def last_conversion(
    player, stream, n_train: int, n_test: int, seed: int = 0, tolerances=(0, 1, 2)
) -> dict[str, float]:
    """Train ``player`` over ``n_train`` utterances of ``stream`` once, then score its last
    hypothesis on ``n_test`` fresh ones (the "Last" conversion of Chapter 9, Shalev-Shwartz
    2007, Ch. 9 / Appendix B.3).

    Returns the online cost per utterance of the training pass and, for each ε in
    ``tolerances``, the percentage of test starts (the first, always 0, excluded) within ε
    frames of the truth under the last ``θ`` (Table 9.1's measure) and under ``θ = 0``.

    Examples
    --------
    >>> from arena.adversaries.alignment_stream import AlignmentStream
    >>> from arena.players.structured_self_tuned import StructuredSelfTuned
    >>> out = last_conversion(StructuredSelfTuned(), AlignmentStream(), 20, 5)
    >>> sorted(out)[:2]
    ['last_within_0', 'last_within_1']
    """
    from arena.spec import GameSpec

    s = stream.structure()
    spec = GameSpec(
        "structured",
        s.length,
        n_train + n_test,
        n_replicates=1,
        dim=s.n_features,
        replicate_ids=(0,),
        n_classes=s.n_labels,
        structure=s,
    )
    stream, player = stream.clone(), player.clone()
    stream.reset(spec, [np.random.default_rng(seed)])
    player.reset(spec, [np.random.default_rng(seed + 1)])
    x, y = stream.examples(1, n_train + n_test)
    online = 0.0
    for j in range(n_train):
        y_hat = player.predict(x[:, j])
        online += s.cost(y[0, j], y_hat[0])
        player.update(x[:, j], y[:, j], y_hat)
    out = {"online_cost_per_utterance": online / max(n_train, 1)}
    zero = np.zeros(s.dim)
    for name, predict in (("last", lambda xs: player.predict(xs)[0]), ("zero", None)):
        errors = []
        for j in range(n_train, n_train + n_test):
            guess = predict(x[:, j]) if predict else s.argmax(zero, x[0, j])
            errors.append(np.abs(guess[1:] - y[0, j, 1:]))
        err = np.concatenate(errors)
        for eps in tolerances:
            out[f"{name}_within_{eps}"] = 100.0 * float(np.mean(err <= eps))
    return out
