"""Conformance checks of OCO / classification / regression players and adversaries.

Same contract as :mod:`arena.testing.common`: each check works on clones, raises
``AssertionError`` naming the check, the component and what is wrong, and returns None on success.
Partners come from :mod:`arena.oco.testing`: the first Gaussian game whose protocol, domain and
loss the player's tags accept, and the zero / projected-gradient players for adversaries.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from arena.oco.components import (
    AdaptiveOCOAdversary,
    ObliviousOCOAdversary,
    OCOAdversary,
    OCOPlayer,
    resolve_dim,
)
from arena.oco.domains import MEMBERSHIP_TOL, Domain
from arena.oco.losses import RoundData, SparseRows, dense_features, feedback
from arena.spec import GameSpec
from arena.testing.common import (
    BLOCK_ATOL,
    MEMORY_SLACK_BYTES,
    REPLICATES,
    ProtocolChecks,
    SkipCheck,
    call_read_only,
    fail,
    rngs,
    same_state,
    state_bytes,
    state_copy,
)

HORIZON = 40
DIM = 3

BOUND_RTOL = 1e-9
"""Declared bounds must hold to this relative slack (float64 sums of ≤ 10³ terms)."""


def _partner_adversaries(player: OCOPlayer) -> list[OCOAdversary]:
    """Gaussian games the player accepts: per protocol and loss its tags allow, the first domain
    (ball, ℝ^d, box, simplex) that its tags allow and its ``reset`` accepts (a player whose
    domains depend on its parameters, e.g. FTRL's regularizer, refuses the others there).

    They are played in d = 3, or in the largest d the player's ``tags.max_actions`` allows (a
    quadrature player integrating over K in d ≤ 2), as the experts checks cap N."""
    from arena.errors import ConfigError
    from arena.oco.testing import (
        GaussianClassification,
        GaussianData,
        GaussianInstanceRanking,
        GaussianLabelRanking,
        GaussianMulticlass,
        GaussianRegression,
    )

    tags = player.tags
    out: list[OCOAdversary] = []
    for protocol, cls, losses in (
        ("oco", GaussianData, ("linear",)),
        ("classification", GaussianClassification, ("hinge", "logistic")),
        ("regression", GaussianRegression, ("squared", "absolute")),
        ("multiclass", GaussianMulticlass, ("multiclass_hinge",)),
        ("label_ranking", GaussianLabelRanking, ("label_ranking_hinge",)),
        ("instance_ranking", GaussianInstanceRanking, ("ranking_avg", "ranking_max")),
    ):
        if protocol not in tags.protocols:
            continue
        for loss in losses:
            if loss not in tags.losses:
                continue
            for domain in ("ball", "unconstrained", "box", "simplex"):
                if domain not in tags.domains:
                    continue
                candidate = cls(loss=loss, domain=domain, radius=1.0)
                candidate._conformance_dim = max(1, min(DIM, tags.max_actions or DIM))
                try:
                    player.clone().reset(_spec_for(candidate), rngs(0))
                except ConfigError:
                    continue
                out.append(candidate)
                break
    if not out:
        raise AssertionError(
            f"no partner game for {player!r}: protocols {sorted(tags.protocols)}, domains "
            f"{sorted(tags.domains)}, losses {sorted(tags.losses)}"
        )
    return out


def _requested_dim(adversary: OCOAdversary) -> int | None:
    """d = 3 in the partner games (less for a player with a smaller ``max_actions``, see
    :func:`_partner_adversaries`; 3 features per label in multiclass); the adversary's own default
    d when it is the one checked."""
    if type(adversary).__module__ != "arena.oco.testing":
        return None
    return getattr(adversary, "_conformance_dim", DIM) * (adversary.declared_classes() or 1)


def _spec_for(adversary: OCOAdversary, n_rep: int = REPLICATES, horizon: int = HORIZON):
    dim = resolve_dim(adversary, _requested_dim(adversary), horizon)
    return GameSpec(
        adversary.tags.protocol,
        dim,
        horizon,
        n_replicates=n_rep,
        dim=dim,
        domain=adversary.declared_domain(),
        loss=adversary.declared_loss(),
        sigma=float(adversary.declared_sigma()),
        gradient_bound=adversary.gradient_bound(),
        n_classes=adversary.declared_classes(),
    )


def _data(adversary: OCOAdversary, spec: GameSpec, seed: int, n: int) -> RoundData:
    adv = adversary.clone()
    adv.reset(spec, rngs(seed, spec.n_replicates))
    return adv.data_block(1, n)


def _loop(player: OCOPlayer, spec: GameSpec, data: RoundData, seed: int) -> np.ndarray:
    p = player.clone()
    p.reset(spec, rngs(seed, spec.n_replicates))
    n = data.g.shape[1] if data.g is not None else data.x.shape[1]
    out = []
    for j in range(n):
        rd = data.round(j)
        w = np.array(p.predict(rd.x), dtype=np.float64)
        out.append(w)
        p.update(feedback(spec.loss, spec.sigma, w, rd))
    return np.stack(out, axis=1)


def _run(player: Any, adversary: Any, **kwargs: Any):
    from arena.game import run_game

    return run_game(player, adversary, **{**_game_kwargs(adversary), **kwargs})


def _game_kwargs(adversary: OCOAdversary) -> dict[str, Any]:
    return {
        "horizon": HORIZON,
        "replicates": REPLICATES,
        "n_actions": _requested_dim(adversary),
        "metrics": ["loss"],
    }


# ----------------------------------------------------------------------------------------------
# players


def check_oco_points_valid(player: OCOPlayer) -> None:
    """``predict`` returns finite (R, d) points inside the game's domain, in every partner game."""
    for adversary in _partner_adversaries(player):
        spec = _spec_for(adversary)
        data = _data(adversary, spec, 1, HORIZON)
        w = _loop(player, spec, data, 1)
        if w.shape != (spec.n_replicates, HORIZON, spec.dim) or not np.isfinite(w).all():
            fail("check_oco_points_valid", player, f"points of shape {w.shape} or not finite")
        dom: Domain = spec.domain
        excess = float(dom.violation(w).max())
        if excess > MEMBERSHIP_TOL * max(1.0, dom.radius):
            fail(
                "check_oco_points_valid",
                player,
                f"w_t leaves the {dom.kind} domain by {excess:.3g} against {adversary!r}",
            )


