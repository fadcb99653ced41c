"""scripts/recompute_verdicts.py: the referee's independent recomputation of the records' verdicts.

A hand-built record whose numbers are worked out here by hand (Welch's interval with the printed
rounding, TOST, a paired t-test, Holm over two claims) must pass, and each kind of wrong record
(a verdict, a p-value, a Holm adjustment) must fail; a few committed records are checked end to
end from their committed cells (`make verify` runs the script on every record).
"""

from __future__ import annotations

import importlib.util
import io
import json
import math
from pathlib import Path

import pandas as pd
import pytest
import yaml
from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
AGG = ROOT / "results"


def load_script():
    spec = importlib.util.spec_from_file_location("recompute_verdicts", ROOT / "scripts" / "recompute_verdicts.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


rv = load_script()

A = [1.0, 2.0, 3.0, 4.0]  # cell "a": mean 2.5, sd 1.29099
B = [3.0, 3.1, 3.2, 3.3]  # cell "b": mean 3.15, sd 0.129099
C = [6.0, 6.5, 7.5, 9.0]  # cell "c"


def by_hand_welch(values, pub_mean, pub_ci, pub_n, r):
    """Rounding-aware Welch interval, written out: our se, the published se from (h + r) / t."""
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    se1, df1 = sd / math.sqrt(n), n - 1
    se2, df2 = (pub_ci + r) / stats.t.ppf(0.975, pub_n - 1), pub_n - 1
    se = math.sqrt(se1**2 + se2**2)
    df = (se1**2 + se2**2) ** 2 / (se1**4 / df1 + se2**4 / df2)
    half = stats.t.ppf(0.975, df) * se + r
    d = mean - pub_mean
    return mean, stats.t.ppf(0.975, df1) * se1, d, se, df, half


def by_hand_paired_less(x, y):
    """One-sided paired t-test of x < y, from the differences."""
    diff = [a - b for a, b in zip(x, y)]
    n = len(diff)
    m = sum(diff) / n
    sd = math.sqrt(sum((v - m) ** 2 for v in diff) / (n - 1))
    t = m / (sd / math.sqrt(n))
    return stats.t.cdf(t, n - 1), stats.t.sf(t, n - 1)


def table_row(cell, values, pub_mean, pub_ci, pub_n, r, margin):
    mean, ci, d, se, df, half = by_hand_welch(values, pub_mean, pub_ci, pub_n, r)
    verdict = "consistent" if d - half <= 0 <= d + half else "differs"
    eff = margin - r
    p_eq = max(stats.t.sf((d + eff) / se, df), stats.t.cdf((d - eff) / se, df))
    if p_eq < 0.05:
        eq = "equivalent"
    elif abs(d) - stats.t.ppf(0.975, df) * se - r > margin:
        eq = "different"
    else:
        eq = "undecided"
    return {
        "cell": cell, "label": cell, "metric": "loss", "round": None, "mean": mean, "ci": ci,
        "n": len(values), "published_mean": pub_mean, "published_ci": pub_ci, "published_n": pub_n,
        "rounding": r, "difference": d, "difference_ci": half, "difference_df": df,
        "difference_basis": "welch", "verdict": verdict, "equivalence": eq, "equivalence_p": p_eq,
        "margin": margin, "equivalence_reachable": bool(stats.t.ppf(0.95, df) * se < eff),
        # the published spread alone fills these margins: no number of trials reaches equivalence
        "equivalence_trials": None, "difference_se": se,
        "difference_p": float(2 * stats.t.sf(max(0.0, abs(d) - r) / se, df)),
    }


def build(tmp_path: Path, original=True):
    """A record with two published cells and two tested claims, and its cells; returns its path."""
    paper, artefact = "toy2024", "table"
    cdir = tmp_path / paper / artefact / "cells"
    cdir.mkdir(parents=True)
    for cid, values in (("a", A), ("b", B), ("c", C)):
        pd.DataFrame({
            "paper": paper, "artefact": artefact, "cell": cid, "algorithm": cid, "params": "{}",
            "trial": range(len(values)), "metric": "loss",
            "round": pd.array([None] * len(values), dtype="Int64"), "value": values,
        }).to_parquet(cdir / f"{cid}.parquet")
    config = {"experiment": {
        "paper": paper, "artefact": artefact, "n_trials": 4,
        "published": [
            # printed 2.00 +- 0.50 over 10 trials: rounding half of 0.01
            {"select": {"algorithm": "a"}, "metric": "loss", "mean": 2.0, "ci": 0.5, "n": 10,
             "precision": 0.01, "ci_precision": None, "exact": False, "round": None},
            {"select": {"algorithm": "b"}, "metric": "loss", "mean": 2.0, "ci": 0.5, "n": 10,
             "precision": 0.01, "ci_precision": None, "exact": False, "round": None},
        ],
        "claims": [
            {"id": "a_below_b", "kind": "less", "metric": "loss", "lhs": {"algorithm": "a"},
             "rhs": {"algorithm": "b"}, "factor": 1.0},
            {"id": "a_below_c", "kind": "less", "metric": "loss", "lhs": {"algorithm": "a"},
             "rhs": {"algorithm": "c"}, "factor": 1.0},
        ],
    }}
    rows = [table_row("a", A, 2.0, 0.5, 10, 0.005, 0.3), table_row("b", B, 2.0, 0.5, 10, 0.005, 0.3)]
    if not original:
        for row in rows:
            row["verdict"] = row["equivalence"] = "reference"
    # the claims by hand: one comparison each (k = 1), Holm over the two
    claims, ps = [], {}
    for cid, other in (("a_below_b", B), ("a_below_c", C)):
        p_held, p_opp = by_hand_paired_less(A, other)
        ps[cid] = min(1.0, 2 * min(p_held, p_opp))
        claims.append({"id": cid, "verdict": None, "stats": {
            "p_held": p_held, "p_opposite": p_opp, "p": ps[cid], "tests": 1, "family": 2}})
    lo, hi = sorted(ps, key=ps.get)
    adj = {lo: min(1.0, 2 * ps[lo])}
    adj[hi] = max(adj[lo], min(1.0, ps[hi]))
    for c in claims:
        s = c["stats"]
        s["p_adjusted"] = adj[c["id"]]
        c["verdict"] = ("held" if adj[c["id"]] < 0.05 and s["p_held"] < s["p_opposite"] else
                        "not held" if adj[c["id"]] < 0.05 and s["p_opposite"] < s["p_held"] else
                        "inconclusive")
    # the joint test of the table by hand: Sidak's bound on the smaller p over the two cells
    p_table = 1 - (1 - min(r["difference_p"] for r in rows)) ** 2
    table_test = {"p": p_table, "agrees": p_table >= 0.05, "sampling": 2, "exact": 0,
                  "consistent": sum(r["verdict"] == "consistent" for r in rows)}
    record = {
        "paper": paper, "artefact": artefact, "config": yaml.safe_dump(config),
        "dataset": {"original": original}, "table": rows, "claims": claims,
        **({"table_test": table_test} if original else {}),
        "claim_family": {"name": paper, "artefacts": [f"{paper}/{artefact}"], "tests": 2},
        "cells": [{"id": cid, "estimator": cid, "params": {}} for cid in ("a", "b", "c")],
    }
    path = tmp_path / paper / f"{artefact}.json"
    path.write_text(json.dumps(record))
    return path


def run(folder: Path, **kw):
    out = io.StringIO()
    rc = rv.run(folder, out=out, **kw)
    return rc, out.getvalue()


def test_hand_computation_is_what_we_expect():
    """The hand numbers themselves: a is consistent with 2.00 +- 0.50, b differs; the claims."""
    mean, _, d, se, df, half = by_hand_welch(A, 2.0, 0.5, 10, 0.005)
    assert mean == pytest.approx(2.5)
    assert df == pytest.approx(3.7427, abs=1e-3)
    assert half == pytest.approx(stats.t.ppf(0.975, df) * 0.683010 + 0.005, abs=1e-5)
    assert abs(d) < half  # consistent
    _, _, d, _, df, half = by_hand_welch(B, 2.0, 0.5, 10, 0.005)
    assert d == pytest.approx(1.15) and df == pytest.approx(10.35, abs=0.01)
    assert d > half  # differs
    # the published se carries the printed rounding of its half-width: (0.50 + 0.005) / t_9
    assert (0.5 + 0.005) / stats.t.ppf(0.975, 9) == pytest.approx(0.223238, abs=1e-6)
    # the paired test against scipy
    assert by_hand_paired_less(A, B)[0] == pytest.approx(stats.ttest_rel(A, B, alternative="less").pvalue)
    assert by_hand_paired_less(A, B)[0] == pytest.approx(0.1722, abs=1e-3)


def test_hand_built_record_passes(tmp_path):
    build(tmp_path)
    rec = json.loads((tmp_path / "toy2024" / "table.json").read_text())
    assert [r["verdict"] for r in rec["table"]] == ["consistent", "differs"]
    assert [c["verdict"] for c in rec["claims"]] == ["inconclusive", "held"]
    rc, out = run(tmp_path, cells_root=tmp_path)
    assert rc == 0, out
    assert "published cells 2/2 agree" in out and "tested claims 2/2 agree (2 recomputed" in out
    assert "1 passed, 0 failed" in out


def test_substitute_data_reads_reference(tmp_path):
    build(tmp_path, original=False)
    rc, out = run(tmp_path, cells_root=tmp_path)
    assert rc == 0, out


@pytest.mark.parametrize("mutate, expect", [
    (lambda r: r["table"][0].update(verdict="differs"), "verdict: record 'differs' vs ours 'consistent'"),
    (lambda r: r["table"][1].update(difference_ci=r["table"][1]["difference_ci"] - 0.005), "difference_ci"),
    (lambda r: r["table"][0].update(equivalence="equivalent"), "equivalence: record 'equivalent'"),
    (lambda r: r["table_test"].update(agrees=True), "table test: agrees: record True vs ours False"),
    (lambda r: r["table"][1].update(difference_p=0.2), "difference_p"),
    (lambda r: r["claims"][0]["stats"].update(p_held=r["claims"][0]["stats"]["p_held"] + 1e-4), "p_held"),
    (lambda r: r["claims"][1]["stats"].update(p_adjusted=r["claims"][1]["stats"]["p"]), "p_adjusted"),
    (lambda r: r["claims"][1].update(verdict="inconclusive"), "verdict from the cells"),
])
def test_a_wrong_record_fails(tmp_path, mutate, expect):
    path = build(tmp_path)
    rec = json.loads(path.read_text())
    mutate(rec)
    path.write_text(json.dumps(rec))
    rc, out = run(tmp_path, cells_root=tmp_path)
    assert rc == 1
    assert expect in out and "0 passed, 1 failed" in out


@pytest.mark.parametrize("name", ["harrington2003/table1", "elsas2008/sec3_table", "yu2006/tables"])
def test_committed_records(name):
    rc, out = run(AGG, only=[name])
    assert rc == 0, out
    assert "1 passed, 0 failed" in out
