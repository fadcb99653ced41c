"""From the per-trial cell tables to an artefact's summary, comparison and claims.

Summary: one row per (cell, metric, round) with the mean over trials, its 95% Student-t
interval and n.  Comparison: each published value beside the reproduced cell, the
difference and a verdict (``consistent`` when the intervals overlap, else ``differs``).
Claims: each of the paper's claims in the experiment config, evaluated on the summary, with
the evidence (the numbers it was decided on).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from omegaconf import OmegaConf

from ..metrics import METRICS
from ..pipeline.catalog import Cell, Experiment, select
from ..stats import Interval, consistent, t_interval

SUMMARY_COLUMNS = ["cell", "algorithm", "label", "metric", "round", "n", "mean", "ci", "low", "high"]


def summarize(exp: Experiment, trials: pd.DataFrame) -> pd.DataFrame:
    labels = {c.id: c.label for c in exp.cells}
    order = {c.id: i for i, c in enumerate(exp.cells)}
    rows = []
    per_q = [m for m in trials["metric"].unique() if METRICS[m].per_query]
    trials = trials[~trials["metric"].isin(per_q)]
    key_round = trials["round"].fillna(-1)
    for (cell, metric, rnd), g in trials.groupby([trials["cell"], trials["metric"], key_round], sort=False):
        iv = t_interval(g["value"].to_numpy())
        rows.append((cell, g["algorithm"].iloc[0], labels.get(cell, cell), metric,
                     None if rnd == -1 else int(rnd), iv.n, iv.mean, iv.half_width, iv.low, iv.high))
    out = pd.DataFrame.from_records(rows, columns=SUMMARY_COLUMNS)
    out["round"] = out["round"].astype("Int64")
    out["_o"] = out["cell"].map(order)
    return out.sort_values(["_o", "metric", "round"], na_position="first").drop(columns="_o").reset_index(drop=True)


def final_rows(summary: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One row per cell: the scalar metric, or a curve's last round."""
    s = summary[summary["metric"] == metric]
    if METRICS[metric].curve:
        s = s.sort_values("round").groupby("cell", sort=False).tail(1)
    return s.set_index("cell")


def resolve(cells: list[Cell], selector: dict[str, Any], summary: pd.DataFrame, metric: str) -> list[Cell]:
    """``select`` plus ``best: true``: per algorithm, the cell with the lowest final value."""
    chosen = select(cells, selector)
    if not selector.get("best"):
        return chosen
    fin = final_rows(summary, metric)["mean"]
    best: dict[str, Cell] = {}
    for c in chosen:
        if c.id not in fin.index or not np.isfinite(fin[c.id]):
            continue
        if c.algorithm not in best or fin[c.id] < fin[best[c.algorithm].id]:
            best[c.algorithm] = c
    return [c for c in chosen if best.get(c.algorithm) is c]


# -------------------------------------------------------------------------------------
# published values
# -------------------------------------------------------------------------------------
def _diagnosis(d) -> dict | None:
    return None if d is None else OmegaConf.to_container(d)


def compare_published(exp: Experiment, summary: pd.DataFrame, reference_only: bool = False) -> pd.DataFrame:
    """Each published value beside its reproduced cell.  ``reference_only`` (a substitute
    data set): the published value is shown as a reference, with no consistent/differs verdict."""
    rows = []
    for p in exp.cfg.experiment.published:
        sel = OmegaConf.to_container(p.select)
        cell = select(exp.cells, sel)[0]
        s = summary[(summary["cell"] == cell.id) & (summary["metric"] == p.metric)]
        if METRICS[p.metric].curve:
            s = s[s["round"] == p.round] if p.round is not None else s.sort_values("round").tail(1)
        if s.empty:
            rep = Interval(float("nan"), float("nan"), 0)
        else:
            r = s.iloc[0]
            rep = Interval(float(r["mean"]), float(r["ci"]), int(r["n"]))
        ok = consistent(rep, float(p.mean), None if p.ci is None else float(p.ci))
        rows.append({
            "cell": cell.id, "label": cell.label, "metric": p.metric, "source": p.source,
            "published_mean": float(p.mean), "published_ci": None if p.ci is None else float(p.ci),
            "mean": rep.mean, "ci": rep.half_width, "n": rep.n, "difference": rep.mean - float(p.mean),
            "marks": p.marks,
            "verdict": ("reference" if reference_only and ok is not None
                        else {True: "consistent", False: "differs", None: "no result"}[ok]),
            "diagnosis": _diagnosis(p.diagnosis),
        })
    return pd.DataFrame(rows, columns=["cell", "label", "metric", "source", "published_mean", "published_ci",
                                       "mean", "ci", "n", "difference", "verdict", "marks", "diagnosis"])


