#!/usr/bin/env python
"""Independent recomputation of every verdict in rankrepro's records, from the per-trial cells.

A referee's check, written from the rules as docs/reproducibility.md ("Comparing with the published
numbers") and docs/configs.md ("How a claim is decided") state them, with scipy and statsmodels
only: nothing here imports ``rankrepro``.

    python scripts/recompute_verdicts.py [RECORDS] [--cells CELLS] [--only paper/artefact ...]

RECORDS (default ``results``) holds ``<paper>/<artefact>.json``; CELLS holds
``<paper>/<artefact>/cells/<cell>.parquet`` (default: RECORDS when the cells are there, else the
``results`` folder of this checkout). For every record it

1. recomputes each published cell (a ``table`` row with ``published_mean``): our mean and 95%
   half-width over the trials, the printed rounding, the rounding-aware Welch difference interval
   and its verdict (*consistent* / *differs*, *reference* on substitute data), and the TOST
   equivalence against the declared margin less the rounding (*equivalent* / *different* /
   *undecided*, ``equivalence_p``, ``equivalence_reachable``);
   Then the whole table's joint test (Sidak's bound over the cells with a sampling spread, each cell
   without one judged alone: the record's ``table_test``), and the same test under every reading
   of the open choices (each sensitivity value's ``table_test``, from the cells that reading
   re-ran), with the confidence set of readings of a multiverse;
2. recomputes, from the cells, ``p_held``, ``p_opposite`` and ``p`` of every ``less`` claim whose
   selectors name explicit cells (no ``best: true``), whose metric is not a time and whose factor
   is 1 (the rest are counted *not recomputed*, with the reason);
3. re-does Holm (statsmodels ``multipletests``) over the claim family, from the records' ``p`` and
   again with the recomputed ``p`` substituted where there is one, and re-derives each tested
   claim's verdict from the rule (held / not held / inconclusive).

It prints per record the counts checked / agreeing and every disagreement with both values, then
``N passed, M failed`` (records), and exits 1 on any disagreement beyond 1e-6 (p-values, means,
intervals) or any verdict that differs.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from scipy import stats
from statsmodels.stats.multitest import multipletests

TOL = 1e-6  # p-values and statistics
ZERO_TOL = 1e-12  # "the interval contains 0"
ALPHA = 0.05
REPO = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------- small helpers


def close(a, b, tol=TOL):
    """Both None, or both numbers within tol (absolute, or relative for large values)."""
    if a is None or b is None:
        return a is None and b is None
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=tol, abs_tol=tol)


def t975(df):
    return float(stats.t.ppf(0.975, df))


def as_list(v):
    return list(v) if isinstance(v, (list, tuple)) else [v]


def same_value(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    return str(a) == str(b)


def printed_rounding(entry):
    """Half a unit of the printed mean's last digit (0 when exact), from the config entry."""
    if entry.get("exact"):
        return 0.0
    if entry.get("precision") is not None:
        return float(entry["precision"]) / 2
    mean = entry["mean"]
    exponent = Decimal(repr(float(mean)) if isinstance(mean, float) else str(mean)).as_tuple().exponent
    return 0.5 * 10.0 ** min(0, exponent)


# --------------------------------------------------------------------------- cells


class Cells:
    """Per-trial values of one record's cells, read once per (cell, metric)."""

    def __init__(self, root: Path, paper: str, artefact: str):
        self.dir = root / paper / artefact / "cells"
        self.cache: dict[tuple[str, str], pd.DataFrame] = {}

    def frame(self, cell: str, metric: str) -> pd.DataFrame:
        key = (cell, metric)
        if key not in self.cache:
            path = self.dir / f"{cell}.parquet"
            if not path.exists():
                raise FileNotFoundError(path)
            df = pd.read_parquet(path, columns=["trial", "metric", "round", "value"],
                                 filters=[("metric", "==", metric)])
            df = df[df["value"].notna()].copy()
            df["round"] = df["round"].astype("float64")
            self.cache[key] = df
        return self.cache[key]

    def is_curve(self, cell: str, metric: str) -> bool:
        return bool(self.frame(cell, metric)["round"].notna().any())

    def table(self, cell: str, metric: str) -> pd.DataFrame:
        """A curve's values as trials x rounds (read once)."""
        key = ("table", cell, metric)
        if key not in self.cache:
            df = self.frame(cell, metric)
            self.cache[key] = df.pivot_table(index="trial", columns="round", values="value", aggfunc="last")
        return self.cache[key]

    def trial_values(self, cell: str, metric: str, round_=None) -> pd.Series:
        """One value per trial: a scalar's value; a curve's value at round_, else at its last round."""
        df = self.frame(cell, metric)
        if not df["round"].notna().any():
            return df.groupby("trial")["value"].last().sort_index()
        if round_ is not None:
            tab = self.table(cell, metric)
            if float(round_) not in tab.columns:
                return pd.Series(dtype=float)
            return tab[float(round_)].dropna().sort_index()
        last = df.sort_values(["trial", "round"]).groupby("trial").tail(1)
        return last.set_index("trial")["value"].sort_index()


