"""The classification stump's O(nnz) round on sparse rows: lazy offsets and two segment trees.

:class:`arena.weak_learners.stump.Stump` keeps, per lane, the weighted error ``E_{j,k,+}`` of every
candidate stump ``h_{j,c_k,+}(x) = +1 if x_j ≥ c_k else −1`` and predicts with the least of the
``E_{j,k,+}`` and ``E_{j,k,−} = W − E_{j,k,+}``. A dense round adds every candidate's miss:
O(d·K) per lane. On a sparse row most ``x_j`` are 0, and a zero feature's miss depends on the
candidate only through whether ``0 ≥ c_k``: group A (``c_k ≤ 0``, the stump says +1 at 0) misses
when ``y ≠ +1``, group B when ``y ≠ −1``. So the errors are stored as ``base_{j,k}`` plus the
lane's running offset of their group, ``G_A`` or ``G_B``, which a round adds its two misses to
in O(1); each non-zero entry ``x_j`` corrects the K candidates of feature j (its true miss
minus its group's) in O(K). The least error needs no scan either: per group, a segment tree over
the features holds the least and the largest ``base`` (the largest gives the least
``E_{j,k,−}``), each with the first (j, k) on ties; a corrected feature updates its leaves and
their O(log d) ancestors. A round costs O(nnz·(K + log d)) per lane and a prediction O(log nnz);
a lane's first K examples (whose values become its candidates) cost O(d·K) each, as densely.

The numbers are the dense path's reassociated (``base + G`` for a sum in time order), so the two
are equal where every partial sum is exact (weights that are dyadic rationals, such as the 0/1
weights of the sampling boosters) and equal to rounding otherwise
(``tests/weak_learners/test_sparse_stump.py``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

NO_INDEX = np.iinfo(np.int64).max
"""The tie-break index of an empty leaf (after every candidate)."""


def tree_size(d: int) -> int:
    """The number of leaves D of the segment trees over ``d`` features (a power of two ≥ d)."""
    size = 1
    while size < d:
        size *= 2
    return size


@njit(cache=True, nogil=True)
def _leaf(thr, base, r, lane, j, n_valid, group):
    """Least and largest ``base`` of feature j's valid candidates in ``group`` (0: A, 1: B),
    each with its flat index j·K + k (the first k on ties)."""
    k_max = thr.shape[3]
    lo, lo_i, hi, hi_i = np.inf, NO_INDEX, -np.inf, NO_INDEX
    for k in range(n_valid):
        c = thr[r, lane, j, k]
        g = 0 if 0.0 >= c else 1
        if g != group:
            continue
        b = base[r, lane, j, k]
        if b < lo:
            lo, lo_i = b, j * k_max + k
        if b > hi:
            hi, hi_i = b, j * k_max + k
    return lo, lo_i, hi, hi_i


@njit(cache=True, nogil=True)
def _pull(tmin_v, tmin_i, tmax_v, tmax_i, r, lane, g, node):
    """Recompute an internal node from its two children (least: first index on ties)."""
    a, b = 2 * node, 2 * node + 1
    va, vb = tmin_v[r, lane, g, a], tmin_v[r, lane, g, b]
    ia, ib = tmin_i[r, lane, g, a], tmin_i[r, lane, g, b]
    if vb < va or (vb == va and ib < ia):
        tmin_v[r, lane, g, node], tmin_i[r, lane, g, node] = vb, ib
    else:
        tmin_v[r, lane, g, node], tmin_i[r, lane, g, node] = va, ia
    va, vb = tmax_v[r, lane, g, a], tmax_v[r, lane, g, b]
    ia, ib = tmax_i[r, lane, g, a], tmax_i[r, lane, g, b]
    if vb > va or (vb == va and ib < ia):
        tmax_v[r, lane, g, node], tmax_i[r, lane, g, node] = vb, ib
    else:
        tmax_v[r, lane, g, node], tmax_i[r, lane, g, node] = va, ia


@njit(cache=True, nogil=True)
def _set_feature(thr, base, tmin_v, tmin_i, tmax_v, tmax_i, r, lane, j, n_valid):
    """Refresh feature j's leaves in both trees and their ancestors."""
    size = tmin_v.shape[3] // 2
    for g in range(2):
        lo, lo_i, hi, hi_i = _leaf(thr, base, r, lane, j, n_valid, g)
        node = size + j
        tmin_v[r, lane, g, node], tmin_i[r, lane, g, node] = lo, lo_i
        tmax_v[r, lane, g, node], tmax_i[r, lane, g, node] = hi, hi_i
        node //= 2
        while node >= 1:
            _pull(tmin_v, tmin_i, tmax_v, tmax_i, r, lane, g, node)
            node //= 2


@njit(cache=True, nogil=True)
def rebuild(thr, base, seen, tmin_v, tmin_i, tmax_v, tmax_i, r, lane):
    """Build one lane's trees from its candidates (O(d·K))."""
    d, k_max = thr.shape[2], thr.shape[3]
    size = tmin_v.shape[3] // 2
    n_valid = min(seen[r, lane], k_max)
    for g in range(2):
        for j in range(size):
            node = size + j
            if j < d:
                lo, lo_i, hi, hi_i = _leaf(thr, base, r, lane, j, n_valid, g)
            else:
                lo, lo_i, hi, hi_i = np.inf, NO_INDEX, -np.inf, NO_INDEX
            tmin_v[r, lane, g, node], tmin_i[r, lane, g, node] = lo, lo_i
            tmax_v[r, lane, g, node], tmax_i[r, lane, g, node] = hi, hi_i
        for node in range(size - 1, 0, -1):
            _pull(tmin_v, tmin_i, tmax_v, tmax_i, r, lane, g, node)


