"""Search for an experts player's worst case on large games with CMA-ES over adversary families.

The objective is the player's expected regret ``Σ_t p_t·l_t − min_i L_{T,i}`` (the engine's
``regret`` metric, weighted by ``p_t``, so no sampling noise enters) on an oblivious loss sequence
drawn from a parametrized family (:mod:`arena.attack.families`). A CMA-ES population (the ``cma``
package) is decoded to P sequences and played as the P replicates of **one** batched game: the
population is written as an R×T×N array and played by the ``replay`` adversary, which gives
replicate r the slice r.

The search starts from, and compares with, the catalog: every registered experts adversary that
accepts N and T is played (:func:`catalog_worst`), and each adversary's worst replicate becomes a
concrete T×N sequence; the ``mixture`` and ``basis`` families contain the worst of them exactly, so
the search's best is never below the catalog's.

State is saved each generation to ``<out_dir>/state.npz`` (written to a temporary file and renamed,
so a crash leaves the previous generation's state): the CMA mean, step size, covariance, counters,
every generation's fitness values and the best-so-far, nothing pickled. ``resume=True`` rebuilds
the optimizer by replaying the saved generations' ``ask``/``tell`` with the saved fitness values
(no game is replayed), checks that the rebuilt mean equals the saved one bit for bit, and goes on;
the result is identical to an uninterrupted run with the same seed.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from arena.attack.families import Family, make_family
from arena.errors import ConfigError
from arena.results import write_npy_atomic, write_text_atomic

__all__ = [
    "Catalog",
    "SearchResult",
    "catalog_worst",
    "comparison_table",
    "evaluate",
    "progress_table",
    "search",
    "write_replay",
]

STATE_FILE = "state.npz"
STATE_VERSION = 1
SKIP_ADVERSARIES = frozenset({"replay"})
"""Catalog entries never played: ``replay`` needs a file (it is how the search itself plays)."""


@dataclass(frozen=True)
class Evaluation:
    """Regret and declared bound of each replicate of one batched game, shape (P,) each."""

    regret: np.ndarray
    bound: np.ndarray
    player_params: dict = field(default_factory=dict)
    """The player's resolved parameters as the game recorded them (defaults filled in)."""


