"""The whole pipeline, timed: a clean clone of this repository's HEAD (its data hard-linked
in and ``snakemake data`` run first, untimed, as ``make reproduce`` does: environment creation
and downloads are excluded) runs ``snakemake`` at one scale from an empty results folder;
every job records its start-up and work time (``rankrepro.timing``).  Prints and writes into
docs/benchmarks.md (between the ``pipeline-bench`` markers): the wall time, the per-paper
core-minutes of the trials, and the per-job overhead (process start to start of work).  At paper scale it also keeps each
cell's seconds in rules/cell_seconds.json, which the workflow reads to start long cells first.  The
figures are also written to docs/bench/pipeline-<scale>.json (with the date, commit, machine and
load average), which scripts/bench_page.py puts at the top of docs/benchmarks.md.

    python scripts/bench_pipeline.py --scale smoke --cores 2 --batch-cells --repeat  # as `make smoke` (batch_cells=paper)
    python scripts/bench_pipeline.py --scale paper --cores 2      # ~35 min on 2 cores
    python scripts/bench_pipeline.py --scale paper --cores 2 --rev cf59f50   # an earlier commit, by this script

``--rev REV`` runs the workflow of an earlier commit (its code, configs and Snakefile, checked
out in the scratch clone) with this script's timing and summary: a before/after on one machine
is two runs of the same script.  Its record goes to docs/bench/pipeline-<scale>-<rev>.json and
nothing else is written.  The cells of the protocol ``letor_seeds`` (Elsas et al.'s LETOR
artefacts replicated over the learners' seeds, added after cf59f50) are counted apart in the
breakdown, so that the cells that existed before can be compared on their own.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- pipeline-bench:start -->", "<!-- pipeline-bench:end -->"


def run(scale: str, cores: int, keep: bool, batch: str | None = None, repeat: bool = False,
        rev: str | None = None) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="rankrepro-bench-"))
    clone = tmp / "repo"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True)
    if rev:
        subprocess.run(["git", "checkout", "-q", "--detach", rev], cwd=clone, check=True)
    ran = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True,
                         check=True).stdout.strip()
    seeds = _seeds_experiments(clone)
    # a clean results folder: nothing committed counts as done
    for d in ("results", "figures", "runs"):
        shutil.rmtree(clone / d, ignore_errors=True)
    _restore_inputs(clone)
    # the fetched and processed data as hard links (instant; the data rules write through a
    # temporary file and a rename, so nothing here can change this checkout's files), then
    # `make reproduce`'s first step, untimed: the clone's scripts are newer than these files, so
    # Snakemake verifies and preprocesses them again.  An empty catalog cache: what the data
    # step leaves (the paper scale's catalog) is what `make reproduce` finds.
    (clone / "data").mkdir(exist_ok=True)
    for d in ("raw", "processed"):
        if (ROOT / "data" / d).is_dir():
            subprocess.run(["cp", "-al", str(ROOT / "data" / d), str(clone / "data" / d)], check=True)
    times = tmp / "jobs.jsonl"
    env = {**os.environ, "PYTHONPATH": str(clone / "src"), "RANKREPRO_CACHE_DIR": str(tmp / "cache")}
    snakemake = str(Path(sys.executable).with_name("snakemake"))
    subprocess.run([snakemake, "--cores", str(cores), "data"], cwd=clone, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env["RANKREPRO_JOB_TIMES"] = str(times)
    cmd = [snakemake, "--cores", str(cores), "--config", f"scale={scale}"] + ([f"batch_cells={batch}"] if batch else [])
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=clone, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    rewall = None
    if repeat:
        # the same run again from a clean results folder, as a second `make smoke` runs: the
        # catalog, the arrays kept beside the data and Numba's compiled kernels are kept
        for d in ("results", "figures", "runs"):
            shutil.rmtree(clone / d, ignore_errors=True)
        _restore_inputs(clone)
        env["RANKREPRO_JOB_TIMES"] = str(tmp / "jobs-repeat.jsonl")
        t1 = time.perf_counter()
        subprocess.run(cmd, cwd=clone, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rewall = time.perf_counter() - t1
    jobs = [json.loads(line) for line in times.read_text().splitlines()]
    if keep:
        print(f"kept: {tmp} (the jobs' times: {times}; summarise them again with --from-jobs {times} "
              f"--wall-s {wall:.1f})")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    r = summarize(jobs, wall, rewall, scale, cores, batch, repeat, seeds=seeds, twins=not rev)
    # the commit the clone ran (ROOT's HEAD may move while a run of an hour goes on)
    r["commit"] = rev or ran
    return r


def _seeds_experiments(clone: Path) -> set[str]:
    """The experiments (paper/artefact) of protocol ``letor_seeds`` in ``clone``'s configs: their
    own file or the file its defaults name first says so."""
    out = set()
    root = clone / "config" / "experiment"
    for f in root.glob("*/*.yaml"):
        if f.name.startswith("_"):
            continue
        text = f.read_text()
        parents = re.findall(r"^\s*-\s*/experiment/([\w/]+)\s*$", text, flags=re.M)
        texts = [text] + [(root / f"{p}.yaml").read_text() for p in parents if (root / f"{p}.yaml").is_file()]
        if any(re.search(r"^\s*protocol:\s*letor_seeds\b", t, flags=re.M) for t in texts):
            out.add(f"{f.parent.name}/{f.stem}")
    return out


#: what the workflow writes under results/ (everything else there is an input it reads: the
#: verification records of `rankrepro verify` and the evidence records of scripts/)
MADE = re.compile(r"^results/(report/.*|arena/comparison/.*|[^/]+/[^/]+/cells/.*|[^/]+/[^/]+/all_cells\.parquet"
                  r"|[^/]+/[^/]+\.(csv|md|json|config\.yaml))$")


def _restore_inputs(clone: Path) -> None:
    """Put back the committed files under results/ that no rule writes (a diagnosis quoting an
    evidence record, e.g. results/yu2006/tables/fit_cap.json, fails without it at paper scale)."""
    files = subprocess.run(["git", "ls-files", "results"], cwd=clone, capture_output=True, text=True,
                           check=True).stdout.split()
    keep = [f for f in files if not MADE.match(f)]
    if keep:
        subprocess.run(["git", "checkout", "--", *keep], cwd=clone, check=True)


def _core_minutes(j: dict) -> float:
    """CPU time for a one-core job; for a job with more cores, the cores it held while it
    worked (its CPU time would miss loky's reused trial workers)."""
    th = j.get("threads", 1)
    return (j["cpu_s"] if th == 1 else th * j["work_s"]) / 60


#: the jobs that run trials: one per cell, one per pack of short cells (run_cells), one per
#: artefact (batch_cells=true), one per paper (batch_cells=paper, `make smoke`: its records,
#: figures and comparisons included)
CELL_RULES = ("run_cell", "run_cells", "run_all_cells", "run_paper")


def _shares(j: dict) -> list[tuple[str | None, float]]:
    """(cell, share) of a job's core-minutes: a pack's (run_cells) go to its cells in proportion
    to their seconds of work (its start-up shared the same way), any other job's to its cell."""
    members = j.get("cells") or []
    if j["rule"] != "run_cells" or not members:
        return [(j.get("cell"), 1.0)]
    work = [max(float(c.get("work_s") or 0.0), 0.0) for c in members]
    total = sum(work)
    return [(c["cell"], (w / total) if total > 0 else 1.0 / len(members)) for c, w in zip(members, work)]


SEEDS = " (LETOR seeds)"


def _paper(j: dict, seeds: set[str]) -> str:
    """The row of the breakdown a job's minutes go to: its paper, with the ``letor_seeds``
    experiments apart."""
    return j["experiment"].split("/")[0] + (SEEDS if j["experiment"] in seeds else "")


def summarize(jobs: list[dict], wall: float, rewall: float | None, scale: str, cores: int, batch: str | None,
              repeat: bool, seeds: set[str] = frozenset(), twins: bool = True) -> dict:
    """The figures of a run from its jobs' time records (:mod:`rankrepro.timing`); ``seeds``:
    the experiments counted apart (protocol ``letor_seeds``); ``twins``: count the cells this
    checkout's workflow takes from a twin (off for another commit's run)."""
    cells = [j for j in jobs if j["rule"] in CELL_RULES]
    per_paper = defaultdict(float)
    for j in cells:
        per_paper[_paper(j, seeds)] += _core_minutes(j)
    startup = [j["startup_s"] for j in jobs if j["startup_s"] is not None]
    slow = sorted(cells, key=lambda j: -j["work_s"])[:10]
    # how busy the cores were: the jobs' time (start-up and work) over wall time x cores, and
    # the serial tail, from the last moment `cores` jobs ran at once to the end
    busy = sum((j["startup_s"] or 0.0) + j["work_s"] for j in jobs) / (wall * cores)
    tail = None
    if all("end" in j for j in jobs):
        ev = sorted([(j["end"] - j["work_s"] - (j["startup_s"] or 0.0), 1) for j in jobs] +
                    [(j["end"], -1) for j in jobs])
        running, full_until = 0, ev[0][0]
        for t, d in ev:
            if running >= cores:
                full_until = t
            running += d
        tail = ev[-1][0] - full_until
    return {"jobs_raw": jobs, "scale": scale, "cores": cores, "batch_cells": batch, "repeat": repeat,
            "wall_s": wall, "repeat_wall_s": rewall, "jobs": len(jobs), "cell_jobs": len(cells),
            "core_minutes": dict(sorted(per_paper.items())), "startup_median_s": statistics.median(startup),
            "startup_total_min": sum(startup) / 60, "busy": busy, "tail_s": tail,
            "slowest": [(j["experiment"], j["cell"] or (f"a pack of {len(j['cells'])} cells" if j.get("cells") else None),
                         j["work_s"]) for j in slow],
            "where": where_the_time_goes(jobs, scale, seeds, twins), "seeds_experiments": sorted(seeds)}


def where_the_time_goes(jobs: list[dict], scale: str, seeds: set[str] = frozenset(), twins: bool = True) -> dict:
    """Core-minutes by paper and kind of cell (the main cells, the sensitivity cells of the
    open protocol choices), the start-up of every job, and the work of the jobs that run no
    trial (records, figures, the arena's comparisons, the report)."""
    rows = defaultdict(lambda: {"main": 0.0, "sensitivity": 0.0, "jobs": 0})
    for j in jobs:
        if j["rule"] in CELL_RULES:
            r = rows[_paper(j, seeds)]
            for cell, share in _shares(j):
                r["sensitivity" if "~" in (cell or "") else "main"] += share * _core_minutes(j)
            r["jobs"] += 1
    others = [j for j in jobs if j["rule"] not in CELL_RULES]
    other = sum(_core_minutes(j) for j in others)
    startup = sum(j["startup_s"] or 0.0 for j in jobs) / 60
    # the cells this checkout's workflow takes from a twin instead of computing them
    # (pipeline.cells.twin_cells): what they cost when they were computed in this run
    twins = _twins(jobs, scale) if twins else set()
    # (their work: a copy still starts a job)
    twin_min = sum(share * (_core_minutes(j) - (j["startup_s"] or 0.0) / 60) for j in jobs
                   if j["rule"] in ("run_cell", "run_cells")
                   for cell, share in _shares(j) if (j["experiment"], cell) in twins)
    twin_jobs = sum(1 for j in jobs if j["rule"] in ("run_cell", "run_cells")
                    and any((j["experiment"], cell) in twins for cell, _ in _shares(j)))
    return {"papers": dict(sorted(rows.items())), "other_min": other, "other_jobs": len(others), "startup_min": startup,
            "twins": len(twins), "twin_jobs": twin_jobs, "twin_min": twin_min}


def _twins(jobs: list[dict], scale: str) -> set:
    if not any(j["rule"] in ("run_cell", "run_cells") for j in jobs):
        return set()  # one job per artefact or paper (batch_cells): every cell computed
    from rankrepro.data.status import data_status
    from rankrepro.pipeline.catalog import default_cache_dir, load_catalog
    from rankrepro.pipeline.cells import twin_cells

    cat = load_catalog(scale, config_dir=ROOT / "config", cache_dir=default_cache_dir())
    used = {n: s.used for n, e in cat.items() for s in [data_status(e.cfg.dataset.source, probe=False)] if s.runnable}
    return set(twin_cells(cat, used))


def compare(before: dict, after: dict) -> dict:
    """The numbers of a before/after table (two records of this script at one scale): per row
    of the breakdown, core-minutes of the main and sensitivity cells and cell jobs before and
    after and their ratio; the jobs that run no trial; the totals, with and without the
    ``letor_seeds`` experiments; the wall times.  Kept in the after record, so that the page
    (scripts/bench_page.py) prints numbers a record holds."""
    wb, wa = before.get("where") or {}, after.get("where") or {}
    pb, pa = wb.get("papers", {}), wa.get("papers", {})
    rows = []
    for p in sorted(set(pb) | set(pa)):
        b, a = pb.get(p), pa.get(p)
        cb = b["main"] + b["sensitivity"] if b else None
        ca = a["main"] + a["sensitivity"] if a else None
        rows.append({"paper": p, "before": b, "after": a, "ratio": ca / cb if cb and ca else None})
    ob, oa = wb.get("other_min", 0.0), wa.get("other_min", 0.0)
    tb = sum(v["main"] + v["sensitivity"] for v in pb.values()) + ob
    ta = sum(v["main"] + v["sensitivity"] for v in pa.values()) + oa
    seeds = sum(v["main"] + v["sensitivity"] for p, v in pa.items() if p.endswith(SEEDS))
    # the before run's own letor_seeds cells, when its commit had them (0 before they existed)
    seeds_before = sum(v["main"] + v["sensitivity"] for p, v in pb.items() if p.endswith(SEEDS))
    return {"before_commit": before["commit"], "before_date": before["date"], "before_command": before["command"],
            "before_load_at_end": (before.get("load_average_start") or [None])[0],
            "rows": rows, "other_before": ob, "other_after": oa, "other_jobs_before": wb.get("other_jobs"),
            "other_jobs_after": wa.get("other_jobs"), "other_ratio": oa / ob if ob else None,
            "total_before": tb, "total_after": ta, "ratio": ta / tb, "seeds_after": seeds, "seeds_before": seeds_before,
            "total_before_without_seeds": tb - seeds_before, "total_after_without_seeds": ta - seeds,
            "ratio_without_seeds": (ta - seeds) / (tb - seeds_before),
            "jobs_before": before["jobs"], "jobs_after": after["jobs"],
            "wall_before_min": before["wall_s"] / 60, "wall_after_min": after["wall_s"] / 60,
            "wall_ratio": after["wall_s"] / before["wall_s"]}


def add_comparisons(folder: Path, scale: str = "paper") -> list[str]:
    """Put into ``pipeline-<scale>.json`` the comparison with every ``pipeline-<scale>-<rev>.json``
    beside it of the same date and machine (:func:`compare`); returns the commits compared with."""
    after_path = folder / f"pipeline-{scale}.json"
    if not after_path.is_file():
        return []
    after = json.loads(after_path.read_text())
    # a before/after is two runs of one day on one machine: an earlier day's run (another load,
    # another machine state) stays in the runs table, not in a comparison
    befores = [json.loads(p.read_text()) for p in sorted(folder.glob(f"pipeline-{scale}-*.json"))]
    comps = [compare(b, after) for b in befores
             if b.get("date") == after.get("date") and b.get("machine") == after.get("machine")]
    after["before_after"] = comps
    after_path.write_text(json.dumps(after, indent=1) + "\n")
    return [c["before_commit"] for c in comps]


def _wall(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def markdown(r: dict) -> str:
    flags = "".join(f" --{k}" for k in ("batch-cells", "repeat") if r.get(k.replace("-", "_")))
    if r.get("batch_cells") not in (None, "paper"):
        flags = flags.replace("--batch-cells", f"--batch-cells {r['batch_cells']}")
    lines = [f"Whole pipeline at scale **{r['scale']}** on {r['cores']} cores from a clean results folder "
             f"(`python scripts/bench_pipeline.py --scale {r['scale']} --cores {r['cores']}{flags}`): "
             f"wall time **{_wall(r['wall_s'])}**, {r['jobs']} jobs ({r['cell_jobs']} running trials); "
             f"per-job overhead (process start to start of work) median **{r['startup_median_s']:.2f} s**, "
             f"{r['startup_total_min']:.1f} core-minutes in all; cores busy {100 * r['busy']:.0f}% of the wall time"
             + (f", serial tail (fewer jobs than cores until the end) {r['tail_s'] / 60:.1f} min." if r["tail_s"]
                is not None else ".")
             + (f" The same run again from a clean results folder (catalog, arrays kept beside the data and "
                f"compiled kernels kept, as a second run finds them): **{r['repeat_wall_s']:.0f} s**."
                if r.get("repeat_wall_s") else ""), "",
             "| paper | trial core-minutes |", "|---|---|"]
    lines += [f"| {p} | {m:.1f} |" for p, m in r["core_minutes"].items()]
    lines += [f"| all | {sum(r['core_minutes'].values()):.1f} |", "", "Slowest cell jobs:", "",
              "| experiment | cell | wall s |", "|---|---|---|"]
    lines += [f"| {e} | {c or '(all cells)'} | {s:.1f} |" for e, c, s in r["slowest"]]
    w = r.get("where")
    if w:
        total = sum(v["main"] + v["sensitivity"] for v in w["papers"].values()) + w["other_min"]
        lines += ["", "Where the core-minutes go (the CPU time of every job's process, its start-up included; the "
                  "sensitivity cells rerun main cells under the open protocol choices' other values):", "",
                  "| paper | main cells | sensitivity cells | cell jobs |", "|---|---|---|---|"]
        lines += [f"| {p} | {v['main']:.1f} | {v['sensitivity']:.1f} | {v['jobs']} |" for p, v in w["papers"].items()]
        lines += [f"| records, figures, comparisons, report | {w['other_min']:.1f} | | {w['other_jobs']} |",
                  f"| **all** | **{total:.1f}** | | {r['jobs']} |", "",
                  f"Of this, the jobs' start-up (process start to start of work, wall time) is about "
                  f"{w['startup_min']:.1f} core-minutes. On {r['cores']} cores no schedule can take less than "
                  f"{total / r['cores']:.1f} min of wall time for this work."]
        if w.get("twin_jobs"):
            left = total - w["twin_min"]
            lines += ["", f"Of these, {w['twin_jobs']} cell jobs ({w['twin_min']:.1f} core-minutes of work) compute "
                      "what another cell computes; this checkout's workflow takes their results from that cell "
                      "instead (`pipeline.cells.twin_cells`, a job that copies): without that work the run needs "
                      f"{left:.1f} core-minutes, at least {left / r['cores']:.1f} min on {r['cores']} cores."]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", default="smoke")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--keep", action="store_true", help="keep the scratch clone")
    ap.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    ap.add_argument("--batch-cells", nargs="?", const="paper", choices=("paper", "true"),
                    help="one job per paper (paper, the default: as `make smoke` runs) or per artefact (true); "
                         "implies --no-write")
    ap.add_argument("--repeat", action="store_true",
                    help="time a second run from a clean results folder too (what is kept between runs kept)")
    ap.add_argument("--from-jobs", type=Path, metavar="JOBS_JSONL",
                    help="summarise a kept run's job times again (with --wall-s, its wall time) instead of running")
    ap.add_argument("--wall-s", type=float, help="the wall time of the run given by --from-jobs")
    ap.add_argument("--compare", action="store_true",
                    help="only put into docs/bench/pipeline-<scale>.json its comparison with the earlier commits' "
                         "records beside it (pipeline-<scale>-<rev>.json); a paper-scale run does it at its end")
    ap.add_argument("--rev", help="run an earlier commit's workflow (its record: docs/bench/pipeline-<scale>-<rev>.json; "
                                  "nothing else written)")
    a = ap.parse_args()
    a.no_write = a.no_write or bool(a.batch_cells)
    if a.compare:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_common import RECORDS

        print(f"compared with: {', '.join(add_comparisons(RECORDS, a.scale)) or 'no earlier record'}")
        return
    if a.rev:
        a.rev = subprocess.run(["git", "rev-parse", "--short", a.rev], cwd=ROOT, capture_output=True, text=True,
                               check=True).stdout.strip()
    if a.from_jobs:
        if a.wall_s is None:
            ap.error("--from-jobs needs --wall-s (the run's wall time, printed when it was kept)")
        jobs = [json.loads(line) for line in a.from_jobs.read_text().splitlines()]
        r = summarize(jobs, a.wall_s, None, a.scale, a.cores, a.batch_cells, False)
    else:
        r = run(a.scale, a.cores, a.keep, a.batch_cells, a.repeat, rev=a.rev)
    md = markdown(r)
    print(md)
    doc = ROOT / "docs" / "benchmarks.md"
    if not a.no_write and not a.rev and doc.is_file():
        text = doc.read_text()
        block = f"{START}\n<!-- scale {a.scale} -->\n{md}\n{END}"
        if START in text:
            head, rest = text.split(START, 1)
            text = head + block + rest.split(END, 1)[1]
        else:
            text = text.rstrip() + "\n\n## The whole pipeline\n\n" + block + "\n"
        doc.write_text(text)
    if not a.no_write:
        # the record scripts/bench_page.py reads (the top of docs/benchmarks.md); an earlier
        # commit's run (--rev) gets its own, and nothing else is written
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_common import stamp, write_record

        rec = {k: v for k, v in r.items() if k != "jobs_raw"}
        rec["core_minutes_all"] = sum(r["core_minutes"].values())
        w = r.get("where") or {}
        if w:
            rec["core_minutes_every_job"] = sum(v["main"] + v["sensitivity"] for v in w["papers"].values()) + w[
                "other_min"]
        st = stamp()
        if r.get("commit"):  # the commit the clone ran, not the checkout's HEAD when the run ended
            st["commit_of_script"], st["commit"] = st.get("commit"), r["commit"]
        cmd = f"python scripts/bench_pipeline.py --scale {a.scale} --cores {a.cores}" + (f" --rev {a.rev}" if a.rev else "")
        about = (f"scripts/bench_pipeline.py --rev {a.rev}: the workflow of commit {a.rev} from a clean results folder "
                 "in a fresh clone, timed by this script" if a.rev else
                 "scripts/bench_pipeline.py: the whole pipeline from a clean results folder in a fresh clone")
        path = write_record(f"pipeline-{a.scale}-{a.rev}.json" if a.rev else f"pipeline-{a.scale}.json", {
            "about": about, "command": cmd, **st, **({"from_jobs": str(a.from_jobs)} if a.from_jobs else {}), **rec})
        print(f"{path.relative_to(ROOT)} written")
        if a.rev:
            return
        done = add_comparisons(path.parent, a.scale)
        if done:
            print(f"{path.relative_to(ROOT)}: compared with {', '.join(done)}")
    if not a.no_write and a.scale == "paper":
        # the measured seconds order the next runs' cells (long first: rankrepro.pipeline.schedule)
        from rankrepro.pipeline.schedule import write_seconds

        n = write_seconds(r["jobs_raw"], ROOT / "rules" / "cell_seconds.json",
                          note=f"measured {time.strftime('%Y-%m-%d')} on {a.cores} cores")
        print(f"rules/cell_seconds.json: {n} cells")


if __name__ == "__main__":
    main()