# --------------------------------------------------------------------------- published cells


def published_entries(cfg: dict):
    return cfg.get("experiment", {}).get("published") or []


def select_cells(selector: dict, cells: list[dict]) -> list[dict]:
    """Cells a selector names: {algorithm: k or [k...], param: v or [v...]} (no 'best')."""
    out = []
    algs = as_list(selector["algorithm"]) if "algorithm" in selector else None
    for c in cells:
        cid = c["id"]
        if algs is not None and not any(cid == k or cid.startswith(f"{k}-") for k in algs):
            continue
        ok = True
        for key, want in selector.items():
            if key in ("algorithm", "best"):
                continue
            params = c.get("params") or {}
            if key not in params:  # a cell without the parameter is not constrained by it
                continue
            if not any(same_value(params[key], w) for w in as_list(want)):
                ok = False
                break
        if ok:
            out.append(c)
    return out


def entry_for_row(row, cfg, cells):
    """The config's published entry a table row comes from (cell, metric and round)."""
    hits = []
    for e in published_entries(cfg):
        if e.get("metric") != row["metric"]:
            continue
        if e.get("round") is not None and row.get("round") is not None and not same_value(e["round"], row["round"]):
            continue
        if row["cell"] in [c["id"] for c in select_cells(e.get("select") or {}, cells)]:
            hits.append(e)
    return hits[0] if len(hits) == 1 else None


def recompute_row(row, rec, cfg, cells: Cells, file_cell: str | None = None):
    """Our recomputation of one published cell's statistics, as a dict of the record's fields
    (``file_cell``: read the values of this cell instead, a reading's re-run of the row's cell)."""
    entry = entry_for_row(row, cfg, rec["cells"])
    if entry is None:
        raise ValueError(f"no unique published entry in the config for {row['cell']} {row['metric']}")
    exp = cfg["experiment"]
    fc = file_cell or row["cell"]
    x = cells.trial_values(fc, row["metric"], row.get("round") if cells.is_curve(fc, row["metric"]) else None)
    n = int(len(x))
    mean = float(x.mean())
    if n > 1:
        sd = float(x.std(ddof=1))
        se1, df1 = sd / math.sqrt(n), n - 1
        ci = t975(df1) * se1
    else:
        se1, df1, ci = 0.0, None, None

    m = float(entry["mean"])
    h = entry.get("ci")
    pn = entry.get("n") if entry.get("n") is not None else exp.get("n_trials")
    r = printed_rounding(entry)
    ci_r = float(entry["ci_precision"]) / 2 if entry.get("ci_precision") is not None else r
    d = mean - m
    bound = 0.0  # a published half-width added as a bound (pn == 1)
    if exp.get("compare") == "draw":
        # the paper's number is ONE run: a 95% prediction interval for one new run around our
        # mean (sd sqrt(1 + 1/n)); a learner run once (deterministic) has no sampling spread
        pn = 1
        extra = 0.0 if h is None else float(h) + ci_r
        if n > 1:
            se, df, basis = float(x.std(ddof=1)) * math.sqrt(1 + 1 / n), n - 1, "draw"
        else:
            se, df, basis = 0.0, None, "deterministic"
        r_all = r + extra
        half = (t975(df) * se if se > 0 else 0.0) + r_all
        verdict = "consistent" if d - half <= ZERO_TOL and d + half >= -ZERO_TOL else "differs"
        out = _finish(row, rec, mean, ci, n, pn, r, d, half, df, basis, verdict, se, r,
                      sd=float(x.std(ddof=1)) if n > 1 else None, pub_se=0.0, draw=True, n_ours=n, extra_bound=extra)
        if basis == "deterministic" and out["verdict"] != "reference":
            # a learner run once: judged by equivalence within the declared margin
            out["verdict"] = "consistent" if out["equivalence"] == "equivalent" else "differs"
        return out
    if h is not None and pn is not None and int(pn) > 1:
        se2, df2 = (float(h) + ci_r) / t975(int(pn) - 1), int(pn) - 1
    else:
        se2, df2 = 0.0, None
        if h is not None:
            bound = float(h) + ci_r
    if se1 > 0 and se2 > 0:
        basis = "welch"
        se = math.sqrt(se1**2 + se2**2)
        df = (se1**2 + se2**2) ** 2 / (se1**4 / df1 + se2**4 / df2)
    elif se1 > 0:
        basis, se, df = "reproduced", se1, df1
    elif se2 > 0:
        basis, se, df = "published", se2, df2
    else:
        basis, se, df = "exact", 0.0, None
    half = (t975(df) * se if se > 0 else 0.0) + r + bound
    verdict = "consistent" if d - half <= ZERO_TOL and d + half >= -ZERO_TOL else "differs"

    return _finish(row, rec, mean, ci, n, pn, r, d, half, df, basis, verdict, se, r + bound,
                   sd=(se1 * math.sqrt(n) if se1 > 0 else None), pub_se=se2, pub_df=df2, n_ours=n)


