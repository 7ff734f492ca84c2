"""The protocol-independent half of the conformance suite, and the suite's dispatch.

Each ``check_*`` takes a component, works on clones of it, and raises ``AssertionError`` with a
message that names the check, the component and what is wrong; it returns None on success. A check
that does not apply to the component (the block path of an adaptive adversary, the bounds of a
player that declares none) raises :class:`SkipCheck` with the reason, so that no caller reports as
passed a check that verified nothing.
Modelled on scikit-learn's ``check_estimator`` and River's ``yield_checks``.

The checks here hold for a component of any protocol: its parameters, its clone and repr, and
whole games that must be reproducible and must not touch the global random generators. Each
protocol adds its own checks (:mod:`arena.experts.checks`, :mod:`arena.oco.checks`) and the
partners it plays a component against, through its :meth:`~arena.protocol.GameProtocol.conformance`;
:func:`yield_checks` chains them.
"""

from __future__ import annotations

import copy
import math
import random
import unittest
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena.base import canonical_json

Check = Callable[[Any], None]

REPLICATES = 3
"""Replicates of the small games the checks play."""

BLOCK_ATOL = 1e-12
"""The block path must reproduce the per-round loop to this (architecture: fast path)."""

MEMORY_SLACK_BYTES = 4096
"""State may grow by this much between an early and a late round (Python object overhead)."""


class SkipCheck(unittest.SkipTest):
    """Raised by a check that does not apply to the component; its message is the reason.

    It derives from :class:`unittest.SkipTest`, which pytest reports as a skip with the reason,
    so a plugin's tests that call checks from :func:`yield_checks` or
    :func:`arena.testing.parametrize_with_checks` show ``SKIPPED`` without any wrapper;
    ``arena check`` prints ``skipped: <reason>`` and counts it apart from ``ok``, and
    :func:`arena.testing.check_component` neither passes nor fails it.

    Examples
    --------
    >>> try:
    ...     raise SkipCheck("declares no oracle")
    ... except SkipCheck as exc:
    ...     print(exc)
    declares no oracle
    """


@dataclass(frozen=True)
class ProtocolChecks:
    """What a protocol adds to the conformance suite.

    Attributes
    ----------
    player_checks, adversary_checks : tuple of callables
        The protocol's own checks of its players and adversaries.
    is_player : callable
        Whether a component is one of the protocol's players (else it is an adversary).
    pair : callable
        ``pair(component) -> (player, adversary, game_kwargs)``: a small whole game in which
        ``component`` plays against one of the suite's own partners; ``game_kwargs`` are keyword
        arguments of :func:`arena.game.run_game` (horizon, replicates, metrics, n_actions).
    owned_checks, owns : tuple of callables, callable
        The checks of the protocol's own other kind of component (the boosting protocol's weak
        learners), and whether a component is one; such a component names the protocol in its
        class attribute ``conformance_protocol``.
    """

    player_checks: tuple[Check, ...]
    adversary_checks: tuple[Check, ...]
    is_player: Callable[[Any], bool]
    pair: Callable[[Any], tuple[Any, Any, dict[str, Any]]]
    owned_checks: tuple[Check, ...] = ()
    owns: Callable[[Any], bool] = lambda component: False

    def checks_for(self, component: Any) -> tuple[Check, ...]:
        """The protocol's checks of ``component``."""
        if self.owns(component):
            return self.owned_checks
        return self.player_checks if self.is_player(component) else self.adversary_checks


def component_name(component: Any) -> str:
    """Return ``ClassName(param=value, ...)`` for messages."""
    params = ", ".join(f"{k}={v!r}" for k, v in component.get_params().items())
    return f"{type(component).__name__}({params})"


def fail(check: str, component: Any, message: str) -> None:
    """Raise the ``AssertionError`` of a failed check, naming the check and the component."""
    raise AssertionError(f"{check} failed for {component_name(component)}: {message}")


