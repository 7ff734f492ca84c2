"""Best comparators in hindsight for the OCO regret metrics: fixed (static) and per round (dynamic).

The ``regret`` metric of the OCO protocols compares the player's cumulative loss with the loss of
the best fixed point of the domain ``K`` in hindsight,

``min_{u∈K} Σ_{s≤t} f_s(u)``,  ``f_s(u) = ⟨g_s, u⟩`` or ``ℓ(⟨u, x_s⟩, y_s)``, + ``(σ/2)‖u − z_s‖²``,

and ``dynamic_regret`` compares it with ``Σ_s min_{u∈K} f_s(u)``. Every function here is batched
over a leading replicate axis R and returns float64 arrays of shape (R,) (per round: (R, n)):

* :func:`best_linear`: linear losses, ``min_{u∈K} ⟨G, u⟩`` in closed form;
* :func:`best_quadratic`: ``min_{u∈K} ½uᵀHu − hᵀu + c``, which covers the squared loss (from
  streamed sufficient statistics ``H = Σxxᵀ + σtI``, ``h = Σyx + σΣz``) and the σ-regularized
  linear losses (``H = σt·I``, ``h = σΣz − Σg``);
* :func:`best_examples`: example-based losses (absolute, hinge, logistic, squared) from the raw
  examples, by an exact LP or a convex solve with a duality-gap certificate;
* :func:`best_multiclass`: the multiclass hinge (the best fixed multiclass linear predictor
  ``W ∈ ℝ^{k×d}``), by an exact LP;
* :func:`per_round_best`: ``min_{u∈K} f_t(u)`` and a minimizer for each round separately.

Accuracy (float64). Every value returned by a numerical path is the objective *evaluated at the
returned feasible minimizer* (so it is an upper bound on the true minimum) and its error is
certified by an optimality certificate: the Frank–Wolfe gap ``⟨∇f(u), u⟩ − min_{s∈K} ⟨∇f(u), s⟩``,
the strong-convexity bound ``‖∇f(u)‖²/(2σt)``, or a Fenchel duality gap ``P(u) − D(β)`` (or an LP
lower bound). A :class:`RuntimeWarning` is raised whenever it exceeds ``GAP_RTOL = 1e-9`` times
the scale ``|f(u)| + |f(u₀)| + ‖∇f(u₀)‖·max_{K}‖u‖`` (``u₀`` the centre of ``K``). Measured on
~4·10³ random instances (d ≤ 30, t ≤ 80, all kinds, domains, σ ∈ {0, 0.3}): every certificate was
≤ 4e-15 relative, i.e. the solvers are exact up to rounding. Against independent oracles
(``tests/arena/oco/test_hindsight.py``): active-set enumeration ≤ 1e-15, KKT residuals ≤ 1e-15,
scipy SLSQP never better by more than 2e-15 relative. By method:

* closed forms (linear; isotropic quadratics; per-round minima): exact up to rounding;
* quadratics on ``unconstrained`` / ``ball``: eigendecomposition and a Brent root of the secular
  equation (exact trust-region step);
* quadratics on ``box`` / ``simplex``: a primal active-set method (finite, exact);
* logistic: projected Newton whose quadratic model is minimized exactly over ``K`` (the two
  previous items), with backtracking;
* hinge / absolute, σ = 0, on ``unconstrained`` / ``box`` / ``simplex``: an epigraph LP (HiGHS
  interior point with crossover, i.e. a vertex), re-evaluated exactly;
* hinge / absolute on the ball or with σ > 0: a candidate (LP over the enclosing box, cutting
  planes, or the Fenchel dual by L-BFGS-B) is polished by solving the problem exactly on its
  kink / bound pattern (closed form), and certified by a dual point built from that pattern.

Cost: numerical paths loop over replicates in Python. On a single-threaded BLAS, t = 1000,
d = 10 takes < 1 s per replicate for every kind; the LPs dominate for large t (~2 s at t = 5000).
(On this project's 2-core machines a multi-threaded OpenBLAS makes small dense solves ~100×
slower; ``OPENBLAS_NUM_THREADS=1`` avoids that.)

Modules: :mod:`~arena.oco.hindsight.linear`, :mod:`~arena.oco.hindsight.quadratic`,
:mod:`~arena.oco.hindsight.examples`, :mod:`~arena.oco.hindsight.multiclass` and
:mod:`~arena.oco.hindsight.per_round` hold one comparator each;
:mod:`~arena.oco.hindsight.solvers` the exact quadratic steps and the projected Newton solver
they share; :mod:`~arena.oco.hindsight.certificates` the tolerances and certificates above.

Minimizers are unique for strictly convex objectives; elsewhere the choice is documented on
each function (minimum-norm for quadratics on ``unconstrained`` / ``ball`` and for the per-round
σ = 0 example losses on ``ball`` / ``box`` / ``unconstrained``; an LP vertex for the LP path).

References
----------
Srebro, Lecture 16 (slides "Question for Today" and "FTRL for Linear Problems: Regret"): every
regret notion there is the logged loss minus an offline best-in-class computation; over the ball
``‖u‖₂ ≤ B`` the minimum for linear losses is the closed form ``−B‖v_m‖₂``. The OCO bounds these
comparators are tested against: Zinkevich 2003; Hazan 2016, Chapter 3. Moré & Sorensen (1983),
"Computing a trust region step", SIAM J. Sci. Stat. Comput. 4(3) (the secular equation ``1/r − 1/‖(H
+ μI)⁺h‖ = 0`` and the hard case).
"""

from arena.oco.hindsight.certificates import GAP_RTOL
from arena.oco.hindsight.examples import best_examples
from arena.oco.hindsight.linear import best_linear
from arena.oco.hindsight.multiclass import best_multiclass
from arena.oco.hindsight.per_round import per_round_best
from arena.oco.hindsight.quadratic import best_quadratic

__all__ = [
    "GAP_RTOL",
    "best_examples",
    "best_linear",
    "best_multiclass",
    "best_quadratic",
    "per_round_best",
]
