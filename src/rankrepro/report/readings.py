"""An artefact's readings of its paper's open choices (report.aggregate.sensitivity runs them):
the joint test of its published table (:func:`table_test_record`, under the main reading and
each other one) and how its verdicts fare over every reading of its multiverse
(:func:`multiverse_summary`; pipeline/multiverse.py builds the readings)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..joint_test import table_test


def table_test_record(rows: list[dict], judged: bool) -> dict | None:
    """The joint test of the artefact's published table (:func:`rankrepro.joint_test.table_test`)
    over its judged cells, with the share of cells consistent and equivalent beside it; None
    where nothing is judged (no published cell, or substitute data)."""
    judged_rows = [r for r in rows if judged and r.get("verdict") in ("consistent", "differs")]
    if any(r.get("difference_p") is None for r in judged_rows):
        return None  # rows without the difference's test (records made before it, hand-built rows)
    nz = lambda x: 0.0 if x is None or not np.isfinite(x) else float(x)  # noqa: E731 - missing, NaN: none
    if not judged_rows:
        return None
    tt = table_test([{"cell": f"{r['label']} {r['metric']}", "p": r["difference_p"], "se": nz(r["difference_se"]),
                      "df": r["difference_df"], "bound": nz(r["difference_bound"]),
                      "consistent": r["verdict"] == "consistent"} for r in judged_rows])
    out = {k: getattr(tt, k) for k in ("cells", "sampling", "exact", "min_p", "deciding", "p", "exact_outside",
                                       "agrees", "detectable_low", "detectable_high")}
    out["test"] = ("Sidak's bound on the smallest two-sided p over the cells with a sampling spread; "
                   "the cells without one must each agree")
    out["consistent"] = sum(r["verdict"] == "consistent" for r in judged_rows)
    out["equivalent"] = sum(r.get("equivalence") == "equivalent" for r in judged_rows)
    return out


def reading_key(reading: dict) -> str:
    """A reading as text: its choices off their main value ("vote_output=rank, training_rounds=5000"),
    "main" for the main reading."""
    return ", ".join(f"{c}={v}" for c, v in reading.items()) or "main"


def all_readings(sens: list[dict]) -> list[tuple[dict, dict]]:
    """Every reading the record's sensitivity values stand for, once each (the main one first):
    (reading, the value's record)."""
    out, seen = [], set()
    for s in sens:
        for v in s["values"]:
            r = v.get("reading", {} if v["main"] else {s["choice"]: v["value"]})
            k = reading_key(r)
            if k not in seen:
                seen.add(k)
                out.append((r, v))
    out.sort(key=lambda rv: len(rv[0]) > 0)  # the main reading first, the rest in their order
    return out


def multiverse_summary(sens: list[dict], claims: list[dict], original: bool, cross: list[str] | None) -> dict | None:
    """How the artefact's verdicts fare over every reading of its multiverse (``cross``: the
    crossed choices; None: no multiverse declared): per reading its table test, claims' and
    published cells' verdicts and the artefact's word; the 95% confidence set of readings (those
    whose table test agrees; test inversion, each reading tested once, not corrected for the
    search); and per claim, published cell and the word, how its verdicts are spread over the
    readings of the confidence set (all the readings where it is empty or there is no table), and
    over all of them (``all``): *robust* when the same in every reading, else the choices that flip
    it (two readings that differ in that choice alone and give different verdicts)."""
    from .scorecard import ArtefactScore

    if not cross:
        return None
    trivial = {c["id"] for c in claims if c.get("trivial")}
    rows = []
    for reading, v in all_readings(sens):
        cv = {c["id"]: c["verdict"] for c in v["claims"]}
        subst = [x for k, x in cv.items() if k not in trivial]
        cells = {f"{h['label']} {h['metric']}": h["verdict"] for h in v["headline"]
                 if h["verdict"] in ("consistent", "differs")}
        tt = v.get("table_test")
        s = ArtefactScore("", "", "", "", True, original=original)
        s.consistent, s.compared = list(cells.values()).count("consistent"), len(cells)
        s.table_agrees = None if tt is None else bool(tt["agrees"])
        s.claims, s.held, s.not_held = len(subst), subst.count("held"), subst.count("not held")
        s.inconclusive, s.not_evaluable = subst.count("inconclusive"), subst.count("not evaluable")
        rows.append({"reading": reading, "key": reading_key(reading), "table_p": None if tt is None else tt["p"],
                     "table_agrees": s.table_agrees, "mean_abs_difference": v.get("mean_abs_difference"),
                     "claims": cv, "cells": cells, "word": s.agreement,
                     "differences": {f"{h['label']} {h['metric']}": float(h["mean"] - h["published_mean"])
                                     for h in v["headline"] if h.get("published_mean") is not None
                                     and h.get("mean") is not None and np.isfinite(h["mean"])}})
    conf = [r["key"] for r in rows if r["table_agrees"]]
    over = [r for r in rows if r["key"] in conf] if conf else rows
    choices = sorted({c for r in rows for c in r["reading"]})

    def flips(get, among) -> list[str]:
        out = []
        for c in choices:
            for a in among:
                b = next((b for b in among if b is not a and {k: x for k, x in b["reading"].items() if k != c}
                          == {k: x for k, x in a["reading"].items() if k != c}), None)
                if b is not None and get(a) != get(b):
                    out.append(c)
                    break
        return out

    def spread(get) -> dict:
        def part(among):
            vals = [get(r) for r in among]
            return {"counts": {str(x): vals.count(x) for x in dict.fromkeys(vals)}, "of": len(vals),
                    "robust": len(set(vals)) == 1, "flipped_by": flips(get, among)}
        return {"main": get(rows[0]), **part(over), "all": part(rows)}

    return {"cross": list(cross), "readings": len(rows), "over": "confidence set" if conf else "all readings",
            "confidence_set": conf, "table": any(r["table_agrees"] is not None for r in rows),
            "word": spread(lambda r: r["word"]),
            "claims": [{"id": k, **spread(lambda r, k=k: r["claims"].get(k))} for k in rows[0]["claims"]],
            "cells": [{"cell": k, **spread(lambda r, k=k: r["cells"].get(k))} for k in rows[0]["cells"]],
            "list": rows}


def reading_test(comparison: pd.DataFrame, judged: bool) -> dict | None:
    """A reading's joint test of the published table, in brief: p, whether it agrees, and how
    many cells are consistent (None where nothing is judged)."""
    tt = table_test_record(comparison.to_dict("records"), judged) if not comparison.empty else None
    return None if tt is None else {k: tt[k] for k in ("p", "agrees", "exact_outside", "consistent", "cells")}
