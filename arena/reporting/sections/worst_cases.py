"""The "Worst cases found" section: the loss sequences ``arena attack`` and the search found.

A report shows them when its input has attack outputs: the folders ``arena attack`` writes
(``worst.npy``, ``worst.json``, and for the exact dynamic program ``worst_by_round.csv``) or
:func:`arena.attack.write_replay` writes (``worst.npy``, ``worst.json``), found in the folder
``arena report --attacks DIR`` names or, without it, in ``attacks/`` inside the results folder.
``DIR`` may be one such folder or hold several, one level down (``outputs/attacks`` as
``arena attack`` fills it).

For each sequence: a heat map of ``l_t`` (experts × rounds) and the player's regret after each
round on it beside its declared bound, with the value, the method (exact or searched), the player
and its parameters read from ``worst.json``. The curves come from the sequence's certificate (the
regret replayed by the lab, :mod:`arena.attack.certificate`), or from ``worst_by_round.csv`` where
an older output has none; the section reads files only, it plays nothing.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from arena.reporting.figures import OKABE_ITO, RC, FigureOut, _plt
from arena.reporting.render import Block, Para, Table, code
from arena.reporting.sections.context import ReportContext, Section
from arena.reporting.sections.formatting import num

FOLDER = "attacks"
"""The folder, inside a results folder, read when ``arena report`` is given no ``--attacks``."""

WORST_CASE_COLUMNS = [
    "attack",
    "player",
    "player_params",
    "n_actions",
    "horizon",
    "method",
    "value",
    "bound",
    "ratio",
    "certified",
]
"""The columns of ``worst_cases.csv``: one row per sequence found."""


def attack_folders(root: Path) -> list[Path]:
    """The attack output folders in ``root``: ``root`` itself if it holds ``worst.json``, else
    its subfolders that do, in name order (symbolic links are not followed).

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "b").mkdir(), (d / "a").mkdir(), (d / "b" / "worst.json").write_text("{}")
    >>> [p.name for p in attack_folders(d)], attack_folders(d / "missing")
    (['b'], [])
    """
    if not root.is_dir() or root.is_symlink():
        return []
    if (root / "worst.json").is_file():
        return [root]
    return sorted(
        p
        for p in root.iterdir()
        if p.is_dir() and not p.is_symlink() and (p / "worst.json").is_file()
    )


def method_of(record: dict[str, Any]) -> str:
    """``exact`` or ``search (<method>, <family>)``, from a ``worst.json`` record.

    Examples
    --------
    >>> method_of({"method": "exact dynamic programming (...)", "complete": True})
    'exact'
    >>> method_of({"method": "exact dynamic programming", "complete": False, "rounds": 9})
    'exact to round 9'
    >>> method_of({"method": "cma-es", "family": "mixture"})
    'search (cma-es, mixture)'
    """
    method = str(record.get("method", ""))
    if method.startswith("exact"):
        return "exact" if record.get("complete", True) else f"exact to round {record.get('rounds')}"
    return f"search ({method}, {record.get('family')})"


def read_attack(folder: Path) -> dict[str, Any]:
    """Read one attack folder: its record, sequence and curves; raise ``ValueError`` if broken.

    Returns a dict with ``record`` (``worst.json``), ``losses`` (T × N), ``regret`` and ``bound``
    (after each round, arrays; ``bound`` None when the player declares none), ``certified``.
    """
    try:
        record = json.loads((folder / "worst.json").read_text(encoding="utf-8"))
        losses = np.load(folder / "worst.npy", allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{folder.name}: unreadable ({exc})") from exc
    if not isinstance(record, dict) or losses.ndim != 2:
        raise ValueError(f"{folder.name}: worst.json is no record or worst.npy no T × N array")
    cert = record.get("certificate")
    regret = bound = None
    if isinstance(cert, dict) and isinstance(cert.get("regret"), list):
        regret = np.asarray(cert["regret"], dtype=np.float64)
        if isinstance(cert.get("bound"), list):
            bound = np.asarray(cert["bound"], dtype=np.float64)
    elif (folder / "worst_by_round.csv").is_file():
        table = pd.read_csv(folder / "worst_by_round.csv")
        regret = table["path_regret"].to_numpy(dtype=np.float64)
        if table["bound"].notna().all():
            bound = table["bound"].to_numpy(dtype=np.float64)
    certified = bool(isinstance(cert, dict) and cert.get("deterministic"))
    return {
        "record": record,
        "losses": losses,
        "regret": regret,
        "bound": bound,
        "certified": certified,
    }


def _params_text(params: Any) -> str:
    if not params:
        return ""
    return ", ".join(f"{k}={v}" for k, v in sorted(dict(params).items()))


def worst_case_figure(name: str, found: dict[str, Any], title: str) -> FigureOut:
    """Two panels: the heat map of ``l_t`` (experts × rounds) and the regret curve beside the
    player's declared bound."""
    plt = _plt()
    losses = found["losses"]
    with plt.rc_context(RC):
        fig, (left, right) = plt.subplots(1, 2, figsize=(8.0, 3.0))
        image = left.imshow(
            losses.T,
            aspect="auto",
            interpolation="nearest",
            cmap="Greys",
            vmin=0.0,
            vmax=1.0,
            extent=(0.5, losses.shape[0] + 0.5, losses.shape[1] - 0.5, -0.5),
        )
        left.set_yticks(range(losses.shape[1]))
        left.set_xlabel("round t")
        left.set_ylabel("expert i")
        left.set_title("loss l_t,i")
        fig.colorbar(image, ax=left, fraction=0.05)
        if found["regret"] is not None:
            t = np.arange(1, found["regret"].size + 1)
            right.plot(t, found["regret"], color=OKABE_ITO[0], label="regret on this sequence")
            if found["bound"] is not None:
                right.plot(
                    t, found["bound"], color=OKABE_ITO[1], linestyle="--", label="declared bound"
                )
            right.legend(loc="upper left", frameon=False)
        right.set_xlabel("round t")
        right.set_ylabel("regret")
        right.set_title("regret after round t")
        fig.suptitle(title)
        fig.tight_layout()
    caption = (
        f"{title}: the sequence (left, darker is a larger loss) and the player's regret after "
        "each round on it, beside its declared bound (right)."
    )
    return FigureOut(name, caption, fig)


