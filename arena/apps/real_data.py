"""The gallery's real-data rows: its stand-ins, and the sources' datasets they stand in for.

The committed gallery plays scikit-learn's bundled sets where the sources played LIBSVM/UCI
sets, which do not ship with this package. :data:`STAND_INS` pairs each such stand-in (a
tournament of the gallery and the parameters that pick its set) with the catalog's set of the
same table it stands in for. ``arena reproduce --data-dir DIR`` (:func:`real_data_config`)
swaps a stand-in for that set when a copy is in ``DIR`` (``dataset=NAME data_dir=DIR``: found
and checked against its published shape by the stream, :mod:`arena.data.catalog`) and keeps the
stand-in otherwise; :func:`data_table` writes which one each game used beside the report.

The pairing is ours (the sources do not name stand-ins): a set of the same table, of the
stand-in's task, whose shape is published (so the catalog can check the copy); the table's row
of the same data where there is one (breast-cancer for WDBC, mnist for digits in Table D.3),
else its smallest set (splice in Table 2.2) or one of its binary or regression sets.

Examples
--------
>>> node = {"name": "boosting", "adversaries": [
...     {"name": "boosting_oracle", "params": {"dataset": "breast_cancer"}}]}
>>> import tempfile
>>> out, uses = real_data_config(node, tempfile.mkdtemp())
>>> out == node, uses[0].used()
(True, 'stand-in breast_cancer (splice is not in the data folder)')
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.errors import ArenaError

DATA_ADVERSARIES = ("dataset_stream", "boosting_oracle", "multiclass_dataset_stream")
"""The adversaries that read a dataset (directly, or as the ``base`` of ``rescaled``)."""


@dataclass(frozen=True)
class StandIn:
    """A stand-in of the gallery and the source's dataset it stands in for.

    Attributes
    ----------
    tournament : str
        The tournament's name (its file's stem in ``configs/tournament/``).
    params : mapping
        The parameters that pick the stand-in: an adversary of the tournament that reads a
        dataset (or ``rescaled`` over one) is this stand-in when its parameters hold these.
    dataset : str or None
        The catalog's name of the set it stands in for; None where the table's set has no
        published shape (it always plays the stand-in).
    table : str
        The source's table the tournament is an analogue of.
    one_pass : bool
        The tournament plays every example once (``horizon`` = the number of examples): on the
        source's set the horizon becomes the set's number of examples.
    """

    tournament: str
    params: Mapping[str, Any]
    dataset: str | None
    table: str
    one_pass: bool = False

    def describe(self) -> str:
        """The stand-in as a row of the data table names it (``digits [4, 9]``)."""
        rest = " ".join(f"{v}" for k, v in self.params.items() if k != "dataset")
        return f"{self.params['dataset']}{' ' + rest if rest else ''}"


_D3 = "Luo 2016, Table D.3"
_T22 = "Luo 2016, Table 2.2"
_T32 = "Luo 2016, Table 3.2"
_T33 = "Beygelzimer et al. 2015, §6 (Luo 2016, Table 3.3)"
STAND_INS: tuple[StandIn, ...] = (
    # Table D.3: breast-cancer and mnist are rows of the table; one online pass each
    StandIn("second_order_wdbc", {"dataset": "breast_cancer"}, "breast-cancer", _D3, True),
    StandIn("second_order_digits", {"dataset": "digits", "digits": [8]}, "mnist", _D3, True),
    # Table 2.2 (batch boosting): splice is its smallest set; OCR-49 has no published shape
    StandIn("boosting", {"dataset": "breast_cancer"}, "splice", _T22),
    StandIn("boosting", {"dataset": "digits", "digits": [4, 9]}, None, _T22),
    # Table 3.2 (online boosting of classifiers): a9a and covtype, binary sets of the table
    StandIn("boosting_classification", {"dataset": "breast_cancer"}, "a9a", _T32),
    StandIn("boosting_classification", {"dataset": "digits", "digits": [4, 9]}, "covtype", _T32),
    # Table 3.3 (online gradient boosting for regression): cal_housing, whose target the
    # stream standardizes like diabetes's
    StandIn("boosting_regression", {"dataset": "diabetes"}, "cal_housing", _T33),
)
"""The gallery's stand-ins and the sets they stand in for (module docstring)."""


@dataclass(frozen=True)
class DataUse:
    """What one game of a tournament played: the source's set or its stand-in.

    Attributes
    ----------
    tournament : str
        The tournament's name.
    index : int
        The adversary's position in the tournament's list (from 0).
    adversary : str
        The adversary as listed (its position and parameters in the tournament file).
    stand_in : StandIn
        The stand-in it is.
    path : Path or None
        The source's set's copy played; None when the stand-in was.
    why : str
        Why the stand-in was played (empty when it was not).
    """

    tournament: str
    index: int
    adversary: str
    stand_in: StandIn
    path: Path | None = None
    why: str = ""
    file: str = ""
    """The copy's path, size and SHA-256 (:func:`arena.data.files.file_identity`)."""
    examples: str = ""
    """The examples' digest and shape (what the game key holds)."""

    def used(self) -> str:
        """One phrase: the set played, with its digest, or the stand-in and why."""
        if self.path is None:
            return f"stand-in {self.stand_in.describe()} ({self.why})"
        return f"{self.examples}; file {self.file}"