def trials_to_reach(sd, pub_se, pub_df, eff, draw, limit=1_000_000):
    """The smallest n (2..limit) at which a difference of 0 would pass both one-sided tests
    within ``eff`` (the margin less the rounding): brute force over every n at once."""
    if eff <= 0:
        return None
    n = np.arange(2, limit + 1, dtype=float)
    ours = sd * (np.sqrt(1 + 1 / n) if draw else 1 / np.sqrt(n))
    if pub_se:
        se = np.sqrt(ours**2 + pub_se**2)
        df = (ours**2 + pub_se**2) ** 2 / (ours**4 / (n - 1) + pub_se**4 / pub_df)
    else:
        se, df = ours, n - 1
    ok = stats.t.ppf(0.95, df) * se < eff
    return int(n[np.argmax(ok)]) if ok.any() else None


def _finish(row, rec, mean, ci, n, pn, r, d, half, df, basis, verdict, se, r_eq, sd=None, pub_se=0.0,
            pub_df=None, draw=False, n_ours=0, extra_bound=0.0):
    """The equivalence test (within the margin less ``r_eq``, the printed rounding and any
    published bound) and the row's fields."""
    margin = row.get("margin")
    eq = eq_p = reach = None
    r, bound = r, r_eq - r
    if margin is not None:
        eff = float(margin) - r - bound
        if se > 0:
            p_low = float(stats.t.sf((d + eff) / se, df))  # H0: d <= -eff
            p_up = float(stats.t.cdf((d - eff) / se, df))  # H0: d >= +eff
            eq_p = max(p_low, p_up)
            outside = abs(d) - t975(df) * se - r - bound > float(margin)
            reach = bool(float(stats.t.ppf(0.95, df)) * se < eff)
        else:
            eq_p = 0.0 if abs(d) < eff else 1.0
            outside = abs(d) - r - bound > float(margin)
            reach = bool(eff > 0)
        eq = "equivalent" if eq_p < ALPHA else ("different" if outside else "undecided")
    need = None
    if margin is not None and reach is False and sd is not None:
        need = trials_to_reach(sd, pub_se, pub_df, float(margin) - r, draw)
    # the two-sided p-value of "difference = 0" that the interval inverts (bound taken off first)
    if se > 0:
        p = float(2 * stats.t.sf(max(0.0, abs(d) - r - bound - extra_bound) / se, df))
    else:
        p = 1.0 if abs(d) - r - bound - extra_bound <= ZERO_TOL else 0.0
    if not (rec.get("dataset") or {}).get("original", True):
        verdict = "reference"
        eq = "reference" if eq is not None else None
    return {
        "mean": mean, "ci": ci, "n": n, "published_n": pn, "rounding": r,
        "difference": d, "difference_ci": half, "difference_df": df, "difference_basis": basis,
        "verdict": verdict, "equivalence": eq, "equivalence_p": eq_p,
        "equivalence_reachable": reach, "equivalence_trials": need, "difference_p": min(p, 1.0),
        "difference_se": se,
    }