def over_horizons_figure(table: pd.DataFrame) -> FigureOut | None:
    """Each player's worst regret found against T (filled: exact, hollow: searched) beside its
    declared bound at T (dashed); None unless some player was attacked at two horizons or more."""
    table = table.assign(label=table["player"] + "(" + table["player_params"] + ")")
    players = [p for p, part in table.groupby("label", sort=True) if part["horizon"].nunique() > 1]
    if not players:
        return None
    plt = _plt()
    with plt.rc_context(RC):
        fig, ax = plt.subplots(figsize=(6.0, 3.6))
        for i, player in enumerate(players):
            part = table[table["label"] == player].sort_values("horizon")
            color = OKABE_ITO[i % len(OKABE_ITO)]
            ax.plot(part["horizon"], part["value"], color=color, label=f"{player}: worst found")
            exact = part["method"] == "exact"
            ax.scatter(part["horizon"][exact], part["value"][exact], color=color, zorder=3)
            ax.scatter(
                part["horizon"][~exact], part["value"][~exact], facecolors="white",
                edgecolors=color, zorder=3,
            )  # fmt: skip
            if part["bound"].notna().any():
                ax.plot(part["horizon"], part["bound"], color=color, linestyle="--",
                        label=f"{player}: declared bound")  # fmt: skip
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("horizon T")
        ax.set_ylabel("regret at T")
        ax.legend(loc="upper left", frameon=False, fontsize="small")
        fig.tight_layout()
    caption = (
        "Worst regret found at each horizon T (filled markers: exact dynamic programming, the "
        "worst case itself; hollow: searched, a lower bound on it) and the declared bound at T "
        "(dashed)."
    )
    return FigureOut("worst_cases_over_t", caption, fig)


