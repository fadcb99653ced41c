"""``rankrepro export``: one long (tidy) table per paper from the committed cells.

Every value of ``results/<paper>/<artefact>/cells/*.parquet`` becomes one row, with what the
record ``results/<paper>/<artefact>.json`` says about its cell: the algorithm, its label and
hyperparameters (the grid's ones also as columns of their own), the sensitivity choice a
variant cell makes, and the data set.  Nothing is recomputed and nothing is dropped: the
tables of the report are aggregates of these rows (mean and 95% Student-t half-width over
trials, :mod:`rankrepro.stats`), and can be computed again from them (tests/test_export.py
does it for Harrington's Table 1).  Written: ``OUT/<paper>.csv.gz``, ``OUT/<paper>.parquet``
and ``OUT/DATA_DICTIONARY.md`` (:data:`DICTIONARY`, also docs/export.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import yaml

#: the columns of every table, in order (``param_<name>`` columns follow ``grid``)
COLUMNS = {
    "paper": "the paper's key (harrington2003, crammer_singer2005, elsas2008, shivaswamy2012, yu2006) or `arena` "
             "(the papers' learners side by side)",
    "artefact": "the table or figure (`table1`, `fig7_min100`, ...): `results/<paper>/<artefact>.json` is its record",
    "dataset": "the data set the artefact ran on (`dataset.name` of the record)",
    "substitute": "true where the data set is a substitute for the paper's (the record's `dataset.original` is false)",
    "cell": "the cell id: one algorithm at one point of its grid (`oap_bpm-tau0.3`); a sensitivity variant adds "
            "`~<choice>=<value>`",
    "base_cell": "the main cell a sensitivity variant varies (the cell itself for a main cell)",
    "label": "the algorithm's label in the paper's tables and figures",
    "algorithm": "the algorithm's key in the experiment config (`algorithms.<key>`)",
    "estimator": "the learner's registry name or import path (docs/algorithms.md)",
    "params": "every hyperparameter of the cell, as a JSON object (sorted keys)",
    "grid": "the hyperparameters the artefact's grid varies for this algorithm, as a JSON object",
    "param_<name>": "one column per grid hyperparameter of the paper's artefacts (empty where an algorithm has no "
                    "such grid key); numeric where every value is a number, else text",
    "sensitivity_choice": "empty for a main cell; for a sensitivity variant the open choice it reads otherwise "
                          "(the record's `sensitivity` lists each choice, its main reading and why)",
    "sensitivity_value": "the variant's reading of that choice (empty for a main cell)",
    "trial": "the Monte-Carlo trial (0-based): a random draw of data and algorithm seeds, or for LETOR fold "
             "trial + 1, for the coactive experiments a user group or query order (the record's `size` says which)",
    "metric": "what was measured (docs/results.md and the experiment config's `experiment.metrics`): e.g. "
              "`test_rank_loss`, `online_rank_loss`, `test_ndcg@10`, per-query `query_map`, validation curves "
              "`valid_ndcg@10`, timings `train_seconds`",
    "round": "the curve's x for curve metrics (training round, iteration, step, number of training items); for "
             "`query_<m>` metrics the LETOR query id; empty for a single value per trial",
    "value": "the value (float64, exactly the committed one)",
}

DICTIONARY_HEAD = """# Data dictionary of the tidy export

`rankrepro export [--out DIR]` (or `make export`) writes, from the committed cells
`results/<paper>/<artefact>/cells/*.parquet` and records `results/<paper>/<artefact>.json`,
one long table per paper (`--from RUN_DIR`: from the `--out` folder of a `rankrepro run` or
`rankrepro arena` of your own instead; each record's seal and its cells' sha256,
`cells_sha256`, are checked first, and a value edited by hand is refused in one line):
`DIR/<paper>.csv.gz` (gzipped CSV) and `DIR/<paper>.parquet` (the same rows; the
parquet keeps the types: `trial` int64, `round` nullable int64, `value` float64; the CSV
writes each float as the shortest decimal that reads back to the same double, and an empty
field where a value is missing).  One row is one committed value: one trial of one
cell, one metric, one round.  The report's tables are the mean over trials of a (cell,
metric, round) and its 95% Student-t half-width (`t(0.975, n - 1) * sd / sqrt(n)`, sd with
ddof = 1); the record's `table` keeps them.