def call_read_only(check: str, component: Any, what: str, fn: Callable[..., Any], *args, **kwargs):
    """Call ``fn(*args, **kwargs)`` with read-only copies of its array arguments, as the engine
    hands them, and fail ``check`` if the component writes into one; return what ``fn`` returns.

    The engine shares a chunk's losses (and confidences, uniforms, data) with the metrics, so a
    component that wrote into them would change the results silently (a player zeroing its
    losses would show zero regret); it shows them read-only, and this is what the write meets.
    A write that got around the flag (``setflags(write=True)`` on its own view) is caught by
    comparing each argument with its copy afterwards. The caller's arrays are not touched.
    """
    from arena.validation import wrote_read_only

    def frozen(value: Any) -> Any:
        if not isinstance(value, np.ndarray):
            return value
        out = value.copy()
        out.flags.writeable = False
        return out

    shown_args = [frozen(a) for a in args]
    shown_kwargs = {k: frozen(v) for k, v in kwargs.items()}
    try:
        result = fn(*shown_args, **shown_kwargs)
    except Exception as exc:
        if not wrote_read_only(exc):
            raise
        fail(
            check,
            component,
            f"{what} writes into an input array ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else exc!r}); the arena hands its inputs "
            "read-only because the metrics read the same arrays: copy an input before changing it",
        )
    given = [*zip(args, shown_args, strict=True), *((kwargs[k], shown_kwargs[k]) for k in kwargs)]
    for original, shown in given:
        if isinstance(original, np.ndarray) and not np.array_equal(original, shown, equal_nan=True):
            fail(check, component, f"{what} changed an input array it was given read-only")
    return result


def rngs(seed: int, n: int = REPLICATES) -> list[np.random.Generator]:
    """Return n independent generators derived from ``seed`` (one per replicate)."""
    return [np.random.default_rng([seed, r]) for r in range(n)]


def state_copy(component: Any) -> dict[str, Any]:
    return copy.deepcopy({k: v for k, v in vars(component).items()})