@njit(cache=True, nogil=True)
def rebuild_all(thr, base, seen, tmin_v, tmin_i, tmax_v, tmax_i):
    """Build every lane's trees."""
    for r in range(thr.shape[0]):
        for lane in range(thr.shape[1]):
            rebuild(thr, base, seen, tmin_v, tmin_i, tmax_v, tmax_i, r, lane)


@njit(cache=True, nogil=True)
def _row_value(indptr, indices, values, r, j):
    """``x_j`` of CSR row r (binary search in its ascending column indices)."""
    lo, hi = indptr[r], indptr[r + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] < j:
            lo = mid + 1
        else:
            hi = mid
    if lo < indptr[r + 1] and indices[lo] == j:
        return values[lo]
    return 0.0


@njit(cache=True, nogil=True)
def predict(indptr, indices, values, seen, total, thr, off, tmin_v, tmin_i, tmax_v, tmax_i, out):
    """Every lane's least-error stump on its replicate's row: ``out`` (R, L) of ±1 (+1 before
    any example). The candidates: the least ``E_+`` of each group (``base + G``) and the least
    ``E_− = W − E_+`` (from the largest ``base + G``); the least value wins, then the first in
    the order (j, k, s = + before −), as the dense argmin."""
    k_max = thr.shape[3]
    for r in range(thr.shape[0]):
        for lane in range(thr.shape[1]):
            if seen[r, lane] == 0:
                out[r, lane] = 1.0
                continue
            best_v, best_f = np.inf, NO_INDEX
            for g in range(2):
                v = tmin_v[r, lane, g, 1] + off[r, lane, g]
                i = tmin_i[r, lane, g, 1]
                if i != NO_INDEX:
                    f = 2 * i
                    if v < best_v or (v == best_v and f < best_f):
                        best_v, best_f = v, f
                v = total[r, lane] - (tmax_v[r, lane, g, 1] + off[r, lane, g])
                i = tmax_i[r, lane, g, 1]
                if i != NO_INDEX:
                    f = 2 * i + 1
                    if v < best_v or (v == best_v and f < best_f):
                        best_v, best_f = v, f
            flat, minus = best_f // 2, best_f % 2
            j, k = flat // k_max, flat % k_max
            sign = -1.0 if minus else 1.0
            x = _row_value(indptr, indices, values, r, j)
            out[r, lane] = sign if x >= thr[r, lane, j, k] else -sign


@njit(cache=True, nogil=True)
def update(
    indptr,
    indices,
    values,
    y,
    w,
    active,
    seen,
    total,
    thr,
    base,
    off,
    kept_x,
    kept_y,
    kept_w,
    tmin_v,
    tmin_i,
    tmax_v,
    tmax_i,
):
    """One round of every active lane on its replicate's CSR row, as the dense update: a lane's
    first K examples become candidates (their error over the stored earlier ones computed in
    their order), then every valid candidate adds its miss — through the group offsets, and for
    the row's non-zero features explicitly."""
    d, k_max = thr.shape[2], thr.shape[3]
    row = np.zeros(d)
    for r in range(thr.shape[0]):
        for lane in range(thr.shape[1]):
            if not active[r, lane]:
                continue
            yv, wv = y[r, lane], w[r, lane]
            slot = seen[r, lane]
            born = slot < k_max
            if born:  # the example becomes candidate number slot + 1 of every feature
                row[:] = 0.0
                for p in range(indptr[r], indptr[r + 1]):
                    row[indices[p]] = values[p]
                for j in range(d):
                    c = row[j]
                    thr[r, lane, j, slot] = c
                    kept_x[r, lane, slot, j] = c
                    err = 0.0
                    for s in range(slot):  # in the stored examples' order, as densely
                        h = 1.0 if kept_x[r, lane, s, j] >= c else -1.0
                        if h != kept_y[r, lane, s]:
                            err = err + kept_w[r, lane, s]
                    g = 0 if 0.0 >= c else 1
                    base[r, lane, j, slot] = err - off[r, lane, g]
                kept_y[r, lane, slot], kept_w[r, lane, slot] = yv, wv
            n_valid = min(slot + 1, k_max)
            inc_a = wv if 1.0 != yv else 0.0  # group A says +1 on a zero feature
            inc_b = wv if -1.0 != yv else 0.0  # group B says −1
            off[r, lane, 0] += inc_a
            off[r, lane, 1] += inc_b
            for p in range(indptr[r], indptr[r + 1]):
                j, v = indices[p], values[p]
                for k in range(n_valid):
                    c = thr[r, lane, j, k]
                    h = 1.0 if v >= c else -1.0
                    miss = wv if h != yv else 0.0
                    group_miss = inc_a if 0.0 >= c else inc_b
                    base[r, lane, j, k] += miss - group_miss
                if not born:
                    _set_feature(thr, base, tmin_v, tmin_i, tmax_v, tmax_i, r, lane, j, n_valid)
            total[r, lane] += wv
            seen[r, lane] = slot + 1
            if born:
                rebuild(thr, base, seen, tmin_v, tmin_i, tmax_v, tmax_i, r, lane)
