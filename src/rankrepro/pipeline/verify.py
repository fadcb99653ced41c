"""``rankrepro verify``: recompute committed cells and compare them with the committed files.

Each chosen cell is computed again at paper scale, from the same seeds, on the same processed
data, into a scratch folder (``runs/verify/``), and compared with the committed
``results/<paper>/<artefact>/cells/<cell>.parquet`` row by row: the same rows (trial, metric,
round), and every value bit for bit, except the metrics that measure time
(:data:`rankrepro.metrics.TIMING_METRICS`, the one list of them).

Without arguments it checks a fixed sample: the cheapest cell of every artefact that can run
here (by the seconds in ``rules/cell_seconds.json``; about two CPU-minutes in all); with
``--all`` every committed cell; with ``--stale`` the cells whose fingerprint no longer matches
(after a change to the code that computes them: did it move their numbers?).  With
``--against DIR`` a cell is not recomputed when another results tree ``DIR`` holds it as a
workflow run of this very code made it (its fingerprint file there current for today's
config, code and data: e.g. the clone of a paper-scale benchmark run, ``--keep``): that
cell is compared instead; any other is recomputed.  With ``--record`` the committed files are told what was
checked: each identical cell's fingerprint file is rewritten for today's code (so the
workflow takes the cell as current), and each record gets ``verified: {commit, date, cells,
identical}`` and, once all its cells are current, its ``code`` for today's code.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from ..files import read_cell, read_json
from ..metrics import TIMING_METRICS
from .. import metric_names as _metric_names  # noqa: F401 - every registered metric name
from .cells import Experiment
from .integrity import file_digest  # noqa: F401 - also this module's interface (tests)

#: the columns that identify a row of a cell's results
KEY = ["cell", "algorithm", "params", "trial", "metric", "round"]
SCRATCH = Path("runs") / "verify"


@dataclass
class CellCheck:
    experiment: str
    cell: str
    identical: bool
    values: int = 0  # values compared (timing metrics excluded)
    differing: int = 0
    max_abs: float = 0.0
    max_rel: float = 0.0
    problem: str = ""  # rows missing or added, a file absent
    seconds: float = 0.0
    #: where the recomputed cell comes from: "" (computed here) or the results tree it was taken from
    source: str = ""
    #: per metric of the differing values: {metric: [largest abs, largest rel difference]}
    by_metric: dict = field(default_factory=dict)
    #: identical, or the rule it moved within (:func:`judge`): "identical", "last bits" (at most
    #: 1e-9 relative), "platform spread" (within the cell's recorded spread), "differs"
    verdict: str = ""

    @property
    def passes(self) -> bool:
        return self.verdict in ("identical", "last bits", "platform spread")


@dataclass
class Plan:
    cells: list[tuple[Experiment, str]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # experiment -> why it is not checked


def committed_cell(exp: Experiment, cell_id: str, root: Path = Path(".")) -> Path:
    return root / "results" / exp.paper / exp.artefact / "cells" / f"{cell_id}.parquet"


def _seconds() -> dict[str, float]:
    from .schedule import load_seconds

    return load_seconds()


def stale_cells(exp: Experiment, root: Path = Path(".")) -> list[str]:
    """The committed cells whose fingerprint file does not match today's config, code and
    data, or whose bytes are not those it names (the ones the workflow would rerun)."""
    from ..data.status import data_status
    from .freshness import data_identity, fingerprint_path, is_current

    used = data_status(exp.cfg.dataset.source, probe=False).used if exp.cfg.dataset.source else None
    data_id = data_identity(used, root)
    out = []
    for c in exp.all_cells:
        fp = root / fingerprint_path("", exp, c.id)
        if not is_current(exp, c.id, data_id or "", fp, committed_cell(exp, c.id, root)):
            out.append(c.id)
    return out


def reused_cells(catalog: dict[str, Experiment], exp: Experiment, twins: set | None = None) -> set[str]:
    """The cells of ``exp`` whose results the workflow takes from another cell's job instead
    of computing them on their own: trials taken over (:func:`.cells.reused_trials`), fits
    read under other prediction settings (:func:`.cells.reread_of`) and twins
    (:func:`.cells.twin_cells`; ``twins``: its (experiment, cell) pairs over ``catalog``,
    found here when not given)."""
    from .cells import reread_of, reused_trials

    out = {c.id for c in exp.sensitivity_cells if reused_trials(exp, c) or reread_of(exp, c)}
    if twins is None:
        twins = _twins(catalog)
    return out | {cid for (name, cid) in twins if name == exp.name}


def _twins(catalog: dict[str, Experiment]) -> set:
    from ..data.status import data_status
    from .cells import twin_cells

    used = {n: (data_status(e.cfg.dataset.source, probe=False).used if e.cfg.dataset.source else None)
            for n, e in catalog.items()}
    return set(twin_cells(catalog, used))


def plan(catalog: dict[str, Experiment], names: list[str] | None = None, every: bool = False,
         root: Path = Path("."), stale: bool = False, reused: bool = False,
         patterns: list[str] | None = None, per_learner: bool = False) -> Plan:
    """The cells to check: of the named experiments (all by default), every committed cell
    (``every``), those whose fingerprint is stale (``stale``: after a code change), those the
    workflow takes from another cell's job (``reused``: each recomputed on its own), or the
    cheapest one of each (``per_learner``: the cheapest main cell of each learner, the platform
    spread's sample)."""
    from ..data.status import data_status

    out = Plan()
    seconds = _seconds()
    twins = _twins(catalog) if reused else None  # over the whole catalog, once
    for name in names or sorted(catalog):
        exp = catalog[name]
        src = exp.cfg.dataset.source
        if src is not None:
            st = data_status(src, probe=False)
            if not st.runnable:
                out.skipped[name] = f"its data cannot be had here ({st.reason})"
                continue
            if not (root / "data" / "processed" / st.used / "data.npz").is_file():
                out.skipped[name] = f"data set {st.used} not preprocessed yet (run `snakemake data`)"
                continue
        cells = [c.id for c in exp.all_cells if committed_cell(exp, c.id, root).is_file()]
        if patterns:  # only the cells whose id matches one of the shell patterns
            from fnmatch import fnmatchcase

            cells = [c for c in cells if any(fnmatchcase(c, pat) for pat in patterns)]
        if not cells:
            out.skipped[name] = "no committed cells"
            continue
        if stale:
            st = set(stale_cells(exp, root))
            cells = [c for c in cells if c in st]
            if not cells:
                continue
        elif reused:
            mine = reused_cells(catalog, exp, twins)
            cells = [c for c in cells if c in mine]
            if not cells:
                continue
        elif per_learner:
            cost = lambda c: (seconds.get(f"{name}/{c}", math.inf), c)  # noqa: E731
            best: dict[str, str] = {}
            for c in exp.cells:
                if c.id in cells and (c.algorithm not in best or cost(c.id) < cost(best[c.algorithm])):
                    best[c.algorithm] = c.id
            cells = sorted(best.values())
        elif not every:
            # the cheapest by measured seconds; unmeasured cells last, then by id (a fixed choice)
            cells = [min(cells, key=lambda c: (seconds.get(f"{name}/{c}", math.inf), c))]
        out.cells += [(exp, c) for c in cells]
    # the longest first: no core idles at the end
    out.cells.sort(key=lambda ec: -seconds.get(f"{ec[0].name}/{ec[1]}", 0.0))
    return out


@dataclass
class Aligned:
    """Two versions of a cell's rows matched on :data:`KEY`, timing metrics apart: the matched
    rows (``value_old``, ``value_new``), the counts of rows only in one, and which matched
    values are identical bit for bit (NaN equal to NaN)."""

    both: pd.DataFrame
    only_old: int
    only_new: int
    old: np.ndarray
    new: np.ndarray
    same: np.ndarray


def align(old: pd.DataFrame, new: pd.DataFrame) -> Aligned:
    timing = TIMING_METRICS | {f"fold_{m}" for m in TIMING_METRICS}  # a LETOR seeds run's by-fold times too
    o = old[~old["metric"].isin(timing)]
    n = new[~new["metric"].isin(timing)]
    o = o.assign(round=o["round"].astype("Int64").astype("float64"))
    n = n.assign(round=n["round"].astype("Int64").astype("float64"))
    m = o[KEY + ["value"]].merge(n[KEY + ["value"]], on=KEY, how="outer", suffixes=("_old", "_new"),
                                 indicator=True)
    both = m[m["_merge"] == "both"]
    a = both["value_old"].to_numpy(dtype=np.float64)
    b = both["value_new"].to_numpy(dtype=np.float64)
    same = (a.view(np.int64) == b.view(np.int64)) | (np.isnan(a) & np.isnan(b))
    return Aligned(both, int((m["_merge"] == "left_only").sum()), int((m["_merge"] == "right_only").sum()), a, b, same)


def by_metric(got: pd.DataFrame, want: pd.DataFrame) -> dict[str, list[float]]:
    """Per metric with a differing value: [largest absolute, largest relative difference]."""
    al = align(want, got)
    out: dict[str, list[float]] = {}
    if not (~al.same).any():
        return out
    diff = np.abs(al.old - al.new)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = diff / np.maximum(np.abs(al.old), np.abs(al.new))
    metrics = al.both["metric"].to_numpy()
    for m in dict.fromkeys(metrics[~al.same]):
        k = (metrics == m) & ~al.same
        out[str(m)] = [float(np.nan_to_num(diff[k], nan=np.inf).max()), float(np.nan_to_num(rel[k], nan=np.inf).max())]
    return out


#: the rule for numbers that move (docs/reproducibility.md): bit-stable code may change results in
#: their last bits
LAST_BITS = 1e-9
def judge(chk: CellCheck, spread: dict, algorithm: str | None = None, root: Path = Path("."),
          current: set[str] | None = None) -> str:
    """A checked cell's verdict: *identical*; *last bits* when every difference is within 1e-9
    relative (or 1e-12 absolute); *platform spread* when every metric's largest difference is
    within the spread recorded for the cell, or for its learner's measured cell in the same
    artefact (:func:`rankrepro.pipeline.platforms.spread_of`: what other CPU kernels moved it);
    else *differs*."""
    from .platforms import spread_of

    if chk.identical:
        return "identical"
    if chk.problem or not chk.by_metric:
        return "differs"
    if all(a <= 1e-12 or r <= LAST_BITS for a, r in chk.by_metric.values()):
        return "last bits"
    mine = spread_of(spread, chk.experiment, chk.cell, algorithm, root, current)
    if all(m in mine and a <= mine[m]["abs"] * (1 + 1e-9) for m, (a, _) in chk.by_metric.items()):
        return "platform spread"
    return "differs"


def compare(got: pd.DataFrame, want: pd.DataFrame) -> tuple[bool, int, int, float, float, str]:
    """(identical, values compared, differing, largest absolute and relative difference,
    problem) of a recomputed cell against the committed one, timing metrics apart."""
    al = align(want, got)
    problem = ""
    if al.only_old or al.only_new:
        problem = f"{al.only_old} committed row(s) not recomputed, {al.only_new} new row(s)"
    both, a, b, same = al.both, al.old, al.new, al.same
    diff = np.abs(a - b)
    diff[same] = 0.0
    finite = np.isfinite(diff)
    max_abs = float(diff[finite].max()) if finite.any() else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(same, 0.0, diff / np.maximum(np.abs(a), np.abs(b)))
    max_rel = float(np.nanmax(rel)) if rel.size else 0.0
    n_diff = int((~same).sum())
    if (~finite & ~same).any():
        max_abs = max_rel = math.inf
    return (n_diff == 0 and not problem), int(len(both)), n_diff, max_abs, max_rel, problem


def computed_elsewhere(exp: Experiment, cell_id: str, root: Path, against: Path) -> Path | None:
    """The cell ``cell_id`` in results tree ``against`` when its fingerprint file there names
    today's config, code and data (the data ``root`` runs on) and its bytes: a workflow run of
    this code computed it there.  None otherwise."""
    from ..data.status import data_status
    from .freshness import data_identity, fingerprint_path, is_current

    used = data_status(exp.cfg.dataset.source, probe=False).used if exp.cfg.dataset.source else None
    cell = committed_cell(exp, cell_id, against.parent) if against.name == "results" else None
    if cell is None:
        return None
    fp = against.parent / fingerprint_path("", exp, cell_id)
    return cell if is_current(exp, cell_id, data_identity(used, root) or "", fp, cell) else None


def _check(exp: Experiment, cell_id: str, root: str, scratch: str, alone: bool = False,
           against: str | None = None) -> CellCheck:
    """Recompute one cell and compare it with the committed one; ``alone``: every trial
    computed here, none taken over from the committed main cell; ``against``: a results tree
    whose copy of the cell, when this code made it, is compared instead of recomputing."""
    from ..io import write_parquet
    from .runner import default_data_path, run_cell
    from .cells import reused_trials

    t0 = time.process_time()
    rootp = Path(root)
    want = read_cell(committed_cell(exp, cell_id, rootp))
    there = computed_elsewhere(exp, cell_id, rootp, Path(against)) if against and not alone else None
    if there is not None:
        got = read_cell(there)
        same, n, n_diff, max_abs, max_rel, problem = compare(got, want)
        return CellCheck(exp.name, cell_id, same, n, n_diff, max_abs, max_rel, problem, time.process_time() - t0,
                         source=str(Path(against)), by_metric=by_metric(got, want) if not same else {})
    hit = None if alone else reused_trials(exp, exp.cell(cell_id))
    reuse = read_cell(committed_cell(exp, hit[0], rootp)) if hit else None
    data_path = default_data_path(exp)
    got = run_cell(exp, cell_id, n_jobs=1, data_path=data_path, reuse=reuse)
    out = Path(scratch) / "results" / exp.paper / exp.artefact / "cells" / f"{cell_id}.parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_parquet(got, out)
    same, n, n_diff, max_abs, max_rel, problem = compare(got, want)
    return CellCheck(exp.name, cell_id, same, n, n_diff, max_abs, max_rel, problem, time.process_time() - t0,
                     by_metric=by_metric(got, want) if not same else {})


def run(catalog: dict[str, Experiment], names: list[str] | None = None, every: bool = False, jobs: int = 1,
        record: bool = False, root: str | os.PathLike = ".", scratch: str | os.PathLike | None = None,
        echo=print, stale: bool = False, reused: bool = False, patterns: list[str] | None = None,
        against: str | os.PathLike | None = None, per_learner: bool = False) -> list[CellCheck]:
    """Check the planned cells (in ``jobs`` processes), print a line per cell and the table,
    and, with ``record``, tell the committed files (see the module docstring); ``against``: a
    results tree whose cells made by this code are compared instead of recomputing them."""
    from joblib import Parallel, delayed

    rootp = Path(root)
    scratch = Path(scratch) if scratch is not None else rootp / SCRATCH
    p = plan(catalog, names, every, rootp, stale=stale, reused=reused, patterns=patterns, per_learner=per_learner)
    for name, why in sorted(p.skipped.items()):
        echo(f"not verified: {name}: {why}")
    echo(f"verifying {len(p.cells)} cell(s) of {len({e.name for e, _ in p.cells})} artefact(s) at paper scale "
         f"in {jobs} process(es); recomputed cells in {scratch}/")
    checks: list[CellCheck] = []
    t0 = time.perf_counter()
    ag = str(against) if against is not None else None
    gen = (Parallel(n_jobs=jobs, return_as="generator_unordered")(
        delayed(_check)(e, c, str(rootp), str(scratch), reused, ag) for e, c in p.cells) if jobs != 1
        else (_check(e, c, str(rootp), str(scratch), reused, ag) for e, c in p.cells))
    from .platforms import SPREAD, current_keys, load as load_spread

    spread = load_spread(rootp)
    current = current_keys(spread, rootp)
    for k, chk in enumerate(gen, start=1):
        alg = next((c.algorithm for c in catalog[chk.experiment].all_cells if c.id == chk.cell), None)
        chk.verdict = judge(chk, spread, alg, rootp, current)
        checks.append(chk)
        moved = (f"{chk.differing}/{chk.values} values, largest difference {chk.max_abs:.3g} "
                 f"(relative {chk.max_rel:.3g})" + (f"; {chk.problem}" if chk.problem else ""))
        what = {"identical": "identical", "last bits": f"within the last bits (1e-9 relative): {moved}",
                "platform spread": f"within the platform spread recorded for it ({SPREAD}): {moved}"}.get(
            chk.verdict, f"DIFFERS: {moved}")
        how = f"computed by this code in {chk.source}" if chk.source else f"{chk.seconds:.1f} CPU s"
        echo(f"[{k}/{len(p.cells)}] {chk.experiment} {chk.cell}: {what} ({how}, "
             f"{time.perf_counter() - t0:.0f}s elapsed)")
    echo(table(checks))
    if ag is not None:
        taken = sum(bool(c.source) for c in checks)
        echo(f"{taken} of {len(checks)} cell(s) compared as computed in {ag} by this code, "
             f"{len(checks) - taken} recomputed here")
    if record:
        recorded = record_checks(catalog, checks, rootp)
        echo(f"recorded: {recorded} record(s) updated, fingerprints of the identical cells rewritten")
    return checks


def table(checks: list[CellCheck]) -> str:
    rows = ["| artefact | cells verified | identical | differing | largest difference (abs / rel) |",
            "|---|---:|---:|---:|---|"]
    by: dict[str, list[CellCheck]] = {}
    for c in checks:
        by.setdefault(c.experiment, []).append(c)
    for name in sorted(by):
        cs = by[name]
        bad = [c for c in cs if not c.identical]
        largest = (f"{max(c.max_abs for c in bad):.3g} / {max(c.max_rel for c in bad):.3g}"
                   + ("; rows differ" if any(c.problem for c in bad) else "")) if bad else "-"
        rows.append(f"| {name} | {len(cs)} | {len(cs) - len(bad)} | {len(bad)} | {largest} |")
    n_bad = sum(not c.identical for c in checks)
    bits = sum(c.verdict == "last bits" for c in checks)
    plat = sum(c.verdict == "platform spread" for c in checks)
    rows.append(f"\n{len(checks)} cell(s) verified: {len(checks) - n_bad} identical, {n_bad} differing"
                + (f" ({bits} within the last bits, 1e-9 relative; {plat} within their recorded platform spread; "
                   f"{n_bad - bits - plat} beyond)" if bits or plat else "")
                + f" (timing metrics not compared: {', '.join(sorted(TIMING_METRICS))})")
    return "\n".join(rows)


def verification_path(record_json: str | os.PathLike) -> Path:
    """Where ``rankrepro verify --record`` keeps what it verified of an artefact's cells:
    results/<paper>/<artefact>/verified.json, beside the cells -- not the record, which the
    workflow deletes before it aggregates again."""
    p = Path(record_json)
    return p.parent / p.stem / "verified.json"




def kept_verification(record_json: str | os.PathLike, cell_paths: Iterable[str | os.PathLike]) -> dict | None:
    """The verification of these cells, if ``rankrepro verify --record`` checked exactly these
    bytes: every cell it names is among ``cell_paths`` with the same sha256 (a re-aggregation
    keeps it; a recomputed cell drops it)."""
    try:
        kept = read_json(verification_path(record_json), "verification")
        by_cell = {Path(p).stem: p for p in cell_paths}
        for cell, digest in kept["cells"].items():
            if cell not in by_cell or file_digest(by_cell[cell]) != digest:
                return None
        return kept["verified"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def record_checks(catalog: dict[str, Experiment], checks: list[CellCheck], root: Path) -> int:
    """Write what was verified into the committed files (see the module docstring)."""
    from ..files import atomic_write
    from ..io import dumps
    from ..provenance import git_commit
    from .codeprint import experiment_identity
    from .freshness import fingerprint_path, write_fingerprint
    from .runner import default_data_path

    commit = git_commit(root)
    if commit.endswith("+dirty"):
        print(f"warning: the sources differ from commit {commit[:10]}: the records will say '+dirty'; "
              "commit first for a record that names the code exactly")
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    n = 0
    by: dict[str, list[CellCheck]] = {}
    for c in checks:
        by.setdefault(c.experiment, []).append(c)
    for name, cs in sorted(by.items()):
        exp = catalog[name]
        data_path = default_data_path(exp)
        for c in cs:
            if c.identical:
                write_fingerprint(exp, c.cell, data_path, root / fingerprint_path("", exp, c.cell))
        rec_path = root / "results" / f"{name}.json"
        if not rec_path.is_file():
            continue
        rec = read_json(rec_path, "record")
        rec["verified"] = {"commit": commit, "date": date, "cells": len(cs),
                           "identical": sum(c.identical for c in cs)}
        # kept beside the cells too, with their digests: the workflow deletes the record before
        # it aggregates again, and the new record takes the verification only for these bytes
        side = {"verified": rec["verified"],
                "cells": {c.cell: file_digest(committed_cell(exp, c.cell, root)) for c in cs if c.identical}}
        atomic_write(verification_path(rec_path), lambda tmp: Path(tmp).write_text(dumps(side)))
        current = not stale_cells(exp, root)  # every cell's fingerprint file matches today's
        if current:
            rec["code"] = experiment_identity(exp)
        from .integrity import seal

        atomic_write(rec_path, lambda tmp: Path(tmp).write_text(dumps(seal(rec))))
        n += 1
    return n
