"""What `rankrepro verify --record` verified survives a re-aggregation of the same cells (the
workflow deletes a record before it aggregates again: the verification lives beside the cells,
with their digests) and is dropped when a cell's bytes change."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.verify import file_digest, verification_path
from rankrepro.report.artefact import build_artefact

ROOT = Path(__file__).resolve().parents[1]
NAME = "elsas2008/table5"


def _setup(tmp_path):
    exp = load_experiment(NAME, "paper")
    src = ROOT / "results" / NAME / "cells"
    cells = tmp_path / "results" / NAME / "cells"
    cells.mkdir(parents=True)
    paths = []
    for c in exp.all_cells:
        shutil.copy(src / f"{c.id}.parquet", cells / f"{c.id}.parquet")
        paths.append(cells / f"{c.id}.parquet")
    rec = tmp_path / "results" / f"{NAME}.json"
    side = {"verified": {"commit": "abc", "date": "2026-11-25", "cells": len(paths), "identical": len(paths)},
            "cells": {p.stem: file_digest(p) for p in paths}}
    verification_path(rec).write_text(json.dumps(side))
    return exp, paths, rec


def _aggregate(exp, paths, rec):
    out = rec.with_suffix("")
    return build_artefact(exp, paths, f"{out}.csv", f"{out}.md", rec)


def test_a_reaggregation_keeps_the_verification_of_the_same_cells(tmp_path):
    exp, paths, rec = _setup(tmp_path)
    assert not rec.exists()  # as the workflow leaves it: the old record deleted
    assert _aggregate(exp, paths, rec)["verified"]["commit"] == "abc"
    assert json.loads(rec.read_text())["verified"]["identical"] == len(paths)


def test_a_changed_cell_drops_the_verification(tmp_path):
    exp, paths, rec = _setup(tmp_path)
    df = pd.read_parquet(paths[0])
    df.loc[df.index[0], "value"] += 1e-9
    df.to_parquet(paths[0])
    assert "verified" not in _aggregate(exp, paths, rec)
