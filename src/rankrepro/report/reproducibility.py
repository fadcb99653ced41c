"""Reproducibility measures of an artefact, as IR reproducibility studies report them (Breuer
et al., "How to Measure the Reproducibility of System-oriented IR Experiments", SIGIR 2020):

* ``rmse``: per metric (and round), the root mean square error between the published and the
  reproduced cells;
* ``effects``: per comparative claim (kind ``less``, a metric that is not a time), each
  (baseline, advanced) pair of cells the claim compares whose two published values exist:
  the improvement of the advanced cell over the baseline, published and reproduced, their
  *effect ratio* (reproduced / published) and the *delta relative improvement* (published
  minus reproduced improvement as a share of the baseline); per claim, the effect ratio of
  the summed improvements and the mean delta relative improvement;
* ``kendall_tau``: per metric column of the table (the metric, its round and the values of
  ``experiment.table_columns``), Kendall's tau-b between the published and the reproduced
  orderings of the cells.

The statistics are :mod:`rankrepro.stats` functions; this module picks the cells.  On a
substitute data set (``judged`` false) the measures compare different data, as the published
values there are references.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..metrics import METRICS, TIMING_METRICS
from .. import metric_names as _metric_names  # noqa: F401 - every registered metric name
from ..pipeline.cells import Cell, Experiment
from ..ordinal_metrics import HIGHER_IS_BETTER as _ORDINAL_HIGHER
from ..stats import effect_ratio, kendall_tau_b, relative_improvement, rmse

#: the metrics where a higher value is better (every other metric: lower is better); the
#: direction says which side of a claim is the baseline
HIGHER_IS_BETTER = frozenset(
    {"list_ndcg", "list_rr", "list_ap", "valid_ndcg@10", "valid_map", "selected_pairs_per_second"}
    | {f"{p}_{m}" for p in ("test", "query") for m in ("map", "ndcg@1", "ndcg@5", "ndcg@10")}
    | _ORDINAL_HIGHER)  # quadratic weighted kappa (rankrepro.ordinal_metrics)


def _num(x) -> float | None:
    return float(x) if x is not None and not pd.isna(x) and np.isfinite(float(x)) else None


def _compared(comparison: pd.DataFrame) -> pd.DataFrame:
    """The published cells with a reproduced value."""
    if comparison.empty:
        return comparison
    return comparison[comparison["mean"].map(lambda v: _num(v) is not None)]


def rmse_by_metric(comparison: pd.DataFrame) -> list[dict]:
    """Per metric: how many published cells were compared and the RMSE between them."""
    comp = _compared(comparison)
    out = []
    for metric in dict.fromkeys(comp["metric"]) if not comp.empty else []:
        g = comp[comp["metric"] == metric]
        out.append({"metric": metric, "cells": int(len(g)),
                    "rmse": rmse(g["published_mean"].to_numpy(float), g["mean"].to_numpy(float))})
    return out


def _column_key(cell: Cell, columns: list[str]) -> tuple:
    return tuple((k, cell.params.get(k)) for k in columns)


def kendall_by_column(exp: Experiment, comparison: pd.DataFrame) -> list[dict]:
    """Per metric column: the cells compared and Kendall's tau-b between the published and
    the reproduced values (None when either ordering is all ties)."""
    comp = _compared(comparison)
    columns = [str(c) for c in exp.cfg.experiment.get("table_columns") or []]
    cells = {c.id: c for c in exp.cells}
    for j, k in enumerate(columns):
        if not any(k in cells[c].params for c in comp["cell"]):
            raise ValueError(f"{exp.name}: experiment.table_columns[{j}] = '{k}' is not a parameter of any published "
                             f"cell (theirs: {sorted({p for c in comp['cell'] for p in cells[c].params})})")
    groups: dict[tuple, list[int]] = {}
    for i, r in comp.iterrows():
        key = (r["metric"], _column_key(cells[r["cell"]], columns))
        groups.setdefault(key, []).append(i)
    out = []
    for (metric, col), idx in groups.items():
        g = comp.loc[idx]
        if len(g) < 2:
            continue
        tau = kendall_tau_b(g["published_mean"].to_numpy(float), g["mean"].to_numpy(float))
        out.append({"metric": metric, "column": {k: v for k, v in col}, "cells": int(len(g)),
                    "tau": _num(tau)})
    return out


def _compatible(a: Cell, b: Cell, match: list[str]) -> bool:
    """As a claim pairs cells: equal on every matched parameter both have."""
    return all(not (k in a.params and k in b.params and a.params[k] != b.params[k]) for k in match)


def claim_effects(exp: Experiment, claim: Any, comparison: pd.DataFrame, cells_of) -> dict | None:
    """The effect ratio and delta relative improvement of one ``less`` claim (lhs < rhs): per
    pair of compared cells with both published values, the improvement rhs - lhs (positive
    when the claim holds); the baseline is rhs on a metric where lower is better, lhs where
    higher is better.  None when no pair has both published values."""
    if claim.kind != "less" or claim.metric in TIMING_METRICS or METRICS[claim.metric].curve:
        return None
    comp = _compared(comparison)
    pub = {r["cell"]: r for _, r in comp[comp["metric"] == claim.metric].iterrows()}
    higher = claim.metric in HIGHER_IS_BETTER
    pairs = []
    for a in cells_of(claim.lhs):
        for b in cells_of(claim.rhs):
            if a.id == b.id or not _compatible(a, b, list(claim.match)) or a.id not in pub or b.id not in pub:
                continue
            ra, rb = pub[a.id], pub[b.id]
            base, adv = (ra, rb) if higher else (rb, ra)
            p_imp = float(rb["published_mean"]) - float(ra["published_mean"])
            r_imp = float(rb["mean"]) - float(ra["mean"])
            p_ri = relative_improvement(p_imp, float(base["published_mean"]))
            r_ri = relative_improvement(r_imp, float(base["mean"]))
            pairs.append({"baseline": base["cell"], "advanced": adv["cell"],
                          "published_improvement": p_imp, "reproduced_improvement": r_imp,
                          "effect_ratio": _num(effect_ratio(p_imp, r_imp)),
                          "published_ri": _num(p_ri), "reproduced_ri": _num(r_ri),
                          "delta_ri": _num(p_ri - r_ri)})
    if not pairs:
        return None
    p_sum = sum(x["published_improvement"] for x in pairs)
    r_sum = sum(x["reproduced_improvement"] for x in pairs)
    dri = [x["delta_ri"] for x in pairs if x["delta_ri"] is not None]
    return {"claim": claim.id, "metric": claim.metric, "pairs": pairs,
            "effect_ratio": _num(effect_ratio(p_sum, r_sum)),
            "delta_ri": float(np.mean(dri)) if dri else None}


def measures(exp: Experiment, comparison: pd.DataFrame, claims: list, cells_of, judged: bool) -> dict:
    """The record's ``reproducibility`` section.  ``claims``: the experiment's claims
    (:class:`rankrepro.claims.Claim`); ``cells_of(selector, metric)``: the cells a claim's
    selector names (``best: true`` resolved on the reproduced summary)."""
    effects = []
    for c in claims:
        e = claim_effects(exp, c, comparison, lambda sel, c=c: cells_of(sel, c.metric))
        if e is not None:
            effects.append(e)
    return {"judged": bool(judged), "rmse": rmse_by_metric(comparison),
            "effects": effects, "kendall_tau": kendall_by_column(exp, comparison)}