NUMERIC_ROW = ("mean", "ci", "n", "published_n", "rounding", "difference", "difference_ci",
               "difference_df", "equivalence_p", "difference_p", "difference_se")
EXACT_ROW = ("difference_basis", "verdict", "equivalence", "equivalence_reachable", "equivalence_trials")


def table_test(judged):
    """The joint test of the whole published table, from our recomputed rows: Sidak's bound
    1 - (1 - min p)^k over the k cells with a sampling spread; every cell without one must be
    consistent; the table agrees unless the bound is below 5% or such a cell is not."""
    samp = [o for o in judged if o["difference_se"] > 0]
    p = -math.expm1(len(samp) * math.log1p(-min(o["difference_p"] for o in samp))) if samp else None
    outside = sum(o["verdict"] != "consistent" for o in judged if not o["difference_se"] > 0)
    return {"p": p, "agrees": (p is None or p >= ALPHA) and not outside, "sampling": len(samp),
            "exact": len(judged) - len(samp), "consistent": sum(o["verdict"] == "consistent" for o in judged)}


def check_readings(rec, cfg, cells: Cells, report):
    """Each reading's joint test of the published table (every sensitivity value's table_test),
    from the cells that reading re-ran (``<cell>~<choice>=<value>``; the main cell where the
    reading changes nothing it computes), and the confidence set (the readings whose test agrees)."""
    if not (rec.get("dataset") or {}).get("original", True):
        return
    rows = [r for r in rec.get("table") or [] if r.get("verdict") in ("consistent", "differs")]
    agree = set()
    for s in rec.get("sensitivity") or []:
        for v in s["values"]:
            theirs = v.get("table_test")
            if v["main"] or theirs is None:
                continue
            judged = []
            for row in rows:
                var = f"{row['cell']}~{s['choice']}={v['value']}"
                fc = var if (cells.dir / f"{var}.parquet").exists() else row["cell"]
                try:
                    judged.append(recompute_row(row, rec, cfg, cells, file_cell=fc))
                except Exception as exc:  # noqa: BLE001 - a reading we cannot recompute is a failure
                    report["errors"].append(f"reading {s['choice']}={v['value']} {row['cell']}: cannot recompute ({exc})")
                    judged = None
                    break
            if judged is None:
                continue
            tt = table_test(judged)
            report["readings_checked"] += 1
            mv_row = next((r for r in (rec.get("multiverse") or {}).get("list", [])
                           if r["reading"] == v.get("reading")), None)
            if mv_row is not None:  # each published cell's verdict under this reading
                ours_cells = {f"{row['label']} {row['metric']}": o["verdict"] for row, o in zip(rows, judged)}
                bad = {k: (x, ours_cells.get(k)) for k, x in mv_row["cells"].items() if ours_cells.get(k) != x}
                if bad:
                    report["disagreements"].append(f"reading {mv_row['key']}: cell verdicts record vs ours {bad}")
            if close(tt["p"], theirs["p"]) and tt["agrees"] == theirs["agrees"]:
                report["readings_agree"] += 1
            else:
                report["disagreements"].append(f"reading {s['choice']}={v['value']}: table test record "
                                               f"p = {theirs['p']!r}, agrees = {theirs['agrees']} vs ours p = {tt['p']!r}, "
                                               f"agrees = {tt['agrees']}")
            if tt["agrees"]:
                agree.add((s["choice"], v["value"]))
    mv = rec.get("multiverse")
    if mv and mv.get("table"):
        main_ok = (rec.get("table_test") or {}).get("agrees")
        want = {k for k in mv["confidence_set"] if k != "main"}
        got = {r["key"] for r in mv["list"] for s in rec["sensitivity"] for v in s["values"]
               if not v["main"] and (s["choice"], v["value"]) in agree and r["reading"] == v.get("reading")}
        if want != got or (("main" in mv["confidence_set"]) != bool(main_ok)):
            report["disagreements"].append(f"confidence set: record {sorted(mv['confidence_set'])} vs ours "
                                           f"{sorted(got | ({'main'} if main_ok else set()))}")


