"""The aggregation's selections, taken by row positions instead of boolean masks over the whole
frame (the text columns of a paper-scale frame made most of an aggregation's time): each gives
exactly what the plain pandas expression gives, on frames with missing values, repeated rows
and shuffled order."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rankrepro.claims import testing
from rankrepro.metrics import METRICS
from rankrepro.pipeline.catalog import load_experiment
from rankrepro.report import aggregate
from rankrepro.stats import t_interval


def _frame(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for cell in ("a", "b", "c~x=1"):
        for trial in range(6):
            for metric, rounds in (("test_rank_loss", [None]), ("online_rank_loss", [1, 10, 100])):
                for r in rounds:
                    rows.append(("p", "x", cell, cell.split("~")[0], "{}", trial, metric, r, float(rng.normal())))
    df = pd.DataFrame(rows, columns=["paper", "artefact", "cell", "algorithm", "params", "trial", "metric", "round",
                                     "value"])
    df["round"] = df["round"].astype("Int64")
    df.loc[rng.choice(len(df), 8, replace=False), "value"] = np.nan
    dup = df.sample(n=10, random_state=seed)  # a trial's value given twice: the last one counts
    dup["value"] = rng.normal(size=len(dup))
    return pd.concat([df, dup], ignore_index=True).sample(frac=1.0, random_state=seed).reset_index(drop=True)


def _plain_trial_values(trials, cell, metric, rnd):
    no_round = rnd is None or (isinstance(rnd, float) and math.isnan(rnd)) or rnd is pd.NA
    t = trials[(trials.cell == cell) & (trials.metric == metric)]
    if no_round:
        t = t[t["round"].isna()] if t["round"].notna().any() and t["round"].isna().any() else t
    else:
        t = t[t["round"] == int(rnd)]
    return t.groupby("trial")["value"].last().sort_index()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_trial_values_are_the_plain_selection(seed):
    df = _frame(seed)
    for cell in ("a", "b", "c~x=1", "absent"):
        for metric, rnd in (("test_rank_loss", None), ("online_rank_loss", 10), ("online_rank_loss", None),
                            ("online_rank_loss", 7), ("absent", None)):
            pd.testing.assert_series_equal(testing.trial_values(df, cell, metric, rnd),
                                           _plain_trial_values(df, cell, metric, rnd), check_exact=True,
                                           check_index_type=True)


def _plain_summarize(exp, trials):
    labels = {c.id: c.label for c in exp.cells}
    order = {c.id: i for i, c in enumerate(exp.cells)}
    per_q = [m for m in trials["metric"].unique() if METRICS[m].per_query]
    trials = trials[~trials["metric"].isin(per_q)]
    rows = []
    for (cell, metric, rnd), g in trials.groupby([trials["cell"], trials["metric"], trials["round"].fillna(-1)],
                                                 sort=False):
        iv = t_interval(g["value"].to_numpy())
        rows.append((cell, g["algorithm"].iloc[0], labels.get(cell, cell), metric,
                     None if rnd == -1 else int(rnd), iv.n, iv.mean, iv.half_width, iv.low, iv.high))
    out = pd.DataFrame.from_records(rows, columns=aggregate.SUMMARY_COLUMNS)
    out["round"] = out["round"].astype("Int64")
    out["_o"] = out["cell"].map(order)
    return out.sort_values(["_o", "metric", "round"], na_position="first").drop(columns="_o").reset_index(drop=True)


def _plain_variant_trials(exp, trials, choice, value):
    swap = {c.base: c.id for c in exp.sensitivity_cells if c.choice == choice and c.value == value}
    main_ids = [c.id for c in exp.variants[(choice, value)].cells]
    parts = [trials[trials["cell"].isin([i for i in main_ids if i not in swap])]]
    for base, sid in swap.items():
        t = trials[trials["cell"] == sid].copy()
        t["cell"] = base
        parts.append(t)
    return pd.concat(parts, ignore_index=True)


def test_summary_and_variant_frames_are_the_plain_ones():
    """On a smoke run's cells of Harrington's Table 1 (every choice and value), shuffled."""
    from rankrepro.pipeline.runner import run_cell

    exp = load_experiment("harrington2003/table1", "smoke")
    cells = [c for c in exp.all_cells if c.base in ("", "oap_vp-tau0.3", "prank") or c.id in ("oap_vp-tau0.3", "prank")]
    trials = pd.concat([run_cell(exp, c.id) for c in cells], ignore_index=True)
    trials = trials.sample(frac=1.0, random_state=3).reset_index(drop=True)
    pd.testing.assert_frame_equal(aggregate.summarize(exp, trials), _plain_summarize(exp, trials), check_exact=True)
    n = 0
    for sc in exp.cfg.experiment.sensitivity:
        for v in sc["values"]:
            if str(v) == sc.main:
                continue
            a = aggregate.variant_trials(exp, trials, str(sc.choice), str(v))
            b = _plain_variant_trials(exp, trials, str(sc.choice), str(v))
            pd.testing.assert_frame_equal(a, b, check_exact=True)
            n += 1
    assert n >= 3
