"""The records check of ``rankrepro verify --records`` (the top floor: it aggregates again, as
the workflow's jobs do): every committed record aggregated again from its cells with today's
code and compared byte for byte with the committed files, every cell's bytes against the sha256
its fingerprint file and record name.  The hashes and the seal themselves, which the report and
the aggregation use, are :mod:`rankrepro.pipeline.integrity`."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from .pipeline.cells import Experiment
from .pipeline.integrity import (FIGURES, SCRATCH, RecordProblem, cell_file, check_cells, compare_files,
                                 figure_problems, note_aggregated, seal_problem)
from .pipeline.verify import verification_path


def _data_status(exp: Experiment, rec: dict, root: Path) -> tuple[dict, bool]:
    """What the aggregation is told of the data (as the workflow's ``status``), from the record
    (which data set was used) and whether its manifest is here."""
    ds = rec.get("dataset") or {}
    used = ds.get("used")
    status = {"runnable": True}
    if used:
        # as data.status.data_status says it: the configured source, or a substitute for it
        status["used"] = used
        if used != exp.cfg.dataset.source:
            status["substitute_for"] = exp.cfg.dataset.source
    here = not used or (root / "data" / "processed" / used / "manifest.json").is_file()
    return status, here


def reaggregate(exp: Experiment, rec: dict, root: Path, scratch: Path, load, known: dict) -> Path:
    """The record made again from the committed cells into ``scratch`` (same relative paths);
    returns the scratch record's path."""
    from .jobs import _aggregate

    out = scratch / "results" / f"{exp.name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    side = verification_path(root / "results" / f"{exp.name}.json")
    if side.is_file():  # what `verify --record` verified of these cells: kept by a re-aggregation
        verification_path(out).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(side, verification_path(out))
    spread = root / "results" / "platform_spread.json"
    if spread.is_file():  # the platform spread the record's section is read from (pipeline/platforms.py)
        shutil.copy(spread, scratch / "results" / spread.name)
    if rec.get("status") != "ran":
        from .report.artefact import build_not_run

        build_not_run(exp, rec.get("reason", ""), rec.get("how_to_obtain", ""), out.with_suffix(".csv"),
                      out.with_suffix(".md"), out)
        return out
    cells = [str(cell_file(root, exp, c.id)) for c in exp.all_cells]
    family = [n for n in (rec.get("claim_family") or {}).get("artefacts", []) if n != exp.name]
    siblings = [str(cell_file(root, load(n, False), c.id)) for n in family for c in load(n, False).cells]
    status, here = _data_status(exp, rec, root)
    _aggregate(load, exp.name, cells, str(out.with_suffix(".csv")), str(out.with_suffix(".md")), str(out),
               status, siblings, known)
    if not here and "sources" in (rec.get("dataset") or {}):
        # the manifest is not here: the sources are the committed record's (module docstring)
        from .io import atomic_write, dumps

        made = json.loads(out.read_text())
        made["dataset"] = {**made["dataset"], "sources": rec["dataset"]["sources"]}
        atomic_write(out, lambda tmp: Path(tmp).write_text(dumps(made)))
    _carry_figures(out, rec)
    return out


def _carry_figures(made: Path, rec: dict) -> None:
    """The figures' hashes of the committed record into the record made again (the figure job
    names them, after the aggregation; they are checked against the figure files apart:
    :func:`~rankrepro.pipeline.integrity.figure_problems`)."""
    if not isinstance(rec, dict) or FIGURES not in rec or not made.is_file():
        return
    from .io import atomic_write, dumps
    from .pipeline.integrity import seal

    m = json.loads(made.read_text())
    m = {k: v for k, v in m.items() if k not in (FIGURES, "record_sha256")}
    m[FIGURES] = rec[FIGURES]
    atomic_write(made, lambda tmp: Path(tmp).write_text(dumps(seal(m))))


def _check_group(catalog: dict[str, Experiment], names: list[str], root: Path, scratch: Path,
                 comparisons: bool) -> tuple[list[RecordProblem], list[str], int]:
    """One claim family's records (they share their claims' p-values), or the arena's comparisons:
    (problems, warnings, records checked)."""
    def rel(p: Path) -> str:
        try:
            return str(Path(p).relative_to(root))
        except ValueError:
            return str(p)

    problems: list[RecordProblem] = []
    warnings: list[str] = []
    if comparisons:
        return problems, warnings, _check_comparisons(catalog, root, scratch, rel, problems)
    known: dict[str, list[float]] = {}

    def load(name: str, sensitivity: bool = True) -> Experiment:
        return catalog[name]

    n = 0
    for name in names:
        exp = catalog[name]
        path = root / "results" / f"{name}.json"
        n += 1
        try:
            rec = json.loads(path.read_text())
        except ValueError as e:
            problems.append(RecordProblem(rel(path), f"not valid JSON ({e})"))
            continue
        if not isinstance(rec, dict):
            problems.append(RecordProblem(rel(path), "not a record (a JSON object)"))
            continue
        if str(rec.get("git_commit", "")).endswith("+dirty"):
            warnings.append(f"warning: {rel(path)} was made from a tree whose sources differed from commit "
                            f"{str(rec['git_commit'])[:10]} (+dirty)")
        before = len(problems)
        if rec.get("status") == "ran":
            problems += check_cells(exp, rec, root, rel)
        problems += [RecordProblem(*_split(x, rel)) for x in figure_problems(path, rec)]
        try:
            made = reaggregate(exp, rec, root, scratch, load, known)
        except Exception as e:  # noqa: BLE001 - a record that cannot be made again is a finding, named
            problems.append(RecordProblem(rel(path), f"cannot be aggregated again from its cells: {e}"))
            continue
        for ext in (".json", ".csv", ".md"):
            problems += compare_files(path.with_suffix(ext), made.with_suffix(ext), rel)
        if len(problems) == before and seal_problem(rec) is None:
            note_aggregated(rec)  # the report says which records were aggregated again here
    return problems, warnings, n


def check(catalog: dict[str, Experiment], root: str | Path = ".", scratch: str | Path | None = None,
          echo=print, jobs: int = 1, names: list[str] | None = None) -> list[RecordProblem]:
    """Every committed record of the catalog (or of ``names``) and, without ``names``, the
    arena's comparisons: links 1 and 2 of the module docstring, one claim family per process
    (``jobs``).  Prints one line per problem and a summary; returns the problems."""
    from .pipeline.cells import claim_family

    root = Path(root)
    scratch = Path(scratch) if scratch is not None else root / SCRATCH
    if scratch.exists():
        shutil.rmtree(scratch)
    t0, c0 = time.perf_counter(), time.process_time()
    groups: dict[str, list[str]] = {}
    for name in sorted(names or catalog):
        if (root / "results" / f"{name}.json").is_file():
            groups.setdefault(claim_family(catalog[name]), []).append(name)
    tasks = [(g, False) for g in groups.values()] + ([([], True)] if names is None else [])
    if jobs != 1 and len(tasks) > 1:
        from joblib import Parallel, delayed

        results = Parallel(n_jobs=jobs)(delayed(_check_group)(catalog, g, root, scratch, c) for g, c in tasks)
    else:
        results = [_check_group(catalog, g, root, scratch, c) for g, c in tasks]
    problems = [p for r in results for p in r[0]]
    for w in (w for r in results for w in r[1]):
        echo(w)
    for p in problems:
        echo(f"DIFFERS: {p}")
    n = sum(r[2] for r in results)
    echo(f"records check: {n} record(s) aggregated again from their cells and compared with the committed files "
         f"(git_commit and versions apart), every cell's bytes checked against its fingerprint file and record: "
         f"{len({p.path for p in problems})} file(s) differ ({time.perf_counter() - t0:.0f} s, "
         f"{time.process_time() - c0:.0f} CPU s in this process)")
    return problems


def _check_comparisons(catalog, root: Path, scratch: Path, rel, problems: list[RecordProblem]) -> int:
    """The arena's comparison records, made again from their experiments' committed cells."""
    from .config_files import find_config_dir, list_experiments
    from .report.arena import build_comparison, list_arenas, load_arena

    config_dir = find_config_dir(root)
    n = 0
    for family in list_arenas(config_dir):
        path = root / "results" / "arena" / "comparison" / f"{family}.json"
        if not path.is_file():
            continue
        n += 1
        arena = load_arena(family, config_dir, list_experiments(config_dir))
        exps = {m: catalog[m] for m in arena.experiments}
        cells = {m: [str(cell_file(root, e, c.id)) for c in e.cells] for m, e in exps.items()}
        out = scratch / "results" / "arena" / "comparison" / f"{family}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            build_comparison(arena, exps, cells, out, out.with_suffix(".md"), out.with_suffix(".csv"),
                             scratch / "figures" / "arena" / "comparison" / f"cd_{family}.png")
        except Exception as e:  # noqa: BLE001
            problems.append(RecordProblem(rel(path), f"cannot be compared again from its cells: {e}"))
            continue
        try:
            committed = json.loads(path.read_text())
        except ValueError:
            committed = None
        before = len(problems)
        if isinstance(committed, dict):
            problems += [RecordProblem(*_split(x, rel)) for x in figure_problems(path, committed)]
            _carry_figures(out, committed)
        for ext in (".json", ".csv", ".md"):
            problems += compare_files(path.with_suffix(ext), out.with_suffix(ext), rel)
        if len(problems) == before and isinstance(committed, dict) and seal_problem(committed) is None:
            note_aggregated(committed)
    return n