def check_table(rec, cfg, cells: Cells, report):
    judged = []
    for row in rec.get("table") or []:
        if row.get("published_mean") is None:
            continue
        where = f"cell {row['cell']} {row['metric']}" + (f" @{row['round']}" if row.get("round") is not None else "")
        report["cells_checked"] += 1
        try:
            ours = recompute_row(row, rec, cfg, cells)
        except Exception as exc:  # noqa: BLE001 - a cell we cannot recompute is a failure
            report["errors"].append(f"{where}: cannot recompute ({exc})")
            continue
        if ours["verdict"] in ("consistent", "differs"):
            judged.append(ours)
        bad = []
        for k in NUMERIC_ROW:
            if not close(ours[k], row.get(k)):
                bad.append(f"{k}: record {row.get(k)!r} vs ours {ours[k]!r}")
        for k in EXACT_ROW:
            if ours[k] != row.get(k):
                bad.append(f"{k}: record {row.get(k)!r} vs ours {ours[k]!r}")
        if bad:
            report["disagreements"].append(f"{where}: " + "; ".join(bad))
        else:
            report["cells_agree"] += 1
    check_readings(rec, cfg, cells, report)
    tt, theirs = (table_test(judged) if judged else None), rec.get("table_test")
    if tt or theirs:
        report["tables_checked"] += 1
        if not tt or not theirs:
            report["disagreements"].append(f"table test: record {theirs!r} vs ours {tt!r}")
        else:
            bad = [f"{k}: record {theirs.get(k)!r} vs ours {tt[k]!r}" for k in tt
                   if not (close(tt[k], theirs.get(k)) if k == "p" else tt[k] == theirs.get(k))]
            if bad:
                report["disagreements"].append("table test: " + "; ".join(bad))
            else:
                report["tables_agree"] += 1


# --------------------------------------------------------------------------- claims


def timing(metric: str) -> bool:
    return metric.endswith("_seconds") or metric.endswith("_per_second")


def why_not_recomputed(claim_cfg: dict, cells: Cells, lhs, rhs) -> str | None:
    if claim_cfg.get("kind") != "less":
        return f"kind {claim_cfg.get('kind')}"
    if timing(claim_cfg["metric"]):
        return "timing metric"
    if (claim_cfg.get("lhs") or {}).get("best") or (claim_cfg.get("rhs") or {}).get("best"):
        return "best: true selector"
    if float(claim_cfg.get("factor", 1.0) or 1.0) != 1.0:
        return f"factor {claim_cfg.get('factor')}"
    if not lhs or not rhs:
        return "a selector names no cell"
    return None


def one_sided(x: pd.Series, y: pd.Series):
    """(p of 'x < y', p of 'x > y') on per-trial values: paired, Welch, or exact."""
    if len(x) == 1 and len(y) == 1:
        a, b = float(x.iloc[0]), float(y.iloc[0])
        return (0.0 if a < b else 1.0), (0.0 if a > b else 1.0)
    if set(x.index) == set(y.index):
        common = x.index
        diff = x.loc[common].to_numpy() - y.loc[common].to_numpy()
        if np.all(diff == diff[0]):  # no spread: the sign decides
            return (0.0 if diff[0] < 0 else 1.0), (0.0 if diff[0] > 0 else 1.0)
        less = stats.ttest_rel(x.loc[common], y.loc[common], alternative="less").pvalue
        greater = stats.ttest_rel(x.loc[common], y.loc[common], alternative="greater").pvalue
        return float(less), float(greater)
    less = stats.ttest_ind(x, y, equal_var=False, alternative="less").pvalue
    greater = stats.ttest_ind(x, y, equal_var=False, alternative="greater").pvalue
    return float(less), float(greater)


def claim_pairs(claim_cfg, rec):
    lhs = select_cells(claim_cfg.get("lhs") or {}, rec["cells"])
    rhs = select_cells(claim_cfg.get("rhs") or {}, rec["cells"])
    match = as_list(claim_cfg.get("match") or [])
    pairs = []
    for a in lhs:
        for b in rhs:
            if a["id"] == b["id"]:
                continue
            pa, pb = a.get("params") or {}, b.get("params") or {}
            if all(not (k in pa and k in pb) or same_value(pa[k], pb[k]) for k in match):
                pairs.append((a["id"], b["id"]))
    return lhs, rhs, pairs


