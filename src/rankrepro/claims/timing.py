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

Only CPU time decides a claim (:func:`decides`; a claim on an elapsed-time metric is refused
when the config loads): elapsed time can be slowed x2 or more by another process on a 2-core
machine, so a tolerance wide enough for it (it was x2.5) would leave a claim of "10 times
cheaper" undecidable below a measured ratio of 25.  Where the same span was also timed on the
wall clock (:data:`ELAPSED_OF`), its paired ratio is reported beside the verdict as a
measurement.

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

#: the elapsed-time measurements of the same span as a CPU-time metric, the first a cell has:
#: reported beside a timing claim's verdict as a measurement, never deciding it (the coactive
#: protocols time the learner's span both ways: train_seconds and learner_seconds for the
#: movies, train_seconds and wall_seconds for web search)
ELAPSED_OF = {"train_seconds": ("learner_seconds", "wall_seconds")}

#: the largest slow-down of one job against another that machine load is taken to cause, per
#: clock.  CPU time is barely touched by other processes (shared caches and memory bandwidth:
#: x1.05-1.07 beside two busy processes on 2 cores); elapsed time is, as soon as there are more
#: runnable processes than cores (x1.97-2.15 in the same runs).  ``scripts/timing_load.py``
#: measures both (docs/reproducibility.md, "Claims about time").
LOAD_TOLERANCE = {"cpu": 1.5}


def decides(metric: str) -> bool:
    """Can a claim about time be decided on ``metric``?  Only on CPU time: elapsed time counts
    the time a job waits for a core, so its verdict would depend on the machine's load."""
    return CLOCKS.get(metric) == "cpu"


def paired_values(trials, a: str, b: str, metric: str) -> tuple[np.ndarray, np.ndarray, list]:
    """The values of ``metric`` of cells ``a`` and ``b`` on the trials both have, in trial order.
    Where a side ran once (a learner deterministic given the data: the LETOR seeds protocol) and
    both have the metric by fold (``fold_<metric>``, round = the fold), they are paired by fold
    instead, each fold's value averaged over a side's trials: the folds are what the two runs
    share, and one pair would give no interval."""
    t = trials[(trials["metric"] == metric) & trials["cell"].isin([a, b])]
    va = t[t["cell"] == a].groupby("trial")["value"].last()
    vb = t[t["cell"] == b].groupby("trial")["value"].last()
    common = sorted(set(va.index) & set(vb.index))
    if min(len(va), len(vb)) == 1:
        f = trials[(trials["metric"] == f"fold_{metric}") & trials["cell"].isin([a, b])]
        fa = f[f["cell"] == a].groupby("round")["value"].mean()
        fb = f[f["cell"] == b].groupby("round")["value"].mean()
        folds = sorted(set(fa.index) & set(fb.index))
        if len(folds) >= 2:
            return fa[folds].to_numpy(float), fb[folds].to_numpy(float), [f"fold {int(k)}" for k in folds]
    return va[common].to_numpy(float), vb[common].to_numpy(float), common


def compare(trials, a: str, b: str, metric: str, factor: float) -> dict | None:
    """One (lhs, rhs) comparison of a timing claim: the paired ratio rhs / lhs, its interval,
    the tolerance and the verdict; None when the cells share fewer than one trial.  With the
    elapsed-time measurement of the same span (:data:`ELAPSED_OF`), its paired ratio too
    (``elapsed``: reported, not deciding)."""
    va, vb, common = paired_values(trials, a, b, metric)
    if len(common) == 0:
        return None
    clock = CLOCKS[metric]
    if clock not in LOAD_TOLERANCE:
        raise ValueError(f"a claim about time is decided on CPU time, not on '{metric}' ({clock} time)")
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
    out = {"lhs": a, "rhs": b, "metric": metric, "clock": clock, "tolerance": tol, "factor": factor,
           "ratio": iv.ratio, "low": iv.low, "high": iv.high, "n": iv.n,
           "per_trial": [float(x) for x in iv.per_trial], "verdict": verdict,
           "by_fold": bool(common) and isinstance(common[0], str)}
    for wall in ELAPSED_OF.get(metric, ()):
        wa, wb, wc = paired_values(trials, a, b, wall)
        if len(wc) and np.all(wa > 0) and np.all(wb > 0):
            w = paired_ratio(wa, wb)
            out["elapsed"] = {"metric": wall, "ratio": w.ratio, "low": w.low, "high": w.high, "n": w.n}
            break
    return out