def same_state(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and bool(np.array_equal(a, b, equal_nan=True))
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_state(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same_state(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.random.Generator) and isinstance(b, np.random.Generator):
        return a.bit_generator.state == b.bit_generator.state
    if hasattr(a, "__dict__") and type(a) is type(b) and not isinstance(a, type):
        return same_state(vars(a), vars(b))
    try:
        return bool(a == b) or (a != a and b != b)
    except (TypeError, ValueError):
        return a is b


def state_bytes(component: Any) -> int:
    seen: set[int] = set()

    def size(obj: Any) -> int:
        if id(obj) in seen:
            return 0
        seen.add(id(obj))
        if isinstance(obj, np.ndarray):
            return obj.nbytes
        if isinstance(obj, dict):
            return sum(size(v) for v in obj.values())
        if isinstance(obj, list | tuple):
            return sum(size(v) for v in obj)
        if hasattr(obj, "__dict__") and not isinstance(obj, type | np.random.Generator):
            return size(vars(obj))
        return 8

    return size(component)


# ----------------------------------------------------------------------------------------------
# checks of every component


def check_init_stores_params_only(component: Any) -> None:
    """``__init__`` stores exactly its parameters under their own names, and nothing else."""
    fresh = type(component)(**component.get_params())
    names = set(type(component).param_names())
    stored = set(vars(fresh))
    if stored != names:
        extra, missing = sorted(stored - names), sorted(names - stored)
        fail(
            "check_init_stores_params_only",
            component,
            f"__init__ must store exactly its parameters; extra attributes {extra}, "
            f"missing {missing} (build state in reset, not in __init__)",
        )


def check_clone_and_repr_roundtrip(component: Any) -> None:
    """``clone()`` and ``eval(repr(c))`` give a component with the same parameters."""
    cls = type(component)
    want = canonical_json(component.get_params())
    if canonical_json(component.clone().get_params()) != want:
        fail("check_clone_and_repr_roundtrip", component, "clone() changed the parameters")
    namespace = {cls.__name__: cls, "nan": math.nan, "inf": math.inf}
    try:
        again = eval(repr(component), namespace)  # our own repr: parameters only
    except Exception as exc:
        fail("check_clone_and_repr_roundtrip", component, f"repr does not evaluate: {exc}")
    if canonical_json(again.get_params()) != want:
        fail(
            "check_clone_and_repr_roundtrip",
            component,
            f"eval(repr) gives {again.get_params()}, not {component.get_params()}",
        )


def check_parameter_constraints(component: Any) -> None:
    """The declared constraints name real parameters, and the component's values satisfy them."""
    from arena.params import check_declaration, constraint_errors

    try:
        check_declaration(type(component))
    except TypeError as exc:
        fail("check_parameter_constraints", component, str(exc))
    errors = constraint_errors(component)
    if errors:
        name, message = errors[0]
        fail("check_parameter_constraints", component, f"parameter {name!r} {message}")


def _conformance(component: Any) -> ProtocolChecks:
    return protocol_checks(component)[0]


def _play(component: Any, seed: int, **overrides: Any):
    from arena.game import run_game

    player, adversary, kwargs = _conformance(component).pair(component)
    return run_game(player, adversary, seed=seed, **{**kwargs, **overrides}).rows


def check_seed_determinism(component: Any) -> None:
    """The same seed gives identical rows; the rows do not depend on the batch."""
    a = _play(component, 11)
    b = _play(component, 11)
    if not a.equals(b):
        fail("check_seed_determinism", component, "the same seed gave different results")
    alone = _play(component, 11, replicates=[2])
    batch = a[a.replicate == 2].value.to_numpy()
    if not np.array_equal(batch, alone.value.to_numpy(), equal_nan=True):
        fail(
            "check_seed_determinism",
            component,
            "replicate 2 alone differs from replicate 2 in a batch of 3",
        )


def check_no_global_rng(component: Any) -> None:
    """Results do not depend on, and the game does not consume, numpy's or Python's global RNG."""
    rows = []
    for seed in (1, 2):
        np.random.seed(seed)  # noqa: NPY002 - deliberately perturbing the global state
        random.seed(seed)
        before = (np.random.get_state()[1].copy(), random.getstate())  # noqa: NPY002
        rows.append(_play(component, 12))
        after = (np.random.get_state()[1], random.getstate())  # noqa: NPY002
        if not np.array_equal(before[0], after[0]) or before[1] != after[1]:
            fail("check_no_global_rng", component, "the game drew from the global RNG")
    if not rows[0].equals(rows[1]):
        fail("check_no_global_rng", component, "results depend on the global RNG's seed")


ONE_ROUND_HORIZON = 30
"""Rounds of the game :func:`check_one_round_matches_engine` plays (at most)."""

ONE_ROUND_REPLICATES = 2
"""Replicates of that game."""

ONE_ROUND_TOL = 1e-12
"""Rows of a game played one round at a time equal the engine's within
``ONE_ROUND_TOL · max(1, |engine's value|)`` (architecture: fast path and reference)."""


def check_one_round_matches_engine(component: Any) -> None:
    """A game played one round at a time through the one-round API (:mod:`arena.rounds`) gives
    the engine's rows (:func:`arena.game.run_game`) to 1e-12.

    The protocol's partner game (T ≤ 30, R = 2, three checkpoints) is played twice from the
    same seed: by the engine (its block kernels, its chunks), and by a hand loop on
    :func:`arena.rounds.start`'s session: ``context()``, ``predict()``, ``respond(output)``,
    ``update(outcome)`` each round. Both consume the same seeded streams in the same order, so
    a sampling player's draws ``I_t`` are the same draws and its realized rows agree with its
    expected ones. A component whose block path, per-round path or ``reset`` plays another game
    than its one-round use fails, naming the first row that differs.
    """
    from arena.game import run_game
    from arena.rounds import start

    player, adversary, kwargs = _conformance(component).pair(component)
    horizon = min(int(kwargs.get("horizon", ONE_ROUND_HORIZON)), ONE_ROUND_HORIZON)
    grid = sorted({max(1, horizon // 3), max(1, 2 * horizon // 3), horizon})
    game = {
        **kwargs,
        "horizon": horizon,
        "replicates": ONE_ROUND_REPLICATES,
        "checkpoints": grid,
        "seed": 17,
    }
    try:
        session = start(player, adversary, **game)
    except NotImplementedError as exc:
        raise SkipCheck(str(exc)) from None
    for t in session.rounds():
        if session.splits_rounds:
            outcome = session.respond(session.predict())
            session.update(outcome)
        else:  # a plugin protocol that writes its round whole
            session.play_round(t)
    hand = session.rows()
    engine = run_game(player, adversary, n_jobs=1, **game).rows
    keys = ["t", "metric", "param", "replicate"]
    if len(hand) != len(engine) or not hand[keys].equals(engine[keys]):
        fail(
            "check_one_round_matches_engine",
            component,
            f"the one-round loop gave {len(hand)} rows, the engine {len(engine)}, or other "
            "checkpoints, metrics or replicates",
        )
    a = hand.value.to_numpy(dtype=np.float64)
    b = engine.value.to_numpy(dtype=np.float64)
    err = np.abs(a - b)
    bad = ~((err <= ONE_ROUND_TOL * np.maximum(1.0, np.abs(b))) | (np.isnan(a) & np.isnan(b)))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        row = engine.iloc[i]
        fail(
            "check_one_round_matches_engine",
            component,
            f"played one round at a time, {row.metric} at t={row.t} (replicate "
            f"{row.replicate}) is {float(a[i])!r}, the engine's {float(b[i])!r} (differs by "
            f"{err[i]:.3g}): its block path and its per-round path play different games",
        )


def assert_rows_chunk_invariant(
    check: str, component: Any, player: Any, adversary: Any, game: dict[str, Any]
) -> None:
    """Fail ``check`` unless ``player`` against ``adversary`` gives the same rows, bit for bit,
    played in chunks of one round, of a few rounds and in one chunk, the whole game and
    replicate 1 alone (``game``: keyword arguments of :func:`arena.game.run_game`, T ≤ 30
    rounds played).

    The seeding contract: replicate r's rows depend on neither the replicates beside it nor the
    chunk size. A protocol that declares it (:attr:`arena.protocol.GameProtocol.chunk_invariant`)
    lets a game split over threads (:mod:`arena.parallel`) play each block in chunks sized for its
    own replicates, so a component that sums a chunk's rounds at once (numpy's pairwise order)
    would give other last bits with ``n_jobs=2`` than with ``n_jobs=1``. The chunks of a few
    rounds matter: a game whose chunks run across its checkpoints (spans) is one chunk at
    T ≤ 30, and a sum from a chunk's start differs from the running sum only after a first one.
    """
    from arena.game import DEFAULT_CHUNK_ELEMENTS, run_game

    game = {**game, "horizon": min(int(game.get("horizon", 30)), 30), "seed": 23}
    # the whole game, then replicate 1 alone: one replicate plays a chunk across the
    # checkpoints in one call to each component (Stepper.step_span)
    for replicates in (game.get("replicates", 1), [1]):
        played = {**game, "replicates": replicates}
        n_rep = replicates if isinstance(replicates, int) else len(replicates)
        few = FEW_ROUNDS * n_rep * int(game.get("n_actions") or 1)
        chunkings = {"one round per chunk": 1, f"in chunks of {FEW_ROUNDS} rounds": few,
                     "in one chunk": DEFAULT_CHUNK_ELEMENTS}  # fmt: skip
        rows = {
            how: run_game(player, adversary, n_jobs=1, chunk_elements=size, **played).rows
            for how, size in chunkings.items()
        }
        a = rows["one round per chunk"].value.to_numpy(dtype=np.float64)
        for how in list(chunkings)[1:]:
            b = rows[how].value.to_numpy(dtype=np.float64)
            same = (
                (a == b) | (np.isnan(a) & np.isnan(b)) if a.shape == b.shape else np.zeros(1, bool)
            )
            if not same.all():
                i = int(np.flatnonzero(~same)[0])
                row = rows[how].iloc[i]
                fail(
                    check,
                    component,
                    f"{row.metric} at t={row.t} (replicate {row.replicate}) is {float(a[i])!r} "
                    f"played one round per chunk and {float(b[i])!r} {how}: add a block's "
                    "rounds one after the other, not at once (numpy's pairwise order depends on "
                    "the chunk)",
                )


FEW_ROUNDS = 7
"""The rounds of :func:`assert_rows_chunk_invariant`'s middle chunking (per replicate and
action: the chunk bound is ``7·R·N`` elements, uneven against T = 30)."""


COMMON_CHECKS: tuple[Check, ...] = (
    check_init_stores_params_only,
    check_clone_and_repr_roundtrip,
    check_parameter_constraints,
    check_seed_determinism,
    check_no_global_rng,
    check_one_round_matches_engine,
)
"""The checks of every component, whatever its protocol."""


# ----------------------------------------------------------------------------------------------
# dispatch


def protocol_names(component: Any) -> list[str]:
    """Return the protocols a component plays: an adversary's one, a player's (sorted)."""
    from arena.components import Adversary, Player

    if isinstance(component, Adversary):
        return [component.tags.protocol]
    if isinstance(component, Player):
        return sorted(component.tags.protocols)
    owner = getattr(type(component), "conformance_protocol", None)
    if isinstance(owner, str):
        return [owner]
    raise TypeError(f"no conformance checks for {type(component).__name__}")


def protocol_checks(component: Any) -> list[ProtocolChecks]:
    """Return the conformance of each registered protocol the component plays (once per class)."""
    from arena.protocol import protocol_for

    out: list[ProtocolChecks] = []
    seen: set[type] = set()
    for name in protocol_names(component):
        protocol = protocol_for(name)
        if type(protocol) in seen:
            continue
        seen.add(type(protocol))
        out.append(protocol.conformance())
    return out


def yield_checks(component: Any) -> Iterator[Check]:
    """Yield the checks that apply to ``component``: the common ones, then its protocols'.

    Each is wrapped by :func:`shape_guarded`, so that a component whose outputs have the wrong
    shape fails every check with the arena's own message naming the output and both shapes.
    """
    per_protocol = protocol_checks(component)
    for check in COMMON_CHECKS:
        yield shape_guarded(check)
    for conformance in per_protocol:
        for check in conformance.checks_for(component):
            yield shape_guarded(check)


SHAPE_PROBE_ROUNDS = 5
"""Rounds of the game :func:`shape_problem` plays to find an output of the wrong shape."""


def shape_guarded(check: Check) -> Check:
    """Return ``check`` (same name and docstring), failing with the arena's own message where a
    wrong output shape makes it fail with numpy's.

    A check computes with what the component returns; an array of the wrong shape then raises
    numpy's ``ValueError`` ("operands could not be broadcast together …") or an ``IndexError``,
    which names neither the component's method nor the shape it should have returned. When a
    check raises one of those, a short game (:func:`shape_problem`) finds the output at fault and
    the check fails (``AssertionError``) with that message; any other error stays as it was.
    """
    import functools

    from arena.errors import ArenaError

    if getattr(check, "__wrapped__", None) is not None:
        return check

    @functools.wraps(check)
    def guarded(component: Any) -> None:
        try:
            check(component)
        except (ValueError, IndexError) as exc:
            if isinstance(exc, ArenaError):
                raise
            problem = shape_problem(component)
            if problem is None:
                raise
            fail(check.__name__, component, problem)

    return guarded


def shape_problem(component: Any) -> str | None:
    """Return the game's error if ``component`` returns an array of the wrong shape, else None.

    Plays the protocol's partner game (:attr:`ProtocolChecks.pair`) for a few rounds: the driver
    checks every output's shape and names the component, its method, the shape it returned, the
    one expected and the round.
    """
    from arena.errors import GameError
    from arena.game import run_game

    try:
        player, adversary, kwargs = _conformance(component).pair(component)
        run_game(player, adversary, seed=0, **{**kwargs, "horizon": SHAPE_PROBE_ROUNDS})
    except GameError as exc:
        return str(exc) if "shape" in str(exc) else None
    except Exception:  # another fault: the check's own error says more
        return None
    return None