# -------------------------------------------------------------------------------------
# claims
# -------------------------------------------------------------------------------------
@dataclass
class ClaimResult:
    id: str
    text: str
    #: "held", "not held", "inconclusive" (it fails only on point estimates whose 95% intervals
    #: overlap) or "not evaluable"
    verdict: str
    evidence: str
    fraction: float | None = None
    #: the configured diagnosis (shown beside a verdict other than "held")
    diagnosis: dict | None = None
    #: for each open protocol choice whose values give different verdicts: {choice, verdicts: {value: verdict}}
    depends_on: list | None = None


def _values_at(summary: pd.DataFrame, cell: str, metric: str, rounds) -> pd.DataFrame:
    s = summary[(summary["cell"] == cell) & (summary["metric"] == metric)]
    if not METRICS[metric].curve:
        return s
    s = s.sort_values("round")
    if rounds is None:
        return s.tail(1)
    lo, hi = rounds[0], rounds[1]
    m = pd.Series(True, index=s.index)
    if lo is not None:
        m &= s["round"] >= lo
    if hi is not None:
        m &= s["round"] <= hi
    return s[m]


def _compatible(a: Cell, b: Cell, match: list[str]) -> bool:
    for k in match:
        if k in a.params and k in b.params and a.params[k] != b.params[k]:
            return False
    return True


def _lo(r) -> float:
    """The low end of a summary row's interval (the mean when there is no interval)."""
    return float(r["mean"]) if pd.isna(r["ci"]) else float(r["low"])


def _hi(r) -> float:
    return float(r["mean"]) if pd.isna(r["ci"]) else float(r["high"])


def _fmt_round(r) -> str:
    return "" if r is None or (isinstance(r, float) and math.isnan(r)) or r is pd.NA else f" at round {int(r)}"