def real_data_config(
    node: Mapping[str, Any], data_dir: str | Path
) -> tuple[dict[str, Any], list[DataUse]]:
    """Return a tournament's mapping with its stand-ins swapped for the sources' sets present in
    ``data_dir``, and what each of its dataset games plays.

    A stand-in (:data:`STAND_INS`) whose set has a copy in ``data_dir``
    (:func:`arena.data.catalog.find_dataset`) gets ``dataset=NAME data_dir=DIR`` in place of its
    ``dataset`` and ``digits`` (its other parameters kept: split, loss, standardization,
    intercept); a one-pass tournament's horizon becomes the set's number of examples. The
    stream checks the copy's shape when the tournament is validated, before anything runs.
    Nothing else changes: a tournament without a present set comes back equal to ``node``.

    Raises
    ------
    ArenaError
        ``data_dir`` is not a folder; a one-pass tournament whose games would play sets of
        different sizes.
    """
    from arena.data.catalog import CATALOG, find_dataset
    from arena.data.files import DataFileError

    folder = Path(data_dir).expanduser()
    if not folder.is_dir():
        raise ArenaError(f"reproduce: --data-dir {data_dir}: not a folder")
    out = copy.deepcopy(dict(node))
    name = str(out.get("name", ""))
    uses: list[DataUse] = []
    horizons: set[int] = set()
    played_standin = False
    for i, adv in enumerate(out.get("adversaries") or []):
        if not isinstance(adv, dict):
            continue
        params = adv.get("params") or {}
        target, kind = params, adv.get("name")
        if kind == "rescaled" and params.get("base") in DATA_ADVERSARIES:
            target, kind = params.get("base_params") or {}, params["base"]
        if kind not in DATA_ADVERSARIES:
            continue
        stand_in = _match(name, target)
        if stand_in is None:
            continue
        label = f"#{i + 1} {adv.get('name')}({_params(params)})"
        if stand_in.dataset is None:
            why = "the source's set has no published shape"
            uses.append(DataUse(name, i, label, stand_in, why=why))
            played_standin = True
            continue
        try:
            path = find_dataset(stand_in.dataset, str(folder))
        except DataFileError:
            why = f"{stand_in.dataset} is not in the data folder"
            uses.append(DataUse(name, i, label, stand_in, why=why))
            played_standin = True
            continue
        for key in ("dataset", "digits"):
            target.pop(key, None)
        target.update({"dataset": stand_in.dataset, "data_dir": str(folder)})
        if target is not params:
            params["base_params"] = target
        adv["params"] = params
        uses.append(DataUse(name, i, label, stand_in, path=path))
        if stand_in.one_pass:
            horizons.add(CATALOG[stand_in.dataset].examples)
    if horizons:
        if len(horizons) > 1 or played_standin:
            raise ArenaError(
                f"reproduce: tournament {name} plays every example once; with --data-dir its "
                "games must all play the source's set or all its stand-in (put every one of "
                f"{', '.join(sorted({u.stand_in.dataset or '?' for u in uses}))} in the folder, "
                "or none)"
            )
        out["horizon"] = horizons.pop()
    return out, uses


def identify(uses: Sequence[DataUse], config) -> list[DataUse]:
    """Fill in the file and examples digests of the games of ``uses`` that play a source's set,
    from the adversaries of the tournament ``config`` (the file each read: cached, not reread)."""
    from arena import registry

    out = []
    for use in uses:
        if use.path is None:
            out.append(use)
            continue
        adv = config.adversaries[use.index]
        name, params = adv["name"], dict(adv.get("params") or {})
        if name == "rescaled":
            name, params = params["base"], dict(params.get("base_params") or {})
        component = registry.make("adversary", name, **params)
        provenance = component.data_provenance()
        identity = component.data_identity()
        out.append(
            DataUse(
                use.tournament,
                use.index,
                use.adversary,
                use.stand_in,
                use.path,
                file=next(iter(provenance.values()), ""),
                examples=next(iter(identity.values()), ""),
            )
        )
    return out


def data_table(uses: Sequence[DataUse], data_dir: str | Path) -> str:
    """The report's data table (``data.md``): per game that reads a dataset, the stand-in, the
    source's set it stands in for and which of the two was played, with its digest."""
    lines = [
        "# Data played",
        "",
        f"`arena reproduce --data-dir {data_dir}`: each game of the gallery that plays a stand-in",
        "for a source's dataset played the source's set where a copy was in the data folder (its",
        "file's SHA-256 and the digest of its examples, which the game key holds), and the",
        "stand-in otherwise. The pairing of stand-ins and sets is docs/data.md's.",
        "",
        "| tournament | game (as listed) | source's table | stands in for | played |",
        "|---|---|---|---|---|",
    ]
    for u in uses:
        wanted = f"`{u.stand_in.dataset}`" if u.stand_in.dataset else "— (no published shape)"
        lines.append(
            f"| {u.tournament} | {_cell(u.adversary)} | {u.stand_in.table} | {wanted} | "
            f"{_cell(u.used())} |"
        )
    return "\n".join(lines) + "\n"


def is_real_data(node: Mapping[str, Any]) -> bool:
    """Whether a tournament's mapping has a stand-in of :data:`STAND_INS` with a catalog set."""
    name = str(node.get("name", ""))
    return any(s.tournament == name and s.dataset is not None for s in STAND_INS)


def _match(tournament: str, params: Mapping[str, Any]) -> StandIn | None:
    for stand_in in STAND_INS:
        if stand_in.tournament == tournament and all(
            _same(params.get(k), v) for k, v in stand_in.params.items()
        ):
            return stand_in
    return None


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return list(a) == list(b)
    return a == b


def _params(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


__all__ = [
    "DATA_ADVERSARIES",
    "STAND_INS",
    "DataUse",
    "StandIn",
    "data_table",
    "identify",
    "is_real_data",
    "real_data_config",
]