def _check_game(player: str, n_actions: int, horizon: int) -> tuple[int, int]:
    if not isinstance(player, str) or not player:
        raise ConfigError("search", "player", f"must be a registry name, got {player!r}")
    for name, value, low in (("n_actions", n_actions, 2), ("horizon", horizon, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ConfigError("search", name, f"must be an integer ≥ {low}, got {value!r}")
    return int(n_actions), int(horizon)


def evaluate(
    player: str,
    losses: np.ndarray,
    *,
    player_params: Mapping[str, Any] | None = None,
    seed: int = 0,
    n_jobs: int | None = 1,
    folder: str | Path | None = None,
) -> Evaluation:
    """Play P loss sequences as the P replicates of one batched game; return regret and bound.

    Parameters
    ----------
    player : str
        Registry name of an experts player.
    losses : ndarray, shape (P, T, N)
        The sequences, entries in ``[0, 1]``.
    player_params : mapping, optional
        The player's parameters.
    seed : int
        Root seed of the game (replicate r uses the stream of global replicate r).
    n_jobs : int, optional
        Threads of the game (:func:`arena.game.run_game`).
    folder : path, optional
        Where the temporary ``.npy`` is written (default: the system's temporary folder).

    Returns
    -------
    Evaluation
        ``regret`` (the ``p_t``-weighted regret at T) and ``bound`` (``bound:regret`` at T; NaN
        when the player declares none), shape (P,) each.
    """
    from arena.game import run_game

    losses = np.asarray(losses, dtype=np.float64)
    if losses.ndim != 3:
        raise ConfigError("search", "losses", f"expected shape (P, T, N), got {losses.shape}")
    pop, horizon, n_act = losses.shape
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        path = os.path.join(tmp, "population.npy")
        np.save(path, losses)
        run = run_game(
            player,
            "replay",
            adversary_params={"path": path},
            player_params=dict(player_params or {}),
            horizon=horizon,
            n_actions=n_act,
            replicates=pop,
            seed=seed,
            metrics={"regret": {}, "bound": {}},
            checkpoints=[horizon],
            n_jobs=n_jobs,
        )
    rows = run.rows[run.rows.t == horizon]
    regret = np.full(pop, np.nan)
    bound = np.full(pop, np.nan)
    sel = rows[rows.metric == "regret"]
    regret[sel.replicate.to_numpy()] = sel.value.to_numpy()
    sel = rows[rows.metric == "bound:regret"]
    bound[sel.replicate.to_numpy()] = sel.value.to_numpy()
    resolved = json.loads(rows.player_params.iloc[0]) if len(rows) else {}
    return Evaluation(regret, bound, resolved)


# ----------------------------------------------------------------------------------------------
# the catalog


@dataclass
class Catalog:
    """The catalog's experts adversaries played against one player.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per adversary played: ``adversary``, ``regret_mean`` (over replicates),
        ``regret_max`` (its worst replicate, replayed as an oblivious sequence), ``bound``.
    skipped : dict
        Adversaries not played, with the reason.
    sequences : ndarray, shape (C, T, N)
        Each played adversary's worst replicate, in ``table``'s order.
    """

    table: pd.DataFrame
    skipped: dict[str, str]
    sequences: np.ndarray

    @property
    def best_index(self) -> int:
        """Row of the adversary whose worst replicate gives the largest regret."""
        return int(np.argmax(self.table.regret_max.to_numpy()))

    @property
    def best(self) -> tuple[str, float]:
        """Name and regret (worst replicate, replayed) of the best catalog adversary."""
        row = self.table.iloc[self.best_index]
        return str(row.adversary), float(row.regret_max)


def catalog_worst(
    player: str,
    n_actions: int,
    horizon: int,
    *,
    player_params: Mapping[str, Any] | None = None,
    replicates: int = 4,
    seed: int = 0,
    adversaries: list[str] | None = None,
    n_jobs: int | None = 1,
    progress: bool = False,
) -> Catalog:
    """Play every catalog experts adversary that accepts N and T against ``player``.

    Each adversary plays ``replicates`` replicates with its default parameters; the loss
    sequences are read back from the game's trace (so adaptive adversaries count too, with the
    sequence they chose against this player), and each adversary's worst replicate is replayed
    as an oblivious sequence in one batched game, whose regret is ``regret_max``. Adversaries
    that refuse N, T or the player (a :class:`~arena.errors.ArenaError` or ``ValueError``), or
    that emit confidences, are listed in ``skipped``.

    Parameters
    ----------
    player : str
    n_actions, horizon : int
    player_params : mapping, optional
    replicates : int
        Replicates per adversary (≥ 1).
    seed : int
    adversaries : list of str, optional
        Names to play (default: every registered experts adversary but ``replay``).
    n_jobs : int, optional
    progress : bool
        Show a progress bar over adversaries.

    Returns
    -------
    Catalog
    """
    from tqdm.auto import tqdm

    from arena import registry
    from arena.errors import ArenaError
    from arena.game import run_game

    n_actions, horizon = _check_game(player, n_actions, horizon)
    if isinstance(replicates, bool) or not isinstance(replicates, int) or replicates < 1:
        raise ConfigError("search", "replicates", f"must be an integer ≥ 1, got {replicates!r}")
    names = adversaries if adversaries is not None else registry.available("adversary")
    rows, seqs, skipped = [], [], {}
    for name in tqdm(names, desc="catalog", disable=not progress):
        if name in SKIP_ADVERSARIES:
            skipped[name] = "needs a file"
            continue
        tags = getattr(registry.load("adversary", name), "tags", None)
        if getattr(tags, "protocol", "experts") != "experts":
            continue  # another protocol's adversary: not part of the experts catalog
        if getattr(tags, "emits_confidences", False):
            skipped[name] = "emits confidences (a sleeping game, not a plain loss sequence)"
            continue
        with tempfile.TemporaryDirectory() as tmp:
            trace = os.path.join(tmp, "trace.parquet")
            try:
                run = run_game(
                    player,
                    name,
                    player_params=dict(player_params or {}),
                    n_actions=n_actions,
                    horizon=horizon,
                    replicates=replicates,
                    seed=seed,
                    metrics={"regret": {}},
                    checkpoints=[horizon],
                    trace_path=trace,
                    n_jobs=n_jobs,
                )
            except (ArenaError, ValueError) as exc:
                skipped[name] = str(exc).splitlines()[0]
                continue
            frame = pd.read_parquet(trace, columns=["replicate", "t", "losses"])
        regret = run.rows[(run.rows.metric == "regret") & (run.rows.t == horizon)]
        worst = int(regret.replicate.to_numpy()[np.argmax(regret.value.to_numpy())])
        frame = frame[frame.replicate == worst].sort_values("t")
        seq = np.stack(frame.losses.to_numpy()).astype(np.float64)
        if seq.shape != (horizon, n_actions) or seq.min() < 0.0 or seq.max() > 1.0:
            skipped[name] = f"losses of shape {seq.shape} or outside [0, 1] (not replayable)"
            continue
        rows.append({"adversary": name, "regret_mean": float(regret.value.mean())})
        seqs.append(seq)
    if not seqs:
        raise ConfigError("search", "adversaries", f"no catalog adversary could play: {skipped}")
    sequences = np.stack(seqs)
    ev = evaluate(player, sequences, player_params=player_params, seed=seed, n_jobs=n_jobs)
    table = pd.DataFrame(rows)
    table["regret_max"] = ev.regret
    table["bound"] = ev.bound
    return Catalog(table, skipped, sequences)


# ----------------------------------------------------------------------------------------------
# the search


@dataclass
class SearchResult:
    """The outcome of :func:`search`.

    Attributes
    ----------
    losses : ndarray, shape (T, N)
        The best sequence found.
    value : float
        Its regret, played alone as replicate 0 (what ``adversary=replay`` gives with ``seed``).
    bound : float
        The player's ``bound:regret`` on it (NaN if none is declared).
    history : list of dict
        One row per generation (0 is the start point): ``generation``, ``best``, ``mean``,
        ``gen_best``, ``sigma``, ``evaluations``, ``wall_s``.
    config : dict
        Player, parameters, N, T, family and its parameters, seed, popsize, sigma0, budget.
    stop : str
        Why the search ended (``budget`` or CMA-ES's own termination criteria).
    """

    losses: np.ndarray
    value: float
    bound: float
    history: list[dict]
    config: dict
    stop: str = "budget"
    catalog: tuple[str, float] | None = field(default=None)


def _cma(family: Family, sigma0: float, popsize: int, seed: int):
    import cma

    rng = np.random.default_rng(seed)
    opts = {
        "popsize": popsize,
        # our own generator: the samples depend on the seed only, not on numpy's global state
        "randn": lambda *shape: rng.standard_normal(shape),
        "seed": np.nan,  # leave numpy's global generator alone
        "verbose": -9,
        "verb_log": 0,
        "verb_disp": 0,
        "maxiter": math.inf,
    }
    return cma.CMAEvolutionStrategy(family.x0(), sigma0, opts)


def _save_state(path: Path, es, meta: dict, best_x: np.ndarray, best_losses: np.ndarray) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        np.savez(
            fh,
            meta=np.array(json.dumps(meta)),
            mean=np.asarray(es.mean, dtype=np.float64),
            sigma=np.float64(es.sigma),
            cov=np.asarray(es.C, dtype=np.float64),
            best_x=best_x,
            best_losses=best_losses,
        )
    os.replace(tmp, path)  # atomic: a reader sees the old state or the new one


def _load_state(path: Path) -> dict:
    with np.load(path, allow_pickle=False) as data:
        out = {k: data[k] for k in data.files}
    out["meta"] = json.loads(str(out["meta"]))
    return out


def search(
    player: str,
    *,
    n_actions: int,
    horizon: int,
    player_params: Mapping[str, Any] | None = None,
    family: str = "basis",
    family_params: Mapping[str, Any] | None = None,
    budget: int = 20,
    popsize: int | None = None,
    sigma0: float | None = None,
    seed: int = 0,
    catalog: Catalog | None = None,
    out_dir: str | Path | None = None,
    resume: bool = False,
    progress: bool = True,
    n_jobs: int | None = 1,
) -> SearchResult:
    """Maximize a player's expected regret over one family of loss sequences with CMA-ES.

    Parameters
    ----------
    player : str
        Registry name of an experts player.
    n_actions, horizon : int
        N ≥ 2 and T ≥ 1.
    player_params : mapping, optional
    family : str
        ``switching``, ``markov``, ``mixture`` or ``basis`` (:mod:`arena.attack.families`).
    family_params : mapping, optional
        The family's parameters. ``mixture`` gets the catalog's sequences as its library and
        ``basis`` the catalog's worst sequence as its base unless given.
    budget : int
        Generations of CMA-ES (≥ 1); each costs one batched game of ``popsize`` replicates.
    popsize : int, optional
        Population size (≥ 2; default CMA-ES's ``4 + ⌊3 ln dim⌋``).
    sigma0 : float, optional
        Initial step size (> 0; default the family's).
    seed : int
        Seeds CMA-ES's samples and the games (≥ 0).
    catalog : Catalog, optional
        The catalog's plays (:func:`catalog_worst`); computed when ``mixture`` or ``basis`` needs
        it and none is given.
    out_dir : path, optional
        Folder of the resumable state (``state.npz``), written every generation.
    resume : bool
        Continue from ``out_dir``'s state (same player, game, family, seed and popsize; the
        budget may grow); with no state there yet, start afresh.
    progress : bool
        Show a tqdm bar over generations.
    n_jobs : int, optional
        Threads of each game.

    Returns
    -------
    SearchResult
    """
    from tqdm.auto import tqdm

    n_actions, horizon = _check_game(player, n_actions, horizon)
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ConfigError(
            "search", "budget", f"must be an integer ≥ 1 (generations), got {budget!r}"
        )
    if popsize is not None and (
        isinstance(popsize, bool) or not isinstance(popsize, int) or popsize < 2
    ):
        raise ConfigError("search", "popsize", f"must be an integer ≥ 2, got {popsize!r}")
    if sigma0 is not None and not (isinstance(sigma0, (int, float)) and 0 < sigma0 < math.inf):
        raise ConfigError("search", "sigma0", f"must be a positive finite number, got {sigma0!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError("search", "seed", f"must be an integer ≥ 0, got {seed!r}")
    if resume and out_dir is None:
        raise ConfigError("search", "resume", "needs out_dir, the folder of the saved state")
    fparams = dict(family_params or {})
    if (
        family in ("mixture", "basis")
        and catalog is None
        and "library" not in fparams
        and ("base" not in fparams)
    ):
        catalog = catalog_worst(
            player, n_actions, horizon, player_params=player_params, seed=seed, n_jobs=n_jobs
        )
    if family == "mixture" and "library" not in fparams:
        fparams["library"] = catalog.sequences
        fparams.setdefault("start_index", catalog.best_index)
    if family == "basis" and "base" not in fparams and catalog is not None:
        fparams["base"] = catalog.sequences[catalog.best_index]
    fam = make_family(family, n_actions, horizon, **fparams)
    sigma0 = float(sigma0 if sigma0 is not None else fam.sigma0)
    popsize = popsize if popsize is not None else 4 + int(3 * math.log(fam.dim))
    config = {
        "player": player,
        "player_params": dict(player_params or {}),
        "n_actions": n_actions,
        "horizon": horizon,
        "family": family,
        "family_params": fam.params(),
        "method": "cma-es",
        "seed": seed,
        "popsize": popsize,
        "sigma0": sigma0,
        "start": "catalog" if family in ("mixture", "basis") and catalog is not None else "x0",
    }
    state_path = Path(out_dir) / STATE_FILE if out_dir is not None else None
    if state_path is not None:
        state_path.parent.mkdir(parents=True, exist_ok=True)

    def play(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        seqs = fam.decode(x)
        return evaluate(
            player, seqs, player_params=player_params, seed=seed, n_jobs=n_jobs
        ).regret, seqs

    es = _cma(fam, sigma0, popsize, seed)
    fitness: list[list[float]] = []
    if resume and state_path.is_file():
        state = _load_state(state_path)
        meta = state["meta"]
        if meta["config"] != json.loads(json.dumps(config)):
            diff = sorted(k for k in config if meta["config"].get(k) != config[k])
            raise ConfigError("search", "resume", f"the saved state has other settings: {diff}")
        fitness = meta["fitness"]
        for fs in fitness:  # rebuild: same samples, same told values, no game replayed
            es.tell(es.ask(), fs)
        if not np.array_equal(np.asarray(es.mean), state["mean"]):
            raise RuntimeError(f"{state_path}: the rebuilt CMA-ES mean differs from the saved one")
        history, best_x, best_losses = meta["history"], state["best_x"], state["best_losses"]
        best = meta["best"]
    else:
        started = time.perf_counter()
        x0 = fam.x0()[None]
        r0, s0 = play(x0)
        best, best_x, best_losses = float(r0[0]), x0[0], s0[0]
        history = [
            {
                "generation": 0,
                "best": best,
                "mean": best,
                "gen_best": best,
                "sigma": sigma0,
                "evaluations": 1,
                "wall_s": time.perf_counter() - started,
            }
        ]
    stop = "budget"
    bar = tqdm(
        total=budget,
        initial=min(len(fitness), budget),
        desc=f"search {family}",
        disable=not progress,
    )
    while len(fitness) < budget:
        halt = es.stop()
        if halt:
            stop = ",".join(sorted(halt))
            break
        started = time.perf_counter()
        xs = np.asarray(es.ask())
        regret, seqs = play(xs)
        # CMA-ES minimizes; a NaN (a failed replicate) must never look best
        fs = [float(-v) if np.isfinite(v) else math.inf for v in regret]
        es.tell(list(xs), fs)
        fitness.append(fs)
        j = int(np.argmin(fs))
        if -fs[j] > best:
            best, best_x, best_losses = -fs[j], xs[j], seqs[j]
        finite = regret[np.isfinite(regret)]
        history.append(
            {
                "generation": len(fitness),
                "best": best,
                "mean": float(finite.mean()) if finite.size else math.nan,
                "gen_best": -fs[j],
                "sigma": float(es.sigma),
                "evaluations": history[-1]["evaluations"] + len(fs),
                "wall_s": time.perf_counter() - started,
            }
        )
        if state_path is not None:
            meta = {"version": STATE_VERSION, "config": config, "fitness": fitness}
            meta.update(history=history, best=best, generation=len(fitness))
            meta["countiter"], meta["countevals"] = int(es.countiter), int(es.countevals)
            _save_state(state_path, es, meta, np.asarray(best_x), np.asarray(best_losses))
        bar.update(1)
        bar.set_postfix(best=f"{best:.4f}")
    bar.close()
    final = evaluate(
        player, best_losses[None], player_params=player_params, seed=seed, n_jobs=n_jobs
    )
    config["budget"] = budget
    config["player_resolved_params"] = final.player_params
    return SearchResult(
        losses=np.asarray(best_losses),
        value=float(final.regret[0]),
        bound=float(final.bound[0]),
        history=history,
        config=config,
        stop=stop,
        catalog=catalog.best if catalog is not None else None,
    )


# ----------------------------------------------------------------------------------------------
# outputs


def write_replay(result: SearchResult, folder: str | Path, stem: str = "worst") -> Path:
    """Write the found sequence as ``<stem>.npy`` (T×N) with its provenance in ``<stem>.json``.

    ``adversary=replay path=<stem>.npy`` with the search's seed plays it back to ``result.value``.
    The JSON holds the sequence's certificate (:func:`arena.attack.certificate.certify`), which
    the ``replay`` adversary declares as ``lower_bound:regret`` against the same deterministic
    player. Returns the path of the ``.npy``.
    """
    from importlib.metadata import PackageNotFoundError, version

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    npy = folder / f"{stem}.npy"
    write_npy_atomic(np.asarray(result.losses, dtype=np.float64), npy)
    from arena.attack.certificate import certify

    cfg = result.config
    certificate = certify(cfg["player"], cfg["player_resolved_params"], npy, cfg["horizon"])
    try:
        pkg = version("regret-arena")
    except PackageNotFoundError:  # a source checkout that was never installed
        pkg = "unknown"
    provenance = {
        "player": cfg["player"],
        "player_params": cfg["player_resolved_params"],
        "n_actions": cfg["n_actions"],
        "horizon": cfg["horizon"],
        "family": cfg["family"],
        "family_params": cfg["family_params"],
        "method": cfg["method"],
        "value": result.value,
        "metric": "regret",
        "bound": None if math.isnan(result.bound) else result.bound,
        "seed": cfg["seed"],
        "budget": cfg["budget"],
        "popsize": cfg["popsize"],
        "evaluations": result.history[-1]["evaluations"],
        "catalog_best": None if result.catalog is None else list(result.catalog),
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "package_version": pkg,
        "replay": {"adversary": "replay", "path": npy.name, "seed": cfg["seed"]},
        "certificate": certificate,
    }
    write_text_atomic(json.dumps(provenance, indent=2) + "\n", folder / f"{stem}.json")
    return npy


def progress_table(result: SearchResult) -> pd.DataFrame:
    """Return the search's progress, one row per generation: ``generation``, ``best``, ``mean``,
    ``gen_best``, ``sigma``, ``evaluations``, ``wall_s`` (generation 0 is the start point)."""
    return pd.DataFrame(result.history)


def comparison_table(results: list[SearchResult], catalog: Catalog) -> pd.DataFrame:
    """Return the final comparison, one row per search: ``family``, ``regret``, ``bound``,
    ``ratio`` (regret / bound), ``catalog_adversary``, ``catalog_regret`` and ``beats_catalog``."""
    name, value = catalog.best
    rows = [
        {
            "player": r.config["player"],
            "family": r.config["family"],
            "regret": r.value,
            "bound": r.bound,
            "ratio": r.value / r.bound if r.bound and np.isfinite(r.bound) else math.nan,
            "catalog_adversary": name,
            "catalog_regret": value,
            "beats_catalog": bool(r.value > value + 1e-9),
        }
        for r in results
    ]
    return pd.DataFrame(rows)