def check_oco_sparse_matches_dense(player: OCOPlayer) -> None:
    """A player tagged ``sparse_input`` plays sparse rows as it plays the same rows dense.

    In every classification / regression partner game, the features with about 40% of their
    entries zeroed are played dense (``play_block``) and as :class:`SparseRows` (``play_block``
    and the per-round loop, with ``spec.sparse``): the points must agree to
    :data:`~arena.testing.common.BLOCK_ATOL` (relative to their size), the slack of the fast
    paths; the sparse sums add the same non-zero products as the dense ones.
    """
    if not player.tags.sparse_input:
        raise SkipCheck("not tagged sparse_input: it is shown densified rows")
    games = [
        a
        for a in _partner_adversaries(player)
        if a.tags.protocol in ("classification", "regression")
    ]
    if not games:
        raise SkipCheck("no classification or regression partner game")
    for adversary in games:
        spec = _spec_for(adversary)
        data = _data(adversary, spec, 7, HORIZON)
        x = np.where(np.abs(data.x) < 0.5, 0.0, data.x)
        dense = data._replace(x=x)
        sparse = data._replace(x=SparseRows.from_dense(x))
        sparse_spec = replace(spec, sparse=True)
        p = player.clone()
        p.reset(spec, rngs(7, spec.n_replicates))
        want = np.asarray(p.play_block(dense, spec), dtype=np.float64)
        p = player.clone()
        p.reset(sparse_spec, rngs(7, spec.n_replicates))
        got = {
            "play_block": np.asarray(p.play_block(sparse, sparse_spec), dtype=np.float64),
            "the per-round loop": _loop(player, sparse_spec, sparse, 7),
        }
        scale = max(1.0, float(np.abs(want).max()))
        for path, w in got.items():
            err = float(np.abs(w - want).max()) if w.shape == want.shape else np.inf
            if err > BLOCK_ATOL * scale:
                fail(
                    "check_oco_sparse_matches_dense",
                    player,
                    f"sparse rows through {path} differ from dense by {err:.3g} "
                    f"against {adversary!r}",
                )