def evaluate_claim(exp: Experiment, claim, summary: pd.DataFrame) -> ClaimResult:
    c = OmegaConf.to_container(claim)
    metric = c["metric"]
    rounds = c.get("rounds")
    lhs = resolve(exp.cells, c.get("lhs") or {}, summary, metric)
    if c["kind"] == "less":
        rhs = resolve(exp.cells, c.get("rhs") or {}, summary, metric)
        checks, fails, clear = 0, [], 0
        for a in lhs:
            for b in rhs:
                if a.id == b.id or not _compatible(a, b, c.get("match") or []):
                    continue
                va = _values_at(summary, a.id, metric, rounds).set_index("round", drop=False)
                vb = _values_at(summary, b.id, metric, rounds).set_index("round", drop=False)
                common = [r for r in va.index if r in vb.index] if METRICS[metric].curve else list(va.index[:1])
                for r in common:
                    ra, rb = va.loc[r], vb.loc[r]
                    if isinstance(ra, pd.DataFrame):
                        ra, rb = ra.iloc[0], rb.iloc[0]
                    fac = float(c.get("factor") or 1.0)
                    ok = (fac * ra["high"] < rb["low"]) if c.get("significant") else (fac * ra["mean"] < rb["mean"])
                    checks += 1
                    if not ok:
                        # reversed beyond the noise: the intervals do not overlap (a claim of
                        # significance fails on overlap itself)
                        if c.get("significant") or fac * _lo(ra) > _hi(rb):
                            clear += 1
                        fails.append(f"{a.label} {ra['mean']:.3f} (+-{ra['ci']:.3f}) vs {b.label} "
                                     f"{rb['mean']:.3f} (+-{rb['ci']:.3f}){_fmt_round(ra['round'])}")
        if checks == 0:
            return ClaimResult(c["id"], c["text"], "not evaluable",
                               "no comparable values (rounds outside this run's range?)")
        frac = 1 - len(fails) / checks
        ratios = ""
        if float(c.get("factor") or 1.0) != 1.0:
            rs = []
            for a in lhs:
                for b in rhs:
                    va = _values_at(summary, a.id, metric, rounds)
                    vb = _values_at(summary, b.id, metric, rounds)
                    if not va.empty and not vb.empty and va.iloc[-1]["mean"] > 0:
                        rs.append(f"{b.label} / {a.label} = {vb.iloc[-1]['mean'] / va.iloc[-1]['mean']:.1f}")
            ratios = " (measured ratio: " + "; ".join(rs) + f"; claimed at least {c['factor']:g})"
        if not fails:
            ev = f"held in all {checks} comparisons ({', '.join(x.label for x in lhs)} vs {', '.join(x.label for x in rhs)})"
            return ClaimResult(c["id"], c["text"], "held", ev + ratios, frac)
        more = f"; and {len(fails) - 3} more" if len(fails) > 3 else ""
        if not clear:
            return ClaimResult(c["id"], c["text"], "inconclusive",
                               f"failed {len(fails)} of {checks} comparisons, each only on point estimates whose 95% "
                               "intervals overlap, e.g. " + "; ".join(fails[:3]) + more + ratios, frac)
        how = ("the claim needs separated intervals" if c.get("significant")
               else f"{clear} with separated intervals")
        return ClaimResult(c["id"], c["text"], "not held",
                           f"failed {len(fails)} of {checks} comparisons ({how}), e.g. "
                           + "; ".join(fails[:3]) + more + ratios, frac)
    if c["kind"] in ("falls", "levels"):
        parts, bad = [], []
        for cell in lhs:
            v = _values_at(summary, cell.id, metric, rounds)
            if len(v) < 2:
                continue
            first, last = float(v.iloc[0]["mean"]), float(v.iloc[-1]["mean"])
            if c["kind"] == "falls":
                ok = last <= float(c.get("expect") or 1.0) * first
            else:
                ok = last >= float(c["expect"]) * first and float(v.iloc[-1]["low"]) > 0
            parts.append(f"{cell.label}: {first:.3f} at round {int(v.iloc[0]['round'])} -> {last:.3f} at round "
                         f"{int(v.iloc[-1]['round'])}")
            if not ok:
                bad.append(cell.label)
        if not parts:
            return ClaimResult(c["id"], c["text"], "not evaluable", "no curve in the checked range")
        return ClaimResult(c["id"], c["text"], "not held" if bad else "held",
                           ((("does not fall enough for " if c["kind"] == "falls" else "does not level off above zero for ")
                            + ", ".join(bad) + ". ") if bad else "") + "; ".join(parts))
    if c["kind"] in ("argmin", "spread"):
        pts = []
        for cell in lhs:
            v = _values_at(summary, cell.id, metric, rounds)
            if not v.empty:
                r = v.iloc[-1]
                pts.append((cell, float(r["mean"]), float(r["low"]), float(r["high"])))
        if len(pts) < 2:
            return ClaimResult(c["id"], c["text"], "not evaluable", "fewer than two cells with values")
        desc = ", ".join(f"{cell.label} {m:.3f}" for cell, m, _, _ in pts)
        best = min(pts, key=lambda p: p[1])
        if c["kind"] == "argmin":
            over, want = c["over"], c.get("expect")
            got = best[0].params.get(over)
            held = got is not None and want is not None and float(got) == float(want)
            verdict = "held" if held else "not held"
            claimed = [p for p in pts if p[0].params.get(over) is not None and float(p[0].params[over]) == float(want)]
            if not held and claimed and all(p[2] <= best[3] for p in claimed):
                verdict = "inconclusive"  # the claimed cell's interval overlaps the lowest one's
            return ClaimResult(c["id"], c["text"], verdict, f"lowest at {over}={got} (claimed {want}): {desc}")
        worst = max(pts, key=lambda p: p[1])
        held = best[3] < worst[2]  # the best's interval lies entirely below the worst's
        return ClaimResult(c["id"], c["text"], "held" if held else "not held",
                           f"best {best[0].label} {best[1]:.3f} (+-{best[3] - best[1]:.3f}), worst {worst[0].label} "
                           f"{worst[1]:.3f} (+-{worst[3] - worst[1]:.3f}); intervals "
                           f"{'separated' if held else 'overlap'}: {desc}")
    # monotone
    over, stat = c["over"], c.get("stat", "mean")
    col = "mean" if stat == "mean" else "ci"
    by_alg: dict[str, list[tuple[float, float, float, float]]] = {}
    for cell in lhs:
        if over not in cell.params:
            continue
        v = _values_at(summary, cell.id, metric, rounds)
        if v.empty:
            continue
        r = v.iloc[-1]
        by_alg.setdefault(cell.algorithm, []).append((float(cell.params[over]), float(r[col]), _lo(r), _hi(r)))
    if not by_alg:
        return ClaimResult(c["id"], c["text"], "not evaluable", "no values")
    sign = 1 if c.get("direction", "increasing") == "increasing" else -1
    bad, parts, clear = [], [], False
    for alg, pts in by_alg.items():
        pts.sort()
        ys = [p[1] for p in pts]
        parts.append(f"{alg}: " + ", ".join(f"{over}={p[0]:g}: {p[1]:.3f}" for p in pts))
        viol = [i for i in range(len(ys) - 1) if sign * (ys[i + 1] - ys[i]) < 0]
        if viol:
            bad.append(alg)
            # a half-width has no interval of its own: its violations count as clear
            clear = clear or stat != "mean" or any(pts[i][2] > pts[i + 1][3] or pts[i + 1][2] > pts[i][3] for i in viol)
    name = "interval half-width" if stat == "ci" else "mean"
    ev = f"{name} by {over}: " + "; ".join(parts)
    verdict = "held" if not bad else ("not held" if clear else "inconclusive")
    return ClaimResult(c["id"], c["text"], verdict, ev if not bad else f"not monotone for {', '.join(bad)}. " + ev,
                       1 - len(bad) / len(by_alg))


