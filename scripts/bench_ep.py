"""The GP models' EP, old code against new (issue 46 item 2): the main GPOR / CGPOR cells of
Yu, Yu & Tresp (2006) Tables 1-2, every draw, with the pipeline's specs and seeds
(:func:`rankrepro.pipeline.runner.trial_spec`, as ``scripts/gp_fit_cap.py``), run by two
versions of ``src/`` in the same session, alternating, one BLAS thread, one process per cell
and version.

    python scripts/bench_ep.py --ref main [--new WORKTREE] [--repeat 3] [--cells cgpor-n_items400 ...]

Prints, per cell, the CPU seconds (``time.process_time`` of each trial's ``gp_trial``, the
minimum over the repeats, summed over the draws) of each version and their ratio, and each
version's mean MAE and zero-one error against the committed cells
(``results/yu2006/tables/cells/<cell>.parquet``): the difference as a share of the committed
cell's 95% Student-t half-width over its draws (the rule for numbers that move: at most 5%),
and whether every trial's numbers are equal bit for bit.  ``--ref`` is exported with
``git archive`` into a temporary folder; ``--new`` (default: this checkout) is used as it is.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CELLS = ["cgpor-n_items400", "cgpor-n_items100", "gpor-n_items400", "gpor-n_items100"]
ARTEFACT = "yu2006/tables"

_CHILD = r"""
import json, sys, time
from threadpoolctl import threadpool_limits
from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.runner import default_data_path, trial_spec
from rankrepro.protocols.gp import gp_trial
exp = load_experiment(sys.argv[1]); dp = default_data_path(exp); cell = exp.cell(sys.argv[2])
for t in range(exp.n_trials):
    spec = trial_spec(exp, cell, t, dp)
    with threadpool_limits(limits=1, user_api="blas"):
        t0 = time.process_time(); rows = gp_trial(spec); cpu = time.process_time() - t0
    print(json.dumps({"trial": t, "cpu": cpu, "rows": {k: v for k, _, v in rows}}), flush=True)
"""


def run(src: Path, cell: str, root: Path) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, "-c", _CHILD, ARTEFACT, cell], cwd=root, env=env, check=True,
                         capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def half_width(v: np.ndarray) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref", default="main", help="git revision of the old code")
    ap.add_argument("--new", type=Path, default=Path.cwd(), help="checkout of the new code (its src/ is used)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cells", nargs="*", default=CELLS)
    args = ap.parse_args(argv)
    import pandas as pd

    root = args.new.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(f"git -C {root} archive {args.ref} src | tar -x -C {tmp}", shell=True, check=True)
        srcs = {"old": Path(tmp) / "src", "new": root / "src"}
        got: dict = {}
        for rep in range(args.repeat):
            for cell in args.cells:
                for ver in (("old", "new") if rep % 2 == 0 else ("new", "old")):
                    for r in run(srcs[ver], cell, root):
                        got.setdefault((cell, ver, r["trial"]), []).append(r)
                    print(f"rep {rep + 1}/{args.repeat} {cell} {ver} done", file=sys.stderr, flush=True)
    print("| cell | old CPU s | new CPU s | old / new |\n|---|---:|---:|---:|")
    tot = {"old": 0.0, "new": 0.0}
    for cell in args.cells:
        cpu = {ver: sum(min(r["cpu"] for r in got[(cell, ver, t)]) for (c, v, t) in got if c == cell and v == ver)
               for ver in ("old", "new")}
        tot = {k: tot[k] + cpu[k] for k in tot}
        print(f"| {cell} | {cpu['old']:.1f} | {cpu['new']:.1f} | {cpu['old'] / cpu['new']:.2f} |")
    print(f"| all | {tot['old']:.1f} | {tot['new']:.1f} | {tot['old'] / tot['new']:.2f} |\n")
    print("| cell | metric | committed mean | old mean | new mean | new - committed | half-width | share |"
          " old = new, every trial |\n|---|---|---:|---:|---:|---:|---:|---:|---|")
    worst = 0.0
    for cell in args.cells:
        d = pd.read_parquet(root / "results" / ARTEFACT / "cells" / f"{cell}.parquet")
        for m in ("mae", "zero_one"):
            committed = d[d.metric == m].sort_values("trial").value.to_numpy()
            trials = sorted({t for (c, _, t) in got if c == cell})
            vals = {ver: np.array([got[(cell, ver, t)][0]["rows"][m] for t in trials]) for ver in ("old", "new")}
            same = all(r["rows"][m] == got[(cell, "old", t)][0]["rows"][m]
                       for t in trials for ver in ("old", "new") for r in got[(cell, ver, t)])
            hw = half_width(committed)
            diff = abs(vals["new"].mean() - committed.mean())
            worst = max(worst, diff / hw)
            print(f"| {cell} | {m} | {committed.mean():.6f} | {vals['old'].mean():.6f} | {vals['new'].mean():.6f} |"
                  f" {diff:.2e} | {hw:.5f} | {diff / hw:.4f} | {'yes' if same else 'no'} |")
    print(f"\nlargest |new - committed| / half-width: {worst:.4f} (the rule: at most 0.05)")
    return 0 if worst <= 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())