def checked_rounds(claim_cfg, cells: Cells, a: str, b: str):
    """The rounds a comparison is made at: None (a scalar, or a curve's last round) when the claim
    gives no `rounds`; else every checkpoint both curves share within [from, to] (to None: the end)."""
    metric = claim_cfg["metric"]
    rounds = claim_cfg.get("rounds")
    if not rounds or not (cells.is_curve(a, metric) and cells.is_curve(b, metric)):
        return [None]
    lo, hi = rounds[0], rounds[1] if len(rounds) > 1 else None
    ra = set(cells.frame(a, metric)["round"].dropna().unique())
    rb = set(cells.frame(b, metric)["round"].dropna().unique())
    return [r for r in sorted(ra & rb) if (lo is None or r >= lo) and (hi is None or r <= hi)]


def recompute_claim(claim_cfg, rec, cells: Cells):
    """(p_held, p_opposite, p, tests) from the cells, or a reason string when not recomputed."""
    lhs, rhs, pairs = claim_pairs(claim_cfg, rec)
    reason = why_not_recomputed(claim_cfg, cells, lhs, rhs)
    if reason is None and not pairs:
        reason = "no pair of cells after match"
    if reason:
        return reason
    metric = claim_cfg["metric"]
    held, opposite = [], []
    queries = ((yaml.safe_load(rec["config"]) or {}).get("experiment") or {}).get("claims_unit") == "queries" \
        and metric.startswith("test_")
    for a, b in pairs:
        if queries:
            # paired over the test queries of the five folds, each query's value averaged over the seeds
            qm = "query_" + metric[len("test_"):]
            qa = cells.frame(a, qm).groupby("round")["value"].mean()
            qb = cells.frame(b, qm).groupby("round")["value"].mean()
            pl, pg = one_sided(qa, qb)
            fm = "fold_" + metric
            try:
                fa = cells.frame(a, fm).groupby("round")["value"].mean()
                fb = cells.frame(b, fm).groupby("round")["value"].mean()
            except FileNotFoundError:
                fa = fb = None
            if fa is not None and len(fa) >= 2 and set(qa.index) == set(qb.index):
                # the queries of a fold share its model: the design effect of the folds (cluster-robust
                # variance over the naive one, at least 1) widens the se; df the effective n - 1
                d = (qa - qb.loc[qa.index]).to_numpy()
                fd = (fa - fb.loc[fa.index]).to_numpy()
                n, g = len(d), len(fd)
                deff = max(1.0, (np.var(fd, ddof=1) / g) / (np.var(d, ddof=1) / n))
                if deff > 1.0:
                    tstat = d.mean() / np.sqrt(np.var(d, ddof=1) / n * deff)
                    df = max(n / deff - 1.0, 1.0)
                    pl, pg = float(stats.t.cdf(tstat, df)), float(stats.t.sf(tstat, df))
            held.append(pl)
            opposite.append(pg)
            continue
        for rnd in checked_rounds(claim_cfg, cells, a, b):
            pl, pg = one_sided(cells.trial_values(a, metric, rnd), cells.trial_values(b, metric, rnd))
            held.append(pl)
            opposite.append(pg)
    k = len(held)
    p_held = max(held)
    p_opp = min(1.0, k * min(opposite))
    return {"p_held": p_held, "p_opposite": p_opp, "p": min(1.0, 2 * min(p_held, p_opp)), "tests": k}


def decide(p_adj, p_held, p_opp):
    if p_adj < ALPHA and p_held < p_opp:
        return "held"
    if p_adj < ALPHA and p_opp < p_held:
        return "not held"
    return "inconclusive"


def tested(claim) -> bool:
    return bool(claim.get("stats")) and claim.get("verdict") != "not evaluable"


def holm(ps: dict[str, float]) -> dict[str, float]:
    keys = sorted(ps)  # the order does not change Holm's adjusted values (ties get the same)
    adj = multipletests([ps[k] for k in keys], alpha=ALPHA, method="holm")[1]
    return dict(zip(keys, (float(a) for a in adj)))


class Family:
    """The tested claims of one claim family, read from the records folder."""

    def __init__(self, records_dir: Path, rec):
        fam = rec.get("claim_family") or {}
        self.artefacts = fam.get("artefacts") or [f"{rec['paper']}/{rec['artefact']}"]
        self.expected = fam.get("tests")
        self.p: dict[str, float] = {}
        self.missing = []
        for art in self.artefacts:
            path = records_dir / f"{art}.json"
            if not path.exists():
                self.missing.append(art)
                continue
            other = rec if art == f"{rec['paper']}/{rec['artefact']}" else json.loads(path.read_text())
            for c in other.get("claims") or []:
                if tested(c):
                    self.p[f"{art}:{c['id']}"] = float(c["stats"]["p"])

    def complete(self) -> bool:
        return not self.missing and (self.expected is None or self.expected == len(self.p))