| column | meaning |
|---|---|
"""


def dictionary_markdown() -> str:
    rows = "".join(f"| `{k}` | {v} |\n" for k, v in COLUMNS.items())
    return DICTIONARY_HEAD + rows


class ExportRefused(ValueError):
    """A record or cell that is not what was written: nothing is exported from it (one line)."""


def _checked_record(record_path: Path, root: Path) -> dict:
    """The record, refused (:class:`ExportRefused`) when its seal or a cell it names is not what
    was written (``record_sha256``, ``cells_sha256``: a value edited by hand), or a cell file
    leads outside ``root``."""
    from ..checkout import refuse_outside
    from ..files import read_json
    from ..pipeline.integrity import record_cell_files, record_problems

    rec = read_json(record_path, "record")
    for p in record_cell_files(record_path, rec.get("cells_sha256") or {}).values():
        refuse_outside(p, root, "a cell the export reads")
    problems = record_problems(record_path, rec)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ExportRefused(f"export refused: {problems[0]}{more}; `rankrepro verify --records` says more, "
                            "the workflow (or rankrepro run) computes it again")
    return rec


def _cell_frames(record_path: Path, rec: dict) -> list[tuple[str, pd.DataFrame]]:
    """(cell id, rows) of every cell of the record: its cells/<cell>.parquet files, or the
    artefact's one all_cells.parquet of a batched run (`make smoke`), split by cell."""
    base = record_path.with_suffix("")
    files = sorted((base / "cells").glob("*.parquet"))
    if files:
        return [(f.stem, pd.read_parquet(f)) for f in files]
    if (base / "all_cells.parquet").is_file():
        df = pd.read_parquet(base / "all_cells.parquet")
        return [(str(c), df[df["cell"] == c].reset_index(drop=True)) for c in df["cell"].unique()]
    return []


def _artefact_rows(record_path: Path, root: Path | None = None) -> list[tuple[pd.DataFrame, dict]]:
    rec = _checked_record(record_path, root if root is not None else record_path.parent.parent.parent)
    cell_frames = _cell_frames(record_path, rec)
    if not cell_frames:
        return []
    cfg = yaml.safe_load(rec["config"]) if isinstance(rec.get("config"), str) else (rec.get("config") or {})
    algos = (cfg or {}).get("algorithms", {}) or {}
    info = {c["id"]: {"base_cell": c["id"], "label": c.get("label"), "estimator": c.get("estimator"),
                      "sensitivity_choice": None, "sensitivity_value": None} for c in rec.get("cells", [])}
    for s in rec.get("sensitivity_cells", []):
        base = info.get(s["base"], {})
        info[s["id"]] = {"base_cell": s["base"], "label": base.get("label"), "estimator": base.get("estimator"),
                         "sensitivity_choice": s["choice"], "sensitivity_value": json.dumps(s["value"])
                         if not isinstance(s["value"], str) else s["value"]}
    frames = []
    for cid, df in cell_frames:
        meta = info.get(cid)
        if meta is None:
            raise ExportRefused(f"export refused: cell {cid} of {record_path.with_suffix('')} is not in its record "
                                f"{record_path}")
        alg = df["algorithm"].iloc[0] if len(df) else ""
        params = json.loads(df["params"].iloc[0]) if len(df) else {}
        grid_keys = list(((algos.get(alg) or {}).get("grid") or {}).keys())
        grid = {k: params[k] for k in grid_keys if k in params}
        df = df.assign(dataset=(rec.get("dataset") or {}).get("name"),
                       substitute=not bool((rec.get("dataset") or {}).get("original", True)),
                       grid=json.dumps(grid, sort_keys=True), **meta)
        frames.append((df, grid))
    return frames