def check_oco_predictions_match_points(player: OCOPlayer) -> None:
    """A player that plays sparse games through predictions predicts what its points give.

    In every classification / regression partner game played sparse with σ = 0 where the player
    declares :meth:`~arena.oco.components.OCOPlayer.plays_predictions`, two consecutive blocks
    are played by ``play_predictions`` and by ``play_block``: the predictions must equal
    ``⟨w_t, x_t⟩`` of the points to :data:`~arena.testing.common.BLOCK_ATOL` (relative to
    their size), and ``point()`` after each block must be the first point ``play_block`` plays
    in the next one (the same tolerance).
    """
    games = [
        a
        for a in _partner_adversaries(player)
        if a.tags.protocol in ("classification", "regression") and not a.declared_sigma()
    ]
    checked = False
    for adversary in games:
        spec = replace(_spec_for(adversary), sparse=True)
        data = _data(adversary, spec, 11, 2 * HORIZON)
        x = np.asarray(dense_features(data.x), dtype=np.float64)
        x = np.where(np.abs(x) < 0.5, 0.0, x)
        halves = [
            data._replace(x=SparseRows.from_dense(x[:, lo : lo + HORIZON]))._replace(
                y=data.y[:, lo : lo + HORIZON]
            )
            for lo in (0, HORIZON)
        ]
        by_points, by_predictions = player.clone(), player.clone()
        by_points.reset(spec, rngs(11, spec.n_replicates))
        by_predictions.reset(spec, rngs(11, spec.n_replicates))
        if not by_predictions.plays_predictions():
            continue
        checked = True
        first_next = None
        for k, half in enumerate(halves):
            w = np.asarray(by_points.play_block(half, spec), dtype=np.float64)
            if first_next is not None:
                err = float(np.abs(first_next - w[:, 0]).max())
                if err > BLOCK_ATOL * max(1.0, float(np.abs(w).max())):
                    fail(
                        "check_oco_predictions_match_points",
                        player,
                        f"point() differs from the next point played by {err:.3g} "
                        f"against {adversary!r}",
                    )
            want = half.x.dot(w.reshape(-1, spec.dim)).reshape(w.shape[:2])
            got = np.asarray(by_predictions.play_predictions(half, spec), dtype=np.float64)
            err = float(np.abs(got - want).max()) if got.shape == want.shape else np.inf
            if err > BLOCK_ATOL * max(1.0, float(np.abs(want).max())):
                fail(
                    "check_oco_predictions_match_points",
                    player,
                    f"play_predictions differs from ⟨w_t, x_t⟩ of play_block by {err:.3g} "
                    f"(block {k + 1}) against {adversary!r}",
                )
            first_next = np.asarray(by_predictions.point(), dtype=np.float64)
    if not checked:
        raise SkipCheck("plays no partner game through predictions")


def check_oco_predict_is_pure(player: OCOPlayer) -> None:
    """Calling ``predict`` twice gives the same point and changes no state attribute."""
    adversary = _partner_adversaries(player)[0]
    spec = _spec_for(adversary)
    data = _data(adversary, spec, 2, 5)
    p = player.clone()
    p.reset(spec, rngs(2))
    for j in range(5):
        rd = data.round(j)
        before = state_copy(p)
        a = np.array(p.predict(rd.x))
        b = np.array(p.predict(rd.x))
        after = vars(p)
        changed = sorted(
            k for k in set(before) | set(after) if not same_state(before.get(k), after.get(k))
        )
        if changed:
            fail(
                "check_oco_predict_is_pure",
                player,
                f"predict changed the state attributes {changed} at round {j + 1}",
            )
        if not np.array_equal(a, b, equal_nan=True):
            fail("check_oco_predict_is_pure", player, f"two predict calls differ at round {j + 1}")
        p.update(feedback(spec.loss, spec.sigma, a, rd))


