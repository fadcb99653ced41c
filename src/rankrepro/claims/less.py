"""``less``: every lhs cell's value is below every rhs cell's (paired by ``match``), at the
last round or at every logged round in ``rounds``, ``factor`` for lhs x factor < rhs; tested
on the per-trial values (:mod:`rankrepro.claims.testing`; ``significant`` is what every claim
now asks).  On a timing metric the claim is decided on the
paired per-trial ratios with a tolerance for machine load (:mod:`rankrepro.claims.timing`)."""

from __future__ import annotations

import pandas as pd

from ..metrics import METRICS, TIMING_METRICS
from .. import metric_names as _metric_names  # noqa: F401 - every registered metric name
from . import timing
from . import testing
from . import units
from .base import Claim, ClaimKind, Context, fmt_round, result


def _compatible(a, b, match) -> bool:
    for k in match:
        if k in a.params and k in b.params and a.params[k] != b.params[k]:
            return False
    return True


class Less(ClaimKind):
    name = "less"
    reads = ("rhs", "match", "significant", "factor", "timed_solver")

    def check(self, claim, chk):
        chk.check_selector("rhs", claim.rhs)
        if claim.timed_solver is not None:
            ts = claim.timed_solver
            chk.require("timed_solver", claim.metric in TIMING_METRICS,
                        "only a claim about time can be decided on another solver's timing")
            chk.require("timed_solver", set(ts) <= {"name", "record", "runs"} and {"name", "record", "runs"} <= set(ts),
                        f"needs exactly the keys name, record and runs (got {sorted(ts)})")
            chk.require("timed_solver.runs", isinstance(ts.get("runs"), list) and len(ts.get("runs") or []) > 0
                        and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in ts.get("runs") or []),
                        "a non-empty list of run indices of the record")
            rec = str(ts.get("record", ""))
            chk.require("timed_solver.record", rec.startswith("results/") and rec.endswith(".json") and ".." not in rec,
                        f"an evidence record under results/ (a .json path relative to the checkout), got {rec!r}")
        if claim.metric in TIMING_METRICS:
            chk.require("metric", timing.decides(claim.metric),
                        f"a claim about time is decided on CPU time; '{claim.metric}' is elapsed time, which "
                        "the machine's load moves (use its CPU-time metric: "
                        + ", ".join(sorted(k for k, v in timing.ELAPSED_OF.items() if claim.metric in v) or
                                    [m for m, c in sorted(timing.CLOCKS.items()) if c == "cpu"]) + ")")

    def check_cells(self, claim, lhs, chk):
        rhs = chk.selected("rhs", claim.rhs)
        both = set().union(*(set(x.params) for x in lhs + rhs))
        for j, m in enumerate(claim.match):
            chk.require(f"match[{j}]", m in both,
                        f"'{m}' is not a hyperparameter of any compared cell (theirs: {sorted(both)})")
        pairs = [(a, b) for a in lhs for b in rhs if a.id != b.id and chk.compatible(a, b, list(claim.match))]
        chk.require("", len(pairs) > 0, "no (lhs, rhs) pair of distinct, matching cells to compare")

    def evaluate(self, c: Claim, ctx: Context):
        if c.metric in TIMING_METRICS:
            return self._evaluate_timing(c, ctx)
        metric, rounds = c.metric, c.rounds
        lhs, rhs = ctx.cells(c.lhs), ctx.cells(c.rhs)
        fac = float(c.factor or 1.0)
        checks, fails, tests = 0, [], []
        fold_tests = []  # by_queries: the by-fold view, kept beside
        by_queries = ctx.unit == "queries" and units.query_metric(metric) is not None
        for a in lhs:
            for b in rhs:
                if a.id == b.id or not _compatible(a, b, c.match):
                    continue
                va = ctx.values(a.id, metric, rounds).set_index("round", drop=False)
                vb = ctx.values(b.id, metric, rounds).set_index("round", drop=False)
                common = [r for r in va.index if r in vb.index] if METRICS[metric].curve else list(va.index[:1])
                for r in common:
                    ra, rb = va.loc[r], vb.loc[r]
                    if isinstance(ra, pd.DataFrame):
                        ra, rb = ra.iloc[0], rb.iloc[0]
                    checks += 1
                    where = f"{a.label} vs {b.label}{fmt_round(ra['round'])}"
                    qa, qb = ((units.query_values(ctx.trials, a.id, metric), units.query_values(ctx.trials, b.id, metric))
                              if by_queries else (None, None))
                    if qa is not None and qb is not None:
                        # paired over the test queries of the five folds (claims/units.py), with the
                        # design effect of the folds their queries share
                        fa, fb = units.fold_values(ctx.trials, a.id, metric), units.fold_values(ctx.trials, b.id, metric)
                        tests.append(testing.less_by_folds(fac * qa, qb, None if fa is None else fac * fa, fb, where))
                        if fa is not None and fb is not None:
                            fold_tests.append(testing.less(fac * fa, fb, where))
                    else:
                        tests.append(testing.less(fac * testing.trial_values(ctx.trials, a.id, metric, ra["round"]),
                                                  testing.trial_values(ctx.trials, b.id, metric, rb["round"]), where))
                    if not fac * ra["mean"] < rb["mean"]:
                        fails.append(f"{a.label} {_pm(ra)} vs {b.label} {_pm(rb)}{fmt_round(ra['round'])}")
        if checks == 0:
            return result(c, "not evaluable", "no comparable values (rounds outside this run's range?)")
        ratios = ""
        if fac != 1.0:
            rs = []
            for a in lhs:
                for b in rhs:
                    va = ctx.values(a.id, metric, rounds)
                    vb = ctx.values(b.id, metric, rounds)
                    if not va.empty and not vb.empty and va.iloc[-1]["mean"] > 0:
                        rs.append(f"{b.label} / {a.label} = {vb.iloc[-1]['mean'] / va.iloc[-1]['mean']:.1f}")
            ratios = " (measured ratio: " + "; ".join(rs) + f"; claimed at least {c.factor:g})"
        if not fails:
            ev = (f"ordered as claimed in all {checks} comparisons ({', '.join(x.label for x in lhs)} vs "
                  f"{', '.join(x.label for x in rhs)})")
        else:
            more = f"; and {len(fails) - 3} more" if len(fails) > 3 else ""
            ev = f"not ordered as claimed in {len(fails)} of {checks} comparisons, e.g. " + "; ".join(fails[:3]) + more
        if not by_queries:
            return testing.tested(c, ev + ratios, testing.combine(tests), 1 - len(fails) / checks)
        n_q = max((t.n for t in tests), default=0)
        deffs = [t.deff for t in tests]
        r = testing.tested(c, f"{ev}{ratios}; tested over the {n_q} test queries of the five folds (each query's "
                              "value averaged over the seeds), the queries of a fold counted with the design effect of "
                              f"the folds (deff {min(deffs):.2f}-{max(deffs):.2f}, effective n "
                              f"{n_q / max(deffs):.0f}-{n_q / min(deffs):.0f})", testing.combine(tests),
                           1 - len(fails) / checks)
        r.stats["unit"] = "queries"
        r.stats["deff"] = [float(x) for x in deffs]
        if fold_tests:
            fo = testing.combine(fold_tests)
            r.stats["by_fold"] = {"p_held": fo.p_held, "p_opposite": fo.p_opposite, "p": fo.p, "tests": fo.tests}
            r.evidence += f"; beside it, by fold (each fold's value averaged over the seeds): {testing.describe(fo)}, p = {fo.p:.3g}"
        return r

    def _evaluate_timing(self, c: Claim, ctx: Context):
        """A claim about time: on the paired per-trial ratios, with the load tolerance
        (:mod:`rankrepro.claims.timing`)."""
        if ctx.trials is None:
            return result(c, "not evaluable", "a claim about time needs the per-trial values")
        fac = float(c.factor or 1.0)
        comps, words = [], []
        for a in ctx.cells(c.lhs):
            for b in ctx.cells(c.rhs):
                if a.id == b.id or not _compatible(a, b, c.match):
                    continue
                cmp = timing.compare(ctx.trials, a.id, b.id, c.metric, fac)
                if cmp is not None:
                    comps.append(cmp)
                    words.append(f"{cmp['verdict']}: " + timing.describe(cmp, a.label, b.label))
        if not comps:
            return result(c, "not evaluable", "no paired trials to compare")
        verdicts = [x["verdict"] for x in comps]
        verdict = ("held" if all(v == "held" for v in verdicts)
                   else "not held" if "not held" in verdicts else "inconclusive")
        lead = ("a timing measurement: its ratio's interval, widened by the load tolerance, contains the claimed "
                "factor, so the verdict could depend on the machine's load; " if verdict == "inconclusive" else "")
        r = result(c, verdict, lead + "; ".join(words), verdicts.count("held") / len(verdicts))
        r.timing = comps
        if c.timed_solver is not None:
            return timing.against_timed_solver(c, r)
        return r


KIND = Less()


def _pm(r) -> str:
    """A mean with its 95% half-width ("0.283 (+-0.001)"); a value with no interval (one run of a
    deterministic learner) alone."""
    ci = r["ci"]
    return f"{r['mean']:.3f}" + ("" if ci is None or ci != ci else f" (+-{ci:.3f})")
