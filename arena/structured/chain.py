"""Label strings with first-order Markov features: φ, the Hamming cost ρ and Viterbi inference.

The structured-output setting of Shalev-Shwartz (2007), §5.3.3: an answer is a string
``y ∈ Σ^m`` over the alphabet ``Σ = {0, …, k−1}``, the hypothesis is
``h_w(x) = argmax_y ⟨w, φ(x, y)⟩`` (5.20), and the features decompose as (5.21)

    φ(x, y) = ψ⁰(y_1, x) + Σ_{i=2}^m ψ(y_i, y_{i−1}, x),

so that the argmax is a dynamic program over the m positions (Viterbi). :class:`ChainStructure`
fixes the decomposition used here: an input ``x ∈ ℝ^{m×d}`` (one feature row per position) and

    φ(x, y) = [ Σ_i x_i ⊗ e_{y_i}  (emissions, k·d) | e_{y_1}  (start, k) |
                Σ_{i≥2} e_{y_{i−1}} ⊗ e_{y_i}  (transitions, k·k) ],

with the cost ``ρ(y, y′) = |{i : y_i ≠ y′_i}|`` (Hamming), whose range ``{0} ∪ [1, ∞)`` is the
one Fig 5.4 and Theorem 7 assume. The player, the stream and the metrics of the ``structured``
protocol all read the one structure the stream declares (``GameSpec.structure``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

MAX_ENUMERATED = 4096
"""Most strings ``k^m`` the brute-force oracles (:meth:`ChainStructure.all_strings`) enumerate."""


@dataclass(frozen=True)
class ChainStructure:
    """Strings of length ``m`` over ``k`` labels, with emission/start/transition features.

    Parameters
    ----------
    n_labels : int
        The alphabet size k.
    length : int
        The string length m.
    n_features : int
        The per-position input dimension d.

    Notes
    -----
    ``dim = k·d + k + k²`` coordinates; inference is O(m·k²) (Viterbi), loss-augmented
    inference (5.23) the same with the Hamming cost added position by position. Ties are broken
    towards the smaller label at every step of the back-pointers.

    Examples
    --------
    >>> s = ChainStructure(n_labels=2, length=3, n_features=1)
    >>> s.dim
    8
    >>> x = np.array([[1.0], [-1.0], [1.0]])
    >>> w = s.features(x, np.array([1, 0, 1]))  # w = φ(x, y) favours y
    >>> s.argmax(w, x).tolist()
    [1, 0, 1]
    >>> s.cost(np.array([1, 0, 1]), np.array([1, 1, 0]))
    2.0
    """

    n_labels: int
    length: int
    n_features: int

    @property
    def dim(self) -> int:
        """The number of coordinates of φ: ``k·d + k + k²``."""
        k, d = self.n_labels, self.n_features
        return k * d + k + k * k

    @property
    def input_shape(self) -> tuple[int, ...]:
        """The shape of one input ``x``: ``(m, d)``, one feature row per position."""
        return (self.length, self.n_features)

    def enumerable(self) -> bool:
        """Whether :meth:`all_strings` lists Σ^m (at most :data:`MAX_ENUMERATED` strings)."""
        return self.n_labels**self.length <= MAX_ENUMERATED

    def describe(self) -> dict[str, int | str]:
        """The structure as the manifest records it."""
        return {
            "kind": "chain",
            "n_labels": self.n_labels,
            "length": self.length,
            "n_features": self.n_features,
            "cost": "hamming",
        }

    def split(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The emission (k, d), start (k,) and transition (k, k) blocks of ``w`` (views)."""
        k, d = self.n_labels, self.n_features
        return w[: k * d].reshape(k, d), w[k * d : k * d + k], w[k * d + k :].reshape(k, k)

    def features(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """φ(x, y) (5.21), shape (dim,)."""
        phi = np.zeros(self.dim)
        emit, start, trans = self.split(phi)
        for i in range(self.length):
            emit[y[i]] += x[i]
        start[y[0]] += 1.0
        for i in range(1, self.length):
            trans[y[i - 1], y[i]] += 1.0
        return phi

    def cost(self, y: np.ndarray, y_other: np.ndarray) -> float:
        """ρ(y, y′): the number of positions where the strings differ."""
        return float(np.count_nonzero(np.asarray(y) != np.asarray(y_other)))

    def argmax(
        self, w: np.ndarray, x: np.ndarray, augment: np.ndarray | None = None, scale: float = 1.0
    ) -> np.ndarray:
        """``argmax_y ⟨w, φ(x, y)⟩ (+ scale·ρ(augment, y))`` by Viterbi, shape (m,) int.

        With ``augment`` the loss-augmented inference of (5.23): the maximizer of
        ``scale·ρ(augment, y′) + ⟨w, φ(x, y′)⟩``, whose value minus ``⟨w, φ(x, augment)⟩`` is
        the maximal loss (5.22) before the clip at 0 (see :meth:`max_loss`).
        """
        emit, start, trans = self.split(np.asarray(w, dtype=np.float64))
        local = np.asarray(x, dtype=np.float64) @ emit.T  # (m, k): ⟨w_c, x_i⟩
        if augment is not None:
            local = local + scale * (np.arange(self.n_labels)[None, :] != augment[:, None])
        m = self.length
        best = start + local[0]
        back = np.zeros((m, self.n_labels), dtype=np.int64)
        for i in range(1, m):
            cand = best[:, None] + trans  # cand[a, b]: previous a, current b
            back[i] = np.argmax(cand, axis=0)
            best = cand[back[i], np.arange(self.n_labels)] + local[i]
        y = np.empty(m, dtype=np.int64)
        y[-1] = int(np.argmax(best))
        for i in range(m - 1, 0, -1):
            y[i - 1] = back[i, y[i]]
        return y

    def max_loss(self, u: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
        """The maximal loss (5.22) ``max_{y′≠y} [ρ(y, y′) − ⟨u, φ(x, y) − φ(x, y′)⟩]₊``.

        Its inner maximum over every ``y′`` (``y′ = y`` included, where it is 0) clipped at 0
        equals the maximum over ``y′ ≠ y`` clipped at 0, so loss-augmented Viterbi gives it.
        """
        y_aug = self.argmax(u, x, augment=y)
        gap = float(u @ (self.features(x, y) - self.features(x, y_aug)))
        return max(self.cost(y, y_aug) - gap, 0.0)

    def all_strings(self) -> np.ndarray:
        """Every string of Σ^m in lexicographic order, shape (k^m, m); refuses more than
        :data:`MAX_ENUMERATED`."""
        if not self.enumerable():
            raise ValueError(
                f"{self.n_labels}^{self.length} strings exceed the {MAX_ENUMERATED} enumerated"
            )
        return np.array(list(itertools.product(range(self.n_labels), repeat=self.length)))

    def all_features(self, x: np.ndarray) -> np.ndarray:
        """φ(x, y) of every string of :meth:`all_strings`, shape (k^m, dim), by one-hot sums."""
        strings = self.all_strings()
        onehot = np.eye(self.n_labels)[strings]  # (K, m, k)
        emit = np.einsum("Kmk,md->Kkd", onehot, np.asarray(x, dtype=np.float64))
        trans = np.einsum("Kma,Kmb->Kab", onehot[:, :-1], onehot[:, 1:])
        parts = [emit.reshape(len(strings), -1), onehot[:, 0], trans.reshape(len(strings), -1)]
        return np.concatenate(parts, axis=1)

    def max_difference_norm(self, x: np.ndarray, y: np.ndarray) -> float:
        """``max_{y′≠y} ‖φ(x, y′) − φ(x, y)‖``, Theorem 7's X on one example, by enumeration."""
        others = np.any(self.all_strings() != np.asarray(y)[None, :], axis=1)
        diffs = self.all_features(x)[others] - self.features(x, y)[None, :]
        return float(np.sqrt((diffs**2).sum(axis=1)).max(initial=0.0))