def describe(c: dict, lhs_label: str, rhs_label: str) -> str:
    spread = f"{min(c['per_trial']):.2f}-{max(c['per_trial']):.2f}"
    ci = (f", 95% interval {c['low']:.2f}-{c['high']:.2f}" if math.isfinite(c["low"]) else "")
    el = c.get("elapsed")
    el = (f"; elapsed time ({el['metric']}, a measurement, not deciding): {el['ratio']:.2f}"
          + (f" ({el['low']:.2f}-{el['high']:.2f})" if math.isfinite(el["low"]) else "") if el else "")
    unit = "folds (each averaged over a side's seeds)" if c.get("by_fold") else "trials"
    return (f"{rhs_label} / {lhs_label} = {c['ratio']:.2f}{ci} over {c['n']} paired {unit} (per pair {spread}); "
            f"claimed at least {c['factor']:g}; {c['clock']} time, load tolerance x{c['tolerance']:g}{el}")


def against_timed_solver(c, r):
    """A claim about time decided on the solver the paper timed (``c.timed_solver``: an evidence
    record of that solver's own runs, as scripts/svmlight_table5.py writes it: ``runs[i]``
    with ``svm_learn.cpu_seconds`` and ``svm_learn.finished``, and the lhs learner's CPU seconds
    in the same run, ``committee_cpu_seconds``).  Each listed run gives the ratio solver / lhs;
    a run stopped at the record's CPU cap gives a lower bound.  *held* when every ratio (or
    bound) is at least the claimed factor (the evidence says "as a lower bound" where a run was
    capped), *not held* when a finished run's ratio is below it, *not evaluable* when a capped
    run's bound is below it (the cap stopped it too soon to tell).  ``r``, the comparison of
    this project's own cells (``r.timing``), is kept beside it as a finding, not deciding."""
    from pathlib import Path

    from ..files import read_json

    ts = c.timed_solver
    root = Path(__file__).resolve().parents[3]  # the checkout: the evidence records are committed
    rec = read_json(root / ts["record"], "evidence record")
    lhs = float(rec["committee_cpu_seconds"])
    fac = float(c.factor or 1.0)
    tol = LOAD_TOLERANCE["cpu"]  # one run of each: the load tolerance applies as to paired ratios
    parts, verdicts = [], []
    for i in ts["runs"]:
        run = rec["runs"][i]
        secs, done = float(run["svm_learn"]["cpu_seconds"]), bool(run["svm_learn"]["finished"])
        ratio = secs / lhs
        if done:
            verdicts.append("held" if ratio / tol >= fac else "not held" if ratio * tol < fac else "inconclusive")
            parts.append(f"C = {run['C']}: finished in {secs:.1f} CPU s, ratio {ratio:.1f}")
        else:
            verdicts.append("held" if ratio / tol >= fac else "not evaluable")
            parts.append(f"C = {run['C']}: not finished after {secs:.1f} CPU s (cap {rec.get('cpu_cap')} s), "
                         f"ratio at least {ratio:.1f}")
    capped = any("not finished" in p for p in parts)
    verdict = ("not held" if "not held" in verdicts else "not evaluable" if "not evaluable" in verdicts
               else "inconclusive" if "inconclusive" in verdicts else "held")
    how = " as a lower bound" if verdict == "held" and capped else ""
    ours = r.evidence
    r.verdict = verdict
    r.fraction = verdicts.count("held") / len(verdicts)
    r.evidence = (f"{verdict}{how}, against the solver the paper timed, {ts['name']} ({ts['record']}, one fold, "
                  f"its CPU seconds over the lhs learner's {lhs:.3f} CPU s in the same run, claimed at least "
                  f"{fac:g}, load tolerance x{tol:g}): " + "; ".join(parts) + ". Beside it, a finding that does not decide the claim, "
                  f"against this project's own solver: {ours}")
    return r