def evaluate_claims(exp: Experiment, summary: pd.DataFrame) -> list[ClaimResult]:
    out = []
    for cl in exp.cfg.experiment.claims:
        r = evaluate_claim(exp, cl, summary)
        r.diagnosis = _diagnosis(cl.diagnosis)
        out.append(r)
    return out


# -------------------------------------------------------------------------------------
# sensitivity: the open protocol choices
# -------------------------------------------------------------------------------------
def variant_trials(exp: Experiment, trials: pd.DataFrame, choice: str, value: str) -> pd.DataFrame:
    """The trials of the main cells as they come out under one value of a choice: the
    sensitivity cells' rows in place of their main cells' (under the main cells' ids), the
    main rows where the value does not change a cell's computation."""
    swap = {c.base: c.id for c in exp.sensitivity_cells if c.choice == choice and c.value == value}
    # a value may narrow a grid: only the variant's cells
    main_ids = [c.id for c in exp.variants[(choice, value)].cells]
    parts = [trials[trials["cell"].isin([i for i in main_ids if i not in swap])]]
    for base, sid in swap.items():
        t = trials[trials["cell"] == sid].copy()
        t["cell"] = base
        parts.append(t)
    return pd.concat(parts, ignore_index=True)


def _headline(exp: Experiment, summary: pd.DataFrame, comparison: pd.DataFrame) -> list[dict]:
    """The numbers a choice is judged on: the published cells, else each cell's final value
    of the figure's (or the first) metric."""
    if not comparison.empty:
        return [{"cell": r["cell"], "label": r["label"], "metric": r["metric"], "mean": r["mean"], "ci": r["ci"],
                 "published_mean": r["published_mean"], "verdict": r["verdict"]} for _, r in comparison.iterrows()]
    e = exp.cfg.experiment
    metric = e.figure.metric if e.figure is not None else e.metrics[0]
    fin = final_rows(summary, metric)
    return [{"cell": c.id, "label": c.label, "metric": metric, "mean": float(fin.loc[c.id, "mean"]),
             "ci": float(fin.loc[c.id, "ci"]), "published_mean": None, "verdict": None}
            for c in exp.cells if c.id in fin.index]


def _align(heads: list[list[dict]]) -> list[list[dict]]:
    """The headline rows of every value on the cells they share (a value that narrows a grid
    has fewer), in the first value's order, so that a table can put them side by side."""
    keys = [(h["cell"], h["metric"]) for h in heads[0]]
    common = [k for k in keys if all(any((h["cell"], h["metric"]) == k for h in hs) for hs in heads)]
    return [[next(h for h in hs if (h["cell"], h["metric"]) == k) for k in common] for hs in heads]


