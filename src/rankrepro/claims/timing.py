"""Claims about time (a ``less`` claim on a metric of :data:`rankrepro.metrics.TIMING_METRICS`):
verdicts that do not depend on what else the machine was doing.

Each learner of an artefact runs in its own cell job, so two compared timings were measured in
different processes, perhaps at different moments and under different loads.  Such a claim is
decided on the *paired* ratios, trial by trial (the trials of an artefact share their data
draws or folds): rhs_t / lhs_t, their geometric mean and its 95% Student-t interval on the logs
(:func:`rankrepro.stats.paired_ratio`).  The interval is then widened by the slow-down that
machine load can cause between two jobs, :data:`LOAD_TOLERANCE` for the metric's clock, before
it is compared with the claimed factor f:

- *held* when low / L > f: even if the rhs job ran L times slower than the lhs job because of
  load, the ratio stays above f;
- *not held* when high x L < f;
- otherwise *inconclusive*, and the evidence calls it a timing measurement with its spread: the
  ratio, its interval and the per-trial ratios.

Two runs whose loads differ by at most a factor L can then disagree only between a decided
verdict and *inconclusive*, never between *held* and *not held* (tests/test_timing_claims.py);
``scripts/timing_load.py`` measures the slow-down this machine shows under load, the evidence
for the tolerances.  The timing metrics themselves are never compared by ``rankrepro verify``.
"""

from __future__ import annotations

import math

import numpy as np

from ..stats import paired_ratio

#: how each timing metric is measured: "cpu" (time.process_time: the process's own CPU time)
#: or "wall" (time.perf_counter: elapsed time, which counts the time the job waits for a core)
CLOCKS = {
    "train_seconds": "cpu", "selected_train_seconds": "cpu", "selected_pairs_per_second": "cpu",
    "wall_seconds": "wall", "learner_seconds": "wall", "fit_seconds": "wall",
}

#: the largest slow-down of one job against another that machine load is taken to cause, per
#: clock.  CPU time is barely touched by other processes (shared caches and memory bandwidth:
#: x1.05-1.07 beside two busy processes on 2 cores); elapsed time is, as soon as there are more
#: runnable processes than cores (x1.97-2.15 in the same runs).  ``scripts/timing_load.py``
#: measures both (docs/reproducibility.md, "Claims about time").
LOAD_TOLERANCE = {"cpu": 1.5, "wall": 2.5}


def paired_values(trials, a: str, b: str, metric: str) -> tuple[np.ndarray, np.ndarray, list]:
    """The values of ``metric`` of cells ``a`` and ``b`` on the trials both have, in trial order."""
    t = trials[(trials["metric"] == metric) & trials["cell"].isin([a, b])]
    va = t[t["cell"] == a].groupby("trial")["value"].last()
    vb = t[t["cell"] == b].groupby("trial")["value"].last()
    common = sorted(set(va.index) & set(vb.index))
    return va[common].to_numpy(float), vb[common].to_numpy(float), common


def compare(trials, a: str, b: str, metric: str, factor: float) -> dict | None:
    """One (lhs, rhs) comparison of a timing claim: the paired ratio rhs / lhs, its interval,
    the tolerance and the verdict; None when the cells share fewer than one trial."""
    va, vb, common = paired_values(trials, a, b, metric)
    if len(common) == 0:
        return None
    clock = CLOCKS[metric]
    tol = LOAD_TOLERANCE[clock]
    iv = paired_ratio(va, vb)
    low = iv.low if math.isfinite(iv.low) else iv.ratio
    high = iv.high if math.isfinite(iv.high) else iv.ratio
    if low / tol > factor:
        verdict = "held"
    elif high * tol < factor:
        verdict = "not held"
    else:
        verdict = "inconclusive"
    return {"lhs": a, "rhs": b, "metric": metric, "clock": clock, "tolerance": tol, "factor": factor,
            "ratio": iv.ratio, "low": iv.low, "high": iv.high, "n": iv.n,
            "per_trial": [float(x) for x in iv.per_trial], "verdict": verdict}


def describe(c: dict, lhs_label: str, rhs_label: str) -> str:
    spread = f"{min(c['per_trial']):.2f}-{max(c['per_trial']):.2f}"
    ci = (f", 95% interval {c['low']:.2f}-{c['high']:.2f}" if math.isfinite(c["low"]) else "")
    return (f"{rhs_label} / {lhs_label} = {c['ratio']:.2f}{ci} over {c['n']} paired trials (per trial {spread}); "
            f"claimed at least {c['factor']:g}; {c['clock']} time, load tolerance x{c['tolerance']:g}")