def check_claims(rec, cfg, cells: Cells, family: Family, ours_p: dict[str, float], report):
    name = f"{rec['paper']}/{rec['artefact']}"
    claims_cfg = {c["id"]: c for c in cfg.get("experiment", {}).get("claims") or []}
    adj_records = holm(family.p) if family.complete() else None
    adj_ours = None
    if family.complete():
        adj_ours = holm({k: ours_p.get(k, v) for k, v in family.p.items()})
    elif family.p:
        report["notes"].append(
            f"claim family incomplete ({len(family.p)} tested claims found, record says {family.expected}; "
            f"missing records: {', '.join(family.missing) or 'none'}): Holm not checked")
    for c in rec.get("claims") or []:
        key = f"{name}:{c['id']}"
        if not tested(c):
            report["claims_untested"] += 1
            continue
        s = c["stats"]
        report["claims_checked"] += 1
        bad = []
        # (a) the combination and the record's own p
        if not close(min(1.0, 2 * min(s["p_held"], s["p_opposite"])), s["p"]):
            bad.append(f"p = min(1, 2 min(p_held, p_opposite)): record {s['p']!r} vs "
                       f"{min(1.0, 2 * min(s['p_held'], s['p_opposite']))!r}")
        if adj_records is not None:
            if not close(adj_records[key], s["p_adjusted"]):
                bad.append(f"p_adjusted: record {s['p_adjusted']!r} vs Holm {adj_records[key]!r}")
            if s.get("family") != len(family.p):
                bad.append(f"family size: record {s.get('family')!r} vs {len(family.p)}")
            v = decide(adj_records[key], s["p_held"], s["p_opposite"])
            if v != c["verdict"]:
                bad.append(f"verdict from the record's p: record {c['verdict']!r} vs rule {v!r}")
        # (b) from the cells
        try:
            ours = recompute_claim(claims_cfg[c["id"]], rec, cells) if c["id"] in claims_cfg else "not in config"
        except FileNotFoundError as exc:  # the record rests on a cell that is not there
            bad.append(f"cannot recompute, no cell file {exc}")
            ours = None
        if ours is None:
            pass
        elif isinstance(ours, str):
            report["claims_not_recomputed"].append(f"{c['id']} ({ours})")
        else:
            report["claims_recomputed"] += 1
            for k in ("p_held", "p_opposite", "p"):
                if not close(ours[k], s[k]):
                    bad.append(f"{k}: record {s[k]!r} vs cells {ours[k]!r}")
            if ours["tests"] != s.get("tests"):
                bad.append(f"tests: record {s.get('tests')!r} vs cells {ours['tests']!r}")
            if adj_ours is not None:
                v = decide(adj_ours[key], ours["p_held"], ours["p_opposite"])
                if v != c["verdict"]:
                    bad.append(f"verdict from the cells: record {c['verdict']!r} vs ours {v!r} "
                               f"(adjusted {adj_ours[key]:.6g})")
        if bad:
            report["disagreements"].append(f"claim {c['id']}: " + "; ".join(bad))
        else:
            report["claims_agree"] += 1


# --------------------------------------------------------------------------- driver


def default_cells_root(records: Path) -> Path:
    if any(records.glob("*/*/cells/*.parquet")):
        return records
    return REPO / "results"


def load_records(records: Path, only: list[str] | None):
    out = {}
    for path in sorted(records.glob("*/*.json")):
        rec = json.loads(path.read_text())
        if not isinstance(rec, dict) or "paper" not in rec or "artefact" not in rec or "config" not in rec:
            continue
        name = f"{rec['paper']}/{rec['artefact']}"
        if only and name not in only:
            continue
        out[name] = rec
    return out