def check_oco_block_matches_loop(player: OCOPlayer) -> None:
    """``play_block`` over several splits reproduces the predict/update loop to 1e-12."""
    for adversary in _partner_adversaries(player):
        spec = _spec_for(adversary)
        data = _data(adversary, spec, 3, HORIZON)
        want = _loop(player, spec, data, 3)
        for cuts in ((HORIZON,), (1, 7, HORIZON), (13, HORIZON)):
            p = player.clone()
            p.reset(spec, rngs(3))
            got, start = [], 0
            for stop in cuts:
                part = RoundData(*(None if a is None else a[:, start:stop] for a in data))
                got.append(np.asarray(p.play_block(part, spec)))
                start = stop
            got_all = np.concatenate(got, axis=1)
            if got_all.shape != want.shape or not np.allclose(
                got_all, want, rtol=0.0, atol=BLOCK_ATOL
            ):
                err = np.abs(got_all - want).max() if got_all.shape == want.shape else "shape"
                fail(
                    "check_oco_block_matches_loop",
                    player,
                    f"play_block with splits {cuts} differs from predict/update by {err} "
                    f"against {adversary!r}",
                )


def check_oco_update_does_not_alias_input(player: OCOPlayer) -> None:
    """The player copes with read-only feedback arrays and keeps no reference to them."""
    adversary = _partner_adversaries(player)[0]
    spec = _spec_for(adversary)
    data = _data(adversary, spec, 4, 6)
    p = player.clone()
    p.reset(spec, rngs(4))
    for j in range(6):
        rd = RoundData(*(None if a is None else np.array(a) for a in data.round(j)))
        w = np.array(p.predict(rd.x))
        fb = feedback(spec.loss, spec.sigma, w, rd)
        for arr in (fb.w, fb.value, fb.grad, *[a for a in rd if a is not None]):
            arr.flags.writeable = False
        try:
            p.update(fb)
        except ValueError as exc:
            fail("check_oco_update_does_not_alias_input", player, f"writes to its input: {exc}")
    before = np.array(p.predict(data.round(0).x))
    again = np.array(p.predict(data.round(0).x))
    if not np.array_equal(before, again, equal_nan=True):
        fail("check_oco_update_does_not_alias_input", player, "state changed after update")
    # play_block is shown the chunk's data read-only too (the metrics read the same arrays)
    block = player.clone()
    block.reset(spec, rngs(4))
    call_read_only(
        "check_oco_update_does_not_alias_input",
        player,
        "play_block",
        lambda *arrays: block.play_block(RoundData(*arrays), spec),
        *data,
    )


def check_oco_reset_restores_initial_state(player: OCOPlayer) -> None:
    """``reset`` after playing gives the same points as a fresh player."""
    adversary = _partner_adversaries(player)[0]
    spec = _spec_for(adversary)
    data = _data(adversary, spec, 5, 10)
    fresh = _loop(player, spec, data, 5)
    p = player.clone()
    p.reset(spec, rngs(5))
    for j in range(10):
        rd = data.round(j)
        p.update(feedback(spec.loss, spec.sigma, np.array(p.predict(rd.x)), rd))
    p.reset(spec, rngs(5))
    again = []
    for j in range(10):
        rd = data.round(j)
        w = np.array(p.predict(rd.x))
        again.append(w)
        p.update(feedback(spec.loss, spec.sigma, w, rd))
    if not np.allclose(np.stack(again, axis=1), fresh, rtol=0.0, atol=BLOCK_ATOL):
        fail("check_oco_reset_restores_initial_state", player, "reset does not restart the game")


