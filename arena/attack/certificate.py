"""The certificate of a found sequence: its regret replayed by the lab, and whether it is one.

A loss sequence found against a player whose distributions ``p_t`` are a deterministic function
of the losses seen is a **certificate**: that player, with those parameters, in that game (N, T,
loss range), has regret at least the sequence's after every round t, whatever the seed. The
sequence's regret is not trusted from the search that found it: :func:`certify` replays the
written file through the ``replay`` adversary, as any game would, at every round and at two
seeds, and records the regret curve, the player's resolved parameters and the file's digest.

The ``replay`` adversary reads this record (the ``certificate`` entry of the JSON file beside the
sequence, :data:`CERTIFICATE_KEY`) and declares the curve as ``lower_bound:regret`` when it replays
the same file against the same player, parameters, N, T and loss range, and nothing otherwise
(``Replay.lower_bounds_reason`` says why). Deterministic here means: equal regret curves, bit for
bit, at seeds 0 and 1 (the seeds give the player's streams and its draws). A player that samples
its ``p_t`` (``ftpl``) or updates on its own draws (``normal_hedge_dt(state="realized")``) fails
it; the expected mode of the latter, whose class is tagged ``observes_action`` for the realized
mode's sake, passes. It is a check, not a proof: a randomized player whose two games agree bit for
bit over all T rounds would pass it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

CERTIFICATE_KEY = "certificate"
"""The entry of a sequence's JSON provenance (``worst.json``) holding :func:`certify`'s record."""

SEEDS = (0, 1)
"""The seeds the replay is played at; equal curves at both are the determinism check."""


def certify(
    player: str,
    params: Mapping[str, Any],
    path: str | Path,
    horizon: int,
    loss_range: tuple[float, float] = (0.0, 1.0),
) -> dict[str, Any]:
    """Replay the T×N sequence in ``path`` against ``player`` and return its certificate record.

    Parameters
    ----------
    player : str
        The player's registry name.
    params : mapping
        Its parameters (the defaults are filled in and recorded).
    path : path
        A ``.npy`` (or ``.csv``, ``.parquet``) file of at least ``horizon`` rounds, as the
        ``replay`` adversary reads it.
    horizon : int
        T (the player is reset for it, as in the search that found the sequence).
    loss_range : pair of float
        The replay's declared loss range (players that scale by it see the same game).

    Returns
    -------
    dict
        ``sequence_digest`` (:func:`arena.base.file_digest`), ``player``, ``player_params``
        (resolved), ``n_actions``, ``horizon``, ``loss_range``, ``metric`` (``"regret"``),
        ``regret`` (the curve after rounds 1..T at seed 0), ``bound`` (the player's declared
        ``bound:regret`` after each round, None if it declares none), ``deterministic`` (bool),
        ``why`` (the reason it is not, or how it was checked), ``seeds``.

    Examples
    --------
    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "w.npy")
    >>> np.save(f, np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]))
    >>> c = certify("ftl", {}, f, 4)
    >>> c["deterministic"], c["regret"]
    (True, [0.5, 0.5, 1.0, 1.0])
    """
    from arena.base import file_digest
    from arena.game import run_game

    curves = []
    config: dict[str, Any] = {}
    for seed in SEEDS:
        run = run_game(
            player,
            "replay",
            player_params=dict(params),
            adversary_params={"path": str(path), "loss_range": [float(v) for v in loss_range]},
            horizon=int(horizon),
            seed=seed,
            checkpoints="all",
            metrics={"regret": {}, "bound": {}},
        )
        rows = run.rows.sort_values("t", kind="stable")
        curves.append(rows.loc[rows.metric == "regret", "value"].to_numpy(dtype=np.float64))
        declared = rows.loc[rows.metric == "bound:regret", "value"].to_numpy(dtype=np.float64)
        config = run.config
    same = curves[0].shape == curves[1].shape and bool(np.array_equal(curves[0], curves[1]))
    if not same:
        why = f"{player}'s regret on this sequence differs between seeds {SEEDS[0]} and {SEEDS[1]}"
    else:
        why = f"equal regret curves, bit for bit, at seeds {SEEDS[0]} and {SEEDS[1]}"
    return {
        "sequence_digest": file_digest(path),
        "player": player,
        "player_params": config["player_params"],
        "n_actions": int(config["n_actions"]),
        "horizon": int(horizon),
        "loss_range": [float(v) for v in loss_range],
        "metric": "regret",
        "regret": [float(v) for v in curves[0]],
        "bound": [float(v) for v in declared] if declared.size == curves[0].size else None,
        "deterministic": same,
        "why": why,
        "seeds": list(SEEDS),
    }
