"""Replay a recorded loss array from a file."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from arena.base import canonical_json, file_digest
from arena.errors import ConfigError
from arena.experts.components import ObliviousAdversary
from arena.params import InstanceOf, Range
from arena.spec import AdversaryTags, GameSpec

SUFFIXES = (".npy", ".csv", ".parquet")


def load_loss_array(path: str | Path) -> np.ndarray:
    """Load a T×N or R×T×N loss array from ``.npy``, ``.csv`` (T×N) or ``.parquet`` (T×N).

    CSV files may have a header row of expert names; Parquet files hold one numeric column per
    expert. Raises ``ValueError`` naming the file and what is wrong on any problem (the
    :class:`Replay` reading it reports that as a :class:`~arena.errors.ConfigError` on ``path``).
    """
    path = Path(path)
    if path.suffix.lower() not in SUFFIXES:
        raise ValueError(f"{path}: unsupported format; use one of {SUFFIXES}")
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    try:
        if path.suffix.lower() == ".npy":
            arr = np.load(path, allow_pickle=False)
        elif path.suffix.lower() == ".csv":
            import pandas as pd

            frame = pd.read_csv(path, header=None)
            if frame.shape[0] and not pd.api.types.is_numeric_dtype(frame.dtypes.iloc[0]):
                frame = pd.read_csv(path)  # first row was a header of expert names
            arr = frame.to_numpy(dtype=np.float64)
        else:
            import pandas as pd

            arr = pd.read_parquet(path).to_numpy(dtype=np.float64)
    except (ValueError, TypeError, OSError) as exc:
        raise ValueError(f"{path}: cannot read a numeric loss array ({exc})") from exc
    # casting would silently drop an imaginary part, turn booleans into 0/1 and fail on strings
    if arr.dtype.kind not in "iuf":
        raise ValueError(
            f"{path}: holds {arr.dtype} values; a loss array must hold real numbers (int or float)"
        )
    arr = np.asarray(arr, dtype=np.float64)
    if arr.ndim not in (2, 3) or 0 in arr.shape:
        raise ValueError(f"{path}: expected shape T×N or R×T×N, got {arr.shape}")
    return arr


class Replay(ObliviousAdversary):
    """Plays a loss array loaded from a file: the same T×N matrix for every replicate, or one
    T×N slice per replicate from an R×T×N array.

    Parameters
    ----------
    path : str
        A ``.npy``, ``.csv`` or ``.parquet`` file.
    loss_range : list of two floats
        The declared range ``[lo, hi]``; every entry of the file must lie in it.

    Notes
    -----
    The file must have at least T rounds (a longer file is played from its start), N is taken
    from the file, and an R×T×N array needs one slice per global replicate index. Any mismatch,
    NaN or out-of-range entry is refused before round 1 with the file, round, replicate and expert.

    A sequence that ``arena attack`` or :func:`arena.attack.write_replay` found against a
    deterministic player is a certificate (:mod:`arena.attack.certificate`): the JSON file beside
    it (``worst.json`` beside ``worst.npy``) records the player, its resolved parameters, N, T,
    the loss range, the file's digest and the regret after every round. Replayed against that
    player with those parameters, N, T and loss range, the adversary declares that curve as
    ``lower_bound:regret`` (the player's regret is at least this after round t, here exactly
    this); against anything else it declares nothing, and :meth:`lower_bounds_reason` says why
    (the game records it among the skipped metrics).

    Examples
    --------
    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "l.npy")
    >>> np.save(f, np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]))
    >>> from arena import play
    >>> df = play("ftl", Replay(path=f), horizon=3, metrics={"loss": {}})
    >>> float(df.value.iloc[-1])  # ½ (tie), 1 (leader 0 loses), ½ (tie again)
    2.0
    """

    tags = AdversaryTags(oblivious=True)
    parameter_constraints: ClassVar = {
        "path": [InstanceOf(str, "the path of a .npy, .csv or .parquet file")],
        "loss_range": [Range()],
    }

    def __init__(self, path: str, loss_range: Sequence[float] = (0.0, 1.0)):
        self.path = path
        self.loss_range = loss_range

    @classmethod
    def _unit_test_params(cls):
        """A small random T×N file and an R×T×N file, written once to a temporary folder."""
        import tempfile

        folder = Path(tempfile.gettempdir()) / "regret-arena-replay-test"
        folder.mkdir(exist_ok=True)
        rng = np.random.default_rng(0)
        for name, shape in (("tn", (2000, 4)), ("rtn", (3, 2000, 4))):
            path = folder / f"{name}.npy"
            if not path.exists():
                np.save(path, rng.random(shape))
            yield {"path": str(path)}

    def data_identity(self) -> dict[str, str]:
        return {"path": file_digest(self.path)} if Path(self.path).is_file() else {}

    def _certificate(self) -> tuple[dict[str, Any] | None, str]:
        """The certificate recorded beside the file, or None and why there is none."""
        cached = getattr(self, "_cert_cache", None)
        if cached is not None and cached[0] == self.path:
            return cached[1]
        found = _read_certificate(Path(self.path))
        self._cert_cache = (self.path, found)
        return found

    def lower_bounds_reason(self, player: Any, spec: GameSpec | None = None) -> str | None:
        """Return why this replay declares no ``lower_bound:regret`` against ``player``, or None.

        It declares one only when the file is certified (:mod:`arena.attack.certificate`) for this
        player's registry name and resolved parameters, a deterministic player, this loss range
        and, given the game's ``spec``, this N and T (a tuned player's play depends on T).
        """
        cert, why = self._certificate()
        if cert is None:
            return why
        name = type(player).registry_name()
        if name != cert.get("player"):
            return f"the sequence certifies {cert.get('player')}'s regret, not {name}'s"
        if canonical_json(player.get_params()) != canonical_json(cert.get("player_params")):
            return (
                f"the sequence certifies {name} with parameters {cert.get('player_params')}, "
                f"not {player.get_params()}"
            )
        if not cert.get("deterministic"):
            return f"the sequence certifies nothing: {cert.get('why')}"
        if [float(v) for v in self.declared_range()] != cert.get("loss_range"):
            return f"certified at loss_range {cert.get('loss_range')}, not {list(self.loss_range)}"
        if spec is not None and (spec.n_actions, spec.horizon) != (
            cert.get("n_actions"),
            cert.get("horizon"),
        ):
            return (
                f"certified at N = {cert.get('n_actions')}, T = {cert.get('horizon')}, not "
                f"N = {spec.n_actions}, T = {spec.horizon}"
            )
        return None

    def lower_bounds(self, t: int, player: Any = None) -> dict[tuple[str, float], float]:
        """Declare the certified regret after round ``t`` (see the class), or nothing."""
        if player is None or self.lower_bounds_reason(player, getattr(self, "_spec", None)):
            return {}
        cert, _ = self._certificate()
        return {("regret", math.nan): float(cert["regret"][int(t) - 1])}

    def declared_range(self) -> tuple[float, float]:
        lo, hi = (float(v) for v in self.loss_range)
        return lo, hi

    def _array(self) -> np.ndarray:
        if getattr(self, "_loaded_from", None) != self.path:
            try:
                self._data = load_loss_array(self.path)
            except ValueError as exc:
                raise ConfigError(self.label(), "path", str(exc)) from exc
            self._loaded_from = self.path
        return self._data

    def resolve_n_actions(self, requested: int | None) -> int:
        n_file = self._array().shape[-1]
        if requested is not None and int(requested) != n_file:
            raise ConfigError(
                self.label(),
                "n_actions",
                f"{self.path}: the file has N = {n_file} experts but n_actions = {requested} "
                f"was requested (omit n_actions or set n_actions={n_file})",
            )
        return n_file

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        arr = self._array()
        lo, hi = self.declared_range()
        t_file = arr.shape[-2]
        if spec.horizon is None or spec.horizon > t_file:
            raise ConfigError(
                who,
                "path",
                f"{self.path}: the file has T = {t_file} rounds but the horizon is {spec.horizon}",
            )
        if arr.shape[-1] != spec.n_actions:
            raise ConfigError(who, "path", f"{self.path}: N = {arr.shape[-1]} != {spec.n_actions}")
        self._rows = np.asarray(spec.replicates(), dtype=np.int64)
        if arr.ndim == 3 and self._rows.max() >= arr.shape[0]:
            raise ConfigError(
                who,
                "path",
                f"{self.path}: holds {arr.shape[0]} replicates but replicate "
                f"{int(self._rows.max())} was requested",
            )
        # only the requested replicates' slices are played, so only they are checked
        used = arr[self._rows, : spec.horizon, :] if arr.ndim == 3 else arr[: spec.horizon, :]
        bad = np.argwhere(~np.isfinite(used) | (used < lo) | (used > hi))
        if bad.size:
            idx = tuple(int(v) for v in bad[0])
            value = float(used[idx])
            where = f"round {idx[-2] + 1}, expert {idx[-1]}" + (
                f", replicate {int(self._rows[idx[0]])}" if arr.ndim == 3 else ""
            )
            what = "not finite" if not np.isfinite(value) else f"outside [{lo:g}, {hi:g}]"
            raise ConfigError(who, "path", f"{self.path}: entry {value!r} at {where} is {what}")
        self._used = used
        self._n_rep = spec.n_replicates
        self._spec = spec

    def losses_block(self, t0: int, n: int) -> np.ndarray:
        window = self._used[..., t0 - 1 : t0 - 1 + n, :]
        if window.ndim == 2:
            return np.broadcast_to(window, (self._n_rep, *window.shape)).copy()
        return window.copy()


def _read_certificate(path: Path) -> tuple[dict[str, Any] | None, str]:
    """Read the ``certificate`` of the JSON file beside ``path`` (same stem); None and why if none.

    The key is :data:`arena.attack.certificate.CERTIFICATE_KEY`, spelled here so that the
    adversary does not import the attack package.
    """
    record_path = path.with_suffix(".json")
    if not record_path.is_file():
        return None, f"no certificate beside {path.name} ({record_path.name} is absent)"
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return None, f"{record_path.name} is unreadable ({exc})"
    cert = record.get("certificate") if isinstance(record, dict) else None
    if not isinstance(cert, dict) or not isinstance(cert.get("regret"), list):
        return None, f"{record_path.name} records no certificate (arena attack writes one)"
    if not path.is_file() or cert.get("sequence_digest") != file_digest(path):
        return None, f"{path.name} is not the sequence {record_path.name} certifies (digest)"
    return cert, ""