def check_oco_bounded_memory(component: Any) -> None:
    """The state does not grow with the number of rounds played."""
    player, adversary = _pair(component)
    spec = _spec_for(adversary, n_rep=2, horizon=700)
    adv, p = adversary.clone(), player.clone()
    adv.reset(spec, rngs(8, 2))
    p.reset(spec, rngs(9, 2))
    sizes = []
    t = 0
    # 600 rounds between the two sizes: one number kept per round (4.8 kB) is past the slack
    for stop in (100, 700):
        while t < stop:
            t += 1
            x = adv.features(t)
            w = np.array(p.predict(x))
            rd = adv.reveal(t, w)
            if rd.x is None and x is not None:
                rd = rd._replace(x=x)
            p.update(feedback(spec.loss, spec.sigma, w, rd))
        sizes.append(state_bytes(p if isinstance(component, OCOPlayer) else adv))
    if sizes[1] > sizes[0] + MEMORY_SLACK_BYTES:
        fail(
            "check_oco_bounded_memory",
            component,
            f"state grew from {sizes[0]} bytes after 100 rounds to {sizes[1]} after 700",
        )


def check_oco_declared_bounds_hold(player: OCOPlayer) -> None:
    """Every declared ``bound:<metric>`` is ≥ the metric in each partner game it applies to."""
    if type(player).bounds is OCOPlayer.bounds:
        raise SkipCheck("declares no bounds (bounds() is not overridden)")
    partners = _partner_adversaries(player)
    # games whose best comparator has a closed form (linear, squared) keep the check fast; the
    # numerical solves of hinge / logistic / absolute games are exercised by the players' tests
    cheap = [a for a in partners if a.declared_loss() in ("linear", "squared")]
    for adversary in cheap or partners[:1]:
        metrics = {m: {} for m in ("loss", "mistakes", "regret", "comparator_regret", "bound")}
        run = _run(player, adversary, horizon=200, metrics=metrics, per_decade=4)
        rows = run.rows
        for (metric, param), group in rows[rows.metric.str.startswith("bound:")].groupby(
            ["metric", "param"], dropna=False
        ):
            target = metric.split(":", 1)[1]
            sel = rows[(rows.metric == target)]
            sel = sel[sel.param.isna()] if math.isnan(param) else sel[sel.param == param]
            merged = sel.merge(group, on=["replicate", "t"], suffixes=("", "_bound"))
            slack = BOUND_RTOL * np.maximum(1.0, merged.value_bound.abs())
            bad = merged[merged.value > merged.value_bound + slack]
            if len(bad):
                row = bad.iloc[0]
                fail(
                    "check_oco_declared_bounds_hold",
                    player,
                    f"{target} = {row.value:.6g} exceeds its bound {row.value_bound:.6g} at "
                    f"t = {row.t} against {adversary!r}",
                )


# ----------------------------------------------------------------------------------------------
# adversaries


def _partner_players(adversary: OCOAdversary) -> tuple[OCOPlayer, OCOPlayer]:
    from arena.oco.testing import ProjectedGradient, ZeroPlayer

    return ProjectedGradient(eta=0.3), ZeroPlayer()


def _pair(component: Any) -> tuple[Any, Any]:
    if isinstance(component, OCOPlayer):
        return component, _partner_adversaries(component)[0]
    return _partner_players(component)[0], component


def _game(component: Any) -> tuple[Any, Any, dict[str, Any]]:
    player, adversary = _pair(component)
    return player, adversary, _game_kwargs(adversary)


def check_oco_tags_match_class(adversary: OCOAdversary) -> None:
    """An ``AdaptiveOCOAdversary`` is not tagged oblivious; an ``ObliviousOCOAdversary`` is.

    The tag decides whether the arena plays the adversary in blocks and whether the suite checks
    that its data ignore the player, so a contradiction would hide a fault from the other checks.
    """
    oblivious = adversary.tags.oblivious
    if isinstance(adversary, AdaptiveOCOAdversary) and oblivious:
        fail(
            "check_oco_tags_match_class",
            adversary,
            "it subclasses AdaptiveOCOAdversary but its tags declare oblivious=True; remove "
            "oblivious=True from its tags (AdaptiveOCOAdversary's tags say oblivious=False), or "
            "subclass ObliviousOCOAdversary and implement data_block",
        )
    if isinstance(adversary, ObliviousOCOAdversary) and not oblivious:
        fail(
            "check_oco_tags_match_class",
            adversary,
            "it subclasses ObliviousOCOAdversary but its tags declare oblivious=False, so the "
            "arena never calls data_block; remove oblivious=False from its tags, or subclass "
            "AdaptiveOCOAdversary and implement reveal(t, w)",
        )