def paper_table(paper_dir: Path, artefacts: list[str] | None = None) -> pd.DataFrame:
    """The long table of one paper (every artefact with committed cells, or those named)."""
    parts = []
    for rec in sorted(paper_dir.glob("*.json")):
        if artefacts is not None and rec.stem not in artefacts:
            continue
        got = _artefact_rows(rec, paper_dir.parent.parent)
        if got:
            parts += got
    if not parts:
        return pd.DataFrame(columns=[c for c in COLUMNS if c != "param_<name>"])
    keys = sorted({k for _, g in parts for k in g})
    frames = []
    for df, grid in parts:
        frames.append(df.assign(**{f"param_{k}": [grid.get(k)] * len(df) for k in keys}))
    out = pd.concat(frames, ignore_index=True)
    for k in keys:
        col = out[f"param_{k}"]
        vals = [v for v in col if v is not None]
        if vals and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            out[f"param_{k}"] = pd.to_numeric(col.astype(object).where(col.notna(), None), errors="coerce")
        else:
            out[f"param_{k}"] = col.map(lambda v: None if v is None else (v if isinstance(v, str) else json.dumps(v)))
    order = ["paper", "artefact", "dataset", "substitute", "cell", "base_cell", "label", "algorithm", "estimator",
             "params", "grid", *[f"param_{k}" for k in keys], "sensitivity_choice", "sensitivity_value",
             "trial", "metric", "round", "value"]
    out = out[order]
    out["trial"] = out["trial"].astype("int64")
    out["round"] = out["round"].astype("Int64")
    out["value"] = out["value"].astype("float64")
    return out.sort_values(["artefact", "cell", "metric", "trial", "round"], kind="stable", ignore_index=True)


def export(out: str | Path = "runs/export", root: str | Path = ".", only: list[str] | None = None) -> list[Path]:
    """Write every paper's table (gzipped CSV, parquet) and the data dictionary; returns the
    paths.  ``only``: paper keys or ``<paper>/<artefact>`` names (a paper's table then holds the
    named artefacts alone)."""
    from ..io import atomic_write, write_parquet, write_text

    root, out = Path(root), Path(out)
    for o in only or []:
        if not ((root / "results" / o).is_dir() if "/" not in o else (root / "results" / f"{o}.json").is_file()):
            raise FileNotFoundError(f"{o}: no paper folder or record under {root / 'results'}")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for paper_dir in sorted(p for p in (root / "results").iterdir() if p.is_dir() and p.name != "report"):
        artefacts = None
        if only:
            if paper_dir.name not in only:
                artefacts = [o.split("/", 1)[1] for o in only if o.startswith(paper_dir.name + "/")]
                if not artefacts:
                    continue
        table = paper_table(paper_dir, artefacts)
        if table.empty:
            continue
        csv = out / f"{paper_dir.name}.csv.gz"
        # gzip level 1: a paper's table is up to ~1 GB as text, ~60 MB so (pandas and R read it as it is)
        atomic_write(csv, lambda tmp: table.to_csv(tmp, index=False, lineterminator="\n",
                                                   compression={"method": "gzip", "compresslevel": 1, "mtime": 0}))
        pq = out / f"{paper_dir.name}.parquet"
        write_parquet(table, pq)
        written += [csv, pq]
    d = out / "DATA_DICTIONARY.md"
    write_text(d, dictionary_markdown())
    return written + [d]


def read_export(path: str | Path) -> pd.DataFrame:
    """A paper's table read back (CSV or parquet) with the types it was written with."""
    p = Path(path)
    if p.suffix == ".parquet":
        return pd.read_parquet(p)
    return pd.read_csv(p, dtype={"round": "Int64", "trial": "int64", "value": "float64", "params": str, "grid": str,
                                 "sensitivity_choice": str, "sensitivity_value": str})
