"""Issue 14: property-based test of the command line's bad-input contract (Hypothesis).

For every documented key (the game keys of ``arena run``, every declared parameter of every
registered player and adversary, the keys of ``arena tournament``), Hypothesis generates values
that the key does not allow, writes them as Hydra overrides, and runs the command in-process in
an empty folder. The contract: exit code 2, one line naming the key (and, for a parameter, its
component), no traceback, nothing written.

Which values are bad is decided by an oracle independent of the code under test: for a game key,
a few lines below stating what it allows; for a component's parameter, the constraints it
declares (:mod:`arena.params`), which the registry tests prove are the ones enforced.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from arena import registry
from arena.game import MAX_HORIZON, MAX_SEED
from tests.helpers.contract import assert_refused, assert_untouched, run_in_process, snapshot

SETTINGS = settings(
    max_examples=20,  # in-process Hydra composition, ~0.2 s an example: 40 cost 38 s of the suite
    deadline=None,
    derandomize=True,  # the same examples on every CI run; widen locally with a profile
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# ----------------------------------------------------------------------------------------------
# values, and how Hydra's override grammar writes them

WORDS = st.sampled_from(["abc", "fast", "tuned", "auto", "none", "yes", "x1", "nan_", "-"])
SCALARS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    WORDS,
    st.booleans(),
    st.none(),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        # an empty mapping merges into any node as "no change": a no-op, not a bad value
        st.dictionaries(st.sampled_from(["a", "b"]), inner, min_size=1),
    ),
    max_leaves=4,
)


def hydra_text(value) -> str:
    """``value`` in Hydra's override grammar (parsed back, it is ``value`` again)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, list):
        return "[" + ",".join(hydra_text(v) for v in value) + "]"
    return "{" + ",".join(f"{k}:{hydra_text(v)}" for k, v in value.items()) + "}"


def test_hydra_text_round_trips():
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    for value in [None, True, 3, -2.5, "abc", [1, "a", None], {"a": [1.5, False]}]:
        (override,) = parser.parse_overrides([f"k={hydra_text(value)}"])
        assert override.value() == value


# ----------------------------------------------------------------------------------------------
# the oracle of the game keys (what the docs of run.yaml say each allows)


def _integer(value, lo: int, hi: int) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return isinstance(value, int) and lo <= value <= hi


GAME_KEYS = {
    "horizon": lambda v: _integer(v, 1, MAX_HORIZON),
    "n_actions": lambda v: v is None or _integer(v, 1, MAX_SEED),
    "replicates": lambda v: (
        _integer(v, 1, MAX_SEED)
        or (
            isinstance(v, list)
            and bool(v)
            and all(_integer(x, 0, MAX_SEED) for x in v)
            and len(set(v)) == len(v)
        )
    ),
    "seed": lambda v: _integer(v, 0, MAX_SEED),
    "per_decade": lambda v: _integer(v, 1, 10_000),
    "trace": lambda v: isinstance(v, bool),
    "progress": lambda v: isinstance(v, bool) or v == "auto",
}
SIZES = ("n_actions", "replicates")
"""Keys whose large values are allowed by type and refused by the memory estimate instead."""
TINY = ["adversary=fair_coin", "horizon=5", "replicates=1", "n_actions=2", "progress=false"]


@SETTINGS
@given(key=st.sampled_from(sorted(GAME_KEYS)), value=VALUES)
def test_bad_game_key_is_refused(key, value):
    too_large = key in SIZES and _integer(value, 10**5, MAX_SEED)
    assume(too_large or not GAME_KEYS[key](value))
    argv = ["run", *TINY, f"{key}={hydra_text(value)}", "hydra.run.dir=out"]
    if too_large:
        assume(value >= 10**12)  # beyond any machine's memory; smaller ones depend on it
        _assert_contract(argv, "GiB", f"{key}=")
    else:
        _assert_contract(argv, f"'{key}'")


# ----------------------------------------------------------------------------------------------
# every declared parameter of every registered player and adversary


def _declared() -> list[tuple[str, str, str]]:
    out = []
    for kind in ("player", "adversary"):
        for name in registry.available(kind):
            cls = registry.load(kind, name)
            out += [(kind, name, p) for p in getattr(cls, "parameter_constraints", {})]
    return sorted(out)


DECLARED = _declared()


def test_every_registered_component_declares_parameters():
    assert len(DECLARED) > 150
    assert {kind for kind, _, _ in DECLARED} == {"player", "adversary"}


def _accepted(kind: str, name: str, param: str, value) -> bool:
    constraints = registry.load(kind, name).parameter_constraints[param]
    try:
        return any(c.accepts(value) for c in constraints)
    except Exception:  # a constraint that cannot even look at the value does not accept it
        return False


@SETTINGS
@given(target=st.sampled_from(DECLARED), value=VALUES)
def test_bad_component_parameter_is_refused(target, value):
    kind, name, param = target
    assume(not _accepted(kind, name, param, value))
    other = ["adversary=fair_coin"] if kind == "player" else ["player=hedge"]
    argv = ["run", *TINY[1:], *other, f"{kind}={name}", f"{kind}.{param}={hydra_text(value)}"]
    line = _assert_contract([*argv, "hydra.run.dir=out"], f"'{param}'")
    assert f"{kind} {name}" in line, line


# ----------------------------------------------------------------------------------------------
# arena tournament

TOURNAMENT_KEYS = {
    "tournament.horizon": GAME_KEYS["horizon"],
    "tournament.replicates": GAME_KEYS["replicates"],
    "tournament.seed": GAME_KEYS["seed"],
    "tournament.per_decade": GAME_KEYS["per_decade"],
    # a list of game sizes, or one size (the file format allows both); None: the adversary's
    "tournament.n_actions": lambda v: (
        _integer(v, 1, MAX_SEED)
        or (isinstance(v, list) and bool(v) and all(_integer(x, 1, MAX_SEED) for x in v))
    ),
    "executor": lambda v: v in ("serial", "local", "dask"),
    "n_jobs": lambda v: v is None or _integer(v, 1, 2**200),
    "progress": GAME_KEYS["progress"],
}
TINY_TOURNAMENT = [
    "tournament=demo",
    "tournament.players=[hedge]",
    "tournament.adversaries=[fair_coin]",
    "tournament.n_actions=[2]",
    "tournament.horizon=5",
    "tournament.replicates=1",
    "executor=serial",
    "progress=false",
    "out=tour",
]


@SETTINGS
@given(key=st.sampled_from(sorted(TOURNAMENT_KEYS)), value=VALUES)
def test_bad_tournament_key_is_refused(key, value):
    assume(not TOURNAMENT_KEYS[key](value))
    name = key.rpartition(".")[2]
    # the message quotes the key ('tournament.horizon') or the game parameter ('horizon')
    _assert_contract(["tournament", *TINY_TOURNAMENT, f"{key}={hydra_text(value)}"], f"{name}'")


def _assert_contract(argv: list[str], *needles: str) -> str:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        before = snapshot(root)
        result = run_in_process(argv, root)
        line = assert_refused(result, *needles)
        assert_untouched(before, root)
    return line