def check_oco_data_valid(adversary: OCOAdversary) -> None:
    """The adversary's game plays: finite data of the right shapes, ±1 labels in classification
    (0 .. k−1 in multiclass), subgradients within the declared bound (the engine validates every
    round)."""
    for player in _partner_players(adversary):
        try:
            _run(player, adversary, metrics=["loss"])
        except Exception as exc:
            fail("check_oco_data_valid", adversary, f"{type(exc).__name__}: {exc}")


def check_oco_block_matches_stream(adversary: OCOAdversary) -> None:
    """An oblivious adversary's ``data_block`` gives the same data however rounds are split."""
    if not adversary.tags.oblivious:
        raise SkipCheck("tagged oblivious=False: it has no data_block")
    spec = _spec_for(adversary)
    whole = _data(adversary, spec, 6, 30)
    adv = adversary.clone()
    adv.reset(spec, rngs(6))
    parts, t = [], 1
    for n in (1, 9, 20):
        parts.append(adv.data_block(t, n))
        t += n
    for name in ("g", "x", "y", "z"):
        a = dense_features(getattr(whole, name))  # sparse rows compare densified
        if a is None:
            continue
        b = np.concatenate([np.asarray(dense_features(getattr(p, name))) for p in parts], axis=1)
        if not np.array_equal(np.asarray(a), b, equal_nan=True):
            fail("check_oco_block_matches_stream", adversary, f"{name} depends on the split")


def check_oco_oblivious_is_oblivious(adversary: OCOAdversary) -> None:
    """An oblivious adversary gives the same data whichever player it faces (via the trace)."""
    if not adversary.tags.oblivious:
        raise SkipCheck("tagged oblivious=False: its data may depend on the player")
    import tempfile
    from pathlib import Path

    import pyarrow.parquet as pq

    traces = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, player in enumerate(_partner_players(adversary)):
            path = Path(tmp) / f"trace{k}.parquet"
            _run(player, adversary, seed=5, trace_path=path)
            table = pq.read_table(path).to_pandas()
            traces.append(
                table.drop(columns=[c for c in ("w", "value", "prediction") if c in table.columns])
            )
    a, b = traces
    same = all(
        np.array_equal(np.stack(a[c].to_numpy()), np.stack(b[c].to_numpy()), equal_nan=True)
        for c in a.columns
    )
    if not same:
        fail("check_oco_oblivious_is_oblivious", adversary, "data depends on the player")


def check_oco_comparator_declared(adversary: OCOAdversary) -> None:
    """An adversary declaring the ``comparator`` oracle returns finite (R, d) comparators."""
    if "comparator" not in adversary.tags.oracle:
        raise SkipCheck("declares no comparator oracle")
    spec = _spec_for(adversary)
    adv = adversary.clone()
    adv.reset(spec, rngs(7))
    u = np.asarray(adv.comparator())
    if u.shape != (spec.n_replicates, spec.dim) or not np.isfinite(u).all():
        fail("check_oco_comparator_declared", adversary, f"comparator() gave shape {u.shape}")


CHECKS = ProtocolChecks(
    player_checks=(
        check_oco_points_valid,
        check_oco_predict_is_pure,
        check_oco_block_matches_loop,
        check_oco_sparse_matches_dense,
        check_oco_predictions_match_points,
        check_oco_update_does_not_alias_input,
        check_oco_reset_restores_initial_state,
        check_oco_bounded_memory,
        check_oco_declared_bounds_hold,
    ),
    adversary_checks=(
        check_oco_tags_match_class,
        check_oco_data_valid,
        check_oco_block_matches_stream,
        check_oco_oblivious_is_oblivious,
        check_oco_comparator_declared,
        check_oco_bounded_memory,
    ),
    is_player=lambda component: isinstance(component, OCOPlayer),
    pair=_game,
)
"""The OCO protocols' part of the conformance suite (:meth:`OCOProtocol.conformance`)."""