def _split(line: str, rel) -> tuple[str, str]:
    """A problem line "<file>: <what>" as (the file relative to the checkout, what)."""
    f, _, what = line.partition(": ")
    return rel(Path(f)), what


# -------------------------------------------------------------------------------------
# the outcomes across CPU kernels (pipeline/platforms.py: rankrepro verify --record-spread)
# -------------------------------------------------------------------------------------
def outcome_changes(catalog: dict, name: str, moved: list[str], root: Path, scratch: Path) -> list[str]:
    """The verdicts, claims and diagnosis labels of artefact ``name`` that change when its record is
    aggregated again with the ``moved`` cells as recomputed (in ``scratch``) instead of committed."""
    if not moved:
        return []
    from .files import read_json
    from .jobs import _aggregate
    from .pipeline.compare import compare_records
    from .pipeline.integrity import cell_file

    exp = catalog[name]
    rec_path = root / "results" / f"{name}.json"
    committed = read_json(rec_path, "record")
    out = scratch / "platform" / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    cells = [str(_with_committed_times(cell_file(root, exp, c.id), cell_file(scratch, exp, c.id),
                                       out.parent / exp.artefact / "cells" / f"{c.id}.parquet"))
             if c.id in moved else str(cell_file(root, exp, c.id)) for c in exp.all_cells]
    family = [n for n in (committed.get("claim_family") or {}).get("artefacts", []) if n != name]
    siblings = [str(cell_file(root, catalog[n], c.id)) for n in family for c in catalog[n].cells]
    ds = committed.get("dataset") or {}
    status = {"runnable": True, **({"used": ds["used"]} if ds.get("used") else {})}
    if ds.get("used") and ds["used"] != exp.cfg.dataset.source:
        status["substitute_for"] = exp.cfg.dataset.source
    _aggregate(lambda n, sensitivity=True: catalog[n], name, cells, str(out.with_suffix(".csv")),
               str(out.with_suffix(".md")), str(out), status, siblings, {})
    changes, _ = compare_records(committed, read_json(out, "record"))
    return changes


def _with_committed_times(committed: Path, recomputed: Path, dest: Path) -> Path:
    """The recomputed cell with the committed cell's timing metrics: a time is measured afresh on
    every run, whatever the kernel, so it is not what the platform changes."""
    import pandas as pd

    from .io import write_parquet
    from .metrics import TIMING_METRICS

    want, got = pd.read_parquet(committed), pd.read_parquet(recomputed)
    timing = TIMING_METRICS | {f"fold_{m}" for m in TIMING_METRICS}
    got = got.reset_index(drop=True)
    is_t = got["metric"].isin(timing).to_numpy()
    if is_t.any():
        key = ["cell", "trial", "metric", "round"]
        kept = want[want["metric"].isin(timing)].astype({"round": "float64"})
        merged = got[is_t].astype({"round": "float64"})[key].merge(kept[key + ["value"]], on=key, how="left")
        got.loc[is_t, "value"] = merged["value"].fillna(got.loc[is_t, "value"].reset_index(drop=True)).to_numpy()
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_parquet(got, dest)
    return dest