def worst_cases(ctx: ReportContext) -> Section | None:
    """The worst cases section; ``None`` when the report's input holds no attack output."""
    root = getattr(ctx, "attacks", None) or (ctx.src.root / FOLDER)
    folders = attack_folders(Path(root))
    if not folders:
        return None
    rows, found_all, broken = [], [], []
    for folder in folders:
        try:
            found = read_attack(folder)
        except ValueError as exc:
            broken.append(str(exc))
            continue
        rec = found["record"]
        cert = rec.get("certificate")
        # the certificate's parameters are the resolved ones (defaults filled in), as labels are
        params = cert["player_params"] if isinstance(cert, dict) else rec.get("player_params")
        value, bound = float(rec.get("value", math.nan)), rec.get("bound")
        bound = math.nan if bound is None else float(bound)
        row = {
            "attack": folder.name,
            "player": str(rec.get("player")),
            "player_params": _params_text(params),
            "n_actions": int(found["losses"].shape[1]),
            "horizon": int(rec.get("horizon", found["losses"].shape[0])),
            "method": method_of(rec),
            "value": value,
            "bound": bound,
            "ratio": value / bound if bound and math.isfinite(bound) else math.nan,
            "certified": found["certified"],
        }
        rows.append(row)
        found_all.append(found)
    if not rows and not broken:
        return None
    order = sorted(range(len(rows)), key=lambda i: (rows[i]["player"], rows[i]["horizon"]))
    rows, found_all = [rows[i] for i in order], [found_all[i] for i in order]
    table = pd.DataFrame(rows, columns=WORST_CASE_COLUMNS)
    root = Path(root)
    shown = root.relative_to(ctx.src.root) if root.is_relative_to(ctx.src.root) else root
    blocks: list[Block] = [
        Para(
            f"The loss sequences found against a player ({code('arena attack')}: exact dynamic "
            f"programming; {code('arena.attack.search')}: CMA-ES over adversary families), read "
            f"from {code(shown.as_posix())}. For each: the worst regret found at T (exact: the "
            "player's worst case over every sequence of the loss grid; searched: a value some "
            "sequence attains, so a lower bound on the worst case), the player's declared bound "
            "and their ratio. Certified: the lab replayed the sequence against the player at two "
            "seeds with equal regret, so the replay adversary declares it as the player's "
            f"{code('lower_bound:regret')} in that game."
        )
    ]
    if rows:
        ctx.write_csv("worst cases found", table, "worst_cases.csv")
        body = [
            [
                r.attack,
                f"{r.player}({r.player_params})",
                str(r.n_actions),
                str(r.horizon),
                r.method,
                num(r.value),
                num(r.bound),
                num(r.ratio),
                "yes" if r.certified else "no",
            ]
            for r in table.itertuples(index=False)
        ]
        blocks.append(
            Table(
                [
                    "attack",
                    "player",
                    "N",
                    "T",
                    "method",
                    "worst regret",
                    "bound",
                    "worst / bound",
                    "certified",
                ],
                body,
                caption="Worst cases found: the value at T, the declared bound at T, their ratio.",
                text_columns={0, 1, 4, 8},
                anchor="worst-cases-table",
            )
        )
        over_t = over_horizons_figure(table)
        if over_t is not None:
            blocks.append(ctx.add_figure(over_t))
        for row, found in zip(rows, found_all, strict=True):  # each saved (and closed) at once
            label = f"{row['player']}({row['player_params']})"
            title = f"{label}, N = {row['n_actions']}, T = {row['horizon']}, {row['method']}"
            name = f"worst_case_{row['attack']}"
            blocks.append(ctx.add_figure(worst_case_figure(name, found, title)))
    if broken:
        blocks.append(Para("Skipped attack folders: " + "; ".join(broken) + "."))
    return Section("Worst cases found", "worst-cases", blocks)
