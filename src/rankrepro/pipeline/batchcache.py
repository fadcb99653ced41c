"""What `make smoke`'s paper jobs may reuse: the edit loop reruns only what an edit changed.

With ``batch_cells=paper`` (`make smoke`) one job per paper runs its artefacts' cells into one
file per artefact (``<artefact>/all_cells.parquet``) and writes their records and figures.
Beside each such file an *index* ``all_cells.index.json`` says what it holds:

* ``data`` and ``cells``: the processed data's identity and each cell's fingerprint
  (:func:`~rankrepro.pipeline.cells.cell_fingerprint`: config, code, seeds) when it was
  computed, and ``sha256``: the file's bytes as written;
* ``record_from``: the ``sha256`` of the cells file the artefact's record was last made from,
  ``claims``: the artefact's own claim p-values computed from those cells (what its siblings'
  records use in their family, Holm) and ``family``: the siblings' p-values its record used.

When the workflow is parsed, :func:`plan` compares them with what each artefact would be
now, and a paper's job is planned only for the artefacts that changed (none: no job at all,
so a second `make smoke` plans nothing):

* ``cells``: some cell's fingerprint (or the data) differs, or the cells file is not the
  one indexed: the job recomputes the cells that differ (:func:`reusable_frames` gives it the
  others' rows) and writes the record;
* ``record``: the cells are current but the record is missing, made from other cells or
  another config, or a sibling's claim p-values are not those it used: the record again;
* ``pending``: current, but a sibling of its claim family recomputes cells in this job:
  the job writes its record again only if that sibling's claim p-values moved.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..files import write_text
from .cells import Experiment, cell_fingerprint, claim_family, config_fingerprint
from .integrity import file_digest

INDEX = "all_cells.index.json"


def index_path(cells_file: str | Path) -> Path:
    return Path(cells_file).with_name(INDEX)


def canonical(obj) -> str:
    """JSON text for comparing p-values (tuples as lists; NaN as NaN, which compares equal here)."""
    return json.dumps(obj, sort_keys=True)


def cell_prints(exp: Experiment) -> dict[str, str]:
    """Every cell's fingerprint (main and sensitivity cells)."""
    return {c.id: cell_fingerprint(*exp.variant_of(c)) for c in exp.all_cells}


def _sha(path: Path) -> str | None:
    try:
        return file_digest(path)
    except OSError:
        return None


def read_index(cells_file: str | Path) -> dict | None:
    """The index of a cells file, when it still describes the file's bytes (None otherwise)."""
    try:
        idx = json.loads(index_path(cells_file).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(idx, dict) or idx.get("sha256") != _sha(Path(cells_file)):
        return None
    return idx


def reusable_frames(exp: Experiment, cells_file: str | Path, data_id: str | None, prints: dict[str, str]) -> dict:
    """cell id -> its rows in the existing cells file, for each cell computed from the same
    fingerprint and data as it would be now (the rest are computed again)."""
    idx = read_index(cells_file)
    if idx is None or idx.get("data") != data_id:
        return {}
    same = [c for c, fp in prints.items() if idx.get("cells", {}).get(c) == fp]
    if not same:
        return {}
    from ..files import read_cell

    df = read_cell(cells_file)
    return {c: df[df["cell"] == c].reset_index(drop=True) for c in same if (df["cell"] == c).any()}


def write_cells_index(cells_file: str | Path, data_id: str | None, prints: dict[str, str]) -> None:
    """The index of a cells file just written (no record made from it yet)."""
    idx = {"data": data_id, "cells": prints, "sha256": _sha(Path(cells_file))}
    write_text(index_path(cells_file), json.dumps(idx, indent=1, sort_keys=True) + "\n")


def stored_claims(cells_file: str | Path):
    """The artefact's claim p-values as computed from the cells file as it is (None: unknown)."""
    idx = read_index(cells_file)
    if idx is None or idx.get("record_from") != idx.get("sha256") or idx.get("claims") is None:
        return None
    return idx["claims"]


def write_record_index(cells_file: str | Path, claims, family: dict) -> None:
    """Note in the index that the record was made from the cells file as it is, with the
    artefact's own claim p-values (None: not computed) and its siblings' it used."""
    idx = read_index(cells_file)
    if idx is None:
        return  # a cells file not written by this job: nothing noted, its record is redone next time
    idx.update(record_from=idx["sha256"], claims=claims, family=family)
    write_text(index_path(cells_file), json.dumps(idx, indent=1, sort_keys=True, default=list) + "\n")


def _own_state(exp: Experiment, data_id: str | None, prefix: str, root: Path) -> str | None:
    base = root / f"{prefix}results/{exp.paper}/{exp.artefact}"
    cells_file = base / "all_cells.parquet"
    idx = read_index(cells_file)
    if idx is None or idx.get("data") != data_id or idx.get("cells") != cell_prints(exp):
        return "cells"
    outputs = [base.with_suffix(s) for s in (".csv", ".md", ".json")]
    if exp.figure_file is not None:
        fig = root / f"{prefix}figures/{exp.paper}/{exp.figure_file}"
        outputs += [fig.with_suffix(".png"), fig.with_suffix(".pdf")]
    if idx.get("record_from") != idx.get("sha256") or not all(p.is_file() for p in outputs):
        return "record"
    try:
        if json.loads(base.with_suffix(".json").read_text()).get("config_fingerprint") != config_fingerprint(exp):
            return "record"
    except (OSError, ValueError, AttributeError):
        return "record"
    return None


def plan(catalog: dict[str, Experiment], data_ids: dict[str, str | None], prefix: str = "",
         root: str | Path = ".") -> dict[str, str]:
    """The artefacts a paper job must handle (name -> ``cells``, ``record`` or ``pending``, see the
    module docstring); an artefact left out is current.  ``data_ids``: the artefacts that run here
    (not kept for absent data) -> their data's identity (:func:`.freshness.data_identity`)."""
    root = Path(root)
    states = {n: _own_state(catalog[n], d, prefix, root) for n, d in data_ids.items()}
    out = {n: s for n, s in states.items() if s is not None}
    for name, state in states.items():
        if state is not None:
            continue
        exp = catalog[name]
        idx = read_index(root / f"{prefix}results/{exp.paper}/{exp.artefact}/all_cells.parquet") or {}
        used = idx.get("family") or {}
        siblings = sorted(o for o in data_ids if o != name and claim_family(catalog[o]) == claim_family(exp))
        if set(used) != set(siblings):
            out[name] = "record"
            continue
        for s in siblings:
            if states[s] == "cells":
                out[name] = "pending"
                continue
            o = catalog[s]
            claims = stored_claims(root / f"{prefix}results/{o.paper}/{o.artefact}/all_cells.parquet")
            if claims is None:  # its record is made in this job: its p-values are compared there
                out.setdefault(name, "pending")
            elif canonical(claims) != canonical(used[s]):
                out[name] = "record"
                break
    return out
