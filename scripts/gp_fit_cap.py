"""How often the GPOR models' search for the thresholds and sigma stops at its L-BFGS iteration cap
(Yu, Yu & Tresp 2006 Tables 1-2; ``GPModel.param_fit_iters``, 50 in the main cells).

Each EM iteration of GPOR / CGPOR takes the thresholds and sigma of every user towards the
cavity-fixed optimum of the EP evidence in one bounded L-BFGS problem; this script re-runs the
main GPOR and CGPOR cells of the committed experiment, every draw (the same specs and seeds as the
pipeline's, so the fits are the committed cells' fits), and counts the searches that stopped at
the cap rather than at L-BFGS's own convergence test, and records the fitted noise sigma (median and
quartiles over users and draws).  The effect of the cap on the errors is
the sensitivity choice ``likelihood_fit`` of the experiment (its ``converged`` cells).

    python scripts/gp_fit_cap.py [--out results/yu2006/tables/fit_cap.json] [--jobs 2]

``converged_sample`` says why: draw 0 of each of these cells refitted with every search run to
convergence, and how many users' fitted noise sigma or threshold gaps then sit on a bound of the
search (where the cavity-fixed optimum lies at the edge, a capped search is still moving).

The record names each cell's fingerprint: when the code or the config changes, the fingerprints
no longer match the committed cells' and the record is stale (tests/test_gp_fit_cap.py checks).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

ARTEFACT = "yu2006/tables"
OUT = Path("results/yu2006/tables/fit_cap.json")


def _count(spec, trial: int) -> tuple[int, int, int, list[float]]:
    from threadpoolctl import threadpool_limits

    from rankrepro.protocols.gp import gp_fit

    with threadpool_limits(limits=1, user_api="blas"):
        fit = gp_fit(spec)[0]
    return trial, fit.param_fits, fit.param_fits_capped, [float(x) for x in fit.sigma]


def fit_cap_record(exp_name: str = ARTEFACT, jobs: int = 1, cells: list[str] | None = None) -> dict:
    from rankrepro.pipeline.catalog import load_experiment
    from rankrepro.pipeline.cells import cell_fingerprint
    from rankrepro.pipeline.runner import default_data_path, trial_spec

    exp = load_experiment(exp_name)
    data_path = default_data_path(exp)
    # the main cells with the ordinal likelihood (GPOR, CGPOR)
    chosen = ([c for c in exp.cells if c.params.get("likelihood") == "ordinal"] if cells is None
              else [exp.cell(c) for c in cells])
    out = {"about": __doc__.split("\n\n")[0].replace("\n", " "),
           "command": "python scripts/gp_fit_cap.py", "artefact": exp_name, "cells": {}}
    for cell in chosen:
        # the specs the pipeline builds (same seeds), made once here; each job only fits
        counts = Parallel(n_jobs=jobs)(delayed(_count)(trial_spec(exp, cell, t, data_path), t)
                                       for t in range(exp.n_trials))
        fits = sum(c[1] for c in counts)
        capped = sum(c[2] for c in counts)
        sigmas = np.concatenate([c[3] for c in counts])
        out["cells"][cell.id] = {
            "fingerprint": cell_fingerprint(exp, cell),
            "param_fit_iters": int(cell.params.get("param_fit_iters", 50)),
            "searches": fits, "capped": capped, "capped_share": capped / fits if fits else 0.0,
            # the fitted noise sigma of every user and draw: its median and quartiles
            "sigma_median": float(np.median(sigmas)),
            "sigma_quartiles": [float(x) for x in np.percentile(sigmas, [25, 75])],
            "per_draw": [{"trial": t, "searches": n, "capped": k} for t, n, k, _ in sorted(counts)]}
        print(f"{cell.id}: {capped} of {fits} searches stopped at the cap", flush=True)
    return out


#: the searches' bounds (algorithms.ep.fit_ordinal_params): the noise sigma in [1e-3, 10], the gaps
#: between thresholds in [1e-3, 20]
SIGMA_LOW, GAP_LOW, GAP_HIGH = 1e-3, 1e-3, 20.0
CONVERGED_ITERS = 2000


def _at_bounds(spec, trial: int) -> dict:
    """One fit with every search run to L-BFGS's own convergence test (``CONVERGED_ITERS``, the
    likelihood_fit reading 'converged'): how many searches still stopped at the cap, and how
    many users' fitted parameters sit on a bound of the search (no interior optimum there)."""
    import dataclasses

    from threadpoolctl import threadpool_limits

    from rankrepro.protocols.gp import gp_fit

    spec = dataclasses.replace(spec, params={**dict(spec.params), "param_fit_iters": CONVERGED_ITERS})
    with threadpool_limits(limits=1, user_api="blas"):
        fit = gp_fit(spec)[0]
    gaps = np.diff(fit.thresholds, axis=1)
    return {"trial": trial, "users": int(len(fit.sigma)), "searches": fit.param_fits,
            "capped": fit.param_fits_capped,
            "sigma_at_lower_bound": int(np.sum(np.isclose(fit.sigma, SIGMA_LOW, rtol=1e-6))),
            "gap_at_upper_bound": int(np.sum(np.isclose(gaps, GAP_HIGH, rtol=1e-6))),
            "gap_at_lower_bound": int(np.sum(np.isclose(gaps, GAP_LOW, rtol=1e-6))),
            "users_on_a_bound": int(np.sum(np.isclose(fit.sigma, SIGMA_LOW, rtol=1e-6)
                                           | np.any(np.isclose(gaps, GAP_HIGH, rtol=1e-6)
                                                    | np.isclose(gaps, GAP_LOW, rtol=1e-6), axis=1)))}


def converged_sample(exp_name: str = ARTEFACT, jobs: int = 1, trial: int = 0) -> dict:
    """Why the capped searches stop at the cap: draw ``trial`` of every GPOR / CGPOR main cell
    refitted with the searches run to convergence (:func:`_at_bounds`)."""
    from rankrepro.pipeline.catalog import load_experiment
    from rankrepro.pipeline.runner import default_data_path, trial_spec

    exp = load_experiment(exp_name)
    data_path = default_data_path(exp)
    chosen = [c for c in exp.cells if c.params.get("likelihood") == "ordinal"]
    rows = Parallel(n_jobs=jobs)(delayed(_at_bounds)(trial_spec(exp, c, trial, data_path), trial) for c in chosen)
    import os
    import platform

    from threadpoolctl import threadpool_info

    blas = [f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}" for i in threadpool_info()
            if i.get("user_api") == "blas"]
    return {"machine": platform.platform(), "blas": blas,
            "kernel_env": {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES")
                           if k in os.environ},
            "about": ("Draw 0 of every main GPOR / CGPOR cell refitted with each search run to L-BFGS's own "
                      f"convergence test (at most {CONVERGED_ITERS} iterations): the searches that still hit "
                      "the cap, and the users whose fitted noise sigma or threshold gaps sit on a bound of the "
                      f"search (sigma >= {SIGMA_LOW}, gaps in [{GAP_LOW}, {GAP_HIGH}])."),
            "cells": {c.id: r for c, r in zip(chosen, rows)}}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--converged-only", action="store_true",
                    help="recompute only the record's converged_sample (the counts of the committed fits kept)")
    args = ap.parse_args(argv)
    if args.converged_only:
        record = json.loads(args.out.read_text())
    else:
        record = fit_cap_record(jobs=args.jobs)
    record["converged_sample"] = converged_sample(jobs=args.jobs)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