def sensitivity(exp: Experiment, trials: pd.DataFrame, summary: pd.DataFrame, comparison: pd.DataFrame,
                claims: list[ClaimResult], reference_only: bool = False) -> list[dict]:
    """For each open choice and each of its values: what it sets, how many cells it re-ran,
    the headline numbers and every claim's verdict.  Marks, on the main claims, the ones
    whose verdict depends on a choice (``depends_on``)."""
    out = []
    for sc in exp.cfg.experiment.sensitivity:
        choice = str(sc.choice)
        values = []
        for label, sets in sc["values"].items():
            label = str(label)
            if label == sc.main:
                v_summary, v_comp, v_claims = summary, comparison, claims
                extra = 0
            else:
                var = exp.variants[(choice, label)]
                v_summary = summarize(var, variant_trials(exp, trials, choice, label))
                v_comp = compare_published(var, v_summary, reference_only)
                v_claims = evaluate_claims(var, v_summary)
                extra = sum(c.choice == choice and c.value == label for c in exp.sensitivity_cells)
            head = _headline(exp if label == sc.main else exp.variants[(choice, label)], v_summary, v_comp)
            diffs = [abs(h["mean"] - h["published_mean"]) for h in head
                     if h["published_mean"] is not None and h["mean"] is not None and np.isfinite(h["mean"])]
            values.append({
                "value": label, "main": label == sc.main, "sets": OmegaConf.to_container(sets), "extra_cells": extra,
                "headline": head,
                "mean_abs_difference": float(np.mean(diffs)) if diffs else None,
                "consistent": sum(h["verdict"] == "consistent" for h in head),
                "compared": sum(h["verdict"] in ("consistent", "differs") for h in head),
                "claims": [{"id": r.id, "verdict": r.verdict} for r in v_claims],
            })
        for v, h in zip(values, _align([v["headline"] for v in values])):
            v["headline"] = h
        flips = []
        for i, r in enumerate(claims):
            verdicts = {v["value"]: v["claims"][i]["verdict"] for v in values}
            if len(set(verdicts.values())) > 1:
                flips.append(r.id)
                r.depends_on = (r.depends_on or []) + [{"choice": choice, "verdicts": verdicts}]
        out.append({"choice": choice, "text": sc.text, "main": str(sc.main), "why": sc.why, "values": values,
                    "flips": flips})
    return out


def claims_to_json(results: list[ClaimResult]) -> list[dict]:
    return [asdict(r) for r in results]


def _clean(o):
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if o is None or o is pd.NA:
        return None
    if isinstance(o, (bool, np.bool_)):
        return bool(o)
    if isinstance(o, (int, np.integer)):
        return int(o)
    if isinstance(o, (float, np.floating)):
        return float(o) if np.isfinite(o) else None
    return o


def dumps(obj) -> str:
    """JSON with NaN/inf written as null."""
    return json.dumps(_clean(obj), indent=2, allow_nan=False)


def significance_marks(exp: Experiment, trials: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(cell, test metric) -> marks: for each configured baseline, its mark when the cell's
    per-query values are greater in a one-tailed paired t-test at the configured level."""
    from scipy import stats as st

    out: dict[tuple[str, str], str] = {}
    sigs = exp.cfg.experiment.significance
    if not len(sigs):
        return out
    pq = trials[trials["metric"].str.startswith("query_")]
    for sg in sigs:
        base = select(exp.cells, OmegaConf.to_container(sg.against))[0]
        for m in pq["metric"].unique():
            b = pq[(pq["cell"] == base.id) & (pq["metric"] == m)].set_index("round")["value"]
            for cell in exp.cells:
                if cell.id == base.id:
                    continue
                a = pq[(pq["cell"] == cell.id) & (pq["metric"] == m)].set_index("round")["value"]
                common = a.index.intersection(b.index)
                if len(common) < 2 or np.allclose(a[common].to_numpy(), b[common].to_numpy()):
                    continue
                p = st.ttest_rel(a[common].to_numpy(), b[common].to_numpy(), alternative="greater").pvalue
                if p < sg.level:
                    key = (cell.id, "test_" + m[len("query_"):])
                    out[key] = out.get(key, "") + sg.mark
    return out