def precompute_ours(records: Path, cells_root: Path, recs: dict, all_recs_cache: dict):
    """Recomputed p of every claim we can recompute, over all records of the families involved."""
    ours: dict[str, float] = {}
    names = set()
    for rec in recs.values():
        names.update((rec.get("claim_family") or {}).get("artefacts") or [f"{rec['paper']}/{rec['artefact']}"])
    for name in sorted(names):
        rec = all_recs_cache.get(name)
        if rec is None:
            path = records / f"{name}.json"
            if not path.exists():
                continue
            rec = all_recs_cache[name] = json.loads(path.read_text())
        cfg = yaml.safe_load(rec["config"])
        cells = Cells(cells_root, rec["paper"], rec["artefact"])
        claims_cfg = {c["id"]: c for c in cfg.get("experiment", {}).get("claims") or []}
        for c in rec.get("claims") or []:
            if tested(c) and c["id"] in claims_cfg:
                try:
                    got = recompute_claim(claims_cfg[c["id"]], rec, cells)
                except FileNotFoundError:
                    continue
                if isinstance(got, dict):
                    ours[f"{name}:{c['id']}"] = got["p"]
    return ours


def run(records: Path, cells_root: Path | None = None, only: list[str] | None = None, out=sys.stdout) -> int:
    records = Path(records)
    cells_root = Path(cells_root) if cells_root else default_cells_root(records)
    recs = load_records(records, only)
    if not recs:
        print(f"no records under {records}", file=out)
        return 1
    cache = dict(recs)
    ours_p = precompute_ours(records, cells_root, recs, cache)
    passed = failed = 0
    totals = {"cells_checked": 0, "cells_agree": 0, "tables_checked": 0, "tables_agree": 0, "readings_checked": 0,
              "readings_agree": 0, "claims_checked": 0,
              "claims_agree": 0, "claims_recomputed": 0}
    print(f"records: {records}   cells: {cells_root}", file=out)
    for name, rec in recs.items():
        cfg = yaml.safe_load(rec["config"])
        cells = Cells(cells_root, rec["paper"], rec["artefact"])
        report = {"cells_checked": 0, "cells_agree": 0, "tables_checked": 0, "tables_agree": 0,
                  "readings_checked": 0, "readings_agree": 0,
                  "claims_checked": 0, "claims_agree": 0,
                  "claims_recomputed": 0, "claims_untested": 0, "claims_not_recomputed": [],
                  "disagreements": [], "errors": [], "notes": []}
        check_table(rec, cfg, cells, report)
        check_claims(rec, cfg, cells, Family(records, rec), ours_p, report)
        ok = not report["disagreements"] and not report["errors"]
        passed += ok
        failed += not ok
        for k in totals:
            totals[k] += report[k]
        data = "original" if (rec.get("dataset") or {}).get("original", True) else "substitute"
        print(f"{'PASS' if ok else 'FAIL'} {name} ({data}): published cells {report['cells_agree']}/"
              f"{report['cells_checked']} agree; tested claims {report['claims_agree']}/"
              f"{report['claims_checked']} agree ({report['claims_recomputed']} recomputed from the cells, "
              f"{report['claims_untested']} untested)", file=out)
        if report["claims_not_recomputed"]:
            print("    not recomputed: " + ", ".join(report["claims_not_recomputed"]), file=out)
        for line in report["notes"]:
            print("    note: " + line, file=out)
        for line in report["errors"]:
            print("    ERROR " + line, file=out)
        for line in report["disagreements"]:
            print("    DISAGREES " + line, file=out)
    print(f"totals: published cells {totals['cells_agree']}/{totals['cells_checked']} agree; table tests "
          f"{totals['tables_agree']}/{totals['tables_checked']} agree, and under the readings "
          f"{totals['readings_agree']}/{totals['readings_checked']}; tested claims "
          f"{totals['claims_agree']}/{totals['claims_checked']} agree, {totals['claims_recomputed']} "
          f"recomputed from the cells", file=out)
    print(f"{passed} passed, {failed} failed", file=out)
    return 1 if failed else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", nargs="?", default="results", help="folder of <paper>/<artefact>.json")
    ap.add_argument("--cells", default=None, help="folder of <paper>/<artefact>/cells/*.parquet")
    ap.add_argument("--only", nargs="*", default=None, help="paper/artefact names to check")
    args = ap.parse_args(argv)
    t0 = time.time()
    rc = run(Path(args.records), Path(args.cells) if args.cells else None, args.only)
    print(f"({time.time() - t0:.1f} s)")
    return rc


if __name__ == "__main__":
    sys.exit(main())
